#!/bin/sh
# debian.sh — cfisem's own engines (il, interp and compiled) over a sample
# of the Debian archive, one package at a time: a package is one job, so
# that GNU parallel, a Slurm array or a Kubernetes indexed job can run
# them on as many cores and machines as there are. apt runs with a
# configuration, package lists, cache and an empty dpkg status of its own
# (under OUTDIR/apt; as corpus/arm64.sh), so nothing of this machine's
# apt or dpkg state is read or changed; nothing is installed.
#
#   corpus/debian.sh sample OUTDIR N    fetches the package lists and
#                                       writes OUTDIR/sample.txt: N
#                                       packages, one a line (name=version);
#                                       one already there is kept
#   corpus/debian.sh job OUTDIR NAME=VERSION
#                                       one package: downloads its .deb,
#                                       unpacks it, writes its manifest,
#                                       runs cfisem diff over it, keeps the
#                                       result and deletes the rest
#   corpus/debian.sh slice OUTDIR K M   the jobs of slice K (0 to M-1) of
#                                       M of the sample, one after the
#                                       other (a Slurm array task, a
#                                       Kubernetes indexed job's pod)
#   corpus/debian.sh parallel OUTDIR [JOBS]
#                                       every job of the sample with GNU
#                                       parallel, JOBS at once (default:
#                                       the CPUs), logged in OUTDIR/joblog;
#                                       run again, it goes on where it
#                                       stopped (--resume)
#   corpus/debian.sh merge OUTDIR       the one report of every result
#                                       (cfisem report merge --lists), and
#                                       the totals of OUTDIR/status/
#
# The sample: the packages of Debian DEBIAN_SUITE (bookworm) main for
# amd64 whose architecture is amd64 (not "all") and that depend on libc6
# (so that they hold machine code), of at most DEBIAN_MAX_SIZE bytes of
# .deb (50000000), in an order drawn from DEBIAN_SEED (1) by sort -R: the
# same seed and package lists give the same sample. The package lists
# change at each point release; sample.txt names the date of the ones it
# was drawn from.
#
# In OUTDIR, besides apt/ and sample.txt:
#   results/NAME.json  cfisem diff --json of the package's files
#   results/NAME.txt   its report (stdout and stderr)
#   status/NAME        one line, tab-separated: name, version, exit
#                      status of cfisem diff (or "no-files": no ELF file
#                      with .eh_frame in the package), files, FDEs, rows,
#                      requests, seconds
#   work/NAME/         while the job runs: the .deb, the unpacked tree
#                      (dpkg-deb -x), manifest.txt and the eh_elf cache;
#                      deleted when it ends (DEBIAN_KEEP=1 keeps it)
#
# A job's exit status is cfisem diff's (0 no new mismatch; 1 a new
# mismatch or a wrong .eh_frame_hdr; 2 a file that cannot be loaded), 3
# when the download or unpacking failed. CFISEM names the cfisem binary
# (the build/cfisem next to this script), DEBIAN_ENGINES the engines
# (il,interp,compiled), DEBIAN_MIRROR the archive
# (http://deb.debian.org/debian).
#
# POSIX sh; needs apt-get, dpkg-deb, readelf, sort -R, sha256sum, and
# GNU parallel for `parallel`.
set -eu
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
cfisem=${CFISEM:-$here/../build/cfisem}
suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
engines=${DEBIAN_ENGINES:-il,interp,compiled}
seed=${DEBIAN_SEED:-1}
max_size=${DEBIAN_MAX_SIZE:-50000000}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

die() {
    echo "debian: $*" >&2
    exit 1
}

usage() {
    echo "usage: corpus/debian.sh sample OUTDIR N | job OUTDIR NAME=VERSION" \
         "| slice OUTDIR K M | parallel OUTDIR [JOBS] | merge OUTDIR" >&2
    exit 1
}

# The private apt configuration (scripts/apt-private.subr), for amd64.
. "$here/../scripts/apt-private.subr"
write_apt_config() {
    echo "deb [arch=amd64 signed-by=$keyring] $mirror $suite main" |
        apt_private_config "$apt" amd64
}

