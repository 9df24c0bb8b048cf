/* SPDX-License-Identifier: MIT */
/* check_tables.c — the compact tables checked against .eh_frame:
 * .eh_frame_hdr (engines/eh_frame_hdr.h) and SFrame (sframe/sframe.h, its
 * reader against readelf --sframe, and validate/sframe_check.h).
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

#include "engines/engines.h"
#include "validate/validate.h"
#include "sframe/sframe.h"
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
static void check_edited(struct built *b, struct engine_hdr_check *check)
{
    ck_assert_int_eq(test_write_file(b->edited, b->bytes, b->size), 0);
    struct cfi_file *file = NULL;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(b->edited, &file, &diag) == CFI_OK, "%s",
                  diag.message);
    ck_assert_int_eq(engine_hdr_check(file, check), CFI_OK);
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

static bool has_problem(const struct engine_hdr_check *check,
                        enum engine_hdr_problem_kind kind)
{
    for (size_t i = 0; i < check->nkept; i++)
        if (check->kept[i].kind == kind)
            return true;
    return false;
}

static struct engine_hdr_check *new_check(void)
{
    struct engine_hdr_check *check = malloc(sizeof *check);
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
    struct engine_hdr_check *check = new_check();
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
    struct engine_hdr_check *check = new_check();
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
    struct engine_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, ENGINE_HDR_version);
    *hdr_byte(&b, 0) = 1;
    *hdr_byte(&b, 3) = 0x0d; /* no such format */
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, ENGINE_HDR_encoding);
    free(check);
    built_free(&b);
}
END_TEST

START_TEST(hdr_eh_frame_ptr)
{
    struct built b;
    build(&b, three_functions, "");
    put32(&b, 4, get32(&b, 4) + 8);
    struct engine_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, ENGINE_HDR_eh_frame_ptr);
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
    struct engine_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, ENGINE_HDR_unsorted);
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
    struct engine_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert_uint_eq(check->nproblems, 1);
    ck_assert_int_eq(check->kept[0].kind, ENGINE_HDR_wrong_location);
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
    struct engine_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert(has_problem(check, ENGINE_HDR_repeated_fde));
    ck_assert(has_problem(check, ENGINE_HDR_missing_fde));
    ck_assert(has_problem(check, ENGINE_HDR_wrong_location));
    ck_assert_uint_eq(check->nproblems, 3);
    put32(&b, FIRST_ENTRY + 20, fde2 + 4);
    check_edited(&b, check);
    ck_assert(has_problem(check, ENGINE_HDR_not_an_fde));
    ck_assert(has_problem(check, ENGINE_HDR_missing_fde));
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
    struct engine_hdr_check *check = new_check();
    check_edited(&b, check);
    ck_assert(has_problem(check, ENGINE_HDR_count));
    ck_assert(has_problem(check, ENGINE_HDR_missing_fde));
    ck_assert_uint_eq(check->nproblems, 2);
    put32(&b, COUNT_AT, 0x10000000);
    check_edited(&b, check);
    ck_assert(has_problem(check, ENGINE_HDR_count));
    ck_assert(has_problem(check, ENGINE_HDR_truncated));
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

/* ------------------------------------------------------------------ */
/* SFrame: the reader                                                   */
/* ------------------------------------------------------------------ */

/* A C program with a PLT (printf), a frame (the buffer) and a leaf. */
static const char c_program[] =
    "#include <stdio.h>\n"
    "int g(int x) { return x * 3; }\n"
    "int f(int n) { char buf[64]; snprintf(buf, sizeof buf, \"%d\", n);\n"
    "  return buf[0] + g(n); }\n"
    "int main(int argc, char **argv) { (void)argv; return f(argc); }\n";

static char *build_c(const char *dir, const char *flags)
{
    char *source = join(dir, "p.c"), *binary = join(dir, "p");
    ck_assert_int_eq(test_write_file(source, c_program, strlen(c_program)),
                     0);
    char command[9000];
    snprintf(command, sizeof command, "cc %s -Wa,--gsframe -o %s %s", flags,
             binary, source);
    ck_assert_msg(system(command) == 0, "%s", command);
    unlink(source);
    free(source);
    return binary;
}

