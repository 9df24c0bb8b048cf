/* SPDX-License-Identifier: MIT */
/* check_readelf.c — the oracle test against binutils: `readelf -wF FILE`
 * and `cfisem il --format readelf FILE` must give the same table for every
 * FDE, every row, the CFA and every register cell, after the
 * normalisation below (also in tests/readelf-normalisation.md, with the
 * reasons).
 *
 * Files: libc.so.6, ld-linux-x86-64.so.2, libstdc++.so.6, a deterministic
 * selection of 64 other files (the regular files of /usr/bin then
 * /usr/lib/x86_64-linux-gnu, sorted by name, that are x86-64 ELF
 * executables or shared objects of at most 30 MB with a non-empty
 * .eh_frame: every k-th of them, k = candidates / 64), libgcrypt (which
 * has the FDEs of N6), and the built
 * corpus/cases .so files.
 *
 * Normalisation:
 *   N1  `u` cells are dropped on both sides: readelf prints `u` both for
 *       "no rule" and for DW_CFA_undefined.
 *   N2  FDEs for which readelf prints no rows are skipped: readelf prints
 *       none for an FDE whose program is only DW_CFA_nop (we print the
 *       CIE's row).
 *   N3  Of consecutive readelf rows with the same LOC (an advance by 0),
 *       only the last is kept: the earlier ones cover no address.
 *   N4  readelf rows whose LOC is at or past the FDE's end are dropped:
 *       readelf prints a row at every advance, also one that reaches the
 *       end exactly (a PLT with no entry, e.g. libdl.so.2); it covers no
 *       address, and the IL has no empty ranges.
 *   N5  Cells of registers above 126 are dropped on both sides: readelf's
 *       x86-64 register table ends at 125 (k7) and it rejects higher
 *       numbers ("bad register"), dropping their columns.
 *   N6  FDEs we reject for a known, documented reason are not compared
 *       but counted and listed: def_cfa_register / def_cfa_offset while
 *       the CFA is an expression (DWARF 5 §6.4.2.2: "valid only if the
 *       current CFA rule is defined to use a register and offset"; readelf,
 *       like libgcc, switches back to register+offset and keeps the last
 *       offset; libgcrypt has two such FDEs).
 *   N7  (none any more) Relocatable objects (.o) are compared too: the
 *       loader applies the relocations of their frame sections, as readelf
 *       does, every section at address 0.
 *   N8  A row with no CFA rule: readelf prints "rax+0" (its initial,
 *       zeroed state), we print "u"; the two are taken as equal
 *       (corpus/cases/no_cfa.S).
 *   N9  FDEs in which readelf 2.40 meets AArch64's 0x2b or 0x2c
 *       (set_ra_state, negate_ra_state_with_pc) are counted, not
 *       compared: it prints "User defined call frame op" and stops.
 *   N10 The column of AArch64's RA_SIGN_STATE (34) is dropped on both
 *       sides: readelf does not follow the state (negate_ra_state
 *       changes no column of its table), and shows the column only when
 *       an instruction names register 34 (a restore), as "u".
 * Rows where nothing changed are compared as they are: neither side merges
 * rows. The CIE blocks readelf prints are ignored.
 */
#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/oracle_files.h"
#include "tests/support.h"

#define MAX_PRINTED_DIFFS 40

/* ------------------------------------------------------------------ */
/* Tables                                                               */
/* ------------------------------------------------------------------ */

struct cell {
    char column[16];
    char value[32];
};

struct row {
    uint64_t loc;
    char cfa[32];
    size_t ncells;
    struct cell *cells;
};

struct fde_table {
    char section[16];
    uint64_t offset;
    char header[160];
    uint64_t pc_begin, pc_end;
    size_t nrows, cap;
    struct row *rows;
    bool user_op;    /* N9: readelf stopped at an opcode it does not know */
};

struct table {
    size_t nfdes, cap;
    struct fde_table *fdes;
};

