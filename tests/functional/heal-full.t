#!/usr/bin/env bash
# volume heal VOL full (mortard/cmd-heal.c, heal.c; the crawl in
# mortarfsd/heal/heal-crawl.c) on a 1 x 3 replicated volume:
#  - a tree (nested directories, files of a few sizes and modes, an
#    owner, a sparse file, a symlink, a hard link, an empty directory)
#    written through a mount, which is then gone (nothing heals on
#    access); brick 2 stopped and its directory emptied behind Mortar's
#    back (the root and its volume id kept, as a new disk would be), then
#    started: no record anywhere says it misses anything, so index heal
#    does nothing;
#  - `heal VOL full`: GlusterFS's message; every copy ends identical
#    (names, types, modes, owners, sizes, contents, symlink targets,
#    GFIDs), the hard link is one inode again, `heal info` shows 0
#    entries, the request file is gone and `heal VOL status` says when
#    the crawl finished;
#  - the daemon killed with -9 in the middle of a crawl of a larger tree,
#    once as soon as it crawls and once while it walks brick 1
#    (full_crawl=1, the request still there): restarted
#    by mortard, it goes on from the crawl's checkpoint (hf.full.pos:
#    the brick and the directory it was in; the log says where, and a
#    brick walked before it is not walked again), removes the request
#    and the checkpoint when done, and the copies are identical;
#  - bad input: a volume that does not exist, one without replication,
#    a stopped one, extra words, the daemon disabled: their errors and no
#    request written.
# Fails without the crawl: `heal VOL full` answered "not supported yet"
# and brick 2 stays empty.
# TIMEOUT: 600
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
for i in 0 1 2; do track_brick hf brick$i; done
track_brick pv brick0
_T_PIDFILES+=("$T/run/heal/hf.pid")
REQ="$T/run/heal/hf.full"

shd_pid() {
    cat "$T/run/heal/hf.pid" 2> /dev/null
}
shd_up() {
    local p
    p="$(shd_pid)"
    [ -n "$p" ] && proc_alive "$p" || echo N
}
# new_pid FILE OLD: Y once FILE names a live process other than OLD.
new_pid() {
    local p
    p="$(cat "$1" 2> /dev/null)"
    if [ -n "$p" ] && [ "$p" != "$2" ]; then proc_alive "$p"; else echo N; fi
}
state_of() {
    sed -n "s/^$1=//p" "$T/run/heal/hf.state" 2> /dev/null
}
same3() {
    same_bricks "$B/h0" "$B/h1" "$B/h2"
}
# empty_brick N: brick N stopped, its directory emptied as a new disk's
# would be (only the root and its volume id left), started again.
empty_brick() {
    local n="$1" pid x
    pid="$(cat "$T/run/hf-brick$n.pid")"
    # Away first, so that the supervisor cannot restart it meanwhile.
    mv "$B/h$n" "$B/h$n.away" || return 1
    kill -9 "$pid"
    [ "$(wait_dead "$pid")" = dead ] || return 1
    find "$B/h$n.away" -mindepth 1 -maxdepth 1 -exec rm -rf {} + || return 1
    for x in $(getfattr --absolute-names -m 'trusted\.' "$B/h$n.away" \
        2> /dev/null | grep '^trusted\.' |
        grep -v '^trusted\.mortar\.volume-id$'); do
        setfattr -x "$x" "$B/h$n.away" || return 1
    done
    mv "$B/h$n.away" "$B/h$n" || return 1
    mcli volume start hf force > /dev/null || return 1
}
wait_dead() {
    local i
    for i in $(seq 1 100); do
        [ "$(proc_alive "$1")" = N ] && { echo dead; return; }
        sleep 0.1
    done
    echo alive
}
brick_up() {
    new_pid "$T/run/hf-brick$1.pid" "$2"
}
# crawl_done_after T: Y once the progress file says a crawl finished
# after T (unix seconds) and none runs.
crawl_done_after() {
    local at
    at="$(state_of crawl_done_at)"
    [ "$(state_of full_crawl)" = 0 ] && [ "${at:-0}" -gt "$1" ] &&
        echo Y || echo N
}
# names N: the objects brick N holds (not .mortar).
names() {
    (cd "$B/h$1" && find . -path ./.mortar -prune -o -mindepth 1 -print |
        wc -l)
}

