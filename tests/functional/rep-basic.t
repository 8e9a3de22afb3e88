#!/usr/bin/env bash
# cluster/replicate over three bricks (hand-written volfile: mortard does
# not make replicate volumes yet). Checks:
#  - files written through the mount land identical on every brick, with
#    the same GFID, and a clean write leaves no pending or dirty xattr;
#  - with one brick killed, writes and creates go on; the survivors'
#    copies carry trusted.mortar.rep.c2 blaming the dead one (data
#    counter for rewritten files, entry counter on the directory), stay
#    identical to each other, and reads return the new data;
#  - with two of three killed (below quorum) a write on an open fd fails
#    with EROFS, new opens fail (reads need quorum too) and nothing
#    changes on the survivor;
#  - with every brick back, a fresh mount never serves the stale copies
#    of the returned brick (reads of files it missed return the new data).
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

# same_on B1 B2 FILES...: "ok" if every file is byte-identical on both
# bricks, else the first that differs.
same_on() {
    local a="$1" b="$2" f
    shift 2
    for f in "$@"; do
        cmp -s "$T/bricks/$a/$f" "$T/bricks/$b/$f" \
            || { echo "differ $f"; return; }
    done
    echo ok
}

# xattr_hex BRICK PATH KEY: the value in hex, or "none".
xattr_hex() {
    getfattr --absolute-names -n "$3" -e hex "$T/bricks/$1/$2" 2> /dev/null \
        | sed -n "s/^$3=0x//p" | grep . || echo none
}

# rep_xattrs BRICK PATH: names of trusted.mortar.rep.* xattrs, or "none".
rep_xattrs() {
    getfattr --absolute-names -d -m 'trusted\.mortar\.rep\.' \
        "$T/bricks/$1/$2" 2> /dev/null | sed -n 's/=.*//p' | sort \
        | tr '\n' ' ' | sed 's/ $//' | grep . || echo none
}

# counter HEX I: counter I (0 data, 1 metadata, 2 entry) of a record.
counter() {
    [ "$1" = none ] && { echo 0; return; }
    echo $((16#${1:$(($2 * 8)):8}))
}

read_all() {
    local f want="$1"
    shift
    for f in "$@"; do
        [ "$(cat "$M0/$f" 2>&1)" = "$want$f" ] \
            || { echo "bad $f: $(cat "$M0/$f" 2>&1)"; return; }
    done
    echo ok
}

FILES=()
for i in $(seq 1 12); do FILES+=("f$i"); done

TEST rep3_start
TEST mkdir "$M0/d"
TEST sh -c "for f in ${FILES[*]}; do echo v1-\$f > '$M0'/\$f; done"
EXPECT "ok" read_all v1- "${FILES[@]}"
EXPECT "ok" same_on b0 b1 "${FILES[@]}"
EXPECT "ok" same_on b0 b2 "${FILES[@]}"
G="$(xattr_hex b0 f1 trusted.mortar.gfid)"
TEST test "$G" != none
EXPECT "$G" xattr_hex b1 f1 trusted.mortar.gfid
EXPECT "$G" xattr_hex b2 f1 trusted.mortar.gfid
EXPECT_WITHIN 5 "none" rep_xattrs b0 f1
EXPECT_WITHIN 5 "none" rep_xattrs b2 f1
EXPECT "none" rep_xattrs b1 .

# Brick 2 dies; the mount keeps writing.
TEST kill_brick b2
TEST sh -c "for f in ${FILES[*]}; do echo v2-\$f > '$M0'/\$f; done"
TEST sh -c "echo new > '$M0/d/g'"
EXPECT "ok" read_all v2- "${FILES[@]}"
EXPECT "new" cat "$M0/d/g"
EXPECT "ok" same_on b0 b1 "${FILES[@]}" d/g
# The survivors blame c2: data for the rewritten files, entry for d.
TEST test "$(counter "$(xattr_hex b0 f1 trusted.mortar.rep.c2)" 0)" -gt 0
TEST test "$(counter "$(xattr_hex b1 f7 trusted.mortar.rep.c2)" 0)" -gt 0
TEST test "$(counter "$(xattr_hex b0 d trusted.mortar.rep.c2)" 2)" -gt 0
TEST test "$(counter "$(xattr_hex b1 d trusted.mortar.rep.c2)" 2)" -gt 0
# (the last write's batch ends with its post-op-delay: no FLUSH comes
# down without write-behind, so the fd's release or the timer ends it)
EXPECT_WITHIN 5 "none" xattr_hex b0 f1 trusted.mortar.rep.dirty
EXPECT "none" xattr_hex b0 f1 trusted.mortar.rep.c1
# The dead brick has the old data and not the new name.
EXPECT "v1-f1" cat "$T/bricks/b2/f1"
TEST test ! -e "$T/bricks/b2/d/g"

# Two of three down: below quorum, nothing changes.
exec 7>> "$M0/f2"
TEST kill_brick b1
# (python reports the errno; dash's echo says "I/O error" for any.)
EXPECT_MATCH "Read-only file system" \
    errno_of python3 -c 'import os; os.write(7, b"v3")'
EXPECT_MATCH "Transport endpoint is not connected|Read-only file system" \
    errno_of touch "$M0/d/h"
exec 7>&-
TEST test ! -e "$T/bricks/b0/d/h"
EXPECT "v2-f1" cat "$T/bricks/b0/f1"
EXPECT "v2-f2" cat "$T/bricks/b0/f2"

# Everyone back; a fresh mount reads the good copies only.
TEST start_fsd brick-b1 --volfile "$T/vol/b1.vol"
TEST start_fsd brick-b2 --volfile "$T/vol/b2.vol"
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/rep3.vol" "$M0"
EXPECT_WITHIN 20 "ok" read_all v2- "${FILES[@]}"
EXPECT "new" cat "$M0/d/g"
