#!/usr/bin/env bash
# fallocate keep-size (-n), punch hole and zero range (the bytes really become
# zero); copy_file_range; a sparse file beyond 4 GiB.
# TIMEOUT: 180
# REQUIRES: root fuse fallocate python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

# 64 KiB of 'x'.
TEST sh -c "head -c 65536 /dev/zero | tr '\0' x > '$M0/f'"

# range_is FILE OFF LEN BYTE: prints "yes" if every byte is BYTE.
range_is() {
    python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
d = os.pread(fd, int(sys.argv[3]), int(sys.argv[2]))
os.close(fd)
want = bytes([int(sys.argv[4])]) * int(sys.argv[3])
print("yes" if d == want else "no")' "$@"
}
X=120
TEST range_is "$M0/f" 0 65536 $X
EXPECT "yes" range_is "$M0/f" 0 65536 $X

# Punch a hole: 8 KiB at 4 KiB become zero; the size does not change.
TEST fallocate -p -o 4096 -l 8192 "$M0/f"
EXPECT "65536" stat -c %s "$M0/f"
EXPECT "yes" range_is "$M0/f" 4096 8192 0
EXPECT "yes" range_is "$M0/f" 0 4096 $X
EXPECT "yes" range_is "$M0/f" 12288 53248 $X
TEST drop_caches
EXPECT "yes" range_is "$M0/f" 4096 8192 0
EXPECT "yes" range_is "$B0/f" 4096 8192 0

# Zero range at an odd offset.
TEST fallocate -z -o 20000 -l 1000 "$M0/f"
EXPECT "yes" range_is "$M0/f" 20000 1000 0
EXPECT "yes" range_is "$M0/f" 19000 1000 $X
EXPECT "yes" range_is "$M0/f" 21000 1000 $X
EXPECT "65536" stat -c %s "$M0/f"
# Zero range past the end extends the file.
TEST fallocate -z -o 65536 -l 4096 "$M0/f"
EXPECT "69632" stat -c %s "$M0/f"
EXPECT "yes" range_is "$M0/f" 65536 4096 0

# Keep-size preallocation: blocks are allocated, the size stays 0.
TEST touch "$M0/pre"
TEST fallocate --keep-size -o 0 -l 1048576 "$M0/pre"
EXPECT "0" stat -c %s "$M0/pre"
EXPECT "Y" sh -c "[ \$(stat -c %b '$B0/pre') -ge 2048 ] && echo Y || echo N"
# Plain preallocation grows the size.
TEST fallocate -o 0 -l 1048576 "$M0/pre2"
EXPECT "1048576" stat -c %s "$M0/pre2"
EXPECT "yes" range_is "$M0/pre2" 0 1048576 0

# copy_file_range: whole file and a sub-range, compared byte for byte.
TEST dd if=/dev/urandom of="$M0/src" bs=64k count=50 status=none
cfr() {
    python3 -c '
import os, sys
src = os.open(sys.argv[1], os.O_RDONLY)
dst = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
off_in, total = int(sys.argv[3]), int(sys.argv[4])
done = 0
while done < total:
    n = os.copy_file_range(src, dst, total - done, off_in + done, done)
    if n == 0:
        break
    done += n
os.close(src)
os.close(dst)
print(done)' "$@"
}
EXPECT "3276800" cfr "$M0/src" "$M0/copy" 0 3276800
TEST cmp "$M0/src" "$M0/copy"
EXPECT "100000" cfr "$M0/src" "$M0/part" 12345 100000
TEST cmp -i 12345:0 -n 100000 "$M0/src" "$M0/part"
EXPECT "100000" stat -c %s "$M0/part"
# (Across file systems the kernel refuses copy_file_range with EXDEV;
# cp falls back to read/write there.)
TEST cp --reflink=never "$M0/src" "$T/local-copy"
TEST cmp "$M0/src" "$T/local-copy"
TEST cp --reflink=never "$T/local-copy" "$M0/back"
TEST cmp "$M0/src" "$M0/back"
TEST cp --reflink=never "$M0/src" "$M0/cp-copy"
TEST cmp "$M0/src" "$M0/cp-copy"

# A sparse file beyond 4 GiB: size, the bytes at the end, little space.
TEST truncate -s 5G "$M0/sparse"
EXPECT "5368709120" stat -c %s "$M0/sparse"
TEST sh -c "printf END | dd of='$M0/sparse' bs=1 seek=5368709117 conv=notrunc status=none"
EXPECT "5368709120" stat -c %s "$M0/sparse"
EXPECT "END" tail -c 3 "$M0/sparse"
TEST sh -c "printf 4GB | dd of='$M0/sparse' bs=1 seek=4294967296 conv=notrunc status=none"
EXPECT "4GB" dd if="$M0/sparse" bs=1 skip=4294967296 count=3 status=none
EXPECT "yes" range_is "$M0/sparse" 4294967290 6 0
EXPECT "Y" sh -c "[ \$(du -k '$M0/sparse' | cut -f1) -lt 1024 ] && echo Y || echo N"
EXPECT "5368709120" stat -c %s "$B0/sparse"
# Past the end reads nothing.
EXPECT "0" sh -c "dd if='$M0/sparse' bs=1 skip=5368709120 count=10 status=none | wc -c"
