#!/bin/sh
# triage.sh — sorts the crashes AFL++ saved into findings.
#
#   fuzz/triage.sh FUZZ_BUILD [HARNESS...]      (default: all three)
#
# For every input in FUZZ_BUILD/{smoke,campaign}/HARNESS/*/crashes/:
#   1. replay it with the replay build (ASan and UBSan, symbolised);
#   2. its signature: the kind of failure (the sanitizer's error, or
#      "disagreement") and the top three frames outside the sanitizer
#      runtime, abort() and our verdict function;
#   3. a signature not yet known: the input is minimised with afl-tmin
#      (kept only if it fails the same way), saved as
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
fuzz_asan="abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1:detect_odr_violation=0"
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
        access=$(grep -m1 -o "\(READ\|WRITE\) of size [0-9]*" "$1" || true)
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
    grep -E '^ *#[0-9]+ 0x[0-9a-f]+ in ' "$1" |
        sed -E 's/^ *#[0-9]+ 0x[0-9a-f]+ in //' |
        grep -v -E '^(__asan|__interceptor|__sanitizer|__ubsan|__GI_|__pthread_kill|raise|abort|fuzz_verdict|__libc_start|_start|__internal)' |
        head -n 3
}

library_of() {
    top=$(head -n 1 "$1")
    case "$top" in
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
        id=$( { echo "$harness"; echo "$kind"; sed 's/ (.*//; s/ [^ ]*:[0-9]*:[0-9]*$//; s/ [^ ]*:[0-9]*$//' "$tmp/frames"; } |
              sha256sum | cut -c1-12)
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
        cp "$tmp/input" "$findings/$harness/$id"
        cp "$tmp/report" "$findings/$harness/$id.txt"
        library=$(library_of "$tmp/frames")
        top=$(head -n 1 "$tmp/frames" | sed 's/ (.*//; s|.*/||' | cut -c1-60)
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
echo "triage: $total crashes: $new new findings, $known already known"
