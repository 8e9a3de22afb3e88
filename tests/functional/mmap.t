#!/usr/bin/env bash
# mmap reads and shared writable mappings through the mount.
# TIMEOUT: 120
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

TEST dd if=/dev/urandom of="$T/rand" bs=64k count=16 status=none
TEST cp "$T/rand" "$M0/f"
# mmap read equals read(2).
EXPECT "ok" python3 -c '
import mmap, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "rb") as g:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    print("ok" if m[:] == g.read() else "bad")
    m.close()' "$M0/f" "$T/rand"
# Write through a shared mapping, msync, unmap; read back with read(2),
# also after dropping caches and on the brick.
EXPECT "ok" python3 -c '
import mmap, sys
with open(sys.argv[1], "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:5] = b"HELLO"
    m[500000:500006] = b"middle"
    m[-3:] = b"END"
    m.flush()
    m.close()
print("ok")' "$M0/f"
check_written() {
    python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
print("ok" if d[0:5] == b"HELLO" and d[500000:500006] == b"middle"
      and d[-3:] == b"END" and len(d) == 1048576 else "bad")' "$1"
}
EXPECT "ok" check_written "$M0/f"
TEST drop_caches
EXPECT "ok" check_written "$M0/f"
EXPECT "ok" check_written "$B0/f"
# A mapping of a file another fd extends (truncate then map the new tail).
EXPECT "ok" python3 -c '
import mmap, os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 8192)
m = mmap.mmap(fd, 8192)
m[4096:4100] = b"page"
m.flush()
m.close()
os.close(fd)
d = open(p, "rb").read()
print("ok" if len(d) == 8192 and d[4096:4100] == b"page" and d[:4096] == bytes(4096) else "bad")' "$M0/grown"
# Private mappings do not write back.
EXPECT "ok" python3 -c '
import mmap, sys
with open(sys.argv[1], "r+b") as f:
    m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE)
    m[0:5] = b"xxxxx"
    m.close()
print("ok" if open(sys.argv[1], "rb").read(5) == b"HELLO" else "bad")' "$M0/f"
