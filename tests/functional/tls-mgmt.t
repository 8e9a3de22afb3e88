#!/usr/bin/env bash
# Management over TLS (secure-access, doc/security.md "Management"; issue
# 23 items 1 and 2), certificates made by extras/mortar-certs in $T.
# One mortard with <state-dir>/secure-access and admin-allow 'admin1':
# a mount fetches and follows its volfile over TLS and does I/O, a clear
# mount is refused with the reason in both logs; `mortar --remote-host`
# with admin1's certificate creates, starts, stops and deletes a volume;
# with a certificate the list does not name (client1), with admin1's name
# signed by another CA, and in clear text, every command is refused with
# one line and the store does not change; a missing certificate file is
# named by the CLI and by a mortard that then does not start; mortard's
# certificate replaced on disk is used without a restart (and, with
# unchanged file times, after SIGHUP). Then five
# mortards in network namespaces: nodes 1-3 with secure-access probe each
# other and create a volume across them (each checks the others' proof of
# the pool secret inside TLS); node 4 shares the secret but has no
# secure-access: probing it from node 1 fails naming TLS, and it cannot
# probe in either; node 5 has secure-access and a certificate of the CA
# but another secret: it can neither be probed in nor probe in.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard or mortar not built"
    exit 0
fi

CERTS_TOOL="$(cd "$(dirname "$0")/../.." && pwd)/extras/mortar-certs"
C="$T/certs"
TEST sh "$CERTS_TOOL" --dir "$C" node1 node2 node3 node4 node5 admin1 \
    client1 node1b
TEST sh "$CERTS_TOOL" --dir "$T/other" admin1

# ---- one node on 127.0.0.1 ----------------------------------------------

mkdir -p "$T/state" "$T/bricks/v0"
touch "$T/state/secure-access"
echo "admin1, someone-else" > "$T/state/admin-allow"
# mortard reads copies, so that the reload below can replace them.
mkdir -p "$T/ssl"
TEST sh "$CERTS_TOOL" --dir "$C" --install node1 --prefix "$T/ssl/md"
SSL_NODE1=(--ssl-cert "$T/ssl/md.pem" --ssl-key "$T/ssl/md.key"
    --ssl-ca "$T/ssl/md.ca")

# A missing certificate file: mortard names it and does not start.
EXPECT_MATCH "secure-access: ssl.own-cert $T/nope.pem: No such file or directory" \
    sh -c "$(printf '%q ' "$MORTARD") --state-dir '$T/state' --run-dir '$T/run0' --log-dir '$T/log0' --mgmt-port 1 --ssl-cert '$T/nope.pem' -N 2>&1; echo rc=\$?"
EXPECT "N" sh -c "[ -S '$T/run0/mortard.sock' ] && echo Y || echo N"

TEST start_mortard "${SSL_NODE1[@]}"
export MORTAR_SOCKET="$T/run/mortard.sock"
EXPECT_MATCH "secure-access on" cat "$T/log/mortard.log"
track_brick v0
TEST kill -USR1 "$(mortard_pid)"
EXPECT_WITHIN 10 "secure-access=on" sh -c "grep -h '^secure-access=' '$T'/run/dumps/mortard.* 2> /dev/null | head -n 1"

# remote_cli CERT-DIR NAME ARGS...: mortar over TLS with NAME's
# certificate from CERT-DIR (the CA list is always this pool's).
remote_cli() {
    local dir="$1" name="$2"
    shift 2
    "$MORTAR" --mode=script --remote-host="127.0.0.1:$MGMT_PORT" --tls \
        --ssl-cert="$dir/$name.pem" --ssl-key="$dir/$name.key" \
        --ssl-ca="$C/ca.pem" "$@"
}

# remote_rc CERT-DIR NAME ARGS...: remote_cli's messages on one line,
# then rc=STATUS.
remote_rc() {
    local out rc
    out="$(remote_cli "$@" 2>&1)"
    rc=$?
    echo "$(echo "$out" | tr '\n' ' ')rc=$rc"
}

