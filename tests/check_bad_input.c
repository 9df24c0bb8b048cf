/* SPDX-License-Identifier: MIT */
/* check_bad_input.c — regressions of bad and unusual input: each test is
 * named after the defect it pins, and runs the cfisem binary as a user
 * would. The promise: one line on stderr naming the file and what is
 * wrong, a documented non-zero exit status, never a crash or a hang.
 * Under the ASan+UBSan build a sanitizer report ends the process with a
 * signal or another exit status, which fails the test. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

/* A temporary folder per test: what each test writes. */
struct scratch {
    char *dir;
    char path[4200];
};

static void scratch_open(struct scratch *s)
{
    s->dir = test_temp_dir();
    ck_assert_ptr_nonnull(s->dir);
}

static const char *scratch_path(struct scratch *s, const char *name)
{
    snprintf(s->path, sizeof s->path, "%s/%s", s->dir, name);
    return s->path;
}

/* Assembles `source` into DIR/NAME: a shared object with its text at
 * 0x1000, or (object) a relocatable object. Returns a malloc'd path. */
static char *assemble(struct scratch *s, const char *name, const char *source,
                      bool object)
{
    char src[4300], command[9000];
    snprintf(src, sizeof src, "%s/%s.S", s->dir, name);
    ck_assert_int_eq(test_write_file(src, source, strlen(source)), 0);
    char *out = strdup(scratch_path(s, name));
    snprintf(command, sizeof command,
             object ? "cc -c -o '%s' '%s'"
                    : "cc -shared -nostdlib -Wl,--section-start=.text=0x1000 "
                      "-Wl,--build-id=none -o '%s' '%s'",
             out, src);
    ck_assert_int_eq(system(command), 0);
    return out;
}

/* One function f whose CFI is `escape` (the operands of .cfi_escape),
 * followed by `code` bytes of nops. */
static char *one_function(struct scratch *s, const char *name,
                          const char *escape, unsigned code, bool object)
{
    char source[1024];
    snprintf(source, sizeof source,
             "\t.text\n\t.globl f\nf:\n\t.cfi_startproc\n"
             "\t.cfi_escape %s\n\t.skip %u, 0x90\n\tret\n\t.cfi_endproc\n",
             escape, code);
    return assemble(s, name, source, object);
}

static void run(const char *const *args, struct test_run *r)
{
    test_run_cfisem(args, r);
    ck_assert_msg(r->signal == 0, "%s crashed (signal %d): %s", args[0],
                  r->signal, r->err);
}

/* Exactly one line on stderr, which names `path` and holds `text`. */
static void assert_one_line(const struct test_run *r, const char *path,
                            const char *text)
{
    ck_assert_msg(test_count_lines(r->err) == 1, "stderr: [%s]", r->err);
    ck_assert_msg(strstr(r->err, path) != NULL, "stderr: [%s]", r->err);
    ck_assert_msg(strstr(r->err, text) != NULL, "stderr: [%s]", r->err);
}

/* ------------------------------------------------------------------ */
/* Files that are not regular files                                     */
/* ------------------------------------------------------------------ */

/* Regression (open waited for a writer: every command hung on a FIFO):
 * a FIFO is refused at once by every command that reads a file. */
START_TEST(test_fifo_refused_by_every_command)
{
    struct scratch s;
    scratch_open(&s);
    char *fifo = strdup(scratch_path(&s, "fifo"));
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    char *so = strdup(scratch_path(&s, "out.so"));
    char *good = test_build_path("corpus/cases/prologue.so");
    char dump[4300];
    snprintf(dump, sizeof dump, "%s@0x7ffe1000", fifo);
    const char *const commands[][12] = {
        {"il", fifo, NULL},
        {"unwind", fifo, "--pc", "0x1000", "--regs", "rsp=0x1000", NULL},
        {"unwind", good, "--pc", "0x1000", "--regs", "rsp=0x7ffe1000", "--mem",
         dump, NULL},
        {"unwind", good, "--pc", "0x1000", "--regs", "rsp=0x1000", "--engine",
         "compiled", "--eh-elf", fifo, NULL},
        {"compile", fifo, "-o", so, NULL},
        {"cache", fifo, "--cache", s.dir, NULL},
        {"diff", fifo, "--engines", "il", NULL},
        {"validate", fifo, so, NULL},
        {"validate", good, fifo, NULL},
        {"validate", good, fifo, "--abi", "v1", NULL},
        {"explain", fifo, "--pc", "0x1000", NULL},
        {"explain", good, "--pc", "0x1000", "--regs", "rsp=0x7ffe1000",
         "--mem", dump, NULL},
        {"stats", fifo, NULL},
        {"stats", "--manifest", fifo, NULL},
        {"diff", "--manifest", fifo, NULL},
        {"report", "merge", fifo, NULL},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        struct test_run r;
        run(commands[i], &r);
        ck_assert_msg(r.exit_code == 2, "%s: exit %d", commands[i][0],
                      r.exit_code);
        assert_one_line(&r, fifo, "not a regular file");
        test_run_free(&r);
    }
    free(good);
    free(so);
    free(fifo);
    free(s.dir);
}
END_TEST

