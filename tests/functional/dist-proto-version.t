#!/usr/bin/env bash
# Protocol versions at the handshake (doc/wire-protocol.md): a peer of
# another Mortar protocol version is refused at SETVOLUME with a clear
# reason, logged on both sides, and nothing else is decoded.
#  1. a client of protocol version 1 (a python peer speaking the frozen
#     SETVOLUME) against a real brick: refused with EPROTONOSUPPORT and
#     "protocol version 1 not supported (brick speaks N)", in the brick's
#     log too; a LOOKUP on that connection gets SYSTEM_ERR;
#  2. a distribute volume of three real bricks and one brick of another
#     version (a python peer refusing as an old brick does): the mount
#     comes up with that brick marked down, the client's log says why,
#     files are created and read on the others;
#  3. a one-brick mount against that brick fails with the reason.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"
# The raw RPC helpers (connect, rec, send, xstr, call).
export PYTHONPATH="$(cd "$(dirname "$0")/../tools" && pwd)"

PROTO=$(awk '/^const MRT_PROTO_VERSION/ { sub(";", "", $4); print $4 }' \
    "$(dirname "$0")/../../rpc/xdr/mortar.x")

# The frozen handshake in python: ONC-RPC over TCP with record marking.
cat > "$T/peer.py" <<'PY'
import socket, struct, sys

from brick_raw import call, connect, rec, send, xstr

if sys.argv[1] == "client":
    # client PORT SUBVOL VERSION: SETVOLUME, then a LOOKUP.
    s = connect(int(sys.argv[2]), timeout=None)
    send(s, call(1, 0x29A00001, 1, xstr(sys.argv[3]) + xstr("py-old")
                 + struct.pack(">I", int(sys.argv[4]))))
    r = rec(s)
    # xid, REPLY, MSG_ACCEPTED, verf (flavour, len 0), accept_stat
    xid, mtype, rstat, vf, vl, acc = struct.unpack(">IIIIII", r[:24])
    st, = struct.unpack(">i", r[24:28])
    n, = struct.unpack(">I", r[28:32])
    print("status %d error '%s'" % (st, r[32:32 + n].decode()))
    send(s, call(2, 0x29A00002, 1, b"\0" * 48))
    r = rec(s)
    print("lookup accept_stat %d" % struct.unpack(">I", r[20:24])[0])
    sys.exit(0)

# brick PORT: an old brick: every SETVOLUME refused as version 1 does.
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[2])))
srv.listen(16)
while True:
    c, _ = srv.accept()
    try:
        r = rec(c, eof_ok=True)
        while r is not None:
            xid, = struct.unpack(">I", r[:4])
            # The client's proto_version: last word of the args.
            v, = struct.unpack(">I", r[-4:])
            body = (struct.pack(">i", -93) + xstr("protocol version %d not "
                    "supported" % v) + struct.pack(">Q", 0))
            send(c, struct.pack(">IIIIII", xid, 1, 0, 0, 0, 0) + body)
            r = rec(c, eof_ok=True)
    except OSError:
        pass
    c.close()
PY

# readable_ok: every file f1..f20 not on b3 reads back.
readable_ok() {
    local i
    for i in $(seq 1 20); do
        [ -e "$T/bricks/b3/f$i" ] && continue
        [ "$(cat "$M0/f$i")" = "v$i" ] || { echo "f$i"; return 1; }
    done
}

# 1. An old client against a real brick.
TEST dist4_start
EXPECT_MATCH "^[0-9]+$" echo "$PROTO"
EXPECT "status -93 error 'protocol version 1 not supported (brick speaks $PROTO)'
lookup accept_stat 5" python3 "$T/peer.py" client "${DPORT[0]}" b0 1
EXPECT "status -93 error 'protocol version $((PROTO + 1)) not supported (brick speaks $PROTO)'
lookup accept_stat 5" python3 "$T/peer.py" client "${DPORT[0]}" b0 $((PROTO + 1))
EXPECT_MATCH "E .*py-old.*protocol version 1 not supported \(brick speaks" \
    cat "$T/log/brick-b0.log"
# The real clients are unaffected.
TEST sh -c "for i in \$(seq 1 20); do echo v\$i > '$M0/f'\$i; done"
TEST readable_ok
EXPECT "20" sh -c "ls '$M0' | wc -l"
TEST umount "$M0"

# 2. The fourth brick speaks another version.
alloc_port OLDP
bg_run python3 "$T/peer.py" brick "$OLDP"
sed -i "/^volume c3\$/,/^end-volume/s/remote-port .*/remote-port $OLDP/" \
    "$T/vol/dist4.vol"
EXPECT "1" grep -c "remote-port $OLDP" "$T/vol/dist4.vol"
TEST start_fsd client-old --volfile "$T/vol/dist4.vol" "$M0"
TEST wait_for_mount "$M0"
EXPECT_MATCH "E .*c3.*subvolume 'b3' refused: protocol version $PROTO not supported; this client speaks protocol version $PROTO" \
    cat "$T/log/client-old.log"
# The names on the three other bricks work; b3 counts as down.
TEST readable_ok
EXPECT "0" sh -c "grep -c 'bad reply' '$T/log/client-old.log'"
TEST umount "$M0"

# 3. One brick only, of another version: the mount fails and says why.
client_volfile "$OLDP" b3 > "$T/vol/old1.vol"
mkdir -p "$T/mnt/old1"
_T_MOUNTS+=("$T/mnt/old1")
# old1: mortarfsd's exit status; its message goes to $T/old1.err.
old1() {
    "$MORTARFSD" --volfile "$T/vol/old1.vol" --log-file "$T/log/old1.log" \
        --pid-file "$T/run/old1.pid" --ready-timeout 3 "$T/mnt/old1" \
        2> "$T/old1.err"
    echo $?
}
EXPECT "1" old1
EXPECT_MATCH "refused: protocol version $PROTO not supported; this client speaks protocol version $PROTO" \
    cat "$T/old1.err"
EXPECT "N" is_mounted "$T/mnt/old1"
