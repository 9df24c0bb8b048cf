#!/usr/bin/env python3
"""test_help_man_readme_completion_agree: `cfisem CMD --help`, the manual
pages, the bash completion and the README state the same options and the
same defaults for every command, and the defaults stated are the ones the
parser applies.

The options a command accepts are read from its --help (the synopsis and
every line that starts with an option), the manual page from
scripts/man.sh, the completion from scripts/completion.sh (its
_cfisem_options), the README from the headings `cfisem CMD ...` of the
command's sections.

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


def man_options(path):
    text = open(path).read().replace('\\-', '-').replace('\\e', '\\')
    synopsis = text.split('.SH SYNOPSIS\n', 1)[1].split('.SH', 1)[0]
    description = text.split('.SH DESCRIPTION\n', 1)[1].split('.SH', 1)[0]
    return help_options(synopsis.replace('.nf\n', '').replace('.fi\n', '')
                        + '\n\n' + description)


def completion_options(script, command):
    out = run('bash', '-c', 'source "$1"; _cfisem_options "$2"', '-',
              script, command)
    return set(out.split()) - {'--help'}


def readme_sections(readme):
    """command -> (options of its headings, text of its sections)."""
    sections = {}
    current = None
    for line in readme.splitlines():
        m = re.match(r'^#{2,4} ', line)
        if m:
            heads = re.findall(r'`cfisem ([a-z]+)([^`]*)`', line)
            if heads:
                current = heads[0][0]
                opts, body = sections.setdefault(current, (set(), []))
                for name, rest in heads:
                    opts.update(OPTION.findall(rest))
                continue
            if line.startswith('## '):
                current = None
        if current:
            sections[current][1].append(line)
    return {c: (o, '\n'.join(b)) for c, (o, b) in sections.items()}


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
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(src, 'scripts/man.sh'), tool, tmp],
                       check=True)
        script = os.path.join(tmp, 'cfisem.bash')
        with open(script, 'w') as out:
            subprocess.run([os.path.join(src, 'scripts/completion.sh'), tool],
                           stdout=out, check=True)
        readme = readme_sections(open(os.path.join(src, 'README.md')).read())
        for command in commands(tool):
            text = run(tool, command, '--help')
            truth = help_options(text)
            if not truth:
                failures.append(f'{command}: --help names no option')
            readme_opts, readme_text = readme.get(command, (set(), ''))
            others = {
                'man page': man_options(os.path.join(tmp,
                                                     f'cfisem-{command}.1')),
                'completion': completion_options(script, command),
                'README': readme_opts,
            }
            for where, opts in others.items():
                for o in sorted(truth - opts):
                    failures.append(f'{command}: {where} lacks {o}')
                for o in sorted(opts - truth - {'--help'}):
                    failures.append(f'{command}: {where} has {o}, '
                                    f'--help does not')
            check_defaults(command, text, readme_text, failures)
    check_engines(tool, failures)
    check_unwind_default(tool, src, failures)
    check_exit_status(tool, readme, failures)
    for f in failures:
        print(f'help/man/README/completion: {f}')
    print(f'{len(failures)} difference(s)')
    return 1 if failures else 0


def check_defaults(command, text, readme_text, failures):
    """Every `V` (default) of the README's section is a default that
    --help states, and --help's defaults of that form are the README's."""
    helps = choice_defaults(text)
    said = set(re.findall(r'`([a-z][a-z0-9-]*)` \((?:[^()]*, )?default[):]',
                          readme_text))
    for value in sorted(said - set(helps.values())):
        failures.append(f'{command}: README says `{value}` is a default, '
                        f'--help does not')
    for option, value in sorted(helps.items()):
        if said and value not in said:
            failures.append(f'{command}: README does not say {option} '
                            f'defaults to {value}')


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


def check_exit_status(tool, readme, failures):
    """Every exit status of cli.h is in `cfisem --help`."""
    text = run(tool, '--help')
    for status in ('0', '1', '2', '3', '4', '64', '70'):
        if not re.search(rf"\b{status}\s+[a-z(]", text):
            failures.append(f'cfisem --help does not list exit status '
                            f'{status}')
    explain = readme.get('explain', (set(), ''))[1]
    usage = re.search(r'(\d+) usage', explain)
    if usage and usage.group(1) != '64':
        failures.append(f'explain: README says usage error is '
                        f'{usage.group(1)}, not 64')


if __name__ == '__main__':
    sys.exit(main())
