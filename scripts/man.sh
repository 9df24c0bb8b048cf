#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the manual pages of cfisem from its own help texts, so that the
# two never disagree: cfisem.1 from `cfisem --help`, and cfisem-COMMAND.1
# from `cfisem COMMAND --help` for each command it lists.
#
#   scripts/man.sh CFISEM OUTDIR
#
# A help text is paragraphs (blank lines between them), each put in the
# section of a manual page its first line says: `usage:` the SYNOPSIS,
# lines that start with an option (`  -x`, `  --xx`) the OPTIONS (one
# tagged paragraph an option), `Example` the EXAMPLES, `Exit status` the
# EXIT STATUS, `Commands:` the list of commands, any other the
# DESCRIPTION: its prose filled, its indented lines (output, tables) kept
# as they are. ENVIRONMENT gives the variables cfisem reads (the table
# below) that the help names; FILES the files the help's
# subject uses; SEE ALSO the commands and pages the help names.
set -eu
tool=$1
out=$2
mkdir -p "$out"
version=$("$tool" --version | sed -n '1s/^cfisem //p')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The environment variables cfisem and libcfisem-unwind read (getenv),
# each with what it does: NAME<tab>TEXT.
cat > "$work/environment" <<'EOF'
CC	the C compiler that builds an eh_elf of an x86-64 file (default cc)
CFISEM_AARCH64_CC	the C compiler that builds an eh_elf of an AArch64 file (default aarch64-linux-gnu-gcc)
CFISEM_AARCH64_RUNNER	the AArch64 eh_elf runner to use instead of the one installed beside cfisem (ignored in a setuid process)
CFISEM_QEMU_AARCH64	the qemu-aarch64 that runs the AArch64 eh_elf runner (default: qemu-aarch64 found on PATH)
CFISEM_CACHE	the eh_elf cache keyed by build-id (default ${XDG_CACHE_HOME:-$HOME/.cache}/cfisem)
XDG_CACHE_HOME	the folder of user caches; the eh_elf cache is its cfisem/ (default $HOME/.cache)
HOME	the user's home, where the default cache lies
NO_COLOR	when set, no colour even on a terminal
PATH	where qemu-aarch64 and gdb are found
TMPDIR	where the C sources of an eh_elf being built, and gdb's scripts, are written (default /tmp)
EOF

# The files cfisem uses beside those named on its command line:
# KEY<tab>FILE<tab>TEXT; a command's page lists those whose KEY (an
# extended regular expression) its help matches.
cat > "$work/files" <<'EOF'
XDG_CACHE_HOME|CFISEM_CACHE	~/.cache/cfisem/.build-id/xx/rest.eh_elf.so	the user's eh_elf cache, keyed by GNU build-id (cfisem cache fills it)
--system	PREFIX/lib/MULTIARCH/cfisem/eh_elf/.build-id/	the system folder of eh_elfs, keyed by build-id (cfisem cache --system fills it; libcfisem-unwind searches it)
runner|AArch64	PREFIX/lib/cfisem/aarch64/eh_elf_runner	the AArch64 program that calls the eh_elfs of AArch64 files under qemu-aarch64 (cfisem finds it from where it runs: ../lib/cfisem/aarch64/ from its bin/)
schema_version	/usr/share/doc/cfisem/	the README and the documents of docs/ (Debian package cfisem-doc); the JSON Schemas of every JSON output are in schemas/ of cfisem's source
EOF

