#!/usr/bin/env bash
# XATTROP against a real brick process (storage/posix under locks,
# upcall, io-threads and protocol/server), spoken by a python peer on the
# wire (procedure 31, protocol version from rpc/xdr/mortar.x); the
# replication records and the heal index on the brick (doc/replicate.md,
# "On-disk records"):
#  1. +1 on dirty of a file made through a mount: the reply has the new
#     value, the brick's file carries it, .mortar/index/xattrop/<gfid>
#     exists, the brick's statedump says index_pending=1;
#  2. the brick killed (-9) and started again: the entry is still there;
#  3. two peers adding 300 times each, at once, to one counter: 600
#     exactly (io-threads runs them on several workers);
#  4. back to zero: the reply is zeros, the xattrs are gone from the
#     brick's file, and so is the index entry;
#  5. a key outside trusted.mortar.rep. answers EPERM and writes nothing.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"
# The raw RPC helpers (connect, rec, send, xstr, call).
export PYTHONPATH="$(cd "$(dirname "$0")/../tools" && pwd)"

PROTO=$(awk '/^const MRT_PROTO_VERSION/ { sub(";", "", $4); print $4 }' \
    "$(dirname "$0")/../../rpc/xdr/mortar.x")

cat > "$T/xo.py" <<'PY'
# xo.py PORT SUBVOL PROTO FILE KEY D M E COUNT: SETVOLUME, then COUNT
# XATTROPs adding (D, M, E) to KEY of the object whose brick file is FILE
# (its GFID read from the brick); prints the last reply.
import os, struct, sys

from brick_raw import call, connect, rec, send, xstr

port, sub, proto, path, key = sys.argv[1:6]
d, m, e, count = (int(x) for x in sys.argv[6:10])
gfid = os.getxattr(path, "trusted.mortar.gfid")
s = connect(int(port), timeout=None)
send(s, call(1, 0x29A00001, 1, xstr(sub) + xstr("py-xo")
             + struct.pack(">I", int(proto))))
r = rec(s)
st, = struct.unpack(">i", r[24:28])
if st != 0:
    sys.exit("setvolume: %d" % st)
# mrt_xattrop_args: loc (parent, name, gfid), fd, has_fd, op, keys.
args = (b"\0" * 16 + xstr("") + gfid + struct.pack(">QII", 0, 0, 1)
        + struct.pack(">I", 1) + xstr(key)
        + xstr(struct.pack(">iii", d, m, e)))
for i in range(count):
    send(s, call(2 + i, 0x29A00002, 31, args))
    r = rec(s)
    acc, = struct.unpack(">I", r[20:24])
    if acc != 0:
        sys.exit("accept_stat %d" % acc)
    st, = struct.unpack(">i", r[24:28])
    if st != 0:
        break
n = struct.unpack(">I", r[28:32])[0] if st == 0 else 0
print("status %d values %s" % (st, r[32:32 + n].hex()))
PY

# index_has GFID-FILE: Y if the brick's index lists the object.
index_has() {
    local g
    g=$(python3 -c 'import os, sys, uuid
print(uuid.UUID(bytes=os.getxattr(sys.argv[1], "trusted.mortar.gfid")))' "$1")
    if [ -e "$B0/.mortar/index/xattrop/$g" ]; then echo Y; else echo N; fi
}

# rep_xattrs FILE: the trusted.mortar.rep.* xattrs of FILE on the brick.
rep_xattrs() {
    getfattr -h -d -m '^trusted\.mortar\.rep\.' -e hex "$1" 2> /dev/null \
        | grep '^trusted' | sort
}

xo() {
    python3 "$T/xo.py" "$P0" b0 "$PROTO" "$B0/f" "$@"
}

# 1. +1 on dirty.
TEST start_volume
TEST sh -c "echo data > '$M0/f'"
EXPECT "N" index_has "$B0/f"
EXPECT "status 0 values 000000010000000000000000" \
    xo trusted.mortar.rep.dirty 1 0 0 1
EXPECT "trusted.mortar.rep.dirty=0x000000010000000000000000" rep_xattrs "$B0/f"
EXPECT "Y" index_has "$B0/f"
EXPECT_MATCH "index_pending=1" statedump_of "$(fsd_pid brick-b0)"

# 2. Killed and started again: the index is on disk.
TEST kill_brick b0
EXPECT "N" is_alive "$(fsd_pid brick-b0)"
TEST start_fsd brick-b0 --volfile "$T/vol/b0.vol"
EXPECT "Y" index_has "$B0/f"
EXPECT_WITHIN 20 "status 0 values 000000010000000000000000" \
    xo trusted.mortar.rep.dirty 0 0 0 1

# 3. Two peers at once.
python3 "$T/xo.py" "$P0" b0 "$PROTO" "$B0/f" trusted.mortar.rep.b1 \
    0 1 0 300 > "$T/peer1.out" &
PEER1=$!
python3 "$T/xo.py" "$P0" b0 "$PROTO" "$B0/f" trusted.mortar.rep.b1 \
    0 1 0 300 > "$T/peer2.out" &
PEER2=$!
TEST wait "$PEER1"
TEST wait "$PEER2"
EXPECT "trusted.mortar.rep.b1=0x000000000000025800000000
trusted.mortar.rep.dirty=0x000000010000000000000000" rep_xattrs "$B0/f"

# 4. Back to zero: no xattr, no entry.
EXPECT "status 0 values 000000000000000000000000" \
    xo trusted.mortar.rep.b1 0 -600 0 1
EXPECT "Y" index_has "$B0/f"
EXPECT "status 0 values 000000000000000000000000" \
    xo trusted.mortar.rep.dirty -1 0 0 1
EXPECT "" rep_xattrs "$B0/f"
EXPECT "N" index_has "$B0/f"
EXPECT_MATCH "index_pending=0" statedump_of "$(fsd_pid brick-b0)"

# 5. Not a replication key.
EXPECT "status -1 values " xo user.counter 1 0 0 1
EXPECT "" sh -c "getfattr -h -n user.counter '$B0/f' 2> /dev/null"
EXPECT "N" index_has "$B0/f"
# The mount reconnects to the restarted brick on its own schedule.
EXPECT_WITHIN 20 "data" cat "$M0/f"
