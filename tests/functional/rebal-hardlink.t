#!/usr/bin/env bash
# The rebalance moves hard-linked files with all their names:
#  1. add-brick (b0 -> b0 b1 b2): inodes with 4 names in 3 directories,
#     names hashing to different bricks. An inode none of whose names
#     hashes to b0 any more moves (to the brick most names hash to), one
#     with a name still hashing to b0 stays; every name keeps its data
#     (md5), one inode number and nlink 4 through the mount; data on one
#     brick only (all names hard links there), a link file on every other
#     name's hashed brick, no marker, no orphan inode. The first runs die
#     at the fault points (before the commit, after it, after the first
#     name left the source) and the last run resumes and finishes.
#  2. remove-brick of b1 (decommissioned, by hand): nothing skipped, no
#     file left on b1; the volume without b1 still has every name, inode
#     and nlink. A client adds and removes names during the run: neither
#     change is lost.
#  3. remove-brick start + commit through mortard: hard-linked files on
#     the removed brick move, nothing is skipped, commit is accepted.
# TIMEOUT: 600
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# names N_SUBS DECOM SPEC...: for each SPEC (a string of brick indexes,
# one per name, "x" any), a name "hNN.K" hashing to that brick under the
# default layout of N_SUBS subvolumes minus the DECOM index (-1: none).
# Prints "group name brick" lines. MurmurHash3 x86_32, seed 0.
mm3_py() {
    cat > "$T/mm3.py" <<'PY'
import os, sys
sys.path.insert(0, os.environ["DIST_HASH_DIR"])
from dist_hash import slot
nsub, decom = int(sys.argv[1]), int(sys.argv[2])
live = [i for i in range(nsub) if i != decom]
def brick(name):
    return live[slot(name, len(live))]
if sys.argv[3:4] == ["pick"]:
    # PREFIX.N hashing to brick BRICK under this layout
    j = 0
    while brick("%s.%d" % (sys.argv[5], j)) != int(sys.argv[4]):
        j += 1
    print("%s.%d" % (sys.argv[5], j))
    sys.exit(0)
if sys.argv[3:4] == ["other"]:
    # a new name hashing to another brick than NAME under this layout
    j = 0
    while brick("extra%d" % j) == brick(sys.argv[4]):
        j += 1
    print("extra%d" % j)
    sys.exit(0)
if sys.argv[3:] == ["-"]:
    # rehash: the names of stdin with their brick under this layout
    for line in sys.stdin:
        g, n, b = line.split()
        print(g, n, brick(n))
    sys.exit(0)
for g, spec in enumerate(sys.argv[3:]):
    for k, want in enumerate(spec):
        j = 0
        while True:
            n = "h%02d.%d.%d" % (g, k, j)
            if want == "x" or brick(n) == int(want):
                print(g, n, brick(n))
                break
            j += 1
PY
}
names() {
    python3 "$T/mm3.py" "$@"
}
# rehash N_SUBS DECOM < NAMES: the same names with their brick under that
# layout.
rehash() {
    python3 "$T/mm3.py" "$1" "$2" -
}
mm3_py
export DIST_HASH_DIR="$(cd "$(dirname "$0")/../lib" && pwd)"

for i in 0 1 2; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
    TEST start_brick "b$i" "$T/bricks/b$i" "$(eval echo "\$P$i")"
done
dist_volfile "b0:$P0" > "$T/vol/a1.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/a3.vol"
dist_volfile -d b1 "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/rm.vol"
dist_volfile "b0:$P0" "b2:$P2" > "$T/vol/a2.vol"

# Groups 0-4 move (no name on b0 under 3 bricks), 5-8 stay (a name on
# b0). Directory of name K: d$((K % 3)).
names 3 -1 1122 2211 1212 2112 1111 1220 0120 2001 0112 > "$T/names"
EXPECT "36" sh -c "wc -l < '$T/names'"

