#!/bin/sh
# arm64.sh — a corpus of real AArch64 ELF files: the arm64 builds of the
# Debian packages listed in corpus/arm64-packages.txt, fetched from the
# archive as files and unpacked, without any change to this machine's
# apt or dpkg state (no foreign architecture is added; apt runs with a
# configuration, package lists, cache and an empty dpkg status of its own,
# all under OUTDIR/apt).
#
#   corpus/arm64.sh OUTDIR     fetches and unpacks the packages, writes
#                              the manifest
#
# In OUTDIR:
#   debs/          the .deb files (apt-get download); one already there
#                  with the right sha256 is not fetched again
#   root/          every .deb unpacked (dpkg-deb -x) into one tree;
#                  root.debs lists the .debs unpacked into it, so that a
#                  second run unpacks only the new ones (and starts the
#                  tree again when a listed .deb is no longer wanted)
#   manifest.txt   every ELF file under root/ with an .eh_frame section
#                  and e_machine AArch64, deduplicated by real path, one
#                  line each, tab-separated: path, size in bytes, sha256
#                  (the format of corpus/manifest.sh); lines starting with
#                  # say when, from which suites and mirror, and how many
#                  packages. It is rewritten only when a file changed.
#
# A listed package that the suites do not have for arm64 is reported by
# name and left out; the run fails only when none is found, or when a
# download or an unpacking fails. Progress goes to stderr.
#
# ARM64_PACKAGES (corpus/arm64-packages.txt) names the package list,
# ARM64_SUITE (bookworm) the Debian release, ARM64_MIRROR
# (http://deb.debian.org/debian) and ARM64_SECURITY
# (http://deb.debian.org/debian-security) the archives.
#
# POSIX sh; needs apt-get, apt-cache, dpkg-deb, readelf and
# /usr/share/keyrings/debian-archive-keyring.gpg.
set -eu
export LC_ALL=C

