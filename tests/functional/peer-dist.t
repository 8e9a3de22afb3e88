#!/usr/bin/env bash
# A distribute volume over three servers in network namespaces
# (10.213.77.1-3): one brick per node, created and started from node 1;
# node 1's `volume info` (Distribute, 3 bricks) and `volume status` (every
# brick online with its pid, remote ones included). Mounted from node 1's
# namespace with mount.mortar: 300 files spread over the three bricks, no
# file on two bricks. add-brick on node 2: the mount switches to the new
# graph without a remount; rebalance from node 1 until completed moves
# files onto the new brick, every md5 intact through the same mount. Node
# 3's mortard and brick killed -9: files of nodes 1/2 still read, files of
# node 3's brick fail at once (no hang); node 3 back plus `volume start
# force`: every file reads again.
# TIMEOUT: 420
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
# Bricks: brick0 on node 1, brick1 on node 2, brick2 on node 3, brick3
# (added later) on node 2; each pid file lives in its node's run dir.
BR[0]="$T/n1/b1"; BN[0]=1; BH[0]=$H1
BR[1]="$T/n2/b1"; BN[1]=2; BH[1]=$H2
BR[2]="$T/n3/b1"; BN[2]=3; BH[2]=$H3
BR[3]="$T/n2/b2"; BN[3]=2; BH[3]=$H2
for k in 0 1 2 3; do
    _T_PIDFILES+=("$T/n${BN[$k]}/run/v0-brick$k.pid")
done
_T_PIDFILES+=("$T/n1/run/rebalance/v0.pid")

brick_pid() {
    cat "$T/n${BN[$1]}/run/v0-brick$1.pid" 2> /dev/null || echo 0
}
# "Brick HOST:PATH PORT ONLINE PID" rows of node I's `volume status v0`
brick_row() {
    ncli "$1" volume status v0 | awk -v b="$2" '$1 == "Brick" && $2 == b'
}
# status column of the localhost row of node 1's rebalance status
rebal_state() {
    ncli 1 volume rebalance v0 status | awk '$1 == "localhost" {
        s = $7; if ($7 == "in") s = "in progress"; print s }'
}
# data files (relative, no "./") on brick K
files_of() {
    brick_data_files "${BR[$1]}" | sed 's|^\./||'
}
# sums_for LIST > SUMS: the lines of $T/sums for the files in LIST
sums_for() {
    awk 'NR == FNR { want[$0] = 1; next } ($2 in want)' "$1" "$T/sums"
}
# n_readable LIST: how many files of LIST read (each within 10 s)
n_readable() {
    local f n=0
    while read -r f; do
        timeout -k 5 10 cat "$M0/$f" > /dev/null 2>&1 && n=$((n + 1))
    done < "$1"
    echo "$n"
}
# n_failed LIST: how many files of LIST fail with an error of their own
# (a read that hangs until timeout kills it, 124 or 137, is not counted)
n_failed() {
    local f n=0 rc
    while read -r f; do
        timeout -k 5 10 cat "$M0/$f" > /dev/null 2>&1
        rc=$?
        [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 137 ] &&
            n=$((n + 1))
    done < "$1"
    echo "$n"
}

peers_form 3

# Create and start from node 1; info and status from node 1.
TEST ncli 1 volume create v0 "$H1:${BR[0]}" "$H2:${BR[1]}" "$H3:${BR[2]}" force
TEST ncli 1 volume start v0
INFO=$(ncli 1 volume info v0)
EXPECT_MATCH "Type: Distribute" echo "$INFO"
EXPECT_MATCH "Number of Bricks: 3" echo "$INFO"
EXPECT_MATCH "Brick3: $H3:${BR[2]}" echo "$INFO"
EXPECT "$INFO" ncli 3 volume info v0
for k in 0 1 2; do
    EXPECT "Y" proc_alive "$(brick_pid $k)"
    EXPECT_MATCH "^Brick ${BH[$k]}:${BR[$k]} +[0-9]+ +Y +$(brick_pid $k)\$" brick_row 1 "${BH[$k]}:${BR[$k]}"
done
EXPECT "3" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' volume status v0 | grep -c '^Brick .* Y *[0-9][0-9]*\$'"

# Mount from node 1's namespace; 300 files with their md5s.
TEST node_mount 1 "$H1:/v0" "$M0"
TEST wait_for_mount "$M0"
CPID=$(mm_pid "$M0")
CLOG=$(mm_log "$M0")
MNT_ID=$(awk -v m="$M0" '$5 == m { print $1 }' /proc/self/mountinfo)
TEST [ -n "$CPID" ]
TEST python3 -c "
import hashlib, os, random
rnd = random.Random(77)
with open('$T/sums', 'w') as out:
    for d in range(6):
        os.mkdir('$M0/d%d' % d)
        for f in range(50):
            rel = 'd%d/f%03d' % (d, f)
            data = os.urandom(rnd.randrange(1, 65536))
            with open('$M0/' + rel, 'wb') as fh:
                fh.write(data)
            out.write('%s  %s\n' % (hashlib.md5(data).hexdigest(), rel))
