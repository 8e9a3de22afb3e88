#!/usr/bin/env bash
# Live graph switches with FUSE requests in flight: while three workers
# keep 1 MiB WRITEs, FSYNCs and O_DIRECT READs of 8 MiB files going
# through the mount (each request a round trip to the brick, so some are
# always pending) and a fourth keeps listing and stat'ing, SIGHUP moves
# the client to a new graph (debug/trace between mount/fuse and
# protocol/client, or not) again and again. An old graph is torn down
# only after its last call is answered (mount/fuse drains it: RCU grace
# period, then its in-flight count to 0), so no request fails, every
# read back is what was written, the brick ends with the data of each
# worker's last round, no teardown gives up on pending requests, and
# every old graph is freed.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

N_SWITCH=${GRAPH_SWITCH_INFLIGHT_COUNT:-40}
N_WORKERS=3

TEST start_volume -o connect-timeout=3
# The two shapes (plain.vol, traced.vol), the client's pid and files.
TEST switch_shapes

# Each worker's data: two 8 MiB patterns, written in turn, so a round
# that read back the previous round's data (a lost WRITE) is caught.
for ((w = 0; w < N_WORKERS; w++)); do
    head -c $((8 << 20)) /dev/urandom > "$T/src-$w-0"
    head -c $((8 << 20)) /dev/urandom > "$T/src-$w-1"
done

# worker W: writes its file in 1 MiB WRITEs (the kernel passes each on
# at once: no writeback cache), FSYNCs it, reads it back with O_DIRECT
# (past the page cache: READs reach the bridge) and compares; one line
# in $T/errors per failure, the number of rounds in $T/rounds-W.
worker() {
    local w=$1 i=0 src
    while [ ! -e "$T/stop" ]; do
        src="$T/src-$w-$((i % 2))"
        dd if="$src" of="$M0/w$w" bs=1M conv=fsync,notrunc status=none \
            2>> "$T/errors" || echo "worker $w round $i: write" >> "$T/errors"
        dd if="$M0/w$w" bs=1M iflag=direct status=none 2>> "$T/errors" |
            cmp -s - "$src" ||
            echo "worker $w round $i: read back differs" >> "$T/errors"
        i=$((i + 1))
    done
    echo "$i" > "$T/rounds-$w"
}

# Names and attributes: LOOKUP, GETATTR, OPENDIR/READDIRPLUS, and a
# file created and removed each round.
lister() {
    local i=0
    mkdir -p "$M0/meta"
    while [ ! -e "$T/stop" ]; do
        echo "$i" > "$M0/meta/f$i" || echo "lister $i: create" >> "$T/errors"
        ls -l "$M0" > /dev/null || echo "lister $i: ls" >> "$T/errors"
        stat "$M0/meta/f$i" > /dev/null ||
            echo "lister $i: stat" >> "$T/errors"
        rm "$M0/meta/f$i" || echo "lister $i: rm" >> "$T/errors"
        i=$((i + 1))
    done
    echo "$i" > "$T/rounds-lister"
}

LOAD_PIDS=()
for ((w = 0; w < N_WORKERS; w++)); do
    worker "$w" &
    LOAD_PIDS+=($!)
done
lister &
LOAD_PIDS+=($!)
_T_BG+=("${LOAD_PIDS[@]}")

# switch_to VOLFILE: installs it as the client's --volfile and waits until
# the client logged one more switch (or failure).
N_DONE=0
switch_to() {
    local i
    cp "$1" "$CVOL" || return 1
    kill -HUP "$CPID" || return 1
    N_DONE=$((N_DONE + 1))
    for ((i = 0; i < 1000; i++)); do
        [ "$(grep -c 'without a remount' "$CLOG")" -ge "$N_DONE" ] && return 0
        grep -q 'graph switch failed' "$CLOG" && return 1
        sleep 0.02
    done
    return 1
}

freed_count() {
    grep -c 'old graph [0-9]* freed' "$CLOG"
}

# Let the load get going, then switch; a short pause between switches so
# that each new graph takes calls before it is replaced in turn.
sleep 1
FAILED_AT=""
for ((n = 1; n <= N_SWITCH; n++)); do
    vol="$T/vol/plain.vol"
    ((n % 2)) && vol="$T/vol/traced.vol"
    if ! switch_to "$vol"; then
        FAILED_AT=$n
        break
    fi
    sleep 0.1
done
EXPECT "" echo "$FAILED_AT"
EXPECT_WITHIN 60 "$N_SWITCH" freed_count
touch "$T/stop"
wait "${LOAD_PIDS[@]}"

# No request failed, and the load ran all along.
EXPECT "" sh -c "cat '$T/errors' 2> /dev/null"
for ((w = 0; w < N_WORKERS; w++)); do
    EXPECT_MATCH "^[1-9][0-9]*$" cat "$T/rounds-$w"
done
EXPECT_MATCH "^[1-9][0-9]*$" cat "$T/rounds-lister"
EXPECT "Y" is_alive "$CPID"
EXPECT "$MNT_ID_BEFORE" awk -v m="$M0" '$5 == m { print $1 }' \
    /proc/self/mountinfo
EXPECT "$N_SWITCH" grep -c 'without a remount' "$CLOG"
# No teardown gave up waiting for an old graph's calls.
EXPECT "0" grep -c 'fuse requests still pending' "$CLOG"

# Each worker's file holds its last round's data, through the mount and
# on the brick.
for ((w = 0; w < N_WORKERS; w++)); do
    last=$(( ($(cat "$T/rounds-$w") - 1) % 2 ))
    TEST cmp "$M0/w$w" "$T/src-$w-$last"
    TEST cmp "$B0/w$w" "$T/src-$w-$last"
done

# One graph left.
DUMP=$(statedump_of "$CPID")
EXPECT "1" grep -c '^\[graph ' <<< "$DUMP"
EXPECT_MATCH "graphs_attached=1" echo "$DUMP"
inflight() {
    statedump_of "$CPID" | sed -n 's/^inflight=//p'
}
EXPECT_WITHIN 10 "0" inflight
