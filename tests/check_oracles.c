/* SPDX-License-Identifier: MIT */
/* check_oracles.c — the outside engines (libdwarf, libdw, libunwind)
 * against the IL evaluator, the reference.
 *
 * On every hand-written case (the .so files of corpus/cases) and on
 * every row of libc.so.6 (its first address, two states: as the
 * innermost frame, and as a caller frame whose return address is that
 * address + 1), and the same on AArch64 (corpus/cases-aarch64, its
 * errors, and the cross toolchain's libc.so.6), each engine opened as
 * the harness opens it (engine_open: libunwind, built for x86-64,
 * answers "another architecture" for AArch64) is compared with
 * sem_unwind's by engine_compare, the harness's own comparison. Every
 * verdict is counted: agree, known
 * deviation (engines/deviations.c), not comparable; any other difference
 * fails the test with the file, PC, state and both answers, to be settled
 * against DWARF 5 §6.4 and cfi.h — never by loosening the comparison.
 * On the same requests, the model of libunwind that the deviation table
 * rests on (engine_libunwind_model) must give libunwind's answer with all
 * of libunwind's behaviours, and the reference's with none.
 *
 * Then, on minimal inputs, what the adapters refuse (libunwind: a
 * program naming a register above 16, a division that traps, a fault on
 * part of a word) and what they apply (the return address column; on
 * AArch64 the caller's PC and RA_SIGN_STATE, and libdwarf's answer to a
 * 'B'-key CIE).
 *
 * The local unwinders (LLVM's libunwind, libgcc; engines/local_image.h)
 * on the same cases but those showing their findings, and on minimal
 * inputs: a fault answered, not a crash; a dead child restarted; unknown
 * registers; AArch64 not comparable. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engines/engines.h"
#include "engines/gdb_core.h"
#include "engines/oracle_gdb.h"
#include "engines/oracle_libdw.h"
#include "engines/oracle_libdwarf.h"
#include "engines/oracle_libgcc.h"
#include "engines/oracle_libunwind.h"
#include "engines/oracle_llvmunwind.h"
#include "engines/libunwind_model.h"
#include "semantics/sem.h"
#include "support.h"

struct oracle {
    enum engine_id id;
    enum cfi_status (*open)(const struct cfi_file *, void **,
                            struct cfi_diag *);
    enum cfi_status (*answer)(void *, const struct cfi_request *,
                              struct engine_answer *);
    void (*close)(void *);
    bool libraries;     /* asked about whole system libraries too */
};

/* gdb answers a few hundred requests a second: the cases only. */
static const struct oracle oracles[] = {
    {ENGINE_libdwarf, engine_libdwarf_open, engine_libdwarf_answer,
     engine_libdwarf_close, true},
    {ENGINE_libdw, engine_libdw_open, engine_libdw_answer,
     engine_libdw_close, true},
    {ENGINE_libunwind, engine_libunwind_open, engine_libunwind_answer,
     engine_libunwind_close, true},
    {ENGINE_gdb, engine_gdb_open, engine_gdb_answer, engine_gdb_close,
     false},
};
enum { NORACLES = sizeof oracles / sizeof oracles[0] };

/* The libraries that unwind their own process, asked in a child
 * (engines/local_image.h). */
static const struct oracle locals[] = {
    {ENGINE_llvmunwind, engine_llvmunwind_open, engine_llvmunwind_answer,
     engine_llvmunwind_close, false},
    {ENGINE_libgcc, engine_libgcc_open, engine_libgcc_answer,
     engine_libgcc_close, false},
};
enum { NLOCALS = sizeof locals / sizeof locals[0] };

struct tally {
    size_t files, unsupported;
    size_t other_architecture; /* answers "another architecture" */
    size_t verdicts[ENGINE_VERDICT_ERROR + 1];
    size_t modelled;   /* libunwind answers checked against its model */
};

/* One file under one oracle, opened as the harness opens it. */
struct run {
    const struct oracle *oracle;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct engine_instance engine;
    struct tally *tally;
};

/* State k: every register the architecture reports (x86-64: 0-16)
 * known with a random value, the stack and frame pointers in a
 * plausible stack, the PC register `pc`; state 1 also makes the word at
 * sp+8 fault (the return address of an x86-64 frame whose CFA is
 * rsp+16). */
static void make_state(const struct cfi_arch *arch, uint64_t seed,
                       unsigned k, uint64_t pc, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < arch->nreported; reg++)
        cfi_regs_set(regs, reg, engine_mix(seed ^ (k * 131 + reg)));
    uint64_t sp = 0x7ffe00000000ull + (engine_mix(seed + k) & 0xffff0ull);
    cfi_regs_set(regs, arch->sp, sp);
    cfi_regs_set(regs, arch->fp, sp + (engine_mix(seed - k) & 0xff0));
    cfi_regs_set(regs, arch->pc, pc);
}

/* The frame, with the registers 0 .. nreg-1. */
static void describe(char *out, size_t size, const struct cfi_frame *f,
                     unsigned nreg)
{
    if (f->status != CFI_OK) {
        snprintf(out, size, "%s (%s, reg %d)", cfi_status_name(f->status),
                 f->diag.message ? f->diag.message : "", f->diag.reg);
        return;
    }
    int n = snprintf(out, size, "cfa=0x%" PRIx64, f->cfa);
    for (unsigned reg = 0; reg < nreg && n > 0 && (size_t)n < size; reg++)
        n += snprintf(out + n, size - (size_t)n, " %u:%d:%" PRIx64, reg,
                      f->caller.status[reg], f->caller.value[reg]);
}

/* The IL's FDE, translation status and row at the lookup PC. */
static void il_context(const struct run *r, uint64_t lookup,
                       struct engine_mismatch *m)
{
    m->fde = cfi_file_lookup(r->file, lookup);
    m->row = NULL;
    m->translation = CFI_E_NO_FDE;
    if (!m->fde)
        return;
    size_t i = (size_t)(m->fde - r->file->fdes);
    m->translation = r->il->status[i];
    const struct sem_range *range =
        m->translation == CFI_OK ? sem_fde_il_find(&r->il->fdes[i], lookup)
                                 : NULL;
    m->row = range ? range->row : NULL;
}

/* Two frames agree on the status (and the register of reg_unknown) and,
 * unwound, on the CFA and registers 0..16. */
static bool same_frame(const struct cfi_frame *a, const struct cfi_frame *b)
{
    if (a->status != b->status ||
        (a->status == CFI_E_REG_UNKNOWN && a->diag.reg != b->diag.reg))
        return false;
    if (a->status != CFI_OK)
        return true;
    if (a->cfa != b->cfa)
        return false;
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        if (a->caller.status[reg] != b->caller.status[reg] ||
            (a->caller.status[reg] == CFI_REG_VALUE &&
             a->caller.value[reg] != b->caller.value[reg]))
            return false;
    return true;
}

/* The CIE's or FDE's program holds a DW_CFA_val_offset{,_sf}, which
 * libunwind reads as other instructions. */
static bool has_val_offset(const struct cfi_fde *fde, bool in_cie)
{
    const struct cfi_cie *cie = fde->cie;
    struct sem_decode_env env = {
        cie->code_align, cie->data_align, fde->section, cie->address_size,
        cie->fde_encoding, in_cie ? 0 : fde->instructions_addr, in_cie, cie->arch};
    struct sem_program program = {0};
    struct cfi_diag diag;
    if (in_cie)
        sem_decode(cie->instructions, cie->instructions_len, &env, &program,
                   &diag);
    else
        sem_decode(fde->instructions, fde->instructions_len, &env, &program,
                   &diag);
    bool found = false;
    for (size_t i = 0; i < program.count; i++)
        found |= program.insns[i].opcode == SEM_CFA_val_offset ||
                 program.insns[i].opcode == SEM_CFA_val_offset_sf;
    sem_program_free(&program);
    return found;
}

