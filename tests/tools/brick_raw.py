#!/usr/bin/env python3
# brick_raw.py: a hand-made brick client (rpc/xdr/mortar.x), for tests of
# what a brick believes and checks (tests/functional/brick-access.t), and
# the module of the tests' other raw RPC peers (posix-rchecksum.t,
# posix-xattrop.t, dist-proto-version.t import connect, rec, send, xstr
# and call from it, with tests/tools on PYTHONPATH).
#
#   brick_raw.py setvolume PORT SUB PROTO [unpriv]
#       SETVOLUME only; prints "status N error 'TEXT'". From a privileged
#       source port unless "unpriv".
#   brick_raw.py create PORT SUB PROTO UID PARENT-GFID-HEX NAME
#   brick_raw.py open PORT SUB PROTO UID GFID-HEX
#       SETVOLUME from a privileged port, then one CREATE (mode 0644) or
#       OPEN (O_RDONLY) whose credential claims uid=gid=UID; prints
#       "status N" (0 or -errno).
import errno
import os
import socket
import struct
import sys

HANDSHAKE_PROG = 0x29A00001
FOPS_PROG = 0x29A00002
AUTH_CALLER = 0x4D52
PROC_CREATE = 13  # VL_FOP_CREATE + 1 (libvol/include/vol/fops.def)
PROC_OPEN = 14


def connect(port, privileged=True, timeout=10):
    """A connection to 127.0.0.1:port; from a privileged source port
    unless not privileged (bricks refuse others: doc/security.md)."""
    if not privileged:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)
    for p in range(1023, 511, -1):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(timeout)
        try:
            s.bind(("127.0.0.1", p))
            s.connect(("127.0.0.1", port))
            return s
        except OSError as e:
            s.close()
            if e.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
                raise
    sys.exit("no free privileged port")


def rec(s, eof_ok=False):
    """One record (its fragments joined). A closed connection: None when
    eof_ok, else the script exits."""
    data = b""
    while True:
        mark = b""
        while len(mark) < 4:
            c = s.recv(4 - len(mark))
            if not c:
                if eof_ok:
                    return None
                sys.exit("connection closed")
            mark += c
        (m,) = struct.unpack(">I", mark)
        n = m & 0x7FFFFFFF
        while n > 0:
            c = s.recv(n)
            if not c:
                if eof_ok:
                    return None
                sys.exit("connection closed")
            data += c
            n -= len(c)
        if m & 0x80000000:
            return data


def send(s, body):
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)


def xstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def call(xid, prog, proc, body, uid=None):
    """An ONC-RPC call (version 1): AUTH_NONE, or the mrt_caller
    credential claiming uid when given."""
    head = struct.pack(">IIIIII", xid, 0, 2, prog, 1, proc)
    if uid is None:
        cred = struct.pack(">II", 0, 0)
    else:
        # mrt_caller: uid, gid, pid, groups<>, lk_owner.
        c = struct.pack(">IIII", uid, uid, os.getpid(), 0) + struct.pack(
            ">Q", 0)
        cred = struct.pack(">II", AUTH_CALLER, len(c)) + c
    return head + cred + struct.pack(">II", 0, 0) + body


def setvolume(s, sub, proto):
    send(s, call(1, HANDSHAKE_PROG, 1,
                 xstr(sub) + xstr("brick_raw") + struct.pack(">I", proto)))
    r = rec(s)
    (st,) = struct.unpack(">i", r[24:28])
    (n,) = struct.unpack(">I", r[28:32])
    return st, r[32:32 + n].decode()


def fop_status(s, proc, uid, body):
    send(s, call(2, FOPS_PROG, proc, body, uid))
    r = rec(s)
    (acc,) = struct.unpack(">I", r[20:24])
    if acc != 0:
        sys.exit("accept_stat %d" % acc)
    return struct.unpack(">i", r[24:28])[0]


def main():
    mode, port, sub, proto = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
        int(sys.argv[4])
    if mode == "setvolume":
        s = connect(port, len(sys.argv) < 6 or sys.argv[5] != "unpriv")
        st, err = setvolume(s, sub, proto)
        print("status %d error '%s'" % (st, err))
        return
    s = connect(port, True)
    st, err = setvolume(s, sub, proto)
    if st != 0:
        sys.exit("setvolume: %d %s" % (st, err))
    uid = int(sys.argv[5])
    if mode == "create":
        parent = bytes.fromhex(sys.argv[6])
        loc = parent + xstr(sys.argv[7]) + b"\0" * 16
        body = loc + struct.pack(">iII", os.O_RDWR | os.O_CREAT | os.O_EXCL,
                                 0o644, 0) + os.urandom(16)
        print("status %d" % fop_status(s, PROC_CREATE, uid, body))
    elif mode == "open":
        loc = b"\0" * 16 + xstr("") + bytes.fromhex(sys.argv[6])
        body = loc + struct.pack(">i", os.O_RDONLY)
        print("status %d" % fop_status(s, PROC_OPEN, uid, body))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
