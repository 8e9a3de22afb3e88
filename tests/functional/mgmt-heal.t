#!/usr/bin/env bash
# Self-heal through mortard (mortard/heal.c, mortard/cmd-heal.c):
#  - a started replica 3 volume gets a self-heal daemon on this node;
#  - a brick killed while a mount writes: `volume heal V info` names what
#    the other bricks' indexes hold, `info summary` and `statistics
#    heal-count` count it, in GlusterFS's shapes (and --xml);
#  - the brick, back, is healed by the daemon without any access
#    through a mount: every index empties and the
#    returned brick's copies match the others; `heal V status` says
#    nothing is left; `heal V` asks for a round;
#  - `heal V disable` stops the daemon, `enable` starts it again; killed,
#    it is restarted; `cluster.heal-max-rate` throttles its data heals;
#  - bad input: a volume that does not exist, one without replication,
#    a stopped one, unknown words, heal full with extra words: clear
#    errors, nothing changed.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
for i in 0 1 2; do track_brick hv brick$i; done
_T_PIDFILES+=("$T/run/heal/hv.pid")

shd_pid() {
    cat "$T/run/heal/hv.pid" 2> /dev/null
}
# shd_up: Y while the volume's self-heal daemon runs.
shd_up() {
    local p
    p="$(shd_pid)"
    [ -n "$p" ] && proc_alive "$p" || echo N
}
# new_pid FILE OLD: Y once FILE names a live process other than OLD.
new_pid() {
    local p
    p="$(cat "$1" 2> /dev/null)"
    if [ -n "$p" ] && [ "$p" != "$2" ]; then proc_alive "$p"; else echo N; fi
}
index_count() {
    find "$B/h$1/.mortar/index/xattrop" -mindepth 1 2> /dev/null | wc -l
}
# entries N: the "Number of entries" heal info gives brick N.
entries() {
    mcli volume heal hv info | awk -v b="Brick 127.0.0.1:$B/h$1" '
        $0 == b { on = 1; next } on && /^Number of entries:/ {
        print $4; exit }'
}
# same_copies: "ok" if brick 2 holds what brick 0 holds (names and
# contents, not .mortar).
same_copies() {
    diff -r --exclude=.mortar "$B/h0" "$B/h2" > /dev/null && echo ok ||
        echo differ
}

TEST mkdir -p "$B"
TEST mcli volume create hv replica 3 127.0.0.1:$B/h0 127.0.0.1:$B/h1 \
    127.0.0.1:$B/h2 force
EXPECT_MATCH "is not started" mcli2 volume heal hv info
TEST mcli volume start hv
EXPECT_WITHIN 20 "Y" shd_up
TEST mount_volume hv "$M0"
TEST mkdir "$M0/d"
TEST sh -c "for i in 1 2 3; do echo a\$i > '$M0/d/f'\$i; done"
EXPECT "0" entries 0
EXPECT "0" entries 1

# Brick h2 goes away (its directory too, as an unmounted disk: the
# supervisor's restarts fail until it is back).
TEST mcli volume heal hv disable
EXPECT_WITHIN 20 "N" shd_up
B2=$(cat "$T/run/hv-brick2.pid")
TEST mv "$B/h2" "$B/h2.away"
TEST kill -9 "$B2"
TEST sh -c "for i in 1 2 3 4 5 6; do echo b\$i > '$M0/d/f'\$i; done"
TEST mkdir "$M0/d/sub"
TEST sh -c "echo deep > '$M0/d/sub/x'"
TEST test "$(index_count 0)" -gt 0
TEST test "$(entries 0)" -gt 0
mcli volume heal hv info > "$T/info.out"
# /d is listed by both bricks that blame h2.
EXPECT "2" grep -c '^/d$' "$T/info.out"
TEST grep -q '^<gfid:' "$T/info.out"
EXPECT_MATCH "Number of entries in heal pending: [1-9]" \
    mcli volume heal hv info summary
EXPECT_MATCH "Gathering count of entries to be healed on volume hv has \
been successful" mcli volume heal hv statistics heal-count
EXPECT_MATCH "<numberOfEntries>[1-9]" mcli --xml volume heal hv info
EXPECT_MATCH "Self-heal daemon is not running" mcli2 volume heal hv

