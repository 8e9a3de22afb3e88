#!/usr/bin/env bash
# mortard's side of distribute volumes, without mounting: create with 4
# bricks (info/status/--xml/--json, client volfile shape), the
# diagnostics.client-trace graph option, add-brick on a started volume,
# every bad input of add-brick/remove-brick/rebalance (exit code, one
# line, store unchanged), rebalance start/status/stop and its state file,
# a rebalance found again after mortard is killed -9, one that died shown
# as failed, remove-brick start/status/stop/commit/force.
# The rebalance process is a stand-in script (mortarfsd --rebalance is
# exercised with real data in mgmt-dist-data.t): it records its command
# line, writes the pid file and a state file in the contract's format,
# reports ready on --ready-fd (a run refused at the start with STATE.refuse
# says why there instead and exits 1), and completes when the test
# creates STATE.finish, so every status is
# reached deterministically. Bricks are the real mortarfsd.
# TIMEOUT: 300
# REQUIRES: root
. "$(dirname "$0")/../lib/include.rc"

REAL_FSD="$MORTARFSD"
MORTARFSD="$T/fake-mortarfsd"
cat > "$MORTARFSD" << EOF
#!/bin/bash
[ "\$1" = "--rebalance" ] || exec "$REAL_FSD" "\$@"
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
    case "\${args[i]}" in
    --rebalance-state=*) state="\${args[i]#*=}" ;;
    --pid-file) pidf="\${args[i+1]}" ;;
    --ready-fd=*) rfd="\${args[i]#*=}" ;;
    esac
done
printf '%s\n' "\$*" > "\$state.args"
echo \$\$ > "\$pidf"
if [ -e "\$state.refuse" ]; then
    printf '1%s' "\$(cat "\$state.refuse")" >&\$rfd
    exit 1
fi
moved=0
[ -f "\$state" ] && moved=\$(sed -n 's/^moved_files=//p' "\$state")
started=\$(date +%s)
write() {
    printf 'status=%s\npid=%s\nstarted=%s\nupdated=%s\nscanned_files=%s\nscanned_dirs=1\nmoved_files=%s\nmoved_bytes=%s\nfailed_files=0\nskipped_files=3\ntotal_bytes=100000\neta_seconds=%s\ncursor=/d\nerror=\n' \
        "\$1" \$\$ \$started \$(date +%s) \$((moved * 2)) \$moved \
        \$((moved * 1024)) 3725 > "\$state.tmp"
    mv "\$state.tmp" "\$state"
}
trap 'write stopped; exit 0' TERM
while [ ! -e "\$state.finish" ]; do
    moved=\$((moved + 1))
    write running
    # mortard waits for the report: running, the state file names us.
    if [ -n "\$rfd" ]; then printf 0 >&\$rfd; eval "exec \$rfd>&-"; rfd=; fi
    sleep 0.1 & wait \$!
done
rm -f "\$state.finish"
write completed
EOF
chmod +x "$MORTARFSD"

B="$T/bricks"
RB="$T/run/rebalance"
_T_PIDFILES+=("$RB/dv.pid" "$RB/dv.remove.pid")
for i in 0 1 2 3 4 5; do track_brick dv brick$i; done

TEST start_mortard
TEST mcli volume create dv 127.0.0.1:$B/b0 127.0.0.1:$B/b1 127.0.0.1:$B/b2 127.0.0.1:$B/b3 force
EXPECT_MATCH "Type: Distribute" mcli volume info dv
EXPECT_MATCH "Number of Bricks: 4" mcli volume info dv
EXPECT "Brick1: 127.0.0.1:$B/b0 Brick2: 127.0.0.1:$B/b1 Brick3: 127.0.0.1:$B/b2 Brick4: 127.0.0.1:$B/b3" \
    sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume info dv | grep '^Brick[0-9]' | tr '\n' ' ' | sed 's/ \$//'"
