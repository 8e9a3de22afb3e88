#!/usr/bin/env bash
# performance/write-behind in a client graph (above distribute):
#  - files written and closed on one mount read back at once, whole, from
#    a second mount; the first mount's statedump counts writes answered
#    behind and FLUSHes answered behind (so write-behind was in the path);
#  - a writer reads its own writes and sees the right size before close;
#  - large files written by several processes at once (1 MiB, 64 KiB and
#    4 KiB writes) have the source's checksum through the other mount;
#  - a full brick (8 MiB tmpfs): writing more than fits reports ENOSPC by
#    close at the latest; a write answered early that fails is reported
#    by fsync;
#  - through mortard: the client graph holds write-behind by default,
#    `volume set V performance.write-behind-window-size` applies in
#    place, `volume set V performance.write-behind off` switches the
#    client to a graph without it (same process, data kept).
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B1="$T/bricks/b1"
BF="$T/bricks/full"
M2="$T/mnt/m2"
M3="$T/mnt/m3"
mkdir -p "$B1" "$BF" "$M2" "$M3"

TEST alloc_port P0
TEST alloc_port P1
TEST start_brick b0 "$B0" "$P0"
TEST start_brick b1 "$B1" "$P1"
{
    dist_volfile "b0:$P0" "b1:$P1"
    cat <<VOL

volume wb
    type performance/write-behind
    subvolumes dist
end-volume
VOL
} > "$T/vol/wb.vol"
TEST mount_volfile "$T/vol/wb.vol" "$M0"
TEST mount_volfile "$T/vol/wb.vol" "$M1"

dump_num() {
    statedump_of "$(client_pid "$1")" | sed -n "s/^$2=//p" | head -n 1
}

# --- 1. write + close on m0, read at once on m1 ---
TEST python3 -c '
import sys
for i in range(50):
    with open("%s/f%d" % (sys.argv[1], i), "w") as f:
        f.write(("line %d\n" % i) * (100 + i))' "$M0"
TEST python3 -c '
import sys
for i in range(50):
    with open("%s/f%d" % (sys.argv[1], i)) as f:
        got = f.read()
    want = ("line %d\n" % i) * (100 + i)
    if got != want:
        sys.exit("f%d: %d bytes, want %d" % (i, len(got), len(want)))' "$M1"
TEST [ "$(dump_num "$M0" written_behind)" -ge 50 ]
TEST [ "$(dump_num "$M0" flush_behind)" -ge 50 ]
EXPECT "0" dump_num "$M0" failed_behind

# --- 2. own writes: read back and size before close ---
EXPECT "ok" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(64):
    os.pwrite(fd, bytes([i]) * 3000, i * 3000)
os.pwrite(fd, b"X" * 10, 5)          # overlaps the first write
ok = os.fstat(fd).st_size == 64 * 3000
data = os.pread(fd, 64 * 3000, 0)
ok = ok and data[5:15] == b"X" * 10 and data[3000:6000] == bytes([1]) * 3000
ok = ok and data[:5] == bytes(5) and data[-3000:] == bytes([63]) * 3000
os.close(fd)
print("ok" if ok else "bad")' "$M0/own"
EXPECT "192000" stat -c %s "$M1/own"

# --- 3. several writers at once, checksums through the other mount ---
TEST sh -c "head -c $((24 * 1024 * 1024)) /dev/urandom > '$T/src'"
SUM=$(md5sum < "$T/src" | cut -d' ' -f1)
bs_of() { case $1 in 0) echo 1M ;; 1) echo 64k ;; 2) echo 4k ;; 3) echo 1M ;; esac; }
PIDS=()
for i in 0 1 2 3; do
    dd if="$T/src" of="$M0/big$i" bs="$(bs_of $i)" 2> /dev/null &
    PIDS+=($!)
done
TEST wait "${PIDS[@]}"
for i in 0 1 2 3; do
    EXPECT "$SUM" sh -c "md5sum < '$M1/big$i' | cut -d' ' -f1"
