#!/usr/bin/env bash
# Turning replica 2 into replica 3 arbiter 1 and back
# (mortard/replica-change.c), GlusterFS's grammar, on a 2 x 2 volume
# mounted with `mount -t mortar`:
#  - `add-brick VOL replica 3 arbiter 1 A0 A1` (one brick per set):
#    volume info says 2 x (2 + 1) = 6 and marks A0, A1 "(arbiter)", each
#    replicate has three children and arbiter-count 1, the arbiters'
#    bricks run features/arbiter; the self-heal daemon alone gives every
#    arbiter each name of its set (same GFID, mode) at size 0; the mount
#    reads the same throughout;
#  - with a data brick down the mount keeps writing (the other data
#    brick and the arbiter), and heal brings it back identical;
#  - `remove-brick VOL replica 2 A0 A1 force`: 2 x 2 = 4 again, no
#    arbiter-count, the arbiters' processes stop, their data stays, the
#    mount reads the same;
#  - refused, the store unchanged: a data brick of the arbiter volume
#    removed, replica 4 or replica 1 asked of it, one arbiter for two
#    sets, a replica 3 volume made an arbiter one.
# Fails without the conversion: add-brick replica 3 arbiter 1 is
# refused ("not supported yet").
# TIMEOUT: 400
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2 3 4 5; do track_brick ac brick$i; done
for i in 0 1 2; do track_brick r3 brick$i; done
_T_PIDFILES+=("$T/run/heal/ac.pid")

fill() {
    mkdir -p "$1/d1/d2" "$1/empty" &&
        echo small > "$1/small" &&
        head -c 300000 /dev/urandom > "$1/d1/mid" &&
        chmod 600 "$1/d1/mid" &&
        ln -s d1/mid "$1/link" &&
        for i in $(seq 1 30); do echo "f$i" > "$1/d1/d2/f$i" || return 1; done
}
gfid_of() {
    getfattr --absolute-names -h -n trusted.mortar.gfid -e hex "$1" \
        2> /dev/null | sed -n 's/.*=//p'
}
# names DIR: each object of a brick (not .mortar): path, type, mode, GFID.
names() {
    (cd "$1" && find . -mindepth 1 -path ./.mortar -prune -o -print |
        sort | while read -r p; do
            echo "$p $(stat -c '%F %a' "$p") $(gfid_of "$p")"
        done)
}
# arbiter_holds DATA ARBITER: "ok" when the arbiter has every name of
# the data brick with its GFID and mode, and no byte of data.
arbiter_holds() {
    local n
    [ "$(names "$1" | sed 's/ regular empty file / regular file /')" = \
        "$(names "$2" | sed 's/ regular empty file / regular file /')" ] ||
        { echo "names differ"; return; }
    n=$(find "$2" -path "$2/.mortar" -prune -o -type f -size +0 -print |
        wc -l)
    [ "$n" = 0 ] && echo ok || echo "$n files with data"
}
down() {
    brick_away ac "$2" "$B/$1"
}
up() {
    brick_back ac "$B/$1"
}

TEST start_mortard
TEST mkdir -p "$B"
TEST mcli volume create ac replica 2 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 127.0.0.1:$B/r3 force
TEST mcli volume start ac
EXPECT_WITHIN 20 "Y" heal_daemon_up ac
TEST mount_mortar 127.0.0.1:/ac "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST fill "$M0"
mount_sums "$M0" > "$T/expect"
TEST test -s "$T/expect"

# Bad input first: its error, the store unchanged.
TEST mcli volume create r3 replica 3 127.0.0.1:$B/t0 127.0.0.1:$B/t1 \
    127.0.0.1:$B/t2 force
SUM=$(store_sum)
EXPECT_MATCH "failed: volume r3 has no arbiter bricks: only a replica 2 \
volume becomes an arbiter volume" mcli2 volume add-brick r3 replica 3 \
    arbiter 1 127.0.0.1:$B/t3 127.0.0.1:$B/t4 127.0.0.1:$B/t5 force
EXPECT_MATCH "failed: Incorrect number of bricks \(4\) supplied for replica \
count \(3\): volume ac has 2 replica sets, each needs 1 new brick" mcli2 \
    volume add-brick ac replica 3 arbiter 1 127.0.0.1:$B/a0 \
    127.0.0.1:$B/a1 127.0.0.1:$B/a2 127.0.0.1:$B/a3 force
EXPECT "$SUM" store_sum
TEST test ! -e "$B/a0"

