#!/usr/bin/env bash
# cluster/distribute over four bricks: a failed directory rename or rmdir
# loses nothing (issue 20, defect 2).
#  1. the issue's repro: mkdir n0 n1; a file in n1 on a brick that is not
#     n1's hashed one; rename(n0, n1) is ENOTEMPTY, and afterwards n1 and
#     its file are there on the mount (also a second, fresh mount) and
#     n1 on every brick with one GFID; n0 and its file are intact;
#  2. rename(n0, e) onto an empty directory still works: contents follow,
#     n0 is gone from every brick, e has n0's GFID everywhere;
#  3. rmdir of a directory not empty on one brick only (the file on a
#     brick other than the hashed one, then on the hashed one): ENOTEMPTY,
#     the directory and its file stay, on every brick and a fresh mount;
#  4. rm -rf of the parent works and leaves nothing on any brick.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# slot NAME: the brick NAME hashes to in the default 4-way layout.
slot() {
    python3 -c "import sys; sys.path.insert(0, sys.argv[1])
import dist_hash; print(dist_hash.slot(sys.argv[2], 4))" \
        "$(dirname "$0")/../lib" "$1"
}

# pick BRICK PREFIX: the first name PREFIX.N hashing to BRICK.
pick() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 4 "$1" "$2"
}

# pyop OP ARGS: os.rename / os.rmdir through python; "ok" or strerror.
op() {
    python3 - "$@" <<'PY'
import os, sys
try:
    getattr(os, sys.argv[1])(*sys.argv[2:])
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))
PY
}

# gfids REL: the distinct GFIDs of REL over the four bricks, "-" for a
# brick without it (one line: "<gfid>" when every brick has the same).
gfids() {
    local b
    for b in 0 1 2 3; do
        python3 -c "import os, sys; print(os.getxattr(sys.argv[1],
            'trusted.mortar.gfid').hex())" "$T/bricks/b$b/$1" \
            2> /dev/null || echo -
    done | sort -u | tr '\n' ' '
}

# on_bricks REL: how many bricks hold REL as a directory.
on_bricks() {
    local b n=0
    for b in 0 1 2 3; do
        [ -d "$T/bricks/b$b/$1" ] && n=$((n + 1))
    done
    echo "$n"
}

TEST dist4_start
TEST mkdir -p "$M0/p/n0" "$M0/p/n1"

# 1. The file in n1 goes to a brick that is not n1's hashed one: only
#    that brick's rename can refuse.
HN1=$(slot n1)
FB=$(( (HN1 + 1) % 4 ))
F=$(pick "$FB" f)
TEST sh -c "echo keep > '$M0/p/n0/k' && echo data > '$M0/p/n1/$F'"
G1=$(gfids p/n1)
G0=$(gfids p/n0)
EXPECT "Directory not empty" op rename "$M0/p/n0" "$M0/p/n1"
EXPECT "data" cat "$M0/p/n1/$F"
EXPECT "keep" cat "$M0/p/n0/k"
EXPECT 4 on_bricks p/n1
EXPECT 4 on_bricks p/n0
EXPECT "$G1" gfids p/n1
EXPECT "$G0" gfids p/n0
TEST test -f "$T/bricks/b$FB/p/n1/$F"
TEST mount_volfile "$T/vol/dist4.vol" "$M1"
EXPECT "data" cat "$M1/p/n1/$F"
EXPECT "keep" cat "$M1/p/n0/k"
# mv -T, as a user would, says the same and changes nothing.
TEST ! mv -T "$M0/p/n0" "$M0/p/n1"
EXPECT "data" cat "$M1/p/n1/$F"
EXPECT 4 on_bricks p/n1

# 2. Onto an empty directory: done on every brick.
TEST mkdir "$M0/p/e"
EXPECT "ok" op rename "$M0/p/n0" "$M0/p/e"
EXPECT "keep" cat "$M0/p/e/k"
EXPECT 0 on_bricks p/n0
EXPECT 4 on_bricks p/e
EXPECT "$G0" gfids p/e
EXPECT "keep" cat "$M1/p/e/k"

# 3. rmdir of a directory with a file on one brick only: first on a
#    brick other than the hashed one, then on the hashed one.
HR=$(slot r)
for FB in $(( (HR + 2) % 4 )) "$HR"; do
    F=$(pick "$FB" g)
    TEST mkdir "$M0/p/r"
    TEST sh -c "echo y > '$M0/p/r/$F'"
    GR=$(gfids p/r)
    EXPECT "Directory not empty" op rmdir "$M0/p/r"
    EXPECT "y" cat "$M0/p/r/$F"
    EXPECT 4 on_bricks p/r
    EXPECT "$GR" gfids p/r
    EXPECT "y" cat "$M1/p/r/$F"
    TEST rm -f "$M0/p/r/$F"
    EXPECT "ok" op rmdir "$M0/p/r"
    EXPECT 0 on_bricks p/r
done

# 4. The parent goes with everything in it.
TEST rm -rf "$M0/p"
EXPECT 0 on_bricks p
# The second mount may keep its entry for p up to its cache timeout.
EXPECT_WITHIN 10 "gone" sh -c "test -e '$M1/p' && echo there || echo gone"
