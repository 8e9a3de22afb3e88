#!/usr/bin/env bash
# replica 3 arbiter 1 by hand-written volfiles (the CLI refuses arbiter
# yet): data bricks b0 and b1, arbiter brick b2 (features/arbiter between
# locks and posix), cluster/replicate with arbiter-count 1. Checks:
#  - files written through the mount land identical on the data bricks;
#    the arbiter has every name with the same mode, owner, GFID and user
#    xattrs, at size 0 with no blocks;
#  - with the arbiter killed, then with one data brick killed, the mount
#    keeps reading and writing;
#  - data brick A down, a write, A back, data brick B down: the file is
#    neither read (no old data) nor written (ENOTCONN) until B is back.
# Heal on access is off: it would repair A from B in the meantime.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

declare -A RPORT

# arb_brick_volfile NAME DIR PORT > FILE: the standard brick graph with
# features/arbiter between locks and access (as mortard's volgen puts it).
arb_brick_volfile() {
    brick_volfile "$@" | awk -v n="$1" '
        $0 == "volume " n "-locks" {
            print "volume " n "-arbiter"
            print "    type features/arbiter"
            print "    subvolumes " n "-access"
            print "end-volume"
            print ""
            in_locks = 1
        }
        in_locks && $1 == "subvolumes" {
            print "    subvolumes " n "-arbiter"
            in_locks = 0
            next
        }
        { print }'
}

arb_vol() {
    local i
    : > "$1"
    for i in 0 1 2; do
        printf '%s\n' "volume c$i" " type protocol/client" \
            " option remote-host $H0" " option remote-port ${RPORT[$i]}" \
            " option remote-subvolume b$i" end-volume >> "$1"
    done
    printf '%s\n' "volume rep" " type cluster/replicate" \
        " option arbiter-count 1" " option data-self-heal off" \
        " option metadata-self-heal off" " option entry-self-heal off" \
        " subvolumes c0 c1 c2" end-volume >> "$1"
}

arb_start() {
    local i port
    for i in 0 1 2; do
        alloc_port port || return 1
        RPORT[$i]=$port
        mkdir -p "$T/bricks/b$i"
    done
    brick_volfile b0 "$T/bricks/b0" "${RPORT[0]}" > "$T/vol/b0.vol"
    brick_volfile b1 "$T/bricks/b1" "${RPORT[1]}" > "$T/vol/b1.vol"
    arb_brick_volfile b2 "$T/bricks/b2" "${RPORT[2]}" > "$T/vol/b2.vol"
    grep -q "type features/arbiter" "$T/vol/b2.vol" || return 1
    for i in 0 1 2; do
        start_fsd "brick-b$i" --volfile "$T/vol/b$i.vol" || return 1
    done
    arb_vol "$T/vol/arb.vol"
    mount_volfile "$T/vol/arb.vol" "$M0"
}

restart_brick() {
    start_fsd "brick-$1" --volfile "$T/vol/$1.vol"
}

# child_up MNT I: replicate's view of child I in that mount's client.
child_up() {
    statedump_of "$(client_pid "$1")" | sed -n "s/^child\.$2\.up=//p" \
        | head -n 1
}

# same_on B1 B2 FILES...: "ok" if every file is byte-identical.
same_on() {
    local a="$1" b="$2" f
    shift 2
    for f in "$@"; do
        cmp -s "$T/bricks/$a/$f" "$T/bricks/$b/$f" \
            || { echo "differ $f"; return; }
    done
    echo ok
}

xattr_of() {
    getfattr --absolute-names -n "$3" -e hex "$T/bricks/$1/$2" 2> /dev/null \
        | sed -n "s/^$3=//p" | grep . || echo none
}

# meta_of BRICK PATH: type and mode, owner of a brick's copy.
meta_of() {
    stat -c '%A %u:%g' "$T/bricks/$1/$2"
}

# arb_empty PATH: "ok" if the arbiter's copy has size 0. (Its blocks may
# be an xattr block: ext4 keeps xattrs that do not fit in the inode in
# one; "big" below has none and shows 0 blocks.)
arb_empty() {
    local s
    s="$(stat -c '%s' "$T/bricks/b2/$1")" || return 1
    [ "$s" = "0" ] && echo ok || echo "size $s"
}

# py_err STATEMENT: "ok", or the strerror of the OSError it raised.
py_err() {
    python3 -c "import sys
try:
    $1
except OSError as e:
    print(e.strerror)
    sys.exit(0)
print('ok')"
}

read_all() {
    local f want="$1"
    shift
    for f in "$@"; do
        [ "$(cat "$M0/$f" 2>&1)" = "$want$f" ] \
            || { echo "bad $f: $(cat "$M0/$f" 2>&1)"; return; }
    done
    echo ok
}

FILES=(f1 f2 f3 d/f4 d/e/f5)

