#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""synth.py OUT: `cfisem synth` on libc and ld.so: every instruction of
every FDE, the state the code builds (abstract interpretation over the
control-flow graph) against the IL's row. Writes the table of files (FDEs,
fully analysed, FDEs with a disagreement, disagreeing ranges by kind,
time), the table of limits (FDEs with an instruction not analysable, by
reason), synth.json (each file's totals) and the numbers for the text.
PAPER_SYNTH_FILES (paths separated by spaces) overrides the files."""
import json
import os
import tempfile

from common import Macros, cfisem, num, tabular, tex_escape, write_text

DEFAULT = "/lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2"
KINDS = ["cfa_height", "save_slot", "restored_early", "restored_late", "no_fde"]


def synth(path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "synth.json")
        # Exit status 1 is a disagreement: counted, not an error.
        cfisem("synth", path, "--json", out, check=False)
        with open(out) as f:
            report = json.load(f)
    report.pop("ranges", None)
    return report


def main():
    m = Macros("synth")
    files = os.environ.get("PAPER_SYNTH_FILES", DEFAULT).split()
    reports = [(os.path.basename(f), synth(f)) for f in files]
    write_text("synth.json", json.dumps(dict(reports), indent=1) + "\n")
    rows = []
    for name, r in reports:
        share = 100.0 * r["fully_analysed"] / r["fdes"] if r["fdes"] else 100.0
        rows.append(["\\texttt{%s}" % tex_escape(name), num(r["fdes"]),
                     num(r["instructions"]),
                     "%s (%.1f\\,\\%%)" % (num(r["fully_analysed"]), share),
                     num(r["fdes_with_disagreement"])] +
                    [num(r["kinds"][k]) for k in KINDS] + ["%.2f" % r["seconds"]])
    write_text("synth.tex", tabular(
        "lrrrr" + "r" * len(KINDS) + "r",
        ["file", "FDEs", "instructions", "fully analysed", "FDEs disagreeing"] +
        ["\\texttt{%s}" % tex_escape(k) for k in KINDS] + ["time (s)"], rows))
    reasons = []
    for _, r in reports:
        for k, v in r["limit_fdes"].items():
            if v and k not in reasons:
                reasons.append(k)
    reasons.sort(key=lambda k: -sum(r["limit_fdes"].get(k, 0) for _, r in reports))
    rows = [["\\texttt{%s}" % tex_escape(k)] +
            [num(r["limit_fdes"].get(k, 0)) for _, r in reports] for k in reasons]
    write_text("synth-limits.tex", tabular(
        "l" + "r" * len(reports),
        ["reason"] + ["\\texttt{%s}" % tex_escape(n) for n, _ in reports],
        rows or [["(none)"] + [""] * len(reports)]))
    fdes = sum(r["fdes"] for _, r in reports)
    full = sum(r["fully_analysed"] for _, r in reports)
    m.add("SynthFiles", ", ".join("\\texttt{%s}" % tex_escape(n) for n, _ in reports))
    m.add("SynthFDEs", num(fdes))
    m.add("SynthInstructions", num(sum(r["instructions"] for _, r in reports)))
    m.add("SynthFullyAnalysed", num(full))
    m.add("SynthFullyPercent", "%.1f" % (100.0 * full / fdes if fdes else 100.0))
    m.add("SynthDisagreeing", num(sum(r["fdes_with_disagreement"] for _, r in reports)))
    m.add("SynthJumpTables", num(sum(r["jump_tables"] for _, r in reports)))
    m.add("SynthNoreturn", num(sum(r["noreturn_calls"] for _, r in reports)))
    m.add("SynthMidFrame", num(sum(r["entered_mid_frame"] for _, r in reports)))
    m.add("SynthSeconds", "%.2f" % sum(r["seconds"] for _, r in reports))
    m.add("SynthTopLimit", "\\texttt{%s}" % tex_escape(reasons[0]) if reasons else "(none)")
    if reports:
        name, first = reports[0]
        m.add("SynthFirstFile", "\\texttt{%s}" % tex_escape(name))
        m.add("SynthFirstFDEs", num(first["fdes"]))
        m.add("SynthFirstDisagreeing", num(first["fdes_with_disagreement"]))
    m.write()


if __name__ == "__main__":
    main()
