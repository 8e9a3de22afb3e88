#!/usr/bin/env bash
# A cut network, not a dead process: two of four distribute bricks sit on
# node 2 (netns, 10.213.77.2), the client and the other two on node 1.
# Node 2's link to the bridge goes down, so packets vanish (no RST, no
# FIN): the client learns it only from protocol/client's ping-timeout
# (3 s here).
#  - a read of node 2's file fails with a clear error (ENOTCONN/EIO)
#    within the ping timeout plus a few seconds, never hangs; node 1's
#    files read meanwhile, within that timeout too (a lookup whose
#    directory layout must be read again asks every brick and waits for
#    it: doc/distribute.md, "A brick that stops answering"); later ones
#    fail fast;
#  - a new name hashed to node 1 is created; one hashed to node 2 fails
#    and leaves nothing behind;
#  - the link back up: the client reconnects by itself, every file reads
#    back its own content, the name that failed can be created, and the
#    client has no request left pending (each one was answered once).
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 2
H1=10.213.77.1
H2=10.213.77.2
NFILES=120

# ns_fsd I ID ARGS...: a daemonized mortarfsd in node I's network
# namespace only (like node_mortard: the mount namespace stays shared, so
# the client's FUSE mount is seen here).
ns_fsd() {
    local i="$1" id="$2"
    shift 2
    _T_PIDFILES+=("$T/run/$id.pid")
    nsenter --net=/run/netns/"${NS[$i]}" "$MORTARFSD" \
        --pid-file "$T/run/$id.pid" --log-file "$T/log/$id.log" \
        --dump-dir "$T/dump" "$@"
}
# node_brick I NAME PORT: brick NAME of node I, serving node 1's address
node_brick() {
    local i="$1" name="$2" port="$3"
    mkdir -p "$T/bricks/$name"
    brick_volfile "$name" "$T/bricks/$name" "$port" |
        sed -e "s/bind-address 127.0.0.1/bind-address 10.213.77.$i/" \
            -e "s/allow 127.0.0.1/allow $H1/" > "$T/vol/$name.vol"
    ns_fsd "$i" "brick-$name" --volfile "$T/vol/$name.vol"
}
# node2_link down|up: node 2's port on the bridge
node2_link() { ip -n "$NS_BR" link set "mt$$b2" "$1"; }
# brick_of NAME: the brick holding data file d/NAME (or "none")
brick_of() {
    local b
    for b in b0 b1 b2 b3; do
        [ -f "$T/bricks/$b/d/$1" ] && [ ! -k "$T/bricks/$b/d/$1" ] &&
            { echo "$b"; return; }
    done
    echo none
}
# name_on INDEX: a new name that hashes to subvolume INDEX of 4
name_on() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 4 "$1" new
}
# read_all: "ok" if every file of d reads back its own name
read_all() {
    local f
    for f in $(seq 1 $NFILES); do
        [ "$(cat "$M0/d/n$f" 2>&1)" = "n$f" ] || { echo "bad n$f"; return; }
    done
    echo ok
}
# elapsed_fail CMD...: "failed in Ns" (whole seconds) if CMD fails
elapsed_fail() {
    local a b
    a=$(date +%s)
    "$@" > /dev/null 2>&1 && { echo "succeeded"; return; }
    b=$(date +%s)
    echo "failed in $((b - a))s"
}
# pending_calls: requests the client's protocol/clients still wait for
pending_calls() {
    statedump_of "$(cat "$T/run/client.pid")" |
        awk -F= '/^pending=/ { n += $2 } END { print n + 0 }'
}

for k in 0 1 2 3; do alloc_port "P$k"; done
TEST node_brick 1 b0 "$P0"
TEST node_brick 1 b1 "$P1"
TEST node_brick 2 b2 "$P2"
TEST node_brick 2 b3 "$P3"
{
    for k in 0 1 2 3; do
        host=$H1
        [ "$k" -ge 2 ] && host=$H2
        port_var="P$k"
        printf 'volume c%d\n type protocol/client\n option remote-host %s\n option remote-port %s\n option remote-subvolume b%d\n option ping-timeout 3\n option transport.socket.connect-timeout 2\nend-volume\n' \
            "$k" "$host" "${!port_var}" "$k"
    done
    printf 'volume dist\n type cluster/distribute\n subvolumes c0 c1 c2 c3\nend-volume\n'
} > "$T/vol/client.vol"
mkdir -p "$M0"
_T_MOUNTS+=("$M0")
TEST ns_fsd 1 client --volfile "$T/vol/client.vol" "$M0"
TEST wait_for_mount "$M0"
TEST is_mounted "$M0"
TEST mkdir "$M0/d"
TEST sh -c "for i in \$(seq 1 $NFILES); do echo n\$i > '$M0/d/n'\$i; done"
EXPECT "ok" read_all
ON1=""; ON2=""
for f in $(seq 1 $NFILES); do
    case "$(brick_of "n$f")" in
    b0 | b1) [ -z "$ON1" ] && ON1="n$f" ;;
    b2 | b3) [ -z "$ON2" ] && ON2="n$f" ;;
    esac
done
TEST [ -n "$ON1" ] && [ -n "$ON2" ]
NEW1=$(name_on 0)
NEW2=$(name_on 2)
TEST [ -n "$NEW1" ] && [ -n "$NEW2" ]

# The cut. A read of node 2's file waits for the ping timeout: meanwhile
# node 1's files read at once.
TEST node2_link down
SLOW="$T/log/bg.${#_T_BG[@]}.log"
bg_run elapsed_fail cat "$M0/d/$ON2"
sleep 0.5
EXPECT "$ON1" timeout 10 cat "$M0/d/$ON1"
EXPECT_WITHIN 20 "Y" sh -c "[ -s '$SLOW' ] && echo Y"
EXPECT_MATCH "^failed in ([2-9]|1[0-2])s$" cat "$SLOW"
# Later ones fail at once, with a clear error.
EXPECT_MATCH "^failed in [0-2]s$" elapsed_fail cat "$M0/d/$ON2"
EXPECT_MATCH "Transport endpoint is not connected|Input/output error" \
    errno_of timeout 20 cat "$M0/d/$ON2"
EXPECT "$ON1" timeout 5 cat "$M0/d/$ON1"
# New names: on node 1 made, on node 2 refused, nothing left behind.
TEST timeout 10 sh -c "echo fresh > '$M0/d/$NEW1'"
EXPECT "fresh" cat "$T/bricks/$(brick_of "$NEW1")/d/$NEW1"
TEST ! timeout 20 sh -c "echo lost > '$M0/d/$NEW2'"
EXPECT "none" brick_of "$NEW2"

# The link back: the client reconnects by itself.
TEST node2_link up
EXPECT_WITHIN 40 "$ON2" cat "$M0/d/$ON2"
# Node 2's two bricks reconnect each on its own schedule: ON2's being
# back says nothing of the other's.
EXPECT_WITHIN 40 "ok" read_all
TEST sh -c "echo later > '$M0/d/$NEW2'"
EXPECT "later" cat "$M0/d/$NEW2"
EXPECT_MATCH "^b[23]$" brick_of "$NEW2"
EXPECT "$((NFILES + 2))" sh -c "ls '$M0/d' | wc -l"
EXPECT_WITHIN 10 "0" pending_calls
