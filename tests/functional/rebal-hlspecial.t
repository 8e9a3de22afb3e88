#!/usr/bin/env bash
# A hard-linked special file (a fifo with two names) is not moved by the
# rebalance (doc/rebalance.md, "Hard links", why): it stays on its brick,
# is counted in skipped_files with a log line, and both names still
# reach the one fifo through the volume, also after a second run.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

pick() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 4 "$1" "$2"
}

state_value() {
    sed -n "s/^$2=//p" "$1"
}

TEST dist4_start
TEST mkdir "$M0/d"
P1=$(pick 1 p)
X2=$(pick 2 x)
TEST mkfifo "$M0/d/$P1"
TEST ln "$M0/d/$P1" "$M0/d/$X2"
EXPECT "fifo 3" stat -c "%F %h" "$T/bricks/b1/d/$P1"
EXPECT "fifo" stat -c "%F" "$M0/d/$X2"
INO=$(stat -c %i "$M0/d/$P1")

for run in 1 2; do
    TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist4.vol" \
        --rebalance-state "$T/r$run.state" -N --log-file "$T/log/r$run.log"
    EXPECT "completed" state_value "$T/r$run.state" status
    EXPECT "1" state_value "$T/r$run.state" skipped_files
    EXPECT "0" state_value "$T/r$run.state" failed_files
    EXPECT_MATCH "'$X2' on .*skipped, hard-linked" cat "$T/log/r$run.log"
    EXPECT "fifo 3" stat -c "%F %h" "$T/bricks/b1/d/$X2"
    EXPECT "fifo" stat -c "%F" "$M0/d/$X2"
    EXPECT "fifo" stat -c "%F" "$M0/d/$P1"
    EXPECT "$INO" stat -c %i "$M0/d/$X2"
done
