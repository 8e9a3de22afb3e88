#!/usr/bin/env bash
# volume set/reset of live brick options: mortard rewrites the brick
# volfile and sends SIGHUP, the brick keeps its pid and its statedump
# shows the new value; a non-live brick option restarts the brick (new
# pid); a client-only option touches no brick.
# TIMEOUT: 120
# REQUIRES: root
. "$(dirname "$0")/../lib/include.rc"

BLOG="$T/log/bricks/v0-brick0.log"
brick_pid() {
    cat "$T/run/v0-brick0.pid"
}

TEST start_mortard
track_brick v0
TEST mcli volume create v0 127.0.0.1:$B0 force
TEST mcli volume start v0
P1=$(brick_pid)
EXPECT "Y" proc_alive "$P1"
D0=$(dump_value "$P1" "xlator v0-io-threads" option.thread-count)
TEST [ -n "$D0" ] && [ "$D0" != 4 ]

# Live: same pid, new value applied in place.
TEST mcli volume set v0 performance.io-thread-count 4
EXPECT_MATCH "option thread-count 4" cat "$T/state/vols/v0/brick0.vol"
EXPECT_WITHIN 10 "1" sh -c "grep -c 'applied .*brick0.vol to the running graph' '$BLOG'"
EXPECT "$P1" brick_pid
EXPECT "Y" proc_alive "$P1"
EXPECT "4" dump_value "$P1" "xlator v0-io-threads" option.thread-count
EXPECT_MATCH "told to reload its volfile" cat "$T/log/mortard.log"

# Reset of a live option: same pid, back to the default.
TEST mcli volume reset v0 performance.io-thread-count
EXPECT_WITHIN 10 "2" sh -c "grep -c 'applied .*brick0.vol to the running graph' '$BLOG'"
EXPECT "$P1" brick_pid
EXPECT "$D0" dump_value "$P1" "xlator v0-io-threads" option.thread-count

# A client-only option: the brick is not touched at all.
TEST mcli volume set v0 client.ping-timeout 15
EXPECT "$P1" brick_pid
EXPECT "2" sh -c "grep -c 'applied .*brick0.vol to the running graph' '$BLOG'"

# Not live: the brick is restarted with the new volfile.
TEST mcli volume set v0 storage.reserve 5
P2=$(brick_pid)
TEST [ "$P2" != "$P1" ]
EXPECT_WITHIN 10 "N" proc_alive "$P1"
EXPECT "Y" proc_alive "$P2"
EXPECT "5%" dump_value "$P2" "xlator v0-posix" option.reserve

# Live option on a stopped volume: just stored; start uses it.
TEST mcli volume stop v0
EXPECT_WITHIN 10 "N" proc_alive "$P2"
TEST mcli volume set v0 performance.io-thread-count 5
TEST mcli volume start v0
P3=$(brick_pid)
EXPECT "5" dump_value "$P3" "xlator v0-io-threads" option.thread-count
TEST mcli volume stop v0
EXPECT_WITHIN 10 "N" proc_alive "$P3"
