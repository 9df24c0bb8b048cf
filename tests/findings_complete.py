#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every finding folder is complete enough to send.

Each folder NAME/ of diff/findings/ and synth/findings/ must hold:
  - a README.md with a "## Reproducer" and a "## Report" section;
  - a reproducer file (a .S, .c or .so beside the README);
  - every file of its own its Reproducer section names (`repro.c`,
    `NAME.S`, `NAME.c`, `NAME.so`);
  - a Report with a title, the versions, the steps, the expected and the
    actual behaviour, the standard's text and a suggested fix;
and the README.md beside the folders (the index) must name it.

The fuzzing findings (fuzz/findings/HARNESS/ID and the C files there)
are files, not folders: fuzz/findings/README.md must have, under its
"## Reports" section, a "### ID" subsection for each (ID: the file name
without .c), which either holds a Report with the same seven fields or
says "Same root cause as `diff/findings/NAME/`" of a folder that exists
(whose Report applies).

usage: tests/findings_complete.py SRC
Before the tree it checks a made-up tree of bad folders, each of which
must be refused (so the check itself can fail). Exit status 0 when every
folder is complete, 1 with one line per missing piece otherwise.
"""
import os
import re
import sys
import tempfile

FINDINGS = ('diff/findings', 'synth/findings')
REPRODUCER_EXT = ('.S', '.c', '.so')
REPORT_FIELDS = ('**Title:**', '**Versions:**', '**Steps:**',
                 '**Expected:**', '**Actual:**', '**Standard:**',
                 '**Suggested fix:**')


def section(text, title):
    """The body of the section "## title", or None when it is absent."""
    m = re.search(r'^## %s[ \t]*\n(.*?)(?=^## |\Z)' % re.escape(title),
                  text, re.S | re.M)
    return m.group(1) if m else None


def check_folder(path):
    """The problems of one finding folder, as lines."""
    name = os.path.basename(path)
    files = os.listdir(path)
    problems = []
    if not any(f.endswith(REPRODUCER_EXT) for f in files):
        problems.append('%s: no reproducer (.S, .c or .so)' % name)
    readme = os.path.join(path, 'README.md')
    if not os.path.isfile(readme):
        return problems + ['%s: no README.md' % name]
    with open(readme, encoding='utf-8') as f:
        text = f.read()
    repro = section(text, 'Reproducer')
    report = section(text, 'Report')
    if repro is None:
        problems.append('%s: README.md has no "## Reproducer"' % name)
    else:
        # The folder's own files: repro.c and NAME.S, NAME.c, NAME.so
        # (x.so is built, the libraries are the system's).
        own = r'(?<![\w./-])(repro\.c|%s\.(?:S|c|so))\b' % re.escape(name)
        for ref in sorted(set(re.findall(own, repro))):
            if ref not in files:
                problems.append('%s: the Reproducer names %s, which is '
                                'not in the folder' % (name, ref))
    if report is None:
        problems.append('%s: README.md has no "## Report"' % name)
    else:
        for field in REPORT_FIELDS:
            if field not in report:
                problems.append('%s: the Report has no %s' % (name, field))
    return problems


def check_tree(findings):
    """The problems of every folder under FINDINGS, and of its index."""
    problems = []
    index = os.path.join(findings, 'README.md')
    with open(index, encoding='utf-8') as f:
        listed = f.read()
    folders = sorted(d for d in os.listdir(findings)
                     if os.path.isdir(os.path.join(findings, d)))
    if not folders:
        problems.append('%s: no finding folder' % findings)
    for d in folders:
        problems += check_folder(os.path.join(findings, d))
        if '`%s/`' % d not in listed:
            problems.append('%s: not named in %s' % (d, index))
    return problems


GOOD_README = """# x

## Reproducer

```
cc -shared -o x.so {name}.S
```

## Report

**Title:** t **Versions:** v **Steps:** s **Expected:** e **Actual:** a
**Standard:** s **Suggested fix:** f
"""

# Each bad folder: its name, its files (name -> text), the problem the
# check must find (a substring of one of its lines).
BAD = [
    ('no-readme', {'no-readme.S': ''}, 'no README.md'),
    ('no-reproducer', {'README.md': GOOD_README.format(name='x')},
     'no reproducer'),
    ('no-report', {'no-report.S': '',
                   'README.md': GOOD_README.format(name='no-report')
                   .split('## Report')[0]}, 'no "## Report"'),
    ('no-repro-section', {'no-repro-section.S': '',
                          'README.md': '# x\n\n## Report\n'},
     'no "## Reproducer"'),
    ('missing-file', {'repro.c': '',
                      'README.md': GOOD_README.format(name='missing-file')},
     'names missing-file.S'),
    ('thin-report', {'thin-report.S': '',
                     'README.md': GOOD_README.format(name='thin-report')
                     .replace('**Suggested fix:** f', '')},
     'no **Suggested fix:**'),
]


def fuzz_ids(findings):
    """The fuzzing findings under fuzz/findings: one id per input (ID, beside
    its ID.txt report) or C program (NAME.c), in its harness folder."""
    ids = []
    for harness in sorted(os.listdir(findings)):
        folder = os.path.join(findings, harness)
        if not os.path.isdir(folder) or harness == 'differences':
            continue
        for f in sorted(os.listdir(folder)):
            if f.endswith('.txt'):
                continue
            ids.append(f[:-2] if f.endswith('.c') else f)
    return ids


def check_fuzz(findings, diff_findings):
    """The problems of fuzz/findings: every finding has its report."""
    index = os.path.join(findings, 'README.md')
    with open(index, encoding='utf-8') as f:
        text = f.read()
    reports = section(text, 'Reports')
    if reports is None:
        return ['%s: no "## Reports"' % index]
    problems = []
    for fid in fuzz_ids(findings):
        m = re.search(r'^### %s[ \t]*\n(.*?)(?=^### |\Z)' % re.escape(fid),
                      reports, re.S | re.M)
        if not m:
            problems.append('%s: no "### %s" under Reports' % (index, fid))
            continue
        body = m.group(1)
        same = re.search(r'Same root cause as `diff/findings/([\w.-]+)/`',
                         body)
        if same:
            readme = os.path.join(diff_findings, same.group(1), 'README.md')
            if not os.path.isfile(readme):
                problems.append('%s: %s names diff/findings/%s/, which does '
                                'not exist' % (index, fid, same.group(1)))
            continue
        for field in REPORT_FIELDS:
            if field not in body:
                problems.append('%s: the report of %s has no %s'
                                % (index, fid, field))
    return problems


FUZZ_REPORT = """### {id}

