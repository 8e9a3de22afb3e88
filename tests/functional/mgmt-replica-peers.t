#!/usr/bin/env bash
# Replicated volumes over three servers in network namespaces
# (10.213.77.1-3): a replica 3 volume with one brick per node, created
# from node 1 without force (its set spans three servers; the bricks are
# on a tmpfs, off the root file system), is the same on every node
# (volume info, the store's type and replica-count); a set with two
# bricks on node 1 is refused by the transaction and changes no store;
# a replica 2 volume created while node 3's mortard is down reaches node
# 3 by catch-up with its replica count; the replica 3 volume mounted from
# node 1 keeps a file on all three nodes' bricks.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
FS="$T/fs"
mkdir -p "$FS"
for i in 1 2 3; do
    for k in 0 1 2; do
        _T_PIDFILES+=("$T/n$i/run/rp-brick$k.pid")
    done
    # Each node's self-heal daemon of rp (left running for ever else).
    _T_PIDFILES+=("$T/n$i/run/heal/rp.pid")
done

# info_key I VOL KEY: a key=value line of node I's store for VOL.
info_key() {
    grep "^$3=" "$T/n$1/state/vols/$2/info"
}

# ncli_err I ARGS...: the error line of a command through node I.
ncli_err() {
    ncli "$@" 2>&1 > /dev/null
}

# brick_up HOST:PATH: the Online column of node 1's volume status rp.
brick_up() {
    ncli 1 volume status rp | awk -v b="$1" '$2 == b { print $4 }'
}

TEST mount -t tmpfs -o size=32m mortar-test-repp "$FS"
peers_form 3

TEST ncli 1 volume create rp replica 3 "$H1:$FS/n1" "$H2:$FS/n2" "$H3:$FS/n3"
INFO=$(ncli 1 volume info rp)
EXPECT_MATCH "Type: Replicate" echo "$INFO"
EXPECT_MATCH "Number of Bricks: 1 x 3 = 3" echo "$INFO"
for i in 2 3; do
    EXPECT "$INFO" ncli "$i" volume info rp
done
for i in 1 2 3; do
    EXPECT "type=replicate" info_key "$i" rp type
    EXPECT "replica-count=3" info_key "$i" rp replica-count
done

# Two bricks of the set on node 1: every node's stage refuses it.
S1=$(node_store_sum 1)
S2=$(node_store_sum 2)
X=(x replica 3 "$H1:$FS/x1" "$H1:$FS/x2" "$H2:$FS/x3")
TEST ! ncli 1 volume create "${X[@]}"
EXPECT_MATCH "Multiple bricks of a replicate volume are present on the same \
server" ncli_err 1 volume create "${X[@]}"
EXPECT "$S1" node_store_sum 1
EXPECT "$S2" node_store_sum 2
EXPECT_MATCH "Volume x does not exist" ncli_err 3 volume info x

# Catch-up: node 3 down while a replica 2 volume is created.
M3PID=$(mortard_of 3)
TEST kill "$M3PID"
EXPECT_WITHIN 20 "N" proc_alive "$M3PID"
EXPECT_WITHIN 15 "1" connected_peers 1
TEST ncli 1 volume create rq replica 2 "$H1:$FS/q1" "$H2:$FS/q2"
TEST node_mortard 3
EXPECT_WITHIN 30 "replica-count=2" info_key 3 rq replica-count
EXPECT "$(ncli 1 volume info rq)" ncli 3 volume info rq

# Mounted from node 1: a file is on all three nodes' bricks.
M0="$T/m0"
TEST ncli 1 volume start rp
EXPECT_WITHIN 20 "Y" brick_up "$H1:$FS/n1"
EXPECT_WITHIN 20 "Y" brick_up "$H2:$FS/n2"
EXPECT_WITHIN 20 "Y" brick_up "$H3:$FS/n3"
TEST node_mount 1 "$H1:/rp" "$M0"
TEST wait_for_mount "$M0"
TEST sh -c "echo 'one file, three servers' > '$M0/f'"
for i in 1 2 3; do
    EXPECT "one file, three servers" cat "$FS/n$i/f"
done
TEST umount "$M0"
