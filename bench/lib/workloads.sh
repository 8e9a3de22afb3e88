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

# tmo CMD...: run a workload command under the per-command time limit.
tmo() { timeout --kill-after=10 "$S_TIMEOUT" "$@"; }

# fsops SUBCMD ARGS...: run the python driver; sets FS_COUNT and FS_SECS.
fsops() {
    local out
    out=$(tmo python3 "$BENCH_LIB/fsops.py" "$@") || return 1
    read -r FS_COUNT FS_SECS <<<"$out"
    [[ -n ${FS_SECS:-} ]]
}

# fsops_rate WORKLOAD UNIT SUBCMD ARGS...: fsops + emit COUNT/SECS.
fsops_rate() {
    local wl=$1 unit=$2
    shift 2
    fsops "$@" || return 1
    emit "$wl" rate "$unit" \
        "$(awk -v n="$FS_COUNT" -v s="$FS_SECS" \
            'BEGIN { if (s <= 0) s = 1e-9; printf "%.2f", n / s }')"
}

# ---------------------------------------------------------------- seq
wl_seqwrite_1g() {
    local a b
    a=$(now_ns)
    tmo dd if=/dev/zero of="$W/seq.dat" bs=1M count=1024 conv=fsync \
        status=none || return 1
    b=$(now_ns)
    emit seqwrite_1g throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
}

wl_seqread_1g_cold() {
    local a b
    drop_caches
    a=$(now_ns)
    tmo dd if="$W/seq.dat" of=/dev/null bs=1M status=none || return 1
    b=$(now_ns)
    emit seqread_1g_cold throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
}

wl_seqread_1g_warm() {
    local a b
    a=$(now_ns)
    tmo dd if="$W/seq.dat" of=/dev/null bs=1M status=none || return 1
    b=$(now_ns)
    emit seqread_1g_warm throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
}

# cp of the (warm) 1 GiB file, fsync of the copy included.
wl_copy_1g() {
    local a b
    a=$(now_ns)
    tmo cp "$W/seq.dat" "$W/copy.dat" || return 1
    tmo sync "$W/copy.dat" || return 1
    b=$(now_ns)
    rm -f "$W/copy.dat" "$W/seq.dat"
    emit copy_1g throughput MB/s "$(mbps $((1024 * MIB)) "$a" "$b")"
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
    tmo fio --name="$wl" --filename="$W/fio.dat" --size="${S_FIO_MB}M" \
        --rw="$rw" --bs="$bs" --iodepth="$qd" --numjobs="$jobs" \
        --ioengine="$engine" --direct="$direct" --invalidate=1 --thread \
        --time_based --runtime="$S_FIO_SECS" --group_reporting \
        --randrepeat=1 --norandommap --output-format=json \
        --output="$json" >>"$LOG" 2>&1 || return 1
    emit "$wl" iops IOPS "$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))' "$json")"
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
# capped_run WL UNIT EXPECT SUBCMD ARGS...: fsops under the S_CAP cap
# (FSOPS_CAP), emit the rate, note a capped run, set FS_COUNT. With
# EXPECT > 0 the count must be exactly EXPECT (read/delete after create).
capped_run() {
    local wl=$1 unit=$2 expect=$3
    shift 3
    FSOPS_CAP=$S_CAP fsops_rate "$wl" "$unit" "$@" || return 1
    if ((expect > 0 && FS_COUNT != expect)); then
        log "$wl: did $FS_COUNT, expected $expect"
        return 1
    fi
    return 0
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
    a=$(now_ns)
    if tmo ls -lR "$W/sfa" >/dev/null; then
        b=$(now_ns)
        emit smallfile_stat rate files/s "$(rate "$na" "$a" "$b")"
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
    xa=$(now_ns)
    timeout --kill-after=10 "$S_TREE_CAP" tar -xf "$TREE_TAR" -C "$W/tree.x"
    rc=$?
    xb=$(now_ns)
    if ((rc == 124)); then
        capped=1
    elif ((rc != 0)); then
        log "tree: tar -x failed ($rc)"
        return 1
    fi
    drop_caches
    a=$(now_ns)
    n=$(tmo find "$W/tree.x/tree" | wc -l) || return 1
    b=$(now_ns)
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
    emit tree_find_rate rate entries/s "$(rate "$n" "$a" "$b")"
    a=$(now_ns)
    tmo rm -rf "$W/tree.x/tree" || return 1
    b=$(now_ns)
    rmdir "$W/tree.x"
    emit tree_rmrf_rate rate entries/s "$(rate "$n" "$a" "$b")"
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
        a=$(now_ns)
        if agg_par "$n" write "$each"; then
            b=$(now_ns)
            emit "agg_write_${n}p" throughput MB/s \
                "$(mbps $((each * n * MIB)) "$a" "$b")"
            drop_caches
            a=$(now_ns)
            if agg_par "$n" read "$each"; then
                b=$(now_ns)
                emit "agg_read_${n}p" throughput MB/s \
                    "$(mbps $((each * n * MIB)) "$a" "$b")"
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
