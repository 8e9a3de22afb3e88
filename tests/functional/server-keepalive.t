#!/usr/bin/env bash
# A client cut off by the network while it holds a lock does not keep
# the lock for ever: the brick's TCP keepalive (server.keepalive-time,
# -interval, -count, server.tcp-user-timeout) drops its connection and
# frees its locks for the clients still connected. One brick on node 1
# (netns 10.213.77.1) with client A; client B on node 2.
#  - B takes an exclusive flock; node 2's link goes down (packets vanish:
#    the brick sees no FIN, no RST, and has nothing to send to B);
#  - keepalive off (keepalive-time 0, tcp-user-timeout 0): A's blocking
#    flock is still waiting 15 s later; that is what every cut-off lock
#    holder did before the brick set keepalive;
#  - the options set live (volume set: the brick applies them to the
#    connections it has): A gets the lock within the bound they give,
#    and B's open file is gone from the brick;
#  - bad values are refused with the option's range, nothing changed;
#  - the clients' own keepalive (client.keepalive-*) is on B's socket
#    to the brick, and goes when switched off live.
# TIMEOUT: 150
# REQUIRES: root fuse flock
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 2
H1=10.213.77.1
B="$T/bricks"
node2_link() { ip -n "$NS_BR" link set "mt$$b2" "$1"; }
# brick_clients: the client connections the brick has now.
brick_clients() {
    _t_dump_wait "$T/n1/run/dumps" mortarfsd \
        "$(cat "$T/n1/run/kv-brick0.pid")" |
        awk '$0 == "[dump kv-server]" { on = 1; next } /^\[/ { on = 0 }
            on && /^clients=/ { sub(/^clients=/, ""); print }'
}
# set_err KEY VALUE: what a refused volume set says.
set_err() {
    ncli 1 volume set kv "$1" "$2" 2>&1 > /dev/null && echo "accepted"
}
# b_timer: the timer ss shows on client B's connections to node 1
# (keepalive, or none: only the brick's socket may have one).
b_timer() {
    local t
    t=$(ip netns exec "${NS[2]}" ss -tnoH state established \
        "( dst $H1 )" | grep -o 'timer:(keepalive' | head -n 1)
    if [ -n "$t" ]; then echo keepalive; else echo none; fi
}
# opt KEY: KEY's value in volume get.
opt() {
    ncli 1 volume get kv "$1" | awk -v k="$1" '$1 == k { print $2 }'
}
_T_PIDFILES+=("$T/n1/run/kv-brick0.pid")

TEST node_mortard 1
TEST mkdir -p "$B"
TEST ncli 1 volume create kv "$H1:$B/b0" force
TEST ncli 1 volume set kv server.keepalive-time 0
TEST ncli 1 volume set kv server.tcp-user-timeout 0
TEST ncli 1 volume start kv
TEST node_mount 1 "$H1:/kv" "$M0"
TEST wait_for_mount "$M0"
TEST node_mount 2 "$H1:/kv" "$M1"
TEST wait_for_mount "$M1"
TEST touch "$M0/lockfile"
EXPECT "2" brick_clients

# The client side (client.keepalive-*, GlusterFS's defaults: on) shows
# on B's socket to the brick as a keepalive timer; live off, it goes.
EXPECT "keepalive" b_timer
TEST ncli 1 volume set kv client.keepalive-time 0
EXPECT_WITHIN 20 "none" b_timer
EXPECT "volume set: failed: option 'keepalive-count': 0 is out of range 1..127" \
    set_err client.keepalive-count 0

# B holds the lock; A cannot take it.
bg_run flock -x "$M1/lockfile" -c "touch '$T/b-held'; exec sleep 600"
EXPECT_WITHIN 20 "Y" sh -c "[ -e '$T/b-held' ] && echo Y"
TEST ! flock -n -x "$M0/lockfile" true

# The cut. A waits for the lock; with keepalive off it waits on.
TEST node2_link down
bg_run flock -x "$M0/lockfile" -c "touch '$T/a-got'"
sleep 15
TEST test ! -e "$T/a-got"
EXPECT "2" brick_clients

# Live: 2 s of silence, then 3 probes 1 s apart (or 6 s with no answer).
TEST ncli 1 volume set kv server.keepalive-time 2
TEST ncli 1 volume set kv server.keepalive-interval 1
TEST ncli 1 volume set kv server.keepalive-count 3
TEST ncli 1 volume set kv server.tcp-user-timeout 6
EXPECT_WITHIN 30 "Y" sh -c "[ -e '$T/a-got' ] && echo Y"
EXPECT "1" brick_clients

# Bad values: the range in the error, the stored value kept.
EXPECT "volume set: failed: option 'keepalive-count': 500 is out of range 1..127" \
    set_err server.keepalive-count 500
EXPECT "volume set: failed: option 'tcp-user-timeout': 2000 is out of range 0..1013" \
    set_err server.tcp-user-timeout 2000
EXPECT "3" opt server.keepalive-count
EXPECT "6" opt server.tcp-user-timeout

TEST node2_link up
TEST umount_client "$M1"
TEST umount_client "$M0"
