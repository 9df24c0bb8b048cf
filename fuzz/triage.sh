#!/bin/sh
# SPDX-License-Identifier: MIT
# triage.sh — sorts the crashes AFL++ saved into findings.
#
#   fuzz/triage.sh FUZZ_BUILD [HARNESS...]      (default: all three)
#
# For every input in FUZZ_BUILD/{smoke,campaign}/HARNESS/*/crashes/:
#   1. replay it with the replay build (ASan and UBSan, symbolised);
#   2. its signature: the top three frames outside the sanitizer runtime,
#      abort() and our verdict function, without line numbers (a frame in
#      a stripped library is its offset); the kind of failure (the
#      sanitizer's error, or "disagreement") goes in the table;
#   3. a signature not yet known: the input is minimised with afl-tmin
#      (kept only if it fails the same way, dropped if it minimises into
#      an input already saved), saved as
#      fuzz/findings/HARNESS/ID (ID: the first 12 hex digits of the
#      signature's sha256) with the report in ID.txt, and a row is added
#      to the table of fuzz/findings/README.md.
# A finding whose top frame is in libdwarf, libdw, libelf or libunwind is
# an outside library's bug; any other is ours. Run from the top of the
# tree, after `make fuzz-build`.
set -eu

[ $# -ge 1 ] || { echo "usage: fuzz/triage.sh FUZZ_BUILD [HARNESS...]" >&2; exit 1; }
fuzz_build=$1
shift
[ $# -ge 1 ] || set -- cfi_bytes elf oracles

findings=fuzz/findings
table=$findings/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

export AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_QUIET=1
fuzz_asan="abort_on_error=1:symbolize=0:detect_leaks=0"
fuzz_asan="$fuzz_asan:allocator_may_return_null=1:detect_odr_violation=0"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:symbolize=0"

version() {
    dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "?"
}
libdwarf_version="libdwarf $(version libdwarf-dev)"
libdw_version="elfutils libdw $(version libdw1)"
libelf_version="elfutils libelf $(version libelf1)"
libunwind_version="libunwind $(version libunwind8)"

# Replays one input; the report goes to $2.
replay() {
    harness=$1
    ASAN_OPTIONS="symbolize=1:handle_abort=1:detect_leaks=0:detect_odr_violation=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        "$fuzz_build/replay/harness/fuzz_$harness" "$3" >"$2" 2>&1 && return 0
    return 1
}

# The kind of failure, from a report.
kind_of() {
    if grep -q "cfisem fuzz: disagreement" "$1"; then
        echo "disagreement: $(grep -A1 'disagreement:' "$1" | sed -n '2s/ at pc.*//p')"
    elif grep -q "ERROR: AddressSanitizer:" "$1"; then
        line=$(grep -m1 "ERROR: AddressSanitizer:" "$1" | sed 's/.*AddressSanitizer: //; s/ on .*//; s/ (.*//')
        access=$(grep -m1 -o "\(READ\|WRITE\) of size [0-9]*" "$1" ||
                 grep -m1 -o "caused by a \(READ\|WRITE\)" "$1" |
                 sed 's/caused by a //' || true)
        echo "$line${access:+ $access}"
    elif grep -q "runtime error:" "$1"; then
        echo "UB: $(grep -m1 'runtime error:' "$1" | sed 's/.*runtime error: //' | cut -c1-60)"
    else
        echo "crash without a sanitizer report"
    fi
}

# The top three frames outside the sanitizer runtime, abort and our
# verdict: "func (where)" lines.
frames_of() {
    grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ' "$1" |
        sed -E 's/^ *#[0-9]+ 0x[0-9a-f]+ +(in )?//' |
        grep -v -E '^(__asan|__interceptor|__sanitizer|__ubsan|__internal)' |
        grep -v -E '^(__GI_|__pthread_kill|raise|abort|__libc_start|_start)' |
        grep -v -E '^fuzz_verdict' |
        head -n 3
}

# The library a crash belongs to, from its top frame. In harness 3 a
# fault in oracle_X.c is a read of memory library X handed back (an
# expression block, an operation array) past what it owns: X's bug.
library_of() {
    top=$(head -n 1 "$1")
    case "$top" in
    *oracle_libdwarf.c*) echo "$libdwarf_version (memory it returned)" ;;
    *oracle_libdw.c*) echo "$libdw_version (memory it returned)" ;;
    *oracle_libunwind.c*) echo "$libunwind_version (memory it returned)" ;;
    *libdw.so*) echo "$libdw_version" ;;
    *libelf.so* | elf_* | gelf_* | __libelf*) echo "$libelf_version" ;;
    *libunwind* | _U*) echo "$libunwind_version" ;;
    dwarf_* | _dwarf_* | *libdwarf*) echo "$libdwarf_version" ;;
    *) echo "cfisem (ours)" ;;
    esac
}

mkdir -p "$findings"
if [ ! -f "$table" ]; then
    cat >"$table" <<'EOF'
# Fuzzing findings

Written by `fuzz/triage.sh`; one row per distinct crash (by kind and top
three frames). `ID` is the input in `HARNESS/ID`, its sanitizer report in
`HARNESS/ID.txt`. Replay one with the replay build:
`build/fuzz/replay/harness/fuzz_HARNESS fuzz/findings/HARNESS/ID`.
Inputs of `cfi_bytes` and `elf` are replayed by `make check`
(tests/check_fuzz_replay.c): a finding of ours stays here, fixed, as a
regression test.

| ID | harness | library (version) | kind | top frame | size | status |
|---|---|---|---|---|---|---|
EOF
fi

