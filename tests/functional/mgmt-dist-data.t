#!/usr/bin/env bash
# Distribute volumes end to end through mortard: a 4-brick volume gets
# 1,000 files spread over all bricks; add-brick on the started volume
# (new brick running, 5 subvolumes), rebalance until completed moves
# files onto the new brick with every checksum intact; remove-brick
# start/status/commit empties the removed brick and loses no file;
# mortard killed -9 during the rebalance finds it again (not duplicated).
# Uses cluster/distribute and mortarfsd --rebalance (skipped without).
# TIMEOUT: 600
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if ! "$MORTARFSD" --help 2>&1 | grep -q -- "--rebalance"; then
    echo "1..0 # SKIP mortarfsd has no --rebalance"
    exit 0
fi

B="$T/bricks"
for i in 0 1 2 3 4; do track_brick dd brick$i; done
_T_PIDFILES+=("$T/run/rebalance/dd.pid" "$T/run/rebalance/dd.remove.pid")

# data files on a brick (no link files or migration markers: sticky bit)
brick_files() {
    find "$1" -path "$1/.mortar" -prune -o -type f ! -perm -1000 -print |
        wc -l
}

# checksums of every file under a mount, sorted by path
sums_of() {
    (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha1sum)
}

# status column of the localhost row of a rebalance/remove-brick status
rebal_state() {
    mcli volume "$@" status | awk '$1 == "localhost" {
        s = $7; if ($7 == "in") s = "in progress"; print s }'
}

TEST start_mortard
if ! mcli volume set help | grep -q "^Option: cluster\."; then
    echo "# cluster/distribute is not registered"
fi
TEST mcli volume create dd 127.0.0.1:$B/b0 127.0.0.1:$B/b1 127.0.0.1:$B/b2 127.0.0.1:$B/b3 force
TEST mcli volume start dd
EXPECT_MATCH "Type: Distribute" mcli volume info dd
EXPECT_MATCH "Number of Bricks: 4" mcli volume info dd
EXPECT_MATCH "<brickCount>4</brickCount>" mcli --xml volume info dd
TEST sh -c "'$MDCTL' -s '$T/run/mortard.sock' --json volume status dd | python3 -c 'import json,sys; v=json.load(sys.stdin)[\"volStatus\"][\"volumes\"][0]; assert v[\"nodeCount\"]==\"4\"'"
for i in 0 1 2 3; do
    EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume status dd | awk '\$2 == \"127.0.0.1:$B/b$i\" { print \$4 }'"
done

M1="$T/m1"
TEST mount_volume dd "$M1"
TEST python3 -c "
import os
for d in range(10):
    os.mkdir('$M1/d%d' % d)
    for f in range(100):
        with open('$M1/d%d/f%03d' % (d, f), 'wb') as fh:
            fh.write(os.urandom(1000 + 37 * f))
"
sums_of "$M1" > "$T/sums.0"
EXPECT "1000" sh -c "wc -l < '$T/sums.0'"
for i in 0 1 2 3; do
    TEST [ "$(brick_files "$B/b$i")" -gt 0 ]
done
EXPECT "1000" sh -c "n=0; for i in 0 1 2 3; do n=\$((n + \$(find '$B/b'\$i -path '$B/b'\$i/.mortar -prune -o -type f ! -perm -1000 -print | wc -l))); done; echo \$n"

# add-brick on the started volume.
TEST mcli volume add-brick dd 127.0.0.1:$B/b4 force
EXPECT "Y" proc_alive "$(cat "$T/run/dd-brick4.pid")"
EXPECT "5" grep -c "type protocol/client" "$T/state/vols/dd/client.vol"
EXPECT "0" brick_files "$B/b4"

# rebalance until completed: files reach the new brick, nothing lost.
# mortard killed -9 while it runs: the new mortard finds it by its pid
# file and never starts a second one. The process is held with SIGSTOP
# right after start (it cannot have crawled 1,000 files by then: it
# first fetches the volfile and connects to five bricks), so it is
# still running whatever the machine's speed.
count_rebal() {
    local p n=0
    for p in /proc/[0-9]*; do
        tr '\0' ' ' < "$p/cmdline" 2> /dev/null |
            grep -q -- "--rebalance .*--rebalance-state=$1 " &&
            n=$((n + 1))
    done
    echo "$n"
}
TEST sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dd start && kill -STOP \$(cat '$T/run/rebalance/dd.pid')"
RP=$(cat "$T/run/rebalance/dd.pid")
EXPECT "1" count_rebal "$T/run/rebalance/dd.state"
TEST kill -9 "$(mortard_pid)"
TEST start_mortard
EXPECT "in progress" rebal_state rebalance dd
TEST ! mcli volume rebalance dd start
EXPECT "1" count_rebal "$T/run/rebalance/dd.state"
EXPECT "$RP" cat "$T/run/rebalance/dd.pid"
EXPECT_MATCH "Task +: Rebalance" mcli volume status dd
TEST kill -CONT "$RP"
EXPECT_WITHIN 240 "completed" rebal_state rebalance dd
EXPECT "0" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dd status | awk '\$1 == \"localhost\" { print \$5 }'"
TEST [ "$(brick_files "$B/b4")" -gt 0 ]
EXPECT "1000" sh -c "n=0; for i in 0 1 2 3 4; do n=\$((n + \$(find '$B/b'\$i -path '$B/b'\$i/.mortar -prune -o -type f ! -perm -1000 -print | wc -l))); done; echo \$n"
EXPECT_MATCH "Status +: completed" mcli volume status dd
M2="$T/m2"
TEST mount_volume dd "$M2"
sums_of "$M2" > "$T/sums.1"
EXPECT "1000" sh -c "wc -l < '$T/sums.1'"
TEST cmp "$T/sums.0" "$T/sums.1"

# remove-brick start/status/commit.
TEST mcli volume remove-brick dd 127.0.0.1:$B/b0 start
EXPECT_MATCH "decommissioned-bricks dd-brick0" cat "$T/state/vols/dd/client.vol"
EXPECT_WITHIN 240 "completed" rebal_state remove-brick dd 127.0.0.1:$B/b0
EXPECT "0" brick_files "$B/b0"
TEST mcli volume remove-brick dd 127.0.0.1:$B/b0 commit
EXPECT_MATCH "Number of Bricks: 4" mcli volume info dd
EXPECT "0" grep -c "dd-brick0" "$T/state/vols/dd/client.vol"
EXPECT "1000" sh -c "n=0; for i in 1 2 3 4; do n=\$((n + \$(find '$B/b'\$i -path '$B/b'\$i/.mortar -prune -o -type f ! -perm -1000 -print | wc -l))); done; echo \$n"
M3="$T/m3"
TEST mount_volume dd "$M3"
sums_of "$M3" > "$T/sums.2"
EXPECT "1000" sh -c "wc -l < '$T/sums.2'"
TEST cmp "$T/sums.0" "$T/sums.2"
