# SPDX-License-Identifier: MIT
"""common.py: what the paper-data scripts share: running the tools, and
writing LaTeX macros, tables and CSV into paper/generated/.

Every number of the paper is written here by a script from a tool's
output; the .tex files only \\input them."""
import csv
import json
import os
import subprocess
import sys
import time

CFISEM = os.environ.get("CFISEM", "build/cfisem")
BUILD = os.environ.get("CFISEM_BUILD", "build")


def out_dir():
    return sys.argv[1] if len(sys.argv) > 1 else "paper/generated"


def run(args, **kw):
    """Runs a command; its stdout, and the wall time in seconds."""
    start = time.monotonic()
    done = subprocess.run(args, stdout=subprocess.PIPE, check=kw.pop("check", True),
                          text=True, **kw)
    return done.stdout, time.monotonic() - start


def cfisem(*args, check=True):
    return run([CFISEM, *args], check=check)


def tex_escape(s):
    out = []
    for c in str(s):
        if c in "&%$#_{}":
            out.append("\\" + c)
        elif c == "\\":
            out.append("\\textbackslash{}")
        elif c == "~":
            out.append("\\~{}")
        elif c == "^":
            out.append("\\^{}")
        else:
            out.append(c)
    return "".join(out)


def num(n):
    """1548498 -> 1{,}548{,}498 (a thousands separator LaTeX keeps)."""
    return "{:,}".format(n).replace(",", "{,}")


class Macros:
    """\\newcommand lines, one file per script: NAME-numbers.tex."""

    def __init__(self, name):
        self.name = name
        self.lines = []

    def add(self, key, value):
        self.lines.append("\\newcommand{\\%s}{%s}" % (key, value))

    def write(self):
        path = os.path.join(out_dir(), self.name + "-numbers.tex")
        with open(path, "w") as f:
            f.write("%% written by paper/data/%s.py\n" % self.name)
            f.write("\n".join(self.lines) + "\n")


def write_text(name, text):
    with open(os.path.join(out_dir(), name), "w") as f:
        f.write(text)


def write_csv(name, header, rows):
    with open(os.path.join(out_dir(), name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def tabular(spec, header, rows):
    """A booktabs tabular (a list of strings per row, already escaped)."""
    lines = ["\\begin{tabular}{%s}" % spec, "\\toprule",
             " & ".join(header) + " \\\\", "\\midrule"]
    for row in rows:
        lines.append(" & ".join(row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(lines)


def load_json(text):
    return json.loads(text)
