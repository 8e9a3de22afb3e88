#!/usr/bin/env bash
# mortard supervising bricks under a live mount: I/O through a volume
# mounted from GETSPEC; mortard killed -9 while the mount serves (I/O
# goes on, the restarted mortard re-adopts the same brick pid, no
# duplicate); a killed brick restarted by mortard (only it); a
# brick-side `volume set` restarting the brick with the mount recovering;
# WATCH answering after a change; statedump; stop and delete.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

n_bricks() {
    local n=0 p
    for p in $(pgrep -f -- "--pid-file $T/run/v1-brick0.pid"); do
        [ "$(proc_alive "$p")" = Y ] && n=$((n + 1))
    done
    echo "$n"
}

TEST start_mortard
track_brick v1
TEST mcli volume create v1 127.0.0.1:$B0 force
TEST mcli volume start v1
BP=$(cat "$T/run/v1-brick0.pid")
EXPECT "1" n_bricks
TEST mount_volume v1 "$M0"
TEST sh -c "echo one > '$M0/f'"
EXPECT "one" cat "$M0/f"

# mortard dies; the brick keeps serving; a new mortard adopts it.
TEST kill -9 "$(mortard_pid)"
TEST sh -c "echo two >> '$M0/f'"
EXPECT "2" sh -c "wc -l < '$M0/f'"
TEST start_mortard
EXPECT_MATCH "Brick 127.0.0.1:$B0 +[0-9]+ +Y +$BP" mcli volume status v1
TEST mcli volume start v1 force
EXPECT "$BP" cat "$T/run/v1-brick0.pid"
EXPECT "1" n_bricks
EXPECT_MATCH "adopted brick" cat "$T/log/mortard.log"

# A dead brick: mortard restarts it (only it, once; supervise.c, more in
# mgmt-brick-supervise.t); start force then leaves it alone.
TEST kill -9 "$BP"
EXPECT_WITHIN 10 "N" proc_alive "$BP"
EXPECT_WITHIN 15 "Y" sh -c "p=\$(cat '$T/run/v1-brick0.pid'); [ \"\$p\" != '$BP' ] && kill -0 \"\$p\" && echo Y"
BP2=$(cat "$T/run/v1-brick0.pid")
EXPECT_MATCH "Brick 127.0.0.1:$B0 +[0-9]+ +Y +$BP2" mcli volume status v1
TEST mcli volume start v1 force
EXPECT "$BP2" cat "$T/run/v1-brick0.pid"
EXPECT "1" n_bricks
EXPECT_WITHIN 20 "two" tail -n 1 "$M0/f"

# WATCH: a client waiting on the current version is answered by a set.
V=$(mcli --getspec v1 | head -n 1 | cut -d' ' -f2)
bg_run sh -c "'$MDCTL' -s '$T/run/mortard.sock' --watch v1 $V > '$T/watch.out'"
sleep 1
TEST mcli volume set v1 client.ping-timeout 15
EXPECT_WITHIN 10 "version $((V + 1))" head -n 1 "$T/watch.out"
EXPECT_MATCH "ping-timeout 15" cat "$T/watch.out"

# A brick-side option that is not live restarts the brick; the mount
# recovers (live ones are reloaded in place: mgmt-live-set.t).
TEST mcli volume set v1 storage.reserve 2
BP3=$(cat "$T/run/v1-brick0.pid")
TEST [ "$BP3" != "$BP2" ]
EXPECT "1" n_bricks
EXPECT_WITHIN 20 "two" tail -n 1 "$M0/f"
EXPECT_MATCH "option reserve 2" cat "$T/state/vols/v1/brick0.vol"

# Statedump of the bricks and of mortard itself.
TEST mcli volume statedump v1
EXPECT_WITHIN 10 "1" sh -c "ls '$T/run/dumps' | grep -c '^mortarfsd.$BP3.dump'"
TEST kill -USR1 "$(mortard_pid)"
EXPECT_WITHIN 10 "1" sh -c "ls '$T/run/dumps' | grep -c '^mortard\\.'"
EXPECT_WITHIN 10 "Y" sh -c "grep -q 'mortard.volume.v1' '$T'/run/dumps/mortard.* && echo Y"

TEST umount "$M0"
TEST mcli volume stop v1
EXPECT_WITHIN 10 "N" proc_alive "$BP3"
TEST mcli volume delete v1
EXPECT "No volumes present in cluster" mcli volume list
