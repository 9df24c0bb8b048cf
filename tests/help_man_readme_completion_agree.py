#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_help_man_readme_completion_agree: `cfisem CMD --help`, the manual
pages and the bash completion state the same options and the same defaults
for every command, the defaults stated are the ones the parser applies, and
the README and docs/ agree with them.

The options a command accepts are read from its --help (the synopsis and
every line that starts with an option), the manual page from
scripts/man.sh, the completion from scripts/completion.sh (its
_cfisem_options). Every command of `cfisem --help` has exactly one line in
the README's table of commands (naming `man cfisem-CMD`) and a manual
page, and the table names no other command. Every `cfisem CMD ...` that the
README or a page of docs/ writes names only options CMD's --help has. The
README's test command is the one CI runs (.ci/run).

    tests/help_man_readme_completion_agree.py CFISEM SRCDIR
Exit status 0 when all agree, 1 with one line per difference.
"""
import os
import re
import subprocess
import sys
import tempfile

OPTION = re.compile(r'(?:^|[\s\[|(`,])(--?[a-zA-Z][a-z0-9-]*)')


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True).stdout


def commands(tool):
    text = run(tool, '--help')
    block = text.split('Commands:\n', 1)[1].split('\n\n', 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def help_options(text):
    """The synopsis's options and those of lines that start with one."""
    synopsis = text.split('\n\n', 1)[0]
    found = set(OPTION.findall(synopsis))
    for line in text.splitlines():
        m = re.match(r'^  (--?[a-zA-Z][a-z0-9-]*)', line)
        if m:
            found.add(m.group(1))
    found.discard('-')
    return found


def page_sections(path):
    """section name -> its text, troff escapes and font changes undone;
    an option's tag (.TP) made a help line again (`  --opt  text`, its
    other lines indented), so that the page reads as the help does."""
    text = open(path).read()
    text = re.sub(r'\\f[BIR]', '', text)
    text = text.replace('\\-', '-').replace('\\e', '\\')
    text = re.sub(r"^\\&", '', text, flags=re.M)
    sections, name, lines = {}, None, []
    tagged = option = False
    for line in text.splitlines():
        if line.startswith('.SH '):
            if name:
                sections[name] = '\n'.join(lines) + '\n'
            name, lines, tagged, option = line[4:].strip('"'), [], False, False
        elif line == '.TP':
            tagged = True
        elif line in ('.nf', '.fi', '.PP', '.RS', '.RE'):
            if line == '.PP':
                lines.append('')
        elif line.startswith('.B '):
            lines.append('  ' + line[3:] if tagged else line[3:])
            tagged, option = False, True
        elif tagged:
            lines.append('  ' + line)
            tagged, option = False, line.startswith('-')
        elif option and name == 'OPTIONS':
            lines.append('                   ' + line)
        else:
            lines.append(line)
    if name:
        sections[name] = '\n'.join(lines) + '\n'
    return sections


def man_options(path):
    sections = page_sections(path)
    synopsis = sections.get('SYNOPSIS', '')
    return help_options(synopsis + '\n\n' + sections.get('DESCRIPTION', '')
                        + '\n' + sections.get('OPTIONS', ''))


def completion_options(script, command):
    out = run('bash', '-c', 'source "$1"; _cfisem_options "$2"', '-',
              script, command)
    return set(out.split()) - {'--help'}


def readme_table(readme):
    """The commands of the rows of the README's table of commands, in
    order (repeats kept): rows `| `cfisem CMD` | ... | `man cfisem-CMD` |`
    of the section `## Commands`."""
    section = readme.split('\n## Commands\n', 1)
    if len(section) < 2:
        return []
    rows = []
    for line in section[1].split('\n## ', 1)[0].splitlines():
        if not line.startswith('|'):
            continue
        m = re.match(r'^\|\s*`cfisem ([a-z]+)`\s*\|.*\|\s*`man cfisem-([a-z]+)`'
                     r'\s*\|$', line)
        if m:
            rows.append(m.group(1) if m.group(1) == m.group(2)
                        else f'{m.group(1)}/{m.group(2)}')
    return rows


