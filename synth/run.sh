#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh — `cfisem synth` over many files, two at a time, and the totals.
#
#   synth/run.sh CFISEM LIST OUTDIR
#
# LIST: one path a line (a corpus manifest: tab-separated, the path first;
# lines starting with # are skipped). For each file, OUTDIR/reports/N.txt
# is `cfisem synth FILE` (under a SYNTH_TIMEOUT, 300 s) with its exit
# status on the last line. OUTDIR/summary.txt: files, FDEs, the share fully
# analysed, FDEs with a disagreement, ranges by kind, FDEs by limit, the
# files that could not be read or timed out, and the wall time.
# SYNTH_ARGS are passed to each `cfisem synth` (e.g. --no-fde-code; the
# summary then counts the code no FDE covers too).
set -eu
cfisem=$1 list=$2 out=$3
jobs=${SYNTH_JOBS:-2}
timeout=${SYNTH_TIMEOUT:-300}
args=${SYNTH_ARGS:-}
mkdir -p "$out/reports"
start=$(date +%s)
grep -v '^#' "$list" | cut -f1 | awk '{ printf "%d\t%s\n", NR, $0 }' |
    tr '\n' '\0' |
    xargs -0 -P "$jobs" -n 1 sh -c '
        n=${5%%	*} path=${5#*	}
        { echo "file $path"
          timeout "$2" "$1" synth "$path" $4 2>&1; echo "status $?"; } \
            > "$3/reports/$n.txt"' sh "$cfisem" "$timeout" "$out" "$args" \
    || true
end=$(date +%s)
cat "$out"/reports/*.txt | awk -v secs=$((end - start)) '
    /^file / { files++ }
    /^status / { st[$2]++ }
    / FDEs, .* instructions: / {
        fdes += $1; insns += $3; fully += $5
        for (i = 1; i <= NF; i++) if ($i == "mid-frame,") disagree += $(i + 1)
    }
    /^  [a-z_]+ +[0-9]+ ranges$/ { kind[$1] += $2 }
    /^  limit / { limit[$2] += $3 }
    /^code no FDE covers: / {
        code += $5; code_insns += $(NF - 4); code_fully += $(NF - 2)
    }
    END {
        printf "%d files, %d FDEs, %d instructions: %d fully analysed (%.1f%%), %d FDEs with a disagreement; %d s\n",
            files, fdes, insns, fully, fdes ? 100 * fully / fdes : 0, disagree, secs
        for (s in st) printf "exit status %s: %d files\n", s, st[s]
        for (k in kind) printf "ranges %-16s %d\n", k, kind[k]
        for (l in limit) printf "limit %-18s %d FDEs\n", l, limit[l]
        if (code) printf "no-fde code %d functions, %d instructions: %d fully analysed\n", code, code_insns, code_fully
    }' | sort > "$out/summary.txt"
cat "$out/summary.txt"
