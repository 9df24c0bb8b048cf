/* SPDX-License-Identifier: MIT */
/* check_malformed.c — corrupted ELF files through the command line.
 *
 * A small shared object is built from assembly, then copied many times,
 * each copy broken in one way: truncated files and sections, bad lengths,
 * bad CIE pointers, bad LEB128, unknown opcodes, huge register numbers, a
 * remember stack deeper than the bound, and so on. `cfisem il` on each
 * must print exactly one line on stderr naming the file, print no crash
 * report, and exit 2; `cfisem unwind` at a PC of the broken FDE must name
 * the file on stderr too and exit 2 (file rejected) or 3 (the frame cannot
 * be unwound); `cfisem compile` must exit 2 naming the file; `cfisem diff`
 * must name the file once on stderr and exit 2 (file rejected) or 0 (it
 * loads: the engines agree on the errors of its broken FDE). When the
 * suite runs against the ASan+UBSan build, any
 * sanitizer report ends the process with a signal or another exit code,
 * which fails the test. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "support.h"

/* f's FDE program is 60 DW_CFA_GNU_args_size 0 (gas would drop trailing
 * nops): 120 bytes of room to write any program over it. */
static const char base_source[] =
    "\t.text\n"
    "\t.globl f\n"
    "f:\n"
    "\t.cfi_startproc\n"
    "\t.cfi_escape "
    "0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,"
    "0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,"
    "0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,"
    "0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,"
    "0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,"
    "0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0,0x2e,0\n"
    "\t.skip 64, 0x90\n"
    "\tret\n"
    "\t.cfi_endproc\n"
    "\t.globl g\n"
    "g:\n"
    "\t.cfi_startproc\n"
    "\tpush %rbp\n"
    "\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset %rbp, -16\n"
    "\tpop %rbp\n"
    "\t.cfi_def_cfa_offset 8\n"
    "\tret\n"
    "\t.cfi_endproc\n";

enum { PROGRAM_ROOM = 120 };

/* The base file and where its records lie, as file offsets. */
struct base {
    char *dir;
    char *path;
    uint8_t *bytes;
    size_t size;
    uint64_t cie;          /* f's CIE record */
    uint64_t fde;          /* f's FDE record */
    uint64_t program;      /* f's FDE instructions */
    uint64_t program_len;
    uint64_t pc;           /* an address inside f */
    uint64_t shoff;        /* section header table */
};

static struct base base;

/* Building the base runs before any test: a failure ends the run. */
static void require(bool condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "check_malformed: cannot build the base file: %s\n",
                what);
        exit(EXIT_FAILURE);
    }
}

static uint64_t file_offset(const struct cfi_file *file, uint64_t section_offset)
{
    const struct cfi_segment *s = cfi_file_segment(file, file->eh_frame_addr);
    require(s != NULL, "no segment holds .eh_frame");
    return (uint64_t)(s->bytes - file->image) +
           (file->eh_frame_addr - s->vaddr) + section_offset;
}

static void build_base(void)
{
    base.dir = test_temp_dir();
    char source[4096], command[8192];
    snprintf(source, sizeof source, "%s/base.S", base.dir);
    base.path = malloc(4096);
    snprintf(base.path, 4096, "%s/base.so", base.dir);
    require(test_write_file(source, base_source, strlen(base_source)) == 0,
            "cannot write the source");
    snprintf(command, sizeof command,
             "cc -shared -nostdlib -Wl,--build-id=none -o %s %s", base.path,
             source);
    require(system(command) == 0, command);
    struct cfi_file *file;
    struct cfi_diag diag;
    require(cfi_file_open(base.path, &file, &diag) == CFI_OK, "cannot load it");
    const struct cfi_fde *f = &file->fdes[0];
    require(f->instructions_len >= PROGRAM_ROOM, "f's program is too short");
    base.fde = file_offset(file, f->offset);
    base.cie = file_offset(file, f->cie->offset);
    base.program = file_offset(file, f->instructions_offset);
    base.program_len = f->instructions_len;
    base.pc = f->pc_begin + 4;
    cfi_file_close(file);
    base.bytes = (uint8_t *)test_read_file(base.path, &base.size);
    base.shoff = cfi_load_le(base.bytes + 0x28, 8);
}

/* One corruption: a name, and a function that breaks a copy in place
 * (and may shorten it through *size). */
struct corruption {
    const char *name;
    void (*apply)(uint8_t *bytes, size_t *size);
};

static void put(uint8_t *bytes, uint64_t at, const void *data, size_t len)
{
    memcpy(bytes + at, data, len);
}

/* Replaces f's FDE program with `len` bytes, the rest nops. */
static void program(uint8_t *bytes, const uint8_t *code, size_t len)
{
    memset(bytes + base.program, 0, PROGRAM_ROOM);
    put(bytes, base.program, code, len);
}

