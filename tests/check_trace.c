/* SPDX-License-Identifier: MIT */
/* check_trace.c — trace/: the CFI checked against executions. The suite
 * builds its programs (tests/trace/) into a temporary folder: correct CFI
 * from gcc and clang at several levels, with and without frame pointers,
 * must give no mismatch; each deliberately wrong .S must be caught at its
 * exact range (its labels, read back with nm) and kind; signals, longjmp,
 * a crash, an early exit and a program that never ends are followed and
 * reported. */
#include <check.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"
#include "trace/internal.h"
#include "trace/rsp.h"
#include "trace/trace.h"

/* The programs' folder, built once by the unchecked fixture. */
static char *programs;

static int shell(const char *command)
{
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *program_path(const char *name)
{
    char *path = malloc(strlen(programs) + strlen(name) + 2);
    sprintf(path, "%s/%s", programs, name);
    return path;
}

/* Builds NAME from the listed sources of tests/trace with CC FLAGS. */
static void build(const char *cc, const char *flags, const char *name,
                  const char *sources)
{
    char *src = test_src_path("tests/trace");
    char command[4096];
    char list[1024] = "";
    char copy[512];
    snprintf(copy, sizeof copy, "%s", sources);
    for (char *s = strtok(copy, " "); s; s = strtok(NULL, " ")) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, " %s/%s", src, s);
    }
    snprintf(command, sizeof command, "%s %s -o %s/%s%s", cc, flags, programs,
             name, list);
    if (shell(command) != 0)
        fprintf(stderr, "check_trace: cannot build: %s\n", command);
    free(src);
}

#define A64_CC "aarch64-linux-gnu-gcc"

#define FREESTANDING "-static -nostdlib -ffreestanding -fno-builtin " \
                     "-fno-stack-protector -fasynchronous-unwind-tables"

static const struct variant {
    const char *name, *cc, *flags;
} variants[] = {
    {"good-gcc-O0", "gcc", "-O0"},
    {"good-gcc-O2", "gcc", "-O2"},
    {"good-gcc-O2-fp", "gcc", "-O2 -fno-omit-frame-pointer"},
    {"good-gcc-Os", "gcc", "-Os -fomit-frame-pointer"},
    {"good-clang-O0", "clang", "-O0"},
    {"good-clang-O2", "clang", "-O2 -fomit-frame-pointer"},
    {"good-clang-O2-fp", "clang", "-O2 -fno-omit-frame-pointer"},
};
enum { NVARIANTS = sizeof variants / sizeof variants[0] };

static void build_all(void)
{
    programs = test_temp_dir();
    for (int i = 0; i < NVARIANTS; i++) {
        char flags[256];
        snprintf(flags, sizeof flags, "%s %s", variants[i].flags, FREESTANDING);
        build(variants[i].cc, flags, variants[i].name, "start.S good.c");
    }
    build("cc", "-static -nostdlib", "bad",
          "start.S bad_main.S bad_cfa.S bad_ra.S bad_reg.S bad_undef.S no_fde.S");
    build("cc", "-O1 " FREESTANDING, "crash", "start.S crash.c");
    build("cc", "-O1 " FREESTANDING, "early", "start.S early.c");
    build("cc", "-O1 " FREESTANDING, "spin", "start.S spin.c");
    build("cc", "-O1 " FREESTANDING, "pause", "start.S pause.c");
    build("cc", "-O1 -static", "signal", "signal.c");
    build("g++", "-O1", "throw", "throw.cc");
    build("cc", "-O1", "vdso", "vdso.c");
    build("cc", "-static -nostdlib", "tail", "start.S tail.S");
    build("cc", "-O1 -static -pthread", "thread", "thread.c");
    build("cc", "-static -nostdlib", "probe", "start.S probe.S");
    build("cc", "-static -nostdlib -DSHIFT=0x100", "probe-prelinked",
          "start.S probe.S");
    build("cc", "-static -nostdlib -DBROKEN", "probe-broken", "start.S probe.S");
    build(A64_CC, "-static -nostdlib", "a64", "a64.S");
    build(A64_CC, "-static -nostdlib -DBAD_OFFSET", "a64-bad", "a64.S");
    build(A64_CC, "-static -nostdlib -DNO_RA_STATE", "a64-noras", "a64.S");
    build(A64_CC, "-static -nostdlib", "a64-svc", "a64_svc.S");
    build(A64_CC, "-O2 " FREESTANDING, "a64-signal", "a64_sys.S a64_signal.c");
    build(A64_CC, "-O2 -static", "a64-glibc", "a64_glibc.c");
    build(A64_CC, "-O2", "a64-dynamic", "a64_glibc.c");
}

static void remove_all(void)
{
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", programs);
    shell(command);
    free(programs);
}

/* The address of symbol `name` in `path` (nm), or 0. */
static uint64_t symbol(const char *path, const char *name)
{
    char command[1024];
    snprintf(command, sizeof command, "nm '%s'", path);
    FILE *in = popen(command, "r");
    ck_assert_ptr_nonnull(in);
    char line[512], sym[256], type[8];
    uint64_t addr, found = 0;
    while (fgets(line, sizeof line, in))
        if (sscanf(line, "%" SCNx64 " %7s %255s", &addr, type, sym) == 3 &&
            !strcmp(sym, name))
            found = addr;
    pclose(in);
    ck_assert_msg(found != 0, "no symbol %s in %s", name, path);
    return found;
}

static void trace(const char *name, struct trace_options *o,
                  struct trace_report *report)
{
    char *path = program_path(name);
    char *argv[] = {path, NULL};
    ck_assert_msg(access(path, X_OK) == 0, "%s was not built", path);
    ck_assert_int_eq(trace_run(argv, o, report), CFI_OK);
    free(path);
}

static void options_il_interp(struct trace_options *o)
{
    trace_options_default(o);
    o->engines[ENGINE_compiled] = false;
    o->timeout = 60;
}

/* ---- the decoder ------------------------------------------------------ */

