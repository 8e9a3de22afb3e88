# shellcheck shell=bash
# Workloads of bench/run, sourced by it. Each wl_* function runs inside
# $W (a scratch directory in the measured DIR), records its result with
# emit and returns non-zero on failure (bench/run then records FAIL).
# Sizes come from the S_* variables that bench/run sets (--quick or not).

MIB=1048576

# now_ns: monotonic-enough wall clock in nanoseconds.
now_ns() { date +%s%N; }

# rate COUNT START_NS END_NS: COUNT per second, 2 decimals.
rate() {
    awk -v n="$1" -v a="$2" -v b="$3" \
        'BEGIN { s = (b - a) / 1e9; if (s <= 0) s = 1e-9; printf "%.2f", n / s }'
}

# mbps BYTES START_NS END_NS: MB/s (10^6 bytes, like dd and fio).
mbps() {
    awk -v n="$1" -v a="$2" -v b="$3" \
        'BEGIN { s = (b - a) / 1e9; if (s <= 0) s = 1e-9; printf "%.1f", n / 1e6 / s }'
}

# mb BYTES: BYTES in MB (10^6), the "op" of the MB/s workloads' cost rows.
mb() { awk -v n="$1" 'BEGIN { printf "%.6f", n / 1e6 }'; }

# probe_state WORKLOAD: the snapshot file of WORKLOAD on the current DIR.
probe_state() { echo "$OUT/probe/$1.$CUR_IDX"; }

# probe_begin WORKLOAD / probe_end WORKLOAD: snapshot the current DIR's
# mount processes (BENCH_PROCS, set by bench/run) right around WORKLOAD's
# timed part: CPU, the client's peak RSS, Mortar's FUSE request count
# (lib/procstat.py). No-ops where there is no such process (local).
probe_begin() {
    [[ -n ${BENCH_PROCS:-} ]] || return 0
    python3 "$BENCH_LIB/procstat.py" begin "$(probe_state "$1")" 2>>"$LOG"
}

probe_end() {
    [[ -n ${BENCH_PROCS:-} ]] || return 0
    python3 "$BENCH_LIB/procstat.py" end "$(probe_state "$1")" 2>>"$LOG"
}

# probe_emit WORKLOAD COUNT: the cost rows of WORKLOAD from its two
# snapshots, per op (COUNT ops: files, entries, I/Os, MB...): client and
# server CPU in microseconds, FUSE requests, and the client's peak RSS.
# A value that could not be measured gets no row.
probe_emit() {
    [[ -n ${BENCH_PROCS:-} ]] || return 0
    local wl=$1 per cs ss rq rss
    per=$(wl_per "$wl")
    read -r cs ss rq rss < <(python3 "$BENCH_LIB/procstat.py" report \
        "$(probe_state "$wl")" "$2" 2>>"$LOG")
    [[ ${cs:--} != - ]] && emit "$wl" cpu_client_us_per_op "us/$per" "$cs"
    [[ ${ss:--} != - ]] && emit "$wl" cpu_server_us_per_op "us/$per" "$ss"
    [[ ${rq:--} != - ]] && emit "$wl" fuse_req_per_op "req/$per" "$rq"
    [[ ${rss:--} != - ]] && emit "$wl" peak_rss_mib MiB "$rss"
    return 0
}

# tmo CMD...: run a workload command under the per-command time limit.
tmo() { timeout --kill-after=10 "$S_TIMEOUT" "$@"; }

# fsops SUBCMD ARGS...: run the python driver; sets FS_COUNT and FS_SECS.
fsops() {
    local out
    out=$(tmo python3 "$BENCH_LIB/fsops.py" "$@") || return 1
    read -r FS_COUNT FS_SECS <<<"$out"
    [[ -n ${FS_SECS:-} ]]
}

# fsops_rate WORKLOAD UNIT EXPECT SUBCMD ARGS...: fsops + emit COUNT/SECS
# and the cost rows (fsops.py snapshots the processes around its own
# clock). With EXPECT > 0 the count must be exactly EXPECT, else the
# value is FAIL.
fsops_rate() {
    local wl=$1 unit=$2 expect=$3
    shift 3
    BENCH_PROBE_STATE=$( [[ -n ${BENCH_PROCS:-} ]] && probe_state "$wl") \
        fsops "$@" || return 1
    if ((expect > 0 && FS_COUNT != expect)); then
        log "$wl: did $FS_COUNT, expected $expect"
        emit "$wl" rate "$unit" FAIL
        return 1
    fi
    emit "$wl" rate "$unit" \
        "$(awk -v n="$FS_COUNT" -v s="$FS_SECS" \
            'BEGIN { if (s <= 0) s = 1e-9; printf "%.2f", n / s }')"
    probe_emit "$wl" "$FS_COUNT"
}