static struct sframe_table *open_sframe(const char *path,
                                        struct cfi_file **file)
{
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, file, &diag) == CFI_OK, "%s",
                  diag.message);
    struct sframe_table *table = NULL;
    ck_assert_msg(sframe_open(*file, &table, &diag) == CFI_OK, "%s",
                  diag.message);
    return table;
}

/* readelf's column text for an FRE: "sp+16", "fp+16"; "c-16" or "u". */
static void fre_columns(const struct sframe_fre *fre, char *cfa, char *fp,
                        size_t size)
{
    snprintf(cfa, size, "%s%+d", fre->cfa_from_sp ? "sp" : "fp",
             fre->cfa_offset);
    if (fre->fp_tracked)
        snprintf(fp, size, "c%+d", fre->fp_offset);
    else
        snprintf(fp, size, "u");
}

/* Our table and readelf --sframe's, FDE by FDE (the section's order) and
 * row by row: start PCs, CFA and FP columns. */
static void compare_with_readelf(const char *path,
                                 const struct sframe_table *t)
{
    char command[4200];
    snprintf(command, sizeof command, "readelf --sframe %s", path);
    FILE *in = popen(command, "r");
    ck_assert_ptr_nonnull(in);
    char line[512];
    size_t fde = 0, row = 0, rows = 0;
    bool in_fde = false;
    while (fgets(line, sizeof line, in)) {
        unsigned idx;
        unsigned long long pc, start;
        unsigned size;
        char cfa[64], fp[64];
        if (sscanf(line, " func idx [%u]: pc = 0x%llx, size = %u", &idx, &pc,
                   &size) == 3) {
            ck_assert_uint_lt(idx, t->nfdes);
            fde = idx;
            row = 0;
            in_fde = true;
            ck_assert_uint_eq(t->fdes[fde].start, pc);
            ck_assert_uint_eq(t->fdes[fde].size, size);
        } else if (in_fde && sscanf(line, " %llx %63s %63s", &start, cfa,
                                    fp) == 3) {
            const struct sframe_fde *f = &t->fdes[fde];
            ck_assert_uint_lt(row, f->nfres);
            const struct sframe_fre *fre = &t->fres[f->first_fre + row];
            char want_cfa[64], want_fp[64];
            fre_columns(fre, want_cfa, want_fp, sizeof want_cfa);
            ck_assert_uint_eq(start, f->pc_mask ? fre->start
                                                : f->start + fre->start);
            ck_assert_str_eq(cfa, want_cfa);
            ck_assert_str_eq(fp, want_fp);
            row++;
            rows++;
        }
    }
    ck_assert_int_eq(pclose(in), 0);
    ck_assert_uint_eq(rows, t->nfres);
}

/* gas 2.40 writes version 1; readelf --sframe is the outside oracle. */
START_TEST(sframe_reader_against_readelf)
{
    const char *flags[] = {"-O0", "-O2", "-O2 -fno-omit-frame-pointer"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char *dir = test_temp_dir();
        char *binary = build_c(dir, flags[i]);
        struct cfi_file *file;
        struct sframe_table *t = open_sframe(binary, &file);
        ck_assert_uint_eq(t->version, 1);
        ck_assert_uint_eq(t->abi, SFRAME_ABI_AMD64);
        ck_assert_int_eq(t->fixed_ra_offset, -8);
        ck_assert_uint_ge(t->nfdes, 4);
        bool mask = false;
        for (size_t f = 0; f < t->nfdes; f++)
            mask |= t->fdes[f].pc_mask;
        ck_assert(mask); /* the PLT */
        compare_with_readelf(binary, t);
        sframe_free(t);
        cfi_file_close(file);
        unlink(binary);
        free(binary);
        rmdir(dir);
        free(dir);
    }
}
END_TEST

