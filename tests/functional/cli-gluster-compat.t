#!/usr/bin/env bash
# The GlusterFS CLI shapes a user's scripts rely on (issue 25 item 3),
# through the mortar CLI against a real mortard:
#  1. volume status VOL BRICK [detail] shows that brick only; a brick not
#     in the volume: "No brick B in volume V", exit 1;
#  2. an offline brick: port and pid N/A in text, <pid>-1</pid> in XML;
#  3. volume get VOL all lists Mortar's keys and GlusterFS's names (same
#     value, two columns, AliasOf in XML); volume get of a GlusterFS name
#     prints the row under that name;
#  4. peer probe of this host's addresses (any port) is "Probe on
#     localhost not needed"; with network namespaces, HOST:PORT dials
#     PORT and HOST alone the default port;
#  5. system:: getspec VOL (and system getspec) prints the client volfile;
#  6. a 10,000-byte word is refused before connecting, naming its size
#     and the limit, nothing changed;
#  7. statedumps of a brick, a client and mortard start with
#     DUMP-START-TIME and end with DUMP-END-TIME, no temporary file left.
# Bad input fails with one line and leaves the store alone.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

export MORTAR_SOCKET="$T/run/mortard.sock"
B="$T/bricks"
# err CMD...: stdout and stderr of CMD.
err() {
    "$@" 2>&1
}
# rc CMD...: the exit status of CMD.
rc() {
    "$@" > /dev/null 2>&1
    echo $?
}

TEST start_mortard
EXPECT "Y" is_alive "$(mortard_pid)"
track_brick cg brick0
track_brick cg brick1
TEST "$MORTAR" volume create cg "127.0.0.1:$B/b0" "127.0.0.1:$B/b1" force
TEST "$MORTAR" volume start cg
BP0=$(cat "$T/run/cg-brick0.pid")
BP1=$(cat "$T/run/cg-brick1.pid")

# ---- 1. volume status VOL BRICK [detail] ----
ST1=$("$MORTAR" volume status cg "127.0.0.1:$B/b1")
EXPECT "0" rc "$MORTAR" volume status cg "127.0.0.1:$B/b1"
EXPECT "1" sh -c "echo \"\$1\" | grep -c '^Brick '" _ "$ST1"
EXPECT_MATCH "Brick 127.0.0.1:$B/b1 +[0-9]+ +Y +$BP1" echo "$ST1"
EXPECT "0" sh -c "echo \"\$1\" | grep -c '/b0\|Task Status'" _ "$ST1"
EXPECT "2" sh -c "'$MORTAR' volume status cg | grep -c '^Brick '"
EXPECT "Brick                : 127.0.0.1:$B/b1" \
    sh -c "'$MORTAR' volume status cg '127.0.0.1:$B/b1' detail | grep '^Brick '"
EXPECT "Pid                  : $BP1" \
    sh -c "'$MORTAR' volume status cg '127.0.0.1:$B/b1' detail | grep '^Pid '"
EXPECT "<nodeCount>1</nodeCount>" \
    sh -c "'$MORTAR' --xml volume status cg '127.0.0.1:$B/b1' | grep -o '<nodeCount>[0-9]*</nodeCount>'"
EXPECT "1" sh -c "'$MORTAR' --xml volume status cg '127.0.0.1:$B/b1' | grep -c '<node>'"
EXPECT "1" sh -c "'$MORTAR' --json volume status cg '127.0.0.1:$B/b1' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"volStatus\"][\"volumes\"][0][\"nodeCount\"])'"
SUM=$(store_sum)
EXPECT "1" rc "$MORTAR" volume status cg "127.0.0.1:$B/nope"
EXPECT "No brick 127.0.0.1:$B/nope in volume cg" err "$MORTAR" volume status cg "127.0.0.1:$B/nope"
EXPECT "2" rc "$MORTAR" volume status all "127.0.0.1:$B/b1"
EXPECT "1" sh -c "'$MORTAR' volume status all '127.0.0.1:$B/b1' 2>&1 | wc -l"
EXPECT "1" rc "$MORTAR" volume status nope "127.0.0.1:$B/b1"
EXPECT "$SUM" store_sum

