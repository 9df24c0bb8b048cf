/* SPDX-License-Identifier: MIT */
/* check_cases.c — the golden tests of corpus/cases (x86-64) and
 * corpus/cases-aarch64: each DIR/NAME.S is built by make into
 * $CFISEM_BUILD/DIR/NAME.so, and `cfisem il NAME.so` must print NAME.il
 * byte for byte. NAME.il is written by hand from the .cfi_* directives
 * (DWARF 5 §6.4; on AArch64 also the AADWARF64 ABI's vendor opcodes),
 * not copied from the tool. Also: --pc prints the one range covering the
 * address and the json and readelf formats succeed on every case; every
 * x86-64 golden range line parses and prints back the same (the parser
 * reads x86-64 register names); each case of corpus/cases-aarch64/errors
 * fails where and how its NAME.err says; the command line errors of
 * `il`. */
#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "semantics/sem.h"
#include "tests/support.h"

#define MAX_CASES 128

#define X86_64_DIR "corpus/cases"
#define AARCH64_DIR "corpus/cases-aarch64"
#define AARCH64_ERRORS_DIR "corpus/cases-aarch64/errors"

/* A case: its folder (under the sources, and under the build for its
 * .so) and its name without suffix. */
struct case_ref {
    const char *dir;
    char *name;
};

/* The cases with a golden IL, the x86-64 ones first (the first nx86),
 * and apart the AArch64 cases that must fail. */
static struct case_ref cases[MAX_CASES];
static int ncases, nx86;
static struct case_ref error_cases[MAX_CASES];
static int nerror_cases;

static char *case_file(const struct case_ref *c, const char *suffix,
                       char *(*base)(const char *))
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s%s", c->dir, c->name, suffix);
    return base(rel);
}

static char *case_so(const struct case_ref *c)
{
    return case_file(c, ".so", test_build_path);
}

/* An x86-64 case the command-line tests start from. */
static char *x86_case_so(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, X86_64_DIR "/%s.so", name);
    return test_build_path(rel);
}

static char *case_text(const struct case_ref *c, const char *suffix,
                       size_t *len)
{
    char *path = case_file(c, suffix, test_src_path);
    char *text = test_read_file(path, len);
    ck_assert_msg(text != NULL, "no golden file %s", path);
    free(path);
    return text;
}

static char *case_golden(const struct case_ref *c, size_t *len)
{
    return case_text(c, ".il", len);
}

/* Line `n` (0-based) of text, into buf; false past the end. */
static bool nth_line(const char *text, size_t n, char *buf, size_t size)
{
    for (; n > 0; n--) {
        text = strchr(text, '\n');
        if (!text)
            return false;
        text++;
    }
    if (!*text)
        return false;
    size_t len = strcspn(text, "\n");
    snprintf(buf, size, "%.*s", (int)len, text);
    return true;
}

/* A unified-diff-like report of the lines that differ. */
static void print_diff(const struct case_ref *c, const char *expected,
                       const char *actual)
{
    printf("--- %s/%s.il (expected)\n+++ cfisem il %s.so\n", c->dir, c->name,
           c->name);
    char a[4096], b[4096];
    size_t shown = 0;
    for (size_t i = 0; shown < 30; i++) {
        bool has_a = nth_line(expected, i, a, sizeof a);
        bool has_b = nth_line(actual, i, b, sizeof b);
        if (!has_a && !has_b)
            break;
        if (has_a && has_b && !strcmp(a, b))
            continue;
        printf("@@ line %zu @@\n", i + 1);
        if (has_a)
            printf("-%s\n", a);
        if (has_b)
            printf("+%s\n", b);
        shown++;
    }
    fflush(stdout);
}

