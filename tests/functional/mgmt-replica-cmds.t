#!/usr/bin/env bash
# mortard's side of replicated volumes, without mounting: create of a
# 1 x 3 (Replicate) and a 2 x 3 (Distributed-Replicate) volume with info,
# --xml and --json, the client volfile (replicate over each set's
# clients, distribute over the sets), cluster.quorum-* set and reset in
# every replicate; every bad input (replica 1, a brick count that is not
# a multiple, two bricks of a set on one server without force, arbiter
# other than replica 3 arbiter 1,
# thin-arbiter, add-brick of a partial set or another count, remove-brick
# of part of a set) fails with its message and leaves the store and the
# output of volume list/info unchanged; replica 2 prints GlusterFS's
# split-brain warning; add-brick of a whole set and remove-brick of one.
# The bricks that must pass the same-server check without force live on
# a tmpfs (not the root file system).
# TIMEOUT: 300
# REQUIRES: root
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2 3 4 5 6 7 8; do
    track_brick r1 brick$i
    track_brick r2 brick$i
done

# bl DIR NAME...: the bricks 127.0.0.1:DIR/NAME for each NAME.
bl() {
    local d="$1" n
    shift
    for n in "$@"; do printf '127.0.0.1:%s/%s\n' "$d" "$n"; done
}

# subvols VOLFILE VOLUME: the subvolumes line of VOLUME in VOLFILE.
subvols() {
    sed -n "/^volume $2\$/,/end-volume/p" "$1" | grep subvolumes
}

# brick_lines VOL: the BrickN lines of volume info on one line.
brick_lines() {
    mcli volume info "$1" | grep '^Brick[0-9]' | tr '\n' ' ' | sed 's/ $//'
}

# json_info VOL PYEXPR: PYEXPR holds for v, VOL's volume info in JSON.
json_info() {
    mcli --json volume info "$1" | python3 -c "import json, sys
v = json.load(sys.stdin)['volInfo']['volumes'][0]
assert ($2), v"
}

# get_value VOL KEY: the value volume get shows.
get_value() {
    mcli volume get "$1" "$2" | tail -n 1 | awk '{ print $2 }'
}

# info_line VOL KEY: the "KEY: value" line of volume info.
info_line() {
    mcli volume info "$1" | grep "^$2: "
}

TEST start_mortard

# 1 x 3.
TEST mcli volume create r1 replica 3 $(bl "$B" a0 a1 a2) force
EXPECT "Type: Replicate" info_line r1 "Type"
EXPECT "Number of Bricks: 1 x 3 = 3" info_line r1 "Number of Bricks"
EXPECT "Brick1: $(bl "$B" a0) Brick2: $(bl "$B" a1) Brick3: $(bl "$B" a2)" \
    brick_lines r1
EXPECT_MATCH "<typeStr>Replicate</typeStr>" mcli --xml volume info r1
EXPECT_MATCH "<type>2</type>" mcli --xml volume info r1
EXPECT_MATCH "<replicaCount>3</replicaCount>" mcli --xml volume info r1
EXPECT_MATCH "<distCount>3</distCount>" mcli --xml volume info r1
EXPECT_MATCH "<brickCount>3</brickCount>" mcli --xml volume info r1
TEST json_info r1 "v['typeStr'] == 'Replicate' and v['replicaCount'] == '3'
    and [b['replicaSet'] for b in v['bricks']] == ['0'] * 3"
CV1="$T/state/vols/r1/client.vol"
EXPECT "3" grep -c "type protocol/client" "$CV1"
EXPECT "1" grep -c "type cluster/replicate" "$CV1"
EXPECT "0" grep -c "type cluster/distribute" "$CV1"
EXPECT "    subvolumes r1-brick0 r1-brick1 r1-brick2" \
    subvols "$CV1" r1-replicate-0
EXPECT "type=replicate" grep "^type=" "$T/state/vols/r1/info"
EXPECT "replica-count=3" grep "^replica-count=" "$T/state/vols/r1/info"

# 2 x 3: sets in the order given.
TEST mcli volume create r2 replica 3 $(bl "$B" b0 b1 b2 b3 b4 b5) force
EXPECT "Type: Distributed-Replicate" info_line r2 "Type"
EXPECT "Number of Bricks: 2 x 3 = 6" info_line r2 "Number of Bricks"
EXPECT_MATCH "<typeStr>Distributed-Replicate</typeStr>" \
    mcli --xml volume info r2
EXPECT_MATCH "<type>7</type>" mcli --xml volume info r2
EXPECT_MATCH "<replicaCount>3</replicaCount>" mcli --xml volume info r2
TEST json_info r2 "v['typeStr'] == 'Distributed-Replicate'
    and v['brickCount'] == '6'
    and [b['replicaSet'] for b in v['bricks']] == list('000111')
    and [b['path'] for b in v['bricks']] == ['$B/b%d' % i for i in range(6)]"