# (b) the admin certificate: create, start, info.
TEST remote_cli "$C" admin1 volume create v0 "127.0.0.1:$T/bricks/v0" force
TEST remote_cli "$C" admin1 volume start v0
EXPECT "Started" sh -c "'$MORTAR' volume info v0 | sed -n 's/^Status: //p'"
EXPECT_MATCH "Volume Name: v0" remote_cli "$C" admin1 volume info v0

# (a) a mount fetches its volfile over TLS (client1: any certificate of
# the CA may fetch volfiles) and does I/O.
MM_TLS="volfile-server-port=$MGMT_PORT,mgmt-tls,mgmt-ssl-cert=$C/client1.pem,mgmt-ssl-key=$C/client1.key,mgmt-ssl-ca=$C/ca.pem"
TEST mount_mortar 127.0.0.1:/v0 "$M0" "$MM_TLS"
TEST wait_for_mount "$M0"
TEST sh -c "echo 'volfile over TLS' > '$M0/f'"
EXPECT "volfile over TLS" cat "$T/bricks/v0/f"
EXPECT "volfile over TLS" cat "$M0/f"
# The watch (over TLS too) brings a live option change to the mount.
TEST "$MORTAR" volume set v0 client.ping-timeout 17
EXPECT_WITHIN 20 "1" sh -c "grep -c \"volume 'v0' changed\" '$(mm_log "$M0")'"

# A clear mount of the secure mortard: refused, both logs say why.
mkdir -p "$M1"
EXPECT "1" sh -c "MORTARFSD='$MORTARFSD' sh '$MOUNT_MORTAR' 127.0.0.1:/v0 '$M1' -o volfile-server-port=$MGMT_PORT,log-file=$T/log/m1.log 2> '$T/m1.err'; echo \$?"
EXPECT_MATCH "if it has secure-access on, connect with TLS" cat "$T/m1.err"
EXPECT_MATCH "TLS handshake failed: .*does not speak TLS" cat "$T/log/mortard.log"

# (c) refused, and nothing changes: a certificate the admin list does not
# name, admin1's name signed by another CA, clear text.
SUM=$(store_sum)
CMDS=(
    "volume create steal 127.0.0.1:$T/bricks/steal force"
    "volume stop v0"
    "volume set v0 client.ping-timeout 23"
    "volume delete v0"
)
for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086
    EXPECT "not authenticated: certificate CN 'client1' is not in this mortard's admin list ($T/state/admin-allow); see doc/security.md rc=1" \
        remote_rc "$C" client1 $c
    # shellcheck disable=SC2086
    EXPECT_MATCH "TLS: tlsv1 alert unknown ca.* rc=1$" \
        remote_rc "$T/other" admin1 $c
    # shellcheck disable=SC2086
    EXPECT_MATCH "the server closed the connection \(if it has secure-access on, connect with TLS\)" \
        sh -c "'$MORTAR' --mode=script --remote-host=127.0.0.1:$MGMT_PORT $c 2>&1"
done
EXPECT_MATCH "refused procedure 1 from 127.0.0.1:[0-9]+: not authenticated: certificate CN 'client1'" \
    cat "$T/log/mortard.log"
# A peer procedure (17, REBAL_TASK QUERY) over TLS: client1 alone is a
# stranger (denied); client1 with the pool secret is a peer, admin1 an
# admin (both served).
RPC="$(cd "$(dirname "$0")/../lib" && pwd)/mgmt_rpc.py"
tls_rpc() {
    MGMT_TLS="$C/$1.pem:$C/$1.key:$C/ca.pem" python3 "$RPC" 127.0.0.1 \
        "$MGMT_PORT" 17 0 nosuchvol 0
}
EXPECT "denied" tls_rpc client1
EXPECT_MATCH "refused procedure 17 from 127.0.0.1:[0-9]+: not authenticated: certificate CN 'client1' is not an admin and the connection did not prove the pool secret" \
    cat "$T/log/mortard.log"
