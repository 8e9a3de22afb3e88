#!/usr/bin/env bash
# copy_file_range on a 4-brick distribute volume between files on
# different bricks: done by distribute with 1 MiB reads and writes (a
# debug/trace above distribute sees only copy_file_range, no read or
# write: the kernel did not fall back to copying through FUSE); cp and
# python os.copy_file_range give identical data, with offsets, sizes
# that are not a multiple of 1 MiB, 0 bytes, a start beyond the end; a
# brick down gives an error, not a hang.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

# copy_start: dist4_start with a trace of reads, writes and copies above
# distribute.
copy_start() {
    local i port vol="$T/vol/copy4.vol"
    : > "$vol"
    for i in 0 1 2 3; do
        alloc_port port || return 1
        mkdir -p "$T/bricks/b$i"
        start_brick "b$i" "$T/bricks/b$i" "$port" || return 1
        printf 'volume c%d\n type protocol/client\n option remote-host %s\n option remote-port %s\n option remote-subvolume b%d\nend-volume\n' \
            "$i" "$H0" "$port" "$i" >> "$vol"
    done
    printf 'volume dist\n type cluster/distribute\n subvolumes c0 c1 c2 c3\nend-volume\n' >> "$vol"
    printf 'volume tr\n type debug/trace\n option fops read,write,copy_file_range\n subvolumes dist\nend-volume\n' >> "$vol"
    _T_MOUNTS+=("$M0")
    start_fsd client-copy --volfile "$vol" "$M0" || return 1
    wait_for_mount "$M0"
}

# brick_of NAME: the brick holding the file NAME (b0..b3).
brick_of() {
    local i
    for i in 0 1 2 3; do
        [ -e "$T/bricks/b$i/$1" ] && { echo "b$i"; return; }
    done
    echo none
}

# name_not_on BRICK PREFIX: creates PREFIX<n> files until one lands on
# another brick than BRICK; prints its name (the others are removed).
name_not_on() {
    local n
    for n in $(seq 1 64); do
        touch "$M0/$2$n" || return 1
        if [ "$(brick_of "$2$n")" != "$1" ]; then
            echo "$2$n"
            return
        fi
        rm -f "$M0/$2$n"
    done
    return 1
}

# trace_count FOP: FOP requests wound through the trace so far.
trace_count() {
    grep -c "tr: $1 wind" "$T/log/client-copy.log" 2> /dev/null
}

# fuse_rw: reads and writes that came through FUSE so far.
fuse_rw() {
    echo "$(trace_count read) $(trace_count write)"
}

# pycopy SRC OFF_IN DST OFF_OUT LEN: os.copy_file_range in a loop until
# LEN bytes or the end; prints the bytes copied.
pycopy() {
    python3 - "$@" << 'EOF'
import os, sys
src, oi, dst, oo, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4]), int(sys.argv[5])
fi = os.open(src, os.O_RDONLY)
fo = os.open(dst, os.O_WRONLY)
total = 0
while total < n:
    k = os.copy_file_range(fi, fo, n - total, oi + total, oo + total)
    if k == 0:
        break
    total += k
print(total)
EOF
}

# same SRC OFF_IN DST OFF_OUT LEN: "same" if the ranges are equal.
same() {
    python3 - "$@" << 'EOF'
import sys
a, oa, b, ob, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4]), int(sys.argv[5])
with open(a, 'rb') as f:
    f.seek(oa); x = f.read(n)
with open(b, 'rb') as f:
    f.seek(ob); y = f.read(n)
print("same" if x == y and len(x) == n else "differ %d %d" % (len(x), len(y)))
EOF
}

TEST copy_start
SIZE=$((5 * 1048576 + 12345))
TEST sh -c "head -c $SIZE /dev/urandom > '$M0/src'"
SRCB=$(brick_of src)
TEST test "$SRCB" != none

# cp to a name on another brick: same data, no read/write through FUSE.
DST=$(name_not_on "$SRCB" cpdst)
TEST test -n "$DST"
rm -f "$M0/$DST"
RW0=$(fuse_rw)
C0=$(trace_count copy_file_range)
TEST cp "$M0/src" "$M0/$DST"
EXPECT "$RW0" fuse_rw
TEST test "$(trace_count copy_file_range)" -gt "$C0"
TEST test "$(brick_of "$DST")" != "$SRCB"
EXPECT "$(md5sum < "$M0/src")" sh -c "md5sum < '$M0/$DST'"
EXPECT "$SIZE" stat -c %s "$T/bricks/$(brick_of "$DST")/$DST"

# os.copy_file_range with offsets into an existing file on another brick.
PY=$(name_not_on "$SRCB" pydst)
TEST test -n "$PY"
TEST sh -c "head -c 100 /dev/zero > '$M0/$PY'"
RW0=$(fuse_rw)
EXPECT "$((SIZE - 777))" pycopy "$M0/src" 777 "$M0/$PY" 4096 $((SIZE * 2))
EXPECT "$RW0" fuse_rw
EXPECT "same" same "$M0/src" 777 "$M0/$PY" 4096 $((SIZE - 777))
EXPECT "$((4096 + SIZE - 777))" stat -c %s "$M0/$PY"
# 2 MiB + 3 bytes from the middle, over the start of the file.
EXPECT "$((2 * 1048576 + 3))" pycopy "$M0/src" 1000001 "$M0/$PY" 0 \
    $((2 * 1048576 + 3))
EXPECT "same" same "$M0/src" 1000001 "$M0/$PY" 0 $((2 * 1048576 + 3))
# 0 bytes, and a start beyond the end: 0, the file unchanged.
EXPECT "0" pycopy "$M0/src" 0 "$M0/$PY" 0 0
EXPECT "0" pycopy "$M0/src" $((SIZE + 5)) "$M0/$PY" 0 4096
EXPECT "$((4096 + SIZE - 777))" stat -c %s "$M0/$PY"
# One byte short of a chunk, at the very end of the source.
RW0=$(fuse_rw)
EXPECT "1048575" pycopy "$M0/src" $((SIZE - 1048575)) "$M0/$PY" 1 \
    1048576
EXPECT "$RW0" fuse_rw
EXPECT "same" same "$M0/src" $((SIZE - 1048575)) "$M0/$PY" 1 1048575

# An empty source: an empty copy.
TEST touch "$M0/empty"
TEST cp "$M0/empty" "$M0/empty2"
EXPECT "0" stat -c %s "$M0/empty2"

# The destination's brick dies while both files are open: the copy
# fails with an error quickly, never a hang.
DOWN=$(brick_of "$PY")
TEST mkfifo "$T/go"
python3 -c "
import os, sys
fi = os.open('$M0/src', os.O_RDONLY)
fo = os.open('$M0/$PY', os.O_WRONLY)
open('$T/opened', 'w').close()
open('$T/go').read()
try:
    os.copy_file_range(fi, fo, 4 * 1048576, 0, 0)
    print('copied')
except OSError as e:
    print('error', e.errno)
" > "$T/down.out" 2>&1 &
PYPID=$!
EXPECT_WITHIN 20 "Y" sh -c "test -e '$T/opened' && echo Y"
TEST kill_brick "$DOWN"
TEST sh -c "echo go > '$T/go'"
EXPECT_WITHIN 30 "N" sh -c "kill -0 $PYPID 2>/dev/null && echo Y || echo N"
EXPECT_MATCH "^error (107|5)$" cat "$T/down.out"
