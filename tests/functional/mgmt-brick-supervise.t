#!/usr/bin/env bash
# mortard keeps the bricks of started volumes running (supervise.c):
# (1) a brick killed -9 is restarted within seconds, on its port, and the
#     mount works again (status N while down, Y with the new pid after);
# (2) bricks killed while mortard is down (kill -9, as a reboot leaves
#     them) are started by the next mortard: a new mount sees the data;
# (3) bricks alive while mortard is killed and restarted are adopted: same
#     pids, one process each;
# (4) a brick that fails at once every time (its port taken) is given up
#     after the limit, logged, shown offline and left alone, and `volume
#     start force` starts it once the cause is gone;
# (5) bricks stopped on purpose (volume stop, remove-brick) stay stopped,
#     also across a mortard restart.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
for i in 0 1 2; do track_brick sv brick$i; done

bpid() {
    cat "$T/run/sv-brick$1.pid" 2> /dev/null
}
# brick_back N OLD: Y once brick N runs with a pid other than OLD.
brick_back() {
    local p
    p="$(bpid "$1")"
    if [ -n "$p" ] && [ "$p" != "$2" ] && [ "$(proc_alive "$p")" = Y ]; then
        echo Y
    else
        echo N
    fi
}
# n_procs N: live mortarfsd processes of brick N (never two).
n_procs() {
    local n=0 p
    for p in $(pgrep -f -- "--pid-file $T/run/sv-brick$1.pid"); do
        [ "$(proc_alive "$p")" = Y ] && n=$((n + 1))
    done
    echo "$n"
}
# row N: brick N's line of volume status ("Brick H:P PORT ONLINE PID").
row() {
    mcli volume status sv | grep "^Brick 127.0.0.1:$B/s$1 " |
        awk '{ print $3, $4, $5 }'
}
# tries_since TEXT: start attempts of brick s0 logged after the line
# holding TEXT and before it was given up.
tries_since() {
    awk -v t="$1" -v s="$B/s0 of started volume sv is not running" '
        index($0, t) { on = 1; next }
        on && index($0, "giving up") { on = 0 }
        on && index($0, s) { n++ }
        END { print n + 0 }' "$T/log/mortard.log"
}
# all_read MNT: "ok" if every file written below reads back.
all_read() {
    local i
    for i in $(seq 1 20); do
        [ "$(cat "$1/f$i" 2> /dev/null)" = "data $i" ] || { echo "f$i"; return; }
    done
    echo ok
}

TEST mcli volume create sv 127.0.0.1:$B/s0 127.0.0.1:$B/s1 force
TEST mcli volume start sv
PORT0=$(row 0 | cut -d' ' -f1)
TEST [ -n "$PORT0" ]
TEST mount_volume sv "$M0"
for i in $(seq 1 20); do echo "data $i" > "$M0/f$i"; done
EXPECT "ok" all_read "$M0"
# Both bricks hold some of the files.
TEST [ "$(ls "$B/s0" | grep -c '^f')" -gt 0 ]
TEST [ "$(ls "$B/s1" | grep -c '^f')" -gt 0 ]

# (1) A brick killed -9 comes back by itself on the same port.
P0=$(bpid 0)
TEST kill -9 "$P0"
EXPECT_WITHIN 15 "Y" brick_back 0 "$P0"
EXPECT "1" n_procs 0
EXPECT "$PORT0 Y $(bpid 0)" row 0
EXPECT_WITHIN 30 "ok" all_read "$M0"
EXPECT_MATCH "brick 127.0.0.1:$B/s0 of sv \(pid $P0, port $PORT0\) died" cat "$T/log/mortard.log"

# (2) mortard and then both bricks killed -9 (a reboot, or a crash of
# everything): the next mortard starts them.
P0=$(bpid 0)
P1=$(bpid 1)
TEST umount "$M0"
TEST kill -9 "$(mortard_pid)"
TEST kill -9 "$P0" "$P1"
EXPECT_WITHIN 10 "N" proc_alive "$P0"
EXPECT_WITHIN 10 "N" proc_alive "$P1"
TEST start_mortard
EXPECT_WITHIN 20 "Y" brick_back 0 "$P0"
EXPECT_WITHIN 20 "Y" brick_back 1 "$P1"
EXPECT_MATCH "of started volume sv is not running: starting it" cat "$T/log/mortard.log"
TEST mount_volume sv "$M1"
EXPECT_WITHIN 30 "ok" all_read "$M1"
TEST sh -c "echo more > '$M1/g'"
EXPECT "more" cat "$M1/g"

