#!/usr/bin/env bash
# cluster/distribute over four bricks: renameat2(RENAME_EXCHANGE).
#  1. two files with data on one brick, names hashing to that brick:
#     swapped there (content, inode numbers, an fd open across it);
#  2. the same behind link files: names hashing to other bricks (also
#     both to one other brick, and one to the data brick): swapped, each
#     name's link file now carries the other file's GFID, reads right
#     from a fresh mount, unlink leaves nothing;
#  3. two directories: swapped on every brick, contents follow;
#  4. EXDEV for files with data on different bricks and for a file and a
#     directory; ENOENT for a missing name; nothing changed by those.
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

# xchg A B: renameat2(AT_FDCWD, A, AT_FDCWD, B, RENAME_EXCHANGE) through
# ctypes; prints "ok" or the strerror text.
xchg() {
    python3 - "$1" "$2" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
rc = libc.renameat2(AT_FDCWD, sys.argv[1].encode(), AT_FDCWD,
                    sys.argv[2].encode(), RENAME_EXCHANGE)
print("ok" if rc == 0 else os.strerror(ctypes.get_errno()))
PY
}

# gfid_of BRICK NAME: the brick's GFID of d/NAME (hex).
gfid_of() {
    python3 -c "import os, sys; print(os.getxattr(sys.argv[1],
        'trusted.mortar.gfid').hex())" "$T/bricks/b$1/d/$2" 2> /dev/null \
        || echo -
}

# all_gone: nothing left in d on any brick.
all_gone() {
    find "$T"/bricks/b*/d -mindepth 1 | wc -l
}

TEST dist4_start
TEST mkdir "$M0/d"

# 1. Everything on b1.
P1=$(pick 1 p)
Q1=$(pick 1 q)
TEST sh -c "echo first > '$M0/d/$P1'; echo second > '$M0/d/$Q1'"
IP=$(stat -c %i "$M0/d/$P1")
IQ=$(stat -c %i "$M0/d/$Q1")
# An fd open on the first file follows it to the other name.
exec 7< "$M0/d/$P1"
EXPECT "ok" xchg "$M0/d/$P1" "$M0/d/$Q1"
EXPECT "second" cat "$M0/d/$P1"
EXPECT "first" cat "$M0/d/$Q1"
EXPECT "$IQ" stat -c %i "$M0/d/$P1"
EXPECT "$IP" stat -c %i "$M0/d/$Q1"
EXPECT "first" cat <&7
exec 7<&-
EXPECT "second" cat "$T/bricks/b1/d/$P1"
EXPECT "first" cat "$T/bricks/b1/d/$Q1"
EXPECT "644" mode_of 1 "$P1"

# 2. Data on b0 under names that were renamed to hash elsewhere:
# A2 and B2 hash to b2 (one link-file brick), C3 to b3, D0 to b0.
A2=$(pick 2 a)
B2=$(pick 2 b)
C3=$(pick 3 c)
D0=$(pick 0 dd)
TA=$(pick 0 ta)
TB=$(pick 0 tb)
TC=$(pick 0 tc)
TEST sh -c "echo apple > '$M0/d/$TA'; echo berry > '$M0/d/$TB'"
TEST sh -c "echo cherry > '$M0/d/$TC'; echo date > '$M0/d/$D0'"
TEST mv "$M0/d/$TA" "$M0/d/$A2"
TEST mv "$M0/d/$TB" "$M0/d/$B2"
TEST mv "$M0/d/$TC" "$M0/d/$C3"
EXPECT "1000" mode_of 2 "$A2"
EXPECT "1000" mode_of 2 "$B2"
EXPECT "1000" mode_of 3 "$C3"
GA=$(gfid_of 0 "$A2")
GB=$(gfid_of 0 "$B2")
GC=$(gfid_of 0 "$C3")
GD=$(gfid_of 0 "$D0")
# Both link files on b2.
EXPECT "ok" xchg "$M0/d/$A2" "$M0/d/$B2"
EXPECT "berry" cat "$M0/d/$A2"
EXPECT "apple" cat "$M0/d/$B2"
EXPECT "$GB" gfid_of 2 "$A2"
EXPECT "$GA" gfid_of 2 "$B2"
EXPECT "1000" mode_of 2 "$A2"
# One link file on b3, one name on the data brick.
EXPECT "ok" xchg "$M0/d/$C3" "$M0/d/$D0"
EXPECT "date" cat "$M0/d/$C3"
EXPECT "cherry" cat "$M0/d/$D0"
EXPECT "$GD" gfid_of 3 "$C3"
EXPECT "c0" sh -c "getfattr --only-values -n trusted.mortar.dht.linkto \
    '$T/bricks/b3/d/$C3' | tr -d '\\0'"
EXPECT "$GC" gfid_of 0 "$D0"
# A link file on b2 against one on b3.
EXPECT "ok" xchg "$M0/d/$A2" "$M0/d/$C3"
EXPECT "date" cat "$M0/d/$A2"
EXPECT "berry" cat "$M0/d/$C3"
EXPECT "$GD" gfid_of 2 "$A2"
EXPECT "$GB" gfid_of 3 "$C3"
# No temporary names left; a fresh mount reads every name right.
EXPECT "0" sh -c "ls -a '$T'/bricks/b*/d | grep -c mortar-xchg"
TEST umount_client "$M0"
TEST start_fsd client-dist --volfile "$T/vol/dist4.vol" "$M0"
TEST wait_for_mount "$M0"
EXPECT "date" cat "$M0/d/$A2"
EXPECT "apple" cat "$M0/d/$B2"
EXPECT "berry" cat "$M0/d/$C3"
EXPECT "cherry" cat "$M0/d/$D0"
EXPECT "second" cat "$M0/d/$P1"

# 3. Two directories.
TEST mkdir "$M0/d/x" "$M0/d/y"
TEST sh -c "echo in-x > '$M0/d/x/f'; echo in-y > '$M0/d/y/g'"
EXPECT "ok" xchg "$M0/d/x" "$M0/d/y"
EXPECT "in-y" cat "$M0/d/x/g"
EXPECT "in-x" cat "$M0/d/y/f"
for b in 0 1 2 3; do
    EXPECT "directory" stat -c %F "$T/bricks/b$b/d/x"
done
TEST umount_client "$M0"
TEST start_fsd client-dist --volfile "$T/vol/dist4.vol" "$M0"
TEST wait_for_mount "$M0"
EXPECT "g" ls "$M0/d/x"
EXPECT "in-x" cat "$M0/d/y/f"

# 4. Refused: data on two bricks, a file and a directory, a missing name.
EXPECT "Invalid cross-device link" xchg "$M0/d/$P1" "$M0/d/$A2"
EXPECT "Invalid cross-device link" xchg "$M0/d/$P1" "$M0/d/x"
EXPECT "No such file or directory" xchg "$M0/d/$P1" "$M0/d/nothing"
EXPECT "second" cat "$M0/d/$P1"
EXPECT "date" cat "$M0/d/$A2"
EXPECT "in-y" cat "$M0/d/x/g"

# Unlink everything: no link file, no temporary name left anywhere.
TEST rm -r "$M0/d/x" "$M0/d/y"
TEST rm "$M0/d/$P1" "$M0/d/$Q1" "$M0/d/$A2" "$M0/d/$B2" "$M0/d/$C3" \
    "$M0/d/$D0"
EXPECT "0" all_gone
TEST rmdir "$M0/d"
