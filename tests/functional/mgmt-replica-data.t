#!/usr/bin/env bash
# Replicated volumes end to end through mortard and a mount:
#  - 1 x 3: files written through the mount are on all three bricks byte
#    for byte; a brick killed -9 stops nothing: writes and reads go on
#    without an error and everything written is on the two live bricks;
#    `volume start force` has the brick running again (mortard's brick
#    supervision may restart it first: both are fine);
#  - 2 x 3: files spread over both sets, each file on the three bricks
#    of its set and nowhere else; add-brick of a third set, rebalance to
#    completed: files move to the new set and each is again on all three
#    bricks of its set, every checksum intact (before the fix of
#    rebalance-list.c it moved nothing: replicate's readdirplus leaves
#    out the attributes of objects it has not looked up; and replicate
#    crashed on distribute's link files, made without an inode);
#    remove-brick of the first set (start, completed, commit): every
#    file is then on all three bricks of one of the two sets left;
#  - cluster.quorum-type fixed with cluster.quorum-count 3 set on the
#    1 x 3 volume while mount.mortar has it mounted (the client switches
#    graphs without a remount): with one brick killed (mortard stopped
#    first, so that no supervision restarts it) a write to an open file
#    fails with EROFS and nothing reaches the two live bricks; lookups
#    and reads fail with ENOTCONN (replicate needs quorum for them too);
#    once the brick is back, writes work again;
#  - replica 2 under the default quorum (auto): the second brick down,
#    writes and reads go on; the first down, both fail (ENOTCONN).
# TIMEOUT: 600
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if ! "$MORTARFSD" --help 2>&1 | grep -q -- "--rebalance"; then
    echo "1..0 # SKIP mortarfsd has no --rebalance"
    exit 0
fi

B="$T/bricks"
SRC="$T/src"
for i in 0 1 2 3 4 5 6 7 8; do
    track_brick r1 brick$i
    track_brick r2 brick$i
    track_brick r3 brick$i
done
_T_PIDFILES+=("$T/run/rebalance/r2.pid")

# rep_check SRC SETS...: every file under SRC is, byte for byte, on every
# brick of exactly one set (a set: BRICKDIR,BRICKDIR,...) and its data is
# on no other brick; prints "ok" and the files per set, or what is wrong.
# Link files and migration markers (modes 1000 and 3000) are not data.
rep_check() {
    python3 - "$@" <<'PY'
import os, stat, sys
src, sets = sys.argv[1], [s.split(",") for s in sys.argv[2:]]
def data(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if stat.S_IMODE(st.st_mode) in (0o1000, 0o3000):
        return None
    with open(path, "rb") as f:
        return f.read()
counts = [0] * len(sets)
for root, dirs, files in os.walk(src):
    for name in files:
        rel = os.path.relpath(os.path.join(root, name), src)
        want = open(os.path.join(src, rel), "rb").read()
        holders = [i for i, s in enumerate(sets)
                   if any(data(os.path.join(b, rel)) is not None for b in s)]
        if len(holders) != 1:
            print("%s: data in sets %s" % (rel, holders)); sys.exit(0)
        for b in sets[holders[0]]:
            if data(os.path.join(b, rel)) != want:
                print("%s: differs or missing on %s" % (rel, b)); sys.exit(0)
        counts[holders[0]] += 1
print("ok", *counts)
PY
}

# total_files SRC SETS...: the files rep_check found in all sets.
total_files() {
    rep_check "$@" | awk '{ s = 0; for (i = 2; i <= NF; i++) s += $i
        print s }'
}

# on_bricks SRC BRICKDIR...: every file under SRC is on each brick, byte
# for byte ("ok", or the first that is not).
on_bricks() {
    local src="$1" f b
    shift
    for f in $(cd "$src" && find . -type f | sort); do
        for b in "$@"; do
            cmp -s "$src/$f" "$b/$f" || { echo "$f differs on $b"; return; }
        done
    done
    echo ok
}

# write_files MNT PREFIX N [SUBDIR]: N files of random sizes, written to
# MNT/SUBDIR and kept in $SRC/SUBDIR (the reference).
write_files() {
    python3 - "$1" "$2" "$3" "${4:-.}" "$SRC" <<'PY'
import os, sys
mnt, prefix, n, sub, src = sys.argv[1:6]
os.makedirs(os.path.join(src, sub), exist_ok=True)
for i in range(int(n)):
    data = os.urandom(1 + (i * 7919) % 300000)
    for base in (mnt, src):
        name = os.path.join(base, sub, "%s%03d" % (prefix, i))
        with open(name, "wb") as f:
            f.write(data)
PY
}

