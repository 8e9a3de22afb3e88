#!/usr/bin/env bash
# Split-brain, made on purpose, listed and resolved through mortard
# (mortard/cmd-split-brain.c, mortarfsd/heal/heal-splitlist.c and
# heal-resolve.c):
#  - a replica 2 volume with cluster.quorum-type none, the self-heal
#    daemon and heal on access off: files written with brick 1 down,
#    then rewritten differently with brick 0 down, end blamed by each
#    copy: reading one through a mount answers EIO;
#  - the daemon, enabled, lists them in `heal V info split-brain` (and
#    `info summary` counts them);
#  - bigger-file, latest-mtime, source-brick with a file and source-brick
#    without one (two files) each resolve theirs: both copies identical,
#    the one the policy names, and `info split-brain` empty after;
#  - bad input, nothing changed: no such volume, not replicate, not
#    started, a relative path, "..", a brick not in the volume, a file
#    not in split-brain, a missing file, bigger-file on a directory,
#    unknown words.
# TIMEOUT: 400
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
for i in 0 1; do track_brick sb brick$i; done
_T_PIDFILES+=("$T/run/heal/sb.pid")

shd_up() {
    local p
    p="$(cat "$T/run/heal/sb.pid" 2> /dev/null)"
    [ -n "$p" ] && proc_alive "$p" || echo N
}
# down N: brick N stops and stays down; up N: back.
down() {
    brick_away sb "brick$1" "$B/s$1"
}
up() {
    brick_back sb "$B/s$1"
}
# split_count N: "Number of entries in split-brain" of brick N.
split_count() {
    mcli volume heal sb info split-brain | awk \
        -v b="Brick 127.0.0.1:$B/s$1" '$0 == b { on = 1; next }
        on && /^Number of entries in split-brain:/ { print $6; exit }'
}
# same F: "ok" if both bricks' copies of F are identical.
same() {
    cmp -s "$B/s0/$1" "$B/s1/$1" && echo ok || echo differ
}

TEST mkdir -p "$B"
TEST mcli volume create sb replica 2 127.0.0.1:$B/s0 127.0.0.1:$B/s1 force
TEST mcli volume set sb cluster.quorum-type none
TEST mcli volume set sb cluster.self-heal-daemon off
TEST mcli volume set sb cluster.data-self-heal off
TEST mcli volume set sb cluster.metadata-self-heal off
TEST mcli volume set sb cluster.entry-self-heal off
TEST mcli volume start sb
TEST mount_volume sb "$M0"
TEST mkdir "$M0/d"
TEST sh -c "for f in f1 f2 f3 f4 f5 ok p1 p2; do echo orig > '$M0/'\$f; done"

# Brick 1 misses the first rewrite: brick 0 blames it.
TEST down 1
TEST sh -c "echo short > '$M0/f1'"
TEST sh -c "for f in f2 f3 f4 f5; do echo from-s0-\$f > '$M0/'\$f; done"
TEST up 1
EXPECT_WITHIN 60 "Y" brick_reaches "$B/s1" p1
# Brick 0 misses the second: brick 1 blames it.
TEST down 0
# (Its rewrites come after the first ones: later mtimes, to the ns.)
TEST sh -c "echo a-much-longer-line-on-s1 > '$M0/f1'"
TEST sh -c "for f in f2 f3 f4 f5; do echo from-s1-\$f > '$M0/'\$f; done"
TEST up 0
EXPECT_WITHIN 60 "Y" brick_reaches "$B/s0" p2
EXPECT "from-s0-f3" cat "$B/s0/f3"
EXPECT "from-s1-f3" cat "$B/s1/f3"
# Replicate refuses to pick a copy: EIO.
TEST umount_client "$M0"
TEST mount_volume sb "$M0"
EXPECT "Input/output error" errno_of cat "$M0/f2"

