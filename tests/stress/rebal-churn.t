#!/usr/bin/env bash
# Namespace churn during a rebalance (3 -> 4 bricks): while the process
# crawls and moves files, a client removes and makes again the four churn
# directories, then creates, overwrites, appends to, renames (within and
# across directories, over existing names) and unlinks files in them, checking every read against its own model of what each name
# holds; every call must succeed. When both are done, and again after a
# second (quiet) rebalance: every name of the model is there with its
# content, no other name is, hard-linked names share an inode and count
# their names, the untouched files keep their md5s, no file is data on
# two bricks; the second run completes with no failure and leaves no
# marker (a rename racing the first run may leave a dangling link file,
# which lookups skip: reported, not failed). (The first run may report a few names failed: a rename
# racing its look at a name can leave it unable to tell whose the name
# is; it leaves those files where they are, and the second run moves
# them.)
# A stress test, not in the default run (tests/Makefile.am): 20 s of
# churn against a whole run takes a minute or two and, rarely, still
# finds something. At 2ff8c91..e581617 it passed 10 runs in 10, and 13
# in 13 with hard links made during the run (CHURN_LINKS=1); before the
# fixes of 2b42cac..2ff8c91 it failed 3 runs in 25 and 2 in 5 with
# links, and before 78221d5 every run (doc/rebalance.md, "Clients changing names
# during a migration").
# TIMEOUT: 600
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# churn MNT SECONDS MODEL: the churner; exits 1 on the first surprise
churn() {
    python3 - "$@" <<'PY'
import errno, os, random, sys, time

mnt, secs, model_path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
# Hard links: CHURN_LINKS=1 (see the header: not yet race-free).
with_links = os.environ.get("CHURN_LINKS") == "1"
rnd = random.Random(2026)
dirs = ["c0", "c1", "c2", "c3/deep"]
for d in dirs:
    os.makedirs(os.path.join(mnt, d), exist_ok=True)
names = {}    # relative name -> group id
groups = {}   # group id -> bytes
seq = [0]

def path(n):
    return os.path.join(mnt, n)

def new_name():
    seq[0] += 1
    return "%s/n%05d" % (rnd.choice(dirs), seq[0])

def drop(n):
    g = names.pop(n)
    if g not in names.values():
        del groups[g]

def check(n):
    with open(path(n), "rb") as f:
        got = f.read()
    if got != groups[names[n]]:
        raise SystemExit("%s: %d bytes read, %d expected" %
                         (n, len(got), len(groups[names[n]])))

log = open(model_path + ".ops", "w", buffering=1)
deadline = time.monotonic() + secs
ops = 0
while time.monotonic() < deadline or ops < 200:
    ops += 1
    op = rnd.random()
    live = sorted(names)
    if op < 0.25 or len(live) < 20:
        n = new_name()
        data = os.urandom(rnd.randrange(0, 65536))
        log.write("create %s\n" % n)
        with open(path(n), "wb") as f:
            f.write(data)
        seq[0] += 1
        names[n] = seq[0]
        groups[seq[0]] = data
    elif op < 0.35:
        n = rnd.choice(live)
        data = os.urandom(rnd.randrange(0, 32768))
        with open(path(n), "wb") as f:
            f.write(data)
        groups[names[n]] = data
    elif op < 0.45:
        n = rnd.choice(live)
        data = os.urandom(rnd.randrange(1, 8192))
        with open(path(n), "ab") as f:
            f.write(data)
        groups[names[n]] += data
    elif op < 0.65:
        a = rnd.choice(live)
        b = rnd.choice(live) if rnd.random() < 0.2 else new_name()
        if a == b:
            continue
        log.write("rename %s %s\n" % (a, b))
        os.rename(path(a), path(b))
        if names.get(b) == names[a]:
            continue  # two names of one file: POSIX rename does nothing
        g = names[a]
        del names[a]
        if b in names:
            drop(b)
        names[b] = g
    elif op < 0.75 and with_links:
        a = rnd.choice(live)
        b = new_name()
        log.write("link %s %s\n" % (a, b))
        os.link(path(a), path(b))
        names[b] = names[a]
    elif op < 0.75:
        continue
    elif op < 0.85:
        n = rnd.choice(live)
        log.write("unlink %s\n" % n)
        os.unlink(path(n))
        drop(n)
    else:
        check(rnd.choice(live))
with open(model_path, "w") as out:
    for n in sorted(names):
        out.write("%s %d\n" % (n, names[n]))
# The contents, by group, for the checks after.
for g, data in groups.items():
    with open("%s.g%d" % (model_path, g), "wb") as f:
        f.write(data)
print("ops=%d names=%d groups=%d" % (ops, len(names), len(groups)))
PY
}

