#!/usr/bin/env python3
"""triage.py — sorts the disagreements of `cfisem synth` reports into the
two placement patterns of synth/findings/README.md, by looking at the
instruction that ends right before each cfa_height range:

  llvm epilogue split   `add $N,%rsp` and the IL's CFA N bytes too high
  late push adjustment  a `push` and the IL's CFA 8 bytes too low

  synth/triage.py FILE REPORT [FILE REPORT ...]

REPORT is `cfisem synth FILE` output. Prints, per file, the FDEs by the
set of patterns their ranges have ("other KIND" for the rest)."""
import re, subprocess, sys, collections
def classify(path, report):
    cnt = collections.Counter(); fdes = {}
    fde = None
    for line in open(report):
        if line.startswith('fde '): fde = line.split()[1]; continue
        m = re.match(r'\[0x([0-9a-f]+),0x([0-9a-f]+)\)\s+(\w+)\s+(.*)', line)
        if not m or m.group(3) in ('no_fde', 'not_analysable'): continue
        kind = m.group(3); b = int(m.group(1), 16)
        cat = 'other ' + kind
        mm = re.search(r'il=rsp\+(\d+)\s+code=rsp\+(\d+)', m.group(4))
        if kind == 'cfa_height' and mm:
            diff = int(mm.group(1)) - int(mm.group(2))
            out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '--start-address=%d' % (b - 15), '--stop-address=%d' % b, path], capture_output=True, text=True).stdout
            last = [l for l in out.splitlines() if re.match(r'\s+[0-9a-f]+:', l)]
            ins = last[-1] if last else ''
            a = re.search(r'add\s+\$0x([0-9a-f]+),%rsp', ins)
            if a and int(a.group(1), 16) == diff: cat = 'llvm epilogue split'
            elif 'push' in ins and diff == -8: cat = 'late push adjustment'
        cnt[cat] += 1
        fdes.setdefault(fde, set()).add(cat)
    per = collections.Counter()
    for f, cats in fdes.items():
        per[' + '.join(sorted(cats))] += 1
    return cnt, per
if __name__ == '__main__':
  for path, rep in zip(sys.argv[1::2], sys.argv[2::2]):
    c, p = classify(path, rep)
    print(path, dict(p))