EXPECT_MATCH "^ret=" env MGMT_SECRET="$T/state/secret" \
    MGMT_TLS="$C/client1.pem:$C/client1.key:$C/ca.pem" \
    python3 "$RPC" 127.0.0.1 "$MGMT_PORT" 17 0 nosuchvol 0
EXPECT_MATCH "^ret=" tls_rpc admin1
EXPECT_MATCH "certificate verify failed" cat "$T/log/mortard.log"
EXPECT "$SUM" store_sum
EXPECT "Started" sh -c "'$MORTAR' volume info v0 | sed -n 's/^Status: //p'"
EXPECT_MATCH "client.ping-timeout: 17" "$MORTAR" volume info v0
# --ssl-check-host: mortard's certificate names node1, not 127.0.0.1:
# refused by the CLI with the reason; without it the CA's word is enough.
EXPECT_MATCH "IP address mismatch.*rc=1" remote_rc "$C" admin1 --ssl-check-host volume info v0
EXPECT_MATCH "Volume Name: v0" remote_cli "$C" admin1 volume info v0
# A missing client certificate: the CLI names it.
EXPECT "mortar: TLS: ssl.own-cert $T/nope.pem: No such file or directory" \
    sh -c "'$MORTAR' --remote-host=127.0.0.1:$MGMT_PORT --ssl-cert='$T/nope.pem' --tls volume info 2>&1"
# The admin list is read again when it changes: client1 added, then an
# admin; mortard was not restarted.
echo "admin1,client1" > "$T/state/admin-allow.new"
mv "$T/state/admin-allow.new" "$T/state/admin-allow"
EXPECT_MATCH "Volume Name: v0" remote_cli "$C" client1 volume info v0

# (b) stop and delete through the admin certificate.
EXPECT_WITHIN 10 "Y" force_umount "$M0"
TEST remote_cli "$C" admin1 volume stop v0
EXPECT "Stopped" sh -c "'$MORTAR' volume info v0 | sed -n 's/^Status: //p'"
TEST remote_cli "$C" admin1 volume delete v0
TEST ! "$MORTAR" volume info v0
EXPECT "1" sh -c "pgrep -c -F '$T/run/mortard.pid' mortard"

# Reload, as the bricks do: node1b's certificate and key put in place
# (write, then rename) are shown by the next connection, no restart; the
# admin certificate still works against it (same CA).
server_cn() {
    timeout 10 openssl s_client -connect "127.0.0.1:$MGMT_PORT" \
        -cert "$C/client1.pem" -key "$C/client1.key" -CAfile "$C/ca.pem" \
        < /dev/null 2> /dev/null | sed -n 's/^subject=.*CN *= *//p' |
        head -n 1
}
EXPECT "node1" server_cn
cp "$C/node1b.pem" "$T/ssl/md.pem.new"
cp "$C/node1b.key" "$T/ssl/md.key.new"
mv "$T/ssl/md.pem.new" "$T/ssl/md.pem"
mv "$T/ssl/md.key.new" "$T/ssl/md.key"
EXPECT_WITHIN 10 "node1b" server_cn
EXPECT_MATCH "TLS certificates reloaded from $T/ssl/md.pem" cat "$T/log/mortard.log"
TEST remote_cli "$C" admin1 volume list
# node1's files back with node1b's times: unseen until SIGHUP.
cp "$C/node1.pem" "$T/ssl/md.pem.new"
cp "$C/node1.key" "$T/ssl/md.key.new"
touch -r "$T/ssl/md.pem" "$T/ssl/md.pem.new"
touch -r "$T/ssl/md.key" "$T/ssl/md.key.new"
mv "$T/ssl/md.pem.new" "$T/ssl/md.pem"
mv "$T/ssl/md.key.new" "$T/ssl/md.key"
EXPECT "node1b" server_cn
TEST kill -HUP "$(mortard_pid)"
EXPECT_WITHIN 10 "node1" server_cn

