#!/usr/bin/env bash
# What the rebalance does with what is not a plain file, and its crash
# window:
#  1. symlinks, fifos, sockets and character devices are moved to their
#     hashed brick with owner, mode, mtime, target/rdev and xattrs;
#     regular files keep user.*, trusted.*, security.capability and their
#     POSIX ACL; hard-linked files move with both names (nothing
#     skipped) and stay readable, one inode, under every name;
#  2. a destination over min-free-disk gets nothing: files counted as
#     skipped for space, still readable, no data on the full brick;
#  3. a rebalance that dies (fault point MORTAR_REBAL_FAULT) between the
#     commit and the unlink of the source, resumed: no file lost or on two
#     bricks; a write that reached the stale source after the commit is
#     kept; one that dies before the commit leaves no marker behind.
# TIMEOUT: 900
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# manifest BRICK...: one line per non-directory object of the bricks (not
# link files or markers, not .mortar): path, type, mode, owner, mtime,
# symlink target or rdev or md5, xattrs but the brick's own; sorted. A
# path on two bricks shows up twice.
manifest() {
    python3 - "$@" <<'PY'
import hashlib, os, stat, sys
out = []
for b in sys.argv[1:]:
    for root, dirs, files in os.walk(b):
        if root == b and ".mortar" in dirs:
            dirs.remove(".mortar")
        for n in files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            perm = stat.S_IMODE(st.st_mode)
            if stat.S_ISREG(st.st_mode) and perm in (0o1000, 0o3000):
                continue
            if stat.S_ISLNK(st.st_mode):
                what = "->" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                what = hashlib.md5(open(p, "rb").read()).hexdigest()
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                what = "rdev=%x" % st.st_rdev
            else:
                what = "-"
            xs = []
            for k in sorted(os.listxattr(p, follow_symlinks=False)):
                if k.startswith("trusted.mortar."):
                    continue
                v = os.getxattr(p, k, follow_symlinks=False)
                xs.append("%s=%s" % (k, v.hex()))
            out.append("%s %o %d:%d %d %s %s" % (
                os.path.relpath(p, b), st.st_mode, st.st_uid, st.st_gid,
                st.st_mtime_ns, what, ",".join(xs)))
print("\n".join(sorted(out)))
PY
}

# populate DIR: the objects of part 1 on a brick directory DIR/s (made
# on the brick so that ACLs and capabilities need no FUSE support; the
# GFIDs come from a lookup through the mount afterwards).
populate() {
    python3 - "$1" <<'PY'
import os, socket, struct, sys
d = sys.argv[1]
acl = struct.pack("<I", 2)
for tag, perm, ident in ((1, 6, 0xffffffff), (2, 6, 4321),
                         (4, 4, 0xffffffff), (0x10, 6, 0xffffffff),
                         (0x20, 4, 0xffffffff)):
    acl += struct.pack("<HHI", tag, perm, ident)
# VFS_CAP_REVISION_2, cap_net_bind_service (bit 10) permitted+effective
cap = struct.pack("<IIIII", 0x02000001, 1 << 10, 0, 0, 0)
t = 1600000000
for i in range(24):
    p = os.path.join(d, "f%02d" % i)
    with open(p, "wb") as f:
        f.write(os.urandom(1000 + 37 * i))
    os.chown(p, 1000 + i, 2000 + i)
    os.chmod(p, 0o640)
    os.setxattr(p, "user.k", b"u%d" % i)
    os.setxattr(p, "trusted.k", b"t%d" % i)
    if i % 3 == 0:
        os.setxattr(p, "security.capability", cap)
    if i % 4 == 0:
        os.setxattr(p, "system.posix_acl_access", acl)
    os.utime(p, ns=((t + i) * 10**9, (t + i) * 10**9 + 123))
for i in range(16):
    p = os.path.join(d, "l%02d" % i)
    os.symlink("target-%02d/x" % i, p)
    os.chown(p, 1100 + i, 2100 + i, follow_symlinks=False)
    os.setxattr(p, "trusted.l", b"s%d" % i, follow_symlinks=False)
    os.utime(p, ns=((t + 50 + i) * 10**9, (t + 50 + i) * 10**9 + 7),
             follow_symlinks=False)
for i in range(8):
    p = os.path.join(d, "p%02d" % i)
    os.mkfifo(p)
    os.chmod(p, 0o620)
    os.chown(p, 1200 + i, 2200 + i)
    os.utime(p, ns=((t + 80 + i) * 10**9, (t + 80 + i) * 10**9))
for i in range(6):
    p = os.path.join(d, "c%02d" % i)
    os.mknod(p, 0o2640 | 0o020000, os.makedev(1, 3 + i % 2))
    os.chown(p, 1300 + i, 2300 + i)
    os.chmod(p, 0o2640)
    os.utime(p, ns=((t + 90 + i) * 10**9, (t + 90 + i) * 10**9))
for i in range(6):
    p = os.path.join(d, "k%02d" % i)
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    s.close()
    os.chown(p, 1400 + i, 2400 + i)
for i in range(8):
    p = os.path.join(d, "h%02d" % i)
    with open(p, "wb") as f:
        f.write(b"hard %d\n" % i * 100)
    os.link(p, p + ".b")
PY
}

