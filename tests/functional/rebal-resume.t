#!/usr/bin/env bash
# A rebalance killed with -9 mid-way (a marker may be left on a
# destination, a freeze held on a source) is started again: it resumes
# after its cursor with its counters and completes; every checksum
# matches, the count is the same, no file is data on two bricks, no link
# file or marker is left. SIGTERM stops a run cleanly (status stopped,
# exit 0) and the next run completes too. A fix-layout stopped mid-way
# is not resumed by a rebalance, nor a run stopped before a brick was
# added by the run over the new set: those start afresh and leave
# nothing to move.
# TIMEOUT: 900
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

NFILES=${REBAL_NFILES:-500}

specials() {
    for b in b0 b1 b2 b3; do brick_special_files "$T/bricks/$b"; done
}
count_mount() {
    find "$M0" -type f | wc -l
}
# moved_at_least FILE N: Y once the state file counts N moved files.
moved_at_least() {
    local v
    v="$(state_value "$1" moved_files)"
    [ -n "$v" ] && [ "$v" -ge "$2" ] && echo Y
}

for i in 0 1 2 3; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
done
TEST start_brick b0 "$T/bricks/b0" "$P0"
TEST start_brick b1 "$T/bricks/b1" "$P1"
TEST start_brick b2 "$T/bricks/b2" "$P2"
TEST start_brick b3 "$T/bricks/b3" "$P3"
dist_volfile "b0:$P0" "b1:$P1" > "$T/vol/dist2.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/dist3.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" "b3:$P3" > "$T/vol/dist4.vol"

TEST mount_volfile "$T/vol/dist2.vol" "$M0"
TEST rebal_tool gen "$M0" "$NFILES" "$T/sums"
TEST umount_client "$M0"

# 2 -> 3, one file at a time, killed -9 once some files have moved.
S="$T/rebal.state"
# 20 ms a name: on a fast machine a lazy run of these files could end
# between two writes of its state file, before the kill.
export MORTAR_REBAL_DELAY_MS=20
TEST start_fsd rebal --rebalance --volfile "$T/vol/dist3.vol" \
    --rebalance-state "$S" --throttle lazy
unset MORTAR_REBAL_DELAY_MS
EXPECT_WITHIN 300 "Y" moved_at_least "$S" 5
TEST kill -KILL "$(fsd_pid rebal)"
EXPECT_WITHIN 20 "N" is_alive "$(fsd_pid rebal)"
EXPECT "running" state_value "$S" status
MOVED_BEFORE="$(state_value "$S" moved_files)"
CURSOR_BEFORE="$(state_value "$S" cursor)"

TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist3.vol" \
    --rebalance-state "$S" --throttle normal -N --log-file "$T/log/rebal2.log"
EXPECT "completed" state_value "$S" status
EXPECT "0" state_value "$S" failed_files
# Counters are kept across the restart (never reset, never doubled).
EXPECT "Y" moved_at_least "$S" "$MOVED_BEFORE"
if [ -n "$CURSOR_BEFORE" ]; then
    EXPECT_MATCH "resuming after '$CURSOR_BEFORE'" cat "$T/log/rebal2.log"
fi

TEST mount_volfile "$T/vol/dist3.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_mount
EXPECT "$NFILES" count_data b0 b1 b2
EXPECT "0" dup_data b0 b1 b2 b3
EXPECT "" specials
for b in b0 b1 b2; do
    EXPECT_MATCH "^[1-9][0-9]*$" count_data $b
done
TEST umount_client "$M0"

# 3 -> 4, stopped with SIGTERM: status stopped, exit 0; then completed.
# One file at a time, so that the run outlasts the polling before the
# signal: a refitted layout moves 205 of these 500 files here, and three
# at once finished them within the polls once in two runs.
S4="$T/rebal4.state"
export MORTAR_REBAL_DELAY_MS=20
TEST start_fsd rebal4 --rebalance --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$S4" --throttle lazy
unset MORTAR_REBAL_DELAY_MS
EXPECT_WITHIN 300 "Y" moved_at_least "$S4" 3
TEST stop_pid "$(fsd_pid rebal4)" TERM
EXPECT "stopped" state_value "$S4" status
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$S4" -N --log-file "$T/log/rebal4b.log"
EXPECT "completed" state_value "$S4" status
TEST mount_volfile "$T/vol/dist4.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_mount
EXPECT "$NFILES" count_data b0 b1 b2 b3
EXPECT "0" dup_data b0 b1 b2 b3
EXPECT "" specials

