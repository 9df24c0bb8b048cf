#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""explain.py OUT: the worked examples, `cfisem explain --format latex`:
a function of libc whose program uses remember_state and restore_state
(the smallest such FDE, at the address where restore_state takes effect),
and the PLT's CFA expression. PAPER_LIBC overrides the file."""
import os
import re

from common import Macros, cfisem, run, tex_escape, write_text

LIBC = os.environ.get("PAPER_LIBC", "/lib/x86_64-linux-gnu/libc.so.6")
REGS = "rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=0x5,r12=0xc"


def remember_pc(path):
    """The smallest FDE with remember and restore, per readelf -wf: the
    location where its first restore_state applies."""
    text, _ = run(["readelf", "-wf", path], check=False)  # warnings: exit 1
    best = None
    insns, loc, found, start = 0, None, None, None
    for line in text.splitlines() + ["00000000 END"]:
        g = re.match(r"[0-9a-f]{8} [0-9a-f]+ [0-9a-f]+ FDE .*pc=([0-9a-f]+)\.\.", line)
        if g or line.endswith(" END") or re.match(r"[0-9a-f]{8} .* CIE", line):
            if found is not None and (best is None or insns < best[0]):
                best = (insns, found, start)
            insns, found, start = 0, None, None
            loc = int(g.group(1), 16) if g else None
            start = loc
            continue
        if not line.strip().startswith("DW_CFA"):
            continue
        insns += 1
        a = re.search(r"to ([0-9a-f]+)$", line)
        if a:
            loc = int(a.group(1), 16)
        if "DW_CFA_restore_state" in line and found is None and loc is not None:
            found = loc
    return best


def plt_pc(path):
    text, _ = cfisem("il", path)
    for line in text.splitlines():
        g = re.match(r"\[0x([0-9a-f]+),0x([0-9a-f]+)\)  cfa=expr\(breg7 8; breg16 0", line)
        if g:
            return int(g.group(1), 16) + 11
    return None


def example(name, path, pc):
    text, _ = cfisem("explain", path, "--pc", hex(pc), "--regs", REGS, "--format", "latex",
                     check=False)
    write_text("explain-%s.tex" % name, text)


def main():
    m = Macros("explain")
    best = remember_pc(LIBC)
    m.add("ExplainFile", "\\texttt{%s}" % tex_escape(LIBC))
    if best:
        example("remember", LIBC, best[1])
        m.add("ExplainRememberPc", "\\texttt{0x%x}" % best[1])
        m.add("ExplainRememberFde", "\\texttt{0x%x}" % best[2])
        m.add("ExplainRememberInsns", str(best[0]))
    plt = plt_pc(LIBC)
    if plt:
        example("plt", LIBC, plt)
        m.add("ExplainPltPc", "\\texttt{0x%x}" % plt)
    m.write()


if __name__ == "__main__":
    main()
