#!/usr/bin/env bash
# Round trips the FUSE bridge saves, seen by debug/trace between mount/fuse
# and protocol/client (its lines go to the client's log):
#  - create + write + close of 20 files sends no FLUSH (no lock was ever
#    asked for them) and no GETXATTR security.capability (this mount
#    created them);
#  - a file with an fcntl lock still gets its FLUSH at close, and the lock
#    is released then (a second process takes it while the first lives);
#  - security.capability set on the brick, or set through the mount on a
#    file the mount created, is still read back (getcap / getxattr);
#  - UNLINK of a looked-up name carries the object's GFID, and an unlink
#    whose hint went stale (the name renamed and re-created through a
#    second mount) removes the name as it is now, not the hinted object;
#  - with option capability=off, security.capability reads as absent and
#    cannot be set;
#  - creates, mkdir/rmdir and rename send no STAT of the parent directory
#    (the kernel's GETATTR after each is answered from the reply's
#    postparent), and what it answers is the directory after the op (new
#    mtime, nlink), never kept past a chmod.
# TIMEOUT: 150
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

TEST alloc_port P0
# The brick's cache invalidation off: section 4 makes m0's name hint
# stale behind its back, which an invalidation would otherwise correct at
# once (md-cache-inval.t checks that).
TEST start_brick b0 "$B0" "$P0" \
    --xlator-option b0-upcall.cache-invalidation=off
traced_client_volfile "$P0" b0 > "$T/vol/traced.vol"
# A long entry timeout keeps m0's dentries (and so the stale hint below).
# A long attribute timeout keeps the parent attributes of section 6 for
# longer than a loaded machine takes between an op and the GETATTR the
# check makes (1 s was missed there: a statedump alone can take that).
TEST mount_volfile "$T/vol/traced.vol" "$M0" \
    -o entry-timeout=600,attribute-timeout=600
TEST mount_client "$P0" b0 "$M1"
TEST wait_for_mount "$M1"
CLOG="$T/log/client-$(echo "$M0" | tr '/' '_').log"

# new_lines: the trace lines logged since the last call.
LOG_AT=0
new_lines() {
    tail -n +"$((LOG_AT + 1))" "$CLOG"
}
mark_log() {
    LOG_AT=$(wc -l < "$CLOG")
}
# count FOP [PATTERN]: wind lines of FOP (and PATTERN) since the mark.
count() {
    new_lines | grep " $1 wind " | grep -c -e "${2:-.}"
}
# The GFID of a brick file as the trace prints it.
brick_gfid() {
    python3 -c '
import os, sys, uuid
print(uuid.UUID(bytes=os.getxattr(sys.argv[1], "trusted.mortar.gfid")))' "$1"
}

# --- 1. create + write + close: no FLUSH, no capability probe ---
TEST mkdir "$M0/d"
mark_log
TEST python3 -c '
import sys
for i in range(20):
    with open("%s/f%d" % (sys.argv[1], i), "w") as f:
        f.write("data %d\n" % i)' "$M0/d"
sleep 1
# The trace is on: the creates and writes are there.
EXPECT "20" count create
EXPECT "20" count write
EXPECT "0" count flush
EXPECT "0" count getxattr security.capability
EXPECT "data 7" cat "$M0/d/f7"
EXPECT "data 7" cat "$M1/d/f7"
# The statedump counts what was answered without the graph.
dump_num() {
    statedump_of "$(client_pid "$M0")" | sed -n "s/^$1=//p" | head -n 1
}
TEST [ "$(dump_num flush_local)" -ge 20 ]
TEST [ "$(dump_num caps_local)" -ge 20 ]

# --- 2. an fcntl lock: FLUSH still goes down and releases it ---
TEST touch "$M0/locked"
mark_log
bg_run python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 0, 0)
open(sys.argv[2], "w").close()
fd2 = os.open(sys.argv[1], os.O_RDONLY)
while not os.path.exists(sys.argv[3]):
    time.sleep(0.1)
os.close(fd2)   # POSIX: closing any fd of the file drops the lock
open(sys.argv[4], "w").close()
time.sleep(300)' "$M0/locked" "$T/held" "$T/go" "$T/closed"
LOCKER=$!
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/held' ] && echo Y || echo N"
lock_try() {
    python3 -c '
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 0, 0)
    print("ok")
