#!/usr/bin/env bash
# Changing the replica count (mortard/replica-change.c), GlusterFS's
# grammar, on volumes mounted with `mount -t mortar`:
#  - 1 x 2 -> 1 x 3: `add-brick VOL replica 3 NEW`: volume info says
#    1 x 3 = 3, the replicate has three children, the two old bricks'
#    roots were marked as the heal source of the new slot, and the
#    self-heal daemon alone makes the new brick identical to the others
#    (names, modes, sizes, contents, GFIDs); the mount reads the same
#    throughout;
#  - 1 x 3 -> 1 x 2: `remove-brick VOL replica 2 BRICK force` is refused
#    while a brick of the set has pending heals, then done: 1 x 2 = 2,
#    the removed brick's process stops and its data stays on disk;
#  - 2 x 2 -> 2 x 3 -> 2 x 2: one new brick per set, in set order; the
#    sets keep their names (distribute's children) across the changes
#    and a restart of mortard; a whole set added afterwards gets a name
#    never used before;
#  - bad input (wrong brick counts, bricks not one per set, no force,
#    replica 1, above the count, an arbiter or stopped volume, an unknown
#    brick): its error, and the store unchanged.
# Fails without replica-change.c: the count changes are refused.
# TIMEOUT: 420
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2 3 4 5 6 7; do
    track_brick rc brick$i
    track_brick dv brick$i
done
track_brick pv brick0
for i in 0 1 2; do track_brick av brick$i; done
_T_PIDFILES+=("$T/run/heal/rc.pid" "$T/run/heal/dv.pid")

# fill MNT: a small tree of every kind.
fill() {
    mkdir -p "$1/d1/d2" "$1/empty" &&
        chmod 750 "$1/d1/d2" &&
        touch "$1/zero" &&
        echo small > "$1/small" &&
        head -c 300000 /dev/urandom > "$1/d1/mid" &&
        chmod 600 "$1/d1/mid" &&
        truncate -s 4M "$1/sparse" &&
        ln -s d1/mid "$1/link" &&
        ln "$1/small" "$1/d1/hard" &&
        for i in $(seq 1 30); do echo "f$i" > "$1/d1/d2/f$i" || return 1; done
}

TEST start_mortard
TEST mkdir -p "$B"

# ---- 1 x 2 -> 1 x 3 ---------------------------------------------------
TEST mcli volume create rc replica 2 127.0.0.1:$B/r0 127.0.0.1:$B/r1 force
TEST mcli volume start rc
EXPECT_WITHIN 20 "Y" heal_daemon_up rc
TEST mount_mortar 127.0.0.1:/rc "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST fill "$M0"
mount_sums "$M0" > "$T/expect"
TEST test -s "$T/expect"
EXPECT_WITHIN 30 "0" heal_entries rc

# Bad input: its error, the store unchanged.
TEST mkdir -p "$B/plain"
TEST mcli volume create pv 127.0.0.1:$B/plain force
TEST mcli volume create av replica 3 arbiter 1 127.0.0.1:$B/a0 \
    127.0.0.1:$B/a1 127.0.0.1:$B/a2 force
TEST mcli volume create sv replica 2 127.0.0.1:$B/s0 127.0.0.1:$B/s1 force
SUM=$(store_sum)
EXPECT_MATCH "failed: Incorrect number of bricks \(2\) supplied for replica \
count \(3\): volume rc has 1 replica set, each needs 1 new brick" mcli2 \
    volume add-brick rc replica 3 127.0.0.1:$B/r2 127.0.0.1:$B/r3 force
EXPECT_MATCH "failed: Incorrect number of bricks \(1\) supplied for replica \
count \(4\)" mcli2 volume add-brick rc replica 4 127.0.0.1:$B/r2 force
EXPECT_MATCH "failed: .*already|failed: .*brick" mcli2 volume add-brick rc \
    replica 3 127.0.0.1:$B/r1 force
EXPECT_MATCH "failed: Volume pv needs to be started to raise its replica \
count" mcli2 volume add-brick pv replica 2 127.0.0.1:$B/p1 force
EXPECT_MATCH "failed: volume av is an arbiter volume: raising its replica \
count is not supported" mcli2 volume add-brick av replica 4 \
    127.0.0.1:$B/a3 force
EXPECT_MATCH "failed: Volume sv needs to be started to raise its replica \
count" mcli2 volume add-brick sv replica 3 127.0.0.1:$B/s2 force
EXPECT_MATCH "failed: Incorrect replica count \(2\) supplied. Volume \
already has \(3\)" mcli2 volume add-brick av replica 2 127.0.0.1:$B/a3 force
EXPECT "$SUM" store_sum
TEST test ! -e "$B/r2"
TEST test ! -e "$B/p1"

