#!/usr/bin/env bash
# cluster/distribute's min-free-inodes (GlusterFS's cluster.min-free-inodes):
# a brick whose file system has fewer free inodes than the option's
# percent of all gets no new files; a file whose name hashes there gets
# its data on the other brick and a link file there. Brick b1 lives on a
# tmpfs of 1,000 inodes, 60 % of them taken before the mounts: at the
# default 5 % it still takes its files, at 50 % none. Bad values are
# refused at the mount.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

# data_files BRICK PREFIX: regular files named PREFIX* that are not link
# files (mode ---------T, empty) on the brick.
data_files() {
    find "$1" -path "$1/.mortar" -prune -o -type f -name "$2*" \
        ! -perm 1000 -print | wc -l
}

link_files() {
    find "$1" -path "$1/.mortar" -prune -o -type f -name "$2*" \
        -perm 1000 -size 0 -print | wc -l
}

# free_pct DIR: free inodes of DIR's file system, percent of all.
free_pct() {
    stat -f -c '%d %c' "$1" | awk '{ printf "%d\n", 100 * $1 / $2 }'
}

# dist_vol FILE [OPTION VALUE]: a client volfile over b0 and b1.
dist_vol() {
    local f="$1" i
    : > "$f"
    for i in 0 1; do
        printf 'volume c%d\n type protocol/client\n option remote-host %s\n option remote-port %s\n option remote-subvolume b%d\nend-volume\n' \
            "$i" "$H0" "${P[$i]}" "$i" >> "$f"
    done
    {
        printf 'volume dist\n type cluster/distribute\n'
        [ -n "${2:-}" ] && printf ' option %s %s\n' "$2" "$3"
        printf ' subvolumes c0 c1\nend-volume\n'
    } >> "$f"
}

# gone NAME: whether the daemon started as NAME has exited.
gone() {
    kill -0 "$(fsd_pid "$1")" 2> /dev/null && echo alive || echo gone
}

# refused VOLFILE: mortarfsd refuses to mount it; prints its reason.
refused() {
    local out
    out=$("$MORTARFSD" --volfile "$1" --log-file "$T/log/bad.log" "$M0" 2>&1) \
        && { umount -l "$M0"; return 1; }
    echo "$out"
}

# mount_dist NAME VOLFILE: mounts $M0 and fills distribute's statfs
# cache (df), which placement reads.
mount_dist() {
    _T_MOUNTS+=("$M0")
    start_fsd "$1" --volfile "$2" "$M0" || return 1
    wait_for_mount "$M0" || return 1
    df "$M0" > /dev/null
}

# create_files PREFIX: 40 files of 100 bytes each through the mount.
create_files() {
    python3 -c "
for i in range(40):
    with open('$M0/$1%02d' % i, 'w') as f:
        f.write('$1%02d' % i * 25)
"
}

check_files() {
    python3 -c "
for i in range(40):
    want = '$1%02d' % i * 25
    if open('$M0/$1%02d' % i).read() != want:
        raise SystemExit('$1%02d: wrong content' % i)
"
}

B0="$T/bricks/b0"
FS1="$T/b1fs"
B1="$FS1/brick"
TEST mkdir -p "$B0" "$FS1"
TEST mount -t tmpfs -o nr_inodes=1000,size=64m mortar-test-b1 "$FS1"
_T_MOUNTS+=("$FS1") # unmounted at cleanup
TEST mkdir -p "$B1" "$FS1/filler"
TEST python3 -c "
for i in range(600):
    open('$FS1/filler/f%03d' % i, 'w').close()
"
TEST alloc_port 'P[0]'
TEST alloc_port 'P[1]'
TEST start_brick b0 "$B0" "${P[0]}"
TEST start_brick b1 "$B1" "${P[1]}"

# ---- the default (5 %): b1, 40 % free, takes what hashes there ----
TEST dist_vol "$T/vol/default.vol"
TEST mount_dist client-default "$T/vol/default.vol"
TEST create_files a
TEST check_files a
TEST test "$(data_files "$B1" a)" -gt 0
EXPECT "0" link_files "$B1" a
EXPECT "40" sh -c "echo \$(( $(data_files "$B0" a) + $(data_files "$B1" a) ))"
TEST umount "$M0"
EXPECT_WITHIN 20 "gone" gone client-default

# ---- 50 %: b1 is short of inodes, its names' data goes to b0 ----
TEST test "$(free_pct "$FS1")" -lt 50
TEST test "$(free_pct "$FS1")" -gt 10
TEST dist_vol "$T/vol/inodes.vol" min-free-inodes 50%
TEST mount_dist client-inodes "$T/vol/inodes.vol"
TEST create_files b
TEST check_files b
EXPECT "0" data_files "$B1" b
EXPECT "40" data_files "$B0" b
TEST test "$(link_files "$B1" b)" -gt 0
# Nothing moved: a's files stay where they were made, and still read.
TEST test "$(data_files "$B1" a)" -gt 0
TEST check_files a
TEST umount "$M0"
EXPECT_WITHIN 20 "gone" gone client-inodes

# ---- the GlusterFS key is an alias; bad values are refused ----
TEST dist_vol "$T/vol/alias.vol" cluster.min-free-inodes 50
TEST mount_dist client-alias "$T/vol/alias.vol"
TEST create_files c
EXPECT "0" data_files "$B1" c
TEST umount "$M0"
EXPECT_WITHIN 20 "gone" gone client-alias
for bad in 101% -1 abc 5GB; do
    TEST dist_vol "$T/vol/bad.vol" min-free-inodes "$bad"
    EXPECT_MATCH "option 'min-free-inodes'" refused "$T/vol/bad.vol"
done