count_objs() {
    (cd "$1" && find . -path ./.mortar -prune -o ! -type d -print | wc -l)
}
dups() {
    for b in "$@"; do
        (cd "$T/bricks/$b" && find . -path ./.mortar -prune -o ! -type d \
            ! \( -type f \( -perm 1000 -o -perm 3000 \) \) -print)
    done | sort | uniq -d | wc -l
}
specials() {
    for b in "$@"; do brick_special_files "$T/bricks/$b"; done
}
data_on() {
    brick_data_files "$T/bricks/$1" | wc -l
}
markers() {
    for b in "$@"; do
        (cd "$T/bricks/$b" && find . -path ./.mortar -prune -o -type f \
            -perm 3000 -print)
    done | wc -l
}
nonreg_on() {
    (cd "$T/bricks/$1" && find . -path ./.mortar -prune -o ! -type d \
        ! -type f -print | wc -l)
}

for i in 0 1 2 3 4 5 6 7 8 9; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
done
for i in 0 1 2 3 4 5 6 7 8 9; do
    TEST start_brick "b$i" "$T/bricks/b$i" "$(eval echo "\$P$i")"
done

# ---- 1. special files, xattrs, hard links: b0 -> b0 b1 b2 ------------
dist_volfile "b0:$P0" > "$T/vol/a1.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/a3.vol"
TEST mount_volfile "$T/vol/a1.vol" "$M0"
TEST mkdir "$M0/s"
TEST umount_client "$M0"
TEST populate "$T/bricks/b0/s"
# Give every object its GFID (a lookup through the volume).
TEST mount_volfile "$T/vol/a1.vol" "$M0"
EXPECT "76" sh -c "find '$M0/s' -mindepth 1 -exec stat -c %n {} + | wc -l"
TEST umount_client "$M0"
manifest "$T/bricks/b0" > "$T/before"
EXPECT "76" sh -c "wc -l < '$T/before'"

# A first run dies once a special file exists on both bricks (created
# and given its attributes on the new one, not yet unlinked on the old).
MORTAR_REBAL_FAULT=special-created "$MORTARFSD" --rebalance --throttle lazy \
    --volfile "$T/vol/a3.vol" --rebalance-state "$T/a.state" -N \
    --log-file "$T/log/a0.log"
EXPECT "70" echo $?
EXPECT "1" dups b0 b1 b2
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/a3.vol" \
    --rebalance-state "$T/a.state" -N --log-file "$T/log/a.log"
EXPECT_MATCH "removed the stale copy of" cat "$T/log/a.log"
EXPECT "completed" state_value "$T/a.state" status
EXPECT "0" state_value "$T/a.state" failed_files
EXPECT_MATCH "^(76|77)$" state_value "$T/a.state" scanned_files
# Nothing is skipped: hard-linked files move too (rebal-hardlink.t).
EXPECT "0" state_value "$T/a.state" skipped_files
EXPECT "0" grep -c "skipped, hard-linked" "$T/log/a.log"
EXPECT "0" sh -c "grep -c \"'[lpck][0-9]*' .*skipped\" '$T/log/a.log'"
manifest "$T/bricks/b0" "$T/bricks/b1" "$T/bricks/b2" > "$T/after"
EXPECT "" diff "$T/before" "$T/after"
EXPECT "0" dups b0 b1 b2
# Special files did move (36 of them over 3 bricks).
EXPECT_MATCH "^[1-9][0-9]*$" nonreg_on b1
EXPECT_MATCH "^[1-9][0-9]*$" nonreg_on b2
TEST mount_volfile "$T/vol/a3.vol" "$M0"
EXPECT "76" sh -c "ls -A '$M0/s' | wc -l"
EXPECT "target-03/x" readlink "$M0/s/l03"
EXPECT "1103:2103" stat -c %u:%g "$M0/s/l03"
EXPECT "fifo 620" stat -c "%F %a" "$M0/s/p01"
EXPECT "character special file 2640 1,4" stat -c "%F %a %t,%T" "$M0/s/c01"
EXPECT "socket" stat -c "%F" "$M0/s/k02"
EXPECT "u5" getfattr --only-values -n user.k "$M0/s/f05"
for i in 00 01 02 03 04 05 06 07; do
    EXPECT "2" stat -c %h "$M0/s/h$i"
    EXPECT "$(stat -c %i "$M0/s/h$i")" stat -c %i "$M0/s/h$i.b"
    EXPECT "$(python3 -c "import sys; sys.stdout.write('hard $((10#$i))\n' * 100)" | md5sum)" \
        sh -c "cat '$M0/s/h$i.b' | md5sum"
