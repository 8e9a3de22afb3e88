#!/usr/bin/env bash
# demo.sh: brings up a one-brick Mortar volume mounted at /mnt/mortar.
#   extras/demo.sh [start]   write the volfiles under /var/lib/mortar-demo,
#                            start the brick (port 24010) and the client
#   extras/demo.sh stop      unmount and stop both
# Uses the mortarfsd in PATH (make install puts it in /usr/local/sbin), or
# $MORTARFSD. Logs: /var/log/mortar/. Needs root and /dev/fuse.
set -euo pipefail

STATE=/var/lib/mortar-demo
MNT="${MORTAR_DEMO_MOUNT:-/mnt/mortar}"
PORT="${MORTAR_DEMO_PORT:-24010}"
RUN=/run/mortar-demo
MORTARFSD="${MORTARFSD:-$(command -v mortarfsd || echo /usr/local/sbin/mortarfsd)}"

stop() {
    if awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then
        umount "$MNT" || umount -l "$MNT"
    fi
    for p in client brick; do
        if [ -f "$RUN/$p.pid" ]; then
            kill -TERM "$(cat "$RUN/$p.pid")" 2> /dev/null || true
        fi
    done
    echo "demo stopped"
}

start() {
    if [ "$(id -u)" != 0 ]; then
        echo "demo.sh: run as root (FUSE mounts need it)" >&2
        exit 1
    fi
    if [ ! -x "$MORTARFSD" ]; then
        echo "demo.sh: mortarfsd not found (make install, or set MORTARFSD)" >&2
        exit 1
    fi
    if awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then
        echo "demo.sh: something is already mounted on $MNT" >&2
        exit 1
    fi
    mkdir -p "$STATE/brick" "$RUN" "$MNT"
    cat > "$STATE/brick.vol" <<VOL
volume demo-posix
    type storage/posix
    option directory $STATE/brick
end-volume

volume demo-locks
    type features/locks
    subvolumes demo-posix
end-volume

volume demo
    type performance/io-threads
    subvolumes demo-locks
end-volume

volume demo-server
    type protocol/server
    option transport.socket.listen-port $PORT
    option transport.socket.bind-address 127.0.0.1
    option auth.addr.demo.allow 127.0.0.1
    subvolumes demo
end-volume
VOL
    cat > "$STATE/client.vol" <<VOL
volume demo-client
    type protocol/client
    option remote-host 127.0.0.1
    option remote-port $PORT
    option remote-subvolume demo
end-volume
VOL
    "$MORTARFSD" --volfile "$STATE/brick.vol" --pid-file "$RUN/brick.pid"
    "$MORTARFSD" --volfile "$STATE/client.vol" --pid-file "$RUN/client.pid" \
        "$MNT"
    echo "demo volume mounted on $MNT (brick $STATE/brick, port $PORT)"
    echo "stop it with: $0 stop"
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac
