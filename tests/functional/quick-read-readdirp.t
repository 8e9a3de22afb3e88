#!/usr/bin/env bash
# performance/quick-read fed by readdirplus: a listing carries the content
# of small files (readdirp-content), so reading them after it costs no
# round trip. debug/trace under distribute, one per brick, counts what
# reaches the bricks:
#  - after drop_caches, a process that has read a small file lists 100
#    small files (the kernel learns
#    every name and attribute from READDIRPLUS, then sends OPEN, READ,
#    FLUSH, RELEASE per file and no LOOKUP): reading them all sends no
#    LOOKUP, OPEN or READ to the bricks, with the right checksums; the
#    statedump counts 100 copies filled from readdirplus;
#  - a file larger than max-file-size gets no content (the statedump
#    counts 100 fills, not 101): it is opened and read on its brick;
#  - `ls -l` (a process that only lists) gets no content at all;
#  - with readdirp-content 0 (the old behaviour) the same reads send one
#    nameless LOOKUP per file;
#  - a file rewritten (same size) through a second mount after the
#    listing is read fresh once cache-timeout (1 s) has passed.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B1="$T/bricks/b1"
M2="$T/mnt/m2"
mkdir -p "$B1" "$M2"

TEST alloc_port P0
TEST alloc_port P1
TEST start_brick b0 "$B0" "$P0"
TEST start_brick b1 "$B1" "$P1"
dist_volfile "b0:$P0" "b1:$P1" > "$T/vol/plain.vol"
# traced VOLFILE_OPTIONS...: the client graph with a trace per brick and
# quick-read on top with these option lines.
traced() {
    cat <<VOL
volume b0
    type protocol/client
    option remote-host 127.0.0.1
    option remote-port $P0
    option remote-subvolume b0
end-volume

volume b1
    type protocol/client
    option remote-host 127.0.0.1
    option remote-port $P1
    option remote-subvolume b1
end-volume

volume t0
    type debug/trace
    subvolumes b0
end-volume

volume t1
    type debug/trace
    subvolumes b1
end-volume

volume dist
    type cluster/distribute
    subvolumes t0 t1
end-volume

volume qr
    type performance/quick-read
$(printf '    option %s\n' "$@")
    subvolumes dist
end-volume
VOL
}
# A long cache-timeout, and long kernel entry and attribute timeouts (a
# timed-out entry makes the kernel send a LOOKUP by name before the
# OPEN): the counts below must not depend on how fast this machine runs.
traced "cache-timeout 30" > "$T/vol/rdp.vol"
traced "cache-timeout 30" "readdirp-content 0" > "$T/vol/nordp.vol"
traced "cache-timeout 1" > "$T/vol/short.vol"
LONG=(--fuse-opt entry-timeout=60 --fuse-opt attribute-timeout=60)
TEST mount_volfile "$T/vol/rdp.vol" "$M0" "${LONG[@]}"
TEST mount_volfile "$T/vol/plain.vol" "$M1"
TEST mount_volfile "$T/vol/nordp.vol" "$M2" "${LONG[@]}"
log_of() {
    echo "$T/log/client-$(echo "$1" | tr '/' '_').log"
}

# 100 files of 1 to 4 KiB, one of 100 KiB (over max-file-size).
TEST mkdir "$M1/d"
TEST python3 -c '
import os, sys
for i in range(100):
    with open("%s/f%03d" % (sys.argv[1], i), "wb") as f:
        f.write(os.urandom(1024 + (i * 307) % 3072))
with open(sys.argv[1] + "/big", "wb") as f:
    f.write(os.urandom(102400))' "$M1/d"
