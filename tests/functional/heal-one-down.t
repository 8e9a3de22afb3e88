#!/usr/bin/env bash
# Self-heal with a brick still down (issue 22 item 1; doc/self-heal.md
# "A brick down"), through mortard on a replica 3 volume (A = h0,
# B = h1, C = h2):
#  - A is killed while a mount writes, creates, removes and renames;
#    A comes back, then B is killed (a write lands on A and C);
#  - the daemon (`volume heal V` asks for a round) makes A identical to
#    C while B is down (names, modes, owners, sizes, GFIDs, contents),
#    and `heal V info` still lists on A and C what B needs (B: not
#    connected);
#  - B back: every brick identical, every index empty, `heal V info`
#    lists nothing and no replicate record is left.
# Fails on the code before: A stays stale until B is back.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
for i in 0 1 2; do track_brick hd brick$i; done
_T_PIDFILES+=("$T/run/heal/hd.pid")

shd_up() {
    local p
    p="$(cat "$T/run/heal/hd.pid" 2> /dev/null)"
    [ -n "$p" ] && proc_alive "$p" || echo N
}
new_pid() {
    local p
    p="$(cat "$1" 2> /dev/null)"
    if [ -n "$p" ] && [ "$p" != "$2" ]; then proc_alive "$p"; else echo N; fi
}
# entries N: heal info's "Number of entries" for brick hN.
entries() {
    mcli volume heal hd info | awk -v b="Brick 127.0.0.1:$B/h$1" '
        $0 == b { on = 1; next } on && /^Number of entries:/ {
        print $4; exit }'
}
# status_of N: heal info's "Status:" for brick hN.
status_of() {
    mcli volume heal hd info | awk -v b="Brick 127.0.0.1:$B/h$1" '
        $0 == b { on = 1; next } on && /^Status:/ {
        sub(/^Status: /, ""); print; exit }'
}
# down N: brick hN gone (its directory moved away, as an unmounted disk,
# so the supervisor's restarts fail until it is back); prints its pid.
down() {
    local p
    p=$(cat "$T/run/hd-brick$1.pid")
    mv "$B/h$1" "$B/h$1.away" && kill -9 "$p" && echo "$p"
}
up() {
    mv "$B/h$1.away" "$B/h$1" && mcli volume start hd force > /dev/null
}

TEST mkdir -p "$B"
TEST mcli volume create hd replica 3 127.0.0.1:$B/h0 127.0.0.1:$B/h1 \
    127.0.0.1:$B/h2 force
TEST mcli volume start hd
EXPECT_WITHIN 20 "Y" shd_up
TEST mount_volume hd "$M0"
TEST mkdir -p "$M0/d/sub" "$M0/gone"
TEST sh -c "for i in 1 2 3 4; do echo old\$i > '$M0/d/f'\$i; done"
TEST sh -c "echo bye > '$M0/gone/x'"
TEST sh -c "echo m > '$M0/d/m'"
# The daemon waits: every heal below is the one asked for.
TEST mcli volume heal hd disable
EXPECT_WITHIN 20 "N" shd_up

# A misses writes, a create, removals and a rename.
A_PID=$(down 0)
TEST test -n "$A_PID"
TEST sh -c "for i in 1 2; do echo new\$i > '$M0/d/f'\$i; done"
TEST rm -f "$M0/d/f3"
TEST rm -rf "$M0/gone"
TEST mv "$M0/d/m" "$M0/d/m2"
TEST chmod 600 "$M0/d/f4"
TEST mkdir -p "$M0/n/deeper"
TEST sh -c "for i in 1 2 3 4 5; do echo n\$i > '$M0/n/deeper/g'\$i; done"
TEST dd if=/dev/urandom of="$M0/n/big" bs=64k count=16 status=none
TEST umount_client "$M0"

# A back, B down; a mount writes on A and C (nothing heals on access:
# the mount is gone again before the daemon runs).
TEST up 0
EXPECT_WITHIN 20 "Y" new_pid "$T/run/hd-brick0.pid" "$A_PID"
B_PID=$(down 1)
TEST test -n "$B_PID"
TEST mount_volume hd "$M0"
TEST sh -c "echo while-b-down > '$M0/d/late'"
TEST sh -c "echo more >> '$M0/n/deeper/g1'"
TEST umount_client "$M0"
TEST test "$(same_bricks "$B/h0" "$B/h2")" != ok

# The daemon heals A from C while B is down.
TEST mcli volume heal hd enable
EXPECT_WITHIN 20 "Y" shd_up
EXPECT_MATCH "has been successful" mcli volume heal hd
EXPECT_WITHIN 120 "ok" same_bricks "$B/h0" "$B/h2"
EXPECT "new1" cat "$B/h0/d/f1"
TEST test ! -e "$B/h0/d/f3"
TEST test ! -e "$B/h0/gone"
TEST test ! -e "$B/h0/d/m"
EXPECT "m" cat "$B/h0/d/m2"
EXPECT "600" stat -c %a "$B/h0/d/f4"
EXPECT "while-b-down" cat "$B/h0/d/late"
# What B needs is still listed, on both up bricks.
TEST test "$(entries 0)" -gt 0
TEST test "$(entries 2)" -gt 0
EXPECT "Transport endpoint is not connected" status_of 1
# Another round changes nothing while B is down.
EXPECT_MATCH "has been successful" mcli volume heal hd
TEST sleep 2
EXPECT "ok" same_bricks "$B/h0" "$B/h2"
TEST test "$(entries 0)" -gt 0

# B back: everything identical, nothing listed, no record left.
TEST up 1
EXPECT_WITHIN 20 "Y" new_pid "$T/run/hd-brick1.pid" "$B_PID"
EXPECT_WITHIN 120 "0" heal_entries hd
EXPECT "ok" same_bricks "$B/h0" "$B/h1" "$B/h2"
EXPECT "0 0 0" rep_records_each "$B/h0" "$B/h1" "$B/h2"
EXPECT "while-b-down" cat "$B/h1/d/late"

TEST mcli volume stop hd
EXPECT_WITHIN 20 "N" shd_up
