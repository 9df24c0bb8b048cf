#!/bin/sh
# gen-run.sh — the big run of the generator: N generated CFI programs
# through GNU as and ld, `cfisem il` against each expectation, then
# `cfisem diff` (every engine against the IL evaluator) over all of them.
#
#   corpus/gen-run.sh N OUTDIR
#
# For each seed S of START .. START+N-1 (in parallel, JOBS at a time):
#   cfisem gen --seed S -o OUTDIR/S.S --expect OUTDIR/S.il
#   cc -shared -nostdlib -Wl,--section-start=.text=0x1000
#      -Wl,--build-id=none -o OUTDIR/S.so OUTDIR/S.S
#   cfisem il OUTDIR/S.so, compared byte for byte with OUTDIR/S.il
# then, when `cfisem diff` exists, diff over the programs that matched, in
# chunks of CHUNK files, with ENGINES; the compiled engine (one C compile
# per file, ~2 s) on every COMPILED_EVERY-th program only. Prints a
# summary; the details stay in OUTDIR (status/, diff/, failures.txt).
# The .so of a program that passed everything is removed unless KEEP=1.
#
# Environment: CFISEM (default: build/cfisem of this repository), CC (cc),
# JOBS (2), START (1), ILL (0: how many ill-formed programs to add, seeds
# START .. START+ILL-1, checked against their error line), CHUNK (200),
# ENGINES (il,interp,libdwarf,libdw,libunwind), COMPILED_EVERY (50; 0:
# never), KEEP (0).
#
# Exit status: 0 when every expectation matched and diff found no new
# mismatch, 1 otherwise, 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
CFISEM=${CFISEM:-$here/../build/cfisem}
CC=${CC:-cc}
JOBS=${JOBS:-2}
START=${START:-1}
ILL=${ILL:-0}
CHUNK=${CHUNK:-200}
ENGINES=${ENGINES:-il,interp,libdwarf,libdw,libunwind}
COMPILED_EVERY=${COMPILED_EVERY:-50}
KEEP=${KEEP:-0}
export CFISEM CC KEEP

# One program: NAME is the seed, or iSEED for an ill-formed one.
one() {
    out=$1 name=$2
    seed=${name#i} ill=
    [ "$name" != "$seed" ] && ill=--ill-formed
    base=$out/$name
    if ! "$CFISEM" gen --seed "$seed" $ill -o "$base.S" --expect "$base.il" \
            2> "$base.log"; then
        echo gen > "$out/status/$name"; return
    fi
    if ! $CC -shared -nostdlib -Wl,--section-start=.text=0x1000 \
            -Wl,--build-id=none -o "$base.so" "$base.S" 2>> "$base.log"; then
        echo cc > "$out/status/$name"; return
    fi
    "$CFISEM" il "$base.so" > "$base.out" 2> "$base.err"
    rc=$?
    if [ -n "$ill" ]; then
        grep -v '^error: ' "$base.il" > "$base.want"
        printf 'cfisem: %s: %s\n' "$base.so" \
            "$(sed -n 's/^error: //p' "$base.il")" > "$base.want-err"
        if [ $rc -eq 2 ] && cmp -s "$base.out" "$base.want" &&
                cmp -s "$base.err" "$base.want-err"; then
            echo ill-ok > "$out/status/$name"
            [ "$KEEP" = 1 ] || rm -f "$base.so" "$base.out" "$base.want" \
                "$base.want-err" "$base.err"
        else
            echo il > "$out/status/$name"
        fi
        return
    fi
    if [ $rc -eq 0 ] && cmp -s "$base.out" "$base.il"; then
        echo ok > "$out/status/$name"
        rm -f "$base.out" "$base.err"
    else
        echo il > "$out/status/$name"
    fi
}

# One chunk of diff: the files are the arguments; the output goes to a
# file named after the label and the first file.
diff_chunk() {
    out=$1 label=$2 engines=$3
    shift 3
    name=$label-$(basename "$1" .so)
    "$CFISEM" diff "$@" --engines "$engines" --jobs 1 --show 5 --seed 1 \
        > "$out/diff/$name.txt" 2>&1
    echo $? > "$out/diff/$name.rc"
}

# Removes the .so of the programs that passed, except those a diff
# report names (its reproducers need them).
clean() {
    [ "$KEEP" = 1 ] && return
    cat "$out"/diff/*.txt 2>/dev/null |
        sed -n 's/.*reproduce: cfisem unwind \([^ ]*\.so\) .*/\1/p' |
        sort -u > "$out/diff/named.txt"
    grep -lx ok "$out"/status/* | sed "s|.*/status/\(.*\)|$out/\1.so|" |
        sort | comm -23 - "$out/diff/named.txt" | xargs rm -f
}

case "${1-}" in
--one) one "$2" "$3"; exit 0 ;;
--diff) shift; diff_chunk "$@"; exit 0 ;;
esac

