#!/bin/sh
# sframe-run.sh OUTDIR — GNU as's SFrame (`--gsframe`) checked against the
# DWARF it comes from, with `cfisem validate FILE --sframe`, on:
#   cases    every hand-written case (corpus/cases/*.S), linked as make
#            links them, assembled with -Wa,--gsframe;
#   gen      GEN (default 200) programs of `cfisem gen` (seeds 1..GEN,
#            .eh_frame only), the same way;
#   csmith   CSMITH (default 20) csmith programs (seeds 1..CSMITH,
#            --no-argc --max-funcs 20) built by $CC at each of LEVELS
#            (default "O0 O1 O2 O3 Os"), with and without
#            -fomit-frame-pointer.
# For each file OUTDIR/KIND/NAME.txt holds the validate output; a line per
# file in OUTDIR/results.txt: KIND NAME EXIT PROBLEMS DROPPED; the
# assembler's warnings in OUTDIR/KIND/NAME.as.txt. Prints a summary per
# kind. Environment: CFISEM (default build/cfisem), CC (cc).
#
# POSIX sh; needs gcc, GNU as 2.40 or later, csmith for the csmith part.
set -u

here=$(cd "$(dirname "$0")" && pwd)
CFISEM=${CFISEM:-$here/../build/cfisem}
CC=${CC:-cc}
GEN=${GEN:-200}
CSMITH=${CSMITH:-20}
LEVELS=${LEVELS:-O0 O1 O2 O3 Os}
out=${1:?usage: sframe-run.sh OUTDIR}
mkdir -p "$out/cases" "$out/gen" "$out/csmith"
: > "$out/results.txt"

# validate KIND NAME FILE: one line of results.txt
validate() {
    "$CFISEM" validate "$3" --sframe --show 50 > "$out/$1/$2.txt" 2>&1
    status=$?
    problems=$(sed -n 's/^result: \([0-9]*\) problem.*/\1/p' "$out/$1/$2.txt")
    dropped=$(sed -n 's/.*; \([0-9]*\) FDEs not in SFrame$/\1/p' \
              "$out/$1/$2.txt")
    echo "$1 $2 $status ${problems:--} ${dropped:--}" >> "$out/results.txt"
}

link_case() { # SOURCE OUTPUT
    $CC -shared -nostdlib -Wl,--section-start=.text=0x1000 \
        -Wl,--build-id=none -Wa,--gsframe -o "$2" "$1"
}

for source in "$here"/cases/*.S; do
    name=$(basename "$source" .S)
    link_case "$source" "$out/cases/$name.so" 2> "$out/cases/$name.as.txt" &&
        validate cases "$name" "$out/cases/$name.so"
done

seed=1
while [ "$seed" -le "$GEN" ]; do
    "$CFISEM" gen --seed "$seed" --section eh_frame -o "$out/gen/$seed.S" &&
        link_case "$out/gen/$seed.S" "$out/gen/$seed.so" \
            2> "$out/gen/$seed.as.txt" &&
        validate gen "$seed" "$out/gen/$seed.so"
    rm -f "$out/gen/$seed.so"
    seed=$((seed + 1))
done

if command -v csmith > /dev/null; then
    seed=1
    while [ "$seed" -le "$CSMITH" ]; do
        dir=$(mktemp -d)
        (cd "$dir" && csmith --no-argc --max-funcs 20 --seed "$seed" \
            > program.c 2> /dev/null)
        for opt in $LEVELS; do
            for fp in "" omitfp; do
                name=$seed-$opt${fp:+-$fp}
                flags="-$opt${fp:+ -fomit-frame-pointer}"
                # shellcheck disable=SC2086
                $CC $flags -w -I/usr/include/csmith -Wa,--gsframe \
                    -o "$out/csmith/$name" "$dir/program.c" \
                    2> "$out/csmith/$name.as.txt" &&
                    validate csmith "$name" "$out/csmith/$name"
                rm -f "$out/csmith/$name"
            done
        done
        rm -rf "$dir"
        seed=$((seed + 1))
    done
fi

# KIND files, exit 0/1/2, problems, FDEs not in SFrame
awk '{ n[$1]++; e[$1 " " $3]++; if ($4 != "-") p[$1] += $4;
       if ($5 != "-") d[$1] += $5 }
     END { for (k in n)
             printf "%-7s %4d files: %d clean, %d with problems, %d not read; %d problems, %d FDEs not in SFrame\n",
                    k, n[k], e[k " 0"], e[k " 1"], e[k " 2"], p[k], d[k] }' \
    "$out/results.txt" | sort
