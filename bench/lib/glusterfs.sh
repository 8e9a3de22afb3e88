# shellcheck shell=bash
# GlusterFS side of bench/run --compare-glusterfs, sourced by bench/run.
#
# gfs_setup builds a volume "bench-gv" of $BRICKS bricks (distribute, or
# distributed-replicate in sets of $REPLICA when that is 2 or more) under
# $OUT/glusterfs/, loopback only, starts it and mounts it on
# $OUT/glusterfs/mnt; it sets GFS_MNT on success. gfs_teardown undoes
# exactly what gfs_setup did (it is safe to call twice, and after a
# partial setup): umount, volume stop + delete, glusterd stop if we
# started it, brick directories removed.
#
# Loopback only: when we start glusterd we give it a copy of the system
# glusterd.vol with transport.socket.bind-address 127.0.0.1 (it passes
# the same address on to the brick processes). GlusterFS's CLI refuses
# "127.0.0.1" as a brick host, so bricks are named by a host name that
# resolves to a 127.x address (this host's name, usually).

GFS_VOL=bench-gv
GFS_DIR=
GFS_MNT=
GFS_STARTED_GLUSTERD=0
GFS_GLUSTERD_PID=
GFS_CREATED=0
GFS_STARTED=0

gfs_cli() { timeout 120 gluster --mode=script "$@"; }

# gfs_loopback_host: a name for this host that resolves to 127.x.x.x.
gfs_loopback_host() {
    local h addr
    for h in "$(hostname 2>/dev/null)" "$(hostname -s 2>/dev/null)"; do
        [[ -n $h && $h != localhost ]] || continue
        addr=$(getent ahostsv4 "$h" 2>/dev/null | awk 'NR == 1 { print $1 }')
        if [[ $addr == 127.* ]]; then
            printf '%s\n' "$h"
            return 0
        fi
    done
    return 1
}

gfs_setup() {
    local host i brick_args=() sysvol=/etc/glusterfs/glusterd.vol
    if ! command -v gluster >/dev/null || ! command -v glusterd >/dev/null
    then
        say "GlusterFS: not installed (no gluster/glusterd in PATH);" \
            "skipping --compare-glusterfs"
        say "  (Debian: apt-get install glusterfs-server glusterfs-client)"
        return 1
    fi
    if ! host=$(gfs_loopback_host); then
        say "GlusterFS: skipped: no host name of this machine resolves to" \
            "127.x (gluster refuses 127.0.0.1/localhost as a brick host)"
        return 1
    fi
    GFS_DIR=$OUT/glusterfs
    mkdir -p "$GFS_DIR/mnt" || return 1

    if ! pgrep -x glusterd >/dev/null; then
        [[ -r $sysvol ]] || { say "GlusterFS: no $sysvol"; return 1; }
        # Our copy of the system volfile, bound to loopback.
        awk '{ print }
             /option transport.socket.listen-port/ {
                 print "    option transport.socket.bind-address 127.0.0.1"
             }' "$sysvol" >"$GFS_DIR/glusterd.vol" || return 1
        glusterd -f "$GFS_DIR/glusterd.vol" -p "$GFS_DIR/glusterd.pid" \
            -l "$GFS_DIR/glusterd.log" || { say "GlusterFS: glusterd failed"
            return 1; }
        GFS_STARTED_GLUSTERD=1
        for ((i = 0; i < 50; i++)); do
            gfs_cli volume list >/dev/null 2>&1 && break
            sleep 0.2
        done
        GFS_GLUSTERD_PID=$(cat "$GFS_DIR/glusterd.pid" 2>/dev/null)
    else
        say "GlusterFS: using the glusterd already running"
    fi

    if gfs_cli volume info "$GFS_VOL" >/dev/null 2>&1; then
        say "GlusterFS: volume $GFS_VOL already exists; not touching it"
        return 1
    fi
    for ((i = 1; i <= BRICKS; i++)); do
        mkdir -p "$GFS_DIR/bricks/b$i" || return 1
        brick_args+=("$host:$GFS_DIR/bricks/b$i")
    done
    local replica_args=()
    ((${REPLICA:-1} >= 2)) && replica_args=(replica "$REPLICA")
    gfs_cli volume create "$GFS_VOL" "${replica_args[@]}" "${brick_args[@]}" \
        force >>"$LOG" 2>&1 ||
        { say "GlusterFS: volume create failed (see $LOG)"; return 1; }
    GFS_CREATED=1
    gfs_cli volume start "$GFS_VOL" >>"$LOG" 2>&1 ||
        { say "GlusterFS: volume start failed (see $LOG)"; return 1; }
    GFS_STARTED=1
    mount -t glusterfs "127.0.0.1:/$GFS_VOL" "$GFS_DIR/mnt" >>"$LOG" 2>&1 ||
        { say "GlusterFS: mount failed (see $LOG)"; return 1; }
    for ((i = 0; i < 50; i++)); do
        mountpoint -q "$GFS_DIR/mnt" && break
        sleep 0.2
    done
    mountpoint -q "$GFS_DIR/mnt" || { say "GlusterFS: mount not up"; return 1; }
    GFS_MNT=$GFS_DIR/mnt
    local kind=distribute
    ((${REPLICA:-1} >= 2)) && kind="replica $REPLICA"
    say "GlusterFS: $GFS_VOL ($BRICKS brick(s), $kind) mounted on" \
        "$GFS_MNT"
    return 0
}

gfs_teardown() {
    local i
    [[ -n $GFS_DIR ]] || return 0
    if mountpoint -q "$GFS_DIR/mnt" 2>/dev/null; then
        umount "$GFS_DIR/mnt" 2>>"$LOG" || umount -l "$GFS_DIR/mnt"
    fi
    GFS_MNT=
    if ((GFS_STARTED)); then
        gfs_cli volume stop "$GFS_VOL" >>"$LOG" 2>&1
        GFS_STARTED=0
    fi
    if ((GFS_CREATED)); then
        gfs_cli volume delete "$GFS_VOL" >>"$LOG" 2>&1
        GFS_CREATED=0
    fi
    if ((GFS_STARTED_GLUSTERD)) && [[ -n $GFS_GLUSTERD_PID ]]; then
        kill "$GFS_GLUSTERD_PID" 2>/dev/null
        for ((i = 0; i < 50; i++)); do
            kill -0 "$GFS_GLUSTERD_PID" 2>/dev/null || break
            sleep 0.1
        done
        GFS_STARTED_GLUSTERD=0
    fi
    rm -rf "$GFS_DIR/bricks"
    rmdir "$GFS_DIR/mnt" 2>/dev/null
    GFS_DIR=
    say "GlusterFS: torn down"
}