static void *grow(void *array, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return array;
    *cap = *cap ? *cap * 2 : 16;
    void *grown = realloc(array, *cap * size);
    ck_assert_ptr_nonnull(grown);
    return grown;
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->nfdes; i++) {
        for (size_t j = 0; j < t->fdes[i].nrows; j++)
            free(t->fdes[i].rows[j].cells);
        free(t->fdes[i].rows);
    }
    free(t->fdes);
    memset(t, 0, sizeof *t);
}

/* Splits a table line into cells: "r3 (rbx)" is one cell. */
static size_t split_cells(char *text, char **cells, size_t max)
{
    size_t n = 0;
    for (char *tok = strtok(text, " "); tok && n < max; tok = strtok(NULL, " ")) {
        if (tok[0] == '(' && n > 0) {
            tok[-1] = ' '; /* join with the previous cell */
            continue;
        }
        cells[n++] = tok;
    }
    return n;
}

/* N5: readelf drops registers above 126. N10: AArch64's RA_SIGN_STATE,
 * whose state readelf does not follow. */
static bool beyond_readelf_registers(const char *column)
{
    if (!strcmp(column, "ra_sign_state") || !strcmp(column, "r34"))
        return true;
    return column[0] == 'r' && column[1] >= '0' && column[1] <= '9' &&
           atoi(column + 1) > 126;
}

static void parse_row(struct fde_table *fde, char *line, char **columns,
                      size_t ncolumns)
{
    char *cells[256];
    size_t n = split_cells(line, cells, 256);
    if (n < 2)
        return;
    fde->rows = grow(fde->rows, &fde->cap, fde->nrows, sizeof *fde->rows);
    struct row *row = &fde->rows[fde->nrows++];
    memset(row, 0, sizeof *row);
    row->loc = strtoull(cells[0], NULL, 16);
    snprintf(row->cfa, sizeof row->cfa, "%s", cells[1]);
    row->cells = calloc(n, sizeof *row->cells);
    for (size_t i = 2; i < n; i++) {
        const char *column = i - 2 < ncolumns ? columns[i - 2] : "?";
        if (!strcmp(cells[i], "u") || beyond_readelf_registers(column))
            continue; /* N1, N5 */
        struct cell *c = &row->cells[row->ncells++];
        snprintf(c->column, sizeof c->column, "%s", column);
        snprintf(c->value, sizeof c->value, "%s", cells[i]);
    }
}

static void parse_header(struct table *t, const char *section, const char *line)
{
    t->fdes = grow(t->fdes, &t->cap, t->nfdes, sizeof *t->fdes);
    struct fde_table *fde = &t->fdes[t->nfdes++];
    memset(fde, 0, sizeof *fde);
    snprintf(fde->section, sizeof fde->section, "%s", section);
    snprintf(fde->header, sizeof fde->header, "%s", line);
    fde->offset = strtoull(line, NULL, 16);
    const char *pc = strstr(line, "pc=");
    if (pc)
        sscanf(pc, "pc=%" SCNx64 "..%" SCNx64, &fde->pc_begin, &fde->pc_end);
}

static bool is_hex_prefix(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* Reads the output of readelf -wF (or ours in that format). */
static void parse_table(char *text, struct table *t)
{
    char section[16] = "";
    struct fde_table *fde = NULL;
    char columns_line[4096] = "";
    char *columns[256];
    size_t ncolumns = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!strncmp(line, "Contents of the ", 16)) {
            sscanf(line + 16, "%15s", section);
        } else if (is_hex_prefix(line, 8) && line[8] == ' ' &&
                   (strstr(line, " FDE ") || strstr(line, " CIE"))) {
            fde = NULL;
            ncolumns = 0;
            if (strstr(line, " FDE ")) {
                parse_header(t, section, line);
                fde = &t->fdes[t->nfdes - 1];
            }
        } else if (fde && !strncmp(line, "   LOC ", 7)) {
            snprintf(columns_line, sizeof columns_line, "%s", line);
            ncolumns = split_cells(columns_line, columns, 256);
            ncolumns = ncolumns >= 2 ? ncolumns - 2 : 0;
            memmove(columns, columns + 2, ncolumns * sizeof *columns);
        } else if (fde && is_hex_prefix(line, 16) && line[16] == ' ') {
            parse_row(fde, line, columns, ncolumns);
        } else if (fde && strstr(line, "(User defined call frame op: ")) {
            fde->user_op = true;
        }
    }
}

