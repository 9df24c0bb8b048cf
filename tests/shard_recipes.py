#!/usr/bin/env python3
"""The recipes of corpus/shard.sh, each run here on a small manifest (six
of the cases of build/corpus/cases) in three shards: make -j2 with
corpus/shard.mk, GNU parallel -j2 (and with the local machine as its
--sshlogin), a Slurm array job's tasks (SLURM_ARRAY_TASK_ID 1 to 3, as
sbatch --array=1-3 sets it) and a Kubernetes Indexed Job's pods
(JOB_COMPLETION_INDEX 0 to 2). Each merged report must be the report of
one unsharded run over the whole manifest (its JSON the same but for the
time), and the merge must refuse a part made by another build of cfisem
or of one of its libraries, saying which.

    tests/shard_recipes.py BUILD/cfisem SOURCE_DIR
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CASES = ["rules", "signal", "openssl", "plt", "realign", "remember"]
SHARDS = 3
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def run(argv, env=None, cwd=None):
    full = dict(os.environ)
    # A make -j of its own: not the calling make's job server.
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        full.pop(name, None)
    full.update(env or {})
    return subprocess.run(argv, env=full, cwd=cwd, capture_output=True,
                          text=True)


def write_manifest(build, path):
    with open(path, "w") as out:
        out.write("# six cases, for tests/shard_recipes.py\n")
        for case in CASES:
            so = os.path.join(build, "corpus", "cases", case + ".so")
            with open(so, "rb") as f:
                data = f.read()
            out.write("%s\t%d\t%s\n" % (so, len(data),
                                        hashlib.sha256(data).hexdigest()))


def without_time(report):
    doc = dict(report)
    doc.pop("seconds")
    return doc


def load(path):
    with open(path) as f:
        return json.load(f)


def check_merged(name, out, single, merge=None):
    """The parts of `out` are the shards, and their merge is `single`."""
    parts = [os.path.join(out, "part-%d-of-%d.json" % (k, SHARDS))
             for k in range(1, SHARDS + 1)]
    present = [p for p in parts if os.path.exists(p)]
    check(len(present) == SHARDS,
          "%s: %d of %d parts written" % (name, len(present), SHARDS))
    if len(present) != SHARDS:
        return
    docs = [load(p) for p in parts]
    check(all(d["files"] for d in docs),
          "%s: a shard holds no file" % name)
    check(sum(len(d["files"]) for d in docs) == len(CASES),
          "%s: the shards hold %d files, not %d" %
          (name, sum(len(d["files"]) for d in docs), len(CASES)))
    check(sum(d["requests"] for d in docs) == single["requests"],
          "%s: the shards ask %d requests, one run %d" %
          (name, sum(d["requests"] for d in docs), single["requests"]))
    if merge is not None:
        check(merge.returncode == 0, "%s: merge exit status %d: %s" %
              (name, merge.returncode, merge.stderr.strip()))
        check("result: 0 new mismatches" in merge.stdout,
              "%s: the merged report says: %s" % (name, merge.stdout))
    report = os.path.join(out, "report.json")
    check(os.path.exists(report), "%s: no report.json" % name)
    if os.path.exists(report):
        merged = load(report)
        check(without_time(merged) == without_time(single),
              "%s: the merged report is not the one run's" % name)
        print("%s: %d parts, %d requests, the same report as one run" %
              (name, SHARDS, merged["requests"]))


def check_make(src, shard_env, manifest, tmp, single, diff_options):
    out = os.path.join(tmp, "make")
    made = run(["make", "-f", os.path.join(src, "corpus", "shard.mk"),
                "-j2", "MANIFEST=" + manifest, "OUT=" + out,
                "SHARDS=%d" % SHARDS,
                "DIFF_OPTIONS=" + " ".join(diff_options)], env=shard_env)
    check(made.returncode == 0, "make -j2: exit status %d: %s" %
          (made.returncode, made.stderr.strip()[-2000:]))
    check_merged("make -j2", out, single)
    txt = os.path.join(out, "report.txt")
    if os.path.exists(txt):
        with open(txt) as f:
            check("result: 0 new mismatches" in f.read(),
                  "make -j2: report.txt has no result line")


def check_parallel(shard, shard_env, manifest, tmp, single, diff_options,
                   name, parallel_options):
    out = os.path.join(tmp, name.replace(" ", "_").replace("/", "_"))
    ran = run([shard, "parallel", manifest, out, str(SHARDS)] +
              parallel_options + ["--"] + diff_options, env=shard_env)
    check(ran.returncode == 0, "%s: exit status %d: %s" %
          (name, ran.returncode, ran.stderr.strip()))
    merge = run([shard, "merge", out, str(SHARDS)], env=shard_env)
    check_merged(name, out, single, merge)


def check_slurm(shard, shard_env, manifest, tmp, single, diff_options):
    out = os.path.join(tmp, "slurm")
    for task in range(1, SHARDS + 1):
        # What sbatch --array=1-3 sets in each task's environment.
        env = dict(shard_env, SLURM_ARRAY_JOB_ID="4242",
                   SLURM_JOB_ID=str(4242 + task),
                   SLURM_ARRAY_TASK_ID=str(task),
                   SLURM_ARRAY_TASK_MIN="1",
                   SLURM_ARRAY_TASK_MAX=str(SHARDS),
                   SLURM_ARRAY_TASK_COUNT=str(SHARDS),
                   SLURM_ARRAY_TASK_STEP="1")
        ran = run([shard, "slurm", manifest, out, str(SHARDS)] +
                  diff_options, env=env)
        check(ran.returncode == 0, "slurm task %d: exit status %d: %s" %
              (task, ran.returncode, ran.stderr.strip()))
    merge = run([shard, "merge", out, str(SHARDS)], env=shard_env)
    check_merged("slurm array", out, single, merge)
    # --array=0-2 gives a task 0, which is no shard.
    zero = run([shard, "slurm", manifest, out, str(SHARDS)],
               env=dict(shard_env, SLURM_ARRAY_TASK_ID="0"))
    check(zero.returncode != 0 and "--array=1-3" in zero.stderr,
          "slurm task 0: exit status %d, stderr: %s" %
          (zero.returncode, zero.stderr.strip()))


def check_k8s(shard, shard_env, manifest, tmp, single, diff_options):
    out = os.path.join(tmp, "k8s")
    for index in range(SHARDS):
        ran = run([shard, "k8s", manifest, out, str(SHARDS)] + diff_options,
                  env=dict(shard_env, JOB_COMPLETION_INDEX=str(index)))
        check(ran.returncode == 0, "k8s index %d: exit status %d: %s" %
              (index, ran.returncode, ran.stderr.strip()))
        part = os.path.join(out, "part-%d-of-%d.json" % (index + 1, SHARDS))
        check(os.path.exists(part),
              "k8s index %d did not write shard %d" % (index, index + 1))
    merge = run([shard, "merge", out, str(SHARDS)], env=shard_env)
    check_merged("k8s indexed job", out, single, merge)
    past = run([shard, "k8s", manifest, out, str(SHARDS)],
               env=dict(shard_env, JOB_COMPLETION_INDEX=str(SHARDS)))
    check(past.returncode != 0 and "JOB_COMPLETION_INDEX" in past.stderr,
          "k8s index %d: exit status %d, stderr: %s" %
          (SHARDS, past.returncode, past.stderr.strip()))


def with_build(part, out, pattern, replacement):
    with open(part) as f:
        text = f.read()
    changed = re.sub(pattern, replacement, text, count=1)
    check(changed != text, "%s: no %s in its build" % (part, pattern))
    with open(out, "w") as f:
        f.write(changed)


def check_other_build(cfisem, tmp):
    out = os.path.join(tmp, "k8s")
    parts = [os.path.join(out, "part-%d-of-%d.json" % (k, SHARDS))
             for k in range(1, SHARDS + 1)]
    build = load(parts[0]).get("build") or ""
    check(build.startswith("cfisem "), "the part's build: %r" % build)
    names = [e.split(" ")[0] for e in build.split("; ")]
    library = next((n for n in names[1:] if n.startswith("libelf")), None)
    check(library is not None, "no libelf in the build: %r" % build)
    for name, where in [("cfisem", '"build": "'), (library or "libelf", "; ")]:
        other = os.path.join(tmp, "other-%s.json" % name)
        with_build(parts[2], other,
                   r'(%s%s) [0-9a-f]+' % (re.escape(where), re.escape(name)),
                   r'\1 0123456789abcdef')
        merged = run([cfisem, "report", "merge", parts[0], parts[1], other])
        line = merged.stderr.strip()
        check(merged.returncode == 2 and other in line and
              "another build" in line and name + " 0123456789abcdef" in line
              and len(line.splitlines()) == 1,
              "merge of a part of another %s build: exit status %d, "
              "stderr: %s" % (name, merged.returncode, line))
        print("another %s build refused: %s" % (name, line))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cfisem = os.path.abspath(sys.argv[1])
    src = os.path.abspath(sys.argv[2])
    build = os.path.dirname(cfisem)
    shard = os.path.join(src, "corpus", "shard.sh")
    if not shutil.which("parallel"):
        sys.exit("shard_recipes: no GNU parallel (scripts/install-deps)")
    tmp = tempfile.mkdtemp(prefix="shard_recipes.")
    manifest = os.path.join(tmp, "manifest.txt")
    write_manifest(build, manifest)
    diff_options = ["--cache", os.path.join(tmp, "cache"), "--jobs", "1"]
    single_json = os.path.join(tmp, "single.json")
    single = run([cfisem, "diff", "--manifest", manifest, "--json",
                  single_json] + diff_options)
    check(single.returncode == 0, "one run: exit status %d: %s" %
          (single.returncode, single.stderr.strip()))
    single_doc = load(single_json)
    check(single_doc["requests"] > 0 and
          len(single_doc["files"]) == len(CASES),
          "one run: %d requests over %d files" %
          (single_doc["requests"], len(single_doc["files"])))
    shard_env = {"CFISEM": cfisem}
    check_make(src, shard_env, manifest, tmp, single_doc, diff_options)
    check_parallel(shard, shard_env, manifest, tmp, single_doc,
                   diff_options, "parallel -j2", ["-j2"])
    check_parallel(shard, shard_env, manifest, tmp, single_doc,
                   diff_options, "parallel --sshlogin 2/:",
                   ["--sshlogin", "2/:"])
    check_slurm(shard, shard_env, manifest, tmp, single_doc, diff_options)
    check_k8s(shard, shard_env, manifest, tmp, single_doc, diff_options)
    check_other_build(cfisem, tmp)
    if failures:
        print("shard_recipes: %d failures; the files are in %s" %
              (len(failures), tmp))
        sys.exit(1)
    shutil.rmtree(tmp)
    print("shard_recipes: every recipe gave the one run's report")


if __name__ == "__main__":
    main()
