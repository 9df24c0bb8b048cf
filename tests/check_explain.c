/* SPDX-License-Identifier: MIT */
/* check_explain.c — `cfisem explain` and the trace sink of semantics/.
 *
 *   - golden outputs (text and json) of hand-written cases: every rule,
 *     nested remember/restore, restore of a CIE rule, the PC-1 lookup, a
 *     signal frame, the PLT expression CFA, stack realignment, an error
 *     after the lookup PC, an undecodable byte, a memory fault, a CFA
 *     register whose value is unknown, no --regs; on AArch64,
 *     negate_ra_state inside remember/restore, the B key, a frame
 *     pointer with v8-v15 (checked against aadwarf64 and DWARF 5 6.4);
 *     corpus/explain/golden/NAME.{txt,json}, written by hand-checking the
 *     output against the .S files' directives;
 *   - tracing changes nothing: at the first address of every row of libc,
 *     in one of 4 states in turn, sem_unwind_fde_traced (with a sink that keeps every
 *     event) gives the frame sem_unwind gives;
 *   - the result section of explain is what `unwind --engine il` prints,
 *     with the same exit status, at 48 rows (12 under ASan) spread over
 *     all of libc, 4 states each;
 *   - the command line: --help, usage errors, a bad file. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff/json.h"
#include "engines/engines.h"
#include "semantics/sem.h"
#include "tests/support.h"

/* ------------------------------------------------------------------ */
/* Golden outputs                                                       */
/* ------------------------------------------------------------------ */

struct golden {
    const char *name;      /* corpus/explain/golden/NAME.{txt,json} */
    const char *dir;       /* "cases" or "explain" under corpus/ */
    const char *so;
    const char *args[8];
    int exit_code;
};

static const struct golden goldens[] = {
    {"all_rules", "explain", "all_rules",
     {"--pc", "0x1006", "--regs", "rsp=0x7ffe1000,rbp=0x7ffe1010,rax=0x1234,"
      "r12=0x12"}, 0},
    {"remember_nested", "cases", "remember",
     {"--pc", "0x1007", "--regs", "rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=5"}, 0},
    {"restore_cie_rule", "cases", "restore",
     {"--pc", "0x1005", "--regs", "rsp=0x7ffe1000"}, 0},
    {"caller_pc_minus_1", "cases", "prologue",
     {"--pc", "0x1011", "--caller", "--regs", "rsp=0x7ffe1000"}, 0},
    {"signal_frame", "cases", "signal",
     {"--pc", "0x1009", "--regs", "rsp=0x7ffe1000"}, 0},
    {"plt_expression", "cases", "plt",
     {"--pc", "0x101b", "--regs", "rsp=0x7ffe1000"}, 0},
    {"realign", "cases", "realign",
     {"--pc", "0x1014", "--regs", "rsp=0x7ffe0fe0,rbp=0x7ffe1040,rbx=7"}, 0},
    {"error_after_pc", "explain", "error_after",
     {"--pc", "0x1001", "--regs", "rsp=0x7ffe1000"}, 3},
    {"bad_opcode", "explain", "bad_opcode", {"--pc", "0x1000"}, 3},
    {"memory_fault", "cases", "prologue",
     {"--pc", "0x1009", "--regs", "rsp=0x7ffe1000,rbp=0x7ffe1100",
      "--fault", "0x7ffe10f8-0x7ffe1100"}, 3},
    {"no_regs", "cases", "prologue", {"--pc", "0x1005"}, 0},
    {"unknown_register", "cases", "remember",
     {"--pc", "0x1005", "--regs", "rsp=0x7ffe1000"}, 3},
    /* AArch64: the derivation reads the file's descriptor (register
     * names, defaults, x30 the return address column, RA_SIGN_STATE). */
    {"aarch64_remember_negate", "cases-aarch64", "remember_negate",
     {"--pc", "0x1018", "--regs", "sp=0x7ffe1000,x29=0x7ffe1100"}, 0},
    {"aarch64_b_key", "cases-aarch64", "pac_ret_b_key",
     {"--pc", "0x101c", "--regs", "sp=0x7ffe1000"}, 0},
    {"aarch64_frame_pointer", "cases-aarch64", "frame_pointer",
     {"--pc", "0x1034", "--caller", "--regs", "sp=0x7ffe0f60,x29=0x7ffe1000"},
     0},
};
/* The first AArch64 golden. */
#define AARCH64_GOLDEN 12
#define NGOLDENS (sizeof goldens / sizeof goldens[0])

static char *case_path(const struct golden *g)
{
    char rel[256];
    snprintf(rel, sizeof rel, "corpus/%s/%s.so", g->dir, g->so);
    return test_build_path(rel);
}

/* text with every occurrence of `from` replaced by `to` (malloc'd). */
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

/* Runs explain on the case; the output with the case's path as NAME.so. */
static char *run_golden(const struct golden *g, const char *format,
                        struct test_run *run)
{
    char *path = case_path(g);
    const char *args[16] = {"explain", path};
    size_t n = 2;
    for (size_t i = 0; g->args[i]; i++)
        args[n++] = g->args[i];
    args[n++] = "--format";
    args[n++] = format;
    test_run_cfisem(args, run);
    char name[64];
    snprintf(name, sizeof name, "%s.so", g->so);
    char *out = replace_all(run->out, path, name);
    free(path);
    return out;
}