here=$(dirname "$0")
packages=${ARM64_PACKAGES:-$here/arm64-packages.txt}
suite=${ARM64_SUITE:-bookworm}
mirror=${ARM64_MIRROR:-http://deb.debian.org/debian}
security=${ARM64_SECURITY:-http://deb.debian.org/debian-security}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# Packages per apt-get download call: one progress line each.
BATCH=20

die() {
    echo "arm64: $*" >&2
    exit 1
}

# Writes stdin to $1 only when it differs from what $1 holds.
write_if_changed() {
    cat >"$1.tmp"
    if cmp -s "$1.tmp" "$1"; then
        rm -f "$1.tmp"
    else
        mv "$1.tmp" "$1"
    fi
}

# The private apt configuration (scripts/apt-private.subr), for arm64.
. "$here/../scripts/apt-private.subr"
write_apt_config() {
    opts="arch=arm64 signed-by=$keyring"
    apt_private_config "$apt" arm64 <<EOF
deb [$opts] $mirror $suite main
deb [$opts] $mirror $suite-updates main
deb [$opts] $security $suite-security main
EOF
}

# The listed package names, one a line.
wanted_names() {
    awk '{ sub(/#.*/, ""); for (i = 1; i <= NF; i++) print $i }' "$packages"
}

# For each listed package the archive has: name, version, architecture,
# sha256, tab-separated (the candidate version: the newest of the suites).
resolve() {
    # shellcheck disable=SC2046
    apt-cache --no-all-versions show $(wanted_names) 2>/dev/null |
        awk -F': ' '/^Package: /      { name = $2 }
                    /^Version: /      { version = $2 }
                    /^Architecture: / { arch = $2 }
                    /^SHA256: /       { sum = $2 }
                    /^$/ && name != "" {
                        printf "%s\t%s\t%s\t%s\n", name, version, arch, sum
                        name = ""
                    }
                    END { if (name != "")
                        printf "%s\t%s\t%s\t%s\n", name, version, arch, sum }'
}

# The file name apt-get download gives a package: an epoch's colon is
# written %3a.
deb_name() {
    printf '%s_%s_%s.deb\n' "$1" "$(echo "$2" | sed 's/:/%3a/g')" "$3"
}

# Fails on any index not fetched: apt would otherwise go on with the lists
# it has, and drop those of a source no longer listed.
update_lists() {
    echo "arm64: apt-get update ($suite, $suite-updates, $suite-security" \
         "from $mirror and $security)" >&2
    if ! apt-get -qq --error-on=any update >"$apt/update.log" 2>&1; then
        cat "$apt/update.log" >&2
        die "apt-get update failed (network or mirror; above)"
    fi
}

# Fetches the packages of $resolved whose .deb is missing or wrong, BATCH
# per apt-get call, into $out/debs; removes the .debs no longer wanted
# (older versions).
download() {
    total=$(wc -l <"$resolved" | tr -d ' ')
    : >"$out/todo"
    have=0
    while IFS="$(printf '\t')" read -r name version arch sum; do
        deb=$out/debs/$(deb_name "$name" "$version" "$arch")
        if [ -f "$deb" ] &&
           [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sum" ]; then
            have=$((have + 1))
        else
            rm -f "$deb"
            echo "$name=$version" >>"$out/todo"
        fi
    done <"$resolved"
    echo "arm64: $have/$total packages already downloaded" >&2
    while [ -s "$out/todo" ]; do
        head -n $BATCH "$out/todo" >"$out/batch"
        sed -i "1,${BATCH}d" "$out/todo"
        # shellcheck disable=SC2046
        (cd "$out/debs" && apt-get -qq download $(cat "$out/batch")) ||
            die "download failed: apt-get download $(tr '\n' ' ' \
                 <"$out/batch")(network, or a package gone from the mirror)"
        have=$((have + $(wc -l <"$out/batch")))
        echo "arm64: $have/$total packages downloaded" >&2
    done
    rm -f "$out/todo" "$out/batch"
    (cd "$out/debs" && find . ! -name . -prune -name '*.deb') |
    sed 's|^\./||' | sort | comm -13 "$out/wanted.debs" - |
    while IFS= read -r deb; do
        echo "arm64: $deb no longer wanted; removed" >&2
        rm -f "$out/debs/$deb"
    done
}

# Unpacks into $out/root the wanted .debs not unpacked yet. A tree that
# holds a .deb no longer wanted (an older version) is started again, so
# that no file of it stays.
unpack() {
    [ -f "$out/root.debs" ] || : >"$out/root.debs"
    if [ -n "$(comm -13 "$out/wanted.debs" "$out/root.debs")" ]; then
        echo "arm64: the tree holds packages no longer wanted;" \
             "unpacking all again" >&2
        rm -rf "$out/root"
        : >"$out/root.debs"
    fi
    mkdir -p "$out/root"
    comm -23 "$out/wanted.debs" "$out/root.debs" >"$out/unpack.debs"
    total=$(wc -l <"$out/wanted.debs" | tr -d ' ')
    unpacked=$(wc -l <"$out/root.debs" | tr -d ' ')
    while IFS= read -r deb; do
        dpkg-deb -x "$out/debs/$deb" "$out/root" ||
            die "dpkg-deb -x $out/debs/$deb failed"
        echo "$deb" >>"$out/root.debs"
        unpacked=$((unpacked + 1))
        if [ $((unpacked % 50)) -eq 0 ]; then
            echo "arm64: $unpacked/$total packages unpacked" >&2
        fi
    done <"$out/unpack.debs"
    if [ -s "$out/unpack.debs" ]; then
        sort -o "$out/root.debs" "$out/root.debs"
    fi
    rm -f "$out/unpack.debs"
    echo "arm64: $unpacked/$total packages unpacked" >&2
}

# The AArch64 ELF files with .eh_frame under root/, real paths, sorted.
# readelf reads many files at once and names each ("File: path";
# /dev/null makes sure there are two); the file header, with its
# Machine line, comes before the section headers.
corpus_files() {
    find "$out/root" -type f -print0 |
        xargs -0 readelf -hSW /dev/null 2>/dev/null |
        awk '/^File: / { sub(/^File: /, ""); file = $0; machine = ""; next }
             /^ *Machine: / { machine = $0 }
             / \.eh_frame / && machine ~ /AArch64/ && file !~ /\)$/ {
                 print file
             }' |
        sort -u | tr '\n' '\0' | xargs -0 realpath -z | sort -zu |
        tr '\0' '\n'
}

write_manifest() {
    listed=$(wanted_names | wc -l | tr -d ' ')
    found=$(wc -l <"$resolved" | tr -d ' ')
    {
        echo "# cfisem arm64 ELF corpus manifest: path, size, sha256"
        echo "# taken $(date -u +%Y-%m-%dT%H:%M:%SZ) from Debian" \
             "$suite arm64 ($suite $suite-updates main from $mirror," \
             "$suite-security main from $security)"
        echo "# packages: $found of the $listed in $packages"
        corpus_files | while IFS= read -r path; do
            size=$(stat -c %s "$path")
            sum=$(sha256sum "$path" | cut -d' ' -f1)
            printf '%s\t%s\t%s\n' "$path" "$size" "$sum"
        done
    } >"$out/manifest.txt.tmp"
    files=$(grep -vc '^#' "$out/manifest.txt.tmp" || true)
    if [ -f "$out/manifest.txt" ] &&
       [ "$(grep -v '^# taken' "$out/manifest.txt")" = \
         "$(grep -v '^# taken' "$out/manifest.txt.tmp")" ]; then
        rm -f "$out/manifest.txt.tmp"
        echo "arm64: $files files in $out/manifest.txt (unchanged)" >&2
    else
        mv "$out/manifest.txt.tmp" "$out/manifest.txt"
        echo "arm64: $files files in $out/manifest.txt" >&2
    fi
}

case "${1:-}" in
'' | -*) echo "usage: corpus/arm64.sh OUTDIR" >&2; exit 1 ;;
esac
[ $# -eq 1 ] || { echo "usage: corpus/arm64.sh OUTDIR" >&2; exit 1; }
[ -f "$packages" ] || die "no package list $packages"
[ -f "$keyring" ] || die "no $keyring (Debian's debian-archive-keyring)"
mkdir -p "$1/debs"
out=$(realpath "$1")
apt=$out/apt
resolved=$out/packages.tsv
export APT_CONFIG="$apt/apt.conf"

write_apt_config
update_lists
resolve | sort >"$out/resolved.new"
wanted_names | sort -u >"$out/listed"
cut -f1 "$out/resolved.new" | sort -u | comm -23 "$out/listed" - |
    while IFS= read -r name; do
        echo "arm64: no package $name for arm64 in $suite; left out" >&2
    done
rm -f "$out/listed"
[ -s "$out/resolved.new" ] || die "none of the packages of $packages found"
write_if_changed "$resolved" <"$out/resolved.new"
rm -f "$out/resolved.new"
while IFS="$(printf '\t')" read -r name version arch sum; do
    deb_name "$name" "$version" "$arch"
done <"$resolved" | sort >"$out/wanted.debs"
download
unpack
rm -f "$out/wanted.debs"
write_manifest
