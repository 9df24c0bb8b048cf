#!/bin/sh
# SPDX-License-Identifier: MIT
# coverage.sh — line and branch coverage of the outside libraries' CFI
# code reached by fuzz_oracles, with the plain libFuzzer mutator and with
# the structured one (fuzz/README.md, "Coverage of the libraries' CFI
# code").
#
#   fuzz/coverage.sh all WORK          every step below, in order
#   fuzz/coverage.sh sources WORK      the Debian source packages of the
#                                      installed elfutils, libunwind and
#                                      libdwarf (dwarfutils), unpacked
#   fuzz/coverage.sh build WORK        those libraries built with gcc
#                                      --coverage, and the replay program
#                                      fuzz_oracles linked against them
#   fuzz/coverage.sh feedback WORK     libunwind and libdw built again by
#                                      clang with -fsanitize=fuzzer-no-link
#                                      (WORK/feedback/lib), so that
#                                      libFuzzer sees their edges
#   fuzz/coverage.sh campaign WORK     per library, the libFuzzer targets
#                                      fuzz_oracles and
#                                      fuzz_oracles_structured side by
#                                      side for COVERAGE_SECONDS each
#   fuzz/coverage.sh report WORK       each campaign's corpus replayed
#                                      through the coverage build; the
#                                      table (WORK/coverage.md)
#
# WORK (make fuzz-coverage: build/fuzz-coverage) holds everything: the
# private apt configuration and lists (apt/), the sources (src/), the
# coverage builds (cov/), the campaigns (campaign/), the gcov output
# (gcov/). Nothing of this machine's apt or dpkg state is used or changed:
# apt runs with a configuration, lists and cache of its own, holding only
# deb-src lines, and fetches with `apt-get source --download-only`.
#
# The campaigns use the libFuzzer targets of `make fuzz-libfuzzer-build`
# (LIBFUZZER_OUT, build/fuzz-libfuzzer). With the feedback step done (and
# COVERAGE_FEEDBACK not 0), they run libunwind and libdw from
# WORK/feedback/lib (LD_LIBRARY_PATH: the same sonames), whose edges
# libFuzzer counts as a module of its own beside cfisem's code and
# fuzz_note's buckets; libdwarf, linked statically into the targets, is
# the system's, without edge feedback. Each library gets its own campaign
# (CFISEM_FUZZ_ORACLES names it; libdwarf's covers selectors 0 and 3),
# from the seeds of fuzz/seeds/oracles that select it; plain and
# structured run at once, one core each, nice, for the same seconds.
#
# COVERAGE_SECONDS (300) per campaign; COVERAGE_LIBRARIES (libdwarf libdw
# libunwind); COVERAGE_FEEDBACK (1: use WORK/feedback/lib when it exists);
# LIBFUZZER_OUT the targets' folder.
#
# POSIX sh; needs apt-get, dpkg-source, gcc, gcov, make (and clang for
# the feedback step).
set -eu
export LC_ALL=C

