#!/usr/bin/env bash
# performance/write-behind: errors of writes answered early reach the
# application (issue 20, defect 1), the issue's two reproductions through
# a real mount:
#  - nearly full brick (tmpfs with ~2.5 MiB free): 80 x write(128 KiB)
#    (going on after a failed write, as a writer that ignores write errors
#    does), fsync, close: a write reports ENOSPC, fsync fails too (a
#    write's report does not make fsync say 0), and the brick file has no
#    run of zeros inside the bytes write(2) acknowledged before the first
#    error;
#  - 8 x write(128 KiB), kill -9 the brick, write(4 KiB) (answered early),
#    restart the brick: the 4 KiB write or fsync fails (not 0 with the
#    4 KiB missing), over a hand-written volfile and through mortard
#    (`volume start V force`); and when a child that inherited the fd
#    writes the 4 KiB and exits (its close sends a FLUSH of the same
#    handle), the parent's fsync still fails.
# TIMEOUT: 120
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

BF="$T/bricks/full"
mkdir -p "$BF"
TEST mount -t tmpfs -o size=8m mortar-test-wbfull "$BF"
_T_MOUNTS+=("$BF") # unmounted at cleanup
# Leave about 2.5 MiB free on the brick's file system.
TEST dd if=/dev/zero of="$BF/filler" bs=1k count=$((8192 - 2560)) status=none
TEST alloc_port P0
TEST start_brick b0 "$BF" "$P0"
wb_vol() {
    dist_volfile "b0:$P0"
    cat <<VOL

volume wb
    type performance/write-behind
$1
    subvolumes dist
end-volume
VOL
}
wb_vol "" > "$T/vol/wb.vol"
TEST mount_volfile "$T/vol/wb.vol" "$M0"

# --- 1. ENOSPC in the middle of a stream of writes ---
# Prints: the error of each call that failed (write/fsync/close), then
# "acked=N" (bytes write(2) acknowledged before its first error) and
# whether the file on the brick has a zero run inside them.
enospc_run() {
    python3 - "$1" "$2" <<'PY'
import errno, os, sys
path, brick = sys.argv[1], sys.argv[2]
chunk = 128 * 1024
out = []
acked = 0
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
failed = False
for i in range(80):
    try:
        n = os.write(fd, bytes([1 + i % 250]) * chunk)
        if not failed:
            acked += n
    except OSError as e:
        if not failed:
            out.append("write:" + errno.errorcode[e.errno])
        failed = True # go on, as a writer that ignores write errors does
for name, fn in (("fsync", lambda: os.fsync(fd)),
                 ("close", lambda: os.close(fd))):
    try:
        fn()
    except OSError as e:
        out.append(name + ":" + errno.errorcode[e.errno])
data = open(brick, "rb").read()
hole = data[:acked].find(bytes(4096)) >= 0
print(" ".join(out) or "none", "hole" if hole else "nohole",
      "fsync-failed" if any(o.startswith("fsync") for o in out)
      else "fsync-ok")
PY
}
OUT=$(enospc_run "$M0/big" "$BF/big")
echo "# $OUT"
EXPECT_MATCH "^write:ENOSPC" echo "$OUT"
EXPECT_MATCH "fsync-failed" echo "$OUT"
EXPECT_MATCH "nohole" echo "$OUT"
TEST rm -f "$M0/big"

# --- 2. the brick dies after writes were acknowledged ---
TEST rm -f "$BF/filler"
# kill_run FILE OUT: opens FILE, writes 8 x 128 KiB (no fsync), then waits
# for a line on the fifo $FIFO (the test kills the brick), writes 4 KiB
# (answered early), waits again (the test restarts the brick), fsyncs and
# closes; writes the result of the last three calls to OUT. Background.
FIFO="$T/run/go"
mkfifo "$FIFO"
# With a third argument "child", a child process that inherited the fd
# writes the 4 KiB and exits (as `cmd >&3` in a shell does): its exit
# closes its copy, which sends a FLUSH of the same handle.
kill_run() {
    python3 - "$1" "$FIFO" "${3:-}" > "$2" 2>&1 <<'PY' &
import errno, os, sys
path, fifo, mode = sys.argv[1], sys.argv[2], sys.argv[3]
res = []
def step(name, fn):
    try:
        fn()
        res.append(name + ":ok")
    except OSError as e:
        res.append(name + ":" + errno.errorcode[e.errno])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(8):
    os.write(fd, b"a" * (128 * 1024))
g = open(fifo)
g.readline()            # the brick is dead now
if mode == "child":
    pid = os.fork()
    if pid == 0:
        try:
            os.write(fd, b"b" * 4096)
            os._exit(0)
        except OSError as e:
            os._exit(e.errno)
    st = os.waitpid(pid, 0)[1] >> 8
    res.append("w4k:" + (errno.errorcode[st] if st else "ok"))
else:
    step("w4k", lambda: os.write(fd, b"b" * 4096))
g.readline()            # the brick is back
step("fsync", lambda: os.fsync(fd))
step("close", lambda: os.close(fd))
print(" ".join(res))
PY
    WPID=$!
}
# go: lets the writer take its next step.
go() { echo >&$GO; }
kill_run "$M0/k" "$T/kill.out"
exec {GO}> "$FIFO"
sleep 1
TEST kill_brick b0
go
sleep 1
TEST start_brick b0 "$BF" "$P0"
sleep 6 # the client reconnects (backoff up to 5 s)
go
exec {GO}>&-
TEST wait $WPID
OUT=$(cat "$T/kill.out")
echo "# $OUT"
# The 4 KiB either failed at write(2), or fsync reports the failure.
EXPECT_MATCH "w4k:E|fsync:E" echo "$OUT"
# The brick was dead for the 4 KiB: it cannot be there.
EXPECT "$((1024 * 1024))" stat -c %s "$BF/k"

# --- 2b. the same, the 4 KiB written by a child that then exits ---
# Its exit's FLUSH must not use up the report: the parent's fsync fails.
kill_run "$M0/k2" "$T/kill2.out" child
exec {GO}> "$FIFO"
sleep 1
TEST kill_brick b0
go
sleep 1
TEST start_brick b0 "$BF" "$P0"
sleep 6
go
exec {GO}>&-
TEST wait $WPID
OUT=$(cat "$T/kill2.out")
echo "# $OUT"
EXPECT_MATCH "fsync:E" echo "$OUT"

# --- 3. the same through mortard: `volume start V force` restarts it ---
if [ -x "$MORTARD" ] && [ -x "$MDCTL" ]; then
    TEST start_mortard
    mkdir -p "$T/bricks/v1"
    track_brick v1
    TEST mcli volume create v1 "127.0.0.1:$T/bricks/v1" force
    TEST mcli volume start v1
    M1V="$T/mnt/v1"
    mkdir -p "$M1V"
    TEST mount_mortar "127.0.0.1:/v1" "$M1V" "volfile-server-port=$MGMT_PORT"
    TEST wait_for_mount "$M1V"
    kill_run "$M1V/k" "$T/kill3.out"
    exec {GO}> "$FIFO"
    sleep 1
    TEST kill -9 "$(cat "$T/run/v1-brick0.pid")"
    go
    sleep 1
    TEST mcli volume start v1 force
    sleep 6
    go
    exec {GO}>&-
    TEST wait $WPID
    OUT=$(cat "$T/kill3.out")
    echo "# $OUT"
    EXPECT_MATCH "w4k:E|fsync:E" echo "$OUT"
fi
