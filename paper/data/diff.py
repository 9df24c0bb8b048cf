#!/usr/bin/env python3
"""diff.py OUT: `cfisem diff` (every engine against the IL evaluator) over
PAPER_DIFF_FILES (paths separated by spaces; default libc, ld.so,
/bin/ls): the agreement table, the known deviations, the run's size."""
import os

from common import Macros, cfisem, load_json, num, tabular, tex_escape, write_text

DEFAULT = ("/lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 /bin/ls")


def main():
    files = os.environ.get("PAPER_DIFF_FILES", DEFAULT).split()
    out = os.path.join(os.path.abspath(__import__("common").out_dir()), "diff.json")
    cache = os.path.join(os.environ.get("CFISEM_BUILD", "build"), "paper", "cache")
    cfisem("diff", *files, "--json", out, "--cache", cache,
           "--jobs", os.environ.get("PAPER_JOBS", "2"), check=False)
    with open(out) as f:
        d = load_json(f.read())
    m = Macros("diff")
    m.add("DiffFiles", num(len(d["files"])))
    m.add("DiffFileNames", ", ".join("\\texttt{%s}" % tex_escape(os.path.basename(x["path"]))
                                     for x in d["files"]))
    m.add("DiffFDEs", num(sum(x["fdes"] for x in d["files"])))
    m.add("DiffRows", num(sum(x["rows"] for x in d["files"])))
    m.add("DiffRequests", num(d["requests"]))
    m.add("DiffSeconds", "%.1f" % d["seconds"])
    m.add("DiffMismatches", num(d["mismatches_total"]))
    m.add("DiffDeviations", num(len(d["deviations"])))
    m.write()
    rows = []
    for engine, s in d["summary"].items():
        rows.append(["\\texttt{%s}" % tex_escape(engine)] +
                    [num(s[k]) for k in ("compared", "agree", "differ", "known_deviation",
                                         "not_comparable", "errors")])
    write_text("diff-agreement.tex", tabular(
        "lrrrrrr", ["engine", "compared", "agree", "differ", "known dev.", "not comp.",
                    "errors"], rows))
    rows = []
    for ident, dev in sorted(d["deviations"].items(), key=lambda kv: -kv[1]["count"]):
        rows.append(["\\texttt{%s}" % tex_escape(ident), num(dev["count"]),
                     tex_escape(dev["summary"])])
    write_text("diff-deviations.tex", tabular(
        "p{4.6cm}rp{8.4cm}", ["deviation", "requests", "what the engine does"], rows))


if __name__ == "__main__":
    main()
