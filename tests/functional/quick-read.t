#!/usr/bin/env bash
# performance/quick-read (with open-behind) in a client graph, with
# debug/trace between it and distribute counting what goes to the bricks:
#  - 200 small files (0 bytes to 60 KiB) written through a second mount
#    read back after drop_caches with the right checksums, sending one
#    LOOKUP per file and no OPEN and no READ; the statedump counts the
#    opens answered locally and the reads served from the cache;
#  - the same after `ls -l` (names known from readdirplus, no LOOKUP from
#    the kernel): one nameless LOOKUP per file, to its brick alone;
#  - a 100 KiB file (over max-file-size) is opened and read on the brick;
#  - a file rewritten through the second mount is seen by the first after
#    cache-timeout (1 s); one written through the first mount is seen at
#    once (the write dropped the cached copy);
#  - an fcntl lock on a lazily opened file opens it for real first;
#  - through mortard: the client graph holds quick-read by default,
#    `volume set V performance.quick-read-cache-timeout` applies in place
#    and `volume set V performance.quick-read off` switches the client to
#    a graph without it (same process, data kept).
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B1="$T/bricks/b1"
M3="$T/mnt/m3"
mkdir -p "$B1" "$M3"

TEST alloc_port P0
TEST alloc_port P1
TEST start_brick b0 "$B0" "$P0"
TEST start_brick b1 "$B1" "$P1"
dist_volfile "b0:$P0" "b1:$P1" > "$T/vol/plain.vol"
{
    dist_volfile "b0:$P0" "b1:$P1"
    cat <<VOL

volume trace
    type debug/trace
    subvolumes dist
end-volume

volume qr
    type performance/quick-read
    subvolumes trace
end-volume
VOL
} > "$T/vol/qr.vol"
TEST mount_volfile "$T/vol/qr.vol" "$M0"
TEST mount_volfile "$T/vol/plain.vol" "$M1"
CLOG="$T/log/client-$(echo "$M0" | tr '/' '_').log"

LOG_AT=0
mark_log() {
    LOG_AT=$(wc -l < "$CLOG")
}
# count FOP [PATTERN]: wind lines of FOP (and PATTERN) below quick-read
# since the mark.
count() {
    tail -n +"$((LOG_AT + 1))" "$CLOG" | grep " $1 wind " |
        grep -c -e "${2:-.}"
}
dump_num() {
    statedump_of "$(client_pid "$M0")" | sed -n "s/^$1=//p" | head -n 1
}

# --- 1. 200 small files: one LOOKUP each, no OPEN, no READ ---
TEST mkdir "$M1/d"
TEST python3 -c '
import os, sys
for i in range(200):
    with open("%s/f%03d" % (sys.argv[1], i), "wb") as f:
        f.write(os.urandom((i * 307) % 61440))' "$M1/d"
sums() {
    (cd "$1" && md5sum f*) | md5sum
}
WANT=$(sums "$M1/d")
TEST [ -n "$WANT" ]
sync
drop_caches
# Held until the counts are read: another test's drop_caches meanwhile
# would make the kernel forget the files and ask again.
cache_hold
# The directory itself is looked up once, before the clock.
TEST stat "$M0/d"
mark_log
OPENS0=$(dump_num local_opens)
HITS0=$(dump_num hits)
# Each file opened by name and read to the end (cat).
got_sums() {
    (cd "$M0/d" && for i in $(seq -f %03g 0 199); do md5sum "f$i"; done) |
        md5sum
}
EXPECT "$WANT" got_sums
# (The directory's lookup before the mark may reach the log after it.)
EXPECT "200" count lookup " name=f[0-9]"
EXPECT "0" count open
EXPECT "0" count read
EXPECT "$((OPENS0 + 200))" dump_num local_opens
# (the 0-byte file is never read: the kernel knows its size)
TEST [ "$(dump_num hits)" -ge "$((HITS0 + 199))" ]
# Read back again at once: the kernel's cache or ours, never a brick read.
EXPECT "$WANT" got_sums
EXPECT "0" count read
cache_release

# --- 1b. after a listing: content from each file's own brick alone ---
# `ls -l` fills the kernel's names from readdirplus, so the reads that
# follow send OPEN without a LOOKUP; quick-read fetches the content with
# a nameless LOOKUP, which distribute sends to the brick the listing
# found the file on: 200 LOOKUPs at the bricks (traces under
# distribute), not one per brick and file. (readdirp-content 0: the
# listing does not bring the content itself; quick-read-readdirp.t tests
# that it does by default.)
M4="$T/mnt/m4"
mkdir -p "$M4"
cat > "$T/vol/qr-bricks.vol" <<VOL
volume b0
    type protocol/client
    option remote-host 127.0.0.1
    option remote-port $P0
    option remote-subvolume b0
end-volume

volume b1
    type protocol/client
    option remote-host 127.0.0.1
    option remote-port $P1
    option remote-subvolume b1
end-volume

volume t0
    type debug/trace
    subvolumes b0
end-volume

volume t1
    type debug/trace
    subvolumes b1
