#!/usr/bin/env bash
# mortard's commands without mounting: create/start/stop/delete/info/
# status/list/set/get/reset, set help, peer status, pool list, XML and
# JSON output, and every validation error (non-zero exit, one line,
# store unchanged).
# TIMEOUT: 180
# REQUIRES: root
. "$(dirname "$0")/../lib/include.rc"

TEST start_mortard
EXPECT "Y" is_alive "$(mortard_pid)"
# A second mortard on the same run dir is refused.
EXPECT "1" sh -c "'$MORTARD' --state-dir '$T/state2' --run-dir '$T/run' --log-dir '$T/log' --mgmt-port 1 2> '$T/dup.err'; echo \$?"
EXPECT_MATCH "another mortard is running" cat "$T/dup.err"

EXPECT "No volumes present in cluster" mcli volume list
EXPECT "Number of Peers: 0" mcli peer status
EXPECT_MATCH "localhost.*Connected" mcli pool list
# Any address of this host is this node, whatever the port (GlusterFS).
EXPECT "peer probe: success. Probe on localhost not needed" mcli peer probe 127.0.0.2
EXPECT "peer probe: success. Probe on localhost not needed" mcli peer probe "127.0.0.1:1"
EXPECT "Number of Peers: 0" mcli peer status
TEST ! mcli peer probe "127.0.0.1:99999"

B1="$T/bricks/v1"
track_brick v1
TEST mcli volume create v1 127.0.0.1:$B1 force
EXPECT "v1" mcli volume list
EXPECT_MATCH "Status: Created" mcli volume info v1
TEST getfattr -n trusted.mortar.volume-id "$B1"

# Validation errors: each fails with one line and changes nothing.
SUM=$(store_sum)
check_fail() {
    local want="$1"
    shift
    mcli "$@" > "$T/f.out" 2> "$T/f.err"
    local rc=$?
    [ "$rc" = "$want" ] && [ "$(wc -l < "$T/f.err")" = 1 ] &&
        [ "$(store_sum)" = "$SUM" ]
}
TEST check_fail 1 volume create v1 127.0.0.1:$T/bricks/other force
TEST check_fail 1 volume create -bad 127.0.0.1:$T/bricks/x force
TEST check_fail 1 volume create "a.b" 127.0.0.1:$T/bricks/x force
TEST check_fail 1 volume create v2 127.0.0.1:$B1/sub force
TEST check_fail 1 volume create v2 127.0.0.1:$T/bricks force
TEST check_fail 1 volume create v2 127.0.0.1:relative force
TEST check_fail 1 volume create v2 192.0.2.7:$T/bricks/x force
TEST check_fail 1 volume create v2 127.0.0.1:$T/bricks/x
TEST check_fail 1 volume create v2 127.0.0.1:$T/bricks/x 127.0.0.1:$T/bricks/x force
EXPECT_MATCH "given more than once" cat "$T/f.err"
# Replica volumes are checked in mgmt-replica-cmds.t, arbiter in
# mgmt-arbiter.t; thin-arbiter is refused.
TEST check_fail 1 volume create v2 replica 2 thin-arbiter 1 \
    127.0.0.1:$T/bricks/x 127.0.0.1:$T/bricks/y 127.0.0.1:$T/bricks/z force
EXPECT_MATCH "thin-arbiter volumes are not supported yet" cat "$T/f.err"
TEST check_fail 2 volume create v2
# More bricks than distribute takes (256): refused before any is checked.
MANY=$(for i in $(seq 257); do printf '127.0.0.1:%s/bricks/m%d ' "$T" "$i"; done)
# shellcheck disable=SC2086 # one word per brick
TEST check_fail 1 volume create v2 $MANY force
EXPECT_MATCH "257 bricks; a volume has at most 256" cat "$T/f.err"
TEST touch "$T/bricks/afile"
TEST check_fail 1 volume create v2 127.0.0.1:$T/bricks/afile force
TEST check_fail 1 volume set v1 no.such.option 1
TEST check_fail 1 volume set v1 io-threads.thread-count 0
TEST check_fail 1 volume set v1 io-threads.thread-count lots
TEST check_fail 1 volume set v1 posix.directory /tmp
TEST check_fail 1 volume set nosuch io-threads.thread-count 2
TEST check_fail 2 volume set v1 io-threads.thread-count
TEST check_fail 1 volume start nosuch
TEST check_fail 1 volume stop v1
TEST check_fail 1 volume status v1
TEST check_fail 1 volume delete nosuch
TEST check_fail 2 volume frobnicate
EXPECT "" sh -c "ls '$T/bricks' | grep -x x"