/* A directory, and a missing file: the system's reason is named. */
START_TEST(test_directory_and_missing_file_say_why)
{
    struct scratch s;
    scratch_open(&s);
    struct test_run r;
    run((const char *[]){"il", s.dir, NULL}, &r);
    ck_assert_int_eq(r.exit_code, 2);
    assert_one_line(&r, s.dir, "is a directory");
    test_run_free(&r);
    const char *missing = scratch_path(&s, "missing");
    run((const char *[]){"il", missing, NULL}, &r);
    ck_assert_int_eq(r.exit_code, 2);
    assert_one_line(&r, missing, "cannot open file: no such file or directory");
    test_run_free(&r);
    free(s.dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Outside libraries                                                     */
/* ------------------------------------------------------------------ */

/* Regression (libdw's error text was read after libdw was unloaded: a
 * segfault in unwind, a use-after-free in diff): rip's rule is an
 * expression whose only byte is no operation (DW_CFA_expression rip,
 * length 1, 0x04). libdw's own text reaches the output. */
START_TEST(test_libdw_error_text_outlives_libdw)
{
    struct scratch s;
    scratch_open(&s);
    char *so = one_function(&s, "libdw_text", "0x10, 0x10, 0x01, 0x04", 1,
                            false);
    struct test_run r;
    run((const char *[]){"unwind", so, "--pc", "0x1000", "--regs",
                         "rsp=0x7ffe1000", "--engine", "libdw", NULL}, &r);
    ck_assert_msg(r.exit_code == 3, "exit %d: %s", r.exit_code, r.err);
    ck_assert_msg(!strcmp(r.out, "error: expr: invalid DWARF (rip)\n"),
                  "stdout: [%s]", r.out);
    test_run_free(&r);
    /* In diff, the answers cross a pipe after the engines are closed: a
     * CFA expression whose skip lacks its operand, which libdw calls
     * invalid DWARF where cfi.h says expr; the JSON shows libdw's text. */
    char *truncated = one_function(&s, "libdw_truncated",
                                   "0x0f, 0x04, 0x30, 0x12, 0x2f, 0xfd", 1,
                                   false);
    const char *json = scratch_path(&s, "diff.json");
    run((const char *[]){"diff", truncated, "--engines", "libdw", "--json",
                         json, NULL}, &r);
    free(truncated);
    ck_assert_msg(r.exit_code <= 1, "exit %d: %s", r.exit_code, r.err);
    char *text = test_read_file(json, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "invalid DWARF") != NULL, "no libdw text");
    free(text);
    test_run_free(&r);
    free(so);
    free(s.dir);
}
END_TEST

/* Regression (the libdwarf adapter scanned only the FDE cfisem finds at
 * the PC; on a relocatable object libdwarf saw that FDE elsewhere and ran
 * it unguarded: a crash in libdwarf): DW_CFA_expression on register
 * 2^32 + 6, asked at 0x50, past the function. */
START_TEST(test_libdwarf_guard_on_relocatable_object)
{
    struct scratch s;
    scratch_open(&s);
    char *object = one_function(
        &s, "guard.o", "0x10, 0x86, 0x80, 0x80, 0x80, 0x10, 0x01, 0x30", 0x40,
        true);
    static const char *const pcs[] = {"0x0", "0x10", "0x50"};
    for (size_t i = 0; i < 3; i++) {
        struct test_run r;
        run((const char *[]){"unwind", object, "--pc", pcs[i], "--regs",
                             "rsp=0x7ffe1000", "--engine", "libdwarf", NULL},
            &r);
        ck_assert_msg(r.exit_code == 3, "pc %s: exit %d: %s", pcs[i],
                      r.exit_code, r.err);
        test_run_free(&r);
    }
    struct test_run r;
    run((const char *[]){"diff", object, "--engines", "libdwarf", NULL}, &r);
    ck_assert_msg(r.exit_code == 0 || r.exit_code == 2, "exit %d: %s",
                  r.exit_code, r.out);
    ck_assert_msg(strstr(r.out, "crashed") == NULL, "%s", r.out);
    test_run_free(&r);
    free(object);
    free(s.dir);
}
END_TEST

/* Regression (libunwind loops for ever on a CFA expression that jumps
 * back, and cfisem diff never returned): lit0; dup; skip -3. libunwind is
 * not asked (its model reaches the step limit); every other engine
 * agrees on step_limit. */
START_TEST(test_libunwind_loop_refused)
{
    struct scratch s;
    scratch_open(&s);
    char *so = one_function(&s, "loop", "0x0f, 0x05, 0x30, 0x12, 0x2f, 0xfd, 0xff",
                            1, false);
    struct test_run r;
    run((const char *[]){"unwind", so, "--pc", "0x1000", "--regs",
                         "rsp=0x7ffe1000", "--engine", "libunwind", NULL}, &r);
    ck_assert_msg(r.exit_code == 3, "exit %d: %s", r.exit_code, r.err);
    ck_assert_msg(strstr(r.out, "not comparable: libunwind: a DWARF "
                                "expression that jumps back") != NULL,
                  "%s", r.out);
    test_run_free(&r);
    run((const char *[]){"diff", so, NULL}, &r);
    ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.out);
    ck_assert_msg(strstr(r.out, "step_limit 8") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "timed out") == NULL, "%s", r.out);
    test_run_free(&r);
    free(so);
    free(s.dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* cfisem unwind: code that is not cfisem's runs in a child             */
/* ------------------------------------------------------------------ */

/* A full-ABI eh_elf (compile/eh_elf.h) that dies at 0x1000 and never
 * answers at 0x1001. */
static const char rogue_eh_elf[] =
    "#include \"compile/eh_elf.h\"\n"
    "#include <unistd.h>\n"
    "const char eh_elf_ident[] = EH_ELF_IDENT_FULL;\n"
    "const uint32_t eh_elf_abi_version = EH_ELF_ABI_VERSION;\n"
    "const struct eh_elf_object_id eh_elf_object_id = OBJECT_ID;\n"
    "int eh_elf_unwind(uint64_t pc, const struct eh_elf_regs *callee,\n"
    "                  const struct eh_elf_env *env,\n"
    "                  struct eh_elf_frame *frame)\n"
    "{\n"
    "    (void)callee; (void)env; (void)frame;\n"
    "    if (pc == 0x1000)\n"
    "        *(volatile int *)(uintptr_t)callee->value[0] = 0;\n"
    "    for (;;)\n"
    "        sleep(1);\n"
    "}\n";

static char *build_rogue(struct scratch *s)
{
    const char *source = scratch_path(s, "rogue.c");
    ck_assert_int_eq(test_write_file(source, rogue_eh_elf,
                                     strlen(rogue_eh_elf)), 0);
    char *src_dir = test_src_path("");
    char *out = strdup(scratch_path(s, "rogue.so"));
    char *prologue = test_build_path("corpus/cases/prologue.so");
    char *stamp = test_object_id_flag(prologue); /* it answers for prologue.so */
    char command[13000];
    snprintf(command, sizeof command,
             "cc -shared -fPIC -O2 -I'%s' %s -o '%s' '%s/rogue.c'", src_dir,
             stamp, out, s->dir);
    ck_assert_int_eq(system(command), 0);
    free(stamp);
    free(prologue);
    free(src_dir);
    return out;
}

/* Regression (unwind ran the outside engines and eh_elfs in its own
 * process: their crash was cfisem's): a crashing eh_elf gives one line
 * naming the engine and the signal, and exit status 4; one that never
 * answers is stopped after --timeout seconds, the same way. */
START_TEST(test_unwind_isolates_the_engine)
{
    struct scratch s;
    scratch_open(&s);
    char *rogue = build_rogue(&s);
    char *so = test_build_path("corpus/cases/prologue.so");
    struct test_run r;
    run((const char *[]){"unwind", so, "--pc", "0x1000", "--regs",
                         "rax=0x10,rsp=0x7ffe1000", "--engine", "compiled",
                         "--eh-elf", rogue, NULL}, &r);
    ck_assert_msg(r.exit_code == 4, "exit %d: %s", r.exit_code, r.err);
    assert_one_line(&r, so, "the compiled engine crashed (SIGSEGV)");
    test_run_free(&r);
    run((const char *[]){"unwind", so, "--pc", "0x1001", "--regs",
                         "rsp=0x7ffe1000", "--engine", "compiled", "--eh-elf",
                         rogue, "--timeout", "1", NULL}, &r);
    ck_assert_msg(r.exit_code == 4, "exit %d: %s", r.exit_code, r.err);
    assert_one_line(&r, so, "the compiled engine gave no answer in 1 s");
    test_run_free(&r);
    free(so);
    free(rogue);
    free(s.dir);
}
END_TEST

/* The isolated engines still answer as before, not comparable included. */
START_TEST(test_unwind_isolated_answers)
{
    char *so = test_build_path("corpus/cases/prologue.so");
    static const char *const engines[] = {"il", "libdwarf", "libdw",
                                          "libunwind"};
    char *first = NULL;
    for (size_t e = 0; e < 4; e++) {
        struct test_run r;
        run((const char *[]){"unwind", so, "--pc", "0x1002", "--regs",
                             "rsp=0x7ffe1000,rbx=5,r12=1,r13=2,r14=3,r15=4,"
                             "rax=1,rcx=2,rdx=3,rsi=4,rdi=5,r8=6,r9=7,r10=8,"
                             "r11=9",
                             "--engine", engines[e], NULL}, &r);
        ck_assert_msg(r.exit_code == 0, "%s: exit %d: %s", engines[e],
                      r.exit_code, r.err);
        /* The CFA and rip agree between all four. */
        char *cfa = strstr(r.out, "cfa = ");
        char *rip = strstr(r.out, "rip = ");
        ck_assert_ptr_nonnull(cfa);
        ck_assert_ptr_nonnull(rip);
        char line[256];
        snprintf(line, sizeof line, "%.*s|%.*s", (int)strcspn(cfa, "\n"), cfa,
                 (int)strcspn(rip, "\n"), rip);
        if (!first)
            first = strdup(line);
        ck_assert_str_eq(line, first);
        test_run_free(&r);
    }
    free(first);
    free(so);
}
END_TEST

/* ------------------------------------------------------------------ */
/* One line                                                             */
/* ------------------------------------------------------------------ */

/* Regression (a file with overlapping FDEs got a warning line before the
 * error line): an object whose two functions overlap (f in .text, g in
 * .text.g, both at 0) and whose g does restore_state on an empty stack. */
START_TEST(test_overlap_warning_not_before_error)
{
    struct scratch s;
    scratch_open(&s);
    static const char source[] =
        "\t.text\nf:\n\t.cfi_startproc\n\tnop\n\tret\n\t.cfi_endproc\n"
        "\t.section .text.g,\"ax\",@progbits\ng:\n\t.cfi_startproc\n"
        "\tnop\n\t.cfi_escape 0x0b\n\tret\n\t.cfi_endproc\n";
    char *object = assemble(&s, "overlap.o", source, true);
    struct test_run r;
    run((const char *[]){"il", object, NULL}, &r);
    ck_assert_int_eq(r.exit_code, 2);
    assert_one_line(&r, object, "restore_state");
    test_run_free(&r);
    free(object);
    free(s.dir);
}
END_TEST

static Suite *bad_input_suite(void)
{
    Suite *suite = suite_create("bad_input");
    TCase *files = tcase_create("files");
    tcase_set_timeout(files, 120);
    tcase_add_test(files, test_fifo_refused_by_every_command);
    tcase_add_test(files, test_directory_and_missing_file_say_why);
    tcase_add_test(files, test_overlap_warning_not_before_error);
    suite_add_tcase(suite, files);
    TCase *outside = tcase_create("outside");
    tcase_set_timeout(outside, 120);
    tcase_add_test(outside, test_libdw_error_text_outlives_libdw);
    tcase_add_test(outside, test_libdwarf_guard_on_relocatable_object);
    tcase_add_test(outside, test_libunwind_loop_refused);
    tcase_add_test(outside, test_unwind_isolates_the_engine);
    tcase_add_test(outside, test_unwind_isolated_answers);
    suite_add_tcase(suite, outside);
    return suite;
}

int main(void)
{
    SRunner *runner = srunner_create(bad_input_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
