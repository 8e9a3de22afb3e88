#!/usr/bin/env bash
# A client killed (-9) in the middle of replicate transactions, on a
# replica 3 volume made by mortard, with a second client mounted beside
# it:
#  - while it writes a big file: it is killed while the write batch is
#    open (trusted.mortar.rep.dirty seen on the bricks: pre-op done,
#    post-op not); the second client then writes the same file at once
#    (within 30 s: the dead client's inodelk went with its connection,
#    protocol/server releases the locks of a connection that drops);
#    heal (the daemon, or the next access of the remounted client) ends
#    with heal info 0, no trusted.mortar.rep.* record on any brick, three
#    identical copies holding the second client's bytes and, after them,
#    a prefix of what the first one wrote;
#  - while it creates files and renames them to new names in one
#    directory in a loop: killed, the second client creates and renames
#    over a name in that directory at once (the entry locks are gone
#    too); heal info 0, no record left, the three bricks hold identical
#    trees, and the remounted client lists the directory. (Killed while
#    renaming over existing names, it can leave a name with two GFIDs
#    that heal never resolves: stress/rep-client-kill-rename.t.)
# TIMEOUT: 300
# REQUIRES: root fuse python3 getfattr
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2; do track_brick kv brick$i; done
_T_PIDFILES+=("$T/run/heal/kv.pid")

# dirty_copies FILE: how many bricks' copies of FILE carry a nonzero
# trusted.mortar.rep.dirty.
dirty_copies() {
    local n=0 i
    for i in 0 1 2; do
        getfattr --absolute-names -n trusted.mortar.rep.dirty \
            "$B/r$i/$1" > /dev/null 2>&1 && n=$((n + 1))
    done
    echo $n
}
# kill_when_dirty FILE PID: kills PID (-9) right after the bricks show
# FILE dirty (a transaction open); fails if that is not seen in 30 s.
kill_when_dirty() {
    local i
    for ((i = 0; i < 300; i++)); do
        if [ "$(dirty_copies "$1")" != 0 ]; then
            kill -KILL "$2"
            return 0
        fi
        sleep 0.1
    done
    return 1
}
size_of() { stat -c %s "$1" 2> /dev/null || echo 0; }
# prefix_ok FILE: "ok" if FILE is 4 KiB of zeros followed by a prefix of
# $T/src past its first 4 KiB.
prefix_ok() {
    python3 - "$1" "$T/src" <<'PY'
import sys
got = open(sys.argv[1], "rb").read()
src = open(sys.argv[2], "rb").read()
if got[:4096] != bytes(4096):
    print("first 4 KiB not the second client's zeros")
elif got[4096:] != src[4096:len(got)]:
    print("bytes after 4 KiB are not a prefix of the first client's data")
else:
    print("ok")
PY
}

TEST start_mortard
TEST mcli volume create kv replica 3 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 force
TEST mcli volume start kv
TEST mount_volume kv "$M0"
TEST mount_volume kv "$M1"
head -c $((48 << 20)) /dev/urandom > "$T/src"

# 1. A big file.
APID=$(client_pid "$M0")
# (paced, so the write batch is still open when the kill comes)
bg_run python3 -c '
import os, sys, time
src = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for off in range(0, len(src), 65536):
    os.pwrite(fd, src[off:off + 65536], off)
    time.sleep(0.005)
' "$T/src" "$M0/big"
EXPECT_WITHIN 60 "Y" sh -c "[ \$(stat -c %s '$B/r0/big' 2> /dev/null || \
echo 0) -gt $((4 << 20)) ] && echo Y"
TEST kill_when_dirty big "$APID"
EXPECT_WITHIN 20 "N" proc_alive "$APID"
echo "# killed at $(size_of "$B/r0/big") / $(size_of "$B/r1/big") /" \
    "$(size_of "$B/r2/big") bytes; dirty on $(dirty_copies big) copies"
TEST force_umount "$M0"
# The second client writes the same file: no lock of the dead one left.
TEST timeout 30 dd if=/dev/zero of="$M1/big" bs=4k count=1 conv=notrunc,fsync
EXPECT_WITHIN 120 "0" heal_entries kv
EXPECT "0 0 0" rep_records_each "$B/r0" "$B/r1" "$B/r2"
TEST cmp "$B/r0/big" "$B/r1/big"
TEST cmp "$B/r0/big" "$B/r2/big"
EXPECT "ok" prefix_ok "$B/r0/big"
TEST cmp "$B/r0/big" "$M1/big"
# The killed client, remounted, reads the same.
TEST mount_volume kv "$M0"
TEST cmp "$B/r0/big" "$M0/big"

# 2. Creates and renames in a loop.
TEST mkdir "$M0/d"
APID=$(client_pid "$M0")
bg_run sh -c "i=0; while :; do i=\$((i + 1)); echo \$i > '$M0/d/t.'\$i || \
exit 1; mv '$M0/d/t.'\$i '$M0/d/r.'\$i || exit 1; done"
EXPECT_WITHIN 60 "Y" sh -c "[ \$(ls '$B/r0/d' | wc -l) -ge 7 ] && echo Y"
TEST kill_when_dirty d "$APID"
EXPECT_WITHIN 20 "N" proc_alive "$APID"
TEST force_umount "$M0"
TEST timeout 30 sh -c "echo b > '$M1/d/b1' && mv '$M1/d/b1' '$M1/d/r.1'"
EXPECT "b" cat "$M1/d/r.1"
EXPECT_WITHIN 120 "0" heal_entries kv
EXPECT "0 0 0" rep_records_each "$B/r0" "$B/r1" "$B/r2"
EXPECT "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"
TEST mount_volume kv "$M0"
EXPECT "$(ls "$B/r0/d")" ls "$M0/d"
EXPECT "b" cat "$M0/d/r.1"
