#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench.py OUT: bench/eh_elf (built by make): eh_elf sizes against
.eh_frame, build times, and the time per frame of every engine on libc;
CSV for the figures, tables and numbers for the text. Skipped (with a
line saying so in the tables) when PAPER_BENCH=0."""
import os
import re

from common import BUILD, Macros, num, run, tabular, tex_escape, write_csv, write_text


def parse(text):
    sizes, builds, frames = [], [], []
    section = None
    for line in text.splitlines():
        if line.startswith("== "):
            section = line
            continue
        f = line.split()
        # file layout .eh_frame .text .rodata ratio all gen-s build-s
        if section and section.startswith("== sizes") and len(f) == 9 and f[5].endswith("x"):
            # file, layout, .eh_frame, .text, .rodata, (.text + .rodata) /
            # .eh_frame, build s: the table layout is mostly data
            sizes.append((f[0], f[1], int(f[2]), int(f[3]), int(f[4]),
                          float(f[6][:-1]), float(f[8])))
        elif section and section.startswith("== building") and "tree layout" in section:
            g = re.match(r"-j (\d+):\s+([\d.]+) s wall", line)
            if g:
                builds.append((int(g.group(1)), float(g.group(2))))
        elif section and section.startswith("== per frame"):
            g = re.match(r"(.+?)\s+([\d.]+)\s+([\d.]+)x\s+(\d+)$", line)
            if g:
                frames.append((g.group(1).strip(), float(g.group(2)), float(g.group(3))))
    return sizes, builds, frames


def main():
    m = Macros("bench")
    if os.environ.get("PAPER_BENCH", "1") == "0":
        sizes, builds, frames = [], [], []
    else:
        text, _ = run([os.path.join(BUILD, "bench", "eh_elf"), "100000", "5"])
        write_text("bench-eh_elf.txt", text)
        sizes, builds, frames = parse(text)
    write_csv("size-ratio.csv", ["file", "layout", "eh_frame", "text", "rodata",
                                 "ratio", "build_s"],
              [list(s) for s in sizes])
    write_csv("speed.csv", ["index", "engine", "ns", "ratio"],
              [[i] + list(f) for i, f in enumerate(frames)])
    # pgfplots reads no quoted field: the plot's copy is numbers only.
    write_csv("speed-plot.csv", ["index", "ns", "ratio"],
              [[i, f[1], f[2]] for i, f in enumerate(frames)])
    labels = ",".join("{%s}" % tex_escape(f[0]) for f in frames) or "{}"
    write_text("speed-figure.tex", "\n".join([
        "\\begin{tikzpicture}",
        "\\begin{axis}[width=0.8\\linewidth, height=4.8cm, xbar, bar width=6pt,",
        "  xmode=log, log origin=infty, xlabel={ns per frame (log scale)},",
        "  ytick={0,...,%d}, yticklabels={%s}," % (max(len(frames) - 1, 0), labels),
        "  y tick label style={font=\\scriptsize}, y dir=reverse,",
        "  grid=major, grid style={dashed,gray!30}]",
        "\\addplot[fill=blue!60, draw=none] table[x=ns, y=index, col sep=comma]"
        " {generated/speed-plot.csv};" if frames else
        "\\addplot[draw=none] coordinates {(1,0)}; % not measured",
        "\\end{axis}", "\\end{tikzpicture}", ""]))
    rows = [["\\texttt{%s}" % tex_escape(s[0]), s[1], num(s[2]), num(s[3]), num(s[4]),
             "%.2f" % s[5], "%.1f" % s[6]] for s in sizes] \
        or [["(not measured)", "", "", "", "", "", ""]]
    write_text("size.tex", tabular("llrrrrr", ["file", "layout", "\\texttt{.eh\\_frame}",
                                               "\\texttt{.text}", "\\texttt{.rodata}",
                                               "ratio", "build (s)"], rows))
    rows = [[tex_escape(f[0]), "%.1f" % f[1], "%.1f" % f[2]] for f in frames] \
        or [["(not measured)", "", ""]]
    write_text("speed.tex", tabular("lrr", ["engine", "ns per frame", "/ compiled"], rows))
    by_name = dict((f[0], f) for f in frames)
    compiled = next((f for f in frames if f[0].startswith("compiled")), None)
    libunwind = next((f for f in frames if f[0].startswith("libunwind")), None)
    if compiled and libunwind:
        m.add("BenchCompiledNs", "%.0f" % compiled[1])
        m.add("BenchLibunwindNs", "%.0f" % libunwind[1])
        m.add("BenchSpeedup", "%.0f" % (libunwind[1] / compiled[1]))
    else:
        for k in ("BenchCompiledNs", "BenchLibunwindNs", "BenchSpeedup"):
            m.add(k, "(not measured)")
    libc = next((s for s in sizes if s[0] == "libc.so.6" and s[1] == "tree"), None)
    m.add("BenchLibcRatio", "%.2f" % libc[5] if libc else "(not measured)")
    for jobs, seconds in builds:
        m.add("BenchLibcBuild" + "ABCDEFGH"[jobs - 1], "%.1f" % seconds)
    if not builds:
        m.add("BenchLibcBuildA", "(not measured)")
        m.add("BenchLibcBuildB", "(not measured)")
    del by_name
    m.write()


if __name__ == "__main__":
    main()