#define PROGRAM(name, ...)                                                \
    static void name(uint8_t *b, size_t *size)                            \
    {                                                                     \
        (void)size;                                                       \
        const uint8_t code[] = {__VA_ARGS__};                             \
        program(b, code, sizeof code);                                    \
    }

static void truncate_half(uint8_t *b, size_t *size) { (void)b; *size /= 2; }
static void truncate_header(uint8_t *b, size_t *size) { (void)b; *size = 40; }
static void truncate_empty(uint8_t *b, size_t *size) { (void)b; *size = 0; }
static void truncate_in_eh_frame(uint8_t *b, size_t *size)
{
    (void)b;
    *size = base.program + 10;
}
static void not_elf(uint8_t *b, size_t *size)
{
    (void)size;
    put(b, 0, "#!/bin/sh\n", 10);
}
static void elf_class_32(uint8_t *b, size_t *size) { (void)size; b[4] = 1; }
static void section_headers_past_end(uint8_t *b, size_t *size)
{
    (void)size;
    uint64_t far = *size + 4096;
    put(b, 0x28, &far, 8);
}
static void program_headers_past_end(uint8_t *b, size_t *size)
{
    uint64_t far = *size + 4096;
    put(b, 0x20, &far, 8);
}
static void cie_length_past_end(uint8_t *b, size_t *size)
{
    (void)size;
    put(b, base.cie, "\xf0\xff\x00\x00", 4);
}
static void fde_length_past_end(uint8_t *b, size_t *size)
{
    (void)size;
    put(b, base.fde, "\xf0\xff\x00\x00", 4);
}
static void fde_length_too_short(uint8_t *b, size_t *size)
{
    (void)size;
    put(b, base.fde, "\x05\x00\x00\x00", 4);
}
static void cie_pointer_to_nowhere(uint8_t *b, size_t *size)
{
    (void)size;
    put(b, base.fde + 4, "\x00\x00\x00\x70", 4);
}
static void cie_pointer_to_fde(uint8_t *b, size_t *size)
{
    (void)size;
    uint32_t self = 0; /* points at the FDE's own pointer field: not a CIE */
    put(b, base.fde + 4, &self, 4);
}
static void cie_bad_version(uint8_t *b, size_t *size)
{
    (void)size;
    b[base.cie + 8] = 9;
}
static void cie_bad_augmentation(uint8_t *b, size_t *size)
{
    (void)size;
    b[base.cie + 9] = 'y';
}

PROGRAM(unknown_opcode, 0x17)
PROGRAM(huge_register, 0x05, 0xff, 0xff, 0xff, 0x0f, 0x01)
PROGRAM(register_128, 0x07, 0x80, 0x01)
PROGRAM(leb128_overflow, 0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0x7f)
PROGRAM(expression_past_end, 0x0f, 0x7f)
PROGRAM(restore_state_empty, 0x0b)
PROGRAM(offset_on_expression_cfa, 0x0f, 0x01, 0x30, 0x0e, 0x10)
PROGRAM(advance_past_end, 0x04, 0xff, 0xff, 0xff, 0x7f)
PROGRAM(window_save, 0x2d)

static void leb128_runs_off(uint8_t *b, size_t *size)
{
    (void)size;
    memset(b + base.program, 0, base.program_len);
    b[base.program + base.program_len - 2] = 0x0e;
    b[base.program + base.program_len - 1] = 0x80;
}

static void remember_too_deep(uint8_t *b, size_t *size)
{
    (void)size;
    memset(b + base.program, 0x0a, PROGRAM_ROOM);
}

static const struct corruption corruptions[] = {
    {"truncate_half", truncate_half},
    {"truncate_header", truncate_header},
    {"truncate_empty", truncate_empty},
    {"truncate_in_eh_frame", truncate_in_eh_frame},
    {"not_elf", not_elf},
    {"elf_class_32", elf_class_32},
    {"section_headers_past_end", section_headers_past_end},
    {"program_headers_past_end", program_headers_past_end},
    {"cie_length_past_end", cie_length_past_end},
    {"fde_length_past_end", fde_length_past_end},
    {"fde_length_too_short", fde_length_too_short},
    {"cie_pointer_to_nowhere", cie_pointer_to_nowhere},
    {"cie_pointer_to_fde", cie_pointer_to_fde},
    {"cie_bad_version", cie_bad_version},
    {"cie_bad_augmentation", cie_bad_augmentation},
    {"unknown_opcode", unknown_opcode},
    {"huge_register", huge_register},
    {"register_128", register_128},
    {"leb128_overflow", leb128_overflow},
    {"leb128_runs_off", leb128_runs_off},
    {"expression_past_end", expression_past_end},
    {"restore_state_empty", restore_state_empty},
    {"offset_on_expression_cfa", offset_on_expression_cfa},
    {"advance_past_end", advance_past_end},
    {"window_save", window_save},
    {"remember_too_deep", remember_too_deep},
};
enum { NCORRUPTIONS = sizeof corruptions / sizeof corruptions[0] };

