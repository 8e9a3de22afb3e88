#!/usr/bin/env bash
# `volume heal VOL info` and its summaries with 100,000 entries pending
# on one brick (issue 22: heal info costs O(pending), listing the index,
# never the tree): the counts are exact in `info summary`, `statistics
# heal-count` and `status`; `info` names as many entries as one reply
# holds (2 MiB of names shared by the bricks; GFIDs without a handle as
# <gfid:UUID>; 100,000 of them made it fail) and says so beside the
# exact count; --xml says the same. The
# index entries are made by hand (empty files named by GFID, the index's
# format, doc/replicate.md) with the self-heal daemon off, so the test
# does not wait for 100,000 writes; each command has a hang guard of a
# minute, not a speed assertion.
# TIMEOUT: 300
# REQUIRES: root python3
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
N=100000
TEST start_mortard
for i in 0 1 2; do track_brick hl brick$i; done
_T_PIDFILES+=("$T/run/heal/hl.pid")

TEST mkdir -p "$B"
TEST mcli volume create hl replica 3 127.0.0.1:$B/h0 127.0.0.1:$B/h1 \
    127.0.0.1:$B/h2 force
TEST mcli volume start hl
TEST mcli volume heal hl disable

make_entries() {
    python3 - "$1" "$2" <<'PY'
import os, sys, uuid
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
for _ in range(n):
    open(os.path.join(d, str(uuid.uuid4())), "w").close()
PY
}
TEST make_entries "$B/h0/.mortar/index/xattrop" "$N"
TEST make_entries "$B/h1/.mortar/index/xattrop" 7

count_of() {
    awk -v b="Brick 127.0.0.1:$B/h$2" '$0 == b { on = 1; next }
        on && /^Number of entries/ { print $NF; exit }' "$1"
}
# heal_to FILE ARGS...: a heal command's output in FILE (a minute at most).
heal_to() {
    local out="$1"
    shift
    timeout 60 "$MDCTL" -s "$T/run/mortard.sock" "$@" > "$out"
}
TEST heal_to "$T/summary.out" volume heal hl info summary
EXPECT "$N" count_of "$T/summary.out" 0
EXPECT "7" count_of "$T/summary.out" 1
EXPECT "0" count_of "$T/summary.out" 2
TEST heal_to "$T/count.out" volume heal hl statistics heal-count
EXPECT "$N" count_of "$T/count.out" 0
TEST heal_to "$T/info.out" volume heal hl info
EXPECT "$N" count_of "$T/info.out" 0
named=$(grep -c '^<gfid:[0-9a-f-]*>$' "$T/info.out")
TEST test "$named" -gt 10000 -a "$named" -lt "$N"
EXPECT_MATCH "only the first $((named - 7)) entries are named" \
    cat "$T/info.out"
TEST heal_to "$T/summary.xml" --xml volume heal hl info summary
EXPECT_MATCH "<numberOfEntries>$N</numberOfEntries>" cat "$T/summary.xml"
TEST heal_to "$T/status.out" volume heal hl status
EXPECT_MATCH "$((N + 7))" grep -i "total entries left" "$T/status.out"
