#!/usr/bin/env bash
# A write in flight when the network splits, made deterministic: a
# replica 3 volume over three nodes (netns 10.213.77.1-3, one brick
# each), client A on node 1, client B on node 3, write-behind off.
#  - B writes record 1 (its batch takes the file's lock on every brick);
#    n1's and n2's bricks are stopped (SIGSTOP), B's record 2 goes out
#    (n3 answers it), node 3's link goes down, n1 and n2 go on and apply
#    record 2, whose answers are lost: B's write reached one copy it
#    knows of, below quorum, so it fails with EROFS;
#  - n1 and n2 drop B once their keepalive gives up on it (6 s here),
#    which frees B's lock, and A writes the file on n1 and n2, which
#    blame n3 for it;
#  - the link back: nothing is in split-brain, heal brings n3 to n1's
#    content, and A's record is on all three. (When the failed write's
#    post-op still blamed n1 and n2 from n3, each side blamed the other:
#    a split-brain, found by rep-partition.t now and then.)
# TIMEOUT: 200
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
B="$T/bricks"
for i in 1 2 3; do
    _T_PIDFILES+=("$T/n$i/run/pv-brick$((i - 1)).pid" "$T/n$i/run/heal/pv.pid")
done
brick_pid() { cat "$T/n$1/run/pv-brick$(($1 - 1)).pid"; }
same_copies() {
    cmp -s "$B/n1/f" "$B/n2/f" && cmp -s "$B/n1/f" "$B/n3/f" &&
        echo ok || echo differ
}

# B's writer: record 1, the stop of n1 and n2, record 2 in a thread,
# the cut, n1 and n2 resumed; prints "rec1 OK" and "rec2 ERRNO".
cat > "$T/bwriter.py" <<'PY'
import errno, os, signal, subprocess, sys, threading, time
path, p1, p2, cut = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
fd = os.open(path, os.O_RDWR)
def rec(n):
    return ("B record %d " % n).encode().ljust(511, b".") + b"\n"
def put(n, out):
    try:
        os.pwrite(fd, rec(n), 4096 * n)
        out[n] = "OK"
    except OSError as e:
        out[n] = errno.errorcode[e.errno]
out = {}
put(1, out)
print("rec1", out[1], flush=True)
os.kill(p1, signal.SIGSTOP)
os.kill(p2, signal.SIGSTOP)
th = threading.Thread(target=put, args=(2, out))
th.start()
time.sleep(0.5)
subprocess.run(cut, check=True)
os.kill(p1, signal.SIGCONT)
os.kill(p2, signal.SIGCONT)
th.join()
print("rec2", out[2], flush=True)
PY

peers_form 3
TEST mkdir -p "$B"
TEST ncli 1 volume create pv replica 3 "$H1:$B/n1" "$H2:$B/n2" \
    "$H3:$B/n3" force
TEST ncli 1 volume set pv network.ping-timeout 3
TEST ncli 1 volume set pv performance.write-behind off
TEST ncli 1 volume set pv cluster.post-op-delay-secs 5
TEST ncli 1 volume set pv cluster.self-heal-daemon off
TEST ncli 1 volume set pv server.keepalive-time 2
TEST ncli 1 volume set pv server.keepalive-interval 1
TEST ncli 1 volume set pv server.keepalive-count 3
TEST ncli 1 volume set pv server.tcp-user-timeout 6
TEST ncli 1 volume start pv
TEST node_mount 1 "$H1:/pv" "$M0"
TEST wait_for_mount "$M0"
TEST node_mount 3 "$H3:/pv" "$M1"
TEST wait_for_mount "$M1"
TEST sh -c "echo base > '$M0/f'"
EXPECT_WITHIN 20 "base" cat "$M1/f"

b_writer() {
    python3 "$T/bwriter.py" "$M1/f" "$(brick_pid 1)" "$(brick_pid 2)" \
        ip -n "$NS_BR" link set "mt$$b3" down > "$T/b.out"
}
TEST b_writer
EXPECT "rec1 OK" sed -n 1p "$T/b.out"
EXPECT "rec2 EROFS" sed -n 2p "$T/b.out"
# n1 and n2 took record 2 (its answers were lost on the way).
TEST grep -q "B record 2" "$B/n1/f"
TEST grep -q "B record 2" "$B/n3/f"

# A, on the side with quorum: its write waits for B's lock until n1 and
# n2 drop B, then goes through.
TEST python3 -c "
import os
fd = os.open('$M0/f', os.O_RDWR)
os.pwrite(fd, b'A record\n', 4096 * 3)
os.fsync(fd)"
TEST grep -q "A record" "$B/n1/f"

TEST ip -n "$NS_BR" link set "mt$$b3" up
TEST ncli 1 volume set pv cluster.self-heal-daemon on
TEST ncli 1 volume heal pv
EXPECT_WITHIN 120 "0" node_heal_entries pv 3
EXPECT "0" node_heal_entries pv 3 split-brain
EXPECT "ok" same_copies
TEST grep -q "A record" "$B/n3/f"
EXPECT_MATCH "^(clean|healed)$" getfattr --absolute-names --only-values \
    -n mortar.heal "$M0/f"
TEST grep -q "A record" "$M1/f"

TEST umount_client "$M1"
TEST umount_client "$M0"
