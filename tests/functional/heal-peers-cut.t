#!/usr/bin/env bash
# `volume heal VOL info`, `status` and `info split-brain` ask the nodes
# they need all at once (mortard/heal-peers.c, md_heal_calls_run), across
# four servers in network namespaces (10.213.77.1-4): a replica 2 volume
# of two sets, one brick per node, the self-heal daemon off and entries
# made by hand in the bricks' heal indexes, so it stays:
#  - every node answering: node 1 shows every brick in brick order with
#    its count and "Connected", and status counts each set's objects;
#  - nodes 2, 3 and 4 cut off at once (packets to them vanish, nothing
#    refuses them): each command answers in less than two peer
#    timeouts (MD_HEAL_PEER_TIMEOUT_MS, 5 s), node 1's brick counted,
#    the three others "Transport endpoint is not connected", in the same
#    order, each cut node asked once per command (one failed call in
#    node 1's log). Before, the nodes were asked one after another: 5 s
#    per cut node, until node 1's peer monitor marks one disconnected
#    (one HELLO of 3 s per peer, in turn), so at least 10 s with three
#    nodes cut.
# The bound is no performance figure: the commands wait out the same
# timeout either way and do nearly nothing else; what is checked is
# that the waits do not add up, one wait (5 s) against two or three
# (10-15 s), with 9 s between them leaving room on a loaded machine.
# TIMEOUT: 400
# REQUIRES: root python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 4
B="$T/bricks"
mkdir -p "$B"
peers_form 4
for i in 1 2 3 4; do
    _T_PIDFILES+=("$T/n$i/run/hc-brick$((i - 1)).pid")
done
H1=10.213.77.1

# field FILE KEY: the value after "KEY: " on its line.
field() {
    sed -n "s/^$2: //p" "$1" | head -n 1
}
# timed OUT ARGS...: node 1's answer to ARGS in OUT, its milliseconds in
# OUT.ms.
timed() {
    local out="$1" t0
    shift
    t0=$(date +%s%3N)
    ncli 1 "$@" > "$out" 2>&1
    echo $(($(date +%s%3N) - t0)) > "$out.ms"
}
# fake_index I N: N entries in node I's brick's heal index.
fake_index() {
    python3 -c "
import os, uuid
d = '$B/n$1/.mortar/index/xattrop'
os.makedirs(d, exist_ok=True)
for _ in range($2):
    open(os.path.join(d, str(uuid.uuid4())), 'w').close()
"
}
# fake_split I GFID...: node I's split-brain list for its brick
# (mortarfsd/heal/heal-splitlist.c's format).
fake_split() {
    local i="$1" g
    shift
    mkdir -p "$T/n$i/run/heal"
    {
        echo "format=mortar-heal-split-brain 1"
        echo "brick=$B/n$i"
        echo "count=$#"
        for g in "$@"; do echo "gfid=$g"; done
    } > "$T/n$i/run/heal/hc.split-brain"
}
# bricks_shown FILE: the "Brick" lines of an answer, in order.
bricks_shown() {
    grep '^Brick ' "$1" | tr '\n' ' '
}
ALL="Brick $H1:$B/n1 Brick 10.213.77.2:$B/n2 Brick 10.213.77.3:$B/n3 \
Brick 10.213.77.4:$B/n4 "
# cut ACTION: the links of nodes 2, 3 and 4 down or up.
cut() {
    local i
    for i in 2 3 4; do
        ip -n "$NS_BR" link set "mt$$b$i" "$1" || return 1
    done
}
# n_asked: failed calls to nodes 2-4 in node 1's log.
n_asked() {
    grep -c "node 10.213.77.[234] not asked" "$T/n1/log/mortard.log"
}
not_conn="Transport endpoint is not connected"

TEST ncli 1 volume create hc replica 2 "$H1:$B/n1" "10.213.77.2:$B/n2" \
    "10.213.77.3:$B/n3" "10.213.77.4:$B/n4" force
TEST ncli 1 volume heal hc disable
TEST ncli 1 volume start hc
TEST fake_index 1 4
TEST fake_index 2 3
TEST fake_index 3 2
TEST fake_index 4 1
G4=$(ls "$B/n4/.mortar/index/xattrop" | grep -E '^[0-9a-f-]{36}$')
TEST test -n "$G4"
TEST fake_split 4 $G4

# Every node answering.
TEST timed "$T/info.out" volume heal hc info
EXPECT "$ALL" bricks_shown "$T/info.out"
for i in 1 2 3 4; do
    EXPECT "Connected" heal_section "$T/info.out" \
        "Brick 10.213.77.$i:$B/n$i" "Status"
done
EXPECT "4" heal_section "$T/info.out" "Brick $H1:$B/n1" "Number of entries"
EXPECT "3" heal_section "$T/info.out" "Brick 10.213.77.2:$B/n2" \
    "Number of entries"
