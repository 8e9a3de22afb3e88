#!/usr/bin/env bash
# A client renames, unlinks or links a file while the rebalance holds its
# migration freeze (doc/rebalance.md, "The freeze"): the source brick's
# features/locks holds those fops until the migration is done, then they
# run where the file is now. The migration pauses under the freeze
# (MORTAR_REBAL_FREEZE_PAUSE, a test hook) so the client's fop lands
# there every time. Before, a rename there left the committed copy under
# the old name and the source under the new one, marked migrated (ESTALE
# on every fop), and the data on two bricks.
# Files on b1 of 2 bricks, b1 decommissioned: each must move to b0; one
# run, one file at a time, in name order (abt, lnk, ren, unl). First a
# link made while the migration copies (before the freeze): the run
# leaves that file where it is, and the marker it made of the name's
# link file must be that link file again; the run's final check of b1
# finds it there, so that run ends failed (a commit would refuse).
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

pick() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 2 "$1" "$2"
}

# where NAME: the bricks holding d/NAME as data (size > 0), or "-".
where() {
    local b out=""
    for b in b0 b1; do
        [ -s "$T/bricks/$b/d/$1" ] && out="$out$b"
    done
    echo "${out:--}"
}

# frozen_log LOG NAME: Y once the rebalance paused under NAME's freeze.
frozen_log() {
    grep -q "pausing [0-9]* ms under the freeze of '$2'" "$1" 2> /dev/null \
        && echo Y || echo N
}

# bg_op RC CMD...: CMD in the background; its exit status lands in RC.
bg_op() {
    local rc="$1"
    shift
    bg_run sh -c '"$@"; echo $? > "$0"' "$rc" "$@"
}

# rc_of RC: the status bg_op left, or "running".
rc_of() {
    cat "$1" 2> /dev/null || echo running
}


alloc_port P0
alloc_port P1
mkdir -p "$T/bricks/b0" "$T/bricks/b1"
TEST start_brick b0 "$T/bricks/b0" "$P0"
TEST start_brick b1 "$T/bricks/b1" "$P1"
dist_volfile "b0:$P0" "b1:$P1" > "$T/vol/dist2.vol"
dist_volfile -d b1 "b0:$P0" "b1:$P1" > "$T/vol/remove.vol"
TEST mount_volfile "$T/vol/dist2.vol" "$M0"
TEST mkdir "$M0/d"
L=$(pick 1 lnk)
R=$(pick 1 ren)
U=$(pick 1 unl)
md5() { md5sum < "$1" | cut -d' ' -f1; }
for n in "$L" "$R" "$U"; do
    TEST sh -c "head -c 200000 /dev/urandom > '$M0/d/$n'"
    EXPECT "b1" where "$n"
done
# A file with its data on b1 under a name hashing to b0: a link file on
# b0, which the migration reuses as its marker. A link made before the
# freeze (during the copy) makes the migration leave the file where it
# is: b0's marker must become the link file again, or the name is lost
# once the layout is committed.
A=$(pick 0 abt)
TEST sh -c "head -c 200000 /dev/urandom > '$M0/d/$(pick 1 src)'"
TEST mv "$M0/d/$(pick 1 src)" "$M0/d/$A"
EXPECT "b1" where "$A"
EXPECT "1000" stat -c %a "$T/bricks/b0/d/$A"
SA=$(md5 "$M0/d/$A")
SL=$(md5 "$M0/d/$L")
SR=$(md5 "$M0/d/$R")
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/remove.vol" "$M0"

LOG="$T/log/r1.log"
# 5 s each: the client's fop must reach the brick inside the pause, also
# on a loaded machine (it is checked still waiting 1 s in).
P="$A@copy:5000,$L:5000,$R:5000,$U:5000"
MORTAR_REBAL_FREEZE_PAUSE="$P" bg_run "$MORTARFSD" \
    --rebalance --volfile "$T/vol/remove.vol" --rebalance-state \
    "$T/r1.state" --throttle lazy -N --log-file "$LOG"

# The link before the freeze: the first run leaves the file on b1, with
# b0's link file back; both names read right all along.
EXPECT_WITHIN 30 "Y" sh -c "grep -q \"pausing [0-9]* ms before the freeze of '$A'\" '$LOG' && echo Y"
TEST ln "$M0/d/$A" "$M0/d/$A.2"

# link: waits for the freeze, then both names are the moved file.
EXPECT_WITHIN 30 "Y" frozen_log "$LOG" "$L"
bg_op "$T/ln.rc" ln "$M0/d/$L" "$M0/d/$L.2"
sleep 1
EXPECT "running" rc_of "$T/ln.rc"
EXPECT_WITHIN 60 "0" rc_of "$T/ln.rc"

# rename: waits, then renames the moved file.
EXPECT_WITHIN 30 "Y" frozen_log "$LOG" "$R"
bg_op "$T/mv.rc" mv "$M0/d/$R" "$M0/d/$R.new"
sleep 1
EXPECT "running" rc_of "$T/mv.rc"
EXPECT_WITHIN 60 "0" rc_of "$T/mv.rc"

# unlink: waits, then the name is gone everywhere.
EXPECT_WITHIN 30 "Y" frozen_log "$LOG" "$U"
bg_op "$T/rm.rc" rm "$M0/d/$U"
sleep 1
EXPECT "running" rc_of "$T/rm.rc"
EXPECT_WITHIN 60 "0" rc_of "$T/rm.rc"

# The file the link during the copy left on b1 is still there: the run's
# final check of the bricks being removed counts it (both its names), so
# the run ends failed and a commit would refuse; the next run moves it.
EXPECT_WITHIN 60 "failed" state_value "$T/r1.state" status
EXPECT_MATCH "still on b1" state_value "$T/r1.state" error
EXPECT "$SA" md5 "$M0/d/$A"
EXPECT "$SA" md5 "$M0/d/$A.2"
EXPECT "$SL" md5 "$M0/d/$L"
EXPECT "$SL" md5 "$M0/d/$L.2"
EXPECT "2" stat -c %h "$M0/d/$L"
EXPECT "No such file or directory" errno_of stat "$M0/d/$R"
EXPECT "$SR" md5 "$M0/d/$R.new"
EXPECT "No such file or directory" errno_of stat "$M0/d/$U"
EXPECT "-" where "$U"
EXPECT "0" dup_data b0 b1

# A quiet run after: nothing left on b1, nothing failed, same contents
# through a fresh mount.
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/remove.vol" \
    --rebalance-state "$T/r2.state" -N --log-file "$T/log/r2.log"
EXPECT "completed" state_value "$T/r2.state" status
EXPECT "0" state_value "$T/r2.state" failed_files
EXPECT "0" count_data b1
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/remove.vol" "$M0"
EXPECT "$SL" md5 "$M0/d/$L.2"
EXPECT "$SR" md5 "$M0/d/$R.new"
EXPECT "$SA" md5 "$M0/d/$A"
EXPECT "$SA" md5 "$M0/d/$A.2"
EXPECT "2" stat -c %h "$M0/d/$A"
EXPECT "5" sh -c "ls '$M0/d' | wc -l | tr -d ' '"
