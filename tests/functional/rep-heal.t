#!/usr/bin/env bash
# cluster/replicate's self-heal over a hand-written replica 3 volfile:
#  - brick b2 is killed (-9) while the mount writes, appends, truncates,
#    deletes, renames, chmods, chowns, sets and removes xattrs, makes and
#    removes directories, symlinks and hard links, and makes a 64 MiB
#    sparse file with 1 MiB of data;
#  - b2 comes back; reading the tree through a fresh mount (heal on
#    access) leaves every brick identical: names, types, modes, owners,
#    file mtimes, sizes, contents, user xattrs, GFIDs, hard links; no
#    trusted.mortar.rep.* record and an empty heal index on every brick;
#  - the sparse file keeps its holes on the healed brick; of an 8 MiB
#    file rewritten in one 4 KiB block, only that block's 64 KiB are
#    copied (diff: RCHECKSUM digests compared);
#  - the mortar.heal key (getfattr through the mount) heals one file now
#    and answers "healed", then "clean"; with a brick down, "pending";
#  - a 32 MiB file written at random places while it heals ends
#    identical on every brick.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

# tree BRICK: one line per name under the brick (not .mortar): type,
# mode, owner, size, link count, mtime for non-directories, GFID, user
# xattrs.
tree() {
    (cd "$T/bricks/$1" && find . -path ./.mortar -prune -o -print \
        | sort | while read -r p; do
            if [ -d "$p" ]; then
                printf '%s %s' "$p" "$(stat -c '%F %a %u:%g' "$p")"
            else
                printf '%s %s' "$p" "$(stat -c '%F %a %u:%g %s %h %Y' "$p")"
            fi
            printf ' %s %s\n' \
                "$(getfattr --absolute-names -h -n trusted.mortar.gfid \
                    -e hex "$p" 2> /dev/null | sed -n 's/.*=//p')" \
                "$(getfattr --absolute-names -h -d -e hex "$p" \
                    2> /dev/null | grep '^user\.' | tr '\n' ' ')"
        done)
}

# records BRICK: names carrying a trusted.mortar.rep.* xattr, and the
# heal index's entries ("" when clean).
records() {
    (cd "$T/bricks/$1" && getfattr -R -h --absolute-names -d \
        -m 'trusted\.mortar\.rep\.' . 2> /dev/null | grep '^# file' \
        | grep -v '/\.mortar' | tr '\n' ' ')
    find "$T/bricks/$1/.mortar/index/xattrop" -mindepth 1 2> /dev/null \
        | tr '\n' ' '
}

# healed: reads everything through the mount (lookups start the heals),
# then "ok" if b1 and b2 are identical to b0 and nothing is pending.
healed() {
    ls -lR "$M0" > /dev/null 2>&1
    find "$M0" -type f -exec cat {} + > /dev/null 2>&1
    getfattr -R -d "$M0" > /dev/null 2>&1
    local t0 b
    t0="$(tree b0)"
    for b in b1 b2; do
        [ "$t0" = "$(tree $b)" ] || { echo "tree of $b differs"; return; }
        diff -r --no-dereference --exclude=.mortar "$T/bricks/b0" \
            "$T/bricks/$b" > /dev/null || { echo "$b content"; return; }
    done
    for b in b0 b1 b2; do
        [ -z "$(records $b)" ] || { echo "$b: $(records $b)"; return; }
    done
    echo ok
}

# kib BRICK PATH: KiB allocated to the file on the brick.
kib() {
    du -k "$T/bricks/$1/$2" | cut -f1
}

heal_key() {
    (cd "$M0" && getfattr --only-values -n mortar.heal "$1" 2>&1)
}

# healed_bytes: the client's bytes_healed (statedump).
healed_bytes() {
    statedump_of "$(client_pid "$M0")" | sed -n 's/^bytes_healed=//p'
}

TEST rep3_start
# The tree before the outage.
TEST mkdir -p "$M0/d/sub" "$M0/rmd/inner"
TEST sh -c "echo base > '$M0/f1'; echo trunc-me-please > '$M0/f2'"
TEST sh -c "echo bye > '$M0/gone'; echo moved > '$M0/d/old-name'"
TEST sh -c "echo x > '$M0/rmd/inner/file'; echo keep > '$M0/d/sub/k'"
TEST setfattr -n user.old -v stale "$M0/f2"
TEST dd if=/dev/urandom of="$M0/large" bs=1M count=8 status=none
EXPECT_WITHIN 10 "ok" healed

