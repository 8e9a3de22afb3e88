#!/usr/bin/env bash
# performance/write-behind and listings: a file written and closed (the
# WRITE and the FLUSH both answered early) and listed at once with
# readdirplus (ls -l, find) must show its new size and content, not the
# attributes the brick had before the write reached it (the kernel keeps
# a listing's attributes: a size 0 from it made the next read of the
# file end at 0 bytes). Three bricks under replicate, as the CI failure
# that found it (mgmt-replace-brick-peers.t), where a write takes long
# enough to still be pending when the listing is read; the unit test
# test_readdir_drops_pending_attrs checks the rule without timing.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

vf="$T/vol/wb-listing.vol"
: > "$vf"
for i in 0 1 2; do
    TEST alloc_port "P$i"
    mkdir -p "$T/bricks/b$i"
    eval "port=\$P$i"
    TEST start_brick "b$i" "$T/bricks/b$i" "$port"
    printf '%s\n' "volume c$i" " type protocol/client" \
        " option remote-host $H0" " option remote-port $port" \
        " option remote-subvolume b$i" end-volume >> "$vf"
done
printf '%s\n' "volume rep" " type cluster/replicate" \
    " subvolumes c0 c1 c2" end-volume \
    "volume wb" " type performance/write-behind" " subvolumes rep" \
    end-volume "volume qr" " type performance/quick-read" " subvolumes wb" \
    end-volume >> "$vf"
TEST mount_volfile "$vf" "$M0"

# Each round: a few files of various sizes, a 1.5 MB one (the writes of
# the next file then queue behind replicate's batch), the file under
# test, then a listing with attributes and the reads.
stale_rounds() {
    local n=0 k d
    for k in $(seq 1 40); do
        d="$M0/r$k"
        mkdir -p "$d/a" || return 1
        for i in 1 2 3 4 5; do echo "a$i" > "$d/a/f$i"; done
        head -c 1500000 /dev/urandom > "$d/a/big"
        echo top > "$d/top"
        find "$d" -printf '%p %s\n' > /dev/null
        if [ "$(stat -c %s "$d/top")" != 4 ] ||
           [ "$(cat "$d/top")" != top ]; then
            n=$((n + 1))
            echo "round $k: top reads as $(stat -c %s "$d/top") bytes" >&2
        fi
    done
    echo "$n"
}
EXPECT "0" stale_rounds
TEST umount "$M0"
