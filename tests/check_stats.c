/* SPDX-License-Identifier: MIT */
/* check_stats.c — `cfisem stats`.
 *
 *   - golden text over the hand-written cases (every .so of corpus/cases), the
 *     build folder written BUILD (corpus/stats/cases.txt);
 *   - agreement with `cfisem il` on libc and ld.so: FDEs, rows, and FDEs
 *     that do not translate;
 *   - the same JSON whatever --jobs, and from a manifest as from the
 *     command line;
 *   - --by producer names GCC and clang from .comment;
 *   - a file that does not load is counted, not fatal; usage errors. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

/* The case objects, sorted, as cfisem arguments (NULL-terminated). */
static size_t case_args(const char **args, size_t max)
{
    char *dir = test_build_path("corpus/cases");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) && n + 1 < max) {
        size_t len = strlen(entry->d_name);
        if (len > 3 && !strcmp(entry->d_name + len - 3, ".so")) {
            char *path = malloc(strlen(dir) + len + 2);
            sprintf(path, "%s/%s", dir, entry->d_name);
            args[n++] = path;
        }
    }
    closedir(d);
    free(dir);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(args[j - 1], args[j]) > 0; j--) {
            const char *t = args[j];
            args[j] = args[j - 1];
            args[j - 1] = t;
        }
    args[n] = NULL;
    return n;
}

static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t nfrom = strlen(from), nto = strlen(to), count = 0;
    for (const char *p = text; (p = strstr(p, from)); p += nfrom)
        count++;
    char *out = malloc(strlen(text) + count * nto + 1), *o = out;
    for (const char *p = text;;) {
        const char *hit = strstr(p, from);
        if (!hit) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(hit - p));
        o += hit - p;
        memcpy(o, to, nto);
        o += nto;
        p = hit + nfrom;
    }
    return out;
}

START_TEST(test_golden_cases)
{
    const char *args[128] = {"stats"};
    size_t n = case_args(args + 1, 120);
    ck_assert_uint_gt(n, 10);
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    char *build = test_build_path("");
    char *out = replace_all(run.out, build, "BUILD/");
    char *golden = test_src_path("corpus/stats/cases.txt");
    if (getenv("CFISEM_WRITE_GOLDEN"))
        test_write_file(golden, out, strlen(out));
    char *expected = test_read_file(golden, NULL);
    ck_assert_ptr_nonnull(expected);
    if (strcmp(out, expected)) {
        fprintf(stderr, "--- %s\n+++ cfisem stats\n%s", golden, out);
        ck_abort_msg("stats over the cases differ from the golden file");
    }
    free(expected);
    free(golden);
    free(out);
    free(build);
    for (size_t i = 1; i <= n; i++)
        free((char *)args[i]);
    test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Agreement with cfisem il                                             */
/* ------------------------------------------------------------------ */

static uint64_t json_number(const char *json, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    const char *p = strstr(json, pattern);
    ck_assert_msg(p != NULL, "no %s in the JSON", key);
    return strtoull(p + strlen(pattern), NULL, 10);
}

static size_t lines_starting(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (const char *line = text; *line;) {
        n += !strncmp(line, prefix, len);
        const char *next = strchr(line, '\n');
        if (!next)
            break;
        line = next + 1;
    }
    return n;
}

static void agrees_with_il(const char *name)
{
    char *lib = test_system_lib(name);
    ck_assert_ptr_nonnull(lib);
    struct test_run stats, il;
    test_run_cfisem((const char *[]){"stats", lib, "--json", "-", NULL}, &stats);
    test_run_cfisem((const char *[]){"il", lib, NULL}, &il);
    ck_assert_int_eq(stats.exit_code, 0);
    const char *fde_part = strstr(stats.out, "\"fdes\": {");
    ck_assert_ptr_nonnull(fde_part);
    uint64_t eh = json_number(fde_part, ".eh_frame");
    uint64_t debug = json_number(fde_part, ".debug_frame");
    uint64_t failed = json_number(stats.out, "fdes_failed");
    size_t il_fdes = lines_starting(il.out, "fde ");
    ck_assert_msg(eh + debug - failed == il_fdes, "%s: stats %" PRIu64
                  " FDEs (%" PRIu64 " failed), il prints %zu", name,
                  eh + debug, failed, il_fdes);
    ck_assert_uint_eq(json_number(stats.out, "rows"),
                      lines_starting(il.out, "["));
    test_run_free(&stats);
    test_run_free(&il);
    free(lib);
}

START_TEST(test_agrees_with_il)
{
    agrees_with_il("libc.so.6");
    agrees_with_il("ld-linux-x86-64.so.2");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Jobs, manifest, producers                                            */
/* ------------------------------------------------------------------ */

START_TEST(test_jobs_and_manifest)
{
    const char *files[] = {"libc.so.6", "ld-linux-x86-64.so.2", "libm.so.6",
                           "libz.so.1"};
    char *paths[4];
    char *dir = test_temp_dir();
    char manifest[4200];
    snprintf(manifest, sizeof manifest, "%s/manifest.txt", dir);
    FILE *f = fopen(manifest, "w");
    fputs("# a comment\n", f);
    for (int i = 0; i < 4; i++) {
        paths[i] = test_system_lib(files[i]);
        ck_assert_ptr_nonnull(paths[i]);
        fprintf(f, "%s\t123\tabc\n", paths[i]);
    }
    fclose(f);
    struct test_run one, two, listed;
    test_run_cfisem((const char *[]){"stats", "--manifest", manifest, "--jobs",
                                     "1", "--json", "-", NULL}, &one);
    test_run_cfisem((const char *[]){"stats", "--manifest", manifest, "--jobs",
                                     "2", "--json", "-", NULL}, &two);
    test_run_cfisem((const char *[]){"stats", paths[0], paths[1], paths[2],
                                     paths[3], "--json", "-", NULL}, &listed);
    ck_assert_int_eq(one.exit_code, 0);
    ck_assert_str_eq(one.out, two.out);
    ck_assert_str_eq(one.out, listed.out);
    ck_assert_uint_eq(json_number(one.out, "files"), 4);
    test_run_free(&one);
    test_run_free(&two);
    test_run_free(&listed);
    for (int i = 0; i < 4; i++)
        free(paths[i]);
    free(dir);
}
END_TEST

static void build(const char *compiler, const char *path)
{
    char command[9000];
    snprintf(command, sizeof command,
             "printf 'int f(int x) { return x * 3; }\\n' | %s -O1 -shared "
             "-fPIC -x c -o %s - 2>/dev/null", compiler, path);
    ck_assert_int_eq(system(command), 0);
}

START_TEST(test_by_producer)
{
    char *dir = test_temp_dir();
    char gcc[4200], clang[4200];
    snprintf(gcc, sizeof gcc, "%s/gcc.so", dir);
    snprintf(clang, sizeof clang, "%s/clang.so", dir);
    build("gcc", gcc);
    build("clang", clang);
    struct test_run run;
    test_run_cfisem((const char *[]){"stats", gcc, clang, "--by", "producer",
                                     "--json", "-", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    const char *split = strstr(run.out, "\"by_producer\": {");
    ck_assert_ptr_nonnull(split);
    ck_assert_msg(strstr(split, "\n \"GCC ") != NULL, "%s", split);
    /* clang links GCC's start files: both name themselves. */
    ck_assert_msg(strstr(split, " + clang ") != NULL, "%s", split);
    test_run_free(&run);
    test_run_cfisem((const char *[]){"stats", gcc, "--by", "producer", NULL},
                    &run);
    ck_assert_ptr_nonnull(strstr(run.out, "by producer (.comment)"));
    test_run_free(&run);
    free(dir);
}
END_TEST

START_TEST(test_bad_files_are_counted)
{
    char *src = test_src_path("corpus/cases/plt.S");
    struct test_run run;
    test_run_cfisem((const char *[]){"stats", src, "--json", "-", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_int_eq((int)test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "plt.S"));
    ck_assert_uint_eq(json_number(run.out, "files_failed"), 1);
    ck_assert_ptr_nonnull(strstr(run.out, "{\"text\": \"file: "));
    test_run_free(&run);
    free(src);
}
END_TEST

static void expect_usage(const char *const *args, const char *message)
{
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, TEST_EXIT_USAGE);
    ck_assert_int_eq((int)test_count_lines(run.err), 1);
    ck_assert_msg(strstr(run.err, message) != NULL, "stderr: %s", run.err);
    test_run_free(&run);
}

START_TEST(test_usage)
{
    expect_usage((const char *[]){"stats", NULL}, "no FILE and no --manifest");
    expect_usage((const char *[]){"stats", "x", "--jobs", "0", NULL},
                 "bad --jobs");
    expect_usage((const char *[]){"stats", "x", "--by", "compiler", NULL},
                 "--by takes 'producer'");
    expect_usage((const char *[]){"stats", "x", "--frobnicate", NULL},
                 "unknown option");
    struct test_run run;
    test_run_cfisem((const char *[]){"stats", "--manifest", "/nonexistent",
                                     NULL}, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_ptr_nonnull(strstr(run.err, "/nonexistent"));
    test_run_free(&run);
    test_run_cfisem((const char *[]){"--help", NULL}, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "  stats "));
    test_run_free(&run);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("stats");
    TCase *tc = tcase_create("stats");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_golden_cases);
    tcase_add_test(tc, test_agrees_with_il);
    tcase_add_test(tc, test_jobs_and_manifest);
    tcase_add_test(tc, test_by_producer);
    tcase_add_test(tc, test_bad_files_are_counted);
    tcase_add_test(tc, test_usage);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
