#!/bin/sh
# SPDX-License-Identifier: MIT
# seeds.sh OUT — the seed files of cfisem's newer readers, written now
# by the tools that make them (nothing of them is checked in):
#   OUT/prog                  a small program (three frames deep)
#   OUT/perf.data             perf record --call-graph dwarf of it
#   OUT/perf-z.data           the same with -z (zstd-compressed records)
#   OUT/perf-pipe.data        the same in pipe mode (perf record -o -)
#   OUT/prog.core             gdb's gcore of it, paused (EXE: OUT/prog)
#   OUT/zstd.so               .debug_frame compressed with zstd (objcopy)
#   OUT/split.so              stripped, its CFI only in its debug file,
#   OUT/split.so.d/.build-id/NN/REST.debug  found by build-id there
# A seed a tool cannot make (no perf, no permission to record, no gdb)
# is left out with one line on stderr; robust takes what is there.
set -u
out=${1:?usage: seeds.sh OUT}
cc=${CC:-cc}
mkdir -p "$out" || exit 2
cd "$out" || exit 2
rm -rf perf.data perf-z.data perf-pipe.data prog.core zstd.so split.so \
    split.so.d

cat > prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((noinline)) static long leaf(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i ^ (s >> 3);
    return s;
}
__attribute__((noinline)) static long mid(long n) { return leaf(n) + 1; }
__attribute__((noinline)) static long top(long n) { return mid(n) * 2; }
int main(int argc, char **argv)
{
    long r = top(argc > 1 ? atol(argv[1]) : 1);
    if (argc > 2) {
        fprintf(stderr, "ready\n");
        pause();
    }
    printf("%ld\n", r);
    return 0;
}
EOF
# Enough functions for a .debug_frame that compression makes smaller
# (objcopy leaves uncompressed a section that would not shrink).
i=0
: > lib.c
while [ $i -lt 64 ]; do
    echo "__attribute__((noinline)) long g$i(long x)" \
         "{ return x * $i + 1; }" >> lib.c
    echo "long f$i(long x) { long y = g$i(x); return y + g$i(y) * $i; }" \
         >> lib.c
    i=$((i + 1))
done

note() { echo "seeds.sh: $*" >&2; }

$cc -O1 -g -Wl,--build-id -o prog prog.c || { note "cannot compile"; exit 2; }

if command -v perf >/dev/null 2>&1; then
    rec="perf record -q --call-graph dwarf,2048 -F 1000"
    $rec -o perf.data ./prog 20000000 >/dev/null 2>&1 ||
        { rm -f perf.data; note "perf record failed: no perf.data"; }
    $rec -z -o perf-z.data ./prog 20000000 >/dev/null 2>&1 ||
        { rm -f perf-z.data; note "perf record -z failed"; }
    $rec -o - ./prog 20000000 2>/dev/null > perf-pipe.data ||
        { rm -f perf-pipe.data; note "perf record -o - failed"; }
else
    note "no perf: no perf.data seeds"
fi

if command -v gcore >/dev/null 2>&1; then
    ./prog 1 pause 2>ready &
    pid=$!
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -s ready ] && break
        sleep 0.2
    done
    gcore -o prog.core.tmp "$pid" >/dev/null 2>&1 &&
        mv "prog.core.tmp.$pid" prog.core || note "gcore failed: no core"
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f ready prog.core.tmp.*
else
    note "no gcore (gdb): no core seed"
fi

# .debug_frame alone (no .eh_frame), so that the reader must decompress
# or find the debug file to see any CFI.
cflags="-O1 -g -fPIC -shared -fno-asynchronous-unwind-tables -Wl,--build-id"
if $cc $cflags -o frames.so lib.c; then
    objcopy --compress-debug-sections=zstd frames.so zstd.so 2>/dev/null ||
        { rm -f zstd.so; note "objcopy cannot compress with zstd"; }
    id=$(readelf -n frames.so | sed -n 's/.*Build ID: *//p')
    if [ -n "$id" ]; then
        nn=$(echo "$id" | cut -c1-2)
        rest=$(echo "$id" | cut -c3-)
        mkdir -p "split.so.d/.build-id/$nn"
        dbg="split.so.d/.build-id/$nn/$rest.debug"
        objcopy --only-keep-debug frames.so "$dbg"
        objcopy --strip-debug frames.so split.so
    else
        note "no build-id: no split.so"
    fi
    rm -f frames.so
fi
rm -f prog.c lib.c
ls
