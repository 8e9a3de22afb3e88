#!/usr/bin/env bash
# demo.sh: brings up a replica 3 Mortar volume "demo" (every file on three
# bricks) mounted at /mnt/mortar, the way an administrator would: mortard,
# the mortar CLI, mount -t mortar.
#   extras/demo.sh [start]   start mortard (loopback only), create and start
#                            the volume on /var/lib/mortar-demo/brick1..3,
#                            mount (a demo already up is stopped first, so
#                            the binaries just installed are the ones
#                            running)
#   extras/demo.sh stop      unmount, stop and delete the volume, remove
#                            the demo's brick directories (their files are
#                            gone), stop mortard
# Uses mortard, mortar and /sbin/mount.mortar as `make install` puts them.
# State: /var/lib/mortar-demo; logs: /var/log/mortar. Needs root and
# /dev/fuse.
set -euo pipefail

STATE=/var/lib/mortar-demo
# The three copies: one host, so `force` (GlusterFS refuses two bricks of
# a replica set on one server without it).
BRICKS=("$STATE/brick1" "$STATE/brick2" "$STATE/brick3")
MNT="${MORTAR_DEMO_MOUNT:-/mnt/mortar}"
RUN=/run/mortar-demo
SOCK="$RUN/mortard.sock"
PORT="${MORTAR_DEMO_PORT:-24100}"
export PATH="/usr/local/sbin:/usr/sbin:/sbin:$PATH"

cli() {
    mortar --mode=script --socket="$SOCK" "$@"
}

is_mounted() {
    awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

# Is what is mounted on MNT a Mortar client (the demo's), not something
# else?
is_demo_mounted() {
    awk -v m="$MNT" '$2 == m && $3 == "fuse.mortar" { f = 1 }
        END { exit !f }' /proc/mounts
}

stop() {
    local pid
    if is_mounted; then
        umount "$MNT" || umount -l "$MNT"
    fi
    if [ -S "$SOCK" ]; then
        cli volume stop demo > /dev/null 2>&1 || true
        cli volume delete demo > /dev/null 2>&1 || true
        # A new demo starts from empty bricks (a brick keeps its files and
        # its replication records after volume delete); only once the
        # volume is gone. brick: older demos' one brick.
        if cli volume list > "$RUN/vols" 2>&1 &&
            ! grep -qx demo "$RUN/vols"; then
            rm -rf "${BRICKS[@]}" "$STATE/brick"
        fi
        rm -f "$RUN/vols"
    fi
    if [ -f "$RUN/mortard.pid" ]; then
        pid="$(cat "$RUN/mortard.pid")"
        kill -TERM "$pid" 2> /dev/null || true
        # Gone before we return: a start right after needs its port.
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2> /dev/null || break
            sleep 0.1
        done
    fi
    echo "demo stopped"
}

start() {
    if [ "$(id -u)" != 0 ]; then
        echo "demo.sh: run as root (FUSE mounts need it)" >&2
        exit 1
    fi
    for tool in mortard mortar mortarfsd; do
        if ! command -v "$tool" > /dev/null; then
            echo "demo.sh: $tool not found (run make install first)" >&2
            exit 1
        fi
    done
    if is_demo_mounted; then
        echo "demo already up: restarting it"
        stop
    fi
    if is_mounted; then
        echo "demo.sh: something is already mounted on $MNT" >&2
        exit 1
    fi
    mkdir -p "$STATE" "$RUN" "$MNT"
    if [ ! -S "$SOCK" ] || ! cli volume list > /dev/null 2>&1; then
        mortard --state-dir "$STATE/mortard" --run-dir "$RUN" \
            --bind-address 127.0.0.1 --mgmt-port "$PORT"
    fi
    if ! cli volume info demo > /dev/null 2>&1; then
        # force: the bricks share a host and live on the root file system.
        cli volume create demo replica 3 "${BRICKS[@]/#/127.0.0.1:}" force
    fi
    cli volume start demo force > /dev/null
    mount -t mortar -o volfile-server-port="$PORT" 127.0.0.1:/demo "$MNT"
    cli volume info demo
    cli volume status demo
    echo "demo volume (replica 3: each file on ${BRICKS[*]}) mounted on $MNT"
    echo "manage it with: mortar --socket=$SOCK volume status demo"
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
*)
    echo "usage: $0 [start|stop]" >&2
    exit 2
    ;;
esac
