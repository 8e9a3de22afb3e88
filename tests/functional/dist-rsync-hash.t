#!/usr/bin/env bash
# cluster/distribute places rsync's temporary names ".NAME.XXXXXX" by NAME
# (GlusterFS's default cluster.rsync-hash-regex, doc/distribute.md
# "Hash"): the rename that ends each file's transfer stays on the brick
# that holds the data, so an rsync into a four-brick volume leaves no link
# file. Files named that way by hand, and kept under such a name, are
# found and listed like any other.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

# link_files: link files (mode ---------T, empty) on any brick.
link_files() {
    find "$T"/bricks/b* -path '*/.mortar' -prune -o -type f -perm 1000 \
        -size 0 -print | wc -l
}

# data_copies NAME: bricks holding NAME (under d/) as a data file.
data_copies() {
    find "$T"/bricks/b*/d -maxdepth 1 -type f -name "$1" ! -perm 1000 \
        | wc -l
}

TEST dist4_start
TEST mkdir "$M0/d"

# ---- rsync's pattern by hand: write .NAME.XXXXXX, rename it to NAME ----
TEST python3 -c "
import os
for i in range(60):
    tmp = '$M0/d/.file%02d.%06X' % (i, i * 7919)
    with open(tmp, 'w') as f:
        f.write('content %02d\n' % i * 20)
    os.rename(tmp, '$M0/d/file%02d' % i)
"
EXPECT "0" link_files
EXPECT "60" sh -c "ls '$M0/d' | wc -l"
TEST python3 -c "
for i in range(60):
    if open('$M0/d/file%02d' % i).read() != 'content %02d\n' % i * 20:
        raise SystemExit('file%02d: wrong content' % i)
"
for i in 00 17 59; do
    EXPECT "1" data_copies "file$i"
done

# ---- rsync itself ----
if command -v rsync > /dev/null; then
    TEST mkdir -p "$T/src/sub"
    TEST python3 -c "
for i in range(40):
    open('$T/src/r%02d.txt' % i, 'w').write('rsync %02d\n' % i * 50)
    open('$T/src/sub/s%02d.bin' % i, 'w').write('sub %02d\n' % i * 30)
"
    TEST rsync -a "$T/src/" "$M0/r/"
    EXPECT "0" link_files
    TEST diff -r "$T/src" "$M0/r"
    # A second transfer of changed files renames over existing names.
    TEST sh -c "for f in '$T'/src/r0*.txt; do echo changed >> \"\$f\"; done"
    TEST rsync -a --checksum "$T/src/" "$M0/r/"
    EXPECT "0" link_files
    TEST diff -r "$T/src" "$M0/r"
else
    echo "# rsync not installed: its part is skipped"
fi

# ---- a file placed by its whole name (as before the rsync key) ----
# brick_of NAME: the brick (0-3) a fresh directory's layout (four equal
# ranges in brick order) gives the hash of NAME: MurmurHash3 x86_32.
brick_of() {
    python3 -c '
import sys

def murmur3(data):
    c1, c2, h, m = 0xcc9e2d51, 0x1b873593, 0, 0xffffffff
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & m
    n = len(data) // 4
    for i in range(n):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = rotl((k * c1) & m, 15) * c2 & m
        h = (rotl(h ^ k, 13) * 5 + 0xe6546b64) & m
    k = 0
    tail = data[4 * n:]
    for i in reversed(range(len(tail))):
        k = (k << 8) | tail[i]
    if tail:
        h ^= rotl((k * c1) & m, 15) * c2 & m
    h ^= len(data)
    h ^= h >> 16
    h = h * 0x85ebca6b & m
    h ^= h >> 13
    h = h * 0xc2b2ae35 & m
    h ^= h >> 16
    return h

print(murmur3(sys.argv[1].encode()) >> 30)
' "$1"
}
# The hash is the documented one: "a" and "abc" (test-hash.c's vectors).
EXPECT "0" brick_of a
EXPECT "2" brick_of abc
# A name whose whole-name brick differs from its key's, and a plain name
# on that whole-name brick.
for k in 0 1 2 3 4 5 6 7 8 9; do
    OLD=".legacy$k.abc"
    [ "$(brick_of "$OLD")" != "$(brick_of "legacy$k")" ] && break
done
OLDB=$(brick_of "$OLD")
TEST test "$OLDB" != "$(brick_of "legacy$k")"
for k in $(seq 100); do
    PLAIN="plain$k"
    [ "$(brick_of "$PLAIN")" = "$OLDB" ] && break
done
TEST test "$(brick_of "$PLAIN")" = "$OLDB"
TEST sh -c "echo legacy > '$M0/d/$PLAIN'"
TEST test -f "$T/bricks/b$OLDB/d/$PLAIN"
# Renamed on the brick itself: the file is now where an older version
# would have put OLD (its GFID handle does not move).
TEST mv "$T/bricks/b$OLDB/d/$PLAIN" "$T/bricks/b$OLDB/d/$OLD"
TEST drop_caches
EXPECT "legacy" cat "$M0/d/$OLD"
EXPECT "1" sh -c "ls -a '$M0/d' | grep -cx -- '$OLD'"
TEST rm "$M0/d/$OLD"
TEST test ! -e "$M0/d/$OLD"

# ---- names of that shape kept as they are ----
TEST sh -c "echo keep > '$M0/d/.config.json'"
TEST sh -c "echo two > '$M0/d/.x.y'"
EXPECT "keep" cat "$M0/d/.config.json"
EXPECT "two" cat "$M0/d/.x.y"
EXPECT "1" sh -c "ls -a '$M0/d' | grep -c '^\.config\.json$'"
EXPECT "1" data_copies ".config.json"
TEST rm "$M0/d/.config.json" "$M0/d/.x.y"
TEST test ! -e "$M0/d/.config.json"
EXPECT "0" data_copies ".config.json"
