#!/usr/bin/env bash
# The lru-limit mount option: the inodes the kernel holds looked up are
# bounded, so the client's memory does not grow with every file a
# `find` or a backup ever looked at. 2,000 files stat'ed through a mount
# with lru-limit=200: the client's statedump shows at most the limit
# (plus the batch it asks for at once) nodes alive once the kernel has
# forgotten what it was asked to drop, and the graph's referenced inodes
# fall with them; every file still reads right afterwards (looked up
# again). A second mount with the default (32,768) keeps all 2,000.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume -o lru-limit=200
CPID=$(client_pid "$M0")

# dval PID KEY: KEY's value in PID's statedump.
dval() {
    statedump_of "$1" | sed -n "s/^$2=//p" | head -n 1
}

# at_most A B: Y if A <= B.
at_most() {
    [ -n "$1" ] && [ -n "$2" ] && [ "$1" -le "$2" ] && echo Y || echo N
}

EXPECT "200" dval "$CPID" lru_limit
# The counts below are of what the kernel kept: no other test's
# drop_caches (its forgets are no lru evictions) until they are done.
cache_hold
TEST python3 -c '
import os, sys
for i in range(2000):
    with open(os.path.join(sys.argv[1], "f%04d" % i), "w") as f:
        f.write("file %d\n" % i)
' "$M0"
TEST sh -c "stat '$M0'/f* > /dev/null"
# 200 plus a batch of 200/32: what the kernel is asked to keep at most.
nodes_bounded() {
    at_most "$(dval "$CPID" nodes)" 206
}
EXPECT_WITHIN 20 "Y" nodes_bounded
TEST [ "$(dval "$CPID" lru_evicted)" -ge 1794 ]
EXPECT "Y" at_most "$(dval "$CPID" inodes.active)" 300
EXPECT "file 0" cat "$M0/f0000"
EXPECT "file 1999" cat "$M0/f1999"
EXPECT "2000" sh -c "ls '$M0' | grep -c '^f'"
TEST sh -c "cat '$M0'/f* | grep -c '^file' | grep -qx 2000"
EXPECT_WITHIN 20 "Y" nodes_bounded

# The default keeps every looked-up inode (what lru-limit changes).
M1="$T/mnt/m1"
TEST mount_client "$P0" b0 "$M1"
TEST wait_for_mount "$M1"
C1=$(client_pid "$M1")
EXPECT "32768" dval "$C1" lru_limit
TEST sh -c "stat '$M1'/f* > /dev/null"
TEST [ "$(dval "$C1" nodes)" -ge 2000 ]
EXPECT "0" dval "$C1" lru_evicted
cache_release

force_umount "$M1"
force_umount "$M0"
