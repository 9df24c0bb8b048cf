#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layering of the modules, checked two ways.

From the top down:

    cli, bench (programs: bench/perf_unwind reads perf.data with perf/)
    perf, trace, fuzz
    diff, validate, remote
    engines
    compile, runtime, synth, explain
    semantics, interp, sframe, gen
    cfi

A module uses only modules of the layers below its own: never one above,
never one beside it (for interp, semantics and compile this is DESIGN.md's
independence rule: a shared decoder would hide a decoding bug from the
comparison). The one exception, EXCEPTIONS below, is a header that holds
no code.

Checked (1) by the #include lines of every .c and .h of each module's
folder (a quoted include resolves beside the file first, then from the
top of the tree, as the compiler's -I. does), and (2) by `nm -u` on each
library of the build (BUILD/lib<module>.a): every symbol a library leaves
undefined and another library defines must be defined by a library the
module may use.

usage: tests/layering.py SRC BUILD
Exit status 0 when both hold, 1 with one line per violation otherwise.
"""
import os
import re
import subprocess
import sys

LAYERS = [
    ["cli", "bench"],
    ["perf", "trace", "fuzz"],
    ["diff", "validate", "remote"],
    ["engines"],
    ["compile", "runtime", "synth", "explain"],
    ["semantics", "interp", "sframe", "gen"],
    ["cfi"],
]
LAYER = {m: i for i, layer in enumerate(LAYERS) for m in layer}

# (module, the header it may include although the layering forbids it):
# runtime/ reads eh_elfs, whose format compile/eh_elf.h defines (types
# and constants only: nm finds no symbol of compile/ in libruntime.a).
EXCEPTIONS = {("runtime", "compile/eh_elf.h")}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def may_use(user, used):
    return user == used or LAYER[used] > LAYER[user]


def module_of(path):
    """The module a path of the tree (relative to SRC) belongs to."""
    top = path.split("/", 1)[0]
    return top if top in LAYER else None


def include_violations(src):
    found = []
    for module in LAYER:
        root = os.path.join(src, module)
        for folder, _, files in os.walk(root):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, src)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for target in INCLUDE.findall(text):
                    beside = os.path.normpath(os.path.join(folder, target))
                    if os.path.exists(beside):
                        resolved = os.path.relpath(beside, src)
                    else:
                        resolved = os.path.normpath(target)
                    used = module_of(resolved)
                    if used is None or may_use(module, used):
                        continue
                    if (module, resolved) in EXCEPTIONS:
                        continue
                    found.append("%s: includes %s: %s may not use %s"
                                 % (rel, resolved, module, used))
    return found


def nm(args, library):
    out = subprocess.run(["nm"] + args + [library], check=True,
                         capture_output=True, text=True).stdout
    return out.splitlines()


def library_violations(build):
    libraries = {m: os.path.join(build, "lib%s.a" % m) for m in LAYER
                 if os.path.exists(os.path.join(build, "lib%s.a" % m))}
    defined = {}
    for module, library in libraries.items():
        for line in nm(["--defined-only", "-g"], library):
            fields = line.split()
            if len(fields) == 3:
                defined.setdefault(fields[2], set()).add(module)
    found = []
    for module, library in sorted(libraries.items()):
        undefined = set()
        for line in nm(["-u"], library):
            fields = line.split()
            if len(fields) == 2 and fields[0] == "U":
                undefined.add(fields[1])
        for symbol in sorted(undefined):
            owners = defined.get(symbol, set()) - {module}
            if owners and not any(may_use(module, o) for o in owners):
                found.append("lib%s.a: uses %s of %s: %s may not use %s"
                             % (module, symbol, "/".join(sorted(owners)),
                                module, "/".join(sorted(owners))))
    return found, sorted(libraries)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: tests/layering.py SRC BUILD\n")
        return 2
    src, build = argv[1], argv[2]
    found = include_violations(src)
    lib_found, checked = library_violations(build)
    found += lib_found
    for line in found:
        print(line)
    # Every module folder with a .c is a library (cli/ and bench/ are
    # programs): a library missing from the build goes unchecked, which
    # is a failure too.
    expected = [m for m in LAYER if m not in ("cli", "bench")
                and os.path.isdir(os.path.join(src, m))
                and any(n.endswith(".c")
                        for n in os.listdir(os.path.join(src, m)))]
    missing = [m for m in expected if m not in checked]
    for m in missing:
        print("lib%s.a: not built, its symbols not checked" % m)
    print("layering: %d library(ies) checked, %d violation(s)"
          % (len(checked), len(found) + len(missing)))
    return 1 if found or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
