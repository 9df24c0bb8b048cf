#!/bin/sh
# SPDX-License-Identifier: MIT
# libfuzzer.sh — runs the libFuzzer targets fuzz/oss-fuzz/build.sh wrote.
#
#   fuzz/libfuzzer.sh run OUT [NAME...]
#       each target (default: every one in OUT) for FUZZ_SECONDS seconds
#       (20), one process, nice, from a fresh corpus beside OUT
#       (OUT-work/corpus/NAME) and its seed corpus, with its dict and
#       options; fails when a target stops on a crash, a sanitizer report
#       or a disagreement of our engines (fuzz_oracles*: a crash whose
#       first frame is ours; those in the outside libraries are printed,
#       the run goes on in fork mode). Inputs: OUT-work/artifacts/NAME/.
#       Outside engines' unexplained differences go to
#       OUT-work/findings/NAME (CFISEM_FUZZ_FINDINGS).
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
top=$(pwd)
ASAN_OPTIONS="abort_on_error=1:symbolize=1:detect_odr_violation=0"
export ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"

# The value of `key` in target NAME's options file (empty: none).
option() {
    sed -n "s/^$2 *= *//p" "$out/$1.options" 2>/dev/null | head -n 1
}

# The crash class of a saved input of fuzz_oracles*: "ours" when the
# replayed report is a disagreement or its first frame is in our code
# (other than fuzz/oracle_*.c, which reads what the libraries return),
# else "library: FRAME", or "not reproduced".
classify() {
    report=$("$out/$1" "$2" 2>&1 || true)
    if echo "$report" | grep -q 'cfisem fuzz: disagreement'; then
        echo ours
        return
    fi
    frame=$(echo "$report" | grep -m 1 -E '^ +#0 ' | sed 's/^ *#0 0x[0-9a-f]* in //')
    if [ -z "$frame" ]; then
        echo "not reproduced"
    elif echo "$frame" | grep -q " $top/[^ ]*\.c:[0-9]" &&
        ! echo "$frame" | grep -q " $top/fuzz/oracle_"; then
        echo "ours: $frame"
    else
        echo "library: $frame"
    fi
}

# run NAME SECONDS: one libFuzzer run; prints its summary line; returns
# non-zero when the target stopped on a crash of ours. fuzz_oracles*
# run in fork mode (-fork=1, crashes, timeouts and out-of-memory ignored):
# a crash inside libdwarf, libdw or libunwind is a finding of the
# library, printed with its first frame, and the run goes on.
run_one() {
    name=$1
    seconds=$2
    corpus=$work/corpus/$name
    seeds=$work/seeds/$name
    rm -rf "$corpus" "$seeds" "$work/artifacts/$name"
    mkdir -p "$corpus" "$seeds" "$work/artifacts/$name" "$work/findings/$name"
    unzip -q -o "$out/${name}_seed_corpus.zip" -d "$seeds"
    log=$work/$name.log
    status=0
    fork=""
    case $name in
        fuzz_oracles*) fork="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1" ;;
    esac
    # shellcheck disable=SC2086 # $fork is a list of options
    CFISEM_FUZZ_FINDINGS=$work/findings/$name nice -n 19 "$out/$name" \
        $fork -max_total_time="$seconds" -print_final_stats=1 \
        -dict="$out/$name.dict" -max_len="$(option "$name" max_len)" \
        -timeout="$(option "$name" timeout)" \
        -detect_leaks="$(option "$name" detect_leaks)" \
        -artifact_prefix="$work/artifacts/$name/" \
        "$corpus" "$seeds" > "$log" 2>&1 || status=$?
    if [ -n "$fork" ]; then
        last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1)
        runs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
        speed=$(echo "$last" | sed -n 's/.*exec\/s \([0-9]*\).*/\1/p')
    else
        last=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    fi
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$last" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
    found=$(find "$work/findings/$name" -name '*.txt' | wc -l)
    ours=0
    crashes=0
    for artifact in "$work/artifacts/$name"/*; do
        [ -f "$artifact" ] || continue
        crashes=$((crashes + 1))
        if [ -n "$fork" ]; then
            class=$(classify "$name" "$artifact")
            echo "  $name: $(basename "$artifact"): $class" >&2
            case $class in ours*) ours=1 ;; esac
        fi
    done
    if [ -z "$fork" ] && [ "$status" -ne 0 ]; then
        ours=1
    fi
    if [ "$ours" -eq 0 ]; then end=ok; else end="stopped ($status)"; fi
    printf '%-26s %4ss runs %8s exec/s %5s cov %5s ft %6s corp %-11s crashes %s outside %s %s\n' \
        "$name" "$seconds" "${runs:-?}" "${speed:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "$crashes" "$found" "$end"
    if [ "$ours" -ne 0 ]; then
        grep -E 'ERROR|disagreement|SUMMARY|artifact' "$log" | head -n 8 >&2
        echo "  log: $log" >&2
    fi
    return "$ours"
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
