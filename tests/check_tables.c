/* check_tables.c — the compact tables checked against .eh_frame:
 * .eh_frame_hdr (diff/validate_hdr.h).
 *
 * A small shared object with three FDEs is linked with its .eh_frame_hdr;
 * each test edits a copy of the table's bytes and checks that exactly the
 * problem made is reported (and none for the table as the linker wrote
 * it). */
#include <check.h>
#include <gelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff/validate_hdr.h"
#include "support.h"

/* ------------------------------------------------------------------ */
/* A linked object and its table                                        */
/* ------------------------------------------------------------------ */

static const char three_functions[] =
    "\t.text\n"
    "\t.globl f\nf:\t.cfi_startproc\n\tpush %rbp\n\t.cfi_def_cfa_offset 16\n"
    "\tpop %rbp\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n"
    "\t.globl g\ng:\t.cfi_startproc\n\tnop\n\tret\n\t.cfi_endproc\n"
    "\t.globl h\nh:\t.cfi_startproc\n\tnop\n\tnop\n\tret\n\t.cfi_endproc\n";

struct built {
    char *dir;
    char *source, *object, *edited;
    char *bytes;              /* the object's bytes */
    size_t size;
    uint64_t hdr_offset;      /* file offset of .eh_frame_hdr */
    uint64_t hdr_size;
};

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

static bool find_section(const char *path, const char *name, uint64_t *offset,
                         uint64_t *size)
{
    ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    ck_assert_ptr_nonnull(elf);
    size_t names;
    ck_assert_int_eq(elf_getshdrstrndx(elf, &names), 0);
    bool found = false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !found;
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        ck_assert_ptr_nonnull(gelf_getshdr(scn, &shdr));
        const char *scn_name = elf_strptr(elf, names, shdr.sh_name);
        if (scn_name && strcmp(scn_name, name) == 0) {
            *offset = shdr.sh_offset;
            *size = shdr.sh_size;
            found = true;
        }
    }
    elf_end(elf);
    close(fd);
    return found;
}

static void build(struct built *b, const char *text, const char *flags)
{
    memset(b, 0, sizeof *b);
    b->dir = test_temp_dir();
    b->source = join(b->dir, "case.S");
    b->object = join(b->dir, "case.so");
    b->edited = join(b->dir, "edited.so");
    ck_assert_int_eq(test_write_file(b->source, text, strlen(text)), 0);
    char command[9000];
    snprintf(command, sizeof command,
             "cc -shared -nostdlib -Wl,--build-id=none %s -o %s %s", flags,
             b->object, b->source);
    ck_assert_msg(system(command) == 0, "%s", command);
    b->bytes = test_read_file(b->object, &b->size);
    ck_assert_ptr_nonnull(b->bytes);
    find_section(b->object, ".eh_frame_hdr", &b->hdr_offset, &b->hdr_size);
}

static void built_free(struct built *b)
{
    const char *paths[] = {b->source, b->object, b->edited};
    for (size_t i = 0; i < 3; i++) {
        unlink(paths[i]);
        free((char *)paths[i]);
    }
    rmdir(b->dir);
    free(b->dir);
    free(b->bytes);
}

/* The table of the object as edited in b->bytes. */
static void check_edited(struct built *b, struct diff_hdr_check *check)
{
    ck_assert_int_eq(test_write_file(b->edited, b->bytes, b->size), 0);
    struct cfi_file *file = NULL;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(b->edited, &file, &diag) == CFI_OK, "%s",
                  diag.message);
    ck_assert_int_eq(diff_hdr_check(file, check), CFI_OK);
    cfi_file_close(file);
}

/* Byte `at` of the table. */
static uint8_t *hdr_byte(struct built *b, size_t at)
{
    ck_assert_uint_lt(at, b->hdr_size);
    return (uint8_t *)b->bytes + b->hdr_offset + at;
}

static uint32_t get32(struct built *b, size_t at)
{
    return (uint32_t)cfi_load_le(hdr_byte(b, at), 4);
}

