#!/usr/bin/env bash
# Who may manage mortard (doc/security.md, "Management"; issue 23):
# - the pool secret is made on first start, mode 0600;
# - an unprivileged local user is refused every command on the unix
#   socket, both by the socket file's mode (0600) and, with the mode
#   opened up, by mortard's SO_PEERCRED check;
# - over TCP every CLI command is refused for an unauthenticated
#   connection ("not authenticated"), and nothing changes in the store;
# - a stranger speaking the RPC itself is denied every peer procedure
#   (AUTH_ERROR), also after a wrong proof of the secret, while NULL and
#   GETSPEC answer; a mount (volfile over TCP) still works.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard or mortar not built"
    exit 0
fi

TEST start_mortard
SOCK="$T/run/mortard.sock"
export MORTAR_SOCKET="$SOCK"
EXPECT "600" stat -c %a "$T/state/secret"
EXPECT_MATCH "^[0-9a-f]{64}$" cat "$T/state/secret"
EXPECT "600" stat -c %a "$SOCK"

mkdir -p "$T/bricks/v0" "$T/bricks/v1" "$T/bricks/steal"
track_brick v0
track_brick v1
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" force
TEST "$MORTAR" volume start v0
TEST "$MORTAR" volume create v1 "127.0.0.1:$T/bricks/v1" force
SUM=$(store_sum)

# Each would change the store if it ran (v1 is created, v0 started).
CMDS=(
    "volume create steal 127.0.0.1:$T/bricks/steal force"
    "volume start v1"
    "volume stop v0"
    "volume delete v1"
    "volume set v0 client.ping-timeout 17"
    "volume reset v0"
    "peer probe 127.0.0.2"
    "peer detach 127.0.0.2"
    "volume info"
)

as_nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# refused PATTERN CMD...: CMD exits 1 and says PATTERN (one line).
refused() {
    local pat="$1" out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" -eq 1 ] && grep -q -- "$pat" <<< "$out" && return 0
    echo "# rc=$rc: $out" >&2
    return 1
}

# nobody must be able to run the CLI, or every refusal below is a
# failed exec (a build dir under a 0700 directory).
TEST as_nobody test -x "$MORTAR"
# ($T is 0755, so nobody reaches the socket file itself.)
for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086
    TEST refused "run mortar as root" as_nobody "$MORTAR" --mode=script $c
done
# The socket opened up by mistake: mortard asks the kernel who calls.
chmod 0666 "$SOCK"
for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086
    TEST refused "unix socket serves root only" as_nobody "$MORTAR" \
        --mode=script $c
done
TEST ! as_nobody "$MDCTL" -s "$SOCK" --getspec v0
chmod 0600 "$SOCK"

# TCP, as root, without authentication.
for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086
    TEST refused "not authenticated" "$MORTAR" --mode=script \
        --remote-host="127.0.0.1:$MGMT_PORT" $c
done
EXPECT "$SUM" store_sum
EXPECT_MATCH "Status: Started" "$MORTAR" volume info v0
EXPECT_MATCH "Status: Created" "$MORTAR" volume info v1
EXPECT "No volume steal" sh -c "'$MORTAR' volume info steal > /dev/null 2>&1 || echo 'No volume steal'"

# A stranger speaking the RPC: the answer to each procedure.
cat > "$T/stranger.py" <<'PY'
import os, socket, struct, sys
PROG, VERS = 0x29A00010, 1
port = int(sys.argv[1])

def pad(b): return b + b"\0" * ((4 - len(b) % 4) % 4)
def wopaque(b): return struct.pack(">I", len(b)) + pad(b)
def ropaque(b, o):
    n = struct.unpack_from(">I", b, o)[0]; o += 4
    return b[o:o + n], o + n + (4 - n % 4) % 4

def recvn(s, n):
    d = b""
    while len(d) < n:
        x = s.recv(n - len(d))
        if not x: raise EOFError
        d += x
    return d

