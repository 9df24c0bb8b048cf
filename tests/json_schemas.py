#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""json_schemas: every JSON output of cfisem, written on real inputs (the
hand-written cases, the workloads, /bin/true, libc, libstdc++), is valid
against its schema in schemas/, and opens with "schema_version".

    /usr/bin/python3 tests/json_schemas.py BUILD/cfisem SRCDIR [WORKLOADS]

(WORKLOADS: the folder of the workload libraries, BUILD/workload by
default.)

Also checked: every schema is itself valid (draft 2020-12) and is used by
some output; the names a schema lists (statuses, engines, kinds, reasons)
are those of the code's tables. One line per failure; the last line is
'N passed, N failed'. Needs Debian's python3-jsonschema (hence
/usr/bin/python3, not a python3 of another installation); `make cases
workloads` builds the inputs.
"""
import glob
import json
import os
import re
import subprocess
import sys
import time
import tempfile

try:
    import jsonschema
except ImportError:
    print("json_schemas: FAIL: no jsonschema module in %s "
          "(apt-get install python3-jsonschema; scripts/install-deps)"
          % sys.executable)
    print("0 passed, 1 failed")
    sys.exit(1)

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
LIBSTDCXX = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
LIBC_AARCH64 = "/usr/aarch64-linux-gnu/lib/libc.so.6"  # the cross libc

# The names a schema lists, against the X-macro table they come from:
# (schema, path to the list in it, source file, macro, argument).
TABLES = [
    ("defs", ["$defs", "status", "enum"], "cfi/cfi.h", "CFI_STATUS_LIST", 1),
    ("defs", ["$defs", "engine", "enum"], "engines/engine.h", "ENGINES",
     0),
    ("diff", ["$defs", "hdr_problem", "enum"], "engines/eh_frame_hdr.h",
     "ENGINE_HDR_PROBLEMS", 0),
    ("trace", ["$defs", "group", "properties", "kind", "enum"],
     "trace/trace.h", "TRACE_KINDS", 0),
    ("synth", ["$defs", "kind", "enum"], "synth/synth.h", "SYNTH_KINDS", 1),
    # ra_sign_state and no_fde_call_weak_fn are listed only for AArch64
    # (synth_kind_applies): x86-64's reports stay as they were
    ("synth", ["properties", "kinds", "required"], "synth/synth.h",
     "SYNTH_KINDS", 1, {"ra_sign_state", "no_fde_call_weak_fn"}),
    ("synth", ["$defs", "reason", "enum"], "synth/synth.h", "SYNTH_REASONS", 1),
    ("stack", ["$defs", "stop", "properties", "reason", "enum"],
     "remote/remote.h", "REMOTE_STOP_LIST", 1),
]


class Checker:
    def __init__(self, cfisem, src):
        self.cfisem = os.path.abspath(cfisem)
        self.src = src
        self.build = os.path.dirname(os.path.abspath(cfisem))
        self.schema_dir = os.path.join(src, "schemas")
        self.schemas = {}
        self.used = set()
        self.passed = 0
        self.failed = 0
        self.tmp = tempfile.mkdtemp(prefix="cfisem-json-schemas.")

    def fail(self, what, why):
        self.failed += 1
        print("json_schemas: FAIL %s: %s" % (what, why))

    def ok(self):
        self.passed += 1

    # -------------------------------------------------------------- schemas

    def load_schemas(self):
        for path in sorted(glob.glob(os.path.join(self.schema_dir,
                                                  "*.schema.json"))):
            name = os.path.basename(path)[:-len(".schema.json")]
            with open(path) as f:
                schema = json.load(f)
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
                self.ok()
            except jsonschema.exceptions.SchemaError as e:
                self.fail("schemas/%s" % os.path.basename(path),
                          "not a draft 2020-12 schema: %s" % e.message)
            self.schemas[name] = (path, schema)
        self.store = {"file://" + path: schema
                      for path, schema in self.schemas.values()}

    def validator(self, name):
        path, schema = self.schemas[name]
        resolver = jsonschema.RefResolver("file://" + path, schema,
                                          store=self.store)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)

    def check_tables(self):
        with open(os.path.join(self.src, "cfi/json.h")) as f:
            m = re.search(r"#define CFI_JSON_SCHEMA_VERSION (\d+)", f.read())
        listed = self.schemas["defs"][1]["$defs"]["schema_version"]["const"]
        if not m or int(m.group(1)) != listed:
            self.fail("schemas/defs.schema.json $defs/schema_version",
                      "is %d; cfi/json.h CFI_JSON_SCHEMA_VERSION is %s"
                      % (listed, m.group(1) if m else "missing"))
        else:
            self.ok()
        for name, pointer, source, macro, arg, *but in TABLES:
            listed = self.schemas[name][1]
            for key in pointer:
                listed = listed[key]
            table = x_macro_names(os.path.join(self.src, source), macro, arg)
            table = [n for n in table if not but or n not in but[0]]
            what = "schemas/%s.schema.json %s" % (name, "/".join(pointer))
            if set(listed) != set(table):
                self.fail(what, "lists %s; %s %s has %s"
                          % (sorted(listed), source, macro, sorted(table)))
            else:
                self.ok()

    # -------------------------------------------------------------- outputs

    def check_text(self, schema, what, text):
        self.used.add(schema)
        try:
            pairs = json.loads(text, object_pairs_hook=lambda p: p)
            document = json.loads(text)
        except ValueError as e:
            self.fail(what, "not JSON: %s" % e)
            return None
        if not isinstance(pairs, list) or not pairs or \
                pairs[0][0] != "schema_version":
            self.fail(what, "the top-level object does not open with "
                      "\"schema_version\"")
            return document
        errors = list(self.validator(schema).iter_errors(document))
        if errors:
            e = jsonschema.exceptions.best_match(errors)
            at = "/".join(str(p) for p in e.absolute_path) or "(top)"
            self.fail(what, "not valid against schemas/%s.schema.json at %s:"
                      " %s%s" % (schema, at, e.message[:300],
                                 " (and %d more)" % (len(errors) - 1)
                                 if len(errors) > 1 else ""))
        else:
            self.ok()
        return document

    def run(self, args, codes=(0,)):
        """cfisem ARGS: its stdout, or None (a failure) when its exit code
        is not one of `codes`."""
        what = "cfisem " + " ".join(args)
        proc = subprocess.run([self.cfisem] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=self.tmp)
        self.last_code = proc.returncode
        if proc.returncode not in codes:
            self.fail(what, "exit %d (expected %s): %s" % (
                proc.returncode, "/".join(map(str, codes)),
                proc.stderr.decode(errors="replace").strip()[:300]))
            return None
        return proc.stdout.decode(errors="replace")

    def stdout(self, schema, args, codes=(0,)):
        text = self.run(args, codes)
        if text is None or (text == "" and self.last_code == 2):
            return None     # a file the engine cannot open: no JSON
        return self.check_text(schema, "cfisem " + " ".join(args), text)

    def file(self, schema, args, out, codes=(0,)):
        """cfisem ARGS, which writes its JSON to the file `out`."""
        if self.run(args, codes) is None:
            return None
        return self.check_path(schema, out, "cfisem " + " ".join(args))

    def check_path(self, schema, path, what):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            self.fail(what, "no JSON written: %s" % e)
            return None
        return self.check_text(schema, what, text)

    def path(self, name):
        return os.path.join(self.tmp, name)


def x_macro_names(path, macro, arg):
    """The `arg`-th argument of each X(...) of `#define MACRO(X)`."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"#define %s\(X\)(.*?)(?<!\\)\n" % macro, text, re.S)
    body = (m.group(1) if m else "").replace("\\\n", " ")
    return [re.split(r"\s*,\s*", x.strip())[arg]
            for x in re.findall(r"X\(([^\"]*?),\s*\"", body)]


