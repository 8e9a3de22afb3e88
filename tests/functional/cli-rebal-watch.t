#!/usr/bin/env bash
# `mortar volume rebalance VOL status` as a person and as a script sees
# it (cli/rebal-bar.c, cli/progress-bar.c). A 2-brick distribute volume
# gets 1,000 files, a third brick is added and a rebalance started
# through mortard. Without a terminal (a file), `status --watch` prints
# mortard's plain table once, with no bar or escape, exactly as plain
# `status` does; --json too, and --watch with --json is refused with one
# line and nothing sent. Under a pty (script(1) from util-linux) `status
# --watch` draws a bar with a percentage, redrawn in place, then prints
# the table with "completed" and exits 0. The rebalance process is held
# (SIGSTOP) for a few seconds after it has begun, so the watch surely
# sees it in progress whatever the machine's speed; Ctrl-C then ends a
# watch with exit 0 and its line ended, the task untouched.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if ! "$MORTARFSD" --help 2>&1 | grep -q -- "--rebalance"; then
    echo "1..0 # SKIP mortarfsd has no --rebalance"
    exit 0
fi
if ! command -v script >/dev/null 2>&1; then
    echo "1..0 # SKIP no script(1) (util-linux) to give the CLI a pty"
    exit 0
fi

B="$T/bricks"
for i in 0 1 2; do track_brick rw brick$i; done
_T_PIDFILES+=("$T/run/rebalance/rw.pid")
SOCK="$T/run/mortard.sock"

# mortar as a person runs it, not in script mode.
mortar() {
    "$MORTAR" --socket="$SOCK" "$@"
}

# status column of the localhost row
rebal_state() {
    mcli volume rebalance rw status | awk '$1 == "localhost" {
        s = $7; if ($7 == "in") s = "in progress"; print s }'
}

# scanned files so far in the state file (0 before it exists)
scanned() {
    local n
    n=$(sed -n 's/^scanned_files=//p' "$T/run/rebalance/rw.state" \
        2>/dev/null)
    echo "${n:-0}"
}
# Holds the rebalance process (SIGSTOP) as soon as it has scanned a
# file, polled every 0.05 s so a fast machine cannot finish first.
hold_when_scanned() {
    local pid
    for _ in $(seq 600); do
        pid=$(cat "$T/run/rebalance/rw.pid" 2>/dev/null)
        if [ -n "$pid" ] && [ "$(scanned)" -gt 0 ]; then
            kill -STOP "$pid" && echo "$pid" > "$T/held.pid" && return 0
        fi
        sleep 0.05
    done
    return 1
}

# FILE has no carriage return, escape or bar: nothing for a terminal.
is_plain() {
    ! grep -aqE $'\r|\033|\\[[#.]{20}\\]' "$1"
}

# Two tables that differ at most in their run times (the clock ticks
# between the two calls).
same_but_times() {
    diff <(sed -E 's/[0-9]+:[0-9]{2}:[0-9]{2}//g' "$1") \
        <(sed -E 's/[0-9]+:[0-9]{2}:[0-9]{2}//g' "$2")
}

# The watch under a pty, Ctrl-C (SIGINT) after 2 s; its exit status.
watch_then_interrupt() {
    cat > "$T/intr.sh" <<EOF
"$MORTAR" --socket="$SOCK" volume rebalance rw status --watch &
p=\$!
sleep 2
kill -INT \$p
wait \$p
EOF
    script -qec "sh '$T/intr.sh'" /dev/null > "$T/intr.out" 2>&1
}

# FILE ends with the bar's line ended (the pty writes "\r\n"), not
# with the table: the prompt after Ctrl-C starts on a clean line.
ends_after_bar() {
    [ "$(tail -c 2 "$1" | od -An -tx1 | tr -d ' \n')" = "0d0a" ] &&
        ! grep -aq "Rebalanced-files" "$1" &&
        grep -aqE '\[[#.]{20}\]' "$1"
}

# frames drawn: each starts with a carriage return, erase, and the bar
frames() {
    grep -ao $'\r\033\\[K\\[' "$1" | wc -l
}

TEST start_mortard
TEST mcli volume create rw 127.0.0.1:$B/b0 127.0.0.1:$B/b1 force
TEST mcli volume start rw
for i in 0 1; do
    EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$SOCK' volume status rw | awk '\$2 == \"127.0.0.1:$B/b$i\" { print \$4 }'"
done
M1="$T/m1"
TEST mount_volume rw "$M1"
TEST python3 -c "
import os
for d in range(10):
    os.mkdir('$M1/d%d' % d)
    for f in range(100):
        with open('$M1/d%d/f%03d' % (d, f), 'wb') as fh:
            fh.write(os.urandom(16384))
"
TEST mcli volume add-brick rw 127.0.0.1:$B/b2 force
EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$SOCK' volume status rw | awk '\$2 == \"127.0.0.1:$B/b2\" { print \$4 }'"

# No task yet: --watch on a terminal or not prints mortard's refusal.
TEST ! mortar volume rebalance rw status --watch
TEST mcli volume rebalance rw start
TEST hold_when_scanned
RP=$(cat "$T/held.pid")
EXPECT "in progress" rebal_state

# Not a terminal: the plain table once, the same as without --watch.
TEST sh -c "'$MORTAR' --socket='$SOCK' volume rebalance rw status --watch > '$T/plain.out'"
TEST grep -q "Rebalanced-files" "$T/plain.out"
TEST grep -q "in progress" "$T/plain.out"
TEST is_plain "$T/plain.out"
TEST sh -c "'$MORTAR' --socket='$SOCK' volume rebalance rw status > '$T/plain2.out'"
TEST same_but_times "$T/plain.out" "$T/plain2.out"
# Scripts' formats are unchanged; --watch with them is refused.
TEST sh -c "'$MORTAR' --socket='$SOCK' --json volume rebalance rw status | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"volRebalance\"][\"op\"] == \"rebalance\"'"
TEST ! mortar --json volume rebalance rw status --watch
EXPECT_MATCH "cannot be used with --xml or --json" sh -c "'$MORTAR' --socket='$SOCK' --json volume rebalance rw status --watch 2>&1"

# Ctrl-C while it is held: exit 0, the line ended, no table.
TEST watch_then_interrupt
TEST ends_after_bar "$T/intr.out"
EXPECT "in progress" rebal_state

# A terminal: the bar while held and after, then the table, exit 0.
( sleep 3; kill -CONT "$RP" ) &
CONT_PID=$!
# A wide pty (the line is cut to the terminal's width, TIOCGWINSZ, so
# at 80 columns the rates could be cut off).
TEST sh -c "script -qec \"stty cols 200; '$MORTAR' --socket='$SOCK' volume rebalance rw status --watch\" /dev/null > '$T/watch.out' 2>&1"
TEST grep -aqE '\[[#.]{20}\] +[0-9]{1,3}%' "$T/watch.out"
TEST grep -aq "ETA " "$T/watch.out"
TEST grep -aq "files/s" "$T/watch.out"
# Redrawn in place: one carriage return and erase per frame, at least
# one a second while the process was held.
EXPECT_MATCH "^([2-9]|[1-9][0-9]+)$" frames "$T/watch.out"
TEST grep -aq "Rebalanced-files" "$T/watch.out"
TEST grep -aqE "localhost +[0-9]+ .* completed " "$T/watch.out"
EXPECT "completed" rebal_state
wait "$CONT_PID"