def doc_invocations(text):
    """(command, options) of every code span or indented line of `text`
    that runs `cfisem CMD ...`."""
    found = []
    spans = re.findall(r'`([^`\n]*)`', text)
    spans += [l for l in text.splitlines() if l.startswith('    ')]
    for span in spans:
        for m in re.finditer(r'\bcfisem ([a-z]+)((?:(?!\bcfisem )[^|;&])*)',
                             span):
            found.append((m.group(1), set(OPTION.findall(m.group(2)))))
    return found


def help_blocks(text):
    """option -> its description (the lines up to the next option)."""
    blocks, current = {}, None
    for line in text.splitlines():
        m = re.match(r'^  (--?[a-zA-Z][a-z0-9-]*)', line)
        if m:
            current = m.group(1)
            blocks[current] = blocks.get(current, '') + ' ' + line
        elif current and line.startswith('     '):
            blocks[current] += ' ' + line.strip()
        else:
            current = None
    return blocks


def choice_defaults(text):
    """The values an option's help marks as its default: `V (default)` or
    `V (..., default)`."""
    found = {}
    for option, block in help_blocks(text).items():
        m = re.search(r'\b([a-z][a-z0-9-]*)\s+\((?:[^()]*, )?default\)', block)
        if m:
            found[option] = m.group(1)
    return found


def main():
    tool, src = sys.argv[1], sys.argv[2]
    failures = []
    readme = open(os.path.join(src, 'README.md')).read()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(src, 'scripts/man.sh'), tool, tmp],
                       check=True)
        script = os.path.join(tmp, 'cfisem.bash')
        with open(script, 'w') as out:
            subprocess.run([os.path.join(src, 'scripts/completion.sh'), tool],
                           stdout=out, check=True)
        names = commands(tool)
        if not names:
            failures.append('cfisem --help lists no command')
        helps = {}
        for command in names:
            text = run(tool, command, '--help')
            helps[command] = help_options(text)
            truth = helps[command]
            if not truth:
                failures.append(f'{command}: --help names no option')
            page = os.path.join(tmp, f'cfisem-{command}.1')
            if not os.path.exists(page):
                failures.append(f'{command}: no manual page cfisem-{command}.1')
                continue
            others = {
                'man page': man_options(page),
                'completion': completion_options(script, command),
            }
            for where, opts in others.items():
                for o in sorted(truth - opts):
                    failures.append(f'{command}: {where} lacks {o}')
                for o in sorted(opts - truth - {'--help'}):
                    failures.append(f'{command}: {where} has {o}, '
                                    f'--help does not')
            check_defaults(command, text, man_text(page), failures)
    check_table(names, readme_table(readme), failures)
    check_invocations(src, helps, failures)
    check_ci_command(src, readme, failures)
    check_engines(tool, failures)
    check_unwind_default(tool, src, failures)
    check_exit_status(tool, failures)
    for f in failures:
        print(f'help/man/README/completion: {f}')
    print(f'{len(failures)} difference(s)')
    return 1 if failures else 0


def man_text(path):
    """The DESCRIPTION and OPTIONS of a manual page as help text."""
    sections = page_sections(path)
    return sections.get('DESCRIPTION', '') + '\n' + sections.get('OPTIONS', '')


def check_table(names, rows, failures):
    """Each command has exactly one row in the README's table, and the
    table has no row for anything else."""
    for command in names:
        count = rows.count(command)
        if count != 1:
            failures.append(f'{command}: {count} lines in the README\'s '
                            f'table of commands, not 1')
    for row in sorted(set(rows) - set(names)):
        failures.append(f'README\'s table of commands has {row}, '
                        f'cfisem --help does not')


