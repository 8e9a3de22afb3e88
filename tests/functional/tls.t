#!/usr/bin/env bash
# TLS between clients and bricks (client.ssl / server.ssl, issue 23 item
# 2), with certificates made by extras/mortar-certs in $T: a brick with
# server.ssl and auth.ssl-allow, a client with client.ssl mounts it, data
# round-trips and a 100 MB file's checksum matches on the brick and read
# back; the bytes on the wire are not the file's (a relay in between
# records them). Refused, with the reason in both logs and no hang: a
# client certificate from another CA, a common name auth.ssl-allow does
# not list, no client certificate at all, a clear-text client of a TLS
# brick and a TLS client of a clear brick, a missing certificate file.
# The brick's certificate replaced by a new one of the same CA is used by
# the next connection without a restart; a broken replacement keeps the
# old one; SIGHUP reloads files whose times did not change. Last, the
# same through mortard: volume set client.ssl, server.ssl and the ssl.*
# paths, and a mount with the fetched volfile; with client.ssl.check-host
# a brick certificate that does not name the brick's address is refused
# and one that does (mortar-certs' subjectAltName) is taken.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

CERTS_TOOL="$(cd "$(dirname "$0")/../.." && pwd)/extras/mortar-certs"
C="$T/certs"
TEST sh "$CERTS_TOOL" --dir "$C" node1 client1 client2 node1b
TEST sh "$CERTS_TOOL" --dir "$T/other" client1
# The brick reads copies, so that the reload below can replace them.
mkdir -p "$T/ssl"
TEST sh "$CERTS_TOOL" --dir "$C" --install node1 --prefix "$T/ssl/brick"

# ssl_lines CERT KEY CA: the option lines of a TLS endpoint.
ssl_lines() {
    printf '    option ssl on\n    option ssl.own-cert %s\n' "$1"
    printf '    option ssl.private-key %s\n    option ssl.ca-list %s\n' \
        "$2" "$3"
}

# tls_brick NAME DIR PORT [option lines]: a brick whose protocol/server
# gets the lines.
tls_brick() {
    local name="$1" dir="$2" port="$3" lines="${4:-}"
    mkdir -p "$dir"
    brick_volfile "$name" "$dir" "$port" |
        awk -v l="$lines" '{ print } /type protocol\/server/ && l != "" { print l }' \
            > "$T/vol/$name.vol" || return 1
    start_fsd "brick-$name" --volfile "$T/vol/$name.vol"
}

# tls_mount PORT SUB MNT [option lines]: mounts with a client volfile
# whose protocol/client gets the lines; a refused mount fails.
tls_mount() {
    local port="$1" sub="$2" mnt="$3" lines="${4:-}" id
    id="client-$(echo "$mnt" | tr '/' '_')"
    mkdir -p "$mnt"
    client_volfile "$port" "$sub" |
        awk -v l="$lines" '{ print } /type protocol\/client/ && l != "" { print l }' \
            > "$T/vol/$id.vol" || return 1
    _T_MOUNTS+=("$mnt")
    start_fsd "$id" --volfile "$T/vol/$id.vol" "$mnt" 2> "$T/log/$id.err"
}

client_log() {
    cat "$T/log/client-$(echo "$1" | tr '/' '_').log" \
        "$T/log/client-$(echo "$1" | tr '/' '_').err" 2> /dev/null
}

# allow-insecure: the relay below connects from an ephemeral port.
BRICK_SSL="$(ssl_lines "$T/ssl/brick.pem" "$T/ssl/brick.key" "$T/ssl/brick.ca")
    option auth.ssl-allow client1, node*
    option allow-insecure on
"
CLI1="$(ssl_lines "$C/client1.pem" "$C/client1.key" "$C/ca.pem")"
alloc_port P0
TEST tls_brick b0 "$B0" "$P0" "$BRICK_SSL"
EXPECT_MATCH "listening on 127.0.0.1:$P0 \(TLS\)" cat "$T/log/brick-b0.log"

# A TLS client that auth.ssl-allow lists: a working mount.
TEST tls_mount "$P0" b0 "$M0" "$CLI1"
TEST wait_for_mount "$M0"
TEST sh -c "echo 'hello over TLS' > '$M0/small'"
EXPECT "hello over TLS" cat "$B0/small"
EXPECT "hello over TLS" cat "$M0/small"
TEST dd if=/dev/urandom of="$T/big" bs=1M count=100 status=none
TEST cp "$T/big" "$M0/big"
WANT="$(md5sum < "$T/big")"
EXPECT "$WANT" sh -c "md5sum < '$B0/big'"
TEST drop_caches
EXPECT "$WANT" sh -c "md5sum < '$M0/big'"
EXPECT_MATCH "accepted client" cat "$T/log/brick-b0.log"

