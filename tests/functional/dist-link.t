#!/usr/bin/env bash
# cluster/distribute over four bricks: hard links and renames onto names
# whose hashed brick already holds a link file of the same file (under
# another name). The new name's link file is a hard link of the existing
# one there (one GFID, one inode per brick), not a new file that
# collides with it:
#  1. data on b0 renamed to a name hashing to b1 (link file on b1); ln to
#     another name hashing to b1 (this failed with ENOENT), to a name on
#     the data brick, and twice to names hashing to b2;
#  2. every name reads the same data, one inode number, nlink 5, also
#     from a fresh mount (lookups through the shared link files);
#  3. a rename to a name hashing to a brick with such a link file gets
#     its link file there the same way;
#  4. unlinking every name leaves nothing on any brick: no name, no link
#     file, no GFID handle.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# pick BRICK PREFIX: the first name PREFIX.N hashing to BRICK under the
# default layout of 4 subvolumes (MurmurHash3 x86_32, seed 0, equal
# ranges in index order: doc/distribute.md).
pick() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 4 "$1" "$2"
}

# mode_of BRICK NAME: octal mode of d/NAME on that brick, or "-".
mode_of() {
    stat -c %a "$T/bricks/b$1/d/$2" 2> /dev/null || echo -
}

# ino_of BRICK NAME: the brick's inode number of d/NAME, or "-".
ino_of() {
    stat -c %i "$T/bricks/b$1/d/$2" 2> /dev/null || echo -
}

# handles GFID: how many bricks still hold a handle for GFID (uuid form).
handles() {
    local b n=0
    for b in 0 1 2 3; do
        [ -e "$T/bricks/b$b/.mortar/handles/${1:0:2}/${1:2:2}/$1" ] && n=$((n + 1))
    done
    echo "$n"
}

# names_ok N NAMES...: every name reads DATA, one inode number, nlink N.
names_ok() {
    local want="$1" p
    shift
    for p in "$@"; do
        [ "$(cat "$M0/d/$p")" = "$DATA" ] || { echo "data of $p"; return 1; }
        echo "$(stat -c '%i %h' "$M0/d/$p")"
    done | sort -u | awk -v n="$want" \
        '{ c++; if ($2 != n) bad = 1 } END { exit !(c == 1 && !bad) }'
}

A0=$(pick 0 a)
N1=$(pick 1 n)
M1=$(pick 1 m)
Z0=$(pick 0 z)
X2=$(pick 2 x)
Y2=$(pick 2 y)
V2=$(pick 2 v)
DATA="hard-linked data $$"

TEST dist4_start
TEST mkdir "$M0/d"
TEST sh -c "echo '$DATA' > '$M0/d/$A0'"
EXPECT "644" mode_of 0 "$A0"
# Renamed across hash ranges: the data stays on b0, a link file on b1.
TEST mv "$M0/d/$A0" "$M0/d/$N1"
EXPECT "644" mode_of 0 "$N1"
EXPECT "1000" mode_of 1 "$N1"

# 1. A name hashing to b1, which holds N1's link file (same GFID).
EXPECT "ok" pyop link "$M0/d/$N1" "$M0/d/$M1"
EXPECT "1000" mode_of 1 "$M1"
EXPECT "$(ino_of 1 "$N1")" ino_of 1 "$M1"
EXPECT "c0" sh -c "getfattr --only-values -n trusted.mortar.dht.linkto \
    '$T/bricks/b1/d/$M1' | tr -d '\\0'"
# A name on the data brick: a plain hard link there, no link file.
EXPECT "ok" pyop link "$M0/d/$M1" "$M0/d/$Z0"
EXPECT "644" mode_of 0 "$Z0"
# Two names hashing to b2: a new link file, then a hard link of it.
EXPECT "ok" pyop link "$M0/d/$N1" "$M0/d/$X2"
EXPECT "ok" pyop link "$M0/d/$X2" "$M0/d/$Y2"
EXPECT "1000" mode_of 2 "$Y2"
EXPECT "$(ino_of 2 "$X2")" ino_of 2 "$Y2"
# The data has every name on b0, each a hard link (plus the handle).
for p in "$N1" "$M1" "$Z0" "$X2" "$Y2"; do
    EXPECT "$(ino_of 0 "$N1")" ino_of 0 "$p"
done
EXPECT "6" stat -c %h "$T/bricks/b0/d/$N1"
# Nothing on b3.
EXPECT "0" sh -c "find '$T/bricks/b3/d' -mindepth 1 | wc -l"

# 2. Same data, inode and nlink through every name, also after a remount.
TEST names_ok 5 "$N1" "$M1" "$Z0" "$X2" "$Y2"
EXPECT "File exists" pyop link "$M0/d/$N1" "$M0/d/$Y2"
TEST umount_client "$M0"
TEST start_fsd client-dist --volfile "$T/vol/dist4.vol" "$M0"
TEST wait_for_mount "$M0"
TEST names_ok 5 "$Y2" "$M1" "$X2" "$N1" "$Z0"

# 3. A rename to a name hashing to b2 (holding X2's and Y2's link file):
# its link file there is one more name of that inode.
TEST mv "$M0/d/$Z0" "$M0/d/$V2"
EXPECT "1000" mode_of 2 "$V2"
EXPECT "$(ino_of 2 "$X2")" ino_of 2 "$V2"
EXPECT "-" mode_of 0 "$Z0"
TEST names_ok 5 "$N1" "$M1" "$V2" "$X2" "$Y2"

# 4. Unlink every name; the others keep working; nothing is left.
GFID=$(python3 -c "
import os, uuid
print(uuid.UUID(bytes=os.getxattr('$T/bricks/b0/d/$N1', 'trusted.mortar.gfid')))")
EXPECT "3" handles "$GFID"
TEST rm "$M0/d/$M1"
TEST names_ok 4 "$N1" "$V2" "$X2" "$Y2"
TEST rm "$M0/d/$X2"
TEST names_ok 3 "$N1" "$V2" "$Y2"
TEST rm "$M0/d/$N1"
TEST names_ok 2 "$V2" "$Y2"
TEST rm "$M0/d/$Y2"
TEST names_ok 1 "$V2"
TEST rm "$M0/d/$V2"
EXPECT "0" sh -c "ls -A '$M0/d' | wc -l"
for b in 0 1 2 3; do
    EXPECT "0" sh -c "find '$T/bricks/b$b/d' -mindepth 1 | wc -l"
done
EXPECT "0" handles "$GFID"
TEST rmdir "$M0/d"
