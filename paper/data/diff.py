#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""diff.py OUT: `cfisem diff` (every engine against the IL evaluator) over
the whole manifest PAPER_MANIFEST (`make corpus`'s; its results kept in
$CFISEM_BUILD/paper/diff-results, so that a second run reads them back),
or, without a manifest, over PAPER_DIFF_FILES (paths separated by spaces;
default libc, ld.so, /bin/ls): the agreement table, the known deviations,
the run's size, and which engines agree everywhere."""
import os

from common import Macros, cfisem, load_json, num, tabular, tex_escape, write_text

DEFAULT = ("/lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 /bin/ls")


def corpus():
    """The command line's files, and what the text calls them."""
    manifest = os.environ.get("PAPER_MANIFEST")
    if manifest:
        results = os.path.join(os.environ.get("CFISEM_BUILD", "build"), "paper",
                               "diff-results")
        return ["--manifest", manifest, "--results", results], None
    files = os.environ.get("PAPER_DIFF_FILES", DEFAULT).split()
    return files, files


def engines_where(d, test):
    names = [e for e, s in d["summary"].items() if test(s)]
    return ", ".join("\\texttt{%s}" % tex_escape(e) for e in names) or "none"


def main():
    files, names = corpus()
    out = os.path.join(os.path.abspath(__import__("common").out_dir()), "diff.json")
    cache = os.path.join(os.environ.get("CFISEM_BUILD", "build"), "paper", "cache")
    cfisem("diff", *files, "--json", out, "--cache", cache,
           "--jobs", os.environ.get("PAPER_JOBS", "2"), check=False)
    with open(out) as f:
        d = load_json(f.read())
    m = Macros("diff")
    loaded = [x for x in d["files"] if x["status"] == "ok"]
    m.add("DiffFiles", num(len(d["files"])))
    m.add("DiffFilesLoaded", num(len(loaded)))
    m.add("DiffFileNames", ", ".join("\\texttt{%s}" % tex_escape(os.path.basename(x))
                                     for x in names) if names else
          "the %s ELF files of this system's manifest" % num(len(d["files"])))
    m.add("DiffAgreeEverywhere", engines_where(
        d, lambda s: s["agree"] == s["compared"]))
    m.add("DiffKnownOnly", engines_where(
        d, lambda s: s["known_deviation"] > 0 and s["differ"] == 0))
    m.add("DiffWithMismatches", engines_where(d, lambda s: s["differ"] > 0))
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
        "lrp{8.4cm}", ["deviation", "requests", "what the engine does"], rows))


if __name__ == "__main__":
    main()