TEST mount_volfile "$T/vol/a1.vol" "$M0"
TEST mkdir "$M0/d0" "$M0/d1" "$M0/d2"
mk_groups() {
    local g n b k prev=""
    while read -r g n b; do
        k=${n#*.}
        k=${k%%.*}
        if [ "$g" != "$prev" ]; then
            head -c $((100000 + 4099 * g)) /dev/urandom > "$M0/d$((k % 3))/$n" \
                || return 1
            first="$M0/d$((k % 3))/$n"
            prev=$g
        else
            ln "$first" "$M0/d$((k % 3))/$n" || return 1
        fi
    done < "$T/names"
}
TEST mk_groups
for i in $(seq 0 9); do
    echo "single $i" > "$M0/d0/s$i"
done
# path md5 inode-number per name
sums() {
    local g n b k
    while read -r g n b; do
        k=${n#*.}
        k=${k%%.*}
        echo "$g d$((k % 3))/$n $(md5sum < "$1/d$((k % 3))/$n" | cut -c1-32)"
    done < "$T/names"
}
sums "$M0" > "$T/sums"
EXPECT "36" sh -c "wc -l < '$T/sums'"
TEST umount_client "$M0"

# check MNT [NLINK...]: every name's md5; one inode number per group and
# (if given) the nlink per group (groups in order) through the mount.
check() {
    local mnt="$1" g p s bad=0
    shift
    sums "$mnt" | diff - "$T/sums" > /dev/null || bad=1
    while read -r g p s; do
        echo "$g $(stat -c "%i${1:+ %h}" "$mnt/$p")"
    done < "$T/sums" | sort -u > "$T/inos"
    [ "$(wc -l < "$T/inos")" = 9 ] || bad=1
    [ "$(cut -d' ' -f1 "$T/inos" | sort -u | wc -l)" = 9 ] || bad=1
    [ "$(cut -d' ' -f2 "$T/inos" | sort -u | wc -l)" = 9 ] || bad=1
    [ $# = 0 ] || [ "$(cut -d' ' -f3 "$T/inos" | tr '\n' ' ')" = "$* " ] \
        || bad=1
    echo "$bad"
}

# where PATH: the bricks holding PATH as data (not a link file/marker).
where() {
    local b out=""
    for b in 0 1 2; do
        [ -f "$T/bricks/b$b/$1" ] || continue
        case "$(stat -c %a "$T/bricks/b$b/$1")" in
            1000|3000) ;;
            *) out="$out$b" ;;
        esac
    done
    echo "$out"
}
# layout_ok NAMES MODE: each group's data on one brick (all names there,
# one brick inode), expected side (MODE add: 0-4 off b0, 5-8 on b0;
# rm: none on b1), each name's hashed brick has data or a link file.
layout_ok() {
    python3 - "$T/bricks" "$1" "$2" <<'PY'
import os, stat, sys
root, names, mode = sys.argv[1], sys.argv[2], sys.argv[3]
groups = {}
for line in open(names):
    g, n, b = line.split()
    k = int(n.split(".")[1])
    groups.setdefault(int(g), []).append(("d%d/%s" % (k % 3, n), int(b)))
bad = []
for g, ns in sorted(groups.items()):
    where = set()
    inos = set()
    for p, h in ns:
        for b in range(3):
            try:
                st = os.lstat(os.path.join(root, "b%d" % b, p))
            except FileNotFoundError:
                continue
            if stat.S_IMODE(st.st_mode) not in (0o1000, 0o3000):
                where.add(b)
                inos.add((b, st.st_ino))
            elif stat.S_IMODE(st.st_mode) == 0o3000:
                bad.append("marker %s on b%d" % (p, b))
        if where and h not in where:
            try:
                st = os.lstat(os.path.join(root, "b%d" % h, p))
                if stat.S_IMODE(st.st_mode) != 0o1000 or st.st_size:
                    bad.append("%s: not a link file on b%d" % (p, h))
                elif os.getxattr(os.path.join(root, "b%d" % h, p),
                                 "trusted.mortar.dht.linkto") != \
                        b"b%d\0" % min(where):
                    bad.append("%s: link file on b%d points elsewhere"
                               % (p, h))
            except FileNotFoundError:
                bad.append("%s: nothing on its hashed b%d" % (p, h))
    if len(where) != 1 or len(inos) != 1:
        bad.append("group %d: data on %s" % (g, sorted(inos)))
        continue
    b = where.pop()
    if mode == "add" and (b == 0) != (g >= 5):
        bad.append("group %d on b%d" % (g, b))
    if mode == "rm" and b == 1:
        bad.append("group %d on b1" % g)
print("ok" if not bad else "; ".join(bad))
PY
}
# orphans: files of the bricks with no name left, only their GFID
# handle under .mortar/handles (st_nlink 1).
orphans() {
    local b
    for b in 0 1 2; do
        find "$T/bricks/b$b/.mortar/handles" -type f -links 1 -print \
            2> /dev/null
    done | wc -l
}
markers() {
    local b
    for b in 0 1 2; do
        (cd "$T/bricks/b$b" && find . -path ./.mortar -prune -o -type f \
            -perm 3000 -print)
    done | wc -l
}

# ---- 1. add-brick, killed at each hard-link fault point -----------------
n=0
for fp in hardlink-before-commit hardlink-after-commit hardlink-name-moved; do
    n=$((n + 1))
    MORTAR_REBAL_FAULT=$fp "$MORTARFSD" --rebalance --volfile "$T/vol/a3.vol" \
        --rebalance-state "$T/a.state" -N --log-file "$T/log/a$n.log"
    EXPECT "70" echo $?
    EXPECT "running" state_value "$T/a.state" status
    EXPECT_MATCH "fault point $fp" cat "$T/log/a$n.log"
    # Whatever the kill left, the volume shows every name right (after
    # the first name left the source, a name may still be answered from
    # the source's copy: same data and inode, the source's link count).
    TEST mount_volfile "$T/vol/a3.vol" "$M0"
    if [ $fp = hardlink-name-moved ]; then
        EXPECT "0" check "$M0"
    else
        EXPECT "0" check "$M0" 4 4 4 4 4 4 4 4 4
    fi
    TEST umount_client "$M0"
done
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/a3.vol" \
    --rebalance-state "$T/a.state" -N --log-file "$T/log/a9.log"
EXPECT "completed" state_value "$T/a.state" status
EXPECT "0" state_value "$T/a.state" failed_files
EXPECT "0" state_value "$T/a.state" skipped_files
EXPECT_MATCH "finishing the move of a hard-linked inode" cat "$T/log/a9.log"
EXPECT "ok" layout_ok "$T/names" add
EXPECT "0" markers
EXPECT "0" orphans
TEST mount_volfile "$T/vol/a3.vol" "$M0"
EXPECT "0" check "$M0" 4 4 4 4 4 4 4 4 4
for i in $(seq 0 9); do
    EXPECT "single $i" cat "$M0/d0/s$i"
done
TEST umount_client "$M0"

# ---- 2. remove-brick of b1, a client linking and unlinking meanwhile --
# Groups on b1 move (to b0 or b2); group 4 (all names on b1, no link
# files) gets a fifth name during the run and group 1 loses one; neither
# change is lost. The new name hashes (new layout) to another brick than
# the name it is linked to, whose lookup creates a link file on its own:
# distribute's link cannot add a name on a brick that already has a link
# file of the same GFID (ENOENT; see doc/rebalance.md).
rehash 3 1 < "$T/names" > "$T/names.rm"
G0=$(awk '$1 == 4 { print $2; exit }' "$T/sums")
X=$(names 3 1 other "${G0#*/}")
G1=$(awk '$1 == 1 { print $2 }' "$T/sums" | tail -n 1)
G1A=$(awk '$1 == 1 { print $2; exit }' "$T/sums")
TEST mount_volfile "$T/vol/rm.vol" "$M0"
"$MORTARFSD" --rebalance --volfile "$T/vol/rm.vol" \
    --rebalance-state "$T/r.state" -N --log-file "$T/log/r.log" &
RPID=$!
sleep 1
TEST ln "$M0/$G0" "$M0/d2/$X"
TEST rm "$M0/$G1"
wait $RPID
EXPECT "0" echo $?
TEST umount_client "$M0"
EXPECT "completed" state_value "$T/r.state" status
EXPECT "0" state_value "$T/r.state" failed_files
EXPECT "0" state_value "$T/r.state" skipped_files
# The groups move --throttle (default normal: 2) at once.
EXPECT_MATCH "hard links: [0-9]+ inodes, 2 at once" cat "$T/log/r.log"
EXPECT "" brick_data_files "$T/bricks/b1"
EXPECT "" brick_special_files "$T/bricks/b1"
EXPECT "0" markers
EXPECT "0" orphans
# The volume without b1 (what remove-brick commit leaves).
TEST mount_volfile "$T/vol/a2.vol" "$M0"
EXPECT "5" stat -c %h "$M0/d2/$X"
EXPECT "$(stat -c %i "$M0/$G0")" stat -c %i "$M0/d2/$X"
EXPECT "$(awk '$1 == 4 { print $3; exit }' "$T/sums")" \
    sh -c "md5sum < '$M0/d2/$X' | cut -c1-32"
EXPECT "3" stat -c %h "$M0/$G1A"
TEST ! stat "$M0/$G1"
# Back to the names check() knows: every name, inode and nlink.
TEST rm "$M0/d2/$X"
TEST ln "$M0/$G1A" "$M0/$G1"
EXPECT "0" check "$M0" 4 4 4 4 4 4 4 4 4
for i in $(seq 0 9); do
    EXPECT "single $i" cat "$M0/d0/s$i"
done
TEST umount_client "$M0"
EXPECT "ok" layout_ok "$T/names.rm" rm

# ---- 3. remove-brick start + commit through mortard ---------------------
# A 2-brick volume; files with data on the brick to remove get names in
# other directories. The migration skips nothing, commit succeeds, and
# the 1-brick volume has every name with its data, inode and nlink.
if ! "$MORTARD" --help > /dev/null 2>&1; then
    exit 0
fi
MB="$T/mbricks"
# mortard makes a brick directory, never its missing parents.
mkdir -p "$MB"
RB="$T/run/rebalance"
for i in 0 1; do track_brick hl brick$i; done
_T_PIDFILES+=("$RB/hl.pid" "$RB/hl.remove.pid")
hl_state() {
    mcli volume remove-brick hl "127.0.0.1:$MB/m1" status |
        awk '$1 == "localhost" { s = $7; if ($7 == "in") s = "in progress";
                                 print s }'
}
TEST start_mortard
TEST mcli volume create hl 127.0.0.1:$MB/m0 127.0.0.1:$MB/m1 force
TEST mcli volume start hl
hl_online() {
    mcli volume status hl | awk -v b="127.0.0.1:$MB/m$1" '$2 == b { print $4 }'
}
for i in 0 1; do
    EXPECT_WITHIN 20 "Y" hl_online $i
