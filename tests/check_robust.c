/* SPDX-License-Identifier: MIT */
/* check_robust.c — a short, deterministic robustness campaign.
 *
 * The robust tool ($CFISEM_ROBUST, robust/) mutates the hand-written
 * cases (shared objects and relocatable objects) and runs every cfisem
 * command on each mutant, plus odd files and usage errors, with a
 * timeout. The sample must end with no crash (signal or sanitizer
 * report: under the ASan pass, $CFISEM is the sanitized build), no hang,
 * no silent error and no undocumented exit status. The mutator itself is
 * checked to apply every kind of mutation and to change the file, and the
 * classifier to catch each failure class from a tool that fails on
 * purpose. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"
#include "../robust/robust.h"

enum { MAX_ARGS = 160, SAMPLE_RUNS = 300 };

struct summary {
    unsigned long runs, crashes, hangs, silent, bad;
    unsigned long disagreements, wrong_ranges, child_crashes;
};

static const char *robust_tool(void)
{
    const char *tool = getenv("CFISEM_ROBUST");
    return tool ? tool : "build/robust/robust";
}

/* Runs the robust tool with args; its stdout into *out (malloc'd). */
static int run_robust(const char *const *args, char **out)
{
    char command[65536];
    size_t n = (size_t)snprintf(command, sizeof command, "'%s'", robust_tool());
    for (size_t i = 0; args[i] && n < sizeof command; i++)
        n += (size_t)snprintf(command + n, sizeof command - n, " '%s'", args[i]);
    ck_assert_uint_lt(n, sizeof command);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool parse_summary(const char *out, struct summary *s)
{
    const char *line = strstr(out, "robust: ");
    for (; line; line = strstr(line + 1, "robust: "))
        if (sscanf(line,
                   "robust: %lu runs, %lu crashes, %lu hangs, %lu silent, "
                   "%lu bad exit codes, %lu own-engine disagreements, "
                   "%lu wrong ranges, %lu child crashes",
                   &s->runs, &s->crashes, &s->hangs, &s->silent, &s->bad,
                   &s->disagreements, &s->wrong_ranges,
                   &s->child_crashes) == 8)
            return true;
    return false;
}

/* The built cases: shared objects and relocatable objects. */
static size_t add_cases(const char **args, size_t n, const char *folder)
{
    char *dir = test_build_path(folder);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s missing (make cases)", dir);
    struct dirent *e;
    while ((e = readdir(d)) && n + 1 < MAX_ARGS) {
        size_t len = strlen(e->d_name);
        if (len < 3 || (strcmp(e->d_name + len - 3, ".so") &&
                        strcmp(e->d_name + len - 2, ".o")))
            continue;
        char *path = malloc(strlen(dir) + len + 2);
        sprintf(path, "%s/%s", dir, e->d_name);
        args[n++] = path;
    }
    closedir(d);
    free(dir);
    return n;
}

START_TEST(test_sample_has_no_failure)
{
    char *dir = test_temp_dir();
    const char *cfisem = getenv("CFISEM") ? getenv("CFISEM") : "build/cfisem";
    const char *args[MAX_ARGS] = {
        "--cfisem", cfisem, "--runs", "300", "--seed", "7", "--jobs", "2",
        "--timeout", "60", "--out", dir, "--quiet"};
    size_t n = 13;
    const size_t fixed = n;   /* the arguments above; the rest are malloc'd */
    n = add_cases(args, n, "corpus/cases");
    n = add_cases(args, n, "corpus/objects");
    args[n] = NULL;
    char *out;
    int status = run_robust(args, &out);
    struct summary s;
    ck_assert_msg(parse_summary(out, &s), "no summary line:\n%s", out);
    ck_assert_msg(s.runs >= SAMPLE_RUNS, "%lu runs", s.runs);
    ck_assert_msg(s.crashes == 0 && s.hangs == 0 && s.silent == 0 && s.bad == 0 &&
                      s.disagreements == 0 && s.wrong_ranges == 0 &&
                      s.child_crashes == 0,
                  "%s(failures kept under %s/failures)", out, dir);
    ck_assert_int_eq(status, 0);
    for (size_t i = fixed; i < n; i++)
        free((char *)args[i]);
    free(out);
    free(dir);
}
END_TEST

/* ---- made-up files of the newer readers ------------------------------ */

static void put(uint8_t *b, size_t at, unsigned n, uint64_t v)
{
    for (unsigned i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> (8 * i));
}

/* A file-mode perf.data as perf record --call-graph dwarf writes it: the
 * header, one attr (IP, TID, TIME, PERIOD, REGS_USER, STACK_USER), a
 * SAMPLE with 3 registers and a 64-byte stack copy, and a COMPRESSED
 * record (zstd magic and frame bytes). */
static void write_perf(const char *path)
{
    enum { ATTR = 104, ATTR_SIZE = 120 + 16, DATA = ATTR + ATTR_SIZE,
           SAMPLE = 8 + 4 * 8 + 8 + 3 * 8 + 8 + 64 + 8, ZSTD = 8 + 32 };
    uint8_t b[DATA + SAMPLE + ZSTD] = {0};
    memcpy(b, "PERFILE2", 8);
    put(b, 8, 8, 104);
    put(b, 16, 8, ATTR_SIZE);
    put(b, 24, 8, ATTR);
    put(b, 32, 8, ATTR_SIZE);
    put(b, 40, 8, DATA);
    put(b, 48, 8, SAMPLE + ZSTD);
    put(b, ATTR + 4, 4, 120);                       /* attr.size */
    put(b, ATTR + 24, 8, 1 | 2 | 4 | 256 | 4096 | 8192);
    put(b, ATTR + 80, 8, 0xc0 | 0x100);             /* three registers */
    put(b, ATTR + 88, 4, 64);
    size_t r = DATA;
    put(b, r, 4, 9);                                /* SAMPLE */
    put(b, r + 6, 2, SAMPLE);
    put(b, r + 8, 8, 0x401000);
    put(b, r + 40, 8, 2);                           /* abi 64 */
    put(b, r + 72, 8, 64);                          /* stack size */
    put(b, r + SAMPLE - 8, 8, 48);                  /* dyn_size */
    r += SAMPLE;
    put(b, r, 4, 81);                               /* COMPRESSED */
    put(b, r + 6, 2, ZSTD);
    put(b, r + 8, 4, 0xfd2fb528);
    ck_assert_int_eq(test_write_file(path, b, sizeof b), 0);
}

/* An x86-64 ELF core: one PT_NOTE with NT_PRSTATUS, NT_AUXV and NT_FILE
 * (one mapping of /x). */
static void write_core(const char *path)
{
    enum { NOTES = 64 + 56, PRSTATUS = 336, AUXV = 32, FILE_DESC = 43 };
    enum { SIZE = NOTES + 3 * 20 + PRSTATUS + AUXV + 44 };
    uint8_t b[SIZE] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    put(b, 16, 2, 4);                               /* ET_CORE */
    put(b, 18, 2, 62);
    put(b, 20, 4, 1);
    put(b, 32, 8, 64);                              /* e_phoff */
    put(b, 52, 2, 64);
    put(b, 54, 2, 56);
    put(b, 56, 2, 1);
    put(b, 64, 4, 4);                               /* PT_NOTE */
    put(b, 64 + 8, 8, NOTES);
    put(b, 64 + 32, 8, SIZE - NOTES);
    static const struct { uint32_t type, size; } notes[] = {
        {1, PRSTATUS}, {6, AUXV}, {0x46494c45, FILE_DESC}};
    size_t at = NOTES;
    for (unsigned i = 0; i < 3; i++) {
        put(b, at, 4, 5);
        put(b, at + 4, 4, notes[i].size);
        put(b, at + 8, 4, notes[i].type);
        memcpy(b + at + 12, "CORE", 5);
        at += 20;
        if (notes[i].type == 6)
            put(b, at, 8, 9);                       /* AT_ENTRY */
        if (notes[i].type == 0x46494c45) {
            put(b, at, 8, 1);
            put(b, at + 8, 8, 4096);
            put(b, at + 16, 8, 0x400000);
            put(b, at + 24, 8, 0x401000);
            memcpy(b + at + 40, "/x", 3);
        }
        at += (notes[i].size + 3) & ~3u;
    }
    ck_assert_uint_eq(at, SIZE);
    ck_assert_int_eq(test_write_file(path, b, sizeof b), 0);
}

/* The object at `from` with its .eh_frame flagged SHF_COMPRESSED. */
static void write_compressed(const char *from, const char *path)
{
    size_t len;
    uint8_t *bytes = (uint8_t *)test_read_file(from, &len);
    ck_assert_ptr_nonnull(bytes);
    struct rb_elf *e = malloc(sizeof *e);
    rb_elf_scan(e, bytes, len);
    ck_assert_int_ge(e->eh_frame, 0);
    bytes[e->sections[e->eh_frame].header + 8 + 1] |= 0x08;  /* 0x800 */
    ck_assert_int_eq(test_write_file(path, bytes, len), 0);
    free(e);
    free(bytes);
}

/* Every kind, on a shared object and on a relocatable object (the
 * perf_* kinds on a perf.data, core_note on a core, compressed_section
 * on an object with an SHF_COMPRESSED section): applied at least once in
 * 16 tries on one of them, and then the file differs. */
START_TEST(test_every_kind_changes_the_file)
{
    char *kinds_out;
    ck_assert_int_eq(run_robust((const char *[]){"--kinds", NULL}, &kinds_out), 0);
    ck_assert_uint_ge(test_count_lines(kinds_out), 23);
    char *so = test_build_path("corpus/cases/prologue.so");
    char *obj = test_build_path("corpus/objects/prologue.o");
    char *dir = test_temp_dir();
    char mutant[4200], perf[4200], core[4200], zobj[4200];
    snprintf(mutant, sizeof mutant, "%s/mutant", dir);
    snprintf(perf, sizeof perf, "%s/perf.data", dir);
    snprintf(core, sizeof core, "%s/x.core", dir);
    snprintf(zobj, sizeof zobj, "%s/compressed.o", dir);
    write_perf(perf);
    write_core(core);
    write_compressed(obj, zobj);
    for (char *kind = strtok(kinds_out, "\n"); kind; kind = strtok(NULL, "\n")) {
        unsigned changed = 0;
        const char *pair[2] = {so, obj};
        if (!strncmp(kind, "perf_", 5))
            pair[0] = pair[1] = perf;
        else if (!strcmp(kind, "core_note"))
            pair[0] = pair[1] = core;
        else if (!strcmp(kind, "compressed_section"))
            pair[0] = pair[1] = zobj;
        size_t so_len, obj_len;
        char *so_bytes = test_read_file(pair[0], &so_len);
        char *obj_bytes = test_read_file(pair[1], &obj_len);
        ck_assert_ptr_nonnull(so_bytes);
        ck_assert_ptr_nonnull(obj_bytes);
        for (unsigned i = 0; i < 32; i++) {
            const char *seed = pair[i % 2];
            char index[16], *out;
            snprintf(index, sizeof index, "%u", i);
            int status = run_robust((const char *[]){"--mutate", seed, "--kind",
                                                     kind, "--index", index,
                                                     "-o", mutant, NULL},
                                    &out);
            free(out);
            ck_assert_msg(status == 0 || status == 3, "%s: status %d", kind, status);
            size_t len;
            char *bytes = test_read_file(mutant, &len);
            ck_assert_ptr_nonnull(bytes);
            const char *orig = i % 2 ? obj_bytes : so_bytes;
            size_t orig_len = i % 2 ? obj_len : so_len;
            bool differs = len != orig_len || memcmp(bytes, orig, len) != 0;
            ck_assert_msg(status == 0 || !differs, "%s: not applied, but changed", kind);
            changed += status == 0 && differs;
            free(bytes);
        }
        ck_assert_msg(changed >= 8, "%s: %u of 32 mutants differ", kind, changed);
        free(so_bytes);
        free(obj_bytes);
    }
    free(kinds_out);
    free(so);
    free(obj);
    free(dir);
}
END_TEST

START_TEST(test_same_seed_same_mutant)
{
    char *seed = test_build_path("corpus/cases/plt.so");
    char *dir = test_temp_dir();
    char a[4200], b[4200], c[4200];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    char *out;
    for (unsigned i = 0; i < 3; i++) {
        const char *path = i == 0 ? a : i == 1 ? b : c;
        const char *index = i == 2 ? "10" : "9";
        ck_assert_int_eq(run_robust((const char *[]){"--mutate", seed, "--seed", "5",
                                                     "--index", index, "-o", path,
                                                     NULL}, &out), 0);
        free(out);
    }
    size_t la, lb, lc;
    char *ba = test_read_file(a, &la), *bb = test_read_file(b, &lb),
         *bc = test_read_file(c, &lc);
    ck_assert(la == lb && memcmp(ba, bb, la) == 0);
    ck_assert(la != lc || memcmp(ba, bc, la) != 0);
    free(ba); free(bb); free(bc); free(seed); free(dir);
}
END_TEST

/* A tool that fails in every way the classifier knows, by subcommand. */
static const char failing_tool[] =
    "#!/bin/sh\n"
    "case \"$1\" in\n"
    "il) kill -SEGV $$ ;;\n"
    "unwind) exec sleep 30 ;;\n"
    "diff) exit 2 ;;\n"
    "compile) echo 'cfisem: x: odd' >&2; exit 9 ;;\n"
    "*) echo 'cfisem: fine' >&2; exit 2 ;;\n"
    "esac\n";

START_TEST(test_classifier_catches_each_failure)
{
    char *dir = test_temp_dir();
    char tool[4200], out_dir[4200];
    snprintf(tool, sizeof tool, "%s/failing-cfisem", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    ck_assert_int_eq(test_write_file(tool, failing_tool, strlen(failing_tool)), 0);
    ck_assert_int_eq(chmod(tool, 0755), 0);
    char *seed = test_build_path("corpus/cases/prologue.so");
    char *out;
    int status = run_robust((const char *[]){"--cfisem", tool, "--runs", "40",
                                             "--timeout", "1", "--jobs", "2",
                                             "--no-odd", "--no-usage", "--quiet",
                                             "--compile-share", "1",
                                             "--out", out_dir, seed, NULL},
                            &out);
    struct summary s;
    ck_assert_msg(parse_summary(out, &s), "no summary line:\n%s", out);
    ck_assert_uint_ge(s.runs, 40);
    ck_assert_msg(s.crashes > 0 && s.hangs > 0 && s.silent > 0 && s.bad > 0,
                  "%s", out);
    ck_assert_int_eq(status, 1);
    const char *kept[] = {"crash/000-il/command", "hang/000-unwind/command",
                          "silent/000-diff/command", "bad-exit/000-compile/command"};
    for (size_t i = 0; i < 4; i++) {
        char path[8400];
        snprintf(path, sizeof path, "%s/failures/%s", out_dir, kept[i]);
        char *text = test_read_file(path, NULL);
        ck_assert_msg(text != NULL, "%s not kept", kept[i]);
        ck_assert_msg(strstr(text, "--mutate") != NULL, "%s: %s", kept[i], text);
        free(text);
    }
    free(out);
    free(seed);
    free(dir);
}
END_TEST

/* A tool whose first il run stalls past the timeout and whose every
 * other run ends at once: a loaded machine's stall, not a hang. */
static const char stalling_tool[] =
    "#!/bin/sh\n"
    "if [ \"$1\" = il ] && mkdir \"$0.stalled\" 2>/dev/null; then\n"
    "  exec sleep 30\n"
    "fi\n"
    "exit 0\n";

/* Regression (hang_of_a_loaded_machine): a run that timed out once was
 * a hang; it runs again, and only a second timeout is one. */
START_TEST(test_timeout_once_is_no_hang)
{
    char *dir = test_temp_dir();
    char tool[4200], out_dir[4200];
    snprintf(tool, sizeof tool, "%s/stalling-cfisem", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    ck_assert_int_eq(test_write_file(tool, stalling_tool,
                                     strlen(stalling_tool)), 0);
    ck_assert_int_eq(chmod(tool, 0755), 0);
    char *seed = test_build_path("corpus/cases/prologue.so");
    char *out;
    int status = run_robust((const char *[]){"--cfisem", tool, "--runs", "20",
                                             "--timeout", "1", "--jobs", "2",
                                             "--no-odd", "--no-usage",
                                             "--quiet", "--out", out_dir,
                                             seed, NULL},
                            &out);
    struct summary s;
    ck_assert_msg(parse_summary(out, &s), "no summary line:\n%s", out);
    ck_assert_uint_ge(s.runs, 20);
    ck_assert_msg(s.hangs == 0 && strstr(out, "1 timed out once and ran again"),
                  "%s", out);
    ck_assert_int_eq(status, 0);
    free(out);
    free(seed);
    free(dir);
}
END_TEST

/* ---- the classifier on the --json reports ---------------------------- */

/* A diff report: one engine's counts with `differ` differences. */
static enum rb_class classify_diff_report(const char *engine, unsigned differ,
                                          const char *errors)
{
    char report[2048];
    snprintf(report, sizeof report,
             "{\"seed\": 1, \"files\": [{\"path\": \"a \\\"b\\\".so\", "
             "\"status\": \"ok\", \"error\": null}],\n"
             "\"summary\": {\"il\": {\"compared\": 9, \"agree\": 9, "
             "\"differ\": 0}, \"%s\": {\"compared\": 9, \"agree\": 8, "
             "\"differ\": %u, \"errors\": 0}},\n\"errors\": [%s],\n"
             "\"mismatches\": [{\"engine\": \"%s\", \"items\": []}]}",
             engine, differ, errors, engine);
    return rb_classify_report("diff", RB_MISMATCH, report, strlen(report));
}

/* il, interp and compiled are cfisem's: their differences are defects. */
START_TEST(test_own_engine_differences_counted_as_mismatch_data)
{
    ck_assert_int_eq(classify_diff_report("interp", 1, ""), RB_DISAGREE);
    ck_assert_int_eq(classify_diff_report("compiled", 3, ""), RB_DISAGREE);
    /* an outside engine's differences stay data */
    ck_assert_int_eq(classify_diff_report("libdw", 1, ""), RB_MISMATCH);
    ck_assert_int_eq(classify_diff_report("libunwind", 0, ""), RB_MISMATCH);
    ck_assert_int_eq(
        classify_diff_report("libdwarf", 0,
                             "{\"engine\": \"compiled\", \"file\": \"x\", "
                             "\"message\": \"crashed (SIGSEGV)\", \"requests\": 4}"),
        RB_CHILD_CRASH);
    ck_assert_int_eq(
        classify_diff_report("libdw", 0,
                             "{\"engine\": \"libdw\", \"file\": \"x\", "
                             "\"message\": \"crashed (SIGSEGV)\", \"requests\": 4}"),
        RB_MISMATCH);
    /* a report cut short is no verdict */
    const char *cut = "{\"summary\": {\"il\": {\"differ\": 1}";
    ck_assert_int_eq(rb_classify_report("diff", RB_OK, cut, strlen(cut)), RB_OK);
}
END_TEST

/* validate's crashed calls and wrong ranges were read from its text
 * ("wrong range"), a crash of the eh_elf's child was no failure. */
START_TEST(test_validate_crashed_calls_counted_as_mismatch_data)
{
    const char *crashed = "{\"crashes\": 37, \"wrong_ranges_total\": 2, "
                          "\"unsupported_ranges\": 0, \"wrong_ranges\": []}";
    const char *wrong = "{\"crashes\": 0, \"wrong_ranges_total\": 2, "
                        "\"unsupported_ranges\": 1, \"wrong_ranges\": []}";
    const char *unsupported = "{\"crashes\": 0, \"wrong_ranges_total\": 2, "
                              "\"unsupported_ranges\": 2}";
    const char *pass = "{\"crashes\": 0, \"wrong_ranges_total\": 0}";
    ck_assert_int_eq(rb_classify_report("validate", RB_MISMATCH, crashed,
                                        strlen(crashed)), RB_CHILD_CRASH);
    ck_assert_int_eq(rb_classify_report("validate", RB_MISMATCH, wrong,
                                        strlen(wrong)), RB_WRONG_RANGE);
    ck_assert_int_eq(rb_classify_report("validate", RB_MISMATCH, unsupported,
                                        strlen(unsupported)), RB_MISMATCH);
    ck_assert_int_eq(rb_classify_report("validate", RB_OK, pass, strlen(pass)),
                     RB_OK);
}
END_TEST

/* Regression (rss_limit_counted_as_bad_exit): a run past --memory ends
 * with ASan's "hard rss limit exhausted" and exit 1, which was a bad
 * exit code; it is a crash (memory grew with what the input claims). */
START_TEST(test_memory_limit_is_a_crash)
{
    struct rb_command cmd = {{"cfisem", "perf", "-", NULL}, 3, "perf", 0x5,
                             false, NULL, "/dev/zero"};
    struct rb_outcome *o = calloc(1, sizeof *o);
    o->exit_code = 1;
    snprintf(o->err, sizeof o->err, "==25758==AddressSanitizer: hard rss "
             "limit exhausted (2048Mb vs 2052Mb)\n");
    o->err_len = strlen(o->err);
    ck_assert_int_eq(rb_classify(&cmd, o), RB_CRASH);
    /* stack's exit 1: cfisem's own engines gave different frames */
    struct rb_command stack = {{"cfisem", "stack", "--core", "c", NULL}, 4,
                               "stack", 0x7, false, NULL, NULL};
    o->err_len = 0;
    o->err[0] = 0;
    ck_assert_int_eq(rb_classify(&stack, o), RB_DISAGREE);
    o->exit_code = 2;
    snprintf(o->err, sizeof o->err, "cfisem: c: not an ELF core\n");
    o->err_len = strlen(o->err);
    ck_assert_int_eq(rb_classify(&stack, o), RB_CLEAN);
    free(o);
}
END_TEST

/* A cfisem whose diff reports an il-vs-interp disagreement on every file
 * (and whose unwind --engine compiled says its child crashed), or only a
 * libdw one: the campaign fails on the first, not on the second. Every
 * call is logged, to see the eh_elf paths taken. */
static const char report_tool[] =
    "#!/bin/sh\n"
    "echo \"$*\" >> \"$0.log\"\n"
    "json=; prev=; out=; engine=\n"
    "for a; do\n"
    "  [ \"$prev\" = --json ] && json=$a\n"
    "  [ \"$prev\" = -o ] && out=$a\n"
    "  [ \"$prev\" = --engine ] && engine=$a\n"
    "  prev=$a\n"
    "done\n"
    "case \"$1\" in\n"
    "diff) printf '{\"files\": [], \"summary\": {\"%s\": {\"differ\": 1}}, "
    "\"errors\": []}' \"$ENGINE\" > \"$json\"; echo 'result: 1 new mismatch'; exit 1 ;;\n"
    "compile) : > \"$out\"; exit 0 ;;\n"
    "validate) printf '{\"crashes\": 0, \"wrong_ranges_total\": 0}' > \"$json\"; exit 0 ;;\n"
    "unwind) [ \"$engine\" = compiled ] && [ \"$ENGINE\" = interp ] && "
    "{ echo 'cfisem: the eh_elf crashed (SIGSEGV)' >&2; exit 4; }; exit 0 ;;\n"
    "*) exit 0 ;;\n"
    "esac\n";

static int run_report_tool(const char *dir, const char *engine, char **out,
                           char **log)
{
    char tool[4200], out_dir[4200], log_path[4300];
    snprintf(tool, sizeof tool, "%s/cfisem-%s", dir, engine);
    snprintf(out_dir, sizeof out_dir, "%s/out-%s", dir, engine);
    snprintf(log_path, sizeof log_path, "%s.log", tool);
    ck_assert_int_eq(test_write_file(tool, report_tool, strlen(report_tool)), 0);
    ck_assert_int_eq(chmod(tool, 0755), 0);
    setenv("ENGINE", engine, 1);
    char *seed = test_build_path("corpus/cases/prologue.so");
    int status = run_robust((const char *[]){"--cfisem", tool, "--runs", "60",
                                             "--timeout", "5", "--jobs", "2",
                                             "--no-odd", "--no-usage", "--quiet",
                                             "--compile-share", "1",
                                             "--out", out_dir, seed, NULL},
                            out);
    *log = test_read_file(log_path, NULL);
    ck_assert_ptr_nonnull(*log);
    free(seed);
    return status;
}

START_TEST(test_own_engine_disagreement_fails_the_campaign)
{
    char *dir = test_temp_dir(), *out, *log;
    int status = run_report_tool(dir, "interp", &out, &log);
    struct summary s;
    ck_assert_msg(parse_summary(out, &s), "no summary line:\n%s", out);
    ck_assert_msg(s.disagreements > 0 && s.child_crashes > 0, "%s", out);
    ck_assert_int_eq(status, 1);
    char kept[4400];
    snprintf(kept, sizeof kept, "%s/out-interp/failures/disagree/000-diff/report.json",
             dir);
    char *report = test_read_file(kept, NULL);
    ck_assert_msg(report && strstr(report, "\"interp\""), "%s not kept", kept);
    /* the eh_elf the crashed child ran is kept, and the command names it */
    snprintf(kept, sizeof kept, "%s/out-interp/failures/child-crash/000-unwind",
             dir);
    char eh_elf[4500], command[4500];
    snprintf(eh_elf, sizeof eh_elf, "%s/eh_elf.so", kept);
    snprintf(command, sizeof command, "%s/command", kept);
    char *line = test_read_file(command, NULL);
    ck_assert_msg(access(eh_elf, F_OK) == 0 && line && strstr(line, eh_elf),
                  "%s: %s", kept, line ? line : "no command");
    free(line);
    /* every eh_elf path: both layouts, the v1 ABI, cfisem cache */
    ck_assert_msg(strstr(log, "--layout tree") && strstr(log, "--layout table") &&
                      strstr(log, "--abi v1") && strstr(log, "cache "),
                  "%s", log);
    free(report); free(out); free(log);
    out = log = NULL;
    status = run_report_tool(dir, "libdw", &out, &log);
    ck_assert_msg(parse_summary(out, &s), "no summary line:\n%s", out);
    ck_assert_msg(s.disagreements == 0 && s.child_crashes == 0 &&
                      s.crashes == 0 && s.bad == 0, "%s", out);
    ck_assert_msg(strstr(out, "mismatches 0") == NULL, "%s", out);
    ck_assert_int_eq(status, 0);
    free(out); free(log); free(dir);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("robust");
    TCase *tc = tcase_create("campaign");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_every_kind_changes_the_file);
    tcase_add_test(tc, test_same_seed_same_mutant);
    tcase_add_test(tc, test_classifier_catches_each_failure);
    tcase_add_test(tc, test_timeout_once_is_no_hang);
    tcase_add_test(tc, test_own_engine_disagreement_fails_the_campaign);
    tcase_add_test(tc, test_sample_has_no_failure);
    suite_add_tcase(suite, tc);
    TCase *reports = tcase_create("reports");
    tcase_add_test(reports, test_own_engine_differences_counted_as_mismatch_data);
    tcase_add_test(reports, test_validate_crashed_calls_counted_as_mismatch_data);
    tcase_add_test(reports, test_memory_limit_is_a_crash);
    suite_add_tcase(suite, reports);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