# The daemon lists them.
TEST mcli volume heal sb enable
EXPECT_WITHIN 20 "Y" shd_up
TEST mcli volume heal sb
EXPECT_WITHIN 120 "5" split_count 0
EXPECT_WITHIN 60 "5" split_count 1
mcli volume heal sb info split-brain > "$T/sb.out"
EXPECT "10" grep -c '^<gfid:' "$T/sb.out"
EXPECT "2" grep -c '^Status: Connected$' "$T/sb.out"
EXPECT_MATCH "Number of entries in split-brain: 5" \
    mcli volume heal sb info summary
EXPECT_MATCH "<numberOfEntries>5</numberOfEntries>" \
    mcli --xml volume heal sb info split-brain

# Bad input first, while everything is in split-brain: nothing changes.
sums() {
    cat "$B"/s0/f* "$B"/s1/f* | md5sum
}
BEFORE=$(sums)
EXPECT_MATCH "Volume nope does not exist" \
    mcli2 volume heal nope split-brain bigger-file /f1
TEST mcli volume create dv 127.0.0.1:$B/dv force
EXPECT_MATCH "is not of type replicate" \
    mcli2 volume heal dv split-brain bigger-file /f1
TEST mcli volume create stopped replica 2 127.0.0.1:$B/x0 \
    127.0.0.1:$B/x1 force
EXPECT_MATCH "is not started" \
    mcli2 volume heal stopped split-brain latest-mtime /f1
EXPECT_MATCH "must be absolute path" \
    mcli2 volume heal sb split-brain bigger-file f1
EXPECT_MATCH "'..' are not allowed" \
    mcli2 volume heal sb split-brain bigger-file /d/../../etc/passwd
EXPECT_MATCH "No such brick available in the volume" \
    mcli2 volume heal sb split-brain source-brick 127.0.0.1:/nope /f1
EXPECT_MATCH "Healing /ok failed: File not in split-brain." \
    mcli2 volume heal sb split-brain latest-mtime /ok
EXPECT_MATCH "Lookup failed on /nope:No such file or directory" \
    mcli2 volume heal sb split-brain bigger-file /nope
EXPECT_MATCH "'bigger-file' not a valid option for directories." \
    mcli2 volume heal sb split-brain bigger-file /d
EXPECT_MATCH "Usage: volume heal <VOLNAME> split-brain" \
    mcli2 volume heal sb split-brain biggest /f1
TEST ! mcli volume heal sb split-brain bigger-file /f1 extra
EXPECT "$BEFORE" sums

# Each policy resolves its file.
EXPECT "Healed /f1." mcli volume heal sb split-brain bigger-file /f1
EXPECT "ok" same f1
EXPECT "a-much-longer-line-on-s1" cat "$B/s0/f1"
EXPECT "Healed /f2." mcli volume heal sb split-brain latest-mtime /f2
EXPECT "ok" same f2
EXPECT "from-s1-f2" cat "$B/s0/f2"
EXPECT "Healed /f3." mcli volume heal sb split-brain source-brick \
    127.0.0.1:$B/s0 /f3
EXPECT "ok" same f3
EXPECT "from-s0-f3" cat "$B/s1/f3"
# Without a file: every entry of the set that the list holds (f4, f5).
mcli volume heal sb split-brain source-brick 127.0.0.1:$B/s0 \
    > "$T/src.out"
EXPECT "2" grep -c '^Healed gfid:' "$T/src.out"
EXPECT_MATCH "Number of healed entries: 2" cat "$T/src.out"
EXPECT "ok" same f4
EXPECT "ok" same f5
EXPECT "from-s0-f5" cat "$B/s1/f5"
EXPECT "0" split_count 0
EXPECT "0" split_count 1
EXPECT "from-s1-f2" cat "$M0/f2"
EXPECT_MATCH "Healing /f1 failed: File not in split-brain." \
    mcli2 volume heal sb split-brain bigger-file /f1

TEST umount_client "$M0"