# ---- 2. an offline brick: N/A in text, pid -1 in XML ----
# Its port is taken while mortard is held, so the restarts fail.
PORT1=$("$MORTAR" volume status cg | awk -v b="127.0.0.1:$B/b1" '$2 == b { print $3 }')
MPID=$(mortard_pid)
TEST kill -STOP "$MPID"
TEST kill -9 "$BP1"
EXPECT_WITHIN 10 "N" proc_alive "$BP1"
bg_run python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
open(sys.argv[2], "w").close()
time.sleep(600)' "$PORT1" "$T/squatter.up"
SQUAT=${_T_BG[-1]}
EXPECT_WITHIN 10 "Y" sh -c "[ -e '$T/squatter.up' ] && echo Y || echo N"
TEST kill -CONT "$MPID"
EXPECT_MATCH "Brick 127.0.0.1:$B/b1 +N/A +N +N/A" "$MORTAR" volume status cg "127.0.0.1:$B/b1"
EXPECT "0" sh -c "'$MORTAR' volume status cg | grep -c ' -1\$'"
XML1=$("$MORTAR" --xml volume status cg "127.0.0.1:$B/b1" | tr -d ' \n')
EXPECT_MATCH "<status>0</status><port>N/A</port><pid>-1</pid>" echo "$XML1"
EXPECT_MATCH '"pid": *"-1"' "$MORTAR" --json volume status cg "127.0.0.1:$B/b1"
EXPECT "Pid                  : N/A" \
    sh -c "'$MORTAR' volume status cg '127.0.0.1:$B/b1' detail | grep '^Pid '"
# The other brick is untouched; the offline one comes back.
EXPECT_MATCH "Brick 127.0.0.1:$B/b0 +[0-9]+ +Y +$BP0" "$MORTAR" volume status cg
bg_kill "$SQUAT"
TEST "$MORTAR" volume start cg force
EXPECT_WITHIN 20 "Y" sh -c "'$MORTAR' volume status cg '127.0.0.1:$B/b1' | awk '\$1 == \"Brick\" { print \$4 }'"

# ---- 3. volume get: both names ----
TEST "$MORTAR" volume set cg performance.io-thread-count 7
GET=$("$MORTAR" volume get cg all)
EXPECT "Option Value" sh -c "echo \"\$1\" | head -n 1 | awk '{ print \$1, \$2 }'" _ "$GET"
EXPECT "7" sh -c "echo \"\$1\" | awk '\$1 == \"performance.io-thread-count\" { print \$2 }'" _ "$GET"
EXPECT "7" sh -c "echo \"\$1\" | awk '\$1 == \"io-threads.thread-count\" { print \$2 }'" _ "$GET"
# The alias row follows its key; every row has two columns.
EXPECT "performance.io-thread-count" \
    sh -c "echo \"\$1\" | grep -A1 '^io-threads.thread-count ' | tail -n 1 | awk '{ print \$1 }'" _ "$GET"
EXPECT "0" sh -c "echo \"\$1\" | awk 'NF != 2' | wc -l" _ "$GET"
EXPECT "1" sh -c "echo \"\$1\" | grep -c '^performance.write-behind '" _ "$GET"
EXPECT "1" sh -c "echo \"\$1\" | grep -c '^transport.socket.ssl-enabled '" _ "$GET"
EXPECT "performance.write-behind" \
    sh -c "'$MORTAR' volume get cg performance.write-behind | tail -n 1 | awk '{ print \$1 }'"
EXPECT "performance.io-thread-count 7" \
    sh -c "'$MORTAR' volume get cg performance.io-thread-count | tail -n 1 | awk '{ print \$1, \$2 }'"
EXPECT "io-threads.thread-count 7" \
    sh -c "'$MORTAR' volume get cg io-threads.thread-count | tail -n 1 | awk '{ print \$1, \$2 }'"
XG=$("$MORTAR" --xml volume get cg performance.write-behind | tr -d ' \n')
EXPECT_MATCH "<Option>performance.write-behind</Option><Value>on</Value><AliasOf>diagnostics.write-behind</AliasOf>" echo "$XG"
EXPECT "io-threads.thread-count" sh -c "'$MORTAR' --json volume get cg all | python3 -c 'import json,sys; o=json.load(sys.stdin)[\"volGetopts\"][\"Opts\"]; print([x[\"AliasOf\"] for x in o if x[\"Option\"] == \"performance.io-thread-count\"][0])'"
SUM=$(store_sum)
EXPECT "1" rc "$MORTAR" volume get cg no.such-key
EXPECT "volume get option: failed: option no.such-key does not exist" err "$MORTAR" volume get cg no.such-key
EXPECT "$SUM" store_sum

# ---- 4. peer probe: this node by address, whatever the port ----
alloc_port PX
for h in 127.0.0.1 "127.0.0.1:$PX" 127.0.0.2 localhost "$(hostname)"; do
    EXPECT "peer probe: success. Probe on localhost not needed" "$MORTAR" peer probe "$h"
done
EXPECT "Number of Peers: 0" "$MORTAR" peer status
SUM=$(store_sum)
EXPECT "1" rc "$MORTAR" peer probe "127.0.0.1:0"
EXPECT "peer probe: failed: bad address '127.0.0.1:0' (HOST or HOST:PORT)" err "$MORTAR" peer probe "127.0.0.1:0"
EXPECT "$SUM" store_sum