TEST start_mortard
TEST mkdir -p "$B"
TEST mcli volume create hf replica 3 127.0.0.1:$B/h0 127.0.0.1:$B/h1 \
    127.0.0.1:$B/h2 force
EXPECT_MATCH "perform full self heal on volume hf has been unsuccessful:.*\
Volume hf is not started\." mcli2 volume heal hf full
TEST test ! -e "$REQ"
TEST mcli volume start hf
EXPECT_WITHIN 20 "Y" shd_up
TEST mount_volume hf "$M0"

# The tree.
TEST mkdir -p "$M0/d1/d2/d3/d4" "$M0/empty"
TEST chmod 750 "$M0/d1/d2"
TEST touch "$M0/zero"
TEST sh -c "echo small > '$M0/small'"
TEST sh -c "head -c 200000 /dev/urandom > '$M0/d1/mid'"
TEST chmod 600 "$M0/d1/mid"
TEST chown 1234:5678 "$M0/d1/mid"
TEST sh -c "head -c 3000000 /dev/urandom > '$M0/d1/d2/big'"
TEST truncate -s 8M "$M0/sparse"
TEST sh -c "printf data | dd of='$M0/sparse' bs=1 seek=4194304 \
    conv=notrunc 2> /dev/null"
TEST ln -s d1/mid "$M0/link"
TEST ln "$M0/small" "$M0/d1/hard"
TEST sh -c "for i in \$(seq 1 30); do echo f\$i > '$M0/d1/d2/d3/d4/f'\$i; \
    done"
TEST umount_client "$M0"
EXPECT_WITHIN 60 "0" heal_entries hf
EXPECT_WITHIN 20 "ok" same3
N0=$(names 0)
TEST test "$N0" -gt 40

# Brick 2 emptied behind Mortar's back: nothing records that it misses
# anything, so a round of index heal leaves it empty.
OLD2=$(cat "$T/run/hf-brick2.pid")
TEST empty_brick 2
EXPECT_WITHIN 20 "Y" brick_up 2 "$OLD2"
EXPECT "0" names 2
TEST test -n "$(getfattr --absolute-names --only-values -e hex -n \
    trusted.mortar.volume-id "$B/h2" 2> /dev/null)"
R=$(state_of rounds)
EXPECT_MATCH "index self heal on volume hf has been successful" \
    mcli volume heal hf
# rounds_past N: Y once the daemon read its indexes again after round N.
rounds_past() {
    [ "$(state_of rounds)" -gt "$1" ] 2> /dev/null && echo Y || echo N
}
EXPECT_WITHIN 30 "Y" rounds_past "$((R + 1))"
EXPECT "0" heal_entries hf
EXPECT "0" names 2

# The crawl fills it.
first_line() {
    "$@" | head -n 1
}
xml_flat() {
    mcli --xml "$@" | tr -d ' \n'
}
same_inode() {
    local a b
    a="$(stat -c %i "$1" 2> /dev/null)"
    b="$(stat -c %i "$2" 2> /dev/null)"
    [ -n "$a" ] && [ "$a" = "$b" ] && echo same || echo differ
}
EXPECT_MATCH "^Launching heal operation to perform full self heal on \
volume hf has been successful $" first_line mcli volume heal hf full
EXPECT_WITHIN 180 "ok" same3
EXPECT "$N0" names 2
EXPECT_WITHIN 60 "0" heal_entries hf
EXPECT_WITHIN 60 "N" sh -c "test -e '$REQ' && echo Y || echo N"
# The progress file is rewritten once a second.
EXPECT_WITHIN 10 "Y" crawl_done_after 0
TEST test "$(state_of crawl_visited)" -ge "$N0"
EXPECT "0" state_of crawl_failed
EXPECT_MATCH "Full crawl: last finished at .*, [0-9]+ objects visited" \
    mcli volume heal hf status
EXPECT_MATCH "<fullCrawl><state>finished</state>" xml_flat volume heal hf \
    status
# Content, owner, the hole, the symlink, the hard link on brick 2 itself.
EXPECT "1234:5678 600" stat -c '%u:%g %a' "$B/h2/d1/mid"
EXPECT "data" sh -c "dd if='$B/h2/sparse' bs=1 skip=4194304 count=4 \
    2> /dev/null"
EXPECT "d1/mid" readlink "$B/h2/link"
EXPECT "same" same_inode "$B/h2/small" "$B/h2/d1/hard"
EXPECT "f30" cat "$B/h2/d1/d2/d3/d4/f30"