done
TEST umount_client "$M0"

# ---- 2. min-free-disk: b3 -> b3 b4 with the new brick "full" ----------
dist_volfile "b3:$P3" > "$T/vol/b1.vol"
dist_volfile "b3:$P3" "b4:$P4" > "$T/vol/b2.vol"
sed 's/^\( *\)type cluster\/distribute$/&\n\1option min-free-disk 100%/' \
    "$T/vol/b2.vol" > "$T/vol/b2full.vol"
EXPECT "1" grep -c "option min-free-disk 100%" "$T/vol/b2full.vol"
TEST mount_volfile "$T/vol/b1.vol" "$M0"
TEST rebal_tool gen "$M0" 40 "$T/sums.b"
TEST umount_client "$M0"
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/b2full.vol" \
    --rebalance-state "$T/b.state" -N --log-file "$T/log/b.log"
EXPECT "completed" state_value "$T/b.state" status
EXPECT "0" state_value "$T/b.state" moved_files
EXPECT "0" state_value "$T/b.state" failed_files
EXPECT_MATCH "^[1-9][0-9]*$" state_value "$T/b.state" skipped_files
EXPECT "$(grep -c 'skipped for space' "$T/log/b.log")" \
    state_value "$T/b.state" skipped_files
EXPECT "0" data_on b4
TEST mount_volfile "$T/vol/b2.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums.b"
EXPECT "40" sh -c "find '$M0' -type f | wc -l"
TEST umount_client "$M0"

# ---- 3. crash between the commit and the unlink of the source ---------
dist_volfile "b5:$P5" > "$T/vol/c1.vol"
dist_volfile "b5:$P5" "b6:$P6" > "$T/vol/c2.vol"
dist_volfile "b5:$P5" "b6:$P6" "b7:$P7" > "$T/vol/c3.vol"
TEST mount_volfile "$T/vol/c1.vol" "$M0"
TEST rebal_tool gen "$M0" 60 "$T/sums.c"
TEST umount_client "$M0"

# a. Killed right after the first commit; then a write reaches the stale
# source (what the freeze's queued writes do when the dead process's
# connection drops): the resumed run keeps it.
MORTAR_REBAL_FAULT=after-commit "$MORTARFSD" --rebalance --throttle lazy \
    --volfile "$T/vol/c2.vol" --rebalance-state "$T/c.state" -N \
    --log-file "$T/log/c1.log"
EXPECT "70" echo $?
EXPECT "running" state_value "$T/c.state" status
EXPECT "1" dups b5 b6
DUP="$(for b in b5 b6; do brick_data_files "$T/bricks/$b"; done | sort |
    uniq -d | sed 's|^\./||')"
EXPECT_MATCH "fault point after-commit at" cat "$T/log/c1.log"
TEST sh -c "printf 'written after the commit\n' >> '$T/bricks/b5/$DUP'"
cp "$T/sums.c" "$T/sums.c2"
NEWSUM="$(md5sum < "$T/bricks/b5/$DUP" | cut -d' ' -f1)"
sed -i "s|^[0-9a-f]*  $DUP\$|$NEWSUM  $DUP|" "$T/sums.c2"
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/c2.vol" \
    --rebalance-state "$T/c.state" -N --log-file "$T/log/c2.log"
EXPECT "completed" state_value "$T/c.state" status
EXPECT "0" state_value "$T/c.state" failed_files
EXPECT_MATCH "written after its commit" cat "$T/log/c2.log"
EXPECT "0" dups b5 b6
EXPECT "" specials b5 b6
TEST mount_volfile "$T/vol/c2.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums.c2"
EXPECT "60" sh -c "find '$M0' -type f | wc -l"
TEST umount_client "$M0"