/* N3, N4 on readelf's rows. */
static void normalise_readelf_rows(struct fde_table *fde)
{
    size_t kept = 0;
    for (size_t i = 0; i < fde->nrows; i++) {
        struct row *row = &fde->rows[i];
        bool superseded = i + 1 < fde->nrows && fde->rows[i + 1].loc == row->loc;
        if (superseded || row->loc >= fde->pc_end) {
            free(row->cells);
            continue;
        }
        fde->rows[kept++] = *row;
    }
    fde->nrows = kept;
}

/* ------------------------------------------------------------------ */
/* Running the tools                                                    */
/* ------------------------------------------------------------------ */

static char *run_readelf(const char *path)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        close(fds[0]);
        execlp("readelf", "readelf", "-wF", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 1 << 16;
    char *out = malloc(cap);
    for (ssize_t n; (n = read(fds[0], out + len, cap - len - 1)) > 0;) {
        len += (size_t)n;
        if (cap - len < 4096)
            out = realloc(out, cap *= 2);
    }
    out[len] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 127,
                  "cannot run readelf");
    return out;
}

/* ------------------------------------------------------------------ */
/* Comparing                                                            */
/* ------------------------------------------------------------------ */

struct tally {
    size_t files, fdes, rows, diffs, skipped_nop, deviations;
    bool quiet; /* count differences without printing them */
};

static void report(struct tally *tally, const char *path,
                   const struct fde_table *fde, uint64_t loc, const char *what,
                   const char *theirs, const char *ours)
{
    if (tally->diffs++ < MAX_PRINTED_DIFFS && !tally->quiet)
        printf("DIFF %s: %s FDE 0x%" PRIx64 ": LOC 0x%" PRIx64
               ": %s: readelf '%s', ours '%s'\n",
               path, fde->section, fde->offset, loc, what, theirs, ours);
}

static const char *cell_value(const struct row *row, const char *column)
{
    for (size_t i = 0; i < row->ncells; i++)
        if (!strcmp(row->cells[i].column, column))
            return row->cells[i].value;
    return "u";
}

static void compare_row(struct tally *tally, const char *path,
                        const struct fde_table *fde, const struct row *theirs,
                        const struct row *ours)
{
    tally->rows++;
    if (theirs->loc != ours->loc) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%" PRIx64, theirs->loc);
        snprintf(b, sizeof b, "%" PRIx64, ours->loc);
        report(tally, path, fde, theirs->loc, "LOC", a, b);
        return;
    }
    bool no_cfa = !strcmp(theirs->cfa, "rax+0") && !strcmp(ours->cfa, "u");
    if (strcmp(theirs->cfa, ours->cfa) && !no_cfa) /* N8 */
        report(tally, path, fde, theirs->loc, "CFA", theirs->cfa, ours->cfa);
    for (size_t i = 0; i < theirs->ncells; i++) {
        const char *col = theirs->cells[i].column;
        if (strcmp(theirs->cells[i].value, cell_value(ours, col)))
            report(tally, path, fde, theirs->loc, col, theirs->cells[i].value,
                   cell_value(ours, col));
    }
    for (size_t i = 0; i < ours->ncells; i++) {
        const char *col = ours->cells[i].column;
        if (!strcmp(cell_value(theirs, col), "u"))
            report(tally, path, fde, theirs->loc, col, "u",
                   ours->cells[i].value);
    }
}

