#!/usr/bin/env bash
# One migration per volume (doc/rebalance.md, "One migration per
# volume"): while a rebalance of a 2 -> 3 brick volume runs (held with
# SIGSTOP, after it wrote its state), a second rebalance process, with its
# own state file or with the first one's, exits 1 at once, says another
# migration holds the lock, and leaves both state files as they were.
# The first one killed -9 while it holds the lock: the bricks drop it with
# its connections, and a new run over the first state file resumes and
# completes: every checksum matches, no file is data on two bricks.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

NFILES=300

# Y once state file F names pid P as running
runs_as() {
    [ "$(state_value "$1" status)" = running ] &&
        [ "$(state_value "$1" pid)" = "$2" ] && echo Y
}
# second_run STATE LOG: a foreground rebalance; prints its exit status
second_run() {
    "$MORTARFSD" --rebalance --volfile "$T/vol/dist3.vol" \
        --rebalance-state "$1" -N --log-file "$2" > /dev/null 2>&1
    echo $?
}

for i in 0 1 2; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
done
TEST start_brick b0 "$T/bricks/b0" "$P0"
TEST start_brick b1 "$T/bricks/b1" "$P1"
TEST start_brick b2 "$T/bricks/b2" "$P2"
dist_volfile "b0:$P0" "b1:$P1" > "$T/vol/dist2.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/dist3.vol"

TEST mount_volfile "$T/vol/dist2.vol" "$M0"
TEST rebal_tool gen "$M0" "$NFILES" "$T/sums"
TEST umount_client "$M0"

# The first run, held once it holds the lock and wrote its state.
SA="$T/a.state"
TEST start_fsd rebalA --rebalance --volfile "$T/vol/dist3.vol" \
    --rebalance-state "$SA" --throttle lazy
PA=$(fsd_pid rebalA)
EXPECT_WITHIN 30 "Y" runs_as "$SA" "$PA"
TEST hold_pid "$PA"
cp "$SA" "$T/a.before"

# A second one with its own state file: refused, writes no state.
EXPECT "1" second_run "$T/b.state" "$T/log/b.log"
EXPECT_MATCH "another rebalance or remove-brick migration of this volume is running" cat "$T/log/b.log"
TEST [ ! -e "$T/b.state" ]
# With the first one's state file: refused, the file untouched.
EXPECT "1" second_run "$SA" "$T/log/b2.log"
EXPECT_MATCH "holds the migration lock on " cat "$T/log/b2.log"
TEST cmp "$SA" "$T/a.before"
EXPECT "Y" proc_alive "$PA"

# The holder killed -9: its lock goes with its connections; a run over
# its state file resumes and completes.
TEST kill -KILL "$PA"
_T_HELD=
EXPECT_WITHIN 20 "N" proc_alive "$PA"
EXPECT "running" state_value "$SA" status
EXPECT_WITHIN 20 "0" second_run "$SA" "$T/log/c.log"
EXPECT "completed" state_value "$SA" status
EXPECT "0" state_value "$SA" failed_files
EXPECT_MATCH "resuming after" cat "$T/log/c.log"

TEST mount_volfile "$T/vol/dist3.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_data b0 b1 b2
EXPECT "0" dup_data b0 b1 b2
EXPECT_MATCH "^[1-9][0-9]*$" count_data b2
TEST umount_client "$M0"
