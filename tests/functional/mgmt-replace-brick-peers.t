#!/usr/bin/env bash
# volume replace-brick across servers in network namespaces
# (10.213.77.1-3; mortard/replace-brick.c): a replica 3 volume with one
# brick per node, a tree written through a mount on node 1;
#  - run on a node other than the old brick's: refused ("run the command
#    on ..."), no store changed; a new brick whose parent is missing on
#    its node: that node's stage refuses it, no store changed;
#  - run on node 2 (the old brick's) with the new brick on node 3: every
#    node's volume info names it, node 2's old brick process is gone,
#    node 3 runs the new one; node 2 marked the roots of the bricks on
#    nodes 1 and 3, whose daemons fill the new brick: the same tree as
#    node 1's brick (names, modes, contents, GFIDs), every index empty;
#    the mount reads the tree the same throughout.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
B="$T/bricks"
mkdir -p "$B"
for i in 1 2 3; do
    for k in 0 1 2; do
        _T_PIDFILES+=("$T/n$i/run/rp-brick$k.pid")
    done
    _T_PIDFILES+=("$T/n$i/run/heal/rp.pid")
done

ncli_err() {
    ncli "$@" 2>&1 > /dev/null
}
index_count() {
    find "$B/$1/.mortar/index/xattrop" -mindepth 1 2> /dev/null | wc -l
}
all_counts() {
    echo "$(index_count n1) $(index_count n3) $(index_count m3)"
}
# tree_of DIR: path, type, mode, size, GFID and content sum of everything
# under DIR but .mortar.
tree_of() {
    (cd "$1" && find . -path ./.mortar -prune -o -mindepth 1 -print |
        sort | while read -r p; do
            g=$(getfattr --absolute-names -h -e hex \
                -n trusted.mortar.gfid "$p" 2> /dev/null |
                sed -n 's/^trusted.mortar.gfid=//p')
            if [ -f "$p" ]; then
                echo "$p $(stat -c '%F %a %s' "$p") $g" \
                    "$(sha1sum < "$p" | cut -c1-40)"
            else
                echo "$p $(stat -c '%F %a' "$p") $g"
            fi
        done)
}
same_tree() {
    [ "$(tree_of "$B/n1")" = "$(tree_of "$B/m3")" ] && echo ok ||
        echo differ
}
# node_sum I: node I's store (as store_sum: not the peer monitor's
# peer-sync, rewritten in the background after changes).
node_sum() {
    (cd "$T/n$1/state" && find . -type f ! -name peer-sync \
        ! -name .peer-sync.tmp -print0 | sort -z |
        xargs -0 sha1sum | sha1sum | cut -d' ' -f1)
}
brick2_of() {
    ncli "$1" volume info rp | grep '^Brick2:'
}

peers_form 3
TEST ncli 1 volume create rp replica 3 "$H1:$B/n1" "$H2:$B/n2" \
    "$H3:$B/n3" force
TEST ncli 1 volume start rp
for i in 1 2 3; do
    EXPECT_WITHIN 20 "Y" sh -c "p=\$(cat '$T/n$i/run/rp-brick$((i - 1)).pid' \
        2> /dev/null) && kill -0 \"\$p\" && echo Y"
done
TEST node_mount 1 "$H1:/rp" "$M0"
TEST wait_for_mount "$M0"
TEST mkdir -p "$M0/a/b" "$M0/c"
TEST chmod 700 "$M0/c"
TEST sh -c "for i in \$(seq 1 20); do echo a\$i > '$M0/a/f'\$i; done"
TEST sh -c "head -c 1500000 /dev/urandom > '$M0/a/b/big'"
TEST sh -c "echo top > '$M0/top'"
mount_sums > "$T/expect"

# Not on the old brick's node: refused, no store changed.
S1=$(node_sum 1)
S2=$(node_sum 2)
S3=$(node_sum 3)
EXPECT_MATCH "failed: run the command on $H2, the node of brick \
$H2:$B/n2" ncli_err 1 volume replace-brick rp "$H2:$B/n2" "$H3:$B/m3" \
    commit force
EXPECT "$S1" node_sum 1
EXPECT "$S2" node_sum 2
EXPECT "$S3" node_sum 3
TEST test ! -e "$B/m3"
# The new brick's node checks it in its stage: a missing parent there.
EXPECT_MATCH "Staging failed on $H3: .*$B/nodir" ncli_err 2 volume \
    replace-brick rp "$H2:$B/n2" "$H3:$B/nodir/m3" commit force
EXPECT "$S1" node_sum 1
EXPECT "$S2" node_sum 2
EXPECT "$S3" node_sum 3

OLD_PID=$(cat "$T/n2/run/rp-brick1.pid")
EXPECT "Y" proc_alive "$OLD_PID"
EXPECT_MATCH "^volume replace-brick: success: replace-brick commit force \
operation successful$" ncli 2 volume replace-brick rp "$H2:$B/n2" \
    "$H3:$B/m3" commit force
for i in 1 2 3; do
    EXPECT "Brick2: $H3:$B/m3" brick2_of "$i"
done
EXPECT_WITHIN 20 "N" proc_alive "$OLD_PID"
EXPECT_WITHIN 20 "Y" sh -c "p=\$(cat '$T/n3/run/rp-brick1.pid' 2> /dev/null) \
    && kill -0 \"\$p\" && echo Y"
EXPECT "2" grep -c "the root of .* blames rp-brick1" "$T/n2/log/mortard.log"
mount_sums > "$T/during"
EXPECT "" diff "$T/expect" "$T/during"

EXPECT_WITHIN 180 "0 0 0" all_counts
EXPECT_WITHIN 60 "ok" same_tree
mount_sums > "$T/after"
EXPECT "" diff "$T/expect" "$T/after"
EXPECT "top" cat "$B/m3/top"
TEST umount "$M0"
