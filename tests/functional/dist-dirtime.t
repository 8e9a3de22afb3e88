#!/usr/bin/env bash
# A directory's times over a four-brick distribute volume (issue 20,
# defect 4; doc/distribute.md "Directory attributes"). Each brick keeps
# its own copy's times and a create changes only the copy where the name
# lands; distribute answers the newest of all copies. Checked through two
# mounts, m0 with the default 1 s attribute cache (the kernel's next
# GETATTR after a create is answered from the create's postparent, later
# ones by a stat through distribute) and m1 with none (every stat goes
# down), creates alternating between them, 40 of them, with pauses past
# the cache's second:
#   - on each mount, the directory's mtime and ctime (ns) never decrease;
#   - on the creating mount and on m1, they are >= the new file's mtime;
#   - the files landed on at least three bricks;
#   - `find DIR -newer REF` lists the directory after a create on a
#     brick other than the first, on both mounts;
#   - a chmod of the directory does not take its mtime back.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST dist4_start
mkdir -p "$M1"
_T_MOUNTS+=("$M1")
TEST start_fsd client-dist-2 --volfile "$T/vol/dist4.vol" \
    --fuse-opt attribute-timeout=0 --fuse-opt entry-timeout=0 "$M1"
TEST wait_for_mount "$M1"
TEST mkdir "$M0/d"

# ---- 40 creates, the directory's times after each ----
TEST python3 -c "
import os, sys, time
sys.path.insert(0, '$(dirname "$0")/../lib')
from dist_hash import pick
mounts = ['$M0', '$M1']
last = {m: (0, 0) for m in mounts}
def check(m, tag, floor):
    st = os.stat(m + '/d')
    cur = (st.st_mtime_ns, st.st_ctime_ns)
    if cur[0] < last[m][0] or cur[1] < last[m][1]:
        sys.exit('%s %s: times went back: mtime %d -> %d, ctime %d -> %d'
                 % (m, tag, last[m][0], cur[0], last[m][1], cur[1]))
    if cur[0] < floor:
        sys.exit('%s %s: dir mtime %d older than the new file (%d)'
                 % (m, tag, cur[0], floor))
    last[m] = cur
for i in range(40):
    m = mounts[i % 2]
    # Each mount creates on every brick in turn.
    path = '%s/d/%s' % (m, pick(4, (i // 2) % 4, 'f%03d' % i))
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644))
    fm = os.stat(path).st_mtime_ns
    for k in range(3):
        check(m, 'create %d, stat %d' % (i, k), fm)
        check('$M1', 'create %d, m1 stat %d' % (i, k), fm)
        check('$M0', 'create %d, m0 stat %d' % (i, k), 0)
        time.sleep(0.05)
    if i % 8 == 7:
        time.sleep(1.2) # past the attribute cache of m0
        check('$M0', 'create %d, m0 after the cache' % i, fm)
        check('$M1', 'create %d, m1 after the cache' % i, fm)
"

# bricks_with_files: how many bricks hold some of the 40 files.
bricks_with_files() {
    local n=0 i
    for i in 0 1 2 3; do
        if [ -n "$(find "$T/bricks/b$i/d" -maxdepth 1 -name 'f0*' \
                   ! -perm 1000 -print -quit)" ]; then
            n=$((n + 1))
        fi
    done
    echo "$n"
}
EXPECT "4" bricks_with_files
EXPECT "40" sh -c "ls '$M0/d' | wc -l"

# ---- find -newer: a create on brick 2 (brick 0's copy keeps its times) ----
newer_than_ref() {
    find "$1/d" -maxdepth 0 -newer "$T/ref" | wc -l
}
pick() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 4 "$1" "$2"
}
G=$(pick 2 g)
H=$(pick 3 h)
sleep 1.2 # m0's cached attributes expire
TEST touch "$T/ref"
TEST sleep 0.1
TEST touch "$M0/d/$G"
TEST [ -e "$T/bricks/b2/d/$G" ]
EXPECT "1" newer_than_ref "$M1"
sleep 1.2
EXPECT "1" newer_than_ref "$M0"
TEST touch "$T/ref"
TEST sleep 0.1
TEST touch "$M1/d/$H"
TEST [ -e "$T/bricks/b3/d/$H" ]
EXPECT "1" newer_than_ref "$M1"
sleep 1.2
EXPECT "1" newer_than_ref "$M0"

# ---- chmod: its answer keeps the newest mtime ----
mtime_ns() {
    python3 -c "import os; print(os.stat('$1').st_mtime_ns)"
}
BEFORE=$(mtime_ns "$M1/d")
TEST chmod 0700 "$M0/d"
EXPECT "$BEFORE" mtime_ns "$M0/d"
EXPECT "$BEFORE" mtime_ns "$M1/d"