START_TEST(test_insn_classify)
{
    static const struct {
        uint8_t bytes[4];
        size_t len;
        enum trace_insn insn;
    } cases[] = {
        {{0xe8, 0, 0, 0}, 4, TRACE_INSN_CALL},
        {{0xff, 0xd0}, 2, TRACE_INSN_CALL},        /* call *%rax */
        {{0x41, 0xff, 0xd3}, 3, TRACE_INSN_CALL},  /* call *%r11 */
        {{0xff, 0x15, 0, 0}, 4, TRACE_INSN_CALL},  /* call *rip(..) */
        {{0x3e, 0xff, 0xd0}, 3, TRACE_INSN_CALL},  /* notrack call */
        {{0xc3}, 1, TRACE_INSN_RET},
        {{0xf3, 0xc3}, 2, TRACE_INSN_RET},         /* rep ret */
        {{0xf2, 0xc3}, 2, TRACE_INSN_RET},         /* bnd ret */
        {{0xc2, 8, 0}, 3, TRACE_INSN_RET},
        {{0xe9, 0, 0, 0}, 4, TRACE_INSN_JMP},
        {{0xff, 0xe0}, 2, TRACE_INSN_JMP},         /* jmp *%rax */
        {{0x0f, 0x05}, 2, TRACE_INSN_SYSCALL},
        {{0xff, 0xc0}, 2, TRACE_INSN_OTHER},       /* inc %eax */
        {{0x48, 0x89, 0xe5}, 3, TRACE_INSN_OTHER}, /* mov %rsp,%rbp */
        {{0xff}, 1, TRACE_INSN_OTHER},             /* truncated */
        {{0}, 0, TRACE_INSN_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(trace_insn_classify(cases[i].bytes, cases[i].len) ==
                          cases[i].insn, "case %zu", i);
}
END_TEST

START_TEST(test_insn_call_ends_at)
{
    static const struct {
        uint8_t bytes[8];
        bool call;
    } cases[] = {
        {{0x90, 0x90, 0x90, 0xe8, 1, 2, 3, 4}, true},      /* call rel32 */
        {{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xd0}, true}, /* *%rax */
        {{0x90, 0x90, 0x90, 0x90, 0x90, 0x41, 0xff, 0xd3}, true}, /* *%r11 */
        {{0x90, 0x90, 0xff, 0x15, 1, 2, 3, 4}, true},      /* *rip+d32 */
        {{0x90, 0x90, 0x90, 0x90, 0xff, 0x54, 0x24, 8}, true}, /* *8(%rsp) */
        {{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0}, false}, /* jmp */
        {{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}, false},
        {{1, 0, 0, 0, 0, 0, 0, 0}, false},                  /* argc */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(trace_insn_call_ends_at(cases[i].bytes, 8) ==
                          cases[i].call, "case %zu", i);
}
END_TEST

/* ---- correct CFI: no mismatch --------------------------------------- */

START_TEST(test_correct_cfi)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace(variants[_i].name, &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    /* Every instruction after _start's call is in a live frame. */
    ck_assert_uint_gt(r.stops_checked, 200);
    ck_assert_uint_ge(r.stops_checked + 16, r.instructions);
    ck_assert_uint_ge(r.max_depth, 3); /* _start, main, a callee, leaf */
    for (size_t i = 0; i < r.ngroups; i++)
        ck_assert_msg(0, "%s: %s at 0x%" PRIx64, variants[_i].name,
                      trace_kind_text(r.groups[i].kind), r.groups[i].pc);
    ck_assert_uint_eq(r.engines[ENGINE_il].mismatch, 0);
    ck_assert_uint_eq(r.engines[ENGINE_interp].mismatch, 0);
    ck_assert_uint_eq(r.engines[ENGINE_il].agree, r.stops_checked);
    ck_assert_uint_eq(r.engines[ENGINE_interp].agree, r.stops_checked);
    trace_report_free(&r);
}
END_TEST

/* The compiled engine too (its eh_elf built into a temporary cache). */
START_TEST(test_correct_cfi_compiled)
{
    struct trace_options o;
    options_il_interp(&o);
    o.engines[ENGINE_compiled] = true;
    char *cache = test_temp_dir();
    o.cache_dir = cache;
    struct trace_report r;
    trace("good-gcc-O2", &o, &r);
    ck_assert_uint_eq(r.nopen_errors, 0);
    ck_assert_uint_gt(r.stops_checked, 200);
    ck_assert_uint_eq(r.engines[ENGINE_compiled].agree, r.stops_checked);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", cache);
    shell(command);
    free(cache);
}
END_TEST

/* ---- wrong CFI: caught at its range and kind ------------------------- */

static const struct trace_group *find(const struct trace_report *r,
                                      enum trace_kind kind, int reg,
                                      uint64_t first)
{
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].kind == kind && r->groups[i].pc_first == first &&
            (reg == -2 || r->groups[i].reg == reg))
            return &r->groups[i];
    return NULL;
}

static void expect_group(const struct trace_report *r, const char *path,
                         enum trace_kind kind, int reg, const char *first,
                         const char *last)
{
    uint64_t begin = symbol(path, first), end = symbol(path, last);
    const struct trace_group *g = find(r, kind, reg, begin);
    ck_assert_msg(g != NULL, "no %s group at %s (0x%" PRIx64 ")",
                  trace_kind_name(kind), first, begin);
    ck_assert_msg(g->pc_last == end, "%s group at %s ends at 0x%" PRIx64
                  ", not %s (0x%" PRIx64 ")", trace_kind_name(kind), first,
                  g->pc_last, last, end);
    if (kind != TRACE_KIND_no_fde) {
        ck_assert(g->engines[ENGINE_il]);
        ck_assert(g->engines[ENGINE_interp]);
        ck_assert_ptr_nonnull(g->row_il);
    }
}

START_TEST(test_wrong_cfi_caught)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace("bad", &o, &r);
    char *path = program_path("bad");
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 0);
    expect_group(&r, path, TRACE_KIND_cfa, -1, "bad_cfa_first", "bad_cfa_last");
    expect_group(&r, path, TRACE_KIND_ra, CFI_REG_RIP, "bad_ra_first",
                 "bad_ra_last");
    expect_group(&r, path, TRACE_KIND_reg, CFI_REG_RBX, "bad_reg_first",
                 "bad_reg_last");
    expect_group(&r, path, TRACE_KIND_ra_undefined, CFI_REG_RIP, "bad_undef",
                 "bad_undef_last");
    expect_group(&r, path, TRACE_KIND_no_fde, -1, "no_fde", "no_fde_last");
    /* Nothing else: main's and _start's CFI are right. */
    uint64_t low = symbol(path, "bad_cfa"), high = symbol(path, "no_fde_last");
    const char *functions[] = {"bad_cfa", "bad_ra", "bad_reg", "bad_undef",
                               "no_fde"};
    for (size_t i = 0; i < r.ngroups; i++) {
        const struct trace_group *g = &r.groups[i];
        bool inside = false;
        for (size_t f = 0; f < 5; f++) {
            uint64_t at = symbol(path, functions[f]);
            inside |= g->pc_first >= at && g->pc_last < at + 16;
        }
        ck_assert_msg(inside && g->pc_first >= low && g->pc_last <= high,
                      "unexpected %s group at 0x%" PRIx64,
                      trace_kind_name(g->kind), g->pc_first);
    }
    free(path);
    trace_report_free(&r);
}
END_TEST

