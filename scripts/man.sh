#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the manual pages of cfisem from its own help texts, so that the
# two never disagree: cfisem.1 from `cfisem --help`, and cfisem-COMMAND.1
# from `cfisem COMMAND --help` for each command it lists.
#
#   scripts/man.sh CFISEM OUTDIR
set -eu
tool=$1
out=$2
mkdir -p "$out"
version=$("$tool" --version | sed -n '1s/^cfisem //p')

# Help text to troff: backslashes doubled, hyphens made minus signs,
# a leading dot or quote protected; everything kept as it is laid out.
to_troff() {
    sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# page NAME SUMMARY HELPFILE
page() {
    name=$1 summary=$2 help=$3
    upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
    {
        printf '.TH %s 1 "" "cfisem %s" "cfisem manual"\n' "$upper" "$version"
        printf '.SH NAME\n%s \\- %s\n' "$name" "$(printf '%s' "$summary" | to_troff)"
        printf '.SH SYNOPSIS\n.nf\n'
        sed -n '/^usage:/,/^$/p' "$help" | sed -e 's/^usage: //' -e '/^$/d' | to_troff
        printf '.fi\n.SH DESCRIPTION\n.nf\n'
        sed '1,/^$/d' "$help" | to_troff
        printf '.fi\n'
        if [ "$name" = cfisem ]; then
            printf '.SH SEE ALSO\n'
            sed -n '/^Commands:/,/^$/p' "$help" | awk 'NR > 1 && NF { printf "cfisem\\-%s(1)\n", $1 }'
        else
            printf '.SH SEE ALSO\ncfisem(1)\n'
        fi
    } > "$out/$name.1"
}

help=$(mktemp)
trap 'rm -f "$help" "$help.cmd"' EXIT
"$tool" --help > "$help"
page cfisem "the semantics of DWARF call frame information, executable" "$help"
sed -n '/^Commands:/,/^$/p' "$help" | awk 'NR > 1 && NF' |
while read -r command summary; do
    "$tool" "$command" --help > "$help.cmd"
    page "cfisem-$command" "$summary" "$help.cmd"
done
