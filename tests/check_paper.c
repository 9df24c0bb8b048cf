/* SPDX-License-Identifier: MIT */
/* check_paper.c — the paper-data scripts (paper/data/run) on a small
 * corpus: the hand-written cases for stats and diff, libc for the worked
 * examples and synth, /bin/true for trace (no bare stepping), no
 * benchmarks. What they write must be what the tools print: the numbers
 * of stats-numbers.tex and opcodes.csv against `cfisem stats --json`, the
 * agreement table against `cfisem diff --json`, the worked examples
 * against `cfisem explain --format latex`, the trace table against the
 * JSON of `cfisem trace`, the synth table against `cfisem synth --json`,
 * the real-stack section saying it was not run and, from one round of
 * bench/real_stacks run apart, its numbers against what it printed;
 * numbers.tex against the files written; and the article builds from
 * them (latexmk), with no undefined reference or citation. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

static char *out_dir;   /* where the scripts wrote */
static char *cases;     /* the case files, space-separated */

static char *read_generated(const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "the scripts wrote no %s", name);
    return text;
}

/* The value of \newcommand{\NAME}{VALUE} in text, into buf. */
static void macro(const char *text, const char *name, char *buf, size_t size)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\\newcommand{\\%s}{", name);
    const char *p = strstr(text, pattern);
    ck_assert_msg(p != NULL, "no macro %s", name);
    p += strlen(pattern);
    size_t n = strcspn(p, "\n");
    ck_assert(n > 0 && p[n - 1] == '}');
    snprintf(buf, size, "%.*s", (int)(n - 1), p);
}

/* 1548498 as the scripts write it: 1{,}548{,}498. */
static void latex_number(uint64_t n, char *buf, size_t size)
{
    char digits[32], *o = buf;
    snprintf(digits, sizeof digits, "%" PRIu64, n);
    size_t len = strlen(digits);
    for (size_t i = 0; i < len && (size_t)(o - buf) + 5 < size; i++) {
        if (i && (len - i) % 3 == 0)
            o += sprintf(o, "{,}");
        *o++ = digits[i];
    }
    *o = 0;
}

static uint64_t json_number(const char *json, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    const char *p = strstr(json, pattern);
    ck_assert_msg(p != NULL, "no %s in the JSON", key);
    return strtoull(p + strlen(pattern), NULL, 10);
}

static char *paper_dir;  /* a copy of paper/ around out_dir */

static void setup(void)
{
    paper_dir = test_temp_dir();
    out_dir = malloc(strlen(paper_dir) + 16);
    sprintf(out_dir, "%s/generated", paper_dir);
    char *dir = test_build_path("corpus/cases");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t capacity = 1 << 16, len = 0;
    cases = calloc(1, capacity);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 3 && !strcmp(e->d_name + n - 3, ".so") &&
            len + strlen(dir) + n + 3 < capacity)
            len += (size_t)sprintf(cases + len, "%s%s/%s", len ? " " : "",
                                   dir, e->d_name);
    }
    closedir(d);
    char *src = getenv("CFISEM_SRC"), *build = test_build_path("");
    char *libc = test_system_lib("libc.so.6");
    char *command = malloc(3 * capacity);
    snprintf(command, 3 * capacity,
             "cp %s/paper/cfisem.tex %s/paper/refs.bib %s && "
             "cd %s && CFISEM=%s CFISEM_BUILD=%s CFISEM_SRC=%s "
             "PAPER_FILES='%s' PAPER_DIFF_FILES='%s/plt.so %s/signal.so' "
             "PAPER_BENCH=0 PAPER_JOBS=2 PAPER_TRACE_PROGRAMS=/bin/true "
             "PAPER_TRACE_BARE= PAPER_SYNTH_FILES=%s "
             "paper/data/run %s 2>/dev/null",
             src, src, paper_dir, src, getenv("CFISEM"), build, src, cases, dir,
             dir, libc, out_dir);
    ck_assert_int_eq(system(command), 0);
    free(command);
    free(libc);
    free(build);
    free(dir);
}

static void teardown(void)
{
    free(paper_dir);
    free(out_dir);
    free(cases);
}