def first_pcs(document, count):
    """Up to `count` PCs inside the rows of an il JSON document."""
    pcs = []
    for fde in (document or {}).get("fdes", []):
        for row in fde["rows"]:
            pcs.append(row["begin"])
            if len(pcs) == count:
                return pcs
    return pcs


def il_and_unwind(c, files):
    """il --format json of every file; unwind --json at rows of each,
    with every engine; errors (no FDE, an unknown register, a fault)."""
    for path in files:
        il = c.stdout("il", ["il", path, "--format", "json"])
        for pc in first_pcs(il, 2):
            c.stdout("il", ["il", path, "--pc", pc, "--format", "json"])
            for engine in ["il", "interp", "compiled", "libdwarf", "libdw",
                           "libunwind"]:
                # 2: an outside engine that cannot open the file (libunwind
                # without .eh_frame_hdr) says so on stderr, with no JSON.
                c.stdout("unwind", ["unwind", path, "--pc", pc, "--regs",
                                    "rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=5",
                                    "--engine", engine, "--json"],
                         codes=(0, 2, 3) if engine.startswith("lib")
                         else (0, 3))
    case = c.cases[0]
    c.stdout("unwind", ["unwind", case, "--pc", "0x1", "--regs",
                        "rsp=0x7ffe1000", "--json"], codes=(3,))
    pc = first_pcs(c.stdout("il", ["il", case, "--format", "json"]), 1)
    c.stdout("unwind", ["unwind", case, "--pc", pc[0], "--regs", "rbx=1",
                        "--json"], codes=(3,))
    c.stdout("unwind", ["unwind", case, "--pc", pc[0], "--regs",
                        "rsp=0x7ffe1000", "--fault", "0x7ffe0000-0x7ffe2000",
                        "--json"], codes=(3,))


