#!/usr/bin/env python3
"""findings.py OUT: the findings in outside libraries, read from
diff/findings/README.md (the adapters) and fuzz/findings/README.md (the
fuzzing campaigns): library, reproducer or finding id, and how many."""
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


def main():
    adapters, fuzz = adapter_findings(), fuzz_findings()
    m = Macros("findings")
    m.add("FindingsAdapters", num(len(adapters)))
    m.add("FindingsFuzz", num(len(fuzz)))
    m.write()
    rows = [[tex_escape(lib), "\\texttt{%s}" % tex_escape(rep), tex_escape(what)]
            for lib, rep, what in adapters + fuzz]
    write_text("findings.tex", tabular("p{2.6cm}p{4.4cm}p{7.6cm}",
                                       ["library", "reproducer", "what happens"], rows))


if __name__ == "__main__":
    main()
