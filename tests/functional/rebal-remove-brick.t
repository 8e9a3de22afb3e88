#!/usr/bin/env bash
# remove-brick: a volume of 3 bricks with 500 files; b1 is decommissioned
# (option decommissioned-bricks in the client volfile) and the rebalance
# moves every file off it: afterwards b1 holds no data file (only
# directories and .mortar), all checksums match through a mount over the
# new volfile and over the 2 remaining bricks alone, nothing is data twice.
# TIMEOUT: 900
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

NFILES=${REBAL_NFILES:-500}

specials() {
    for b in "$@"; do brick_special_files "$T/bricks/$b"; done
}
count_mount() {
    find "$M0" -type f | wc -l
}

for i in 0 1 2; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
done
TEST start_brick b0 "$T/bricks/b0" "$P0"
TEST start_brick b1 "$T/bricks/b1" "$P1"
TEST start_brick b2 "$T/bricks/b2" "$P2"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/dist3.vol"
dist_volfile -d b1 "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/remove.vol"
dist_volfile "b0:$P0" "b2:$P2" > "$T/vol/after.vol"

TEST mount_volfile "$T/vol/dist3.vol" "$M0"
TEST rebal_tool gen "$M0" "$NFILES" "$T/sums"
TEST umount_client "$M0"
EXPECT_MATCH "^[1-9][0-9]*$" count_data b1

# The mount follows the new volfile while the rebalance runs; a reader
# keeps files open across their moves.
TEST mount_volfile "$T/vol/remove.vol" "$M0"
awk '$1 != "d41d8cd98f00b204e9800998ecf8427e" { print $2 }' "$T/sums" |
    head -n 12 > "$T/rlist"
mkdir -p "$T/r"
bg_run rebal_tool reader "$M0" "$T/rlist" "$T/sums" "$T/r"
EXPECT_WITHIN 30 "Y" sh -c "[ -e '$T/r/started' ] && echo Y"
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/remove.vol" \
    --rebalance-state "$T/remove.state" --throttle aggressive -N \
    --log-file "$T/log/remove.log"
EXPECT "completed" state_value "$T/remove.state" status
EXPECT "0" state_value "$T/remove.state" failed_files
touch "$T/r/stop"
EXPECT_WITHIN 60 "Y" sh -c "[ -e '$T/r/done' ] && echo Y"
EXPECT "none" sh -c "cat '$T/r/error' 2> /dev/null || echo none"

EXPECT "0" count_data b1
EXPECT "" specials b1
EXPECT "$NFILES" count_data b0 b2
EXPECT "0" dup_data b0 b1 b2
# Through the mount that was up during the rebalance (its distribute must
# notice the new committed layouts, the root's too).
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_mount
TEST umount_client "$M0"

# "commit": the volume without b1 has everything.
TEST mount_volfile "$T/vol/after.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_mount