START_TEST(case_matches_golden)
{
    const struct case_ref *c = &cases[_i];
    const char *name = c->name;
    char *so = case_so(c);
    const char *args[] = {"il", so, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    size_t len;
    char *golden = case_golden(c, &len);
    if (run.out_len != len || memcmp(run.out, golden, len) != 0)
        print_diff(c, golden, run.out);
    ck_assert_msg(run.exit_code == 0, "%s: exit %d: %s", name, run.exit_code,
                  run.err);
    ck_assert_msg(run.out_len == len && memcmp(run.out, golden, len) == 0,
                  "%s: output differs from %s.il", name, name);
    ck_assert_msg(run.err_len == 0, "%s: stderr: %s", name, run.err);
    free(golden);
    test_run_free(&run);
    free(so);
}
END_TEST

START_TEST(case_golden_lines_round_trip)
{
    const char *name = cases[_i].name;
    char *golden = case_golden(&cases[_i], NULL);
    const struct cfi_arch *arch = _i < nx86 ? &cfi_arch_x86_64
                                            : &cfi_arch_aarch64;
    struct sem_arena *arena = sem_arena_new();
    size_t ranges = 0;
    char line[4096];
    for (size_t i = 0; nth_line(golden, i, line, sizeof line); i++) {
        if (line[0] != '[')
            continue;
        struct sem_range range;
        struct cfi_diag diag = {0};
        ck_assert_msg(sem_parse_range_text(line, arch, arena, &range,
                                           &diag) == CFI_OK,
                      "%s.il line %zu, column %llu: %s", name, i + 1,
                      (unsigned long long)diag.offset, diag.message);
        char *printed = NULL;
        size_t plen;
        FILE *out = open_memstream(&printed, &plen);
        sem_print_range_text(out, arch, &range);
        fclose(out);
        printed[strcspn(printed, "\n")] = '\0';
        ck_assert_str_eq(printed, line);
        free(printed);
        ranges++;
    }
    ck_assert_uint_gt(ranges, 0);
    sem_arena_free(arena);
    free(golden);
}
END_TEST

/* --pc at the first and the last byte of every range: the FDE's header,
 * that range, a blank line. */
START_TEST(case_pc_prints_one_range)
{
    const char *name = cases[_i].name;
    char *so = case_so(&cases[_i]);
    char *golden = case_golden(&cases[_i], NULL);
    char header[4096] = "", line[4096];
    for (size_t i = 0; nth_line(golden, i, line, sizeof line); i++) {
        if (!strncmp(line, "fde ", 4))
            snprintf(header, sizeof header, "%s", line);
        if (line[0] != '[' || strstr(header, ".debug_frame") != NULL)
            continue; /* --pc looks in .eh_frame first */
        unsigned long long begin, end;
        ck_assert_int_eq(sscanf(line, "[0x%llx,0x%llx)", &begin, &end), 2);
        unsigned long long pcs[2] = {begin, end - 1};
        for (int k = 0; k < 2; k++) {
            char pc[32], expected[8400];
            snprintf(pc, sizeof pc, "0x%llx", pcs[k]);
            snprintf(expected, sizeof expected, "%s\n%s\n\n", header, line);
            const char *args[] = {"il", so, "--pc", pc, NULL};
            struct test_run run;
            test_run_cfisem(args, &run);
            ck_assert_msg(run.exit_code == 0, "%s --pc %s: exit %d", name, pc,
                          run.exit_code);
            ck_assert_str_eq(run.out, expected);
            test_run_free(&run);
        }
    }
    free(golden);
    free(so);
}
END_TEST

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Braces and brackets balance outside strings, and nothing follows the
 * closing brace but a newline. */
static bool json_balanced(const char *text)
{
    int depth = 0;
    bool in_string = false;
    const char *p = text;
    for (; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = false;
            continue;
        }
        if (*p == '"')
            in_string = true;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            depth--;
        if (depth < 0)
            return false;
        if (depth == 0 && *p == '}')
            return !strcmp(p + 1, "\n") && !in_string;
    }
    return false;
}