EXPECT_MATCH "<typeStr>Distribute</typeStr>" mcli --xml volume info dv
EXPECT_MATCH "<brickCount>4</brickCount>" mcli --xml volume info dv
TEST sh -c "'$MDCTL' -s '$T/run/mortard.sock' --json volume info dv | python3 -c 'import json,sys; v=json.load(sys.stdin)[\"volInfo\"][\"volumes\"][0]; assert v[\"typeStr\"]==\"Distribute\" and v[\"brickCount\"]==\"4\" and [b[\"path\"] for b in v[\"bricks\"]]==[\"$B/b%d\" % i for i in range(4)]'"
for i in 0 1 2 3; do
    TEST getfattr -n trusted.mortar.volume-id "$B/b$i"
done

# Client volfile: distribute over the four clients, in brick order.
CV="$T/state/vols/dv/client.vol"
EXPECT "4" grep -c "type protocol/client" "$CV"
EXPECT_MATCH "volume dv-dht" cat "$CV"
EXPECT "    subvolumes dv-brick0 dv-brick1 dv-brick2 dv-brick3" grep "subvolumes dv-brick" "$CV"
# Client-side performance translators (write-behind...) sit above it.
EXPECT "    type cluster/distribute" grep "type cluster" "$CV"
EXPECT "    subvolumes dv-dht" grep "subvolumes dv-dht" "$CV"
TOP=$(awk '/^volume /{ n = $2 } END { print n }' "$CV")
# diagnostics.client-trace puts debug/trace at the top.
TEST mcli volume set dv diagnostics.client-trace on
EXPECT "    subvolumes $TOP" sh -c "grep subvolumes '$CV' | tail -n 1"
EXPECT "    type debug/trace" sh -c "grep 'type' '$CV' | tail -n 1"
EXPECT "on" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume get dv diagnostics.client-trace | tail -n 1 | awk '{print \$2}'"
TEST mcli volume set dv diagnostics.client-trace off
EXPECT "0" grep -c "debug/trace" "$CV"
TEST mcli volume reset dv diagnostics.client-trace
TEST ! mcli volume set dv diagnostics.client-trace maybe
# The negative-entry cache: performance/nl-cache on top of the client
# graph unless performance.nl-cache (GlusterFS's key) is off, and
# features/upcall in every brick's graph.
EXPECT "1" grep -c "type performance/nl-cache" "$CV"
TEST mcli volume set dv performance.nl-cache off
EXPECT "0" grep -c "type performance/nl-cache" "$CV"
TEST mcli volume reset dv performance.nl-cache
EXPECT "1" grep -c "type performance/nl-cache" "$CV"
EXPECT "4" sh -c "grep -l 'type features/upcall' '$T'/state/vols/dv/brick*.vol | wc -l"
# cluster.* options go to distribute (once its option table is there).
if mcli volume set help | grep -q "^Option: cluster.min-free-disk"; then
    TEST mcli volume set dv cluster.min-free-disk 5%
    EXPECT_MATCH "option min-free-disk 5%" sed -n '/volume dv-dht/,/end-volume/p' "$CV"
    TEST mcli volume reset dv cluster.min-free-disk
fi
TEST mcli volume set dv cluster.min-free-inodes 10%
EXPECT_MATCH "option min-free-inodes 10%" sed -n '/volume dv-dht/,/end-volume/p' "$CV"
TEST mcli volume reset dv cluster.min-free-inodes
EXPECT "0" grep -c "min-free-inodes" "$CV"

TEST mcli volume start dv
for i in 0 1 2 3; do
    EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume status dv | awk '\$2 == \"127.0.0.1:$B/b$i\" { print \$4 }'"
done
EXPECT_MATCH "There are no active volume tasks" mcli volume status dv
EXPECT "4" sh -c "'$MDCTL' -s '$T/run/mortard.sock' --xml volume status dv | grep -c '<node>'"

# Another volume, one brick, not started.
track_brick ov
TEST mcli volume create ov 127.0.0.1:$B/o0 force