CV2="$T/state/vols/r2/client.vol"
EXPECT "2" grep -c "type cluster/replicate" "$CV2"
EXPECT "    subvolumes r2-brick3 r2-brick4 r2-brick5" \
    subvols "$CV2" r2-replicate-1
EXPECT "    subvolumes r2-replicate-0 r2-replicate-1" \
    subvols "$CV2" r2-dht

# Replicate's options through their GlusterFS keys, in every replicate.
TEST mcli volume set r2 cluster.quorum-type fixed
TEST mcli volume set r2 cluster.quorum-count 3
EXPECT "2" grep -c "option quorum-type fixed" "$CV2"
EXPECT "2" grep -c "option quorum-count 3" "$CV2"
EXPECT "replicate.quorum-type: fixed" info_line r2 replicate.quorum-type
EXPECT "fixed" get_value r2 cluster.quorum-type
TEST mcli volume set r2 cluster.eager-lock off
TEST mcli volume reset r2 cluster.eager-lock
EXPECT "0" grep -c "eager-lock" "$CV2"
TEST mcli volume reset r2
EXPECT "0" grep -c "quorum" "$CV2"

# Bad input: exit code, one line, store and volume list/info unchanged
# (the peer monitor's record settles up to 2 s after a change).
settled_sum() {
    local a b
    b=$(store_sum)
    while :; do
        sleep 2.5
        a=$(store_sum)
        [ "$a" = "$b" ] && break
        b=$a
    done
    echo "$a"
}
SUM=$(settled_sum)
mcli volume list > "$T/list.0"
mcli volume info > "$T/info.0"
check_fail() {
    local want="$1"
    shift
    mcli "$@" > "$T/f.out" 2> "$T/f.err"
    local rc=$?
    [ "$rc" = "$want" ] && [ "$(wc -l < "$T/f.err")" = 1 ] &&
        [ "$(store_sum)" = "$SUM" ] &&
        mcli volume list | cmp -s - "$T/list.0" &&
        mcli volume info | cmp -s - "$T/info.0"
}
TEST check_fail 2 volume create x replica 1 127.0.0.1:$B/x0 force
EXPECT "replica count should be greater than 1" cat "$T/f.err"
TEST check_fail 2 volume create x replica 3 $(bl "$B" x0 x1) force
EXPECT "number of bricks is not a multiple of replica count" cat "$T/f.err"
TEST check_fail 2 volume create x replica 17 127.0.0.1:$B/x0 force
EXPECT_MATCH "more than 16" cat "$T/f.err"
TEST check_fail 2 volume create x replica three 127.0.0.1:$B/x0 force
# (replica 3 arbiter 1 works: mgmt-arbiter.t)
TEST check_fail 1 volume create x replica 2 arbiter 1 $(bl "$B" x0 x1) force
EXPECT_MATCH "replica count must be 3 and arbiter count must be 1" \
    cat "$T/f.err"
TEST check_fail 1 volume create x replica 2 thin-arbiter 1 \
    $(bl "$B" x0 x1 x2) force
EXPECT_MATCH "thin-arbiter volumes are not supported yet" cat "$T/f.err"
TEST check_fail 1 volume create x disperse 3 $(bl "$B" x0 x1 x2) force
# Two bricks of a set on one server: refused without force (the bricks
# are off the root file system so that nothing else needs force).
FS="$T/fs"
TEST mkdir -p "$FS"
TEST mount -t tmpfs -o size=16m mortar-test-rep "$FS"
TEST check_fail 1 volume create x replica 3 $(bl "$FS" x0 x1 x2)
SAME="Multiple bricks of a replicate volume are present on the same server."
SAME+=" This setup is not optimal. Bricks should be on different nodes to"
SAME+=" have best fault tolerant configuration. Use 'force' at the end of"
SAME+=" the command if you want to override this behavior."
EXPECT_MATCH "$SAME" cat "$T/f.err"
# localhost and 127.0.0.1 are one server.
TEST check_fail 1 volume create x replica 2 127.0.0.1:$FS/x0 localhost:$FS/x1
EXPECT_MATCH "Multiple bricks of a replicate volume" cat "$T/f.err"
TEST [ ! -e "$FS/x0" ]
# add-brick: a partial set, another count, a raised count.
TEST check_fail 1 volume add-brick r2 127.0.0.1:$B/b6 127.0.0.1:$B/b7 force
EXPECT_MATCH "Incorrect number of bricks supplied 2 with count 3" cat "$T/f.err"
TEST check_fail 1 volume add-brick r2 replica 2 $(bl "$B" b6 b7) force
EXPECT_MATCH "Incorrect replica count \(2\) supplied. Volume already has \
\(3\)" \
    cat "$T/f.err"