/* stats-numbers.tex and opcodes.csv against cfisem stats --json. */
START_TEST(test_stats_numbers)
{
    const char *args[130] = {"stats"};
    size_t n = 1;
    char *copy = strdup(cases);
    for (char *p = strtok(copy, " "); p && n < 126; p = strtok(NULL, " "))
        args[n++] = p;
    args[n++] = "--json";
    args[n++] = "-";
    args[n] = NULL;
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    char *numbers = read_generated("stats-numbers.tex");
    char want[64], got[64];
    latex_number(json_number(run.out, "rows"), want, sizeof want);
    macro(numbers, "StatsRows", got, sizeof got);
    ck_assert_str_eq(got, want);
    latex_number(json_number(run.out, "nop_only"), want, sizeof want);
    macro(numbers, "StatsNopOnly", got, sizeof got);
    ck_assert_str_eq(got, want);
    const char *fdes = strstr(run.out, "\"fdes\": {");
    latex_number(json_number(fdes, ".eh_frame") + json_number(fdes, ".debug_frame"),
                 want, sizeof want);
    macro(numbers, "StatsFDEs", got, sizeof got);
    ck_assert_str_eq(got, want);
    char *opcodes = read_generated("opcodes.csv");
    const char *json_ops = strstr(run.out, "\"opcodes\": {");
    ck_assert_ptr_nonnull(json_ops);
    for (const char *line = strchr(opcodes, '\n') + 1; *line;
         line = strchr(line, '\n') + 1) {
        char name[64];
        unsigned long long count;
        ck_assert_int_eq(sscanf(line, "%63[^,],%llu", name, &count), 2);
        ck_assert_uint_eq(json_number(json_ops, name), count);
    }
    free(opcodes);
    free(numbers);
    free(copy);
    test_run_free(&run);
}
END_TEST

/* diff-agreement.tex's rows against the JSON the run wrote. */
START_TEST(test_diff_table)
{
    char *json = read_generated("diff.json");
    char *table = read_generated("diff-agreement.tex");
    char want[64], row[160];
    latex_number(json_number(strstr(json, "\"il\": {"), "agree"), want,
                 sizeof want);
    snprintf(row, sizeof row, "\\texttt{il} & %s & %s & 0 &", want, want);
    ck_assert_msg(strstr(table, row) != NULL, "no row %s in\n%s", row, table);
    ck_assert_ptr_nonnull(strstr(table, "\\texttt{libunwind} & "));
    char *numbers = read_generated("diff-numbers.tex");
    char got[64];
    macro(numbers, "DiffMismatches", got, sizeof got);
    latex_number(json_number(json, "mismatches_total"), want, sizeof want);
    ck_assert_str_eq(got, want);
    free(numbers);
    free(table);
    free(json);
}
END_TEST

/* The worked examples are explain's own LaTeX, at the address chosen. */
START_TEST(test_worked_examples)
{
    char *numbers = read_generated("explain-numbers.tex");
    char *libc = test_system_lib("libc.so.6");
    const char *names[2] = {"ExplainRememberPc", "ExplainPltPc"};
    const char *files[2] = {"explain-remember.tex", "explain-plt.tex"};
    for (int i = 0; i < 2; i++) {
        char value[64], pc[32];
        macro(numbers, names[i], value, sizeof value);
        ck_assert_int_eq(sscanf(value, "\\texttt{%31[0-9a-fx]}", pc), 1);
        struct test_run run;
        test_run_cfisem((const char *[]){"explain", libc, "--pc", pc, "--regs",
                                         "rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=0x5,"
                                         "r12=0xc", "--format", "latex", NULL},
                        &run);
        char *written = read_generated(files[i]);
        ck_assert_str_eq(written, run.out);
        ck_assert_ptr_nonnull(strstr(written, "\\begin{longtable}"));
        free(written);
        test_run_free(&run);
    }
    char *remember = read_generated("explain-remember.tex");
    ck_assert_ptr_nonnull(strstr(remember, "rule\\_restore\\_state"));
    free(remember);
    free(libc);
    free(numbers);
}
END_TEST

/* The trace table's row and numbers are what `cfisem trace --json` said
 * (trace.json holds the report the script read); /bin/true has no
 * mismatch in any engine. */