# model_check MNT MODEL: "ok", or the first difference
model_check() {
    python3 - "$@" <<'PY'
import os, sys
mnt, model = sys.argv[1], sys.argv[2]
want = {}
for line in open(model):
    n, g = line.split()
    want[n] = int(g)
have = set()
for d in ["c0", "c1", "c2", "c3", "c3/deep"]:
    for e in os.listdir(os.path.join(mnt, d)):
        p = os.path.join(d, e)
        if not os.path.isdir(os.path.join(mnt, p)):
            have.add(p)
for n in sorted(have - set(want)):
    sys.exit("unexpected name %s" % n)
for n in sorted(set(want) - have):
    sys.exit("missing name %s" % n)
ino = {}
for n, g in sorted(want.items()):
    with open(os.path.join(mnt, n), "rb") as f:
        got = f.read()
    if got != open("%s.g%d" % (model, g), "rb").read():
        sys.exit("%s: content differs" % n)
    st = os.stat(os.path.join(mnt, n))
    if ino.setdefault(g, st.st_ino) != st.st_ino:
        sys.exit("%s: not the same inode as its other names" % n)
    links = sum(1 for v in want.values() if v == g)
    if st.st_nlink != links:
        sys.exit("%s: %d links, %d names" % (n, st.st_nlink, links))
print("ok")
PY
}
# markers: migration markers left on any brick (a finished run leaves
# none). Link files may stay: hard-linked files keep them on the hashed
# bricks of their other names, and a rename over a name racing the run
# can leave one dangling (lookups skip it; the name is checked absent by
# model_check). dangling_links prints how many point nowhere.
specials_report() {
    python3 - "$T/bricks" "$1" <<'PY'
import os, stat, sys
root, what = sys.argv[1], sys.argv[2]
bad = []
for b in ["b0", "b1", "b2", "b3"]:
    top = os.path.join(root, b)
    for d, dirs, files in os.walk(top):
        if d == top and ".mortar" in dirs:
            dirs.remove(".mortar")
        for f in files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            perm = stat.S_IMODE(st.st_mode)
            if perm == 0o3000:
                bad.append("marker %s" % p)
            elif perm == 0o1000:
                to = os.getxattr(p, "trusted.mortar.dht.linkto").rstrip(b"\0")
                g = os.getxattr(p, "trusted.mortar.gfid").hex()
                h = "%s/%s/%s-%s-%s-%s-%s" % (g[0:2], g[2:4], g[0:8], g[8:12],
                                              g[12:16], g[16:20], g[20:32])
                if not os.path.isfile(os.path.join(root, to.decode(),
                                                   ".mortar/handles", h)):
                    bad.append("dangling link file %s -> %s" % (p, to))
if what == "markers":
    print("\n".join(b for b in bad[:10] if b.startswith("marker")))
else:
    print(sum(1 for b in bad if b.startswith("dangling")))
PY
}

for i in 0 1 2 3; do
    alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
    TEST start_brick "b$i" "$T/bricks/b$i" "$(eval echo "\$P$i")"
done
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" > "$T/vol/dist3.vol"
dist_volfile "b0:$P0" "b1:$P1" "b2:$P2" "b3:$P3" > "$T/vol/dist4.vol"
TEST mount_volfile "$T/vol/dist3.vol" "$M0"
TEST rebal_tool gen "$M0" 400 "$T/sums"
# The churn directories exist with some files before the layout changes.
TEST churn "$M0" 2 "$T/model0"
EXPECT "ok" model_check "$M0" "$T/model0"
TEST umount_client "$M0"

TEST mount_volfile "$T/vol/dist4.vol" "$M0"
S="$T/rebal.state"
# 5 ms a name: the run lasts while the churn goes on.
export MORTAR_REBAL_DELAY_MS=5
TEST start_fsd rebal --rebalance --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$S" --throttle normal
unset MORTAR_REBAL_DELAY_MS
rm -rf "$M0/c0" "$M0/c1" "$M0/c2" "$M0/c3" 2> /dev/null
EXPECT_MATCH "^ops=[0-9]+ names=" churn "$M0" 20 "$T/model"
EXPECT_WITHIN 300 "N" is_alive "$(fsd_pid rebal)"
EXPECT_MATCH "^(completed|failed)$" state_value "$S" status
EXPECT "ok" model_check "$M0" "$T/model"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "0" dup_data b0 b1 b2 b3

# A second rebalance, nothing else running: the same, and no link file or
# marker left anywhere.
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$T/rebal2.state" -N --log-file "$T/log/rebal2.log"
EXPECT "completed" state_value "$T/rebal2.state" status
EXPECT "0" state_value "$T/rebal2.state" failed_files
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/dist4.vol" "$M0"
EXPECT "ok" model_check "$M0" "$T/model"
EXPECT "ok" rebal_tool verify "$M0" "$T/sums"
EXPECT "0" dup_data b0 b1 b2 b3
EXPECT "" specials_report markers
echo "# dangling link files left: $(specials_report dangling)"
