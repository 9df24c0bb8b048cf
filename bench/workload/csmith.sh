#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/workload/csmith.sh OUTDIR CFISEM [COUNT] — the Csmith workloads of the
# real-stack benchmark (bench/real_stacks.c): random C programs whose own
# frames the benchmark unwinds.
#
# Seeds 1, 2, ... (csmith --no-argc --max-funcs 20 --seed S), built at -O2
# with -finstrument-functions, their main renamed csmith_main and their
# printf silenced, with bench/workload/csmith_hook.c beside them (it
# counts the program's live frames, inlined ones included, and calls the
# benchmark's leaf at a given depth). A seed's gcc build is first linked
# as a program that prints the most frames it had live, and run under a
# CSMITH_TIMEOUT (5 s) timeout; a seed whose run does not end normally, or
# whose calls never go MIN_DEPTH (5) deep (most of Csmith's programs stay
# 2 to 4 deep), is dropped. A kept seed is built by gcc and by clang into
# OUTDIR/libcfisem-csmith-S-CC.so, each with its eh_elf beside it (CFISEM
# compile) and a line "NAME DEPTH" in OUTDIR/workloads.txt, until COUNT
# (4) builds are kept or CSMITH_SEEDS (40) seeds were tried.
#
# A benchmark, not a test: without csmith (and libcsmith-dev's csmith.h)
# it writes an empty list and says so; `make corpus` installs them.
# csmith writes platform.info into its current folder: it runs in a
# temporary folder.
set -eu
out=$1
cfisem=$2
count=${3:-4}
timeout=${CSMITH_TIMEOUT:-5}
seeds=${CSMITH_SEEDS:-40}
min_depth=5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
list=$out/workloads.txt
: > "$list.tmp"
if ! command -v csmith > /dev/null 2>&1 || [ ! -f /usr/include/csmith/csmith.h ]; then
    echo "bench/workload/csmith.sh: csmith or /usr/include/csmith/csmith.h missing (make corpus installs them): no Csmith workloads" >&2
    mv "$list.tmp" "$list"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-O2 -w -I/usr/include/csmith -finstrument-functions -Dmain=csmith_main -Dprintf=csmith_printf"

# The most frames seed's program (work/program.c) has live, built by $1;
# nothing when it does not end normally.
probe() {
    # shellcheck disable=SC2086 # the flags are words
    $1 $flags -c -o "$work/probe.o" "$work/program.c" &&
        $1 -O2 -DCSMITH_DEPTH_PROBE -c -o "$work/hook-probe.o" "$here/csmith_hook.c" &&
        $1 -o "$work/probe" "$work/probe.o" "$work/hook-probe.o" &&
        timeout "$timeout" "$work/probe"
}

# The shared object and its eh_elf, built by $1 into $2. -Bsymbolic: the
# program's calls of __cyg_profile_func_enter are the hook's, not libc's
# (it defines an empty one, found first).
build() {
    # shellcheck disable=SC2086
    $1 $flags -fPIC -c -o "$work/program.o" "$work/program.c" &&
        $1 -O2 -fPIC -c -o "$work/hook.o" "$here/csmith_hook.c" &&
        $1 -shared -Wl,-Bsymbolic -o "$out/$2" "$work/program.o" "$work/hook.o" &&
        "$cfisem" compile "$out/$2" -o "$out/$2.eh_elf.so" > /dev/null
}

kept=0
seed=0
while [ "$kept" -lt "$count" ] && [ "$seed" -lt "$seeds" ]; do
    seed=$((seed + 1))
    (cd "$work" && csmith --no-argc --max-funcs 20 --seed "$seed" -o program.c) > /dev/null 2>&1 || continue
    depth=$(probe gcc 2> /dev/null) || continue
    [ "$depth" -ge "$min_depth" ] || continue
    for cc in gcc clang; do
        [ "$kept" -lt "$count" ] || break
        command -v "$cc" > /dev/null 2>&1 || continue
        [ "$cc" = gcc ] || depth=$(probe "$cc" 2> /dev/null) || continue
        name=libcfisem-csmith-$seed-$cc.so
        build "$cc" "$name" || continue
        echo "$name $depth" >> "$list.tmp"
        kept=$((kept + 1))
    done
done
mv "$list.tmp" "$list"
echo "bench/workload/csmith.sh: $kept Csmith workloads in $out ($seed seeds tried)"
