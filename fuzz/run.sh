#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh — runs the AFL++ harnesses built by `make fuzz-build`.
#
#   fuzz/run.sh smoke FUZZ_BUILD
#       each harness for FUZZ_SMOKE_TIME seconds (60), from its seeds, one
#       instance at a time; fails when harness 1 or 2 (ours) crashed;
#       harness 3's crashes (outside libraries) are reported only.
#   fuzz/run.sh campaign FUZZ_BUILD HARNESS...
#       each harness in turn: FUZZ_JOBS instances (one main, the others
#       secondaries, synchronised through one output folder) for FUZZ_TIME
#       seconds (0: until interrupted). Resumable: a second run continues
#       the campaign in FUZZ_BUILD/campaign/HARNESS.
#
# Either prints, per harness: executions, executions per second, edges
# found, map coverage, crashes and hangs. Run from the top of the tree.
set -eu

usage() {
    echo "usage: fuzz/run.sh smoke FUZZ_BUILD | campaign FUZZ_BUILD HARNESS..." >&2
    exit 1
}
[ $# -ge 2 ] || usage
mode=$1
fuzz_build=$2
shift 2

# afl-fuzz wants these; the harnesses abort on a sanitizer report and on
# a disagreement (UBSan traps: AFL_USE_UBSAN builds with trap-on-error).
export AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_NO_UI=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CRASHES=1
ASAN_OPTIONS="abort_on_error=1:symbolize=0:detect_leaks=0"
ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1:malloc_context_size=0"
export ASAN_OPTIONS="$ASAN_OPTIONS:detect_odr_violation=0"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:symbolize=0"

binary() {
    echo "$fuzz_build/afl/harness/fuzz_$1"
}

# The value of `key` in a fuzzer_stats file.
stat_of() {
    sed -n "s/^$2 *: *//p" "$1" | head -n 1
}

count_files() {
    if [ -d "$1" ]; then
        find "$1" -maxdepth 1 -type f -name 'id:*' | wc -l
    else
        echo 0
    fi
}

# One line per harness from all its instances' fuzzer_stats.
summarise() {
    harness=$1
    out=$2
    execs=0 speed=0 crashes=0 hangs=0 edges=0 cvg="" total=""
    for stats in "$out"/*/fuzzer_stats; do
        [ -f "$stats" ] || continue
        execs=$((execs + $(stat_of "$stats" execs_done)))
        speed=$(echo "$speed $(stat_of "$stats" execs_per_sec)" | awk '{printf "%.1f", $1 + $2}')
        e=$(stat_of "$stats" edges_found)
        if [ "$e" -gt "$edges" ]; then
            edges=$e
            cvg=$(stat_of "$stats" bitmap_cvg)
            total=$(stat_of "$stats" total_edges)
        fi
    done
    for instance in "$out"/*/; do
        crashes=$((crashes + $(count_files "$instance/crashes")))
        hangs=$((hangs + $(count_files "$instance/hangs")))
    done
    printf '%-10s %12s execs %9s/s  edges %s of %s (%s)  crashes %s  hangs %s\n' \
        "$harness" "$execs" "$speed" "$edges" "${total:-?}" "${cvg:-?}" \
        "$crashes" "$hangs"
    summary_crashes=$crashes
}

smoke() {
    time=${FUZZ_SMOKE_TIME:-60}
    failed=0
    for harness in cfi_bytes elf oracles; do
        out=$fuzz_build/smoke/$harness
        rm -rf "$out"
        mkdir -p "$out"
        echo "== fuzz_$harness: ${time} s" >&2
        afl-fuzz -i "fuzz/seeds/$harness" -o "$out" -x fuzz/cfi.dict \
            -V "$time" -t 2000 -- "$(binary "$harness")" \
            >"$out/afl-fuzz.log" 2>&1 || {
            echo "afl-fuzz failed for $harness: see $out/afl-fuzz.log" >&2
            tail -n 20 "$out/afl-fuzz.log" >&2
            failed=1
            continue
        }
        summarise "$harness" "$out"
        if [ "$summary_crashes" -gt 0 ]; then
            if [ "$harness" = oracles ]; then
                echo "   crashes in outside libraries (findings, not failures):" \
                     "fuzz/triage.sh $fuzz_build oracles" >&2
            else
                echo "   CRASH in our code: replay with" \
                     "$fuzz_build/replay/harness/fuzz_$harness $out/default/crashes" >&2
                failed=1
            fi
        fi
    done
    return $failed
}

# Starts the instances of one harness, waits for them; an interrupt stops
# the instances this script started, by their process ids.
campaign_one() {
    harness=$1
    jobs=${FUZZ_JOBS:-1}
    time=${FUZZ_TIME:-3600}
    out=$fuzz_build/campaign/$harness
    mkdir -p "$out"
    input="fuzz/seeds/$harness"
    if [ -f "$out/main/fuzzer_stats" ]; then
        input=-    # resume
    fi
    limit=""
    [ "$time" -gt 0 ] && limit="-V $time"
    echo "== fuzz_$harness: $jobs instance(s), ${time} s, in $out" >&2
    pids=""
    i=0
    while [ $i -lt "$jobs" ]; do
        if [ $i -eq 0 ]; then role="-M main"; name=main; else role="-S s$i"; name=s$i; fi
        # shellcheck disable=SC2086
        AFL_AUTORESUME=1 afl-fuzz -i "$input" -o "$out" $role -x fuzz/cfi.dict \
            $limit -t 2000 -- "$(binary "$harness")" >"$out/$name.log" 2>&1 &
        pids="$pids $!"
        i=$((i + 1))
    done
    # shellcheck disable=SC2064
    trap "kill $pids 2>/dev/null; exit 130" INT TERM
    status=0
    for pid in $pids; do
        wait "$pid" || status=1
    done
    trap - INT TERM
    [ $status -eq 0 ] || echo "an afl-fuzz instance failed: see $out/*.log" >&2
    summarise "$harness" "$out"
}

case "$mode" in
smoke) smoke ;;
campaign)
    [ $# -ge 1 ] || usage
    for harness in "$@"; do
        campaign_one "$harness"
    done
    ;;
*) usage ;;
esac
