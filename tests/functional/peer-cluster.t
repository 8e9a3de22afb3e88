#!/usr/bin/env bash
# Three mortards in network namespaces (10.213.77.1-3, only inside them):
# probe by address, the same peer status everywhere, a volume whose brick
# lives on a remote peer created/started from node 1, mounted from node
# 1's namespace; a `volume set` with one node down (and seen as such)
# runs without it and leaves its store alone, a brick on it is refused;
# after it returns it has caught up, further sets reach every node and
# every store holds the same definition; stop/delete from another node;
# detach.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
# Errors go to stderr; match them too.
ncli_err() {
    ncli "$@" 2>&1
}

TEST node_mortard 1
TEST node_mortard 2
TEST node_mortard 3
# Node 1 reaches node 3's mgmt port through the bridge.
TEST nsenter --net=/run/netns/"${NS[1]}" bash -c "exec 3<>/dev/tcp/$H3/24100"

# Probe by address; every node ends up with the two others.
EXPECT "peer probe: success" ncli 1 peer probe "$H2"
EXPECT "peer probe: success" ncli 1 peer probe "$H3:24100"
EXPECT_MATCH "already in peer list" ncli 1 peer probe "$H2"
EXPECT_MATCH "Probe on localhost" ncli 1 peer probe "$H1"
TEST ! ncli 1 peer probe 10.213.77.9
for i in 1 2 3; do
    EXPECT "Number of Peers: 2" bash -c "ncli() { '$MDCTL' -s '$T/n'\$1'/run/mortard.sock' \"\${@:2}\"; }; ncli $i peer status | head -n 1"
    EXPECT_WITHIN 15 "2" connected_peers "$i"
done
EXPECT_MATCH "Hostname: $H1" ncli 2 peer status
EXPECT_MATCH "Hostname: $H3" ncli 2 peer status
EXPECT_MATCH "Hostname: $H1" ncli 3 peer status
EXPECT_MATCH "Hostname: $H2" ncli 3 peer status
U1=$(ncli 1 pool list | awk '$2 == "localhost" { print $1 }')
EXPECT_MATCH "$U1"$'\t'"$H1" ncli 3 pool list
TEST [ -s "$T/n2/state/peers" ]

# Create on node 1 a volume whose brick lives on node 2.
B2="$T/n2/brick"
_T_PIDFILES+=("$T/n2/run/v2-brick0.pid")
EXPECT_MATCH "not in 'Peer in Cluster' state" ncli_err 1 volume create vx 10.213.77.9:/x force
mkdir -p "$T/n2/notadir-parent" && touch "$T/n2/notadir"
EXPECT_MATCH "Staging failed on $H2: .*not a directory" ncli_err 1 volume create vx "$H2:$T/n2/notadir" force
TEST ncli 1 volume create v2 "$H2:$B2" force
TEST getfattr -n trusted.mortar.volume-id "$B2"
for i in 1 2 3; do
    EXPECT "v2" ncli "$i" volume list
done
EXPECT "$(ncli 1 volume info v2)" ncli 3 volume info v2
TEST ncli 3 volume start v2
EXPECT "Y" proc_alive "$(cat "$T/n2/run/v2-brick0.pid")"
TEST [ ! -e "$T/n1/run/v2-brick0.pid" ]
SPEC=$(ncli 1 --getspec v2)
EXPECT_MATCH "remote-host $H2" echo "$SPEC"
EXPECT "$SPEC" ncli 2 --getspec v2
EXPECT "$SPEC" ncli 3 --getspec v2

# Mount from node 1's namespace (network only: the mount is ours).
ncli 1 --getspec v2 | tail -n +2 > "$T/vol/v2-client.vol"
mkdir -p "$M0"
_T_MOUNTS+=("$M0")
_T_PIDFILES+=("$T/run/client.pid")
TEST nsenter --net=/run/netns/"${NS[1]}" "$MORTARFSD" --pid-file "$T/run/client.pid" --log-file "$T/log/client.log" --volfile "$T/vol/v2-client.vol" "$M0"
TEST wait_for_mount "$M0"
TEST sh -c "echo hello > '$M0/f'"
EXPECT "hello" cat "$M0/f"
EXPECT "hello" cat "$B2/f"

# Node 3 down: once the others see it disconnected, a set runs without
# it (node 3's store does not change); on its return it catches up.
TEST kill "$(cat "$T/n3/run/mortard.pid")"
EXPECT_WITHIN 10 "N" proc_alive "$(cat "$T/n3/run/mortard.pid" 2> /dev/null || echo 0)"
EXPECT_WITHIN 15 "1" connected_peers 1
EXPECT_WITHIN 15 "1" connected_peers 2
S3=$(node_store_sum 3)
TEST ncli 1 volume set v2 client.ping-timeout 20
EXPECT "$S3" node_store_sum 3
EXPECT_MATCH "Host $H3 is not connected" ncli_err 1 volume create v3 "$H3:$T/n3/brick3" force

# Node 3 returns: it has the set, further sets reach everyone, the
# stores agree.
TEST node_mortard 3
EXPECT_WITHIN 15 "2" connected_peers 1
EXPECT_WITHIN 15 "2" connected_peers 3
EXPECT_MATCH "ping-timeout +20" ncli 3 volume get v2 client.ping-timeout
BP=$(cat "$T/n2/run/v2-brick0.pid")
TEST ncli 1 volume set v2 performance.io-thread-count 4
TEST ncli 3 volume set v2 client.ping-timeout 21
EXPECT "$BP" cat "$T/n2/run/v2-brick0.pid"
for i in 1 2 3; do
    EXPECT_MATCH "thread-count +4" ncli "$i" volume get v2 performance.io-thread-count
    EXPECT_MATCH "ping-timeout +21" ncli "$i" volume get v2 client.ping-timeout
    TEST cmp "$T/n1/state/vols/v2/info" "$T/n$i/state/vols/v2/info"
    TEST cmp "$T/n1/state/vols/v2/options" "$T/n$i/state/vols/v2/options"
    TEST cmp "$T/n1/state/vols/v2/client.vol" "$T/n$i/state/vols/v2/client.vol"
done
EXPECT "hello" cat "$M0/f"

# Detach refuses a peer that holds bricks.
EXPECT_MATCH "Brick\\(s\\) with the peer $H2" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer detach $H2 2>&1"

TEST umount "$M0"
TEST ncli 1 volume stop v2
EXPECT_WITHIN 10 "N" proc_alive "$BP"
TEST ncli 3 volume delete v2
for i in 1 2 3; do
    EXPECT "No volumes present in cluster" ncli "$i" volume list
done
TEST ! getfattr -n trusted.mortar.volume-id "$B2"

# Detach node 3: it forgets the cluster, the others forget it.
EXPECT "peer detach: success" ncli 1 peer detach "$H3"
EXPECT "Number of Peers: 0" sh -c "'$MDCTL' -s '$T/n3/run/mortard.sock' peer status"
EXPECT "Number of Peers: 1" sh -c "'$MDCTL' -s '$T/n2/run/mortard.sock' peer status | head -n 1"
EXPECT "Number of Peers: 1" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer status | head -n 1"
