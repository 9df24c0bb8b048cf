#!/bin/sh
# SPDX-License-Identifier: MIT
# Time of `cfisem stack PID` (the compiled engine, eh_elfs already in the
# cache; and interp) on the stack suite's program (tests/stack/target.cc:
# three threads, a signal handler, libstdc++ frames), next to `eu-stack
# -p PID` (elfutils) and gdb's `thread apply all bt` (without the debug
# files, whose tail-call frames no CFI describes) on the same process.
# Rounds alternate the commands and the best round of each is kept; the
# output goes to /dev/null. Not a test.
#
#   bench/stack_speed.sh [PROGRAM] [ROUNDS]
set -eu
cfisem=${CFISEM:-build/cfisem}
program=${1:-${CFISEM_STACK_TARGET:-build/tests/stack-target}}
rounds=${2:-11}
cache=$(mktemp -d)
out=$(mktemp)
"$program" > "$out" &
child=$!
trap 'kill $child 2>/dev/null; wait $child 2>/dev/null; rm -rf "$cache" "$out"' EXIT
while ! grep -q '^ready' "$out"; do sleep 0.1; done
pid=$(awk '{ print $2 }' "$out")
sleep 0.5
"$cfisem" stack "$pid" --cache "$cache" > /dev/null   # builds the eh_elfs

. "$(dirname "$0")/best_of.subr"

bench_run() {
    case $1 in
    eu_stack) eu-stack -p "$pid" ;;
    compiled) "$cfisem" stack "$pid" --cache "$cache" ;;
    interp) "$cfisem" stack "$pid" --engines interp ;;
    gdb) gdb -nx -batch -iex 'set debug-file-directory /nonexistent' \
             -p "$pid" -ex 'thread apply all bt' ;;
    esac
}

names="eu_stack compiled interp gdb"
# shellcheck disable=SC2086
bench_best_of "$rounds" $names
frames=$("$cfisem" stack "$pid" --cache "$cache" | grep -c '^#')
echo "$program: $frames frames; best of $rounds rounds (wall time)"
printf '%-34s %10s %12s\n' command "ms" "vs eu-stack"
ref=$best_eu_stack
for n in $names; do
    eval "b=\$best_$n"
    case $n in
    eu_stack) label="eu-stack -p" ;;
    compiled) label="cfisem stack (compiled)" ;;
    interp) label="cfisem stack --engines interp" ;;
    gdb) label="gdb thread apply all bt" ;;
    esac
    awk -v l="$label" -v b="$b" -v r="$ref" \
        'BEGIN { printf "%-34s %10.1f %11.2fx\n", l, b / 1000, r / b }'
done
