#!/usr/bin/env bash
# SIGHUP makes mortarfsd read its --volfile again and apply it to the
# running graph (how mortard applies live options to bricks): a live
# option (io-threads thread-count) changes in place and shows in the
# statedump, while clients keep their mount; a change of the graph's
# shape or of a non-live option is refused and logged as needing a
# restart; a broken volfile is refused with its parse error. Nothing of
# this stops the brick.
# TIMEOUT: 120
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume
BPID=$(fsd_pid brick-b0)
BLOG="$T/log/brick-b0.log"
TEST sh -c "echo before > '$M0/f'"
EXPECT_MATCH "thread-count=8" statedump_of "$BPID"

# Live option.
sed -i 's/^    type performance\/io-threads$/&\n    option thread-count 5/' "$T/vol/b0.vol"
EXPECT "1" grep -c "option thread-count 5" "$T/vol/b0.vol"
TEST kill -HUP "$BPID"
EXPECT_WITHIN 10 "1" sh -c "grep -c 'applied $T/vol/b0.vol to the running graph' '$BLOG'"
EXPECT_MATCH "thread-count=5" statedump_of "$BPID"
EXPECT "before" cat "$M0/f"
TEST sh -c "echo after > '$M0/g'"
EXPECT "after" cat "$B0/g"

# Non-live option (the brick directory): refused, the old graph serves.
sed -i "s|option directory $B0|option directory $T/elsewhere|" "$T/vol/b0.vol"
TEST kill -HUP "$BPID"
EXPECT_WITHIN 10 "1" sh -c "grep -c 'needs a remount' '$BLOG'"
EXPECT "after" cat "$M0/g"

# A broken volfile: refused with its error.
echo "volume oops" >> "$T/vol/b0.vol"
TEST kill -HUP "$BPID"
EXPECT_WITHIN 10 "1" sh -c "grep -c 'reloading $T/vol/b0.vol: ' '$BLOG'"
EXPECT "Y" is_alive "$BPID"
EXPECT "after" cat "$M0/g"
EXPECT_MATCH "thread-count=5" statedump_of "$BPID"