# A client certificate of another CA: refused by the brick, both logs
# say why, the mount fails within the connect timeout.
TEST ! tls_mount "$P0" b0 "$M1" "$(ssl_lines "$T/other/client1.pem" "$T/other/client1.key" "$C/ca.pem")"
EXPECT_MATCH "TLS handshake failed: certificate verify failed" cat "$T/log/brick-b0.log"
EXPECT_MATCH "unknown ca" client_log "$M1"

# A common name auth.ssl-allow does not list.
TEST ! tls_mount "$P0" b0 "$M1" "$(ssl_lines "$C/client2.pem" "$C/client2.key" "$C/ca.pem")"
EXPECT_MATCH "certificate CN 'client2' not in auth.ssl-allow" cat "$T/log/brick-b0.log"
EXPECT_MATCH "certificate CN 'client2' not in auth.ssl-allow" client_log "$M1"

# No client certificate at all (openssl s_client): refused.
if command -v openssl > /dev/null; then
    TEST sh -c "timeout 20 openssl s_client -connect 127.0.0.1:$P0 -CAfile '$C/ca.pem' < /dev/null > /dev/null 2>&1 || true"
    EXPECT_WITHIN 10 "1" sh -c "grep -c 'peer did not return a certificate' '$T/log/brick-b0.log'"
fi

# A clear-text client of the TLS brick: refused, no fallback.
TEST ! tls_mount "$P0" b0 "$M1"
EXPECT_MATCH "does not speak TLS" cat "$T/log/brick-b0.log"
EXPECT_MATCH "server.ssl on while this client has client.ssl off" client_log "$M1"

# A missing certificate file: the mount says which and why.
TEST ! tls_mount "$P0" b0 "$M1" "$(ssl_lines "$T/nope.pem" "$C/client1.key" "$C/ca.pem")"
EXPECT_MATCH "ssl.own-cert $T/nope.pem: No such file or directory" client_log "$M1"

# A TLS client of a clear brick: refused on both ends.
alloc_port P1
TEST tls_brick b1 "$T/bricks/b1" "$P1"
TEST ! tls_mount "$P1" b1 "$M1" "$CLI1"
EXPECT_MATCH "speaks TLS and this side does not" cat "$T/log/brick-b1.log"
EXPECT_MATCH "TLS handshake failed" client_log "$M1"

# What goes over the wire is not the file: a relay between a client and
# the brick records both directions.
alloc_port PR
RELAY_LOG="$T/relay.bytes"
python3 - "$PR" "$P0" "$RELAY_LOG" > /dev/null 2>&1 <<'PY' &
import socket, sys, threading
lp, bp, out = int(sys.argv[1]), int(sys.argv[2]), open(sys.argv[3], "ab")
lock = threading.Lock()
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            with lock:
                out.write(d)
                out.flush()
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", lp))
srv.listen(8)
while True:
    c, _ = srv.accept()
    b = socket.create_connection(("127.0.0.1", bp))
    threading.Thread(target=pump, args=(c, b), daemon=True).start()
    threading.Thread(target=pump, args=(b, c), daemon=True).start()
PY
RELAY_PID=$!
_T_BG+=("$RELAY_PID")
sleep 0.5
SECRET="plaintext-marker-$RANDOM$RANDOM"
TEST tls_mount "$PR" b0 "$M1" "$CLI1"
TEST wait_for_mount "$M1"
TEST sh -c "echo '$SECRET' > '$M1/secret'"
EXPECT "$SECRET" cat "$B0/secret"
TEST drop_caches
EXPECT "$SECRET" cat "$M1/secret"
EXPECT_MATCH "^[1-9]" stat -c %s "$RELAY_LOG"
EXPECT "0" sh -c "grep -ac '$SECRET' '$RELAY_LOG'"
EXPECT "0" sh -c "grep -ac 'hello over TLS' '$RELAY_LOG'"
EXPECT_WITHIN 20 "Y" force_umount "$M1"
kill "$RELAY_PID" 2> /dev/null