except OSError as e:
    print("busy" if e.errno in (errno.EAGAIN, errno.EACCES) else e.errno)' "$1"
}
EXPECT "busy" lock_try "$M0/locked"
touch "$T/go"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/closed' ] && echo Y || echo N"
# The holder still lives; its close released the lock on the brick.
TEST is_alive "$LOCKER"
EXPECT "ok" lock_try "$M0/locked"
EXPECT "ok" lock_try "$M1/locked"
TEST [ "$(count flush)" -ge 1 ]
TEST bg_kill "$LOCKER"

# --- 3. security.capability still readable ---
TEST sh -c "echo x > '$M1/capfile'"
TEST setcap cap_net_raw+ep "$B0/capfile"
EXPECT "cap_net_raw=ep" sh -c "getcap '$M0/capfile' | sed 's/.* //'"
mark_log
EXPECT "cap_net_raw=ep" sh -c "getcap '$M0/capfile' | sed 's/.* //'"
TEST [ "$(count getxattr security.capability)" -ge 1 ]
# Created here (known without one), then set through this mount.
TEST sh -c "echo x > '$M0/mycap'"
EXPECT "" sh -c "getcap '$M0/mycap'"
TEST setcap cap_net_raw+ep "$M0/mycap"
EXPECT "cap_net_raw=ep" sh -c "getcap '$M0/mycap' | sed 's/.* //'"
EXPECT "cap_net_raw=ep" sh -c "getcap '$B0/mycap' | sed 's/.* //'"
# A write by a non-root user drops it, as on a local file system.
TEST chmod 0666 "$M0/mycap"
TEST setpriv --reuid=65534 --regid=65534 --clear-groups \
    sh -c "echo y >> '$M0/mycap'"
EXPECT "" sh -c "getcap '$B0/mycap'"

# --- 4. UNLINK carries the hinted inode; a stale hint is harmless ---
TEST sh -c "echo u > '$M0/u1'"
G_U1=$(brick_gfid "$B0/u1")
mark_log
TEST rm "$M0/u1"
EXPECT "1" count unlink "name=u1 gfid=$G_U1"
TEST [ "$(dump_num hinted)" -ge 1 ]
TEST [ ! -e "$B0/u1" ]

TEST sh -c "echo old > '$M0/s1'"
G_OLD=$(brick_gfid "$B0/s1")
TEST stat "$M0/s1"
# An open file pins m0's dentry, so its node and name hint: a drop_caches
# of a test running beside this one would otherwise let the kernel forget
# s1 and look the new one up (seen once in CI: no UNLINK with G_OLD).
exec 7< "$M0/s1"
# Behind m0's back: s1 becomes s2, and a new s1 appears.
TEST mv "$M1/s1" "$M1/s2"
TEST sh -c "echo new > '$M1/s1'"
mark_log
TEST rm -f "$M0/s1"
exec 7<&-
EXPECT "1" count unlink "name=s1 gfid=$G_OLD"
# The name as it was on the brick went; the renamed object stayed.
TEST [ ! -e "$B0/s1" ]
EXPECT "old" cat "$M1/s2"
EXPECT "old" cat "$B0/s2"

# rmdir and rename carry it too.
TEST mkdir "$M0/rd"
G_RD=$(brick_gfid "$B0/rd")
TEST sh -c "echo r > '$M0/r1'"
G_R1=$(brick_gfid "$B0/r1")
mark_log
TEST rmdir "$M0/rd"
TEST mv "$M0/r1" "$M0/r2"
EXPECT "1" count rmdir "name=rd gfid=$G_RD"
EXPECT "1" count rename "oldname=r1 oldgfid=$G_R1"
# The moved name inherited the hint.
mark_log
TEST rm "$M0/r2"
EXPECT "1" count unlink "name=r2 gfid=$G_R1"
EXPECT "0" sh -c "ls '$M1' | grep -c '^r'"

# --- 5. capability off: no file has one (probe and set answered here) ---
M2="$T/mnt/m2"
TEST mount_client "$P0" b0 "$M2" -o capability=off
TEST wait_for_mount "$M2"
EXPECT "cap_net_raw=ep" sh -c "getcap '$M0/capfile' | sed 's/.* //'"
EXPECT "No data available" python3 -c '
import os, sys
try:
    os.getxattr(sys.argv[1], "security.capability")
    print("found")
