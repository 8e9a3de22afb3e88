#!/usr/bin/env bash
# A directory tree deeper than PATH_MAX: made with mkdir/cd loops, then
# walked with find and ls, and removed with rm -rf.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

NAME=$(printf 'd%.0s' $(seq 1 200))
DEPTH=30   # 30 x 201 bytes > 4096 (PATH_MAX)

make_deep() {
    (
        cd "$M0" || exit 1
        mkdir top && cd top || exit 1
        for ((i = 0; i < DEPTH; i++)); do
            mkdir "$NAME" && cd "$NAME" || exit 1
        done
        echo bottom > leaf || exit 1
        [ "$(cat leaf)" = bottom ] || exit 1
    )
}
TEST make_deep
EXPECT "$DEPTH" sh -c "find '$M0/top' -mindepth 1 -type d | wc -l"
EXPECT "1" sh -c "find '$M0/top' -type f -name leaf | wc -l"
# The path really is longer than PATH_MAX.
EXPECT "Y" sh -c "[ \$(find '$M0/top' -name leaf | head -n1 | wc -c) -gt 4096 ] && echo Y || echo N"
# Read the leaf with a walk of relative cds.
read_leaf() {
    (
        cd "$M0/top" || exit 1
        for ((i = 0; i < DEPTH; i++)); do cd "$NAME" || exit 1; done
        ls -l leaf > /dev/null || exit 1
        cat leaf
    )
}
EXPECT "bottom" read_leaf
# Renaming the top keeps the whole tree reachable.
TEST mv "$M0/top" "$M0/top2"
EXPECT "1" sh -c "find '$M0/top2' -type f -name leaf | wc -l"
TEST rm -rf "$M0/top2"
TEST test ! -e "$M0/top2"
TEST test ! -e "$B0/top2"
