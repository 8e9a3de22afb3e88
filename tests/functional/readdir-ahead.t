#!/usr/bin/env bash
# performance/readdir-ahead end to end (issue 24 item 3), through mortard
# on a two-brick distribute volume mounted twice (A with readdir-ahead,
# B another client):
#  - `volume set V performance.readdir-ahead on` puts it in the client
#    graph; `performance.rda-request-size` is checked against its range;
#  - A lists 3,000 names right (each once) and its statedump counts
#    prefetches and hits;
#  - A starts a listing, unlinks through A names the listing has not
#    reached yet, then finishes it: none of them is listed (entries
#    prefetched before the unlink would show them);
#  - while B creates and removes names, A lists again and again (some
#    READDIRs answered by readdir-ahead): the names nobody touches are
#    always there, each once; once B stops, A's listing is B's. This
#    failed on storage/posix's cookies: a readdir at an earlier cookie
#    counted entries from the start, and a second reading reused the
#    first one's numbers (doc/distribute.md, "storage/posix readdir
#    cookies");
#  - `performance.readdir-ahead off` switches A to a graph without it,
#    the listing unchanged.
# TIMEOUT: 120
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

# rda_value PID KEY: KEY in readdir-ahead's section of PID's statedump.
rda_value() {
    statedump_of "$1" | awk -v k="$2" '
        $0 == "[dump v0-readdir-ahead]" { in_s = 1; next }
        /^\[/ { in_s = 0 }
        in_s && index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}

# names DIR: the sorted names of DIR, one listing.
names() {
    python3 -c '
import os, sys
print("\n".join(sorted(os.listdir(sys.argv[1]))))' "$1"
}

TEST start_mortard
export MORTAR_SOCKET="$T/run/mortard.sock"
mkdir -p "$T/bricks/v0" "$T/bricks/v1"
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" \
    "127.0.0.1:$T/bricks/v1" force
track_brick v0 brick0
track_brick v0 brick1
TEST "$MORTAR" volume set v0 performance.readdir-ahead on
TEST "$MORTAR" volume set v0 performance.rda-request-size 64KiB
TEST ! "$MORTAR" volume set v0 performance.rda-request-size 1MiB
TEST "$MORTAR" volume start v0
TEST mount_mortar "127.0.0.1:/v0" "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST mount_mortar "127.0.0.1:/v0" "$M1" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M1"
APID=$(mm_pid "$M0")
EXPECT_MATCH "type=performance/readdir-ahead" statedump_of "$APID"
EXPECT "65536" rda_value "$APID" request_size

# --- 1. 3,000 names listed right, from prefetched entries ---
TEST python3 -c '
import os, sys
os.mkdir(sys.argv[1])
for i in range(3000):
    open("%s/stable-%05d" % (sys.argv[1], i), "w").close()
' "$M0/d"
drop_caches
EXPECT "3002" sh -c "ls -f '$M0/d' | wc -l"
EXPECT "0" sh -c "ls -f '$M0/d' | sort | uniq -d | wc -l"
EXPECT "3000" sh -c "ls -l '$M0/d' | grep -c ' stable-'"
TEST [ "$(rda_value "$APID" prefetches)" -gt 0 ]
TEST [ "$(rda_value "$APID" hits)" -gt 0 ]
EXPECT "0" rda_value "$APID" prefetch_errors

# --- 2. names unlinked through A during A's listing are not listed ---
EXPECT "ok" python3 -c '
import os, sys
d = sys.argv[1]
order = [e.name for e in os.scandir(d)]
bad = []
for r in range(3):
    it = os.scandir(d)
    seen = [next(it).name for _ in range(20)]
    # Well past what the kernel has read: prefetched at most.
    gone = [n for n in order[-40:] if n not in seen][:30]
    for n in gone:
        os.unlink(os.path.join(d, n))
    seen += [e.name for e in it]
    bad += [n for n in gone if n in seen]
    order = [n for n in order if n not in gone]
    if sorted(seen) != sorted(order):
        bad.append("listing %d differs" % r)
print("ok" if not bad else "listed after unlink: %s" % bad[:5])' "$M0/d"
TEST [ "$(rda_value "$APID" inval_drops)" -gt 0 ]

# --- 3. B creates and removes names while A lists ---
N_STABLE=$(names "$M0/d" | grep -c '^stable-')
HITS=$(rda_value "$APID" hits)
bg_run python3 -c '
import os, sys, time
d = sys.argv[1]
i = 0
end = time.time() + 15
while time.time() < end:
    open("%s/churn-%06d" % (d, i), "w").close()
    if i >= 20:
        os.unlink("%s/churn-%06d" % (d, i - 20))
    i += 1
open(sys.argv[2], "w").close()
' "$M1/d" "$T/churn.done"
EXPECT "ok" python3 -c '
import os, sys, time
d, n_stable = sys.argv[1], int(sys.argv[2])
end = time.time() + 12
bad = None
rounds = 0
while time.time() < end and bad is None:
    got = os.listdir(d)
    stable = [n for n in got if n.startswith("stable-")]
    if len(stable) != n_stable or len(set(got)) != len(got):
        bad = "round %d: %d stable, %d dups" % (rounds, len(stable),
                                              len(got) - len(set(got)))
    rounds += 1
print("ok" if bad is None and rounds > 2 else bad or "rounds %d" % rounds)
' "$M0/d" "$N_STABLE"
# The listings went through readdir-ahead, not only around it.
TEST [ "$(rda_value "$APID" hits)" -gt "$HITS" ]
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/churn.done' ] && echo Y"
drop_caches
EXPECT "$(names "$M1/d" | md5sum)" sh -c "python3 -c '
import os, sys
print(chr(10).join(sorted(os.listdir(sys.argv[1]))))' '$M0/d' | md5sum"

# --- 4. off live: a graph without it, the same listing ---
TEST "$MORTAR" volume set v0 performance.readdir-ahead off
EXPECT_WITHIN 15 "1" sh -c "grep -c 'switched from graph' '$(mm_log "$M0")'"
rda_in_dump() { statedump_of "$APID" | grep -c 'performance/readdir-ahead'; }
EXPECT "0" rda_in_dump
EXPECT "$(names "$M1/d" | md5sum)" sh -c "python3 -c '
import os, sys
print(chr(10).join(sorted(os.listdir(sys.argv[1]))))' '$M0/d' | md5sum"
