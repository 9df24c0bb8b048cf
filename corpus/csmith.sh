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
# CSMITH_ARCH=aarch64 (the default is x86_64) builds the same programs for
# AArch64 instead: gcc-OPT-BP[-omitfp], aarch64-linux-gnu-gcc at the five
# levels with -mbranch-protection=BP for BP none, standard (BTI and
# pac-ret with the A key) and pac-ret+b-key (named pac-ret-b-key), without
# and with -fomit-frame-pointer (30 builds), each run once by qemu-aarch64
# -L /usr/aarch64-linux-gnu under a CSMITH_TIMEOUT (5 s) timeout. The
# summary also says how many kept pac-ret builds carry
# DW_CFA_AARCH64_negate_ra_state and how many B-key builds a CIE with
# augmentation "zRB" (readelf -wf): Debian's arm64 packages are built
# without branch protection, so these are the corpus's only
# pointer-authentication CFI.
#
# POSIX sh; needs csmith, libcsmith-dev (csmith.h), gcc, clang, timeout;
# for AArch64, gcc-aarch64-linux-gnu, qemu-user and readelf.
set -eu

FLAGS="arrays bitfields comma-operators compound-assignment consts divs
embedded-assigns pre-incr-operator pre-decr-operator post-incr-operator
post-decr-operator unary-plus-operator jumps longlong int8 uint8 float
math64 inline-function muls safe-math packed-struct pointers structs unions
volatiles volatile-pointers const-pointers global-variables builtins"
LEVELS="O0 O1 O2 O3 Os"
AARCH64_PROTECTIONS="none standard pac-ret+b-key"

# The architecture: its builds (builds_$arch), the command that runs a
# build and the default time limit of a run (qemu-aarch64 translates the
# program: slower than the machine itself).
arch=${CSMITH_ARCH:-x86_64}
case $arch in
x86_64)
    runner=
    run_timeout=${CSMITH_TIMEOUT:-2}
    ;;
aarch64)
    runner="qemu-aarch64 -L /usr/aarch64-linux-gnu"
    run_timeout=${CSMITH_TIMEOUT:-5}
    ;;
*)
    echo "csmith.sh: unknown CSMITH_ARCH '$arch' (x86_64, aarch64)" >&2
    exit 1
    ;;
esac

# The csmith options of seed $1: one random bit per flag. csmith has no
# positive form of --no-global-variables: that flag on is its default,
# and is not passed. --builtins comes with --disable-builtin-kinds x86:
# x86 builtins (__builtin_ia32_crc32qi) need -msse4.2 and do not link at
# -O0 without it (and are not AArch64's).
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

# The builds of a seed, one a line: the build's name, the compiler, its
# options (without those every build has).
builds_x86_64() {
    for cc in gcc clang; do
        for level in $LEVELS; do
            echo "$cc-$level $cc -$level"
            echo "$cc-$level-omitfp $cc -$level -fomit-frame-pointer"
        done
    done
}

builds_aarch64() {
    for level in $LEVELS; do
        for bp in $AARCH64_PROTECTIONS; do
            name=gcc-$level-$(echo "$bp" | tr + -)
            cc="aarch64-linux-gnu-gcc -$level -mbranch-protection=$bp"
            echo "$name $cc"
            echo "$name-omitfp $cc -fomit-frame-pointer"
        done
    done
}

# Builds $dir/program.c as $dir/$name with compiler $cc and options
# $flags, runs it once, keeps it only when the run ends normally; one
# line in builds.txt says which.
build_and_run() {
    dir=$1
    name=$2
    cc=$3
    flags=$4
    bin=$dir/$name
    # shellcheck disable=SC2086
    if ! $cc $flags -o "$bin" "$dir/program.c" </dev/null >/dev/null 2>&1; then
        echo "$name build-failed" >>"$dir/builds.txt"
        return 0
    fi
    status=0
    # (braces, not a subshell: the shell would report the signal on the
    # terminal; qemu-aarch64 ends by the signal that ended the program)
    # shellcheck disable=SC2086 # $runner is a command and its options
    { timeout "$run_timeout" $runner "$bin"; } \
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
    while read -r name cc flags; do
        build_and_run "$dir" "$name" "$cc" "$flags -w -I/usr/include/csmith"
    done <<EOF
$(builds_"$arch")
EOF
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
# The number of FDEs of readelf -wf's output on stdin whose program has
# DW_CFA_AARCH64_negate_ra_state.
negate_fdes() {
    awk '/^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ / { fde = / FDE /; seen = 0 }
         fde && !seen && /DW_CFA_AARCH64_negate_ra_state/ { n++; seen = 1 }
         END { print n + 0 }'
}
# What the kept AArch64 builds say of pointer authentication: the pac-ret
# builds (standard, pac-ret-b-key) whose CFI has
# DW_CFA_AARCH64_negate_ra_state, in how many FDEs, and the B-key builds
# with a CIE of augmentation "zRB".
protection_summary() {
    grep -e '-standard' -e '-pac-ret-b-key' "$out/binaries.txt" | {
        pac=0 pac_ok=0 fdes=0 bkey=0 bkey_ok=0
        while read -r bin; do
            frames=$(readelf -wf "$bin")
            n=$(echo "$frames" | negate_fdes)
            pac=$((pac + 1))
            fdes=$((fdes + n))
            if [ "$n" -gt 0 ]; then
                pac_ok=$((pac_ok + 1))
            fi
            case $bin in
            *-pac-ret-b-key*)
                bkey=$((bkey + 1))
                if echo "$frames" | grep -q 'Augmentation: *"zRB"'; then
                    bkey_ok=$((bkey_ok + 1))
                fi
                ;;
            esac
        done
        echo "$pac_ok of $pac pac-ret builds have" \
            "DW_CFA_AARCH64_negate_ra_state (in $fdes FDEs)," \
            "$bkey_ok of $bkey B-key builds a \"zRB\" CIE"
    }
}
builds=$(count 'csmith failed' -v)
corpus="csmith corpus"
if [ "$arch" = aarch64 ]; then
    corpus="$corpus $out (AArch64)"
else
    corpus="$corpus $out"
fi
summary="$corpus: $seeds seeds ($(count 'csmith failed') csmith"
summary="$summary failures), $builds builds, $kept binaries kept"
summary="$summary ($(count ' timeout') timeouts, $(count ' signal-') killed by"
summary="$summary a signal, $(count 'build-failed') failed to build);"
summary="$summary this run: ${seconds} s"
if [ "$arch" = aarch64 ]; then
    summary="$summary; $(protection_summary)"
fi
echo "$summary" >"$out/summary.txt"
echo "$summary"