# ---- 5. system:: getspec ----
SPEC=$(mcli --getspec cg | tail -n +2)
EXPECT_MATCH "type protocol/client" echo "$SPEC"
EXPECT "$SPEC" "$MORTAR" system:: getspec cg
EXPECT "$SPEC" "$MORTAR" system getspec cg
EXPECT "1" rc "$MORTAR" system:: getspec nope
EXPECT "getspec: failed: Volume nope does not exist" err "$MORTAR" system:: getspec nope
EXPECT "2" rc "$MORTAR" system:: getspec

# ---- 6. a 10,000-byte word ----
LONG=$(head -c 10000 /dev/zero | tr '\0' x)
SUM=$(store_sum)
EXPECT "1" rc "$MORTAR" volume set cg client.ping-timeout "$LONG"
OUT6=$(err "$MORTAR" volume set cg client.ping-timeout "$LONG")
EXPECT "1" sh -c "echo \"\$1\" | wc -l" _ "$OUT6"
EXPECT_MATCH "word 5 of the command .* is 10000 bytes, longer than 4096 bytes" echo "$OUT6"
EXPECT "0" sh -c "echo \"\$1\" | grep -c 'Connection failed'" _ "$OUT6"
EXPECT "1" rc "$MORTAR" volume create "$LONG" "127.0.0.1:$B/long" force
EXPECT "$SUM" store_sum
EXPECT "N" sh -c "[ -e '$B/long' ] && echo Y || echo N"
EXPECT "cg" "$MORTAR" volume list

# ---- 7. statedumps end with DUMP-END-TIME ----
TS='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}'
# dump_ok FILE: "ok" if FILE starts and ends with GlusterFS's markers.
dump_ok() {
    head -n 1 "$1" | grep -Eq "^DUMP-START-TIME: $TS\$" &&
        tail -n 1 "$1" | grep -Eq "^DUMP-END-TIME: $TS\$" && echo ok
}
BP0=$(cat "$T/run/cg-brick0.pid")
rm -f "$T/run/dumps"/mortarfsd.*
TEST "$MORTAR" volume statedump cg
EXPECT_WITHIN 10 "2" sh -c "ls '$T/run/dumps' | grep -c '^mortarfsd\.'"
for f in "$T/run/dumps"/mortarfsd.*; do
    EXPECT "ok" dump_ok "$f"
    EXPECT_MATCH "\[xlator cg-posix" cat "$f"
done
EXPECT "ok" dump_ok "$(ls "$T/run/dumps/mortarfsd.$BP0".dump.* | head -n 1)"
# The helpers return a dump once its end marker is there.
dump_last_line() {
    brick_dump "$1" | tail -n 1
}
EXPECT_MATCH "^DUMP-END-TIME: " dump_last_line "$BP0"
EXPECT "storage/posix" dump_value "$BP0" "xlator cg-posix" type
# mortard's dump: its own sections, then the marker.
MPID=$(mortard_pid)
TEST kill -USR1 "$MPID"
EXPECT_WITHIN 10 "1" sh -c "ls '$T/run/dumps' | grep -c '^mortard\.$MPID\.dump\.'"
MD=$(ls "$T/run/dumps/mortard.$MPID".dump.* | head -n 1)
EXPECT "ok" dump_ok "$MD"
EXPECT_MATCH "\[mortard.volume.cg\]" cat "$MD"
# A client's dump.
TEST mount_volume cg "$M0"
TEST sh -c "echo x > '$M0/f'"
CPID=$(fsd_pid "client-$(echo "$M0" | tr '/' '_')")
TEST statedump_of "$CPID"
EXPECT "ok" dump_ok "$(ls "$T/dump/mortarfsd.$CPID".dump.* | head -n 1)"
EXPECT_MATCH "mount/fuse" cat "$(ls "$T/dump/mortarfsd.$CPID".dump.* | head -n 1)"
# No temporary file is left behind anywhere.
EXPECT "0" sh -c "ls -A '$T/run/dumps' '$T/dump' | grep -c '^\.'"

# ---- 4 (continued). HOST:PORT dials PORT: two nodes in namespaces ----
if netns_cluster 2 2> "$T/netns.err"; then
    TEST node_mortard 1
    TEST node_mortard 2 --mgmt-port 24111
    EXPECT "1" rc ncli 1 peer probe 10.213.77.2
    EXPECT_MATCH "10.213.77.2:24100" err ncli 1 peer probe 10.213.77.2
    EXPECT "Number of Peers: 0" ncli 1 peer status
    EXPECT "peer probe: success. Probe on localhost not needed" ncli 1 peer probe 10.213.77.1:24111
    EXPECT "peer probe: success" ncli 1 peer probe 10.213.77.2:24111
    EXPECT_WITHIN 15 "1" connected_peers 1
    EXPECT_MATCH "Hostname: 10.213.77.2" ncli 1 peer status
else
    echo "# ip netns unavailable ($(head -n 1 "$T/netns.err")): HOST:PORT not dialed" >&2
fi
