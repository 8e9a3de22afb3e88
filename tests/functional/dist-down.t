#!/usr/bin/env bash
# cluster/distribute with one of four bricks killed: files on the others
# stay readable, files of the dead brick fail with an error (not a hang),
# and everything is visible again once the brick is back.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

# read_all DIR: "ok" if every file reads back its own name, else the
# first failure.
read_all() {
    local f
    for f in "$1"/*; do
        [ "$(cat "$f" 2>&1)" = "$(basename "$f")" ] || { echo "bad $f"; return; }
    done
    echo ok
}

TEST dist4_start
TEST mkdir "$M0/d"
TEST sh -c "for i in \$(seq 1 200); do echo n\$i > '$M0/d/n'\$i; done"
EXPECT "ok" read_all "$M0/d"

# Brick 2 dies.
TEST kill_brick b2
on2="$(cd "$T/bricks/b2/d" && ls | head -1)"
on0="$(cd "$T/bricks/b0/d" && ls | head -1)"
TEST test -n "$on2"
TEST test -n "$on0"
EXPECT "$on0" timeout 20 cat "$M0/d/$on0"
# A file of the dead brick: an error, quickly.
TEST ! timeout 20 cat "$M0/d/$on2"
EXPECT_MATCH "Transport endpoint is not connected|Input/output error" \
    errno_of timeout 20 cat "$M0/d/$on2"
# The others still list (without brick 2's files) and read.
TEST timeout 20 ls "$M0/d"
TEST test "$(timeout 20 ls "$M0/d" | wc -l)" -lt 200
TEST test "$(timeout 20 ls "$M0/d" | wc -l)" -gt 100

# Back: everything visible again.
TEST start_fsd brick-b2 --volfile "$T/vol/b2.vol"
EXPECT_WITHIN 20 "200" sh -c "ls '$M0/d' | wc -l"
EXPECT_WITHIN 20 "$on2" cat "$M0/d/$on2"
EXPECT "ok" read_all "$M0/d"
