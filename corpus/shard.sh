#!/bin/sh
# shard.sh — one list of files (a manifest: make corpus's, or
# corpus/manifest.sh's format) through cfisem diff in N shards, on
# whatever runs them, and the merge of the shards into the report of one
# run over the whole list. Shard K of N (K from 1 to N) is
#
#   cfisem diff --manifest MANIFEST --shard K/N --results OUTDIR/results \
#               --json OUTDIR/part-K-of-N.json [DIFF OPTION...]
#
# its report in OUTDIR/part-K-of-N.txt. OUTDIR is a folder every machine
# sees (a shared file system), or one whose parts are copied together
# before the merge.
#
#   corpus/shard.sh run MANIFEST OUTDIR K N [DIFF OPTION...]
#                        shard K of N (make -j: corpus/shard.mk)
#   corpus/shard.sh slurm MANIFEST OUTDIR N [DIFF OPTION...]
#                        shard $SLURM_ARRAY_TASK_ID of N, for an array
#                        job of N tasks numbered from 1:
#                        sbatch --array=1-N --wrap 'corpus/shard.sh slurm ...'
#   corpus/shard.sh k8s MANIFEST OUTDIR N [DIFF OPTION...]
#                        shard $JOB_COMPLETION_INDEX + 1 of N, for a
#                        Kubernetes Job with completionMode: Indexed and
#                        completions: N, whose indexes are 0 to N-1
#                        (index 0 runs shard 1, index N-1 shard N)
#   corpus/shard.sh parallel MANIFEST OUTDIR N [PARALLEL OPTION...]
#                        [-- DIFF OPTION...]
#                        every shard with GNU parallel, given the
#                        PARALLEL OPTIONs: -j2 here; --sshloginfile HOSTS
#                        on several machines (this script, cfisem and
#                        OUTDIR at the same paths on each)
#   corpus/shard.sh merge OUTDIR N
#                        cfisem report merge of the N parts into
#                        OUTDIR/report.json, its report on stdout; its
#                        exit status is the merge's, that is the one run's
#                        (0 no new mismatch, 1 new mismatches, 2 a file
#                        not loaded or a part that does not fit)
#
# A shard's exit status is 0 when its part was written (what the run
# found is the merge's to say: a scheduler should not run a shard again
# because it found a mismatch), cfisem diff's otherwise. A part is
# written under a temporary name and renamed, so a shard stopped half-way
# leaves no part; run again, it reads back from OUTDIR/results the files
# it had done.
#
# What must be the same on every machine: the manifest (the files at
# the same paths, with the same contents), N, the DIFF OPTIONs, and the
# cfisem build with the same libraries. Each part's "build" member names
# cfisem's build ID and each loaded library's; the merge refuses a part
# whose build differs, and names the object and both IDs.
#
# CFISEM names the cfisem binary (the build/cfisem next to this script).
# POSIX sh; GNU parallel for `parallel`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cfisem=${CFISEM:-$here/../build/cfisem}

die() {
    echo "shard: $*" >&2
    exit 64
}

usage() {
    echo "usage: corpus/shard.sh run MANIFEST OUTDIR K N [DIFF OPTION...]" \
         "| slurm MANIFEST OUTDIR N [...] | k8s MANIFEST OUTDIR N [...]" \
         "| parallel MANIFEST OUTDIR N [PARALLEL OPTION...]" \
         "[-- DIFF OPTION...] | merge OUTDIR N" >&2
    exit 64
}

# $1 is a whole number from $2 to $3, else dies naming it as $4 (and
# saying $5).
number_in() {
    case "$1" in
    '' | *[!0-9]*) die "$4 is '$1', not a number${5:+: $5}" ;;
    esac
    [ "$1" -ge "$2" ] && [ "$1" -le "$3" ] ||
        die "$4 is $1, not in $2..$3${5:+: $5}"
}

