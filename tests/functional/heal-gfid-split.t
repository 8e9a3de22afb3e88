#!/usr/bin/env bash
# GFID split-brains (one name, another object on each copy), made on
# purpose and resolved (xlators/cluster/replicate/rep-heal-entry.c,
# mortarfsd/heal/heal-resolve.c):
#  - a replica 2 volume with cluster.quorum-type none, the self-heal
#    daemon and heal on access off: names created in d/ with brick 1
#    down, then created again (other objects, later mtimes) with brick 0
#    down: each brick's copy of d/ blames the other, each name has two
#    GFIDs, and reading one through a mount answers EIO;
#  - `heal V split-brain latest-mtime /d/g1`, `bigger-file /d/g2`,
#    `source-brick B /d/g3` each keep their rule's object under the name
#    on both bricks and remove the other; the other names stay as they
#    were until theirs is resolved;
#  - cluster.favorite-child-policy mtime and the daemon resolve the last
#    one (g4) by themselves and heal the rest: both bricks' d/ end with
#    the same names, GFIDs and contents, and `info split-brain` is empty.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
for i in 0 1; do track_brick gs brick$i; done
_T_PIDFILES+=("$T/run/heal/gs.pid")

down() {
    brick_away gs "brick$1" "$B/s$1"
}
up() {
    brick_back gs "$B/s$1"
}
# gfid N F: brick N's GFID of F (hex).
gfid() {
    getfattr -e hex -n trusted.mortar.gfid --only-values "$B/s$1/$2" \
        2> /dev/null | od -An -tx1 | tr -d ' \n'
}
# same_gfid F: "ok" when both bricks hold F with one GFID.
same_gfid() {
    local a b
    a="$(gfid 0 "$1")"
    b="$(gfid 1 "$1")"
    [ -n "$a" ] && [ "$a" = "$b" ] && echo ok || echo "differ($a/$b)"
}
same() {
    cmp -s "$B/s0/$1" "$B/s1/$1" && echo ok || echo differ
}
split_count() {
    mcli volume heal gs info split-brain | awk \
        -v b="Brick 127.0.0.1:$B/s$1" '$0 == b { on = 1; next }
        on && /^Number of entries in split-brain:/ { print $6; exit }'
}
# tree N: brick N's d/: each name, its GFID and a digest of its content.
tree() {
    local f
    for f in $(ls "$B/s$1/d"); do
        echo "$f $(gfid "$1" "d/$f") $(md5sum < "$B/s$1/d/$f")"
    done
}
trees_same() {
    [ "$(tree 0)" = "$(tree 1)" ] && echo ok || echo differ
}

TEST mkdir -p "$B"
TEST mcli volume create gs replica 2 127.0.0.1:$B/s0 127.0.0.1:$B/s1 force
TEST mcli volume set gs cluster.quorum-type none
TEST mcli volume set gs cluster.self-heal-daemon off
TEST mcli volume set gs cluster.data-self-heal off
TEST mcli volume set gs cluster.metadata-self-heal off
TEST mcli volume set gs cluster.entry-self-heal off
TEST mcli volume start gs
TEST mount_volume gs "$M0"
TEST mkdir "$M0/d"
TEST sh -c "echo x > '$M0/p1'; echo x > '$M0/p2'; echo k > '$M0/d/kept'"

# Brick 0 alone takes the first objects of the names.
TEST down 1
TEST sh -c "echo s0-older > '$M0/d/g1'"
TEST sh -c "echo s0-the-longer-content > '$M0/d/g2'"
TEST sh -c "echo s0 > '$M0/d/g3'; echo s0-older > '$M0/d/g4'"
TEST sh -c "echo only-s0 > '$M0/d/a0'"
TEST up 1
EXPECT_WITHIN 60 "Y" brick_reaches "$B/s1" p1
# Brick 1 alone, later: other objects under the same names.
TEST down 0
TEST sh -c "echo s1-newer > '$M0/d/g1'"
TEST sh -c "echo s1 > '$M0/d/g2'"
TEST sh -c "echo s1-other > '$M0/d/g3'; echo s1-newer > '$M0/d/g4'"
TEST sh -c "echo only-s1 > '$M0/d/a1'"
TEST up 0
EXPECT_WITHIN 60 "Y" brick_reaches "$B/s0" p2
for g in g1 g2 g3 g4; do
    EXPECT_MATCH "^differ" same_gfid d/$g
done
TEST umount_client "$M0"
TEST mount_volume gs "$M0"
EXPECT "Input/output error" errno_of cat "$M0/d/g1"

# One name at a time, by the CLI.
EXPECT "Healed /d/g1." mcli volume heal gs split-brain latest-mtime /d/g1
EXPECT "ok" same_gfid d/g1
EXPECT "s1-newer" cat "$B/s1/d/g1"
EXPECT_MATCH "^differ" same_gfid d/g2
EXPECT "Healed /d/g2." mcli volume heal gs split-brain bigger-file /d/g2
EXPECT "ok" same_gfid d/g2
EXPECT "s0-the-longer-content" cat "$B/s0/d/g2"
EXPECT "Healed /d/g3." mcli volume heal gs split-brain source-brick \
    127.0.0.1:$B/s1 /d/g3
EXPECT "ok" same_gfid d/g3
EXPECT "s1-other" cat "$B/s1/d/g3"
# The names merged on the way (nothing removed).
TEST test -e "$B/s1/d/a0"
EXPECT_MATCH "^differ" same_gfid d/g4
EXPECT_MATCH "Healing /d/g1 failed: File not in split-brain." \
    mcli2 volume heal gs split-brain latest-mtime /d/g1

# The last one by the policy: the daemon heals d, the names' contents.
TEST mcli volume set gs cluster.favorite-child-policy mtime
TEST mcli volume set gs cluster.self-heal-daemon on
TEST mcli volume heal gs
EXPECT_WITHIN 120 "ok" same_gfid d/g4
EXPECT_WITHIN 120 "ok" trees_same
EXPECT "s1-newer" cat "$B/s0/d/g4"
EXPECT "s1-newer" cat "$B/s0/d/g1"
EXPECT "s0-the-longer-content" cat "$B/s1/d/g2"
EXPECT "s1-other" cat "$B/s0/d/g3"
EXPECT "only-s1" cat "$B/s0/d/a1"
EXPECT "ok" same d/kept
EXPECT_WITHIN 120 "0" split_count 0
EXPECT_WITHIN 60 "0" split_count 1
EXPECT "s1-newer" cat "$M0/d/g4"
EXPECT "s0-the-longer-content" cat "$M0/d/g2"

TEST umount_client "$M0"