# ---------------------------------------------------------------- seq
wl_seqwrite_1g() {
    local a b
    probe_begin seqwrite_1g
    a=$(now_ns)
    tmo dd if=/dev/zero of="$W/seq.dat" bs=1M count=1024 conv=fsync \
        status=none || return 1
    b=$(now_ns)
    probe_end seqwrite_1g
    emit seqwrite_1g throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
    probe_emit seqwrite_1g "$(mb $((1024 * MIB)))"
}

wl_seqread_1g_cold() {
    local a b
    drop_caches
    probe_begin seqread_1g_cold
    a=$(now_ns)
    tmo dd if="$W/seq.dat" of=/dev/null bs=1M status=none || return 1
    b=$(now_ns)
    probe_end seqread_1g_cold
    emit seqread_1g_cold throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
    probe_emit seqread_1g_cold "$(mb $((1024 * MIB)))"
}

wl_seqread_1g_warm() {
    local a b
    probe_begin seqread_1g_warm
    a=$(now_ns)
    tmo dd if="$W/seq.dat" of=/dev/null bs=1M status=none || return 1
    b=$(now_ns)
    probe_end seqread_1g_warm
    emit seqread_1g_warm throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
    probe_emit seqread_1g_warm "$(mb $((1024 * MIB)))"
}

# cp of the (warm) 1 GiB file, fsync of the copy included.
wl_copy_1g() {
    local a b
    probe_begin copy_1g
    a=$(now_ns)
    tmo cp "$W/seq.dat" "$W/copy.dat" || return 1
    tmo sync "$W/copy.dat" || return 1
    b=$(now_ns)
    probe_end copy_1g
    rm -f "$W/copy.dat" "$W/seq.dat"
    emit copy_1g throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
    probe_emit copy_1g "$(mb $((1024 * MIB)))"
}

# ---------------------------------------------------------------- fio
# probe_direct BS: does O_DIRECT I/O of BS bytes work in $W?
probe_direct() {
    local f="$W/odirect.probe" ok=1
    dd if=/dev/zero of="$f" bs="$1" count=1 oflag=direct status=none \
        2>/dev/null &&
        dd if="$f" of=/dev/null bs="$1" count=1 iflag=direct status=none \
            2>/dev/null && ok=0
    rm -f "$f"
    return $ok
}

# fio_run WORKLOAD RW BS IODEPTH NUMJOBS [ENGINE]: IOPS into the TSV.
# O_DIRECT + libaio when the file system takes O_DIRECT at that block
# size; otherwise buffered psync (noted), since buffered libaio is
# synchronous anyway. invalidate=1 drops the file's cached pages first.
fio_run() {
    local wl=$1 rw=$2 bs=$3 qd=$4 jobs=$5 engine=${6:-libaio} direct=1
    local json="$OUT/fio-$wl-$CUR_IDX.json"
    if ! probe_direct "$bs"; then
        direct=0
        engine=psync
        note "$wl" "no O_DIRECT at bs=$bs: buffered psync, queue depth 1 per job"
    fi
    [[ $engine == psync ]] && qd=1
    probe_begin "$wl"
    tmo fio --name="$wl" --filename="$W/fio.dat" --size="${S_FIO_MB}M" \
        --rw="$rw" --bs="$bs" --iodepth="$qd" --numjobs="$jobs" \
        --ioengine="$engine" --direct="$direct" --invalidate=1 --thread \
        --time_based --runtime="$S_FIO_SECS" --group_reporting \
        --randrepeat=1 --norandommap --output-format=json \
        --output="$json" >>"$LOG" 2>&1 || return 1
    probe_end "$wl"
    local iops ios
    read -r iops ios < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f %d" % (j["read"]["iops"] + j["write"]["iops"],
                   j["read"]["total_ios"] + j["write"]["total_ios"]))' "$json")
    [[ -n ${ios:-} ]] || return 1
    emit "$wl" iops IOPS "$iops"
    probe_emit "$wl" "$ios"
}

