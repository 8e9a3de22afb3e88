# shellcheck shell=bash
# rebalance_1g of bench/run --rebalance, sourced by bench/run.
#
# The same job on Mortar and on GlusterFS: a 2-brick distribute volume on
# this disk gets S_REB_FILES files of 1 MiB (16 directories), 2 bricks are
# added, and the rebalance is timed from its start to its completion.
# The result is MB/s of data moved (10^6 bytes per second, moved bytes as
# each rebalance reports them) plus the seconds and the bytes moved; the
# two rows and their ratio go to $OUT/rebalance.tsv and the printed table.
#   Mortar:    bench/mortar-volume start D --bricks 2, fill D/mnt,
#              bench/mortar-volume add-bricks D 2, then time
#              bench/mortar-volume rebalance D (mortarfsd --rebalance
#              --volfile=D/client.vol --rebalance-state=F -N; moved_bytes
#              from F).
#   GlusterFS: gfs_setup with 2 bricks (volume bench-rb), fill the mount,
#              gluster volume add-brick (2 more, force), then time
#              rebalance start .. rebalance status --xml = completed
#              (aggregate size = bytes moved).
# Each side is torn down right after it is measured (also on error).

REB_TSV=
REB_MORTAR_DIR=

# reb_fill MNT: S_REB_FILES files of 1 MiB in 16 directories, fsynced.
reb_fill() {
    tmo python3 - "$1" "$S_REB_FILES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
buf = os.urandom(1 << 20)
for i in range(n):
    d = os.path.join(root, "reb", "d%02d" % (i % 16))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(buf)
        os.fsync(f.fileno())
EOF
}

# reb_emit LABEL BYTES SECS|FAIL: one row of rebalance.tsv.
reb_emit() {
    local mbs=FAIL
    if [[ $3 != FAIL ]]; then
        mbs=$(awk -v b="$2" -v s="$3" \
            'BEGIN { if (s <= 0) s = 1e-9; printf "%.1f", b / 1e6 / s }')
    fi
    printf 'rebalance_1g\t%s\t%s\t%s\t%s\n' "$1" "$mbs" "$2" "$3" >>"$REB_TSV"
    say "  rebalance_1g $1: $mbs MB/s (moved $2 bytes in $3 s)"
}

reb_mortar_cleanup() {
    [[ -n $REB_MORTAR_DIR ]] || return 0
    "$BENCH_DIR/mortar-volume" stop "$REB_MORTAR_DIR" >>"$LOG" 2>&1
    rm -rf "$REB_MORTAR_DIR"
    REB_MORTAR_DIR=
}

reb_mortar() {
    local d=$OUT/rebalance-mortar a b moved
    REB_MORTAR_DIR=$d
    if ! "$BENCH_DIR/mortar-volume" start "$d" --bricks 2 >>"$LOG" 2>&1; then
        say "  Mortar: 2-brick volume did not start (see $LOG)"
        reb_emit mortar 0 FAIL
        reb_mortar_cleanup
        return 1
    fi
    if ! reb_fill "$d/mnt" 2>>"$LOG" ||
        ! "$BENCH_DIR/mortar-volume" add-bricks "$d" 2 >>"$LOG" 2>&1; then
        say "  Mortar: filling or add-bricks failed (see $LOG)"
        reb_emit mortar 0 FAIL
        reb_mortar_cleanup
        return 1
    fi
    drop_caches
    a=$(now_ns)
    if ! tmo "$BENCH_DIR/mortar-volume" rebalance "$d" >>"$LOG" 2>&1; then
        say "  Mortar: rebalance failed (see $LOG, $d/rebalance.log)"
        reb_emit mortar 0 FAIL
        reb_mortar_cleanup
        return 1
    fi
    b=$(now_ns)
    moved=$(sed -n 's/^moved_bytes=//p' "$d/rebalance.state")
    reb_emit mortar "${moved:-0}" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
    reb_mortar_cleanup
}

# reb_gfs_status: "STATUS BYTES" of the GlusterFS rebalance (aggregate).
reb_gfs_status() {
    gfs_cli volume rebalance "$GFS_VOL" status --xml 2>>"$LOG" |
        python3 -c '
import sys, xml.etree.ElementTree as ET
try:
    agg = ET.parse(sys.stdin).getroot().find(".//aggregate")
    print(agg.findtext("statusStr", "unknown").replace(" ", "_"),
          agg.findtext("size", "0"))
except Exception:
    print("unknown 0")'
}