/* The model of libunwind (engine_libunwind_model), on which the deviation
 * table's libunwind entries rest: with every behaviour it answers as
 * libunwind did; with none (but word reads, which only matter for the
 * faults the adapter refuses) it answers as the reference, on rows whose
 * rules stay within registers 0..16. FDEs libunwind reads otherwise
 * (val_offset: operands run as instructions) are left out. */
static void check_model(const struct run *r, const struct engine_mismatch *m,
                        const struct engine_answer *answer)
{
    if (!m->row || !answer->comparable || has_val_offset(m->fde, true) ||
        has_val_offset(m->fde, false))
        return;
    for (uint32_t i = 0; i < m->row->nrules; i++)
        if (m->row->rules[i].reg >= CFI_NGPRS)
            return;
    struct cfi_frame model;
    bool traps;
    unsigned ra = (unsigned)m->fde->cie->ra_column;
    engine_libunwind_model(m->row, ra, m->request, ENGINE_LU_QUIRKS_ALL, &model,
                           &traps);
    char want[1024], got[1024];
    describe(want, sizeof want, &model, CFI_NGPRS);
    describe(got, sizeof got, &answer->frame, CFI_NGPRS);
    ck_assert_msg(same_frame(&model, &answer->frame),
                  "%s: pc 0x%" PRIx64 ": the model of libunwind says\n %s\n"
                  "libunwind\n %s", r->file->path, m->request->pc, want, got);
    engine_libunwind_model(m->row, ra, m->request, ENGINE_LU_WORD_READS, &model,
                           &traps);
    describe(want, sizeof want, &model, CFI_NGPRS);
    describe(got, sizeof got, m->expected, CFI_NGPRS);
    ck_assert_msg(same_frame(&model, m->expected),
                  "%s: pc 0x%" PRIx64 ": the model without libunwind's "
                  "behaviours says\n %s\nthe IL\n %s", r->file->path,
                  m->request->pc, want, got);
    r->tally->modelled++;
}

/* An answer that says the engine does not read the file's
 * architecture. */
static bool other_architecture(const struct engine_answer *answer)
{
    return !answer->comparable && answer->not_comparable_reason &&
           strstr(answer->not_comparable_reason, "another architecture");
}

static void compare_at(const struct run *r, uint64_t pc, bool caller,
                       unsigned k, uint64_t seed)
{
    const struct cfi_arch *arch = r->file->arch;
    struct engine_memory *memory = engine_memory_new(true, seed + k);
    engine_memory_map_file(memory, r->file);
    struct cfi_regs callee;
    make_state(arch, seed ^ pc, k, pc, &callee);
    if (k == 1)
        engine_memory_add_fault(memory, callee.value[arch->sp] + 8,
                                callee.value[arch->sp] + 16);
    struct cfi_request request = {pc, caller, &callee,
                                  engine_memory_reader(memory), 0};
    struct cfi_frame expected;
    sem_unwind(r->il, &request, &expected);
    struct engine_answer answer;
    r->engine.unwind(r->engine.self, &request, &answer);
    r->tally->other_architecture += other_architecture(&answer);
    struct engine_mismatch m = {.engine = r->oracle->id, .file = r->file,
                              .request = &request, .expected = &expected};
    il_context(r, caller ? pc - 1 : pc, &m);
    struct engine_outcome outcome;
    engine_compare(&m, &answer, &outcome);
    r->tally->verdicts[outcome.verdict]++;
    if (r->oracle->id == ENGINE_libunwind)
        check_model(r, &m, &answer);
    if (outcome.verdict == ENGINE_VERDICT_DIFFER) {
        char want[2048], got[2048], item[16];
        describe(want, sizeof want, &expected, arch->nreported);
        describe(got, sizeof got, &answer.frame, arch->nreported);
        unsigned i = 0;
        while (i + 1 < outcome.nkept && outcome.items[i].deviation)
            i++;
        ck_abort_msg("%s: %s: pc 0x%" PRIx64 "%s state %u seed %" PRIu64
                     ": %s differs\n il: %s\n %s: %s",
                     engine_name(r->oracle->id), r->file->path, pc,
                     caller ? " (caller)" : "", k, seed,
                     engine_item_label(arch, outcome.items[i].item,
                                       outcome.items[i].reg, item, sizeof item),
                     want, engine_name(r->oracle->id), got);
    }
    engine_memory_free(memory);
}

/* Each row's first address, as the innermost frame (state 0) and as the
 * lookup PC of a caller frame (state 1); an FDE the IL rejects at its
 * first address; and two PCs no FDE covers. */
static void compare_rows(const struct run *r)
{
    for (size_t i = 0; i < r->file->nfdes; i++) {
        if (r->il->status[i] != CFI_OK) {
            compare_at(r, r->file->fdes[i].pc_begin, false, 0, i);
            continue;
        }
        const struct sem_fde_il *fde = &r->il->fdes[i];
        for (size_t k = 0; k < fde->nranges; k++) {
            compare_at(r, fde->ranges[k].begin, false, 0, i * 7 + k);
            compare_at(r, fde->ranges[k].begin + 1, true, 1, i * 7 + k);
        }
    }
    compare_at(r, 0, false, 0, 1);
    compare_at(r, UINT64_MAX, false, 0, 2);
}

/* Asks each engine of `list` about every row of the file at `path`; with
 * `library` set, only those whose `libraries` flag says so. */
static void compare_file_with(const char *path, const struct oracle *list,
                              int n, struct tally *tallies, bool library)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &file, &diag) == CFI_OK, "%s: %s",
                  path, diag.message);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    for (int o = 0; o < n; o++) {
        if (library && !list[o].libraries)
            continue;
        struct run r = {&list[o], file, il, {0}, &tallies[o]};
        tallies[o].files++;
        enum cfi_status status =
            engine_open(list[o].id, file, NULL, &r.engine, &diag);
        if (status == CFI_E_UNSUPPORTED) {
            tallies[o].unsupported++;
            continue;
        }
        ck_assert_msg(status == CFI_OK, "%s: %s: %s",
                      engine_name(list[o].id), path, diag.message);
        compare_rows(&r);
        engine_close(&r.engine);
    }
    sem_file_il_free(il);
    cfi_file_close(file);
}

static void compare_file(const char *path, struct tally tallies[NORACLES],
                         bool library)
{
    compare_file_with(path, oracles, NORACLES, tallies, library);
}

static void report_with(const char *what, const struct oracle *list, int n,
                        const struct tally *tallies)
{
    for (int o = 0; o < n; o++) {
        const struct tally *t = &tallies[o];
        printf("oracles: %s: %-9s files %zu (unsupported %zu): agree %zu, "
               "known deviation %zu, not comparable %zu (another "
               "architecture %zu), errors %zu, differ %zu, modelled %zu\n",
               what, engine_name(list[o].id), t->files, t->unsupported,
               t->verdicts[ENGINE_VERDICT_AGREE],
               t->verdicts[ENGINE_VERDICT_KNOWN],
               t->verdicts[ENGINE_VERDICT_NOT_COMPARABLE],
               t->other_architecture,
               t->verdicts[ENGINE_VERDICT_ERROR],
               t->verdicts[ENGINE_VERDICT_DIFFER], t->modelled);
    }
}

static void report(const char *what, const struct tally tallies[NORACLES])
{
    report_with(what, oracles, NORACLES, tallies);
}

/* Every .so of the build folder `rel`; the number of files. */
static size_t compare_folder(const char *rel, struct tally tallies[NORACLES])
{
    char *dir_path = test_build_path(rel);
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "no built cases in %s", dir_path);
    size_t files = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        size_t len = strlen(entry->d_name);
        if (len < 4 || strcmp(entry->d_name + len - 3, ".so"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir_path, entry->d_name);
        compare_file(path, tallies, false);
        files++;
    }
    closedir(dir);
    free(dir_path);
    return files;
}

