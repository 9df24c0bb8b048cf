#!/bin/sh
# SPDX-License-Identifier: MIT
# libfuzzer.sh — runs the libFuzzer targets fuzz/oss-fuzz/build.sh wrote.
#
#   fuzz/libfuzzer.sh run OUT [NAME...]
#       each target (default: every one in OUT) for FUZZ_SECONDS seconds
#       (20), one process, nice, from a fresh corpus beside OUT
#       (OUT-work/corpus/NAME) and its seed corpus, with its dict and
#       options; fails when a target stops on a crash, a sanitizer report
#       or a disagreement of our engines. Outside engines' unexplained
#       differences go to OUT-work/findings/NAME (CFISEM_FUZZ_FINDINGS).
#   fuzz/libfuzzer.sh measure OUT STATS
#       each harness for FUZZ_SECONDS (60) plain and _structured, one
#       after the other on one core, each from its seeds: a table row per
#       target (execs, execs per second, cov, ft, corpus); then STATS
#       (build/harness/fuzz_mutate_stats) on the seeds: the share of
#       mutants that cfi/ still loads, structured vs byte mutator.
#
# Prints one line per target: runs, execs per second, cov and ft (the
# edges and features libFuzzer counts), corpus size, the end.
# Run from the top of the tree.
set -eu

usage() {
    echo "usage: fuzz/libfuzzer.sh run OUT [NAME...] | measure OUT STATS" >&2
    exit 1
}
[ $# -ge 2 ] || usage
mode=$1
out=$2
shift 2
work=$out-work
ASAN_OPTIONS="abort_on_error=1:symbolize=1:detect_odr_violation=0"
export ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"

# The value of `key` in target NAME's options file (empty: none).
option() {
    sed -n "s/^$2 *= *//p" "$out/$1.options" 2>/dev/null | head -n 1
}

# run NAME SECONDS: one libFuzzer run; prints its summary line; returns
# libFuzzer's exit status.
run_one() {
    name=$1
    seconds=$2
    corpus=$work/corpus/$name
    seeds=$work/seeds/$name
    rm -rf "$corpus" "$seeds"
    mkdir -p "$corpus" "$seeds" "$work/artifacts" "$work/findings/$name"
    unzip -q -o "$out/${name}_seed_corpus.zip" -d "$seeds"
    log=$work/$name.log
    status=0
    CFISEM_FUZZ_FINDINGS=$work/findings/$name nice -n 19 "$out/$name" \
        -max_total_time="$seconds" -print_final_stats=1 \
        -dict="$out/$name.dict" -max_len="$(option "$name" max_len)" \
        -timeout="$(option "$name" timeout)" \
        -detect_leaks="$(option "$name" detect_leaks)" \
        -artifact_prefix="$work/artifacts/$name-" \
        "$corpus" "$seeds" > "$log" 2>&1 || status=$?
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$done_line" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
    found=$(find "$work/findings/$name" -name '*.txt' | wc -l)
    if [ "$status" -eq 0 ]; then end=ok; else end="stopped ($status)"; fi
    printf '%-26s %5ss runs %9s  exec/s %6s  cov %5s  ft %6s  corp %-12s outside %s  %s\n' \
        "$name" "$seconds" "${runs:-?}" "${speed:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "$found" "$end"
    if [ "$status" -ne 0 ]; then
        grep -E 'ERROR|disagreement|SUMMARY|artifact' "$log" | head -n 8 >&2
        echo "  log: $log" >&2
    fi
    return "$status"
}

targets() {
    for t in "$out"/fuzz_*; do
        case $t in *.*) continue ;; esac
        [ -x "$t" ] && basename "$t"
    done
}

case $mode in
run)
    names=${*:-$(targets)}
    failed=0
    for name in $names; do
        run_one "$name" "${FUZZ_SECONDS:-20}" || failed=1
    done
    exit $failed
    ;;
measure)
    [ $# -eq 1 ] || usage
    stats=$1
    failed=0
    for name in $(targets); do
        case $name in *_structured) continue ;; esac
        run_one "$name" "${FUZZ_SECONDS:-60}" || failed=1
        run_one "${name}_structured" "${FUZZ_SECONDS:-60}" || failed=1
    done
    "$stats" 2000 cfi_bytes fuzz/seeds/cfi_bytes
    "$stats" 400 elf fuzz/seeds/elf
    exit $failed
    ;;
*)
    usage
    ;;
esac