wl_fio() {
    # Lay the file out once, untimed, so no job measures allocation.
    tmo dd if=/dev/zero of="$W/fio.dat" bs=1M count="$S_FIO_MB" conv=fsync \
        status=none || return 1
    local rc=0
    run_one fio_randread_4k_qd16_4j fio_run fio_randread_4k_qd16_4j \
        randread 4k 16 4 || rc=1
    run_one fio_randread_256k_qd16_4j fio_run fio_randread_256k_qd16_4j \
        randread 256k 16 4 || rc=1
    run_one fio_randwrite_4k_qd16_4j fio_run fio_randwrite_4k_qd16_4j \
        randwrite 4k 16 4 || rc=1
    run_one fio_randread_512_qd1_16t fio_run fio_randread_512_qd1_16t \
        randread 512 1 16 psync || rc=1
    rm -f "$W/fio.dat"
    return $rc
}

# ---------------------------------------------------------- small files
# capped_run WL UNIT EXPECT SUBCMD ARGS...: fsops_rate under the S_CAP
# cap (FSOPS_CAP); sets FS_COUNT. With EXPECT > 0 the count must be
# exactly EXPECT (read/delete after create).
capped_run() {
    FSOPS_CAP=$S_CAP fsops_rate "$@"
}

# created_note WL COUNT TOTAL: footnote when a capped create did less.
created_note() {
    (($2 < $3)) && note "$1" "capped at ${S_CAP} s: $2 of $3"
    return 0
}

# Tree A is made by 1 process, tree B by 8; read and delete follow the
# same split. Reads and ls -lR start with cold caches. Creates are capped
# at S_CAP seconds; the later phases work on what was created.
wl_smallfile() {
    local n=$S_SMALLFILES rc=0 a b na=0 nb=0 wl
    if run_one smallfile_create_1p capped_run smallfile_create_1p files/s 0 \
        smallfile-create "$W/sfa" 100 "$n" 1; then
        na=$FS_COUNT
    fi
    if run_one smallfile_create_8p capped_run smallfile_create_8p files/s 0 \
        smallfile-create "$W/sfb" 100 "$n" 8; then
        nb=$FS_COUNT
    fi
    ((na > 0 && nb > 0)) || return 1
    for wl in smallfile_create_1p smallfile_read_1p smallfile_stat \
        smallfile_delete_1p; do
        created_note "$wl" "$na" "$n"
    done
    for wl in smallfile_create_8p smallfile_read_8p smallfile_delete_8p; do
        created_note "$wl" "$nb" "$n"
    done
    drop_caches
    run_one smallfile_read_1p capped_run smallfile_read_1p files/s "$na" \
        smallfile-read "$W/sfa" 100 "$n" 1 || rc=1
    drop_caches
    run_one smallfile_read_8p capped_run smallfile_read_8p files/s "$nb" \
        smallfile-read "$W/sfb" 100 "$n" 8 || rc=1
    drop_caches
    probe_begin smallfile_stat
    a=$(now_ns)
    if tmo ls -lR "$W/sfa" >/dev/null; then
        b=$(now_ns)
        probe_end smallfile_stat
        emit smallfile_stat rate files/s "$(rate "$na" "$a" "$b")"
        probe_emit smallfile_stat "$na"
    else
        rc=1
    fi
    run_one smallfile_delete_1p capped_run smallfile_delete_1p files/s \
        "$na" smallfile-delete "$W/sfa" 100 "$n" 1 || rc=1
    run_one smallfile_delete_8p capped_run smallfile_delete_8p files/s \
        "$nb" smallfile-delete "$W/sfb" 100 "$n" 8 || rc=1
    return $rc
}

# ------------------------------------------------------------ metadata
wl_meta() {
    local rc=0 nd=0
    if run_one mkdir_rate capped_run mkdir_rate ops/s 0 mkdir "$W/md" \
        "$S_META"; then
        nd=$FS_COUNT
        created_note mkdir_rate "$nd" "$S_META"
        created_note rmdir_rate "$nd" "$S_META"
        run_one rmdir_rate capped_run rmdir_rate ops/s "$nd" rmdir "$W/md" \
            "$nd" || rc=1
    else
        rc=1
    fi
    if run_one rename_rate capped_run rename_rate ops/s 0 rename "$W/rn" \
        "$S_META"; then
        created_note rename_rate "$FS_COUNT" "$S_META"
    else
        rc=1
    fi
    return $rc
}

