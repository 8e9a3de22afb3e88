#!/usr/bin/env bash
# performance/read-ahead end to end (issue 24 item 1), through mortard on
# a two-brick distribute volume, mounted with the kernel's own 128 KiB
# read-ahead window (read-ahead-kb=128: the case the translator is for):
#  - `volume set V performance.read-ahead on` puts the translator in the
#    client graph (off by default), `performance.read-ahead-page-count`
#    is checked against 1..16;
#  - a 64 MiB file read sequentially with dd has the source's checksum,
#    and the client's statedump counts prefetches and hits;
#  - a reader (128 KiB preads, its page cache dropped before each so
#    every read reaches the client) and a writer on a second fd writing
#    into the pages fetched ahead of the reader: every read returns the
#    newest bytes (served stale pages would fail it; the dump shows that
#    pages were served and dropped by the writes), and cmp of the file
#    with the expected bytes after the caches are dropped;
#  - a live page-count change applies in place (same graph), and
#    `performance.read-ahead off` switches the client to a graph without
#    it, data unchanged.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

# ra_value PID KEY: KEY in read-ahead's section of PID's statedump.
ra_value() {
    statedump_of "$1" | awk -v k="$2" '
        $0 == "[dump v0-read-ahead]" { in_s = 1; next }
        /^\[/ { in_s = 0 }
        in_s && index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}

TEST start_mortard
export MORTAR_SOCKET="$T/run/mortard.sock"
mkdir -p "$T/bricks/v0" "$T/bricks/v1"
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" \
    "127.0.0.1:$T/bricks/v1" force
track_brick v0 brick0
track_brick v0 brick1
TEST "$MORTAR" volume set v0 performance.read-ahead on
TEST "$MORTAR" volume set v0 performance.read-ahead-page-count 4
TEST ! "$MORTAR" volume set v0 performance.read-ahead-page-count 17
TEST ! "$MORTAR" volume set v0 performance.read-ahead-page-count 0
TEST "$MORTAR" volume start v0
CPIDF="$T/run/m0.pid"
CLOG="$T/log/m0.log"
_T_PIDFILES+=("$CPIDF")
_T_MOUNTS+=("$M0")
TEST env MORTARFSD="$MORTARFSD" sh "$MOUNT_MORTAR" 127.0.0.1:/v0 "$M0" \
    -o "volfile-server-port=$MGMT_PORT,pid-file=$CPIDF,log-file=$CLOG,dump-dir=$T/dump,read-ahead-kb=128"
TEST wait_for_mount "$M0"
CPID=$(cat "$CPIDF")
EXPECT_MATCH "type=performance/read-ahead" statedump_of "$CPID"
EXPECT "4" ra_value "$CPID" page_count

# --- 1. 64 MiB read sequentially: same checksum, prefetches and hits ---
TEST sh -c "head -c $((64 * 1024 * 1024)) /dev/urandom > '$T/src'"
SUM=$(md5sum < "$T/src" | cut -d' ' -f1)
TEST cp "$T/src" "$M0/big"
drop_caches
EXPECT "$SUM" sh -c "dd if='$M0/big' bs=128k 2> /dev/null | md5sum | cut -d' ' -f1"
TEST [ "$(ra_value "$CPID" prefetches)" -gt 0 ]
TEST [ "$(ra_value "$CPID" hits)" -gt 0 ]
EXPECT "0" ra_value "$CPID" prefetch_errors

# --- 2. writes from a second fd into the pages ahead of a reader ---
TEST sh -c "head -c $((8 * 1024 * 1024)) /dev/urandom > '$T/mix'"
TEST cp "$T/mix" "$M0/mix"
drop_caches
HITS0=$(ra_value "$CPID" hits)
DROPS0=$(ra_value "$CPID" write_drops)
EXPECT "ok" python3 -c '
import os, sys
path, want_path = sys.argv[1], sys.argv[2]
want = bytearray(open(want_path, "rb").read())
r = os.open(path, os.O_RDONLY)
w = os.open(path, os.O_WRONLY)
chunk = 128 * 1024
bad = None
for n, off in enumerate(range(0, len(want), chunk)):
    # Every read reaches the client: the kernel keeps nothing.
    os.posix_fadvise(r, 0, 0, os.POSIX_FADV_DONTNEED)
    got = os.pread(r, chunk, off)
    if got != want[off:off + chunk] and bad is None:
        bad = off
    # Into the pages read-ahead fetched ahead of the reader.
    at = off + chunk + (n % 4) * 37 * 1024 + 123
    if at + 5000 <= len(want):
        new = os.urandom(5000)
        os.pwrite(w, new, at)
        want[at:at + 5000] = new
os.close(w)
os.close(r)
open(want_path, "wb").write(want)
print("ok" if bad is None else "stale bytes at %d" % bad)' "$M0/mix" "$T/mix"
TEST [ "$(ra_value "$CPID" hits)" -gt "$HITS0" ]
TEST [ "$(ra_value "$CPID" write_drops)" -gt "$DROPS0" ]
drop_caches
TEST cmp "$T/mix" "$M0/mix"

# --- 3. live page-count, then off live ---
TEST "$MORTAR" volume set v0 performance.read-ahead-page-count 8
EXPECT_WITHIN 15 "8" ra_value "$CPID" page_count
EXPECT "0" sh -c "grep -c 'switched from graph' '$CLOG'"
TEST "$MORTAR" volume set v0 performance.read-ahead off
EXPECT_WITHIN 15 "1" sh -c "grep -c 'switched from graph' '$CLOG'"
ra_in_dump() { statedump_of "$CPID" | grep -c 'performance/read-ahead'; }
EXPECT "0" ra_in_dump
EXPECT "$CPID" cat "$CPIDF"
drop_caches
EXPECT "$SUM" sh -c "md5sum < '$M0/big' | cut -d' ' -f1"
TEST cmp "$T/mix" "$M0/mix"