new=0 known=0 total=0
for harness in "$@"; do
    mkdir -p "$findings/$harness"
    afl_bin=$fuzz_build/afl/harness/fuzz_$harness
    for crash in "$fuzz_build"/smoke/"$harness"/*/crashes/id:* \
                 "$fuzz_build"/campaign/"$harness"/*/crashes/id:*; do
        [ -f "$crash" ] || continue
        total=$((total + 1))
        if replay "$harness" "$tmp/report" "$crash"; then
            echo "$crash: does not fail in the replay build (flaky?)" >&2
            continue
        fi
        frames_of "$tmp/report" >"$tmp/frames"
        kind=$(kind_of "$tmp/report")
        # The signature: the top frames without line numbers (the kind of
        # fault varies with where a wild access lands; the site does not).
        id=$( { echo "$harness"
                sed 's/ (.*//; s/ [^ ]*:[0-9]*:[0-9]*$//; s/ [^ ]*:[0-9]*$//' \
                    "$tmp/frames"; } | sha256sum | cut -c1-12)
        if [ -f "$findings/$harness/$id" ]; then
            known=$((known + 1))
            continue
        fi
        # Minimise; keep the result only if it fails the same way.
        cp "$crash" "$tmp/input"
        if ASAN_OPTIONS=$fuzz_asan afl-tmin -i "$crash" -o "$tmp/min" -t 5000 \
               -- "$afl_bin" >/dev/null 2>&1 &&
           ! replay "$harness" "$tmp/report.min" "$tmp/min" &&
           [ "$(kind_of "$tmp/report.min")" = "$kind" ]; then
            cp "$tmp/min" "$tmp/input"
            cp "$tmp/report.min" "$tmp/report"
        fi
        duplicate=""
        for saved in "$findings/$harness"/*; do
            if [ -f "$saved" ] && cmp -s "$saved" "$tmp/input"; then
                duplicate=$saved
            fi
        done
        if [ -n "$duplicate" ]; then   # minimised into a known input
            known=$((known + 1))
            continue
        fi
        cp "$tmp/input" "$findings/$harness/$id"
        cp "$tmp/report" "$findings/$harness/$id.txt"
        library=$(library_of "$tmp/frames")
        top=$(head -n 1 "$tmp/frames" | awk '{ print $1 }' |
              sed 's|^(||; s|.*/||; s/)$//' | cut -c1-60)
        size=$(wc -c <"$findings/$harness/$id" | tr -d ' ')
        case "$library" in
        cfisem*) status="ours: to fix" ;;
        *) status="outside library: documented" ;;
        esac
        # shellcheck disable=SC2016 # the backquotes are Markdown
        printf '| %s | %s | %s | %s | `%s` | %s | %s |\n' "$id" "$harness" \
            "$library" "$kind" "$top" "$size" "$status" >>"$table"
        echo "new finding $findings/$harness/$id: $library: $kind at $top" >&2
        new=$((new + 1))
    done
done

# Hangs: an input that still runs past FUZZ_HANG_TIME seconds (10) in the
# replay build is minimised in afl-tmin's hang mode and kept, one per
# harness and library (the selector byte of harness 3 names the library;
# a hang of harness 1 or 2 is ours). Hangs that finish are reported only.
hang_time=${FUZZ_HANG_TIME:-10}
hangs=0 slow=0
for harness in "$@"; do
    afl_bin=$fuzz_build/afl/harness/fuzz_$harness
    for hang in "$fuzz_build"/smoke/"$harness"/*/hangs/id:* \
                "$fuzz_build"/campaign/"$harness"/*/hangs/id:*; do
        [ -f "$hang" ] || continue
        hangs=$((hangs + 1))
        if timeout "$hang_time" "$fuzz_build/replay/harness/fuzz_$harness" \
               "$hang" >/dev/null 2>&1; then
            slow=$((slow + 1))
            continue
        fi
        library="cfisem (ours)"
        if [ "$harness" = oracles ]; then
            case $(($(od -An -tu1 -N1 "$hang" | tr -d ' ') % 4)) in
            0) library=$libdwarf_version ;;
            1) library=$libdw_version ;;
            2) library=$libunwind_version ;;
            *) library="$libdwarf_version (frame records)" ;;
            esac
        fi
        id=$(printf '%s\nhang\n%s\n' "$harness" "$library" | sha256sum | cut -c1-12)
        [ -f "$findings/$harness/$id" ] && continue
        cp "$hang" "$tmp/input"
        # (each try of a hang costs the whole timeout: bounded)
        if ASAN_OPTIONS=$fuzz_asan timeout "${FUZZ_TMIN_TIME:-600}" \
               afl-tmin -H -i "$hang" -o "$tmp/min" -t 2000 -- "$afl_bin" \
               >/dev/null 2>&1 &&
           ! timeout "$hang_time" "$fuzz_build/replay/harness/fuzz_$harness" \
               "$tmp/min" >/dev/null 2>&1; then
            cp "$tmp/min" "$tmp/input"
        fi
        cp "$tmp/input" "$findings/$harness/$id"
        echo "runs longer than $hang_time s in the replay build" \
            >"$findings/$harness/$id.txt"
        size=$(wc -c <"$findings/$harness/$id" | tr -d ' ')
        case "$library" in
        cfisem*) status="ours: to fix" ;;
        *) status="outside library: documented" ;;
        esac
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$id" "$harness" \
            "$library" "hang (> $hang_time s)" "-" "$size" "$status" >>"$table"
        echo "new finding $findings/$harness/$id: $library: hang" >&2
        new=$((new + 1))
    done
done
echo "triage: $total crashes, $hangs hangs ($slow finish within $hang_time s):" \
     "$new new findings, $known crashes already known"