START_TEST(test_cases)
{
    struct tally tallies[NORACLES] = {0};
    size_t files = compare_folder("corpus/cases", tallies);
    report("cases", tallies);
    ck_assert_uint_ge(files, 10);
    for (int o = 0; o < NORACLES; o++)
        ck_assert_uint_gt(tallies[o].verdicts[ENGINE_VERDICT_AGREE] +
                              tallies[o].verdicts[ENGINE_VERDICT_KNOWN],
                          50);
}
END_TEST

/* libunwind's and gdb's answers for an AArch64 file: every one
 * "another architecture", none compared. */
static void assert_other_architecture(const struct tally *t)
{
    ck_assert_uint_eq(t->unsupported, 0);
    ck_assert_uint_gt(t->other_architecture, 0);
    ck_assert_uint_eq(t->verdicts[ENGINE_VERDICT_NOT_COMPARABLE],
                      t->other_architecture);
    ck_assert_uint_eq(t->verdicts[ENGINE_VERDICT_AGREE] +
                          t->verdicts[ENGINE_VERDICT_KNOWN] +
                          t->verdicts[ENGINE_VERDICT_ERROR],
                      0);
}

/* The AArch64 cases (pac-ret with both keys, the vendor opcodes 0x2b-
 * 0x2d, .debug_frame, the return column) and the ones the IL rejects:
 * libdwarf and libdw answer, each difference a named deviation;
 * libunwind answers none. */
START_TEST(test_cases_aarch64)
{
    struct tally tallies[NORACLES] = {0};
    size_t files = compare_folder("corpus/cases-aarch64", tallies);
    size_t errors = compare_folder("corpus/cases-aarch64/errors", tallies);
    report("cases-aarch64", tallies);
    ck_assert_uint_ge(files, 9);
    ck_assert_uint_ge(errors, 4);
    for (int o = 0; o < NORACLES; o++) {
        const struct tally *t = &tallies[o];
        if (oracles[o].id == ENGINE_libunwind ||
            oracles[o].id == ENGINE_gdb) {
            assert_other_architecture(t);
            continue;
        }
        ck_assert_uint_eq(t->unsupported, 0);
        ck_assert_uint_eq(t->other_architecture, 0);
        ck_assert_uint_gt(t->verdicts[ENGINE_VERDICT_AGREE], 40);
        /* negate_ra_state, 0x2b, 0x2c and 'B' are read otherwise by
         * both libraries. */
        ck_assert_uint_gt(t->verdicts[ENGINE_VERDICT_KNOWN], 50);
    }
}
END_TEST

/* The cross toolchain's libc.so.6 (Debian's, built without pac-ret):
 * libdwarf and libdw read every row as the IL does (x30 with no rule
 * keeps the callee's value in all three). */
START_TEST(test_libc_aarch64)
{
    const char *path = "/usr/aarch64-linux-gnu/lib/libc.so.6";
    ck_assert_msg(access(path, R_OK) == 0,
                  "%s not found (gcc-aarch64-linux-gnu)", path);
    struct tally tallies[NORACLES] = {0};
    compare_file(path, tallies, true);
    report("aarch64 libc.so.6", tallies);
    for (int o = 0; o < NORACLES; o++) {
        if (oracles[o].id == ENGINE_libunwind)
            assert_other_architecture(&tallies[o]);
        else
            ck_assert_uint_eq(tallies[o].unsupported, 0);
    }
    ck_assert_uint_gt(tallies[0].verdicts[ENGINE_VERDICT_AGREE], 30000);
    ck_assert_uint_eq(tallies[0].verdicts[ENGINE_VERDICT_KNOWN], 0);
    ck_assert_uint_gt(tallies[1].verdicts[ENGINE_VERDICT_AGREE], 30000);
    ck_assert_uint_eq(tallies[1].verdicts[ENGINE_VERDICT_KNOWN], 0);
}
END_TEST

START_TEST(test_libc)
{
    char *path = test_system_lib("libc.so.6");
    ck_assert_msg(path != NULL, "libc.so.6 not found");
    struct tally tallies[NORACLES] = {0};
    compare_file(path, tallies, true);
    report("libc.so.6", tallies);
    /* libdwarf reads every row of libc as the IL does. */
    ck_assert_uint_gt(tallies[0].verdicts[ENGINE_VERDICT_AGREE], 40000);
    for (int o = 0; o < NORACLES; o++)
        ck_assert_uint_eq(tallies[o].unsupported, 0);
    free(path);
}
END_TEST

/* What each adapter refuses, and says, outside its reach. */
START_TEST(test_unsupported_inputs)
{
    /* A file built from bytes has no path and no .eh_frame_hdr. */
    static const uint8_t section[] = {
        0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
        0x0c, 7, 8, 0x90, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_from_section(section, sizeof section,
                                           CFI_EH_FRAME, 0x1000, &file,
                                           &diag),
                     CFI_OK);
    for (int o = 0; o < NORACLES; o++) {
        void *self = (void *)1;
        ck_assert_int_eq(oracles[o].open(file, &self, &diag),
                         CFI_E_UNSUPPORTED);
        ck_assert_ptr_null(self);
        ck_assert_ptr_nonnull(diag.message);
    }
    cfi_file_close(file);
}
END_TEST

/* ------------------------------------------------------------------ */
/* What the adapters refuse and apply, on minimal inputs                */
/* ------------------------------------------------------------------ */

/* f at 0x1000 with `program` after `.cfi_startproc START`, built as the
 * hand-written cases are; the path (in a fresh folder) is malloc'd. */
static char *build(const char *start, const char *program)
{
    char *dir = test_temp_dir();
    char source[4096], object[4096], command[9000], text[4096];
    snprintf(source, sizeof source, "%s/case.S", dir);
    snprintf(object, sizeof object, "%s/case.so", dir);
    snprintf(text, sizeof text,
             "\t.text\n\t.globl f\nf:\n\t.cfi_startproc %s\n%s"
             "\tret\n\t.cfi_endproc\n", start, program);
    ck_assert_int_eq(test_write_file(source, text, strlen(text)), 0);
    snprintf(command, sizeof command,
             "cc -shared -nostdlib -Wl,--section-start=.text=0x1000 "
             "-Wl,--build-id=none -o %s %s", object, source);
    ck_assert_msg(system(command) == 0, "%s", command);
    free(dir);
    return strdup(object);
}

/* The same for AArch64, with the cross compiler: f's `program` after
 * .cfi_startproc (and .cfi_b_key_frame when b_key). */
static char *build_aarch64(const char *program, bool b_key)
{
    char *dir = test_temp_dir();
    char source[4096], object[4096], command[9000], text[4096];
    snprintf(source, sizeof source, "%s/case.S", dir);
    snprintf(object, sizeof object, "%s/case.so", dir);
    snprintf(text, sizeof text,
             "\t.text\n\t.globl f\nf:\n\t.cfi_startproc\n%s%s"
             "\tret\n\t.cfi_endproc\n",
             b_key ? "\t.cfi_b_key_frame\n" : "", program);
    ck_assert_int_eq(test_write_file(source, text, strlen(text)), 0);
    snprintf(command, sizeof command,
             "aarch64-linux-gnu-gcc -shared -nostdlib "
             "-Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o %s %s",
             object, source);
    ck_assert_msg(system(command) == 0, "%s", command);
    free(dir);
    return strdup(object);
}

static void remove_built(char *path)
{
    remove(path);
    char *slash = strrchr(path, '/');
    strcpy(slash, "/case.S");
    remove(path);
    *slash = '\0';
    rmdir(path);
    free(path);
}

/* One request at `pc` (innermost frame) with every register 0..16
 * known, rsp = 0x7ffe00001000, and [fault, fault_end) unreadable. */
struct asked {
    struct engine_answer answer;
    struct cfi_frame expected;
};

