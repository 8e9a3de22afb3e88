#!/usr/bin/env bash
# `volume heal VOL info` on one node counts and names what the heal
# indexes of the other nodes' bricks list (HEAL_INFO, mortard/
# heal-peers.c), across three servers in network namespaces
# (10.213.77.1-3), a replica 3 volume with one brick per node and the
# self-heal daemon off, so entries made by hand in node 2's index stay:
#  - node 1's `info`, `info summary`, `statistics heal-count` and
#    `status` show node 2's brick with its count, its names and
#    "Connected", node 3's with 0 (before: "Not gathered: brick on
#    another node", count "-");
#  - a brick whose index marker names another boot (its machine went
#    down under it; the brick rebuilds the index when it starts), on
#    node 2 and on node 1: its status says so, its count is "-", its
#    names are shown; `status` counts it among the indexes rebuilt and
#    gives no ETA;
#  - with node 3's mortard stopped, node 1 still answers, node 3's brick
#    "Transport endpoint is not connected" (the reason in node 1's log),
#    node 2's counted.
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
for i in 1 2 3; do
    _T_PIDFILES+=("$T/n$i/run/hp-brick$((i - 1)).pid")
    _T_PIDFILES+=("$T/n$i/run/heal/hp.pid")
done

heal_out() {
    local out="$1"
    shift
    ncli 1 "$@" > "$out" 2>&1
}

TEST ncli 1 volume create hp replica 3 "$H1:$B/n1" "$H2:$B/n2" \
    "$H3:$B/n3" force
TEST ncli 1 volume heal hp disable
TEST ncli 1 volume start hp
TEST python3 -c "
import os, uuid
d = '$B/n2/.mortar/index/xattrop'
os.makedirs(d, exist_ok=True)
for _ in range(5):
    open(os.path.join(d, str(uuid.uuid4())), 'w').close()
"

TEST heal_out "$T/info.out" volume heal hp info
EXPECT "5" heal_section "$T/info.out" "Brick $H2:$B/n2" "Number of entries"
EXPECT "Connected" heal_section "$T/info.out" "Brick $H2:$B/n2" "Status"
EXPECT "0" heal_section "$T/info.out" "Brick $H3:$B/n3" "Number of entries"
EXPECT "0" heal_section "$T/info.out" "Brick $H1:$B/n1" "Number of entries"
EXPECT "5" grep -c '^<gfid:[0-9a-f-]*>$' "$T/info.out"
TEST heal_out "$T/summary.out" volume heal hp info summary
EXPECT "5" heal_section "$T/summary.out" "Brick $H2:$B/n2" \
    "Total Number of entries"
EXPECT "-" heal_section "$T/summary.out" "Brick $H2:$B/n2" \
    "Number of entries in split-brain"
TEST heal_out "$T/count.out" volume heal hp statistics heal-count
EXPECT "5" heal_section "$T/count.out" "Brick $H2:$B/n2" "Number of entries"
TEST heal_out "$T/status.out" volume heal hp status
EXPECT "5" heal_section "$T/status.out" "Brick $H2:$B/n2" "Entries left"
EXPECT_MATCH "<numberOfEntries>5</numberOfEntries>" \
    ncli 1 --xml volume heal hp info summary

# Node 2's brick as after a crash of its machine: its index marker names
# another boot, so the index may miss entries until the brick has
# rebuilt it. Node 1 shows why and no count for it, with the names it
# lists so far; `status` does not call that nothing left.
REBUILDING="Heal index being rebuilt (its server went down while the brick ran): entries may be missing"
BOOT2="$(cat "$B/n2/.mortar/index/boot")"
TEST [ -n "$BOOT2" ]
TEST sh -c "echo 00000000-0000-4000-8000-00000000dead > '$B/n2/.mortar/index/boot'"
TEST heal_out "$T/rb.out" volume heal hp info
EXPECT "$REBUILDING" heal_section "$T/rb.out" "Brick $H2:$B/n2" "Status"
EXPECT "-" heal_section "$T/rb.out" "Brick $H2:$B/n2" "Number of entries"
EXPECT "5" grep -c '^<gfid:[0-9a-f-]*>$' "$T/rb.out"
EXPECT "Connected" heal_section "$T/rb.out" "Brick $H3:$B/n3" "Status"
TEST heal_out "$T/rbc.out" volume heal hp statistics heal-count
EXPECT "-" heal_section "$T/rbc.out" "Brick $H2:$B/n2" "Number of entries"
TEST heal_out "$T/rbs.out" volume heal hp status
EXPECT "$REBUILDING" heal_section "$T/rbs.out" "Brick $H2:$B/n2" "Status"
EXPECT "1 (their bricks are not counted until done)" \
    sed -n 's/^Heal indexes being rebuilt: //p' "$T/rbs.out"
EXPECT "unknown" sed -n 's/^ETA: //p' "$T/rbs.out"
# This node's own brick the same way.
BOOT1="$(cat "$B/n1/.mortar/index/boot")"
TEST sh -c "echo 00000000-0000-4000-8000-00000000dead > '$B/n1/.mortar/index/boot'"
TEST heal_out "$T/rb1.out" volume heal hp info
EXPECT "$REBUILDING" heal_section "$T/rb1.out" "Brick $H1:$B/n1" "Status"
EXPECT "-" heal_section "$T/rb1.out" "Brick $H1:$B/n1" "Number of entries"
# Rebuilt: the markers take this boot's id again.
TEST sh -c "echo '$BOOT1' > '$B/n1/.mortar/index/boot'"
TEST sh -c "echo '$BOOT2' > '$B/n2/.mortar/index/boot'"
TEST heal_out "$T/rb2.out" volume heal hp info
EXPECT "Connected" heal_section "$T/rb2.out" "Brick $H2:$B/n2" "Status"
EXPECT "5" heal_section "$T/rb2.out" "Brick $H2:$B/n2" "Number of entries"
EXPECT "Connected" heal_section "$T/rb2.out" "Brick $H1:$B/n1" "Status"

# Node 3's mortard gone: node 1 answers all the same.
M3=$(mortard_of 3)
TEST kill -TERM "$M3"
EXPECT_WITHIN 20 "N" proc_alive "$M3"
TEST heal_out "$T/info2.out" volume heal hp info
EXPECT "Transport endpoint is not connected" \
    heal_section "$T/info2.out" "Brick $H3:$B/n3" "Status"
EXPECT "-" heal_section "$T/info2.out" "Brick $H3:$B/n3" "Number of entries"
EXPECT "5" heal_section "$T/info2.out" "Brick $H2:$B/n2" "Number of entries"