suite=${COVERAGE_SUITE:-bookworm}
mirror=${COVERAGE_MIRROR:-http://deb.debian.org/debian}
security=${COVERAGE_SECURITY:-http://deb.debian.org/debian-security}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
seconds=${COVERAGE_SECONDS:-300}
libraries=${COVERAGE_LIBRARIES:-libdwarf libdw libunwind}
use_feedback=${COVERAGE_FEEDBACK:-1}
lfout=${LIBFUZZER_OUT:-build/fuzz-libfuzzer}
top=$(pwd)

die() {
    echo "coverage: $*" >&2
    exit 1
}

# The source package and version of an installed binary package.
source_of() {
    dpkg-query -W -f='${source:Package}=${source:Version}\n' "$1" 2>/dev/null ||
        die "$1 is not installed"
}

# The private apt configuration (scripts/apt-private.subr): the host's
# architecture, deb-src lines only.
. "$(dirname "$0")/../scripts/apt-private.subr"
write_apt_config() {
    apt_private_config "$apt" <<EOF
deb-src [signed-by=$keyring] $mirror $suite main
deb-src [signed-by=$keyring] $mirror $suite-updates main
deb-src [signed-by=$keyring] $security $suite-security main
EOF
}

# The source packages of the installed libdw1, libunwind8 and libdwarf1,
# fetched (checked against their .dsc by apt) and unpacked with the
# Debian patches applied, into $work/src/NAME (versions in
# $work/src/versions.txt).
sources() {
    [ -f "$keyring" ] || die "no $keyring (debian-archive-keyring)"
    write_apt_config
    wanted="$(source_of libdw1) $(source_of libunwind8) $(source_of libdwarf1)"
    mkdir -p "$work/src"
    # shellcheck disable=SC2086 # a list of NAME=VERSION
    printf '%s\n' $wanted >"$work/src/versions.txt"
    echo "coverage: sources $wanted" >&2
    APT_CONFIG=$apt/apt.conf apt-get -qq update ||
        die "apt-get update failed (network or mirror)"
    # shellcheck disable=SC2086 # a list of NAME=VERSION
    (cd "$work/src" &&
        APT_CONFIG=$apt/apt.conf apt-get -qq source --download-only $wanted) ||
        die "apt-get source failed"
    for spec in $wanted; do
        name=${spec%%=*}
        version=${spec#*=}
        dsc=$work/src/${name}_${version#*:}.dsc
        rm -rf "${work:?}/src/$name"
        # apt checked the files against the signed Sources index; the
        # uploaders' keys that dpkg-source would check the .dsc with are
        # not needed (its gpgv warning is dropped)
        dpkg-source -q -x "$dsc" "$work/src/$name" >/dev/null 2>&1 ||
            die "dpkg-source -x $dsc failed"
    done
}

COV_CFLAGS="-O0 -g --coverage -fno-inline -w"
# The feedback builds: libFuzzer's inline 8-bit counters and comparison
# hooks in the libraries' code (the symbols come from the target).
FEEDBACK_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link -w"

# elfutils: libelf and libdw (with libdwfl, libebl, the backends and
# libcpu it is made of), shared, as libdw.so.1 and libelf.so.1, into
# $work/$1 with CC $2, CFLAGS $3 and LDFLAGS $4.
build_elfutils() {
    b=$work/$1/elfutils
    rm -rf "$b"
    mkdir -p "$work/$1"
    cp -a "$work/src/elfutils" "$b"
    (cd "$b" && CC=$2 CFLAGS="$3" LDFLAGS="$4" ./configure -q \
        --disable-debuginfod --disable-libdebuginfod \
        --disable-nls --disable-werror >configure.log 2>&1) ||
        die "elfutils configure failed: $b/configure.log"
    for d in lib libelf libebl backends libcpu libdwelf libdwfl libdw; do
        make -C "$b/$d" -j2 >>"$b/make.log" 2>&1 ||
            die "elfutils make in $d failed: $b/make.log"
    done
    mkdir -p "$work/$1/lib"
    cp "$b/libelf/libelf.so" "$work/$1/lib/libelf.so.1"
    cp "$b/libdw/libdw.so" "$work/$1/lib/libdw.so.1"
}

# libunwind: the remote (generic) library and libunwind.so.8, shared,
# into $work/$1 with CC $2, CFLAGS $3 and LDFLAGS $4.
build_libunwind() {
    b=$work/$1/libunwind
    rm -rf "$b"
    mkdir -p "$work/$1"
    cp -a "$work/src/libunwind" "$b"
    (cd "$b" && CC=$2 CFLAGS="$3" LDFLAGS="$4" ./configure -q \
        --disable-tests --disable-documentation --disable-minidebuginfo \
        --disable-zlibdebuginfo --disable-cxx-exceptions \
        >configure.log 2>&1) ||
        die "libunwind configure failed: $b/configure.log"
    make -C "$b/src" -j2 >"$b/make.log" 2>&1 ||
        die "libunwind make failed: $b/make.log"
    mkdir -p "$work/$1/lib"
    cp -L "$b/src/.libs/libunwind.so.8" "$work/$1/lib/libunwind.so.8"
    cp -L "$b/src/.libs/libunwind-x86_64.so.8" \
        "$work/$1/lib/libunwind-x86_64.so.8"
}

# libdwarf: the static libdwarf.a (the harness links it statically).
build_libdwarf() {
    b=$work/cov/dwarfutils
    rm -rf "$b"
    cp -a "$work/src/dwarfutils" "$b"
    (cd "$b" && CFLAGS="$COV_CFLAGS" LDFLAGS=--coverage ./configure -q \
        --disable-shared --disable-dwarfgen --disable-dwarfexample \
        >configure.log 2>&1) ||
        die "dwarfutils configure failed: $b/configure.log"
    make -C "$b/libdwarf" -j2 libdwarf.la >"$b/make.log" 2>&1 ||
        die "libdwarf make failed: $b/make.log"
    mkdir -p "$work/cov/lib"
    cp "$b/libdwarf/.libs/libdwarf.a" "$work/cov/lib/libdwarf.a"
}

# The replay program fuzz_oracles of the tree, built by gcc without
# sanitizers into $work/cov/cfisem, with the coverage libdwarf.a; libdw,
# libelf and libunwind come from $work/cov/lib at run time
# (LD_LIBRARY_PATH: the same sonames as the system's).
build_harness() {
    make -C "$top" -j2 BUILD="$work/cov/cfisem" \
        DWARF_LIBS="$work/cov/lib/libdwarf.a -lelf -lz --coverage" \
        "$work/cov/cfisem/harness/fuzz_oracles" >"$work/cov/cfisem.log" 2>&1 ||
        die "the replay build failed: $work/cov/cfisem.log"
}

# The libraries of $libraries (libdwarf.a always: the replay program
# links it), then the replay program.
build() {
    [ -d "$work/src/elfutils" ] || die "no sources: run the sources step"
    mkdir -p "$work/cov/lib"
    for lib in $libraries; do
        case $lib in
        libdwarf) build_libdwarf ;;
        libunwind) build_libunwind cov gcc "$COV_CFLAGS" --coverage ;;
        libdw) build_elfutils cov gcc "$COV_CFLAGS" --coverage ;;
        esac
    done
    [ -f "$work/cov/lib/libdwarf.a" ] || build_libdwarf
    build_harness
    echo "coverage: coverage builds in $work/cov" >&2
}

# libunwind and libdw (of $libraries) built by clang with edge counters.
feedback() {
    [ -d "$work/src/elfutils" ] || die "no sources: run the sources step"
    for lib in $libraries; do
        case $lib in
        libunwind) build_libunwind feedback clang "$FEEDBACK_CFLAGS" "" ;;
        libdw) build_elfutils feedback clang "$FEEDBACK_CFLAGS" "" ;;
        esac
    done
    echo "coverage: feedback builds in $work/feedback/lib" >&2
}