static void ask_as(const struct oracle *oracle, const char *path,
                   uint64_t pc, bool caller, uint64_t fault,
                   uint64_t fault_end, struct asked *asked)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &file, &diag) == CFI_OK, "%s",
                  diag.message);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    struct engine_memory *memory = engine_memory_new(true, 7);
    engine_memory_map_file(memory, file);
    if (fault_end)
        engine_memory_add_fault(memory, fault, fault_end);
    struct cfi_regs callee;
    make_state(file->arch, 99, 0, pc, &callee);
    cfi_regs_set(&callee, file->arch->sp, 0x7ffe00001000);
    struct cfi_request request = {pc, caller, &callee,
                                  engine_memory_reader(memory), 0};
    sem_unwind(il, &request, &asked->expected);
    void *self;
    ck_assert_msg(oracle->open(file, &self, &diag) == CFI_OK, "%s: %s",
                  engine_name(oracle->id), diag.message);
    oracle->answer(self, &request, &asked->answer);
    oracle->close(self);
    engine_memory_free(memory);
    sem_file_il_free(il);
    cfi_file_close(file);
}

static void ask(const struct oracle *oracle, const char *path, uint64_t pc,
                uint64_t fault, uint64_t fault_end, struct asked *asked)
{
    ask_as(oracle, path, pc, false, fault, fault_end, asked);
}

static const struct oracle *oracle(enum engine_id id)
{
    for (int o = 0; o < NORACLES; o++)
        if (oracles[o].id == id)
            return &oracles[o];
    ck_abort_msg("no oracle %s", engine_name(id));
    return NULL;
}

static void assert_not_comparable(const struct asked *asked,
                                  const char *reason)
{
    ck_assert(!asked->answer.comparable);
    ck_assert_msg(strstr(asked->answer.not_comparable_reason, reason),
                  "reason: %s", asked->answer.not_comparable_reason);
}

/* gdb: its DWARF unwinder gives the IL's CFA, rbx and rip after a push,
 * and the callee's rax (gdb-unspecified-same-value); a fault of rbx's
 * slot is a memory error in both; at the ret its epilogue analyser
 * answers, not comparable, but a caller frame there is gdb's DWARF
 * unwinder's. */
START_TEST(gdb_dwarf_unwinder)
{
    char *push = build("", "\tpush %rbx\n\t.cfi_def_cfa_offset 16\n"
                           "\t.cfi_offset %rbx, -16\n\tnop\n");
    struct asked asked;
    ask(oracle(ENGINE_gdb), push, 0x1001, 0, 0, &asked);
    const struct cfi_frame *got = &asked.answer.frame, *want = &asked.expected;
    ck_assert_msg(asked.answer.comparable, "%s",
                  asked.answer.not_comparable_reason);
    ck_assert_int_eq(got->status, CFI_OK);
    ck_assert(asked.answer.cfa_comparable);
    ck_assert_uint_eq(got->cfa, want->cfa);
    ck_assert_uint_eq(got->cfa, 0x7ffe00001010);
    for (unsigned reg = 3; reg <= 16; reg += 13) {
        ck_assert_int_eq(got->caller.status[reg], CFI_REG_VALUE);
        ck_assert_uint_eq(got->caller.value[reg], want->caller.value[reg]);
    }
    ck_assert_int_eq(want->caller.status[0], CFI_REG_UNDEFINED);
    ck_assert_int_eq(got->caller.status[0], CFI_REG_VALUE);
    ck_assert(!asked.answer.reg_comparable[17]);
    ask(oracle(ENGINE_gdb), push, 0x1001, 0x7ffe00001000, 0x7ffe00001008,
        &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_int_eq(asked.expected.status, CFI_E_MEMORY);
    ck_assert_int_eq(asked.answer.frame.status, CFI_E_MEMORY);
    ask(oracle(ENGINE_gdb), push, 0x1002, 0, 0, &asked);
    assert_not_comparable(&asked, "epilogue analyser");
    /* The same ret as a return address: a caller frame (row of 0x1001),
     * which gdb's DWARF unwinder answers at level 1. */
    ask_as(oracle(ENGINE_gdb), push, 0x1002, true, 0, 0, &asked);
    ck_assert_msg(asked.answer.comparable, "%s",
                  asked.answer.not_comparable_reason);
    ck_assert_uint_eq(asked.answer.frame.cfa, 0x7ffe00001010);
    ck_assert_uint_eq(asked.answer.frame.caller.value[16],
                      asked.expected.caller.value[16]);
    remove_built(push);
}
END_TEST

/* Asks with PATH set to `dir`: the gdb found there, or none. */
static void ask_with_path(const char *dir, const char *path, uint64_t pc,
                          struct asked *asked)
{
    char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", dir, 1);
    ask(oracle(ENGINE_gdb), path, pc, 0, 0, asked);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
}

/* A gdb that cannot run (none on PATH: it exits at once, as a crash
 * would) or hangs (a "gdb" that sleeps: the watchdog kills it after
 * 20 s, gdb's start-up bound) leaves the request not comparable, with the reason; so
 * does a PC no FDE covers, where gdb would use its prologue analyser. */
START_TEST(gdb_missing_hung_or_no_fde)
{
    char *plain = build("", "\tnop\n");
    struct asked asked;
    ask(oracle(ENGINE_gdb), plain, 0x2000, 0, 0, &asked);
    assert_not_comparable(&asked, "prologue analyser");
    ask_with_path("/nonexistent", plain, 0x1000, &asked);
    assert_not_comparable(&asked, "exited");
    char *dir = test_temp_dir(), fake[4096];
    snprintf(fake, sizeof fake, "%s/gdb", dir);
    static const char sleeper[] = "#!/bin/sh\nexec sleep 60\n";
    ck_assert_int_eq(test_write_file(fake, sleeper, strlen(sleeper)), 0);
    ck_assert_int_eq(chmod(fake, 0755), 0);
    ask_with_path(dir, plain, 0x1000, &asked);
    assert_not_comparable(&asked, "not ready in time");
    remove(fake);
    rmdir(dir);
    free(dir);
    remove_built(plain);
}
END_TEST

/* ------------------------------------------------------------------ */
/* gdb's batches                                                        */
/* ------------------------------------------------------------------ */

static enum gdb_core_add add_words(struct gdb_core *core,
                                   struct gdb_word *words, size_t n)
{
    static const uint64_t regs[GDB_NREGS];
    struct gdb_image image = {words, n, n};
    return gdb_core_add(core, regs, &image);
}

/* Images share a core where they agree word for word: the same value,
 * or a hole in both; another value, or a value where the core has a
 * hole (or the other way round), goes to another core. */
START_TEST(gdb_core_images_agree)
{
    struct gdb_core *core = gdb_core_new();
    struct gdb_word first[] = {{0x1000, 1, true}, {0x1008, 0, false}};
    struct gdb_word same[] = {{0x1000, 1, true}, {0x1008, 9, false},
                              {0x1010, 5, true}};
    struct gdb_word other[] = {{0x1000, 2, true}};
    struct gdb_word on_hole[] = {{0x1008, 0, true}};
    struct gdb_word hole_on[] = {{0x1010, 5, false}};
    ck_assert_int_eq(add_words(core, first, 2), GDB_CORE_ADDED);
    ck_assert_int_eq(add_words(core, same, 3), GDB_CORE_ADDED);
    ck_assert_int_eq(add_words(core, other, 1), GDB_CORE_CONFLICT);
    ck_assert_int_eq(add_words(core, on_hole, 1), GDB_CORE_CONFLICT);
    ck_assert_int_eq(add_words(core, hole_on, 1), GDB_CORE_CONFLICT);
    ck_assert_uint_eq(gdb_core_nthreads(core), 2);
    gdb_core_clear(core);
    ck_assert_int_eq(add_words(core, other, 1), GDB_CORE_ADDED);
    ck_assert_int_eq(add_words(core, on_hole, 1), GDB_CORE_ADDED);
    ck_assert_uint_eq(gdb_core_nthreads(core), 2);
    gdb_core_free(core);
}
END_TEST

/* A request of a batch over one shared memory: its PC, caller frame or
 * not, the seed of its registers, and its own faulting range. */
struct batch_question {
    uint64_t pc;
    bool caller;
    uint64_t seed, fault, fault_end;   /* fault_end 0: none */
};

struct batch_run {
    struct cfi_file *file;
    struct engine_memory *memory;
    size_t n;
    struct cfi_regs *callee;
    struct engine_overlay *overlay;
    struct cfi_request *request;
    struct engine_batch_entry *entry;
    struct engine_answer *alone, *batched;
    size_t progress;
};

static void count_progress(void *env)
{
    ((struct batch_run *)env)->progress++;
}

/* Every register 0-16 known (the seed's), rsp = 0x7ffe00001000 in all:
 * the images of the requests overlap. */
static void batch_open(struct batch_run *r, const char *path,
                       const struct batch_question *q, size_t n)
{
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &r->file, &diag) == CFI_OK, "%s",
                  diag.message);
    r->memory = engine_memory_new(true, 7);
    engine_memory_map_file(r->memory, r->file);
    r->n = n;
    r->progress = 0;
    r->callee = calloc(n, sizeof *r->callee);
    r->overlay = calloc(n, sizeof *r->overlay);
    r->request = calloc(n, sizeof *r->request);
    r->entry = calloc(n, sizeof *r->entry);
    r->alone = calloc(n, sizeof *r->alone);
    r->batched = calloc(n, sizeof *r->batched);
    struct cfi_memory shared = engine_memory_reader(r->memory);
    for (size_t i = 0; i < n; i++) {
        make_state(r->file->arch, q[i].seed, 0, q[i].pc, &r->callee[i]);
        cfi_regs_set(&r->callee[i], r->file->arch->sp, 0x7ffe00001000);
        struct engine_state state = {.has_fault = q[i].fault_end != 0,
                                     .fault_begin = q[i].fault,
                                     .fault_end = q[i].fault_end};
        engine_overlay_init(&r->overlay[i], shared, &state);
        r->request[i] = (struct cfi_request){
            q[i].pc, q[i].caller, &r->callee[i],
            engine_overlay_reader(&r->overlay[i]), 0};
        r->entry[i] = (struct engine_batch_entry){
            &r->request[i], shared, state.has_fault, q[i].fault,
            q[i].fault_end, &r->batched[i]};
    }
}

