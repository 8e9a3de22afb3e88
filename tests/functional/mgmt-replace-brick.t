#!/usr/bin/env bash
# volume replace-brick VOL OLD NEW commit force (mortard/replace-brick.c,
# heal-mark.c) on a 1 x 3 replicated volume mounted with `mount -t mortar`
# (the client follows the volfile):
#  - a tree (directories, files of a few sizes, a sparse file, a symlink,
#    a hard link, modes) written through the mount; brick 2 is replaced
#    by an empty directory: GlusterFS's success message, volume info and
#    --xml name the new path, the old brick's process is gone, the old
#    directory loses its volume id;
#  - the mount reads everything the same during (a reader loops through
#    the command and the heal) and after;
#  - the self-heal daemon alone fills the new brick: the same names,
#    types, modes, sizes, contents, symlink target, hard link and GFIDs
#    as brick 0, the hole kept, every brick's heal index empty;
#  - bad input (other forms, an unknown volume or brick, a plain
#    distribute volume, a stopped one, a new brick already in a volume,
#    inside another brick, or whose parent is missing): its error, and
#    the store unchanged.
# Fails without replace-brick: the command is unknown.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2; do track_brick rb brick$i; done
track_brick pv brick0
_T_PIDFILES+=("$T/run/heal/rb.pid")

index_count() {
    find "$B/$1/.mortar/index/xattrop" -mindepth 1 2> /dev/null | wc -l
}
old_counts() {
    echo "$(index_count r0) $(index_count r1) $(index_count r2)"
}
all_counts() {
    echo "$(index_count r0) $(index_count r1) $(index_count new2)"
}
# tree_of DIR: every object under DIR but .mortar: path, type, mode,
# size (files), link count (files), symlink target, GFID, content sum.
tree_of() {
    (cd "$1" && find . -path ./.mortar -prune -o -mindepth 1 -print |
        sort | while read -r p; do
            g=$(getfattr --absolute-names -h -e hex \
                -n trusted.mortar.gfid "$p" 2> /dev/null |
                sed -n 's/^trusted.mortar.gfid=//p')
            if [ -f "$p" ] && [ ! -L "$p" ]; then
                echo "$p $(stat -c '%F %a %s %h' "$p") $g" \
                    "$(sha1sum < "$p" | cut -c1-40)"
            elif [ -L "$p" ]; then
                echo "$p link $(readlink "$p") $g"
            else
                echo "$p $(stat -c '%F %a' "$p") $g"
            fi
        done)
}
same_tree3() {
    [ "$(tree_of "$B/r0")" = "$(tree_of "$B/new3")" ] && echo ok ||
        echo differ
}
same_tree() {
    [ "$(tree_of "$B/r0")" = "$(tree_of "$B/new2")" ] && echo ok ||
        echo differ
}
# reader: reads the whole tree through the mount until $T/stop exists;
# each difference from $T/expect is written to $T/read-errors.
reader() {
    while [ ! -e "$T/stop" ]; do
        mount_sums > "$T/now" 2>&1
        cmp -s "$T/now" "$T/expect" ||
            diff "$T/expect" "$T/now" >> "$T/read-errors"
    done
}

