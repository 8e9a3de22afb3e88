#!/usr/bin/env bash
# Replicate's compound requests on the wire (issue 21, protocol 8): a
# replica 3 volume (hand-written volfile, bricks on 127.0.0.1), 100 files
# created and written 4 KiB each through the mount. Brick b0's fop
# counters (its /metrics, at the translator right under protocol/server,
# so one count per request that crossed the wire) give the INODELK +
# ENTRYLK + XATTROP requests per file:
#   before (each part on its own, protocol 7 behaviour): 8 per file
#   after  (lock + pre-op, post-op + unlock compounds):   4 per file
# (entrylk+pre-op and post-op+unlock for the create, inodelk+pre-op and
# post-op+unlock for the write). The test asserts at most 5 per file, so
# it fails without the compounds. Then correctness: the three bricks'
# trees are identical; b2 killed mid-workload (50 more files and 50
# rewrites), back, healed on access through a fresh mount, identical.
# Then a fresh mount's lookups of the 100 files send no XATTROP (the
# records read rides on the LOOKUP, protocol 9). Last, 100 renames within
# one directory: 4 such requests per rename (6 before), and 100 into
# another directory: 4 (8 before), at most 5 asserted each time; the
# trees identical after them and after renaming back.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT MPORT

# fop_reqs RE: requests of the fops matching RE b0 received so far.
fop_reqs() {
    curl -sS --max-time 10 "http://127.0.0.1:${MPORT[0]}/metrics" \
        | awk -v re="fop=\"($1)\"" \
              '/^mortar_fop_total\{/ && /xlator="b0"/ && $0 ~ re { n += $NF }
               END { print n + 0 }'
}

# lock_reqs: INODELK + ENTRYLK + XATTROP requests b0 received so far.
lock_reqs() {
    fop_reqs 'inodelk|entrylk|xattrop'
}

# lock_reqs_per N WHAT CMD: runs CMD (N operations of WHAT), says the
# lock/pre-op/post-op requests per operation b0 received, and asserts
# 1 to 5 (the counts above; without the compounds: more than 5).
lock_reqs_per() {
    local before after per
    before=$(lock_reqs)
    TEST sh -c "$3"
    after=$(lock_reqs)
    per=$(( (after - before) / $1 ))
    echo "# lock/pre-op/post-op requests per $2 on b0: $per ($before -> $after)"
    TEST test "$per" -ge 1
    TEST test "$per" -le 5
}

# same_trees: "ok" if b0, b1 and b2 hold the same names and contents.
same_trees() {
    local b
    for b in b1 b2; do
        diff -r "$T/bricks/b0" "$T/bricks/$b" -x .mortar > /dev/null \
            || { echo "b0 and $b differ"; return; }
    done
    echo ok
}

for i in 0 1 2; do
    alloc_port port
    alloc_port mport
    RPORT[$i]=$port
    MPORT[$i]=$mport
    mkdir -p "$T/bricks/b$i"
    TEST start_brick "b$i" "$T/bricks/b$i" "$port" --metrics-port "$mport"
done
rep3_vol "$T/vol/rep3.vol"
TEST mount_volfile "$T/vol/rep3.vol" "$M0"
TEST mkdir "$M0/d"
TEST dd if=/dev/urandom of="$T/blk" bs=4k count=1 status=none

lock_reqs_per 100 file \
    "for i in \$(seq 1 100); do cp '$T/blk' '$M0/d/f'\$i; done"
EXPECT "ok" same_trees

# b2 killed mid-workload; the rest goes on.
TEST sh -c "for i in \$(seq 101 125); do cp '$T/blk' '$M0/d/f'\$i; done"
TEST kill_brick b2
TEST sh -c "for i in \$(seq 126 150); do cp '$T/blk' '$M0/d/f'\$i; done"
TEST sh -c "for i in \$(seq 1 50); do echo re\$i >> '$M0/d/f'\$i; done"
TEST test ! -e "$T/bricks/b2/d/f150"
TEST start_fsd brick-b2 --volfile "$T/vol/b2.vol" --metrics-port "${MPORT[2]}"
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/rep3.vol" "$M0"
# Heal on access: read everything through the fresh mount.
heal_read() {
    cat "$M0"/d/* > /dev/null 2>&1
    ls -lR "$M0" > /dev/null 2>&1
    same_trees
}
EXPECT_WITHIN 60 "ok" heal_read
EXPECT "150" sh -c "ls '$T/bricks/b2/d' | wc -l"
TEST cmp "$T/bricks/b0/d/f7" "$T/bricks/b2/d/f7"

# Lookups carry their records read (protocol 9): a fresh mount stats the
# 100 files, one LOOKUP each on b0 and no XATTROP of their own (one each
# without: the test allows 10 for the directories' refreshes).
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/rep3.vol" "$M0"
LK0=$(fop_reqs lookup)
XO0=$(fop_reqs xattrop)
TEST sh -c "for i in \$(seq 1 100); do stat '$M0/d/f'\$i > /dev/null; done"
LK1=$(fop_reqs lookup)
XO1=$(fop_reqs xattrop)
echo "# 100 stats on b0: $((LK1 - LK0)) lookups, $((XO1 - XO0)) xattrops"
TEST test "$((LK1 - LK0))" -ge 100
TEST test "$((XO1 - XO0))" -le 10

# A rename within one directory (two names locked): its first lock
# carries the pre-op, its post-op the first unlock, and the second unlock
# goes beside it: 4 lock/pre-op/post-op requests per rename on b0 (6 with
# each part on its own). The test allows 5, so it fails without.
lock_reqs_per 100 rename \
    "for i in \$(seq 1 100); do mv '$M0/d/f'\$i '$M0/d/g'\$i; done"
EXPECT "ok" same_trees
EXPECT "100" sh -c "ls '$T/bricks/b2/d' | grep -c '^g'"
# The names are free again: each is renamed back at once (a lock left
# held would make the next client wait for its owner to go).
TEST sh -c "for i in \$(seq 1 100); do mv '$M0/d/g'\$i '$M0/d/f'\$i; done"
EXPECT "ok" same_trees
EXPECT "0" sh -c "ls '$T/bricks/b0/d' | grep -c '^g'"

# A rename into another directory: each name's lock carries its own
# directory's pre-op, each directory's post-op its name's unlock: 4
# requests per rename on b0 (8 with each part on its own).
TEST mkdir "$M0/e"
lock_reqs_per 100 "rename across directories" \
    "for i in \$(seq 1 100); do mv '$M0/d/f'\$i '$M0/e/f'\$i; done"
EXPECT "ok" same_trees
EXPECT "100" sh -c "ls '$T/bricks/b2/e' | wc -l"
TEST sh -c "for i in \$(seq 1 100); do mv '$M0/e/f'\$i '$M0/d/f'\$i; done"
EXPECT "ok" same_trees
