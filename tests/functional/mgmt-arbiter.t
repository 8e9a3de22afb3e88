#!/usr/bin/env bash
# replica 3 arbiter 1 from the CLI (mortard/replica.c, volgen.c):
#  - volume info shows "1 x (2 + 1) = 3" and marks the third brick
#    "(arbiter)" (--xml: arbiterCount 1, isArbiter 1);
#  - through a mount, files land whole on the two data bricks and at
#    size 0, with their names, modes and GFIDs, on the arbiter;
#  - with a data brick down the mount still reads and writes;
#  - bad input (arbiter without replica 3, arbiter 2, arbiter added to
#    a volume without one): a clear error, the store unchanged.
# TIMEOUT: 200
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
for i in 0 1 2; do track_brick av brick$i; done

gfid_of() {
    getfattr --absolute-names -h -n trusted.mortar.gfid -e hex "$1" \
        2> /dev/null | sed -n 's/.*=//p'
}

TEST mkdir -p "$B"
TEST mcli volume create av replica 3 arbiter 1 127.0.0.1:$B/a0 \
    127.0.0.1:$B/a1 127.0.0.1:$B/a2 force
EXPECT_MATCH "Number of Bricks: 1 x \(2 \+ 1\) = 3" mcli volume info av
EXPECT_MATCH "Brick3: 127.0.0.1:$B/a2 \(arbiter\)" mcli volume info av
EXPECT_MATCH "<arbiterCount>1</arbiterCount>" mcli --xml volume info av
TEST mcli volume start av
TEST mount_volume av "$M0"
TEST dd if=/dev/urandom of="$M0/big" bs=64k count=16 status=none
TEST sh -c "echo small > '$M0/small'"
TEST chmod 640 "$M0/small"
EXPECT "1048576" stat -c %s "$B/a0/big"
TEST cmp "$B/a0/big" "$B/a1/big"
EXPECT "0" stat -c %s "$B/a2/big"
EXPECT "0" stat -c %s "$B/a2/small"
EXPECT "640" stat -c %a "$B/a2/small"
EXPECT "$(gfid_of "$B/a0/big")" gfid_of "$B/a2/big"
EXPECT "1048576" stat -c %s "$M0/big"
EXPECT "small" cat "$M0/small"

# One data brick down: the other and the arbiter keep the volume going.
TEST kill -9 "$(cat "$T/run/av-brick1.pid")"
TEST sh -c "echo more >> '$M0/small'"
EXPECT "small
more" cat "$M0/small"
TEST cmp "$M0/big" "$B/a0/big"

# Bad input: errors, nothing changed.
SUM=$(store_sum)
EXPECT_MATCH "replica count must be 3 and arbiter count must be 1" \
    mcli2 volume create bv replica 2 arbiter 1 127.0.0.1:$B/x0 \
    127.0.0.1:$B/x1 force
EXPECT_MATCH "replica count must be 3 and arbiter count must be 1" \
    mcli2 volume create bv replica 3 arbiter 2 127.0.0.1:$B/x0 \
    127.0.0.1:$B/x1 127.0.0.1:$B/x2 force
EXPECT_MATCH "not supported yet" mcli2 volume create bv replica 3 \
    thin-arbiter 1 127.0.0.1:$B/x0 127.0.0.1:$B/x1 127.0.0.1:$B/x2 force
EXPECT "$SUM" store_sum
TEST test ! -e "$B/x0"