/* --at rows: only row boundaries are seen. Of the wrong functions, the
 * ones wrong at a row's first address are caught there (bad_ra's second
 * row, bad_undef's only row); the others are wrong inside rows only. */
START_TEST(test_rows_wrong_cfi)
{
    struct trace_options o;
    options_il_interp(&o);
    o.at = TRACE_AT_ROWS;
    struct trace_report r;
    trace("bad", &o, &r);
    char *path = program_path("bad");
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    expect_group(&r, path, TRACE_KIND_ra, CFI_REG_RIP, "bad_ra_first",
                 "bad_ra_first");
    expect_group(&r, path, TRACE_KIND_ra_undefined, CFI_REG_RIP, "bad_undef",
                 "bad_undef");
    for (size_t i = 0; i < r.ngroups; i++)
        ck_assert_msg(r.groups[i].pc_first == symbol(path, "bad_ra_first") ||
                      r.groups[i].pc_first == symbol(path, "bad_undef"),
                      "unexpected %s group at 0x%" PRIx64,
                      trace_kind_name(r.groups[i].kind), r.groups[i].pc_first);
    free(path);
    trace_report_free(&r);
}
END_TEST

START_TEST(test_rows_correct_cfi)
{
    struct trace_options o;
    options_il_interp(&o);
    o.at = TRACE_AT_ROWS;
    struct trace_report r;
    trace(variants[_i].name, &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_uint_gt(r.stops_checked, 10);
    ck_assert_uint_lt(r.instructions, 2000); /* stops, not steps */
    ck_assert_uint_eq(r.ngroups, 0);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

/* The reproducer line of a group gives the same wrong answer offline. */
START_TEST(test_reproducer_offline)
{
    char *dumps = test_temp_dir();
    char *path = program_path("bad");
    char json_path[512];
    snprintf(json_path, sizeof json_path, "%s/report.json", dumps);
    const char *args[] = {"trace", "--engines", "il", "--dumps", dumps,
                          "--json", json_path, "--", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 1); /* mismatches */
    ck_assert_ptr_nonnull(strstr(run.out, "CFA wrong"));
    test_run_free(&run);
    char *json = test_read_file(json_path, NULL);
    ck_assert_ptr_nonnull(json);
    /* The first group of kind cfa, its "got" and its reproducer. */
    char *group = strstr(json, "\"kind\": \"cfa\"");
    ck_assert_ptr_nonnull(group);
    char *got = strstr(group, "\"got\": \"");
    char *line = strstr(group, "\"reproducer\": \"");
    ck_assert_ptr_nonnull(got);
    ck_assert_ptr_nonnull(line);
    uint64_t got_cfa = strtoull(got + 8, NULL, 16);
    line += strlen("\"reproducer\": \"cfisem ");
    *strchr(line, '"') = 0;
    char command[8192];
    snprintf(command, sizeof command, "%s %s --json > %s/out.json",
             getenv("CFISEM") ? getenv("CFISEM") : "build/cfisem", line, dumps);
    ck_assert_int_eq(shell(command), 0);
    char out_path[600];
    snprintf(out_path, sizeof out_path, "%s/out.json", dumps);
    char *out = test_read_file(out_path, NULL);
    ck_assert_ptr_nonnull(out);
    char expected[64];
    snprintf(expected, sizeof expected, "\"cfa\": \"0x%" PRIx64 "\"", got_cfa);
    ck_assert_msg(strstr(out, expected) != NULL, "%s: not in %s", expected, out);
    free(out);
    free(json);
    free(path);
    snprintf(command, sizeof command, "rm -rf '%s'", dumps);
    shell(command);
    free(dumps);
}
END_TEST

/* ---- resynchronisation ----------------------------------------------- */

/* glibc's static sigaction, raise, siglongjmp, __restore_rt: a handler
 * left by siglongjmp, another that returns through sigreturn. */
START_TEST(test_signal_and_longjmp)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace("signal", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 0); /* both handlers ran */
    ck_assert_uint_eq(r.signals, 2);
    ck_assert_uint_ge(r.irregular_pops, 1);
    ck_assert_uint_gt(r.stops_checked, 10000);
    /* The only differences are in glibc's __longjmp, whose CFI describes
     * the frame it jumps to once it starts restoring it: explained as a
     * context restore (findings/). */
    char *path = program_path("signal");
    uint64_t longjmp_at = symbol(path, "__longjmp");
    size_t restores = 0;
    for (size_t i = 0; i < r.ngroups; i++) {
        const struct trace_group *g = &r.groups[i];
        if (g->kind == TRACE_KIND_no_fde)
            continue;
        ck_assert_msg(g->fde_begin == longjmp_at && g->context_restore,
                      "%s at 0x%" PRIx64, trace_kind_text(g->kind), g->pc_first);
        restores++;
    }
    ck_assert_uint_gt(restores, 0);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    free(path);
    trace_report_free(&r);
}
END_TEST

/* A C++ exception through four frames with cleanups, traced from main
 * (dynamic libstdc++ and libgcc_s: the start-up runs at full speed). The
 * frames left by the unwinder's landing are popped; the only differences
 * are in libgcc's __builtin_eh_return sequences, explained. */
START_TEST(test_exception)
{
    struct trace_options o;
    options_il_interp(&o);
    o.from_symbol = "main";
    struct trace_report r;
    trace("throw", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 0); /* caught, four destructors run */
    ck_assert_uint_ge(r.irregular_pops, 2); /* a cleanup, the handler */
    ck_assert_uint_gt(r.stops_checked, 5000);
    ck_assert_uint_ge(r.max_depth, 5);
    for (size_t i = 0; i < r.ngroups; i++) {
        const struct trace_group *g = &r.groups[i];
        ck_assert_msg(g->kind == TRACE_KIND_no_fde || g->context_restore,
                      "%s: %s at 0x%" PRIx64, g->elf, trace_kind_text(g->kind),
                      g->pc_first);
    }
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

/* A function the executable does not have: reported, nothing run. */
START_TEST(test_from_missing_symbol)
{
    struct trace_options o;
    options_il_interp(&o);
    o.from_symbol = "no_such_function";
    struct trace_report r;
    trace("early", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_NO_SYMBOL);
    ck_assert_uint_eq(r.instructions, 0);
    trace_report_free(&r);
}
END_TEST

static uint64_t checked_in(const struct trace_report *r, const char *path)
{
    for (size_t i = 0; i < r->nelves; i++)
        if (!strcmp(r->elves[i].path, path))
            return r->elves[i].checked;
    return 0;
}

/* The vDSO's code is checked, its image read from memory: stepping from
 * main, and with breakpoints (regression: the call before a return
 * address must be read with the breakpoints hidden, else a call through
 * a register at a row boundary, glibc's into the vDSO, is not seen). */
START_TEST(test_vdso)
{
    for (int rows = 0; rows < 2; rows++) {
        struct trace_options o;
        options_il_interp(&o);
        o.from_symbol = rows ? NULL : "main";
        o.at = rows ? TRACE_AT_ROWS : TRACE_AT_STEP;
        struct trace_report r;
        trace("vdso", &o, &r);
        ck_assert_int_eq(r.end, TRACE_END_EXITED);
        ck_assert_int_eq(r.end_value, 0);
        ck_assert_msg(checked_in(&r, "[vdso]") > 0, "vDSO not checked (%s)",
                      rows ? "rows" : "steps");
        ck_assert_uint_eq(trace_report_mismatches(&r), 0);
        trace_report_free(&r);
    }
}
END_TEST

/* ---- SDT probes -------------------------------------------------------- */

/* libstdc++'s probes, as readelf -n lists them (its base is not moved). */
START_TEST(test_sites_libstdcxx)
{
    char *lib = test_system_lib("libstdc++.so.6");
    if (!lib)
        return;
    struct trace_sites sites;
    struct cfi_diag diag;
    ck_assert_int_eq(trace_sites_read(lib, &sites, &diag), CFI_OK);
    char command[1024];
    snprintf(command, sizeof command,
             "readelf -n '%s' | grep -A3 NT_STAPSDT | grep Location", lib);
    FILE *in = popen(command, "r");
    ck_assert_ptr_nonnull(in);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, in)) {
        uint64_t location = strtoull(strstr(line, "0x"), NULL, 16);
        ck_assert_uint_lt(n, sites.n);
        ck_assert_uint_eq(sites.sites[n].pc, location);
        n++;
    }
    pclose(in);
    ck_assert_uint_eq(n, sites.n);
    ck_assert_uint_gt(n, 0);
    ck_assert_str_eq(sites.sites[0].provider, "libstdcxx");
    trace_sites_free(&sites);
    free(lib);
}
END_TEST