end-volume

volume dist
    type cluster/distribute
    subvolumes t0 t1
end-volume

volume qr
    type performance/quick-read
    option readdirp-content 0
    option cache-timeout 30
    subvolumes dist
end-volume
VOL
# Long cache and kernel timeouts, as in quick-read-readdirp.t: under load
# an attribute timed out before a read makes the kernel send GETATTR on
# the open fd, which opens the file on its brick for real.
TEST mount_volfile "$T/vol/qr-bricks.vol" "$M4" \
    --fuse-opt entry-timeout=60 --fuse-opt attribute-timeout=60
C4LOG="$T/log/client-$(echo "$M4" | tr '/' '_').log"
TEST stat "$M4/d"
sync
drop_caches
cache_hold # as in 1: no other test's drop_caches until the counts
TEST sh -c "ls -l '$M4/d' > /dev/null"
A4=$(wc -l < "$C4LOG")
got_sums4() {
    (cd "$M4/d" && for i in $(seq -f %03g 0 199); do md5sum "f$i"; done) |
        md5sum
}
EXPECT "$WANT" got_sums4
# (Lookups of the directory itself, by name when the kernel's entry for
# it times out under load or by GFID when distribute revalidates its
# layout, are not the files'.)
DGFID=$(python3 -c 'import os, sys, uuid
print(uuid.UUID(bytes=os.getxattr(sys.argv[1], "trusted.mortar.gfid")))' \
    "$B0/d")
brick_fops() {
    tail -n +"$((A4 + 1))" "$C4LOG" | grep " $1 wind " |
        grep -v -e " name=d\( \|\$\)" | grep -v -c -e " gfid=$DGFID"
}
EXPECT "200" brick_fops lookup
EXPECT "0" brick_fops open
EXPECT "0" brick_fops read
cache_release
TEST umount_client "$M4"

# --- 2. a file larger than max-file-size is read on the brick ---
TEST sh -c "head -c 102400 /dev/urandom > '$M1/big'"
BIG=$(md5sum < "$M1/big")
drop_caches
mark_log
EXPECT "$BIG" sh -c "md5sum < '$M0/big'"
EXPECT "1" count open
TEST [ "$(count read)" -ge 1 ]

# --- 3. changes through the other mount after the timeout; own at once ---
TEST sh -c "echo first > '$M1/f'"
EXPECT "first" cat "$M0/f"
TEST sh -c "echo second > '$M1/f'"
sleep 2.5
EXPECT "second" cat "$M0/f"
TEST sh -c "echo third > '$M0/f'"
EXPECT "third" cat "$M0/f"
EXPECT "third" cat "$M1/f"

# --- 4. a lock on a lazily opened fd opens it for real first ---
drop_caches
mark_log
EXPECT "locked third" python3 -c '
import fcntl, sys
with open(sys.argv[1]) as f:
    fcntl.lockf(f, fcntl.LOCK_SH)
    print("locked", f.read().strip())' "$M0/f"
EXPECT "1" count open
EXPECT "1" count lk

# --- 5. through mortard: on by default, options live, off live ---
if [ -x "$MORTARD" ] && [ -x "$MORTAR" ]; then
    TEST start_mortard
    export MORTAR_SOCKET="$T/run/mortard.sock"
    mkdir -p "$T/bricks/v0"
    TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" force
    track_brick v0
    TEST "$MORTAR" volume start v0
    CPIDF="$T/run/m3.pid"
    CLOG3="$T/log/m3.log"
    _T_PIDFILES+=("$CPIDF")
    _T_MOUNTS+=("$M3")
    TEST env MORTARFSD="$MORTARFSD" sh "$MOUNT_MORTAR" 127.0.0.1:/v0 "$M3" \
        -o "volfile-server-port=$MGMT_PORT,pid-file=$CPIDF,log-file=$CLOG3,dump-dir=$T/dump"
    TEST wait_for_mount "$M3"
    CPID=$(cat "$CPIDF")
    EXPECT_MATCH "type=performance/quick-read" statedump_of "$CPID"
    TEST sh -c "echo before > '$M3/f'"
    TEST "$MORTAR" volume set v0 performance.quick-read-cache-timeout 3
    EXPECT_WITHIN 15 "1" sh -c "grep -c \"applied volfile of 'v0' version\" '$CLOG3'"
    EXPECT_MATCH "option.cache-timeout=3s" statedump_of "$CPID"
    TEST "$MORTAR" volume set v0 performance.quick-read off
    EXPECT_WITHIN 15 "1" sh -c "grep -c 'switched from graph' '$CLOG3'"
    qr_in_dump() { statedump_of "$CPID" | grep -c 'performance/quick-read'; }
    EXPECT "0" qr_in_dump
    EXPECT "$CPID" cat "$CPIDF"
    EXPECT "before" cat "$M3/f"
    TEST sh -c "echo after > '$M3/g'"
    EXPECT "after" cat "$T/bricks/v0/g"
    TEST ! "$MORTAR" volume set v0 performance.quick-read-cache-timeout x
fi
