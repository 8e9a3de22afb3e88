#!/usr/bin/env bash
# fix-layout refits the ranges to the old layout (doc/distribute.md,
# "Refitted layout"), end to end:
#  - 400 files in 4 directories on 2 bricks; the volume grows to 4;
#  - two mounts of the 4-brick graph fix the layouts of the same
#    directories at the same time (setfattr mortar.dht.fix-layout): every
#    directory ends with one layout over the four bricks, no hole and no
#    overlap, b0 and b1 keeping the first halves of their old ranges
#    (the same result from both, as the refit depends on the old layout
#    only);
#  - the rebalance then moves the names that left b0 and b1's ranges:
#    half of the files (the index-order layout moved three quarters), and
#    every file reads back with its checksum.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

NFILES=400
DIRS="a b c d"

for i in 0 1 2 3; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
done
for i in 0 1 2 3; do
    eval "port=\$P$i"
    TEST start_brick "b$i" "$T/bricks/b$i" "$port"
done
dist_volfile "b0:$P0" "b1:$P1" > "$T/vol/dist2.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" "b3:$P3" > "$T/vol/dist4.vol"

# Files f000..f399 spread over the four directories, with their sums.
TEST mount_volfile "$T/vol/dist2.vol" "$M0"
TEST python3 - "$M0" "$NFILES" "$T/sums" <<'PY'
import hashlib, os, sys
root, n, sums = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dirs = "abcd"
with open(sums, "w") as out:
    for i in range(n):
        rel = "%s/f%03d" % (dirs[i % 4], i)
        os.makedirs(os.path.join(root, dirs[i % 4]), exist_ok=True)
        data = ("%d " % i).encode() * (i + 1)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(data)
        out.write("%s  %s\n" % (hashlib.md5(data).hexdigest(), rel))
PY
TEST umount_client "$M0"

# Two clients of the grown volume fix the same layouts at once.
TEST mount_volfile "$T/vol/dist4.vol" "$M0"
TEST mount_volfile "$T/vol/dist4.vol" "$M1"
fix_all() {
    local d
    for d in "" $DIRS; do
        setfattr -n mortar.dht.fix-layout -v 1 "$1/$d" || return 1
    done
}
fix_all "$M0" & FIX0=$!
fix_all "$M1" & FIX1=$!
TEST wait "$FIX0"
TEST wait "$FIX1"

# refit_ok DIR: the four copies of DIR tile the hash space with one
# generation, b0 keeps [0, 2^30) and b1 [2^31, 3 * 2^30) (the first
# halves of their ranges over two bricks).
refit_ok() {
    python3 - "$T/bricks" "$1" <<'PY'
import os, struct, sys
root, rel = sys.argv[1], sys.argv[2]
ranges, gens = {}, set()
for i in range(4):
    p = os.path.join(root, "b%d" % i, rel)
    fmt, gen, start, stop, flags = struct.unpack(
        ">5I", os.getxattr(p, "trusted.mortar.dht"))
    if not flags & 1:
        sys.exit("%s b%d: no range" % (rel, i))
    gens.add(gen)
    ranges[i] = (start, stop)
if len(gens) != 1:
    sys.exit("%s: generations %s" % (rel, sorted(gens)))
nxt = 0
for start, stop in sorted(ranges.values()):
    if start != nxt:
        sys.exit("%s: hole or overlap at %#x" % (rel, start))
    nxt = stop + 1
if nxt != 1 << 32:
    sys.exit("%s: hole at the end" % rel)
q = 1 << 30
if ranges[0] != (0, q - 1) or ranges[1] != (2 * q, 3 * q - 1):
    sys.exit("%s: b0 %s b1 %s" % (rel, ranges[0], ranges[1]))
print("ok")
PY
}
for d in . $DIRS; do
    EXPECT "ok" refit_ok "$d"
done
TEST umount_client "$M1"

# The rebalance moves what left b0's and b1's ranges: half of the names.
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$T/rebal.state" -N --log-file "$T/log/rebal.log"
EXPECT "completed" state_value "$T/rebal.state" status
EXPECT "0" state_value "$T/rebal.state" failed_files
# moved_between LOW HIGH: Y if the moved count is in [LOW, HIGH].
moved_between() {
    local v
    v="$(state_value "$T/rebal.state" moved_files)"
    [ -n "$v" ] && [ "$v" -ge "$1" ] && [ "$v" -le "$2" ] && echo Y
}
# Half of 400 is 200 (the names are fixed); three quarters would be 300.
EXPECT "Y" moved_between 150 250
for b in b2 b3; do
    EXPECT_MATCH "^[1-9][0-9]*$" count_data "$b"
done

sums_ok() {
    (cd "$M0" && md5sum --quiet -c "$T/sums" 2>&1) && echo ok
}
EXPECT "ok" sums_ok
EXPECT "$NFILES" sh -c "find '$M0' -type f | wc -l"
TEST umount_client "$M0"