static void batch_close(struct batch_run *r)
{
    engine_memory_free(r->memory);
    cfi_file_close(r->file);
    free(r->callee);
    free(r->overlay);
    free(r->request);
    free(r->entry);
    free(r->alone);
    free(r->batched);
}

static void batch_ask(struct batch_run *r, bool alone_too)
{
    void *self;
    struct cfi_diag diag;
    ck_assert_int_eq(engine_gdb_open(r->file, &self, &diag), CFI_OK);
    for (size_t i = 0; alone_too && i < r->n; i++)
        engine_gdb_answer(self, &r->request[i], &r->alone[i]);
    struct engine_batch_progress progress = {count_progress, NULL, r};
    engine_gdb_answer_batch(self, r->entry, r->n, &progress);
    engine_gdb_close(self);
    ck_assert_uint_eq(r->progress, r->n);
}

static void assert_same_answer(const struct engine_answer *a,
                               const struct engine_answer *b, size_t i)
{
    ck_assert_msg(a->comparable == b->comparable, "request %zu: %s / %s", i,
                  a->not_comparable_reason ? a->not_comparable_reason : "",
                  b->not_comparable_reason ? b->not_comparable_reason : "");
    ck_assert_int_eq(a->frame.status, b->frame.status);
    if (!a->comparable || a->frame.status != CFI_OK)
        return;
    ck_assert(a->cfa_comparable == b->cfa_comparable);
    ck_assert_uint_eq(a->frame.cfa, b->frame.cfa);
    for (unsigned reg = 0; reg < GDB_NREGS; reg++) {
        ck_assert(a->reg_comparable[reg] == b->reg_comparable[reg]);
        ck_assert_int_eq(a->frame.caller.status[reg],
                         b->frame.caller.status[reg]);
        ck_assert_uint_eq(a->frame.caller.value[reg],
                          b->frame.caller.value[reg]);
    }
}

/* One batch (push rbx; nop; ret) answers each request as it is answered
 * alone: requests whose faulting ranges fall on another's saved rbx or
 * return address go to other cores, a caller frame and the epilogue
 * analyser's ret are told apart per thread, a PC no FDE covers is not
 * asked. */
START_TEST(gdb_batch_as_alone)
{
    char *push = build("", "\tpush %rbx\n\t.cfi_def_cfa_offset 16\n"
                           "\t.cfi_offset %rbx, -16\n\tnop\n");
    const uint64_t rbx = 0x7ffe00001000, ra = rbx + 8;
    static const struct batch_question q[] = {
        {0x1001, false, 1, 0, 0},
        {0x1001, false, 2, 0x7ffe00001008, 0x7ffe00001010},
        {0x1000, false, 3, 0, 0},
        {0x1002, true, 4, 0, 0},
        {0x1002, false, 5, 0, 0},
        {0x1001, false, 6, 0x7ffe00001000, 0x7ffe00001001},
        {0x2000, false, 7, 0, 0},
        {0x1001, true, 8, 0, 0},
    };
    enum { N = sizeof q / sizeof q[0] };
    struct batch_run r;
    batch_open(&r, push, q, N);
    batch_ask(&r, true);
    for (size_t i = 0; i < N; i++)
        assert_same_answer(&r.alone[i], &r.batched[i], i);
    uint64_t word;
    ck_assert_int_eq(r.request[0].memory.read(r.request[0].memory.env, ra,
                                              8, &word), CFI_OK);
    ck_assert_int_eq(r.batched[0].frame.status, CFI_OK);
    ck_assert_uint_eq(r.batched[0].frame.caller.value[16], word);
    ck_assert_uint_eq(r.batched[0].frame.cfa, rbx + 16);
    ck_assert(r.batched[1].comparable);
    ck_assert_int_eq(r.batched[1].frame.status, CFI_E_MEMORY);
    ck_assert_int_eq(r.batched[5].frame.status, CFI_E_MEMORY);
    ck_assert_int_eq(r.batched[3].frame.status, CFI_OK);
    ck_assert(!r.batched[4].comparable);
    ck_assert(!r.batched[6].comparable);
    batch_close(&r);
    remove_built(push);
}
END_TEST

/* A "gdb" that answers every thread as gdb would (CFA 0x7ffe00001010,
 * rip 0x1234) but for LWP 3 (the batch's second request), where it runs
 * `on_3` after "begin"; with `load_fails`, one asked about more than one
 * thread exits before it begins (a core it cannot load). */
static char *fake_gdb(const char *on_3, bool load_fails)
{
    char *dir = test_temp_dir(), path[4096], text[2048];
    snprintf(path, sizeof path, "%s/gdb", dir);
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "echo 'CFISEM-GDB ready'\n"
             "while read core rest; do\n"
             "  %s\n"
             "  for w in $rest; do\n"
             "    echo 'CFISEM-GDB begin'\n"
             "    if [ \"${w%%%%:*}\" = 3 ]; then %s; fi\n"
             "    echo 'CFISEM-GDB ok 7ffe00001010 0 0 0 0 0 0 0 0 0 0 0 0 0 "
             "0 0 0 1234'\n"
             "  done\n"
             "done\n",
             load_fails ? "case \"$rest\" in *' '*) exit 1;; esac" : ":",
             on_3);
    ck_assert_int_eq(test_write_file(path, text, strlen(text)), 0);
    ck_assert_int_eq(chmod(path, 0755), 0);
    return dir;
}

static void remove_fake_gdb(char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gdb", dir);
    remove(path);
    rmdir(dir);
    free(dir);
}