except OSError as e:
    print(os.strerror(e.errno))' "$M2/capfile"
TEST sh -c "echo z > '$M2/u-none'"
TEST ! setcap cap_net_raw+ep "$M2/u-none"
EXPECT "" sh -c "getcap '$B0/u-none'"

# --- 6. namespace ops carry the parent's attributes (postparent): the
#        kernel's GETATTR of the directory after each is answered here ---
TEST mkdir "$M0/pp"
G_PP=$(brick_gfid "$B0/pp")
# Open directories pin m0's nodes of pp and pq and so their kept
# attributes: a drop_caches beside this test would otherwise turn the
# next stat into a LOOKUP (getattr_local would not move).
exec 8< "$M0/pp"
TEST stat "$M0/pp"
LOCAL0=$(dump_num getattr_local)
mark_log
TEST python3 -c '
import os, sys
for i in range(20):
    fd = os.open("%s/c%d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY)
    os.close(fd)' "$M0/pp"
EXPECT "20" count create
EXPECT "0" count stat "gfid=$G_PP"
TEST [ "$(dump_num getattr_local)" -ge "$((LOCAL0 + 19))" ]
# What is answered is the directory after the op: a new mtime, not the
# old one, and the brick's.
TEST touch -d "2001-01-01 00:00:00 UTC" "$M0/pp"
EXPECT "978307200" stat -c %Y "$M0/pp"
# Counted from before the create: the kernel may ask for the directory's
# attributes right after it, before a count taken after it (seen once in
# CI: the counter had already moved when it was read).
LOCAL0=$(dump_num getattr_local)
mark_log
TEST sh -c "echo x > '$M0/pp/late'"
MT=$(stat -c %Y "$M0/pp")
TEST [ "$MT" -gt 978307200 ]
EXPECT "$(stat -c %Y "$B0/pp")" echo "$MT"
EXPECT "0" count stat "gfid=$G_PP"
TEST [ "$(dump_num getattr_local)" -gt "$LOCAL0" ]
# mkdir/rmdir: the parent's link count follows without a STAT of it.
N0=$(stat -c %h "$M0/pp")
mark_log
TEST mkdir "$M0/pp/sub"
EXPECT "$((N0 + 1))" stat -c %h "$M0/pp"
TEST rmdir "$M0/pp/sub"
EXPECT "$N0" stat -c %h "$M0/pp"
EXPECT "0" count stat "gfid=$G_PP"
# rename between two directories: both parents' attributes come back.
TEST mkdir "$M0/pq"
G_PQ=$(brick_gfid "$B0/pq")
exec 9< "$M0/pq"
TEST stat "$M0/pp" "$M0/pq"
mark_log
TEST mv "$M0/pp/c1" "$M0/pq/c1"
EXPECT "$(stat -c %Y "$B0/pq")" stat -c %Y "$M0/pq"
EXPECT "$(stat -c %h "$B0/pp")" stat -c %h "$M0/pp"
EXPECT "0" count stat "gfid=$G_PP"
EXPECT "0" count stat "gfid=$G_PQ"
# A chmod of the directory drops what was kept: the mode is right.
TEST touch "$M0/pp/m1"
TEST chmod 0700 "$M0/pp"
EXPECT "700" stat -c %a "$M0/pp"
exec 8<&- 9<&-

# --- 7. flush-behind off: every FLUSH goes to the bricks (which run the
#        brick option fsync-on-close there) ---
M3="$T/mnt/m3"
TEST mount_client "$P0" b0 "$M3" -o flush-behind=off
TEST wait_for_mount "$M3"
TEST mkdir "$M3/fb"
TEST python3 -c '
import sys
for i in range(5):
    with open("%s/g%d" % (sys.argv[1], i), "w") as f:
        f.write("x")' "$M3/fb"
dump_num_m3() {
    statedump_of "$(client_pid "$M3")" | sed -n "s/^$1=//p" | head -n 1
}
EXPECT "0" dump_num_m3 flush_local
EXPECT "x" cat "$M0/fb/g4"
