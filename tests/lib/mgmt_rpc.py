"""mortard's mgmt RPC spoken by hand, for functional tests that send
what the real clients never would (bad names, unknown ops, cut bodies).

As a program:
  mgmt_rpc.py HOST PORT PROC OP VOLUME IS_REMOVE [truncate]
sends one ONC-RPC call of rpc/xdr/mgmt.x's program (0x29A00010, version 1)
whose body is a mgmt_rebal_req (volume, is_remove, op), cut to 3 bytes
with "truncate", and prints the reply: "denied" when the call was refused
(AUTH_ERROR: the connection is not authenticated), "accept=N" when it was
not accepted, else one line decoded by the procedure:
  17 REBAL_TASK   ret=R errno=E status=S moved=M bytes=B skipped=K
  18 REBAL_STATE  ret=R errno=E len=N      (N: bytes of the state text)
With MGMT_SECRET=FILE (a mortard's <state-dir>/secret) in the environment
the connection first proves the pool secret (MGMT_PROC_AUTH, as a peer
would: mortard/auth.c), so that peer procedures are served. With
MGMT_TLS=CERT:KEY:CA the connection is TLS 1.3 with that client
certificate (a mortard with secure-access, mortard/secure.c).
"""
import hashlib
import hmac
import os
import socket
import ssl
import struct
import sys

MGMT_PROG = 0x29A00010
MGMT_VERS = 1


def xdr_str(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


class Reply:
    """The accepted reply's results, read field by field."""

    def __init__(self, rec, off):
        self.rec, self.off = rec, off

    def take(self, fmt):
        n = struct.calcsize(fmt)
        v = struct.unpack(fmt, self.rec[self.off:self.off + n])
        self.off += n
        return v

    def take_str(self):
        (n,) = self.take(">I")
        v = self.rec[self.off:self.off + n].decode()
        self.off += n + (-n % 4)
        return v


def call_on(s, proc, body, xid=77):
    """One call on socket s; returns (accept_stat or "denied", Reply or
    None)."""
    msg = struct.pack(">IIIIII", xid, 0, 2, MGMT_PROG, MGMT_VERS, proc)
    msg += struct.pack(">IIII", 0, 0, 0, 0) + body
    s.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)

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
    if struct.unpack(">I", rec[8:12])[0] == 1:  # MSG_DENIED
        return "denied", None
    vlen = struct.unpack(">I", rec[16:20])[0]
    off = 20 + vlen + (-vlen % 4)
    accept = struct.unpack(">I", rec[off:off + 4])[0]
    return accept, (Reply(rec, off + 4) if accept == 0 else None)


def proof(secret, label, nc, ns, uc, us):
    """HMAC-SHA256 of mortard/auth.c's message."""
    msg = label + b"\0" + nc + ns + struct.pack(">I", len(uc)) + uc + \
        struct.pack(">I", len(us)) + us
    return hmac.new(secret, msg, hashlib.sha256).digest()


def authenticate(s, secret_file):
    """Proves the pool secret on s (both steps of MGMT_PROC_AUTH)."""
    with open(secret_file) as f:
        secret = bytes.fromhex(f.read().strip())
    uc, nc = b"mgmt_rpc.py", os.urandom(32)
    accept, r = call_on(s, 19, struct.pack(">I", 1) + xdr_str(uc) +
                        xdr_str(nc) + xdr_str(b""))
    if r is None or r.take(">ii")[0] != 0:
        raise SystemExit("AUTH hello refused")
    r.take_str()  # errstr
    us = r.take_str().encode()
    (n,) = r.take(">I")
    ns = r.rec[r.off:r.off + n]
    r.off += n
    (n,) = r.take(">I")
    if r.rec[r.off:r.off + n] != proof(secret, b"mortar-auth-1 callee", nc,
                                       ns, uc, us):
        raise SystemExit("mortard does not share this secret")
    pc = proof(secret, b"mortar-auth-1 caller", nc, ns, uc, us)
    accept, r = call_on(s, 19, struct.pack(">I", 2) + xdr_str(uc) +
                        xdr_str(b"") + xdr_str(pc))
    if r is None or r.take(">ii")[0] != 0:
        raise SystemExit("AUTH proof refused")


def call(host, port, proc, body, xid=77):
    """One call on a new connection, authenticated with $MGMT_SECRET if
    set; returns (accept_stat or "denied", Reply or None)."""
    s = socket.create_connection((host, port), timeout=10)
    if os.environ.get("MGMT_TLS"):
        cert, key, ca = os.environ["MGMT_TLS"].split(":")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname = False  # mortard is reached by address
        ctx.load_verify_locations(ca)
        ctx.load_cert_chain(cert, key)
        s = ctx.wrap_socket(s)
    try:
        if os.environ.get("MGMT_SECRET"):
            authenticate(s, os.environ["MGMT_SECRET"])
        return call_on(s, proc, body, xid)
    finally:
        s.close()


def rebal_req(vol, is_remove, op):
    return xdr_str(vol.encode()) + struct.pack(">ii", is_remove, op)


def show_task(r):
    ret, err = r.take(">ii")
    status = r.take_str()
    r.take(">ii")  # is_running, died_running
    moved, mbytes, _, _, _, skipped, _, _, _ = r.take(">9q")
    r.take_str()  # error
    return "ret=%d errno=%d status=%s moved=%d bytes=%d skipped=%d" % (
        ret, err, status or "-", moved, mbytes, skipped)


def show_state(r):
    ret, err = r.take(">ii")
    return "ret=%d errno=%d len=%d" % (ret, err, len(r.take_str()))


if __name__ == "__main__":
    if len(sys.argv) not in (7, 8):
        sys.exit("usage: mgmt_rpc.py HOST PORT PROC OP VOLUME IS_REMOVE "
                 "[truncate]")
    host, port, proc, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4])
    body = rebal_req(sys.argv[5], int(sys.argv[6]), op)
    if len(sys.argv) == 8:
        body = body[:3]
    accept, reply = call(host, port, proc, body)
    if accept == "denied":
        print("denied")
    elif reply is None:
        print("accept=%d" % accept)
    elif proc == 17:
        print(show_task(reply))
    elif proc == 18:
        print(show_state(reply))
    else:
        sys.exit("mgmt_rpc.py: no decoder for procedure %d" % proc)