def check_invocations(src, helps, failures):
    """Every `cfisem CMD ...` of the README and docs/ names a command and
    only options of its --help."""
    paths = [os.path.join(src, 'README.md')]
    docs = os.path.join(src, 'docs')
    if os.path.isdir(docs):
        paths += sorted(os.path.join(docs, f) for f in os.listdir(docs)
                        if f.endswith('.md'))
    for path in paths:
        name = os.path.relpath(path, src)
        for command, opts in doc_invocations(open(path).read()):
            if command not in helps:
                continue
            for o in sorted(opts - helps[command] - {'--help', '--version'}):
                failures.append(f'{name}: cfisem {command} {o}: --help has '
                                f'no {o}')


def check_ci_command(src, readme, failures):
    """The README's test command (`make test` in its set-up block) is the
    command CI runs, a line of .ci/run."""
    setup = readme.split('## Set-up', 1)
    m = re.search(r'^    (make \S+)\s+#[^\n]*test', setup[-1], re.M)
    if len(setup) < 2 or not m:
        failures.append('README: no test command in its set-up section')
        return
    ci = open(os.path.join(src, '.ci/run')).read().splitlines()
    if m.group(1) not in (line.strip() for line in ci):
        failures.append(f'.ci/run does not run the README\'s test command '
                        f'`{m.group(1)}`')


def stated_defaults(text):
    """option -> its default, as its help says it: `V (default)` or
    `(default N)`, `(default: N)`, `(default N, ...)`."""
    found = choice_defaults(text)
    for option, block in help_blocks(text).items():
        m = re.search(r'\(default:? ([^,;()\s]+)', block)
        if m and option not in found:
            found[option] = m.group(1)
    return found


def check_defaults(command, text, man, failures):
    """The defaults --help states (`V (default)`, `(default N)`) are the
    manual page's, option by option."""
    helps = stated_defaults(text)
    mans = stated_defaults(man)
    for option, value in sorted(helps.items()):
        if mans.get(option) != value:
            failures.append(f'{command}: the manual page does not say '
                            f'{option} defaults to {value}')
    for option in sorted(set(mans) - set(helps)):
        failures.append(f'{command}: the manual page says {option} defaults '
                        f'to {mans[option]}, --help does not')


def check_engines(tool, failures):
    """Every engine `cfisem --help` lists is named by the help of the
    options that choose one (unwind --engine, diff --engines)."""
    line = re.search(r'^Engines \([^)]*\): (.*)$', run(tool, '--help'), re.M)
    engines = line.group(1).split() if line else []
    if not engines:
        failures.append('cfisem --help lists no engine')
    for command, option in (('unwind', '--engine'), ('diff', '--engines')):
        block = help_blocks(run(tool, command, '--help')).get(option, '')
        for engine in engines:
            if not re.search(rf'\b{engine}\b', block):
                failures.append(f'{command}: {option} does not name the '
                                f'engine {engine}')


def check_unwind_default(tool, src, failures):
    """The engine unwind runs without --engine is the one its help names."""
    default = choice_defaults(run(tool, 'unwind', '--help')).get('--engine')
    out = run(tool, 'unwind', tool, '--pc', '0', '--regs', 'rsp=0x1000',
              '--json')
    m = re.search(r'"engine": *"([a-z]+)"', out)
    ran = m.group(1) if m else None
    if ran != default:
        failures.append(f'unwind: --help says --engine defaults to {default},'
                        f' it runs {ran}')


def check_exit_status(tool, failures):
    """Every exit status of cli.h is in `cfisem --help`."""
    text = run(tool, '--help')
    for status in ('0', '1', '2', '3', '4', '64', '70'):
        if not re.search(rf"\b{status}\s+[a-z(]", text):
            failures.append(f'cfisem --help does not list exit status '
                            f'{status}')


if __name__ == '__main__':
    sys.exit(main())
