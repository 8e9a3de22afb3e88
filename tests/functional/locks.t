#!/usr/bin/env bash
# flock(2) and fcntl byte-range locks, with conflicts between two
# processes on the same mount, and release when the holder dies.
# TIMEOUT: 150
# REQUIRES: root fuse flock python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume
TEST touch "$M0/lockfile"

# --- flock ---
bg_run flock -x "$M0/lockfile" -c "touch '$T/held'; exec sleep 300"
HOLDER=$!
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/held' ] && echo Y || echo N"
# Another process cannot take it (non-blocking), shared or exclusive.
TEST ! flock -n -x "$M0/lockfile" true
TEST ! flock -n -s "$M0/lockfile" true
# A waiting process gets it once the holder dies.
bg_run flock -x "$M0/lockfile" -c "touch '$T/second'"
sleep 0.5
TEST test ! -e "$T/second"
TEST bg_kill "$HOLDER"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/second' ] && echo Y || echo N"
EXPECT_WITHIN 20 "free" sh -c "flock -n -x '$M0/lockfile' true && echo free || echo busy"

# Shared locks coexist; they exclude an exclusive one.
bg_run flock -s "$M0/lockfile" -c "touch '$T/shared'; exec sleep 300"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/shared' ] && echo Y || echo N"
TEST flock -n -s "$M0/lockfile" true
TEST ! flock -n -x "$M0/lockfile" true

# --- fcntl byte ranges ---
# The holder locks bytes 0-99 for writing and 200-299 for reading.
bg_run python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 100, 0)
fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 100, 200)
open(sys.argv[2], "w").close()
time.sleep(300)' "$M0/lockfile" "$T/fheld"
FHOLDER=$!
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/fheld' ] && echo Y || echo N"

# try MODE LEN START: prints ok or the errno name.
try_lock() {
    python3 -c '
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
mode = fcntl.LOCK_EX if sys.argv[2] == "w" else fcntl.LOCK_SH
try:
    fcntl.lockf(fd, mode | fcntl.LOCK_NB, int(sys.argv[3]), int(sys.argv[4]))
    print("ok")
except OSError as e:
    print("busy" if e.errno in (errno.EAGAIN, errno.EACCES) else errno.errorcode[e.errno])' \
        "$M0/lockfile" "$@"
}
EXPECT "busy" try_lock w 10 50
EXPECT "busy" try_lock r 10 50
EXPECT "ok" try_lock w 50 100
EXPECT "busy" try_lock w 10 250
EXPECT "ok" try_lock r 10 250
EXPECT "ok" try_lock w 10 1000
# F_GETLK reports the conflicting write lock.
EXPECT "F_WRLCK 0 100" python3 -c '
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
# struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid
req = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 50, 10, 0)
res = fcntl.fcntl(fd, fcntl.F_GETLK, req)
t, w, s, l, p = struct.unpack("hhqqi4x", res)
names = {fcntl.F_WRLCK: "F_WRLCK", fcntl.F_RDLCK: "F_RDLCK", fcntl.F_UNLCK: "F_UNLCK"}
print(names[t], s, l)' "$M0/lockfile"
# A blocking lock waits and is granted when the holder dies.
bg_run python3 -c '
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)
open(sys.argv[2], "w").close()' "$M0/lockfile" "$T/fgot"
sleep 0.5
TEST test ! -e "$T/fgot"
TEST bg_kill "$FHOLDER"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/fgot' ] && echo Y || echo N"
EXPECT_WITHIN 20 "ok" try_lock w 10 50
# Closing any fd of a process drops its POSIX locks (POSIX semantics).
EXPECT "ok" python3 -c '
import errno, fcntl, os, subprocess, sys
p = sys.argv[1]
fd1 = os.open(p, os.O_RDWR)
fcntl.lockf(fd1, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 0)
probe = "import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_RDWR)\ntry:\n fcntl.lockf(fd,fcntl.LOCK_EX|fcntl.LOCK_NB,10,0);print(\"ok\")\nexcept OSError:\n print(\"busy\")"
a = subprocess.run([sys.executable, "-c", probe, p], capture_output=True, text=True).stdout.strip()
fd2 = os.open(p, os.O_RDONLY)
os.close(fd2)
b = subprocess.run([sys.executable, "-c", probe, p], capture_output=True, text=True).stdout.strip()
print("ok" if (a, b) == ("busy", "ok") else (a, b))' "$M0/lockfile"
