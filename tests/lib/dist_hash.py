"""Distribute's name hash for functional tests, written independently of
the C code (xlators/cluster/distribute/dist-hash.c) so a test catches a
change of either: MurmurHash3 x86_32, seed 0, and the default layout of
equal 32-bit ranges in subvolume index order (doc/distribute.md).

As a program: dist_hash.py pick NSUB BRICK PREFIX prints the first name
PREFIX.N that hashes to BRICK in a layout of NSUB subvolumes.
"""
import sys


def mm3(data):
    """MurmurHash3 x86_32 of bytes, seed 0."""
    c1, c2, h, n = 0xcc9e2d51, 0x1b873593, 0, len(data)
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * c1) & 0xffffffff
        k = ((k << 15) | (k >> 17)) & 0xffffffff
        k = (k * c2) & 0xffffffff
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xffffffff
        h = (h * 5 + 0xe6546b64) & 0xffffffff
    t, k = data[n - n % 4:], 0
    for i in reversed(range(len(t))):
        k = (k << 8) | t[i]
    if t:
        k = (k * c1) & 0xffffffff
        k = ((k << 15) | (k >> 17)) & 0xffffffff
        k = (k * c2) & 0xffffffff
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h


def slot(name, nsub):
    """Index (0..nsub-1) of the range name hashes into."""
    return min(mm3(name.encode()) // ((1 << 32) // nsub), nsub - 1)


def pick(nsub, brick, prefix):
    j = 0
    while slot("%s.%d" % (prefix, j), nsub) != brick:
        j += 1
    return "%s.%d" % (prefix, j)


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "pick":
        sys.exit("usage: dist_hash.py pick NSUB BRICK PREFIX")
    print(pick(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
