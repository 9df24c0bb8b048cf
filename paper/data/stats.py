#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stats.py OUT: `cfisem stats` over the corpus (PAPER_MANIFEST, a
manifest of `make corpus`, or PAPER_FILES, paths separated by spaces):
the corpus numbers, the rows-per-FDE histogram, opcode frequencies, the
2018 report's rule-kind table reproduced beside the report's figures,
expressions and augmentations."""
import csv
import os

from common import (Macros, cfisem, load_json, num, tabular, tex_escape,
                    write_csv, write_text)

RULES = ["undefined", "same_value", "offset", "val_offset", "register",
         "expression", "val_expression"]
FIRST_EH_ELF_REGS = ["rip", "rsp", "rbp", "rbx"]


def corpus_args():
    manifest = os.environ.get("PAPER_MANIFEST")
    if manifest:
        return ["--manifest", manifest]
    return os.environ.get("PAPER_FILES", "").split()


def numbers(stats, seconds, m):
    fdes = stats["fdes"][".eh_frame"] + stats["fdes"][".debug_frame"]
    cies = stats["cies"][".eh_frame"] + stats["cies"][".debug_frame"]
    q = stats["rows_per_fde"]
    m.add("StatsFiles", num(stats["files"] - stats["files_no_cfi"]))
    m.add("StatsFilesNoCfi", num(stats["files_no_cfi"]))
    m.add("StatsFDEs", num(fdes))
    m.add("StatsDebugFrameFDEs", num(stats["fdes"][".debug_frame"]))
    m.add("StatsCIEs", num(cies))
    m.add("StatsRows", num(stats["rows"]))
    m.add("StatsNopOnly", num(stats["nop_only"]))
    m.add("StatsNopOnlyPercent", "%.1f" % (100.0 * stats["nop_only"] / max(fdes, 1)))
    m.add("StatsFailed", num(stats["fdes_failed"]))
    m.add("StatsMedian", num(q["median"]))
    m.add("StatsPNinety", num(q["p90"]))
    m.add("StatsPNinetyNine", num(q["p99"]))
    m.add("StatsMax", num(q["max"]))
    m.add("StatsSeconds", "%.0f" % seconds)
    m.add("StatsJobs", os.environ.get("PAPER_JOBS", "2"))
    m.add("StatsExpressions", num(sum(e["count"] for e in stats["expressions"])))
    m.add("StatsDistinctExpressions", num(len(stats["expressions"])))
    rows = stats["rows"]
    cfa = stats["cfa_rules"]
    m.add("StatsCfaExprRows", num(cfa["expression"]))
    m.add("StatsCfaExprPercent", "%.2f" % (100.0 * cfa["expression"] / max(rows, 1)))


def histogram(stats):
    counts = dict((r, n) for r, n in stats["rows_per_fde"]["histogram"])
    fdes = sum(counts.values()) or 1
    rows = []
    for r in range(0, 41):
        rows.append([r, counts.get(r, 0), "%.6f" % (counts.get(r, 0) / fdes)])
    beyond = sum(n for r, n in counts.items() if r > 40)
    rows.append([41, beyond, "%.6f" % (beyond / fdes)])
    write_csv("rows-per-fde.csv", ["rows", "fdes", "proportion"], rows)


def opcodes(stats):
    ops = stats["opcodes"]
    write_csv("opcodes.csv", ["opcode", "count"],
              [[name, count] for name, count in ops.items()])
    ordered = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
    seen = [(name, count) for name, count in ordered if count]
    write_csv("opcodes-plot.csv", ["index", "opcode", "count"],
              [[i, name, count] for i, (name, count) in enumerate(seen)])
    labels = ",".join("\\texttt{%s}" % tex_escape(name) for name, _ in seen)
    write_text("opcodes-figure.tex", "\n".join([
        "\\begin{tikzpicture}",
        "\\begin{axis}[width=\\linewidth, height=5.2cm, ybar, bar width=4pt,",
        "  ymode=log, log origin=infty, ylabel={instructions},",
        "  xtick={0,...,%d}, xticklabels={%s}," % (len(seen) - 1, labels),
        "  x tick label style={rotate=60, anchor=east, font=\\tiny},",
        "  grid=major, grid style={dashed,gray!30}]",
        "\\addplot[fill=blue!60, draw=none] table[x=index, y=count, col sep=comma]",
        "  {generated/opcodes-plot.csv};",
        "\\end{axis}", "\\end{tikzpicture}", ""]))
    half = (len(ordered) + 1) // 2
    rows = []
    for i in range(half):
        left = ordered[i]
        right = ordered[half + i] if half + i < len(ordered) else ("", "")
        rows.append(["\\texttt{%s}" % tex_escape(left[0]), num(left[1]),
                     "\\texttt{%s}" % tex_escape(right[0]) if right[0] else "",
                     num(right[1]) if right[0] else ""])
    write_text("opcodes.tex", tabular("lrlr", ["opcode", "count", "opcode", "count"], rows))


def kinds_of(stats, regs):
    totals = dict((k, 0) for k in RULES)
    for reg, counts in stats["register_rules"].items():
        if regs is None or reg in regs:
            for k in RULES:
                totals[k] += counts[k]
    return totals


def percent_cell(count, total):
    return "%s (%.3f\\,\\%%)" % (num(count), 100.0 * count / max(total, 1))


def rule_table(stats):
    here = {"rip rsp rbp rbx": kinds_of(stats, FIRST_EH_ELF_REGS),
            "all": kinds_of(stats, None)}
    with open(os.path.join(os.path.dirname(__file__), "report-2018.csv")) as f:
        report = dict((r["columns"], r) for r in
                      csv.DictReader(line for line in f if not line.startswith("#")))
    rows = []
    for columns in ["rip rsp rbp rbx", "all"]:
        total = sum(here[columns].values())
        rows.append(["%s, here" % columns] +
                    [percent_cell(here[columns][k], total) for k in RULES] + [num(total)])
        rep = report[columns]
        rtotal = int(rep["total"])
        rows.append(["%s, 2018 report" % columns] +
                    [percent_cell(int(rep[k]), rtotal) for k in RULES] + [num(rtotal)])
    header = ["columns"] + ["\\texttt{%s}" % tex_escape(k) for k in RULES] + ["total"]
    write_text("rule-kinds.tex", tabular("l" + "r" * (len(RULES) + 1), header, rows))
    write_csv("rule-kinds.csv", ["register"] + RULES,
              [[reg] + [c[k] for k in RULES] for reg, c in stats["register_rules"].items()])


def expressions(stats):
    rows = []
    for e in stats["expressions"][:12]:
        rows.append(["\\texttt{%s}" % tex_escape(e["text"]), num(e["count"]),
                     "\\texttt{%s}" % tex_escape(os.path.basename(e["example"]))])
    write_text("expressions.tex", tabular("p{8.6cm}rl", ["expression", "count", "e.g."], rows))
    rows = [["\\texttt{%s}" % tex_escape(a["text"]), num(a["count"])]
            for a in stats["augmentations"]]
    write_text("augmentations.tex", tabular("lr", ["augmentation", "CIEs"], rows))


def main():
    text, seconds = cfisem("stats", *corpus_args(), "--jobs", os.environ.get("PAPER_JOBS", "2"),
                           "--json", "-")
    write_text("stats.json", text)
    stats = load_json(text)
    m = Macros("stats")
    numbers(stats, seconds, m)
    m.write()
    histogram(stats)
    opcodes(stats)
    rule_table(stats)
    expressions(stats)


if __name__ == "__main__":
    main()
