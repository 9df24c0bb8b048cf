#!/bin/sh
# SPDX-License-Identifier: MIT
# seeds.sh [BUILD] — regenerates fuzz/seeds/, which is committed.
#
#   cfi_bytes/  (harness 1) a 16-byte header (fuzz/targets.h) and then:
#               case-NAME.eh_frame, case-NAME.debug_frame: each section of
#               each hand-written case of corpus/cases, whole;
#               libc-KIND, libstdcxx-KIND: one CIE and one FDE of each kind
#               (plt, signal, remember, expression, lsda, prologue, nop)
#               taken from the system's libraries.
#   elf/        (harness 2) the cases linked compactly (no page padding:
#               about 1.4 KB each) and one small real library.
#   oracles/    (harness 3) the ELF files behind a selector byte: 0
#               libdwarf, 1 libdw, 2 libunwind; and the cfi_bytes seeds
#               behind selector 3 (libdwarf on raw frame records).
#
# Run from the top of the tree. Needs the cases' sources and a C compiler.
set -eu

build=${1:-build}
make -s BUILD="$build" "$build/harness/make_seeds" >/dev/null
make_seeds="$build/harness/make_seeds"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

seeds=fuzz/seeds
mkdir -p "$seeds/cfi_bytes" "$seeds/elf" "$seeds/oracles"
rm -f "$seeds"/cfi_bytes/* "$seeds"/elf/* "$seeds"/oracles/*

# The cases, without the page alignment that makes a linked file mostly
# zeros (AFL++ would spend its time mutating padding).
for source in corpus/cases/*.S; do
    name=$(basename "$source" .S)
    ${CC:-cc} -shared -nostdlib -Wl,--build-id=none -Wl,--hash-style=gnu \
        -Wl,-z,max-page-size=0x10 -Wl,-z,common-page-size=0x10 \
        -Wl,-z,norelro -Wl,-z,noseparate-code -o "$tmp/case-$name.so" "$source"
done

for so in "$tmp"/case-*.so; do
    name=$(basename "$so" .so)
    "$make_seeds" sections "$seeds/cfi_bytes" "$name" "$so" >/dev/null
done

lib() {
    for dir in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
        if [ -f "$dir/$1" ]; then echo "$dir/$1"; return 0; fi
    done
    return 1
}
if libc=$(lib libc.so.6); then
    "$make_seeds" pairs "$seeds/cfi_bytes" libc "$libc" >/dev/null
fi
if libstdcxx=$(lib libstdc++.so.6); then
    "$make_seeds" pairs "$seeds/cfi_bytes" libstdcxx "$libstdcxx" >/dev/null
fi

# ELF seeds: the compact cases (large_advance is 64 KB of code: left out)
# and one small real library, as GCC and ld build them.
for so in "$tmp"/case-*.so; do
    case "$so" in *large_advance*) continue ;; esac
    cp "$so" "$seeds/elf/"
    chmod 644 "$seeds/elf/$(basename "$so")"
done
if real=$(lib libxshmfence.so.1.0.0); then
    cp "$real" "$seeds/elf/real-libxshmfence.so"
    chmod 644 "$seeds/elf/real-libxshmfence.so"
fi

for elf in "$seeds"/elf/*; do
    name=$(basename "$elf")
    for selector in 0 1 2; do
        { printf '%b' "\\000$selector"; cat "$elf"; } > "$seeds/oracles/$selector-$name"
    done
done
for records in "$seeds"/cfi_bytes/*; do
    name=$(basename "$records")
    { printf '%b' "\\0003"; cat "$records"; } > "$seeds/oracles/3-$name"
done

for dir in cfi_bytes elf oracles; do
    echo "$seeds/$dir: $(find "$seeds/$dir" -type f | wc -l) files, $(du -sk "$seeds/$dir" | cut -f1) KB"
done