# Help text to troff: backslashes doubled, hyphens made minus signs,
# a leading dot or quote protected.
to_troff() {
    sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# sections HELPFILE: the help text with each paragraph's section
# (SYNOPSIS, OPTIONS, EXAMPLES, EXIT, COMMANDS, DESCRIPTION), as lines
# SECTION<tab>LINE, a paragraph ended by SECTION<tab> alone.
sections() {
    awk '
    function flush(   i, s, first) {
        if (n == 0) return
        first = para[1]
        if (first ~ /^usage:/) s = "SYNOPSIS"
        else if (first ~ /^  --?[a-zA-Z]/) s = "OPTIONS"
        else if (first ~ /^Examples?[ :,]/) s = "EXAMPLES"
        else if (first ~ /^Exit status/) s = "EXIT"
        else if (first ~ /^Commands:/) s = "COMMANDS"
        else s = "DESCRIPTION"
        # A later exit status is that of the modes described since the
        # one before (validate: --hdr, --sframe): it says which.
        if (s == "DESCRIPTION" && match(first, /^--[a-z-]+:/))
            modes = modes (modes == "" ? "" : " or ") \
                    substr(first, 1, RLENGTH - 1)
        if (s == "EXIT") {
            if (exits++ && modes != "") print s "\tWith " modes ":"
            modes = ""
        }
        for (i = 1; i <= n; i++) print s "\t" para[i]
        print s "\t"
        n = 0
    }
    /^$/ { flush(); next }
    { para[++n] = $0 }
    END { flush() }' "$1"
}

# synopsis: SYNOPSIS lines to troff, one invocation a block.
synopsis() {
    printf '.SH SYNOPSIS\n'
    awk -F '\t' '$1 == "SYNOPSIS"' | cut -f2- | sed -e '/^$/d' |
        sed 's/^usage: //' | to_troff |
        awk '{ printf ".nf\n%s\n.fi\n", $0 }' | sed -e ':a' -e 'N' -e '$!ba' \
            -e 's/\n\.fi\n\.nf\n/\n/g'
}

# prose: lines of a section to troff: unindented lines filled, indented
# ones kept as they are; one .PP a paragraph.
prose() {
    to_troff | awk '
    BEGIN { start = 1 }
    /^$/ { if (nf) print ".fi"; nf = 0; start = 1; next }
    {
        if (start) { print ".PP"; start = 0 }
        if ($0 ~ /^ /) { if (!nf) print ".nf"; nf = 1 }
        else if (nf) { print ".fi"; nf = 0 }
        print
    }
    END { if (nf) print ".fi" }'
}

# options: OPTIONS lines to tagged paragraphs: the option in bold (its
# argument in italics), its text as the help lays it out.
options() {
    to_troff | awk -v quote="'" '
    function request(text,   c) {
        c = substr(text, 1, 1)
        return c == "." || c == quote
    }
    function tag(text,   k, w, t, out) {
        k = split(text, w, " ")
        for (t = 1; t <= k; t++)
            out = out (t > 1 ? " " : "") \
                  (w[t] ~ /^\\-/ ? "\\fB" w[t] "\\fR" : "\\fI" w[t] "\\fR")
        return out
    }
    function close_item() { if (open) print ".fi"; open = 0 }
    /^$/ { close_item(); next }
    /^  \\-/ {
        close_item()
        line = substr($0, 3)
        if (match(line, /   *[^ ]/)) {
            term = substr(line, 1, RSTART - 1)
            column = 2 + RSTART + RLENGTH - 2
            text = substr(line, RSTART + RLENGTH - 1)
        } else { term = line; column = 0; text = "" }
        printf ".TP\n%s\n.nf\n", tag(term)
        if (request(text)) text = "\\&" text
        if (text != "") print text
        open = 1
        next
    }
    {
        if (!column) { match($0, /^ */); column = RLENGTH }
        lead = $0; sub(/^ */, "", lead)
        pad = length($0) - length(lead) - column
        for (indent = ""; pad > 0; pad--) indent = indent " "
        # A line that starts with a dot or a quote is a request to troff.
        if (indent == "" && request(lead)) lead = "\\&" lead
        print indent lead
    }
    END { close_item() }'
}

# environment HELPFILE: the variables of the table the help names (with
# $, or as a word), each with the table's text; cfisem(1) lists them all.
environment() {
    help=$1
    printf '.SH ENVIRONMENT\n'
    found=
    while IFS='	' read -r var text; do
        [ "$name" = cfisem ] || grep -q "\\b$var\\b" "$help" || continue
        found=1
        printf '.TP\n.B %s\n%s.\n' "$var" "$(printf '%s' "$text" | to_troff)"
    done < "$work/environment"
    [ -n "$found" ] ||
        printf 'This command'"'"'s help names none of the variables cfisem\nreads;\n.BR cfisem (1)\nlists them (the AArch64 runner'"'"'s, the caches'"'"', TMPDIR).\n'
}

# files HELPFILE
files() {
    printf '.SH FILES\n'
    found= prefix=
    while IFS='	' read -r key file text; do
        [ "$name" = cfisem ] || grep -Eq -- "$key" "$1" || continue
        found=1
        case $file in PREFIX*) prefix=1 ;; esac
        printf '.TP\n.I %s\n%s\n' "$(printf '%s' "$file" | to_troff)" \
            "$(printf '%s' "$text" | to_troff)"
    done < "$work/files"
    [ -n "$found" ] ||
        printf 'Only the files named on its command line (and the\ntemporary files it removes).\n'
    [ -z "$prefix" ] ||
        printf '.PP\nPREFIX is /usr for the Debian package, /usr/local for make\ninstall; MULTIARCH is the triplet (x86_64\\-linux\\-gnu).\n'
}