static void put32(struct built *b, size_t at, uint32_t value)
{
    for (unsigned i = 0; i < 4; i++)
        *hdr_byte(b, at + i) = (uint8_t)(value >> (8 * i));
}

/* The linker's layout (encodings 0x1b 0x03 0x3b): entry i's initial
 * location at 12 + 8i, its FDE address at 16 + 8i. */
enum { COUNT_AT = 8, FIRST_ENTRY = 12 };

static bool has_problem(const struct diff_hdr_check *check,
                        enum diff_hdr_problem_kind kind)
{
    for (size_t i = 0; i < check->nkept; i++)
        if (check->kept[i].kind == kind)
            return true;
    return false;
}

static struct diff_hdr_check *new_check(void)
{
    struct diff_hdr_check *check = malloc(sizeof *check);
    ck_assert_ptr_nonnull(check);
    return check;
}

/* ------------------------------------------------------------------ */
/* .eh_frame_hdr                                                        */
/* ------------------------------------------------------------------ */

START_TEST(hdr_as_linked)
{
    struct built b;
    build(&b, three_functions, "");
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert(check->present);
    ck_assert_uint_eq(check->version, 1);
    ck_assert_uint_eq(check->table_enc, 0x3b);
    ck_assert_uint_eq(check->entries, 3);
    ck_assert_uint_eq(check->nfdes, 3);
    ck_assert_uint_eq(check->nproblems, 0);
    free(check);
    built_free(&b);
}
END_TEST

START_TEST(hdr_absent)
{
    struct built b;
    build(&b, three_functions, "-Wl,--no-eh-frame-hdr");
    ck_assert_uint_eq(b.hdr_size, 0);
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert(!check->present);
    ck_assert_uint_eq(check->nproblems, 0);
    free(check);
    built_free(&b);
}
END_TEST

START_TEST(hdr_version)
{
    struct built b;
    build(&b, three_functions, "");
    *hdr_byte(&b, 0) = 2;
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, DIFF_HDR_version);
    *hdr_byte(&b, 0) = 1;
    *hdr_byte(&b, 3) = 0x0d; /* no such format */
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, DIFF_HDR_encoding);
    free(check);
    built_free(&b);
}
END_TEST

START_TEST(hdr_eh_frame_ptr)
{
    struct built b;
    build(&b, three_functions, "");
    put32(&b, 4, get32(&b, 4) + 8);
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, DIFF_HDR_eh_frame_ptr);
    free(check);
    built_free(&b);
}
END_TEST

/* Two entries out of order: unsorted, the entries themselves right. */
START_TEST(hdr_unsorted)
{
    struct built b;
    build(&b, three_functions, "");
    uint32_t loc0 = get32(&b, FIRST_ENTRY), fde0 = get32(&b, FIRST_ENTRY + 4);
    put32(&b, FIRST_ENTRY, get32(&b, FIRST_ENTRY + 8));
    put32(&b, FIRST_ENTRY + 4, get32(&b, FIRST_ENTRY + 12));
    put32(&b, FIRST_ENTRY + 8, loc0);
    put32(&b, FIRST_ENTRY + 12, fde0);
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, DIFF_HDR_unsorted);
    ck_assert_uint_eq(check->kept[0].entry, 1);
    free(check);
    built_free(&b);
}
END_TEST

/* An entry whose location is not its FDE's pc_begin (but still sorted). */
START_TEST(hdr_wrong_location)
{
    struct built b;
    build(&b, three_functions, "");
    put32(&b, FIRST_ENTRY + 8, get32(&b, FIRST_ENTRY + 8) + 1);
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, DIFF_HDR_wrong_location);
    ck_assert_uint_eq(check->kept[0].entry, 1);
    free(check);
    built_free(&b);
}
END_TEST

/* Entry 2 pointing to entry 1's FDE: a repeated FDE, a missing one, and
 * the location wrong for the FDE pointed to. Then a pointer into the
 * middle of an FDE. */