# status column of the localhost row of rebalance status
rebal_state() {
    mcli volume rebalance "$1" status | awk '$1 == "localhost" {
        s = $7; if ($7 == "in") s = "in progress"; print s }'
}

# status column of the localhost row of remove-brick status VOL BRICKS...
remove_state() {
    local vol="$1"
    shift
    mcli volume remove-brick "$vol" "$@" status | awk '$1 == "localhost" {
        s = $7; if ($7 == "in") s = "in progress"; print s }'
}

brick_online() {
    mcli volume status "$1" | awk -v b="127.0.0.1:$2" '$2 == b { print $4 }'
}

TEST start_mortard

# ---- 1 x 3 ----
L="127.0.0.1:$B"
TEST mcli volume create r1 replica 3 "$L/a0" "$L/a1" "$L/a2" force
TEST mcli volume start r1
for i in 0 1 2; do
    EXPECT_WITHIN 20 "Y" brick_online r1 "$B/a$i"
done
M1="$T/m1"
TEST mount_volume r1 "$M1"
TEST write_files "$M1" f 40
EXPECT "ok" on_bricks "$SRC" "$B/a0" "$B/a1" "$B/a2"

# A brick killed -9: the mount goes on as if nothing happened.
TEST kill -9 "$(cat "$T/run/r1-brick1.pid")"
TEST write_files "$M1" g 40
TEST python3 -c "
import os
for i in range(10):
    p = 'f%03d' % i
    for base in ('$M1', '$SRC'):
        with open(os.path.join(base, p), 'ab') as f:
            f.write(b'appended after the kill %d' % i)
"
TEST diff -r "$SRC" "$M1"
EXPECT "ok" on_bricks "$SRC" "$B/a0" "$B/a2"
# volume start force: the brick runs again (the supervision may have
# restarted it already).
TEST mcli volume start r1 force
EXPECT_WITHIN 20 "Y" brick_online r1 "$B/a1"
TEST write_files "$M1" h 5
TEST diff -r "$SRC" "$M1"
EXPECT "ok" on_bricks "$SRC" "$B/a0" "$B/a2"
TEST umount_client "$M1"

# ---- 2 x 3, then a third set and a rebalance ----
rm -rf "$SRC"
TEST mcli volume create r2 replica 3 "$L/b0" "$L/b1" "$L/b2" "$L/b3" \
    "$L/b4" "$L/b5" force
TEST mcli volume start r2
for i in 0 1 2 3 4 5; do
    EXPECT_WITHIN 20 "Y" brick_online r2 "$B/b$i"
done
M2="$T/m2"
TEST mount_volume r2 "$M2"
TEST mkdir "$M2/d"
TEST write_files "$M2" f 60
TEST write_files "$M2" g 60 d
TEST diff -r "$SRC" "$M2"
S0="$B/b0,$B/b1,$B/b2"
S1="$B/b3,$B/b4,$B/b5"
S2="$B/b6,$B/b7,$B/b8"
EXPECT_MATCH "^ok [1-9][0-9]* [1-9][0-9]*$" rep_check "$SRC" "$S0" "$S1"
EXPECT "120" total_files "$SRC" "$S0" "$S1"

TEST mcli volume add-brick r2 replica 3 "$L/b6" "$L/b7" "$L/b8" force
for i in 6 7 8; do
    EXPECT_WITHIN 20 "Y" brick_online r2 "$B/b$i"
done
TEST mcli volume rebalance r2 start
EXPECT_WITHIN 240 "completed" rebal_state r2
EXPECT_MATCH "^ok [0-9]+ [0-9]+ [1-9][0-9]*$" rep_check "$SRC" "$S0" "$S1" "$S2"
TEST umount_client "$M2"
# A mount with the new graph sees every file. (This test's mounts read a
# volfile once; mount.mortar's clients switch to the new graph.)
M3="$T/m3"
TEST mount_volume r2 "$M3"
TEST diff -r "$SRC" "$M3"
TEST umount_client "$M3"

# remove-brick of the first set: its files migrate to the other two.
RM=("$L/b0" "$L/b1" "$L/b2")
_T_PIDFILES+=("$T/run/rebalance/r2.remove.pid")
TEST mcli volume remove-brick r2 "${RM[@]}" start
EXPECT_WITHIN 240 "completed" remove_state r2 "${RM[@]}"
TEST mcli volume remove-brick r2 "${RM[@]}" commit
EXPECT "Number of Bricks: 2 x 3 = 6" sh -c \
    "'$MDCTL' -s '$T/run/mortard.sock' volume info r2 | grep '^Number of'"
