#!/usr/bin/env bash
# Granular entry heal: while a brick is down, each entry change that
# brick misses is recorded by name on the others (storage/posix's
# .mortar/index/entry-changes/<dir-gfid>/<name>), so that the heal of a
# directory of 2,000 names looks up the few that changed instead of
# listing it; a change without one name (a rename within a directory)
# marks the directory's records full and it is listed as before.
#  - the records hold exactly the changed names (creates, unlinks, both
#    sides of a rename across directories), a same-directory rename
#    leaves the full mark;
#  - the self-heal daemon leaves the returned brick identical to the
#    others, two directories healed from their records and the third
#    listed (its statedump counts them), and the records are gone.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

index_count() {
    find "$T/bricks/$1/.mortar/index/xattrop" -mindepth 1 2> /dev/null \
        | wc -l
}

# gfid_of BRICK PATH: the object's GFID as a UUID string.
gfid_of() {
    getfattr --absolute-names -h -n trusted.mortar.gfid -e hex \
        "$T/bricks/$1/$2" 2> /dev/null | sed -n 's/.*=0x//p' |
        sed -E 's/(.{8})(.{4})(.{4})(.{4})(.{12})/\1-\2-\3-\4-\5/'
}

# records BRICK DIR: the names of DIR's granular records, sorted, on one
# line.
records() {
    ls "$T/bricks/$1/.mortar/index/entry-changes/$(gfid_of "$1" "$2")" \
        2> /dev/null | sort | tr '\n' ' '
}

# full_mark BRICK DIR: Y when DIR's records are marked full.
full_mark() {
    getfattr --absolute-names -n trusted.mortar.full \
        "$T/bricks/$1/.mortar/index/entry-changes/$(gfid_of "$1" "$2")" \
        > /dev/null 2>&1 && echo Y || echo N
}

record_dirs() {
    find "$T/bricks/$1/.mortar/index/entry-changes" -mindepth 1 \
        2> /dev/null | wc -l
}

same_tree() {
    diff -r --exclude=.mortar "$T/bricks/$1" "$T/bricks/$2" > /dev/null \
        && echo ok || echo differ
}

TEST rep3_start
TEST mkdir "$M0/big" "$M0/other" "$M0/same"
TEST python3 -c "
import os
for i in range(2000):
    with open('$M0/big/f%d' % i, 'w') as f:
        f.write('x%d' % i)
"
TEST sh -c "echo a > '$M0/same/a'"
EXPECT "0" record_dirs b0

# Brick 2 misses these.
TEST kill_brick b2
TEST sh -c "for i in 1 2 3 4 5; do echo n\$i > '$M0/big/n'\$i; done"
TEST rm "$M0/big/f1" "$M0/big/f2"
TEST mv "$M0/big/f3" "$M0/other/f3"
TEST mv "$M0/same/a" "$M0/same/b"
TEST umount_client "$M0"

EXPECT "f1 f2 f3 n1 n2 n3 n4 n5 " records b0 big
EXPECT "f1 f2 f3 n1 n2 n3 n4 n5 " records b1 big
EXPECT "f3 " records b0 other
EXPECT "N" full_mark b0 big
EXPECT "Y" full_mark b0 same
EXPECT "0" record_dirs b2

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
TEST test ! -e "$T/bricks/b2/big/f1"
EXPECT "n5" cat "$T/bricks/b2/big/n5"
EXPECT "x3" cat "$T/bricks/b2/other/f3"
EXPECT "a" cat "$T/bricks/b2/same/b"
TEST test ! -e "$T/bricks/b2/same/a"
EXPECT "0" record_dirs b0
EXPECT "0" record_dirs b1
dump_value() {
    statedump_of "$(fsd_pid shd)" | sed -n "s/^$1=//p" | head -n 1
}
TEST test "$(dump_value entry_heals_granular)" -ge 2
TEST test "$(dump_value entry_heals_listed)" -ge 1