"
EXPECT "300" sh -c "wc -l < '$T/sums'"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
for k in 0 1 2; do
    files_of $k > "$T/on.$k"
    TEST [ -s "$T/on.$k" ]
done
EXPECT "" sh -c "cat '$T/on.0' '$T/on.1' '$T/on.2' | sort | uniq -d"
EXPECT "300" sh -c "cat '$T/on.0' '$T/on.1' '$T/on.2' | wc -l"

# add-brick on node 2: the mount takes the new graph without a remount.
TEST ncli 1 volume add-brick v0 "$H2:${BR[3]}" force
EXPECT_MATCH "Number of Bricks: 4" ncli 1 volume info v0
EXPECT_WITHIN 20 "Y" proc_alive "$(brick_pid 3)"
EXPECT_WITHIN 20 "1" sh -c "grep -c 'switched from graph' '$CLOG'"
EXPECT "$CPID" mm_pid "$M0"
EXPECT "Y" proc_alive "$CPID"
EXPECT "$MNT_ID" awk -v m="$M0" '$5 == m { print $1 }' /proc/self/mountinfo
EXPECT_MATCH "children=v0-brick0,v0-brick1,v0-brick2,v0-brick3" statedump_of "$CPID"
EXPECT "" files_of 3

# Rebalance from node 1 until completed: files on the new brick, every
# md5 intact through the same mount, still no file on two bricks.
TEST ncli 1 volume rebalance v0 start
EXPECT_WITHIN 240 "completed" rebal_state
EXPECT "0" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' volume rebalance v0 status | awk '\$1 == \"localhost\" { print \$5 }'"
for k in 0 1 2 3; do
    files_of $k > "$T/on.$k"
done
TEST [ -s "$T/on.3" ]
EXPECT "" sh -c "cat '$T'/on.[0-3] | sort | uniq -d"
EXPECT "300" sh -c "cat '$T'/on.[0-3] | wc -l"
EXPECT "$CPID" mm_pid "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"

# Node 3 down hard: its mortard and its brick killed -9.
cat "$T/on.0" "$T/on.1" "$T/on.3" > "$T/on.12"
sums_for "$T/on.12" > "$T/sums.12"
head -n 10 "$T/on.2" > "$T/on.2.some"
TEST [ -s "$T/on.2.some" ]
P3=$(brick_pid 2)
M3=$(mortard_of 3)
TEST kill -9 "$M3" "$P3"
EXPECT_WITHIN 10 "N" proc_alive "$M3"
EXPECT_WITHIN 10 "N" proc_alive "$P3"
EXPECT_WITHIN 15 "1" connected_peers 1
# Files of nodes 1 and 2 still read; node 3's fail with an error, fast.
EXPECT "ok" rebal_tool verify "$M0" "$T/sums.12"
# Within the caches' validity (entry and attribute timeouts, quick-read's
# cache-timeout: 1 s each) a file read just before the kill may still be
# answered from them; once they lapse every one fails.
EXPECT_WITHIN 15 "$(wc -l < "$T/on.2.some")" n_failed "$T/on.2.some"
EXPECT_MATCH "Transport endpoint is not connected|Input/output error" \
    errno_of timeout 10 cat "$M0/$(head -n 1 "$T/on.2")"
EXPECT_MATCH "^Brick $H3:${BR[2]} +N/A +N +N/A" brick_row 1 "$H3:${BR[2]}"

# Node 3 returns; start force brings its brick back; every file reads.
TEST node_mortard 3
EXPECT_WITHIN 20 "2" connected_peers 1
EXPECT_WITHIN 20 "2" connected_peers 3
TEST ncli 1 volume start v0 force
EXPECT_WITHIN 20 "Y" proc_alive "$(brick_pid 2)"
TEST [ "$(brick_pid 2)" != "$P3" ]
EXPECT_MATCH "^Brick $H3:${BR[2]} +[0-9]+ +Y +$(brick_pid 2)\$" brick_row 1 "$H3:${BR[2]}"
EXPECT_WITHIN 30 "10" n_readable "$T/on.2.some"
EXPECT_WITHIN 30 "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "$CPID" mm_pid "$M0"

TEST umount "$M0"
for k in 0 1 2 3; do
    BP[$k]=$(brick_pid $k)
done
TEST ncli 1 volume stop v0
for k in 0 1 2 3; do
    EXPECT_WITHIN 10 "N" proc_alive "${BP[$k]}"
done
