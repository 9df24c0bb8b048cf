/* SPDX-License-Identifier: MIT */
/* check_cli_unwind.c — `cfisem unwind` end to end: its output formats,
 * exit codes, and options (--caller, --mem, --fault, the rip default),
 * with every engine the command offers. Expected values are worked out by
 * hand from the corpus cases' IL (the .il files of corpus/cases). */
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static const char *const engines[] = {"interp", "il"};
enum { NENGINES = sizeof engines / sizeof engines[0] };

static char *case_path(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "corpus/cases/%s.so", name);
    return test_build_path(rel);
}

/* Runs `cfisem unwind CASE ARGS... --engine E`. */
static void unwind(const char *name, const char *engine,
                   const char *const *args, struct test_run *run)
{
    const char *argv[32] = {"unwind"};
    size_t n = 1;
    char *path = case_path(name);
    argv[n++] = path;
    for (size_t i = 0; args[i] && n < 28; i++)
        argv[n++] = args[i];
    argv[n++] = "--engine";
    argv[n++] = engine;
    argv[n] = NULL;
    test_run_cfisem(argv, run);
    free(path);
}

/* A dump of 32 bytes mapped at 0x7ffe1000: words 0x1111.., 0x2222.., ... */
static char *write_dump(void)
{
    uint8_t bytes[32];
    for (unsigned word = 0; word < 4; word++)
        memset(bytes + 8 * word, 0x11 * (word + 1), 8);
    char *dir = test_temp_dir();
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/stack.bin", dir);
    ck_assert_int_eq(test_write_file(path, bytes, sizeof bytes), 0);
    free(dir);
    return path;
}

/* prologue.so, [0x1001,0x1004): cfa=rsp+16 rbp=[cfa-16] rip=[cfa-8]. With
 * rsp = 0x7ffe1000 and the dump there: CFA 0x7ffe1010, rbp the first word,
 * rip the second. */
START_TEST(test_json_with_dump)
{
    char *dump = write_dump();
    char mem[4200];
    snprintf(mem, sizeof mem, "%s@0x7ffe1000", dump);
    struct test_run run;
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1002", "--regs", "rsp=0x7ffe1000,rbx=5",
                            "--mem", mem, "--json", NULL}, &run);
    ck_assert_msg(run.exit_code == 0, "exit %d: %s", run.exit_code, run.err);
    char expected[2048];
    snprintf(expected, sizeof expected,
             "{\"schema_version\": 1, \"engine\": \"%s\", \"pc\": \"0x1002\", "
             "\"cfa\": \"0x7ffe1010\", "
             "\"error\": null, \"signal_frame\": false, \"regs\": {"
             "\"0\": \"undefined\", \"1\": \"undefined\", \"2\": \"undefined\", "
             "\"3\": \"0x5\", \"4\": \"undefined\", \"5\": \"undefined\", "
             "\"6\": \"0x1111111111111111\", \"7\": \"0x7ffe1010\", "
             "\"8\": \"undefined\", \"9\": \"undefined\", \"10\": \"undefined\", "
             "\"11\": \"undefined\", \"12\": \"unknown\", \"13\": \"unknown\", "
             "\"14\": \"unknown\", \"15\": \"unknown\", "
             "\"16\": \"0x2222222222222222\"}}\n", engines[_i]);
    ck_assert_str_eq(run.out, expected);
    test_run_free(&run);
    free(dump);
}
END_TEST

/* Outside the dump every read faults: a clean "cannot unwind", exit 3. */
START_TEST(test_dump_fault)
{
    char *dump = write_dump();
    char mem[4200];
    snprintf(mem, sizeof mem, "%s@0x7ffe1000", dump);
    struct test_run run;
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1002", "--regs", "rsp=0x7ffe0ff0",
                            "--mem", mem, NULL}, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "error: memory"));
    test_run_free(&run);
    free(dump);
}
END_TEST