# The LD_LIBRARY_PATH of the campaigns: the feedback builds, or none.
feedback_path() {
    if [ "$use_feedback" != 0 ] && [ -d "$work/feedback/lib" ]; then
        echo "$work/feedback/lib"
    fi
}

# ---- campaigns -------------------------------------------------------

# The seeds of fuzz/seeds/oracles whose selector is library $1's.
select_seeds() {
    for f in "$top"/fuzz/seeds/oracles/*; do
        sel=$(($(od -An -tu1 -N1 "$f") & 3))
        case $1:$sel in
        libdwarf:0 | libdwarf:3 | libdw:1 | libunwind:2) cp "$f" "$2/" ;;
        esac
    done
}

# One libFuzzer run of target $1 for library $2 into folder $3, with
# fuzz/libfuzzer.sh's options for fuzz_oracles (fork mode: a crash, a
# timeout or running out of memory in a library is kept and the run goes
# on).
run_target() {
    rm -rf "$3"
    mkdir -p "$3/corpus" "$3/findings" "$3/artifacts"
    LD_LIBRARY_PATH=$(feedback_path) \
    CFISEM_FUZZ_ORACLES=$2 CFISEM_FUZZ_FINDINGS=$3/findings \
    ASAN_OPTIONS=abort_on_error=1:detect_odr_violation=0:allocator_may_return_null=1 \
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
        nice -n 19 "$lfout/$1" -fork=1 -ignore_crashes=1 \
        -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
        -dict="$lfout/$1.dict" -max_len=65536 -timeout=25 \
        -detect_leaks=0 -artifact_prefix="$3/artifacts/" \
        "$3/corpus" "$4" >"$3/log" 2>&1 || true
    cut -d ' ' -f 1-3 /proc/loadavg >"$3/load"
}

campaign() {
    for t in fuzz_oracles fuzz_oracles_structured; do
        [ -x "$lfout/$t" ] ||
            die "no $lfout/$t: run make fuzz-libfuzzer-build first"
    done
    for lib in $libraries; do
        c=$work/campaign/$lib
        rm -rf "$c/seeds"
        mkdir -p "$c/seeds"
        select_seeds "$lib" "$c/seeds"
        echo "coverage: $lib: plain and structured, ${seconds} s each," \
             "$(find "$c/seeds" -type f | wc -l) seeds" >&2
        run_target fuzz_oracles "$lib" "$c/plain" "$c/seeds" &
        run_target fuzz_oracles_structured "$lib" "$c/structured" \
            "$c/seeds" &
        wait
    done
}

# ---- coverage --------------------------------------------------------

# The CFI code of each library: "build-folder file...".
cfi_files() {
    case $1 in
    libdw) echo "elfutils/libdw cfi.c cie.c fde.c frame-cache.c" \
                "dwarf_frame_cfa.c dwarf_frame_info.c dwarf_frame_register.c" ;;
    libunwind) echo "libunwind/src/dwarf Gparser.c Gexpr.c" \
                    "Gfind_proc_info-lsb.c" ;;
    libdwarf) echo "dwarfutils/libdwarf dwarf_frame.c dwarf_frame2.c" ;;
    esac
}

# Replays folder $2's files through the coverage build for library $1,
# 32 files per process; a batch whose process fails (a library's crash
# loses its counters) is replayed one file per process.
replay() {
    # shellcheck disable=SC2016 # the inner script's own variables
    find "$2" -type f | sort | xargs -r -n 32 sh -c '
        lib=$1; shift
        CFISEM_FUZZ_ORACLES=$lib timeout 120 "$0" "$@" >/dev/null 2>&1 && exit 0
        for f in "$@"; do
            CFISEM_FUZZ_ORACLES=$lib timeout 20 "$0" "$f" >/dev/null 2>&1 ||
                echo "coverage: replay of $f failed" >&2
        done' "$work/cov/cfisem/harness/fuzz_oracles" "$1"
}

# gcov's summary of source $3 from the counters of build folder $2:
# "lines-executed lines branches-taken branches" for file $3.
gcov_file() {
    gcda=$(find "$work/cov/$2" -name '*.gcda' | grep -E "/([^/]*-)?${3%.c}\.gcda$" | head -n 1)
    if [ -z "$gcda" ]; then
        gcno=$(find "$work/cov/$2" -name '*.gcno' | grep -E "/([^/]*-)?${3%.c}\.gcno$" | head -n 1)
        gcda=$gcno
    fi
    [ -n "$gcda" ] || die "no gcov notes for $3 in $work/cov/$2"
    (cd "$work/cov/$2" && gcov -b -n -o "$gcda" "$3" 2>/dev/null) |
    awk -v f="$3" '
        /^File / { keep = ($0 ~ "[/'"'"']" f "'"'"'$") }
        keep && /^Lines executed:/ {
            split($0, a, /[:% ]+/); pct = a[3]; n = $NF
            lines = n; hit = int(pct * n / 100 + 0.5)
        }
        keep && /^Taken at least once:/ {
            split($0, a, /[:% ]+/); pct = a[5]; n = $NF
            br = n; bhit = int(pct * n / 100 + 0.5)
        }
        keep && /^No branches/ { br = 0; bhit = 0 }
        END { printf "%d %d %d %d\n", hit, lines, bhit, br }'
}

# One corpus ($3: seeds, plain or structured) of library $1 replayed from
# zeroed counters; per file of the library's CFI code, its gcov summary
# into $work/gcov/$1/$3.
measure() {
    find "$work/cov" -name '*.gcda' -delete
    if [ "$3" = seeds ]; then
        replay "$1" "$2/seeds"
    else
        replay "$1" "$2/seeds"
        replay "$1" "$2/$3/corpus"
    fi
    mkdir -p "$work/gcov/$1"
    # shellcheck disable=SC2046 # a folder, then file names
    set -- "$1" "$2" "$3" $(cfi_files "$1")
    lib=$1 variant=$3 dir=$4
    shift 4
    : >"$work/gcov/$lib/$variant"
    for f in "$@"; do
        echo "$f $(gcov_file "$lib" "$dir" "$f")" >>"$work/gcov/$lib/$variant"
    done
}

# The last line of a fork-mode libFuzzer log: "runs exec/s".
speed_of() {
    grep -E '^#[0-9]+: cov:' "$1" | tail -n 1 |
        sed -n 's/^#\([0-9]*\):.*exec\/s \([0-9]*\).*/\1 \2/p'
}