# (3) Bricks alive while mortard dies and restarts: adopted, not doubled.
P0=$(bpid 0)
P1=$(bpid 1)
TEST kill -9 "$(mortard_pid)"
TEST start_mortard
# A few supervision rounds.
TEST mcli volume status sv
sleep 3
EXPECT "$P0" bpid 0
EXPECT "$P1" bpid 1
EXPECT "1" n_procs 0
EXPECT "1" n_procs 1
EXPECT "Y" proc_alive "$P0"
EXPECT_MATCH "adopted brick 127.0.0.1:$B/s0 of sv \(pid $P0\)" cat "$T/log/mortard.log"
EXPECT "ok" all_read "$M1"

# (4) A brick that cannot start (its port is taken while mortard is held):
# retried with back-off, given up after the limit, left offline.
MPID=$(mortard_pid)
TEST kill -STOP "$MPID"
_T_HELD=$MPID
TEST kill -9 "$P0"
EXPECT_WITHIN 10 "N" proc_alive "$P0"
bg_run python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
open(sys.argv[2], "w").close()
time.sleep(600)' "$PORT0" "$T/squatter.up"
SQUAT=${_T_BG[-1]}
EXPECT_WITHIN 10 "Y" sh -c "[ -e '$T/squatter.up' ] && echo Y || echo N"
TEST kill -CONT "$MPID"
_T_HELD=
EXPECT_WITHIN 60 "Y" sh -c "grep -q 'brick 127.0.0.1:$B/s0 of sv died or failed to start 5 times within 300 s: giving up' '$T/log/mortard.log' && echo Y || echo N"
# Tries after the death was seen: at once, then after 1, 2 and 4 s; the
# 5th failure gives up.
EXPECT "4" tries_since "s0 of sv (pid $P0, port $PORT0) died"
EXPECT_MATCH "next start in 1000 ms" cat "$T/log/mortard.log"
EXPECT_MATCH "next start in 4000 ms" cat "$T/log/mortard.log"
EXPECT "N/A N N/A" row 0
EXPECT "0" n_procs 0
# The cause goes away; given up means no more tries...
bg_kill "$SQUAT"
sleep 4
EXPECT "0" n_procs 0
EXPECT "N/A N N/A" row 0
# ...until start force, which starts it again (on its port).
TEST mcli volume start sv force
EXPECT "1" n_procs 0
EXPECT "$PORT0 Y $(bpid 0)" row 0
EXPECT_WITHIN 30 "ok" all_read "$M1"
# And it is supervised again: a kill is repaired.
P0=$(bpid 0)
TEST kill -9 "$P0"
EXPECT_WITHIN 15 "Y" brick_back 0 "$P0"

# (5) Bricks stopped on purpose stay stopped. remove-brick first: the
# removed brick's process is not restarted.
TEST mcli volume add-brick sv 127.0.0.1:$B/s2 force
EXPECT_WITHIN 10 "1" n_procs 2
P2=$(bpid 2)
TEST mcli volume remove-brick sv 127.0.0.1:$B/s2 force
EXPECT_WITHIN 10 "N" proc_alive "$P2"
sleep 3
EXPECT "0" n_procs 2
TEST umount "$M1"
TEST mcli volume stop sv
sleep 3
EXPECT "0" n_procs 0
EXPECT "0" n_procs 1
TEST kill -9 "$(mortard_pid)"
TEST start_mortard
TEST mcli volume info sv
sleep 3
EXPECT "0" n_procs 0
EXPECT "0" n_procs 1
EXPECT_MATCH "Status: Stopped" mcli volume info sv
# Started again: both come up, the data is there.
TEST mcli volume start sv
EXPECT "1" n_procs 0
EXPECT "1" n_procs 1
TEST mount_volume sv "$M0"
EXPECT_WITHIN 30 "ok" all_read "$M0"
TEST umount "$M0"
TEST mcli volume stop sv
TEST mcli volume delete sv