START_TEST(case_json_and_readelf_formats)
{
    const char *name = cases[_i].name;
    char *so = case_so(&cases[_i]);
    char *golden = case_golden(&cases[_i], NULL);
    size_t nfdes = count(golden, "\nfde ") + !strncmp(golden, "fde ", 4);

    const char *json_args[] = {"il", "--format", "json", so, NULL};
    struct test_run run;
    test_run_cfisem(json_args, &run);
    ck_assert_msg(run.exit_code == 0, "%s json: exit %d", name, run.exit_code);
    ck_assert_msg(json_balanced(run.out), "%s: unbalanced JSON:\n%s", name,
                  run.out);
    ck_assert_ptr_nonnull(strstr(run.out, "\"fdes\": ["));
    ck_assert_uint_eq(count(run.out, "\"section\": "), nfdes);
    ck_assert_uint_eq(count(run.out, "\"begin\": ") - nfdes,
                      count(golden, "\n[") + (golden[0] == '['));
    test_run_free(&run);

    const char *readelf_args[] = {"il", "--format=readelf", so, NULL};
    test_run_cfisem(readelf_args, &run);
    ck_assert_msg(run.exit_code == 0, "%s readelf: exit %d", name,
                  run.exit_code);
    ck_assert_uint_eq(count(run.out, " FDE cie="), nfdes);
    test_run_free(&run);
    free(golden);
    free(so);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The command line of `cfisem il`                                     */
/* ------------------------------------------------------------------ */

struct cli_case {
    const char *args[6];
    int exit_code;
    const char *stderr_has; /* NULL: stderr empty */
};

static const struct cli_case cli_cases[] = {
    {{"il", NULL}, TEST_EXIT_USAGE, "missing FILE"},
    {{"il", "--bogus", "x", NULL}, TEST_EXIT_USAGE, "unknown option --bogus"},
    {{"il", "--format", "xml", "x", NULL}, TEST_EXIT_USAGE, "unknown format: xml"},
    {{"il", "x", "--format", NULL}, TEST_EXIT_USAGE, "missing value for --format"},
    {{"il", "x", "--pc", "12z", NULL}, TEST_EXIT_USAGE, "bad address for --pc: 12z"},
    {{"il", "x", "--pc", "-1", NULL}, TEST_EXIT_USAGE, "bad address for --pc"},
    {{"il", "x", "--pc", "main+0x1g", NULL}, TEST_EXIT_USAGE,
     "bad address for --pc: main+0x1g"},
    {{"il", "/nonexistent/file.so", NULL}, 2, "cfisem: /nonexistent/file.so: "},
    {{"il", "--help", NULL}, 0, NULL},
};

START_TEST(cli_errors)
{
    const struct cli_case *c = &cli_cases[_i];
    struct test_run run;
    test_run_cfisem(c->args, &run);
    ck_assert_msg(run.exit_code == c->exit_code, "exit %d, expected %d: %s",
                  run.exit_code, c->exit_code, run.err);
    if (c->stderr_has) {
        ck_assert_msg(strstr(run.err, c->stderr_has) != NULL, "stderr: %s",
                      run.err);
        ck_assert_uint_eq(test_count_lines(run.err), 1);
    } else {
        ck_assert_uint_eq(run.err_len, 0);
    }
    test_run_free(&run);
}
END_TEST

START_TEST(cli_help_shows_each_format)
{
    const char *args[] = {"il", "--help", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "usage: cfisem il FILE"));
    ck_assert_ptr_nonnull(strstr(run.out, "cfa=rsp+16  rip=[cfa-8]"));
    ck_assert_ptr_nonnull(strstr(run.out, "\"fdes\": ["));
    ck_assert_ptr_nonnull(strstr(run.out, "   LOC           CFA"));
    test_run_free(&run);
}
END_TEST

/* `il A B C` as readelf reads several files: "File: NAME" before each,
 * a blank line between them, each file's output as `il NAME` alone
 * prints it; a file that cannot be read is reported once on stderr, the
 * others are still printed, and the exit status says it (2). */