# Bad input: exit code, one line, store unchanged. mortard's peer
# monitor records the volumes it has seen (peer-sync) up to 2 s after a
# change, so the reference sum is taken once the store is quiet.
settled_sum() {
    local a b
    b=$(store_sum)
    while :; do
        sleep 2.5
        a=$(store_sum)
        [ "$a" = "$b" ] && break
        b=$a
    done
    echo "$a"
}
SUM=$(settled_sum)
check_fail() {
    local want="$1"
    shift
    mcli "$@" > "$T/f.out" 2> "$T/f.err"
    local rc=$?
    [ "$rc" = "$want" ] && [ "$(wc -l < "$T/f.err")" = 1 ] &&
        [ "$(store_sum)" = "$SUM" ]
}
TEST check_fail 1 volume set dv cluster.min-free-inodes 101%
EXPECT_MATCH "min-free-inodes" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/b1 force
EXPECT_MATCH "already a brick of volume dv" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/o0 force
EXPECT_MATCH "already a brick of volume ov" cat "$T/f.err"
TEST mkdir -p "$B/used"
TEST setfattr -n trusted.mortar.volume-id -v 0x00112233445566778899aabbccddeeff "$B/used"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/used force
EXPECT_MATCH "already part of a volume" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/n1 127.0.0.1:$B/n1 force
EXPECT_MATCH "more than once" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/n1 localhost:$B/n1/sub force
EXPECT_MATCH "nested" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/b0/sub force
TEST check_fail 1 volume add-brick dv 192.0.2.7:$B/n1 force
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/n1
EXPECT_MATCH "root file system" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:relative force
# More than distribute takes (256 subvolumes): refused before any brick
# is looked at (none of these directories exists).
MANY=$(for i in $(seq 253); do printf '127.0.0.1:%s/m%d ' "$B" "$i"; done)
# shellcheck disable=SC2086 # one word per brick
TEST check_fail 1 volume add-brick dv $MANY force
EXPECT_MATCH "has 4 bricks; 253 more would pass the limit of 256" cat "$T/f.err"
TEST check_fail 1 volume add-brick nosuch 127.0.0.1:$B/n1 force
TEST check_fail 1 volume add-brick dv replica 2 127.0.0.1:$B/n1 force
TEST check_fail 2 volume add-brick dv
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/o0 start
EXPECT_MATCH "Incorrect brick" cat "$T/f.err"
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b0 127.0.0.1:$B/b1 127.0.0.1:$B/b2 127.0.0.1:$B/b3 start
EXPECT_MATCH "all the bricks" cat "$T/f.err"
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b1 127.0.0.1:$B/b1 start
EXPECT_MATCH "more than once" cat "$T/f.err"
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b1 commit
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b1 status
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b1 stop
TEST check_fail 1 volume remove-brick ov 127.0.0.1:$B/o0 force
TEST check_fail 1 volume remove-brick nosuch 127.0.0.1:$B/b1 start
TEST check_fail 2 volume remove-brick dv 127.0.0.1:$B/b1
TEST check_fail 2 volume remove-brick dv 127.0.0.1:$B/b1 frob
TEST check_fail 1 volume rebalance ov start
EXPECT_MATCH "needs to be started" cat "$T/f.err"
TEST check_fail 1 volume rebalance dv status
TEST check_fail 1 volume rebalance dv stop
TEST check_fail 1 volume rebalance nosuch start
TEST check_fail 2 volume rebalance dv frob
TEST check_fail 2 volume rebalance dv fix-layout
EXPECT "" sh -c "ls '$B' | grep -x n1"

# add-brick on a started volume: the new brick runs, the client volfile
# has five subvolumes, the other bricks keep running.
P0=$(cat "$T/run/dv-brick0.pid")
V0=$(sed -n 's/^version=//p' "$T/state/vols/dv/info")
TEST mcli volume add-brick dv 127.0.0.1:$B/b4 force
EXPECT_MATCH "^[0-9]+$" cat "$T/run/dv-brick4.pid"
EXPECT "Y" proc_alive "$(cat "$T/run/dv-brick4.pid")"
EXPECT "$P0" cat "$T/run/dv-brick0.pid"
EXPECT "5" grep -c "type protocol/client" "$CV"
EXPECT "    subvolumes dv-brick0 dv-brick1 dv-brick2 dv-brick3 dv-brick4" grep "subvolumes dv-brick" "$CV"
TEST [ "$(sed -n 's/^version=//p' "$T/state/vols/dv/info")" -gt "$V0" ]
EXPECT_MATCH "Number of Bricks: 5" mcli volume info dv
EXPECT_WITHIN 20 "Y" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume status dv | awk '\$2 == \"127.0.0.1:$B/b4\" { print \$4 }'"

