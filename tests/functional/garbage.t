#!/usr/bin/env bash
# Garbage bytes, oversized records and half-open connections sent to the
# brick port do not stop it from serving a live mount or a new client.
# TIMEOUT: 150
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume
TEST sh -c "echo alive > '$M0/f'"

# The noise: random bytes, a record mark claiming 2 GiB, a mark with a
# tiny bogus call, a slowloris that sends half a header and waits, and a
# flood of connections that close at once. All bounded in count and time.
noise() {
    python3 - "$P0" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s
held = []
for i in range(20):
    s = conn()
    try:
        s.sendall(os.urandom(4096 * (i + 1)))
    except OSError:
        pass
    s.close()
s = conn()
try:
    s.sendall(struct.pack(">I", 0xFFFFFFFF) + b"A" * 1024)
except OSError:
    pass
s.close()
s = conn()
try:
    # last fragment, 8 bytes: far too short for an RPC call header.
    s.sendall(struct.pack(">I", 0x80000008) + b"\x00" * 8)
    time.sleep(0.2)
except OSError:
    pass
s.close()
s = conn()
try:
    # a call to an unknown program number.
    body = struct.pack(">IIIIII", 1234, 0, 2, 0x31337, 1, 0) + b"\x00" * 16
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
    s.settimeout(2)
    try:
        s.recv(100)
    except OSError:
        pass
except OSError:
    pass
s.close()
for i in range(5):
    h = conn()
    h.sendall(b"\x80\x00")
    held.append(h)
for i in range(200):
    conn().close()
print("sent")
time.sleep(1)
PY
}
EXPECT "sent" noise
EXPECT "Y" is_alive "$(fsd_pid brick-b0)"
# The existing mount keeps working.
EXPECT "alive" cat "$M0/f"
TEST sh -c "echo still > '$M0/g'"
EXPECT "still" cat "$M0/g"
# While noise runs in the background, I/O goes on.
bg_run noise
TEST dd if=/dev/urandom of="$T/rand" bs=64k count=32 status=none
TEST cp "$T/rand" "$M0/big"
TEST cmp "$T/rand" "$M0/big"
# A new client can still mount.
TEST mount_client "$P0" b0 "$M1"
TEST wait_for_mount "$M1"
EXPECT "alive" cat "$M1/f"
TEST cmp "$T/rand" "$M1/big"
EXPECT "Y" is_alive "$(fsd_pid brick-b0)"