# see_also NAME HELPFILE: the commands and pages the help names.
see_also() {
    name=$1 help=$2
    {
        [ "$name" = cfisem ] || echo 'cfisem 1'
        [ "$name" != cfisem ] || printf '%s\n' 'cfisem-unwind 3'
        for c in $commands; do
            [ "$name" = "cfisem-$c" ] && continue
            if [ "$name" = cfisem ] || grep -q "cfisem $c\\b" "$help"; then
                echo "cfisem-$c 1"
            fi
        done
        grep -q 'cfisem-unwind\|libcfisem-unwind' "$help" && echo 'cfisem-unwind 3'
        grep -q '\bIL\b\|cfisem il\b' "$help" && echo 'cfisem-il-format 5'
        grep -q 'eh_elf' "$help" && echo 'cfisem-eh-elf 5'
        grep -q 'readelf' "$help" && echo 'readelf 1'
        grep -q 'gdb' "$help" && echo 'gdb 1'
    } | awk '!seen[$0]++' | sed 's/-/\\-/g' |
        awk 'BEGIN { printf ".SH SEE ALSO\n" }
             { line = line (NR > 1 ? ",\n" : "") ".BR " $1 " (" $2 ")" }
             END { print line }'
}

# page NAME SUMMARY HELPFILE
page() {
    name=$1 summary=$2 help=$3
    upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
    sections "$help" > "$work/sections"
    part() { awk -F '\t' -v s="$1" '$1 == s' "$work/sections" | cut -f2-; }
    {
        printf '.TH %s 1 "" "cfisem %s" "cfisem manual"\n' "$upper" "$version"
        printf '.SH NAME\n%s \\- %s\n' "$name" "$(printf '%s' "$summary" | to_troff)"
        synopsis < "$work/sections"
        printf '.SH DESCRIPTION\n'
        part DESCRIPTION | prose
        if [ -n "$(part COMMANDS)" ]; then
            printf '.SS Commands\n'
            part COMMANDS | sed '1d;/^$/d' | while read -r c text; do
                printf '.TP\n.B %s\n%s\n' "$c" "$(printf '%s' "$text" | to_troff)"
            done
        fi
        if [ -n "$(part OPTIONS)" ]; then
            printf '.SH OPTIONS\n'
            part OPTIONS | options
        fi
        printf '.SH EXIT STATUS\n'
        part EXIT | sed 's/^Exit status[:,] *//' | prose
        environment "$help"
        files "$help"
        printf '.SH EXAMPLES\n'
        if [ "$name" = cfisem ]; then
            printf 'The first example of each command'"'"'s page:\n.PP\n.nf\n'
            to_troff < "$work/examples"
            printf '.fi\n'
        else
            part EXAMPLES | sed 's/^Examples\{0,1\}: *//' | prose
        fi
        see_also "$name" "$help"
    } > "$out/$name.1"
}

"$tool" --help > "$work/help"
commands=$(sed -n '/^Commands:/,/^$/p' "$work/help" | awk 'NR > 1 && NF { print $1 }')
: > "$work/examples"
sed -n '/^Commands:/,/^$/p' "$work/help" | awk 'NR > 1 && NF' |
while read -r command summary; do
    "$tool" "$command" --help > "$work/help.cmd"
    page "cfisem-$command" "$summary" "$work/help.cmd"
    # The first invocation of the command in its Example paragraph (with
    # the lines a backslash continues), its comment left out.
    sed -n '/^Examples\{0,1\}[ :,]/,/^$/p' "$work/help.cmd" |
        sed 's/^Examples\{0,1\}[^:]*: *//' | awk -v c="cfisem $command" '
        taking { print; taking = /\\$/; if (!taking) exit; next }
        index($0, c) { sub(/^.*cfisem /, "cfisem "); sub(/  +[(#].*$/, "")
                       print; taking = /\\$/; if (!taking) exit }' \
        >> "$work/examples"
done
page cfisem "the semantics of DWARF call frame information, executable" \
    "$work/help"
