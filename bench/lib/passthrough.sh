# shellcheck shell=bash
# FUSE passthrough side of bench/run --compare-passthrough, sourced by
# bench/run.
#
# pt_setup BASE mounts bindfs (Debian's package of that name) over a
# scratch directory BASE/mortar-bench-pt on $OUT/passthrough/mnt:
# a FUSE daemon that forwards every request to the local file system
# under it, i.e. what FUSE itself costs on this kernel with a daemon
# that does next to nothing. BASE is the first local DIR, so the column
# sits on the same file system as the local one. Options: multithreaded
# (libfuse's thread per request, as a network file system's client is),
# big_writes (writes up to 128 KiB instead of 4 KiB; libfuse 2 needs
# the flag), subtype=bindfs (the mount's type reads fuse.bindfs in
# /proc/mounts, which bench/run's dir_kind calls "passthrough"). The
# scratch directory's name has no pid in it: it is the mount's source,
# hence the column's label, which must be the same in every run over the
# same BASE for rounds to be matched; one that exists (another run, or
# one killed with -9) makes the comparison skip, like GlusterFS's
# bench-gv.
# O_DIRECT is not forwarded (bindfs's default), so the fio jobs' probe
# decides like on any FUSE mount. It sets PT_MNT on success.
#
# pt_teardown undoes exactly what pt_setup did (safe to call twice and
# after a partial setup): unmount, remove the scratch directory.

PT_SRC=
PT_DIR=
PT_MNT=

pt_setup() {
    local base=$1 opts i
    if ! command -v bindfs >/dev/null; then
        say "passthrough: bindfs not installed; skipping" \
            "--compare-passthrough (Debian: apt-get install bindfs)"
        return 1
    fi
    opts=big_writes,subtype=bindfs
    if ! mkdir "$base/mortar-bench-pt" 2>>"$LOG"; then
        say "passthrough: cannot create $base/mortar-bench-pt (another" \
            "run's? remove it if not); skipping --compare-passthrough"
        return 1
    fi
    PT_SRC=$base/mortar-bench-pt
    PT_DIR=$OUT/passthrough
    mkdir -p "$PT_DIR/mnt" || return 1
    if mountpoint -q "$PT_DIR/mnt"; then
        say "passthrough: $PT_DIR/mnt is already a mount point"
        PT_DIR=
        return 1
    fi
    log "passthrough: bindfs --multithreaded -o $opts $PT_SRC $PT_DIR/mnt"
    bindfs --multithreaded -o "$opts" "$PT_SRC" "$PT_DIR/mnt" \
        >>"$LOG" 2>&1 || { say "passthrough: bindfs failed (see $LOG)"
        return 1; }
    for ((i = 0; i < 50; i++)); do
        mountpoint -q "$PT_DIR/mnt" && break
        sleep 0.1
    done
    mountpoint -q "$PT_DIR/mnt" ||
        { say "passthrough: mount not up"; return 1; }
    PT_MNT=$PT_DIR/mnt
    say "passthrough: $(bindfs --version 2>/dev/null | head -n 1)" \
        "(-o $opts, multithreaded) of $PT_SRC mounted on $PT_MNT"
    return 0
}

pt_teardown() {
    [[ -n $PT_SRC ]] || return 0
    if [[ -n $PT_DIR ]] && mountpoint -q "$PT_DIR/mnt" 2>/dev/null; then
        umount "$PT_DIR/mnt" 2>>"$LOG" ||
            fusermount -u "$PT_DIR/mnt" 2>>"$LOG" ||
            umount -l "$PT_DIR/mnt"
    fi
    PT_MNT=
    rm -rf "$PT_SRC"
    if [[ -n $PT_DIR ]]; then
        rmdir "$PT_DIR/mnt" "$PT_DIR" 2>/dev/null
    fi
    PT_SRC=
    PT_DIR=
    say "passthrough: unmounted"
}
