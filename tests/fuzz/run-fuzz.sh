#!/usr/bin/env bash
# run-fuzz.sh: runs libFuzzer targets over the tree's corpus (make fuzz,
# make check-fuzz; README.md).
#   run-fuzz.sh [--seconds N] [--jobs J] [--keep] --src DIR --out DIR T...
# Each target T (a program in the current directory) runs for N seconds
# (default 20) with the tree's seeds (DIR/corpus/T) and dictionary
# (DIR/dict/T.dict, if any), J targets at a time (default 1). Inputs it
# finds go to OUT/corpus/T, kept across runs with --keep (make fuzz),
# else a fresh directory each run, so that a short run is the same every
# time. A crash, leak, timeout or out-of-memory writes OUT/artifacts/T-*
# and fails the run; the log is OUT/logs/T.log (its end is printed).
set -uo pipefail

seconds=20
jobs=1
keep=0
src=
out=
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --src) src="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; break ;;
    -*) echo "run-fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [ -z "$src" ] || [ -z "$out" ] || [ $# -eq 0 ]; then
    echo "usage: run-fuzz.sh [--seconds N] [--jobs J] [--keep]" \
        "--src DIR --out DIR TARGET..." >&2
    exit 2
fi
case "$seconds" in
'' | *[!0-9]*) echo "run-fuzz.sh: --seconds wants a number" >&2; exit 2 ;;
esac
mkdir -p "$out/artifacts" "$out/logs" "$out/corpus"

# run_one T: one target; returns its exit status.
run_one() {
    local t="$1" work="$out/corpus/$1" dict=()

    [ "$keep" = 1 ] || rm -rf "$work"
    mkdir -p "$work"
    [ -f "$src/dict/$t.dict" ] && dict=("-dict=$src/dict/$t.dict")
    # -timeout: an input taking over 10 s is a hang; -rss_limit_mb bounds
    # what one input may make the decoders allocate.
    "./$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
        "${dict[@]}" "$work" "$src/corpus/$t" > "$out/logs/$t.log" 2>&1
}

failed=()
running=()
names=()
# Targets start J at a time; each finished one is reported in order.
finish() {
    local pid="${running[0]}" t="${names[0]}" rc
    wait "$pid"
    rc=$?
    running=("${running[@]:1}")
    names=("${names[@]:1}")
    if [ "$rc" -eq 0 ]; then
        echo "fuzz: $t: ok ($(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' \
            "$out/logs/$t.log" | awk '{print $2}') runs in ${seconds}s)"
    else
        echo "fuzz: $t: FAILED (exit $rc); log $out/logs/$t.log:"
        tail -n 40 "$out/logs/$t.log"
        failed+=("$t")
    fi
}
for t in "$@"; do
    if [ ! -x "./$t" ]; then
        echo "fuzz: $t: not built (./configure --enable-fuzzing)" >&2
        failed+=("$t")
        continue
    fi
    run_one "$t" &
    running+=("$!")
    names+=("$t")
    [ "${#running[@]}" -ge "$jobs" ] && finish
done
while [ "${#running[@]}" -gt 0 ]; do
    finish
done
[ "${#failed[@]}" -eq 0 ] || { echo "fuzz: failed: ${failed[*]}"; exit 1; }