TEST kill_brick b2
TEST sh -c "echo appended >> '$M0/f1'"
TEST truncate -s 4 "$M0/f2"
TEST sh -c "echo new > '$M0/d/new'"
TEST sh -c "head -c 300000 /dev/urandom > '$M0/d/sub/big'"
TEST rm "$M0/gone"
TEST mv "$M0/d/old-name" "$M0/d/new-name"
TEST chmod 600 "$M0/f1"
TEST chown 1234:5678 "$M0/f2"
TEST setfattr -n user.color -v blue "$M0/f1"
TEST setfattr -x user.old "$M0/f2"
TEST mkdir "$M0/newdir"
TEST sh -c "echo inside > '$M0/newdir/x'"
TEST rm -rf "$M0/rmd"
TEST ln -s f1 "$M0/sym"
TEST ln "$M0/f1" "$M0/d/hard"
TEST truncate -s 64M "$M0/sparse"
TEST dd if=/dev/urandom of="$M0/sparse" bs=1M count=1 seek=32 \
    conv=notrunc status=none
TEST dd if=/dev/urandom of="$M0/large" bs=4k count=1 seek=700 \
    conv=notrunc status=none
# The survivors blame b2; b2 still has the old tree.
TEST test -e "$T/bricks/b2/gone"
TEST test ! -e "$T/bricks/b2/newdir"

# b2 back; a fresh mount reads everything: heal on access.
TEST start_fsd brick-b2 --volfile "$T/vol/b2.vol"
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/rep3.vol" "$M0"
EXPECT_WITHIN 60 "ok" healed
EXPECT "base" head -n 1 "$T/bricks/b2/f1"
EXPECT "600" stat -c %a "$T/bricks/b2/f1"
EXPECT "trun" cat "$T/bricks/b2/f2"
EXPECT "$(stat -c %h "$T/bricks/b0/f1")" stat -c %h "$T/bricks/b2/f1"
EXPECT "f1" readlink "$T/bricks/b2/sym"
TEST test ! -e "$T/bricks/b2/rmd"
# The sparse file: 64 MiB long, about 1 MiB allocated, as on b0.
EXPECT "67108864" stat -c %s "$T/bricks/b2/sparse"
TEST test "$(kib b2 sparse)" -lt 4096
TEST cmp "$T/bricks/b0/sparse" "$T/bricks/b2/sparse"
# diff: of the 8 MiB file only the changed 64 KiB block was copied (the
# rest: the new files, the sparse file's 1 MiB, a few small ones).
TEST cmp "$T/bricks/b0/large" "$T/bricks/b2/large"
TEST test "$(healed_bytes)" -lt $((4 * 1024 * 1024))

# The heal key: a file changed while b1 was down, healed on demand (by a
# mount that heals nothing on access).
TEST umount_client "$M0"
TEST rep3_vol "$T/vol/noheal.vol" "data-self-heal off" \
    "cluster.metadata-self-heal off" "entry-self-heal off"
TEST mount_volfile "$T/vol/noheal.vol" "$M0"
TEST kill_brick b1
TEST sh -c "echo later >> '$M0/d/new'"
EXPECT "pending" heal_key d/new
TEST start_fsd brick-b1 --volfile "$T/vol/b1.vol"
EXPECT_WITHIN 20 "healed" heal_key d/new
EXPECT "clean" heal_key d/new
TEST cmp "$T/bricks/b0/d/new" "$T/bricks/b1/d/new"
EXPECT "" records b0
EXPECT "" records b1

# A file written while it heals ends identical on every copy: 32 MiB
# b2 missed, healed through the key while 40 writes land at random
# places.
TEST kill_brick b2
TEST dd if=/dev/urandom of="$M0/busy" bs=1M count=32 status=none
TEST start_fsd brick-b2 --volfile "$T/vol/b2.vol"
# (b2 lacks the name: the directory's heal makes it, empty, blamed;
# "pending" until the mount is connected to b2 again: a heal with a
# copy down leaves what that copy needs)
EXPECT_WITHIN 20 "healed" heal_key .
(cd "$M0" && getfattr --only-values -n mortar.heal busy \
    > "$T/busy.heal" 2> /dev/null) &
HEAL_PID=$!
TEST sh -c "for i in \$(seq 1 40); do dd if=/dev/urandom of='$M0/busy' \
    bs=4k count=1 seek=\$(shuf -i 0-8191 -n 1) conv=notrunc \
    status=none || exit 1; done"
TEST wait "$HEAL_PID"
EXPECT "healed" cat "$T/busy.heal"
EXPECT_WITHIN 20 "clean" heal_key busy
TEST cmp "$T/bricks/b0/busy" "$T/bricks/b1/busy"
TEST cmp "$T/bricks/b0/busy" "$T/bricks/b2/busy"
EXPECT "" records b0
EXPECT "" records b2
