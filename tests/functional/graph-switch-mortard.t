#!/usr/bin/env bash
# Issue 4 end to end: a 2-brick distribute volume from mortard, mounted
# with `mount -t mortar` (the client follows the volume with MGMT_WATCH).
# `volume add-brick` hands the client a volfile with a third
# protocol/client; the client switches to it without a remount (same
# process, same mount), a file kept open by a helper process still reads
# and writes through its fd, the files made before are all there, and
# after a fix-layout of the root new files land on the new brick too.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MDCTL" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

B="$T/bricks"
for i in 0 1 2; do track_brick dv brick$i; done
TEST start_mortard
TEST mcli volume create dv 127.0.0.1:$B/b0 127.0.0.1:$B/b1 force
TEST mcli volume start dv
TEST mount_mortar 127.0.0.1:/dv "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
CPID=$(mm_pid "$M0")
CLOG=$(mm_log "$M0")
MNT_ID=$(awk -v m="$M0" '$5 == m { print $1 }' /proc/self/mountinfo)

fd_hold "$M0/held"

mkfiles() {
    local i
    for ((i = 0; i < 40; i++)); do
        echo "$1 $i" > "$M0/$1-$i" || return 1
    done
}

n_names() {
    ls "$M0" | grep -c "^$1-"
}

on_brick() {
    find "$1" -maxdepth 1 -type f -name "$2-*" -size +0 | wc -l
}

EXPECT "ok" hold w 0 "before-add"
TEST mkfiles old
EXPECT "40" n_names old

TEST mcli volume add-brick dv 127.0.0.1:$B/b2 force
EXPECT_WITHIN 30 "1" grep -c 'without a remount' "$CLOG"
EXPECT_WITHIN 30 "1" sh -c "grep -c 'old graph [0-9]* freed' '$CLOG'"
EXPECT "$CPID" mm_pid "$M0"
EXPECT "$MNT_ID" awk -v m="$M0" '$5 == m { print $1 }' /proc/self/mountinfo
EXPECT "before-add" hold r 0 10
EXPECT "ok" hold w 0 "after-add!"
EXPECT "after-add!" hold r 0 10
EXPECT "40" n_names old
EXPECT "old 21" cat "$M0/old-21"
TEST setfattr -n mortar.dht.fix-layout -v 1 "$M0"
TEST mkfiles new
EXPECT "40" n_names new
EXPECT_MATCH "^[1-9]" on_brick "$B/b2" new
DUMP=$(statedump_of "$CPID")
count_graphs() {
    grep -c '^\[graph ' <<< "$DUMP"
}
EXPECT "1" count_graphs
EXPECT_MATCH "children=dv-brick0,dv-brick1,dv-brick2" echo "$DUMP"
fd_hold_end
