#!/usr/bin/env bash
# Command-line options that change the graph: --xlator-option overrides
# (seen in the statedump), mount/fuse options through -o and --fuse-opt
# (ro, fsname), --event-threads, --log-level.
# TIMEOUT: 120
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

alloc_port P0
TEST start_brick b0 "$B0" "$P0" --xlator-option b0.thread-count=3 \
    --event-threads 3 --log-level DEBUG
BPID=$(fsd_pid brick-b0)
TEST kill -USR1 "$BPID"
EXPECT_WITHIN 10 "1" sh -c "ls '$T/dump' | grep -c '^mortarfsd\.$BPID\.'"
EXPECT_MATCH "thread-count=3" cat "$T"/dump/mortarfsd."$BPID".dump.*
EXPECT_MATCH "D .*volfile: +option thread-count 3" cat "$T/log/brick-b0.log"

# A read-only mount named by fsname: writes fail with EROFS.
TEST sh -c "echo data > '$B0/f'"
TEST mount_client "$P0" b0 "$M0" -o ro --fuse-opt fsname=myvolume
TEST wait_for_mount "$M0"
EXPECT "data" cat "$M0/f"
EXPECT "Read-only file system" errno_of touch "$M0/new"
EXPECT "Read-only file system" errno_of sh -c "echo x >> '$M0/f'"
EXPECT "myvolume" awk -v m="$M0" '$2 == m { print $1 }' /proc/mounts
EXPECT_MATCH "(^|,)ro(,|$)" awk -v m="$M0" '$2 == m { print $4 }' /proc/mounts

# An unknown fuse option is refused before anything is mounted.
EXPECT "1" sh -c "'$MORTARFSD' --volfile '$T/vol/client-$(echo "$M0" | tr '/' '_').vol' --log-file '$T/log/bad.log' -o no-such-fuse-option=1 '$M1' 2> '$T/bad.err'; echo \$?"
EXPECT_MATCH "no-such-fuse-option" cat "$T/bad.err"
EXPECT "N" is_mounted "$M1"