xid = 0
def call(s, proc, args=b""):
    global xid
    xid += 1
    rec = struct.pack(">10I", xid, 0, 2, PROG, VERS, proc, 0, 0, 0, 0) + args
    s.sendall(struct.pack(">I", 0x80000000 | len(rec)) + rec)
    body = b""
    while True:
        m = struct.unpack(">I", recvn(s, 4))[0]
        body += recvn(s, m & 0x7fffffff)
        if m & 0x80000000: break
    rxid, mtype, stat = struct.unpack_from(">3I", body, 0)
    assert rxid == xid and mtype == 1
    if stat == 1:
        rej, why = struct.unpack_from(">2I", body, 12)
        return "denied" if (rej, why) == (1, 5) else "rejected %d %d" % (rej, why)
    accept = struct.unpack_from(">I", body, 20)[0]
    return ("accepted", body[24:]) if accept == 0 else "accept %d" % accept

s = socket.create_connection(("127.0.0.1", port))
print("NULL", call(s, 0)[0])
r = call(s, 2, wopaque(b"v0"))
print("GETSPEC", r[1][:4] == b"\0\0\0\0" and "ok" or "failed")
r = call(s, 1, struct.pack(">I", 1) + wopaque(b"volume info") + struct.pack(">I", 0))
ret, err = struct.unpack_from(">2I", r[1], 0)
msg, _ = ropaque(r[1], 8)
print("CLI", ret, b"not authenticated" in msg and "refused" or msg)
# Every peer procedure (and one that does not exist), with arguments
# that would decode or not: the refusal comes first.
for proc in list(range(10, 19)) + [20, 99]:
    print("proc", proc, call(s, proc, b"\0" * 64))
# AUTH: a proof without a hello, then a hello and a guessed proof.
uuid = wopaque(b"33333333-3333-3333-3333-333333333333")
r = call(s, 19, struct.pack(">I", 2) + uuid + wopaque(b"") + wopaque(os.urandom(32)))
print("AUTH prove-first", struct.unpack_from(">2i", r[1], 0))
r = call(s, 19, struct.pack(">I", 1) + uuid + wopaque(os.urandom(32)) + wopaque(b""))
print("AUTH hello", struct.unpack_from(">i", r[1], 0)[0])
r = call(s, 19, struct.pack(">I", 2) + uuid + wopaque(b"") + wopaque(os.urandom(32)))
print("AUTH guess", struct.unpack_from(">2i", r[1], 0))
print("after guess", call(s, 10, b"\0" * 64))
PY
python3 "$T/stranger.py" "$MGMT_PORT" > "$T/stranger.out" 2>&1
cat "$T/stranger.out" | sed 's/^/# /' >&2
EXPECT "NULL accepted" sed -n 1p "$T/stranger.out"
EXPECT "GETSPEC ok" sed -n 2p "$T/stranger.out"
EXPECT "CLI 1 refused" sed -n 3p "$T/stranger.out"
for proc in 10 11 12 13 14 15 16 17 18 20 99; do
    EXPECT "proc $proc denied" grep -x "proc $proc denied" "$T/stranger.out"
done
EXPECT "AUTH prove-first (-1, 71)" grep "prove-first" "$T/stranger.out"   # EPROTO
EXPECT "AUTH hello 0" grep "AUTH hello" "$T/stranger.out"
EXPECT "AUTH guess (-1, 13)" grep "AUTH guess" "$T/stranger.out"   # EACCES
EXPECT "after guess denied" grep "after guess" "$T/stranger.out"
EXPECT_MATCH "failed: wrong proof of the pool secret" cat "$T/log/mortard.log"
EXPECT "$SUM" store_sum

# Clients still get their volfile over TCP: a mount works.
M0="$T/mnt/m0"
mkdir -p "$M0"
TEST mount_mortar "127.0.0.1:/v0" "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST sh -c "echo hello > '$M0/f'"
EXPECT "hello" cat "$T/bricks/v0/f"
TEST umount "$M0"

TEST "$MORTAR" --mode=script volume stop v0
TEST "$MORTAR" --mode=script volume delete v0
TEST "$MORTAR" --mode=script volume delete v1