# ---- replica 2 -> replica 3 arbiter 1 --------------------------------
EXPECT "volume add-brick: success" mcli volume add-brick ac replica 3 \
    arbiter 1 127.0.0.1:$B/a0 127.0.0.1:$B/a1 force
EXPECT "Distributed-Replicate" info_field ac Type
EXPECT "2 x (2 + 1) = 6" info_field ac "Number of Bricks"
EXPECT "127.0.0.1:$B/a0 (arbiter)" info_field ac Brick3
EXPECT "127.0.0.1:$B/a1 (arbiter)" info_field ac Brick6
EXPECT_MATCH "<arbiterCount>1</arbiterCount>" mcli --xml volume info ac
EXPECT "ac-brick0 ac-brick1 ac-brick4" subvols_of ac ac-replicate-0
EXPECT "ac-brick2 ac-brick3 ac-brick5" subvols_of ac ac-replicate-1
EXPECT_MATCH "option arbiter-count 1" cat "$T/state/vols/ac/client.vol"
EXPECT_MATCH "features/arbiter" cat "$T/state/vols/ac/brick4.vol"
EXPECT_WITHIN 20 "Y" proc_alive "$(cat "$T/run/ac-brick4.pid")"
EXPECT_WITHIN 180 "0" heal_entries ac
EXPECT_WITHIN 60 "ok" arbiter_holds "$B/r0" "$B/a0"
EXPECT_WITHIN 60 "ok" arbiter_holds "$B/r2" "$B/a1"
EXPECT "" mount_differs

# A data brick down: the other one and the arbiter take the writes.
TEST down r1 brick1
TEST sh -c "echo while-down > '$M0/small'"
TEST sh -c "for i in \$(seq 31 40); do echo f\$i > '$M0/d1/d2/f'\$i; done"
EXPECT "while-down" cat "$M0/small"
TEST up r1
EXPECT_WITHIN 20 "Y" proc_alive "$(cat "$T/run/ac-brick1.pid")"
TEST mcli volume heal ac
EXPECT_WITHIN 180 "0" heal_entries ac
EXPECT_WITHIN 60 "ok" same_bricks "$B/r0" "$B/r1"
EXPECT_WITHIN 60 "ok" arbiter_holds "$B/r0" "$B/a0"
mount_sums "$M0" > "$T/expect"

# Bad input on the arbiter volume: its error, the store unchanged.
SUM=$(store_sum)
EXPECT_MATCH "failed: brick 127.0.0.1:$B/r0 is a data brick of arbiter \
volume ac: only the arbiter bricks" mcli2 volume remove-brick ac replica 2 \
    127.0.0.1:$B/r0 127.0.0.1:$B/a1 force
EXPECT_MATCH "failed: volume ac is an arbiter volume \(replica 3 arbiter \
1\): only its arbiter bricks can be removed, to replica 2" mcli2 volume \
    remove-brick ac replica 1 127.0.0.1:$B/r0 127.0.0.1:$B/a0 \
    127.0.0.1:$B/r2 127.0.0.1:$B/a1 force
EXPECT_MATCH "failed: volume ac is an arbiter volume: raising its replica \
count is not supported" mcli2 volume add-brick ac replica 4 \
    127.0.0.1:$B/x0 127.0.0.1:$B/x1 force
EXPECT_MATCH "need 2\(xN\) bricks for reducing replica count of the \
volume from 3 to 2" mcli2 volume remove-brick ac replica 2 127.0.0.1:$B/a0 \
    force
EXPECT "$SUM" store_sum

# ---- replica 3 arbiter 1 -> replica 2 --------------------------------
P4=$(cat "$T/run/ac-brick4.pid")
EXPECT "volume remove-brick force: success" mcli volume remove-brick ac \
    replica 2 127.0.0.1:$B/a0 127.0.0.1:$B/a1 force
EXPECT "2 x 2 = 4" info_field ac "Number of Bricks"
EXPECT "127.0.0.1:$B/r2" info_field ac Brick3
EXPECT_MATCH "<arbiterCount>0</arbiterCount>" mcli --xml volume info ac
EXPECT "ac-brick0 ac-brick1" subvols_of ac ac-replicate-0
TEST ! grep -q "arbiter-count" "$T/state/vols/ac/client.vol"
EXPECT_WITHIN 20 "N" proc_alive "$P4"
TEST test -d "$B/a0/d1/d2"
EXPECT_WITHIN 30 "" mount_differs
TEST sh -c "echo after > '$M0/small'"
EXPECT "after" cat "$B/r0/small" "$B/r2/small"
EXPECT "after" cat "$B/r1/small" "$B/r3/small"

TEST umount_client "$M0"