done
TEST mount_volume hl "$M1"
TEST mkdir "$M1/a" "$M1/b" "$M1/c"
for i in $(seq 0 29); do
    head -c $((5000 + 77 * i)) /dev/urandom > "$M1/a/f$i" || break
done
# the files of a/ with their data on m1, each with 3 more names
(cd "$MB/m1/a" && find . -maxdepth 1 -type f ! -perm -1000 -printf '%f\n' |
    sort | head -n 5) > "$T/on_m1"
EXPECT_MATCH "^[1-5]$" sh -c "wc -l < '$T/on_m1'"
# Names: one hashing to m0 (a link file there), two to m1 (the data's
# brick): a second link file of one GFID on m0 would hit distribute's
# link limitation (see part 2).
while read -r f; do
    echo "$f a/$f b/$(names 2 -1 pick 0 "$f.x") c/$(names 2 -1 pick 1 \
        "$f.y") a/$(names 2 -1 pick 1 "$f.z")"
done < "$T/on_m1" > "$T/hl.names"
mk_links() {
    local f p0 rest p
    while read -r f p0 rest; do
        for p in $rest; do
            ln "$M1/$p0" "$M1/$p" || return 1
        done
    done < "$T/hl.names"
}
TEST mk_links
hl_sums() {
    local f ps p
    while read -r f ps; do
        for p in $ps; do
            echo "$f $p $(md5sum < "$1/$p" | cut -c1-32) $(stat -c '%i %h' \
                "$1/$p")"
        done
    done < "$T/hl.names"
}
hl_sums "$M1" > "$T/hl.sums"
EXPECT "0" sh -c "awk '\$5 != 4' '$T/hl.sums' | wc -l"
# one inode number per file
EXPECT "$(wc -l < "$T/on_m1")" \
    sh -c "awk '{ print \$1, \$4 }' '$T/hl.sums' | sort -u | wc -l"
TEST mcli volume remove-brick hl 127.0.0.1:$MB/m1 start
EXPECT_WITHIN 120 "completed" hl_state
EXPECT "0" state_value "$RB/hl.remove.state" skipped_files
EXPECT "0" state_value "$RB/hl.remove.state" failed_files
EXPECT "" brick_data_files "$MB/m1"
TEST mcli volume remove-brick hl 127.0.0.1:$MB/m1 commit
EXPECT_MATCH "Number of Bricks: 1" mcli volume info hl
TEST umount_client "$M1"
TEST mount_volume hl "$M1"
hl_sums "$M1" > "$T/hl.after"
EXPECT "" diff "$T/hl.sums" "$T/hl.after"
for i in $(seq 0 29); do
    EXPECT "$((5000 + 77 * i))" stat -c %s "$M1/a/f$i"
done
TEST umount_client "$M1"
