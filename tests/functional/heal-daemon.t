#!/usr/bin/env bash
# The self-heal daemon (mortarfsd --heal, mortarfsd/heal/) over a
# hand-written replica 3 volfile:
#  - a brick killed while a mount makes, rewrites, chmods, renames and
#    removes files and directories; the mount is gone before the brick
#    comes back, so nothing heals on access;
#  - the daemon, given the three bricks, empties every brick's heal
#    index and leaves the returned brick identical to the others
#    (names, content, modes, GFIDs), a large file's holes included;
#  - its progress file counts what it healed and says nothing is left;
#    TERM stops it.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

# index_count BRICK: entries in the brick's heal index.
index_count() {
    find "$T/bricks/$1/.mortar/index/xattrop" -mindepth 1 2> /dev/null \
        | wc -l
}

# tree BRICK: every name under the brick (not .mortar) with its type,
# mode, size and GFID, one line each, sorted.
tree() {
    (cd "$T/bricks/$1" && find . -path ./.mortar -prune -o -print \
        | sort | while read -r p; do
            printf '%s %s %s\n' "$p" "$(stat -c '%F %a %s' "$p")" \
                "$(getfattr --absolute-names -h -n trusted.mortar.gfid \
                    -e hex "$p" 2> /dev/null | sed -n 's/.*=//p')"
        done)
}

# same_tree A B: "ok" if both bricks hold the same names, attributes,
# GFIDs and file contents.
same_tree() {
    [ "$(tree "$1")" = "$(tree "$2")" ] || { echo "trees differ"; return; }
    diff -r --exclude=.mortar "$T/bricks/$1" "$T/bricks/$2" > /dev/null \
        || { echo "contents differ"; return; }
    echo ok
}

state_of() {
    sed -n "s/^$1=//p" "$T/heal.state" 2> /dev/null
}

TEST rep3_start
TEST mkdir -p "$M0/keep" "$M0/gone/sub"
TEST sh -c "for i in 1 2 3 4 5; do echo old\$i > '$M0/keep/f'\$i; done"
TEST sh -c "echo bye > '$M0/gone/sub/x'"
TEST sh -c "echo moved > '$M0/keep/m'"

# Brick 2 misses all of this.
TEST kill_brick b2
TEST sh -c "for i in 1 2 3; do echo new\$i > '$M0/keep/f'\$i; done"
TEST rm -f "$M0/keep/f5"
TEST rm -rf "$M0/gone"
TEST mv "$M0/keep/m" "$M0/keep/m2"
TEST chmod 600 "$M0/keep/f4"
TEST mkdir -p "$M0/new/deeper"
TEST sh -c "for i in \$(seq 1 20); do echo n\$i > '$M0/new/deeper/g'\$i; done"
TEST ln -s ../keep/f1 "$M0/new/link"
# 8 MiB with data at both ends and a hole between.
TEST dd if=/dev/urandom of="$M0/new/sparse" bs=1M count=1 status=none
TEST dd if=/dev/urandom of="$M0/new/sparse" bs=1M count=1 seek=7 \
    conv=notrunc status=none
TEST umount_client "$M0"
TEST test "$(index_count b0)" -gt 0
EXPECT "ok" same_tree b0 b1
TEST test "$(same_tree b0 b2)" != ok

# Brick 2 back; the daemon heals it.
TEST start_fsd brick-b2 --volfile "$T/vol/b2.vol"
TEST start_fsd shd --volfile "$T/vol/rep3.vol" --heal \
    --heal-brick "rep=$T/bricks/b0" --heal-brick "rep=$T/bricks/b1" \
    --heal-brick "rep=$T/bricks/b2" --heal-state "$T/heal.state" \
    --heal-interval 1
all_counts() {
    echo "$(index_count b0) $(index_count b1) $(index_count b2)"
}
EXPECT_WITHIN 120 "0 0 0" all_counts
EXPECT "ok" same_tree b0 b2
EXPECT "ok" same_tree b1 b2
EXPECT "new1" cat "$T/bricks/b2/keep/f1"
TEST test ! -e "$T/bricks/b2/gone"
TEST test ! -e "$T/bricks/b2/keep/m"
EXPECT "moved" cat "$T/bricks/b2/keep/m2"
EXPECT "600" stat -c %a "$T/bricks/b2/keep/f4"
# The hole stayed a hole: about 2 MiB allocated of 8.
TEST test "$(du -k "$T/bricks/b2/new/sparse" | cut -f1)" -lt 4096
# The progress file is rewritten once a second: the heals that emptied
# the indexes may not be in it yet.
healed_some() {
    [ "$(state_of healed)" -gt 0 ] 2> /dev/null && echo Y || echo N
}
EXPECT_WITHIN 10 "Y" healed_some
EXPECT_WITHIN 10 "0" state_of pending
EXPECT "0" state_of failed
EXPECT "0" state_of eta_seconds

# TERM stops it, with its last progress written.
SHD=$(fsd_pid shd)
TEST kill -TERM "$SHD"
EXPECT_WITHIN 10 "N" is_alive "$SHD"
EXPECT "$SHD" state_of pid