# Options: GlusterFS aliases resolve to the class keys.
TEST mcli volume set v1 performance.io-thread-count 4
EXPECT_MATCH "io-threads.thread-count: 4" mcli volume info v1
EXPECT_MATCH "option thread-count 4" cat "$T/state/vols/v1/brick0.vol"
TEST mcli volume set v1 auth.allow 127.0.0.1
EXPECT_MATCH "option auth.addr.v1-brick0.allow 127.0.0.1" cat "$T/state/vols/v1/brick0.vol"
TEST mcli volume set v1 client.ping-timeout 10
EXPECT_MATCH "option ping-timeout 10" cat "$T/state/vols/v1/client.vol"
EXPECT_MATCH "^performance.io-thread-count +4$" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume get v1 performance.io-thread-count | tail -n 1"
EXPECT_MATCH "^posix.reserve +1$" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume get v1 all | grep posix.reserve"
TEST mcli volume reset v1 client.ping-timeout
EXPECT "" sh -c "grep ping-timeout '$T/state/vols/v1/options'"
EXPECT_MATCH "Option: io-threads.thread-count" mcli volume set help

# Machine-readable output.
EXPECT_MATCH "<opRet>0</opRet>" mcli --xml volume info v1
EXPECT_MATCH "<name>v1</name>" mcli --xml volume info v1
EXPECT_MATCH "<opRet>-1</opRet>" mcli --xml volume info nosuch
TEST sh -c "'$MDCTL' -s '$T/run/mortard.sock' --json volume info v1 | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"volInfo\"][\"volumes\"][0][\"name\"]==\"v1\"'"

# Lifecycle.
TEST mcli volume start v1
SUM=$(store_sum)
TEST check_fail 1 volume start v1
EXPECT_MATCH "Brick 127.0.0.1:$B1 +[0-9]+ +Y +[0-9]+" mcli volume status v1
TEST mcli volume status all detail
TEST check_fail 1 volume delete v1
BP=$(cat "$T/run/v1-brick0.pid")
EXPECT "Y" is_alive "$BP"
TEST mcli volume stop v1
EXPECT_WITHIN 10 "N" proc_alive "$BP"
TEST mcli volume reset v1 all
EXPECT "0" sh -c "grep -vc '^#' '$T/state/vols/v1/options'"
TEST mcli volume delete v1
EXPECT "No volumes present in cluster" mcli volume list
TEST ! getfattr -n trusted.mortar.volume-id "$B1"
# The brick can be reused after delete.
TEST mcli volume create v1 127.0.0.1:$B1 force
TEST mcli volume delete v1

# A wide volume in one command (GlusterFS users create such volumes
# brick list and all; the CLI took 64 words at most before).
WIDE=$(for i in $(seq 0 99); do printf '127.0.0.1:%s/bricks/w%d ' "$T" "$i"; done)
# shellcheck disable=SC2086 # one word per brick
TEST mcli volume create wide $WIDE force
EXPECT_MATCH "Number of Bricks: 100" mcli volume info wide
EXPECT "100" grep -c "type protocol/client" "$T/state/vols/wide/client.vol"
EXPECT_MATCH "subvolumes wide-brick0 wide-brick1 .* wide-brick99\$" \
    grep "subvolumes wide-brick" "$T/state/vols/wide/client.vol"
TEST mcli volume delete wide
# Past what one command may carry: a clear error before anything is sent.
HUGE=$(for i in $(seq 1100); do printf 'x%d ' "$i"; done)
# shellcheck disable=SC2086 # one word each
EXPECT "2" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume create huge $HUGE 2> '$T/huge.err'; echo \$?"
EXPECT_MATCH "the command has 1103 words; at most 1024" cat "$T/huge.err"

# A hand-corrupted store file: mortard refuses to start, naming file:line.
TEST mcli volume create v3 127.0.0.1:$T/bricks/v3 force
TEST stop_pid "$(mortard_pid)" TERM
TEST sh -c "echo 'garbage' >> '$T/state/vols/v3/info'"
EXPECT "1" sh -c "'$MORTARD' --state-dir '$T/state' --run-dir '$T/run' --log-dir '$T/log' --mgmt-port $MGMT_PORT 2> '$T/bad.err'; echo \$?"
EXPECT_MATCH "vols/v3/info:[0-9]+: expected key=value" cat "$T/bad.err"
