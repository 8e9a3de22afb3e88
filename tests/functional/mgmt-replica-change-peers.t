#!/usr/bin/env bash
# Replica count changes and reset-brick across servers in network
# namespaces (10.213.77.1-3; mortard/replica-change.c, reset-brick.c): a
# replica 2 volume with bricks on nodes 1 and 2, a tree written through
# a mount on node 1;
#  - add-brick replica 3 with the new brick on node 3, run on node 1:
#    node 3's stage refuses a brick whose parent is missing there (no
#    store changed); then every node says 1 x 3, node 3 runs the new
#    brick, node 1 marked the roots of the two old bricks, and heal
#    makes node 3's brick identical to node 1's;
#  - remove-brick replica 2 of node 1's brick, run on node 2: every node
#    says 1 x 2, node 1's brick process is gone, the mount reads on;
#  - reset-brick of node 3's brick run on node 1: start stops it on
#    node 3, its directory is wiped, commit makes node 3 start it again
#    and heal refills it.
# TIMEOUT: 360
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
counts() {
    local d out=""
    for d in "$@"; do out="$out$(index_count "$d") "; done
    echo "${out% }"
}
mount_differs() {
    mount_sums | diff "$T/expect" -
}
node_sum() {
    (cd "$T/n$1/state" && find . -type f ! -name peer-sync \
        ! -name .peer-sync.tmp -print0 | sort -z |
        xargs -0 sha1sum | sha1sum | cut -d' ' -f1)
}
bricks_of() {
    ncli "$1" volume info rp | sed -n 's/^Number of Bricks: //p'
}
# brick_up I K: Y once node I runs brick K of rp.
brick_up() {
    p=$(cat "$T/n$1/run/rp-brick$2.pid" 2> /dev/null) && [ -n "$p" ] &&
        kill -0 "$p" 2> /dev/null && echo Y || echo N
}

peers_form 3
TEST ncli 1 volume create rp replica 2 "$H1:$B/n1" "$H2:$B/n2" force
TEST ncli 1 volume start rp
EXPECT_WITHIN 20 "Y" brick_up 1 0
EXPECT_WITHIN 20 "Y" brick_up 2 1
TEST node_mount 1 "$H1:/rp" "$M0"
TEST wait_for_mount "$M0"
TEST mkdir -p "$M0/a/b" "$M0/c"
TEST chmod 700 "$M0/c"
TEST sh -c "for i in \$(seq 1 20); do echo a\$i > '$M0/a/f'\$i; done"
TEST sh -c "head -c 1500000 /dev/urandom > '$M0/a/b/big'"
TEST sh -c "echo top > '$M0/top'"
mount_sums > "$T/expect"

# Node 3's stage checks the new brick there: no store changed.
S1=$(node_sum 1)
S2=$(node_sum 2)
S3=$(node_sum 3)
EXPECT_MATCH "Staging failed on $H3: .*$B/nodir" ncli_err 1 volume \
    add-brick rp replica 3 "$H3:$B/nodir/n3" force
EXPECT "$S1" node_sum 1
EXPECT "$S2" node_sum 2
EXPECT "$S3" node_sum 3

EXPECT "volume add-brick: success" ncli 1 volume add-brick rp replica 3 \
    "$H3:$B/n3" force
for i in 1 2 3; do
    EXPECT "1 x 3 = 3" bricks_of "$i"
done
EXPECT_WITHIN 20 "Y" brick_up 3 2
EXPECT "2" grep -c "the root of .* blames rp-brick2" "$T/n1/log/mortard.log"
EXPECT_WITHIN 180 "0 0 0" counts n1 n2 n3
EXPECT_WITHIN 60 "ok" same_bricks "$B/n1" "$B/n2" "$B/n3"
EXPECT "" mount_differs

# remove-brick replica 2, run on node 2, of node 1's brick.
P0=$(cat "$T/n1/run/rp-brick0.pid")
EXPECT "volume remove-brick force: success" ncli 2 volume remove-brick rp \
    replica 2 "$H1:$B/n1" force
for i in 1 2 3; do
    EXPECT "1 x 2 = 2" bricks_of "$i"
done
EXPECT_WITHIN 20 "N" proc_alive "$P0"
EXPECT "top" cat "$B/n1/top"
EXPECT "" mount_differs

# reset-brick of node 3's brick, run on node 1.
EXPECT_MATCH "reset-brick start operation successful" ncli 1 volume \
    reset-brick rp "$H3:$B/n3" start
EXPECT_WITHIN 20 "N" brick_up 3 2
TEST sh -c "echo during > '$M0/during'"
TEST rm -rf "$B/n3"
mount_sums > "$T/expect"
EXPECT_MATCH "reset-brick commit operation successful" ncli 1 volume \
    reset-brick rp "$H3:$B/n3" "$H3:$B/n3" commit
EXPECT_WITHIN 20 "Y" brick_up 3 2
EXPECT_WITHIN 180 "0 0" counts n2 n3
EXPECT_WITHIN 60 "ok" same_bricks "$B/n2" "$B/n3"
EXPECT "during" cat "$B/n3/during"
EXPECT "" mount_differs
TEST umount "$M0"
