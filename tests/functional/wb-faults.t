#!/usr/bin/env bash
# performance/write-behind under faults (issue 20): a writer streams files
# of seeded pseudo-random data (writes of 1 KiB to 300 KiB, an fsync every
# few writes, fsync and close at the end of each file) through a
# write-behind mount of one brick on a 24 MiB tmpfs, while the test, at
# random points, (a) fills the brick's file system (a filler file on the
# same tmpfs, removed again a moment later) and (b) kills the brick with
# SIGKILL and restarts it. The writer retries as POSIX allows (a failed
# write again, from the last good fsync after a failed fsync). Checked
# for every file, on the brick itself:
#  - every byte covered by an fsync that returned 0 is there, with the
#    right contents (so no run of zeros inside fsynced data): an error of
#    a write answered early that no call reported would show here;
#  - a file whose last fsync and close returned 0 is whole;
#  - faults did happen and reached the writer (some calls failed with
#    ENOSPC, some with ENOTCONN or another error of the dead brick).
# Bounded: 14 faults, at most 60 s of writing.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

FS="$T/bricks/fs"
BD="$FS/brick"
mkdir -p "$FS"
TEST mount -t tmpfs -o size=24m mortar-test-wbfaults "$FS"
_T_MOUNTS+=("$FS") # unmounted at cleanup
mkdir -p "$BD"
TEST alloc_port P0
TEST start_brick b0 "$BD" "$P0"
{
    dist_volfile "b0:$P0"
    cat <<VOL

volume wb
    type performance/write-behind
    subvolumes dist
end-volume
VOL
} > "$T/vol/wb.vol"
TEST mount_volfile "$T/vol/wb.vol" "$M0"

STOP="$T/run/stop"
LOG="$T/writer.log"
SEED=${WB_FAULTS_SEED:-$RANDOM}
echo "# seed $SEED (WB_FAULTS_SEED=$SEED replays the writer's choices)"

# The writer, with the checker (pwrite(2) at its own offsets). It keeps
# POSIX's word: a write that failed wrote nothing, so it writes the same
# bytes again (after 50 ms, at most 40 times a file); a write that
# returned is written; an fsync that failed leaves everything since the
# last good fsync in doubt, so it writes again from there. Per file,
# after close, it reads the file on the brick (its directory is local):
# "BAD-SYNCED" if a byte below the last fsync that returned 0 differs,
# "BAD-SILENT" if the file was completed (its last fsync and close
# returned 0) and yet the brick's copy differs; else "ok". One line per
# file to $LOG: name, verdict, bytes, bytes fsynced, errors met. Then it
# unlinks the file through the mount (retried while the brick is down)
# so the tmpfs does not fill by itself. Stops when $STOP exists, after
# 60 s, or after 2000 files.
python3 - "$M0" "$BD" "$LOG" "$STOP" "$SEED" <<'PY' &
import errno, os, random, sys, time
mnt, brick, log, stop, seed = sys.argv[1:5] + [int(sys.argv[5])]
rng = random.Random(seed)
out = open(log, "w", buffering=1)
todo = []
t_end = time.time() + 60
for n in range(2000):
    if os.path.exists(stop) or time.time() > t_end:
        break
    for p in todo[:]:
        try:
            os.unlink(p)
            todo.remove(p)
        except FileNotFoundError:
            todo.remove(p)
        except OSError:
            pass
    name = "f%04d" % n
    path = os.path.join(mnt, name)
    data = random.Random(rng.randrange(1 << 30)).randbytes(
        rng.randrange(64 << 10, 3 << 20))
    synced = 0
    errs = []
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as e:
        out.write("%s ok 0 0 open:%s\n" % (name, errno.errorcode[e.errno]))
        time.sleep(0.1)
        continue
    todo.append(path)
    every = rng.randrange(2, 7)
    off = k = 0
    done = False
    def fail(what, e):
        errs.append(what + ":" + errno.errorcode[e.errno])
        time.sleep(0.05)
    while len(errs) < 40:
        if off < len(data):
            ln = min(rng.randrange(1 << 10, 300 << 10), len(data) - off)
            try:
                off += os.pwrite(fd, data[off:off + ln], off)
            except OSError as e:
                fail("write", e)
                continue        # the same bytes again
            k += 1
            if k % every != 0 and off < len(data):
                continue
        try:
            os.fsync(fd)
            synced = off
        except OSError as e:
            fail("fsync", e)
            off = synced       # in doubt since the last good fsync
            continue
        if off == len(data):
            done = True
            break
    try:
        os.close(fd)
    except OSError as e:
        errs.append("close:" + errno.errorcode[e.errno])
        done = False
    try:
        with open(os.path.join(brick, name), "rb") as f:
            got = f.read()
    except OSError:
        got = b""
    verdict = "ok"
    if got[:synced] != data[:synced]:
        verdict = "BAD-SYNCED"
    elif done and got != data:
        verdict = "BAD-SILENT"
    if verdict != "ok":
        at = next((i for i in range(min(len(got), len(data)))
                   if got[i] != data[i]), min(len(got), len(data)))
        zeros = len(got[at:]) - len(got[at:].lstrip(b"\0"))
        verdict += "(brick has %d bytes, differs from %d, %d zeros)" % (
            len(got), at, zeros)
    out.write("%s %s %d %d %s\n" % (name, verdict, len(data), synced,
                                    ",".join(errs) or "-"))
out.write("END\n")
PY
WPID=$!
_T_BG+=("$WPID")

# The faults: 14 of them at random points, fills and crashes in turn.
fill() {
    dd if=/dev/zero of="$FS/filler" bs=64k status=none 2> /dev/null
    sleep "0.$((RANDOM % 8 + 2))"
    rm -f "$FS/filler"
}
crash() {
    kill_brick b0
    sleep "0.$((RANDOM % 8 + 1))"
    start_brick b0 "$BD" "$P0"
}
RANDOM=$SEED
for ((i = 0; i < 14; i++)); do
    sleep "$((RANDOM % 2)).$((RANDOM % 10))"
    kill -0 "$WPID" 2> /dev/null || break
    if ((i % 2)); then crash; else fill; fi
done
sleep 6 # the client reconnects after the last restart (backoff up to 5 s)
touch "$STOP"
TEST wait "$WPID"
TEST grep -q "^END" "$LOG"
echo "# $(grep -c '^f' "$LOG") files, $(grep -c ENOSPC "$LOG") with ENOSPC," \
    "$(grep -v ENOSPC "$LOG" | grep -c ':E')" "with another error"
grep " BAD" "$LOG" | head -n 5 | sed 's/^/# /'
EXPECT "0" grep -c " BAD" "$LOG"
TEST [ "$(grep -c '^f' "$LOG")" -ge 10 ]
# The faults reached the writer, as errors of its calls.
TEST grep -q "ENOSPC" "$LOG"
TEST sh -c "grep -v ENOSPC '$LOG' | grep -q ':E'"
