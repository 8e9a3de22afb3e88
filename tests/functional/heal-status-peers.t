#!/usr/bin/env bash
# `volume heal VOL status` and `volume heal VOL info split-brain` asked on
# a node without bricks gather every node's part (HEAL_PROGRESS and
# HEAL_SPLIT, mortard/heal-peers.c and heal-nodes.c), across three
# servers in network namespaces (10.213.77.1-3): a replica 2 volume with
# its bricks on nodes 2 and 3, the self-heal daemon off, and what the
# daemons would have written made by hand (their progress files, their
# split-brain lists, entries in the bricks' heal indexes), so it stays:
#  - node 1's `status` shows a daemon line for nodes 2 and 3, each
#    brick's entries left, and in total the sums of both progress files
#    (healed, rate, split-brain, waiting), the longer ETA and the full
#    crawl still running on node 3 (before: node 1's own daemon only,
#    all zeros);
#  - node 1's `info split-brain` names and counts the entries each
#    node's list holds and its index still has (before: "Not gathered:
#    brick on another node"), and `info summary` counts them (before:
#    "-");
#  - the totals "In split-brain" and "Waiting for a brick" count an
#    object both nodes' daemons found once (the union of their lists
#    by GFID), their sum when a daemon does not list waiting objects;
#  - node 3's link down: both commands answer within their bound, node 3
#    and its brick "Transport endpoint is not connected", node 2's
#    figures alone, the ETA unknown; once node 1 sees node 3
#    disconnected, it is not called at all (no failed call logged).
# TIMEOUT: 300
# REQUIRES: root python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
B="$T/bricks"
mkdir -p "$B"
peers_form 3
for i in 2 3; do
    _T_PIDFILES+=("$T/n$i/run/hs-brick$((i - 2)).pid")
done

# field FILE KEY: the value after "KEY: " on its line.
field() {
    sed -n "s/^$2: //p" "$1" | head -n 1
}
# timed OUT ARGS...: node 1's answer to ARGS in OUT, its seconds in
# OUT.secs.
timed() {
    local out="$1" t0
    shift
    t0=$(date +%s)
    ncli 1 "$@" > "$out" 2>&1
    echo $(($(date +%s) - t0)) > "$out.secs"
}
# fake_node I HEALED RATE SPLIT WAITING ETA CRAWL...: node I's daemon
# progress file, as mortarfsd/heal/heal-state.c writes it.
fake_node() {
    mkdir -p "$T/n$1/run/heal" && cat > "$T/n$1/run/heal/hs.state" << EOF
format=mortar-heal-state 1
pid=0
updated=$(date +%s)
healed=$2
healed_bytes=$(($2 * 1024))
split_brain=$4
waiting=$5
pending=3
pending_bytes=4096
rate=$3
rate_bytes=1024
eta_seconds=$6
$7
EOF
}
# fake_index I N: N entries in node I's brick's heal index, their GFIDs
# on stdout.
fake_index() {
    python3 -c "
import os, uuid
d = '$B/n$1/.mortar/index/xattrop'
os.makedirs(d, exist_ok=True)
for _ in range($2):
    g = str(uuid.uuid4())
    open(os.path.join(d, g), 'w').close()
    print(g)
"
}
# fake_split I COUNT GFID...: node I's split-brain list for its brick
# (mortarfsd/heal/heal-splitlist.c's format).
fake_split() {
    local i="$1" count="$2" g
    shift 2
    {
        echo "format=mortar-heal-split-brain 1"
        echo "brick=$B/n$i"
        echo "count=$count"
        for g in "$@"; do echo "gfid=$g"; done
    } > "$T/n$i/run/heal/hs.split-brain"
}