TEST check_fail 1 volume add-brick r2 replica 4 $(bl "$B" b6 b7 b8 b9) force
EXPECT_MATCH "Incorrect number of bricks \(4\) supplied for replica count \
\(4\): volume r2 has 2 replica sets" cat "$T/f.err"
TEST check_fail 1 volume add-brick r2 replica 3 arbiter 1 \
    $(bl "$B" b6 b7 b8) force
EXPECT_MATCH "no arbiter bricks: only a replica 2 volume becomes an \
arbiter volume" cat "$T/f.err"
TEST check_fail 1 volume add-brick r2 $(bl "$FS" n0 n1 n2)
EXPECT_MATCH "Multiple bricks of a replicate volume" cat "$T/f.err"
# remove-brick: part of a set, bricks of two sets, another count.
TEST check_fail 1 volume remove-brick r2 127.0.0.1:$B/b3 127.0.0.1:$B/b4 start
EXPECT_MATCH "Remove brick incorrect brick count of 2 for replica 3" \
    cat "$T/f.err"
TEST check_fail 1 volume remove-brick r2 $(bl "$B" b2 b3 b4) start
EXPECT "volume remove-brick start: failed: Bricks not from same subvol for \
replica" cat "$T/f.err"
TEST check_fail 1 volume remove-brick r2 replica 2 $(bl "$B" b3 b4 b5) start
EXPECT_MATCH "Migration of data is not needed when reducing replica count" \
    cat "$T/f.err"
TEST check_fail 1 volume remove-brick r1 $(bl "$B" a0 a1 a2) force
EXPECT_MATCH "Deleting all the bricks" cat "$T/f.err"
TEST check_fail 1 volume rebalance r1 start
TEST check_fail 1 volume set r1 cluster.quorum-count 4
EXPECT_MATCH "quorum-count 4 is more than the replica count 3" \
    cat "$T/f.err"

# replica 2: GlusterFS's warning, printed (no question in script mode).
TEST mcli volume create r3 replica 2 127.0.0.1:$B/c0 127.0.0.1:$B/c1 force
mcli volume create r4 replica 2 $(bl "$B" d0 d1) force > "$T/r4.out"
W2="Replica 2 volumes are prone to split-brain. Use Arbiter or Replica 3"
W2+=" to avoid this. See: http://docs.gluster.org/en/latest/Administrator"
W2+="%20Guide/Split%20brain%20and%20ways%20to%20deal%20with%20it/."
EXPECT "$W2" head -n 1 "$T/r4.out"
EXPECT "volume create: r4: success: please start the volume to access data" \
    tail -n 1 "$T/r4.out"
EXPECT "Number of Bricks: 1 x 2 = 2" info_line r4 "Number of Bricks"
TEST mcli volume delete r3
TEST mcli volume delete r4

# add-brick of a whole set to the started volume (the new set's bricks
# run, distribute spans three sets), then remove-brick of one set.
TEST mcli volume start r2
TEST mcli volume add-brick r2 replica 3 $(bl "$B" b6 b7 b8) force
EXPECT "Number of Bricks: 3 x 3 = 9" info_line r2 "Number of Bricks"
for i in 6 7 8; do
    EXPECT_WITHIN 20 "Y" sh -c \
        "[ -d /proc/\$(cat '$T/run/r2-brick$i.pid' 2>/dev/null) ] && echo Y"
done
EXPECT "    subvolumes r2-replicate-0 r2-replicate-1 r2-replicate-2" \
    subvols "$CV2" r2-dht
TEST mcli volume remove-brick r2 $(bl "$B" b3 b4 b5) force
EXPECT "Number of Bricks: 2 x 3 = 6" info_line r2 "Number of Bricks"
# The sets keep their names: distribute's link files name them.
EXPECT "    subvolumes r2-replicate-0 r2-replicate-2" \
    subvols "$CV2" r2-dht
EXPECT "    subvolumes r2-brick6 r2-brick7 r2-brick8" \
    subvols "$CV2" r2-replicate-2
# ... and so does a restarted mortard, which reads them from the store.
MPID=$(mortard_pid)
TEST kill -9 "$MPID"
EXPECT_WITHIN 20 "N" proc_alive "$MPID"
TEST start_mortard
EXPECT "Number of Bricks: 2 x 3 = 6" info_line r2 "Number of Bricks"
EXPECT "    subvolumes r2-replicate-0 r2-replicate-2" \
    subvols "$CV2" r2-dht
TEST mcli volume stop r2
