#!/usr/bin/env bash
# volume profile and top for bricks of other nodes (BRICK_PROFILE,
# mortard/cmd-profile.c), two servers in network namespaces
# (10.213.77.1-2), a distribute volume with one brick per node:
#  - `profile start` on node 1 reaches node 2's brick (a transaction of
#    volume set): node 1's `profile info` shows node 2's brick with its
#    Cumulative and Interval sections, and so does node 2's for node 1's;
#  - `top open` on node 1 lists node 2's brick's table header;
#  - with node 2's mortard stopped, node 1 answers at once, node 2's
#    brick "not gathered" with the reason, node 1's shown.
# TIMEOUT: 240
# REQUIRES: root python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 2
H1=10.213.77.1
H2=10.213.77.2
B="$T/bricks"
mkdir -p "$B"
peers_form 2
for i in 1 2; do
    _T_PIDFILES+=("$T/n$i/run/pp-brick$((i - 1)).pid")
done

# brick_state FILE BRICK: the first line after the brick's underline.
brick_state() {
    awk -v b="Brick: $2" '$0 == b { on = 1; getline; getline; print; exit }' "$1"
}

TEST ncli 1 volume create pp "$H1:$B/n1" "$H2:$B/n2" force
TEST ncli 1 volume start pp
TEST ncli 1 volume profile pp start
info_of() { ncli "$1" volume profile pp info peek > "$T/info$1.out" 2>&1;
    brick_state "$T/info$1.out" "$2"; }
EXPECT_WITHIN 20 "Cumulative Stats:" info_of 1 "$H2:$B/n2"
EXPECT "Cumulative Stats:" brick_state "$T/info1.out" "$H1:$B/n1"
EXPECT "2" grep -c "^Interval 0 Stats:" "$T/info1.out"
EXPECT "Cumulative Stats:" info_of 2 "$H1:$B/n1"
TEST ncli 1 volume top pp open brick "$H2:$B/n2"
EXPECT_MATCH "Brick: $H2:$B/n2
Count		filename" cat "$T/.out"

# Node 2's mortard gone: node 1 answers all the same, at once.
M2=$(mortard_of 2)
TEST kill -TERM "$M2"
EXPECT_WITHIN 20 "N" proc_alive "$M2"
t0=$(date +%s)
ncli 1 volume profile pp info peek > "$T/info3.out" 2>&1
TEST [ $(($(date +%s) - t0)) -lt 15 ]
EXPECT_MATCH "^Brick is not answering: not gathered: " brick_state \
    "$T/info3.out" "$H2:$B/n2"
EXPECT "Cumulative Stats:" brick_state "$T/info3.out" "$H1:$B/n1"
