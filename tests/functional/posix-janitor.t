#!/usr/bin/env bash
# storage/posix's janitor: an unlink answers once the name is gone and
# the file's GFID handle (.mortar/handles/xx/yy/<gfid>) is removed after,
# by a thread of the brick. With the janitor held (fault point
# MORTAR_POSIX_FAULT=janitor-hold) deleted files leave handles with link
# count 1 and no name; a kill -9 of the brick with them queued and a
# restart (without the fault) sweeps them all: no handle of a deleted file
# nor handle symlink of a removed directory (a whole removed tree) is
# left, live directories keep theirs, every live file (also hard-linked ones) still reads back, and
# the space comes back. Then a running janitor removes handles by itself,
# and a clean stop (TERM) leaves nothing behind either.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

# Regular files under the handle tree with link count 1: handles of
# files without a name.
orphans() {
    find "$B0/.mortar/handles" -type f -links 1 | wc -l
}

# Handles of regular files (live ones have link count >= 2).
handles() {
    find "$B0/.mortar/handles" -type f | wc -l
}

# Directory handle symlinks (the root's and each directory's), and those
# leading nowhere (removed directories').
dirlinks() {
    find "$B0/.mortar/handles" -type l | wc -l
}

deadlinks() {
    find "$B0/.mortar/handles" -xtype l | wc -l
}

avail_kib() {
    df -k --output=avail "$B0" | tail -n 1 | tr -d ' '
}

sums() {
    (cd "$M0/keep" && md5sum -- * | md5sum | cut -d' ' -f1)
}

TEST mkdir -p "$B0"
TEST alloc_port P0
export MORTAR_POSIX_FAULT=janitor-hold
TEST start_brick b0 "$B0" "$P0"
unset MORTAR_POSIX_FAULT
TEST mount_client "$P0" b0 "$M0"
TEST wait_for_mount "$M0"

TEST mkdir "$M0/del" "$M0/keep"
# Directories to remove (a tree, and ten side by side) and to keep.
TEST mkdir -p "$M0/del/t1/t2/t3" "$M0/livedirs/a/b"
TEST sh -c "for i in \$(seq 1 10); do mkdir '$M0/del/u'\$i; done"
# 200 small files and 8 of 8 MiB to delete; 50 to keep, two of them
# with a second name.
TEST sh -c "for i in \$(seq 1 200); do echo \"d\$i\" > '$M0/del/f'\$i; done"
TEST sh -c "for i in \$(seq 1 8); do head -c 8M /dev/urandom > '$M0/del/big'\$i; done"
TEST sh -c "for i in \$(seq 1 50); do echo \"k\$i\" > '$M0/keep/f'\$i; done"
TEST ln "$M0/keep/f1" "$M0/keep/f1-link"
TEST ln "$M0/keep/f2" "$M0/keep/f2-link"
TEST rm "$M0/keep/f2"
SUM="$(sums)"
EXPECT "258" handles
EXPECT "0" orphans
EXPECT "19" dirlinks
EXPECT "0" deadlinks
sync
BEFORE="$(avail_kib)"

# Deleting answers, the names go, the handles stay queued (held).
TEST rm -rf "$M0/del"
EXPECT "N" sh -c "[ -e '$M0/del' ] && echo Y || echo N"
EXPECT "208" orphans
EXPECT "258" handles
EXPECT "14" deadlinks

# A crash with the handles queued, a restart without the fault point:
# the sweep removes every handle of a deleted file.
TEST kill_brick b0 KILL
sleep 0.2
TEST start_brick b0 "$B0" "$P0"
EXPECT_WITHIN 30 "0" orphans
EXPECT "50" handles
EXPECT_WITHIN 30 "0" deadlinks
EXPECT "5" dirlinks
EXPECT_WITHIN 30 "ok" errno_of stat "$M0/keep/f3"
EXPECT "ok" errno_of stat "$M0/livedirs/a/b"
EXPECT "$SUM" sums
EXPECT "k1" cat "$M0/keep/f1-link"
EXPECT "k2" cat "$M0/keep/f2-link"
EXPECT "k50" cat "$M0/keep/f50"
EXPECT "N" sh -c "[ -e '$B0/.mortar/janitor-clean' ] && echo Y || echo N"
# The 64 MiB of the big files are free again (others may write on this
# file system meanwhile: at least 48 MiB).
EXPECT_WITHIN 20 "Y" sh -c "sync; [ \$(( \$(df -k --output=avail '$B0' | tail -n 1) - $BEFORE )) -ge 49152 ] && echo Y || echo N"

# The running janitor removes handles by itself.
TEST sh -c "for i in \$(seq 1 50); do rm '$M0/keep/f'\$i 2>/dev/null; done"
EXPECT_WITHIN 20 "0" orphans
EXPECT "2" handles
EXPECT "k1" cat "$M0/keep/f1-link"
EXPECT "k2" cat "$M0/keep/f2-link"

# A clean stop drains the queue and leaves the marker (no sweep at the
# next start); the restarted brick consumes it.
TEST rm "$M0/keep/f1-link"
TEST kill_brick b0 TERM
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$B0/.mortar/janitor-clean' ] && echo Y || echo N"
EXPECT "0" orphans
EXPECT "1" handles
TEST start_brick b0 "$B0" "$P0"
EXPECT_WITHIN 30 "k2" cat "$M0/keep/f2-link"
EXPECT "N" sh -c "[ -e '$B0/.mortar/janitor-clean' ] && echo Y || echo N"