**Title:** t **Versions:** v **Steps:** s **Expected:** e **Actual:** a
**Standard:** s **Suggested fix:** f
"""


def fuzz_self_test():
    """Lines for each bad fuzz/findings tree the check does not refuse."""
    cases = [
        ('no report', {'h/a1': '', 'h/a1.txt': ''}, '', 'no "### a1"'),
        ('thin report', {'h/a2': ''},
         FUZZ_REPORT.format(id='a2').replace('**Actual:** a', ''),
         'has no **Actual:**'),
        ('missing folder', {'h/a3.c': ''},
         '### a3\n\nSame root cause as `diff/findings/nowhere/`.\n',
         'does not exist'),
    ]
    failures = []
    for name, files, reports, want in cases + [
            ('good', {'h/a4': '', 'h/a4.txt': '', 'h/a5.c': ''},
             FUZZ_REPORT.format(id='a4') + '### a5\n\nSame root cause as '
             '`diff/findings/there/`.\n', None)]:
        with tempfile.TemporaryDirectory(prefix='fuzz-findings-') as root:
            fuzz = os.path.join(root, 'fuzz')
            os.makedirs(os.path.join(fuzz, 'h'))
            os.makedirs(os.path.join(root, 'diff', 'there'))
            with open(os.path.join(root, 'diff', 'there', 'README.md'),
                      'w') as f:
                f.write('# there\n')
            for fname, content in files.items():
                with open(os.path.join(fuzz, fname), 'w') as f:
                    f.write(content)
            with open(os.path.join(fuzz, 'README.md'), 'w') as f:
                f.write('# x\n\n## Reports\n\n' + reports + '\n## Table\n')
            problems = check_fuzz(fuzz, os.path.join(root, 'diff'))
            if want and not any(want in p for p in problems):
                failures.append('self-test: fuzz %s not refused (%s)'
                                % (name, want))
            if not want and problems:
                failures.append('self-test: a complete fuzz tree refused: %s'
                                % problems)
    return failures


def self_test():
    """Lines for each bad folder the check does not refuse."""
    failures = []
    with tempfile.TemporaryDirectory(prefix='findings-') as root:
        names = [name for name, _, _ in BAD] + ['good', 'unlisted']
        with open(os.path.join(root, 'README.md'), 'w') as f:
            f.write(' '.join('`%s/`' % n for n in names[:-1]))
        for name, files, _ in BAD + [
                ('good', {'good.S': '',
                          'README.md': GOOD_README.format(name='good')},
                 None),
                ('unlisted', {'unlisted.S': '',
                              'README.md': GOOD_README.format(
                                  name='unlisted')}, 'not named')]:
            os.mkdir(os.path.join(root, name))
            for fname, text in files.items():
                with open(os.path.join(root, name, fname), 'w') as f:
                    f.write(text)
        problems = check_tree(root)
        for name, _, want in BAD + [('unlisted', None, 'not named')]:
            if not any(p.startswith(name + ':') and want in p
                       for p in problems):
                failures.append('self-test: %s not refused (%s)'
                                % (name, want))
        if any(p.startswith('good:') for p in problems):
            failures.append('self-test: a complete folder refused: %s'
                            % [p for p in problems if p.startswith('good:')])
    return failures


def main():
    if len(sys.argv) != 2:
        print('usage: tests/findings_complete.py SRC', file=sys.stderr)
        return 2
    problems = self_test() + fuzz_self_test()
    for tree in FINDINGS:
        problems += check_tree(os.path.join(sys.argv[1], tree))
    problems += check_fuzz(os.path.join(sys.argv[1], 'fuzz', 'findings'),
                           os.path.join(sys.argv[1], 'diff', 'findings'))
    for p in problems:
        print(p)
    if not problems:
        print('every finding folder has its reproducer, README and report;'
              ' every fuzzing finding its report')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
