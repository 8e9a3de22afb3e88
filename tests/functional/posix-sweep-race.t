#!/usr/bin/env bash
# storage/posix: the janitor's crash sweep racing live directory
# operations. A brick with the janitor held (fault point janitor-hold)
# gets 686 live directories and ~4000 directories that are then removed:
# their handle symlinks (.mortar/handles/xx/yy/<gfid>) lead nowhere and
# stay. kill -9; the restarted brick sweeps them on its janitor thread
# while it serves, slowed down by the fault point sweep-slow (1 ms per
# handle, 3 ms between reading a parent chain and opening it), and two
# processes on the mount race it until it is done: two ops in three swap
# two "hot" directories (each with 70 subdirectories and 40 dead handles
# under them) name for name between two parents, so the chains the sweep
# reads keep going stale and their names keep leading to the other
# directory; the rest mkdir, rename (across parents, directories holding
# subdirectories, mostly ones from before the crash) and rmdir. Then, on
# the brick before any lookup could repair anything: every directory's
# handle symlink names its real parent's GFID and its name, no dead
# handle from before the crash is left, nor any other symlink once the
# janitor drained the live rmdirs, and the sweep decided every handle;
# from a fresh mount, the tree is exactly the racers' model; a clean stop
# leaves the janitor-clean marker.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# Dead directories: dead/ and 3 levels under it (ND_A * ND_B * ND_C leaves).
ND_A=16
ND_B=16
ND_C=14
# Plus 4 removed under each of the 10 children of the 4 hot directories.
ND=$((1 + ND_A + ND_A * ND_B + ND_A * ND_B * ND_C + 160))
R="$T/race"
PY="$T/sweep-race.py"

cat > "$PY" <<'PY'
import os, random, sys, time, uuid

GFID = "trusted.mortar.gfid"
ROOT = "00000000-0000-0000-0000-000000000001"


def gfid_of(path):
    return str(uuid.UUID(bytes=os.getxattr(path, GFID,
                                           follow_symlinks=False)))


def hrel(g):
    return "%s/%s/%s" % (g[0:2], g[2:4], g)


def handle_links(brick):
    """GFIDs of all symlink handles (directories' and the root's)."""
    out = set()
    top = os.path.join(brick, ".mortar", "handles")
    for dp, dns, fns in os.walk(top):
        for n in fns + dns:
            p = os.path.join(dp, n)
            if len(n) == 36 and os.path.islink(p):
                out.add(n)
    return out


def brick_dirs(brick):
    """{relative path: gfid} of every directory on the brick."""
    dirs = {}
    for dp, dns, _ in os.walk(brick):
        if dp == brick:
            dns[:] = [d for d in dns if d != ".mortar"]
        for d in dns:
            p = os.path.join(dp, d)
            dirs[os.path.relpath(p, brick)] = gfid_of(p)
    return dirs


HOT_C = 10  # children of a hot directory
HOT_G = 6   # grandchildren under each child
HOT_DEAD = 4  # removed directories under each child


# Where the two hot directories of a racer are (relative to live/h<tag>),
# and the three renames that swap them, name for name: the same names
# (and, inside, the same child names) keep leading to another directory.
HOT_START = ["pa/cur", "pb/park"]
HOT_CYCLE = [("pa/cur", "pb/mid"), ("pb/park", "pa/cur"),
             ("pb/mid", "pb/park")]


def hot_tree(tag, where):
    """live/h<tag>/{pa,pb} and the hot directories at where, each with
    HOT_C children of HOT_G subdirectories (relative to live/)."""
    out = ["h" + tag, "h%s/pa" % tag, "h%s/pb" % tag]
    for w in where:
        out.append("h%s/%s" % (tag, w))
        for i in range(HOT_C):
            out.append("h%s/%s/c%d" % (tag, w, i))
            for j in range(HOT_G):
                out.append("h%s/%s/c%d/g%d" % (tag, w, i, j))
    return out


