#!/usr/bin/env bash
# A network partition under two writers of the same files: a replica 3
# volume over three nodes (network namespaces 10.213.77.1-3, one brick
# each, mortard on each), client A mounted on node 1 and client B on node
# 3. Both write fixed-size records into the same four files through fds
# opened before the cut (A the even slots, B the odd ones), each record
# fsynced; a record counts as acknowledged when write and fsync both
# succeeded.
#  - node 3's link goes down (packets vanish; protocol/client's
#    ping-timeout, 3 s here, tells the clients; the bricks' keepalive,
#    6 s here, drops B's connections and the locks B held on n1 and n2,
#    which A may be waiting for): B, with only its own
#    brick, is below quorum and its writes fail with EROFS
#    (doc/replicate.md, Quorum), every one of them (an fsync may find
#    all of B's children gone: ENOTCONN); A, with two bricks, keeps
#    writing without an error;
#  - the link back: B writes again; heal info drains to 0 on every
#    node, no file is in split-brain (mortar.heal answers clean, every
#    read works), the three bricks hold identical files, every
#    acknowledged record of either client is there, and no record whose
#    write B was refused is anywhere (one whose fsync failed may be,
#    whole: it could have landed before the cut; a write that lost quorum
#    under it leaves its few copies dirty, blaming nobody, so the
#    majority's records win and no split-brain follows).
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
B="$T/bricks"
for i in 1 2 3; do
    _T_PIDFILES+=("$T/n$i/run/pv-brick$((i - 1)).pid" "$T/n$i/run/heal/pv.pid")
done
NFILES=4
RS=512

# The writer: CLIENT SLOT MNT DIR. Records of RS bytes at slot
# (round * 2 + SLOT); DIR/log gets "ok FILE ROUND" or "err FILE ROUND
# ERRNO write|fsync" per record; DIR/stop ends it (DIR/done).
cat > "$T/pwriter.py" <<'PY'
import errno, os, sys, time
tag, slot, mnt, wdir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
RS, NF = 512, 4
fds = [os.open(os.path.join(mnt, "f%d" % i), os.O_RDWR) for i in range(NF)]
log = open(os.path.join(wdir, "log"), "a", buffering=1)
r = 0
while not os.path.exists(os.path.join(wdir, "stop")):
    for i, fd in enumerate(fds):
        rec = ("%s f%d round %06d " % (tag, i, r)).encode().ljust(RS - 1, b".")
        rec += b"\n"
        stage = "write"
        try:
            if os.pwrite(fd, rec, (r * 2 + slot) * RS) != RS:
                raise OSError(errno.EIO, "short write")
            stage = "fsync"
            os.fsync(fd)
            log.write("ok f%d %d\n" % (i, r))
        except OSError as e:
            log.write("err f%d %d %s %s\n" % (i, r, errno.errorcode[e.errno],
                                              stage))
    r += 1
    time.sleep(0.1)
open(os.path.join(wdir, "done"), "w").close()
PY

# check_records DIR: "ok" if every file under DIR (a mount or a brick)
# holds each record A or B logged ok, and none B logged err (their
# slots hold zeros or lie past the end); else the first problem.
check_records() {
    python3 - "$1" "$T/wa/log" "$T/wb/log" <<'PY'
import sys
d, logs = sys.argv[1], {"A": (sys.argv[2], 0), "B": (sys.argv[3], 1)}
RS = 512
files = {}
def data(name):
    if name not in files:
        files[name] = open("%s/%s" % (d, name), "rb").read()
    return files[name]
for tag, (path, slot) in logs.items():
    for line in open(path):
        w = line.split()
        f, r = w[1], int(w[2])
        off = (r * 2 + slot) * RS
        got = data(f)[off:off + RS]
        want = ("%s %s round %06d " % (tag, f, r)).encode().ljust(RS - 1,
                                                                  b".")
        want += b"\n"
        if w[0] == "ok" and got != want:
            print("%s: acknowledged %s record %s %d missing" % (d, tag, f, r))
            sys.exit(0)
        # A write refused is nowhere. One that succeeded and whose fsync
        # failed is unknown (doc/wire-protocol.md): it may have landed
        # before the cut, but whole or not at all.
        if w[0] == "err" and w[4] == "fsync":
            if got.strip(b"\0") != b"" and got != want:
                print("%s: %s record %s %d torn" % (d, tag, f, r))
                sys.exit(0)
        elif w[0] == "err" and got.strip(b"\0") != b"":
            print("%s: refused %s record %s %d present" % (d, tag, f, r))
            sys.exit(0)
print("ok")
PY
}
count() {
    local n
    n=$(grep -c "^$1" "$2/log" 2> /dev/null)
    echo "${n:-0}"
}
# errnos DIR STAGE: the errnos of DIR's writer's failed STAGE calls.
errnos() {
    awk -v s="$2" '$1 == "err" && $5 == s { print $4 }' "$1/log" | sort -u |
        tr '\n' ' '
}
heal_answers() {
    local f
    for f in $(seq 0 $((NFILES - 1))); do
        getfattr --absolute-names --only-values -n mortar.heal "$M0/f$f" 2>&1
        echo
    done | sort -u | tr '\n' ' '
}
same_files() {
    local f
    for f in $(seq 0 $((NFILES - 1))); do
        cmp -s "$B/n1/f$f" "$B/n2/f$f" && cmp -s "$B/n1/f$f" "$B/n3/f$f" ||
            { echo "f$f differs"; return; }
    done
    echo ok
}
link3() { ip -n "$NS_BR" link set "mt$$b3" "$1"; }

