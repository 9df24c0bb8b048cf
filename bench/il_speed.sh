#!/bin/sh
# SPDX-License-Identifier: MIT
# Time of `cfisem il` on a file (libc.so.6 by default) in each format,
# next to `readelf -wF` (binutils) on the same file, in one run. Rounds
# alternate the commands and the best round of each is kept; the output
# goes to /dev/null. Not a test.
#
#   bench/il_speed.sh [FILE] [ROUNDS]
set -eu
cfisem=${CFISEM:-build/cfisem}
file=${1:-/lib/x86_64-linux-gnu/libc.so.6}
rounds=${2:-10}

. "$(dirname "$0")/best_of.subr"

bench_run() {
    case $1 in
    readelf_wF) readelf -wF "$file" ;;
    il_text) "$cfisem" il "$file" ;;
    il_json) "$cfisem" il --format json "$file" ;;
    il_readelf) "$cfisem" il --format readelf "$file" ;;
    esac
}

names="readelf_wF il_text il_json il_readelf"
# shellcheck disable=SC2086
bench_best_of "$rounds" $names
echo "$file: best of $rounds rounds (wall time, output to /dev/null)"
printf '%-34s %10s %12s\n' command "ms" "vs readelf"
ref=$best_readelf_wF
for n in $names; do
    eval "b=\$best_$n"
    case $n in
    readelf_wF) label="readelf -wF" ;;
    il_text) label="cfisem il" ;;
    il_json) label="cfisem il --format json" ;;
    il_readelf) label="cfisem il --format readelf" ;;
    esac
    awk -v l="$label" -v b="$b" -v r="$ref" \
        'BEGIN { printf "%-34s %10.1f %11.2fx\n", l, b / 1000, r / b }'
done