cmd_run() {
    [ $# -ge 4 ] || usage
    manifest=$1 out=$2 k=$3 n=$4
    shift 4
    number_in "$n" 1 1000000 N
    number_in "$k" 1 "$n" "the shard K"
    [ -f "$manifest" ] || die "no manifest $manifest"
    mkdir -p "$out/results"
    part=$out/part-$k-of-$n
    rc=0
    "$cfisem" diff --manifest "$manifest" --shard "$k/$n" \
        --results "$out/results" --json "$part.json.tmp" "$@" \
        >"$part.txt" 2>&1 || rc=$?
    if [ ! -s "$part.json.tmp" ]; then
        rm -f "$part.json.tmp"
        echo "shard: shard $k of $n wrote no part (cfisem diff exit" \
             "status $rc; $part.txt)" >&2
        [ $rc -ne 0 ] || rc=2
        return $rc
    fi
    mv "$part.json.tmp" "$part.json"
}

# Slurm numbers an array's tasks as --array says: --array=1-N gives
# SLURM_ARRAY_TASK_ID 1 to N, the shard K itself.
cmd_slurm() {
    [ $# -ge 3 ] || usage
    [ -n "${SLURM_ARRAY_TASK_ID:-}" ] ||
        die "no SLURM_ARRAY_TASK_ID: not a task of a Slurm array job"
    number_in "$3" 1 1000000 N
    number_in "$SLURM_ARRAY_TASK_ID" 1 "$3" SLURM_ARRAY_TASK_ID \
        "submit with sbatch --array=1-$3"
    manifest=$1 out=$2 n=$3
    shift 3
    cmd_run "$manifest" "$out" "$SLURM_ARRAY_TASK_ID" "$n" "$@"
}

# Kubernetes numbers an Indexed Job's pods from 0: index I runs shard
# I + 1.
cmd_k8s() {
    [ $# -ge 3 ] || usage
    index=${JOB_COMPLETION_INDEX:-}
    [ -n "$index" ] ||
        die "no JOB_COMPLETION_INDEX: not a pod of an Indexed Job"
    number_in "$3" 1 1000000 N
    number_in "$index" 0 $(($3 - 1)) JOB_COMPLETION_INDEX \
        "the Job's completions must be $3"
    manifest=$1 out=$2 n=$3
    shift 3
    cmd_run "$manifest" "$out" $((index + 1)) "$n" "$@"
}

cmd_parallel() {
    [ $# -ge 3 ] || usage
    manifest=$1 out=$2 n=$3
    shift 3
    number_in "$n" 1 1000000 N
    command -v parallel >/dev/null || die "no GNU parallel (scripts/install-deps)"
    # The PARALLEL OPTIONs, up to --, then the DIFF OPTIONs.
    count=0
    for arg in "$@"; do
        [ "$arg" != -- ] || break
        count=$((count + 1))
    done
    i=0
    for arg in "$@"; do
        shift
        if [ $i -lt "$count" ]; then
            set -- "$@" "$arg"
        elif [ $i -gt "$count" ]; then
            diff_options="${diff_options:-} $arg"
        fi
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    seq 1 "$n" | parallel --will-cite --halt soon,fail=1 "$@" \
        "$here/shard.sh" run "$manifest" "$out" {} "$n" ${diff_options:-}
}

cmd_merge() {
    [ $# -eq 2 ] || usage
    out=$1 n=$2
    number_in "$n" 1 1000000 N
    k=1
    while [ $k -le "$n" ]; do
        [ -f "$out/part-$k-of-$n.json" ] ||
            { echo "shard: no $out/part-$k-of-$n.json: shard $k of $n" \
                   "has not run" >&2; return 2; }
        set -- "$@" "$out/part-$k-of-$n.json"
        k=$((k + 1))
    done
    shift 2
    "$cfisem" report merge "$@" --json "$out/report.json"
}

[ $# -ge 1 ] || usage
command=$1
shift
case "$command" in
run) cmd_run "$@" ;;
slurm) cmd_slurm "$@" ;;
k8s) cmd_k8s "$@" ;;
parallel) cmd_parallel "$@" ;;
merge) cmd_merge "$@" ;;
*) usage ;;
esac
