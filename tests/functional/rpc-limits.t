#!/usr/bin/env bash
# Bounded input on the RPC ports (issue 23 item 4; doc/wire-protocol.md,
# Limits). Against mortard's TCP port and a brick's port at once, from
# python3: 60 connections each with a 16 MiB record mark and 64 KiB of it
# (over both ports' record limits: closed at once), 60 each with a mark
# under the limit and 64 KiB of it, and 4 each sending a small record one
# byte a second. Every connection reads EOF within its port's deadline
# (the brick: 10 s before SETVOLUME; mortard: 30 s per record), mortard's
# and the brick's VmRSS stay within 32 MB of where they were, and the CLI
# and a mount work during the attack and after it. A 100,000-volume
# volfile (flat and as a chain) is refused within 5 s naming the limit.
# Without the limits, the connections stay open until the peer gives up.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_mortard
TEST start_volume
TEST sh -c "echo before > '$M0/f'"
MD_PID=$(mortard_pid)
BRICK_PID=$(fsd_pid brick-b0)

cat > "$T/attack.py" <<'PY'
# attack.py OUT PID1 PID2 -- PORT:DEADLINE:UNDER_LEN ...
# Opens the connections of the test's header to each port, waits until
# each reads EOF (or DEADLINE+5 s pass) while sampling the two pids'
# VmRSS; prints "closed N of M, latest S s over D s" per port and the
# largest RSS growth in kB.
import socket, struct, sys, time

def rss_kb(pid):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

out, pids = sys.argv[1], sys.argv[2:4]
specs = [a.split(":") for a in sys.argv[5:]]
base = {p: rss_kb(p) for p in pids}
grow = {p: 0 for p in pids}
conns = []   # [sock, port index, opened, closed_at, dribble bytes left]
t0 = time.monotonic()
for i, (port, deadline, under) in enumerate(specs):
    for kind in ("big", "under", "dribble"):
        n = 4 if kind == "dribble" else 60
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", int(port)))
            s.setblocking(False)
            if kind == "big":
                mark, data = 16 << 20, 64 << 10
            elif kind == "under":
                mark, data = int(under), 64 << 10
            else:
                mark, data = 200, 0
            try:
                s.send(struct.pack(">I", 0x80000000 | mark) + b"\0" * data)
            except OSError:
                pass
            conns.append([s, i, time.monotonic(), None,
                          200 if kind == "dribble" else 0])
last_drip = 0
while True:
    now = time.monotonic()
    for p in pids:
        grow[p] = max(grow[p], rss_kb(p) - base[p])
    for c in conns:
        if c[3] is not None:
            continue
        try:
            r = c[0].recv(65536)
            if r == b"":
                c[3] = now
        except BlockingIOError:
            pass
        except OSError:
            c[3] = now
        if c[3] is None and c[4] > 0 and now - last_drip >= 1:
            try:
                c[0].send(b"x")
                c[4] -= 1
            except OSError:
                c[3] = now
    if now - last_drip >= 1:
        last_drip = now
    open_ = [c for c in conns if c[3] is None]
    limit = max(int(d) for _, d, _ in specs) + 5
    if not open_ or now - t0 > limit:
        break
    time.sleep(0.05)
with open(out, "w") as f:
    for i, (port, deadline, _) in enumerate(specs):
        mine = [c for c in conns if c[1] == i]
        done = [c for c in mine if c[3] is not None]
        latest = max((c[3] - t0 for c in done), default=0)
        f.write("port %d: closed %d of %d, latest %.0f s, in time %s\n"
                % (i, len(done), len(mine), latest,
                   "yes" if len(done) == len(mine)
                   and latest <= int(deadline) + 3 else "no"))
    f.write("rss growth %d kB\n" % max(grow.values()))
PY

# mortard: 1 MiB records, 30 s to finish one; the brick before
# SETVOLUME: 64 KiB, 10 s.
bg_run python3 "$T/attack.py" "$T/attack.out" "$MD_PID" "$BRICK_PID" -- \
    "$MGMT_PORT:30:1000000" "$P0:10:60000"
ATTACK=$!
sleep 2
# While the connections are held: the CLI, I/O and a second mount.
TEST mcli volume create v1 "127.0.0.1:$T/bricks/v1" force
EXPECT_MATCH "v1" mcli volume list
EXPECT "before" cat "$M0/f"
TEST sh -c "echo during > '$M0/g'"
TEST mount_client "$P0" b0 "$M1"
TEST wait_for_mount "$M1"
EXPECT "during" cat "$M1/g"

wait_attack() {
    local i
    for ((i = 0; i < 60; i++)); do
        kill -0 "$ATTACK" 2> /dev/null || break
        sleep 1
    done
    cat "$T/attack.out"
}
EXPECT_MATCH "port 0: closed 124 of 124, latest [0-9]+ s, in time yes" \
    wait_attack
EXPECT_MATCH "port 1: closed 124 of 124, latest [0-9]+ s, in time yes" \
    cat "$T/attack.out"
rss_growth() { awk '/rss growth/ { print ($3 < 32768) ? "Y" : $3 }' \
    "$T/attack.out"; }
EXPECT "Y" rss_growth
EXPECT_MATCH "record of 16777216 bytes over the limit of 1048576" \
    cat "$T/log/mortard.log"
EXPECT_MATCH "not complete within the limit of 30000 ms" \
    cat "$T/log/mortard.log"
EXPECT_MATCH "record of 16777216 bytes over the limit of 65536" \
    cat "$T/log/brick-b0.log"

# After: still serving.
TEST mcli volume delete v1
TEST sh -c "echo after >> '$M0/f'"
EXPECT "before after" sh -c "cat '$M1/f' | tr '\n' ' ' | sed 's/ \$//'"
EXPECT "$MD_PID" mortard_pid
TEST kill -0 "$BRICK_PID"

# A 100,000-volume volfile is refused at once, naming the limit.
gen_volfile() {
    python3 - "$1" "$2" <<'PY'
import sys
chain = sys.argv[2] == "chain"
with open(sys.argv[1], "w") as f:
    for i in range(100000):
        f.write("volume v%d\n    type debug/trace\n" % i)
        if chain and i > 0:
            f.write("    subvolumes v%d\n" % (i - 1))
        f.write("end-volume\n")
PY
}
TEST gen_volfile "$T/vol/flat.vol" flat
TEST gen_volfile "$T/vol/chain.vol" chain
refusal() { timeout 5 "$MORTARFSD" -N --volfile "$1" 2>&1; echo "rc=$?"; }
EXPECT_MATCH "flat.vol:12289: more than 4096 volumes.*rc=1" \
    refusal "$T/vol/flat.vol"
EXPECT_MATCH "chain.vol:258: graph deeper than 64 volumes at 'v64'.*rc=1" \
    refusal "$T/vol/chain.vol"
