#!/usr/bin/env bash
# volume reset-brick (mortard/reset-brick.c) on a 1 x 3 replicated
# volume mounted with `mount -t mortar`:
#  - start: GlusterFS's success message, the brick's process stops and
#    stays down (volume status shows it offline, `volume start force`
#    does not start it), the mount reads and writes on;
#  - commit of the brick with its old data: refused without force
#    (GlusterFS's rule), the brick wiped, then commit: the directory is
#    made and stamped, the brick runs, and the self-heal daemon alone
#    makes it identical to the others (every name, mode, size, content
#    and GFID, written before or during the reset);
#  - commit force of a brick that kept its data: it comes back and heal
#    brings it up to date;
#  - bad input (other forms, an unknown volume or brick, a plain
#    distribute or stopped volume, commit without start or naming
#    another brick, start twice): its error, and the store unchanged.
# Fails without reset-brick: the command is unknown.
# TIMEOUT: 360
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2; do track_brick rr brick$i; done
track_brick pv brick0
_T_PIDFILES+=("$T/run/heal/rr.pid")

mcli2() {
    mcli "$@" 2>&1
}
mount_differs() {
    mount_sums "$M0" | diff "$T/expect" -
}
heal_daemon_up() {
    p=$(cat "$T/run/heal/$1.pid" 2> /dev/null) && [ -n "$p" ] &&
        kill -0 "$p" 2> /dev/null && echo Y
}
# online BRICKDIR: the Online column of volume status rr for the brick.
online() {
    mcli volume status rr | awk -v b="Brick 127.0.0.1:$1" \
        'index($0, b " ") == 1 { print $(NF - 1) }'
}

TEST start_mortard
TEST mkdir -p "$B"
TEST mcli volume create rr replica 3 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 force
TEST mcli volume start rr
EXPECT_WITHIN 20 "Y" heal_daemon_up rr
TEST mount_mortar 127.0.0.1:/rr "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST mkdir -p "$M0/d1/d2" "$M0/empty"
TEST chmod 750 "$M0/d1/d2"
TEST sh -c "head -c 400000 /dev/urandom > '$M0/d1/mid'"
TEST truncate -s 4M "$M0/sparse"
TEST ln -s d1/mid "$M0/link"
TEST sh -c "for i in \$(seq 1 30); do echo f\$i > '$M0/d1/d2/f'\$i; done"
EXPECT_WITHIN 30 "0" heal_entries rr

# Bad input: its error, the store unchanged.
TEST mkdir -p "$B/plain"
TEST mcli volume create pv 127.0.0.1:$B/plain force
TEST mcli volume create sv replica 2 127.0.0.1:$B/s0 127.0.0.1:$B/s1 force
SUM=$(store_sum)
EXPECT_MATCH "^Usage: volume reset-brick <VOLNAME> <SOURCE-BRICK> \
\{\{start\} \| \{<NEW-BRICK> commit\}\}" mcli2 volume reset-brick rr \
    127.0.0.1:$B/r2
EXPECT_MATCH "^Usage: volume reset-brick" mcli2 volume reset-brick rr \
    127.0.0.1:$B/r2 stop
EXPECT_MATCH "^Usage: volume reset-brick" mcli2 volume reset-brick rr \
    127.0.0.1:$B/r2 127.0.0.1:$B/r2 commit now
EXPECT_MATCH "failed: Volume nov does not exist" mcli2 volume reset-brick \
    nov 127.0.0.1:$B/r2 start
EXPECT_MATCH "failed: reset-brick is not permitted on distribute only \
volumes" mcli2 volume reset-brick pv 127.0.0.1:$B/plain start
EXPECT_MATCH "failed: volume: sv is not started" mcli2 volume reset-brick \
    sv 127.0.0.1:$B/s0 start
EXPECT_MATCH "failed: brick: 127.0.0.1:$B/r9 does not exist in volume: rr" \
    mcli2 volume reset-brick rr 127.0.0.1:$B/r9 start