/* A version 2 section by hand: function starts relative to the field
 * (FDE_FUNC_START_PCREL), a pc-mask FDE with its block size, 2-byte FRE
 * starts and 2-byte offsets, an FP offset in the FRE. */
struct sframe_bytes {
    uint8_t b[256];
    size_t n;
};

static void put_le(struct sframe_bytes *s, uint64_t value, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        s->b[s->n++] = (uint8_t)(value >> (8 * i));
}

static void v2_section(struct sframe_bytes *s, uint64_t addr)
{
    memset(s, 0, sizeof *s);
    put_le(s, SFRAME_MAGIC, 2);
    put_le(s, 2, 1);                                  /* version */
    put_le(s, SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL, 1);
    put_le(s, SFRAME_ABI_AMD64, 1);
    put_le(s, 0, 1);                                  /* fixed FP: none */
    put_le(s, (uint8_t)-8, 1);                        /* fixed RA */
    put_le(s, 0, 1);                                  /* aux header */
    put_le(s, 2, 4);                                  /* FDEs */
    put_le(s, 3, 4);                                  /* FREs */
    put_le(s, 3 + 4 + 7, 4);                          /* FRE bytes */
    put_le(s, 0, 4);                                  /* FDE offset */
    put_le(s, 40, 4);                                 /* FRE offset */
    /* FDE 0 at 28: f at 0x1000, 0x20 bytes, pc-inc, addr1 FREs at 0 */
    put_le(s, 0x1000 - (addr + 28), 4);
    put_le(s, 0x20, 4);
    put_le(s, 0, 4);
    put_le(s, 1, 4);
    put_le(s, 0, 1);
    put_le(s, 0, 1);
    put_le(s, 0, 2);
    /* FDE 1 at 48: the PLT at 0x2000, 0x40 bytes, pc-mask 16, addr2 */
    put_le(s, 0x2000 - (addr + 48), 4);
    put_le(s, 0x40, 4);
    put_le(s, 3, 4);
    put_le(s, 2, 4);
    put_le(s, 0x10 | 1, 1);
    put_le(s, 16, 1);
    put_le(s, 0, 2);
    /* FREs at 68: f: start 0, sp+8, 1-byte offset */
    put_le(s, 0, 1);
    put_le(s, 0x03, 1);
    put_le(s, 8, 1);
    /* PLT: start 0 fp+16 with FP at CFA-16 (2 offsets of 2 bytes);
     * start 11: sp+16 */
    put_le(s, 0, 2);
    put_le(s, 0x20 | (2 << 1) | 0, 1);
    put_le(s, 16, 2);
    put_le(s, (uint16_t)-16, 2);
    put_le(s, 11, 2);
    put_le(s, 0x03, 1);
    put_le(s, 16, 1);
}

START_TEST(sframe_v2_by_hand)
{
    struct sframe_bytes s;
    const uint64_t addr = 0x3000;
    v2_section(&s, addr);
    ck_assert_uint_eq(s.n, 68 + 14);
    struct sframe_table *t;
    struct cfi_diag diag;
    ck_assert_msg(sframe_read(s.b, s.n, addr, &t, &diag) == CFI_OK, "%s",
                  diag.message);
    ck_assert_uint_eq(t->nfdes, 2);
    ck_assert_uint_eq(t->fdes[0].start, 0x1000);
    ck_assert_uint_eq(t->fdes[1].start, 0x2000);
    ck_assert(t->fdes[1].pc_mask);
    ck_assert_uint_eq(t->fdes[1].block_size, 16);
    const struct sframe_fde *plt = sframe_lookup(t, 0x2035);
    ck_assert_ptr_eq(plt, &t->fdes[1]);
    uint64_t end;
    /* 0x2035 is byte 5 of the fourth block: the first FRE */
    const struct sframe_fre *fre = sframe_fre_at(t, plt, 0x2035, &end);
    ck_assert_ptr_eq(fre, &t->fres[plt->first_fre]);
    ck_assert_uint_eq(end, 0x203b);
    ck_assert(!fre->cfa_from_sp);
    ck_assert_int_eq(fre->cfa_offset, 16);
    ck_assert(fre->fp_tracked);
    ck_assert_int_eq(fre->fp_offset, -16);
    fre = sframe_fre_at(t, plt, 0x203c, &end);
    ck_assert_int_eq(fre->cfa_offset, 16);
    ck_assert(fre->cfa_from_sp);
    ck_assert_uint_eq(end, 0x2040);
    ck_assert_ptr_null(sframe_lookup(t, 0x1020));
    ck_assert_ptr_null(sframe_lookup(t, 0xfff));
    sframe_free(t);
}
END_TEST