def compiled(c):
    """unwind with v1 eh_elfs, validate with full and v1 eh_elfs (v1-direct
    on cases it cannot carry: wrong ranges, kinds, an ABI hint)."""
    for name in ["prologue", "plt", "signal", "high_regs", "rules"]:
        case = os.path.join(c.build, "corpus/cases/%s.so" % name)
        full, v1 = c.path(name + ".eh_elf.so"), c.path(name + ".v1.eh_elf.so")
        if c.run(["compile", case, "-o", full]) is None or \
                c.run(["compile", case, "--abi", "v1", "-o", v1]) is None:
            continue
        out = c.path("validate.json")
        c.file("validate", ["validate", case, full, "--json", out], out)
        c.file("validate", ["validate", case, v1, "--abi", "v1", "--json",
                            out], out)
        c.file("validate", ["validate", case, v1, "--abi", "v1-direct",
                            "--json", out], out, codes=(0, 1))
        pc = first_pcs(c.stdout("il", ["il", case, "--format", "json"]), 1)[0]
        for regs in ["rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=5", "rbx=5"]:
            c.stdout("unwind", ["unwind", case, "--pc", pc, "--regs", regs,
                                "--engine", "compiled", "--eh-elf", v1,
                                "--json"], codes=(0, 3))


def diffs(c, files):
    """diff --json, each file's --results, the shards merged."""
    out, results = c.path("diff.json"), c.path("results")
    c.file("diff", ["diff"] + files + ["--json", out, "--results", results],
           out)
    stored = sorted(glob.glob(os.path.join(results, "*.json")))
    if not stored:
        c.fail("cfisem diff --results", "no result written to %s" % results)
    for path in stored:
        c.check_path("diff", path, "cfisem diff --results: " +
                     os.path.basename(path))
    c.file("diff", ["diff", LIBC, "--engines", "il,libdwarf,libdw,libunwind",
                    "--keep", "3", "--json", out], out)
    c.file("diff", ["diff", c.cases[0], "--all-pcs", "--fault",
                    "0x7ffe0000-0x7ffe0100", "--json", out], out)
    manifest = c.path("manifest.txt")
    with open(manifest, "w") as f:
        f.write("".join(p + "\n" for p in c.cases))
    parts = []
    for k in (1, 2):
        part = c.path("part%d.json" % k)
        c.file("diff", ["diff", "--manifest", manifest, "--shard", "%d/2" % k,
                        "--json", part], part)
        parts.append(part)
    c.file("diff", ["report", "merge"] + parts + ["--json", out], out)


