#!/usr/bin/env bash
# A rebalance stopped on one node goes on from another (netns, 2 nodes,
# 10.213.77.1-2; mortard/rebal-handoff.c):
#  - node 1's rebalance of a 2 -> 3 brick volume (20 ms a name), stopped
#    once it has a cursor; a start on node 2 resumes it: node 2's process
#    logs "resuming after CURSOR", its counters start from node 1's, and
#    it completes; every md5 matches, no file is data on two bricks;
#  - then a start on node 1 (whose own state is the older, stopped one)
#    starts afresh, because node 2's completed run came after it: it
#    finds nothing to move;
#  - REBAL_STATE by hand: a bad volume name, a remove-brick state and a
#    volume without state are refused, a running task's state is not
#    given away (EBUSY).
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 2
H1=10.213.77.1
H2=10.213.77.2
BR[0]="$T/n1/b1"; BN[0]=1
BR[1]="$T/n2/b1"; BN[1]=2
BR[2]="$T/n2/b2"; BN[2]=2
for k in 0 1 2; do
    _T_PIDFILES+=("$T/n${BN[$k]}/run/v0-brick$k.pid")
done
for i in 1 2; do
    _T_PIDFILES+=("$T/n$i/run/rebalance/v0.pid")
done
RD1="$T/n1/run/rebalance"
RD2="$T/n2/run/rebalance"

# row_state I NODE: the status column of row NODE of node I's status
row_state() {
    ncli "$1" volume rebalance v0 status 2> /dev/null |
        awk -v n="$2" '$1 == n { s = $7; if ($7 == "in") s = "in progress"
            print s }'
}
# state_rpc I VOLUME IS_REMOVE: one REBAL_STATE call to node I's mortard,
# from node I's namespace, proving the pool secret first
# (tests/lib/mgmt_rpc.py): "ret=R errno=E len=N"
# (N: bytes of the state)
state_rpc() {
    MGMT_SECRET="$T/n$1/state/secret" \
        nsenter --net=/run/netns/"${NS[$1]}" python3 \
        "$(dirname "$0")/../lib/mgmt_rpc.py" "10.213.77.$1" 24100 18 0 \
        "$2" "$3"
}

# Node 1's rebalance processes inherit a delay of 20 ms a name from its
# mortard, so that its run can be stopped in the middle.
MORTAR_REBAL_DELAY_MS=20 node_mortard 1
EXPECT "Y" proc_alive "$(mortard_of 1)"
TEST node_mortard 2
EXPECT "peer probe: success" ncli 1 peer probe "$H2"
EXPECT_WITHIN 15 "1" connected_peers 1
EXPECT_WITHIN 15 "1" connected_peers 2
TEST ncli 1 volume create v0 "$H1:${BR[0]}" "$H2:${BR[1]}" force
TEST ncli 1 volume start v0
TEST node_mount 1 "$H1:/v0" "$M0"
TEST wait_for_mount "$M0"
TEST rebal_tool gen "$M0" 300 "$T/sums"
TEST ncli 1 volume add-brick v0 "$H2:${BR[2]}" force

# Node 1's run, stopped once it has a cursor.
TEST ncli 1 volume rebalance v0 start
EXPECT_WITHIN 120 "Y" sh -c "[ -n \"\$(sed -n 's/^cursor=//p' '$RD1/v0.state')\" ] && echo Y"
TEST ncli 1 volume rebalance v0 stop
EXPECT_WITHIN 20 "stopped" row_state 1 localhost
CURSOR=$(state_value "$RD1/v0.state" cursor)
MOVED=$(state_value "$RD1/v0.state" moved_files)
TEST [ -n "$CURSOR" ]

# Node 2 goes on from there. While its process runs (held), its state is
# not given away.
TEST ncli 2 volume rebalance v0 start
EXPECT_WITHIN 10 "Y" sh -c "grep -q \"resuming after '$CURSOR' ($MOVED files moved so far)\" '$T/n2/log/rebalance/v0.log' && echo Y"
TEST hold_pid "$(cat "$RD2/v0.pid")"
EXPECT "ret=-1 errno=16 len=0" state_rpc 2 v0 0
TEST unhold_pid
EXPECT_MATCH "resuming the unfinished run of node $H1" cat "$T/n2/log/mortard.log"
EXPECT_WITHIN 240 "completed" row_state 2 localhost
EXPECT_WITHIN 10 "completed" row_state 1 "$H2"
TEST [ "$(state_value "$RD2/v0.state" moved_files)" -ge "$MOVED" ]
EXPECT "0" state_value "$RD2/v0.state" failed_files
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "0" dup_data "${BR[@]}"
EXPECT "300" count_data "${BR[@]}"
TEST [ "$(count_data "${BR[2]}")" -gt 0 ]

# Node 1's own state is older than node 2's completed run: not resumed.
TEST ncli 1 volume rebalance v0 start
EXPECT_WITHIN 240 "completed" row_state 1 localhost
EXPECT_MATCH "ran one after this node's unfinished run" cat "$T/n1/log/mortard.log"
EXPECT "0" state_value "$RD1/v0.state" moved_files
EXPECT "0" grep -c "resuming after" "$T/n1/log/rebalance/v0.log"

# REBAL_STATE by hand.
EXPECT "ret=0 errno=0 len=$(wc -c < "$RD2/v0.state")" state_rpc 2 v0 0
EXPECT "ret=-1 errno=22 len=0" state_rpc 2 ../secret 0
EXPECT "ret=-1 errno=22 len=0" state_rpc 2 v0 1
EXPECT "ret=-1 errno=2 len=0" state_rpc 2 nosuch 0