/* Every truncation and a few bad fields: an error with an offset in the
 * section, never a crash. */
START_TEST(sframe_malformed)
{
    struct sframe_bytes s;
    v2_section(&s, 0x3000);
    struct sframe_table *t = (struct sframe_table *)1;
    struct cfi_diag diag;
    for (size_t n = 1; n < s.n; n++) {
        enum cfi_status status = sframe_read(s.b, n, 0x3000, &t, &diag);
        ck_assert_msg(status == CFI_E_MALFORMED, "%zu bytes: %s", n,
                      cfi_status_name(status));
        ck_assert_ptr_null(t);
        ck_assert_uint_lt(diag.offset, n);
    }
    static const struct {
        size_t at;
        uint8_t value;
        enum cfi_status status;
        const char *message;
    } edits[] = {
        {0, 0xe3, CFI_E_MALFORMED, ".sframe: bad magic"},
        {2, 3, CFI_E_UNSUPPORTED, ".sframe: unsupported version"},
        {3, 0x80, CFI_E_UNSUPPORTED, ".sframe: unknown flags"},
        {4, 2, CFI_E_UNSUPPORTED, ".sframe: ABI/arch other than AMD64"},
        {8, 200, CFI_E_MALFORMED, ".sframe: FDEs past the end"},
        {12, 30, CFI_E_MALFORMED, ".sframe: more FREs than their bytes hold"},
        {44, 0x0f, CFI_E_MALFORMED, ".sframe: bad FRE type"},
        {65, 0, CFI_E_MALFORMED, ".sframe: pc-mask FDE with no block size"},
        {60, 9, CFI_E_MALFORMED, ".sframe: more FREs than the header counts"},
        {69, 0x01, CFI_E_MALFORMED, ".sframe: too many or no FRE offsets"},
        {69, 0x07, CFI_E_MALFORMED, ".sframe: too many or no FRE offsets"},
        {78, 0, CFI_E_MALFORMED,
         ".sframe: FRE start addresses do not increase"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        struct sframe_bytes bad = s;
        bad.b[edits[i].at] = edits[i].value;
        enum cfi_status status = sframe_read(bad.b, bad.n, 0x3000, &t, &diag);
        ck_assert_msg(status == edits[i].status, "edit %zu: %s", i,
                      cfi_status_name(status));
        ck_assert_str_eq(diag.message, edits[i].message);
        ck_assert_uint_lt(diag.offset, bad.n);
    }
    /* an empty section: a table with no FDE */
    ck_assert_int_eq(sframe_read(s.b, 0, 0x3000, &t, &diag), CFI_OK);
    ck_assert_uint_eq(t->nfdes, 0);
    ck_assert_ptr_null(sframe_lookup(t, 0x1000));
    sframe_free(t);
}
END_TEST

/* Every byte of a real section changed three ways: sframe_read fails
 * with an offset inside the section or gives a table whose lookups and
 * unwinding stay inside it (under ASan in make check-asan). */
START_TEST(sframe_mutated)
{
    char *dir = test_temp_dir();
    char *binary = build_c(dir, "-O2");
    struct cfi_file *file;
    struct sframe_table *real = open_sframe(binary, &file);
    uint64_t offset = 0, size = 0;
    ck_assert(find_section(binary, ".sframe", &offset, &size));
    ck_assert_uint_eq(size, real->size);
    uint8_t *bytes = malloc(size);
    struct engine_memory *memory = engine_memory_new(true, 3);
    struct cfi_regs callee;
    cfi_regs_clear(&callee);
    cfi_regs_set(&callee, CFI_REG_RSP, 0x7ffe00001000);
    cfi_regs_set(&callee, CFI_REG_RBP, 0x7ffe00001100);
    for (size_t at = 0; at < size; at++)
        for (unsigned how = 0; how < 3; how++) {
            memcpy(bytes, file->image + offset, size);
            bytes[at] = how == 0 ? 0 : how == 1 ? 0xff : bytes[at] ^ 0x80;
            struct sframe_table *t = NULL;
            struct cfi_diag diag;
            if (sframe_read(bytes, size, real->addr, &t, &diag) != CFI_OK) {
                ck_assert_ptr_null(t);
                ck_assert_uint_lt(diag.offset, size);
                continue;
            }
            for (size_t f = 0; f < t->nfdes; f++) {
                const struct sframe_fde *fde = &t->fdes[f];
                uint64_t pcs[] = {fde->start, fde->start + fde->size / 2,
                                  fde->start + fde->size - 1};
                for (size_t p = 0; p < 3 && fde->size; p++) {
                    struct cfi_request request = {
                        pcs[p], false, &callee, engine_memory_reader(memory), 0};
                    struct cfi_frame frame;
                    sframe_unwind(t, &request, &frame);
                }
            }
            sframe_free(t);
        }
    engine_memory_free(memory);
    free(bytes);
    sframe_free(real);
    cfi_file_close(file);
    unlink(binary);
    free(binary);
    rmdir(dir);
    free(dir);
}
END_TEST

/* il --sframe prints the rows readelf prints, in the IL's text. */
START_TEST(sframe_il_text)
{
    struct built b;
    build(&b, three_functions, "-Wa,--gsframe");
    const char *args[] = {"il", b.object, "--sframe", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "  cfa=rsp+16  rip=[cfa-8]\n"));
    ck_assert_ptr_nonnull(strstr(run.out, " v1 fre=addr1\n"));
    /* the same rows as the IL of the DWARF, FDE by FDE */
    const char *il_args[] = {"il", b.object, NULL};
    struct test_run dwarf;
    test_run_cfisem(il_args, &dwarf);
    ck_assert_int_eq(dwarf.exit_code, 0);
    for (char *line = strtok(run.out, "\n"); line; line = strtok(NULL, "\n"))
        if (line[0] == '[')
            ck_assert_msg(strstr(dwarf.out, line), "not in the DWARF: %s",
                          line);
    test_run_free(&dwarf);
    test_run_free(&run);
    built_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* SFrame against the DWARF                                             */
/* ------------------------------------------------------------------ */

static struct validate_sframe_result *validate_sframe(const char *path)
{
    struct cfi_file *file;
    struct sframe_table *t = open_sframe(path, &file);
    struct validate_sframe_result *v = malloc(sizeof *v);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(validate_sframe_check(file, t, 4, 1, v), CFI_OK);
    /* the table is freed: only counts and offsets are read after */
    v->table = NULL;
    sframe_free(t);
    cfi_file_close(file);
    return v;
}

START_TEST(sframe_validate_agrees)
{
    struct built b;
    build(&b, three_functions, "-Wa,--gsframe");
    struct validate_sframe_result *v = validate_sframe(b.object);
    ck_assert_uint_gt(v->compared, 0);
    ck_assert_uint_eq(v->agree, v->compared);
    ck_assert_uint_eq(validate_sframe_problems(v), 0);
    ck_assert_uint_eq(v->ndropped, 0);
    free(v);
    built_free(&b);
}
END_TEST

/* gas 2.40's nested remember_state (diff/findings): one wrong address,
 * the CFA at 0x1006. */
START_TEST(sframe_validate_nested_remember)
{
    char *src = test_src_path("diff/findings/gas-sframe-nested-remember/gas-sframe-nested-remember.S");
    char *text = test_read_file(src, NULL);
    ck_assert_ptr_nonnull(text);
    struct built b;
    build(&b, text, "-Wl,--section-start=.text=0x1000 -Wa,--gsframe");
    struct validate_sframe_result *v = validate_sframe(b.object);
    ck_assert_uint_eq(v->nwrong, 1);
    ck_assert_uint_eq(v->wrong[0].begin, 0x1006);
    ck_assert_uint_eq(v->wrong[0].end, 0x1007);
    ck_assert_int_eq(v->wrong[0].item, VALIDATE_SF_CFA);
    ck_assert_uint_eq(v->wrong[0].expected.cfa - v->wrong[0].got.cfa, 8);
    free(v);
    built_free(&b);
    free(text);
    free(src);
}
END_TEST

/* FDEs gas leaves out (any .cfi_escape) are listed, not problems, with
 * the reason when the DWARF shows one (g: a CFA expression). h: gas
 * 2.40 writes a CFA from r10 as one from rsp (diff/findings): a wrong
 * range. */
START_TEST(sframe_validate_dropped)
{
    struct built b;
    build(&b,
          "\t.text\n\t.globl f\nf:\t.cfi_startproc\n\t.cfi_escape 0x2e, 8\n"
          "\tnop\n\tret\n\t.cfi_endproc\n"
          "\t.globl g\ng:\t.cfi_startproc\n\tnop\n"
          "\t.cfi_escape 0x0f, 2, 0x77, 8\n\tnop\n\tret\n\t.cfi_endproc\n"
          "\t.globl h\nh:\t.cfi_startproc\n\tnop\n\t.cfi_def_cfa %r10, 8\n"
          "\tnop\n\tret\n\t.cfi_endproc\n",
          "-Wa,--gsframe");
    struct validate_sframe_result *v = validate_sframe(b.object);
    ck_assert_uint_eq(v->ndropped, 2);
    ck_assert_uint_eq(v->ndropped_reason, 1);
    bool reason = false;
    for (size_t i = 0; i < v->kept_dropped; i++)
        reason |= v->dropped[i].reason &&
                  strcmp(v->dropped[i].reason,
                         "a CFA that is an expression") == 0;
    ck_assert(reason);
    ck_assert_uint_eq(v->nwrong, 1);
    ck_assert_int_eq(v->wrong[0].item, VALIDATE_SF_CFA);
    ck_assert_uint_eq(validate_sframe_problems(v), 1);
    free(v);
    built_free(&b);
}
END_TEST

/* The last function's SFrame FDE made 16 bytes longer: it reaches out of
 * its DWARF FDE, and covers 16 addresses no DWARF FDE does. */
START_TEST(sframe_validate_coverage)
{
    struct built b;
    build(&b, three_functions, "-Wa,--gsframe");
    struct cfi_file *file;
    struct sframe_table *t = open_sframe(b.object, &file);
    const struct sframe_fde *last = t->by_start[t->nfdes - 1];
    uint64_t fde_at = last->offset, end = last->start + last->size;
    sframe_free(t);
    cfi_file_close(file);
    uint64_t offset, size;
    ck_assert(find_section(b.object, ".sframe", &offset, &size));
    uint8_t *field = (uint8_t *)b.bytes + offset + fde_at + 4;
    uint32_t longer = (uint32_t)cfi_load_le(field, 4) + 16;
    for (unsigned i = 0; i < 4; i++)
        field[i] = (uint8_t)(longer >> (8 * i));
    ck_assert_int_eq(test_write_file(b.edited, b.bytes, b.size), 0);
    struct validate_sframe_result *v = validate_sframe(b.edited);
    ck_assert_uint_eq(v->nrange, 1);
    ck_assert_uint_eq(v->nalone, 1);
    ck_assert_uint_eq(v->alone[0].begin, end);
    ck_assert_uint_eq(v->alone[0].end, end + 16);
    ck_assert_uint_eq(v->nwrong, 0);
    ck_assert_uint_eq(validate_sframe_problems(v), 2);
    free(v);
    built_free(&b);
}
END_TEST

/* An FDE whose pc_range claims 2 GiB (a mutated file): the check visits
 * at most 1 MiB of its addresses, and ends (it walked every one). */
START_TEST(test_sframe_validate_huge_fde_range_ends)
{
    struct built b;
    build(&b, three_functions, "-Wa,--gsframe");
    struct cfi_file *file;
    struct sframe_table *t = open_sframe(b.object, &file);
    ck_assert_uint_gt(file->nfdes, 0);
    const struct cfi_fde *last = &file->fdes[file->nfdes - 1];
    ck_assert_int_eq(last->section, CFI_EH_FRAME);
    uint64_t range_at = last->offset + 4 + 4 + 4; /* length, CIE, begin */
    sframe_free(t);
    cfi_file_close(file);
    uint64_t offset, size;
    ck_assert(find_section(b.object, ".eh_frame", &offset, &size));
    uint8_t *field = (uint8_t *)b.bytes + offset + range_at;
    const uint32_t range = 0x7fffffff;
    for (unsigned i = 0; i < 4; i++)
        field[i] = (uint8_t)(range >> (8 * i));
    ck_assert_int_eq(test_write_file(b.edited, b.bytes, b.size), 0);
    struct validate_sframe_result *v = validate_sframe(b.edited);
    ck_assert_uint_le(v->addresses, 3 * ((uint64_t)1 << 20));
    ck_assert_uint_ge(v->addresses, (uint64_t)1 << 20);
    free(v);
    built_free(&b);
}
END_TEST

/* The command: exit 0 on agreement, 1 on a wrong range, 2 with one line
 * for a file without .sframe; and the sframe engine of unwind. */
START_TEST(sframe_commands)
{
    struct built b;
    build(&b, three_functions, "-Wa,--gsframe");
    const char *args[] = {"validate", b.object, "--sframe", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "%s", run.out);
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 problems"));
    test_run_free(&run);
    const char *unwind[] = {"unwind", b.object, "--pc", "0x0", "--regs",
                            "rsp=0x7ffe1000", "--engine", "sframe", NULL};
    char pc[32];
    struct cfi_file *file;
    struct sframe_table *t = open_sframe(b.object, &file);
    snprintf(pc, sizeof pc, "0x%llx",
             (unsigned long long)t->by_start[0]->start + 1);
    sframe_free(t);
    cfi_file_close(file);
    unwind[3] = pc;
    test_run_cfisem(unwind, &run);
    ck_assert_msg(run.exit_code == 0, "%s", run.err);
    ck_assert_ptr_nonnull(strstr(run.out, "cfa = 0x7ffe1010\n"));
    ck_assert_ptr_nonnull(strstr(run.out, "rbx = not comparable\n"));
    test_run_free(&run);
    built_free(&b);
    build(&b, three_functions, "");
    args[1] = b.object;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "no .sframe section"));
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
    TCase *sframe = tcase_create("sframe");
    tcase_set_timeout(sframe, 120);
    tcase_add_test(sframe, sframe_reader_against_readelf);
    tcase_add_test(sframe, sframe_v2_by_hand);
    tcase_add_test(sframe, sframe_malformed);
    tcase_add_test(sframe, sframe_mutated);
    tcase_add_test(sframe, sframe_il_text);
    tcase_add_test(sframe, sframe_validate_agrees);
    tcase_add_test(sframe, sframe_validate_nested_remember);
    tcase_add_test(sframe, sframe_validate_dropped);
    tcase_add_test(sframe, sframe_validate_coverage);
    tcase_add_test(sframe, test_sframe_validate_huge_fde_range_ends);
    tcase_add_test(sframe, sframe_commands);
    suite_add_tcase(suite, sframe);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
