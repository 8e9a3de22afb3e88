#!/usr/bin/env bash
# The full flow with mortard: the mortar CLI creates and starts a volume
# (XML and JSON answers well-formed), `mount -t mortar` mounts it (the
# client fetches its volfile with GETSPEC), I/O, `volume set` of a client
# option reaches the running client through MGMT_WATCH, stop/delete
# confirmation in script mode. Then two mortards sharing nothing (second
# one on 127.0.0.2, same port): a volume only the second knows is
# mounted through backup-volfile-servers, both when the first server
# answers "no such volume" and when the first server is down.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard or mortar not built"
    exit 0
fi

TEST start_mortard
export MORTAR_SOCKET="$T/run/mortard.sock"
mkdir -p "$T/bricks/v0"
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" force
track_brick v0
TEST "$MORTAR" volume start v0
EXPECT_MATCH "Status: Started" "$MORTAR" volume info v0
# help: local usage; mortard is reachable, so no note saying otherwise.
EXPECT_MATCH "Usage: mortar" "$MORTAR" help
EXPECT "0" sh -c "'$MORTAR' help | grep -c 'not reachable'"
# Over TCP the command is refused (not authenticated: doc/security.md);
# clients still fetch their volfiles there (the mounts below).
EXPECT_MATCH "not authenticated" sh -c "'$MORTAR' --remote-host='127.0.0.1:$MGMT_PORT' volume info v0 2>&1"

# XML and JSON: well-formed, and they say the same thing.
if command -v xmllint > /dev/null; then
    TEST sh -c "'$MORTAR' --xml volume info v0 | xmllint --noout -"
fi
EXPECT "v0" sh -c "'$MORTAR' --xml volume info v0 | python3 -c 'import sys, xml.etree.ElementTree as E; print(E.fromstring(sys.stdin.read()).find(\"volInfo/volumes/volume/name\").text)'"
EXPECT "v0" sh -c "'$MORTAR' --json volume info v0 | python3 -c 'import sys, json; print(json.load(sys.stdin)[\"volInfo\"][\"volumes\"][0][\"name\"])'"
EXPECT_MATCH "." sh -c "'$MORTAR' --xml volume info nope"
TEST sh -c "'$MORTAR' --xml volume info nope | python3 -c 'import sys, xml.etree.ElementTree as E; E.fromstring(sys.stdin.read())'"
EXPECT "1" sh -c "'$MORTAR' volume info nope > /dev/null 2>&1; echo \$?"

# mount -t mortar finds /sbin/mount.mortar: put ours there for the
# mount only (unless one is installed already; then call ours directly).
CPIDF="$T/run/m0.pid"
CLOG="$T/log/m0.log"
_T_PIDFILES+=("$CPIDF")
_T_MOUNTS+=("$M0")
MOPTS="volfile-server-port=$MGMT_PORT,pid-file=$CPIDF,log-file=$CLOG,dump-dir=$T/dump"
helper_lock
if [ ! -e /sbin/mount.mortar ]; then
    ln -s "$MOUNT_MORTAR" /sbin/mount.mortar
    TEST env MORTARFSD="$MORTARFSD" mount -t mortar -o "$MOPTS" 127.0.0.1:/v0 "$M0" 9>&-
    rm -f /sbin/mount.mortar
    helper_unlock
else
    helper_unlock
    TEST env MORTARFSD="$MORTARFSD" sh "$MOUNT_MORTAR" 127.0.0.1:/v0 "$M0" -o "$MOPTS"
fi
TEST wait_for_mount "$M0"
EXPECT "fuse.mortar" awk -v m="$M0" '$2 == m { print $3 }' /proc/mounts
TEST sh -c "echo data > '$M0/f'"
EXPECT "data" cat "$T/bricks/v0/f"
CPID=$(cat "$CPIDF")

# volume set of a client option: the client hears of the new volfile at
# once and applies it in place (ping-timeout is live).
TEST "$MORTAR" volume set v0 client.ping-timeout 17
EXPECT_WITHIN 15 "1" sh -c "grep -c \"volume 'v0' changed to version\" '$CLOG'"
EXPECT_WITHIN 5 "1" sh -c "grep -c \"applied volfile of 'v0' version\" '$CLOG'"
EXPECT_MATCH "ping-timeout=17" statedump_of "$CPID"
# A graph-shape option (debug/trace on top of the client graph): the
# client switches to a new graph without a remount, same process.
TEST "$MORTAR" volume set v0 diagnostics.client-trace on
EXPECT_WITHIN 15 "1" sh -c "grep -c 'switched from graph' '$CLOG'"
EXPECT_MATCH "debug/trace" statedump_of "$CPID"
EXPECT "$CPID" cat "$CPIDF"
EXPECT "data" cat "$M0/f"

