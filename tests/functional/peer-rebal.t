#!/usr/bin/env bash
# Rebalance and remove-brick tasks seen and controlled from every node of
# a 3-node cluster (netns, 10.213.77.1-3; brick per node plus one added
# from node 1; 200 files with md5s).
#  - Node 1's rebalance held in progress (SIGSTOP): every node's
#    `rebalance status` has one row per node with a task (localhost /
#    10.213.77.1); start on node 2 refused ("already started on node
#    10.213.77.1", no process there); add-brick on node 2 refused ("a
#    rebalance is running", brick counts unchanged); stop on node 2 ends
#    node 1's process, both then show "stopped".
#  - Node 1 resumes, held, and its mortard is killed: node 2's start is
#    refused by the migration lock on the bricks (the command fails with
#    that reason; node 2 shows no task of its own); node 1's mortard
#    back, its run completes.
#  - A start on node 2 runs there until completed (10.213.77.2 row on
#    node 1); node 3's volume status shows the task.
#  - remove-brick started on node 1 and held: commit refused from node 1
#    and node 2, no node drops the brick; then seen completed from node
#    2, committed from node 2: one brick fewer everywhere, md5s intact.
#  - Node 3's mortard killed -9: status/stop still answer within 15 s.
# TIMEOUT: 420
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
# brick0-2 on nodes 1-3, brick3 (added, later removed) on node 1; brick4
# on node 3 is the add-brick refused during the rebalance.
BR[0]="$T/n1/b1"; BN[0]=1
BR[1]="$T/n2/b1"; BN[1]=2
BR[2]="$T/n3/b1"; BN[2]=3
BR[3]="$T/n1/b2"; BN[3]=1
BR[4]="$T/n3/b2"; BN[4]=3
for k in 0 1 2 3 4; do
    _T_PIDFILES+=("$T/n${BN[$k]}/run/v0-brick$k.pid")
done
for i in 1 2 3; do
    _T_PIDFILES+=("$T/n$i/run/rebalance/v0.pid"
                  "$T/n$i/run/rebalance/v0.remove.pid")
done
brick_pid() {
    cat "$T/n${BN[$1]}/run/v0-brick$1.pid" 2> /dev/null || echo 0
}
# Y if pid file F names a live process
pid_file_live() {
    local pid
    pid=$(cat "$1" 2> /dev/null)
    [ -n "$pid" ] && proc_alive "$pid" || echo N
}
# task_rows I [BRICK]: "NODE:STATUS" of each row of node I's rebalance
# status (remove-brick status of BRICK if given), sorted, comma-joined
task_rows() {
    if [ -n "${2:-}" ]; then
        ncli "$1" volume remove-brick v0 "$2" status
    else
        ncli "$1" volume rebalance v0 status
    fi 2> /dev/null | awk '$1 == "localhost" || $1 ~ /^[0-9.]+$/ {
        s = $7; if ($7 == "in") s = "in progress"; print $1 ":" s }' |
        LC_ALL=C sort | paste -sd, -
}
# row_state I NODE [BRICK]: the status column of row NODE
row_state() {
    task_rows "$1" "${3:-}" | tr ',' '\n' | awk -F: -v n="$2" '$1 == n {
        print $2 }'
}
# run_on I ARGS...: "rc=N: " and the command's stdout and stderr on one
# line (a command that does not answer within 60 s shows rc=124)
run_on() {
    local i="$1" out rc
    shift
    out=$(timeout -k 5 60 "$MDCTL" -s "$T/n$i/run/mortard.sock" "$@" 2>&1)
    rc=$?
    echo "rc=$rc: $(printf '%s' "$out" | tr '\n' ' ')"
}
# answers I ARGS...: "answered" if node I's mortard answers within 15 s
answers() {
    local i="$1" rc
    shift
    timeout -k 2 15 "$MDCTL" -s "$T/n$i/run/mortard.sock" "$@" \
        > /dev/null 2>&1
    rc=$?
    case $rc in 124|137) echo "no answer (rc $rc)" ;; *) echo answered ;; esac
}
# hold_rebal I [remove]: waits for node I's rebalance (remove-brick)
# process (pid file naming a live process, state file naming it: it has
# not crawled yet, the crawl waits 1.5 s for the layout before moving
# anything), then SIGSTOPs it; _T_HELD is its pid (cleanup continues it).
hold_rebal() {
    local rd="$T/n$1/run/rebalance" i pid= f="v0${2:+.remove}"
    for ((i = 0; i < 100; i++)); do
        pid=$(cat "$rd/$f.pid" 2> /dev/null)
        [ -n "$pid" ] && [ "$(proc_alive "$pid")" = Y ] &&
            [ "$(state_value "$rd/$f.state" pid)" = "$pid" ] && break
        sleep 0.1
    done
    [ -n "$pid" ] && [ "$(proc_alive "$pid")" = Y ] || return 1
    hold_pid "$pid"
}
# stop_from I: rebalance stop through node I; output and exit code in
# $T/stop.out and $T/stop.rc
stop_from() {
    ncli "$1" volume rebalance v0 stop > "$T/stop.out" 2>&1
    echo $? > "$T/stop.rc"
}
# data files (relative) on brick K
files_of() {
    brick_data_files "${BR[$1]}" | sed 's|^\./||'
}
# n_files K...: data files on bricks K...; dup_files K...: those on two
n_files() {
    for k in "$@"; do files_of "$k"; done | wc -l
}
dup_files() {
    for k in "$@"; do files_of "$k"; done | sort | uniq -d
}