TEST start_mortard
TEST mkdir -p "$B"
TEST mcli volume create rb replica 3 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 force
TEST mcli volume start rb
EXPECT_WITHIN 20 "Y" sh -c "p=\$(cat '$T/run/heal/rb.pid' 2>/dev/null) &&
    [ -n \"\$p\" ] && kill -0 \"\$p\" && echo Y"
TEST mount_mortar 127.0.0.1:/rb "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"

# The tree.
TEST mkdir -p "$M0/d1/d2/d3" "$M0/empty"
TEST chmod 750 "$M0/d1/d2"
TEST touch "$M0/zero"
TEST sh -c "echo small > '$M0/small'"
TEST sh -c "head -c 200000 /dev/urandom > '$M0/d1/mid'"
TEST chmod 600 "$M0/d1/mid"
TEST sh -c "head -c 3000000 /dev/urandom > '$M0/d1/d2/big'"
TEST truncate -s 8M "$M0/sparse"
TEST sh -c "printf data | dd of='$M0/sparse' bs=1 seek=4194304 \
    conv=notrunc 2> /dev/null"
TEST ln -s d1/mid "$M0/link"
TEST ln "$M0/small" "$M0/d1/hard"
TEST sh -c "for i in \$(seq 1 40); do echo f\$i > '$M0/d1/d2/d3/f'\$i; done"
mount_sums > "$T/expect"
TEST test -s "$T/expect"
EXPECT_WITHIN 20 "0 0 0" old_counts
OLD_PID=$(cat "$T/run/rb-brick2.pid")
TEST test -n "$OLD_PID"

# Bad input: its error, the store unchanged.
TEST mkdir -p "$B/plain"
TEST mcli volume create pv 127.0.0.1:$B/plain force
SUM=$(store_sum)
EXPECT_MATCH "^Usage: volume replace-brick <VOLNAME> <SOURCE-BRICK> \
<NEW-BRICK> \{commit force\}" mcli2 volume replace-brick rb \
    127.0.0.1:$B/r2 127.0.0.1:$B/new2 commit
EXPECT_MATCH "^Usage: volume replace-brick" mcli2 volume replace-brick rb \
    127.0.0.1:$B/r2 127.0.0.1:$B/new2 start
EXPECT_MATCH "^Usage: volume replace-brick" mcli2 volume replace-brick rb \
    127.0.0.1:$B/r2 127.0.0.1:$B/new2 commit force now
EXPECT_MATCH "failed: Volume nov does not exist" mcli2 volume \
    replace-brick nov 127.0.0.1:$B/r2 127.0.0.1:$B/new2 commit force
EXPECT_MATCH "replace-brick is not permitted on distribute only volumes" \
    mcli2 volume replace-brick pv 127.0.0.1:$B/plain 127.0.0.1:$B/new2 \
    commit force
EXPECT_MATCH "failed: brick: 127.0.0.1:$B/r9 does not exist in volume: rb" \
    mcli2 volume replace-brick rb 127.0.0.1:$B/r9 127.0.0.1:$B/new2 \
    commit force
EXPECT_MATCH "already part of a volume|already a brick|is a brick" \
    mcli2 volume replace-brick rb 127.0.0.1:$B/r2 127.0.0.1:$B/r1 \
    commit force
EXPECT_MATCH "nested|inside|within|part of" mcli2 volume replace-brick rb \
    127.0.0.1:$B/r2 127.0.0.1:$B/r1/sub commit force
EXPECT_MATCH "failed: .*$B/nodir" mcli2 volume replace-brick rb \
    127.0.0.1:$B/r2 127.0.0.1:$B/nodir/new commit force
EXPECT_MATCH "failed: " mcli2 volume replace-brick rb 127.0.0.1:$B/r2 \
    nocolon commit force
EXPECT "$SUM" store_sum
TEST test ! -e "$B/new2"
EXPECT "Y" proc_alive "$OLD_PID"

# The replace, with a reader going through it and the heal.
rm -f "$T/stop" "$T/read-errors"
TEST touch "$T/read-errors"
bg_run reader
EXPECT_MATCH "^volume replace-brick: success: replace-brick commit force \
operation successful$" mcli volume replace-brick rb 127.0.0.1:$B/r2 \
    127.0.0.1:$B/new2 commit force
info_brick3() {
    mcli volume info rb | grep '^Brick3:'
}
EXPECT "Brick3: 127.0.0.1:$B/new2" info_brick3
EXPECT "" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume info rb |
    grep '$B/r2\$'"
EXPECT_MATCH "<name>127.0.0.1:$B/new2</name>" mcli --xml volume info rb
EXPECT_WITHIN 20 "N" proc_alive "$OLD_PID"
EXPECT "" getfattr --absolute-names --only-values -n \
    trusted.mortar.volume-id "$B/r2" 2> /dev/null
TEST test -e "$T/run/rb-brick2.pid"
EXPECT "Y" proc_alive "$(cat "$T/run/rb-brick2.pid")"
# Both other bricks' roots were marked before the new brick started.
EXPECT "2" grep -c "the root of .* blames rb-brick2" "$T/log/mortard.log"
# The slot keeps its name: the new brick is r2's brick2.
EXPECT "1" grep -c "remote-subvolume rb-brick2" "$T/state/vols/rb/client.vol"
EXPECT "    subvolumes rb-brick0 rb-brick1 rb-brick2" grep \
    "subvolumes rb-brick0" "$T/state/vols/rb/client.vol"

EXPECT_WITHIN 180 "0 0 0" all_counts
EXPECT_WITHIN 60 "ok" same_tree
TEST touch "$T/stop"
EXPECT "" cat "$T/read-errors"
mount_sums > "$T/after"
EXPECT "" diff "$T/expect" "$T/after"
# Content, the hole, the link and the hard link on the new brick itself.
EXPECT "data" sh -c "dd if='$B/new2/sparse' bs=1 skip=4194304 count=4 \
    2> /dev/null"
TEST test "$(stat -c %b "$B/new2/sparse")" -lt 2048
EXPECT "d1/mid" readlink "$B/new2/link"
EXPECT "$(stat -c %i "$B/new2/small")" stat -c %i "$B/new2/d1/hard"
EXPECT "f40" cat "$B/new2/d1/d2/d3/f40"
# The mount writes on: the new copy gets it too.
TEST sh -c "echo after > '$M0/d1/after'"
EXPECT_WITHIN 20 "after" cat "$B/new2/d1/after"

TEST umount_client "$M0"
EXPECT_MATCH "<volReplaceBrick><volname>rb</volname>.*<newBrick>\
127.0.0.1:$B/new3</newBrick>" sh -c "'$MDCTL' -s '$T/run/mortard.sock' \
    --xml volume replace-brick rb 127.0.0.1:$B/new2 127.0.0.1:$B/new3 \
    commit force | tr -d ' \n'"
EXPECT "Brick3: 127.0.0.1:$B/new3" info_brick3
EXPECT_WITHIN 120 "ok" same_tree3

# No other brick of the set up (their disks gone, so the supervisor
# cannot restart them): nothing can be marked, so nothing changes and
# the old brick runs again.
P0=$(cat "$T/run/rb-brick0.pid")
P1=$(cat "$T/run/rb-brick1.pid")
P2=$(cat "$T/run/rb-brick2.pid")
TEST mv "$B/r0" "$B/r0.away"
TEST mv "$B/r1" "$B/r1.away"
TEST kill -9 "$P0" "$P1"
two_alive() {
    echo "$(proc_alive "$P0") $(proc_alive "$P1")"
}
EXPECT_WITHIN 20 "N N" two_alive
SUM=$(store_sum)
EXPECT_MATCH "failed: no other brick of the replica set of \
127.0.0.1:$B/new3 could be marked" mcli2 volume replace-brick rb \
    127.0.0.1:$B/new3 127.0.0.1:$B/new4 commit force
EXPECT "$SUM" store_sum
TEST test ! -e "$B/new4"
# new_pid FILE OLD: Y once FILE names a live process other than OLD.
new_pid() {
    local p
    p="$(cat "$1" 2> /dev/null)"
    if [ -n "$p" ] && [ "$p" != "$2" ]; then proc_alive "$p"; else echo N; fi
}
EXPECT_WITHIN 20 "Y" new_pid "$T/run/rb-brick2.pid" "$P2"
TEST mv "$B/r0.away" "$B/r0"
TEST mv "$B/r1.away" "$B/r1"
TEST mcli volume start rb force

TEST mcli volume stop rb
SUM=$(store_sum)
EXPECT_MATCH "failed: volume: rb is not started" mcli2 volume \
    replace-brick rb 127.0.0.1:$B/new2 127.0.0.1:$B/new3 commit force
EXPECT "$SUM" store_sum