EXPECT_MATCH "failed: brick 127.0.0.1:$B/r2 was not stopped for a reset: \
run 'volume reset-brick rr 127.0.0.1:$B/r2 start' first" mcli2 volume \
    reset-brick rr 127.0.0.1:$B/r2 127.0.0.1:$B/r2 commit force
EXPECT_MATCH "failed: When destination brick is new, please use volume \
replace-brick" mcli2 volume reset-brick rr 127.0.0.1:$B/r2 \
    127.0.0.1:$B/new commit
EXPECT "$SUM" store_sum
EXPECT "Y" online "$B/r2"

# start: the brick stops and stays down.
P2=$(cat "$T/run/rr-brick2.pid")
EXPECT "volume reset-brick: success: reset-brick start operation \
successful" mcli volume reset-brick rr 127.0.0.1:$B/r2 start
EXPECT_WITHIN 20 "N" proc_alive "$P2"
EXPECT "N" online "$B/r2"
TEST mcli volume start rr force
EXPECT "N" online "$B/r2"
SUM=$(store_sum)
EXPECT_MATCH "failed: brick 127.0.0.1:$B/r2 is already stopped by \
reset-brick start" mcli2 volume reset-brick rr 127.0.0.1:$B/r2 start
# Its directory still has the volume id: plain commit is refused.
EXPECT_MATCH "failed: 127.0.0.1:$B/r2 still has the volume id of rr \
\(its old data\): use 'commit force'" mcli2 volume reset-brick rr \
    127.0.0.1:$B/r2 127.0.0.1:$B/r2 commit
EXPECT "$SUM" store_sum

# The mount goes on; then the disk is "replaced": the directory is gone.
TEST sh -c "echo during > '$M0/during'"
TEST sh -c "echo more >> '$M0/d1/d2/f7'"
TEST rm -rf "$B/r2"
mount_sums "$M0" > "$T/expect"
EXPECT "volume reset-brick: success: reset-brick commit operation \
successful" mcli volume reset-brick rr 127.0.0.1:$B/r2 127.0.0.1:$B/r2 \
    commit
TEST test -d "$B/r2"
TEST test -n "$(getfattr --absolute-names --only-values -n \
    trusted.mortar.volume-id "$B/r2" 2> /dev/null)"
EXPECT_WITHIN 20 "Y" online "$B/r2"
EXPECT "2" grep -c "the root of .* blames rr-brick2" "$T/log/mortard.log"
EXPECT_WITHIN 180 "0" heal_entries rr
EXPECT_WITHIN 60 "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"
EXPECT "0" rep_records "$B/r2"
EXPECT "during" cat "$B/r2/during"
EXPECT "" mount_differs

# commit force: the brick keeps its data and catches up through heal.
EXPECT_MATCH "reset-brick start operation successful" mcli volume \
    reset-brick rr 127.0.0.1:$B/r1 start
EXPECT_WITHIN 20 "N" online "$B/r1"
TEST sh -c "echo while-r1 > '$M0/while-r1'"
TEST rm -f "$M0/d1/d2/f1"
mount_sums "$M0" > "$T/expect"
EXPECT_MATCH "reset-brick commit force operation successful" mcli volume \
    reset-brick rr 127.0.0.1:$B/r1 127.0.0.1:$B/r1 commit force
EXPECT_WITHIN 20 "Y" online "$B/r1"
EXPECT_WITHIN 180 "0" heal_entries rr
EXPECT_WITHIN 60 "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"
EXPECT "while-r1" cat "$B/r1/while-r1"
TEST test ! -e "$B/r1/d1/d2/f1"
EXPECT "" mount_differs
EXPECT_MATCH "<volResetBrick><volname>rr</volname>" sh -c "'$MDCTL' -s \
'$T/run/mortard.sock' --xml volume reset-brick rr 127.0.0.1:$B/r0 start |
    tr -d ' \n'"
EXPECT_MATCH "reset-brick commit force operation successful" mcli volume \
    reset-brick rr 127.0.0.1:$B/r0 127.0.0.1:$B/r0 commit force
EXPECT_WITHIN 20 "Y" online "$B/r0"
TEST umount_client "$M0"
