#!/usr/bin/env bash
# A remove-brick migration ends with a check of the bricks being removed
# (mortarfsd/rebalance/rebalance.c, rb_verify_removed): whatever is still
# there once the crawl is done is a failed file, so the commit refuses
# instead of dropping it. A 2-brick volume through mortard, 20 files
# through the mount; the migration of b1 pauses before the check (test
# hook MORTAR_REBAL_FREEZE_PAUSE), and a file put on b1 meanwhile is what
# the crawl never saw. Then: every file made through the mount is on b0,
# the run ends failed, 1 failed file named in its error, `commit`
# is refused (nothing changed) and the file is still on b1.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

if ! "$MORTARFSD" --help 2>&1 | grep -q -- "--rebalance"; then
    echo "1..0 # SKIP mortarfsd has no --rebalance"
    exit 0
fi

B="$T/bricks"
RB="$T/run/rebalance"
for i in 0 1; do track_brick rv brick$i; done
_T_PIDFILES+=("$RB/rv.pid" "$RB/rv.remove.pid")

# status column of the localhost row of a remove-brick status
rebal_state() {
    mcli volume remove-brick rv "127.0.0.1:$B/b1" status |
        awk '$1 == "localhost" { s = $7; if ($7 == "in") s = "in progress";
                                 print s }'
}

MORTAR_REBAL_FREEZE_PAUSE="/@verify:4000" TEST start_mortard
TEST mcli volume create rv 127.0.0.1:$B/b0 127.0.0.1:$B/b1 force
TEST mcli volume start rv
for i in 0 1; do
    EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume status rv | awk '\$2 == \"127.0.0.1:$B/b$i\" { print \$4 }'"
done
M1="$T/m1"
TEST mount_volume rv "$M1"
TEST mkdir "$M1/d"
for i in $(seq 0 19); do
    echo "file $i" > "$M1/d/f$i" || break
done
TEST [ "$(ls "$B/b1/d" | grep -c '^f')" -ge 1 ]

TEST mcli volume remove-brick rv 127.0.0.1:$B/b1 start
EXPECT_WITHIN 60 "1" sh -c "grep -c \"pausing .* '/'\" '$T/log/rebalance/rv.remove.log'"
TEST sh -c "echo late > '$B/b1/d/late'"
EXPECT_WITHIN 120 "failed" rebal_state
EXPECT "1" state_value "$RB/rv.remove.state" failed_files
EXPECT_MATCH "/d/late is still on rv-brick1" state_value "$RB/rv.remove.state" error
# Every file made through the mount moved to b0.
EXPECT "20" sh -c "ls '$B/b0/d' | grep -c '^f'"
EXPECT "0" sh -c "find '$B/b1/d' -name 'f*' ! -perm -1000 -type f | wc -l"
TEST ! mcli volume remove-brick rv 127.0.0.1:$B/b1 commit
EXPECT_MATCH "Number of Bricks: 2" mcli volume info rv
TEST [ -f "$B/b1/d/late" ]