/* A note whose recorded base is 0x100 above .stapsdt.base's address: the
 * probe is 0x100 below the PC recorded. Argument string and names kept. */
START_TEST(test_sites_prelinked)
{
    const char *names[] = {"probe", "probe-prelinked"};
    for (int i = 0; i < 2; i++) {
        char *path = program_path(names[i]);
        struct trace_sites sites;
        struct cfi_diag diag;
        ck_assert_int_eq(trace_sites_read(path, &sites, &diag), CFI_OK);
        ck_assert_uint_eq(sites.n, 1);
        uint64_t site = symbol(path, "probe_site");
        ck_assert_uint_eq(sites.sites[0].link_pc, site);
        ck_assert_uint_eq(sites.sites[0].pc, i ? site - 0x100 : site);
        ck_assert_str_eq(sites.sites[0].provider, "cfisem");
        ck_assert_str_eq(sites.sites[0].name, "probe");
        ck_assert_str_eq(sites.sites[0].args, "-4@%ebx 8@%rsp");
        trace_sites_free(&sites);
        free(path);
    }
}
END_TEST

START_TEST(test_sites_cli)
{
    char *path = program_path("probe-prelinked");
    const char *args[] = {"sites", path, "--json", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    char expected[64];
    snprintf(expected, sizeof expected, "\"pc\": \"0x%" PRIx64 "\"",
             symbol(path, "probe_site") - 0x100);
    ck_assert_ptr_nonnull(strstr(run.out, expected));
    test_run_free(&run);
    const char *bad[] = {"sites", "/etc/passwd", NULL};
    test_run_cfisem(bad, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    test_run_free(&run);
    const char *none[] = {"sites", NULL};
    test_run_cfisem(none, &run);
    ck_assert_int_eq(run.exit_code, TEST_EXIT_USAGE);
    test_run_free(&run);
    free(path);
}
END_TEST

/* --at stapsdt: stopped at the probe each time it runs, checked there;
 * with the push untold, the CFA is wrong exactly at the probe. */
START_TEST(test_trace_at_stapsdt)
{
    struct trace_options o;
    options_il_interp(&o);
    o.at = TRACE_AT_STAPSDT;
    struct trace_report r;
    trace("probe", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_uint_eq(r.stops_checked, 2);
    ck_assert_uint_eq(r.ngroups, 0);
    trace_report_free(&r);
    trace("probe-broken", &o, &r);
    char *path = program_path("probe-broken");
    ck_assert_uint_eq(r.stops_checked, 2);
    expect_group(&r, path, TRACE_KIND_cfa, -1, "probe_site", "probe_site");
    ck_assert_uint_eq(r.engines[ENGINE_il].mismatch, 2);
    free(path);
    trace_report_free(&r);
}
END_TEST

/* libstdc++'s throw and catch probes, hit by the exception test's
 * program: the CFI is right at both. */
START_TEST(test_trace_at_stapsdt_libstdcxx)
{
    struct trace_options o;
    options_il_interp(&o);
    o.at = TRACE_AT_STAPSDT;
    struct trace_report r;
    trace("throw", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 0);
    ck_assert_uint_eq(r.stops_checked, 2);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

/* exec: the shadow stack starts over in the new image (dash, then the
 * freestanding program it becomes, which exits with 3 from a call). */
START_TEST(test_exec)
{
    struct trace_options o;
    options_il_interp(&o);
    char *early = program_path("early");
    char command[1024];
    snprintf(command, sizeof command, "exec '%s'", early);
    char *argv[] = {"/bin/sh", "-c", command, NULL};
    struct trace_report r;
    ck_assert_int_eq(trace_run(argv, &o, &r), CFI_OK);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 3);
    ck_assert_uint_eq(r.execs, 1);
    ck_assert_uint_gt(checked_in(&r, early), 2);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
    free(early);
}
END_TEST

/* A tail call keeps the frame: the callee's stops are checked against
 * the caller's truth, and agree. */
START_TEST(test_tail_call)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace("tail", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_uint_ge(r.stops_checked + 8, r.instructions);
    ck_assert_uint_eq(r.max_depth, 2); /* main's, tail_caller's (tail_callee's) */
    ck_assert_uint_eq(r.ngroups, 0);
    ck_assert_uint_eq(r.engines[ENGINE_il].agree, r.stops_checked);
    trace_report_free(&r);
}
END_TEST

/* --sample N: every Nth instruction is checked; the calls and returns
 * between are still followed (the same depth, no mismatch). */
START_TEST(test_sample)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report all, sampled;
    trace("good-gcc-O0", &o, &all);
    o.sample = 7;
    trace("good-gcc-O0", &o, &sampled);
    ck_assert_uint_eq(sampled.instructions, all.instructions);
    ck_assert_uint_le(sampled.stops_checked, all.instructions / 7 + 1);
    ck_assert_uint_ge(sampled.stops_checked + 4, all.stops_checked / 7);
    ck_assert_uint_eq(sampled.max_depth, all.max_depth);
    ck_assert_uint_eq(trace_report_mismatches(&sampled), 0);
    trace_report_free(&all);
    trace_report_free(&sampled);
}
END_TEST

/* A second thread runs untraced; the report says it was made. */
START_TEST(test_thread_said)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace("thread", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 0);
    ck_assert_uint_eq(r.clones, 1);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

/* diff and validate --pcs stapsdt ask only at the probe: one PC, four
 * states. */
START_TEST(test_pcs_stapsdt)
{
    char *path = program_path("probe");
    const char *diff[] = {"diff", path, "--pcs", "stapsdt", "--engines",
                          "il,interp", NULL};
    struct test_run run;
    test_run_cfisem(diff, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_msg(strstr(run.out, " 4 requests (4 states per PC)") != NULL,
                  "%s", run.out);
    test_run_free(&run);
    char eh_elf[512];
    snprintf(eh_elf, sizeof eh_elf, "%s/probe.eh_elf.so", programs);
    const char *compile[] = {"compile", path, "-o", eh_elf, NULL};
    test_run_cfisem(compile, &run);
    ck_assert_int_eq(run.exit_code, 0);
    test_run_free(&run);
    const char *validate[] = {"validate", path, eh_elf, "--pcs", "stapsdt",
                              NULL};
    test_run_cfisem(validate, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_msg(strstr(run.out, " 1 addresses (0 in no FDE), 4 states: 4 requests") != NULL,
                  "%s", run.out);
    test_run_free(&run);
    const char *bad[] = {"diff", path, "--pcs", "everywhere", NULL};
    test_run_cfisem(bad, &run);
    ck_assert_int_eq(run.exit_code, TEST_EXIT_USAGE);
    test_run_free(&run);
    free(path);
}
END_TEST

/* --at rows follows signals too: delivered by one step, the handler's
 * frame pushed at its entry, its stops checked. The one difference left
 * is __longjmp's restore (not recognised without steps). */
START_TEST(test_rows_signal)
{
    struct trace_options o;
    options_il_interp(&o);
    o.at = TRACE_AT_ROWS;
    struct trace_report r;
    trace("signal", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 0);
    ck_assert_uint_eq(r.signals, 2);
    char *path = program_path("signal");
    uint64_t longjmp_at = symbol(path, "__longjmp");
    for (size_t i = 0; i < r.ngroups; i++)
        ck_assert_msg(r.groups[i].kind == TRACE_KIND_no_fde ||
                      r.groups[i].fde_begin == longjmp_at,
                      "%s at 0x%" PRIx64, trace_kind_text(r.groups[i].kind),
                      r.groups[i].pc_first);
    ck_assert_uint_le(r.engines[ENGINE_il].mismatch, 2);
    free(path);
    trace_report_free(&r);
}
END_TEST

/* ---- programs that do not end well ------------------------------------ */

START_TEST(test_crash_reported)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace("crash", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_SIGNALED);
    ck_assert_int_eq(r.end_value, SIGSEGV);
    ck_assert_uint_ge(r.stops_checked, 3);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

START_TEST(test_early_exit_reported)
{
    struct trace_options o;
    options_il_interp(&o);
    struct trace_report r;
    trace("early", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_EXITED);
    ck_assert_int_eq(r.end_value, 3);
    ck_assert_uint_ge(r.max_depth, 3);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

START_TEST(test_step_limit)
{
    struct trace_options o;
    options_il_interp(&o);
    o.step_limit = 5000;
    struct trace_report r;
    trace("spin", &o, &r);
    ck_assert_int_eq(r.end, TRACE_END_STEP_LIMIT);
    ck_assert_uint_eq(r.instructions, 5000);
    ck_assert_uint_eq(trace_report_mismatches(&r), 0);
    trace_report_free(&r);
}
END_TEST

/* Spinning, and blocked in a system call: both stopped in time. */
START_TEST(test_timeout)
{
    const char *names[] = {"spin", "pause"};
    for (int i = 0; i < 2; i++) {
        struct trace_options o;
        options_il_interp(&o);
        o.timeout = 1;
        struct trace_report r;
        trace(names[i], &o, &r);
        ck_assert_int_eq(r.end, TRACE_END_TIMEOUT);
        ck_assert(r.seconds < 5);
        trace_report_free(&r);
    }
}
END_TEST

/* ---- the command line ------------------------------------------------- */

START_TEST(test_cli_bad_program)
{
    const char *args[] = {"trace", "--", "/nonexistent/program", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "/nonexistent/program"));
    test_run_free(&run);
    const char *not_elf[] = {"trace", "--", "/etc/passwd", NULL};
    test_run_cfisem(not_elf, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    test_run_free(&run);
}
END_TEST

START_TEST(test_cli_usage)
{
    const char *const cases[][6] = {
        {"trace", NULL},
        {"trace", "--sample", "0", "--", "/bin/true", NULL},
        {"trace", "--engines", "libunwind", "--", "/bin/true", NULL},
        {"trace", "--at", "everywhere", "--", "/bin/true", NULL},
        {"trace", "--sysroot", "/nonexistent-root", "--", "/bin/true", NULL},
        {"trace", "--sysroot", "/etc/passwd", "--", "/bin/true", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct test_run run;
        test_run_cfisem(cases[i], &run);
        ck_assert_int_eq(run.exit_code, TEST_EXIT_USAGE);
        ck_assert_uint_eq(test_count_lines(run.err), 1);
        test_run_free(&run);
    }
}
END_TEST

START_TEST(test_cli_crash_exit_status)
{
    char *path = program_path("crash");
    const char *args[] = {"trace", "--engines", "il", "--", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "killed by SIGSEGV"));
    test_run_free(&run);
    char *spin = program_path("spin");
    const char *limited[] = {"trace", "--step-limit", "1000", "--", spin, NULL};
    test_run_cfisem(limited, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "step limit"));
    test_run_free(&run);
    free(spin);
    free(path);
}
END_TEST

/* ---- AArch64 under qemu-aarch64's gdbstub ----------------------------- */

/* The groups of `kind` (and register `reg`, -2: any) in a report. */
static size_t groups_of(const struct trace_report *r, enum trace_kind kind,
                        int reg)
{
    size_t n = 0;
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].kind == kind && (reg == -2 || r->groups[i].reg == reg))
            n++;
    return n;
}

/* The AArch64 program `name` traced under qemu with il and interp, its
 * output discarded, for `timeout` seconds at most (0: the default), with
 * the loader and libraries read below `sysroot` (NULL: none). It ran to
 * its end and exited 0. */
static void trace_a64(const char *name, double timeout, const char *sysroot,
                      struct trace_report *r)
{
    struct trace_options o;
    options_il_interp(&o);
    o.quiet_program = true;
    if (timeout > 0)
        o.timeout = timeout;
    o.sysroot = sysroot;
    trace(name, &o, r);
    ck_assert_int_eq(r->end, TRACE_END_EXITED);
    ck_assert_int_eq(r->end_value, 0);
}

/* Both engines agree at every stop checked: no mismatch. */
static void expect_agreement(const struct trace_report *r)
{
    ck_assert_uint_eq(r->engines[ENGINE_il].agree, r->stops_checked);
    ck_assert_uint_eq(r->engines[ENGINE_interp].agree, r->stops_checked);
    ck_assert_uint_eq(trace_report_mismatches(r), 0);
}

/* Traced to the end: every stop after the first call checked, with the
 * truth of x19-x29, the return address and RA_SIGN_STATE (mid signs its
 * return address: the row says so from paciasp to autiasp) agreeing. */
START_TEST(test_a64_correct)
{
    struct trace_report r;
    trace_a64("a64", 0, NULL, &r);
    ck_assert_ptr_eq(r.arch, &cfi_arch_aarch64);
    ck_assert_uint_eq(r.instructions, 32);
    ck_assert_uint_eq(r.max_depth, 2);
    ck_assert_uint_ge(r.stops_checked, 20);
    expect_agreement(&r);
    trace_report_free(&r);
}
END_TEST

/* A .cfi_offset 8 bytes off: x19 wrong in mid, from the row that says it
 * on, for both engines. */
START_TEST(test_a64_bad_offset)
{
    struct trace_report r;
    trace_a64("a64-bad", 0, NULL, &r);
    ck_assert_uint_gt(trace_report_mismatches(&r), 0);
    ck_assert_uint_eq(groups_of(&r, TRACE_KIND_reg, 19), 1);
    ck_assert_uint_eq(r.ngroups, 1);
    ck_assert(r.groups[0].engines[ENGINE_il]);
    ck_assert(r.groups[0].engines[ENGINE_interp]);
    /* The group names its function: mid, at the first stop's offset
     * (nm's address of mid). */
    char *path = program_path("a64-bad"), label[64];
    snprintf(label, sizeof label, "mid+0x%" PRIx64,
             r.groups[0].pc - symbol(path, "mid"));
    ck_assert_ptr_nonnull(r.groups[0].function);
    ck_assert_str_eq(r.groups[0].function, label);
    free(path);
    trace_report_free(&r);
}
END_TEST

/* The CFI without .cfi_negate_ra_state: while x30 is signed (paciasp to
 * autiasp; qemu's default CPU, max, implements pointer authentication)
 * RA_SIGN_STATE is wrong, and so is the caller's PC: the engines, told
 * the address is not signed, leave its signature on. */
START_TEST(test_a64_ra_state)
{
    struct trace_report r;
    trace_a64("a64-noras", 0, NULL, &r);
    ck_assert_uint_eq(groups_of(&r, TRACE_KIND_ra_state, -2), 1);
    ck_assert_uint_eq(groups_of(&r, TRACE_KIND_ra_state,
                                (int)cfi_arch_aarch64.ra_state), 1);
    ck_assert_uint_eq(groups_of(&r, TRACE_KIND_ra, -2), 1);
    ck_assert_uint_eq(r.ngroups, 2);
    for (size_t i = 0; i < r.ngroups; i++) {
        const struct trace_group *g = &r.groups[i];
        if (g->kind == TRACE_KIND_ra_state) {
            ck_assert_uint_eq(g->expected, 1);
            ck_assert_uint_eq(g->got, 0);
        } else {
            ck_assert_uint_ne(g->got, g->expected);
            ck_assert_uint_eq(cfi_strip_pac(g->got, CFI_VA_BITS_DEFAULT),
                              g->expected);
        }
    }
    trace_report_free(&r);
}
END_TEST

/* qemu-user 7.2's step of an svc runs the next instruction too: a
 * `svc #0; ret` (glibc's geteuid, called from libc's eaccess) returns
 * and a `svc #0; bl leaf` calls within one step. Both are followed:
 * every instruction counted, no frame left behind (it made the caller's
 * stops differ and its epilogue an irregular pop, taken for a context
 * restore), none missed. */
START_TEST(test_a64_svc_then_ret)
{
    struct trace_report r;
    trace_a64("a64-svc", 0, NULL, &r);
    ck_assert_uint_eq(r.instructions, 25);
    ck_assert_uint_eq(r.max_depth, 3);
    ck_assert_uint_eq(r.irregular_pops, 0);
    ck_assert_uint_eq(r.resync, 0);
    ck_assert_uint_ge(r.stops_checked, 19);
    expect_agreement(&r);
    ck_assert_uint_eq(r.ngroups, 0);
    trace_report_free(&r);
}
END_TEST

/* Two signals under qemu (a plain handler and an SA_SIGINFO one, each
 * calling a function), sent from three calls deep: each delivery pushes
 * the interrupted frame and the handler's, each return through qemu's
 * trampoline (`mov x8, #139; svc #0`) pops them as a regular return to
 * the interrupted PC. Every stop agrees, none is irregular. */
START_TEST(test_a64_signal)
{
    struct trace_report r;
    trace_a64("a64-signal", 0, NULL, &r);
    ck_assert_uint_eq(r.signals, 2);
    ck_assert_uint_eq(r.irregular_pops, 0);
    ck_assert_uint_eq(r.resync, 0);
    /* main, deep, send, a64_syscall, the signal frame, the handler,
     * work. */
    ck_assert_uint_eq(r.max_depth, 7);
    ck_assert_uint_ge(r.stops_checked, 150);
    expect_agreement(&r);
    trace_report_free(&r);
}
END_TEST

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A stub that accepts the connection (the kernel's backlog) and never
 * answers: the client gives up after its timeout, with one line. */
START_TEST(test_rsp_silent_stub)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof addr;
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    ck_assert_int_eq(listen(fd, 4), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&addr, &size), 0);
    struct rsp c;
    double began = seconds_now();
    enum rsp_status s = rsp_connect(&c, ntohs(addr.sin_port), 1.0);
    double took = seconds_now() - began;
    ck_assert_int_eq(s, RSP_SILENT);
    ck_assert_double_ge(took, 0.9);
    ck_assert_double_lt(took, 3.0);
    ck_assert_str_eq(c.error, "the gdbstub stopped answering");
    ck_assert_ptr_null(strchr(c.error, '\n'));
    rsp_close(&c);
    close(fd);
}
END_TEST

/* No stub at all on the port: the connection is retried until the
 * timeout, then reported the same way. */
START_TEST(test_rsp_no_stub)
{
    int port = rsp_free_port();
    ck_assert_int_gt(port, 0);
    struct rsp c;
    double began = seconds_now();
    ck_assert_int_eq(rsp_connect(&c, port, 0.5), RSP_SILENT);
    ck_assert_double_lt(seconds_now() - began, 2.0);
    rsp_close(&c);
}
END_TEST

/* The A64 classes the shadow stack follows. */
/* Exclusive sequences (run to their exits, not stepped): a
 * compare-and-swap whose b.ne leaves the sequence (two exits), an
 * increment (one: its cbnz retry lies after the store), a branch back
 * into the sequence (not an exit), and no sequence. */
START_TEST(test_a64_exclusive_exits)
{
    static const uint32_t cas[] = {0x885ffc01u, 0x6b02003fu, 0x54000061u,
                                   0x8803fc04u, 0x35ffff83u, 0xd65f03c0u};
    static const uint32_t inc[] = {0xc85f7c01u, 0x91000421u, 0xc8037c01u,
                                   0x35ffffa3u};
    static const uint32_t back[] = {0xc85f7c01u, 0xb4ffffe1u, 0xc8037c01u,
                                    0xd65f03c0u};
    uint32_t open[TRACE_A64_SEQUENCE + 1];
    uint64_t exits[TRACE_A64_EXITS];
    ck_assert_uint_eq(trace_a64_exclusive_exits(cas, 6, 0x1000, exits), 2);
    ck_assert_uint_eq(exits[0], 0x1010);
    ck_assert_uint_eq(exits[1], 0x1014);
    ck_assert_uint_eq(trace_a64_exclusive_exits(inc, 4, 0x2018, exits), 1);
    ck_assert_uint_eq(exits[0], 0x2024);
    ck_assert_uint_eq(trace_a64_exclusive_exits(back, 4, 0x202c, exits), 1);
    ck_assert_uint_eq(exits[0], 0x2038);
    ck_assert_uint_eq(trace_a64_exclusive_exits(cas + 1, 5, 0x1004, exits),
                      0);
    ck_assert_uint_eq(trace_a64_exclusive_exits(cas, 3, 0x1000, exits), 0);
    open[0] = cas[0];
    for (size_t i = 1; i < TRACE_A64_SEQUENCE + 1; i++)
        open[i] = 0xd503201fu; /* nop: no store within the window */
    open[TRACE_A64_SEQUENCE] = cas[3];
    ck_assert_uint_eq(trace_a64_exclusive_exits(open, TRACE_A64_SEQUENCE + 1,
                                                0x3000, exits), 0);
}
END_TEST

/* path opened with cfisem's reader, which must accept it. */
static struct cfi_file *open_elf(const char *path)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    return file;
}

