#!/bin/sh
# csmith.sh N OUTDIR — a corpus of random C programs, built many ways.
#
# Seeds 1..N (CSMITH_FIRST_SEED moves the start). For each seed, in
# OUTDIR/seed-S/:
#   program.c     csmith --no-argc --max-funcs 20 --seed S, with swarm
#                 testing: each of csmith's feature flags switched on or off
#                 at random (a generator seeded by S, so a seed always gives
#                 the same program); the flags used are in csmith.flags
#   CC-OPT[-omitfp]  the program built with gcc and clang at -O0 -O1 -O2
#                 -O3 -Os, without and with -fomit-frame-pointer (20 builds;
#                 -I/usr/include/csmith -w), each run once under a
#                 CSMITH_TIMEOUT (2 s) timeout; a build whose run does not
#                 end normally (timeout, signal) is deleted, and the reason
#                 recorded in builds.txt
#   done          written last: a seed with it is skipped (idempotent)
# csmith writes platform.info into its current folder: each seed runs in a
# temporary folder of its own. Seeds run CSMITH_JOBS (2) at a time.
# OUTDIR/binaries.txt lists every kept build; OUTDIR/summary.txt the counts.
#
# POSIX sh; needs csmith, libcsmith-dev (csmith.h), gcc, clang, timeout.
set -eu

FLAGS="arrays bitfields comma-operators compound-assignment consts divs
embedded-assigns pre-incr-operator pre-decr-operator post-incr-operator
post-decr-operator unary-plus-operator jumps longlong int8 uint8 float
math64 inline-function muls safe-math packed-struct pointers structs unions
volatiles volatile-pointers const-pointers global-variables builtins"
COMPILERS="gcc clang"
LEVELS="O0 O1 O2 O3 Os"

# The csmith options of seed $1: one random bit per flag. csmith has no
# positive form of --no-global-variables: that flag on is its default,
# and is not passed. --builtins comes with --disable-builtin-kinds x86:
# x86 builtins (__builtin_ia32_crc32qi) need -msse4.2 and do not link at
# -O0 without it.
swarm_options() {
    # shellcheck disable=SC2086
    echo $FLAGS | awk -v seed="$1" '{
        srand(seed)
        for (i = 1; i <= NF; i++) {
            on = rand() < 0.5
            if (on && $i == "global-variables")
                continue
            printf " --%s%s", (on ? "" : "no-"), $i
            if (on && $i == "builtins")
                printf " --disable-builtin-kinds x86"
        }
        print ""
    }'
}

# Builds and runs one seed, in OUTDIR/seed-S.
one_seed() {
    seed=$1
    out=$2
    dir=$out/seed-$seed
    [ -f "$dir/done" ] && return 0
    mkdir -p "$dir"
    work=$(mktemp -d)
    options="--no-argc --max-funcs 20 --seed $seed$(swarm_options "$seed")"
    echo "$options" >"$dir/csmith.flags"
    # shellcheck disable=SC2086
    if ! (cd "$work" && csmith $options -o program.c) >"$dir/csmith.log" 2>&1; then
        echo "csmith failed" >"$dir/builds.txt"
        rm -rf "$work"
        touch "$dir/done"
        return 0
    fi
    cp "$work/program.c" "$dir/program.c"
    : >"$dir/builds.txt"
    for cc in $COMPILERS; do
        for level in $LEVELS; do
            for fp in "" -omitfp; do
                name=$cc-$level$fp
                bin=$dir/$name
                flags="-$level -w -I/usr/include/csmith"
                [ -n "$fp" ] && flags="$flags -fomit-frame-pointer"
                # shellcheck disable=SC2086
                if ! $cc $flags -o "$bin" "$dir/program.c" >/dev/null 2>&1; then
                    echo "$name build-failed" >>"$dir/builds.txt"
                    continue
                fi
                status=0
                # (braces, not a subshell: the shell would report the
                # signal on the terminal)
                { timeout "${CSMITH_TIMEOUT:-2}" "$bin"; } \
                    </dev/null >/dev/null 2>&1 || status=$?
                if [ "$status" -eq 124 ]; then
                    echo "$name timeout" >>"$dir/builds.txt"
                    rm -f "$bin"
                elif [ "$status" -gt 124 ]; then
                    echo "$name signal-$((status - 128))" >>"$dir/builds.txt"
                    rm -f "$bin"
                else
                    echo "$name kept exit-$status" >>"$dir/builds.txt"
                fi
            done
        done
    done
    rm -rf "$work"
    touch "$dir/done"
}

if [ "${1:-}" = --one-seed ]; then   # --one-seed OUTDIR SEED (from xargs)
    one_seed "$3" "$2"
    exit 0
fi

[ $# -eq 2 ] || { echo "usage: corpus/csmith.sh N OUTDIR" >&2; exit 1; }
count=$1
out=$2
first=${CSMITH_FIRST_SEED:-1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)
awk -v first="$first" -v n="$count" \
    'BEGIN { for (i = 0; i < n; i++) print first + i }' |
    xargs -P "${CSMITH_JOBS:-2}" -n 1 sh "$0" --one-seed "$out" 2>&1 |
    grep -v '^$' || true
seconds=$(($(date +%s) - start))

find "$out" -path "$out/seed-*" -type f -perm -u+x -name '*-O*' |
    sort >"$out/binaries.txt"
seeds=$(find "$out" -maxdepth 1 -name 'seed-*' -type d | wc -l)
kept=$(wc -l <"$out/binaries.txt" | tr -d ' ')
# The lines of every builds.txt that match $1 (grep -c options in $2).
count() {
    # shellcheck disable=SC2086 # $2 is an option or nothing
    cat "$out"/seed-*/builds.txt 2>/dev/null | grep -c ${2:-} -- "$1" || true
}
builds=$(count 'csmith failed' -v)
summary="csmith corpus $out: $seeds seeds ($(count 'csmith failed') csmith"
summary="$summary failures), $builds builds, $kept binaries kept"
summary="$summary ($(count ' timeout') timeouts, $(count ' signal-') killed by"
summary="$summary a signal, $(count 'build-failed') failed to build);"
summary="$summary this run: ${seconds} s"
echo "$summary" >"$out/summary.txt"
echo "$summary"