if [ $# -ne 2 ] || ! [ "$1" -gt 0 ] 2>/dev/null; then
    echo "usage: corpus/gen-run.sh N OUTDIR (see the comment at its top)" >&2
    exit 2
fi
n=$1 out=$2
if [ ! -x "$CFISEM" ]; then
    echo "gen-run.sh: no cfisem at $CFISEM (make, or set CFISEM)" >&2
    exit 2
fi
mkdir -p "$out/status" "$out/diff" || exit 2
start_time=$(date +%s)

# 1. generate, assemble, compare
{
    seq "$START" $((START + n - 1))
    [ "$ILL" -gt 0 ] && seq "$START" $((START + ILL - 1)) | sed 's/^/i/'
} | xargs -P "$JOBS" -n 1 "$0" --one "$out"
gen_time=$(date +%s)

count() { grep -lx "$1" "$out"/status/* 2>/dev/null | wc -l; }
ok=$(count ok) ill_ok=$(count ill-ok)
gen_fail=$(count gen) cc_fail=$(count cc) il_fail=$(count il)
grep -vlx 'ok\|ill-ok' "$out"/status/* 2>/dev/null | while read -r f; do
    echo "$(basename "$f") $(cat "$f")"
done > "$out/failures.txt"

# 2. diff, when the command exists
status=0
[ $((gen_fail + cc_fail + il_fail)) -eq 0 ] || status=1
have_diff=no
"$CFISEM" diff --help > /dev/null 2>&1 && have_diff=yes
if [ $have_diff = yes ]; then
    grep -lx ok "$out"/status/* | sed "s|.*/status/\(.*\)|$out/\1.so|" \
        > "$out/diff/files.txt"
    xargs -P "$JOBS" -n "$CHUNK" "$0" --diff "$out" main "$ENGINES" \
        < "$out/diff/files.txt"
    if [ "$COMPILED_EVERY" -gt 0 ]; then
        awk -v k="$COMPILED_EVERY" 'NR % k == 1' "$out/diff/files.txt" |
            xargs -P "$JOBS" -n 10 "$0" --diff "$out" compiled compiled
    fi
fi
clean
end_time=$(date +%s)

echo "gen-run: $n programs (seeds $START..$((START + n - 1)))" \
     "+ $ILL ill-formed, $JOBS jobs, $((end_time - start_time)) s" \
     "(generate+assemble+il: $((gen_time - start_time)) s)"
echo "  il matches the expectation: $ok of $n well-formed, $ill_ok of $ILL ill-formed"
echo "  failures: gen $gen_fail, cc $cc_fail, il $il_fail (see $out/failures.txt)"
if [ $have_diff = no ]; then
    echo "  cfisem diff: not available in $CFISEM"
    exit $status
fi

# The summary tables of every chunk, added up.
cat "$out"/diff/*.txt | awk '
    /^engine +compared/ { table = 1; next }
    table && NF == 7 { for (i = 2; i <= 7; i++) sum[$1, i] += $i
                       if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } ; next }
    table { table = 0 }
    /^known deviations/ { dev = 1; next }
    dev && NF >= 3 && $3 ~ /^[0-9]+$/ { devs[$1 " (" $2 ")"] += $3; next }
    dev { dev = 0 }
    /^result: / { results[$0]++ }
    END {
        printf "  cfisem diff, per engine (requests):\n"
        printf "    %-10s %10s %10s %8s %10s %10s %8s\n", "engine",
               "compared", "agree", "differ", "known_dev", "not_comp", "errors"
        for (k = 1; k <= n; k++) {
            e = order[k]
            printf "    %-10s %10d %10d %8d %10d %10d %8d\n", e, sum[e, 2],
                   sum[e, 3], sum[e, 4], sum[e, 5], sum[e, 6], sum[e, 7]
        }
        printf "  known deviations:\n"
        for (d in devs) printf "    %-52s %d\n", d, devs[d]
    }'
chunks_failed=$(grep -lvx 0 "$out"/diff/*.rc 2>/dev/null | wc -l)
echo "  diff chunks with new mismatches: $chunks_failed (first ones printed in $out/diff/*.txt)"
[ "$chunks_failed" -eq 0 ] || status=1
exit $status
