#!/usr/bin/env bash
# cluster/replicate with two clients writing the same blocks of one file
# at once (hand-written volfiles, three bricks): the transactions' locks
# (inodelk in the replicate domain, eager batches included) order the
# writes the same way on every brick, so the three copies end identical
# and clean (no pending, no dirty). Then with eager-lock off. The mounts
# send every FLUSH down (flush-behind off), so close(2) ends the batch.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

# hammer FILE LETTER: 400 writes of 4 KiB of LETTER over the first 16
# blocks of FILE, in an order of its own.
hammer() {
    python3 - "$1" "$2" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
block = sys.argv[2].encode() * 4096
for i in range(400):
    os.pwrite(fd, block, ((i * 7 + ord(sys.argv[2])) % 16) * 4096)
os.close(fd)
PY
}

# same3 PATH: "ok" if the three copies are identical.
same3() {
    cmp -s "$T/bricks/b0/$1" "$T/bricks/b1/$1" \
        && cmp -s "$T/bricks/b0/$1" "$T/bricks/b2/$1" && echo ok || echo differ
}

# rep_xattrs PATH: trusted.mortar.rep.* names on any brick, or "none".
rep_xattrs() {
    local i out=""
    for i in 0 1 2; do
        out="$out$(getfattr --absolute-names -d -m 'trusted\.mortar\.rep\.' \
            "$T/bricks/b$i/$1" 2> /dev/null | sed -n 's/=.*//p')"
    done
    [ -n "$out" ] && echo "$out" || echo none
}

TEST rep3_bricks
for eager in on off; do
    rep3_vol "$T/vol/rep-$eager.vol" "eager-lock $eager"
    TEST mount_volfile "$T/vol/rep-$eager.vol" "$M0" -o flush-behind=off
    TEST mount_volfile "$T/vol/rep-$eager.vol" "$M1" -o flush-behind=off
    hammer "$M0/f-$eager" A &
    pa=$!
    hammer "$M1/f-$eager" B &
    pb=$!
    TEST wait $pa
    TEST wait $pb
    TEST umount_client "$M0"
    TEST umount_client "$M1"
    EXPECT "ok" same3 "f-$eager"
    EXPECT "none" rep_xattrs "f-$eager"
    EXPECT "65536" stat -c %s "$T/bricks/b2/f-$eager"
done