START_TEST(cli_several_files)
{
    char *a = x86_case_so("prologue"), *b = x86_case_so("args_size");
    const char *missing = "/nonexistent/file.so";
    char *alone[2];
    char *paths[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        const char *args[] = {"il", paths[k], NULL};
        struct test_run run;
        test_run_cfisem(args, &run);
        ck_assert_int_eq(run.exit_code, 0);
        alone[k] = strdup(run.out);
        test_run_free(&run);
    }
    const char *args[] = {"il", a, missing, b, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    size_t size = strlen(alone[0]) + strlen(alone[1]) + 3 * 4200;
    char *expected = malloc(size);
    snprintf(expected, size, "File: %s\n%s\nFile: %s\n\nFile: %s\n%s", a,
             alone[0], missing, b, alone[1]);
    ck_assert_str_eq(run.out, expected);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "cfisem: /nonexistent/file.so: "));
    test_run_free(&run);
    /* all readable: exit 0, nothing on stderr */
    const char *good[] = {"il", a, b, NULL};
    test_run_cfisem(good, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_uint_eq(run.err_len, 0);
    test_run_free(&run);
    free(expected);
    free(alone[0]);
    free(alone[1]);
    free(a);
    free(b);
}
END_TEST

START_TEST(cli_pc_not_covered)
{
    char *so = x86_case_so("prologue");
    const char *args[] = {"il", so, "--pc", "0x2000", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_uint_eq(run.out_len, 0);
    char expected[4200];
    snprintf(expected, sizeof expected, "cfisem: %s: no FDE covers 0x2000\n", so);
    ck_assert_str_eq(run.err, expected);
    test_run_free(&run);
    free(so);
}
END_TEST

START_TEST(cli_pc_json)
{
    char *so = x86_case_so("prologue");
    const char *args[] = {"il", so, "--pc=4114", "--format", "json", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out,
        "\"rows\": [{\"begin\": \"0x1011\", \"end\": \"0x1013\", \"cfa\": {\"reg\": 7,"
        " \"offset\": 8}, \"regs\": {\"16\": {\"rule\": \"offset\","
        " \"offset\": -8}}}]}\n]}\n"));
    test_run_free(&run);
    free(so);
}
END_TEST

START_TEST(cli_not_elf)
{
    char *src = test_src_path(X86_64_DIR "/prologue.S");
    const char *args[] = {"il", src, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(run.out_len, 0);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, src));
    test_run_free(&run);
    free(src);
}
END_TEST

/* A copy of a built case with bytes of its .eh_frame changed: at each
 * (section offset, byte) pair. Returns the copy's path (malloc'd). */
struct patch {
    size_t offset;
    uint8_t byte;
};

static char *patched_case(const char *name, const struct patch *patches,
                          size_t n)
{
    char *so = x86_case_so(name);
    size_t len;
    char *image = test_read_file(so, &len);
    ck_assert_ptr_nonnull(image);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
    const char *names = image + sh[eh->e_shstrndx].sh_offset;
    size_t eh_frame = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (!strcmp(names + sh[i].sh_name, ".eh_frame"))
            eh_frame = sh[i].sh_offset;
    ck_assert_uint_ne(eh_frame, 0);
    for (size_t i = 0; i < n; i++)
        image[eh_frame + patches[i].offset] = (char)patches[i].byte;
    char *dir = test_temp_dir();
    char *path = malloc(strlen(dir) + strlen(name) + 16);
    sprintf(path, "%s/%s.so", dir, name);
    ck_assert_int_eq(test_write_file(path, image, len), 0);
    free(dir);
    free(image);
    free(so);
    return path;
}

static void remove_patched(char *path)
{
    unlink(path);
    *strrchr(path, '/') = '\0';
    rmdir(path);
    free(path);
}

/* prologue.so: FDEs at 0x18 and 0x3c; an FDE's program starts 0x11 bytes
 * in (length, CIE pointer, PC begin, PC range, augmentation length). A
 * restore_state (0x0b) there has nothing to restore. */
