#!/usr/bin/env bash
# RCHECKSUM against a real brick process (storage/posix under locks,
# upcall, io-threads and protocol/server), spoken by a python peer on the
# wire (OPEN by GFID, then procedure 32; doc/wire-protocol.md):
#  1. a file written through the mount with data, written zeros, a hole
#     and a short tail: every block's digest equals python's hashlib
#     SHA-256 of the brick file's bytes, zero blocks carry ZERO and no
#     digest, blocks wholly in the hole carry HOLE (SEEK_DATA on the brick
#     file agrees), the short tail is digested as far as it goes, nothing
#     is answered past EOF, and the reply's size is the file's;
#  2. other block sizes and a range that starts inside the file and ends
#     inside a block; a range past EOF: no blocks, the size;
#  3. bad arguments (block size not a power of two, too small, too big,
#     length 0 or over 4 MiB, an unaligned or negative offset) answer
#     EINVAL, an unknown fd EBADF, truncated arguments GARBAGE_ARGS; the
#     brick stays up and answers a good call on the same connection.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"
# The raw RPC helpers (connect, rec, send, xstr, call).
export PYTHONPATH="$(cd "$(dirname "$0")/../tools" && pwd)"

PROTO=$(awk '/^const MRT_PROTO_VERSION/ { sub(";", "", $4); print $4 }' \
    "$(dirname "$0")/../../rpc/xdr/mortar.x")

cat > "$T/rck.py" <<'PY'
# rck.py PORT SUBVOL PROTO FILE CALL...: SETVOLUME, OPEN of FILE's
# object by its GFID (read from the brick), then one RCHECKSUM per CALL:
#   OFF:LEN:BS   check the answer against FILE itself; prints
#                "ok size=S blocks=N flags=F0,F1,..." or what differs
#   bad:OFF:LEN:BS, badfd:OFF:LEN:BS, short   prints the status or
#                accept_stat of a call meant to be refused
import hashlib, os, struct, sys

from brick_raw import call, connect, rec, send, xstr

IATT = 104           # mrt_iatt: its size is at byte 48
RCHECKSUM = 32       # VL_FOP_RCHECKSUM + 1
xid = [1]

def rpc(s, prog, proc, body):
    xid[0] += 1
    send(s, call(xid[0], prog, proc, body))
    r = rec(s)
    acc, = struct.unpack(">I", r[20:24])
    return acc, r[24:]

def expected(path, off, ln, bs):
    """(size, [(flags, len, digest)]) of the brick file itself."""
    size = os.stat(path).st_size
    fd = os.open(path, os.O_RDONLY)
    out = []
    pos = off
    while pos < off + ln and pos < size:
        end = min(pos + bs, off + ln, size)
        data = os.pread(fd, end - pos, pos)
        try:
            is_hole = os.lseek(fd, pos, os.SEEK_DATA) >= end
        except OSError:
            is_hole = True          # ENXIO: no data after pos
        if data.count(0) == len(data):
            out.append((3 if is_hole else 1, end - pos, b"\0" * 32))
        else:
            out.append((0, end - pos, hashlib.sha256(data).digest()))
        pos = end
    os.close(fd)
    return size, out

port, sub, proto, path = sys.argv[1:5]
gfid = os.getxattr(path, "trusted.mortar.gfid")
s = connect(int(port), timeout=None)
acc, r = rpc(s, 0x29A00001, 1, xstr(sub) + xstr("py-rck")
             + struct.pack(">I", int(proto)))
if acc != 0 or struct.unpack(">i", r[0:4])[0] != 0:
    sys.exit("setvolume refused")
# OPEN (procedure 14): mrt_open_args = loc (parent, name, gfid), flags.
acc, r = rpc(s, 0x29A00002, 14, b"\0" * 16 + xstr("") + gfid
             + struct.pack(">i", 0))
st, = struct.unpack(">i", r[0:4])
if acc != 0 or st != 0:
    sys.exit("open: accept_stat %d status %d" % (acc, st))
