#!/usr/bin/env bash
# A plain distribute volume made replicated (issue 21), GlusterFS's
# grammar: `volume add-brick VOL replica 2 NEW...` on a 2-brick
# distribute volume with a tree, renamed files (link files on the bricks)
# and a file held open, mounted with `mount -t mortar`:
#  - refused with its error and the store unchanged: a brick count that
#    is not one per brick, an arbiter, a stopped volume;
#  - then done: volume info says 2 x 2 = 4 (Distributed-Replicate),
#    distribute's children are the new replicate sets over each old brick
#    and its new partner, the self-heal daemon starts and fills each new
#    brick from its partner (names, modes, sizes, contents, GFIDs, the
#    same on both), `heal info` ends empty;
#  - the mount switched graphs without a remount: the tree reads the
#    same, renamed files too, the held fd still reads and writes, new
#    writes reach both copies;
#  - an old brick killed: everything still reads from its new partner;
#  - back with `remove-brick VOL replica 1 NEW... force`: Distribute
#    over the old bricks again, the daemon and the partners stop, the
#    mount reads the same and writes to the old bricks only.
# Fails without it: the add-brick is refused ("not supported yet").
# TIMEOUT: 360
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2 3; do track_brick tv brick$i; done
_T_PIDFILES+=("$T/run/heal/tv.pid")

# fill MNT: a tree of every kind, spread over both bricks, with renames
# whose new names hash to the other brick (link files).
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
        for i in $(seq 1 40); do
            echo "f$i" > "$1/d1/d2/f$i" || return 1
            mv "$1/d1/d2/f$i" "$1/d1/d2/renamed$i" || return 1
        done
}
# n_linkfiles DIR: link files (mode ---------T, size 0) on a brick.
n_linkfiles() {
    find "$1" -path "$1/.mortar" -prune -o -type f -perm 1000 -size 0 \
        -print | wc -l
}

TEST start_mortard
TEST mkdir -p "$B"
TEST mcli volume create tv 127.0.0.1:$B/b0 127.0.0.1:$B/b1 force
TEST mcli volume start tv
EXPECT "Distribute" info_field tv Type
TEST mount_mortar 127.0.0.1:/tv "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
CPID=$(mm_pid "$M0")
TEST fill "$M0"
TEST [ "$(($(n_linkfiles "$B/b0") + $(n_linkfiles "$B/b1")))" -gt 0 ]
mount_sums "$M0" > "$T/expect"
TEST test -s "$T/expect"

# A file held open across the change.
fd_hold "$M0/held"
EXPECT "ok" hold w 0 "before"
mount_sums "$M0" > "$T/expect"

# Bad input: its error, the store unchanged.
TEST mcli volume create sv 127.0.0.1:$B/s0 force
SUM=$(store_sum)
EXPECT_MATCH "failed: Volume sv needs to be started to raise its replica \
count" mcli2 volume add-brick sv replica 2 127.0.0.1:$B/s1 force
EXPECT_MATCH "failed: Incorrect number of bricks \(1\) supplied for replica \
count \(2\): volume tv has 2 replica sets, each needs 1 new brick" mcli2 \
    volume add-brick tv replica 2 127.0.0.1:$B/b2 force
EXPECT_MATCH "failed: volume tv has no arbiter bricks: only a replica 2 \
volume becomes an arbiter volume" mcli2 volume add-brick tv replica 3 \
    arbiter 1 127.0.0.1:$B/b2 127.0.0.1:$B/b3 127.0.0.1:$B/b4 \
    127.0.0.1:$B/b5 force
EXPECT "$SUM" store_sum
TEST test ! -e "$B/b2"

# The change: each old brick gets its partner, set by set.
EXPECT "volume add-brick: success" mcli volume add-brick tv replica 2 \
    127.0.0.1:$B/b2 127.0.0.1:$B/b3 force
EXPECT "Distributed-Replicate" info_field tv Type
EXPECT "2 x 2 = 4" info_field tv "Number of Bricks"
EXPECT "tv-replicate-0 tv-replicate-1" subvols_of tv tv-dht
EXPECT "tv-brick0 tv-brick2" subvols_of tv tv-replicate-0
EXPECT "tv-brick1 tv-brick3" subvols_of tv tv-replicate-1
EXPECT "1" grep -c "the root of .* blames tv-brick2" "$T/log/mortard.log"
EXPECT_WITHIN 30 "Y" heal_daemon_up tv
EXPECT_WITHIN 20 "Y" proc_alive "$(cat "$T/run/tv-brick3.pid")"
EXPECT_WITHIN 240 "0" heal_entries tv
EXPECT_WITHIN 60 "ok" same_bricks "$B/b0" "$B/b2"
EXPECT_WITHIN 60 "ok" same_bricks "$B/b1" "$B/b3"

# The mount followed without a remount and reads the same.
EXPECT "$CPID" mm_pid "$M0"
EXPECT "" mount_differs
EXPECT "before" hold r 0 6
EXPECT "ok" hold w 0 "after!"
EXPECT "after!" hold r 0 6
EXPECT "renamed7" sh -c "ls '$M0/d1/d2' | grep -x renamed7"
EXPECT "f33" cat "$M0/d1/d2/renamed33"
TEST sh -c "echo new > '$M0/d1/new'"
EXPECT_WITHIN 20 "new" sh -c "cat '$B/b0/d1/new' '$B/b1/d1/new' \
    2> /dev/null | head -n 1"
EXPECT_WITHIN 20 "2" sh -c "ls '$B'/b*/d1/new 2> /dev/null | wc -l"
fd_hold_end
mount_sums "$M0" > "$T/expect"

# An old brick gone: its partner serves everything it held.
P0=$(cat "$T/run/tv-brick0.pid")
TEST kill -9 "$P0"
EXPECT_WITHIN 20 "N" proc_alive "$P0"
EXPECT_WITHIN 20 "" mount_differs
TEST mcli volume start tv force
EXPECT_WITHIN 120 "0" heal_entries tv
EXPECT_WITHIN 60 "ok" same_bricks "$B/b0" "$B/b2"

# And back to replica 1: the partners go, the old bricks are a plain
# distribute volume again; the mount reads the same.
SUM=$(store_sum)
EXPECT_MATCH "failed: need 2\(xN\) bricks for reducing replica count of \
the volume from 2 to 1" mcli2 volume remove-brick tv replica 1 \
    127.0.0.1:$B/b2 force
EXPECT_MATCH "failed: every replica set must lose 1 brick for replica 1" \
    mcli2 volume remove-brick tv replica 1 127.0.0.1:$B/b0 127.0.0.1:$B/b2 \
    force
EXPECT "$SUM" store_sum
SHD=$(cat "$T/run/heal/tv.pid")
P2=$(cat "$T/run/tv-brick2.pid")
EXPECT "volume remove-brick force: success" mcli volume remove-brick tv \
    replica 1 127.0.0.1:$B/b2 127.0.0.1:$B/b3 force
EXPECT "Distribute" info_field tv Type
EXPECT "2" info_field tv "Number of Bricks"
EXPECT "tv-brick0 tv-brick1" subvols_of tv tv-dht
EXPECT_WITHIN 20 "N" proc_alive "$P2"
EXPECT_WITHIN 30 "N" proc_alive "$SHD"
EXPECT "$CPID" mm_pid "$M0"
EXPECT_WITHIN 20 "" mount_differs
TEST sh -c "echo last > '$M0/d1/last'"
EXPECT "last" cat "$M0/d1/last"
EXPECT "0" sh -c "ls '$B'/b2/d1/last '$B'/b3/d1/last 2> /dev/null | wc -l"
force_umount "$M0"