/* The instruction word at vaddr in file's segments (0 when none). */
static uint32_t word_at(const struct cfi_file *file, uint64_t vaddr)
{
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *seg = &file->segments[i];
        if (vaddr >= seg->vaddr && vaddr - seg->vaddr + 4 <= seg->filesz)
            return (uint32_t)cfi_load_le(seg->bytes + (vaddr - seg->vaddr),
                                         4);
    }
    return 0;
}

/* A static glibc program under qemu: it ends (glibc's locks are exclusive
 * sequences, which single steps would retry for ever), and the one group
 * of differences is glibc's own: start.S describes __wrap_main, inside
 * _start's FDE, with _start's undefined x30 (trace/findings). */
START_TEST(test_a64_glibc)
{
    struct trace_report r;
    trace_a64("a64-glibc", 240, NULL, &r);
    ck_assert_uint_gt(r.instructions, 10000);
    ck_assert_uint_gt(r.stops_checked, 10000);
    char *path = program_path("a64-glibc");
    struct cfi_file *file = open_elf(path);
    struct cfi_symbol *symbols;
    size_t count;
    ck_assert_int_eq(cfi_file_functions(file, &symbols, &count), CFI_OK);
    for (size_t i = 0; i < r.ngroups; i++) {
        const struct trace_group *g = &r.groups[i];
        if (g->fde_begin == 0 && g->fde_end == 0)
            continue; /* no FDE where code runs: counted apart */
        uint64_t offset;
        const struct cfi_symbol *at =
            cfi_symbol_find(symbols, count, g->pc_first, &offset);
        ck_assert_ptr_nonnull(at);
        ck_assert_str_eq(at->name, "_start");
        ck_assert_int_eq(g->kind, TRACE_KIND_ra_undefined);
        /* __wrap_main (a label, no function symbol) starts right after
         * _start's last call, bl abort. */
        ck_assert_uint_eq(word_at(file, g->pc_first - 4) >> 26, 0x25);
    }
    ck_assert_uint_gt(trace_report_mismatches(&r), 0);
    free(symbols);
    cfi_file_close(file);
    free(path);
    trace_report_free(&r);
}
END_TEST