START_TEST(test_trace_table)
{
    char *json = read_generated("trace.json");
    char *table = read_generated("trace.tex");
    char *numbers = read_generated("trace-numbers.tex");
    const char *report = strstr(json, "\"report\": {");
    ck_assert_ptr_nonnull(report);
    uint64_t insns = json_number(report, "instructions");
    uint64_t frames = json_number(report, "frames_checked");
    ck_assert_uint_gt(insns, 1000);
    ck_assert_uint_gt(frames, insns / 2);
    const char *engines[3] = {"\"il\": {", "\"interp\": {", "\"compiled\": {"};
    for (int i = 0; i < 3; i++) {
        const char *e = strstr(report, engines[i]);
        ck_assert_msg(e != NULL, "no engine %s in trace.json", engines[i]);
        ck_assert_uint_eq(json_number(e, "mismatch"), 0);
        ck_assert_uint_eq(json_number(e, "agree"), frames);
    }
    char want_insns[64], want_frames[64], row[400], got[64];
    latex_number(insns, want_insns, sizeof want_insns);
    latex_number(frames, want_frames, sizeof want_frames);
    snprintf(row, sizeof row, "\\texttt{/bin/true} & %s & %s & 0 & 0 & 0 & ",
             want_insns, want_frames);
    ck_assert_msg(strstr(table, row) != NULL, "no row %s in\n%s", row, table);
    macro(numbers, "TraceFirstInstructions", got, sizeof got);
    ck_assert_str_eq(got, want_insns);
    macro(numbers, "TraceFrames", got, sizeof got);
    ck_assert_str_eq(got, want_frames);
    macro(numbers, "TraceBareRate", got, sizeof got);
    ck_assert_str_eq(got, "(not measured)");
    free(numbers);
    free(table);
    free(json);
}
END_TEST

/* synth's table and numbers against `cfisem synth LIBC --json`. */
START_TEST(test_synth_table)
{
    char *libc = test_system_lib("libc.so.6");
    char path[4200];
    snprintf(path, sizeof path, "%s/synth-check.json", paper_dir);
    struct test_run run;
    test_run_cfisem((const char *[]){"synth", libc, "--json", path, NULL}, &run);
    ck_assert_int_le(run.exit_code, 1);
    char *json = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(json);
    const char *totals = strstr(json, "\"fdes\": ");
    ck_assert_ptr_nonnull(totals);
    char *numbers = read_generated("synth-numbers.tex");
    char *table = read_generated("synth.tex");
    char want[64], got[64], full[64], row[400];
    latex_number(json_number(totals, "fdes"), want, sizeof want);
    macro(numbers, "SynthFDEs", got, sizeof got);
    ck_assert_str_eq(got, want);
    macro(numbers, "SynthFirstFDEs", got, sizeof got);
    ck_assert_str_eq(got, want);
    latex_number(json_number(totals, "fully_analysed"), full, sizeof full);
    macro(numbers, "SynthFullyAnalysed", got, sizeof got);
    ck_assert_str_eq(got, full);
    char insns[64];
    latex_number(json_number(totals, "instructions"), insns, sizeof insns);
    snprintf(row, sizeof row, "\\texttt{libc.so.6} & %s & %s & %s (", want,
             insns, full);
    ck_assert_msg(strstr(table, row) != NULL, "no row %s in\n%s", row, table);
    latex_number(json_number(totals, "fdes_with_disagreement"), want, sizeof want);
    macro(numbers, "SynthDisagreeing", got, sizeof got);
    ck_assert_str_eq(got, want);
    /* The limits table has a row for the reason most FDEs give. */
    char *limits = read_generated("synth-limits.tex");
    macro(numbers, "SynthTopLimit", got, sizeof got);
    snprintf(row, sizeof row, "%s & ", got);
    ck_assert_msg(strstr(limits, row) != NULL, "no row %s in\n%s", row, limits);
    free(limits);
    free(table);
    free(numbers);
    free(json);
    free(libc);
    test_run_free(&run);
}
END_TEST

/* PAPER_BENCH=0: the real-stack benchmark is not run, and says so. */
START_TEST(test_runtime_not_run)
{
    char *numbers = read_generated("runtime-numbers.tex");
    char *table = read_generated("runtime.tex");
    char got[64];
    macro(numbers, "RuntimeRounds", got, sizeof got);
    ck_assert_str_eq(got, "(not run)");
    macro(numbers, "RuntimeEhElfNs", got, sizeof got);
    ck_assert_str_eq(got, "(not measured)");
    ck_assert_ptr_nonnull(strstr(table, "(not run: PAPER\\_BENCH=0)"));
    free(table);
    free(numbers);
}
END_TEST

/* The benchmark run (one round, into a directory of its own): the
 * eh_elf's ns per frame 1000 deep, in the numbers and the table, is the
 * best figure bench/real_stacks printed for it. */