START_TEST(hdr_fde_pointers)
{
    struct built b;
    build(&b, three_functions, "");
    uint32_t fde2 = get32(&b, FIRST_ENTRY + 20);
    put32(&b, FIRST_ENTRY + 20, get32(&b, FIRST_ENTRY + 12));
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert(has_problem(check, DIFF_HDR_repeated_fde));
    ck_assert(has_problem(check, DIFF_HDR_missing_fde));
    ck_assert(has_problem(check, DIFF_HDR_wrong_location));
    ck_assert_uint_eq(check->nproblems, 3);
    put32(&b, FIRST_ENTRY + 20, fde2 + 4);
    check_edited(&b, check);
    ck_assert(has_problem(check, DIFF_HDR_not_an_fde));
    ck_assert(has_problem(check, DIFF_HDR_missing_fde));
    ck_assert_uint_eq(check->nproblems, 2);
    free(check);
    built_free(&b);
}
END_TEST

/* fde_count one short: the count differs and the last FDE is missing;
 * one more than the section holds: truncated. */
START_TEST(hdr_count)
{
    struct built b;
    build(&b, three_functions, "");
    put32(&b, COUNT_AT, 2);
    struct diff_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert(has_problem(check, DIFF_HDR_count));
    ck_assert(has_problem(check, DIFF_HDR_missing_fde));
    ck_assert_uint_eq(check->nproblems, 2);
    put32(&b, COUNT_AT, 0x10000000);
    check_edited(&b, check);
    ck_assert(has_problem(check, DIFF_HDR_count));
    ck_assert(has_problem(check, DIFF_HDR_truncated));
    ck_assert_uint_eq(check->entries, 3);
    free(check);
    built_free(&b);
}
END_TEST

/* The command: exit 0 for the linker's table, 1 with the problem named
 * for an edited one. */
START_TEST(hdr_command)
{
    struct built b;
    build(&b, three_functions, "");
    const char *args[] = {"validate", b.object, "--hdr", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 problems"));
    test_run_free(&run);
    put32(&b, FIRST_ENTRY + 8, get32(&b, FIRST_ENTRY + 8) + 1);
    ck_assert_int_eq(test_write_file(b.edited, b.bytes, b.size), 0);
    args[1] = b.edited;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 1);
    ck_assert_ptr_nonnull(strstr(run.out, "wrong_location"));
    ck_assert_ptr_nonnull(strstr(run.out, "result: 1 problem\n"));
    test_run_free(&run);
    built_free(&b);
}
END_TEST

/* diff reports a file whose table is wrong, and exits 1. */
START_TEST(hdr_in_diff)
{
    struct built b;
    build(&b, three_functions, "");
    put32(&b, COUNT_AT, 2);
    ck_assert_int_eq(test_write_file(b.edited, b.bytes, b.size), 0);
    const char *args[] = {"diff", b.object, "--engines", "il,interp", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_null(strstr(run.err, ".eh_frame_hdr"));
    test_run_free(&run);
    args[1] = b.edited;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 1);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, ".eh_frame_hdr is wrong: 2 problems"));
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 new mismatches"));
    test_run_free(&run);
    built_free(&b);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("tables");
    TCase *hdr = tcase_create("eh_frame_hdr");
    tcase_set_timeout(hdr, 60);
    tcase_add_test(hdr, hdr_as_linked);
    tcase_add_test(hdr, hdr_absent);
    tcase_add_test(hdr, hdr_version);
    tcase_add_test(hdr, hdr_eh_frame_ptr);
    tcase_add_test(hdr, hdr_unsorted);
    tcase_add_test(hdr, hdr_wrong_location);
    tcase_add_test(hdr, hdr_fde_pointers);
    tcase_add_test(hdr, hdr_count);
    tcase_add_test(hdr, hdr_command);
    tcase_add_test(hdr, hdr_in_diff);
    suite_add_tcase(suite, hdr);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