START_TEST(cli_failed_fde_is_reported_once)
{
    const struct patch one[] = {{0x18 + 0x11, 0x0b}};
    char *path = patched_case("prologue", one, 1);
    const char *args[] = {"il", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_ptr_null(strstr(run.out, "fde .eh_frame+0x18 "));
    ck_assert_ptr_nonnull(strstr(run.out, "fde .eh_frame+0x3c "));
    char prefix[4200];
    snprintf(prefix, sizeof prefix,
             "cfisem: %s: .eh_frame FDE 0x18: instruction at +0x0: ", path);
    ck_assert_msg(!strncmp(run.err, prefix, strlen(prefix)), "%s", run.err);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_null(strstr(run.err, "more FDEs"));
    test_run_free(&run);

    const char *json_args[] = {"il", "--format", "json", path, NULL};
    test_run_cfisem(json_args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_ptr_nonnull(strstr(run.out, "\"offset\": 24, "));
    ck_assert_ptr_nonnull(strstr(run.out, "\"error\": \""));
    ck_assert_ptr_nonnull(strstr(run.out, "\"rows\": []}"));
    ck_assert(json_balanced(run.out));
    test_run_free(&run);
    remove_patched(path);
}
END_TEST

START_TEST(cli_failed_fdes_are_counted)
{
    const struct patch two[] = {{0x18 + 0x11, 0x0b}, {0x3c + 0x11, 0x0b}};
    char *path = patched_case("prologue", two, 2);
    const char *args[] = {"il", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(run.out_len, 0);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, ".eh_frame FDE 0x18: "));
    ck_assert_ptr_nonnull(strstr(run.err, " (and 1 more FDEs with errors)\n"));
    test_run_free(&run);
    remove_patched(path);
}
END_TEST

/* FDE 0x18's PC range (at +0xc) made 0x20: it overlaps FDE 0x3c. */
START_TEST(cli_overlap_warning)
{
    const struct patch range[] = {{0x18 + 0xc, 0x20}};
    char *path = patched_case("prologue", range, 1);
    const char *args[] = {"il", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    char expected[4200];
    snprintf(expected, sizeof expected,
             "cfisem: %s: warning: 1 overlapping FDEs (first: 0x18 and 0x3c)\n",
             path);
    ck_assert_str_eq(run.err, expected);
    ck_assert_ptr_nonnull(strstr(run.out, "[0x1010,0x1020)  cfa=rsp+8"));
    test_run_free(&run);
    remove_patched(path);
}
END_TEST

/* A case of corpus/cases-aarch64/errors must fail. Its NAME.err is one
 * line, "WHERE: STATUS": WHERE as `cfisem il` names the faulty
 * instruction (".eh_frame FDE 0x14: instruction at +0x1"), STATUS the
 * error class `cfisem unwind` prints (cfi_status_name: malformed,
 * unsupported). Each of these files has one FDE, from 0x1000. */
START_TEST(error_case_fails_where_expected)
{
    const struct case_ref *c = &error_cases[_i];
    char *expected = case_text(c, ".err", NULL);
    expected[strcspn(expected, "\n")] = '\0';
    char *sep = strrchr(expected, ':');
    ck_assert_msg(sep && sep[1] == ' ', "%s.err: no ': STATUS'", c->name);
    *sep = '\0';
    const char *where = expected, *status = sep + 2;
    unsigned long long fde, at;
    ck_assert_int_eq(sscanf(where, ".eh_frame FDE 0x%llx: instruction at"
                                   " +0x%llx", &fde, &at), 2);

    char *so = case_so(c);
    const char *args[] = {"il", so, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    char prefix[4400];
    snprintf(prefix, sizeof prefix, "cfisem: %s: %s: ", so, where);
    ck_assert_msg(run.exit_code == 2, "%s: exit %d: %s", c->name,
                  run.exit_code, run.err);
    ck_assert_uint_eq(run.out_len, 0);
    ck_assert_msg(!strncmp(run.err, prefix, strlen(prefix)),
                  "%s: stderr: %s", c->name, run.err);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    test_run_free(&run);

    /* The FDE's program starts 0x11 bytes in: length, CIE pointer, PC
     * begin and range (pcrel sdata4), augmentation data length. */
    const char *unwind_args[] = {"unwind", so, "--pc", "0x1000", "--regs",
                                 "31=0x7ffe1000", NULL};
    test_run_cfisem(unwind_args, &run);
    char head[64], at_offset[64];
    snprintf(head, sizeof head, "error: %s: ", status);
    snprintf(at_offset, sizeof at_offset, " at section offset 0x%llx",
             fde + 0x11 + at);
    ck_assert_msg(run.exit_code == 3, "%s: unwind exit %d: %s", c->name,
                  run.exit_code, run.err);
    ck_assert_msg(!strncmp(run.out, head, strlen(head)) &&
                      strstr(run.out, at_offset) != NULL,
                  "%s: expected \"%s...%s\", got: %s", c->name, head,
                  at_offset, run.out);
    test_run_free(&run);
    free(so);
    free(expected);
}
END_TEST

/* The cases NAME.S of the source folder dir, in name order, appended
 * to list. */
static void find_cases(const char *dir, struct case_ref *list, int *n)
{
    char *dir_path = test_src_path(dir);
    struct dirent **names;
    int found = scandir(dir_path, &names, NULL, alphasort);
    for (int i = 0; i < found; i++) {
        size_t len = strlen(names[i]->d_name);
        if (len > 2 && !strcmp(names[i]->d_name + len - 2, ".S") &&
            *n < MAX_CASES) {
            list[*n].dir = dir;
            list[*n].name = strndup(names[i]->d_name, len - 2);
            (*n)++;
        }
        free(names[i]);
    }
    if (found >= 0)
        free(names);
    free(dir_path);
}

START_TEST(cases_exist)
{
    ck_assert_int_ge(nx86, 12);
    ck_assert_int_ge(ncases - nx86, 8);
    ck_assert_int_ge(nerror_cases, 4);
}
END_TEST

/* The golden tests of cases [begin, end), the round trip through the
 * parser with their architecture's names. */
static TCase *golden_tcase(const char *name, int begin, int end)
{
    TCase *t = tcase_create(name);
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, case_matches_golden, begin, end);
    tcase_add_loop_test(t, case_golden_lines_round_trip, begin, end);
    tcase_add_loop_test(t, case_pc_prints_one_range, begin, end);
    tcase_add_loop_test(t, case_json_and_readelf_formats, begin, end);
    return t;
}

int main(void)
{
    find_cases(X86_64_DIR, cases, &ncases);
    nx86 = ncases;
    find_cases(AARCH64_DIR, cases, &ncases);
    find_cases(AARCH64_ERRORS_DIR, error_cases, &nerror_cases);
    Suite *s = suite_create("cases");
    TCase *t = golden_tcase("golden", 0, nx86);
    tcase_add_test(t, cases_exist);
    suite_add_tcase(s, t);

    t = golden_tcase("golden aarch64", nx86, ncases);
    tcase_add_loop_test(t, error_case_fails_where_expected, 0, nerror_cases);
    suite_add_tcase(s, t);

    t = tcase_create("command line");
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, cli_errors, 0,
                        (int)(sizeof cli_cases / sizeof cli_cases[0]));
    tcase_add_test(t, cli_help_shows_each_format);
    tcase_add_test(t, cli_pc_not_covered);
    tcase_add_test(t, cli_several_files);
    tcase_add_test(t, cli_pc_json);
    tcase_add_test(t, cli_not_elf);
    tcase_add_test(t, cli_failed_fde_is_reported_once);
    tcase_add_test(t, cli_failed_fdes_are_counted);
    tcase_add_test(t, cli_overlap_warning);
    suite_add_tcase(s, t);

    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    for (int i = 0; i < ncases; i++)
        free(cases[i].name);
    for (int i = 0; i < nerror_cases; i++)
        free(error_cases[i].name);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