# A fix-layout stopped mid-way leaves a cursor that says nothing of files
# moved. A rebalance over its state file starts afresh instead of
# skipping the directories the fix-layout did, so a second rebalance
# right after finds nothing left to move.
TEST umount_client "$M0"
alloc_port P4
mkdir -p "$T/bricks/b4"
TEST start_brick b4 "$T/bricks/b4" "$P4"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" "b3:$P3" "b4:$P4" > "$T/vol/dist5.vol"
S5="$T/rebal5.state"
# 300 ms a directory (a fix-layout has no names to wait on): 8 of them.
export MORTAR_REBAL_DELAY_MS=300
TEST start_fsd fix5 --rebalance --fix-layout --volfile "$T/vol/dist5.vol" \
    --rebalance-state "$S5"
unset MORTAR_REBAL_DELAY_MS
EXPECT_WITHIN 60 "Y" sh -c "[ -n \"\$(sed -n 's/^cursor=//p' '$S5')\" ] && echo Y"
TEST stop_pid "$(fsd_pid fix5)" TERM
EXPECT "stopped" state_value "$S5" status
EXPECT "fix-layout" state_value "$S5" mode
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist5.vol" \
    --rebalance-state "$S5" -N --log-file "$T/log/rebal5.log"
EXPECT "completed" state_value "$S5" status
EXPECT "rebalance" state_value "$S5" mode
EXPECT_MATCH "was a fix-layout .*starting afresh" cat "$T/log/rebal5.log"
TEST ! grep -q "resuming after" "$T/log/rebal5.log"
S6="$T/rebal6.state"
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist5.vol" \
    --rebalance-state "$S6" -N --log-file "$T/log/rebal6.log"
EXPECT "completed" state_value "$S6" status
EXPECT "0" state_value "$S6" moved_files
TEST mount_volfile "$T/vol/dist5.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_data b0 b1 b2 b3 b4
EXPECT "0" dup_data b0 b1 b2 b3 b4
EXPECT_MATCH "^[1-9][0-9]*$" count_data b4
TEST umount_client "$M0"

# A rebalance stopped mid-way, then a brick added: the next run is over
# other subvolumes, so it starts afresh (the directories before the
# cursor need the new brick in their layouts), and a second run finds
# nothing left to move.
alloc_port P5
alloc_port P6
mkdir -p "$T/bricks/b5" "$T/bricks/b6"
TEST start_brick b5 "$T/bricks/b5" "$P5"
TEST start_brick b6 "$T/bricks/b6" "$P6"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" "b3:$P3" "b4:$P4" "b5:$P5" \
    > "$T/vol/dist6.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" "b3:$P3" "b4:$P4" "b5:$P5" \
    "b6:$P6" > "$T/vol/dist7.vol"
S7="$T/rebal7.state"
export MORTAR_REBAL_DELAY_MS=20
TEST start_fsd rebal6 --rebalance --volfile "$T/vol/dist6.vol" \
    --rebalance-state "$S7" --throttle lazy
unset MORTAR_REBAL_DELAY_MS
EXPECT_WITHIN 120 "Y" sh -c "[ -n \"\$(sed -n 's/^cursor=//p' '$S7')\" ] && echo Y"
TEST stop_pid "$(fsd_pid rebal6)" TERM
EXPECT "stopped" state_value "$S7" status
EXPECT_MATCH "^6:[0-9a-f]{16}$" state_value "$S7" subvols
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist7.vol" \
    --rebalance-state "$S7" -N --log-file "$T/log/rebal7.log"
EXPECT "completed" state_value "$S7" status
EXPECT_MATCH "over other subvolumes .*starting afresh" cat "$T/log/rebal7.log"
TEST ! grep -q "resuming after" "$T/log/rebal7.log"
S8="$T/rebal8.state"
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist7.vol" \
    --rebalance-state "$S8" -N --log-file "$T/log/rebal8.log"
EXPECT "completed" state_value "$S8" status
EXPECT "0" state_value "$S8" moved_files
TEST mount_volfile "$T/vol/dist7.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$NFILES" count_data b0 b1 b2 b3 b4 b5 b6
EXPECT "0" dup_data b0 b1 b2 b3 b4 b5 b6
EXPECT_MATCH "^[1-9][0-9]*$" count_data b6
