#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace.py OUT: `cfisem trace` on a few small programs, every stop
checked by the engines il, interp and compiled against the machine, and
the rate of bare single-stepping (`--bare`) to compare with: the table of
programs (instructions, frames checked, mismatching stops per engine),
trace.json (every run's JSON), and the rates for the text.

PAPER_TRACE_PROGRAMS: the programs, separated by ';', each a command line
split as the shell would (default "/bin/true;ls /"); PAPER_TRACE_BARE:
the program whose bare stepping is timed (default /bin/true; empty: not
measured). The compiled engine builds each ELF's eh_elf into its cache on
first sight: a first run at the rows only (`--at rows`, cheap) fills the
cache, so that the times measured are the tracing's alone. The cache is a
new temporary directory, so that the eh_elfs are the current compiler's;
PAPER_TRACE_CACHE names one to keep instead."""
import json
import os
import shlex
import tempfile

from common import Macros, cfisem, num, tabular, tex_escape, write_text

ENGINES = ["il", "interp", "compiled"]
DEFAULT = "/bin/true;ls /"


def trace(cache, argv, *options):
    """One run of cfisem trace; its JSON report."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        # Exit status 1 is a mismatch: reported in the table, not an error.
        cfisem("trace", "--json", path, "--cache", cache, "--quiet",
               "--no-disassembly", *options, "--", *argv, check=False)
        with open(path) as f:
            return json.load(f)


def main():
    m = Macros("trace")
    programs = [shlex.split(p) for p in
                os.environ.get("PAPER_TRACE_PROGRAMS", DEFAULT).split(";") if p.strip()]
    runs = []
    bare_program = os.environ.get("PAPER_TRACE_BARE", "/bin/true").strip()
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.environ.get("PAPER_TRACE_CACHE") or tmp
        os.makedirs(cache, exist_ok=True)
        for argv in programs:
            trace(cache, argv, "--at", "rows", "--engines", "compiled")
            runs.append((" ".join(argv),
                         trace(cache, argv, "--engines", ",".join(ENGINES))))
        bare = trace(cache, shlex.split(bare_program), "--bare") if bare_program else None
    write_text("trace.json", json.dumps(
        {"runs": [{"program": p, "report": r} for p, r in runs],
         "bare": {"program": bare_program, "report": bare} if bare else None},
        indent=1) + "\n")

    rows = []
    for program, r in runs:
        rows.append(["\\texttt{%s}" % tex_escape(program), num(r["instructions"]),
                     num(r["frames_checked"])] +
                    [num(r["engines"][e]["mismatch"]) for e in ENGINES] +
                    ["%.1f" % r["seconds"]])
    write_text("trace.tex", tabular(
        "lrrrrrr", ["program", "instructions", "frames checked"] +
        ["\\texttt{%s}" % e for e in ENGINES] + ["time (s)"],
        rows or [["(no program)"] + [""] * 6]))

    total_insns = sum(r["instructions"] for _, r in runs)
    total_frames = sum(r["frames_checked"] for _, r in runs)
    m.add("TracePrograms", num(len(runs)))
    m.add("TraceInstructions", num(total_insns))
    m.add("TraceFrames", num(total_frames))
    m.add("TraceMismatches", num(sum(r["engines"][e]["mismatch"]
                                     for _, r in runs for e in ENGINES)))
    m.add("TraceNoFde", num(sum(r["no_fde"] for _, r in runs)))
    first = runs[0][1] if runs else None
    m.add("TraceFirstProgram", "\\texttt{%s}" % tex_escape(runs[0][0]) if runs else "(none)")
    m.add("TraceFirstInstructions", num(first["instructions"]) if first else "0")
    m.add("TraceFirstFrames", num(first["frames_checked"]) if first else "0")
    rate = (lambda r: r["instructions"] / r["seconds"] if r["seconds"] > 0 else 0)
    m.add("TraceCheckedRate", num(round(total_insns / sum(r["seconds"] for _, r in runs)))
          if runs and sum(r["seconds"] for _, r in runs) > 0 else "(not measured)")
    m.add("TraceBareProgram", "\\texttt{%s}" % tex_escape(bare_program) if bare else "(none)")
    if bare and bare["seconds"] > 0:
        m.add("TraceBareInstructions", num(bare["instructions"]))
        m.add("TraceBareRate", num(round(rate(bare))))
        same = next((r for p, r in runs if p == bare_program), None)
        if same and rate(same) > 0:
            m.add("TraceBareCheckedRate", num(round(rate(same))))
            m.add("TraceSlowdown", "%.2f" % (rate(bare) / rate(same)))
        else:
            m.add("TraceBareCheckedRate", "(not measured)")
            m.add("TraceSlowdown", "(not measured)")
    else:
        for k in ("TraceBareInstructions", "TraceBareRate", "TraceBareCheckedRate",
                  "TraceSlowdown"):
            m.add(k, "(not measured)")
    m.write()


if __name__ == "__main__":
    main()
