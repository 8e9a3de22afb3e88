#!/usr/bin/env bash
# storage/posix reads big uncached ranges with O_DIRECT (posix-data.c):
#  - a file written through the mount, its caches dropped, reads back
#    whole with dd bs=1M (also with a size that is no multiple of 512);
#  - the brick's copy stays (mostly) out of the brick's page cache after
#    that read (fincore): the reads went around it;
#  - a file read through a second mount right after it was written (the
#    brick's pages may still be dirty) reads back whole;
#  - small reads of the same file are correct too.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume
TEST mount_client "$P0" b0 "$M1"

TEST sh -c "head -c $((8 * 1024 * 1024)) /dev/urandom > '$T/src'"
TEST sh -c "head -c $((8 * 1024 * 1024 + 1234)) /dev/urandom > '$T/src2'"
SUM=$(md5sum < "$T/src" | cut -d' ' -f1)
SUM2=$(md5sum < "$T/src2" | cut -d' ' -f1)
TEST dd if="$T/src" of="$M0/f" bs=1M conv=fsync status=none
TEST dd if="$T/src2" of="$M0/g" bs=1M conv=fsync status=none
drop() { sync && echo 3 > /proc/sys/vm/drop_caches; }

TEST drop
EXPECT "$SUM" sh -c "dd if='$M0/f' bs=1M status=none | md5sum | cut -d' ' -f1"
EXPECT "$SUM2" sh -c "dd if='$M0/g' bs=1M status=none | md5sum | cut -d' ' -f1"
# cached_kib FILE: KiB of FILE in the page cache.
cached_kib() {
    fincore -b -n -o RES "$1" | awk '{print int($1 / 1024)}'
}
if command -v fincore > /dev/null; then
    TEST [ "$(cached_kib "$B0/f")" -lt 4096 ]
    TEST [ "$(cached_kib "$B0/g")" -lt 4096 ]
fi

# Written on one mount, read at once on the other (dirty brick pages).
TEST dd if="$T/src2" of="$M0/h" bs=1M status=none
EXPECT "$SUM2" sh -c "dd if='$M1/h' bs=1M status=none | md5sum | cut -d' ' -f1"

# Small reads after the big ones, cold and warm.
TEST drop
EXPECT "$SUM" sh -c "dd if='$M1/f' bs=4k status=none | md5sum | cut -d' ' -f1"
EXPECT "$SUM" sh -c "dd if='$M0/f' bs=1M status=none | md5sum | cut -d' ' -f1"
EXPECT "$(tail -c 1234 "$T/src2" | md5sum | cut -d' ' -f1)" \
    sh -c "tail -c 1234 '$M1/g' | md5sum | cut -d' ' -f1"
