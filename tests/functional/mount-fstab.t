#!/usr/bin/env bash
# The /etc/fstab line of doc/admin-guide.md ("Mounting at boot"), through
# mount(8) with another fstab (util-linux's mount -T FILE DIR): a mortar
# line with _netdev and backup-volfile-servers whose first volfile server
# is down (127.0.0.3, where nothing listens on mortard's port) mounts the
# volume from the backup (mortard on 127.0.0.1), and the mount works;
# with every server down the mount fails naming each server and nothing
# is mounted; backupvolfile-server= (GlusterFS's older spelling) maps to
# the same flag. mount(8) runs /sbin/mount.mortar: extras/mount.mortar is
# linked there for the mount when none is installed; when another one is
# installed, this file runs in a private mount namespace where this
# tree's is bound over it (the system's is never replaced).
# TIMEOUT: 180
# REQUIRES: root fuse

HELPER="$(cd "$(dirname "$0")/../.." && pwd)/extras/mount.mortar"
if [ -z "${MORTAR_FSTAB_NS:-}" ] && [ "$(id -u)" = 0 ] &&
    [ -e /sbin/mount.mortar ] && ! cmp -s /sbin/mount.mortar "$HELPER" &&
    command -v unshare > /dev/null; then
    exec env MORTAR_FSTAB_NS=1 unshare --mount --propagation private \
        sh -c 'mount --bind "$1" /sbin/mount.mortar && exec bash "$2"' \
        sh "$HELPER" "$0"
fi
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard or mortar not built"
    exit 0
fi
if ! mount --help 2>&1 | grep -q -- "--fstab"; then
    echo "1..0 # SKIP mount(8) has no -T/--fstab"
    exit 0
fi

TEST start_mortard
export MORTAR_SOCKET="$T/run/mortard.sock"
mkdir -p "$T/bricks/v0"
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/v0" force
track_brick v0
TEST "$MORTAR" volume start v0

# fstab_line SPEC BACKUPS ID: the documented line, with the client's pid
# file, log and dumps in $T.
fstab_line() {
    echo "$1 $M0 mortar _netdev,backup-volfile-servers=$2,volfile-server-port=$MGMT_PORT,pid-file=$T/run/$3.pid,log-file=$T/log/$3.log,dump-dir=$T/dump 0 0"
}
fstab_line 127.0.0.3:/v0 127.0.0.1 fstab > "$T/fstab"
fstab_line 127.0.0.3:/v0 127.0.0.4 down > "$T/fstab-down"
_T_PIDFILES+=("$T/run/fstab.pid" "$T/run/down.pid")
_T_MOUNTS+=("$M0")

# mount_fstab FSTAB: mount -T FSTAB $M0 with this tree's helper.
mount_fstab() {
    env MORTARFSD="$MORTARFSD" mount -T "$1" "$M0" 9>&-
}

# GlusterFS's older spelling of one backup server maps to the same flag.
EXPECT_MATCH "--backup-volfile-servers=127\.0\.0\.1 " sh -c "sh '$HELPER' 127.0.0.3:/v0 '$M0' -f -v -o _netdev,backupvolfile-server=127.0.0.1 2>&1"

helper_lock
is_linked=0
if [ ! -e /sbin/mount.mortar ]; then
    ln -s "$MOUNT_MORTAR" /sbin/mount.mortar && is_linked=1
fi
if cmp -s /sbin/mount.mortar "$MOUNT_MORTAR"; then
    # Both servers down: a one-line reason naming each, nothing mounted.
    EXPECT "1" sh -c "MORTARFSD='$MORTARFSD' mount -T '$T/fstab-down' '$M0' 9>&- 2> '$T/down.err'; [ \$? -ne 0 ] && echo 1"
    EXPECT_MATCH "127\.0\.0\.3.*127\.0\.0\.4" tr '\n' ' ' < "$T/down.err"
    EXPECT "N" is_mounted "$M0"
    # The first server down, the backup up.
    TEST mount_fstab "$T/fstab"
    [ "$is_linked" = 1 ] && rm -f /sbin/mount.mortar
    helper_unlock
    TEST wait_for_mount "$M0"
    EXPECT "fuse.mortar" awk -v m="$M0" '$2 == m { print $3 }' /proc/mounts
    EXPECT_MATCH "from 127\.0\.0\.1:$MGMT_PORT" cat "$T/log/fstab.log"
    TEST sh -c "echo through-fstab > '$M0/f'"
    EXPECT "through-fstab" cat "$T/bricks/v0/f"
    # umount(8) finds the mount by its directory, as at shutdown.
    TEST umount "$M0"
    EXPECT "N" is_mounted "$M0"
else
    [ "$is_linked" = 1 ] && rm -f /sbin/mount.mortar
    helper_unlock
    echo "# /sbin/mount.mortar is not this tree's and no private mount" \
        "namespace could be made: fstab mounts not checked" >&2
fi
