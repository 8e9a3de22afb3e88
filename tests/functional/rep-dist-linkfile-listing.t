#!/usr/bin/env bash
# A distributed-replicated volume (2 x 2) lists a renamed file once. A
# rename to a name that hashes to the other replica set leaves a link
# file there; replicate hands distribute the attributes of objects it
# cannot vouch for (not looked up by this client yet) as unsure, and
# distribute must still tell the link files by them. Before, such a
# listing showed every renamed file twice (57 names for 40 files) until
# each had been looked up. Checked on the mount that renamed and on a
# fresh one, with ls (readdirplus) and find.
# TIMEOUT: 120
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2 3; do track_brick lv brick$i; done
_T_PIDFILES+=("$T/run/heal/lv.pid")

# n_linkfiles: link files (mode ---------T, size 0) on the bricks.
n_linkfiles() {
    find "$B" -path '*/.mortar' -prune -o -type f -perm 1000 -size 0 \
        -print | wc -l
}

TEST start_mortard
TEST mkdir -p "$B"
TEST mcli volume create lv replica 2 127.0.0.1:$B/b0 127.0.0.1:$B/b1 \
    127.0.0.1:$B/b2 127.0.0.1:$B/b3 force
TEST mcli volume start lv
TEST mount_mortar 127.0.0.1:/lv "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST mkdir "$M0/d"
TEST sh -c "for i in \$(seq 1 40); do echo f\$i > '$M0/d/f'\$i &&
    mv '$M0/d/f'\$i '$M0/d/renamed'\$i || exit 1; done"
# Some renames left link files (each on both bricks of a set).
TEST [ "$(n_linkfiles)" -gt 0 ]
EXPECT "40" sh -c "ls '$M0/d' | wc -l"
EXPECT "40" sh -c "ls '$M0/d' | sort -u | wc -l"

TEST force_umount "$M0"
TEST mount_mortar 127.0.0.1:/lv "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
EXPECT "40" sh -c "ls '$M0/d' | wc -l"
EXPECT "40" sh -c "cd '$M0' && find d -type f | wc -l"
EXPECT "f17" cat "$M0/d/renamed17"
EXPECT "40" sh -c "ls -l '$M0/d' | grep -c renamed"
force_umount "$M0"