TEST ncli 1 volume create hs replica 2 "$H2:$B/n2" "$H3:$B/n3" force
TEST ncli 1 volume heal hs disable
TEST ncli 1 volume start hs
G2=$(fake_index 2 3)
G3=$(fake_index 3 2)
TEST test "$(echo "$G2" | wc -l)" = 3
TEST fake_node 2 5 1.5 2 0 10 "crawl_done_at=$(date +%s)
crawl_visited=100"
TEST fake_node 3 7 2.5 1 1 30 "full_crawl=1
crawl_visited=20"
# Node 2 lists two of its entries and one that left its index since
# (healed: not shown, not counted); node 3 one.
TEST fake_split 2 3 $(echo "$G2" | head -n 2) \
    "0a1b2c3d-0000-4000-8000-00000000dead"
TEST fake_split 3 1 $(echo "$G3" | head -n 1)

TEST timed "$T/status.out" volume heal hs status
EXPECT "disabled" field "$T/status.out" "Self-heal daemon on $H2"
EXPECT "disabled" field "$T/status.out" "Self-heal daemon on $H3"
EXPECT "3" heal_section "$T/status.out" "Brick $H2:$B/n2" "Entries left"
EXPECT "2" heal_section "$T/status.out" "Brick $H3:$B/n3" "Entries left"
EXPECT "5" field "$T/status.out" "Total entries left"
EXPECT "12 entries, 12.0 KiB" field "$T/status.out" "Healed"
EXPECT "4.0 entries/s, 2.0 KiB/s" field "$T/status.out" \
    "Rate (last minute)"
EXPECT "3" field "$T/status.out" "In split-brain"
EXPECT "1" field "$T/status.out" "Waiting for a brick"
EXPECT "30 s" field "$T/status.out" "ETA"
EXPECT "running, 120 objects visited, 0 healed, 0 failed" \
    field "$T/status.out" "Full crawl"
EXPECT_MATCH "<healedEntries>12</healedEntries>" \
    ncli 1 --xml volume heal hs status
EXPECT_MATCH '"nodesDown": *"?0' ncli 1 --json volume heal hs status

TEST timed "$T/split.out" volume heal hs info split-brain
EXPECT "Connected" heal_section "$T/split.out" "Brick $H2:$B/n2" "Status"
EXPECT "2" heal_section "$T/split.out" "Brick $H2:$B/n2" \
    "Number of entries in split-brain"
EXPECT "Connected" heal_section "$T/split.out" "Brick $H3:$B/n3" "Status"
EXPECT "1" heal_section "$T/split.out" "Brick $H3:$B/n3" \
    "Number of entries in split-brain"
for g in $(echo "$G2" | head -n 2) $(echo "$G3" | head -n 1); do
    EXPECT "1" grep -c "^<gfid:$g>\$" "$T/split.out"
done
EXPECT "0" grep -c "dead" "$T/split.out"
EXPECT_MATCH "<numberOfEntries>2</numberOfEntries>" \
    ncli 1 --xml volume heal hs info split-brain
# info summary takes its split-brain counts from the same lists.
TEST timed "$T/summary.out" volume heal hs info summary
EXPECT "2" heal_section "$T/summary.out" "Brick $H2:$B/n2" \
    "Number of entries in split-brain"
EXPECT "1" heal_section "$T/summary.out" "Brick $H2:$B/n2" \
    "Number of entries in heal pending"
EXPECT "1" heal_section "$T/summary.out" "Brick $H3:$B/n3" \
    "Number of entries in split-brain"

# Node 3 cut off: packets to it vanish, nothing refuses them.
TEST ip -n "$NS_BR" link set "mt$$b3" down
TEST timed "$T/status2.out" volume heal hs status
TEST test "$(cat "$T/status2.out.secs")" -le 15
EXPECT "Transport endpoint is not connected" field "$T/status2.out" \
    "Self-heal daemon on $H3"
EXPECT "Transport endpoint is not connected" \
    heal_section "$T/status2.out" "Brick $H3:$B/n3" "Status"
EXPECT "3" heal_section "$T/status2.out" "Brick $H2:$B/n2" "Entries left"
EXPECT "5 entries, 5.0 KiB" field "$T/status2.out" "Healed"
EXPECT "unknown" field "$T/status2.out" "ETA"
EXPECT_MATCH "^1 " field "$T/status2.out" "Nodes not answering"
TEST timed "$T/split2.out" volume heal hs info split-brain
TEST test "$(cat "$T/split2.out.secs")" -le 15
EXPECT "Transport endpoint is not connected" \
    heal_section "$T/split2.out" "Brick $H3:$B/n3" "Status"
