#!/bin/bash -eu
# SPDX-License-Identifier: MIT
# build.sh — cfisem's fuzz targets in OSS-Fuzz's conventions (also
# ClusterFuzzLite's: .clusterfuzzlite/build.sh calls this script, and
# `make fuzz-libfuzzer` runs it here with clang and libFuzzer).
#
# Honours $CC, $CXX, $CFLAGS, $CXXFLAGS, $LIB_FUZZING_ENGINE, $OUT, $SRC
# and $WORK. The tree is the current folder when it holds cfisem (make
# fuzz-libfuzzer, ClusterFuzzLite's WORKDIR), else $SRC/cfisem (OSS-Fuzz's
# Dockerfile clones it there). Writes into $OUT, for every harness NAME
# of fuzz/harness/ (fuzz_cfi_bytes, fuzz_elf, fuzz_oracles) and its
# NAME_structured build (the structured mutator as
# LLVMFuzzerCustomMutator):
#   NAME                    the target ($LIB_FUZZING_ENGINE linked)
#   NAME_seed_corpus.zip    fuzz/seeds/SHAPE (SHAPE: NAME without fuzz_
#                           and _structured)
#   NAME.dict               fuzz/cfi.dict
#   NAME.options            libFuzzer's dict, max_len and timeout
# The objects go to $WORK/cfisem. Under OSS-Fuzz ($FUZZING_ENGINE set)
# warnings are not errors: a newer clang may warn where clang-14 did not.
set -o pipefail

if [ -f fuzz/oss-fuzz/build.sh ] && [ -f Makefile ]; then
    top=$PWD
else
    top=$SRC/cfisem
fi
work=${WORK:-/tmp}/cfisem
mkdir -p "$OUT" "$work"

warn=(WARN="-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes")
if [ -n "${FUZZING_ENGINE:-}" ]; then
    warn=(WARN="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes")
fi

# The Makefile appends its own flags to $CFLAGS (taken from the
# environment); FUZZ_LINK links each target as OSS-Fuzz asks: $CXX
# $CXXFLAGS ... $LIB_FUZZING_ENGINE.
CFLAGS="$CFLAGS" make -C "$top" -j"$(nproc)" BUILD="$work" CC="$CC" \
    FUZZ_LINK="$CXX $CXXFLAGS" LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
    "${warn[@]}" libfuzzer-targets

for target in "$work"/libfuzzer/fuzz_*; do
    name=$(basename "$target")
    shape=${name#fuzz_}
    shape=${shape%_structured}
    cp "$target" "$OUT/$name"
    rm -f "$OUT/${name}_seed_corpus.zip"
    (cd "$top/fuzz/seeds/$shape" && zip -q -j "$OUT/${name}_seed_corpus.zip" ./*)
    cp "$top/fuzz/cfi.dict" "$OUT/$name.dict"
    case $shape in
        cfi_bytes) max_len=16384 ;;
        *) max_len=65536 ;;
    esac
    # The outside libraries of fuzz_oracles may leak on bad input: leaks
    # are not looked for there (a crash still is).
    leaks=1
    [ "$shape" = oracles ] && leaks=0
    cat > "$OUT/$name.options" <<OPTIONS
[libfuzzer]
dict = $name.dict
max_len = $max_len
timeout = 25
detect_leaks = $leaks
OPTIONS
done
echo "build.sh: $(ls "$work"/libfuzzer | wc -l) targets in $OUT"
