#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""crosscheck.py — what a run saw against what `cfisem synth` claims.

  cfisem trace --engines il --json TRACE.json -- PROGRAM ARGS...
  synth/crosscheck.py CFISEM TRACE.json [ELF...]

For every mismatch group of the trace (an ELF, an FDE, a kind: cfa, ra,
reg), each PC where the run's truth and the CFI differed is looked up in
`CFISEM synth ELF`'s disagreeing ranges of the same FDE that speak for
it (cfa: cfa_height; ra: cfa_height or rip's save_slot; a register: its
own ranges, or cfa_height, the CFA its slot is counted from): a PC
inside one is *confirmed*; a PC outside every one is *under a limit*
when synth's analysis does not reach it (not_analysable there), else
*missed by synth*.
Groups of other kinds (unwinding failed: an expression rule synth does
not compare) are listed, not counted. Then every
disagreeing range synth reports in those FDEs is *seen* when the run
differed at one of its PCs, else *not seen* (not executed, or the wrong
rule gave the right value there). Groups of code no FDE covers are left
out (synth reports them as no_fde). With ELF arguments only those ELFs
are looked at.

Exit status 0 when no PC is missed by synth (and at least one group was
looked at), 1 otherwise."""
import json
import re
import subprocess
import sys

RANGE = re.compile(r'\[0x([0-9a-f]+),0x([0-9a-f]+)\)\s+(\w+)\s*(\S*)')
KINDS = ('cfa_height', 'save_slot', 'restored_early', 'restored_late')


def synth_ranges(cfisem, elf):
    """{fde_begin: [(begin, end, kind, reg)]} of the disagreements and
    {fde_begin: [(begin, end)]} of the limits."""
    out = subprocess.run([cfisem, 'synth', elf, '--limits'],
                         capture_output=True, text=True).stdout
    fdes, limits, fde = {}, {}, None
    for line in out.splitlines():
        m = re.match(r'fde \S+ \[0x([0-9a-f]+),', line)
        if m:
            fde = int(m.group(1), 16)
            continue
        m = RANGE.match(line)
        if not m or fde is None:
            continue
        begin, end = int(m.group(1), 16), int(m.group(2), 16)
        if m.group(3) in KINDS:
            fdes.setdefault(fde, []).append((begin, end, m.group(3),
                                             m.group(4)))
        elif m.group(3) == 'not_analysable':
            limits.setdefault(fde, []).append((begin, end))
    return fdes, limits


def speaks_for(r, group):
    kind, reg = r[2], r[3]
    if group['kind'] == 'cfa':
        return kind == 'cfa_height'
    if group['kind'] == 'ra':
        return kind == 'cfa_height' or reg == 'rip'
    return kind == 'cfa_height' or reg == group['reg']


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cfisem, trace = argv[0], json.load(open(argv[1]))
    only = set(argv[2:])
    groups = [g for g in trace['groups']
              if g['kind'] in ('cfa', 'ra', 'reg') and int(g['fde'][1], 16)
              and not g['context_restore'] and (not only or g['elf'] in only)]
    for g in trace['groups']:
        if g['kind'] in ('ra_undefined', 'error') and \
                (not only or g['elf'] in only):
            print('%s FDE [%s,%s) %s at %s..%s: not a kind synth compares'
                  % (g['elf'], g['fde'][0], g['fde'][1], g['kind'],
                     g['pc_first'], g['pc_last']))
    cache, missed, seen = {}, 0, set()
    for g in groups:
        elf, fde = g['elf'], int(g['fde'][0], 16)
        if elf not in cache:
            cache[elf] = synth_ranges(cfisem, elf)
        ranges = [r for r in cache[elf][0].get(fde, []) if speaks_for(r, g)]
        limits = cache[elf][1].get(fde, [])
        pcs = [int(p, 16) for p in g['pcs']]
        inside = [p for p in pcs if any(b <= p < e for b, e, _, _ in ranges)]
        limited = [p for p in pcs if p not in inside and
                   any(b <= p < e for b, e in limits)]
        lost = len(pcs) - len(inside) - len(limited)
        missed += lost
        for r in ranges:
            if any(r[0] <= p < r[1] for p in pcs):
                seen.add((elf, fde, r))
        print('%s FDE [%s,%s) %s %s: %d PCs, %d confirmed, %d under a limit, '
              '%d missed by synth%s'
              % (elf, g['fde'][0], g['fde'][1], g['kind'], g['reg'], len(pcs),
                 len(inside), len(limited), lost,
                 ' (more PCs than listed)' if g['pcs_truncated'] else ''))
    looked = {(g['elf'], int(g['fde'][0], 16)) for g in groups}
    for elf, fde in sorted(looked):
        for r in cache[elf][0].get(fde, []):
            print('  synth [0x%x,0x%x) %s %s: %s' % (
                r[0], r[1], r[2], r[3],
                'seen' if (elf, fde, r) in seen else 'not seen'))
    print('%d groups compared, %d PCs missed by synth' % (len(groups), missed))
    return 0 if groups and not missed else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
