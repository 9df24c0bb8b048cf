#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""runtime.py OUT: bench/real_stacks (built by make): the run-time
library's cfisem_backtrace through eh_elfs against the interpreter
fallback, libunwind, libgcc, glibc's backtrace() and the frame-pointer
walk, on real stacks of the benchmark's own process. Writes the table of
ns per frame (the best of the rounds) with the ratio to the eh_elf's,
runtime.csv (every stack and method, median and best), the raw output
(runtime-real_stacks.txt) and the numbers for the text. Skipped, with a
line saying so in the table, when PAPER_BENCH=0. PAPER_RUNTIME_ROUNDS:
rounds (default 21); PAPER_REAL_STACKS: the program."""
import os
import re

from common import BUILD, Macros, num, run, tabular, tex_escape, write_csv, write_text

# The stacks of the table, by the benchmark's names, and their columns:
# labels (the depth, where there is one, is the name's).
COLUMNS = [("recursion 10, mixed shapes", "rec."),
           ("recursion 100, mixed shapes", "rec."),
           ("recursion 1000, mixed shapes", "rec."),
           ("qsort_r callback under recursion 10", "\\texttt{qsort\\_r}"),
           ("C++ chain 10 deep through libstdc++'s ostream", "C++"),
           ("recursion 1000, frame pointers", "fp")]


def label(name, prefix):
    if prefix.startswith("\\"):
        return prefix
    depth = re.search(r"\d+", name)
    return "%s~%s" % (prefix, num(int(depth.group(0)))) if depth else prefix
EH_ELF = "cfisem eh_elf (cfisem_backtrace)"


def parse(text):
    """{stack: [(method, median, median ratio, best, best ratio, frames)]}"""
    stacks, current = {}, None
    for line in text.splitlines():
        g = re.match(r"(\S.*) \((\d+) frames unwound by cfisem\)$", line)
        if g:
            current = stacks.setdefault(g.group(1), [])
            continue
        g = re.match(r"  (\S.*?)\s+([\d.]+)\s+([\d.]+)x\s+([\d.]+)\s+([\d.]+)x\s+(\d+)$", line)
        if g and current is not None:
            current.append((g.group(1), float(g.group(2)), float(g.group(3)),
                            float(g.group(4)), float(g.group(5)), int(g.group(6))))
    return stacks


def ns(x):
    return "%.1f" % x if x < 100 else "%.0f" % x


def main():
    m = Macros("runtime")
    if os.environ.get("PAPER_BENCH", "1") == "0":
        stacks, rounds = {}, 0
    else:
        program = os.environ.get("PAPER_REAL_STACKS",
                                 os.path.join(BUILD, "bench", "real_stacks"))
        rounds = int(os.environ.get("PAPER_RUNTIME_ROUNDS", "21"))
        text, _ = run([program, str(rounds)])
        write_text("runtime-real_stacks.txt", text)
        stacks = parse(text)
    write_csv("runtime.csv", ["stack", "method", "median_ns", "median_ratio",
                              "best_ns", "best_ratio", "frames"],
              [[s] + list(r) for s, rows in stacks.items() for r in rows])
    columns = [(name, label(name, prefix)) for name, prefix in COLUMNS if name in stacks]
    methods = []
    for name, _ in columns:
        for r in stacks[name]:
            if r[0] not in methods:
                methods.append(r[0])
    rows = []
    for method in methods:
        row = [tex_escape(method)]
        for name, _ in columns:
            r = next((r for r in stacks[name] if r[0] == method), None)
            row.append("---" if r is None else ns(r[3]) if method == EH_ELF
                       else "%s (%s$\\times$)" % (ns(r[3]), "%.2f" % r[4] if r[4] < 1
                                                else "%.1f" % r[4]))
        rows.append(row)
    write_text("runtime.tex", tabular(
        "l" + "r" * len(columns), ["method"] + [l for _, l in columns],
        rows or [["(not run: PAPER\\_BENCH=0)"]]))
    m.add("RuntimeRounds", str(rounds) if stacks else "(not run)")

    def best(stack, method):
        r = next((r for r in stacks.get(stack, []) if r[0] == method), None)
        return r

    deep = "recursion 1000, mixed shapes"
    keys = {"RuntimeEhElfNs": (EH_ELF, 3, "%.1f"),
            "RuntimeInterpRatio": ("cfisem interp (cursor)", 4, "%.1f"),
            "RuntimeUnwStepRatio": ("libunwind unw_step (CACHE_GLOBAL)", 4, "%.0f"),
            "RuntimeUnwStepNoneRatio": ("libunwind unw_step (CACHE_NONE)", 4, "%.0f"),
            "RuntimeUnwBacktraceRatio": ("libunwind unw_backtrace", 4, "%.2f"),
            "RuntimeLibgccRatio": ("libgcc _Unwind_Backtrace", 4, "%.1f"),
            "RuntimeGlibcRatio": ("glibc backtrace()", 4, "%.1f")}
    for key, (method, field, fmt) in keys.items():
        r = best(deep, method)
        m.add(key, fmt % r[field] if r else "(not measured)")
    m.add("RuntimeDeepDepth", num(int(re.search(r"\d+", deep).group(0))))
    r = best("recursion 1000, frame pointers", "frame-pointer walk")
    e = best("recursion 1000, frame pointers", EH_ELF)
    m.add("RuntimeFpNs", "%.1f" % r[3] if r else "(not measured)")
    m.add("RuntimeFpSlowdown", "%.0f" % (e[3] / r[3]) if r and e and r[3] > 0
          else "(not measured)")
    short = best("recursion 10, mixed shapes", "libunwind unw_step (CACHE_GLOBAL)")
    m.add("RuntimeUnwStepShortRatio", "%.0f" % short[4] if short else "(not measured)")
    m.write()


if __name__ == "__main__":
    main()