done
# The same again after the first mount forgot nothing it wrote.
EXPECT "$SUM" sh -c "cat '$M0/big2' | md5sum | cut -d' ' -f1"

# --- 4. a full brick: ENOSPC by close, and by fsync ---
TEST mount -t tmpfs -o size=8m tmpfs "$BF"
add_cleanup_hook umount_full
umount_full() { umount -l "$BF" 2> /dev/null; }
TEST alloc_port PF
TEST start_brick full "$BF" "$PF"
{
    client_volfile "$PF" full
    cat <<VOL

volume wb
    type performance/write-behind
    subvolumes client-full
end-volume
VOL
} > "$T/vol/wbfull.vol"
TEST mount_volfile "$T/vol/wbfull.vol" "$M2"
TEST touch "$M2/later"
# errno_at_close FILE MIB: writes MIB MiB in 1 MiB writes, then closes;
# prints the first error (by name) or "none".
errno_at_close() {
    python3 -c '
import errno, os, sys
err = None
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
try:
    for i in range(int(sys.argv[2])):
        os.write(fd, b"z" * (1 << 20))
except OSError as e:
    err = e.errno
try:
    os.close(fd)
except OSError as e:
    err = err or e.errno
print(errno.errorcode.get(err, "none") if err else "none")' "$@"
}
EXPECT "ENOSPC" errno_at_close "$M2/huge" 16
# The brick is full now: one early write to an existing file fails at the
# brick, and fsync says so.
EXPECT "ENOSPC" python3 -c '
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, b"y" * 200000)
    os.fsync(fd)
    print("none")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$M2/later"
TEST [ "$(dump_num "$M2" errors_reported)" -ge 1 ]
TEST rm -f "$M2/huge"
# With room again the file system works as before.
EXPECT "none" errno_at_close "$M2/small" 1
EXPECT "1048576" stat -c %s "$M2/small"

# --- 5. through mortard: on by default, window live, off live ---
if [ -x "$MORTARD" ] && [ -x "$MORTAR" ]; then
    TEST start_mortard
    export MORTAR_SOCKET="$T/run/mortard.sock"
    mkdir -p "$T/bricks/v0"
    TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" force
    track_brick v0
    TEST "$MORTAR" volume start v0
    CPIDF="$T/run/m3.pid"
    CLOG="$T/log/m3.log"
    _T_PIDFILES+=("$CPIDF")
    _T_MOUNTS+=("$M3")
    TEST env MORTARFSD="$MORTARFSD" sh "$MOUNT_MORTAR" 127.0.0.1:/v0 "$M3" \
        -o "volfile-server-port=$MGMT_PORT,pid-file=$CPIDF,log-file=$CLOG,dump-dir=$T/dump"
    TEST wait_for_mount "$M3"
    CPID=$(cat "$CPIDF")
    EXPECT_MATCH "type=performance/write-behind" statedump_of "$CPID"
    TEST sh -c "echo before > '$M3/f'"
    TEST "$MORTAR" volume set v0 performance.write-behind-window-size 2MB
    EXPECT_WITHIN 15 "1" sh -c "grep -c \"applied volfile of 'v0' version\" '$CLOG'"
    EXPECT_MATCH "option.window-size=2MB" statedump_of "$CPID"
    TEST "$MORTAR" volume set v0 performance.write-behind off
    EXPECT_WITHIN 15 "1" sh -c "grep -c 'switched from graph' '$CLOG'"
    wb_in_dump() { statedump_of "$CPID" | grep -c 'performance/write-behind'; }
    EXPECT "0" wb_in_dump
    EXPECT "$CPID" cat "$CPIDF"
    EXPECT "before" cat "$M3/f"
    TEST sh -c "echo after > '$M3/g'"
    EXPECT "after" cat "$T/bricks/v0/g"
    # A bad value is refused.
    TEST ! "$MORTAR" volume set v0 performance.write-behind-window-size 1k
fi