EXPECT "volume add-brick: success" mcli volume add-brick rc replica 3 \
    127.0.0.1:$B/r2 force
EXPECT "Replicate" info_field rc Type
EXPECT "1 x 3 = 3" info_field rc "Number of Bricks"
EXPECT "127.0.0.1:$B/r2" info_field rc Brick3
EXPECT_MATCH "<replicaCount>3</replicaCount>" mcli --xml volume info rc
EXPECT_MATCH '"replicaCount": *"?3' mcli --json volume info rc
EXPECT "rc-brick0 rc-brick1 rc-brick2" subvols_of rc rc-replicate-0
# The two old roots blame the new slot: heal fills it from them.
EXPECT "2" grep -c "the root of .* blames rc-brick2" "$T/log/mortard.log"
EXPECT_WITHIN 20 "Y" proc_alive "$(cat "$T/run/rc-brick2.pid")"
EXPECT_WITHIN 180 "0" heal_entries rc
EXPECT_WITHIN 60 "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"
EXPECT "0" rep_records "$B/r2"
EXPECT "data-less" sh -c "[ \"\$(stat -c %b '$B/r2/sparse')\" -lt 64 ] &&
    echo data-less"
EXPECT "" mount_differs
# The mount writes on to all three.
TEST sh -c "echo after > '$M0/d1/after'"
EXPECT_WITHIN 20 "after" cat "$B/r2/d1/after"
mount_sums "$M0" > "$T/expect"

# ---- 1 x 3 -> 1 x 2 ---------------------------------------------------
SUM=$(store_sum)
EXPECT_MATCH "failed: Migration of data is not needed when reducing replica \
count. Use the 'force' option" mcli2 volume remove-brick rc replica 2 \
    127.0.0.1:$B/r0 start
EXPECT_MATCH "failed: need 1\(xN\) bricks for reducing replica count of the \
volume from 3 to 2" mcli2 volume remove-brick rc replica 2 127.0.0.1:$B/r0 \
    127.0.0.1:$B/r1 force
EXPECT_MATCH "failed: need 2\(xN\) bricks for reducing replica count of the \
volume from 3 to 1" mcli2 volume remove-brick rc replica 1 127.0.0.1:$B/r0 \
    force
EXPECT_MATCH "failed: given replica count \(4\) option is more than volume \
rc's replica count \(3\)" mcli2 volume remove-brick rc replica 4 \
    127.0.0.1:$B/r0 force
EXPECT_MATCH "failed: given replica count \(4294967298\) option is more \
than volume rc's replica count \(3\)" mcli2 volume remove-brick rc replica \
    4294967298 127.0.0.1:$B/r0 force
EXPECT_MATCH "failed: Incorrect brick 127.0.0.1:$B/r9 for volume rc" mcli2 \
    volume remove-brick rc replica 2 127.0.0.1:$B/r9 force
EXPECT_MATCH "failed: replica count \(1\) option given for non replicate \
volume pv" mcli2 volume remove-brick pv replica 1 127.0.0.1:$B/plain force
EXPECT "$SUM" store_sum

# A brick down while the mount writes: the others blame it, so no brick
# of the set may go until heal is done.
P1=$(cat "$T/run/rc-brick1.pid")
TEST mv "$B/r1" "$B/r1.away"
TEST kill -9 "$P1"
EXPECT_WITHIN 20 "N" proc_alive "$P1"
TEST sh -c "echo missed > '$M0/missed'"
EXPECT_MATCH "failed: brick 127.0.0.1:$B/r[02] has [0-9]+ pending heals? \
\(volume heal rc info lists them\)" mcli2 volume remove-brick rc replica 2 \
    127.0.0.1:$B/r2 force
EXPECT "$SUM" store_sum
TEST mv "$B/r1.away" "$B/r1"
TEST mcli volume start rc force
EXPECT_WITHIN 180 "0" heal_entries rc
EXPECT_WITHIN 60 "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"
mount_sums "$M0" > "$T/expect"

# A brick whose machine went down while it ran (its index marker names
# another boot) may miss records until it has rebuilt its index.
TEST cp "$B/r2/.mortar/index/boot" "$T/boot.r2"
TEST sh -c "echo another-boot > '$B/r2/.mortar/index/boot'"
EXPECT_MATCH "failed: brick 127.0.0.1:$B/r2: its heal index is being \
rebuilt" mcli2 volume remove-brick rc replica 2 127.0.0.1:$B/r0 force
EXPECT "$SUM" store_sum
TEST cp "$T/boot.r2" "$B/r2/.mortar/index/boot"

P0=$(cat "$T/run/rc-brick0.pid")
EXPECT "volume remove-brick force: success" mcli volume remove-brick rc \
    replica 2 127.0.0.1:$B/r0 force