# A larger tree, and the daemon killed in the middle of its crawl.
TEST mount_volume hf "$M0"
TEST python3 -c "
import os
for d in range(40):
    p = os.path.join('$M0', 'big', 'b%02d' % d, 'sub')
    os.makedirs(p)
    for f in range(40):
        with open(os.path.join(p, 'f%02d' % f), 'w') as fh:
            fh.write('%d/%d\n' % (d, f) * 50)
"
TEST umount_client "$M0"
EXPECT_WITHIN 60 "0" heal_entries hf
N0=$(names 0)
OLD2=$(cat "$T/run/hf-brick2.pid")
TEST empty_brick 2
EXPECT_WITHIN 20 "Y" brick_up 2 "$OLD2"
SHD=$(shd_pid)
DONE=$(state_of crawl_done_at)
TEST mcli volume heal hf full
# Killed as soon as it crawls (brick 0's walk creating names on brick 2:
# each is blamed before it is made, so a copy the kill leaves empty is
# never taken for a good one), then again below.
EXPECT_WITHIN 60 "1" state_of full_crawl
TEST kill -9 "$SHD"
EXPECT_WITHIN 30 "Y" new_pid "$T/run/heal/hf.pid" "$SHD"
SHD=$(shd_pid)
# Killed while it walks brick 1, once brick 0's walk healed brick 2
# without a failure (the first objects may wait for the daemon to see
# brick 2 back: that crawl is incomplete and runs again).
crawling_brick() {
    if [ "$(state_of full_crawl)" = 1 ]; then
        echo "$(state_of crawl_brick)/$(state_of crawl_failed)"
    else
        echo -
    fi
}
EXPECT_WITHIN 120 "1/0" crawling_brick
TEST kill -STOP "$SHD"
# Stopped before the crawl was done: its request is still there, and
# its checkpoint (written at most once a second, brick 0's walk took
# longer) names the brick and the directory it was in.
TEST test -e "$REQ"
TEST test -e "$REQ.pos"
ckpt_of() {
    sed -n "s/^$1=//p" "$REQ.pos"
}
CK_BRICK=$(ckpt_of brick_path)
CK_POS=$(ckpt_of position)
CK_N=$(ckpt_of brick)
TEST test -n "$CK_BRICK"
TEST kill -9 "$SHD"
EXPECT_WITHIN 30 "Y" new_pid "$T/run/heal/hf.pid" "$SHD"
# after_resume: the new daemon's log from its resumption on.
after_resume() {
    awk '/full crawl resumed: /{ buf = "" } { buf = buf $0 "\n" }
        END { printf "%s", buf }' "$T/log/heal/hf.log"
}
resumed_there() {
    grep -qF "full crawl resumed: brick $CK_BRICK at '$CK_POS'" \
        "$T/log/heal/hf.log" && echo Y || echo N
}
walked_after_resume() {
    after_resume | grep -c "full crawl of $B/$1 walked"
}
EXPECT_WITHIN 30 "Y" resumed_there
EXPECT_WITHIN 300 "ok" same3
EXPECT "$N0" names 2
EXPECT_WITHIN 60 "0" heal_entries hf
EXPECT_WITHIN 60 "N" sh -c "test -e '$REQ' && echo Y || echo N"
EXPECT_WITHIN 10 "Y" crawl_done_after "$DONE"
TEST test ! -e "$REQ.pos"
# Brick 0 was not walked again after the resumption at brick 1.
if [ "$CK_N" = 1 ]; then
    EXPECT "0" walked_after_resume h0
fi
EXPECT "1" walked_after_resume h2

# Bad input: errors, and no request written.
TEST mkdir -p "$B/plain"
TEST mcli volume create pv 127.0.0.1:$B/plain force
EXPECT_MATCH "full self heal on volume nov has been unsuccessful:.*\
Volume nov does not exist" mcli2 volume heal nov full
EXPECT_MATCH "Volume pv is not of type replicate" mcli2 volume heal pv full
EXPECT_MATCH "Usage: volume heal" mcli2 volume heal hf full now
TEST mcli volume heal hf disable
EXPECT_WITHIN 20 "N" shd_up
EXPECT_MATCH "full self heal on volume hf has been unsuccessful:.*\
Self-heal daemon is not running" mcli2 volume heal hf full
TEST test ! -e "$REQ"