# Rebalance: the process gets the contract's command line.
HAS_THROTTLE=0
if mcli volume set help | grep -q "^Option: cluster.rebal-throttle"; then
    HAS_THROTTLE=1
    TEST mcli volume set dv cluster.rebal-throttle lazy
fi
TEST mcli volume rebalance dv start
EXPECT_WITHIN 10 "Y" sh -c "[ -s '$RB/dv.state.args' ] && echo Y"
ARGS="$(cat "$RB/dv.state.args")"
EXPECT_MATCH "^--rebalance --volfile=$RB/dv.vol --rebalance-state=$RB/dv.state " echo "$ARGS"
EXPECT_MATCH " -N --ready-fd=3 --pid-file $RB/dv.pid --log-file $T/log/rebalance/dv.log$" echo "$ARGS"
# The volfile it was given is the one clients get.
TEST cmp "$RB/dv.vol" "$CV"
[ "$HAS_THROTTLE" = 1 ] && EXPECT_MATCH " --throttle=lazy " echo "$ARGS"
EXPECT_WITHIN 10 "in progress" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7, \$8 }'"
EXPECT_MATCH "Estimated time left for rebalance to complete : 1:02:05" mcli volume rebalance dv status
EXPECT_MATCH "<statusStr>in progress</statusStr>" mcli --xml volume rebalance dv status
EXPECT_MATCH "Task +: Rebalance" mcli volume status dv
SUM=$(settled_sum)
TEST check_fail 1 volume rebalance dv start
EXPECT_MATCH "already started" cat "$T/f.err"
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/b5 force
EXPECT_MATCH "rebalance is running" cat "$T/f.err"
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b4 start

# mortard killed -9 during the rebalance: found again, never duplicated.
RP=$(cat "$RB/dv.pid")
TEST kill -9 "$(mortard_pid)"
TEST start_mortard
EXPECT "in progress" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7, \$8 }'"
TEST check_fail 1 volume rebalance dv start
# (the stand-in runs as "bash .../fake-mortarfsd --rebalance ...")
count_rebal() {
    local p n=0
    for p in /proc/[0-9]*; do
        tr '\0' ' ' < "$p/cmdline" 2> /dev/null |
            grep -q "fake-mortarfsd --rebalance .*--rebalance-state=$1 " &&
            n=$((n + 1))
    done
    echo "$n"
}
EXPECT "1" count_rebal "$RB/dv.state"
EXPECT "$RP" cat "$RB/dv.pid"

# Completion.
TEST touch "$RB/dv.state.finish"
EXPECT_WITHIN 10 "completed" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7 }'"
EXPECT_MATCH "Status +: completed" mcli volume status dv
EXPECT_MATCH "^[0-9]+:[0-9]{2}:[0-9]{2}$" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$8 }'"

# stop: SIGTERM, the state says stopped and is kept; start resumes.
TEST mcli volume rebalance dv start
EXPECT_WITHIN 10 "in progress" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7, \$8 }'"
RP=$(cat "$RB/dv.pid")
TEST mcli volume rebalance dv stop
EXPECT "N" proc_alive "$RP"
EXPECT "stopped" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7 }'"
EXPECT "status=stopped" grep "^status=" "$RB/dv.state"

# A start that the process refuses at its migration lock (held by a
# migration this mortard cannot see) fails with the process's reason,
# and the last task stays what status shows.
printf '%s' "another rebalance or remove-brick migration of this volume is running (it holds the migration lock on dv-brick0); not starting a second one" > "$RB/dv.state.refuse"
SUM=$(settled_sum)
TEST check_fail 1 volume rebalance dv start
EXPECT_MATCH "failed: another rebalance .*holds the migration lock on dv-brick0" cat "$T/f.err"
EXPECT "stopped" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7 }'"
EXPECT "status=stopped" grep "^status=" "$RB/dv.state"
TEST rm "$RB/dv.state.refuse"

