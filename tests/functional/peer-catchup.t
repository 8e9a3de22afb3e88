#!/usr/bin/env bash
# Four mortards in network namespaces (10.213.77.1-4), nodes 1-3 in one
# cluster: `volume status` on node 1 shows node 2's brick online with its
# pid and port (text, XML, JSON); node 2's mortard down -> its brick is
# N/A and node 2 is named as not answering. Node 3's mortard down: a
# volume with a brick there is stopped and deleted from node 1, and node
# 4 is probed; when node 3 returns it no longer lists the volume, its
# brick process is gone, and node 4 is in its pool. ping-timeout set on a
# mounted volume is applied live (same client pid, statedump shows it).
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 4
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
H4=10.213.77.4

for i in 1 2 3 4; do
    TEST node_mortard "$i"
done
EXPECT "peer probe: success" ncli 1 peer probe "$H2"
EXPECT "peer probe: success" ncli 1 peer probe "$H3"
for i in 1 2 3; do
    EXPECT_WITHIN 15 "2" connected_peers "$i"
done

# A volume whose brick lives on node 2, status asked on node 1.
B2="$T/n2/brick"
_T_PIDFILES+=("$T/n2/run/vs-brick0.pid")
TEST ncli 1 volume create vs "$H2:$B2" force
TEST ncli 1 volume start vs
EXPECT "Y" proc_alive "$(cat "$T/n2/run/vs-brick0.pid")"
BPID=$(cat "$T/n2/run/vs-brick0.pid")
BPORT=$(ncli 2 volume status vs | awk -v b="$H2:$B2" '$2 == b { print $3 }')
TEST [ -n "$BPORT" ]
brick_lines() {
    ncli "$1" volume status "$2" | grep '^Brick'
}
EXPECT_MATCH "^Brick $H2:$B2 +$BPORT +Y +$BPID\$" brick_lines 1 vs
EXPECT_MATCH "Online +: Y" ncli 3 volume status vs detail
EXPECT_MATCH "<pid>$BPID</pid>" ncli 1 --xml volume status vs
EXPECT_MATCH "<port>$BPORT</port>" ncli 1 --xml volume status vs
EXPECT_MATCH "\"pid\": *\"$BPID\"" ncli 1 --json volume status vs
UUID2=$(ncli 2 pool list | awk '$2 == "localhost" { print $1 }')
EXPECT_MATCH "<peerid>$UUID2</peerid>" ncli 1 --xml volume status vs

# The live ping-timeout: a client mounted from node 1's namespace applies
# a new value without a remount.
mkdir -p "$M0"
CPIDF="$T/run/m0.pid"
CLOG="$T/log/m0.log"
_T_PIDFILES+=("$CPIDF")
_T_MOUNTS+=("$M0")
TEST nsenter --net=/run/netns/"${NS[1]}" env MORTARFSD="$MORTARFSD" sh "$MOUNT_MORTAR" "$H1:/vs" "$M0" -o "pid-file=$CPIDF,log-file=$CLOG,dump-dir=$T/dump"
TEST wait_for_mount "$M0"
TEST sh -c "echo hello > '$M0/f'"
CPID=$(cat "$CPIDF")
EXPECT_MATCH "ping_timeout_ms=42000" statedump_of "$CPID"
TEST ncli 1 volume set vs client.ping-timeout 17
EXPECT_WITHIN 15 "1" sh -c "grep -c \"volume 'vs' changed to version\" '$CLOG'"
ping_of() {
    statedump_of "$1" | grep -o 'ping_timeout_ms=[0-9]*'
}
EXPECT_WITHIN 10 "ping_timeout_ms=17000" ping_of "$CPID"
EXPECT_MATCH "ping-timeout=17" statedump_of "$CPID"
EXPECT "$CPID" cat "$CPIDF"
EXPECT "hello" cat "$M0/f"
TEST umount "$M0"

# Node 2's mortard down (its brick still runs): N/A and a named peer.
TEST kill "$(mortard_of 2)"
EXPECT_WITHIN 10 "N" proc_alive "$(mortard_of 2)"
OUT=$(ncli 1 volume status vs)
EXPECT_MATCH "Brick $H2:$B2 +N/A +N +N/A" echo "$OUT"
EXPECT_MATCH "Peer $H2 did not answer" echo "$OUT"
EXPECT_MATCH "<unreachablePeers><peer><hostname>$H2</hostname>" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' --xml volume status vs | tr -d ' \n'"
TEST node_mortard 2
# Every node must see node 2 again (and node 2 both others) before a
# transaction: node 2 stages the next create, which names node 3.
for i in 1 2 3; do
    EXPECT_WITHIN 15 "2" connected_peers "$i"
done
EXPECT_WITHIN 15 "Y" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' volume status vs | awk '\$1 == \"Brick\" { print \$4 }'"

# A volume with a brick on node 3; node 3's mortard goes down (its brick
# keeps running): the volume is stopped and deleted, node 4 probed.
B3="$T/n3/brick"
_T_PIDFILES+=("$T/n3/run/vc-brick0.pid")
TEST ncli 1 volume create vc "$H3:$B3" force
TEST ncli 1 volume start vc
C3PID=$(cat "$T/n3/run/vc-brick0.pid")
EXPECT "Y" proc_alive "$C3PID"
TEST kill "$(mortard_of 3)"
EXPECT_WITHIN 10 "N" proc_alive "$(mortard_of 3)"
EXPECT_WITHIN 15 "1" connected_peers 1
EXPECT_WITHIN 15 "1" connected_peers 2
TEST ncli 1 volume stop vc
TEST ncli 2 volume delete vc
EXPECT "vs" ncli 1 volume list
EXPECT "Y" proc_alive "$C3PID"
EXPECT "peer probe: success" ncli 1 peer probe "$H4"
EXPECT_WITHIN 15 "3" sh -c "'$MDCTL' -s '$T/n4/run/mortard.sock' peer status | head -n 1 | awk '{ print \$4 }'"
EXPECT_MATCH "generation=3" cat "$T/n1/state/peers"
EXPECT_MATCH "dead=.* vc" cat "$T/n1/state/peer-sync"

# Node 3 returns: the deletion and the new peer reach it.
TEST node_mortard 3
EXPECT_WITHIN 20 "vs" ncli 3 volume list
EXPECT_WITHIN 15 "N" proc_alive "$C3PID"
TEST [ ! -e "$T/n3/state/vols/vc" ]
TEST ! getfattr -n trusted.mortar.volume-id "$B3"
EXPECT_WITHIN 15 "1" sh -c "'$MDCTL' -s '$T/n3/run/mortard.sock' pool list | grep -c '$H4'"
EXPECT_WITHIN 20 "3" connected_peers 3
EXPECT_WITHIN 20 "3" connected_peers 4
EXPECT_WITHIN 20 "3" connected_peers 1
for i in 1 2 3 4; do
    EXPECT "$(cat "$T/n1/state/vols/vs/info")" cat "$T/n$i/state/vols/vs/info"
done

# A new volume of the deleted one's name is not mistaken for it.
TEST ncli 3 volume create vc "$H3:$B3" force
for i in 1 2 4; do
    EXPECT "vc vs" sh -c "'$MDCTL' -s '$T/n$i/run/mortard.sock' volume list | xargs"
done

TEST ncli 1 volume stop vs
EXPECT_WITHIN 10 "N" proc_alive "$BPID"
