#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the bash completion of cfisem from its own help texts: the
# commands `cfisem --help` lists, each command's options (every --option
# its help names), the engine names, and the values an option lists as
# A|B|C (formats, ABIs, sections).
#
#   scripts/completion.sh CFISEM > cfisem.bash
set -eu
tool=$1
help=$(mktemp)
trap 'rm -f "$help"' EXIT
"$tool" --help > "$help"
commands=$(sed -n '/^Commands:/,/^$/p' "$help" | awk 'NR > 1 && NF { print $1 }' | tr '\n' ' ')
engines=$(sed -n 's/^Engines ([^)]*): //p' "$help")

cat <<HEAD
# bash completion for cfisem (written by scripts/completion.sh from the
# help texts of cfisem $("$tool" --version | sed -n '1s/^cfisem //p')).

_cfisem_options() {
    case \$1 in
HEAD
for command in $commands; do
    # The options of the synopsis, and those the help describes (a line
    # that starts with the option).
    options=$({ "$tool" "$command" --help | sed -n '1,/^$/p' |
                    grep -oE -- '(^|[[ |])--?[a-zA-Z][a-z0-9-]*' | tr -d '[ |'
                "$tool" "$command" --help |
                    grep -oE -- '^  --?[a-zA-Z][a-z0-9-]*' | tr -d ' '
              } | sort -u | tr '\n' ' ')
    printf '    %s) echo "%s--help" ;;\n' "$command" "$options"
done
cat <<MIDDLE
    esac
}

# The values of option \$2 of command \$1.
_cfisem_values() {
    case \$2 in
    --engine|--engines) echo "$engines"; return ;;
    esac
    case "\$1:\$2" in
MIDDLE
for command in $commands; do
    "$tool" "$command" --help |
        grep -o -- '--[a-z][a-z0-9-]* [a-z0-9_-]*\(|[a-z0-9_-]*\)\{1,\}' |
        sed "s/^/$command /"
done | sort -u | awk '{ gsub(/\|/, " ", $3); printf "    %s:%s) echo \"%s\" ;;\n", $1, $2, $3 }' |
    awk '!seen[$1]++'
cat <<'TAIL'
    esac
}

_cfisem() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=${COMP_WORDS[COMP_CWORD-1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
TAIL
printf '        COMPREPLY=($(compgen -W "%shelp --help --version" -- "$cur"))\n' "$commands"
cat <<'TAIL'
        return
    fi
    local command=${COMP_WORDS[1]}
    if [ "$command" = help ]; then
TAIL
printf '        COMPREPLY=($(compgen -W "%s" -- "$cur"))\n' "$commands"
cat <<'TAIL'
        return
    fi
    local values
    values=$(_cfisem_values "$command" "$prev")
    if [ -n "$values" ]; then
        if [ "$prev" = --engines ]; then
            local done_part=${cur%,*}
            [ "$done_part" = "$cur" ] && done_part= || done_part="$done_part,"
            COMPREPLY=($(compgen -P "$done_part" -W "$values" -- "${cur##*,}"))
        else
            COMPREPLY=($(compgen -W "$values" -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_cfisem_options "$command")" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _cfisem cfisem
TAIL