# ---------------------------------------------------------------- tree
# TREE_TAR / TREE_ENTRIES are made once per out dir by bench/run. The
# extract is capped at S_TREE_CAP seconds so a slow file system cannot
# eat the run's time budget: then the rates are over the entries that
# made it (counted by the find pass), and the values are footnoted.
wl_tree() {
    local a b xa xb n wl msg rc=0 capped=0
    mkdir "$W/tree.x" || return 1
    probe_begin tree_extract_rate
    xa=$(now_ns)
    timeout --kill-after=10 "$S_TREE_CAP" tar -xf "$TREE_TAR" -C "$W/tree.x"
    rc=$?
    xb=$(now_ns)
    probe_end tree_extract_rate
    if ((rc == 124)); then
        capped=1
    elif ((rc != 0)); then
        log "tree: tar -x failed ($rc)"
        return 1
    fi
    drop_caches
    probe_begin tree_find_rate
    a=$(now_ns)
    n=$(tmo find "$W/tree.x/tree" | wc -l) || return 1
    b=$(now_ns)
    probe_end tree_find_rate
    if ((!capped && n != TREE_ENTRIES)); then
        log "tree: found $n entries, expected $TREE_ENTRIES"
        return 1
    fi
    if ((capped)); then
        msg="extract capped at ${S_TREE_CAP} s: $n of $TREE_ENTRIES entries"
        for wl in tree_extract_rate tree_find_rate tree_rmrf_rate; do
            note "$wl" "$msg"
        done
    fi
    emit tree_extract_rate rate entries/s "$(rate "$n" "$xa" "$xb")"
    probe_emit tree_extract_rate "$n"
    emit tree_find_rate rate entries/s "$(rate "$n" "$a" "$b")"
    probe_emit tree_find_rate "$n"
    probe_begin tree_rmrf_rate
    a=$(now_ns)
    tmo rm -rf "$W/tree.x/tree" || return 1
    b=$(now_ns)
    probe_end tree_rmrf_rate
    rmdir "$W/tree.x"
    emit tree_rmrf_rate rate entries/s "$(rate "$n" "$a" "$b")"
    probe_emit tree_rmrf_rate "$n"
}

# ----------------------------------------------------------- aggregate
# agg_par N MODE EACH_MB: N dd processes in parallel, process i writing
# (MODE write, with fsync) or reading (MODE read) $W/agg.i. Fails if any
# of them fails.
agg_par() {
    local n=$1 mode=$2 each=$3 i pids=() rc=0 pid
    for ((i = 0; i < n; i++)); do
        if [[ $mode == write ]]; then
            tmo dd if=/dev/zero of="$W/agg.$i" bs=1M count="$each" \
                conv=fsync status=none &
        else
            tmo dd if="$W/agg.$i" of=/dev/null bs=1M status=none &
        fi
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || rc=1
    done
    return $rc
}

# Total S_AGG_MB split evenly across n processes, one file each.
wl_agg() {
    local n each a b rc=0
    for n in 1 2 4 8; do
        each=$((S_AGG_MB / n))
        probe_begin "agg_write_${n}p"
        a=$(now_ns)
        if agg_par "$n" write "$each"; then
            b=$(now_ns)
            probe_end "agg_write_${n}p"
            emit "agg_write_${n}p" throughput MB/s \
                "$(mbps $((each * n * MIB)) "$a" "$b")"
            probe_emit "agg_write_${n}p" "$(mb $((each * n * MIB)))"
            drop_caches
            probe_begin "agg_read_${n}p"
            a=$(now_ns)
            if agg_par "$n" read "$each"; then
                b=$(now_ns)
                probe_end "agg_read_${n}p"
                emit "agg_read_${n}p" throughput MB/s \
                    "$(mbps $((each * n * MIB)) "$a" "$b")"
                probe_emit "agg_read_${n}p" "$(mb $((each * n * MIB)))"
            else
                emit "agg_read_${n}p" throughput MB/s FAIL
                rc=1
            fi
        else
            emit "agg_write_${n}p" throughput MB/s FAIL
            emit "agg_read_${n}p" throughput MB/s FAIL
            rc=1
        fi
        rm -f "$W"/agg.*
    done
    return $rc
}