# Reload: the brick's files replaced by node1b's (same CA); the next
# connection gets it without a restart.
TEST cp "$C/node1b.pem" "$T/ssl/brick.pem"
TEST cp "$C/node1b.key" "$T/ssl/brick.key"
TEST tls_mount "$P0" b0 "$M1" "$CLI1"
TEST wait_for_mount "$M1"
EXPECT "hello over TLS" cat "$M1/small"
EXPECT_MATCH "TLS certificates reloaded" cat "$T/log/brick-b0.log"
peer_cn() {
    timeout 20 openssl s_client -connect "127.0.0.1:$P0" \
        -cert "$C/client1.pem" -key "$C/client1.key" -CAfile "$C/ca.pem" \
        < /dev/null 2> /dev/null | sed -n 's/^subject=.*CN *= *\([^,]*\).*/\1/p' | head -n 1
}
EXPECT "node1b" peer_cn
EXPECT_WITHIN 20 "Y" force_umount "$M1"
# A broken replacement: logged once, the old certificate stays in use.
TEST sh -c "echo garbage > '$T/ssl/brick.pem'"
TEST tls_mount "$P0" b0 "$M1" "$CLI1"
TEST wait_for_mount "$M1"
EXPECT "hello over TLS" cat "$M1/small"
EXPECT_MATCH "not reloaded, keeping the old ones" cat "$T/log/brick-b0.log"
EXPECT "node1b" peer_cn
EXPECT_WITHIN 20 "Y" force_umount "$M1"
EXPECT "Y" is_alive "$(fsd_pid brick-b0)"
# SIGHUP reloads even files whose times did not change (copied back with
# their old times): without it the brick keeps node1b.
TEST touch -r "$T/ssl/brick.pem" "$T/pem.stamp"
TEST touch -r "$T/ssl/brick.key" "$T/key.stamp"
TEST cp "$C/node1.pem" "$T/ssl/brick.pem"
TEST cp "$C/node1.key" "$T/ssl/brick.key"
TEST touch -r "$T/pem.stamp" "$T/ssl/brick.pem"
TEST touch -r "$T/key.stamp" "$T/ssl/brick.key"
EXPECT "node1b" peer_cn
TEST kill -HUP "$(fsd_pid brick-b0)"
EXPECT_WITHIN 10 "node1" peer_cn

# Through mortard: the GlusterFS keys set with volume set reach both
# volfiles; the mount fetches its volfile and speaks TLS.
if [ -x "$MORTARD" ] && [ -x "$MORTAR" ]; then
    TEST sh "$CERTS_TOOL" --dir "$C" --install node1 --prefix "$T/ssl/host"
    TEST start_mortard
    export MORTAR_SOCKET="$T/run/mortard.sock"
    mkdir -p "$T/bricks/v1"
    TEST "$MORTAR" volume create v1 "127.0.0.1:$T/bricks/v1" force
    track_brick v1
    TEST "$MORTAR" volume set v1 server.ssl on
    TEST "$MORTAR" volume set v1 client.ssl on
    TEST "$MORTAR" volume set v1 ssl.own-cert "$T/ssl/host.pem"
    TEST "$MORTAR" volume set v1 ssl.private-key "$T/ssl/host.key"
    TEST "$MORTAR" volume set v1 ssl.ca-list "$T/ssl/host.ca"
    TEST "$MORTAR" volume set v1 auth.ssl-allow node1
    TEST ! "$MORTAR" volume set v1 auth.ssl-allow "$(printf 'a\nb')"
    TEST "$MORTAR" volume start v1
    EXPECT_MATCH "option ssl.ca-list $T/ssl/host.ca" "$MDCTL" -s "$T/run/mortard.sock" --getspec v1
    M2="$T/mnt/m2"
    TEST mount_volume v1 "$M2"
    TEST sh -c "echo via-mortard > '$M2/f'"
    EXPECT "via-mortard" cat "$T/bricks/v1/f"
    EXPECT_MATCH "listening on .* \(TLS\)" cat "$T/log/bricks/v1-brick0.log"
    EXPECT_WITHIN 20 "Y" force_umount "$M2"
    # client.ssl.check-host: the brick is dialled as 127.0.0.1 and its
    # certificate names node1 only: refused, with the reason, on the
    # client. A certificate for 127.0.0.1 (subjectAltName IP) passes.
    TEST "$MORTAR" volume set v1 client.ssl.check-host on
    EXPECT_MATCH "option ssl.check-host on" "$MDCTL" -s "$T/run/mortard.sock" --getspec v1
    TEST ! mount_volume v1 "$M2"
    EXPECT_MATCH "IP address mismatch" cat "$T/log/client-$(echo "$M2" | tr '/' '_').log"
    EXPECT "via-mortard" cat "$T/bricks/v1/f"
    TEST sh "$CERTS_TOOL" --dir "$C" 127.0.0.1
    TEST "$MORTAR" volume set v1 auth.ssl-allow "node1,127.0.0.1"
    TEST sh "$CERTS_TOOL" --dir "$C" --install 127.0.0.1 --prefix "$T/ssl/host"
    TEST mount_volume v1 "$M2"
    EXPECT "via-mortard" cat "$M2/f"
    EXPECT_WITHIN 20 "Y" force_umount "$M2"
fi

EXPECT_WITHIN 20 "Y" force_umount "$M0"