# ---- peers in network namespaces ----------------------------------------

netns_cluster_or_skip 5
H=(x 10.213.77.1 10.213.77.2 10.213.77.3 10.213.77.4 10.213.77.5)

# ssl_of I: node I's certificate options.
ssl_of() {
    echo "--ssl-cert $C/node$1.pem --ssl-key $C/node$1.key --ssl-ca $C/ca.pem"
}

for i in 1 2 3 5; do
    mkdir -p "$T/n$i/state"
    touch "$T/n$i/state/secure-access"
done
# Node 5: a certificate of the pool's CA but its own secret.
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' \
    > "$T/n5/state/secret")
for i in 1 2 3 4 5; do
    # shellcheck disable=SC2046
    TEST node_mortard "$i" $(ssl_of "$i")
done
EXPECT_MATCH "secure-access on" cat "$T/n1/log/mortard.log"
TEST ! grep -q "secure-access on" "$T/n4/log/mortard.log"

# (d) nodes 1-3 probe each other over TLS and create a volume across them.
EXPECT "peer probe: success" ncli 1 peer probe "${H[2]}"
EXPECT "peer probe: success" ncli 2 peer probe "${H[3]}"
for i in 1 2 3; do
    EXPECT_WITHIN 20 "2" connected_peers "$i"
done
mkdir -p "$T/n1/b" "$T/n2/b" "$T/n3/b"
TEST ncli 1 volume create vd "${H[1]}:$T/n1/b" "${H[2]}:$T/n2/b" \
    "${H[3]}:$T/n3/b" force
for i in 1 2 3; do
    EXPECT_WITHIN 10 "vd" sh -c "'$MDCTL' -s '$T/n$i/run/mortard.sock' volume list"
done
# Clear text cannot reach them: node 4 (same secret, no TLS) probing in.
EXPECT_MATCH "^peer probe: failed: .*the peer closed the connection \(if it has secure-access on, this node needs it too\)" \
    sh -c "'$MDCTL' -s '$T/n4/run/mortard.sock' peer probe ${H[1]} 2>&1"
EXPECT_MATCH "does not speak TLS" cat "$T/n1/log/mortard.log"

# Bad input: a secure node probing a clear one fails naming TLS; both
# daemons keep running and nothing changed.
SUM1=$(node_store_sum 1)
SUM4=$(node_store_sum 4)
EXPECT_MATCH "^peer probe: failed: .*TLS handshake failed: the server closed the connection \(it does not speak TLS" \
    sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer probe ${H[4]} 2>&1"
EXPECT_MATCH "the peer speaks TLS and this side does not \(turn client.ssl/server.ssl, or mortard's secure-access, on here" \
    cat "$T/n4/log/mortard.log"
EXPECT "$SUM1" node_store_sum 1
EXPECT "$SUM4" node_store_sum 4
EXPECT "Number of Peers: 0" ncli 4 peer status
EXPECT "Y" proc_alive "$(mortard_of 1)"
EXPECT "Y" proc_alive "$(mortard_of 4)"

# (e) node 5: a valid certificate, not the pool's secret.
SUM5=$(node_store_sum 5)
EXPECT_MATCH "^peer probe: failed: ${H[5]} does not share this pool's secret" \
    sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer probe ${H[5]} 2>&1"
EXPECT_MATCH "^peer probe: failed: ${H[2]} does not share this pool's secret" \
    sh -c "'$MDCTL' -s '$T/n5/run/mortard.sock' peer probe ${H[2]} 2>&1"
EXPECT "Number of Peers: 2" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer status | head -n 1"
EXPECT "Number of Peers: 0" ncli 5 peer status
EXPECT "$SUM5" node_store_sum 5
# The volume is still served by all three, over TLS.
for i in 1 2 3; do
    EXPECT_MATCH "Status: Created" sh -c "'$MDCTL' -s '$T/n$i/run/mortard.sock' volume info vd"
done
