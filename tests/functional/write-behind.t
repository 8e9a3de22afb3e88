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
#  - aggregation: 1 MiB written in 4 KiB writes while the bricks are
#    stopped reaches them (as counted by debug/trace) in 9 WRITEs (256
#    with aggregate-size 0), and reads back whole;
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

# --- 4b. aggregation: 1 MiB in 4 KiB writes, WRITEs counted below ---
# debug/trace between write-behind and distribute logs every WRITE that
# goes to the bricks. Each write(2) is one FUSE WRITE of 4 KiB. The
# bricks are stopped (SIGSTOP) while the file is written, so the first
# write stays in flight and the other 255 join held writes of 128 KiB:
# exactly 1 + 8 WRITEs reach the bricks once they run again; with
# aggregate-size 0, 256. The data is whole through the other mount.
M4="$T/mnt/m4"
M5="$T/mnt/m5"
mkdir -p "$M4" "$M5"
wbtrace_vol() {
    dist_volfile "b0:$P0" "b1:$P1"
    cat <<VOL

volume trace
    type debug/trace
    option fops write
    subvolumes dist
end-volume

volume wb
    type performance/write-behind
$1
    subvolumes trace
end-volume
VOL
}
wbtrace_vol "" > "$T/vol/wbtrace.vol"
wbtrace_vol "    option aggregate-size 0" > "$T/vol/wbtrace0.vol"
TEST mount_volfile "$T/vol/wbtrace.vol" "$M4"
TEST mount_volfile "$T/vol/wbtrace0.vol" "$M5"
TEST sh -c "head -c 1048576 /dev/urandom > '$T/src4k'"
SUM4=$(md5sum < "$T/src4k" | cut -d' ' -f1)
# write_4k SRC DST BRICK_PID...: opens DST, stops the bricks, copies SRC
# to DST in 4 KiB write(2) calls, lets the bricks go on, closes DST.
write_4k() {
    python3 -c '
import os, signal, sys
data = open(sys.argv[1], "rb").read()
pids = [int(p) for p in sys.argv[3:]]
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for p in pids:
    os.kill(p, signal.SIGSTOP)
try:
    for off in range(0, len(data), 4096):
        os.write(fd, data[off:off + 4096])
finally:
    for p in pids:
        os.kill(p, signal.SIGCONT)
os.close(fd)' "$@"
}
# writes_at_bricks MNT: WRITE winds logged by the trace of MNT's client.
writes_at_bricks() {
    grep -c " write wind " "$T/log/client-$(echo "$1" | tr '/' '_').log"
}
BPIDS="$(fsd_pid brick-b0) $(fsd_pid brick-b1)"
TEST write_4k "$T/src4k" "$M4/agg" $BPIDS
TEST write_4k "$T/src4k" "$M5/noagg" $BPIDS
EXPECT_WITHIN 10 "0" dump_num "$M4" pending
EXPECT_WITHIN 10 "0" dump_num "$M5" pending
EXPECT "$SUM4" sh -c "md5sum < '$M1/agg' | cut -d' ' -f1"
EXPECT "$SUM4" sh -c "md5sum < '$M1/noagg' | cut -d' ' -f1"
EXPECT "9" writes_at_bricks "$M4"
EXPECT "256" writes_at_bricks "$M5"
EXPECT "247" dump_num "$M4" aggregated
EXPECT "8" dump_num "$M4" held

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
