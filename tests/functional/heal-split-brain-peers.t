#!/usr/bin/env bash
# `volume heal VOL split-brain source-brick HOST:BRICK` without a file,
# run on a node with no brick of the set, resolves what the lists of the
# set's bricks on the other nodes hold (HEAL_SPLIT with bare GFIDs,
# mortard/cmd-split-brain.c and heal-peers.c), across three servers in
# network namespaces (10.213.77.1-3): a replica 2 volume with its bricks
# on nodes 2 and 3, cluster.quorum-type none, the self-heal daemon and
# heal on access off:
#  - five files are put in split-brain for real (written with each brick
#    down in turn: each copy blames the other), and the lists the
#    daemons would write are made by hand with their GFIDs, so they
#    stay: node 2's lists f1 and f2, node 3's f2 and f3;
#  - node 1 resolves from node 2's brick: f1, f2 and f3, each once
#    ("Healed gfid:..." three times, "Number of healed entries: 3",
#    exit 0), both copies then node 2's (before: node 1's own lists
#    only, which it has none of: 0 healed);
#  - node 3's mortard stopped (its brick still serving), node 2 listing
#    f4 and node 3 f5: node 1 says node 3's list was not gathered,
#    still resolves f4, exits non-zero; f5 stays in split-brain.
# TIMEOUT: 400
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
B="$T/bricks"
mkdir -p "$B"
peers_form 3
for i in 2 3; do
    _T_PIDFILES+=("$T/n$i/run/sp-brick$((i - 2)).pid")
done

# reaches N PROBE: writes a new value to PROBE through the mount and
# says Y once node N's copy holds it (the mount is connected to it).
reaches() {
    local v="$RANDOM$RANDOM"
    echo "$v" > "$M0/$2" 2> /dev/null
    [ "$(cat "$B/n$1/$2" 2> /dev/null)" = "$v" ] && echo Y || echo N
}
# down N: node N's brick stops and stays down (its directory away).
down() {
    local p
    p="$(cat "$T/n$1/run/sp-brick$(($1 - 2)).pid")"
    mv "$B/n$1" "$B/n$1.away" && kill -9 "$p"
}
# up N: node N's brick directory back and started.
up() {
    mv "$B/n$1.away" "$B/n$1" && ncli 1 volume start sp force > /dev/null
}
gfid_of() {
    python3 -c "import os, sys, uuid
print(uuid.UUID(bytes=os.getxattr(sys.argv[1], 'trusted.mortar.gfid')))" \
        "$B/n2/$1"
}
# list I FILE...: node I's split-brain list of its brick, as
# mortarfsd/heal/heal-splitlist.c writes it.
list() {
    local i="$1" f
    shift
    mkdir -p "$T/n$i/run/heal" && {
        echo "format=mortar-heal-split-brain 1"
        echo "brick=$B/n$i"
        echo "count=$#"
        for f in "$@"; do echo "gfid=$(gfid_of "$f")"; done
    } > "$T/n$i/run/heal/sp.split-brain"
}
indexed() {
    [ -e "$B/n$1/.mortar/index/xattrop/$(gfid_of "$2")" ] && echo Y ||
        echo N
}
same() {
    cmp -s "$B/n2/$1" "$B/n3/$1" && echo ok || echo differ
}
ncli2() {
    ncli "$@" 2>&1
}
resolve() {
    ncli 1 volume heal sp split-brain source-brick "$H2:$B/n2" \
        > "$T/$1.out" 2>&1
    echo $? > "$T/$1.rc"
}

TEST ncli 1 volume create sp replica 2 "$H2:$B/n2" "$H3:$B/n3" force
TEST ncli 1 volume set sp cluster.quorum-type none
TEST ncli 1 volume set sp cluster.self-heal-daemon off
TEST ncli 1 volume set sp cluster.data-self-heal off
TEST ncli 1 volume set sp cluster.metadata-self-heal off
TEST ncli 1 volume set sp cluster.entry-self-heal off
TEST ncli 1 volume start sp
M0="$T/m0"
TEST node_mount 1 "$H1:/sp" "$M0"
TEST wait_for_mount "$M0"
FILES="f1 f2 f3 f4 f5"
TEST sh -c "for f in $FILES p2 p3; do echo orig > '$M0/'\$f; done"

# Node 3's brick misses the first rewrite, node 2's the second.
TEST down 3
TEST sh -c "for f in $FILES; do echo from-n2-\$f > '$M0/'\$f; done"
TEST up 3
EXPECT_WITHIN 60 "Y" reaches 3 p3
TEST down 2
TEST sh -c "for f in $FILES; do echo from-n3-\$f > '$M0/'\$f; done"
TEST up 2
EXPECT_WITHIN 60 "Y" reaches 2 p2
for f in $FILES; do
    EXPECT "from-n2-$f" cat "$B/n2/$f"
    EXPECT "from-n3-$f" cat "$B/n3/$f"
    EXPECT "Y" indexed 2 "$f"
    EXPECT "Y" indexed 3 "$f"
done
TEST umount_client "$M0"

TEST list 2 f1 f2
TEST list 3 f2 f3
TEST resolve all
EXPECT "0" cat "$T/all.rc"
EXPECT "3" grep -c '^Healed gfid:' "$T/all.out"
for f in f1 f2 f3; do
    EXPECT "1" grep -c "^Healed gfid:$(gfid_of "$f")\.\$" "$T/all.out"
    EXPECT "ok" same "$f"
    EXPECT "from-n2-$f" cat "$B/n3/$f"
    EXPECT "N" indexed 2 "$f"
done
EXPECT "1" grep -c "^Number of healed entries: 3$" "$T/all.out"
EXPECT "0" grep -c "not gathered" "$T/all.out"
EXPECT "differ" same f4

# Node 3's mortard gone; its brick still serves.
TEST list 2 f4
TEST list 3 f5
M3=$(mortard_of 3)
TEST kill -TERM "$M3"
EXPECT_WITHIN 20 "N" proc_alive "$M3"
TEST resolve down
EXPECT "1" grep -c "^Split-brain list of brick $H3:$B/n3 not gathered: \
Transport endpoint is not connected$" "$T/down.out"
EXPECT "1" grep -c "^Healed gfid:$(gfid_of f4)\.\$" "$T/down.out"
EXPECT "1" grep -c "^Number of healed entries: 1$" "$T/down.out"
EXPECT "1" grep -c "^1 of 1 entries healed; split-brain lists not gathered \
from 1 of the set's 2 bricks$" "$T/down.out"
TEST test "$(cat "$T/down.rc")" -ne 0
EXPECT "ok" same f4
EXPECT "from-n2-f4" cat "$B/n3/f4"
EXPECT "differ" same f5
EXPECT_MATCH '"opErrstr": *"0 of 0 entries healed; split-brain lists not' \
    ncli2 1 --json volume heal sp split-brain source-brick "$H2:$B/n2"

# Bad input: a brick not in the volume.
EXPECT_MATCH "No such brick available in the volume" \
    ncli2 1 volume heal sp split-brain source-brick "$H1:$B/n2"
TEST node_mortard 3
EXPECT_WITHIN 15 "2" connected_peers 1
TEST ncli 1 volume stop sp