TEST arb_start
TEST mkdir -p "$M0/d/e"
TEST sh -c "for f in ${FILES[*]}; do echo v1-\$f > '$M0'/\$f; done"
TEST dd if=/dev/urandom of="$M0/big" bs=64k count=16 status=none
TEST chmod 0640 "$M0/f1"
TEST chown 1234:5678 "$M0/f2"
TEST setfattr -n user.color -v blue "$M0/f3"
TEST ln -s f1 "$M0/link"
EXPECT "ok" read_all v1- "${FILES[@]}"
EXPECT "ok" same_on b0 b1 "${FILES[@]}" big
for f in "${FILES[@]}" big; do
    EXPECT "ok" arb_empty "$f"
    EXPECT "$(meta_of b0 "$f")" meta_of b2 "$f"
    EXPECT "$(xattr_of b0 "$f" trusted.mortar.gfid)" \
        xattr_of b2 "$f" trusted.mortar.gfid
done
TEST test "$(xattr_of b0 f1 trusted.mortar.gfid)" != none
EXPECT "0640" stat -c '%04a' "$T/bricks/b2/f1"
EXPECT "1234:5678" stat -c '%u:%g' "$T/bricks/b2/f2"
EXPECT '"blue"' sh -c "getfattr --absolute-names -n user.color \
    '$T/bricks/b2/f3' | sed -n 's/^user.color=//p'"
EXPECT "f1" readlink "$T/bricks/b2/link"
EXPECT "$(meta_of b0 d/e)" meta_of b2 d/e
# du: the arbiter brick holds no file data (at most an xattr block for
# f3), the data bricks hold big's 1 MiB.
EXPECT "0" stat -c %b "$T/bricks/b2/big"
TEST test "$(stat -c %b "$T/bricks/b0/big")" -ge 2048
arb_blocks() {
    find "$T/bricks/b2" -path '*/.mortar' -prune -o -type f -printf '%b\n' \
        | awk '{ s += $1 } END { print s <= 8 ? "ok" : s }'
}
EXPECT "ok" arb_blocks
# Reads and sizes through the mount are the data bricks'.
EXPECT "1048576" stat -c %s "$M0/big"
EXPECT "ok" sh -c "cmp -s '$M0/big' '$T/bricks/b0/big' && echo ok"

# The arbiter dies: the mount goes on with the two data bricks.
TEST kill_brick b2
TEST sh -c "for f in ${FILES[*]}; do echo v2-\$f > '$M0'/\$f; done"
TEST sh -c "echo new > '$M0/d/g'"
EXPECT "ok" read_all v2- "${FILES[@]}"
EXPECT "ok" same_on b0 b1 "${FILES[@]}" d/g
TEST restart_brick b2
EXPECT_WITHIN 20 "1" child_up "$M0" 2

# A data brick dies: the other and the arbiter go on.
TEST kill_brick b1
TEST sh -c "for f in ${FILES[*]}; do echo v3-\$f > '$M0'/\$f; done"
EXPECT "ok" read_all v3- "${FILES[@]}"
EXPECT "v2-f1" cat "$T/bricks/b1/f1"
EXPECT "ok" arb_empty f1
TEST restart_brick b1
EXPECT_WITHIN 20 "1" child_up "$M0" 1

# A down, a write, A back, B down: A's copy is stale, the arbiter's has
# no data. Neither old data nor a write that only A and the arbiter get.
TEST sh -c "echo v1 > '$M0/g'"
TEST kill_brick b0
TEST sh -c "echo v2 > '$M0/g'"
EXPECT "v2" cat "$M0/g"
TEST restart_brick b0
EXPECT_WITHIN 20 "1" child_up "$M0" 0
TEST kill_brick b1
EXPECT_WITHIN 20 "0" child_up "$M0" 1
EXPECT "Transport endpoint is not connected" \
    py_err "open('$M0/g', 'w').write('v3')"
# A fresh mount (no kernel cache): neither read nor written.
TEST mount_volfile "$T/vol/arb.vol" "$M1"
EXPECT "Transport endpoint is not connected" \
    py_err "print(open('$M1/g').read())"
EXPECT "Transport endpoint is not connected" \
    py_err "open('$M1/g', 'w').write('v3')"
EXPECT "v1" cat "$T/bricks/b0/g"
EXPECT "ok" arb_empty g
# Other files, good on A, are still served and written.
TEST sh -c "echo v4 > '$M1/f1'"
EXPECT "v4" cat "$M1/f1"
# B back: its data is served again.
TEST restart_brick b1
EXPECT_WITHIN 20 "1" child_up "$M1" 1
EXPECT_WITHIN 20 "v2" cat "$M1/g"
TEST sh -c "echo v5 > '$M1/g'"
EXPECT "v5" cat "$T/bricks/b1/g"
EXPECT "ok" arb_empty g