peers_form 3
TEST ncli 1 volume create v0 "$H1:${BR[0]}" "$H2:${BR[1]}" "$H3:${BR[2]}" force
TEST ncli 1 volume start v0
for k in 0 1 2; do
    EXPECT_WITHIN 20 "Y" proc_alive "$(brick_pid $k)"
done

# 200 files of 1-64 KiB in four directories, through node 1's namespace.
TEST node_mount 1 "$H1:/v0" "$M0"
TEST wait_for_mount "$M0"
CLOG=$(mm_log "$M0")
TEST python3 -c "
import hashlib, os, random
rnd = random.Random(78)
with open('$T/sums', 'w') as out:
    for d in range(4):
        os.mkdir('$M0/d%d' % d)
        for f in range(50):
            rel = 'd%d/f%03d' % (d, f)
            data = os.urandom(rnd.randrange(1024, 65537))
            with open('$M0/' + rel, 'wb') as fh:
                fh.write(data)
            out.write('%s  %s\n' % (hashlib.md5(data).hexdigest(), rel))
"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"

# No task anywhere yet: status fails on every node.
for i in 1 2 3; do
    EXPECT_MATCH "^rc=[1-9][0-9]*: .*Rebalance not started" run_on $i volume rebalance v0 status
done

# A brick to move files to (added from node 1: nothing runs yet).
TEST ncli 1 volume add-brick v0 "$H1:${BR[3]}" force
EXPECT_WITHIN 20 "Y" proc_alive "$(brick_pid 3)"
EXPECT_WITHIN 20 "1" sh -c "grep -c 'switched from graph' '$CLOG'"
for i in 1 2 3; do
    EXPECT_MATCH "Number of Bricks: 4" ncli $i volume info v0
done

# Node 1's rebalance, held in progress.
TEST ncli 1 volume rebalance v0 start
TEST hold_rebal 1
RP=$_T_HELD
EXPECT "Y" proc_alive "$RP"
EXPECT "localhost:in progress" task_rows 1
EXPECT "$H1:in progress" task_rows 2
EXPECT "$H1:in progress" task_rows 3
EXPECT_MATCH "Node +Rebalanced-files" ncli 2 volume rebalance v0 status

# A second start, from node 2: refused, no process there.
EXPECT_MATCH "^rc=[1-9][0-9]*: .*already started on node $H1" run_on 2 volume rebalance v0 start
EXPECT "N" pid_file_live "$T/n2/run/rebalance/v0.pid"
EXPECT "$RP" cat "$T/n1/run/rebalance/v0.pid"

# add-brick from node 2 while it runs: refused, nothing changes.
EXPECT_MATCH "^rc=[1-9][0-9]*: .*a rebalance is running" run_on 2 volume add-brick v0 "$H3:${BR[4]}" force
for i in 1 2 3; do
    EXPECT_MATCH "Number of Bricks: 4" ncli $i volume info v0
done
EXPECT "localhost:in progress" task_rows 1

# stop from node 2: it waits for node 1's process, continued after 1 s
# so that it can take the SIGTERM.
rm -f "$T/stop.rc"
bg_run stop_from 2
sleep 1
TEST unhold_pid
EXPECT_WITHIN 70 "0" cat "$T/stop.rc"
EXPECT_MATCH "stopped on node $H1" cat "$T/stop.out"
EXPECT_WITHIN 20 "N" proc_alive "$RP"
EXPECT_WITHIN 10 "$H1:stopped" task_rows 2
EXPECT_WITHIN 10 "stopped" row_state 1 localhost