/* A dynamically linked program under qemu: its loader placed from the
 * auxiliary vector, libc from the loader's list. It ends; libc's stops
 * are checked; the one group of differences is glibc's lazy-binding
 * resolver (ld.so's _dl_runtime_resolve, the FDE that ends with
 * `ldp x17, x30, [sp], #16; br x16`): its CFA leaves out the 16 bytes
 * the PLT pushed (trace/findings). */
START_TEST(test_a64_dynamic)
{
    struct trace_report r;
    /* A sysroot of the test's own (its lib/ the cross toolchain's): the
     * loader and libc must be read from there. */
    char *root = test_temp_dir(), link[4096], libc_path[4096];
    snprintf(link, sizeof link, "%s/lib", root);
    ck_assert_int_eq(symlink("/usr/aarch64-linux-gnu/lib", link), 0);
    snprintf(libc_path, sizeof libc_path, "%s/lib/libc.so.6", root);
    trace_a64("a64-dynamic", 240, root, &r);
    ck_assert_uint_eq(r.no_elf, 0);
    size_t libc = r.nelves;
    for (size_t i = 0; i < r.nelves; i++)
        if (!strcmp(r.elves[i].path, libc_path))
            libc = i;
    ck_assert_uint_lt(libc, r.nelves);
    ck_assert_uint_gt(r.elves[libc].checked, 1000);
    for (size_t i = 0; i < r.ngroups; i++) {
        const struct trace_group *g = &r.groups[i];
        if (g->kind == TRACE_KIND_no_fde)
            continue;
        ck_assert_int_eq(g->kind, TRACE_KIND_cfa);
        ck_assert_ptr_nonnull(strstr(g->elf, "ld-linux-aarch64.so.1"));
        struct cfi_file *file = open_elf(g->elf);
        ck_assert_uint_eq(word_at(file, g->fde_end - 8), 0xa8c17bf1u);
        ck_assert_uint_eq(word_at(file, g->fde_end - 4), 0xd61f0200u);
        ck_assert(!strncmp(g->elf, root, strlen(root)));
        cfi_file_close(file);
    }
    trace_report_free(&r);
    unlink(link);
    rmdir(root);
    free(root);
}
END_TEST