EXPECT "120" total_files "$SRC" "$S1" "$S2"
EXPECT_MATCH "^ok [1-9][0-9]* [1-9][0-9]*$" rep_check "$SRC" "$S1" "$S2"
M5="$T/m5"
TEST mount_volume r2 "$M5"
TEST diff -r "$SRC" "$M5"
TEST umount_client "$M5"

# ---- quorum: fixed, 3 of 3 ----
# Set on a mounted volume: the client (mount.mortar, watching the
# volfile) switches to a graph with the new options.
rm -rf "$SRC"
M4="$T/m4"
mkdir -p "$M4"
TEST mount_mortar 127.0.0.1:/r1 "$M4" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M4"
TEST write_files "$M4" q 5
TEST mcli volume set r1 cluster.quorum-type fixed
TEST mcli volume set r1 cluster.quorum-count 3
EXPECT "2" grep -c "option quorum" "$T/state/vols/r1/client.vol"
V=$(sed -n 's/^version=//p' "$T/state/vols/r1/info")
EXPECT_WITHIN 20 "1" sh -c "grep -c \"version $V from .*switched from graph\" \
    '$(mm_log "$M4")'"
exec 7>> "$M4/q000"
# Keep the brick down: mortard leaves bricks running when it stops, and
# a stopped mortard restarts nothing.
MPID=$(mortard_pid)
TEST kill "$MPID"
EXPECT_WITHIN 20 "N" proc_alive "$MPID"
BPID=$(cat "$T/run/r1-brick2.pid")
TEST kill -9 "$BPID"
EXPECT_WITHIN 20 "N" proc_alive "$BPID"
# Lookups and reads need quorum too (doc/replicate.md, Quorum): the
# copies that could blame the reachable ones may be the unreachable one.
# (The first ENOTCONN also says the client saw the brick go.)
EXPECT_WITHIN 20 "Transport endpoint is not connected" errno_of cat "$M4/q001"
EXPECT "Transport endpoint is not connected" errno_of sh -c "echo x > '$M4/new'"
# A write on a file opened before: EROFS (write-behind answers the
# write and reports the failure to fsync), and nothing reached the live
# bricks.
EXPECT "[Errno 30] Read-only file system" errno_of python3 -c \
    "import os; os.write(7, b'after the kill'); os.fsync(7)"
exec 7>&-
TEST cmp "$SRC/q000" "$B/a0/q000"
TEST cmp "$SRC/q000" "$B/a1/q000"
TEST [ ! -e "$B/a0/new" ]
TEST [ ! -e "$B/a1/new" ]
TEST start_mortard
EXPECT_WITHIN 30 "Y" brick_online r1 "$B/a2"
EXPECT_WITHIN 20 "ok" errno_of sh -c "echo x > '$M4/new'"
TEST umount "$M4"

# ---- replica 2 under quorum auto ----
# The second brick down: everything goes on; the first brick down: the
# set's files can be neither changed nor read (doc/admin-guide.md).
rm -rf "$SRC"
TEST mcli volume create r3 replica 2 "$L/c0" "$L/c1" force
TEST mcli volume start r3
EXPECT_WITHIN 20 "Y" brick_online r3 "$B/c0"
EXPECT_WITHIN 20 "Y" brick_online r3 "$B/c1"
M6="$T/m6"
TEST mount_volume r3 "$M6"
TEST write_files "$M6" p 3
MPID=$(mortard_pid)
TEST kill "$MPID"
EXPECT_WITHIN 20 "N" proc_alive "$MPID"
BPID=$(cat "$T/run/r3-brick1.pid")
TEST kill -9 "$BPID"
EXPECT_WITHIN 20 "N" proc_alive "$BPID"
EXPECT "ok" errno_of sh -c "echo x > '$M6/second-down'"
TEST cmp "$SRC/p001" "$M6/p001"
TEST start_mortard
EXPECT_WITHIN 30 "Y" brick_online r3 "$B/c1"
MPID=$(mortard_pid)
TEST kill "$MPID"
EXPECT_WITHIN 20 "N" proc_alive "$MPID"
BPID=$(cat "$T/run/r3-brick0.pid")
TEST kill -9 "$BPID"
EXPECT_WITHIN 20 "N" proc_alive "$BPID"
EXPECT_WITHIN 20 "Transport endpoint is not connected" \
    errno_of cat "$M6/p002"
EXPECT "Transport endpoint is not connected" \
    errno_of sh -c "echo x > '$M6/first-down'"
TEST [ ! -e "$B/c1/first-down" ]
TEST start_mortard
EXPECT_WITHIN 30 "Y" brick_online r3 "$B/c0"
TEST umount_client "$M6"