# The candidates of the Packages list: name=version, one a line.
candidates() {
    cat "$apt"/lists/*_binary-amd64_Packages |
        awk -F': ' -v max="$max_size" '
            function flush() {
                if (name != "" && arch == "amd64" && size <= max &&
                    deps ~ /(^|[ ,])libc6( |,|$)/)
                    print name "=" version
                name = arch = deps = version = ""; size = 0
            }
            /^Package: /      { name = $2 }
            /^Version: /      { version = $2 }
            /^Architecture: / { arch = $2 }
            /^Pre-Depends: /  { deps = deps ", " $2 }
            /^Depends: /      { deps = deps ", " $2 }
            /^Size: /         { size = $2 + 0 }
            /^$/              { flush() }
            END               { flush() }'
}

# sort -R's random source: bytes drawn from the seed alone.
seeded_bytes() {
    i=0
    while [ $i -lt 64 ]; do
        printf '%s:%s' "$seed" "$i" | sha256sum | cut -c1-64
        i=$((i + 1))
    done
}

cmd_sample() {
    [ $# -eq 2 ] || usage
    out=$1 n=$2
    mkdir -p "$out"
    apt=$(realpath "$out")/apt
    [ -f "$keyring" ] || die "no $keyring (Debian's debian-archive-keyring)"
    write_apt_config
    export APT_CONFIG="$apt/apt.conf"
    echo "debian: apt-get update ($suite main from $mirror)" >&2
    if ! apt-get -qq --error-on=any update >"$apt/update.log" 2>&1; then
        cat "$apt/update.log" >&2
        die "apt-get update failed (network or mirror; above)"
    fi
    if [ -f "$out/sample.txt" ]; then
        echo "debian: $out/sample.txt exists: kept ($(grep -vc '^#' \
             "$out/sample.txt") packages; remove it for a new sample)" >&2
        return 0
    fi
    seeded_bytes >"$apt/random"
    date=$(sed -n 's/^Date: //p' "$apt"/lists/*_InRelease | head -n 1)
    candidates | sort -u >"$apt/candidates"
    {
        echo "# cfisem Debian sample: $n of the $(wc -l <"$apt/candidates" |
              tr -d ' ') amd64 packages of $suite main that depend on" \
             "libc6, .deb at most $max_size bytes; seed $seed"
        echo "# package lists of $date, from $mirror"
        sort -R --random-source="$apt/random" "$apt/candidates" |
            head -n "$n"
    } >"$out/sample.txt"
    echo "debian: $(grep -vc '^#' "$out/sample.txt") packages in" \
         "$out/sample.txt" >&2
}

# The files of $1 with .eh_frame, one a line (corpus/manifest.sh's
# format; their real paths are in the tree), but for 32-bit ones
# (EI_CLASS 1: lib32/, firmware), which cfisem does not read: each is a
# comment line.
package_manifest() {
    CORPUS_DIRS=$1 "$here/manifest.sh" --print |
        while IFS= read -r line; do
            case "$line" in
            '#'*) echo "$line"; continue ;;
            esac
            path=${line%%"$(printf '\t')"*}
            if [ "$(od -An -tx1 -j4 -N1 "$path" | tr -d ' ')" = 01 ]; then
                echo "# left out, a 32-bit ELF file: $path"
            else
                echo "$line"
            fi
        done
}

# The totals of a result: files, FDEs, rows, requests, seconds.
totals() {
    awk '/^cfisem diff: / {
             for (i = 1; i <= NF; i++) {
                 if ($(i + 1) ~ /^files?,?$/) files = $i
                 if ($(i + 1) ~ /^FDEs,?$/) fdes = $i
                 if ($(i + 1) ~ /^rows;?$/) rows = $i
                 if ($(i + 1) ~ /^requests$/) requests = $i
                 if ($(i + 1) == "s") seconds = $i
             }
         }
         END { printf "%s\t%s\t%s\t%s\t%s\n", files + 0, fdes + 0,
               rows + 0, requests + 0, seconds + 0 }' "$1"
}

# apt-get download of $name=$version into $work, tried three times.
fetch() {
    for try in 1 2 3; do
        ! (cd "$work" && apt-get -qq download "$name=$version") || return 0
        [ $try -eq 3 ] || sleep $((try * 5))
    done
    return 1
}

cmd_job() {
    [ $# -eq 2 ] || usage
    out=$(realpath "$1") spec=$2
    name=${spec%%=*} version=${spec#*=}
    apt=$out/apt
    [ -f "$apt/apt.conf" ] || die "no $apt/apt.conf: run sample first"
    export APT_CONFIG="$apt/apt.conf"
    work=$out/work/$name
    mkdir -p "$out/results" "$out/status"
    rm -rf "$work"
    mkdir -p "$work/root"
    if ! fetch >"$work/download.log" 2>&1 ||
       ! dpkg-deb -x "$work"/*.deb "$work/root" 2>>"$work/download.log"; then
        cat "$work/download.log" >&2
        echo "debian: $name=$version: download or unpacking failed" >&2
        rm -rf "$work"
        return 3
    fi
    package_manifest "$work/root" >"$work/manifest.txt"
    if ! grep -qv '^#' "$work/manifest.txt"; then
        printf '%s\t%s\tno-files\t0\t0\t0\t0\t0\n' "$name" "$version" \
            >"$out/status/$name"
        rm -rf "$work"
        return 0
    fi
    rc=0
    "$cfisem" diff --manifest "$work/manifest.txt" --engines "$engines" \
        --jobs 1 --cache "$work/cache" --json "$out/results/$name.json" \
        >"$out/results/$name.txt" 2>&1 || rc=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$version" "$rc" \
        "$(totals "$out/results/$name.txt")" >"$out/status/$name"
    [ "${DEBIAN_KEEP:-0}" = 1 ] || rm -rf "$work"
    return $rc
}

# The sample's packages, one a line.
packages() {
    grep -v '^#' "$1/sample.txt"
}

cmd_slice() {
    [ $# -eq 3 ] || usage
    out=$1 k=$2 m=$3
    [ -f "$out/sample.txt" ] || die "no $out/sample.txt: run sample first"
    worst=0
    for spec in $(packages "$out" | awk -v k="$k" -v m="$m" \
                                        '(NR - 1) % m == k'); do
        rc=0
        cmd_job "$out" "$spec" || rc=$?
        [ $rc -le $worst ] || worst=$rc
    done
    return $worst
}

cmd_parallel() {
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    out=$1 jobs=${2:-$(nproc)}
    [ -f "$out/sample.txt" ] || die "no $out/sample.txt: run sample first"
    command -v parallel >/dev/null ||
        die "no GNU parallel (scripts/install-deps)"
    packages "$out" |
        parallel --will-cite --jobs "$jobs" --joblog "$out/joblog" --resume \
                 "$here/debian.sh" job "$out" {}
}

cmd_merge() {
    [ $# -eq 1 ] || usage
    out=$1
    [ -d "$out/status" ] || die "no $out/status: no job has run"
    cat "$out"/status/* | awk -F'\t' '
        { packages++ }
        $3 == "no-files" { nofiles++; next }
        { files += $4; fdes += $5; rows += $6; requests += $7
          seconds += $8; status[$3]++ }
        END {
            printf "debian: %d packages (%d with no ELF file with .eh_frame);" \
                   " %d files, %d FDEs, %d rows, %d requests, %.1f s of" \
                   " cfisem diff\n", packages, nofiles, files, fdes, rows,
                   requests, seconds
            for (s in status)
                printf "debian: cfisem diff exit status %s: %d packages\n",
                       s, status[s]
        }'
    # shellcheck disable=SC2046
    set -- $(find "$out/results" -name '*.json' | sort)
    [ $# -gt 0 ] || return 0
    "$cfisem" report merge --lists "$@" --json "$out/report.json"
}

[ $# -ge 1 ] || usage
command=$1
shift
case "$command" in
sample) cmd_sample "$@" ;;
job) cmd_job "$@" ;;
slice) cmd_slice "$@" ;;
parallel) cmd_parallel "$@" ;;
merge) cmd_merge "$@" ;;
*) usage ;;
esac
