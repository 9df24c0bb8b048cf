#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the dpkg symbols file of libcfisem-unwind (debian/
# libcfisem-unwind1.symbols) from the built library and the names
# runtime/exports.map exports: every dynamic symbol the library defines,
# each of which must match a `global:` pattern of the map (one that does
# not is an error: the map leaks it). A symbol the old file lists keeps
# its version (the first that had it); a new one gets VERSION. The
# package of the headers is the library's name with -dev for its number.
#
#   scripts/symbols.sh LIBRARY EXPORTS_MAP VERSION [OLD_SYMBOLS] > FILE
set -eu
lib=$1 map=$2 version=$3 old=${4:-/dev/null}
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
package=$(printf '%s' "$soname" | sed 's/\.so\.\([0-9]*\)$/\1/')
[ -n "$soname" ] || { echo "symbols.sh: $lib has no soname" >&2; exit 1; }
# The map's global patterns, as shell patterns (cfisem_*).
globals=$(sed -n '/global:/,/local:/p' "$map" | tr ' ;' '\n\n' |
          grep -v -e ':' -e '^$' -e '^[{}]')
printf '%s %s #MINVER#\n' "$soname" "$package"
printf '* Build-Depends-Package: %s\n' "$(echo "$package" | sed 's/[0-9]*$/-dev/')"
nm -D --defined-only "$lib" | awk '{ print $3 }' | sort |
while read -r name; do
    matched=
    for g in $globals; do
        # shellcheck disable=SC2254
        case $name in $g) matched=1 ;; esac
    done
    if [ -z "$matched" ]; then
        echo "symbols.sh: $name is exported but matches no global: of $map" >&2
        exit 1
    fi
    was=$(awk -v s="$name@Base" '$1 == s { print $2 }' "$old")
    printf ' %s@Base %s\n' "$name" "${was:-$version}"
done
