#!/bin/sh
# manifest.sh — the manifest of the real-ELF corpus: every ELF file with
# an .eh_frame section under /usr/bin, /usr/lib/x86_64-linux-gnu and
# /lib/x86_64-linux-gnu (their subfolders included; archive members are
# not files and are left out), deduplicated by real path. One line per
# file, tab-separated: path, size in bytes, sha256. Lines starting with #
# say when and where it was taken.
#
#   corpus/manifest.sh OUT           writes OUT when it does not exist yet;
#                                    when it does, checks it (as --check)
#   corpus/manifest.sh --print       writes the manifest on stdout
#   corpus/manifest.sh --check OLD   reports the files of OLD that changed
#                                    (size or sha256) or disappeared, and
#                                    the new ones; exit status 1 when any
#                                    changed or disappeared
#
# CORPUS_DIRS overrides the folders searched.
set -eu
export LC_ALL=C

dirs=${CORPUS_DIRS:-/usr/bin /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu}

# The corpus' real paths, sorted, one a line. readelf reads many files at
# once and names each ("File: path"; /dev/null makes sure there are two);
# archive members come as "File: lib.a(member.o)".
corpus_files() {
    # shellcheck disable=SC2086
    find $dirs -type f -print0 2>/dev/null |
        xargs -0 readelf -SW /dev/null 2>/dev/null |
        awk '/^File: / { sub(/^File: /, ""); file = $0; next }
             / \.eh_frame / && file !~ /\)$/ { print file }' |
        sort -u | tr '\n' '\0' | xargs -0 realpath -z | sort -zu | tr '\0' '\n'
}

print_manifest() {
    echo "# cfisem real-ELF corpus manifest: path, size, sha256"
    echo "# taken $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
    echo "# folders: $dirs"
    corpus_files | while IFS= read -r path; do
        size=$(stat -c %s "$path")
        sum=$(sha256sum "$path" | cut -d' ' -f1)
        printf '%s\t%s\t%s\n' "$path" "$size" "$sum"
    done
}

check_manifest() {
    old=$1
    [ -f "$old" ] || { echo "manifest.sh: no manifest $old" >&2; exit 2; }
    tmp=$(mktemp)
    trap 'rm -f "$tmp"' EXIT INT TERM
    corpus_files >"$tmp"
    changed=0 gone=0 same=0
    while IFS="$(printf '\t')" read -r path size sum; do
        case "$path" in '#'* | '') continue ;; esac
        if [ ! -f "$path" ]; then
            echo "disappeared: $path"
            gone=$((gone + 1))
        elif [ "$(stat -c %s "$path")" != "$size" ] ||
             [ "$(sha256sum "$path" | cut -d' ' -f1)" != "$sum" ]; then
            echo "changed: $path"
            changed=$((changed + 1))
        else
            same=$((same + 1))
        fi
    done <"$old"
    grep -v '^#' "$old" | cut -f1 | sort >"$tmp.old"
    comm -13 "$tmp.old" "$tmp" | sed 's/^/new: /' >"$tmp.new"
    cat "$tmp.new"
    new=$(wc -l <"$tmp.new" | tr -d ' ')
    rm -f "$tmp.old" "$tmp.new"
    echo "manifest $old: $same unchanged, $changed changed, $gone disappeared, $new new"
    [ $changed -eq 0 ] && [ $gone -eq 0 ]
}

case "${1:-}" in
--print) print_manifest ;;
--check)
    [ $# -eq 2 ] || { echo "usage: corpus/manifest.sh --check OLD" >&2; exit 1; }
    check_manifest "$2"
    ;;
'' | -*) echo "usage: corpus/manifest.sh OUT | --print | --check OLD" >&2; exit 1 ;;
*)
    out=$1
    if [ -f "$out" ]; then
        check_manifest "$out" >"$out.check" || true
        echo "manifest: $out exists; changes since it are in $out.check:" >&2
        tail -n 1 "$out.check" >&2
    else
        mkdir -p "$(dirname "$out")"
        print_manifest >"$out.tmp"
        mv "$out.tmp" "$out"
        echo "manifest: $(grep -vc '^#' "$out") files in $out" >&2
    fi
    ;;
esac