# A process that dies with status=running is shown as failed.
TEST mcli volume rebalance dv fix-layout start
EXPECT_WITHIN 10 "Y" sh -c "grep -q -- --fix-layout '$RB/dv.state.args' && echo Y"
EXPECT_WITHIN 10 "status=running" grep "^status=" "$RB/dv.state"
TEST kill -9 "$(cat "$RB/dv.pid")"
EXPECT_WITHIN 10 "failed" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7 }'"
EXPECT_MATCH "died while running.*resume" mcli volume rebalance dv status
TEST mcli volume rebalance dv start
TEST touch "$RB/dv.state.finish"
EXPECT_WITHIN 10 "completed" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume rebalance dv status | awk '\$1 == \"localhost\" { print \$7 }'"

# remove-brick start: stored as decommissioned, named in the volfile,
# migration with the .remove state file; commit refused until completed.
TEST mcli volume remove-brick dv 127.0.0.1:$B/b4 start
EXPECT "brick.4.decommissioned=1" grep decommissioned "$T/state/vols/dv/info"
EXPECT "    option decommissioned-bricks dv-brick4" grep decommissioned "$CV"
EXPECT_WITHIN 10 "Y" sh -c "grep -q -- '--rebalance-state=$RB/dv.remove.state' '$RB/dv.remove.state.args' && echo Y"
EXPECT_WITHIN 10 "in progress" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume remove-brick dv 127.0.0.1:$B/b4 status | awk '\$1 == \"localhost\" { print \$7, \$8 }'"
EXPECT_MATCH "Task +: Remove brick" mcli volume status dv
SUM=$(settled_sum)
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b4 commit
EXPECT_MATCH "in progress" cat "$T/f.err"
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b3 commit
TEST check_fail 1 volume rebalance dv start
TEST check_fail 1 volume add-brick dv 127.0.0.1:$B/b5 force
TEST touch "$RB/dv.remove.state.finish"
EXPECT_WITHIN 10 "completed" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume remove-brick dv 127.0.0.1:$B/b4 status | awk '\$1 == \"localhost\" { print \$7 }'"
# The stand-in reports 3 skipped files: commit refuses to lose them.
SUM=$(settled_sum)
TEST check_fail 1 volume remove-brick dv 127.0.0.1:$B/b4 commit
EXPECT_MATCH "left 3 files on the bricks.*'commit force'" cat "$T/f.err"
TEST sed -i 's/^skipped_files=.*/skipped_files=0/' "$RB/dv.remove.state"
P4=$(cat "$T/run/dv-brick4.pid")
TEST mcli volume remove-brick dv 127.0.0.1:$B/b4 commit
EXPECT_MATCH "Number of Bricks: 4" mcli volume info dv
EXPECT "0" grep -c "dv-brick4" "$CV"
EXPECT "0" grep -c "decommissioned" "$CV"
EXPECT_WITHIN 10 "N" proc_alive "$P4"
TEST ! getfattr -n trusted.mortar.volume-id "$B/b4"

# remove-brick stop clears the decommissioning.
TEST mcli volume remove-brick dv 127.0.0.1:$B/b3 start
EXPECT "    option decommissioned-bricks dv-brick3" grep decommissioned "$CV"
RP=$(cat "$RB/dv.remove.pid")
TEST mcli volume remove-brick dv 127.0.0.1:$B/b3 stop
EXPECT "N" proc_alive "$RP"
EXPECT "0" sh -c "cat '$CV' '$T/state/vols/dv/info' | grep -c decommissioned"
EXPECT_MATCH "Number of Bricks: 4" mcli volume info dv

# force: no migration, a data-loss warning, the brick is gone.
P3=$(cat "$T/run/dv-brick3.pid")
EXPECT_MATCH "data loss" mcli volume remove-brick dv 127.0.0.1:$B/b3 force
EXPECT_MATCH "Number of Bricks: 3" mcli volume info dv
EXPECT_WITHIN 10 "N" proc_alive "$P3"
EXPECT "    subvolumes dv-brick0 dv-brick1 dv-brick2" grep "subvolumes dv-brick" "$CV"

# A new brick never reuses a removed brick's id (link files name them).
TEST mcli volume add-brick dv 127.0.0.1:$B/b5 force
EXPECT "    subvolumes dv-brick0 dv-brick1 dv-brick2 dv-brick5" grep "subvolumes dv-brick" "$CV"

# Stop/delete: the state files go with the volume.
TEST mcli volume stop dv
TEST mcli volume delete dv
EXPECT "" sh -c "ls '$RB' | grep '^dv\\.state\$'"