def build(mnt, a, b, c, nlive_top):
    # Live trees, made before the crash: t<i>/s<j>/u<k> for the racers'
    # churn, and the hot trees.
    for i in range(nlive_top):
        for j in range(8):
            for k in range(3):
                os.makedirs("%s/live/t%d/s%d/u%d" % (mnt, i, j, k))
    for tag in ("x", "y"):
        for d in hot_tree(tag, HOT_START):
            os.makedirs("%s/live/%s" % (mnt, d), exist_ok=True)
        # Dead directories inside the hot trees: their parents' chains
        # will be changing while the sweep judges them.
        for w in HOT_START:
            for i in range(HOT_C):
                for k in range(HOT_DEAD):
                    d = "%s/live/h%s/%s/c%d/gone%d" % (mnt, tag, w, i, k)
                    os.mkdir(d)
                    os.rmdir(d)
    for i in range(a):
        for j in range(b):
            for k in range(c):
                os.makedirs("%s/dead/a%d/b%d/c%d" % (mnt, i, j, k))


def deadlist(brick, out):
    """The symlink handles of no directory on the brick (dead ones)."""
    live = set(brick_dirs(brick).values()) | {ROOT}
    dead = sorted(handle_links(brick) - live)
    with open(out, "w") as f:
        f.write("".join(g + "\n" for g in dead))
    print(len(dead))


def race(mnt, tops, outdir, tag, seed):
    """Until outdir/stop exists: two ops in three are the next rename of
    HOT_CYCLE in live/h<tag>, so the parent chains of the hot directories'
    140 subdirectories from before the crash, which nothing else touches,
    keep changing while the sweep reads them, and an old chain's names
    lead to the other hot directory's subdirectories; the other ops
    mkdir/rename/rmdir under live/<tops> (renames mostly of directories
    from before the crash, often with subdirectories)."""
    rnd = random.Random(seed)
    base = os.path.join(mnt, "live")
    dirs = set()  # relative to live/
    for t in tops.split(","):
        for i in range(8):
            for j in range(3):
                dirs.update([t, "%s/s%d" % (t, i), "%s/s%d/u%d" % (t, i, j)])
    pre = set(dirs)  # made before the crash
    hot_where = list(HOT_START)  # where hot directories 0 and 1 are
    hot_seq = 0
    # Started with the brick down: begin once it answers again.
    for _ in range(600):
        try:
            os.stat(os.path.join(base, tops.split(",")[0]))
            break
        except OSError:
            time.sleep(0.05)
    cnt = open(os.path.join(outdir, tag + ".count"), "w")
    errs = []
    n = {"mkdir": 0, "rename": 0, "rename_pre": 0, "rename_tree": 0,
         "rmdir": 0, "hot_move": 0}
    seq = 0

    def children(d):
        pre_ = d + "/"
        return [x for x in dirs if x.startswith(pre_)]

    while not os.path.exists(os.path.join(outdir, "stop")):
        seq += 1
        op = rnd.random()
        try:
            if seq % 3 != 0:
                src, dst = HOT_CYCLE[hot_seq % 3]
                os.rename("%s/h%s/%s" % (base, tag, src),
                          "%s/h%s/%s" % (base, tag, dst))
                hot_where[hot_where.index(src)] = dst
                hot_seq += 1
                n["hot_move"] += 1
            elif op < 0.5:
                # A directory not at the top, preferably one from before
                # the crash, to a parent outside its own subtree.
                cands = [d for d in dirs if "/" in d]
                old = [d for d in cands if d in pre]
                src = rnd.choice(old if old and rnd.random() < 0.8
                                 else cands)
                sub = children(src)
                parents = [d for d in dirs
                           if d != src and not d.startswith(src + "/")
                           and d.count("/") < 6]
                dst = "%s/%s-r%d" % (rnd.choice(parents), tag, seq)
                os.rename(os.path.join(base, src), os.path.join(base, dst))
                n["rename"] += 1
                n["rename_pre"] += src in pre
                n["rename_tree"] += len(sub) > 0
                for x in [src] + sub:
                    dirs.discard(x)
                    y = dst + x[len(src):]
                    dirs.add(y)
                    if x in pre:
                        pre.discard(x)
                        pre.add(y)
            elif op < 0.8:
                parent = rnd.choice([d for d in dirs if d.count("/") < 6])
                d = "%s/%s-m%d" % (parent, tag, seq)
                os.mkdir(os.path.join(base, d))
                dirs.add(d)
                n["mkdir"] += 1
            else:
                leaves = [d for d in dirs if "/" in d and not children(d)]
                d = rnd.choice(leaves)
                os.rmdir(os.path.join(base, d))
                dirs.discard(d)
                pre.discard(d)
                n["rmdir"] += 1
        except OSError as e:
            errs.append("op %d: %s" % (seq, e))
            if len(errs) > 20:
                break
        cnt.seek(0)
        cnt.write("%d\n" % sum(v for k, v in n.items()
                               if k in ("mkdir", "rename", "rmdir",
                                        "hot_move")))
        cnt.flush()
    dirs.update(hot_tree(tag, hot_where))
    with open(os.path.join(outdir, tag + ".model"), "w") as f:
        f.write("".join("live/%s\n" % d for d in sorted(dirs)))
    with open(os.path.join(outdir, tag + ".errors"), "w") as f:
        f.write("".join(e + "\n" for e in errs))
    with open(os.path.join(outdir, tag + ".stats"), "w") as f:
        f.write(" ".join("%s=%d" % kv for kv in sorted(n.items())) + "\n")
    open(os.path.join(outdir, tag + ".done"), "w").close()


