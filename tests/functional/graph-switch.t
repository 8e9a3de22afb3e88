#!/usr/bin/env bash
# Live graph switch of a FUSE client: SIGHUP with a --volfile whose shape
# differs (debug/trace between mount/fuse and protocol/client, or not)
# moves the mounted client to a new graph without a remount, 1,000 times.
# Throughout, a file kept open by a helper process (python, one fd) is
# written and read back through that same fd, new files appear, `ls` sees
# everything and the mount never changes. Old graphs are freed: the log
# says so for every switch, the statedump lists exactly one graph at the
# end, and memory does not grow (core bytes of the statedump within
# 256 KiB and VmRSS within 8 MiB between switch 100 and switch 1,000;
# one leaked graph per switch would cost megabytes). Then a switch to a
# volfile whose brick port refuses connections fails with one log line
# naming the refusal, and the old graph keeps serving.
# TIMEOUT: 1200
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

N_SWITCH=${GRAPH_SWITCH_COUNT:-1000}

TEST start_volume -o connect-timeout=3
# The two shapes (plain.vol, traced.vol), the client's pid and files.
TEST switch_shapes

# A process with one fd open on $M0/held and one on the directory $M0
# for the whole test: "w OFF TEXT" writes TEXT at OFF, "r OFF LEN" reads,
# "l" lists the directory through its fd; answers one line.
coproc HOLD {
    python3 -u -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
dfd = os.open(os.path.dirname(sys.argv[1]), os.O_RDONLY | os.O_DIRECTORY)
for line in sys.stdin:
    p = line.rstrip("\n").split(" ", 2)
    try:
        if p[0] == "w":
            os.pwrite(fd, p[2].encode(), int(p[1]))
            print("ok")
        elif p[0] == "r":
            print(os.pread(fd, int(p[2]), int(p[1])).decode() or "EOF")
        elif p[0] == "l":
            print(len(os.listdir(dfd)))
    except OSError as e:
        print(os.strerror(e.errno))
' "$M0/held"
}
_T_BG+=("$HOLD_PID")

hold() {
    local ans=""
    echo "$*" >&"${HOLD[1]}" || return 1
    read -r -t 20 ans <&"${HOLD[0]}"
    echo "$ans"
}

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

# Sum of the [core] section's mem.*.bytes in a statedump on stdin.
core_bytes() {
    awk '/^\[core\]/ { c = 1; next } /^\[/ { c = 0 }
         c && /^mem\..*\.bytes=/ { split($0, a, "="); s += a[2] }
         END { print s + 0 }'
}

rss_kb() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# Graphs in the statedump held in $DUMP.
count_graphs() {
    grep -c '^\[graph ' <<< "$DUMP"
}

freed_count() {
    grep -c 'old graph [0-9]* freed' "$CLOG"
}

EXPECT "ok" hold w 0 "generation-0"
EXPECT "generation-0" hold r 0 12

# Load during the switches, so that they happen with calls in flight
# (old graphs drain them) and with handles opened in one graph and used
# or released in the next: write, read back, list, in a loop.
mkdir -p "$M0/load"
load_loop() {
    local i=0
    while [ ! -e "$T/load-stop" ]; do
        echo "load $i" > "$M0/load/f" || echo "write $i" >> "$T/load-errors"
        [ "$(cat "$M0/load/f")" = "load $i" ] ||
            echo "read $i" >> "$T/load-errors"
        ls "$M0/load" > /dev/null || echo "ls $i" >> "$T/load-errors"
        i=$((i + 1))
    done
    echo "$i" > "$T/load-count"
}
load_loop &
LOAD_PID=$!
_T_BG+=("$LOAD_PID")