/* --fault makes a synthetic read fault too. */
START_TEST(test_fault_option)
{
    struct test_run run;
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1002", "--regs", "rsp=0x7ffe1000",
                            "--fault", "0x7ffe1008-0x7ffe1010", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "error: memory"));
    test_run_free(&run);
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1002", "--regs", "rsp=0x7ffe1000",
                            "--fault", "0x7ffe1010-0x7ffe1018", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    test_run_free(&run);
}
END_TEST

/* --caller looks the row up at PC-1: at 0x1001 that is the entry row,
 * cfa=rsp+8, instead of cfa=rsp+16. */
START_TEST(test_caller_frame)
{
    struct test_run run;
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1001", "--regs", "rsp=0x7ffe1000", NULL},
           &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1010\n"));
    test_run_free(&run);
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1001", "--caller", "--regs",
                            "rsp=0x7ffe1000", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1008\n"));
    test_run_free(&run);
}
END_TEST

/* plt.so from 0x1010: cfa = rsp + 8 + (((rip & 15) >= 11) << 3). rip is
 * the PC unless --regs gives it. */
START_TEST(test_rip_defaults_to_pc)
{
    struct test_run run;
    unwind("plt", engines[_i],
           (const char *[]){"--pc", "0x101b", "--regs", "rsp=0x7ffe1000", NULL},
           &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1010\n"));
    test_run_free(&run);
    unwind("plt", engines[_i],
           (const char *[]){"--pc", "0x101a", "--regs", "rsp=0x7ffe1000", NULL},
           &run);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1008\n"));
    test_run_free(&run);
    unwind("plt", engines[_i],
           (const char *[]){"--pc", "0x101a", "--regs", "rsp=0x7ffe1000,rip=0xf",
                            NULL}, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1010\n"));
    test_run_free(&run);
}
END_TEST

/* cfa=rbp+16 with rbp not given: the error names rbp. */
START_TEST(test_unknown_register_named)
{
    struct test_run run;
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1005", "--regs", "rsp=0x7ffe1000", NULL},
           &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "error: reg_unknown"));
    ck_assert_ptr_nonnull(strstr(run.out, "(rbp)"));
    test_run_free(&run);
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x1005", "--regs", "rsp=0x7ffe1000",
                            "--json", NULL}, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "\"error\": \"reg_unknown\""));
    ck_assert_ptr_nonnull(strstr(run.out, "\"regs\": {}"));
    test_run_free(&run);
}
END_TEST

/* realign.so at 0x1013: cfa=expr(breg6 -8; deref). The deref, the
 * expression's 2nd operation at byte 2, reads a faulting word: the error
 * line says where in the expression, and `explain` ends with the same
 * line. */
START_TEST(test_expression_error_offset)
{
    static const char *const args[] = {
        "--pc", "0x1013", "--regs", "rsp=0x7ffe1000,rbp=0x7ffe1010",
        "--fault", "0x7ffe1008-0x7ffe1010", NULL};
    const char *want = "at expression offset 0x2\n";
    struct test_run run;
    unwind("realign", engines[_i], args, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "error: memory: "));
    ck_assert_ptr_nonnull(strstr(run.out, want));
    test_run_free(&run);
    char *path = case_path("realign");
    const char *argv[16] = {"explain", path};
    size_t n = 2;
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    test_run_cfisem(argv, &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, want));
    test_run_free(&run);
    free(path);
}
END_TEST

/* rules.so: rip=undef is the end of the stack; rbx=same keeps rbx;
 * rbp=rbx copies the callee's rbx. */
START_TEST(test_text_output)
{
    struct test_run run;
    unwind("rules", engines[_i],
           (const char *[]){"--pc", "0x1002", "--regs",
                            "rsp=0x7ffe1000,rbx=0x42", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "rbx = 0x42\n"));
    ck_assert_ptr_nonnull(strstr(run.out, "rbp = 0x42\n"));
    ck_assert_ptr_nonnull(strstr(run.out, "rip = undefined (end of stack)\n"));
    test_run_free(&run);
}
END_TEST

/* A saved register that is not 8 bytes wide (xmm0: 16) is read as 8
 * bytes by every engine: printed as not modelled; k0 (8 bytes) is a
 * value. */
