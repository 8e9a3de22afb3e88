#!/usr/bin/env bash
# mkdir through cluster/distribute over four bricks in two rounds, seen by
# debug/trace between distribute and each protocol/client (lines in the
# client's log):
#  - 20 mkdirs send 80 MKDIRs to the bricks and no SETXATTR (each copy
#    gets its layout range in the mkdir itself);
#  - every brick's copy carries a layout; together the ranges cover the
#    hash space without hole or overlap, all generation 1 and COMMITTED;
#  - two mounts making the same 40 names at the same time leave one GFID
#    per name on all four bricks, each copy with its layout range, the
#    ranges tiling the hash space;
#  - lookups of 20 known directories after the kernel's entry timeout
#    reach every brick (80 LOOKUPs at least) and bring the layouts back
#    with them (protocol 3): no GETXATTR, and no layout rewritten.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

VOL="$T/vol/dist4-traced.vol"
PLAIN="$T/vol/dist4-plain.vol"
TEST dist4_traced_vols "$VOL" "$PLAIN"
_T_MOUNTS+=("$M0" "$M1")
TEST start_fsd client-traced --volfile "$VOL" "$M0"
TEST wait_for_mount "$M0"
TEST start_fsd client-plain --volfile "$PLAIN" "$M1"
TEST wait_for_mount "$M1"
CLOG="$T/log/client-traced.log"

# count FOP: wind lines of FOP at the bricks since the mark.
LOG_AT=0
mark_log() { LOG_AT=$(wc -l < "$CLOG"); }
count() { tail -n +"$((LOG_AT + 1))" "$CLOG" | grep -c " tr[0-3]: $1 wind "; }

# layouts_ok DIR [any]: the four copies of DIR (brick-relative) carry one
# GFID and layout ranges that tile the hash space, generation 1 and
# COMMITTED unless "any" (a lookup from another mount between the two
# rounds heals the missing copies and may write generation 2, not
# committed: same ranges).
layouts_ok() {
    python3 - "$T/bricks" "$1" "${2:-}" <<'PY'
import os, struct, sys
root, rel, lax = sys.argv[1], sys.argv[2], sys.argv[3] == "any"
gfids, ranges = set(), []
for i in range(4):
    p = os.path.join(root, "b%d" % i, rel)
    gfids.add(os.getxattr(p, "trusted.mortar.gfid"))
    fmt, gen, start, stop, flags = struct.unpack(
        ">5I", os.getxattr(p, "trusted.mortar.dht"))
    if fmt != 1 or (not lax and (gen != 1 or flags != 3)):
        sys.exit("%s b%d: format %d gen %d flags %d" % (rel, i, fmt, gen, flags))
    ranges.append((start, stop))
if len(gfids) != 1:
    sys.exit("%s: %d GFIDs" % (rel, len(gfids)))
nxt = 0
for start, stop in sorted(ranges):
    if start != nxt:
        sys.exit("%s: hole or overlap at %#x" % (rel, start))
    nxt = stop + 1
if nxt != 1 << 32:
    sys.exit("%s: hole at the end" % rel)
PY
}

TEST mkdir "$M0/top"
TEST layouts_ok top
mark_log
TEST python3 -c "
import os
for i in range(20):
    os.mkdir('$M0/top/d%02d' % i)
"
EXPECT "80" count mkdir
EXPECT "0" count setxattr
for i in 00 07 19; do
    TEST layouts_ok "top/d$i"
done

# The same names from two mounts at once: the hashed brick decides.
race() {
    python3 - "$1/race" <<'PY'
import os, sys
for i in range(40):
    try:
        os.mkdir(os.path.join(sys.argv[1], "r%02d" % i))
    except FileExistsError:
        pass
PY
}
TEST mkdir "$M0/race"
race "$M0" & P1=$!
race "$M1" & P2=$!
TEST wait "$P1"
TEST wait "$P2"
all_race_ok() {
    local i
    for i in $(seq -w 0 39); do
        layouts_ok "race/r$i" any || return 1
    done
}
TEST all_race_ok
EXPECT "40" sh -c "ls '$M1/race' | wc -l"

# Revalidation of known directories: one LOOKUP per brick, with the layout.
sleep 1.5
mark_log
TEST python3 -c "
import os
for i in range(20):
    os.stat('$M0/top/d%02d' % i)
"
lookups_at_least() { [ "$(count lookup)" -ge "$1" ]; }
TEST lookups_at_least 80
EXPECT "0" count getxattr
EXPECT "0" count setxattr
