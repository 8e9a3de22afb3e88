#!/usr/bin/env bash
# mount.mortar and mortarfsd --volfile-server against a python stand-in
# for mortard (fake_mortard), so that the client side is tested whatever
# mortard's volfiles contain: fetch, mount, I/O; a live option change
# (debug/trace log-level) applied without remount and seen in the
# client's statedump; a change of a non-live option logged as needing a
# remount; an unknown volume refused with the reason; the backup server
# used when the first is down, and the watcher failing over when the
# serving one goes away.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

alloc_port P0
alloc_port PF
TEST start_brick b0 "$B0" "$P0"

# v0: debug/trace over protocol/client; trace's log-level is live.
client_v0() {
    cat <<VOL
volume v0-client
    type protocol/client
    option remote-host 127.0.0.1
    option remote-port $P0
    option remote-subvolume b0
    option ping-timeout $2
end-volume

volume v0-trace
    type debug/trace
    option log-level $1
    subvolumes v0-client
end-volume
VOL
}
mkdir -p "$T/fake1" "$T/fake2"
client_v0 NONE 42 > "$T/fake1/v0.vol"
echo 1 > "$T/fake1/v0.version"

fake_mortard "tcp:127.0.0.1:$PF" "$T/fake1"
FAKE1=${_T_BG[-1]}
TEST wait_for_socket "tcp:127.0.0.1:$PF"

# An unknown volume: refused with the server's reason, nothing mounted.
EXPECT "1" sh -c "MORTARFSD='$MORTARFSD' sh '$MOUNT_MORTAR' 127.0.0.1:/nope '$M1' -o volfile-server-port=$PF,log-file=$T/log/nope.log 2> '$T/nope.err'; echo \$?"
EXPECT_MATCH "Volume nope does not exist" cat "$T/nope.err"
EXPECT "N" is_mounted "$M1"
# No server at all: every one tried, each named with its reason.
alloc_port PX
EXPECT "1" sh -c "MORTARFSD='$MORTARFSD' sh '$MOUNT_MORTAR' 127.0.0.1:/v0 '$M1' -o volfile-server-port=$PX,backup-volfile-servers=127.0.0.2,log-file=$T/log/none.log 2> '$T/none.err'; echo \$?"
EXPECT_MATCH "127.0.0.1:$PX: Connection refused; 127.0.0.2:$PX: Connection refused" cat "$T/none.err"
EXPECT "N" is_mounted "$M1"
# Bad mount.mortar input.
EXPECT_MATCH "expected HOST:/VOLUME" sh -c "sh '$MOUNT_MORTAR' novolume '$M1' 2>&1"
EXPECT_MATCH "empty volume name" sh -c "sh '$MOUNT_MORTAR' host:/ '$M1' 2>&1"
EXPECT_MATCH "does not exist" sh -c "sh '$MOUNT_MORTAR' host:/v '$T/nodir' 2>&1"

TEST mount_mortar 127.0.0.1:/v0 "$M0" "volfile-server-port=$PF"
TEST wait_for_mount "$M0"
CPID=$(mm_pid "$M0")
TEST sh -c "echo hello > '$M0/f'"
EXPECT "hello" cat "$B0/f"
EXPECT_MATCH "version 1 from 127.0.0.1:$PF" cat "$(mm_log "$M0")"
EXPECT_MATCH "log-level=NONE" statedump_of "$CPID"

# A live option: applied in place, same process, same mount.
client_v0 DEBUG 42 > "$T/fake1/v0.vol"
echo 2 > "$T/fake1/v0.version"
EXPECT_WITHIN 15 "1" sh -c "grep -c \"applied volfile of 'v0' version 2\" '$(mm_log "$M0")'"
EXPECT_MATCH "log-level=DEBUG" statedump_of "$CPID"
EXPECT "$CPID" mm_pid "$M0"
EXPECT "hello" cat "$M0/f"

# ping-timeout is live too: applied in place.
client_v0 DEBUG 43 > "$T/fake1/v0.vol"
echo 3 > "$T/fake1/v0.version"
EXPECT_WITHIN 15 "1" sh -c "grep -c \"applied volfile of 'v0' version 3\" '$(mm_log "$M0")'"
EXPECT_MATCH "ping-timeout=43" statedump_of "$CPID"
EXPECT "hello" cat "$M0/f"

# A change of the graph's shape (debug/trace removed): the client switches
# to a new graph without a remount (same process, same mount, open files
# still work) and frees the old one.
exec 7< "$M0/f"
sed '/^volume v0-trace/,$d' "$T/fake1/v0.vol" > "$T/fake1/v0.vol.new"
mv "$T/fake1/v0.vol.new" "$T/fake1/v0.vol"
echo 4 > "$T/fake1/v0.version"
EXPECT_WITHIN 15 "1" sh -c "grep -c 'version 4 .*switched from graph' '$(mm_log "$M0")'"
EXPECT_WITHIN 15 "1" sh -c "grep -c 'old graph .* freed' '$(mm_log "$M0")'"
EXPECT "$CPID" mm_pid "$M0"
EXPECT "hello" cat <&7
exec 7<&-
EXPECT "hello" cat "$M0/f"

# Backup servers: the first (127.0.0.2, nothing there) is down, the
# backup serves the mount.
TEST mount_mortar 127.0.0.2:/v0 "$M1" "volfile-server-port=$PF,backup-volfile-servers=127.0.0.3:127.0.0.1"
TEST wait_for_mount "$M1"
EXPECT_MATCH "version 4 from 127.0.0.1:$PF" cat "$(mm_log "$M1")"
EXPECT "hello" cat "$M1/f"

# The serving server goes away; another one (on the first address) has
# a newer volfile (debug/trace back on top): the watcher finds it and
# switches to it.
bg_kill "$FAKE1"
client_v0 WARNING 43 > "$T/fake2/v0.vol"
echo 7 > "$T/fake2/v0.version"
fake_mortard "tcp:127.0.0.2:$PF" "$T/fake2"
TEST wait_for_socket "tcp:127.0.0.2:$PF"
EXPECT_WITHIN 30 "1" sh -c "grep -c \"volfile of 'v0' version 7 from 127.0.0.2:$PF: switched from graph\" '$(mm_log "$M1")'"
EXPECT_MATCH "log-level=WARNING" statedump_of "$(mm_pid "$M1")"
EXPECT "hello" cat "$M1/f"

# umount ends the client daemon.
M1PID=$(mm_pid "$M1")
TEST umount "$M1"
EXPECT_WITHIN 10 "N" is_alive "$M1PID"