/* Four requests to a fake gdb on PATH; whether each was answered by it. */
static void ask_fake(const char *dir, bool answered[4],
                     const char *reasons[4])
{
    char *plain = build("", "\tnop\n");
    static const struct batch_question q[] = {
        {0x1000, false, 1, 0, 0}, {0x1000, false, 2, 0, 0},
        {0x1000, false, 3, 0, 0}, {0x1000, false, 4, 0, 0}};
    struct batch_run r;
    batch_open(&r, plain, q, 4);
    char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", dir, 1);
    batch_ask(&r, false);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    for (size_t i = 0; i < 4; i++) {
        const struct engine_answer *a = &r.batched[i];
        answered[i] = a->comparable && a->frame.status == CFI_OK &&
                      a->frame.cfa == 0x7ffe00001010 &&
                      a->frame.caller.value[16] == 0x1234;
        reasons[i] = a->not_comparable_reason;
    }
    batch_close(&r);
    remove_built(plain);
}

/* gdb hanging (killed by the watchdog) or exiting on the second request
 * of a batch makes that request not comparable, with the reason, and a
 * new gdb answers the rest; a gdb that fails on the whole core (before
 * it begins on a thread) is asked smaller batches, down to one request,
 * and answers them all. */
START_TEST(gdb_batch_failure_isolated)
{
    static const struct {
        const char *on_3;
        bool load_fails;
        bool second_answered;
    } cases[] = {{"exec sleep 60", false, false},
                 {"exit 1", false, false},
                 {":", true, true}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *dir = fake_gdb(cases[c].on_3, cases[c].load_fails);
        bool answered[4];
        const char *reasons[4];
        ask_fake(dir, answered, reasons);
        ck_assert(answered[0] && answered[2] && answered[3]);
        ck_assert(answered[1] == cases[c].second_answered);
        if (!cases[c].second_answered)
            ck_assert_msg(strstr(reasons[1], "did not answer in time, or "
                                             "exited"), "%s", reasons[1]);
        remove_fake_gdb(dir);
    }
}
END_TEST

/* libunwind holds registers 0..16: an FDE whose program names another
 * (here restore_extended r121 at 0x1001, a register with no rule) is not
 * comparable at every address, before the instruction too. r12 is. */