EXPECT "-" heal_section "$T/split2.out" "Brick $H3:$B/n3" \
    "Number of entries in split-brain"
EXPECT "2" heal_section "$T/split2.out" "Brick $H2:$B/n2" \
    "Number of entries in split-brain"
# Once node 1's peer monitor sees node 3 disconnected, node 3 is not
# called at all (no wait for the timeout): shown the same, and no new
# failed call in node 1's log.
peer3_state() {
    ncli 1 pool list | awk -v h="$H3" '$2 == h { print $3 }'
}
EXPECT_WITHIN 60 "Disconnected" peer3_state
n_asked() { grep -c "node $H3 not asked" "$T/n1/log/mortard.log"; }
asked=$(n_asked)
TEST timed "$T/status3.out" volume heal hs status
EXPECT "Transport endpoint is not connected" field "$T/status3.out" \
    "Self-heal daemon on $H3"
EXPECT "Transport endpoint is not connected" \
    heal_section "$T/status3.out" "Brick $H3:$B/n3" "Status"
EXPECT "3" heal_section "$T/status3.out" "Brick $H2:$B/n2" "Entries left"
EXPECT "$asked" n_asked
TEST ip -n "$NS_BR" link set "mt$$b3" up
split3() {
    ncli 1 volume heal hs info split-brain > "$T/split3.out" 2>&1
    heal_section "$T/split3.out" "Brick $H3:$B/n3" "Status"
}
EXPECT_WITHIN 30 "Connected" split3

# One object in split-brain and one waiting for a brick, each found by
# the daemons of both nodes (the set's two bricks are on two nodes), in
# both indexes: status counts each once per replica set, the union by
# GFID of what the daemons listed (before: their counts summed, 5 and
# 2). An older daemon lists no waiting objects: then the sum.
# fake_lists I WAITING GFID...: node I's list, the GFIDs in split-brain
# and WAITING (a GFID or "none": no waiting lines) waiting for a copy.
fake_lists() {
    local i="$1" w="$2" g
    shift 2
    {
        echo "format=mortar-heal-split-brain 1"
        echo "brick=$B/n$i"
        echo "count=$#"
        for g in "$@"; do echo "gfid=$g"; done
        if [ "$w" != none ]; then
            echo "waiting=1"
            echo "waiting_gfid=$w"
        fi
    } > "$T/n$i/run/heal/hs.split-brain"
}
S=0a1b2c3d-0000-4000-8000-00000000beef
W=0a1b2c3d-0000-4000-8000-00000000f00d
for i in 2 3; do
    TEST touch "$B/n$i/.mortar/index/xattrop/$S" \
        "$B/n$i/.mortar/index/xattrop/$W"
done
TEST fake_node 2 5 1.5 3 1 10 ""
TEST fake_node 3 7 2.5 2 1 30 ""
TEST fake_lists 2 "$W" $(echo "$G2" | head -n 2) "$S"
TEST fake_lists 3 "$W" $(echo "$G3" | head -n 1) "$S"
TEST timed "$T/status4.out" volume heal hs status
EXPECT "7" field "$T/status4.out" "Total entries left"
EXPECT "4" field "$T/status4.out" "In split-brain"
EXPECT "1" field "$T/status4.out" "Waiting for a brick"
EXPECT_MATCH "<splitBrain>4</splitBrain>" ncli 1 --xml volume heal hs status
# Each node's own figure and the total.
n_waiting_1() {
    ncli 1 --xml volume heal hs status | grep -o "<waiting>1</waiting>" |
        wc -l
}
EXPECT "3" n_waiting_1
TEST fake_lists 3 none $(echo "$G3" | head -n 1) "$S"
TEST timed "$T/status5.out" volume heal hs status
EXPECT "4" field "$T/status5.out" "In split-brain"
EXPECT "2" field "$T/status5.out" "Waiting for a brick"

TEST ncli 1 volume stop hs