START_TEST(test_narrow_and_wide_registers)
{
    struct test_run run;
    unwind("high_regs", engines[_i],
           (const char *[]){"--pc", "0x1001", "--regs", "rsp=0x7ffe1000",
                            "--json", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "\"17\": \"not modelled\""));
    ck_assert_ptr_nonnull(strstr(run.out, "\"118\": \"0x"));
    test_run_free(&run);
}
END_TEST

START_TEST(test_signal_frame_flag)
{
    struct test_run run;
    unwind("signal", engines[_i],
           (const char *[]){"--pc", "0x1004", "--regs", "rsp=0x7ffe1000", NULL},
           &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "signal frame"));
    test_run_free(&run);
}
END_TEST

START_TEST(test_no_fde)
{
    struct test_run run;
    unwind("prologue", engines[_i],
           (const char *[]){"--pc", "0x9000", "--regs", "rsp=0x7ffe1000", NULL},
           &run);
    ck_assert_int_eq(run.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(run.out, "error: no_fde"));
    test_run_free(&run);
}
END_TEST

/* The error class of an "error: CLASS: message" line. */
static size_t class_len(const char *out)
{
    const char *colon = strchr(out + strlen("error: "), ':');
    return colon ? (size_t)(colon - out) : strlen(out);
}

/* The engines print the same frames byte for byte, and the same error
 * classes (their messages are their own), at addresses across the cases. */