def brickcheck(brick):
    """Every directory's handle names its parent's GFID and its name."""
    dirs = brick_dirs(brick)
    hd = os.path.join(brick, ".mortar", "handles")
    bad = []
    for rel, g in sorted(dirs.items()):
        parent = os.path.dirname(rel)
        pg = dirs[parent] if parent else ROOT
        want = "../../%s/%s" % (hrel(pg), os.path.basename(rel))
        try:
            have = os.readlink(os.path.join(hd, hrel(g)))
        except OSError as e:
            bad.append("%s (%s): %s" % (rel, g, e.strerror))
            continue
        if have != want:
            bad.append("%s (%s): %s, not %s" % (rel, g, have, want))
    print("ok" if not bad else "%d bad: %s" % (len(bad), "; ".join(bad[:5])))


def count_dead(brick, listfile):
    have = handle_links(brick)
    print(sum(1 for g in open(listfile).read().split() if g in have))


def extra_links(brick):
    live = set(brick_dirs(brick).values()) | {ROOT}
    print(len(handle_links(brick) - live))


def names(mnt):
    out = []
    for dp, dns, _ in os.walk(os.path.join(mnt, "live")):
        for d in dns:
            out.append(os.path.relpath(os.path.join(dp, d), mnt))
    print("".join(x + "\n" for x in sorted(out)), end="")


cmd = sys.argv[1]
args = sys.argv[2:]
if cmd == "build":
    build(args[0], *map(int, args[1:]))
elif cmd == "deadlist":
    deadlist(*args)
elif cmd == "race":
    race(args[0], args[1], args[2], args[3], int(args[4]))
elif cmd == "brickcheck":
    brickcheck(*args)
elif cmd == "count_dead":
    count_dead(*args)
elif cmd == "extra_links":
    extra_links(*args)
elif cmd == "names":
    names(*args)
PY

sr() {
    python3 "$PY" "$@"
}

# A TAP comment (prove -v shows it).
diag() {
    echo "# $*"
}

sweep_done() {
    grep -c "handle sweep done" "$T/log/brick-b0.log"
}