static void compare_golden(const struct golden *g, const char *format,
                           const char *ext)
{
    struct test_run run;
    char *out = run_golden(g, format, &run);
    char rel[256];
    snprintf(rel, sizeof rel, "corpus/explain/golden/%s.%s", g->name, ext);
    char *golden_path = test_src_path(rel);
    if (getenv("CFISEM_WRITE_GOLDEN"))
        test_write_file(golden_path, out, strlen(out));
    char *expected = test_read_file(golden_path, NULL);
    ck_assert_msg(expected != NULL, "no golden file %s", golden_path);
    ck_assert_msg(run.signal == 0, "%s: killed by signal %d", g->name,
                  run.signal);
    ck_assert_msg(run.exit_code == g->exit_code, "%s: exit %d, expected %d",
                  g->name, run.exit_code, g->exit_code);
    if (strcmp(out, expected)) {
        fprintf(stderr, "--- %s\n+++ cfisem explain\n%s", golden_path, out);
        ck_abort_msg("%s: %s output differs from %s", g->name, format, rel);
    }
    free(expected);
    free(golden_path);
    free(out);
    test_run_free(&run);
}

START_TEST(test_golden_text)
{
    compare_golden(&goldens[_i], "text", "txt");
}
END_TEST

START_TEST(test_golden_json)
{
    compare_golden(&goldens[_i], "json", "json");
}
END_TEST

/* The other formats, for some cases: the walk-through for a course page
 * and the LaTeX the paper includes. */
static const struct {
    size_t golden;
    const char *format, *ext;
} format_goldens[] = {
    {1, "markdown", "md"}, {5, "markdown", "md"},
    {1, "latex", "tex"}, {5, "latex", "tex"},
    {AARCH64_GOLDEN, "markdown", "md"}, {AARCH64_GOLDEN, "latex", "tex"},
};
#define NFORMAT_GOLDENS (sizeof format_goldens / sizeof format_goldens[0])

START_TEST(test_golden_formats)
{
    compare_golden(&goldens[format_goldens[_i].golden],
                   format_goldens[_i].format, format_goldens[_i].ext);
}
END_TEST

/* A failing translation also names the file on stderr, one line. */
START_TEST(test_error_on_stderr)
{
    struct test_run run;
    char *out = run_golden(&goldens[7], "text", &run);
    ck_assert_int_eq((int)test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "error_after.so"));
    ck_assert_ptr_nonnull(strstr(run.err, "restore_state with an empty stack"));
    free(out);
    test_run_free(&run);
}
END_TEST

/* Colour only on a terminal, and not with NO_COLOR: script(1) gives the
 * command a terminal. */
static char *on_a_terminal(const char *no_color)
{
    char *so = case_path(&goldens[5]);
    char command[9000];
    snprintf(command, sizeof command,
             "%s script -qec '%s explain %s --pc 0x1000' /dev/null",
             no_color, getenv("CFISEM"), so);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    char *out = calloc(1, 1 << 16);
    size_t len = fread(out, 1, (1 << 16) - 1, p);
    out[len] = 0;
    ck_assert_int_eq(pclose(p), 0);
    free(so);
    return out;
}