sums() {
    (cd "$1" && md5sum f*) | md5sum
}
WANT=$(sums "$M1/d")
BIG=$(md5sum < "$M1/d/big")
TEST [ -n "$WANT" ]
DGFID=$(python3 -c 'import os, sys, uuid
print(uuid.UUID(bytes=os.getxattr(sys.argv[1], "trusted.mortar.gfid")))' \
    "$B0/d")

AT=0
# mark MNT: later counts of MNT's log start here.
mark() {
    AT=$(wc -l < "$(log_of "$1")")
}
# brick_fops MNT FOP: winds of FOP at the bricks since the mark, leaving
# out the directory's own (its kernel entry may time out under load, and
# distribute revalidates its layout by GFID).
brick_fops() {
    tail -n +"$((AT + 1))" "$(log_of "$1")" | grep " $2 wind " |
        grep -v -e " name=d\( \|\$\)" | grep -v -c -e " gfid=$DGFID"
}
# read_all MNT: reads the 100 small files in one process (fast, well
# within the kernel's entry timeout) and prints the checksum of sums.
read_all() {
    python3 -c '
import hashlib, sys
out = ""
for i in range(100):
    name = "f%03d" % i
    with open(sys.argv[1] + "/d/" + name, "rb") as f:
        out += "%s  %s\n" % (hashlib.md5(f.read()).hexdigest(), name)
sys.stdout.write(out)' "$1" | md5sum
}
# list_as_reader MNT: one process reads d/f000 (answered from the copy its
# LOOKUP brought: quick-read now takes this process for one that reads
# what it finds) and then lists d, so the listing asks for content. A
# process that only lists (ls) gets none.
list_as_reader() {
    python3 -c '
import os, sys
with open(sys.argv[1] + "/d/f000", "rb") as f:
    f.read()
# as ls -l does: each batch of names is stat()ed before the next, so the
# kernel keeps asking READDIRPLUS (a bare listdir gets it for the first
# batch only)
for e in os.scandir(sys.argv[1] + "/d"):
    os.lstat(e.path)' "$1"
}
dump_num() {
    statedump_of "$(client_pid "$1")" | sed -n "s/^$2=//p" | head -n 1
}

# --- 1. after a listing: no LOOKUP, OPEN or READ at the bricks ---
TEST stat "$M0/d"
FILLS0=$(dump_num "$M0" rdp_fills)
drop_caches
# Held from here: another test's drop_caches between the listing and the
# reads would bring LOOKUPs back.
cache_hold
TEST list_as_reader "$M0"
mark "$M0"
EXPECT "$WANT" read_all "$M0"
cache_release
EXPECT "0" brick_fops "$M0" lookup
EXPECT "0" brick_fops "$M0" open
EXPECT "0" brick_fops "$M0" read
# 100 and not 101: the large file came without content.
EXPECT "$((FILLS0 + 100))" dump_num "$M0" rdp_fills

# --- 2. the large file got no content: opened and read on its brick ---
EXPECT "$BIG" sh -c "md5sum < '$M0/d/big'"
EXPECT "1" brick_fops "$M0" open
TEST [ "$(brick_fops "$M0" read)" -ge 1 ]

# --- 2b. a process that only lists makes the bricks read no content ---
FILLS1=$(dump_num "$M0" rdp_fills)
drop_caches
TEST sh -c "ls -l '$M0/d' > /dev/null"
EXPECT "$FILLS1" dump_num "$M0" rdp_fills

# --- 3. readdirp-content 0: one nameless LOOKUP per file, as before ---
TEST stat "$M2/d"
drop_caches
cache_hold
TEST sh -c "ls -l '$M2/d' > /dev/null"
mark "$M2"
EXPECT "$WANT" read_all "$M2"
cache_release
EXPECT "100" brick_fops "$M2" lookup
EXPECT "0" brick_fops "$M2" open
EXPECT "0" brick_fops "$M2" read
EXPECT "0" dump_num "$M2" rdp_fills
TEST umount_client "$M2"

# --- 4. changed through another mount after the listing: fresh after the
# cache-timeout (same size, so the kernel's attributes do not tell) ---
TEST mount_volfile "$T/vol/short.vol" "$M2"
TEST sh -c "printf aaaaaaaa > '$M1/d/s'"
TEST stat "$M2/d"
TEST list_as_reader "$M2"
TEST sh -c "printf bbbbbbbb > '$M1/d/s'"
sleep 2.5
EXPECT "bbbbbbbb" cat "$M2/d/s"
TEST umount_client "$M2"