reb_gfs() {
    local a b st bytes host i saved_vol=$GFS_VOL saved_bricks=$BRICKS
    GFS_VOL=bench-rb
    BRICKS=2
    if ! gfs_setup; then
        reb_emit glusterfs 0 FAIL
        gfs_teardown
        GFS_VOL=$saved_vol BRICKS=$saved_bricks
        return 1
    fi
    host=$(gfs_loopback_host)
    mkdir -p "$GFS_DIR/bricks/b3" "$GFS_DIR/bricks/b4"
    if ! reb_fill "$GFS_MNT" 2>>"$LOG" ||
        ! gfs_cli volume add-brick "$GFS_VOL" "$host:$GFS_DIR/bricks/b3" \
            "$host:$GFS_DIR/bricks/b4" force >>"$LOG" 2>&1; then
        say "  GlusterFS: filling or add-brick failed (see $LOG)"
        reb_emit glusterfs 0 FAIL
        gfs_teardown
        GFS_VOL=$saved_vol BRICKS=$saved_bricks
        return 1
    fi
    drop_caches
    a=$(now_ns)
    if ! gfs_cli volume rebalance "$GFS_VOL" start >>"$LOG" 2>&1; then
        say "  GlusterFS: rebalance start failed (see $LOG)"
        reb_emit glusterfs 0 FAIL
        gfs_teardown
        GFS_VOL=$saved_vol BRICKS=$saved_bricks
        return 1
    fi
    st=unknown
    for ((i = 0; i < S_TIMEOUT * 5; i++)); do
        read -r st bytes < <(reb_gfs_status)
        [[ $st == completed || $st == failed || $st == stopped ]] && break
        sleep 0.2
    done
    b=$(now_ns)
    if [[ $st == completed ]]; then
        reb_emit glusterfs "${bytes:-0}" \
            "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
    else
        say "  GlusterFS: rebalance ended as '$st' (see $LOG)"
        reb_emit glusterfs 0 FAIL
    fi
    gfs_teardown
    GFS_VOL=$saved_vol BRICKS=$saved_bricks
}

# run_rebalance: both sides, then the table (Mortar, GlusterFS, ratio).
run_rebalance() {
    local m g ms gs mb gb
    REB_TSV=$OUT/rebalance.tsv
    printf 'workload\tlabel\tMB/s\tmoved_bytes\tseconds\n' >"$REB_TSV"
    say "rebalance_1g: $S_REB_FILES x 1 MiB on 2 bricks, +2 bricks, rebalance"
    reb_mortar
    if command -v gluster >/dev/null; then
        reb_gfs
    else
        say "  GlusterFS: not installed; rebalance_1g has no comparison"
    fi
    m=$(awk -F '\t' '$2 == "mortar" { print $3 }' "$REB_TSV")
    g=$(awk -F '\t' '$2 == "glusterfs" { print $3 }' "$REB_TSV")
    ms=$(awk -F '\t' '$2 == "mortar" && $3 != "FAIL" { print $5 }' "$REB_TSV")
    gs=$(awk -F '\t' '$2 == "glusterfs" && $3 != "FAIL" { print $5 }' \
        "$REB_TSV")
    mb=$(awk -F '\t' '$2 == "mortar" && $3 != "FAIL" {
        printf "%.0f", $4 / 1e6 }' "$REB_TSV")
    gb=$(awk -F '\t' '$2 == "glusterfs" && $3 != "FAIL" {
        printf "%.0f", $4 / 1e6 }' "$REB_TSV")
    # MB/s of what each moved, and the time to rebalance the same data:
    # a rebalance that moves fewer files (a layout that keeps more in
    # place) is faster without a higher MB/s. The ratio of seconds is
    # GlusterFS's over Mortar's: how many times faster Mortar finished.
    {
        printf '%-22s %12s %12s %8s\n' workload Mortar GlusterFS "M/G"
        printf '%-22s %12s %12s %8s\n' "rebalance_1g MB/s" "${m:--}" \
            "${g:--}" "$(awk -v m="${m:-x}" -v g="${g:-x}" 'BEGIN {
                if (m + 0 > 0 && g + 0 > 0) printf "%.2f", m / g
                else print "-" }')"
        printf '%-22s %12s %12s %8s\n' "rebalance_1g seconds" "${ms:--}" \
            "${gs:--}" "$(awk -v m="${ms:-x}" -v g="${gs:-x}" 'BEGIN {
                if (m + 0 > 0 && g + 0 > 0) printf "%.2f", g / m
                else print "-" }')"
        printf '%-22s %12s %12s %8s\n' "rebalance_1g moved MB" "${mb:--}" \
            "${gb:--}" -
    } | tee "$OUT/rebalance.txt"
}