EXPECT "1 x 2 = 2" info_field rc "Number of Bricks"
EXPECT "Replicate" info_field rc Type
EXPECT "127.0.0.1:$B/r1" info_field rc Brick1
EXPECT "rc-brick1 rc-brick2" subvols_of rc rc-replicate-0
EXPECT_WITHIN 20 "N" proc_alive "$P0"
# Its data stays; it is no longer stamped as the volume's.
EXPECT "missed" cat "$B/r0/missed"
EXPECT "" getfattr --absolute-names --only-values -n \
    trusted.mortar.volume-id "$B/r0" 2> /dev/null
EXPECT "" mount_differs
TEST sh -c "echo later > '$M0/later'"
EXPECT_WITHIN 20 "later later" sh -c "echo \$(cat '$B/r1/later') \
\$(cat '$B/r2/later')"
TEST umount_client "$M0"

# ---- 2 x 2 -> 2 x 3 -> 2 x 2 ------------------------------------------
TEST mcli volume create dv replica 2 127.0.0.1:$B/d0 127.0.0.1:$B/d1 \
    127.0.0.1:$B/d2 127.0.0.1:$B/d3 force
TEST mcli volume start dv
EXPECT_WITHIN 20 "Y" heal_daemon_up dv
TEST mount_mortar 127.0.0.1:/dv "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST fill "$M0"
TEST sh -c "for i in \$(seq 1 40); do echo top\$i > '$M0/top'\$i; done"
mount_sums "$M0" > "$T/expect"
EXPECT "dv-replicate-0 dv-replicate-1" subvols_of dv dv-dht

SUM=$(store_sum)
EXPECT_MATCH "failed: Incorrect number of bricks \(1\) supplied for replica \
count \(3\): volume dv has 2 replica sets" mcli2 volume add-brick dv \
    replica 3 127.0.0.1:$B/d4 force
EXPECT "$SUM" store_sum

EXPECT "volume add-brick: success" mcli volume add-brick dv replica 3 \
    127.0.0.1:$B/d4 127.0.0.1:$B/d5 force
EXPECT "Distributed-Replicate" info_field dv Type
EXPECT "2 x 3 = 6" info_field dv "Number of Bricks"
EXPECT "127.0.0.1:$B/d4" info_field dv Brick3
EXPECT "127.0.0.1:$B/d5" info_field dv Brick6
EXPECT "dv-brick0 dv-brick1 dv-brick4" subvols_of dv dv-replicate-0
EXPECT "dv-brick2 dv-brick3 dv-brick5" subvols_of dv dv-replicate-1
EXPECT "dv-replicate-0 dv-replicate-1" subvols_of dv dv-dht
EXPECT_WITHIN 180 "0" heal_entries dv
EXPECT_WITHIN 60 "ok" same_bricks "$B/d0" "$B/d1" "$B/d4"
EXPECT_WITHIN 60 "ok" same_bricks "$B/d2" "$B/d3" "$B/d5"
EXPECT "" mount_differs

# The store keeps the sets across a restart of mortard.
TEST kill -9 "$(mortard_pid)"
TEST start_mortard
EXPECT "2 x 3 = 6" info_field dv "Number of Bricks"
EXPECT "dv-brick2 dv-brick3 dv-brick5" subvols_of dv dv-replicate-1

SUM=$(store_sum)
EXPECT_MATCH "failed: every replica set must lose 1 brick for replica 2: \
the set of 127.0.0.1:$B/d0 loses 2" mcli2 volume remove-brick dv replica 2 \
    127.0.0.1:$B/d0 127.0.0.1:$B/d1 force
EXPECT "$SUM" store_sum
# One brick of each set, in any order.
EXPECT "volume remove-brick force: success" mcli volume remove-brick dv \
    replica 2 127.0.0.1:$B/d3 127.0.0.1:$B/d0 force
EXPECT "2 x 2 = 4" info_field dv "Number of Bricks"
EXPECT "dv-brick1 dv-brick4" subvols_of dv dv-replicate-0
EXPECT "dv-brick2 dv-brick5" subvols_of dv dv-replicate-1
EXPECT "" mount_differs
# A whole new set: a set number never used (not 0 or 1).
TEST mcli volume add-brick dv 127.0.0.1:$B/d6 127.0.0.1:$B/d7 force
EXPECT "3 x 2 = 6" info_field dv "Number of Bricks"
EXPECT "dv-replicate-0 dv-replicate-1 dv-replicate-2" subvols_of dv dv-dht
EXPECT "dv-brick6 dv-brick7" subvols_of dv dv-replicate-2
TEST umount_client "$M0"