# Node 1 resumes and is held; then its mortard dies while the migration
# lives on. Node 2 cannot ask node 1 any more, but the migration lock the
# process holds on the bricks refuses node 2's start: node 2's mortard
# waits for its process to hold the lock, so the command fails with the
# process's reason, and node 2 keeps no task of its own.
TEST ncli 1 volume rebalance v0 start
TEST hold_rebal 1
RP=$_T_HELD
M1=$(mortard_of 1)
TEST kill -9 "$M1"
EXPECT_WITHIN 10 "N" proc_alive "$M1"
EXPECT "Y" proc_alive "$RP"
EXPECT_WITHIN 15 "1" connected_peers 2
EXPECT_MATCH "^rc=[1-9][0-9]*: .*failed: another rebalance .*holds the migration lock" run_on 2 volume rebalance v0 start
EXPECT_WITHIN 30 "N" pid_file_live "$T/n2/run/rebalance/v0.pid"
EXPECT "" row_state 2 localhost
EXPECT "Y" proc_alive "$RP"
# Node 1's mortard back: it finds its migration again, which completes.
TEST node_mortard 1
EXPECT_WITHIN 20 "2" connected_peers 2
EXPECT "$H1:in progress" task_rows 2
TEST unhold_pid
EXPECT_WITHIN 240 "completed" row_state 1 localhost
EXPECT_WITHIN 20 "N" proc_alive "$RP"

# A new start on node 2 (nothing in progress anywhere) runs there.
TEST ncli 2 volume rebalance v0 start
EXPECT_WITHIN 240 "completed" row_state 2 localhost
EXPECT_WITHIN 10 "completed" row_state 1 "$H2"
EXPECT "N" pid_file_live "$T/n1/run/rebalance/v0.pid"
TEST [ -n "$(files_of 3)" ]
EXPECT "200" n_files 0 1 2 3
EXPECT "" dup_files 0 1 2 3
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"

# Node 3, which never ran a task, shows it in its volume status.
ncli 3 volume status v0 > "$T/status.3" 2>&1
EXPECT "1" grep -c "^Task Status of Volume v0" "$T/status.3"
EXPECT "1" grep -c "^Task                 : Rebalance$" "$T/status.3"
EXPECT_MATCH "Status +: completed" grep "^Status               : " "$T/status.3"

# remove-brick of brick3: started on node 1, watched and committed from
# node 2.
RB="$H1:${BR[3]}"
TEST ncli 1 volume remove-brick v0 "$RB" start
TEST hold_rebal 1 remove
RP=$_T_HELD
EXPECT "$H1:in progress" task_rows 2 "$RB"
# commit before the migration completed: refused from either node, and
# no node drops the brick (the peers used to commit what the node that
# was asked refused).
EXPECT_MATCH "^rc=[1-9][0-9]*: .*in progress on node $H1" run_on 2 volume remove-brick v0 "$RB" commit
EXPECT_MATCH "^rc=[1-9][0-9]*: .*migration of data off the bricks is in progress" run_on 1 volume remove-brick v0 "$RB" commit
for i in 1 2 3; do
    EXPECT_MATCH "Number of Bricks: 4" ncli $i volume info v0
done
TEST unhold_pid
EXPECT_MATCH "(^|,)$H1:" task_rows 2 "$RB"
EXPECT_WITHIN 240 "completed" row_state 2 "$H1" "$RB"
EXPECT "completed" row_state 1 localhost "$RB"
EXPECT "N" pid_file_live "$T/n2/run/rebalance/v0.remove.pid"
NSW=$(grep -c 'switched from graph' "$CLOG")
TEST "$MORTAR" --mode=script --socket="$T/n2/run/mortard.sock" volume remove-brick v0 "$RB" commit
for i in 1 2 3; do
    EXPECT_MATCH "Number of Bricks: 3" ncli $i volume info v0
done
EXPECT "" files_of 3
EXPECT "200" n_files 0 1 2
EXPECT_WITHIN 20 "$((NSW + 1))" sh -c "grep -c 'switched from graph' '$CLOG'"
EXPECT_WITHIN 30 "ok" rebal_tool verify "$M0" "$T/sums"
TEST umount "$M0"

# Node 3's mortard killed -9: status and stop on node 1 still answer.
M3=$(mortard_of 3)
TEST kill -9 "$M3"
EXPECT_WITHIN 10 "N" proc_alive "$M3"
EXPECT "answered" answers 1 volume rebalance v0 status
EXPECT_WITHIN 15 "1" connected_peers 1
EXPECT "answered" answers 1 volume rebalance v0 status
EXPECT "answered" answers 1 volume rebalance v0 stop
EXPECT "answered" answers 2 volume rebalance v0 status