EXPECT "2" heal_section "$T/info.out" "Brick 10.213.77.3:$B/n3" \
    "Number of entries"
EXPECT "1" heal_section "$T/info.out" "Brick 10.213.77.4:$B/n4" \
    "Number of entries"
EXPECT "10" grep -c '^<gfid:[0-9a-f-]*>$' "$T/info.out"
TEST timed "$T/summary.out" volume heal hc info summary
EXPECT "1" heal_section "$T/summary.out" "Brick 10.213.77.4:$B/n4" \
    "Number of entries in split-brain"
EXPECT "3" heal_section "$T/summary.out" "Brick 10.213.77.2:$B/n2" \
    "Total Number of entries"
TEST timed "$T/status.out" volume heal hc status
EXPECT "$ALL" bricks_shown "$T/status.out"
EXPECT "3" heal_section "$T/status.out" "Brick 10.213.77.2:$B/n2" \
    "Entries left"
# Set 1: 4 and 3 distinct objects; set 2: 2 and 1.
EXPECT "10" field "$T/status.out" "Total entries left"
EXPECT "disabled" field "$T/status.out" "Self-heal daemon on 10.213.77.4"
TEST timed "$T/split.out" volume heal hc info split-brain
EXPECT "$ALL" bricks_shown "$T/split.out"
EXPECT "1" heal_section "$T/split.out" "Brick 10.213.77.4:$B/n4" \
    "Number of entries in split-brain"
EXPECT "0" n_asked

# Nodes 2, 3 and 4 cut off, once before each command, so that node 1's
# peer monitor has not marked any of them disconnected yet (it would
# then not be called at all).
# recut: links back up, every peer connected again, then cut.
recut() {
    cut up || return 1
    local k
    for ((k = 0; k < 60; k++)); do
        [ "$(connected_peers 1)" = 3 ] && break
        sleep 1
    done
    [ "$(connected_peers 1)" = 3 ] || return 1
    cut down
}

TEST recut
asked=$(n_asked)
TEST timed "$T/info2.out" volume heal hc info
echo "# info with three nodes cut: $(cat "$T/info2.out.ms") ms" >&2
TEST test "$(cat "$T/info2.out.ms")" -lt 9000
EXPECT "$ALL" bricks_shown "$T/info2.out"
EXPECT "Connected" heal_section "$T/info2.out" "Brick $H1:$B/n1" "Status"
EXPECT "4" heal_section "$T/info2.out" "Brick $H1:$B/n1" \
    "Number of entries"
for i in 2 3 4; do
    EXPECT "$not_conn" heal_section "$T/info2.out" \
        "Brick 10.213.77.$i:$B/n$i" "Status"
    EXPECT "-" heal_section "$T/info2.out" "Brick 10.213.77.$i:$B/n$i" \
        "Number of entries"
done
EXPECT "4" grep -c '^<gfid:[0-9a-f-]*>$' "$T/info2.out"
EXPECT "$((asked + 3))" n_asked

TEST recut
asked=$(n_asked)
TEST timed "$T/status2.out" volume heal hc status
echo "# status with three nodes cut: $(cat "$T/status2.out.ms") ms" >&2
TEST test "$(cat "$T/status2.out.ms")" -lt 9000
EXPECT "$ALL" bricks_shown "$T/status2.out"
EXPECT "4" heal_section "$T/status2.out" "Brick $H1:$B/n1" "Entries left"
for i in 2 3 4; do
    EXPECT "$not_conn" field "$T/status2.out" \
        "Self-heal daemon on 10.213.77.$i"
    EXPECT "$not_conn" heal_section "$T/status2.out" \
        "Brick 10.213.77.$i:$B/n$i" "Status"
done
EXPECT_MATCH "^3 " field "$T/status2.out" "Nodes not answering"
EXPECT "4" field "$T/status2.out" "Total entries left"
# The daemons asked first: the bricks of nodes that did not answer are
# not called again.
EXPECT "$((asked + 3))" n_asked

TEST recut
asked=$(n_asked)
TEST timed "$T/split2.out" volume heal hc info split-brain
echo "# info split-brain with three nodes cut: $(cat "$T/split2.out.ms") ms" >&2
TEST test "$(cat "$T/split2.out.ms")" -lt 9000
EXPECT "$ALL" bricks_shown "$T/split2.out"
for i in 2 3 4; do
    EXPECT "$not_conn" heal_section "$T/split2.out" \
        "Brick 10.213.77.$i:$B/n$i" "Status"
done
EXPECT "$((asked + 3))" n_asked

TEST cut up
EXPECT_WITHIN 60 "3" connected_peers 1
TEST timed "$T/status3.out" volume heal hc status
EXPECT "10" field "$T/status3.out" "Total entries left"
TEST ncli 1 volume stop hc