# The modules libFuzzer counts edges in (2 with a feedback library:
# the target and the library).
modules_of() {
    sed -n 's/^INFO: Loaded \([0-9]*\) modules.*/\1/p' "$1" | head -n 1
}

pct() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (b == 0) printf "—"; else printf "%.1f", 100 * a / b }'
}

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (b == 0) printf "—"; else printf "%.2f", a / b }'
}

# The table: per file and per library, lines, covered % after the seeds,
# the plain campaign and the structured one, the ratio
# structured / plain of the lines covered, the branches likewise.
table() {
    echo "| library | file | lines | seeds | plain | structured | ratio |" \
         "branches | plain | structured |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for lib in $libraries; do
        g=$work/gcov/$lib
        paste -d ' ' "$g/seeds" "$g/plain" "$g/structured" |
        awk '{ print $1, $2, $3, $4, $7, $9, $12, $14, $5 }' |
        while read -r f s lines _ p pb st stb branches; do
            echo "| $lib | \`$f\` | $lines | $(pct "$s" "$lines") %" \
                 "| $(pct "$p" "$lines") % | $(pct "$st" "$lines") %" \
                 "| $(ratio "$st" "$p") | $branches" \
                 "| $(pct "$pb" "$branches") % | $(pct "$stb" "$branches") % |"
        done
        # shellcheck disable=SC2046 # seven numbers
        set -- $(paste -d ' ' "$g/seeds" "$g/plain" "$g/structured" |
            awk '{ l += $3; s += $2; p += $7; st += $12; b += $5
                   pb += $9; stb += $14 }
                 END { print l, s, p, st, b, pb, stb }')
        echo "| $lib | **all** | $1 | $(pct "$2" "$1") %" \
             "| $(pct "$3" "$1") % | $(pct "$4" "$1") % | $(ratio "$4" "$3")" \
             "| $5 | $(pct "$6" "$5") % | $(pct "$7" "$5") % |"
    done
    echo
    echo "| library | mutator | runs | exec/s | corpus | crashes |" \
         "outside difference classes | modules | load at the end |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for lib in $libraries; do
        for v in plain structured; do
            c=$work/campaign/$lib/$v
            # shellcheck disable=SC2046 # runs and exec/s
            set -- $(speed_of "$c/log")
            echo "| $lib | $v | ${1:-?} | ${2:-?}" \
                 "| $(find "$c/corpus" -type f | wc -l)" \
                 "| $(find "$c/artifacts" -type f | wc -l)" \
                 "| $(find "$c/findings" -name '*.txt' | wc -l)" \
                 "| $(modules_of "$c/log") | $(cat "$c/load" 2>/dev/null) |"
        done
    done
}

report() {
    [ -x "$work/cov/cfisem/harness/fuzz_oracles" ] ||
        die "no coverage build: run the build step"
    export LD_LIBRARY_PATH="$work/cov/lib"
    for lib in $libraries; do
        for v in seeds plain structured; do
            echo "coverage: $lib: replaying $v" >&2
            measure "$lib" "$work/campaign/$lib" "$v"
        done
    done
    {
        echo "Sources: $(tr '\n' ' ' <"$work/src/versions.txt")"
        echo "Campaign: ${seconds} s per library and mutator;" \
             "library edge feedback: $(feedback_path | grep -q . && echo on || echo off)."
        echo
        table
    } >"$work/coverage.md"
    cat "$work/coverage.md"
}

case "${1:-}" in
all | sources | build | feedback | campaign | report) ;;
*) echo "usage: fuzz/coverage.sh all|sources|build|feedback|campaign|report WORK" >&2
   exit 1 ;;
esac
[ $# -eq 2 ] || die "usage: fuzz/coverage.sh STEP WORK"
mkdir -p "$2"
work=$(realpath "$2")
apt=$work/apt

case $1 in
all) sources; build; feedback; campaign; report ;;
*) "$1" ;;
esac
