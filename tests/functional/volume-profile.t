#!/usr/bin/env bash
# volume profile and volume top (issue 25 item 2) through mortard on a
# two-brick distribute volume mounted with mount.mortar:
#  - profile start sets diagnostics.latency-measurement and count-fop-hits
#    (volume get shows them), a second start is refused;
#  - files written and read through the mount: profile info shows, per
#    brick, GlusterFS's tables with WRITE and READ rows with calls, Data
#    Written at least the bytes written (summed over the bricks), and an
#    interval that starts again after each info (no WRITE in the next
#    incremental info when nothing was written);
#  - top open|read|write|opendir|readdir list the files with counts,
#    list-cnt 1 one row, brick B that brick only;
#  - bad input: an unknown metric, read-perf, a bad list-cnt, an unknown
#    brick, info on a volume not profiled (before start, after stop):
#    one line, exit 1, store unchanged;
#  - --xml parses (xmllint when installed) and --json (python3);
#  - a stopped brick is shown as not answering within the bound.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

TEST start_mortard
export MORTAR_SOCKET="$T/run/mortard.sock"
mkdir -p "$T/bricks/b0" "$T/bricks/b1"
B0="127.0.0.1:$T/bricks/b0"
B1="127.0.0.1:$T/bricks/b1"
TEST "$MORTAR" volume create v0 "$B0" "$B1" force
track_brick v0 brick0
track_brick v0 brick1
TEST "$MORTAR" volume start v0

# --- not profiled yet: info and top refused, nothing changed -----------
SUM=$(store_sum)
TEST ! "$MORTAR" volume profile v0 info
EXPECT_MATCH "Profile on Volume v0 is not started" cat "$T/.out"
info_err() { "$MORTAR" volume profile v0 info 2>&1 >/dev/null | wc -l; }
EXPECT "1" info_err
TEST ! "$MORTAR" volume top v0 open
EXPECT_MATCH "not enabled" cat "$T/.out"
TEST ! "$MORTAR" volume profile v0 stop
EXPECT "$SUM" store_sum

# --- start --------------------------------------------------------------
TEST "$MORTAR" volume profile v0 start
EXPECT_MATCH "Starting volume profile on v0 has been successful" cat "$T/.out"
EXPECT "on" sh -c "'$MORTAR' volume get v0 diagnostics.latency-measurement | awk 'NR>2 {print \$2}'"
EXPECT "on" sh -c "'$MORTAR' volume get v0 diagnostics.count-fop-hits | awk 'NR>2 {print \$2}'"
TEST ! "$MORTAR" volume profile v0 start
EXPECT_MATCH "already started" cat "$T/.out"

TEST mount_mortar 127.0.0.1:/v0 "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
TEST mkdir "$M0/d"
for i in 1 2 3 4 5 6; do
    TEST dd if=/dev/urandom of="$M0/f$i" bs=128k count=$i conv=fsync status=none
done
# (128 KiB and up: quick-read answers smaller files from their lookup,
# with no open or read reaching a brick.)
WRITTEN=$((128 * 1024 * 21))
# Drop the client's caches so the reads reach the bricks.
TEST force_umount "$M0"
TEST mount_mortar 127.0.0.1:/v0 "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
drop_caches
for i in 1 2 3 4 5 6; do
    TEST sh -c "cat '$M0/f$i' > /dev/null"
done
TEST sh -c "cat '$M0/f6' > /dev/null"
TEST ls "$M0/d" "$M0"

# --- profile info ---------------------------------------------------------
"$MORTAR" volume profile v0 info peek > "$T/info1"
TEST [ $? -eq 0 ]
EXPECT "2" grep -c "^Brick: 127.0.0.1:$T/bricks/b[01]$" "$T/info1"
EXPECT "2" grep -c "^Cumulative Stats:" "$T/info1"
EXPECT "2" grep -c "^Interval 0 Stats:" "$T/info1"
EXPECT "4" grep -c "%-latency   Avg-latency   Min-Latency   Max-Latency   No. of calls         Fop" "$T/info1"
EXPECT_MATCH "Block Size:" cat "$T/info1"
EXPECT_MATCH "No. of Writes:" cat "$T/info1"
# WRITE and READ rows with calls > 0 in the cumulative sections.
fop_calls() { # FILE FOP: calls summed over the cumulative sections
    awk -v f="$2" '/^Cumulative Stats:/ { c = 1 } /^Interval/ { c = 0 }
        c && $NF == f && $(NF-1) ~ /^[0-9]+$/ { s += $(NF-1) }
        END { print s + 0 }' "$1"
}
written_sum() {
    awk '/^Cumulative Stats:/ { c = 1 } /^Interval/ { c = 0 }
        c && /^Data Written:/ { s += $3 } END { print s + 0 }' "$1"
}
TEST [ "$(fop_calls "$T/info1" WRITE)" -gt 0 ]
TEST [ "$(fop_calls "$T/info1" READ)" -gt 0 ]
TEST [ "$(fop_calls "$T/info1" CREATE)" -ge 6 ]
TEST [ "$(written_sum "$T/info1")" -ge "$WRITTEN" ]
EXPECT_MATCH "Duration: [0-9]+ seconds" cat "$T/info1"

