#!/usr/bin/env bash
# Names-only listings end to end (issue 24 item 2): a two-brick
# distribute volume from mortard, mounted twice: A with the kernel's
# READDIRPLUS off (mount option readdirplus=off), B as by default.
#  - 2,000 names (1,980 files, 20 directories) made through B;
#  - A lists them (`ls -f`, a scandir of the names and their d_type, and
#    `find -type d`): every name once, d_type right for files and
#    directories, and the bricks' storage/posix counted the entries
#    (readdir_entries) without a single stat per entry (readdir_stats
#    unchanged): names-only reads go down as names only, through
#    distribute, to getdents;
#  - B lists with attributes: the bricks stat every entry.
# TIMEOUT: 120
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard not built"
    exit 0
fi

# posix_sum KEY: KEY of storage/posix summed over both bricks' dumps.
posix_sum() {
    local i n=0 v
    for i in 0 1; do
        v=$(dump_value "$(cat "$T/run/v0-brick$i.pid")" "dump v0-posix" "$1")
        [ -n "$v" ] || return 1
        n=$((n + v))
    done
    echo "$n"
}

# scan DIR: "files dirs others" by d_type alone (os.scandir's is_dir and
# is_file use d_type and stat nothing when it is known).
scan() {
    python3 -c '
import os, sys
f = d = o = 0
for e in os.scandir(sys.argv[1]):
    if e.is_dir(follow_symlinks=False):
        d += 1
    elif e.is_file(follow_symlinks=False):
        f += 1
    else:
        o += 1
print(f, d, o)' "$1"
}

TEST start_mortard
export MORTAR_SOCKET="$T/run/mortard.sock"
mkdir -p "$T/bricks/v0" "$T/bricks/v1"
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" \
    "127.0.0.1:$T/bricks/v1" force
track_brick v0 brick0
track_brick v0 brick1
TEST "$MORTAR" volume start v0
TEST mount_mortar "127.0.0.1:/v0" "$M0" \
    "volfile-server-port=$MGMT_PORT,readdirplus=off"
TEST wait_for_mount "$M0"
TEST mount_mortar "127.0.0.1:/v0" "$M1" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M1"

TEST python3 -c '
import os, sys
d = sys.argv[1]
os.mkdir(d)
for i in range(1980):
    open("%s/file-%05d" % (d, i), "w").close()
for i in range(20):
    os.mkdir("%s/dir-%02d" % (d, i))
' "$M1/big"

# --- 1. A lists names only: right, and no stat per entry at the bricks ---
# distribute's opendir follows the kind of the graph's last listing (a
# fresh graph's first opendir still fetches a readdirplus batch with the
# open): one small listing first, as any use of a mount does.
TEST sh -c "ls -f '$M0' > /dev/null"
drop_caches
E0=$(posix_sum readdir_entries)
S0=$(posix_sum readdir_stats)
TEST [ -n "$E0" ] && [ -n "$S0" ]
EXPECT "2002" sh -c "ls -f '$M0/big' | wc -l"
EXPECT "0" sh -c "ls -f '$M0/big' | grep -v '^\\.\\.\\?\$' | sort | uniq -d | wc -l"
EXPECT "1980 20 0" scan "$M0/big"
EXPECT "20" sh -c "find '$M0/big' -mindepth 1 -maxdepth 1 -type d | wc -l"
EXPECT "1980" sh -c "find '$M0/big' -mindepth 1 -maxdepth 1 -type f | wc -l"
TEST [ "$(posix_sum readdir_entries)" -ge "$((E0 + 2000))" ]
EXPECT "$S0" posix_sum readdir_stats

# --- 2. B lists with attributes: the bricks stat each entry ---
drop_caches
EXPECT "1980 20 0" scan "$M1/big"
TEST [ "$(posix_sum readdir_stats)" -ge "$((S0 + 2000))" ]
