#!/usr/bin/env bash
# volume heal VOL full across three servers in network namespaces
# (10.213.77.1-3), a replica 3 volume with one brick per node: node 3's
# brick is emptied behind Mortar's back (root and volume id kept) and
# started again; `heal rp full` through node 3, whose own daemon has
# nothing to crawl, reaches the daemons of nodes 1 and 2 (a transaction),
# whose crawls fill node 3's brick: every copy identical, heal info 0 on
# every node, each node's request file gone.
# Fails without the peer path: nodes 1 and 2 never crawl (their logs and
# status say so; node 3's crawl of its empty brick merges the root, and
# the index heals from there).
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
FS="$T/fs"
mkdir -p "$FS"
for i in 1 2 3; do
    _T_PIDFILES+=("$T/n$i/run/rp-brick$((i - 1)).pid")
    _T_PIDFILES+=("$T/n$i/run/heal/rp.pid")
done

shd_up() {
    local p
    p="$(cat "$T/n$1/run/heal/rp.pid" 2> /dev/null)"
    [ -n "$p" ] && proc_alive "$p" || echo N
}
brick_pid() {
    cat "$T/n$1/run/rp-brick$(($1 - 1)).pid" 2> /dev/null
}
new_brick() {
    local p
    p="$(brick_pid "$1")"
    if [ -n "$p" ] && [ "$p" != "$2" ]; then proc_alive "$p"; else echo N; fi
}
same3() {
    same_bricks "$FS/n1" "$FS/n2" "$FS/n3"
}
names3() {
    (cd "$FS/n3" && find . -path ./.mortar -prune -o -mindepth 1 -print |
        wc -l)
}
# own_entries: what each node's `heal info` counts for its own brick.
own_entries() {
    local i out=""
    for i in 1 2 3; do
        out="$out $(ncli "$i" volume heal rp info |
            awk -v b="Brick 10.213.77.$i:" '
                index($0, b) == 1 { on = 1; next }
                on && /^Number of entries:/ { print $4; exit }')"
    done
    echo $out
}
requests() {
    local i n=0
    for i in 1 2 3; do
        [ -e "$T/n$i/run/heal/rp.full" ] && n=$((n + 1))
    done
    echo "$n"
}

TEST mount -t tmpfs -o size=64m mortar-test-hfp "$FS"
peers_form 3
TEST ncli 1 volume create rp replica 3 "$H1:$FS/n1" "$H2:$FS/n2" "$H3:$FS/n3"
TEST ncli 1 volume start rp
for i in 1 2 3; do
    EXPECT_WITHIN 30 "Y" shd_up "$i"
done
M0="$T/m0"
TEST node_mount 1 "$H1:/rp" "$M0"
TEST wait_for_mount "$M0"
TEST mkdir -p "$M0/a/b/c" "$M0/e"
TEST sh -c "for i in \$(seq 1 20); do echo x\$i > '$M0/a/b/c/f'\$i; done"
TEST sh -c "head -c 100000 /dev/urandom > '$M0/a/big'"
TEST ln -s a/big "$M0/link"
TEST umount "$M0"
EXPECT_WITHIN 60 "0 0 0" own_entries
EXPECT_WITHIN 20 "ok" same3

# Node 3's brick emptied: away first, so that its supervisor cannot
# restart it meanwhile.
OLD=$(brick_pid 3)
TEST mv "$FS/n3" "$FS/n3.away"
TEST kill -9 "$OLD"
EXPECT_WITHIN 20 "N" proc_alive "$OLD"
TEST find "$FS/n3.away" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
for x in $(getfattr --absolute-names -m 'trusted\.' "$FS/n3.away" \
    2> /dev/null | grep '^trusted\.' |
    grep -v '^trusted\.mortar\.volume-id$'); do
    setfattr -x "$x" "$FS/n3.away"
done
TEST mv "$FS/n3.away" "$FS/n3"
TEST ncli 3 volume start rp force
EXPECT_WITHIN 30 "Y" new_brick 3 "$OLD"
EXPECT "0" names3

# Asked on node 3; nodes 1 and 2 crawl.
EXPECT_MATCH "^Launching heal operation to perform full self heal on \
volume rp has been successful" ncli 3 volume heal rp full
EXPECT_WITHIN 120 "ok" same3
EXPECT_WITHIN 60 "0 0 0" own_entries
EXPECT_WITHIN 60 "0" requests
EXPECT_WITHIN 20 "Y" sh -c "grep -q 'full crawl done' \
    '$T/n1/log/heal/rp.log' && echo Y || echo N"
# The progress file is rewritten once a second.
crawl_line() {
    ncli "$1" volume heal rp status | sed -n 's/^Full crawl: //p' |
        cut -d' ' -f1-2
}
EXPECT_WITHIN 10 "last finished" crawl_line 2
EXPECT "x20" cat "$FS/n3/a/b/c/f20"
EXPECT "a/big" readlink "$FS/n3/link"

TEST ncli 1 volume stop rp