# The disk is back; the daemon (enabled again) heals without a mount.
TEST mv "$B/h2.away" "$B/h2"
TEST mcli volume start hv force
EXPECT_WITHIN 20 "Y" new_pid "$T/run/hv-brick2.pid" "$B2"
TEST umount_client "$M0"
TEST test "$(same_copies)" != ok
TEST mcli volume heal hv enable
EXPECT_WITHIN 20 "Y" shd_up
EXPECT_MATCH "has been successful" mcli volume heal hv
all_counts() {
    echo "$(index_count 0) $(index_count 1) $(index_count 2)"
}
EXPECT_WITHIN 120 "0 0 0" all_counts
EXPECT "ok" same_copies
EXPECT "b6" cat "$B/h2/d/f6"
EXPECT "deep" cat "$B/h2/d/sub/x"
EXPECT "0" entries 2
EXPECT_MATCH "Total entries left: 0" mcli volume heal hv status
EXPECT_MATCH "ETA: 0 s" mcli volume heal hv status

# Killed, the daemon comes back.
OLD=$(shd_pid)
TEST kill -9 "$OLD"
EXPECT_WITHIN 20 "Y" new_pid "$T/run/heal/hv.pid" "$OLD"

# A brick that comes back is healed at once, not at the daemon's next
# index read (600 s here): the daemon watches its bricks' up/down state.
# The brick's directory is moved away while it is down so that the
# supervision cannot start it before the writes are made.
# Its data heals are throttled to cluster.heal-max-rate (4 MiB/s: the
# 9 MiB file below heals in steps of 4, 4 and 1 MiB, the second and
# third each waiting about 1 s for the one before; its statedump, in the
# run dir as the bricks', counts the wait).
TEST mcli volume set hv cluster.heal-max-rate 4MB
OLD=$(shd_pid)
TEST mcli volume set hv cluster.heal-timeout 600
EXPECT_WITHIN 20 "Y" new_pid "$T/run/heal/hv.pid" "$OLD"
TEST mount_volume hv "$M0"
B1=$(cat "$T/run/hv-brick1.pid")
TEST mv "$B/h1" "$B/h1.away"
TEST kill -9 "$B1"
TEST sh -c "for i in 1 2 3; do echo c\$i > '$M0/d/f'\$i; done"
TEST dd if=/dev/urandom of="$M0/d/big" bs=1M count=9 status=none
TEST umount_client "$M0"
TEST test "$(index_count 0)" -gt 0
TEST mv "$B/h1.away" "$B/h1"
EXPECT_WITHIN 30 "Y" new_pid "$T/run/hv-brick1.pid" "$B1"
EXPECT_WITHIN 60 "0 0 0" all_counts
EXPECT "c3" cat "$B/h1/d/f3"
TEST cmp "$B/h0/d/big" "$B/h1/d/big"
throttled_ms() {
    brick_dump "$(shd_pid)" | sed -n "s/^throttled_ms=//p" | head -n 1
}
TEST test "$(throttled_ms)" -gt 500

# Bad input: errors, and the store unchanged.
TEST mkdir -p "$B/plain"
TEST mcli volume create pv 127.0.0.1:$B/plain force
SUM=$(store_sum)
EXPECT_MATCH "Volume nov does not exist" mcli2 volume heal nov info
EXPECT_MATCH "Volume pv is not of type replicate" mcli2 volume heal pv info
EXPECT_MATCH "Usage: volume heal" mcli2 volume heal hv full now
EXPECT_MATCH "Number of entries in split-brain: 0" \
    mcli2 volume heal hv info split-brain
EXPECT_MATCH "Usage: volume heal <VOLNAME> split-brain" \
    mcli2 volume heal hv split-brain sideways /f
EXPECT_MATCH "Usage: volume heal" mcli2 volume heal hv sideways
EXPECT "$SUM" store_sum
TEST mcli volume stop hv
EXPECT_WITHIN 20 "N" shd_up
EXPECT_MATCH "is not started" mcli2 volume heal hv info