static char *write_corrupted(const struct corruption *c)
{
    uint8_t *copy = malloc(base.size);
    memcpy(copy, base.bytes, base.size);
    size_t size = base.size;
    c->apply(copy, &size);
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/%s.so", base.dir, c->name);
    ck_assert_int_eq(test_write_file(path, copy, size), 0);
    free(copy);
    return path;
}

/* Exactly one stderr line, naming the file, and no sanitizer report. */
static void assert_one_line_naming(const struct test_run *run,
                                   const char *path, const char *what)
{
    ck_assert_msg(run->signal == 0, "%s: killed by signal %d", what,
                  run->signal);
    ck_assert_msg(test_count_lines(run->err) == 1,
                  "%s: %zu stderr lines:\n%s", what,
                  test_count_lines(run->err), run->err);
    ck_assert_msg(strstr(run->err, path) != NULL,
                  "%s: stderr does not name the file: %s", what, run->err);
    ck_assert_msg(!strstr(run->err, "Sanitizer"), "%s: %s", what, run->err);
}

START_TEST(test_il_rejects)
{
    const struct corruption *c = &corruptions[_i];
    char *path = write_corrupted(c);
    struct test_run run;
    test_run_cfisem((const char *[]){"il", path, NULL}, &run);
    ck_assert_msg(run.exit_code == 2, "%s: exit %d, stderr: %s", c->name,
                  run.exit_code, run.err);
    assert_one_line_naming(&run, path, c->name);
    test_run_free(&run);
    free(path);
}
END_TEST

START_TEST(test_unwind_rejects)
{
    const struct corruption *c = &corruptions[_i];
    char *path = write_corrupted(c);
    char pc[32];
    snprintf(pc, sizeof pc, "0x%" PRIx64, base.pc);
    struct test_run run;
    test_run_cfisem((const char *[]){"unwind", path, "--pc", pc, "--regs",
                                     "rsp=0x7ffe1000", NULL}, &run);
    ck_assert_msg(run.exit_code == 2 || run.exit_code == 3,
                  "%s: exit %d, stderr: %s", c->name, run.exit_code, run.err);
    assert_one_line_naming(&run, path, c->name);
    test_run_free(&run);
    test_run_cfisem((const char *[]){"unwind", path, "--pc", pc, "--regs",
                                     "rsp=0x7ffe1000", "--engine", "il", NULL},
                    &run);
    ck_assert_msg(run.exit_code == 2 || run.exit_code == 3,
                  "%s (il): exit %d, stderr: %s", c->name, run.exit_code,
                  run.err);
    assert_one_line_naming(&run, path, c->name);
    test_run_free(&run);
    free(path);
}
END_TEST

START_TEST(test_compile_rejects)
{
    const struct corruption *c = &corruptions[_i];
    char *path = write_corrupted(c);
    char out[4200];
    snprintf(out, sizeof out, "%s.eh_elf.so", path);
    struct test_run run;
    test_run_cfisem((const char *[]){"compile", path, "-o", out, NULL}, &run);
    ck_assert_msg(run.exit_code == 2, "%s: exit %d, stderr: %s", c->name,
                  run.exit_code, run.err);
    assert_one_line_naming(&run, path, c->name);
    test_run_free(&run);
    free(path);
}
END_TEST

START_TEST(test_diff_names_the_file)
{
    const struct corruption *c = &corruptions[_i];
    char *path = write_corrupted(c);
    struct test_run run;
    test_run_cfisem((const char *[]){"diff", path, "--engines", "il,interp",
                                     "--states", "1", NULL}, &run);
    ck_assert_msg(run.exit_code == 2 || run.exit_code == 0,
                  "%s: exit %d, stderr: %s", c->name, run.exit_code, run.err);
    assert_one_line_naming(&run, path, c->name);
    test_run_free(&run);
    free(path);
}
END_TEST

START_TEST(test_base_is_fine)
{
    struct test_run run;
    test_run_cfisem((const char *[]){"il", base.path, NULL}, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_str_eq(run.err, "");
    test_run_free(&run);
}
END_TEST

int main(void)
{
    build_base();
    Suite *suite = suite_create("malformed");
    TCase *tc = tcase_create("corrupted_files");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_base_is_fine);
    tcase_add_loop_test(tc, test_il_rejects, 0, NCORRUPTIONS);
    tcase_add_loop_test(tc, test_unwind_rejects, 0, NCORRUPTIONS);
    tcase_add_loop_test(tc, test_compile_rejects, 0, NCORRUPTIONS);
    tcase_add_loop_test(tc, test_diff_names_the_file, 0, NCORRUPTIONS);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    printf("malformed: %d corrupted files, each through il, unwind, compile "
           "and diff\n",
           NCORRUPTIONS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
