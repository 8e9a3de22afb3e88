#!/usr/bin/env bash
# cluster/distribute with stale inode hints: mount 0 looks names up, then
# mount 1 renames them away and creates new files under the old names;
# unlink and rename on mount 0 (which may carry the old inode as a hint)
# act on what each name holds now, and no brick keeps a stray copy or
# link file of the old names.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

N=30

# names_on_bricks PATTERN: how many entries named PATTERN the bricks hold
# in directory s (data and link files).
names_on_bricks() {
    find "$T"/bricks/b*/s -maxdepth 1 -name "$1" | wc -l
}

# data_on_bricks PATTERN: the same without link files (mode 1000).
data_on_bricks() {
    find "$T"/bricks/b*/s -maxdepth 1 -name "$1" ! -perm 1000 | wc -l
}

TEST dist4_start
mkdir -p "$M1"
_T_MOUNTS+=("$M1")
TEST start_fsd client-dist-2 --volfile "$T/vol/dist4.vol" "$M1"
TEST wait_for_mount "$M1"
TEST mkdir "$M0/s"
TEST sh -c "for i in \$(seq 1 $N); do echo old\$i > '$M0/s/f'\$i; done"

# unlink: the name now holds another file (the old one is g<i>).
for i in $(seq 1 $N); do
    stat "$M0/s/f$i" > /dev/null
    mv "$M1/s/f$i" "$M1/s/g$i"
    echo "new$i" > "$M1/s/f$i"
    rm "$M0/s/f$i" || echo "rm f$i failed" >&2
done
EXPECT "0" names_on_bricks 'f*'
EXPECT "$N" data_on_bricks 'g*'
EXPECT "old7" cat "$M1/s/g7"
EXPECT "old$N" cat "$M1/s/g$N"

# unlink: the name is gone (renamed away): ENOENT, nothing else removed.
stat "$M0/s/g1" > /dev/null
TEST mv "$M1/s/g1" "$M1/s/h1"
TEST ! rm "$M0/s/g1"
EXPECT "old1" cat "$M1/s/h1"

# rename: the name now holds another file; that one is moved.
for i in $(seq 2 $N); do
    stat "$M0/s/g$i" > /dev/null
    mv "$M1/s/g$i" "$M1/s/h$i"
    echo "x$i" > "$M1/s/g$i"
    mv "$M0/s/g$i" "$M0/s/k$i" || echo "mv g$i failed" >&2
done
EXPECT "0" names_on_bricks 'g*'
EXPECT "$N" data_on_bricks 'h*'
EXPECT "x5" cat "$M1/s/k5"
EXPECT "old5" cat "$M1/s/h5"
EXPECT "x$N" cat "$M1/s/k$N"
EXPECT "old$N" cat "$M1/s/h$N"
# Every k<i> once in a listing, with its data.
EXPECT "$((N - 1))" sh -c "ls '$M1/s' | grep -c '^k'"
# all_k: "ok" when every k<i> holds x<i>, else the first bad one.
all_k() {
    local i
    for i in $(seq 2 $N); do
        [ "$(cat "$M1/s/k$i")" = "x$i" ] || { echo "bad $i"; return; }
    done
    echo ok
}
EXPECT "ok" all_k

# rename: the name is a directory now; it is renamed as one (everywhere).
echo f > "$M0/s/dd"
stat "$M0/s/dd" > /dev/null
TEST rm "$M1/s/dd"
TEST mkdir "$M1/s/dd"
TEST mv "$M0/s/dd" "$M0/s/ee"
EXPECT "4" sh -c "ls -d '$T'/bricks/b*/s/ee | wc -l"
EXPECT "0" sh -c "ls -d '$T'/bricks/b*/s/dd 2> /dev/null | wc -l"