START_TEST(test_insn_classify_a64)
{
    ck_assert_int_eq(trace_insn_classify_a64(0x94000010u), TRACE_INSN_CALL);
    ck_assert_int_eq(trace_insn_classify_a64(0xd63f0020u), TRACE_INSN_CALL);
    ck_assert_int_eq(trace_insn_classify_a64(0xd65f03c0u), TRACE_INSN_RET);
    ck_assert_int_eq(trace_insn_classify_a64(0xd65f0bffu), TRACE_INSN_RET);
    ck_assert_int_eq(trace_insn_classify_a64(0x14000004u), TRACE_INSN_JMP);
    ck_assert_int_eq(trace_insn_classify_a64(0xd61f0200u), TRACE_INSN_JMP);
    ck_assert_int_eq(trace_insn_classify_a64(0xd4000001u),
                     TRACE_INSN_SYSCALL);
    ck_assert_int_eq(trace_insn_classify_a64(0xd503233fu),
                     TRACE_INSN_SIGN_RA);
    ck_assert_int_eq(trace_insn_classify_a64(0xd50323bfu),
                     TRACE_INSN_AUTH_RA);
    ck_assert_int_eq(trace_insn_classify_a64(0x91000400u), TRACE_INSN_OTHER);
    ck_assert_int_eq(trace_insn_classify_a64(0xd503201fu), TRACE_INSN_OTHER);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("trace");
    TCase *tc = tcase_create("trace");
    /* The AArch64 glibc programs run 23,000-94,000 single steps over the
     * remote protocol: up to a minute on a busy machine. */
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, build_all, remove_all);
    tcase_add_test(tc, test_insn_classify);
    tcase_add_loop_test(tc, test_correct_cfi, 0, NVARIANTS);
    tcase_add_test(tc, test_correct_cfi_compiled);
    tcase_add_test(tc, test_wrong_cfi_caught);
    tcase_add_test(tc, test_reproducer_offline);
    tcase_add_test(tc, test_insn_call_ends_at);
    tcase_add_test(tc, test_rows_wrong_cfi);
    tcase_add_loop_test(tc, test_rows_correct_cfi, 0, NVARIANTS);
    tcase_add_test(tc, test_signal_and_longjmp);
    tcase_add_test(tc, test_exception);
    tcase_add_test(tc, test_from_missing_symbol);
    tcase_add_test(tc, test_vdso);
    tcase_add_test(tc, test_exec);
    tcase_add_test(tc, test_thread_said);
    tcase_add_test(tc, test_tail_call);
    tcase_add_test(tc, test_rows_signal);
    tcase_add_test(tc, test_sample);
    tcase_add_test(tc, test_sites_libstdcxx);
    tcase_add_test(tc, test_sites_prelinked);
    tcase_add_test(tc, test_sites_cli);
    tcase_add_test(tc, test_trace_at_stapsdt);
    tcase_add_test(tc, test_trace_at_stapsdt_libstdcxx);
    tcase_add_test(tc, test_pcs_stapsdt);
    tcase_add_test(tc, test_crash_reported);
    tcase_add_test(tc, test_early_exit_reported);
    tcase_add_test(tc, test_step_limit);
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_cli_bad_program);
    tcase_add_test(tc, test_cli_usage);
    tcase_add_test(tc, test_cli_crash_exit_status);
    tcase_add_test(tc, test_a64_correct);
    tcase_add_test(tc, test_a64_bad_offset);
    tcase_add_test(tc, test_a64_ra_state);
    tcase_add_test(tc, test_a64_svc_then_ret);
    tcase_add_test(tc, test_a64_signal);
    tcase_add_test(tc, test_rsp_silent_stub);
    tcase_add_test(tc, test_rsp_no_stub);
    tcase_add_test(tc, test_insn_classify_a64);
    tcase_add_test(tc, test_a64_exclusive_exits);
    tcase_add_test(tc, test_a64_glibc);
    tcase_add_test(tc, test_a64_dynamic);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? 1 : 0;
}
