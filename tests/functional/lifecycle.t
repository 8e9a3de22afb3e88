#!/usr/bin/env bash
# mortarfsd's process life: the pid file (one owner), SIGUSR1 statedumps
# naming the translators, SIGHUP reopening the log, SIGTERM unmounting
# cleanly, umount making the client exit, foreground mode, --help and
# --version.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

EXPECT "0" sh -c "'$MORTARFSD' --help > '$T/help'; echo \$?"
EXPECT_MATCH "Usage: mortarfsd" head -n 1 "$T/help"
EXPECT_MATCH "Exit status" cat "$T/help"
EXPECT_MATCH "^mortarfsd [0-9]" "$MORTARFSD" --version

TEST start_volume
BPID=$(fsd_pid brick-b0)
CPID=$(client_pid "$M0")
EXPECT "Y" is_alive "$BPID"
EXPECT "Y" is_alive "$CPID"
# Detached: own session, not a child of this shell.
EXPECT "$BPID" sh -c "ps -o sid= -p $BPID | tr -d ' '"
EXPECT_MATCH "graph ready" cat "$T/log/brick-b0.log"
TEST sh -c "echo x > '$M0/f'"

# A second brick on the same pid file is refused while the first runs.
alloc_port P1
mkdir -p "$T/bricks/b1"
brick_volfile b1 "$T/bricks/b1" "$P1" > "$T/vol/b1.vol"
EXPECT "1" sh -c "'$MORTARFSD' --volfile '$T/vol/b1.vol' --pid-file '$T/run/brick-b0.pid' --log-file '$T/log/dup.log' 2> '$T/dup.err'; echo \$?"
EXPECT_MATCH "pid file.*$BPID" cat "$T/dup.err"
EXPECT "$BPID" cat "$T/run/brick-b0.pid"
EXPECT "N" sh -c "python3 -c 'import socket; s=socket.socket(); s.settimeout(1); s.connect((\"127.0.0.1\", $P1))' 2>/dev/null && echo Y || echo N"

# SIGUSR1: a statedump naming the translators, its path in the log.
dumps() { ls "$T/dump" 2> /dev/null | grep -c "^mortarfsd\.$1\.dump\."; }
TEST kill -USR1 "$BPID"
EXPECT_WITHIN 10 "1" dumps "$BPID"
BDUMP=$(ls "$T"/dump/mortarfsd."$BPID".dump.* | head -n 1)
for xl in protocol/server performance/io-threads features/locks storage/posix; do
    EXPECT_MATCH "$xl" cat "$BDUMP"
done
EXPECT_MATCH "b0-posix" cat "$BDUMP"
EXPECT_WITHIN 10 "1" sh -c "grep -c 'statedump written to $BDUMP' '$T/log/brick-b0.log'"
TEST kill -USR1 "$CPID"
EXPECT_WITHIN 10 "1" dumps "$CPID"
CDUMP=$(ls "$T"/dump/mortarfsd."$CPID".dump.* | head -n 1)
EXPECT_MATCH "mount/fuse" cat "$CDUMP"
EXPECT_MATCH "protocol/client" cat "$CDUMP"
# The daemons are fine afterwards.
EXPECT "x" cat "$M0/f"

# SIGHUP reopens the log file (after rotation).
TEST mv "$T/log/brick-b0.log" "$T/log/brick-b0.log.1"
TEST kill -HUP "$BPID"
EXPECT_WITHIN 10 "Y" sh -c "[ -e '$T/log/brick-b0.log' ] && echo Y || echo N"
EXPECT "Y" is_alive "$BPID"

# SIGTERM on the client: it unmounts and exits, removing its pid file.
TEST kill -TERM "$CPID"
EXPECT_WITHIN 20 "N" is_alive "$CPID"
EXPECT "N" is_mounted "$M0"
EXPECT "0" sh -c "ls '$T/run' | grep -c '^client-'"

# umount makes the client exit.
TEST mount_client "$P0" b0 "$M0"
CPID=$(client_pid "$M0")
EXPECT "x" cat "$M0/f"
TEST umount "$M0"
EXPECT_WITHIN 20 "N" is_alive "$CPID"
EXPECT "N" is_mounted "$M0"

# Foreground (-N): stays attached, serves, exits 0 on SIGTERM.
alloc_port P2
mkdir -p "$T/bricks/b2"
brick_volfile b2 "$T/bricks/b2" "$P2" > "$T/vol/b2.vol"
"$MORTARFSD" -N --volfile "$T/vol/b2.vol" --log-file "$T/log/fg.log" \
    --dump-dir "$T/dump" < /dev/null > /dev/null 2>&1 &
FG=$!
_T_BG+=("$FG")
TEST mount_client "$P2" b2 "$M1"
TEST sh -c "echo fg > '$M1/f'"
EXPECT "fg" cat "$T/bricks/b2/f"
TEST umount "$M1"
TEST kill -TERM "$FG"
wait "$FG"
FG_RC=$?
EXPECT "0" echo "$FG_RC"
EXPECT "N" is_alive "$FG"

# SIGTERM on a brick: exits, pid file gone.
TEST kill -TERM "$BPID"
EXPECT_WITHIN 20 "N" is_alive "$BPID"
TEST test ! -e "$T/run/brick-b0.pid"