# Mounting an unknown volume fails with mortard's reason.
EXPECT "1" sh -c "MORTARFSD='$MORTARFSD' sh '$MOUNT_MORTAR' 127.0.0.1:/nope '$M1' -o volfile-server-port=$MGMT_PORT,log-file=$T/log/nope.log 2> '$T/nope.err'; echo \$?"
EXPECT_MATCH "nope" cat "$T/nope.err"
EXPECT "N" is_mounted "$M1"

# A second mortard sharing nothing, on 127.0.0.2 with the same port;
# only it knows v1.
D2="$T/md2"
mkdir -p "$D2/state" "$D2/run" "$D2/log" "$T/bricks/v1"
alloc_port BRICK_BASE2
_T_PIDFILES+=("$D2/run/mortard.pid" "$D2/run/v1-brick0.pid")
TEST "$MORTARD" --state-dir "$D2/state" --run-dir "$D2/run" \
    --log-dir "$D2/log" --mgmt-port "$MGMT_PORT" \
    --brick-base-port "$BRICK_BASE2" --bind-address 127.0.0.2 \
    --mortarfsd "$MORTARFSD"
M2="$D2/run/mortard.sock"
TEST "$MORTAR" --socket "$M2" volume create v1 "127.0.0.2:$T/bricks/v1" force
TEST "$MORTAR" --socket "$M2" volume start v1
EXPECT "1" sh -c "'$MORTAR' volume info v1 > /dev/null 2>&1; echo \$?"

# First server up but without v1: the backup serves.
TEST mount_mortar 127.0.0.1:/v1 "$M1" "volfile-server-port=$MGMT_PORT,backup-volfile-servers=127.0.0.2"
TEST wait_for_mount "$M1"
EXPECT_MATCH "from 127.0.0.2:$MGMT_PORT" cat "$(mm_log "$M1")"
TEST sh -c "echo one > '$M1/g'"
EXPECT "one" cat "$T/bricks/v1/g"

# First server down (nothing on 127.0.0.3): the backup serves.
M3="$T/mnt/m3"
mkdir -p "$M3"
TEST mount_mortar 127.0.0.3:/v1 "$M3" "volfile-server-port=$MGMT_PORT,backup-volfile-servers=127.0.0.2"
TEST wait_for_mount "$M3"
EXPECT "one" cat "$M3/g"
EXPECT_MATCH "from 127.0.0.2:$MGMT_PORT" cat "$(mm_log "$M3")"

# The serving mortard restarts: the watcher reconnects and still follows
# the volume (a set after the restart reaches the client).
M3PID=$(mm_pid "$M3")
TEST stop_pid "$(cat "$D2/run/mortard.pid")"
TEST "$MORTARD" --state-dir "$D2/state" --run-dir "$D2/run" \
    --log-dir "$D2/log" --mgmt-port "$MGMT_PORT" \
    --brick-base-port "$BRICK_BASE2" --bind-address 127.0.0.2 \
    --mortarfsd "$MORTARFSD"
TEST wait_for_socket "tcp:127.0.0.2:$MGMT_PORT"
TEST "$MORTAR" --socket "$M2" volume set v1 client.ping-timeout 19
EXPECT_WITHIN 30 "1" sh -c "grep -c \"applied volfile of 'v1' version\" '$(mm_log "$M3")'"
EXPECT "$M3PID" mm_pid "$M3"
EXPECT "one" cat "$M3/g"

# Script mode: stop and delete without questions.
TEST umount "$M1"
TEST umount "$M3"
TEST "$MORTAR" --mode=script --socket "$M2" volume stop v1
TEST "$MORTAR" --mode=script --socket "$M2" volume delete v1
EXPECT "1" sh -c "'$MORTAR' --socket '$M2' volume info v1 > /dev/null 2>&1; echo \$?"
TEST umount "$M0"
EXPECT_WITHIN 10 "N" is_alive "$CPID"
