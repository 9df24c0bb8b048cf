#!/bin/sh
# SPDX-License-Identifier: MIT
# The unwinders on real perf samples (make bench-perf; needs perf record
# with --call-graph dwarf: root, or perf_event_paranoid <= 1).
#
# Records two workloads with `perf record --call-graph dwarf,SIZE -F 999`
# at the default stack copy (8192 bytes) and the largest (65528):
# hackbench (rt-tests; processes exchanging messages over sockets) and
# bench/workload/stl_work.cc (std::sort, std::map and std::ostringstream
# through libstdc++, under a recursion through std::function). Then, on
# each perf.data:
#   1. build/bench/perf_unwind: the unwinding alone, cfisem's eh_elfs
#      (cold and warm) and interpreter, libunwind and libdw as perf
#      drives them, on the same samples, the passes timed in the
#      thread's CPU time (--cpu-time: on a shared machine a long pass is
#      preempted more than a short one) (a markdown table; the
#      differences and the eh_elf build on stderr, printed after);
#   2. end to end, best of ROUNDS (wall time, output to /dev/null):
#      `cfisem perf` (eh_elfs cached; and --engine interp) against
#      `perf script --no-inline` with -F ip,sym and with the fields
#      `cfisem perf` prints (comm,tid,pid,time,period,event,ip,sym,
#      symoff,dso).
# Not a test: the numbers depend on the machine and its load.
#
#   bench/perf_table.sh [ROUNDS]     (default 5)
set -eu
cfisem=${CFISEM:-build/cfisem}
unwind=${PERF_UNWIND:-build/bench/perf_unwind}
stl=${STL_WORK:-${CFISEM_WORKLOAD:-build/workload}/stl_work}
rounds=${1:-5}
. "$(dirname "$0")/best_of.subr"

work=$(mktemp -d "${TMPDIR:-/tmp}/perf_table-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! command -v hackbench >/dev/null; then
    echo "perf_table.sh: hackbench is not installed" \
         "(scripts/install-deps bench installs rt-tests)" >&2
    exit 1
fi
if ! perf record -q --call-graph dwarf -o "$work/probe.data" -- true \
        >/dev/null 2>&1; then
    echo "perf_table.sh: perf record --call-graph dwarf cannot run here" \
         "(no perf, or perf_event_paranoid too high): nothing measured" >&2
    exit 1
fi

files=""
for size in 8192 65528; do
    perf record -q --call-graph "dwarf,$size" -F 999 \
        -o "$work/hackbench-$size.data" -- hackbench -l 100 >/dev/null 2>&1
    perf record -q --call-graph "dwarf,$size" -F 999 \
        -o "$work/stl_work-$size.data" -- "$stl" 300 >/dev/null 2>&1
    files="$files hackbench-$size stl_work-$size"
done

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) processors"
echo
echo "Unwinding alone (build/bench/perf_unwind, best of $rounds warm passes, CPU time):"
echo
"$unwind" --header --rounds "$rounds" --cpu-time
for f in $files; do
    "$unwind" "$work/$f.data" --rounds "$rounds" --label "$f" --cpu-time \
        2>>"$work/notes"
done
echo
sed 's/^/    /' "$work/notes"
echo

echo "End to end (wall time, best of $rounds, output to /dev/null):"
echo
echo "| perf.data | command | ms | × perf script -F ip,sym |"
echo "|---|---|---|---|"
fields=comm,tid,pid,time,period,event,ip,sym,symoff,dso
bench_run() {
    case $1 in
    script_ip_sym) perf script -i "$data" -F ip,sym --no-inline ;;
    script_fields) perf script -i "$data" -F "$fields" --no-inline ;;
    cfisem) "$cfisem" perf "$data" --cache "$work/cache" ;;
    cfisem_interp) "$cfisem" perf "$data" --engine interp ;;
    esac
}
names="script_ip_sym script_fields cfisem cfisem_interp"
for f in $files; do
    data=$work/$f.data
    "$cfisem" perf "$data" --build --cache "$work/cache" >/dev/null 2>&1
    # shellcheck disable=SC2086
    bench_best_of "$rounds" $names
    for n in $names; do
        eval "b=\$best_$n"
        case $n in
        script_ip_sym) label="perf script -F ip,sym --no-inline" ;;
        script_fields) label="perf script -F $fields --no-inline" ;;
        cfisem) label="cfisem perf (eh_elfs cached)" ;;
        cfisem_interp) label="cfisem perf --engine interp" ;;
        esac
        awk -v f="$f" -v l="$label" -v b="$b" -v r="$best_script_ip_sym" \
            'BEGIN { printf "| %s | %s | %.1f | %.2f |\n", f, l, b / 1000,
                     b / r }'
    done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
