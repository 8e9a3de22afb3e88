#!/usr/bin/env bash
# Live graph switch of a FUSE client when bricks are added (issue 4): the
# client mounts cluster/distribute over one protocol/client; SIGHUP with a
# volfile naming a second brick switches it to distribute over 2 clients,
# then over 3, without a remount. A file kept open through all of it by a
# helper process still reads and writes through its fd; files made before
# each switch stay visible; after a fix-layout of the root, files created
# land on the brick just added too; the old graphs are freed (one graph
# in the statedump).
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B1="$T/bricks/b1"
B2="$T/bricks/b2"
mkdir -p "$B1" "$B2"
alloc_port P0 && alloc_port P1 && alloc_port P2
TEST start_brick b0 "$B0" "$P0"
TEST start_brick b1 "$B1" "$P1"
TEST start_brick b2 "$B2" "$P2"

# dht_volfile N: distribute over the clients of bricks b0..b(N-1).
dht_volfile() {
    local i subs=""
    for ((i = 0; i < $1; i++)); do
        eval "client_volfile \$P$i b$i"
        echo
        subs+=" client-b$i"
    done
    printf 'volume vol-dht\n    type cluster/distribute\n'
    printf '    subvolumes%s\nend-volume\n' "$subs"
}

CVOL="$T/vol/client.vol"
CLOG="$T/log/client.log"
dht_volfile 1 > "$CVOL"
dht_volfile 2 > "$T/vol/dht2.vol"
dht_volfile 3 > "$T/vol/dht3.vol"
EXPECT "3" grep -c "type protocol/client" "$T/vol/dht3.vol"
_T_MOUNTS+=("$M0")
TEST start_fsd client --volfile "$CVOL" "$M0"
TEST wait_for_mount "$M0"
CPID=$(fsd_pid client)

fd_hold "$M0/held"

# mkfiles PREFIX: 40 small files in the volume's root.
mkfiles() {
    local i
    for ((i = 0; i < 40; i++)); do
        echo "$1 $i" > "$M0/$1-$i" || return 1
    done
}

# on_brick BRICKDIR PREFIX: how many PREFIX files the brick holds data of.
on_brick() {
    find "$1" -maxdepth 1 -type f -name "$2-*" -size +0 | wc -l
}

# The root's layout over every brick of the graph (the mortar.dht.fix-layout
# virtual xattr), so that new names hash to the new brick too.
fix_layout() {
    setfattr -n mortar.dht.fix-layout -v 1 "$M0"
}

n_names() {
    ls "$M0" | grep -c "^$1-"
}

EXPECT "ok" hold w 0 "one-brick"
TEST mkfiles one
EXPECT "40" on_brick "$B0" one

# 1 -> 2 protocol/client: the new brick b1.
TEST cp "$T/vol/dht2.vol" "$CVOL"
TEST kill -HUP "$CPID"
EXPECT_WITHIN 30 "1" grep -c 'without a remount' "$CLOG"
EXPECT_WITHIN 30 "1" sh -c "grep -c 'old graph [0-9]* freed' '$CLOG'"
EXPECT "one-brick" hold r 0 9
EXPECT "ok" hold w 0 "two-bricks"
EXPECT "two-bricks" hold r 0 10
EXPECT "40" n_names one
EXPECT "one 7" cat "$M0/one-7"
TEST fix_layout
TEST mkfiles two
EXPECT "40" n_names two
EXPECT "40" sh -c "echo \$(( $(on_brick "$B0" two) + $(on_brick "$B1" two) ))"
EXPECT_MATCH "^[1-9]" on_brick "$B1" two

# 2 -> 3: the new brick b2.
TEST cp "$T/vol/dht3.vol" "$CVOL"
TEST kill -HUP "$CPID"
EXPECT_WITHIN 30 "2" grep -c 'without a remount' "$CLOG"
EXPECT_WITHIN 30 "2" sh -c "grep -c 'old graph [0-9]* freed' '$CLOG'"
EXPECT "two-bricks" hold r 0 10
EXPECT "ok" hold w 0 "three-bricks"
EXPECT "40" n_names one
EXPECT "40" n_names two
EXPECT "two 13" cat "$M0/two-13"
TEST fix_layout
TEST mkfiles three
EXPECT "40" n_names three
EXPECT "40" sh -c "echo \$(( $(on_brick "$B0" three) + $(on_brick "$B1" three) \
    + $(on_brick "$B2" three) ))"
EXPECT_MATCH "^[1-9]" on_brick "$B2" three
EXPECT "three-bricks" hold r 0 12
EXPECT "Y" is_alive "$CPID"
EXPECT "1" sh -c "awk '\$5 == \"$M0\"' /proc/self/mountinfo | wc -l"
DUMP=$(statedump_of "$CPID")
count_graphs() {
    grep -c '^\[graph ' <<< "$DUMP"
}
EXPECT "1" count_graphs
EXPECT_MATCH "children=client-b0,client-b1,client-b2" echo "$DUMP"
fd_hold_end
