#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""triage.py — sorts the disagreements of `cfisem synth` reports into the
kinds decided in synth/findings/README.md, from the code around each
range (objdump of the FDE, so that instructions are read from their
starts) and the IL heights the report prints:

  llvm epilogue split       `add $N,%rsp` right before, the IL's CFA N bytes
                            too high; or the target of the branch that
                            ends such a range, with the same difference
  late stack adjustment     `push` or `sub $N,%rsp` right before, the IL's
                            CFA 8 or N bytes too low, until the IL catches
                            up (LLVM's pushes of outgoing arguments)
  undescribed push (asm)    the same, but the range ends where the code
                            takes the bytes back (`pop`, `popf`, `add`,
                            `ret`): the CFI never describes the push
                            (inline asm: mesa, valgrind, libgcrypt, gdb);
                            with the slot of a register pushed there
  shrink-wrapped shared ret a slot rule at a `ret` that a branch from
                            before the pushes also reaches (LLVM)
  decided: NAME             an FDE decided one by one (hand-written asm:
                            glibc, OpenSSL, libgcrypt, GHC's runtime)
  other KIND                none of these

  synth/triage.py [--list] FILE REPORT [FILE REPORT ...]

REPORT is `cfisem synth FILE` output. Prints, per file, the FDEs by the
set of kinds their ranges have, then the totals; --list prints every
FDE with its kinds."""
import collections
import os
import re
import subprocess
import sys

RANGE = re.compile(r'\[0x([0-9a-f]+),0x([0-9a-f]+)\)\s+(\w+)\s+(.*)')
HEIGHTS = re.compile(r'il=rsp\+(\d+)\s+code=rsp\+(\d+)')

# FDEs decided one by one (file name, FDE start): synth/findings/README.md.
DECIDED = {
    ('libc.so.6', 0x4c6e0): 'glibc __mpn_addmul_1 pushes without CFI',
    ('libc.so.6', 0x4e140): 'glibc __mpn_addmul_1 pushes without CFI',
    ('node', 0x1d37a00): 'OpenSSL sha1_multi_block .cfi_push names rbx',
    ('node', 0x1d2e480): 'OpenSSL x25519 epilogue adjusts the CFA up',
    ('node', 0x1d2e840): 'OpenSSL x25519 epilogue adjusts the CFA up',
    ('node', 0x1cf45b0): 'OpenSSL frame register not declared',
    ('node', 0x1cfe440): 'OpenSSL frame register not declared',
    ('libcrypto.so.3', 0x286600): 'OpenSSL sha1_multi_block .cfi_push names rbx',
    ('libcrypto.so.3', 0x1dc060): 'OpenSSL x25519 epilogue adjusts the CFA up',
    ('libcrypto.so.3', 0x1dc420): 'OpenSSL x25519 epilogue adjusts the CFA up',
    ('libcrypto.so.3', 0xe33b0): 'OpenSSL frame register not declared',
    ('libcrypto.so.3', 0x131080): 'OpenSSL frame register not declared',
    ('libmvec.so.1', 0x7af0): 'glibc libmvec wrapper adjusts an rbp CFA',
    ('libmvec.so.1', 0x92c0): 'glibc libmvec wrapper adjusts an rbp CFA',
    ('libmvec.so.1', 0xe980): 'glibc libmvec wrapper adjusts an rbp CFA',
    ('libmvec.so.1', 0x13010): 'glibc libmvec wrapper adjusts an rbp CFA',
    ('libmvec.so.1', 0x1dfa0): 'glibc libmvec wrapper adjusts an rbp CFA',
    ('libmvec.so.1', 0x7b50): 'glibc libmvec sincos wrapper without CFI',
    ('libmvec.so.1', 0x9330): 'glibc libmvec sincos wrapper without CFI',
    ('libgcrypt.so.20.4.1', 0xd86f0): 'libgcrypt saves named from rbp after realignment',
    ('shellcheck', 0x1430720): "GHC's StgRun prologue without CFI",
}


def disassemble(path, begin, end):
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn',
                          '--start-address=%d' % begin,
                          '--stop-address=%d' % end, path],
                         capture_output=True, text=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r'\s+([0-9a-f]+):\s+(.*)', line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2).split('<')[0].strip()))
    return insns


def fdes_of(report):
    """{(begin, end): [(begin, end, kind, rest)]} of the disagreements."""
    out = collections.OrderedDict()
    fde = None
    for line in open(report):
        m = re.match(r'fde \S+ \[0x([0-9a-f]+),0x([0-9a-f]+)\)', line)
        if m:
            fde = (int(m.group(1), 16), int(m.group(2), 16))
            continue
        m = RANGE.match(line)
        if not m or m.group(3) in ('no_fde', 'not_analysable') or not fde:
            continue
        out.setdefault(fde, []).append((int(m.group(1), 16),
                                        int(m.group(2), 16), m.group(3),
                                        m.group(4)))
    return out


def branch_target(text):
    m = re.match(r'j\w+\s+([0-9a-f]+)', text)
    return int(m.group(1), 16) if m else None


class Fde:
    def __init__(self, path, begin, end):
        self.insns = disassemble(path, begin, end)
        self.index = {a: i for i, (a, _) in enumerate(self.insns)}

    def text(self, i):
        return self.insns[i][1] if 0 <= i < len(self.insns) else ''

    def before(self, addr):
        return self.text(self.index.get(addr, 0) - 1) if addr in self.index else ''

    def last_in(self, begin, end):
        inside = [t for a, t in self.insns if begin <= a < end]
        return inside[-1] if inside else ''

    def jumps_to(self, addr):
        return [a for a, t in self.insns if branch_target(t) == addr]


def height_kind(fde, r):
    """The kind of a cfa_height range from the instruction before it."""
    begin, end, _, rest = r
    m = HEIGHTS.search(rest)
    if not m:
        return None
    diff = int(m.group(1)) - int(m.group(2))
    prev = fde.before(begin)
    add = re.match(r'add\s+\$0x([0-9a-f]+),%rsp', prev)
    sub = re.match(r'sub\s+\$0x([0-9a-f]+),%rsp', prev)
    pushed = (prev.startswith('push') and diff == -8) or \
             (sub is not None and int(sub.group(1), 16) == -diff)
    if add and int(add.group(1), 16) == diff:
        return 'llvm epilogue split', diff
    if pushed:
        last = fde.last_in(begin, end)
        if re.match(r'(pop|add\s+\$0x[0-9a-f]+,%rsp|ret)', last):
            return 'undescribed push (asm)', diff
        return 'late stack adjustment', diff
    return None


def classify_fde(path, key, ranges):
    name = os.path.basename(path)
    if (name, key[0]) in DECIDED:
        return {'decided: ' + DECIDED[(name, key[0])]}
    fde = Fde(path, key[0], key[1])
    kinds, split = {}, []
    for r in ranges:
        k = height_kind(fde, r) if r[2] == 'cfa_height' else None
        if k:
            kinds[r] = k[0]
            if k[0] == 'llvm epilogue split':
                split.append((r, k[1]))
        elif r[2] == 'restored_late' and fde.last_in(r[0], r[1]) == 'ret' \
                and fde.jumps_to(r[0]):
            kinds[r] = 'shrink-wrapped shared ret'
    pushes = [r for r in kinds if kinds[r] == 'undescribed push (asm)']
    for r in ranges:
        if r not in kinds and any(p[0] <= r[0] and r[1] <= p[1]
                                  for p in pushes):
            kinds[r] = 'undescribed push (asm)' # the pushed register's slot
    for r in ranges:
        if r in kinds or r[2] != 'cfa_height':
            continue
        m = HEIGHTS.search(r[3])
        diff = m and int(m.group(1)) - int(m.group(2))
        for src in fde.jumps_to(r[0]):
            if any(s[0] <= src < s[1] and d == diff for s, d in split):
                kinds[r] = 'llvm epilogue split'
    return {kinds.get(r, 'other ' + r[2]) for r in ranges}


def main(argv):
    listing = argv[:1] == ['--list']
    argv = argv[1:] if listing else argv
    total = collections.Counter()
    for path, report in zip(argv[0::2], argv[1::2]):
        per = collections.Counter()
        for key, ranges in fdes_of(report).items():
            kinds = ' + '.join(sorted(classify_fde(path, key, ranges)))
            per[kinds] += 1
            if listing:
                print('%s [0x%x,0x%x) %s' % (path, key[0], key[1], kinds))
        total.update(per)
        if not listing:
            print(path, dict(per))
    print('total FDEs %d:' % sum(total.values()))
    for kinds, n in total.most_common():
        print('  %5d  %s' % (n, kinds))


if __name__ == '__main__':
    main(sys.argv[1:])