static int by_place(const void *a, const void *b)
{
    const struct fde_table *x = a, *y = b;
    int c = strcmp(x->section, y->section);
    if (c)
        return c;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The FDE of t (sorted with by_place) at key's section and offset. */
static const struct fde_table *find_fde(const struct table *t,
                                        const struct fde_table *key)
{
    return t->nfdes ? bsearch(key, t->fdes, t->nfdes, sizeof *t->fdes, by_place)
                    : NULL;
}

/* N6: why cfisem gave no rows for an FDE; true for a known deviation. */
static bool known_deviation(const char *path, const struct fde_table *fde)
{
    char pc[32], needle[64];
    snprintf(pc, sizeof pc, "0x%" PRIx64, fde->pc_begin);
    snprintf(needle, sizeof needle, "FDE 0x%" PRIx64 ": ", fde->offset);
    const char *args[] = {"il", path, "--pc", pc, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    bool known = strstr(run.err, needle) &&
                 strstr(run.err, "without a register+offset CFA");
    if (known)
        printf("deviation N6: %s", run.err + strlen("cfisem: "));
    test_run_free(&run);
    return known;
}

static void compare_fde(struct tally *tally, const char *path,
                        struct fde_table *theirs, const struct table *ours_t)
{
    const struct fde_table *ours = find_fde(ours_t, theirs);
    if (!ours) {
        report(tally, path, theirs, theirs->pc_begin, "FDE", "present",
               "missing");
        return;
    }
    if (theirs->nrows == 0) {
        tally->skipped_nop++; /* N2 */
        return;
    }
    normalise_readelf_rows(theirs);
    if (ours->nrows == 0 && known_deviation(path, theirs)) {
        tally->deviations++;
        return;
    }
    if (theirs->user_op) { /* N9 */
        printf("deviation N9: %s: %s FDE 0x%" PRIx64 ": readelf stops at "
               "an AArch64 opcode it does not know\n", path, theirs->section,
               theirs->offset);
        tally->deviations++;
        return;
    }
    tally->fdes++;
    if (strcmp(theirs->header, ours->header))
        report(tally, path, theirs, theirs->pc_begin, "header", theirs->header,
               ours->header);
    size_t n = theirs->nrows < ours->nrows ? theirs->nrows : ours->nrows;
    for (size_t i = 0; i < n; i++)
        compare_row(tally, path, theirs, &theirs->rows[i], &ours->rows[i]);
    if (theirs->nrows != ours->nrows) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%zu rows", theirs->nrows);
        snprintf(b, sizeof b, "%zu rows", ours->nrows);
        report(tally, path, theirs, theirs->pc_begin, "row count", a, b);
    }
}

static void compare_file(struct tally *tally, const char *path)
{
    char *theirs_text = run_readelf(path);
    const char *args[] = {"il", "--format", "readelf", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0 || run.exit_code == 2,
                  "%s: cfisem exit %d signal %d: %s", path, run.exit_code,
                  run.signal, run.err);
    struct table theirs = {0}, ours = {0};
    parse_table(theirs_text, &theirs);
    parse_table(run.out, &ours);
    if (theirs.nfdes)
        qsort(theirs.fdes, theirs.nfdes, sizeof *theirs.fdes, by_place);
    if (ours.nfdes)
        qsort(ours.fdes, ours.nfdes, sizeof *ours.fdes, by_place);
    size_t before = tally->fdes, rows = tally->rows, diffs = tally->diffs;
    for (size_t i = 0; i < theirs.nfdes; i++)
        compare_fde(tally, path, &theirs.fdes[i], &ours);
    /* An FDE of ours that readelf does not print is a difference too. */
    for (size_t i = 0; i < ours.nfdes; i++)
        if (!find_fde(&theirs, &ours.fdes[i]))
            report(tally, path, &ours.fdes[i], ours.fdes[i].pc_begin, "FDE",
                   "missing", "present");
    tally->files++;
    printf("%s: %zu FDEs, %zu rows compared, %zu differences\n", path,
           tally->fdes - before, tally->rows - rows, tally->diffs - diffs);
    table_free(&theirs);
    table_free(&ours);
    test_run_free(&run);
    free(theirs_text);
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

static void run_oracle(const struct test_file_list *files, size_t min_files)
{
    struct tally tally = {0};
    for (size_t i = 0; i < files->n; i++)
        compare_file(&tally, files->paths[i]);
    printf("readelf oracle: %zu files, %zu FDEs and %zu rows compared, "
           "%zu nop-only FDEs skipped (N2), %zu known deviations (N6), "
           "%zu differences\n",
           tally.files, tally.fdes, tally.rows, tally.skipped_nop,
           tally.deviations, tally.diffs);
    fflush(stdout);
    ck_assert_uint_ge(tally.files, min_files);
    ck_assert_uint_gt(tally.rows, 0);
    ck_assert_msg(tally.diffs == 0, "%zu differences with readelf -wF",
                  tally.diffs);
}

/* Each set of files of tests/oracle_files.h, as every printed oracle
 * sees them (the AArch64 set: readelf 2.40 keeps no column for
 * RA_SIGN_STATE, as we do not: semantics/print.c). */
START_TEST(oracle_file_set)
{
    struct test_file_list files = {0};
    size_t min_files = test_files_of_set((enum oracle_set)_i, &files);
    if (min_files)
        run_oracle(&files, min_files);
    test_files_free(&files);
}
END_TEST

/* The normalisation must not hide a real difference: a table whose CFA
 * or a cell differs is reported. */
START_TEST(oracle_reports_a_difference)
{
    char theirs_text[] =
        "Contents of the .eh_frame section:\n\n\n"
        "00000018 0000000000000024 0000001c FDE cie=00000000 "
        "pc=0000000000001000..0000000000001010\n"
        "   LOC           CFA      rbx   ra    \n"
        "0000000000001000 rsp+8    u     c-8   \n"
        "0000000000001004 rsp+8    u     c-8   \n"
        "0000000000001004 rsp+16   c-16  c-8   \n"
        "0000000000001010 rsp+8    u     c-8   \n";
    char ours_text[] =
        "Contents of the .eh_frame section (loaded from x):\n\n\n"
        "00000018 0000000000000024 0000001c FDE cie=00000000 "
        "pc=0000000000001000..0000000000001010\n"
        "   LOC           CFA      rbx   ra    \n"
        "0000000000001000 rsp+8    u     c-8   \n"
        "0000000000001004 rsp+24   s     r3 (rbx) \n";
    struct table theirs = {0}, ours = {0};
    parse_table(theirs_text, &theirs);
    parse_table(ours_text, &ours);
    ck_assert_uint_eq(theirs.nfdes, 1);
    ck_assert_uint_eq(ours.fdes[0].rows[1].ncells, 2);
    ck_assert_str_eq(ours.fdes[0].rows[1].cells[1].value, "r3 (rbx)");
    struct tally tally = {.quiet = true};
    compare_fde(&tally, "x", &theirs.fdes[0], &ours);
    /* N3 and N4 leave two rows; the second differs in CFA, rbx and ra. */
    ck_assert_uint_eq(theirs.fdes[0].nrows, 2);
    ck_assert_uint_eq(tally.rows, 2);
    ck_assert_uint_eq(tally.diffs, 3);
    table_free(&theirs);
    table_free(&ours);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("readelf");
    TCase *t = tcase_create("oracle");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, oracle_reports_a_difference);
    tcase_add_loop_test(t, oracle_file_set, 0, ORACLE_SET_COUNT);
    suite_add_tcase(s, t);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