START_TEST(test_engines_print_the_same)
{
    static const char *const cases[] = {"prologue", "remember", "restore",
                                        "plt", "signal", "libmvec", "realign"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (uint64_t pc = 0x1000; pc < 0x1030; pc += 3) {
            char text[32];
            snprintf(text, sizeof text, "0x%" PRIx64, pc);
            const char *args[] = {"--pc", text, "--regs",
                                  "rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=1", NULL};
            struct test_run a, b;
            unwind(cases[c], "interp", args, &a);
            unwind(cases[c], "il", args, &b);
            bool same = a.exit_code == b.exit_code &&
                        (a.exit_code == 0
                             ? !strcmp(a.out, b.out)
                             : class_len(a.out) == class_len(b.out) &&
                                   !strncmp(a.out, b.out, class_len(a.out)));
            ck_assert_msg(same,
                          "%s at %s:\ninterp:\n%s\nil:\n%s", cases[c], text,
                          a.out, b.out);
            test_run_free(&a);
            test_run_free(&b);
        }
}
END_TEST

/* The outside engines run through the same command, as cfisem diff's
 * reproducer lines use them: libdwarf's rules give the IL's answer; a
 * caller frame in the PLT, which libunwind cannot be asked, is "not
 * comparable". */
START_TEST(test_outside_engines)
{
    const char *args[] = {"--pc", "0x1005", "--regs",
                          "rsp=0x7ffe1000,rbp=0x7ffe1100,rbx=1", NULL};
    struct test_run a, b;
    unwind("prologue", "libdwarf", args, &a);
    unwind("prologue", "il", args, &b);
    ck_assert_int_eq(a.exit_code, 0);
    ck_assert_str_eq(a.out, b.out);
    test_run_free(&a);
    test_run_free(&b);
    unwind("prologue", "libdw", args, &a);
    ck_assert_int_eq(a.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(a.out, "cfa = 0x7ffe1110\n"));
    test_run_free(&a);
    unwind("plt", "libunwind",
           (const char *[]){"--pc", "0x1020", "--caller", "--regs",
                            "rsp=0x7ffe1000", NULL}, &a);
    ck_assert_int_eq(a.exit_code, 3);
    ck_assert_ptr_nonnull(strstr(a.out, "not comparable"));
    test_run_free(&a);
}
END_TEST

START_TEST(test_usage_errors)
{
    static const char *const bad[][8] = {
        {"unwind", NULL},
        {"unwind", "x.so", NULL},
        {"unwind", "x.so", "--pc", NULL},
        {"unwind", "x.so", "--pc", "0x1zz", NULL},
        {"unwind", "x.so", "--pc", "1", "--regs", "nosuchreg=1", NULL},
        {"unwind", "x.so", "--pc", "1", "--regs", "rsp", NULL},
        {"unwind", "x.so", "--pc", "1", "--engine", "nope", NULL},
        {"unwind", "x.so", "--pc", "1", "--mem", "nodump", NULL},
        {"unwind", "x.so", "--pc", "1", "--fault", "5-1", NULL},
        {"unwind", "x.so", "--pc", "1", "--bogus", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct test_run run;
        test_run_cfisem(bad[i], &run);
        ck_assert_msg(run.exit_code == TEST_EXIT_USAGE, "case %zu: exit %d", i,
                      run.exit_code);
        ck_assert_uint_eq(test_count_lines(run.err), 1);
        test_run_free(&run);
    }
}
END_TEST

START_TEST(test_bad_file)
{
    struct test_run run;
    test_run_cfisem((const char *[]){"unwind", "/nonexistent/x.so", "--pc",
                                     "1", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "/nonexistent/x.so"));
    test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Function names, --pc SYMBOL[+OFFSET], separate debug files            */
/* ------------------------------------------------------------------ */

static int run_tool(const char *const argv[])
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *in_dir(const char *dir, const char *name)
{
    char *path = malloc(4400);
    snprintf(path, 4400, "%s/%s", dir, name);
    return path;
}

/* A program: main (with .eh_frame), helper and g0..g15 (compiled without
 * unwind tables: .debug_frame only), and two static functions named
 * twin, one in each unit. prog, prog.debug (--only-keep-debug) and
 * prog.stripped (--strip-debug, .gnu_debuglink naming prog.debug). */
struct program {
    char *dir, *prog, *debug, *stripped;
};

static void program_build(struct program *p)
{
    p->dir = test_temp_dir();
    char *m_c = in_dir(p->dir, "m.c"), *h_c = in_dir(p->dir, "h.c");
    char *m_o = in_dir(p->dir, "m.o"), *h_o = in_dir(p->dir, "h.o");
    p->prog = in_dir(p->dir, "prog");
    p->debug = in_dir(p->dir, "prog.debug");
    p->stripped = in_dir(p->dir, "prog.stripped");
    const char m_src[] =
        "int helper(int);\n"
        "__attribute__((noinline, used)) static int twin(int x)\n"
        "{ return x * 5; }\n"
        "int main(int argc, char **argv)\n"
        "{ (void)argv; return helper(argc) + twin(argc); }\n";
    char h_src[4096] =
        "__attribute__((noinline, used)) static int twin(int x)\n"
        "{ return x * 7; }\n"
        "int helper(int x) { return twin(x) + 1; }\n";
    for (int i = 0; i < 16; i++) {
        size_t len = strlen(h_src);
        snprintf(h_src + len, sizeof h_src - len,
                 "int g%d(int x) { return helper(x) * %d + 1; }\n", i, i + 2);
    }
    ck_assert_int_eq(test_write_file(m_c, m_src, strlen(m_src)), 0);
    ck_assert_int_eq(test_write_file(h_c, h_src, strlen(h_src)), 0);
    const char *cc_m[] = {"cc", "-g", "-O1", "-c", "-o", m_o, m_c, NULL};
    const char *cc_h[] = {"cc", "-g", "-O1", "-fno-asynchronous-unwind-tables",
                          "-fno-unwind-tables", "-c", "-o", h_o, h_c, NULL};
    const char *ld[] = {"cc", "-o", p->prog, m_o, h_o, NULL};
    const char *keep[] = {"objcopy", "--only-keep-debug", p->prog, p->debug,
                          NULL};
    char link[4500];
    snprintf(link, sizeof link, "--add-gnu-debuglink=%s", p->debug);
    const char *strip[] = {"objcopy", "--strip-debug", link, p->prog,
                           p->stripped, NULL};
    ck_assert_int_eq(run_tool(cc_m), 0);
    ck_assert_int_eq(run_tool(cc_h), 0);
    ck_assert_int_eq(run_tool(ld), 0);
    ck_assert_int_eq(run_tool(keep), 0);
    ck_assert_int_eq(run_tool(strip), 0);
    free(m_c);
    free(h_c);
    free(m_o);
    free(h_o);
}

static void program_free(struct program *p)
{
    const char *rm[] = {"rm", "-rf", p->dir, NULL};
    ck_assert_int_eq(run_tool(rm), 0);
    free(p->dir);
    free(p->prog);
    free(p->debug);
    free(p->stripped);
}

/* `cfisem ARGS...` that must exit with `code`; the run is kept. */
static void cfisem_exits(const char *const *args, int code,
                         struct test_run *run)
{
    test_run_cfisem(args, run);
    ck_assert_msg(run->exit_code == code, "%s %s: exit %d, expected %d: %s",
                  args[0], args[1], run->exit_code, code, run->err);
}

/* The begin of the FDE `il FILE --pc PC` prints. */
static uint64_t fde_begin(const char *path, const char *pc)
{
    const char *args[] = {"il", path, "--pc", pc, NULL};
    struct test_run run;
    cfisem_exits(args, 0, &run);
    const char *range = strstr(run.out, " [0x");
    ck_assert_ptr_nonnull(range);
    uint64_t begin = strtoull(range + 2, NULL, 16);
    test_run_free(&run);
    return begin;
}

START_TEST(test_pc_symbol)
{
    struct program p;
    program_build(&p);
    uint64_t g3 = fde_begin(p.prog, "g3");
    char addr[32], plus[32];
    snprintf(addr, sizeof addr, "0x%" PRIx64, g3 + 1);
    const char *by_addr[] = {"il", p.prog, "--pc", addr, NULL};
    const char *by_hex[] = {"il", p.prog, "--pc", "g3+0x1", NULL};
    const char *by_dec[] = {"il", p.prog, "--pc", "g3+1", NULL};
    struct test_run a, b, c;
    cfisem_exits(by_addr, 0, &a);
    cfisem_exits(by_hex, 0, &b);
    cfisem_exits(by_dec, 0, &c);
    ck_assert_str_eq(a.out, b.out);
    ck_assert_str_eq(a.out, c.out);
    ck_assert_ptr_nonnull(strstr(a.out, ") <g3> aug="));
    ck_assert_ptr_nonnull(strstr(a.out, "fde .debug_frame+"));
    test_run_free(&a);
    test_run_free(&b);
    test_run_free(&c);

    /* no such function: one line, exit 64 */
    const char *unknown[] = {"il", p.prog, "--pc", "no_such_function", NULL};
    cfisem_exits(unknown, 64, &a);
    ck_assert_uint_eq(test_count_lines(a.err), 1);
    ck_assert_ptr_nonnull(strstr(a.err, "no function named no_such_function"));
    ck_assert_uint_eq(a.out_len, 0);
    test_run_free(&a);

    /* two static functions named twin: the lower address, and a note */
    const char *twin[] = {"il", p.prog, "--pc", "twin", NULL};
    cfisem_exits(twin, 0, &a);
    ck_assert_uint_eq(test_count_lines(a.err), 1);
    ck_assert_ptr_nonnull(strstr(a.err, "2 functions are named twin"));
    const char *range = strstr(a.out, " [0x");
    ck_assert_ptr_nonnull(range);
    snprintf(plus, sizeof plus, "0x%llx,",
             strtoull(range + 2, NULL, 16));
    ck_assert_ptr_nonnull(strstr(a.err, plus));
    ck_assert_ptr_nonnull(strstr(a.out, "<twin>"));
    test_run_free(&a);

    /* unwind and explain take it too, and name the function */
    uint64_t main_addr = fde_begin(p.prog, "main");
    const char *json[] = {"unwind", p.prog, "--pc", "main",
                          "--regs", "rsp=0x7ffe1000", "--json", NULL};
    cfisem_exits(json, 0, &a);
    ck_assert_ptr_nonnull(strstr(a.out, "\"function\": \"main\""));
    snprintf(addr, sizeof addr, "\"pc\": \"0x%" PRIx64 "\"", main_addr);
    ck_assert_ptr_nonnull(strstr(a.out, addr));
    test_run_free(&a);
    const char *explain[] = {"explain", p.prog, "--pc", "g3+1", NULL};
    cfisem_exits(explain, 0, &a);
    ck_assert_ptr_nonnull(strstr(a.out, "is in the function <g3+0x1>."));
    test_run_free(&a);
    program_free(&p);
}
END_TEST

/* The caller's PC, read from a dump, is named: g3's entry row is
 * cfa=rsp+8 rip=[cfa-8], and [rsp] holds main+4. */
START_TEST(test_caller_pc_named)
{
    struct program p;
    program_build(&p);
    uint64_t main_addr = fde_begin(p.prog, "main");
    uint8_t word[8];
    for (int i = 0; i < 8; i++)
        word[i] = (uint8_t)((main_addr + 4) >> (8 * i));
    char *dump = in_dir(p.dir, "stack.bin");
    ck_assert_int_eq(test_write_file(dump, word, sizeof word), 0);
    char mem[4500];
    snprintf(mem, sizeof mem, "%s@0x7ffe1000", dump);
    const char *args[] = {"unwind", p.prog, "--pc", "g3", "--regs",
                          "rsp=0x7ffe1000", "--mem", mem, NULL};
    struct test_run run;
    cfisem_exits(args, 0, &run);
    char line[64];
    snprintf(line, sizeof line, "rip = 0x%" PRIx64 " <main+0x4>\n",
             main_addr + 4);
    ck_assert_ptr_nonnull(strstr(run.out, line));
    test_run_free(&run);
    free(dump);
    program_free(&p);
}
END_TEST

static size_t count_fdes(const char *text)
{
    size_t n = 0;
    for (const char *at = text; (at = strstr(at, "fde ")); at += 4)
        n++;
    return n;
}

/* A stripped program: its .debug_frame FDEs come from prog.debug beside
 * it; alone, one note and only .eh_frame; with --debug-dir holding
 * DIR/FILEDIR/prog.debug, all of them again. */
START_TEST(test_debug_dir)
{
    struct program p;
    program_build(&p);
    const char *full_args[] = {"il", p.prog, NULL};
    const char *beside_args[] = {"il", p.stripped, NULL};
    struct test_run full, beside;
    cfisem_exits(full_args, 0, &full);
    cfisem_exits(beside_args, 0, &beside);
    ck_assert_str_eq(full.out, beside.out);
    ck_assert_uint_eq(beside.err_len, 0);

    char *alone_dir = in_dir(p.dir, "alone"), *root = in_dir(p.dir, "root");
    char *alone = in_dir(alone_dir, "prog.stripped");
    const char *mk[] = {"mkdir", "-p", alone_dir, NULL};
    const char *cp[] = {"cp", p.stripped, alone, NULL};
    ck_assert_int_eq(run_tool(mk), 0);
    ck_assert_int_eq(run_tool(cp), 0);
    const char *alone_args[] = {"il", alone, NULL};
    struct test_run run;
    cfisem_exits(alone_args, 0, &run);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "note: debug file prog.debug not "
                                          "found"));
    ck_assert_uint_lt(count_fdes(run.out), count_fdes(full.out));
    test_run_free(&run);
    const char *unwind_alone[] = {"unwind", alone, "--pc", "g3", "--regs",
                                  "rsp=0x7ffe1000", NULL};
    cfisem_exits(unwind_alone, 3, &run);
    ck_assert_ptr_nonnull(strstr(run.err, "note: debug file prog.debug"));
    test_run_free(&run);

    char *real = realpath(alone_dir, NULL);
    ck_assert_ptr_nonnull(real);
    char mirror[4500], mirrored[4600];
    snprintf(mirror, sizeof mirror, "%s%s", root, real);
    snprintf(mirrored, sizeof mirrored, "%s/prog.debug", mirror);
    const char *mk_mirror[] = {"mkdir", "-p", mirror, NULL};
    const char *cp_debug[] = {"cp", p.debug, mirrored, NULL};
    ck_assert_int_eq(run_tool(mk_mirror), 0);
    ck_assert_int_eq(run_tool(cp_debug), 0);
    const char *with_dir[] = {"il", alone, "--debug-dir", root, NULL};
    cfisem_exits(with_dir, 0, &run);
    ck_assert_str_eq(run.out, full.out);
    ck_assert_uint_eq(run.err_len, 0);
    test_run_free(&run);
    const char *unwind_dir[] = {"unwind", alone, "--pc", "g3", "--regs",
                                "rsp=0x7ffe1000", "--debug-dir", root, NULL};
    cfisem_exits(unwind_dir, 0, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1008\n"));
    test_run_free(&run);
    const char *explain_dir[] = {"explain", alone, "--pc", "g3",
                                 "--debug-dir=" , NULL};
    cfisem_exits(explain_dir, 64, &run);
    test_run_free(&run);

    /* compile and validate read what il reads: an eh_elf of the file
     * alone (a note says the debug file is missing) passes for the file
     * alone, and fails where the debug file adds FDEs, each wrong range
     * naming its function */
    char *eh_elf = in_dir(p.dir, "alone.eh_elf.so");
    const char *compile[] = {"compile", alone, "-o", eh_elf, NULL};
    cfisem_exits(compile, 0, &run);
    ck_assert_ptr_nonnull(strstr(run.err, "note: debug file prog.debug"));
    test_run_free(&run);
    const char *valid[] = {"validate", alone, eh_elf, NULL};
    cfisem_exits(valid, 0, &run);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "note: debug file prog.debug"));
    test_run_free(&run);
    const char *wrong[] = {"validate", alone, eh_elf, "--debug-dir", root,
                           NULL};
    cfisem_exits(wrong, 1, &run);
    ck_assert_ptr_nonnull(strstr(run.out, "fde .debug_frame+"));
    ck_assert_ptr_nonnull(strstr(run.out, " <g"));
    ck_assert_uint_eq(run.err_len, 0);
    test_run_free(&run);
    free(eh_elf);

    test_run_free(&full);
    test_run_free(&beside);
    free(real);
    free(alone_dir);
    free(root);
    free(alone);
    program_free(&p);
}
END_TEST