peers_form 3
TEST mkdir -p "$B"
TEST ncli 1 volume create pv replica 3 "$H1:$B/n1" "$H2:$B/n2" \
    "$H3:$B/n3" force
TEST ncli 1 volume set pv network.ping-timeout 3
# B may hold a file's lock on n1 and n2 at the cut; its unlock never
# comes, so those bricks drop B when keepalive finds it gone (within 6 s
# here, about 42 s by default) and A writes on.
TEST ncli 1 volume set pv server.keepalive-time 2
TEST ncli 1 volume set pv server.keepalive-interval 1
TEST ncli 1 volume set pv server.keepalive-count 3
TEST ncli 1 volume set pv server.tcp-user-timeout 6
TEST ncli 1 volume start pv
TEST node_mount 1 "$H1:/pv" "$M0"
TEST wait_for_mount "$M0"
TEST node_mount 3 "$H3:/pv" "$M1"
TEST wait_for_mount "$M1"
TEST sh -c "for i in \$(seq 0 $((NFILES - 1))); do : > '$M0/f'\$i; done"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$M1/f$((NFILES - 1))' ] && echo Y"

mkdir -p "$T/wa" "$T/wb"
bg_run python3 "$T/pwriter.py" A 0 "$M0" "$T/wa"
bg_run python3 "$T/pwriter.py" B 1 "$M1" "$T/wb"
EXPECT_WITHIN 30 "Y" sh -c "[ \$(grep -c ^ok '$T/wa/log') -ge 20 ] && \
[ \$(grep -c ^ok '$T/wb/log') -ge 20 ] && echo Y"
EXPECT "0" count err "$T/wa"
EXPECT "0" count err "$T/wb"

# The cut.
TEST link3 down
A0=$(count ok "$T/wa")
EXPECT_WITHIN 60 "Y" sh -c "[ \$(grep -c ^err '$T/wb/log') -ge 8 ] && echo Y"
EXPECT_WITHIN 60 "Y" sh -c "[ \$(grep -c ^ok '$T/wa/log') -ge $((A0 + 40)) \
] && echo Y"
# The refused writes answer EROFS. Now and then B's own brick, on its
# side of the cut, answers nothing for the ping-timeout and B drops it
# too: an fsync with no child left is ENOTCONN.
EXPECT "EROFS " errnos "$T/wb" write
EXPECT_MATCH "^(EROFS |ENOTCONN |ENOTCONN EROFS )?$" errnos "$T/wb" fsync
EXPECT "0" count err "$T/wa"
echo "# during the cut: A $(count ok "$T/wa") ok, B $(count ok "$T/wb") ok" \
    "$(count err "$T/wb") refused"

# The link back: B writes again.
TEST link3 up
B0=$(count ok "$T/wb")
EXPECT_WITHIN 90 "Y" sh -c "[ \$(grep -c ^ok '$T/wb/log') -ge $((B0 + 20)) \
] && echo Y"
touch "$T/wa/stop" "$T/wb/stop"
EXPECT_WITHIN 60 "Y" sh -c "[ -e '$T/wa/done' ] && [ -e '$T/wb/done' ] && \
echo Y"
EXPECT "0" count err "$T/wa"
echo "# at the end: A $(count ok "$T/wa") ok, B $(count ok "$T/wb") ok" \
    "$(count err "$T/wb") refused"

EXPECT_WITHIN 120 "0" node_heal_entries pv 3
EXPECT "0" node_heal_entries pv 3 split-brain
EXPECT_MATCH "^(clean |healed |clean healed )$" heal_answers
EXPECT "ok" same_files
EXPECT "ok" check_records "$M0"
EXPECT "ok" check_records "$M1"
for i in 1 2 3; do
    EXPECT "ok" check_records "$B/n$i"
done