FAILED_AT=""
for ((n = 1; n <= N_SWITCH; n++)); do
    vol="$T/vol/plain.vol"
    ((n % 2)) && vol="$T/vol/traced.vol"
    if ! switch_to "$vol"; then
        FAILED_AT=$n
        break
    fi
    if ((n % 50 == 0)); then
        # Through the same fd: write, read back, and the data is on the
        # brick; a new file; ls sees everything made so far.
        [ "$(hold w 0 "generation-$n")" = ok ] || { FAILED_AT="w$n"; break; }
        [ "$(hold r 0 $((11 + ${#n})))" = "generation-$n" ] ||
            { FAILED_AT="r$n"; break; }
        echo "file $n" > "$M0/f$n" || { FAILED_AT="c$n"; break; }
        [ "$(ls "$M0" | wc -l)" -eq $((n / 50 + 2)) ] ||
            { FAILED_AT="ls$n"; break; }
        [ "$(hold l)" -eq $((n / 50 + 2)) ] || { FAILED_AT="l$n"; break; }
    fi
    if ((n == 100)); then
        EXPECT_WITHIN 30 "100" freed_count
        CORE_100=$(statedump_of "$CPID" | core_bytes)
        RSS_100=$(rss_kb "$CPID")
    fi
done
EXPECT "" echo "$FAILED_AT"
touch "$T/load-stop"
wait "$LOAD_PID"
EXPECT "" sh -c "cat '$T/load-errors' 2> /dev/null"
EXPECT_MATCH "^[1-9][0-9]+" cat "$T/load-count"
EXPECT "$N_SWITCH" grep -c 'without a remount' "$CLOG"
EXPECT_WITHIN 60 "$N_SWITCH" freed_count
EXPECT "Y" is_alive "$CPID"
EXPECT "$MNT_ID_BEFORE" awk -v m="$M0" '$5 == m { print $1 }' \
    /proc/self/mountinfo
EXPECT "1" sh -c "awk '\$5 == \"$M0\"' /proc/self/mountinfo | wc -l"

# The open fd still reads what it wrote; the brick has it too.
EXPECT "generation-$N_SWITCH" hold r 0 $((11 + ${#N_SWITCH}))
EXPECT "generation-$N_SWITCH" cat "$B0/held"
EXPECT "file 50" cat "$M0/f50"
EXPECT "$((N_SWITCH / 50 + 2))" sh -c "ls '$M0' | wc -l"
EXPECT "$((N_SWITCH / 50 + 2))" hold l

# Exactly one graph left, and no growth between switch 100 and the end.
DUMP=$(statedump_of "$CPID")
EXPECT "1" count_graphs
EXPECT_MATCH "graphs_attached=1" echo "$DUMP"
CORE_END=$(core_bytes <<< "$DUMP")
RSS_END=$(rss_kb "$CPID")
echo "# core bytes after 100: $CORE_100, after $N_SWITCH: $CORE_END;" \
    "VmRSS $RSS_100 kB -> $RSS_END kB"
TEST test "$((CORE_END - CORE_100))" -lt $((256 * 1024))
TEST test "$((RSS_END - RSS_100))" -lt $((8 * 1024))

# A volfile that cannot work: its brick port refuses connections.
alloc_port PDEAD
sed "s/option remote-port $P0/option remote-port $PDEAD/" \
    "$T/vol/traced.vol" > "$T/vol/dead.vol"
EXPECT "1" grep -c "remote-port $PDEAD" "$T/vol/dead.vol"
TEST ! switch_to "$T/vol/dead.vol"
EXPECT_WITHIN 30 "1" grep -c 'graph switch failed' "$CLOG"
EXPECT_MATCH "switch failed: new graph [0-9]+ not ready: .*refused.*keeps" \
    grep 'graph switch failed' "$CLOG"
EXPECT "Y" is_alive "$CPID"
EXPECT "generation-$N_SWITCH" hold r 0 $((11 + ${#N_SWITCH}))
TEST sh -c "echo after-failure > '$M0/after'"
EXPECT "after-failure" cat "$B0/after"
EXPECT "ok" hold w 0 "still-served"
EXPECT "still-served" head -c 12 "$B0/held"
DUMP=$(statedump_of "$CPID")
EXPECT "1" count_graphs

# And a good volfile after the failure switches again (the shape other
# than the running one's).
vol="$T/vol/traced.vol"
((N_SWITCH % 2)) && vol="$T/vol/plain.vol"
TEST cp "$vol" "$CVOL"
TEST kill -HUP "$CPID"
EXPECT_WITHIN 30 "$((N_SWITCH + 1))" grep -c 'without a remount' "$CLOG"
EXPECT "still-served" hold r 0 12
EXPECT_WITHIN 30 "$((N_SWITCH + 1))" freed_count
exec {HOLD[1]}>&-
wait "$HOLD_PID" 2> /dev/null