# info (not peek) closes interval 0; the next shows interval 1 without
# the writes, while the cumulative section keeps them.
TEST "$MORTAR" volume profile v0 info
EXPECT "2" grep -c "^Interval 0 Stats:" "$T/.out"
"$MORTAR" volume profile v0 info > "$T/info2"
EXPECT "2" grep -c "^Interval 1 Stats:" "$T/info2"
int_writes() {
    awk '/^Interval/ { c = 1 } /^Cumulative/ { c = 0 }
        c && $NF == "WRITE" { s += $(NF-1) } END { print s + 0 }' "$1"
}
EXPECT "0" int_writes "$T/info2"
TEST [ "$(fop_calls "$T/info2" WRITE)" -gt 0 ]
"$MORTAR" volume profile v0 info incremental > "$T/info3"
EXPECT "0" grep -c "^Cumulative Stats:" "$T/info3"
EXPECT "2" grep -c "^Interval 2 Stats:" "$T/info3"
"$MORTAR" volume profile v0 info cumulative > "$T/info4"
EXPECT "0" grep -c "^Interval" "$T/info4"

# --- top ----------------------------------------------------------------
for m in open read write; do
    "$MORTAR" volume top v0 $m > "$T/top-$m"
    TEST [ $? -eq 0 ]
    EXPECT "2" grep -c "^Count		filename$" "$T/top-$m"
    EXPECT "6" grep -cE "^[0-9]+		/f[1-6]$" "$T/top-$m"
done
# f6 was opened twice, any other once: first on its brick's list.
top_first() { awk -v b="$2" '$0 ~ "^Brick: " { on = index($0, b) > 0; n = 0 }
    on && /^[0-9]+\t\t/ { if (++n == 1) print $2 }' "$1"; }
f6_brick() { for b in b0 b1; do [ -e "$T/bricks/$b/f6" ] && echo "$b"; done; }
EXPECT "/f6" top_first "$T/top-open" "bricks/$(f6_brick)"
TEST "$MORTAR" volume top v0 opendir
EXPECT_MATCH "		/d" cat "$T/.out"
TEST "$MORTAR" volume top v0 readdir
EXPECT_MATCH "		/d" cat "$T/.out"
"$MORTAR" volume top v0 read list-cnt 1 > "$T/top-1"
EXPECT "2" grep -cE "^[0-9]+		/" "$T/top-1"
"$MORTAR" volume top v0 write brick "$B1" > "$T/top-b1"
EXPECT "1" grep -c "^Brick:" "$T/top-b1"
EXPECT "Brick: $B1" grep "^Brick:" "$T/top-b1"

# --- bad input: one line, exit 1, nothing changed -------------------------
SUM=$(store_sum)
TEST ! "$MORTAR" volume top v0 bogus
EXPECT_MATCH "unknown metric 'bogus'" cat "$T/.out"
top_err() { "$MORTAR" volume top v0 bogus 2>&1 >/dev/null | wc -l; }
EXPECT "1" top_err
TEST ! "$MORTAR" volume top v0 read-perf
EXPECT_MATCH "not supported" cat "$T/.out"
TEST ! "$MORTAR" volume top v0 read list-cnt 101
TEST ! "$MORTAR" volume top v0 read list-cnt x
TEST ! "$MORTAR" volume top v0 read brick "127.0.0.1:$T/nope"
EXPECT_MATCH "does not exist in volume" cat "$T/.out"
TEST ! "$MORTAR" volume profile v0 info bogus
TEST ! "$MORTAR" volume profile nosuch info
EXPECT "$SUM" store_sum

# --- --xml and --json -------------------------------------------------------
"$MORTAR" --xml volume profile v0 info peek > "$T/info.xml"
"$MORTAR" --xml volume top v0 read > "$T/top.xml"
if command -v xmllint > /dev/null; then
    TEST xmllint --noout "$T/info.xml"
    TEST xmllint --noout "$T/top.xml"
fi
xml_count() { python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
print(len(r.findall(sys.argv[2])))' "$@"; }
EXPECT "2" xml_count "$T/info.xml" "volProfile/bricks/brick/cumulativeStats"
EXPECT "6" xml_count "$T/top.xml" "volTop/bricks/brick/files/file"
json_files() { "$MORTAR" --json volume top v0 write | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(len(b["files"]) for b in d["volTop"]["bricks"]))'; }
EXPECT "6" json_files

# --- top clear, info clear ---------------------------------------------
TEST "$MORTAR" volume top v0 clear
"$MORTAR" volume top v0 read > "$T/top-cleared"
EXPECT "0" grep -cE "^[0-9]+		/" "$T/top-cleared"
TEST "$MORTAR" volume profile v0 info clear
EXPECT "2" grep -c "^Cleared stats." "$T/.out"
"$MORTAR" volume profile v0 info peek > "$T/info5"
EXPECT "0" fop_calls "$T/info5" WRITE

# --- a brick that does not answer (stopped): shown as such, the others'
# numbers shown, within the answer's bound (a killed brick is restarted
# by mortard's supervisor at once, too soon to be seen reliably) ---
P1=$(cat "$T/run/v0-brick1.pid")
TEST kill -STOP "$P1"
t0=$(date +%s)
"$MORTAR" volume profile v0 info peek > "$T/info6"
TEST [ $? -eq 0 ]
TEST [ $(($(date +%s) - t0)) -lt 15 ]
EXPECT "1" grep -c "^Brick is not answering: no answer within 5 s" "$T/info6"
EXPECT "1" grep -c "^Cumulative Stats:" "$T/info6"
TEST kill -CONT "$P1"

# --- stop: info refused again ---------------------------------------------
TEST force_umount "$M0"
TEST "$MORTAR" volume profile v0 stop
EXPECT_MATCH "Stopping volume profile on v0 has been successful" cat "$T/.out"
EXPECT "off" sh -c "'$MORTAR' volume get v0 diagnostics.latency-measurement | awk 'NR>2 {print \$2}'"
TEST ! "$MORTAR" volume profile v0 info
EXPECT_MATCH "Profile on Volume v0 is not started" cat "$T/.out"
TEST ! "$MORTAR" volume top v0 read
