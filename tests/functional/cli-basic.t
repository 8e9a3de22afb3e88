#!/usr/bin/env bash
# The mortar CLI without mortard: every flag and error path, against no
# daemon, a refusing port, a bad host, and a python stand-in for mortard
# (fake_mortard) that echoes what it was sent: argv passed unchanged,
# --xml/--json formats, exit codes and error strings, the confirmation
# prompt of volume stop/delete on a terminal, timeouts and garbage.
# TIMEOUT: 120
# REQUIRES: python3
. "$(dirname "$0")/../lib/include.rc"

CONN_FAILED="Connection failed. Please check if mortard is operational."
# No daemon: MORTAR_SOCKET points nowhere unless a test says otherwise.
export MORTAR_SOCKET="$T/run/none.sock"

# Local flags.
EXPECT_MATCH "^mortar [0-9]" "$MORTAR" --version
TEST "$MORTAR" --help
EXPECT_MATCH "Usage: mortar" "$MORTAR" --help
EXPECT_MATCH "Usage: mortar" "$MORTAR" help
EXPECT_MATCH "mortard is not reachable" "$MORTAR" help
EXPECT "1" sh -c "'$MORTAR' > /dev/null 2>&1; echo \$?"
EXPECT_MATCH "no command given" sh -c "'$MORTAR' 2>&1"
EXPECT "1" sh -c "'$MORTAR' --bogus volume info > /dev/null 2>&1; echo \$?"
EXPECT_MATCH "unknown option '--bogus'" sh -c "'$MORTAR' --bogus volume info 2>&1"
EXPECT_MATCH "only 'script'" sh -c "'$MORTAR' --mode=loud volume info 2>&1"
EXPECT_MATCH "'--socket' needs a value" sh -c "'$MORTAR' volume info --socket 2>&1"
EXPECT_MATCH "--timeout" sh -c "'$MORTAR' --timeout=0 volume info 2>&1"

# No daemon on the default (env) socket, on --socket, over TCP.
EXPECT "1" sh -c "'$MORTAR' volume info > /dev/null 2>&1; echo \$?"
EXPECT "$CONN_FAILED" sh -c "'$MORTAR' volume info 2>&1 | head -n 1"
EXPECT_MATCH "$T/run/none.sock" sh -c "'$MORTAR' volume info 2>&1"
EXPECT_MATCH "$T/run/other.sock: No such file" \
    sh -c "'$MORTAR' --socket '$T/run/other.sock' volume info 2>&1"
alloc_port PX
EXPECT "$CONN_FAILED" sh -c "'$MORTAR' --remote-host=127.0.0.1:$PX volume info 2>&1 | head -n 1"
EXPECT_MATCH "127.0.0.1:$PX: Connection refused" \
    sh -c "'$MORTAR' --remote-host 127.0.0.1:$PX volume info 2>&1"
EXPECT "1" sh -c "'$MORTAR' --remote-host=no-such-host.invalid volume info > /dev/null 2>&1; echo \$?"
EXPECT "$CONN_FAILED" sh -c "'$MORTAR' --remote-host=no-such-host.invalid volume info 2>&1 | head -n 1"
EXPECT_MATCH "bad port" sh -c "'$MORTAR' --remote-host=127.0.0.1:99999 volume info 2>&1"
EXPECT_MATCH "bad port" sh -c "'$MORTAR' --remote-host=127.0.0.1: volume info 2>&1"

