#!/usr/bin/env bash
# md-cache with the bricks' cache invalidation end to end (issue 24 item
# 2): two mounts A and B of one volume from mortard, first a one-brick
# volume, then a 2 x 2 distribute-replicate one. The kernel's entry and
# attribute timeouts and md-cache's are 600 s (the volume default with
# features.cache-invalidation on), so B sees A's changes within the 2 s
# checked here only if the bricks tell it:
#  - B reads a file, A appends to it: B sees the new size and content;
#  - A chmods it, renames it, unlinks it; A creates a file and a
#    directory in a directory B listed: B sees each at once;
#  - B's statedump counts md-cache hits, misses and invalidations, the
#    bricks' count invalidations sent; the kernel got notifications;
#  - the brick dies and a file changes behind Mortar's back: B's lost
#    connection invalidated everything, B sees the change;
#  - B switches to a new graph (its new connections watch nothing
#    yet): its kernel's copies go, and it sees A's next change;
#  - the check is sensitive: with the bricks silent
#    (features.cache-invalidation off) but the clients told to trust them
#    for 600 s, B still sees the old mode after the same 2 s.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MDCTL" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

B="$T/bricks"
for i in 0 1 2 3; do track_brick rv brick$i; done
track_brick sv brick0

# section_value PID SECTION KEY: KEY in [SECTION] of a client's dump.
section_value() {
    statedump_of "$1" | awk -v s="[$2]" -v k="$3" '
        $0 == s { in_s = 1; next }
        /^\[/ { in_s = 0 }
        in_s && index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}

# brick_sent VOL N: the invalidations bricks 0..N-1 of VOL sent, summed.
brick_sent() {
    local i n=0 v
    for ((i = 0; i < $2; i++)); do
        v=$(dump_value "$(cat "$T/run/$1-brick$i.pid")" "dump $1-upcall" \
            invalidations_sent)
        n=$((n + ${v:-0}))
    done
    echo "$n"
}

exists() { [ -e "$1" ] && echo Y || echo N; }

# checks VOL NBRICKS: A ($M0) changes, B ($M1) sees it within 2 s.
checks() {
    local vol="$1" pid
    echo hello > "$M0/f"
    mkdir "$M0/d"
    # B looks: attributes, content, the directory's names.
    EXPECT "6" stat -c %s "$M1/f"
    EXPECT "hello" cat "$M1/f"
    EXPECT "" ls "$M1/d"
    # A forced stat (statx AT_STATX_FORCE_SYNC) passes the kernel's
    # cache: md-cache answers it.
    EXPECT "6" stat --cached=never -c %s "$M1/f"
    # A appends: B sees the size and the content.
    echo world >> "$M0/f"
    EXPECT_WITHIN 2 "12" stat -c %s "$M1/f"
    EXPECT_WITHIN 2 "hello world" eval "cat '$M1/f' | tr '\n' ' ' | sed 's/ \$//'"
    # chmod, rename, unlink.
    chmod 600 "$M0/f"
    EXPECT_WITHIN 2 "600" stat -c %a "$M1/f"
    EXPECT "600" stat --cached=never -c %a "$M1/f"
    mv "$M0/f" "$M0/g"
    EXPECT_WITHIN 2 "N" exists "$M1/f"
    EXPECT_WITHIN 2 "Y" exists "$M1/g"
    EXPECT "hello" head -n 1 "$M1/g"
    rm "$M0/g"
    EXPECT_WITHIN 2 "N" exists "$M1/g"
    # creates in a directory B listed.
    echo x > "$M0/d/new"
    mkdir "$M0/d/sub"
    EXPECT_WITHIN 2 "new sub" eval "ls '$M1/d' | tr '\n' ' ' | sed 's/ \$//'"
    EXPECT_WITHIN 2 "x" cat "$M1/d/new"
    # The counters.
    pid=$(client_pid "$M1")
    TEST test "$(section_value "$pid" "dump $vol-md-cache" hits)" -gt 0
    TEST test "$(section_value "$pid" "dump $vol-md-cache" misses)" -gt 0
    TEST test "$(section_value "$pid" "dump $vol-md-cache" invalidations)" -gt 0
    EXPECT "600000" section_value "$pid" "dump $vol-md-cache" timeout_ms
    TEST test "$(section_value "$pid" "dump fuse" notify_sent)" -gt 0
    TEST test "$(brick_sent "$vol" "$2")" -gt 0
}

TEST start_mortard

# ---- one brick ----
TEST mcli volume create sv 127.0.0.1:$B/s0 force
TEST mcli volume start sv
TEST mount_volume sv "$M0"
TEST mount_volume sv "$M1"
checks sv 1

# ---- a lost brick connection: nothing it vouched for holds ----
# B caches f's mode; the brick dies and f changes behind Mortar's back
# (no brick could tell anyone); once B's connection went, its kernel and
# md-cache trust nothing of that brick: B sees the new mode.
echo again > "$M0/f2"
EXPECT "644" stat -c %a "$M1/f2"
TEST kill -KILL "$(cat "$T/run/sv-brick0.pid")"
EXPECT_WITHIN 20 "1" eval "section_value $(client_pid "$M1") 'dump fuse' notify_all"
TEST chmod 600 "$B/s0/f2"
mcli volume start sv force > /dev/null 2>&1
EXPECT_WITHIN 30 "600" stat -c %a "$M1/f2"

# ---- sensitivity: the bricks silent, the clients trusting ----
TEST umount_client "$M0"
TEST umount_client "$M1"
TEST mcli volume set sv features.cache-invalidation off
TEST mcli volume set sv performance.cache-invalidation on
TEST mcli volume set sv performance.md-cache-timeout 600
# The brick applies the set on SIGHUP, after the CLI returned: wait for
# it, or a chmod in that window is still announced.
EXPECT_WITHIN 10 "off" dump_value "$(cat "$T/run/sv-brick0.pid")" \
    "dump sv-upcall" cache_invalidation
TEST mount_volume sv "$M0"
TEST mount_volume sv "$M1"
echo hello > "$M0/h"
EXPECT "644" stat -c %a "$M1/h"
# B holds h open so that its dentry and inode stay in B's kernel: other
# tests running beside this one drop the kernel's caches, and a name
# looked up again goes to the brick whatever md-cache holds.
exec 9< "$M1/h"
chmod 600 "$M0/h"
sleep 2
EXPECT "644" stat -c %a "$M1/h"
exec 9<&-
TEST umount_client "$M0"
TEST umount_client "$M1"

# ---- 2 x 2 distribute-replicate ----
TEST mcli volume create rv replica 2 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 127.0.0.1:$B/r3 force
TEST mcli volume start rv
TEST mount_volume rv "$M0"
TEST mount_volume rv "$M1"
checks rv 4

# ---- B switches graphs: its new connections watch nothing yet ----
# B follows mortard (mount -t mortar); a graph shape change makes it
# switch, after which its kernel's copies (vouched for through the old
# graph's connections) must not be trusted: B sees A's chmod at once.
TEST umount_client "$M1"
TEST mount_mortar 127.0.0.1:/rv "$M1" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M1"
echo three > "$M0/f3"
EXPECT "644" stat -c %a "$M1/f3"
TEST mcli volume set rv diagnostics.client-trace on
EXPECT_WITHIN 20 "1" eval "grep -c 'serves the mount (was graph 1)' '$(mm_log "$M1")'"
chmod 600 "$M0/f3"
EXPECT_WITHIN 2 "600" stat -c %a "$M1/f3"