# b. The same crash with an untouched source: it is just removed.
MORTAR_REBAL_FAULT=after-commit "$MORTARFSD" --rebalance --throttle lazy \
    --volfile "$T/vol/c3.vol" --rebalance-state "$T/c3.state" -N \
    --log-file "$T/log/c3.log"
EXPECT "70" echo $?
EXPECT "1" dups b5 b6 b7
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/c3.vol" \
    --rebalance-state "$T/c3.state" -N --log-file "$T/log/c4.log"
EXPECT "completed" state_value "$T/c3.state" status
EXPECT "0" state_value "$T/c3.state" failed_files
EXPECT_MATCH "removed the stale source" cat "$T/log/c4.log"
EXPECT "0" dups b5 b6 b7
EXPECT "" specials b5 b6 b7

# c. Killed before the commit: the marker goes, the file stays whole.
dist_volfile "b5:$P5" "b6:$P6" "b7:$P7" "b8:$P8" > "$T/vol/c4.vol"
MORTAR_REBAL_FAULT=before-commit "$MORTARFSD" --rebalance --throttle lazy \
    --volfile "$T/vol/c4.vol" --rebalance-state "$T/c4.state" -N \
    --log-file "$T/log/c5.log"
EXPECT "70" echo $?
EXPECT "1" markers b5 b6 b7 b8
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/c4.vol" \
    --rebalance-state "$T/c4.state" -N --log-file "$T/log/c6.log"
EXPECT "completed" state_value "$T/c4.state" status
EXPECT "0" state_value "$T/c4.state" failed_files
EXPECT "0" dups b5 b6 b7 b8
EXPECT "0" markers b5 b6 b7 b8
TEST mount_volfile "$T/vol/c4.vol" "$M0"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums.c2"
EXPECT "60" sh -c "find '$M0' -type f | wc -l"
TEST umount_client "$M0"

# d. Written on both sides after the crash: nothing is destroyed; the
# committed copy stays the file, the other one's data is saved as
# NAME.rebal-conflict (a file of its own), the file counts as failed.
dist_volfile "b5:$P5" "b6:$P6" "b7:$P7" "b8:$P8" "b9:$P9" > "$T/vol/c5.vol"
MORTAR_REBAL_FAULT=after-commit "$MORTARFSD" --rebalance --throttle lazy \
    --volfile "$T/vol/c5.vol" --rebalance-state "$T/c5.state" -N \
    --log-file "$T/log/c7.log"
EXPECT "70" echo $?
EXPECT "1" dups b5 b6 b7 b8 b9
DUP="$(for b in b5 b6 b7 b8 b9; do brick_data_files "$T/bricks/$b"; done |
    sort | uniq -d | sed 's|^\./||')"
# The fault point's log line says which way the file was moving.
SRC="$(sed -n "s/.*fault point after-commit at '.*' \(b[0-9]\) -> \(b[0-9]\).*/\1/p" "$T/log/c7.log")"
DST="$(sed -n "s/.*fault point after-commit at '.*' \(b[0-9]\) -> \(b[0-9]\).*/\2/p" "$T/log/c7.log")"
EXPECT_MATCH "^b[5-9] b[5-9]$" echo "$SRC $DST"
TEST sh -c "printf 'late on the source\n' >> '$T/bricks/$SRC/$DUP'"
TEST sh -c "printf 'new on the copy\n' >> '$T/bricks/$DST/$DUP'"
SUM_D="$(md5sum < "$T/bricks/$DST/$DUP" | cut -d' ' -f1)"
SUM_S="$(md5sum < "$T/bricks/$SRC/$DUP" | cut -d' ' -f1)"
TEST ! "$MORTARFSD" --rebalance --volfile "$T/vol/c5.vol" \
    --rebalance-state "$T/c5.state" -N --log-file "$T/log/c8.log"
EXPECT "failed" state_value "$T/c5.state" status
EXPECT "1" state_value "$T/c5.state" failed_files
EXPECT_MATCH "both copies changed.*saved as '.*\.rebal-conflict'" \
    state_value "$T/c5.state" error
EXPECT "0" dups b5 b6 b7 b8 b9
TEST mount_volfile "$T/vol/c5.vol" "$M0"
EXPECT "$SUM_D" sh -c "md5sum < '$M0/$DUP' | cut -d' ' -f1"
EXPECT "$SUM_S" sh -c "md5sum < '$M0/$DUP.rebal-conflict' | cut -d' ' -f1"
EXPECT "61" sh -c "find '$M0' -type f | wc -l"
TEST umount_client "$M0"
