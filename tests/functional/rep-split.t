#!/usr/bin/env bash
# cluster/replicate's split-brain resolution over a hand-written replica 2
# volfile (quorum-type none, so each brick alone takes writes):
#  - files written with b1 down, then with b0 down, are in data
#    split-brain: reads answer EIO, mortar.heal answers "split-brain";
#  - mortar.heal.resolve.bigger-file heals f from the larger copy,
#    .source-brick.c0 heals h from c0, .latest-mtime on a clean file
#    answers "not-split-brain"; an unknown child fails (EINVAL). A lookup
#    or stat of a file in split-brain is answered (GlusterFS's way), so
#    the keys work by name (getfattr) as through fds opened before;
#  - a mount with favorite-child-policy mtime reads g: the first read
#    may fail, the heal it starts makes every copy the newest one.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

# rep2_vol FILE [OPTION...]: clients c0, c1 to bricks b0, b1, replicate
# "rep" on top with quorum-type none and the options given.
rep2_vol() {
    local i vf="$1" o
    shift
    : > "$vf"
    for i in 0 1; do
        printf '%s\n' "volume c$i" " type protocol/client" \
            " option remote-host $H0" " option remote-port ${RPORT[$i]}" \
            " option remote-subvolume b$i" end-volume >> "$vf"
    done
    printf '%s\n' "volume rep" " type cluster/replicate" \
        " option quorum-type none" >> "$vf"
    for o in "$@"; do
        printf ' option %s\n' "$o" >> "$vf"
    done
    printf '%s\n' " subvolumes c0 c1" end-volume >> "$vf"
}

rep2_start() {
    local i port
    for i in 0 1; do
        alloc_port port || return 1
        RPORT[$i]=$port
        mkdir -p "$T/bricks/b$i"
        start_brick "b$i" "$T/bricks/b$i" "$port" || return 1
    done
    # No heal on access while the split-brains are made.
    rep2_vol "$T/vol/noheal.vol" "data-self-heal off" \
        "metadata-self-heal off" "entry-self-heal off"
    rep2_vol "$T/vol/policy.vol" "favorite-child-policy mtime"
    # A long attribute timeout: the resolve keys go through fds (fdkey),
    # and the kernel checks permission for a getxattr; with the
    # attributes expired it first asks GETATTR, which replicate answers
    # EIO for a split-brain, and the key never reaches replicate (seen on
    # a loaded machine, where the default 1 s passes between the steps).
    mount_volfile "$T/vol/noheal.vol" "$M0" \
        --fuse-opt attribute-timeout=600
}

key() {
    (cd "$M0" && getfattr --only-values -n "$1" "$2" 2>&1)
}

# fdkey KEY N: the key through this shell's fd N (a plain getxattr).
fdkey() {
    python3 -c 'import os, sys
try:
    sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode())
except OSError as e:
    print(os.strerror(e.errno)); sys.exit(1)' "/proc/$$/fd/$2" "$1"
}

# same FILE: "ok" when both bricks hold the same bytes as FILE.
same() {
    cmp -s "$T/bricks/b0/$1" "$T/bricks/b1/$1" && echo ok
}

# records BRICK FILE: the trusted.mortar.rep.* xattrs of FILE ("" when
# clean).
records() {
    getfattr --absolute-names -h -d -m 'trusted\.mortar\.rep\.' \
        "$T/bricks/$1/$2" 2> /dev/null | grep -v '^#' | tr -d '\n'
}

TEST rep2_start
TEST sh -c "for f in f g h; do echo base > '$M0'/\$f; done"
exec 5< "$M0/f" 6< "$M0/h"
TEST kill_brick b1
TEST sh -c "for f in f g h; do echo 'b0 side, the longer one' > '$M0'/\$f; \
    done"
TEST start_fsd brick-b1 --volfile "$T/vol/b1.vol"
EXPECT_WITHIN 20 "clean" key mortar.heal .
TEST kill_brick b0
TEST sh -c "for f in f g h; do echo 'b1 side' > '$M0'/\$f; done"
TEST start_fsd brick-b0 --volfile "$T/vol/b0.vol"
EXPECT_WITHIN 20 "split-brain" fdkey mortar.heal 5
TEST ! cat "$M0/f"
# Named all the same: stat, and the key by name (getfattr stats first).
TEST stat "$M0/h"
EXPECT "split-brain" key mortar.heal h
EXPECT "Input/output error" errno_of cat "$M0/h"

# The resolve keys.
EXPECT "not-split-brain" key mortar.heal.resolve.latest-mtime .
EXPECT "Invalid argument" fdkey mortar.heal.resolve.source-brick.c9 5
EXPECT "healed" fdkey mortar.heal.resolve.bigger-file 5
EXPECT "ok" same f
EXPECT "b0 side, the longer one" cat "$M0/f"
EXPECT "" records b0 f
EXPECT "" records b1 f
EXPECT "healed" fdkey mortar.heal.resolve.source-brick.c0 6
EXPECT "b0 side, the longer one" cat "$M0/h"
EXPECT "ok" same h
exec 5<&- 6<&-

# favorite-child-policy: the heal a read starts resolves g by mtime.
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/policy.vol" "$M0"
EXPECT_WITHIN 30 "b1 side" cat "$M0/g"
EXPECT "ok" same g
EXPECT "" records b0 g
EXPECT "" records b1 g
TEST grep -q "split-brain resolved by favorite-child-policy mtime" \
    "$T"/log/*.log