START_TEST(test_colour_on_a_terminal)
{
    char *coloured = on_a_terminal("env -u NO_COLOR");
    ck_assert_msg(strstr(coloured, "\033[1m== 1. The records\033[0m") != NULL,
                  "no colour on a terminal: %.80s", coloured);
    char *plain = on_a_terminal("NO_COLOR=1");
    ck_assert_ptr_null(strchr(plain, '\033'));
    ck_assert_ptr_nonnull(strstr(plain, "== 1. The records"));
    free(coloured);
    free(plain);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The html page, in a real browser                                     */
/* ------------------------------------------------------------------ */

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* How many distinct data-origin="iN" values the page holds. */
static size_t distinct_origins(const char *html)
{
    static bool seen[4096];
    memset(seen, 0, sizeof seen);
    size_t n = 0;
    for (const char *p = html; (p = strstr(p, "data-origin=\"i")); p++) {
        unsigned index = (unsigned)strtoul(p + strlen("data-origin=\"i"),
                                           NULL, 10);
        if (index < 4096 && !seen[index]) {
            seen[index] = true;
            n++;
        }
    }
    return n;
}

/* Runs headless Chromium on the page with `options` (a window size, a
 * screenshot); its standard output. */
static char *chromium(const char *html_path, const char *profile,
                      const char *options)
{
    char command[9000];
    snprintf(command, sizeof command,
             "timeout 60 chromium --headless --no-sandbox --disable-gpu "
             "--user-data-dir=%s %s file://%s 2>/dev/null",
             profile, options, html_path);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t capacity = 1 << 16, len = 0, n;
    char *dom = malloc(capacity);
    while ((n = fread(dom + len, 1, capacity - len - 1, p)) > 0) {
        len += n;
        if (len + 1 == capacity)
            dom = realloc(dom, capacity *= 2);
    }
    dom[len] = 0;
    ck_assert_int_eq(pclose(p), 0);
    return dom;
}

/* Renders the page with headless Chromium; the DOM after its script. */
static char *render(const char *html_path, const char *profile)
{
    return chromium(html_path, profile, "--dump-dom");
}

START_TEST(test_html_in_a_browser)
{
    struct test_run run;
    char *html = run_golden(&goldens[1], "html", &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_msg(!strstr(html, "http:") && !strstr(html, "https:") &&
                  !strstr(html, " src="), "the page fetches something");
    size_t cells = count(html, "data-origin=\"i");
    size_t insns = distinct_origins(html);
    ck_assert_msg(cells > 20 && insns > 5, "%zu cells, %zu instructions",
                  cells, insns);
    char *dir = test_temp_dir();
    char path[4200], profile[4200], expected[128];
    snprintf(path, sizeof path, "%s/remember.html", dir);
    snprintf(profile, sizeof profile, "%s/profile", dir);
    ck_assert_int_eq(test_write_file(path, html, strlen(html)), 0);
    char *dom = render(path, profile);
    snprintf(expected, sizeof expected,
             "<p id=\"links\">%zu cells linked to %zu instructions</p>",
             cells, insns);
    ck_assert_msg(strstr(dom, expected) != NULL, "the browser shows no %s",
                  expected);
    ck_assert_ptr_nonnull(strstr(dom, "<tr class=\"chosen\"><td class=\"range\""
                                      " rowspan=\"2\">[0x1007,0x1009)</td>"));
    ck_assert_ptr_nonnull(strstr(dom, "lookup PC 0x1007 falls here"));
    ck_assert_int_eq((int)count(dom, "<tr id=\"i"), 26); /* 4 CIE + 22 FDE */
    free(dom);
    free(html);
    free(dir);
    test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Tracing changes nothing                                              */
/* ------------------------------------------------------------------ */

struct counting_sink {
    size_t events;
    uint64_t checksum; /* so that the events' fields are read */
};

static void count_insn(void *env, const struct sem_trace_insn *e)
{
    struct counting_sink *s = env;
    s->events++;
    s->checksum += e->section_offset + e->len + e->depth;
}

static void count_range(void *env, const struct sem_range *r)
{
    ((struct counting_sink *)env)->checksum += r->begin;
}

static void count_lookup(void *env, const struct sem_trace_lookup *e)
{
    ((struct counting_sink *)env)->checksum += e->lookup_pc;
}

static void count_cfa(void *env, const struct sem_trace_cfa *e)
{
    ((struct counting_sink *)env)->checksum += e->value;
}

static void count_reg(void *env, const struct sem_trace_reg *e)
{
    ((struct counting_sink *)env)->checksum += e->reg + e->caller_value;
}

static void count_op(void *env, const struct sem_trace_op *e)
{
    struct counting_sink *s = env;
    s->checksum += e->at + e->depth;
    if (e->depth)
        s->checksum += e->stack[e->depth - 1];
}

/* State k of 4: innermost or caller frame, all registers known or only
 * rsp, rbp and rip. */
static void make_state(unsigned k, uint64_t pc, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    uint64_t rsp = 0x7ffe0000u + 0x100u * k;
    if (k < 2)
        for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
            cfi_regs_set(regs, reg, engine_mix(pc ^ (reg * 977u + k)));
    cfi_regs_set(regs, CFI_REG_RSP, rsp);
    cfi_regs_set(regs, CFI_REG_RBP, rsp + 0x80);
    cfi_regs_set(regs, CFI_REG_RIP, pc);
}

static void same_frame(const struct cfi_frame *a, const struct cfi_frame *b,
                       uint64_t pc, unsigned k)
{
    ck_assert_msg(a->status == b->status, "pc 0x%" PRIx64 " state %u: status"
                  " %d traced, %d untraced", pc, k, a->status, b->status);
    if (a->status != CFI_OK) {
        ck_assert_msg(a->diag.message == b->diag.message &&
                      a->diag.offset == b->diag.offset &&
                      a->diag.reg == b->diag.reg,
                      "pc 0x%" PRIx64 " state %u: diagnostics differ", pc, k);
        return;
    }
    ck_assert_msg(a->cfa == b->cfa && a->signal_frame == b->signal_frame,
                  "pc 0x%" PRIx64 " state %u: cfa differs", pc, k);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        ck_assert_msg(a->caller.status[reg] == b->caller.status[reg] &&
                      (a->caller.status[reg] != CFI_REG_VALUE ||
                       a->caller.value[reg] == b->caller.value[reg]),
                      "pc 0x%" PRIx64 " state %u: register %u differs", pc, k,
                      reg);
}

/* Row number `row` of the file, in state row % 4: each row once, the
 * four states in turn (a traced unwind translates the FDE again). */
static void check_traced_row(const struct sem_file_il *il, size_t index,
                             uint64_t begin, size_t row,
                             struct cfi_memory memory,
                             struct counting_sink *sink)
{
    const struct sem_trace trace = {sink, count_insn, count_range,
                                    count_lookup, count_cfa, count_reg,
                                    count_op};
    unsigned k = (unsigned)(row % 4);
    struct cfi_regs regs;
    bool caller = k & 1;
    uint64_t pc = caller ? begin + 1 : begin;
    make_state(k, pc, &regs);
    struct cfi_request request = {pc, caller, &regs, memory, 0};
    struct cfi_frame untraced, traced;
    memset(&untraced, 0, sizeof untraced);
    memset(&traced, 0, sizeof traced);
    sem_unwind(il, &request, &untraced);
    struct sem_arena *arena = sem_arena_new();
    const struct cfi_fde *fde = cfi_file_lookup(il->file, begin);
    ck_assert_ptr_eq(fde, &il->file->fdes[index]);
    sem_unwind_fde_traced(fde, &request, arena, &traced, &trace);
    sem_arena_free(arena);
    same_frame(&traced, &untraced, pc, k);
}

START_TEST(test_tracing_changes_nothing)
{
    char *libc = test_system_lib("libc.so.6");
    ck_assert_ptr_nonnull(libc);
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(libc, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    struct engine_memory *memory = engine_memory_new(true, 7);
    ck_assert_int_eq(engine_memory_map_file(memory, file), CFI_OK);
    struct counting_sink sink = {0};
    size_t rows = 0;
    for (size_t i = 0; i < il->nfdes; i++) {
        if (il->status[i] != CFI_OK ||
            cfi_file_lookup(file, file->fdes[i].pc_begin) != &file->fdes[i])
            continue;
        for (size_t r = 0; r < il->fdes[i].nranges; r++, rows++)
            check_traced_row(il, i, il->fdes[i].ranges[r].begin, rows,
                             engine_memory_reader(memory), &sink);
    }
    ck_assert_msg(rows > 20000, "only %zu rows in libc", rows);
    ck_assert_msg(sink.events > rows, "the sink was told nothing");
    engine_memory_free(memory);
    sem_file_il_free(il);
    cfi_file_close(file);
    free(libc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* explain's result is unwind's                                         */
/* ------------------------------------------------------------------ */

/* Under ASan each cfisem process costs ~0.2 s on libc: fewer rows there. */
#if defined(__SANITIZE_ADDRESS__)
#define SAMPLED_ROWS 12
#else
#define SAMPLED_ROWS 48
#endif

static void compare_with_unwind(const char *libc, uint64_t begin, unsigned k)
{
    bool caller = k & 1;
    char pc[32], regs[160];
    snprintf(pc, sizeof pc, "0x%" PRIx64, caller ? begin + 1 : begin);
    if (k < 2)
        snprintf(regs, sizeof regs, "rsp=0x7ffe%04x,rbp=0x7ffe8000,rbx=0x%x,"
                 "r12=0x%x", 0x1000 + 0x100 * k, k + 1, k + 2);
    else
        snprintf(regs, sizeof regs, "rsp=0x7ffe%04x", 0x1000 + 0x100 * k);
    char seed[8];
    snprintf(seed, sizeof seed, "%u", k);
    const char *explain[] = {"explain", libc, "--pc", pc, "--regs", regs,
                             "--mem-seed", seed, caller ? "--caller" : NULL,
                             NULL};
    const char *unwind[] = {"unwind", libc, "--pc", pc, "--regs", regs,
                            "--mem-seed", seed, "--engine", "il",
                            caller ? "--caller" : NULL, NULL};
    struct test_run e, u;
    test_run_cfisem(explain, &e);
    test_run_cfisem(unwind, &u);
    const char *result = strstr(e.out, "== 5. The result\n");
    ck_assert_msg(result != NULL, "pc %s: no result section", pc);
    result += strlen("== 5. The result\n");
    ck_assert_msg(!strcmp(result, u.out), "pc %s state %u:\nexplain:\n%s"
                  "unwind:\n%s", pc, k, result, u.out);
    ck_assert_int_eq(e.exit_code, u.exit_code);
    test_run_free(&e);
    test_run_free(&u);
}

START_TEST(test_result_is_unwinds)
{
    char *libc = test_system_lib("libc.so.6");
    ck_assert_ptr_nonnull(libc);
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(libc, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    size_t total = 0;
    for (size_t i = 0; i < il->nfdes; i++)
        total += il->fdes[i].nranges;
    size_t step = total / SAMPLED_ROWS, seen = 0;
    for (size_t i = 0; i < il->nfdes; i++)
        for (size_t r = 0; r < il->fdes[i].nranges; r++, seen++)
            if (seen % step == 0)
                for (unsigned k = 0; k < 4; k++)
                    compare_with_unwind(libc, il->fdes[i].ranges[r].begin, k);
    sem_file_il_free(il);
    cfi_file_close(file);
    free(libc);
}
END_TEST

/* Whether the golden case gives --regs (then there is a result). */
static bool has_regs(const struct golden *g)
{
    for (size_t i = 0; g->args[i]; i++)
        if (!strcmp(g->args[i], "--regs"))
            return true;
    return false;
}

static const struct diff_json *at(const struct diff_json *v, const char *path)
{
    char key[64];
    while (v && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        v = diff_json_member(v, key);
        path += n + (path[n] == '.');
    }
    ck_assert_msg(v != NULL, "no member %s", path);
    return v;
}

/* The row's rules as data are the IL's row: the CFA column's data is the
 * chosen row's "il" cfa (cfa=reg+offset in these cases, or an expression). */
static void assert_rule_data(const struct diff_json *j)
{
    const struct diff_json *row = at(j, "row");
    if (row->kind == DIFF_JSON_NULL)
        return;
    uint64_t index;
    ck_assert(diff_json_u64(at(row, "index"), &index));
    const struct diff_json *rows = at(j, "rows");
    ck_assert_uint_lt(index, rows->count);
    const struct diff_json *il_cfa = at(&rows->elements[index], "il.cfa");
    const struct diff_json *data = at(&at(row, "columns")->elements[0], "data");
    ck_assert_str_eq(diff_json_text(at(&at(row, "columns")->elements[0],
                                       "column")), "cfa");
    int64_t a, b;
    if (diff_json_member(il_cfa, "reg")) {
        ck_assert(diff_json_i64(at(il_cfa, "offset"), &a) &&
                  diff_json_i64(at(data, "offset"), &b));
        ck_assert_int_eq(a, b);
    } else {
        ck_assert_str_eq(diff_json_text(at(il_cfa, "expr")),
                         diff_json_text(at(data, "expr")));
    }
}

/* explain --format json gave the result as text only; now result.frame
 * is the object `unwind --engine il --json` prints, byte for byte but for
 * the schema_version that opens a top-level object only (CFA, each
 * register's status and value; the error, its register and offset), and
 * every rule is also data as `il --format json` writes it. */
START_TEST(test_explain_json_result_is_unwind_json)
{
    const struct golden *g = &goldens[_i];
    struct test_run run, unwind;
    char *out = run_golden(g, "json", &run);
    ck_assert_int_eq(run.exit_code, g->exit_code);
    struct diff_json_error error;
    struct diff_json *j = diff_json_parse(run.out, run.out_len, &error);
    ck_assert_msg(j != NULL, "%s: not JSON: %s at %zu", g->name, error.message,
                  error.offset);
    assert_rule_data(j);
    const struct diff_json *frame = at(j, "result.frame");
    if (!has_regs(g)) {
        ck_assert_int_eq(frame->kind, DIFF_JSON_NULL);
    } else {
        char *path = case_path(g);
        const char *args[16] = {"unwind", path, "--engine", "il", "--json"};
        size_t n = 5;
        for (size_t i = 0; g->args[i]; i++)
            args[n++] = g->args[i];
        test_run_cfisem(args, &unwind);
        ck_assert_int_eq(unwind.exit_code, run.exit_code);
        ck_assert(unwind.out_len > 1 && unwind.out[unwind.out_len - 1] == '\n');
        unwind.out[unwind.out_len - 1] = '\0';
        static const char version[] = "{\"schema_version\": 1, ";
        ck_assert_msg(!strncmp(unwind.out, version, strlen(version)), "%s",
                      unwind.out);
        char *expected = malloc(unwind.out_len + 16);
        sprintf(expected, "\"frame\": {%s}", unwind.out + strlen(version));
        ck_assert_msg(strstr(run.out, expected), "%s: no %s", g->name,
                      expected);
        const char *status = diff_json_text(at(j, "result.status"));
        if (!strcmp(status, "ok")) {
            ck_assert_int_eq(at(frame, "error")->kind, DIFF_JSON_NULL);
        } else {
            ck_assert_str_eq(diff_json_text(at(frame, "error")), status);
            ck_assert(diff_json_member(frame, "offset") != NULL);
        }
        free(expected);
        free(path);
        test_run_free(&unwind);
    }
    diff_json_free(j);
    free(out);
    test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The html page: its layout, its machine code, its frame               */
/* ------------------------------------------------------------------ */

/* What the browser measured: the page's width against the window's
 * (clientWidth leaves out the vertical scroll bar, innerWidth has it),
 * where the table of rows ends and whether it scrolls in its box. */
struct layout {
    long scroll_width, client_width, inner_width;
    long rows_right, rows_scroll_width, rows_client_width;
};

static const char measure_script[] =
    "<p id=\"layout\"></p><script>(function () {\n"
    "  var d = document.documentElement, rows = document.getElementById('rows');\n"
    "  var r = rows.getBoundingClientRect();\n"
    "  document.getElementById('layout').textContent = 'layout ' +\n"
    "    [d.scrollWidth, d.clientWidth, window.innerWidth, Math.ceil(r.right),\n"
    "     rows.scrollWidth, rows.clientWidth].join(' ');\n"
    "})();</script>\n</body>";

/* Lays the page out at `width` pixels: a screenshot beside it in `dir`
 * (page_WIDTH.png), and the measures of a copy with measure_script. */
static struct layout lay_out_at(const char *html, const char *dir, int width)
{
    char *measured = replace_all(html, "</body>", measure_script);
    char path[4200], profile[4200], options[4400];
    snprintf(path, sizeof path, "%s/measured.html", dir);
    snprintf(profile, sizeof profile, "%s/profile", dir);
    ck_assert_int_eq(test_write_file(path, measured, strlen(measured)), 0);
    snprintf(options, sizeof options, "--window-size=%d,2400 "
             "--hide-scrollbars --screenshot=%s/page_%d.png", width, dir, width);
    char *ignored = chromium(path, profile, options);
    snprintf(options, sizeof options, "%s/page_%d.png", dir, width);
    ck_assert_msg(access(options, R_OK) == 0, "no screenshot %s", options);
    snprintf(options, sizeof options, "--window-size=%d,2400 --dump-dom",
             width);
    char *dom = chromium(path, profile, options);
    struct layout l;
    const char *p = strstr(dom, "<p id=\"layout\">layout ");
    ck_assert_msg(p && sscanf(p + strlen("<p id=\"layout\">layout "),
                              "%ld %ld %ld %ld %ld %ld", &l.scroll_width,
                              &l.client_width, &l.inner_width, &l.rows_right,
                              &l.rows_scroll_width, &l.rows_client_width) == 6,
                  "the page was not measured at %d px", width);
    fprintf(stderr, "html at %d px: scrollWidth %ld, clientWidth %ld, "
            "innerWidth %ld; the rows end at %ld, scroll %ld of %ld\n", width,
            l.scroll_width, l.client_width, l.inner_width, l.rows_right,
            l.rows_scroll_width, l.rows_client_width);
    free(dom);
    free(ignored);
    free(measured);
    return l;
}

/* The page fits a 1280-pixel screen: the page does not scroll sideways
 * and the table of rows is wholly in view (it used to end at about
 * 1500 px, cut off by its box). At 800 px the page still does not scroll
 * sideways: a table wider than that scrolls in its own box. */
START_TEST(test_html_fits_the_window)
{
    struct test_run run;
    char *html = run_golden(&goldens[1], "html", &run);
    ck_assert_int_eq(run.exit_code, 0);
    char *dir = test_temp_dir();
    struct layout wide = lay_out_at(html, dir, 1280);
    ck_assert_int_le(wide.scroll_width, wide.client_width);
    ck_assert_int_le(wide.client_width, wide.inner_width);
    ck_assert_int_le(wide.rows_right, wide.client_width);
    ck_assert_int_le(wide.rows_scroll_width, wide.rows_client_width);
    struct layout narrow = lay_out_at(html, dir, 800);
    ck_assert_int_le(narrow.scroll_width, narrow.client_width);
    ck_assert_int_le(narrow.rows_right, narrow.client_width);
    fprintf(stderr, "screenshots in %s\n", dir);
    free(dir);
    free(html);
    test_run_free(&run);
}
END_TEST

/* A table of rows wider than 1280 px (all_rules.S: 13 register columns)
 * scrolls inside its own box, which ends in the window: the page does
 * not scroll sideways, at 1280 px nor at 800. */
START_TEST(test_html_wide_table_scrolls_in_its_box)
{
    struct test_run run;
    char *html = run_golden(&goldens[0], "html", &run);
    ck_assert_int_eq(run.exit_code, 0);
    char *dir = test_temp_dir();
    for (int width = 1280; width >= 800; width -= 480) {
        struct layout l = lay_out_at(html, dir, width);
        ck_assert_int_le(l.scroll_width, l.client_width);
        ck_assert_int_le(l.rows_right, l.client_width);
        ck_assert_int_gt(l.rows_scroll_width, l.rows_client_width);
    }
    fprintf(stderr, "screenshots in %s\n", dir);
    free(dir);
    free(html);
    test_run_free(&run);
}
END_TEST

/* The page's DOM in Chromium, for goldens[index] (or `so` with args). */
static char *rendered(const char *html)
{
    char *dir = test_temp_dir();
    char path[4200], profile[4200];
    snprintf(path, sizeof path, "%s/page.html", dir);
    snprintf(profile, sizeof profile, "%s/profile", dir);
    ck_assert_int_eq(test_write_file(path, html, strlen(html)), 0);
    char *dom = render(path, profile);
    free(dir);
    return dom;
}

/* The machine code of remember.S (its comments give each address) sits
 * in the table of rows, each instruction on the row in effect at its
 * address; the lookup PC's instruction is marked. */
START_TEST(test_html_machine_code)
{
    struct test_run run;
    char *html = run_golden(&goldens[1], "html", &run);
    char *dom = rendered(html);
    ck_assert_int_eq((int)count(dom, "<td class=\"addr\">0x"), 10);
    ck_assert_int_eq((int)count(dom, "id=\"lookup-insn\""), 1);
    ck_assert_ptr_nonnull(strstr(dom,
        "[0x1007,0x1009)</td><td class=\"addr\">0x1007</td>"
        "<td class=\"insn lookup\" id=\"lookup-insn\">nop "));
    ck_assert_ptr_nonnull(strstr(dom,
        "<tr class=\"chosen\"><td class=\"addr\">0x1008</td>"
        "<td class=\"insn\">pop rbx</td></tr>"));
    ck_assert_ptr_nonnull(strstr(dom,
        "[0x1001,0x1004)</td><td class=\"addr\">0x1001</td>"
        "<td class=\"insn\">mov rbp, rsp</td>"));
    ck_assert_ptr_null(strstr(dom, "id=\"no-code\""));
    free(dom);
    free(html);
    test_run_free(&run);
}
END_TEST

/* With --caller the lookup PC is PC-1, and the instruction holding it is
 * the one marked: f1's ret at 0x1010 (prologue.S), not f2's first
 * instruction at the PC 0x1011. */
START_TEST(test_html_machine_code_caller)
{
    struct test_run run;
    char *html = run_golden(&goldens[3], "html", &run);
    const char *mark = strstr(html, "id=\"lookup-insn\">");
    ck_assert_ptr_nonnull(mark);
    ck_assert_int_eq((int)count(html, "id=\"lookup-insn\""), 1);
    ck_assert_ptr_nonnull(strstr(mark, "id=\"lookup-insn\">ret <span"));
    ck_assert_ptr_nonnull(strstr(mark, "lookup PC 0x1010<"));
    free(html);
    test_run_free(&run);
}
END_TEST

/* An AArch64 page names the file's registers (x30, ra_sign_state, the
 * callee's sp) and lists the FDE's AArch64 code beside the rows: the
 * paciasp and autiasp hints, the pair stores, and the lookup PC's
 * instruction (the second exit's ldp, cases-aarch64/remember_negate.S). */
START_TEST(test_html_aarch64)
{
    struct test_run run;
    char *html = run_golden(&goldens[AARCH64_GOLDEN], "html", &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(html, "<th>ra_sign_state</th>"));
    ck_assert_ptr_nonnull(strstr(html, "<th>x30</th>"));
    ck_assert_ptr_nonnull(strstr(html, "callee's sp"));
    ck_assert_ptr_null(strstr(html, "rsp"));
    ck_assert_int_eq((int)count(html, "class=\"insn"), 9);
    ck_assert_int_eq((int)count(html, "hint #0x19"), 1);
    ck_assert_int_eq((int)count(html, "hint #0x1d"), 2);
    const char *mark = strstr(html, "id=\"lookup-insn\">");
    ck_assert_ptr_nonnull(mark);
    ck_assert_ptr_nonnull(
        strstr(mark, "id=\"lookup-insn\">ldp x29, x30, [sp], #0x10 <span"));
    ck_assert_ptr_nonnull(strstr(mark, "lookup PC 0x1018<"));
    free(html);
    test_run_free(&run);
}
END_TEST

/* The JSON says how the caller's PC was found only where it is another
 * column's value: on AArch64 (x30, stripped when RA_SIGN_STATE says
 * signed), never on x86-64 (rip is both). */
START_TEST(test_json_caller_pc)
{
    const struct golden *g = &goldens[_i];
    struct test_run run;
    char *out = run_golden(g, "json", &run);
    struct diff_json_error error;
    struct diff_json *j = diff_json_parse(out, strlen(out), &error);
    ck_assert_ptr_nonnull(j);
    const struct diff_json *evaluation = diff_json_member(j, "evaluation");
    const struct diff_json *caller_pc =
        evaluation && evaluation->kind != DIFF_JSON_NULL
            ? diff_json_member(evaluation, "caller_pc") : NULL;
    bool aarch64 = !strcmp(g->dir, "cases-aarch64");
    ck_assert_int_eq(caller_pc != NULL, aarch64);
    if (caller_pc && !strcmp(g->so, "pac_ret_b_key"))
        ck_assert_ptr_nonnull(strstr(diff_json_text(caller_pc),
                                     "with the B key"));
    if (caller_pc && !strcmp(g->so, "frame_pointer"))
        ck_assert_ptr_nonnull(strstr(diff_json_text(caller_pc),
                                     "RA_SIGN_STATE is 0, not signed"));
    diff_json_free(j);
    free(out);
    test_run_free(&run);
}
END_TEST

/* A .debug_frame-only object (a relocatable: no loaded segment holds
 * its code) has no bytes to list: the page says so. */
START_TEST(test_html_no_machine_code)
{
    char *object = test_build_path("corpus/objects/debug_frame.o");
    struct test_run run;
    test_run_cfisem((const char *[]){"explain", object, "--pc", "0x1",
                                     "--format", "html", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "<p id=\"no-code\">The machine code"
                                          " is not shown: the file holds no"
                                          " bytes at [0x0,0x3)"));
    ck_assert_int_eq((int)count(run.out, "class=\"insn"), 0);
    test_run_free(&run);
    free(object);
}
END_TEST

/* The frame drawn: one slot per register the chosen row saves at a CFA
 * offset (explain's JSON: the row's columns whose rule is "offset"), at
 * that offset, the return address's among them; the CFA and the
 * callee's stack pointer marked with their values. */
START_TEST(test_html_frame)
{
    const struct golden *g = &goldens[_i];
    struct test_run run, json_run;
    char *html = run_golden(g, "html", &run);
    char *json = run_golden(g, "json", &json_run);
    struct diff_json_error error;
    struct diff_json *j = diff_json_parse(json, strlen(json), &error);
    ck_assert_ptr_nonnull(j);
    char *dom = rendered(html);
    const struct diff_json *columns = at(j, "row.columns");
    size_t saved = 0, ras = 0;
    for (size_t i = 0; i < columns->count; i++) {
        const struct diff_json *c = &columns->elements[i];
        const char *rule = diff_json_text(diff_json_member(at(c, "data"),
                                                           "rule"));
        if (!rule || strcmp(rule, "offset"))
            continue;
        int64_t offset;
        ck_assert(diff_json_i64(at(c, "data.offset"), &offset));
        const char *name = diff_json_text(at(c, "column"));
        bool ra = !strcmp(name, "rip");
        char slot[128];
        snprintf(slot, sizeof slot, "<g class=\"slot%s\" data-column=\"%s\" "
                 "data-offset=\"%" PRId64 "\">", ra ? " ra" : "", name, offset);
        ck_assert_msg(strstr(dom, slot), "%s: no %s", g->name, slot);
        saved++;
        ras += ra;
    }
    ck_assert_int_eq((int)ras, 1);
    ck_assert_int_eq((int)count(dom, "<g class=\"slot"), (int)saved);
    ck_assert_int_eq((int)count(dom, "<g class=\"slot ra\""), 1);
    const char *cfa = diff_json_text(at(j, "evaluation.cfa.value"));
    char mark[96];
    snprintf(mark, sizeof mark, "CFA = %s (", cfa);
    ck_assert_msg(strstr(dom, mark), "%s: no %s", g->name, mark);
    ck_assert_ptr_nonnull(strstr(dom, "<g class=\"sp\">"));
    diff_json_free(j);
    free(dom);
    free(json);
    free(html);
    test_run_free(&json_run);
    test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The command line                                                     */
/* ------------------------------------------------------------------ */

START_TEST(test_help)
{
    struct test_run run;
    test_run_cfisem((const char *[]){"--help", NULL}, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "  explain "));
    test_run_free(&run);
    test_run_cfisem((const char *[]){"explain", "--help", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "usage: cfisem explain FILE"));
    test_run_free(&run);
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

START_TEST(test_usage_errors)
{
    char *so = case_path(&goldens[1]);
    expect_usage((const char *[]){"explain", so, NULL}, "missing --pc");
    expect_usage((const char *[]){"explain", "--pc", "0x1000", NULL},
                 "missing FILE");
    expect_usage((const char *[]){"explain", so, "--pc", "0x1000", "--regs",
                                  "rfoo=1", NULL},
                 "bad register list");
    expect_usage((const char *[]){"explain", so, "--pc", "0x1000", "--format",
                                  "pdf", NULL},
                 "unknown format");
    expect_usage((const char *[]){"explain", so, "--pc", NULL},
                 "missing value for --pc");
    free(so);
}
END_TEST

START_TEST(test_bad_file)
{
    char *src = test_src_path("corpus/explain/all_rules.S");
    struct test_run run;
    test_run_cfisem((const char *[]){"explain", src, "--pc", "0", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_int_eq((int)test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, src));
    test_run_free(&run);
    free(src);
}
END_TEST

START_TEST(test_no_fde)
{
    char *so = case_path(&goldens[1]);
    struct test_run run;
    test_run_cfisem((const char *[]){"explain", so, "--pc", "0x9000", "--regs",
                                     "rsp=0x1000", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "No FDE covers 0x9000"));
    ck_assert_ptr_nonnull(strstr(run.out, "error: no_fde: no FDE covers the"
                                          " address\n"));
    test_run_free(&run);
    free(so);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("explain");
    TCase *tc = tcase_create("explain");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_golden_text, 0, (int)NGOLDENS);
    tcase_add_loop_test(tc, test_golden_json, 0, (int)NGOLDENS);
    tcase_add_loop_test(tc, test_explain_json_result_is_unwind_json, 0,
                        (int)NGOLDENS);
    tcase_add_loop_test(tc, test_golden_formats, 0, (int)NFORMAT_GOLDENS);
    tcase_add_test(tc, test_error_on_stderr);
    tcase_add_test(tc, test_html_in_a_browser);
    tcase_add_test(tc, test_html_fits_the_window);
    tcase_add_test(tc, test_html_wide_table_scrolls_in_its_box);
    tcase_add_test(tc, test_html_machine_code);
    tcase_add_test(tc, test_html_machine_code_caller);
    tcase_add_test(tc, test_html_no_machine_code);
    tcase_add_test(tc, test_html_aarch64);
    tcase_add_loop_test(tc, test_json_caller_pc, 0, (int)NGOLDENS);
    tcase_add_loop_test(tc, test_html_frame, 0, 3);
    tcase_add_test(tc, test_colour_on_a_terminal);
    tcase_add_test(tc, test_tracing_changes_nothing);
    tcase_add_test(tc, test_result_is_unwinds);
    tcase_add_test(tc, test_help);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_bad_file);
    tcase_add_test(tc, test_no_fde);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