START_TEST(libunwind_high_register)
{
    char *high = build("", "\tnop\n\t.cfi_escape 0x06, 0x79\n\tnop\n");
    char *xmm = build("", "\t.cfi_offset %xmm0, -16\n\tnop\n");
    char *low = build("", "\tnop\n\t.cfi_escape 0x06, 0x0c\n\tnop\n");
    struct asked asked;
    for (uint64_t pc = 0x1000; pc <= 0x1001; pc++) {
        ask(oracle(ENGINE_libunwind), high, pc, 0, 0, &asked);
        assert_not_comparable(&asked, "register above 16, outside");
    }
    ask(oracle(ENGINE_libunwind), xmm, 0x1000, 0, 0, &asked);
    assert_not_comparable(&asked, "register above 16, outside");
    ask(oracle(ENGINE_libunwind), low, 0x1001, 0, 0, &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_int_eq(asked.answer.frame.status, CFI_OK);
    remove_built(high);
    remove_built(xmm);
    remove_built(low);
}
END_TEST

/* rbx = val(const8u 2^63; lit1; neg; div): libunwind's signed division
 * of INT64_MIN by -1 traps; the adapter refuses it (the process lives).
 * By 1 (no neg) it is asked. */
START_TEST(libunwind_div_trap_refused)
{
    char *trap = build("", "\t.cfi_escape 0x16, 0x03, 0x0c, 0x0e, 0, 0, 0, 0,"
                           " 0, 0, 0, 0x80, 0x31, 0x1f, 0x1b\n\tnop\n");
    char *one = build("", "\t.cfi_escape 0x16, 0x03, 0x0b, 0x0e, 0, 0, 0, 0,"
                          " 0, 0, 0, 0x80, 0x31, 0x1b\n\tnop\n");
    struct asked asked;
    ask(oracle(ENGINE_libunwind), trap, 0x1000, 0, 0, &asked);
    assert_not_comparable(&asked, "SIGFPE");
    ask(oracle(ENGINE_libunwind), one, 0x1000, 0, 0, &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_uint_eq(asked.answer.frame.caller.value[CFI_REG_RBX],
                      0x8000000000000000ull);
    remove_built(trap);
    remove_built(one);
}
END_TEST

/* A CIE with no CFA rule (`.cfi_startproc simple`, rip at CFA-8):
 * libunwind would read a CFA expression at address 0; the adapter
 * refuses the row. With def_cfa rsp+8 it is asked. */
START_TEST(libunwind_no_cfa_rule_refused)
{
    char *none = build("simple", "\t.cfi_offset %rip, -8\n\tnop\n");
    char *cfa = build("simple", "\t.cfi_def_cfa %rsp, 8\n"
                                "\t.cfi_offset %rip, -8\n\tnop\n");
    struct asked asked;
    ask(oracle(ENGINE_libunwind), none, 0x1000, 0, 0, &asked);
    assert_not_comparable(&asked, "no CFA rule");
    ck_assert_int_eq(asked.expected.status, CFI_E_MALFORMED);
    ask(oracle(ENGINE_libunwind), cfa, 0x1000, 0, 0, &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_int_eq(asked.answer.frame.status, CFI_OK);
    remove_built(none);
    remove_built(cfa);
}
END_TEST

/* rbx = val_expression(breg26 0): libunwind would read rax for xmm9;
 * the adapter refuses the row. breg12 is asked. */
START_TEST(libunwind_expression_high_register_refused)
{
    char *high = build("", "\t.cfi_escape 0x16, 0x03, 0x02, 0x8a, 0x00\n"
                           "\tnop\n");
    char *low = build("", "\t.cfi_escape 0x16, 0x03, 0x02, 0x7c, 0x00\n"
                          "\tnop\n");
    struct asked asked;
    ask(oracle(ENGINE_libunwind), high, 0x1000, 0, 0, &asked);
    assert_not_comparable(&asked, "register above 16 (libunwind reads rax");
    ask(oracle(ENGINE_libunwind), low, 0x1000, 0, 0, &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_int_eq(asked.answer.frame.status, CFI_OK);
    remove_built(high);
    remove_built(low);
}
END_TEST

/* expression(r235929461, lit0): libdw would allocate and clear a table
 * of that many registers (gigabytes, seconds): the adapter refuses the
 * FDE. Register 120 is asked. */
START_TEST(libdw_huge_register_refused)
{
    char *huge = build("", "\t.cfi_escape 0x10, 0xf5, 0xfe, 0xbf, 0x70, 0x01,"
                           " 0x30\n\tnop\n");
    char *high = build("", "\t.cfi_escape 0x10, 0x78, 0x01, 0x30\n\tnop\n");
    struct asked asked;
    ask(oracle(ENGINE_libdw), huge, 0x1000, 0, 0, &asked);
    assert_not_comparable(&asked, "register number");
    ck_assert_int_eq(asked.expected.status, CFI_E_MALFORMED);
    ask(oracle(ENGINE_libdw), high, 0x1000, 0, 0, &asked);
    ck_assert(asked.answer.comparable);
    remove_built(huge);
    remove_built(high);
}
END_TEST

/* rbx = val(breg7 0x11; deref_size 1): libunwind reads the word at
 * rsp+0x10. A fault on rsp+0x10 alone (not a byte the IL reads) cannot be
 * put to its word-sized accessor: not comparable. A fault on the whole
 * word is a memory error for both. */
START_TEST(libunwind_partial_word_fault)
{
    char *path = build("", "\t.cfi_escape 0x16, 0x03, 0x04, 0x77, 0x11, 0x94,"
                           " 0x01\n\tnop\n");
    const uint64_t word = 0x7ffe00001010;
    struct asked asked;
    ask(oracle(ENGINE_libunwind), path, 0x1000, word, word + 1, &asked);
    ck_assert_int_eq(asked.expected.status, CFI_OK);
    assert_not_comparable(&asked, "part of one");
    ask(oracle(ENGINE_libunwind), path, 0x1000, word, word + 8, &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_int_eq(asked.answer.frame.status, CFI_E_MEMORY);
    ck_assert_int_eq(asked.expected.status, CFI_E_MEMORY);
    remove_built(path);
}
END_TEST

/* A return address column other than 16 (rbx, saved at cfa-16): the
 * adapters of libdwarf and libdw give the caller's rip that column's
 * value (cfi.h step 6), as the IL does. */
START_TEST(return_address_column)
{
    char *path = build("simple", "\t.cfi_return_column %rbx\n"
                                 "\t.cfi_def_cfa %rsp, 8\n"
                                 "\t.cfi_offset %rbx, -16\n\tnop\n");
    static const enum engine_id ids[] = {ENGINE_libdwarf,
                                              ENGINE_libdw};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        struct asked asked;
        ask(oracle(ids[i]), path, 0x1000, 0, 0, &asked);
        const struct cfi_regs *got = &asked.answer.frame.caller;
        ck_assert_int_eq(asked.answer.frame.status, CFI_OK);
        ck_assert_int_eq(got->status[CFI_REG_RIP], CFI_REG_VALUE);
        ck_assert_uint_eq(got->value[CFI_REG_RIP], got->value[CFI_REG_RBX]);
        ck_assert_uint_eq(got->value[CFI_REG_RIP],
                          asked.expected.caller.value[CFI_REG_RIP]);
    }
    remove_built(path);
}
END_TEST

/* pac-ret: paciasp, negate_ra_state, x29 and x30 saved at cfa-16 and
 * cfa-8 (0x1008). The IL's caller PC is x30's saved value stripped of
 * its signature (cfi.h step 6). libdw's is that value as it is, and its
 * RA_SIGN_STATE (34) is not compared: libdw has none. libdwarf runs the
 * negate as nothing: its state is the ABI's 0 and its PC the value as
 * it is, both compared. */
static const char pac_ret[] =
    "\thint 25\n\t.cfi_negate_ra_state\n"
    "\tstp x29, x30, [sp, -16]!\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset 29, -16\n\t.cfi_offset 30, -8\n\tnop\n\tnop\n";

START_TEST(aarch64_return_address)
{
    char *path = build_aarch64(pac_ret, false);
    const unsigned x30 = cfi_arch_aarch64.ra_column, pc = cfi_arch_aarch64.pc;
    const unsigned state = cfi_arch_aarch64.ra_state;
    struct asked dw, dwarf;
    ask(oracle(ENGINE_libdw), path, 0x1008, 0, 0, &dw);
    ask(oracle(ENGINE_libdwarf), path, 0x1008, 0, 0, &dwarf);
    const struct cfi_regs *want = &dw.expected.caller;
    ck_assert_int_eq(dw.expected.status, CFI_OK);
    ck_assert_uint_eq(want->value[state], CFI_RA_SIGNED_SP);
    uint64_t signed_ra = want->value[x30];
    ck_assert_uint_ne(signed_ra, cfi_strip_pac(signed_ra, 0));
    ck_assert_uint_eq(want->value[pc], cfi_strip_pac(signed_ra, 0));
    const struct asked *both[] = {&dw, &dwarf};
    for (int i = 0; i < 2; i++) {
        const struct engine_answer *a = &both[i]->answer;
        ck_assert(a->comparable);
        ck_assert_int_eq(a->frame.status, CFI_OK);
        ck_assert_uint_eq(a->frame.caller.value[x30], signed_ra);
        ck_assert_uint_eq(a->frame.caller.value[pc], signed_ra);
        ck_assert(a->reg_comparable[pc] && a->reg_comparable[x30]);
    }
    ck_assert(!dw.answer.reg_comparable[state]);
    ck_assert(dwarf.answer.reg_comparable[state]);
    ck_assert_int_eq(dwarf.answer.frame.caller.status[state], CFI_REG_VALUE);
    ck_assert_uint_eq(dwarf.answer.frame.caller.value[state],
                      CFI_RA_NOT_SIGNED);
    remove_built(path);
}
END_TEST

/* A 'B'-key CIE ("zRB"): libdwarf refuses the section, and the adapter
 * says so for the request (an error of the frame, its message
 * libdwarf's), comparable, not a failure to open. libdw reads it. */
START_TEST(aarch64_b_key)
{
    char *b_key = build_aarch64(pac_ret, true);
    char *a_key = build_aarch64(pac_ret, false);
    struct asked asked;
    ask(oracle(ENGINE_libdwarf), b_key, 0x1008, 0, 0, &asked);
    ck_assert(asked.answer.comparable);
    ck_assert_int_eq(asked.answer.frame.status, CFI_E_MALFORMED);
    ck_assert_ptr_nonnull(strstr(asked.answer.frame.diag.message,
                                 "DW_DLE_FRAME_AUGMENTATION_UNKNOWN"));
    ck_assert_int_eq(asked.expected.status, CFI_OK);
    ck_assert(asked.expected.ra_b_key);
    ask(oracle(ENGINE_libdwarf), a_key, 0x1008, 0, 0, &asked);
    ck_assert_int_eq(asked.answer.frame.status, CFI_OK);
    ask(oracle(ENGINE_libdw), b_key, 0x1008, 0, 0, &asked);
    ck_assert_int_eq(asked.answer.frame.status, CFI_OK);
    remove_built(b_key);
    remove_built(a_key);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The local unwinders: LLVM's libunwind and libgcc, in a child          */
/* ------------------------------------------------------------------ */

/* The cases that show a finding of diff/findings/, which the comparison
 * would report as a difference (diff/findings/README.md). */
static const char *const local_findings[][2] = {
    {"restore.so", "libgcc-restore-cie-rule, llvmunwind-restore-cie-rule"},
    {"sf_ops.so", "libgcc-restore-cie-rule"},
    {"return_column.so", "llvmunwind-return-column-register"},
};

static bool local_finding(const char *name)
{
    for (size_t i = 0; i < sizeof local_findings / sizeof *local_findings;
         i++)
        if (!strcmp(name, local_findings[i][0]))
            return true;
    return false;
}

/* Every other hand-written case: each answer the IL's (or not
 * comparable), faults included (state 1 makes sp+8 fault). */
START_TEST(local_cases)
{
    struct tally tallies[NLOCALS] = {{0}};
    char *dir_path = test_build_path("corpus/cases");
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "no built cases in %s", dir_path);
    size_t files = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        size_t len = strlen(entry->d_name);
        if (len < 4 || strcmp(entry->d_name + len - 3, ".so") ||
            local_finding(entry->d_name))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir_path, entry->d_name);
        compare_file_with(path, locals, NLOCALS, tallies, false);
        files++;
    }
    closedir(dir);
    free(dir_path);
    report_with("cases", locals, NLOCALS, tallies);
    ck_assert_uint_ge(files, 10);
    for (int o = 0; o < NLOCALS; o++) {
        ck_assert_uint_gt(tallies[o].verdicts[ENGINE_VERDICT_AGREE], 80);
        ck_assert_uint_eq(tallies[o].verdicts[ENGINE_VERDICT_ERROR], 0);
    }
}
END_TEST

/* f: rip = [rsp]. The word faults: a memory error, answered, not a
 * crash; another word of the page faults: a page cannot say so, not
 * comparable. */
START_TEST(local_fault_reported)
{
    char *plain = build("", "\tnop\n");
    struct asked asked;
    for (int o = 0; o < NLOCALS; o++) {
        ask(&locals[o], plain, 0x1000, 0x7ffe00001000, 0x7ffe00001008,
            &asked);
        ck_assert_int_eq(asked.expected.status, CFI_E_MEMORY);
        ck_assert(asked.answer.comparable);
        ck_assert_int_eq(asked.answer.frame.status, CFI_E_MEMORY);
        ask(&locals[o], plain, 0x1000, 0x7ffe00001040, 0x7ffe00001048,
            &asked);
        ck_assert_int_eq(asked.expected.status, CFI_OK);
        assert_not_comparable(&asked, "only part faults");
        ask(&locals[o], plain, 0x1000, 0, 0, &asked);
        ck_assert(asked.answer.comparable);
        ck_assert(engine_answer_agrees(&asked.expected, &asked.answer));
    }
    remove_built(plain);
}
END_TEST

/* LLVM's libunwind 14 aborts on DW_CFA_val_offset (f): its process dies,
 * the request is not comparable, and the next one (g) is answered by a
 * new process. */
START_TEST(local_child_restarted)
{
    char *path = build("", "\t.cfi_escape 0x14, 0x03, 0x02\n\tnop\n\tret\n"
                           "\t.cfi_endproc\ng:\n\t.cfi_startproc\n\tnop\n");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct engine_memory *memory = engine_memory_new(true, 7);
    engine_memory_map_file(memory, file);
    struct cfi_regs callee;
    make_state(file->arch, 5, 0, 0x1000, &callee);
    cfi_regs_set(&callee, CFI_REG_RSP, 0x7ffe00001000);
    struct cfi_request request = {0x1000, false, &callee,
                                  engine_memory_reader(memory), 0};
    void *self;
    ck_assert_int_eq(engine_llvmunwind_open(file, &self, &diag), CFI_OK);
    struct engine_answer answer;
    engine_llvmunwind_answer(self, &request, &answer);
    ck_assert(!answer.comparable);
    ck_assert(strstr(answer.not_comparable_reason, "died"));
    request.pc = 0x1002;
    cfi_regs_set(&callee, CFI_REG_RIP, 0x1002);
    engine_llvmunwind_answer(self, &request, &answer);
    ck_assert(answer.comparable);
    ck_assert_int_eq(answer.frame.status, CFI_OK);
    ck_assert_uint_eq(answer.frame.cfa, 0x7ffe00001008);
    engine_llvmunwind_close(self);
    engine_memory_free(memory);
    cfi_file_close(file);
    remove_built(path);
}
END_TEST

/* rbx = val(skip -3), a jump onto itself: neither library bounds an
 * expression (diff/findings: libgcc-expression-loop,
 * llvmunwind-expression-loop), the child hangs; the
 * watchdog kills it and the request is not comparable. */
START_TEST(local_watchdog)
{
    char *path = build("", "\t.cfi_escape 0x16, 0x03, 0x03, 0x2f, 0xfd, "
                           "0xff\n\tnop\n");
    struct asked asked;
    for (int o = 0; o < NLOCALS; o++) {
        ask(&locals[o], path, 0x1000, 0, 0, &asked);
        ck_assert_int_eq(asked.expected.status, CFI_E_STEP_LIMIT);
        assert_not_comparable(&asked, "did not answer in time");
    }
    remove_built(path);
}
END_TEST

/* One request at `pc` of `path` as `ask` makes it, with register
 * `unknown` left unknown. */
static void ask_unknown(const struct oracle *oracle, const char *path,
                        uint64_t pc, unsigned unknown, struct asked *asked)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    struct engine_memory *memory = engine_memory_new(true, 7);
    engine_memory_map_file(memory, file);
    struct cfi_regs callee;
    make_state(file->arch, 99, 0, pc, &callee);
    cfi_regs_set(&callee, CFI_REG_RSP, 0x7ffe00001000);
    callee.status[unknown] = CFI_REG_UNKNOWN;
    struct cfi_request request = {pc, false, &callee,
                                  engine_memory_reader(memory), 0};
    sem_unwind(il, &request, &asked->expected);
    void *self;
    ck_assert_msg(oracle->open(file, &self, &diag) == CFI_OK, "%s: %s",
                  engine_name(oracle->id), diag.message);
    oracle->answer(self, &request, &asked->answer);
    oracle->close(self);
    engine_memory_free(memory);
    sem_file_il_free(il);
    cfi_file_close(file);
}

/* Unknown callee registers, asked twice with two poison values: r12
 * (no rule, callee-saved) is carried over, unknown in both answers; rbx
 * saved at [cfa-16] is a value; with rsp unknown the CFA depends on it,
 * which the libraries cannot say (the IL: reg_unknown rsp). */
START_TEST(local_unknown_registers)
{
    char *path = build("", "\tpush %rbx\n\t.cfi_adjust_cfa_offset 8\n"
                           "\t.cfi_offset %rbx, -16\n\tnop\n\tpop %rbx\n"
                           "\t.cfi_adjust_cfa_offset -8\n");
    struct asked asked;
    for (int o = 0; o < NLOCALS; o++) {
        ask_unknown(&locals[o], path, 0x1001, 12, &asked);
        ck_assert_int_eq(asked.expected.status, CFI_OK);
        ck_assert(asked.answer.comparable);
        ck_assert_int_eq(asked.answer.frame.caller.status[12],
                         CFI_REG_UNKNOWN);
        ck_assert_int_eq(asked.answer.frame.caller.status[3], CFI_REG_VALUE);
        ck_assert(engine_answer_agrees(&asked.expected, &asked.answer));
        ask_unknown(&locals[o], path, 0x1001, CFI_REG_RSP, &asked);
        ck_assert_int_eq(asked.expected.status, CFI_E_REG_UNKNOWN);
        assert_not_comparable(&asked, "left unknown");
    }
    remove_built(path);
}
END_TEST

/* AArch64 files: both answer "another architecture", as libunwind. */
START_TEST(local_other_architecture)
{
    char *path = test_build_path("corpus/cases-aarch64/frame_pointer.so");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct cfi_regs callee;
    make_state(file->arch, 3, 0, 0x1000, &callee);
    struct engine_memory *memory = engine_memory_new(true, 7);
    struct cfi_request request = {0x1000, false, &callee,
                                  engine_memory_reader(memory), 0};
    for (int o = 0; o < NLOCALS; o++) {
        struct engine_instance engine;
        ck_assert_int_eq(engine_open(locals[o].id, file, NULL, &engine,
                                     &diag),
                         CFI_OK);
        struct engine_answer answer;
        engine.unwind(engine.self, &request, &answer);
        ck_assert(other_architecture(&answer));
        engine_close(&engine);
    }
    engine_memory_free(memory);
    cfi_file_close(file);
    free(path);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("oracles");
    TCase *tc = tcase_create("oracles_vs_il");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_unsupported_inputs);
    tcase_add_test(tc, test_cases);
    tcase_add_test(tc, test_libc);
    tcase_add_test(tc, test_cases_aarch64);
    tcase_add_test(tc, test_libc_aarch64);
    tcase_add_test(tc, libunwind_high_register);
    tcase_add_test(tc, libunwind_div_trap_refused);
    tcase_add_test(tc, libunwind_no_cfa_rule_refused);
    tcase_add_test(tc, libunwind_expression_high_register_refused);
    tcase_add_test(tc, libunwind_partial_word_fault);
    tcase_add_test(tc, libdw_huge_register_refused);
    tcase_add_test(tc, return_address_column);
    tcase_add_test(tc, aarch64_return_address);
    tcase_add_test(tc, aarch64_b_key);
    tcase_add_test(tc, local_cases);
    tcase_add_test(tc, local_fault_reported);
    tcase_add_test(tc, local_child_restarted);
    tcase_add_test(tc, local_unknown_registers);
    tcase_add_test(tc, local_watchdog);
    tcase_add_test(tc, local_other_architecture);
    tcase_add_test(tc, gdb_dwarf_unwinder);
    tcase_add_test(tc, gdb_missing_hung_or_no_fde);
    tcase_add_test(tc, gdb_core_images_agree);
    tcase_add_test(tc, gdb_batch_as_alone);
    tcase_add_test(tc, gdb_batch_failure_isolated);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
