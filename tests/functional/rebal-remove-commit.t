#!/usr/bin/env bash
# remove-brick commit never drops files the migration left behind: a
# 2-brick volume through mortard; b0, the only brick left, is over
# cluster.min-free-disk (100%), so the remove-brick migration of b1 skips
# b1's files for space. The migration completes with skipped files; `commit` is then refused with one line
# naming the count and 'commit force', and changes nothing (store, brick
# process, the file on b1 and through the mount). `commit force` then
# removes the brick knowingly (data-loss warning).
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

if ! "$MORTARFSD" --help 2>&1 | grep -q -- "--rebalance"; then
    echo "1..0 # SKIP mortarfsd has no --rebalance"
    exit 0
fi

B="$T/bricks"
RB="$T/run/rebalance"
for i in 0 1; do track_brick rc brick$i; done
_T_PIDFILES+=("$RB/rc.pid" "$RB/rc.remove.pid")

# status column of the localhost row of a remove-brick status
rebal_state() {
    mcli volume remove-brick rc "127.0.0.1:$B/b1" status |
        awk '$1 == "localhost" { s = $7; if ($7 == "in") s = "in progress";
                                 print s }'
}
# the store once mortard's peer monitor stopped rewriting it
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
# the name of a data file of d/ on brick b1 (the first one)
on_b1() {
    (cd "$B/b1/d" 2> /dev/null && find . -maxdepth 1 -type f \
        ! -perm -1000 -name 'f*' -printf '%f\n' | sort | head -n 1)
}

TEST start_mortard
TEST mcli volume create rc 127.0.0.1:$B/b0 127.0.0.1:$B/b1 force
TEST mcli volume start rc
for i in 0 1; do
    EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume status rc | awk '\$2 == \"127.0.0.1:$B/b$i\" { print \$4 }'"
done

M1="$T/m1"
TEST mount_volume rc "$M1"
TEST mkdir "$M1/d"
for i in $(seq 0 19); do
    echo "file $i" > "$M1/d/f$i" || break
done
F=$(on_b1)
EXPECT_MATCH "^f[0-9]+$" echo "$F"
TEST mcli volume set rc cluster.min-free-disk 100%

TEST mcli volume remove-brick rc 127.0.0.1:$B/b1 start
EXPECT_WITHIN 120 "completed" rebal_state
# b1's files (F among them) stayed there, skipped for space
TEST [ "$(state_value "$RB/rc.remove.state" skipped_files)" -ge 1 ]
EXPECT "0" state_value "$RB/rc.remove.state" failed_files
N=$(state_value "$RB/rc.remove.state" skipped_files)
TEST [ -f "$B/b1/d/$F" ]

SUM=$(settled_sum)
P1=$(cat "$T/run/rc-brick1.pid")
mcli volume remove-brick rc 127.0.0.1:$B/b1 commit > "$T/c.out" 2> "$T/c.err"
EXPECT "1" echo $?
EXPECT "1" sh -c "wc -l < '$T/c.err'"
EXPECT_MATCH "left $N files? on the bricks being removed \\($N skipped.*'commit force'" cat "$T/c.err"
EXPECT "$SUM" store_sum
EXPECT_MATCH "Number of Bricks: 2" mcli volume info rc
EXPECT "    option decommissioned-bricks rc-brick1" grep decommissioned "$T/state/vols/rc/client.vol"
EXPECT "Y" proc_alive "$P1"
TEST [ -f "$B/b1/d/$F" ]
EXPECT "file ${F#f}" cat "$M1/d/$F"
# the status still shows the skipped files
EXPECT "$N" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume remove-brick rc 127.0.0.1:$B/b1 status | awk '\$1 == \"localhost\" { print \$6 }'"

# 'commit force': the loss taken knowingly.
EXPECT_MATCH "data loss" mcli volume remove-brick rc 127.0.0.1:$B/b1 commit force
EXPECT_MATCH "Number of Bricks: 1" mcli volume info rc
EXPECT_WITHIN 10 "N" proc_alive "$P1"
EXPECT "0" grep -c "rc-brick1" "$T/state/vols/rc/client.vol"