START_TEST(test_runtime_numbers)
{
    char *src = getenv("CFISEM_SRC"), *build = test_build_path("");
    char dir[4200], command[16384];
    snprintf(dir, sizeof dir, "%s/runtime", paper_dir);
    snprintf(command, sizeof command,
             "mkdir -p %s && cd %s && CFISEM_BUILD=%s PAPER_BENCH=1 "
             "PAPER_RUNTIME_ROUNDS=1 python3 paper/data/runtime.py %s > /dev/null",
             dir, src, build, dir);
    ck_assert_int_eq(system(command), 0);
    char path[4400];
    snprintf(path, sizeof path, "%s/runtime-real_stacks.txt", dir);
    char *raw = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(raw);
    const char *stack = strstr(raw, "\nrecursion 1000, mixed shapes (");
    ck_assert_ptr_nonnull(stack);
    const char *line = strstr(stack, "  cfisem eh_elf (cfisem_backtrace)");
    ck_assert_ptr_nonnull(line);
    double median, ratio, best;
    ck_assert_int_eq(sscanf(line + strlen("  cfisem eh_elf (cfisem_backtrace)"),
                            "%lf %lfx %lf", &median, &ratio, &best), 3);
    ck_assert(best > 0 && best <= median);
    char want[64], got[64];
    snprintf(want, sizeof want, "%.1f", best);
    snprintf(path, sizeof path, "%s/runtime-numbers.tex", dir);
    char *numbers = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(numbers);
    macro(numbers, "RuntimeEhElfNs", got, sizeof got);
    ck_assert_str_eq(got, want);
    macro(numbers, "RuntimeRounds", got, sizeof got);
    ck_assert_str_eq(got, "1");
    snprintf(path, sizeof path, "%s/runtime.tex", dir);
    char *table = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(table);
    ck_assert_ptr_nonnull(strstr(table, "cfisem eh\\_elf (cfisem\\_backtrace) & "));
    ck_assert_ptr_nonnull(strstr(table, "frame-pointer walk & --- & "));
    free(table);
    free(numbers);
    free(raw);
    free(build);
}
END_TEST

/* numbers.tex inputs every NAME-numbers.tex the scripts wrote. */
START_TEST(test_numbers_index)
{
    char *index = read_generated("numbers.tex");
    const char *expected[] = {"bench-numbers", "diff-numbers", "explain-numbers",
                              "findings-numbers", "runtime-numbers", "stats-numbers",
                              "synth-numbers", "trace-numbers"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++) {
        char line[64];
        snprintf(line, sizeof line, "\\input{%s}", expected[i]);
        ck_assert_msg(strstr(index, line) != NULL, "numbers.tex lacks %s", line);
    }
    char *findings = read_generated("findings-numbers.tex");
    char got[16];
    macro(findings, "FindingsAdapters", got, sizeof got);
    ck_assert_int_gt(atoi(got), 0);
    free(findings);
    free(index);
}
END_TEST

/* The article builds from what the scripts wrote, with no undefined
 * reference or citation (TeX Live is a test dependency: install-deps). */
START_TEST(test_pdf_builds)
{
    char command[9000];
    snprintf(command, sizeof command,
             "cd %s && latexmk -pdf -interaction=nonstopmode -halt-on-error "
             "cfisem.tex > latexmk.out 2>&1", paper_dir);
    ck_assert_msg(system(command) == 0, "latexmk failed: see %s/latexmk.out",
                  paper_dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/cfisem.log", paper_dir);
    char *log = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(!strstr(log, "There were undefined references") &&
                  !strstr(log, "undefined on input line"),
                  "undefined references or citations in %s", path);
    snprintf(path, sizeof path, "%s/cfisem.pdf", paper_dir);
    size_t len = 0;
    char *pdf = test_read_file(path, &len);
    ck_assert_msg(pdf && len > 10000 && !memcmp(pdf, "%PDF", 4), "no PDF");
    free(pdf);
    free(log);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("paper");
    TCase *tc = tcase_create("paper-data");
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_stats_numbers);
    tcase_add_test(tc, test_diff_table);
    tcase_add_test(tc, test_worked_examples);
    tcase_add_test(tc, test_trace_table);
    tcase_add_test(tc, test_synth_table);
    tcase_add_test(tc, test_runtime_not_run);
    tcase_add_test(tc, test_runtime_numbers);
    tcase_add_test(tc, test_numbers_index);
    tcase_add_test(tc, test_pdf_builds);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
