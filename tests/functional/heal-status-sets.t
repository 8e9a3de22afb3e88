#!/usr/bin/env bash
# `volume heal VOL status` counts an object waiting for heal once per
# replica set (mortard/cmd-heal.c; doc/self-heal.md, "Commands"): on a
# 2 x 3 volume with one brick of each set down and the self-heal daemon
# off, 20 files written in a directory are listed in the heal index of
# both good bricks of their set (and the directory, changed on both
# sets, on all four). Each brick's "Entries left" is its index; "Total
# entries left" is 22: per set the union of its indexes by GFID (its
# files and the directory), the sets added (before: every brick added,
# 44). With the daemon on, "Data left" is the files' 80 KiB once, the
# largest of each set's bricks' figures (before: 160 KiB, each good
# copy's added); the daemon heals and counts each object once per set
# (mortarfsd/heal: before, once per good copy on this server) and lists
# the objects waiting for a copy under each good brick.
# TIMEOUT: 200
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
N=20
TEST start_mortard
for i in 0 1 2 3 4 5; do track_brick hx brick$i; done
_T_PIDFILES+=("$T/run/heal/hx.pid")

# down N: brick hN gone (its directory moved away, so the supervisor's
# restarts fail).
down() {
    local p
    p=$(cat "$T/run/hx-brick$1.pid")
    mv "$B/h$1" "$B/h$1.away" && kill -9 "$p"
}
left() {
    heal_section "$T/status.out" "Brick 127.0.0.1:$B/h$1" "Entries left"
}
status() {
    mcli volume heal hx status > "$T/status.out"
}
total() {
    sed -n 's/^Total entries left: //p' "$T/status.out"
}

TEST mkdir -p "$B"
TEST mcli volume create hx replica 3 127.0.0.1:$B/h0 127.0.0.1:$B/h1 \
    127.0.0.1:$B/h2 127.0.0.1:$B/h3 127.0.0.1:$B/h4 127.0.0.1:$B/h5 force
TEST mcli volume set hx cluster.self-heal-daemon off
TEST mcli volume start hx
TEST mount_volume hx "$M0"
TEST mkdir "$M0/d"
TEST down 1
TEST down 4
TEST sh -c "for i in \$(seq 1 $N); do head -c 4096 /dev/urandom \
    > '$M0/d/f'\$i; done"
TEST umount_client "$M0"

TEST status
# Files that landed on each set (2^-19 that one set got none).
N0=$(ls "$B/h0/d" | wc -l)
N1=$(ls "$B/h3/d" | wc -l)
TEST test "$N0" -gt 0 -a "$N1" -gt 0
EXPECT "$N" echo $((N0 + N1))
EXPECT "$((N0 + 1))" left 0
EXPECT "$((N0 + 1))" left 2
EXPECT "$((N1 + 1))" left 3
EXPECT "$((N1 + 1))" left 5
EXPECT "$((N + 2))" total
EXPECT_MATCH "<entriesLeft>$((N + 2))</entriesLeft>" \
    mcli --xml volume heal hx status


# The daemon, on, lists the same entries and their bytes per brick
# (RUN/heal/hx.state): every file's 4 KiB once, not once per good copy.
TEST mcli volume heal hx enable
listed() {
    grep -c '^brick[0-9]*\.bytes=[1-9]' "$T/run/heal/hx.state" 2> /dev/null
}
EXPECT_WITHIN 30 "4" listed
TEST status
EXPECT "$N" echo $((N0 + N1))
EXPECT "$((N + 2))" total
EXPECT "80.0 KiB" sed -n 's/^Data left: //p' "$T/status.out"
EXPECT_MATCH "<bytesLeft>$((N * 4096))</bytesLeft>" \
    mcli --xml volume heal hx status
# The daemon heals each object once per set, not once per good copy on
# this server: its rounds list N + 2 objects, all waiting for the down
# bricks (before: 2 (N + 2), each twice), and status says so.
round_line() {
    grep -q "round [0-9]*: $((N + 2)) listed, 0 healed, $((N + 2)) waiting \
for a copy" "$T/log/heal/hx.log" && echo Y
}
EXPECT_WITHIN 30 "Y" round_line
TEST ! grep -q "$((2 * (N + 2))) listed" "$T/log/heal/hx.log"
# ... and lists them under each good brick of their set, for status to
# count them once per set across nodes (mortarfsd/heal/heal-splitlist.c;
# before: not listed).
EXPECT "$((2 * (N + 2)))" grep -c '^waiting_gfid=' "$T/run/heal/hx.split-brain"
TEST status
EXPECT "$((N + 2))" sed -n 's/^Waiting for a brick: //p' "$T/status.out"
TEST mcli volume heal hx disable

TEST mv "$B/h1.away" "$B/h1"
TEST mv "$B/h4.away" "$B/h4"
TEST mcli volume stop hx
