#!/usr/bin/env bash
# cluster/distribute over four bricks (hand-written client volfile):
# 10,000 files spread within +-10% of even over the brick directories,
# every directory on every brick, a tree created, read, renamed and
# removed with rm -rf, link files for names renamed across hash ranges.
# TIMEOUT: 600
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

umount_client_dist() {
    local pid
    pid="$(fsd_pid client-dist)"
    umount "$M0" 2> /dev/null || umount -l "$M0"
    stop_pid "$pid" TERM
}

remount_dist() {
    start_fsd client-dist --volfile "$T/vol/dist4.vol" "$M0" || return 1
    wait_for_mount "$M0"
}

# files_on BRICK DIR: regular data files (not link files) in DIR on BRICK.
files_on() {
    find "$T/bricks/b$1/$2" -maxdepth 1 -type f ! -perm 1000 | wc -l
}

spread_ok() {
    local i n total=0
    for i in 0 1 2 3; do
        n=$(files_on "$i" many)
        total=$((total + n))
        if [ "$n" -lt 2250 ] || [ "$n" -gt 2750 ]; then
            echo "brick $i has $n"
            return 1
        fi
    done
    [ "$total" = 10000 ] || { echo "total $total"; return 1; }
}

TEST dist4_start

# Directories exist everywhere, with a 20-byte layout.
TEST mkdir "$M0/many"
for i in 0 1 2 3; do
    EXPECT "directory" stat -c %F "$T/bricks/b$i/many"
    EXPECT_MATCH "trusted.mortar.dht=0x00000001" \
        getfattr -e hex -n trusted.mortar.dht "$T/bricks/b$i/many"
done

TEST python3 -c "
import os
for i in range(10000):
    fd = os.open('$M0/many/f%05d' % i, os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
"
EXPECT "10000" sh -c "ls '$M0/many' | wc -l"
TEST spread_ok
EXPECT "0" sh -c "ls '$M0/many' | sort | uniq -d | wc -l"

# A tree: create, read back, rename across directories, remove.
TEST mkdir -p "$M0/tree/a/b/c" "$M0/tree/x"
TEST sh -c "for i in \$(seq 1 50); do echo data-\$i > '$M0/tree/a/b/c/f'\$i; done"
EXPECT "data-17" cat "$M0/tree/a/b/c/f17"
EXPECT "50" sh -c "ls '$M0/tree/a/b/c' | wc -l"
TEST sh -c "for i in \$(seq 1 50); do mv '$M0/tree/a/b/c/f'\$i '$M0/tree/x/g'\$i; done"
EXPECT "0" sh -c "ls '$M0/tree/a/b/c' | wc -l"
EXPECT "data-33" cat "$M0/tree/x/g33"
EXPECT "50" sh -c "ls '$M0/tree/x' | wc -l"
# Renamed files whose new name hashes elsewhere left link files, and
# a fresh mount still reads every one through them.
TEST test "$(find "$T"/bricks/b*/tree/x -type f -perm 1000 | wc -l)" -gt 0
TEST mv "$M0/tree/a" "$M0/tree/a2"
EXPECT "directory" stat -c %F "$M0/tree/a2/b/c"
for i in 0 1 2 3; do
    EXPECT "directory" stat -c %F "$T/bricks/b$i/tree/a2/b/c"
    TEST test ! -e "$T/bricks/b$i/tree/a"
done
TEST umount_client_dist
TEST remount_dist
EXPECT "data-49" cat "$M0/tree/x/g49"
EXPECT "50" sh -c "cat '$M0'/tree/x/g* | wc -l"
TEST rm -rf "$M0/tree"
TEST test ! -e "$M0/tree"
for i in 0 1 2 3; do
    TEST test ! -e "$T/bricks/b$i/tree"
done
EXPECT "0" sh -c "find '$T'/bricks/b*/ -path '*/.mortar' -prune -o -type f -perm 1000 -print | wc -l"