# A stand-in mortard on a unix socket: argv goes as it is, minus our
# flags (which may also follow the command, as GlusterFS allows).
mkdir -p "$T/fake"
fake_mortard "unix:$T/run/fake.sock" "$T/fake"
TEST wait_for_socket "unix:$T/run/fake.sock"
export MORTAR_SOCKET="$T/run/fake.sock"
EXPECT "format=0 argv=volume info v0" "$MORTAR" volume info v0
EXPECT "format=1 argv=volume status" "$MORTAR" --xml volume status
EXPECT "format=2 argv=volume status all" "$MORTAR" volume status --json all
EXPECT "format=0 argv=volume set v0 k a b" "$MORTAR" --mode=script volume set v0 k "a b"
EXPECT "2" sh -c "'$MORTAR' ret 2 volume v0 does not exist > /dev/null 2>&1; echo \$?"
EXPECT "volume v0 does not exist" sh -c "'$MORTAR' ret 2 volume v0 does not exist 2>&1 > /dev/null"
EXPECT "" sh -c "'$MORTAR' ret 1 oops 2> /dev/null"
EXPECT "format=0 argv=help" sh -c "'$MORTAR' help | tail -n 1"
# Well-formed XML and JSON pass through untouched.
TEST sh -c "'$MORTAR' --xml xml | python3 -c 'import sys, xml.etree.ElementTree as E; E.fromstring(sys.stdin.read())'"
EXPECT "0" sh -c "'$MORTAR' --json json a | python3 -c 'import sys, json; print(json.load(sys.stdin)[\"opRet\"])'"

# TCP with --remote-host; the default port is 24100 (refused or not, the
# message names it).
alloc_port PF
fake_mortard "tcp:$PF" "$T/fake"
TEST wait_for_socket "tcp:$PF"
EXPECT "format=0 argv=volume list" "$MORTAR" --remote-host=127.0.0.1:$PF volume list
EXPECT "format=0 argv=volume list" "$MORTAR" --remote-host "[127.0.0.1]:$PF" volume list

# Confirmation: not asked with --mode=script or without a terminal (stdin
# is not a TTY here); asked on a terminal, where "n" sends nothing.
: > "$T/fake/requests"
EXPECT "format=0 argv=volume stop v1" "$MORTAR" --mode=script volume stop v1
EXPECT "format=0 argv=volume delete v1" sh -c "echo n | '$MORTAR' volume delete v1"
cat > "$T/ttyrun.py" <<'PY'
import os, pty, sys
answer = sys.argv[1].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b""
sent = False
while True:
    try:
        data = os.read(fd, 1024)
    except OSError:
        break
    if not data:
        break
    out += data
    if not sent and b"(y/n)" in out:
        os.write(fd, answer + b"\n")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode().replace("\r", ""))
print("exit=%d" % os.waitstatus_to_exitcode(status))
PY
EXPECT_MATCH "Stopping volume will make its data inaccessible. Do you want to continue\? \(y/n\) .*exit=1" \
    python3 "$T/ttyrun.py" n "$MORTAR" volume stop v2
EXPECT "0" grep -c "v2" "$T/fake/requests"
EXPECT_MATCH "Deleting volume will erase all information about the volume.*format=0 argv=volume delete v3.*exit=0" \
    python3 "$T/ttyrun.py" y "$MORTAR" volume delete v3
EXPECT "1" grep -c "volume delete v3" "$T/fake/requests"
EXPECT_MATCH "argv=volume stop v4.*exit=0" \
    python3 "$T/ttyrun.py" y "$MORTAR" --mode=script volume stop v4

# A daemon that never answers: --timeout; one that answers garbage.
fake_mortard "unix:$T/run/silent.sock" "$T/fake" silent
fake_mortard "unix:$T/run/garbage.sock" "$T/fake" garbage
TEST wait_for_socket "unix:$T/run/silent.sock"
TEST wait_for_socket "unix:$T/run/garbage.sock"
EXPECT "1" sh -c "'$MORTAR' --socket='$T/run/silent.sock' --timeout=1 volume info > /dev/null 2>&1; echo \$?"
EXPECT_MATCH "timed out" sh -c "'$MORTAR' --socket='$T/run/silent.sock' --timeout=1 volume info 2>&1"
EXPECT "1" sh -c "'$MORTAR' --socket='$T/run/garbage.sock' volume info > /dev/null 2>&1; echo \$?"
EXPECT_MATCH "malformed reply" sh -c "'$MORTAR' --socket='$T/run/garbage.sock' volume info 2>&1"
