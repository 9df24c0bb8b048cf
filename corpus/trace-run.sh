#!/bin/sh
# trace-run.sh OUTDIR [CSMITH_DIR] — cfisem trace over small system
# commands, the suite's C++ and signal programs, and the builds of a Csmith
# corpus (corpus/csmith.sh): one report per program in OUTDIR (text and
# JSON, with reproducers under OUTDIR/dumps-NAME), and OUTDIR/table.txt,
# one line per program:
#   name instructions checked il interp compiled unexplained groups end
# (il, interp, compiled: mismatching stops of each engine; unexplained:
# over every engine, context restores left out).
#
# CFISEM (build/cfisem), TRACE_ENGINES (il,interp,compiled),
# TRACE_STEPS (step limit per program, 3000000), TRACE_TIMEOUT (s, 300).
# Csmith programs are traced from main (their start-up is the same in
# every build), the commands from their first instruction.
set -eu

out=$1
csmith_dir=${2:-}
cfisem=${CFISEM:-build/cfisem}
engines=${TRACE_ENGINES:-il,interp,compiled}
steps=${TRACE_STEPS:-3000000}
timeout=${TRACE_TIMEOUT:-300}
src=$(dirname "$0")/..
mkdir -p "$out"
table=$out/table.txt
: > "$table"

# The number after "LABEL" on the report line that starts with WORD.
field() {
    awk -v word="$2" -v label="$3" '$1 == word {
        for (i = 1; i < NF; i++) if ($i == label) { v = $(i + 1); gsub(/[,;]/, "", v); print v; exit }
    }' "$1"
}

# trace NAME [cfisem trace options] -- PROGRAM ARGS...
trace() {
    name=$1
    shift
    report=$out/$name.txt
    status=0
    "$cfisem" trace --engines "$engines" --step-limit "$steps" \
        --timeout "$timeout" --cache "$out/cache" --dumps "$out/dumps-$name" \
        --json "$out/$name.json" --quiet "$@" > "$report" 2>&1 || status=$?
    instructions=$(field "$report" instructions traced)
    checked=$(field "$report" frames checked)
    il=$(field "$report" il mismatch)
    interp=$(field "$report" interp mismatch)
    compiled=$(field "$report" compiled mismatch)
    explained=$(awk '/in context restores/ { gsub(/[(]/, ""); n += $(NF - 3) } END { print n + 0 }' "$report")
    groups=$(grep -c '^  /' "$report" || true)
    end=$(sed -n '1s/^program //p' "$report")
    unexplained=$(( ${il:-0} + ${interp:-0} + ${compiled:-0} - explained ))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (exit %s)\n' "$name" \
        "${instructions:-0}" "${checked:-0}" "${il:--}" "${interp:--}" \
        "${compiled:--}" "$unexplained" "$groups" "$end" "$status" >> "$table"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seq 1 2000 | sort -r > "$tmp/numbers.txt"
printf 'one\ntwo\nthree\n' > "$tmp/small.txt"

trace true -- /bin/true
trace ls -- /bin/ls /
trace sort -- /usr/bin/sort "$tmp/numbers.txt"
trace gzip -- /bin/gzip -c "$tmp/numbers.txt"
trace grep -- /bin/grep two "$tmp/small.txt"

if command -v g++ > /dev/null; then
    g++ -O1 -o "$tmp/throw" "$src/tests/trace/throw.cc"
    trace throw-cxx --from main -- "$tmp/throw"
fi
cc -O1 -o "$tmp/signal" "$src/tests/trace/signal.c"
trace signal-longjmp -- "$tmp/signal"

if [ -n "$csmith_dir" ]; then
    for build in "$csmith_dir"/seed-*/*-O*; do
        [ -x "$build" ] || continue
        seed=$(basename "$(dirname "$build")")
        trace "csmith-$seed-$(basename "$build")" --from main -- "$build"
    done
fi
cat "$table"
