#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""il2s.py — the synthesised table as assembly, so that it can be built
into a shared object with the same addresses and compiled into an eh_elf.

  cfisem synth FILE --emit-il > synth.il
  synth/il2s.py synth.il > synth.S          (prints the text address)
  cc -shared -nostdlib -Wl,--section-start=.text=ADDR -o synth.so synth.S
  cfisem compile synth.so -o synth.eh_elf.so
  cfisem validate synth.so synth.eh_elf.so

Each FDE of the IL becomes a .cfi_startproc/.cfi_endproc pair at its
address, its code bytes zeros (`.skip`), with the directives that change
the row at each range's start; the functions of `--no-fde-code` (headed
`fde no-fde ...`) too, `rip=undef` (the entry point) as
`.cfi_undefined rip`. A range with no CFA (not analysable)
becomes `.cfi_undefined rip` on the previous CFA: an unwinder stops there
instead of guessing. FDEs that overlap the previous one are left out.
The text address goes to stderr as "text=0x...".
"""
import re
import sys

RANGE = re.compile(r'^\[0x([0-9a-f]+),0x([0-9a-f]+)\)\s+(.*)$')
FDE = re.compile(r'^fde \S+ cie=\S+ \[0x([0-9a-f]+),0x([0-9a-f]+)\)')


def parse(lines):
    """[(begin, end, [(begin, end, cfa, {reg: off})])]"""
    fdes = []
    for line in lines:
        m = FDE.match(line)
        if m:
            fdes.append((int(m.group(1), 16), int(m.group(2), 16), []))
            continue
        m = RANGE.match(line)
        if not m or not fdes:
            continue
        cfa, regs = None, {}
        for rule in m.group(3).split():
            name, _, value = rule.partition('=')
            if name == 'cfa':
                cfa = None if value == 'undef' else value
            elif value == 'undef':
                regs[name] = value    # the entry point's rip
            else:
                off = re.match(r'^\[cfa([+-]\d+)\]$', value)
                if not off:
                    raise SystemExit('il2s: rule not written by synth: ' +
                                     rule)
                regs[name] = int(off.group(1))
        fdes[-1][2].append((int(m.group(1), 16), int(m.group(2), 16), cfa,
                            regs))
    return fdes


def directives(old_cfa, old_regs, cfa, regs):
    out = []
    if cfa is None:
        if old_cfa is not None:
            out.append('.cfi_undefined rip')
        return out, old_cfa, old_regs
    if old_cfa is None or old_cfa == 'undef':
        out.append('.cfi_restore rip')
    if cfa != old_cfa:
        reg, off = re.match(r'^([a-z0-9]+)([+-]\d+)$', cfa).groups()
        out.append('.cfi_def_cfa %%%s, %d' % (reg, int(off)))
    for reg in sorted(set(old_regs) - set(regs)):
        out.append('.cfi_restore %%%s' % reg)
    for reg, off in sorted(regs.items()):
        if old_regs.get(reg) == off:
            continue
        if off == 'undef':
            out.append('.cfi_undefined %s' % reg)
        else:
            out.append('.cfi_offset %%%s, %d' % (reg, off))
    return out, cfa, regs


def main():
    fdes = parse(open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin)
    fdes = [f for f in fdes if f[2]]
    fdes.sort(key=lambda f: f[0])
    base = fdes[0][0]
    print('\t.text')
    end = base
    for begin, fend, ranges in fdes:
        if begin < end:
            continue
        print('\t.org 0x%x' % (begin - base))
        print('\t.cfi_startproc')
        cfa, regs = 'rsp+8', {'rip': -8}
        for rbegin, rend, rcfa, rregs in ranges:
            lines, cfa2, regs2 = directives(cfa, regs, rcfa, rregs)
            if rcfa is None:
                cfa2 = 'undef'
            for d in lines:
                print('\t' + d)
            cfa, regs = cfa2, regs2
            print('\t.skip %d' % (rend - rbegin))
        print('\t.cfi_endproc')
        end = fend
    sys.stderr.write('text=0x%x\n' % base)


if __name__ == '__main__':
    main()