START_TEST(test_help)
{
    struct test_run run;
    test_run_cfisem((const char *[]){"unwind", "--help", NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "--caller"));
    ck_assert_ptr_nonnull(strstr(run.out, "--mem"));
    test_run_free(&run);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cli_unwind");
    TCase *tc = tcase_create("unwind");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_json_with_dump, 0, NENGINES);
    tcase_add_loop_test(tc, test_dump_fault, 0, NENGINES);
    tcase_add_loop_test(tc, test_fault_option, 0, NENGINES);
    tcase_add_loop_test(tc, test_caller_frame, 0, NENGINES);
    tcase_add_loop_test(tc, test_rip_defaults_to_pc, 0, NENGINES);
    tcase_add_loop_test(tc, test_unknown_register_named, 0, NENGINES);
    tcase_add_loop_test(tc, test_text_output, 0, NENGINES);
    tcase_add_loop_test(tc, test_signal_frame_flag, 0, NENGINES);
    tcase_add_loop_test(tc, test_narrow_and_wide_registers, 0, NENGINES);
    tcase_add_loop_test(tc, test_no_fde, 0, NENGINES);
    tcase_add_loop_test(tc, test_expression_error_offset, 0, NENGINES);
    tcase_add_test(tc, test_engines_print_the_same);
    tcase_add_test(tc, test_outside_engines);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_bad_file);
    tcase_add_test(tc, test_help);
    tcase_add_test(tc, test_pc_symbol);
    tcase_add_test(tc, test_caller_pc_named);
    tcase_add_test(tc, test_debug_dir);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