fdno, = struct.unpack(">Q", r[4 + IATT:12 + IATT])
for spec in sys.argv[5:]:
    kind = "good"
    parts = spec.split(":")
    if parts[0] in ("bad", "badfd"):
        kind = parts.pop(0)
    if spec == "short":
        # The fd alone: the decoder runs out of bytes.
        acc, r = rpc(s, 0x29A00002, RCHECKSUM, struct.pack(">Q", fdno))
        print("short accept_stat %d" % acc)
        continue
    off, ln, bs = (int(x) for x in parts)
    num = fdno + 1000 if kind == "badfd" else fdno
    acc, r = rpc(s, 0x29A00002, RCHECKSUM,
                 struct.pack(">QqII", num, off, ln, bs))
    st, = struct.unpack(">i", r[0:4]) if acc == 0 else (None,)
    if kind != "good" or acc != 0 or st != 0:
        print("%s accept_stat %d status %s" % (spec, acc, st))
        continue
    size, = struct.unpack(">Q", r[4 + 48:4 + 56])
    n, = struct.unpack(">I", r[4 + IATT:8 + IATT])
    got = []
    at = 8 + IATT
    for i in range(n):
        fl, bl = struct.unpack(">II", r[at:at + 8])
        got.append((fl, bl, r[at + 8:at + 40]))
        at += 40
    wsize, want = expected(path, off, ln, bs)
    if size != wsize or got != want:
        print("%s differs: size %d/%d got %r want %r"
              % (spec, size, wsize, got, want))
        continue
    print("ok size=%d blocks=%d flags=%s"
          % (size, n, ",".join(str(b[0]) for b in got)))
PY

rck() {
    python3 "$T/rck.py" "$P0" b0 "$PROTO" "$B0/f" "$@"
}

# has_hole FILE OFF LEN: Y when the brick stores no data in the range.
has_hole() {
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
off, ln = int(sys.argv[2]), int(sys.argv[3])
try:
    d = os.lseek(fd, off, os.SEEK_DATA)
except OSError:
    d = os.fstat(fd).st_size
print("Y" if d >= off + ln else "N")' "$@"
}

TEST start_volume
# 64 KiB of data, 64 KiB of written zeros, a hole to 512 KiB, then a
# 1000-byte tail: 525288 bytes.
TEST python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.pwrite(fd, bytes((i * 7 + 3) % 251 for i in range(65536)), 0)
os.pwrite(fd, bytes(65536), 65536)
os.pwrite(fd, bytes((i * 13 + 1) % 251 for i in range(1000)), 524288)
os.fsync(fd)
os.close(fd)' "$M0/f"
EXPECT "525288" stat -c %s "$B0/f"
EXPECT "Y" has_hole "$B0/f" 131072 393216
EXPECT "N" has_hole "$B0/f" 65536 65536

# 1. 64 KiB blocks over 1 MiB: data, zeros, six holes, the tail; nothing
# past EOF.
EXPECT "ok size=525288 blocks=9 flags=0,1,3,3,3,3,3,3,0" \
    rck 0:1048576:65536

# 2. Other shapes.
EXPECT "ok size=525288 blocks=129 flags=$(python3 -c '
print(",".join(["0"] * 16 + ["1"] * 16 + ["3"] * 96 + ["0"]))')" \
    rck 0:4194304:4096
# One 1 MiB block cut at the range's end (data, then zeros: data).
EXPECT "ok size=525288 blocks=1 flags=0" rck 0:131072:1048576
# From inside the file to inside a block: data, zeros, zeros cut short.
EXPECT "ok size=525288 blocks=3 flags=0,1,1" rck 32768:81920:32768
# The last hole block, then the tail.
EXPECT "ok size=525288 blocks=2 flags=3,0" rck 520192:1048576:4096
EXPECT "ok size=525288 blocks=0 flags=" rck 1048576:65536:65536

# 3. Bad arguments, then a good call on the same connection.
EXPECT "bad:0:65536:3000 accept_stat 0 status -22
bad:0:65536:2048 accept_stat 0 status -22
bad:0:65536:2097152 accept_stat 0 status -22
bad:0:0:4096 accept_stat 0 status -22
bad:0:4194305:4096 accept_stat 0 status -22
bad:4096:65536:65536 accept_stat 0 status -22
bad:-65536:65536:65536 accept_stat 0 status -22
badfd:0:65536:65536 accept_stat 0 status -9
short accept_stat 4
ok size=525288 blocks=9 flags=0,1,3,3,3,3,3,3,0" \
    rck bad:0:65536:3000 bad:0:65536:2048 bad:0:65536:2097152 bad:0:0:4096 \
    bad:0:4194305:4096 bad:4096:65536:65536 bad:-65536:65536:65536 \
    badfd:0:65536:65536 short 0:1048576:65536
EXPECT "Y" is_alive "$(fsd_pid brick-b0)"
EXPECT "525288" stat -c %s "$M0/f"
