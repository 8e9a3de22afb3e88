#!/usr/bin/env bash
# Create, open, read, write, flush, fsync, close; O_APPEND, O_TRUNC,
# O_EXCL; lookup and stat; truncate. One brick, one mount.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

write_str() { printf '%s' "$2" > "$1"; }
append_str() { printf '%s' "$2" >> "$1"; }

TEST write_str "$M0/f" "hello world"
EXPECT "hello world" cat "$M0/f"
EXPECT "11" stat -c %s "$M0/f"
EXPECT "regular file" stat -c %F "$M0/f"
# The brick holds the same bytes under the same name.
EXPECT "hello world" cat "$B0/f"
EXPECT "No such file or directory" errno_of stat "$M0/nonexistent"

# O_APPEND and O_TRUNC as the shell uses them.
TEST append_str "$M0/f" " more"
EXPECT "hello world more" cat "$M0/f"
TEST write_str "$M0/f" "new"
EXPECT "new" cat "$M0/f"
EXPECT "3" stat -c %s "$M0/f"

# O_EXCL: an existing name is refused, a new one is created.
EXPECT "EEXIST" python3 -c '
import os, sys
try:
    os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    print("created")
except FileExistsError:
    print("EEXIST")' "$M0/f"
EXPECT "created" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
os.close(fd)
print("created")' "$M0/excl"
EXPECT "600" stat -c %a "$M0/excl"

# Bulk data with fsync, compared byte for byte, also after dropping the
# page cache (so the bytes come from the brick again).
TEST dd if=/dev/urandom of="$T/rand" bs=1M count=8 status=none
TEST dd if="$T/rand" of="$M0/big" bs=1M conv=fsync status=none
TEST cmp "$T/rand" "$M0/big"
TEST cmp "$T/rand" "$B0/big"
TEST sync
TEST drop_caches
TEST cmp "$T/rand" "$M0/big"

# pwrite/pread at odd offsets, fsync, fdatasync, flush on close.
EXPECT "ok" python3 -c '
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b"abc", 1048579)
os.fsync(fd)
os.pwrite(fd, b"xyz", 7)
os.fdatasync(fd)
os.close(fd)
fd = os.open(p, os.O_RDONLY)
a = os.pread(fd, 3, 1048579)
b = os.pread(fd, 3, 7)
os.close(fd)
print("ok" if (a, b) == (b"abc", b"xyz") else "bad %r %r" % (a, b))' "$M0/big"
EXPECT "abc" dd if="$B0/big" bs=1 skip=1048579 count=3 status=none

# A write past the end extends the file; the gap reads as zeros.
EXPECT "ok" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"tail", 100000)
os.close(fd)
d = open(sys.argv[1], "rb").read()
print("ok" if len(d) == 100004 and d[:100000] == bytes(100000)
      and d[100000:] == b"tail" else "bad")' "$M0/gap"

# truncate: shrink keeps the head, grow adds zeros.
TEST truncate -s 100 "$M0/big"
EXPECT "100" stat -c %s "$M0/big"
EXPECT "100" stat -c %s "$B0/big"
# (bytes 7-9 are the "xyz" written above)
TEST cmp -n 7 "$T/rand" "$M0/big"
TEST cmp -i 10:10 -n 90 "$T/rand" "$M0/big"
EXPECT "xyz" dd if="$M0/big" bs=1 skip=7 count=3 status=none
TEST truncate -s 4096 "$M0/big"
EXPECT "4096" stat -c %s "$M0/big"
TEST cmp -i 100:0 -n 3996 "$M0/big" /dev/zero

# Inode numbers are stable across cache drops (they come from the GFID).
ino_before=$(stat -c %i "$M0/f")
TEST drop_caches
EXPECT "$ino_before" stat -c %i "$M0/f"

# Many small files written and read back.
many_files() {
    local i
    for ((i = 0; i < 200; i++)); do
        echo "file $i" > "$M0/small.$i" || return 1
    done
    for ((i = 0; i < 200; i++)); do
        [ "$(cat "$M0/small.$i")" = "file $i" ] || return 1
    done
}
TEST many_files
EXPECT "200" sh -c "ls '$M0' | grep -c '^small\.'"
