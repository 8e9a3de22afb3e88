#!/usr/bin/env bash
# A killed brick gives ENOTCONN on the mount; when the brick restarts on
# the same port, I/O resumes, old data is intact, and an fd opened before
# the crash works again.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume
TEST sh -c "echo before > '$M0/f'"
TEST mkdir "$M0/d"

# A process keeps an fd open across the outage; it writes on request.
mkfifo "$T/cmd"
bg_run python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"first\n", 0)
open(sys.argv[3], "w").close()
with open(sys.argv[2]) as cmds:
    for line in cmds:
        off = int(line)
        for i in range(100):
            try:
                os.pwrite(fd, b"again\n", off)
                open(sys.argv[3] + ".ok", "w").close()
                break
            except OSError as e:
                time.sleep(0.2)
        else:
            open(sys.argv[3] + ".fail", "w").close()' "$M0/held" "$T/cmd" "$T/opened"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/opened' ] && echo Y || echo N"
exec 9> "$T/cmd"

TEST kill_brick b0 KILL
# New lookups, creates and reads fail with ENOTCONN while it is down.
EXPECT_WITHIN 20 "Transport endpoint is not connected" \
    errno_of touch "$M0/new-during-outage"
EXPECT "Transport endpoint is not connected" errno_of mkdir "$M0/d2"
EXPECT "Y" is_mounted "$M0"
EXPECT "Y" is_alive "$(client_pid "$M0")"

# Restart it on the same port: the client reconnects by itself.
TEST start_brick b0 "$B0" "$P0"
EXPECT_WITHIN 30 "ok" errno_of touch "$M0/after"
EXPECT "before" cat "$M0/f"
TEST sh -c "echo after > '$M0/after'"
EXPECT "after" cat "$M0/after"
EXPECT "directory" stat -c %F "$M0/d"
TEST touch "$M0/d/inside"
EXPECT "regular empty file" stat -c %F "$B0/d/inside"
# The fd opened before the crash is usable again.
echo 6 >&9
EXPECT_WITHIN 30 "Y" sh -c "[ -e '$T/opened.ok' ] && echo Y || echo N"
EXPECT "first again" sh -c "cat '$M0/held' | tr '\n' ' ' | sed 's/ \$//'"
exec 9>&-

# A clean stop (TERM) and restart behave the same.
TEST kill_brick b0 TERM
EXPECT_WITHIN 20 "Transport endpoint is not connected" \
    errno_of touch "$M0/new-during-outage-2"
TEST start_brick b0 "$B0" "$P0"
EXPECT_WITHIN 30 "ok" errno_of touch "$M0/after2"
EXPECT "before" cat "$M0/f"
