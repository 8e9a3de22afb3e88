#!/usr/bin/env bash
# MGMT_REBAL_TASK on the wire (mortard/rebal-peer.c), from a client that
# speaks ONC-RPC by hand on mortard's loopback mgmt port: a QUERY of a
# volume whose state file says completed answers its counters; a QUERY of
# a volume with no task answers an empty status; a volume name that is
# not one ("../secret", empty, 200 bytes) is refused with EINVAL and no
# file outside the run dir is read (one beyond the wire's 256 bytes is
# GARBAGE_ARGS); an unknown op is EINVAL; a STOP with no
# process is ESRCH; a truncated body is GARBAGE_ARGS; after all that the
# CLI still answers.
# TIMEOUT: 60
# REQUIRES: python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_mortard
mkdir -p "$T/run/rebalance"
printf 'status=completed\npid=4242\nstarted=100\nupdated=160\nscanned_files=9\nscanned_dirs=2\nmoved_files=7\nmoved_bytes=7168\nfailed_files=0\nskipped_files=1\n' \
    > "$T/run/rebalance/v0.state"
# A file the name "../secret" would reach if the name were used as is.
printf 'status=completed\nmoved_files=99\n' > "$T/run/secret.state"

# rpc OP VOLUME [IS_REMOVE] [TRUNCATE]: one REBAL_TASK call; prints
# "accept=N" or "ret=R errno=E status=S moved=M bytes=B skipped=K".
rpc() {
    python3 - "$MGMT_PORT" "$@" <<'PY'
import socket, struct, sys

port, op, vol = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
is_remove = int(sys.argv[4]) if len(sys.argv) > 4 else 0
truncate = len(sys.argv) > 5

def xdr_str(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)

body = xdr_str(vol) + struct.pack(">ii", is_remove, op)
if truncate:
    body = body[:3]
call = struct.pack(">IIIIII", 77, 0, 2, 0x29A00010, 1, 17)
call += struct.pack(">IIII", 0, 0, 0, 0) + body
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)

def read(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise SystemExit("closed")
        b += c
    return b

mark = struct.unpack(">I", read(4))[0]
rec = read(mark & 0x7FFFFFFF)
xid, mtype, stat, vflav, vlen = struct.unpack(">IIIII", rec[:20])
off = 20 + vlen + (-vlen % 4)
accept = struct.unpack(">I", rec[off:off + 4])[0]
off += 4
if accept != 0:
    print("accept=%d" % accept)
    raise SystemExit(0)

def take(fmt):
    global off
    v = struct.unpack(fmt, rec[off:off + struct.calcsize(fmt)])
    off += struct.calcsize(fmt)
    return v

def take_str():
    global off
    (n,) = take(">I")
    v = rec[off:off + n].decode()
    off += n + (-n % 4)
    return v

ret, err = take(">ii")
status = take_str()
running, died = take(">ii")
moved, mbytes, scanned, dirs, failed, skipped, eta, run, started = \
    take(">9q")
take_str()
print("ret=%d errno=%d status=%s moved=%d bytes=%d skipped=%d" %
      (ret, err, status or "-", moved, mbytes, skipped))
PY
}

EXPECT "ret=0 errno=0 status=completed moved=7 bytes=7168 skipped=1" rpc 0 v0
EXPECT "ret=0 errno=0 status=- moved=0 bytes=0 skipped=0" rpc 0 v0 1
EXPECT "ret=0 errno=0 status=- moved=0 bytes=0 skipped=0" rpc 0 nosuchvol
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 0 "../secret"
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 0 ""
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 0 "$(printf 'v%.0s' {1..200})"
EXPECT "accept=4" rpc 0 "$(printf 'v%.0s' {1..300})"
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 7 v0
EXPECT "ret=-1 errno=3 status=completed moved=7 bytes=7168 skipped=1" rpc 1 v0
EXPECT "accept=4" rpc 0 v0 0 truncate
EXPECT_MATCH "Number of Peers: 0" mcli peer status