racers_count() {
    echo $(($(cat "$R/x.count" 2> /dev/null || echo 0) +
            $(cat "$R/y.count" 2> /dev/null || echo 0)))
}

racers_done() {
    ls "$R"/*.done 2> /dev/null | wc -l
}

TEST mkdir -p "$R"
TEST alloc_port P0
export MORTAR_POSIX_FAULT=janitor-hold
TEST start_brick b0 "$B0" "$P0"
unset MORTAR_POSIX_FAULT
TEST mount_client "$P0" b0 "$M0"
TEST wait_for_mount "$M0"

# 12 live trees of 1 + 8 + 24 directories, 2 hot trees of 145, and the
# dead tree.
T0=$SECONDS
TEST sr build "$M0" "$ND_A" "$ND_B" "$ND_C" 12
diag "made $((12 * 33 + 2 * 145)) live and $ND dead directories" \
    "in $((SECONDS - T0)) s"
TEST rm -rf "$M0/dead"
# Every removed directory left its handle symlink (held).
EXPECT "$ND" sr deadlist "$B0" "$T/deadlist"
EXPECT "ok" sr brickcheck "$B0"

# Crash, restart with a slow sweep, and race it at once.
TEST kill_brick b0 KILL
export MORTAR_POSIX_FAULT=sweep-slow
TEST start_brick b0 "$B0" "$P0"
unset MORTAR_POSIX_FAULT
T0=$SECONDS
# The racers start as soon as the mount reaches the brick again.
bg_run sr race "$M0" t0,t1,t2,t3,t4,t5 "$R" x 1
bg_run sr race "$M0" t6,t7,t8,t9,t10,t11 "$R" y 2
EXPECT_WITHIN 30 "ok" errno_of stat "$M0/live/t0"
EXPECT_WITHIN 120 "1" sweep_done
RACED="$(racers_count)"
diag "sweep took about $((SECONDS - T0)) s; $RACED live ops raced it"
diag "$(grep -o 'handle sweep.*' "$T/log/brick-b0.log" | tr '\n' ';')"
TEST touch "$R/stop"
EXPECT_WITHIN 60 "2" racers_done
diag "racer x: $(cat "$R/x.stats")"
diag "racer y: $(cat "$R/y.stats")"
EXPECT "" cat "$R/x.errors" "$R/y.errors"
# Really raced: the sweep lasts seconds, each racer does an op in a few
# milliseconds (dozens even on a loaded machine).
TEST [ "$RACED" -ge 20 ]

# On the brick, before any lookup could repair a handle: every directory
# (live ones from before the crash, renamed ones, new ones) has its
# handle naming its parent and name; no dead handle is left.
EXPECT "ok" sr brickcheck "$B0"
EXPECT "0" sr count_dead "$B0" "$T/deadlist"
# The sweep decided every handle (none left for the next start).
EXPECT_MATCH " 0 left undecided" \
    grep -o "handle sweep done.*" "$T/log/brick-b0.log"
# The live rmdirs' symlinks go with the janitor's queue.
EXPECT_WITHIN 20 "0" sr extra_links "$B0"
# No rename failed to update its handle.
EXPECT "0" grep -c "handle update" "$T/log/brick-b0.log"

# A fresh mount sees exactly the racers' tree, by name.
sort "$R/x.model" "$R/y.model" > "$R/want"
TEST umount_client "$M0"
TEST drop_caches
TEST mount_client "$P0" b0 "$M1"
TEST wait_for_mount "$M1"
EXPECT "$(cat "$R/want")" sr names "$M1"
EXPECT "ok" sr brickcheck "$B0"
# The sweep was complete: a clean stop leaves the marker (no sweep at the
# next start).
TEST kill_brick b0 TERM
EXPECT "Y" sh -c "[ -e '$B0/.mortar/janitor-clean' ] && echo Y || echo N"