def explains(c):
    """explain --format json on cases, and its golden outputs."""
    prologue = os.path.join(c.build, "corpus/cases/prologue.so")
    for extra in [["--regs", "rsp=0x7ffe1000,rbp=0x7ffe1100"], [],
                  ["--caller", "--regs", "rsp=0x7ffe1000"]]:
        c.stdout("explain", ["explain", prologue, "--pc", "0x1009"] + extra +
                 ["--format", "json"], codes=(0, 3))
    c.stdout("explain", ["explain", prologue, "--pc", "0x1", "--regs",
                         "rsp=0x7ffe1000", "--format", "json"], codes=(3,))
    goldens = sorted(glob.glob(os.path.join(c.src, "corpus/explain/golden",
                                            "*.json")))
    if not goldens:
        c.fail("corpus/explain/golden", "no golden JSON")
    for path in goldens:
        c.check_path("explain", path, os.path.relpath(path, c.src))


def others(c, files):
    """stats, synth, trace, sites."""
    out = c.path("stats.json")
    c.file("stats", ["stats"] + files + ["--json", out], out)
    c.file("stats", ["stats"] + files + ["--by", "producer", "--json", out],
           out)
    c.stdout("stats", ["stats", LIBC, "--json", "-"])
    out = c.path("synth.json")
    for path in ["/bin/true"] + c.cases[:4] + [LIBC_AARCH64]:
        c.file("synth", ["synth", path, "--json", out], out, codes=(0, 1))
    c.file("synth", ["synth", "/bin/true", "--no-fde-code", "--json", out],
           out, codes=(0, 1))
    c.stdout("trace", ["trace", "--json", "-", "--quiet", "--cache",
                       c.path("cache"), "--", "/bin/true"], codes=(0, 1))
    for path in [LIBSTDCXX, "/bin/true"]:
        c.stdout("sites", ["sites", path, "--json"])
    stacks(c)


def stacks(c):
    """stack: a process of its own, by the default engine and by three
    (with its differences, when any)."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        time.sleep(0.2)
        pid = str(sleeper.pid)
        cache = c.path("cache")
        c.stdout("stack", ["stack", pid, "--json", "--cache", cache])
        c.stdout("stack", ["stack", pid, "--json", "--cache", cache,
                           "--engines", "compiled,interp,libunwind",
                           "--max-frames", "2"])
    finally:
        sleeper.kill()
        sleeper.wait()


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: %s BUILD/cfisem SRCDIR [WORKLOADS]" % argv[0],
              file=sys.stderr)
        return 64
    c = Checker(argv[1], argv[2])
    workload_dir = argv[3] if len(argv) == 4 else \
        os.path.join(c.build, "workload")
    c.load_schemas()
    c.check_tables()
    c.cases = sorted(glob.glob(os.path.join(c.build, "corpus/cases/*.so")))
    workloads = sorted(p for p in glob.glob(os.path.join(workload_dir, "*.so"))
                       if not p.endswith(".eh_elf.so"))
    if not c.cases or not workloads:
        c.fail("inputs", "no cases under %s or no workloads in %s (make "
               "cases workloads)" % (c.build, workload_dir))
    else:
        files = c.cases + workloads + ["/bin/true"]
        il_and_unwind(c, files + [LIBC])
        compiled(c)
        diffs(c, c.cases + ["/bin/true"])
        explains(c)
        others(c, files)
    for name in sorted(set(c.schemas) - c.used - {"defs"}):
        c.fail("schemas/%s.schema.json" % name, "no output was checked "
               "against it")
    subprocess.run(["rm", "-rf", c.tmp])
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
