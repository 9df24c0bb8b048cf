#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""findings.py OUT: the findings in outside libraries, read from
diff/findings/README.md (the adapters) and fuzz/findings/README.md (the
fuzzing campaigns): library, reproducer or finding id, and how many."""
import csv
import os
import re

from common import Macros, num, tabular, tex_escape, write_text

SRC = os.environ.get("CFISEM_SRC", ".")


def adapter_findings():
    rows = []
    with open(os.path.join(SRC, "diff", "findings", "README.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3 and cells[1].startswith("`"):
                what = re.sub(r"`([^`]*)`", r"\1", cells[2])
                rows.append((cells[0], cells[1].strip("`"), what.split(". ")[0]))
    return rows


def fuzz_findings():
    with open(os.path.join(SRC, "fuzz", "findings", "README.md")) as f:
        text = f.read()
    rows = []
    for g in re.finditer(r"- \*\*([0-9a-f]{12}) — ([^:]+): (.*?)\*\*", text, re.S):
        what = re.sub(r"`([^`]*)`", r"\1", " ".join(g.group(3).split()))
        rows.append((g.group(2), "fuzz/findings " + g.group(1), what.rstrip(".")))
    return rows


def campaigns():
    """fuzz/README.md's table of campaigns: harness, cores and time,
    executions, per second, edges, crashes, hangs."""
    rows, inside = [], False
    with open(os.path.join(SRC, "fuzz", "README.md")) as f:
        for line in f:
            if line.startswith("| harness | cores, time | executions"):
                inside = True
                continue
            if inside and line.startswith("|---"):
                continue
            if inside and not line.startswith("|"):
                break
            if inside:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                rows.append([re.sub(r"`([^`]*)`", r"\1", c) for c in cells])
    return rows


def upstream():
    """upstream.csv: what the newest source says, by reproducer."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "upstream.csv")
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    return dict((row["reproducer"], row) for row in csv.DictReader(lines))


def main():
    adapters, fuzz = adapter_findings(), fuzz_findings()
    newest = upstream()
    m = Macros("findings")
    m.add("FindingsAdapters", num(len(adapters)))
    m.add("FindingsFuzz", num(len(fuzz)))
    statuses = [newest[rep]["status"] for _, rep, _ in adapters + fuzz if rep in newest]
    m.add("FindingsStillThere", num(statuses.count("still there")))
    m.add("FindingsFixed", num(len(statuses) - statuses.count("still there")))
    m.add("FindingsUnchecked", num(len(adapters) + len(fuzz) - len(statuses)))
    m.write()
    rows = []
    for lib, rep, what in adapters + fuzz:
        up = newest.get(rep)
        status = ("%s (%s, \\texttt{%s})" % (up["status"], up["date"], up["commit"][:8])
                  if up else "not checked")
        # long DWARF names (DW_DLE_...) may break after an underscore
        what_tex = tex_escape(what).replace("\\_", "\\_\\allowbreak{}")
        rows.append([tex_escape(lib), "\\texttt{%s}" % tex_escape(rep), what_tex, status])
    fuzz_rows = campaigns()
    m2 = Macros("fuzz")
    m2.add("FuzzCampaigns", num(len(fuzz_rows)))
    m2.write()
    write_text("fuzz.tex", tabular(
        "p{4.2cm}p{2.6cm}rrp{2.4cm}p{1.4cm}p{1.2cm}",
        ["harness", "cores, time", "executions", "per second", "edges (of the map)",
         "crashes", "hangs"],
        [[tex_escape(c) for c in row] for row in fuzz_rows]
        or [["(no campaign recorded)", "", "", "", "", "", ""]]))
    write_text("findings.tex", tabular("p{2.0cm}p{4.6cm}p{6.4cm}p{2.0cm}",
                                       ["library", "reproducer", "what happens",
                                        "newest source"], rows))


if __name__ == "__main__":
    main()
