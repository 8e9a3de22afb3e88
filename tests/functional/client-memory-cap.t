#!/usr/bin/env bash
# One cap on a client's caches (issue 24, item 6), through mortard and a
# real mount: performance.cache-size is shared out among the loaded
# caches (the client's statedump adds their limits up to the cap, and
# what they hold stays under it), changes live, and binds write-behind
# too (writes go through once the total is reached, with the file
# intact); a cache's own limit past the cap is refused with nothing
# stored; network.inode-lru-limit bounds the inodes a client and a brick
# keep, live, without restarting the brick.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MDCTL" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

B="$T/bricks"
for i in 0 1; do track_brick cm brick$i; done
TEST start_mortard
TEST mcli volume create cm 127.0.0.1:$B/b0 127.0.0.1:$B/b1 force
TEST mcli volume start cm
TEST mount_mortar 127.0.0.1:/cm "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
CPID=$(mm_pid "$M0")
BPID=$(cat "$T/run/cm-brick0.pid")

# cdump KEY: KEY's value in the client's statedump (its one graph).
cdump() {
    statedump_of "$CPID" | sed -n "s/^$1=//p" | tail -n 1
}

# bdump KEY: KEY's value in brick 0's statedump.
bdump() {
    brick_dump "$BPID" | sed -n "s/^$1=//p" | tail -n 1
}

# at_most A B: Y if A <= B (both integers).
at_most() {
    [ -n "$1" ] && [ -n "$2" ] && [ "$1" -le "$2" ] && echo Y || echo N
}

# Defaults: the loaded caches' limits add up to 32 MiB, the cap.
EXPECT_MATCH "^3355443[0-9]$" cdump cache.limit
EXPECT "Y" at_most "$(cdump cache.limit)" 33554432

# 300 files of 24 KiB, read twice: quick-read keeps them (7 MiB), within
# its share.
mkfiles() {
    python3 - "$M0" << 'EOF'
import os, sys
for i in range(300):
    with open(os.path.join(sys.argv[1], "f%03d" % i), "wb") as f:
        f.write((b"%03d" % i) * 8192)
EOF
}
readall() {
    local i
    for ((i = 0; i < 2; i++)); do
        cat "$M0"/f* > /dev/null || return 1
    done
}
TEST mkfiles
TEST readall
QR=$(cdump cache.cm-quick-read.bytes)
TEST [ "${QR:-0}" -gt 1048576 ]
EXPECT "Y" at_most "$(cdump cache.bytes)" "$(cdump cache.limit)"

# Lowered live to 4 MiB (GlusterFS's key): the client applies it without
# a remount, and what it caches now stays under 4 MiB.
TEST mcli volume set cm performance.cache-size 4MB
cap_applied() {
    at_most "$(cdump cache.limit)" 4194304
}
EXPECT_WITHIN 20 "Y" cap_applied
EXPECT "Y" at_most "$(cdump cache.limit)" 4194304
EXPECT "$CPID" mm_pid "$M0"
TEST readall
QR=$(cdump cache.cm-quick-read.bytes)
TEST [ "${QR:-0}" -gt 0 ]
EXPECT "Y" at_most "$(cdump cache.bytes)" 4194304
EXPECT "Y" at_most "$QR" "$(cdump cache.cm-quick-read.limit)"
EXPECT "001001" sh -c "head -c 6 '$M0/f001'"

# write-behind's share (~1.2 MiB) is less than one file's window
# (4 MiB): a 32 MiB file written in 1 MiB writes goes through once the
# share is held, and arrives whole.
TEST dd if=/dev/urandom of="$T/big" bs=1M count=32 status=none
TEST dd if="$T/big" of="$M0/big" bs=1M status=none conv=fsync
TEST [ "$(cdump total_full)" -gt 0 ]
EXPECT "$(md5sum < "$T/big")" sh -c "md5sum < '$M0/big'"

# A cache's own limit past what the cap leaves: refused, not stored.
TEST ! mcli volume set cm performance.quick-read-cache-size 8MB
EXPECT_MATCH "more than performance.cache-size" sh -c \
    "'$MDCTL' -s '$T/run/mortard.sock' volume set cm \
     performance.quick-read-cache-size 8MB 2>&1"
TEST grep -q "cache-size" "$T/state/vols/cm/options"
TEST ! grep -q "quick-read" "$T/state/vols/cm/options"
# Within it: taken as set.
TEST mcli volume set cm performance.quick-read-cache-size 3MB
EXPECT_WITHIN 20 "3145728" cdump cache.cm-quick-read.limit
EXPECT "Y" at_most "$(cdump cache.limit)" 4194304

# network.inode-lru-limit: the client's and the brick's tables, live.
# (The client's table holds the inodes the kernel references as active:
# only the unreferenced ones are bounded here; the mount's lru-limit
# bounds the others: fuse-lru-limit.t.)
EXPECT "16384" cdump inodes.lru_limit
TEST mcli volume set cm network.inode-lru-limit 100
EXPECT_WITHIN 20 "100" cdump inodes.lru_limit
EXPECT_WITHIN 20 "100" bdump inodes.lru_limit
EXPECT "$BPID" cat "$T/run/cm-brick0.pid"
TEST sh -c "stat '$M0'/f* > /dev/null"
TEST sh -c "ls -l '$M0' > /dev/null"
EXPECT "Y" at_most "$(cdump inodes.lru)" 100
EXPECT "Y" at_most "$(bdump inodes.lru)" 100
EXPECT "299299" sh -c "head -c 6 '$M0/f299'"

force_umount "$M0"
