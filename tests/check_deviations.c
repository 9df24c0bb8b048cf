/* SPDX-License-Identifier: MIT */
/* check_deviations.c — every entry of the deviation table
 * (engines/deviations.c) on a minimal input where the library shows it.
 *
 * Each test builds a small shared object from assembly (cc -shared
 * -nostdlib, .text at 0x1000, as the hand-written cases), unwinds one
 * frame with the outside engine and with the IL evaluator on the same
 * state, and checks that
 *   - the item differs and engine_deviation_find names exactly this entry;
 *   - the entry's predicate does not match a nearby case that does not
 *     deviate (another program, or a PC the library handles as cfi.h).
 * CIE programs that gas cannot write (a restore or an advance in a CIE)
 * are written as raw .eh_frame bytes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/engines.h"
#include "engines/oracle_gdb.h"
#include "engines/oracle_libdw.h"
#include "engines/oracle_libdwarf.h"
#include "engines/oracle_libunwind.h"
#include "engines/oracle_sframe.h"
#include "sframe/sframe.h"
#include "semantics/sem.h"
#include "support.h"

/* ------------------------------------------------------------------ */
/* Building and probing                                                 */
/* ------------------------------------------------------------------ */

/* f at 0x1000: the directives, then `nops` one-byte instructions, each
 * directive list `body` placed by the caller between them. */
static char *build_with(const char *body, const char *flags);

static char *build(const char *body)
{
    return build_with(body, "");
}

/* The same, with more flags for cc (-Wa,--gsframe). */
static char *build_with(const char *body, const char *flags)
{
    char *dir = test_temp_dir();
    char source[4096], object[4096], command[9000];
    snprintf(source, sizeof source, "%s/case.S", dir);
    snprintf(object, sizeof object, "%s/case.so", dir);
    ck_assert_int_eq(test_write_file(source, body, strlen(body)), 0);
    snprintf(command, sizeof command,
             "cc -shared -nostdlib -Wl,--section-start=.text=0x1000 "
             "-Wl,--build-id=none %s -o %s %s", flags, object, source);
    ck_assert_msg(system(command) == 0, "%s", command);
    free(dir);
    return strdup(object);
}

/* f for AArch64, built with the cross compiler: `program` between
 * `.cfi_startproc START` and .cfi_endproc. */
static char *build_aarch64(const char *start, const char *program)
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
             "aarch64-linux-gnu-gcc -shared -nostdlib "
             "-Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o %s %s",
             object, source);
    ck_assert_msg(system(command) == 0, "%s", command);
    free(dir);
    return strdup(object);
}

/* f's body between .cfi_startproc and .cfi_endproc. */
static char *build_fde(const char *program)
{
    char text[4096];
    snprintf(text, sizeof text,
             "\t.text\n\t.globl f\nf:\n\t.cfi_startproc\n%s"
             "\tret\n\t.cfi_endproc\n", program);
    return build(text);
}

/* f with `.cfi_startproc simple`: a CIE with no initial instructions
 * but those `program` leads with (gas moves them into it). */
static char *build_simple(const char *program)
{
    char text[4096];
    snprintf(text, sizeof text,
             "\t.text\n\t.globl f\nf:\n\t.cfi_startproc simple\n%s"
             "\tret\n\t.cfi_endproc\n", program);
    return build(text);
}

/* A raw .eh_frame: one CIE ("zR", caf 1, daf -8, ra 16, pcrel sdata4)
 * with `cie` after def_cfa rsp+8 and offset rip, and one FDE for f
 * (0x1000, 8 bytes of nops) with `fde`. */
static char *build_raw(const char *cie, const char *fde)
{
    char text[4096];
    snprintf(text, sizeof text,
             "\t.text\n.Lf:\n\t.skip 8, 0x90\n.Lf_end:\n"
             "\t.section .eh_frame,\"a\",@unwind\n"
             "cie:\t.long cie_end - cie_start\ncie_start:\n"
             "\t.long 0\n\t.byte 1\n\t.asciz \"zR\"\n"
             "\t.uleb128 1\n\t.sleb128 -8\n\t.uleb128 16\n"
             "\t.uleb128 1\n\t.byte 0x1b\n"
             "\t.byte 0x0c, 7, 8, 0x90, 1\n%s"
             "\t.balign 8, 0\ncie_end:\n"
             "fde:\t.long fde_end - fde_start\nfde_start:\n"
             "\t.long fde_start - cie\n\t.long .Lf - .\n\t.long .Lf_end - .Lf\n"
             "\t.uleb128 0\n%s\t.balign 8, 0\nfde_end:\n"
             "\t.long 0\n", cie, fde);
    return build(text);
}

struct probe {
    struct cfi_file *file;
    struct sem_file_il *il;
    struct engine_memory *memory;
    struct cfi_regs callee;
    struct cfi_request request;
    struct cfi_frame expected;
    struct engine_answer answer;
    struct engine_mismatch mismatch;
    struct engine_outcome outcome;
};

typedef enum cfi_status (*open_fn)(const struct cfi_file *, void **,
                                   struct cfi_diag *);
typedef enum cfi_status (*answer_fn)(void *, const struct cfi_request *,
                                     struct engine_answer *);
typedef void (*close_fn)(void *);

static const struct {
    open_fn open;
    answer_fn answer;
    close_fn close;
} adapters[ENGINE_COUNT] = {
    [ENGINE_libdwarf] = {engine_libdwarf_open, engine_libdwarf_answer,
                              engine_libdwarf_close},
    [ENGINE_libdw] = {engine_libdw_open, engine_libdw_answer,
                           engine_libdw_close},
    [ENGINE_libunwind] = {engine_libunwind_open, engine_libunwind_answer,
                               engine_libunwind_close},
    [ENGINE_sframe] = {engine_sframe_open, engine_sframe_answer,
                            engine_sframe_close},
    [ENGINE_gdb] = {engine_gdb_open, engine_gdb_answer, engine_gdb_close},
};

/* Every register the file's architecture reports (x86-64: 0-16) known
 * but `unknown` (-1: none), the stack and frame pointers in a stack,
 * synthetic memory where the 8 bytes at `fault` (0: none) fault. */
static void probe_run_with(struct probe *p, const char *path, uint64_t pc,
                           bool caller, enum engine_id engine,
                           int unknown, uint64_t fault)
{
    memset(p, 0, sizeof *p);
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &p->file, &diag) == CFI_OK, "%s",
                  diag.message);
    ck_assert_int_eq(sem_file_il_build(p->file, &p->il), CFI_OK);
    p->memory = engine_memory_new(true, 7);
    engine_memory_map_file(p->memory, p->file);
    if (fault)
        engine_memory_add_fault(p->memory, fault, fault + 8);
    const struct cfi_arch *arch = p->file->arch;
    cfi_regs_clear(&p->callee);
    for (unsigned reg = 0; reg < arch->nreported; reg++)
        cfi_regs_set(&p->callee, reg, engine_mix(reg * 977 + 1));
    cfi_regs_set(&p->callee, arch->sp, 0x7ffe00001000);
    cfi_regs_set(&p->callee, arch->fp, 0x7ffe00001200);
    cfi_regs_set(&p->callee, arch->pc, pc);
    if (unknown >= 0)
        p->callee.status[unknown] = CFI_REG_UNKNOWN;
    p->request = (struct cfi_request){pc, caller, &p->callee,
                                      engine_memory_reader(p->memory), 0};
    sem_unwind(p->il, &p->request, &p->expected);
    void *self = NULL;
    ck_assert_msg(adapters[engine].open(p->file, &self, &diag) == CFI_OK,
                  "%s", diag.message);
    adapters[engine].answer(self, &p->request, &p->answer);
    adapters[engine].close(self);
    uint64_t lookup = caller ? pc - 1 : pc;
    const struct cfi_fde *fde = cfi_file_lookup(p->file, lookup);
    const struct sem_row *row = NULL;
    enum cfi_status translation = CFI_E_NO_FDE;
    if (fde) {
        size_t i = (size_t)(fde - p->file->fdes);
        translation = p->il->status[i];
        const struct sem_range *range =
            translation == CFI_OK ? sem_fde_il_find(&p->il->fdes[i], lookup)
                                  : NULL;
        row = range ? range->row : NULL;
    }
    p->mismatch = (struct engine_mismatch){engine, p->file, fde, row,
                                         translation, &p->request,
                                         &p->expected, NULL,
                                         ENGINE_ITEM_STATUS, 0};
    engine_compare(&p->mismatch, &p->answer, &p->outcome);
}

static void probe_run(struct probe *p, const char *path, uint64_t pc,
                      bool caller, enum engine_id engine)
{
    probe_run_with(p, path, pc, caller, engine, -1, 0);
}

static void probe_free(struct probe *p)
{
    engine_memory_free(p->memory);
    sem_file_il_free(p->il);
    cfi_file_close(p->file);
}

static const struct engine_deviation *entry(const char *id)
{
    size_t count;
    const struct engine_deviation *table = engine_deviation_table(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(table[i].id, id) == 0)
            return &table[i];
    ck_abort_msg("no deviation %s", id);
    return NULL;
}

/* The item (item, reg) of the probe, as the harness would classify it. */
static const struct engine_deviation *classify(struct probe *p,
                                               enum engine_item item,
                                               unsigned reg)
{
    p->mismatch.got = &p->answer.frame;
    p->mismatch.item = item;
    p->mismatch.reg = reg;
    return engine_deviation_find(&p->mismatch);
}

/* Whether the engine's answer differs from the IL's on (item, reg), as
 * engine_compare sees it (its list of items found keeps only the first). */
static bool item_differs(const struct probe *p, enum engine_item item,
                         unsigned reg)
{
    const struct cfi_frame *want = &p->expected, *got = &p->answer.frame;
    if (!p->answer.comparable)
        return false;
    if (item == ENGINE_ITEM_STATUS)
        return want->status != got->status;
    if (want->status != CFI_OK || got->status != CFI_OK)
        return false;
    if (item == ENGINE_ITEM_CFA)
        return p->answer.cfa_comparable && want->cfa != got->cfa;
    return p->answer.reg_comparable[reg] &&
           (want->caller.status[reg] != got->caller.status[reg] ||
            (want->caller.status[reg] == CFI_REG_VALUE &&
             want->caller.value[reg] != got->caller.value[reg]));
}

/* The state of a probe: the callee register left unknown (-1: none) and
 * the 8 bytes that fault (0: none). */
struct state {
    int unknown;
    uint64_t fault;
};
static const struct state full = {-1, 0};

/* At `pc` of the file built from `path`, in `state`, item (item, reg)
 * differs and is explained by `id`. */
static void shows_in(const char *path, uint64_t pc, bool caller,
                     struct state state, enum engine_id engine,
                     enum engine_item item, unsigned reg, const char *id)
{
    struct probe p;
    probe_run_with(&p, path, pc, caller, engine, state.unknown, state.fault);
    bool differs = item_differs(&p, item, reg);
    ck_assert_msg(differs, "%s: pc 0x%lx: the item does not differ (%s)", id,
                  (unsigned long)pc, cfi_status_name(p.answer.frame.status));
    const struct engine_deviation *found = classify(&p, item, reg);
    ck_assert_msg(found == entry(id), "%s: explained by %s", id,
                  found ? found->id : "nothing");
    probe_free(&p);
}

static void shows(const char *path, uint64_t pc, bool caller,
                  enum engine_id engine, enum engine_item item,
                  unsigned reg, const char *id)
{
    shows_in(path, pc, caller, full, engine, item, reg, id);
}

/* At `pc`, in `state`, the entry's predicate does not hold for (item,
 * reg). */
static void does_not_match_in(const char *path, uint64_t pc, bool caller,
                              struct state state, enum engine_id engine,
                              enum engine_item item, unsigned reg,
                              const char *id)
{
    struct probe p;
    probe_run_with(&p, path, pc, caller, engine, state.unknown, state.fault);
    p.mismatch.got = &p.answer.frame;
    p.mismatch.item = item;
    p.mismatch.reg = reg;
    ck_assert_msg(!entry(id)->matches(&p.mismatch),
                  "%s matches a case that does not deviate", id);
    probe_free(&p);
}

static void does_not_match(const char *path, uint64_t pc, bool caller,
                           enum engine_id engine, enum engine_item item,
                           unsigned reg, const char *id)
{
    does_not_match_in(path, pc, caller, full, engine, item, reg, id);
}

/* Removes the built object, its source and their folder. */
static void remove_built(char *path)
{
    remove(path);
    char *slash = strrchr(path, '/');
    if (slash) {
        strcpy(slash, "/case.S");
        remove(path);
        *slash = '\0';
        rmdir(path);
    }
    free(path);
}

/* ------------------------------------------------------------------ */
/* libunwind                                                            */
/* ------------------------------------------------------------------ */

START_TEST(libunwind_no_undefined_default)
{
    char *plain = build_fde("\tnop\n");
    char *undefined = build_fde("\t.cfi_undefined %rax\n\tnop\n");
    shows(plain, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RAX, "libunwind-no-undefined-default");
    does_not_match(undefined, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_REG, CFI_REG_RAX,
                   "libunwind-no-undefined-default");
    remove_built(plain);
    remove_built(undefined);
}
END_TEST

/* rip=rdx with rdx unknown: the caller's rip is unknown for cfi.h, an
 * error for libunwind, which needs the caller's IP as a value. */
START_TEST(libunwind_needs_caller_rip)
{
    char *rule = build_fde("\t.cfi_register %rip, %rdx\n\tnop\n");
    char *plain = build_fde("\t.cfi_register %rbx, %rdx\n\tnop\n");
    struct probe p;
    probe_run_with(&p, rule, 0x1000, false, ENGINE_libunwind, CFI_REG_RDX,
                   0);
    ck_assert_int_eq(p.expected.status, CFI_OK);
    ck_assert_int_eq(p.expected.caller.status[CFI_REG_RIP], CFI_REG_UNKNOWN);
    ck_assert_int_eq(p.answer.frame.status, CFI_E_REG_UNKNOWN);
    ck_assert_ptr_eq(classify(&p, ENGINE_ITEM_STATUS, 0),
                     entry("libunwind-needs-caller-rip"));
    probe_free(&p);
    /* rbx=rdx with rdx unknown: libunwind answers unknown rbx, no error. */
    probe_run_with(&p, plain, 0x1000, false, ENGINE_libunwind, CFI_REG_RDX,
                   0);
    p.mismatch.got = &p.answer.frame;
    ck_assert(!entry("libunwind-needs-caller-rip")->matches(&p.mismatch));
    probe_free(&p);
    remove_built(rule);
    remove_built(plain);
}
END_TEST

START_TEST(libunwind_rsp_is_cfa)
{
    char *rule = build_fde("\t.cfi_register %rsp, %r8\n\tnop\n");
    char *plain = build_fde("\tnop\n");
    shows(rule, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RSP, "libunwind-rsp-is-cfa");
    does_not_match(plain, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_REG, CFI_REG_RSP, "libunwind-rsp-is-cfa");
    remove_built(rule);
    remove_built(plain);
}
END_TEST

/* rsp=[cfa+16] with those bytes unreadable: the reference fails on rsp's
 * rule, libunwind never reads it. A fault under rip's slot instead is a
 * failure for both: no deviation. */
START_TEST(libunwind_rsp_is_cfa_status)
{
    char *rule = build_fde("\t.cfi_offset %rsp, 8\n\tnop\n");
    const uint64_t cfa = 0x7ffe00001008;
    struct probe p;
    probe_run_with(&p, rule, 0x1000, false, ENGINE_libunwind, -1, cfa + 8);
    ck_assert_int_eq(p.expected.status, CFI_E_MEMORY);
    ck_assert_int_eq(p.answer.frame.status, CFI_OK);
    ck_assert_ptr_eq(classify(&p, ENGINE_ITEM_STATUS, 0),
                     entry("libunwind-rsp-is-cfa"));
    probe_free(&p);
    probe_run_with(&p, rule, 0x1000, false, ENGINE_libunwind, -1, cfa - 8);
    p.mismatch.got = &p.answer.frame;
    ck_assert(!entry("libunwind-rsp-is-cfa")->matches(&p.mismatch));
    probe_free(&p);
    remove_built(rule);
}
END_TEST

START_TEST(libunwind_val_offset_unknown)
{
    /* val_offset r12, -32 is 14 0c 04: libunwind reads 0c 04 .. as
     * def_cfa rsi, so the CFA goes wrong. */
    char *path = build_fde("\tnop\n\t.cfi_val_offset %r12, -32\n\tnop\n");
    shows(path, 0x1001, false, ENGINE_libunwind, ENGINE_ITEM_CFA, 0,
          "libunwind-val-offset-unknown");
    does_not_match(path, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_CFA, 0, "libunwind-val-offset-unknown");
    remove_built(path);
}
END_TEST

/* restore_state on an empty stack after the first row. */
static const char late_error[] = "\tnop\n\t.cfi_escape 0x0b\n\tnop\n";

START_TEST(stops_at_lookup_pc)
{
    static const struct {
        enum engine_id engine;
        const char *id;
    } engines[] = {
        {ENGINE_libunwind, "libunwind-stops-at-lookup-pc"},
        {ENGINE_libdwarf, "libdwarf-stops-at-lookup-pc"},
        {ENGINE_libdw, "libdw-stops-at-lookup-pc"},
        {ENGINE_gdb, "gdb-stops-at-lookup-pc"},
    };
    char *path = build_fde(late_error);
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        shows(path, 0x1000, false, engines[i].engine, ENGINE_ITEM_STATUS, 0,
              engines[i].id);
        /* At 0x1001 the library runs the faulty instruction too. */
        does_not_match(path, 0x1001, false, engines[i].engine,
                       ENGINE_ITEM_STATUS, 0, engines[i].id);
    }
    remove_built(path);
}
END_TEST

/* An opcode no DWARF version defines (0x18) after the first row. ld
 * cannot read such a program and writes no .eh_frame_hdr, which
 * libunwind's remote lookup needs: libdwarf and libdw only. */
static const char late_unknown_opcode[] = "\tnop\n\t.cfi_escape 0x18\n\tnop\n";

START_TEST(stops_at_lookup_pc_undecodable)
{
    static const struct {
        enum engine_id engine;
        const char *id;
    } engines[] = {
        {ENGINE_libdwarf, "libdwarf-stops-at-lookup-pc"},
        {ENGINE_libdw, "libdw-stops-at-lookup-pc"},
    };
    char *path = build_fde(late_unknown_opcode);
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        shows(path, 0x1000, false, engines[i].engine, ENGINE_ITEM_STATUS, 0,
              engines[i].id);
        does_not_match(path, 0x1001, false, engines[i].engine,
                       ENGINE_ITEM_STATUS, 0, engines[i].id);
    }
    remove_built(path);
}
END_TEST

/* The first row reads rbp; restore_state on an empty stack after it. */
static const char late_error_rbp_cfa[] =
    "\t.cfi_def_cfa %rbp, 16\n\tnop\n\t.cfi_escape 0x0b\n\tnop\n";

/* rbp unknown: the library's answer at 0x1000 is the first row's error
 * (reg_unknown), not a frame. */
START_TEST(stops_at_lookup_pc_row_error)
{
    static const struct {
        enum engine_id engine;
        const char *id;
    } engines[] = {
        {ENGINE_libdwarf, "libdwarf-stops-at-lookup-pc"},
        {ENGINE_libdw, "libdw-stops-at-lookup-pc"},
    };
    const struct state no_rbp = {6, 0};
    char *path = build_fde(late_error_rbp_cfa);
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        shows_in(path, 0x1000, false, no_rbp, engines[i].engine,
                 ENGINE_ITEM_STATUS, 0, engines[i].id);
        does_not_match_in(path, 0x1001, false, no_rbp, engines[i].engine,
                          ENGINE_ITEM_STATUS, 0, engines[i].id);
    }
    remove_built(path);
}
END_TEST

/* def_cfa_expression (breg7 8), then def_cfa_register / def_cfa_offset
 * at 0x1001. */
static const char register_on_expression[] =
    "\t.cfi_escape 0x0f, 2, 0x77, 8\n\tnop\n"
    "\t.cfi_def_cfa_register %rbp\n\tnop\n";
static const char offset_on_expression[] =
    "\t.cfi_escape 0x0f, 2, 0x77, 8\n\tnop\n"
    "\t.cfi_def_cfa_offset 16\n\tnop\n";

static void cfa_ops_on_expression(enum engine_id engine, const char *id)
{
    char *reg = build_fde(register_on_expression);
    char *off = build_fde(offset_on_expression);
    shows(reg, 0x1001, false, engine, ENGINE_ITEM_STATUS, 0, id);
    shows(off, 0x1001, false, engine, ENGINE_ITEM_STATUS, 0, id);
    /* At 0x1000 the instruction is not run: another deviation. */
    does_not_match(reg, 0x1000, false, engine, ENGINE_ITEM_STATUS, 0, id);
    remove_built(reg);
    remove_built(off);
}

START_TEST(libunwind_cfa_ops_on_expression)
{
    cfa_ops_on_expression(ENGINE_libunwind,
                          "libunwind-cfa-ops-on-expression");
}
END_TEST

/* CIE programs with a restore (rbx), and with an advance. */
static const char cie_restore[] = "\t.byte 0xc3\n";
static const char cie_advance[] = "\t.byte 0x41\n";

static void cie_restore_and_location(enum engine_id engine,
                                     const char *id)
{
    char *restore = build_raw(cie_restore, "");
    char *advance = build_raw(cie_advance, "");
    char *plain = build_raw("", "");
    shows(restore, 0x1000, false, engine, ENGINE_ITEM_STATUS, 0, id);
    shows(advance, 0x1000, false, engine, ENGINE_ITEM_STATUS, 0, id);
    does_not_match(plain, 0x1000, false, engine, ENGINE_ITEM_STATUS, 0, id);
    remove_built(restore);
    remove_built(advance);
    remove_built(plain);
}

START_TEST(libunwind_cie_restore_and_location)
{
    cie_restore_and_location(ENGINE_libunwind,
                             "libunwind-cie-restore-and-location");
}
END_TEST

START_TEST(libunwind_undefined_rbp_ends_stack)
{
    char *undefined = build_fde("\t.cfi_undefined %rbp\n\tnop\n");
    char *same = build_fde("\t.cfi_same_value %rbp\n\tnop\n");
    shows(undefined, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RIP, "libunwind-undefined-rbp-ends-stack");
    does_not_match(same, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "libunwind-undefined-rbp-ends-stack");
    remove_built(undefined);
    remove_built(same);
}
END_TEST

START_TEST(libunwind_register_new_location)
{
    char *saved = build_fde("\t.cfi_offset %rbx, -16\n"
                            "\t.cfi_register %rbp, %rbx\n\tnop\n");
    char *plain = build_fde("\t.cfi_register %rbp, %rbx\n\tnop\n");
    shows(saved, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RBP, "libunwind-register-new-location");
    does_not_match(plain, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_REG, CFI_REG_RBP,
                   "libunwind-register-new-location");
    remove_built(saved);
    remove_built(plain);
}
END_TEST

/* The CFA of build_fde's programs is rsp + 8; rsp is 0x7ffe00001000. */
static const uint64_t cfa = 0x7ffe00001008;

/* The probe's verdict on (item, reg) names `id` among the entries that
 * match, whichever the table lists first. */
static void matches_in(const char *path, uint64_t pc, struct state state,
                       enum engine_id engine, enum engine_item item,
                       unsigned reg, const char *id)
{
    struct probe p;
    probe_run_with(&p, path, pc, false, engine, state.unknown, state.fault);
    ck_assert_msg(item_differs(&p, item, reg), "%s: the item does not differ",
                  id);
    classify(&p, item, reg);
    ck_assert_msg(entry(id)->matches(&p.mismatch), "%s does not match", id);
    probe_free(&p);
}

/* CFA = expr(breg7 -38; deref_size N; dup): N = 7 keeps the high bytes
 * in libunwind; N = 8 reads as cfi.h. */
START_TEST(libunwind_deref_size_high_bytes)
{
    char *seven = build_fde(
        "\t.cfi_escape 0x0f, 0x05, 0x77, 0x5a, 0x94, 0x07, 0x12\n\tnop\n");
    char *eight = build_fde(
        "\t.cfi_escape 0x0f, 0x05, 0x77, 0x5a, 0x94, 0x08, 0x12\n\tnop\n");
    shows(seven, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_CFA, 0,
          "libunwind-deref-size-high-bytes");
    does_not_match(eight, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_CFA, 0, "libunwind-deref-size-high-bytes");
    remove_built(seven);
    remove_built(eight);
}
END_TEST

/* rbx = val(lit5; lit0; div) and (...; mod): an expression error for
 * cfi.h, 0 for libunwind; by 1 both say 5. */
START_TEST(libunwind_div_by_zero)
{
    char *div = build_fde("\t.cfi_escape 0x16, 0x03, 0x03, 0x35, 0x30, 0x1b\n"
                          "\tnop\n");
    char *mod = build_fde("\t.cfi_escape 0x16, 0x03, 0x03, 0x35, 0x30, 0x1d\n"
                          "\tnop\n");
    char *one = build_fde("\t.cfi_escape 0x16, 0x03, 0x03, 0x35, 0x31, 0x1b\n"
                          "\tnop\n");
    shows(div, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_STATUS, 0,
          "libunwind-div-by-zero");
    shows(mod, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_STATUS, 0,
          "libunwind-div-by-zero");
    does_not_match(one, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_STATUS, 0, "libunwind-div-by-zero");
    remove_built(div);
    remove_built(mod);
    remove_built(one);
}
END_TEST

/* rbx = val(lit5; const1u 65; shl): 0 for cfi.h, 5 << 1 for libunwind;
 * a shift by 1 is the same for both. */
START_TEST(libunwind_shift_count)
{
    char *far = build_fde(
        "\t.cfi_escape 0x16, 0x03, 0x04, 0x35, 0x08, 65, 0x24\n\tnop\n");
    char *near = build_fde(
        "\t.cfi_escape 0x16, 0x03, 0x04, 0x35, 0x08, 1, 0x24\n\tnop\n");
    shows(far, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RBX, "libunwind-shift-count-mod-64");
    does_not_match(near, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
                   CFI_REG_RBX, "libunwind-shift-count-mod-64");
    remove_built(far);
    remove_built(near);
}
END_TEST

/* CFA = expr(breg7 16; over; plus): a stack underflow for cfi.h, rsp +
 * 16 + 0 for libunwind; with lit0 for over, the same for both. */
START_TEST(libunwind_cfa_zero_pushed)
{
    char *over = build_fde(
        "\t.cfi_escape 0x0f, 0x04, 0x77, 0x10, 0x14, 0x22\n\tnop\n");
    char *lit0 = build_fde(
        "\t.cfi_escape 0x0f, 0x04, 0x77, 0x10, 0x30, 0x22\n\tnop\n");
    shows(over, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_STATUS, 0,
          "libunwind-cfa-expression-zero-pushed");
    does_not_match(lit0, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_STATUS, 0,
                   "libunwind-cfa-expression-zero-pushed");
    remove_built(over);
    remove_built(lit0);
}
END_TEST

/* rbx = [expr(lit0)]: saved at address 0 (the ELF header, readable);
 * at address 8, both read it. */
START_TEST(libunwind_null_address)
{
    char *zero = build_fde("\t.cfi_escape 0x10, 0x03, 0x01, 0x30\n\tnop\n");
    char *eight = build_fde("\t.cfi_escape 0x10, 0x03, 0x01, 0x38\n\tnop\n");
    shows(zero, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RBX, "libunwind-null-address-undefined");
    does_not_match(eight, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_REG, CFI_REG_RBX,
                   "libunwind-null-address-undefined");
    remove_built(zero);
    remove_built(eight);
}
END_TEST

/* rax = [cfa-16] unreadable, rbx = val(breg2 0) with rcx unknown: cfi.h
 * fails on rax first, libunwind on rbx's expression. Without the fault
 * both fail on rcx. */
START_TEST(libunwind_expressions_first)
{
    char *path = build_fde("\t.cfi_offset %rax, -16\n"
                           "\t.cfi_escape 0x16, 0x03, 0x02, 0x72, 0x00\n"
                           "\tnop\n");
    struct state both = {CFI_REG_RCX, cfa - 16};
    struct state one = {CFI_REG_RCX, 0};
    shows_in(path, 0x1000, false, both, ENGINE_libunwind,
             ENGINE_ITEM_STATUS, 0, "libunwind-expressions-before-reads");
    does_not_match_in(path, 0x1000, false, one, ENGINE_libunwind,
                      ENGINE_ITEM_STATUS, 0,
                      "libunwind-expressions-before-reads");
    remove_built(path);
}
END_TEST

/* Return address column rbx, saved at cfa-16; rip's own rule [cfa-8]
 * unreadable: cfi.h fails on it, libunwind never reads it. Readable:
 * both agree. */
START_TEST(libunwind_rip_is_return_address)
{
    char *path = build_simple("\t.cfi_return_column %rbx\n"
                              "\t.cfi_def_cfa %rsp, 8\n"
                              "\t.cfi_offset %rip, -8\n"
                              "\t.cfi_offset %rbx, -16\n\tnop\n");
    struct state fault = {-1, cfa - 8};
    shows_in(path, 0x1000, false, fault, ENGINE_libunwind,
             ENGINE_ITEM_STATUS, 0, "libunwind-rip-is-return-address");
    does_not_match(path, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "libunwind-rip-is-return-address");
    remove_built(path);
}
END_TEST

/* The return address column with no rule: rdx (caller-saved: cfi.h
 * says undefined, libunwind reads the callee's rdx) and rsp (cfi.h: the
 * CFA; libunwind: rsp's location, the callee's rsp). Column rbx (same
 * value for both) agrees. */
START_TEST(libunwind_return_column_defaults)
{
    char *rdx = build_simple("\t.cfi_return_column %rdx\n"
                             "\t.cfi_def_cfa %rsp, 8\n\tnop\n");
    char *rsp = build_simple("\t.cfi_return_column %rsp\n"
                             "\t.cfi_def_cfa %rsp, 8\n\tnop\n");
    char *rbx = build_simple("\t.cfi_return_column %rbx\n"
                             "\t.cfi_def_cfa %rsp, 8\n\tnop\n");
    shows(rdx, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RIP, "libunwind-no-undefined-default");
    shows(rsp, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
          CFI_REG_RIP, "libunwind-rsp-is-cfa");
    does_not_match(rbx, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "libunwind-no-undefined-default");
    does_not_match(rbx, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "libunwind-rsp-is-cfa");
    remove_built(rdx);
    remove_built(rsp);
    remove_built(rbx);
}
END_TEST

/* rdi = r13, rip = rdi with r13 unknown: cfi.h's rip is the callee's
 * rdi; libunwind's is rdi's new location, r13, and it fails reading it.
 * With rdi given no rule, both read the callee's rdi. */
START_TEST(libunwind_register_new_location_status)
{
    char *path = build_fde("\t.cfi_register %rdi, %r13\n"
                           "\t.cfi_register %rip, %rdi\n\tnop\n");
    char *plain = build_fde("\t.cfi_register %rip, %rdi\n\tnop\n");
    struct state r13 = {13, 0};
    matches_in(path, 0x1000, r13, ENGINE_libunwind, ENGINE_ITEM_STATUS, 0,
               "libunwind-register-new-location");
    does_not_match_in(plain, 0x1000, false, r13, ENGINE_libunwind,
                      ENGINE_ITEM_STATUS, 0, "libunwind-register-new-location");
    remove_built(path);
    remove_built(plain);
}
END_TEST

/* ------------------------------------------------------------------ */
/* libdwarf                                                             */
/* ------------------------------------------------------------------ */

/* A signal frame in .debug_frame: gas writes the CIE's augmentation as
 * "S" alone. The same program in .eh_frame ("zRS") is read. */
START_TEST(libdwarf_augmentation_without_z)
{
    char *debug = build("\t.cfi_sections .debug_frame\n\t.text\n\t.globl f\n"
                        "f:\n\t.cfi_startproc\n\t.cfi_signal_frame\n\tnop\n"
                        "\tret\n\t.cfi_endproc\n");
    char *eh = build_fde("\t.cfi_signal_frame\n\tnop\n");
    shows(debug, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0,
          "libdwarf-augmentation-without-z");
    does_not_match(eh, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS,
                   0, "libdwarf-augmentation-without-z");
    remove_built(debug);
    remove_built(eh);
}
END_TEST

START_TEST(libdwarf_no_negative_offset)
{
    char *path = build_fde("\tnop\n\t.cfi_escape 0x2f, 0x0d, 0x02\n\tnop\n");
    shows(path, 0x1001, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0,
          "libdwarf-no-negative-offset-extended");
    does_not_match(path, 0x1000, false, ENGINE_libdwarf,
                   ENGINE_ITEM_STATUS, 0,
                   "libdwarf-no-negative-offset-extended");
    remove_built(path);
}
END_TEST

/* The reference's answer is an error (rip's slot unreadable, or rsp,
 * the CFA's register, unknown): libdwarf's decoding error differs from
 * it all the same. At 0x1000, before the instruction, both fail alike. */
START_TEST(libdwarf_no_negative_offset_errors)
{
    char *path = build_fde("\tnop\n\t.cfi_escape 0x2f, 0x0d, 0x02\n\tnop\n");
    struct state fault = {-1, cfa - 8};
    struct state unknown_rsp = {CFI_REG_RSP, 0};
    shows_in(path, 0x1001, false, fault, ENGINE_libdwarf,
             ENGINE_ITEM_STATUS, 0, "libdwarf-no-negative-offset-extended");
    shows_in(path, 0x1001, false, unknown_rsp, ENGINE_libdwarf,
             ENGINE_ITEM_STATUS, 0, "libdwarf-no-negative-offset-extended");
    does_not_match_in(path, 0x1000, false, fault, ENGINE_libdwarf,
                      ENGINE_ITEM_STATUS, 0,
                      "libdwarf-no-negative-offset-extended");
    remove_built(path);
}
END_TEST

/* r12 = [cfa-16], then val_offset_sf r12: libdwarf keeps r12's slot and
 * reads it; unreadable, libdwarf fails where the IL does not. Readable,
 * the status is the same. */
START_TEST(libdwarf_val_offset_sf_status)
{
    char *path = build_fde("\t.cfi_offset %r12, -16\n"
                           "\t.cfi_escape 0x15, 0x0c, 0x7e\n\tnop\n");
    struct state fault = {-1, cfa - 16};
    shows_in(path, 0x1000, false, fault, ENGINE_libdwarf,
             ENGINE_ITEM_STATUS, 0, "libdwarf-val-offset-sf-rax");
    does_not_match(path, 0x1000, false, ENGINE_libdwarf,
                   ENGINE_ITEM_STATUS, 0, "libdwarf-val-offset-sf-rax");
    remove_built(path);
}
END_TEST

START_TEST(libdwarf_val_offset_sf_rax)
{
    /* val_offset_sf r12, -2 * -8 */
    char *sf = build_fde("\t.cfi_escape 0x15, 0x0c, 0x7e\n\tnop\n");
    char *plain = build_fde("\t.cfi_val_offset %r12, -16\n\tnop\n");
    shows(sf, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_REG, 12,
          "libdwarf-val-offset-sf-rax");
    shows(sf, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_REG,
          CFI_REG_RAX, "libdwarf-val-offset-sf-rax");
    does_not_match(plain, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_REG,
                   12, "libdwarf-val-offset-sf-rax");
    remove_built(sf);
    remove_built(plain);
}
END_TEST

START_TEST(libdwarf_cfa_ops_on_expression)
{
    cfa_ops_on_expression(ENGINE_libdwarf,
                          "libdwarf-cfa-ops-on-expression");
}
END_TEST

START_TEST(libdwarf_cie_restore_and_location)
{
    cie_restore_and_location(ENGINE_libdwarf,
                             "libdwarf-cie-restore-and-location");
}
END_TEST

/* An advance in the CIE, then the FDE's row reads rbp, unknown: libdwarf
 * gives that row's error. */
START_TEST(libdwarf_cie_location_row_error)
{
    const char *id = "libdwarf-cie-restore-and-location";
    const struct state no_rbp = {6, 0};
    char *advance = build_raw(cie_advance, "\t.byte 0x0c, 6, 16\n");
    char *plain = build_raw("", "\t.byte 0x0c, 6, 16\n");
    shows_in(advance, 0x1000, false, no_rbp, ENGINE_libdwarf,
             ENGINE_ITEM_STATUS, 0, id);
    does_not_match_in(plain, 0x1000, false, no_rbp, ENGINE_libdwarf,
                      ENGINE_ITEM_STATUS, 0, id);
    remove_built(advance);
    remove_built(plain);
}
END_TEST

/* DW_CFA_GNU_window_save (0x2d) on x86-64: libdwarf unwinds with the
 * first row, or gives its error (rbp unknown). Nearby: 0x2d, then
 * DW_CFA_GNU_negative_offset_extended, which libdwarf fails on. */
START_TEST(libdwarf_window_save_ignored)
{
    const char *id = "libdwarf-window-save-ignored";
    const struct state no_rbp = {6, 0};
    char *save = build_fde("\t.cfi_escape 0x2d\n\tnop\n");
    char *rbp = build_fde("\t.cfi_def_cfa %rbp, 16\n"
                          "\t.cfi_escape 0x2d\n\tnop\n");
    char *then_bad = build_fde("\t.cfi_escape 0x2d, 0x2f, 3, 1\n\tnop\n");
    shows(save, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0, id);
    shows_in(rbp, 0x1000, false, no_rbp, ENGINE_libdwarf,
             ENGINE_ITEM_STATUS, 0, id);
    does_not_match(then_bad, 0x1000, false, ENGINE_libdwarf,
                   ENGINE_ITEM_STATUS, 0, id);
    remove_built(save);
    remove_built(rbp);
    remove_built(then_bad);
}
END_TEST

/* 0x2d, then 0x2c, which no reading knows on x86-64: the IL stops at
 * the first (unsupported), libdwarf, running it as nothing, fails at
 * the second (a decoding error, malformed), as the IL does on the
 * program with 0x2d read as a nop. */
START_TEST(libdwarf_window_save_then_unknown)
{
    const char *id = "libdwarf-window-save-ignored";
    char *unknown = build_fde("\t.cfi_escape 0x2d, 0x2c\n\tnop\n");
    struct probe p;
    probe_run(&p, unknown, 0x1000, false, ENGINE_libdwarf);
    ck_assert_int_eq(p.expected.status, CFI_E_UNSUPPORTED);
    ck_assert_int_eq(p.answer.frame.status, CFI_E_MALFORMED);
    probe_free(&p);
    shows(unknown, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0,
          id);
    remove_built(unknown);
}
END_TEST

/* ------------------------------------------------------------------ */
/* libdw                                                                */
/* ------------------------------------------------------------------ */

/* DW_CFA_GNU_window_save on x86-64: libdw inserts SPARC's window rules
 * (rip read at CFA+0, r8-r15 from xmm7-xmm14) and unwinds; the IL says
 * unsupported. The caller's rip is the word at rsp+8 (the CFA), not the
 * one at rsp (CFA-8). Nearby: the same opcode after the lookup PC
 * (libdw does not run it: *-stops-at-lookup-pc). */
START_TEST(libdw_window_save_sparc)
{
    const char *id = "libdw-window-save-sparc";
    char *save = build_fde("\t.cfi_escape 0x2d\n\tnop\n");
    char *later = build_fde("\tnop\n\t.cfi_escape 0x2d\n\tnop\n");
    struct probe p;
    probe_run(&p, save, 0x1000, false, ENGINE_libdw);
    ck_assert_int_eq(p.expected.status, CFI_E_UNSUPPORTED);
    ck_assert_int_eq(p.answer.frame.status, CFI_OK);
    uint64_t rsp = p.callee.value[CFI_REG_RSP], at_cfa;
    ck_assert_int_eq(p.request.memory.read(p.request.memory.env, rsp + 8, 8,
                                           &at_cfa), CFI_OK);
    ck_assert_uint_eq(p.answer.frame.caller.value[CFI_REG_RIP], at_cfa);
    ck_assert_int_eq(p.answer.frame.caller.status[8], CFI_REG_UNKNOWN);
    probe_free(&p);
    shows(save, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0, id);
    does_not_match(later, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS,
                   0, id);
    remove_built(save);
    remove_built(later);
}
END_TEST

/* A CIE with no CFA rule, then def_cfa_offset 16 and def_cfa rsp+8: the
 * IL rejects the first; libdw makes the CFA invalid, then valid again,
 * and unwinds. Nearby: no def_cfa after it (both say malformed: no
 * difference to explain). */
START_TEST(libdw_cfa_ops_invalidate)
{
    const char *id = "libdw-cfa-ops-invalidate";
    char *again = build_simple("\t.cfi_def_cfa_offset 16\n"
                               "\t.cfi_def_cfa %rsp, 8\n"
                               "\t.cfi_offset %rip, -8\n\tnop\n");
    char *invalid = build_simple("\t.cfi_def_cfa_offset 16\n"
                                 "\t.cfi_offset %rip, -8\n\tnop\n");
    struct probe p;
    probe_run(&p, again, 0x1000, false, ENGINE_libdw);
    ck_assert_int_eq(p.expected.status, CFI_E_MALFORMED);
    ck_assert_int_eq(p.answer.frame.status, CFI_OK);
    ck_assert_uint_eq(p.answer.frame.cfa, p.callee.value[CFI_REG_RSP] + 8);
    probe_free(&p);
    shows(again, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0, id);
    probe_run(&p, invalid, 0x1000, false, ENGINE_libdw);
    ck_assert_int_eq(p.answer.frame.status, CFI_E_MALFORMED);
    p.mismatch.got = &p.answer.frame;
    ck_assert(!entry(id)->matches(&p.mismatch));
    probe_free(&p);
    remove_built(again);
    remove_built(invalid);
}
END_TEST

START_TEST(libdw_abi_rax_for_rbx)
{
    char *plain = build_fde("\tnop\n");
    char *rules = build_fde("\t.cfi_same_value %rax\n"
                            "\t.cfi_same_value %rbx\n\tnop\n");
    shows(plain, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG, CFI_REG_RAX,
          "libdw-abi-rax-for-rbx");
    shows(plain, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG, CFI_REG_RBX,
          "libdw-abi-rax-for-rbx");
    does_not_match(rules, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG,
                   CFI_REG_RAX, "libdw-abi-rax-for-rbx");
    does_not_match(rules, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG,
                   CFI_REG_RBX, "libdw-abi-rax-for-rbx");
    remove_built(plain);
    remove_built(rules);
}
END_TEST

/* No rule for rip: libdw's ABI program gives it same_value. With an
 * undefined rule both say undefined; a restore of rip (no rule in the
 * CIE) brings back libdw's default. */
START_TEST(libdw_abi_rip_same_value)
{
    char *plain = build_simple("\t.cfi_def_cfa %rsp, 8\n\tnop\n");
    char *undefined = build_simple("\t.cfi_def_cfa %rsp, 8\n"
                                   "\t.cfi_undefined %rip\n\tnop\n");
    char *restored = build_simple("\t.cfi_def_cfa %rsp, 8\n\tnop\n"
                                  "\t.cfi_offset %rip, -8\n\tnop\n"
                                  "\t.cfi_restore %rip\n\tnop\n");
    shows(plain, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG, CFI_REG_RIP,
          "libdw-abi-rip-same-value");
    shows(restored, 0x1002, false, ENGINE_libdw, ENGINE_ITEM_REG,
          CFI_REG_RIP, "libdw-abi-rip-same-value");
    does_not_match(undefined, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "libdw-abi-rip-same-value");
    does_not_match(restored, 0x1001, false, ENGINE_libdw, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "libdw-abi-rip-same-value");
    remove_built(plain);
    remove_built(undefined);
    remove_built(restored);
}
END_TEST

/* A return address column other than 16 (rax, no rule): the caller's rip
 * is rax's value in the IL (undefined) and in libdw (its rax default,
 * same_value): the rip item is explained as rax's. With column rbx and a
 * rule for it, they agree. */
START_TEST(return_column_item)
{
    char *rax = build_simple("\t.cfi_return_column %rax\n"
                             "\t.cfi_def_cfa %rsp, 8\n\tnop\n");
    char *rbx = build_simple("\t.cfi_return_column %rbx\n"
                             "\t.cfi_def_cfa %rsp, 8\n"
                             "\t.cfi_offset %rbx, -16\n\tnop\n");
    shows(rax, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG, CFI_REG_RIP,
          "libdw-abi-rax-for-rbx");
    struct probe p;
    probe_run(&p, rbx, 0x1000, false, ENGINE_libdw);
    ck_assert(!item_differs(&p, ENGINE_ITEM_REG, CFI_REG_RIP));
    ck_assert_int_eq(p.expected.caller.value[CFI_REG_RIP],
                     p.expected.caller.value[CFI_REG_RBX]);
    probe_free(&p);
    remove_built(rax);
    remove_built(rbx);
}
END_TEST

/* rbx = [expr()] is [CFA] for the IL; unreadable, the IL fails where
 * libdw (undefined) does not. With one operation (nop), libdw reads it
 * too. */
START_TEST(libdw_empty_expression_status)
{
    char *empty = build_fde("\t.cfi_escape 0x10, 0x03, 0x00\n\tnop\n");
    char *one_op = build_fde("\t.cfi_escape 0x10, 0x03, 0x01, 0x96\n\tnop\n");
    struct state fault = {-1, cfa};
    shows_in(empty, 0x1000, false, fault, ENGINE_libdw, ENGINE_ITEM_STATUS,
             0, "libdw-empty-expression-undefined");
    does_not_match_in(one_op, 0x1000, false, fault, ENGINE_libdw,
                      ENGINE_ITEM_STATUS, 0,
                      "libdw-empty-expression-undefined");
    remove_built(empty);
    remove_built(one_op);
}
END_TEST

START_TEST(libdw_empty_expression)
{
    char *empty = build_fde("\t.cfi_escape 0x10, 0x03, 0x00\n\tnop\n");
    char *one_op = build_fde("\t.cfi_escape 0x10, 0x03, 0x01, 0x96\n\tnop\n");
    shows(empty, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG, CFI_REG_RBX,
          "libdw-empty-expression-undefined");
    does_not_match(one_op, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_REG,
                   CFI_REG_RBX, "libdw-empty-expression-undefined");
    remove_built(empty);
    remove_built(one_op);
}
END_TEST

/* A CFA expression whose skip lacks its operand: libdw fails reading it
 * (invalid DWARF), the IL evaluating it (expr). Nearby: an expression
 * that decodes and fails when evaluated (division by zero), which libdw
 * evaluates as the IL. (A register rule that does not decode agrees: the
 * adapter reports libdw's failure on a register as an expression
 * fault.) */
START_TEST(libdw_expression_decoded_with_rule)
{
    char *truncated = build_fde("\t.cfi_escape 0x0f, 0x04, 0x30, 0x12, "
                                "0x2f, 0xfd\n\tnop\n");
    char *divides = build_fde("\t.cfi_escape 0x16, 0x03, 0x03, 0x30, 0x30, "
                              "0x1b\n\tnop\n");
    shows(truncated, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
          "libdw-expression-decoded-with-rule");
    does_not_match(divides, 0x1000, false, ENGINE_libdw,
                   ENGINE_ITEM_STATUS, 0, "libdw-expression-decoded-with-rule");
    remove_built(truncated);
    remove_built(divides);
}
END_TEST

/* CFA = expr(xderef; const2u cut off): the IL fails at xderef (not
 * allowed in CFI), libdw on decoding the cut-off operand. Nearby: the
 * operand whole (the expression decodes). */
START_TEST(libdw_expression_decoded_after_error)
{
    const char *id = "libdw-expression-decoded-with-rule";
    char *cut = build_fde("\t.cfi_escape 0x0f, 0x03, 0x18, 0x0a, 0x01\n"
                          "\tnop\n");
    char *whole = build_fde("\t.cfi_escape 0x0f, 0x04, 0x18, 0x0a, 0x01, "
                            "0x00\n\tnop\n");
    struct probe p;
    probe_run(&p, cut, 0x1000, false, ENGINE_libdw);
    ck_assert_int_eq(p.expected.status, CFI_E_EXPR);
    ck_assert_str_eq(p.expected.diag.message,
                     "operation not allowed in CFI");
    probe_free(&p);
    shows(cut, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0, id);
    does_not_match(whole, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS,
                   0, id);
    remove_built(cut);
    remove_built(whole);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Locations, address sizes, sections, expression errors                */
/* ------------------------------------------------------------------ */

/* A raw .debug_frame for g (8 bytes of nops after f, when `with_f`): one
 * CIE of `version` (with address_size `address_size` in version 4; caf
 * 1, daf -8, ra 16, def_cfa rsp+8, offset rip) and one FDE for g with
 * `fde`; build_debug_frame_after puts `leading` before the CIE. */
static char *build_debug_frame_after(const char *leading, int version,
                                     int address_size, bool with_f,
                                     const char *fde)
{
    const char *word = address_size == 4 ? ".long" : ".quad";
    char sizes[64] = "";
    if (version == 4)
        snprintf(sizes, sizeof sizes, "\t.byte %d, 0\n", address_size);
    char text[4096];
    snprintf(text, sizeof text,
             "\t.text\n%s.Lg:\t.skip 8, 0x90\n.Lg_end:\n"
             "\t.section .debug_frame,\"\",@progbits\n%s"
             "cie:\t.long cie_end - cie_start\ncie_start:\n"
             "\t.long 0xffffffff\n\t.byte %d\n\t.asciz \"\"\n%s"
             "\t.uleb128 1\n\t.sleb128 -8\n\t.uleb128 16\n"
             "\t.byte 0x0c, 7, 8, 0x90, 1\n\t.balign 4, 0\ncie_end:\n"
             "fde:\t.long fde_end - fde_start\nfde_start:\n"
             "\t.long cie\n\t%s .Lg\n\t%s .Lg_end - .Lg\n%s"
             "\t.balign 4, 0\nfde_end:\n",
             with_f ? "\t.globl f\nf:\t.cfi_startproc\n\tnop\n\tret\n"
                      "\t.cfi_endproc\n" : "",
             leading, version, sizes, word, word, fde);
    return build(text);
}

static char *build_debug_frame(int version, int address_size, bool with_f,
                               const char *fde)
{
    return build_debug_frame_after("", version, address_size, with_f, fde);
}

/* advance_loc 4; def_cfa_offset 16; then `move`; def_cfa_offset 24. */
static char *build_moved(const char *move)
{
    char program[512];
    snprintf(program, sizeof program,
             "\t.byte 0x44, 0x0e, 16\n%s\t.byte 0x0e, 24\n", move);
    return build_debug_frame(3, 8, false, program);
}

/* set_loc back to 0x1002 from 0x1004: libdw runs it for the row at
 * 0x1005; at 0x1003 it stops before it (stops-at-lookup-pc). */
START_TEST(libdw_location_backwards)
{
    char *back = build_moved("\t.byte 0x01\n\t.quad .Lg+2\n");
    shows(back, 0x1005, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
          "libdw-location-backwards");
    shows(back, 0x1003, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
          "libdw-stops-at-lookup-pc");
    does_not_match(back, 0x1003, false, ENGINE_libdw, ENGINE_ITEM_STATUS,
                   0, "libdw-location-backwards");
    remove_built(back);
}
END_TEST

/* advance_loc1 32 from 0x1004, past the FDE's end (0x1008): no PC of the
 * FDE runs it, so libdw and libdwarf accepting it is their stopping at
 * the lookup PC, not an entry of its own. */
START_TEST(location_past_end)
{
    char *past = build_moved("\t.byte 0x02, 32\n");
    shows(past, 0x1005, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
          "libdw-stops-at-lookup-pc");
    shows(past, 0x1005, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0,
          "libdwarf-stops-at-lookup-pc");
    does_not_match(past, 0x1005, false, ENGINE_libdw, ENGINE_ITEM_STATUS,
                   0, "libdw-location-backwards");
    remove_built(past);
}
END_TEST

START_TEST(libdw_address_size_4)
{
    char *four = build_debug_frame(4, 4, false, "\t.byte 0x44, 0x0e, 16\n");
    char *eight = build_debug_frame(4, 8, false, "\t.byte 0x44, 0x0e, 16\n");
    shows(four, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
          "libdw-address-size-4");
    does_not_match(eight, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS,
                   0, "libdw-address-size-4");
    remove_built(four);
    remove_built(eight);
}
END_TEST

/* A copy of the built file at `path` with its .eh_frame_hdr's first
 * entry's initial location moved up by `delta` (the header is version
 * 1, encodings 0x1b 0x03 0x3b, then eh_frame_ptr and fde_count). */
static char *with_hdr_location_moved(const char *path, int32_t delta)
{
    size_t len = 0;
    char *bytes = test_read_file(path, &len);
    ck_assert_ptr_nonnull(bytes);
    const char header[] = "\x01\x1b\x03\x3b";
    char *at = NULL;
    for (size_t i = 0; !at && i + 20 <= len; i += 4)
        if (memcmp(bytes + i, header, 4) == 0)
            at = bytes + i + 12;
    ck_assert_msg(at != NULL, "%s: no .eh_frame_hdr table", path);
    int32_t location;
    memcpy(&location, at, 4);
    location += delta;
    memcpy(at, &location, 4);
    size_t size = strlen(path) + 8;
    char *copy = malloc(size);
    snprintf(copy, size, "%s.hdr", path);
    ck_assert_int_eq(test_write_file(copy, bytes, len), 0);
    free(bytes);
    return copy;
}

/* The table's one entry moved above f's first PC: the libraries find no
 * FDE at 0x1000, .eh_frame has one. Nearby: the file as the linker
 * wrote it. */
static void trusts_eh_frame_hdr(enum engine_id engine, const char *id)
{
    char *path = build_fde("\t.cfi_def_cfa_offset 16\n\tnop\n");
    char *moved = with_hdr_location_moved(path, 0x10);
    shows(moved, 0x1000, false, engine, ENGINE_ITEM_STATUS, 0, id);
    does_not_match(path, 0x1000, false, engine, ENGINE_ITEM_STATUS, 0, id);
    remove(moved);
    free(moved);
    remove_built(path);
}

START_TEST(libdw_trusts_eh_frame_hdr)
{
    trusts_eh_frame_hdr(ENGINE_libdw, "libdw-trusts-eh-frame-hdr");
}
END_TEST

START_TEST(libunwind_trusts_eh_frame_hdr)
{
    trusts_eh_frame_hdr(ENGINE_libunwind, "libunwind-trusts-eh-frame-hdr");
}
END_TEST

/* An FDE of .eh_frame for [0x101000, 0x101008), above the executable
 * segment, beside f's at 0x1000. There libunwind says no FDE, the IL
 * unwinds. Nearby: f's PC, inside the segment. */
START_TEST(libunwind_pc_outside_text)
{
    const char *id = "libunwind-pc-outside-text";
    char *path = build(
        "\t.text\n\t.globl f\nf:\n.Lf:\n\t.cfi_startproc\n\tnop\n\tret\n"
        "\t.cfi_endproc\n"
        "\t.section .eh_frame,\"a\",@unwind\n"
        "cie:\t.long cie_end - cie_start\ncie_start:\n"
        "\t.long 0\n\t.byte 1\n\t.asciz \"zR\"\n"
        "\t.uleb128 1\n\t.sleb128 -8\n\t.uleb128 16\n"
        "\t.uleb128 1\n\t.byte 0x1b\n"
        "\t.byte 0x0c, 7, 8, 0x90, 1\n\t.balign 8, 0\ncie_end:\n"
        "fde:\t.long fde_end - fde_start\nfde_start:\n"
        "\t.long fde_start - cie\n\t.long .Lf + 0x100000 - .\n\t.long 8\n"
        "\t.uleb128 0\n\t.balign 8, 0\nfde_end:\n");
    struct probe p;
    probe_run(&p, path, 0x101000, false, ENGINE_libunwind);
    ck_assert_int_eq(p.expected.status, CFI_OK);
    probe_free(&p);
    shows(path, 0x101000, false, ENGINE_libunwind, ENGINE_ITEM_STATUS, 0,
          id);
    does_not_match(path, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_STATUS, 0, id);
    remove_built(path);
}
END_TEST

/* f (0x1000) in .eh_frame, g (0x1002) in .debug_frame. */
START_TEST(libunwind_no_debug_frame)
{
    char *path = build_debug_frame(3, 8, true, "\t.byte 0x44, 0x0e, 16\n");
    shows(path, 0x1002, false, ENGINE_libunwind, ENGINE_ITEM_STATUS, 0,
          "libunwind-no-debug-frame");
    does_not_match(path, 0x1000, false, ENGINE_libunwind,
                   ENGINE_ITEM_STATUS, 0, "libunwind-no-debug-frame");
    remove_built(path);
}
END_TEST

/* rbx=[plus]: plus with only the CFA on the stack underflows. Nearby:
 * rbx=[call2 0], an operation cfi.h does not allow (also CFI_E_EXPR,
 * not an underflow). */
START_TEST(libunwind_underflow_malformed)
{
    char *underflow = build_fde("\t.cfi_escape 0x10, 3, 1, 0x22\n\tnop\n");
    char *call2 = build_fde("\t.cfi_escape 0x10, 3, 3, 0x98, 0, 0\n\tnop\n");
    shows(underflow, 0x1000, false, ENGINE_libunwind, ENGINE_ITEM_STATUS,
          0, "libunwind-underflow-malformed");
    struct probe p;
    probe_run(&p, call2, 0x1000, false, ENGINE_libunwind);
    ck_assert_int_eq(p.expected.status, CFI_E_EXPR);
    p.mismatch.got = &p.answer.frame;
    ck_assert(!entry("libunwind-underflow-malformed")->matches(&p.mismatch));
    probe_free(&p);
    remove_built(underflow);
    remove_built(call2);
}
END_TEST

/* .debug_frame starting with a zero length word: cfi.h reads on, libdwarf
 * and libdw stop. f in .eh_frame lets libdwarf open the file. */
START_TEST(debug_frame_zero_length)
{
    static const struct {
        enum engine_id engine;
        const char *id;
    } engines[] = {
        {ENGINE_libdwarf, "libdwarf-debug-frame-zero-length"},
        {ENGINE_libdw, "libdw-debug-frame-zero-length"},
    };
    const char *program = "\t.byte 0x44, 0x0e, 16\n";
    char *zero = build_debug_frame_after("\t.long 0\n", 3, 8, true, program);
    char *plain = build_debug_frame(3, 8, true, program);
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        shows(zero, 0x1002, false, engines[i].engine, ENGINE_ITEM_STATUS, 0,
              engines[i].id);
        does_not_match(plain, 0x1002, false, engines[i].engine,
                       ENGINE_ITEM_STATUS, 0, engines[i].id);
    }
    remove_built(zero);
    remove_built(plain);
}
END_TEST

/* ------------------------------------------------------------------ */
/* sframe                                                               */
/* ------------------------------------------------------------------ */

/* rbx saved at CFA-16: with that slot unreadable the IL fails, SFrame
 * (no rbx column) unwinds. With rip's slot unreadable both fail. */
START_TEST(sframe_three_columns)
{
    char *path = build_with("\t.text\n\t.globl f\nf:\t.cfi_startproc\n"
                            "\tpush %rbx\n\t.cfi_def_cfa_offset 16\n"
                            "\t.cfi_offset %rbx, -16\n\tnop\n\tpop %rbx\n"
                            "\t.cfi_def_cfa_offset 8\n\tret\n"
                            "\t.cfi_endproc\n", "-Wa,--gsframe");
    const uint64_t frame_cfa = 0x7ffe00001000 + 16;
    struct state rbx_slot = {-1, frame_cfa - 16},
                 rip_slot = {-1, frame_cfa - 8};
    shows_in(path, 0x1001, false, rbx_slot, ENGINE_sframe,
             ENGINE_ITEM_STATUS, 0, "sframe-three-columns");
    struct probe p;
    probe_run_with(&p, path, 0x1001, false, ENGINE_sframe, -1,
                   rip_slot.fault);
    ck_assert_int_eq(p.expected.status, CFI_E_MEMORY);
    ck_assert_int_eq(p.answer.frame.status, CFI_E_MEMORY);
    p.mismatch.got = &p.answer.frame;
    ck_assert(!entry("sframe-three-columns")->matches(&p.mismatch));
    probe_free(&p);
    remove_built(path);
}
END_TEST

/* Two PLT entries: a caller frame at the second entry's first byte looks
 * the row up in the first (PC-1), where the PLT expression reads rip
 * (PC). As an innermost frame the two agree. */
START_TEST(sframe_pc_mask_lookup_pc)
{
    char *path = build_with("\t.text\n\t.globl f\nf:\t.cfi_startproc\n"
                            "\tcall g@PLT\n\tcall h@PLT\n\tret\n"
                            "\t.cfi_endproc\n",
                            "-Wa,--gsframe -Wl,--section-start=.plt=0x3000");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct sframe_table *table;
    ck_assert_int_eq(sframe_open(file, &table, &diag), CFI_OK);
    uint64_t second = 0;
    for (size_t i = 0; i < table->nfdes; i++)
        if (table->fdes[i].pc_mask && table->fdes[i].size >= 32)
            second = table->fdes[i].start + table->fdes[i].block_size;
    sframe_free(table);
    cfi_file_close(file);
    ck_assert_uint_ne(second, 0);
    shows(path, second, true, ENGINE_sframe, ENGINE_ITEM_CFA, 0,
          "sframe-pc-mask-lookup-pc");
    does_not_match(path, second, false, ENGINE_sframe, ENGINE_ITEM_CFA, 0,
                   "sframe-pc-mask-lookup-pc");
    remove_built(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* AArch64                                                              */
/* ------------------------------------------------------------------ */

enum { A64_X30 = 30, A64_PC = 32, A64_RA_STATE = 34 };

/* pac-ret as GCC writes it: paciasp and negate_ra_state, then x29 and
 * x30 saved (0x1008 on); `plain` the same frame without signing. */
static const char pac_ret[] =
    "\thint 25\n\t.cfi_negate_ra_state\n"
    "\tstp x29, x30, [sp, -16]!\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset 29, -16\n\t.cfi_offset 30, -8\n\tnop\n\tnop\n";
static const char plain_frame[] =
    "\tnop\n\tstp x29, x30, [sp, -16]!\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset 29, -16\n\t.cfi_offset 30, -8\n\tnop\n\tnop\n";
static const char b_key_pac_ret[] =
    "\t.cfi_b_key_frame\n\thint 27\n\t.cfi_negate_ra_state\n"
    "\tstp x29, x30, [sp, -16]!\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset 29, -16\n\t.cfi_offset 30, -8\n\tnop\n\tnop\n";
/* An offset rule on RA_SIGN_STATE, then a negate (aadwarf64 forbids the
 * mix: the IL rejects the FDE at the negate, +0x1 at 0x1004). */
static const char negate_mixed[] =
    "\t.cfi_offset 34, -16\n\tnop\n\t.cfi_negate_ra_state\n\tnop\n";

/* A negate at 0x1004, then at 0x1008 set_ra_state 1, a negate (to 0)
 * and negate_ra_state_with_pc (to 2): the IL reads all of it. With the
 * negates read as nops, the one with the PC would find state 1 and be
 * malformed; libdwarf, which stops at the lookup PC, never runs it. */
static const char negate_then_with_pc[] =
    "\tnop\n\t.cfi_negate_ra_state\n\tnop\n"
    "\t.cfi_escape 0x2b, 1, 0\n\t.cfi_negate_ra_state\n"
    "\t.cfi_escape 0x2c\n\tnop\n";

/* libdwarf's state stays 0 where the IL's is 1 (34), its PC is x30 as
 * saved where the IL strips it; without signing neither differs. The
 * same where reading the negates as nops would make the program
 * malformed after the lookup PC. A negate the IL rejects, libdwarf runs
 * as nothing; before it runs the IL's error is
 * libdwarf-stops-at-lookup-pc's. */
START_TEST(libdwarf_negate_ra_state_ignored)
{
    const char *id = "libdwarf-negate-ra-state-ignored";
    char *pac = build_aarch64("", pac_ret);
    char *plain = build_aarch64("", plain_frame);
    char *mixed = build_aarch64("", negate_mixed);
    char *late = build_aarch64("", negate_then_with_pc);
    shows(pac, 0x1008, false, ENGINE_libdwarf, ENGINE_ITEM_REG,
          A64_RA_STATE, id);
    shows(pac, 0x1008, false, ENGINE_libdwarf, ENGINE_ITEM_REG, A64_PC, id);
    does_not_match(plain, 0x1008, false, ENGINE_libdwarf, ENGINE_ITEM_REG,
                   A64_PC, id);
    shows(late, 0x1004, false, ENGINE_libdwarf, ENGINE_ITEM_REG,
          A64_RA_STATE, id);
    shows(late, 0x1004, false, ENGINE_libdwarf, ENGINE_ITEM_REG, A64_PC, id);
    does_not_match(late, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_REG,
                   A64_RA_STATE, id);
    shows(mixed, 0x1004, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0, id);
    shows(mixed, 0x1000, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0,
          "libdwarf-stops-at-lookup-pc");
    does_not_match(mixed, 0x1000, false, ENGINE_libdwarf,
                   ENGINE_ITEM_STATUS, 0, id);
    remove_built(pac);
    remove_built(plain);
    remove_built(mixed);
    remove_built(late);
}
END_TEST

/* negate_ra_state_with_pc (0x2c) and set_ra_state (0x2b) with a
 * reserved state, after the first instruction: both libraries fail
 * where they run them, the IL reads the first and rejects the second;
 * at 0x1000 (not run yet) the libraries do not fail on them. */
START_TEST(aarch64_ra_state_ops)
{
    static const struct {
        enum engine_id engine;
        const char *id;
    } engines[] = {
        {ENGINE_libdwarf, "libdwarf-aarch64-ra-state-ops"},
        {ENGINE_libdw, "libdw-aarch64-ra-state-ops"},
    };
    char *with_pc = build_aarch64("", "\tnop\n\t.cfi_escape 0x2c\n\tnop\n");
    char *reserved = build_aarch64("", "\tnop\n\t.cfi_escape 0x2b, 3, 0\n"
                                   "\tnop\n");
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        shows(with_pc, 0x1004, false, engines[i].engine, ENGINE_ITEM_STATUS,
              0, engines[i].id);
        shows(reserved, 0x1004, false, engines[i].engine,
              ENGINE_ITEM_STATUS, 0, engines[i].id);
        does_not_match(with_pc, 0x1000, false, engines[i].engine,
                       ENGINE_ITEM_STATUS, 0, engines[i].id);
        does_not_match(reserved, 0x1000, false, engines[i].engine,
                       ENGINE_ITEM_STATUS, 0, engines[i].id);
    }
    remove_built(with_pc);
    remove_built(reserved);
}
END_TEST

/* A 'B'-key CIE: libdwarf refuses the section; the A key it reads. */
START_TEST(libdwarf_augmentation_b_key)
{
    const char *id = "libdwarf-augmentation-b-key";
    char *b_key = build_aarch64("", b_key_pac_ret);
    char *a_key = build_aarch64("", plain_frame);
    shows(b_key, 0x1008, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0, id);
    does_not_match(a_key, 0x1008, false, ENGINE_libdwarf,
                   ENGINE_ITEM_STATUS, 0, id);
    remove_built(b_key);
    remove_built(a_key);
}
END_TEST

/* The fuzzing input whose CIE names return address register 255 (version
 * 1, augmentation "S"), above the 128-column table libdwarf is given:
 * libdwarf refuses the section, so a PC no FDE covers gets its error.
 * Nearby: an ordinary file, which libdwarf reads. */
START_TEST(libdwarf_cie_ra_register_refused)
{
    const char *id = "libdwarf-cie-ra-register-refused";
    const char *high = "fuzz/findings/differences/libdwarf-other/"
                       "libdwarf-f07b2e8d60ff7ae5.elf";
    char *plain = build_fde("\tnop\n");
    struct probe p;
    probe_run(&p, high, 0x30ffffff95, false, ENGINE_libdwarf);
    ck_assert_int_eq(p.expected.status, CFI_E_NO_FDE);
    probe_free(&p);
    shows(high, 0x30ffffff95, false, ENGINE_libdwarf, ENGINE_ITEM_STATUS, 0,
          id);
    does_not_match(plain, 0x1000, false, ENGINE_libdwarf,
                   ENGINE_ITEM_STATUS, 0, id);
    remove_built(plain);
}
END_TEST

/* x30 saved and signed (0x1008): libdw's PC is the signed value. The
 * same frame unsigned: the PCs agree. */
START_TEST(libdw_no_pac_strip)
{
    const char *id = "libdw-no-pac-strip";
    char *pac = build_aarch64("", pac_ret);
    char *plain = build_aarch64("", plain_frame);
    shows(pac, 0x1008, false, ENGINE_libdw, ENGINE_ITEM_REG, A64_PC, id);
    does_not_match(plain, 0x1008, false, ENGINE_libdw, ENGINE_ITEM_REG,
                   A64_PC, id);
    remove_built(pac);
    remove_built(plain);
}
END_TEST

/* x30 signed and saved by an empty expression (0x1008): libdw reads it
 * as undefined, so its PC is undefined where the IL's is the saved value
 * stripped; the PC item is x30's. Saved by a one-operation expression
 * (DW_OP_nop), libdw reads the value, and its PC is
 * libdw-no-pac-strip's. */
START_TEST(libdw_return_column_stripped)
{
    const char *id = "libdw-empty-expression-undefined";
    char *empty = build_aarch64("", "\thint 25\n\t.cfi_negate_ra_state\n"
                                "\tnop\n\t.cfi_def_cfa_offset 16\n"
                                "\tnop\n\t.cfi_escape 0x10, 30, 0\n\tnop\n");
    char *one_op = build_aarch64("", "\thint 25\n\t.cfi_negate_ra_state\n"
                                 "\tnop\n\t.cfi_def_cfa_offset 16\n"
                                 "\tnop\n\t.cfi_escape 0x10, 30, 1, 0x96\n"
                                 "\tnop\n");
    shows(empty, 0x100c, false, ENGINE_libdw, ENGINE_ITEM_REG, A64_X30, id);
    shows(empty, 0x100c, false, ENGINE_libdw, ENGINE_ITEM_REG, A64_PC, id);
    struct probe p;
    probe_run(&p, empty, 0x100c, false, ENGINE_libdw);
    ck_assert_uint_ne(p.expected.caller.value[A64_PC],
                      p.expected.caller.value[A64_X30]);
    probe_free(&p);
    shows(one_op, 0x100c, false, ENGINE_libdw, ENGINE_ITEM_REG, A64_PC,
          "libdw-no-pac-strip");
    remove_built(empty);
    remove_built(one_op);
}
END_TEST

/* A negate the IL rejects (mixed with an offset rule of 34): libdw
 * unwinds once it runs it; before, the IL's error is
 * libdw-stops-at-lookup-pc's. */
START_TEST(libdw_negate_ra_state_unchecked)
{
    const char *id = "libdw-negate-ra-state-unchecked";
    char *mixed = build_aarch64("", negate_mixed);
    shows(mixed, 0x1004, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0, id);
    shows(mixed, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
          "libdw-stops-at-lookup-pc");
    does_not_match(mixed, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS,
                   0, id);
    remove_built(mixed);
}
END_TEST

/* A CIE that defines no CFA (.cfi_startproc simple): the IL fails,
 * libdw unwinds with the CFA at x30 + 0; with the CFA defined they
 * agree. */
START_TEST(libdw_aarch64_abi_cfa_x30)
{
    const char *id = "libdw-aarch64-abi-cfa-x30";
    char *none = build_aarch64("simple", "\tnop\n");
    char *sp = build_aarch64("simple", "\t.cfi_def_cfa sp, 0\n\tnop\n");
    shows(none, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0, id);
    shows_in(none, 0x1000, false, (struct state){A64_X30, 0}, ENGINE_libdw,
             ENGINE_ITEM_STATUS, 0, id);
    does_not_match(sp, 0x1000, false, ENGINE_libdw, ENGINE_ITEM_STATUS, 0,
                   id);
    remove_built(none);
    remove_built(sp);
}
END_TEST

/* Every entry has a test above: the list must name them all. */
/* ------------------------------------------------------------------ */
/* gdb                                                                  */
/* ------------------------------------------------------------------ */

/* rax with no rule: the IL says undefined (the psABI), gdb the callee's
 * rax. With .cfi_undefined both say undefined. */
START_TEST(gdb_unspecified_same_value)
{
    char *plain = build_fde("\tnop\n");
    char *undefined = build_fde("\t.cfi_undefined %rax\n\tnop\n");
    shows(plain, 0x1000, false, ENGINE_gdb, ENGINE_ITEM_REG, CFI_REG_RAX,
          "gdb-unspecified-same-value");
    does_not_match(undefined, 0x1000, false, ENGINE_gdb, ENGINE_ITEM_REG,
                   CFI_REG_RAX, "gdb-unspecified-same-value");
    does_not_match(plain, 0x1000, false, ENGINE_gdb, ENGINE_ITEM_REG,
                   CFI_REG_RBX, "gdb-unspecified-same-value");
    remove_built(plain);
    remove_built(undefined);
}
END_TEST

/* Return address column 3 (rbx): the IL's caller rip is rbx's value
 * (no rule: the callee's rbx), gdb's rip column 16's [cfa-8]. With
 * column 16 both read [cfa-8]. */
START_TEST(gdb_rip_own_column)
{
    char *ra3 = build_fde("\t.cfi_return_column 3\n\tnop\n");
    char *plain = build_fde("\tnop\n");
    shows(ra3, 0x1000, false, ENGINE_gdb, ENGINE_ITEM_REG, CFI_REG_RIP,
          "gdb-rip-own-column");
    does_not_match(plain, 0x1000, false, ENGINE_gdb, ENGINE_ITEM_REG,
                   CFI_REG_RIP, "gdb-rip-own-column");
    remove_built(ra3);
    remove_built(plain);
}
END_TEST

/* A caller frame at 0x1001 in an 'S' FDE: the IL's row is 0x1000's
 * (PC-1, cfa=rsp+8), gdb's 0x1001's (cfa=rsp+16). Without 'S' both
 * take 0x1000's. */
START_TEST(gdb_signal_frame_at_pc)
{
    const char *program = "\tnop\n\t.cfi_def_cfa_offset 16\n\tnop\n";
    char text[256];
    snprintf(text, sizeof text, "\t.cfi_signal_frame\n%s", program);
    char *signal = build_fde(text);
    char *plain = build_fde(program);
    shows(signal, 0x1001, true, ENGINE_gdb, ENGINE_ITEM_CFA, 0,
          "gdb-signal-frame-at-pc");
    does_not_match(plain, 0x1001, true, ENGINE_gdb, ENGINE_ITEM_CFA, 0,
                   "gdb-signal-frame-at-pc");
    remove_built(signal);
    remove_built(plain);
}
END_TEST

START_TEST(gdb_cfa_ops_on_expression)
{
    cfa_ops_on_expression(ENGINE_gdb, "gdb-cfa-ops-on-expression");
}
END_TEST

START_TEST(every_entry_is_tested)
{
    static const char *tested[] = {
        "libunwind-no-undefined-default", "libunwind-rsp-is-cfa",
        "libunwind-needs-caller-rip",
        "libunwind-val-offset-unknown", "libunwind-stops-at-lookup-pc",
        "libunwind-cfa-ops-on-expression",
        "libunwind-cie-restore-and-location",
        "libunwind-undefined-rbp-ends-stack",
        "libunwind-register-new-location", "libunwind-rip-is-return-address",
        "libunwind-deref-size-high-bytes", "libunwind-div-by-zero",
        "libunwind-shift-count-mod-64", "libunwind-cfa-expression-zero-pushed",
        "libunwind-null-address-undefined",
        "libunwind-expressions-before-reads", "libdwarf-stops-at-lookup-pc",
        "libdwarf-no-negative-offset-extended", "libdwarf-val-offset-sf-rax",
        "libdwarf-augmentation-without-z",
        "libdwarf-cfa-ops-on-expression",
        "libdwarf-cie-restore-and-location", "libdw-abi-rax-for-rbx",
        "libdw-abi-rip-same-value", "libdw-stops-at-lookup-pc",
        "libdw-expression-decoded-with-rule",
        "libdw-empty-expression-undefined", "libdw-location-backwards",
        "libdw-address-size-4", "libunwind-no-debug-frame",
        "libdw-trusts-eh-frame-hdr", "libunwind-trusts-eh-frame-hdr",
        "libdwarf-window-save-ignored",
        "libunwind-underflow-malformed", "libdwarf-debug-frame-zero-length",
        "libdw-debug-frame-zero-length", "sframe-three-columns",
        "sframe-pc-mask-lookup-pc", "libdwarf-negate-ra-state-ignored",
        "gdb-unspecified-same-value", "gdb-rip-own-column",
        "gdb-signal-frame-at-pc", "gdb-stops-at-lookup-pc",
        "gdb-cfa-ops-on-expression",
        "libdwarf-aarch64-ra-state-ops", "libdwarf-augmentation-b-key",
        "libdw-no-pac-strip",
        "libdw-aarch64-ra-state-ops", "libdw-negate-ra-state-unchecked",
        "libdw-aarch64-abi-cfa-x30", "libunwind-pc-outside-text",
        "libdw-window-save-sparc", "libdw-cfa-ops-invalidate",
        "libdwarf-cie-ra-register-refused",
    };
    size_t count;
    const struct engine_deviation *table = engine_deviation_table(&count);
    ck_assert_uint_eq(count, sizeof tested / sizeof tested[0]);
    for (size_t i = 0; i < count; i++) {
        bool named = false;
        for (size_t t = 0; t < count; t++)
            named |= strcmp(table[i].id, tested[t]) == 0;
        ck_assert_msg(named, "%s has no test", table[i].id);
        ck_assert(!engine_is_ours(table[i].engine));
        ck_assert(table[i].summary && table[i].reason && table[i].matches);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("deviations");
    TCase *tc = tcase_create("deviations");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_entry_is_tested);
    tcase_add_test(tc, gdb_unspecified_same_value);
    tcase_add_test(tc, gdb_rip_own_column);
    tcase_add_test(tc, gdb_signal_frame_at_pc);
    tcase_add_test(tc, gdb_cfa_ops_on_expression);
    tcase_add_test(tc, libunwind_no_undefined_default);
    tcase_add_test(tc, libunwind_rsp_is_cfa);
    tcase_add_test(tc, libunwind_rsp_is_cfa_status);
    tcase_add_test(tc, libunwind_needs_caller_rip);
    tcase_add_test(tc, libunwind_val_offset_unknown);
    tcase_add_test(tc, stops_at_lookup_pc);
    tcase_add_test(tc, stops_at_lookup_pc_undecodable);
    tcase_add_test(tc, stops_at_lookup_pc_row_error);
    tcase_add_test(tc, libunwind_cfa_ops_on_expression);
    tcase_add_test(tc, libunwind_cie_restore_and_location);
    tcase_add_test(tc, libunwind_undefined_rbp_ends_stack);
    tcase_add_test(tc, libunwind_register_new_location);
    tcase_add_test(tc, libunwind_register_new_location_status);
    tcase_add_test(tc, libunwind_deref_size_high_bytes);
    tcase_add_test(tc, libunwind_div_by_zero);
    tcase_add_test(tc, libunwind_shift_count);
    tcase_add_test(tc, libunwind_cfa_zero_pushed);
    tcase_add_test(tc, libunwind_null_address);
    tcase_add_test(tc, libunwind_expressions_first);
    tcase_add_test(tc, libunwind_rip_is_return_address);
    tcase_add_test(tc, libunwind_return_column_defaults);
    tcase_add_test(tc, libdwarf_no_negative_offset);
    tcase_add_test(tc, libdwarf_augmentation_without_z);
    tcase_add_test(tc, libdwarf_no_negative_offset_errors);
    tcase_add_test(tc, libdwarf_val_offset_sf_status);
    tcase_add_test(tc, libdwarf_val_offset_sf_rax);
    tcase_add_test(tc, libdwarf_cfa_ops_on_expression);
    tcase_add_test(tc, libdwarf_cie_restore_and_location);
    tcase_add_test(tc, libdwarf_cie_location_row_error);
    tcase_add_test(tc, libdwarf_window_save_ignored);
    tcase_add_test(tc, libdwarf_window_save_then_unknown);
    tcase_add_test(tc, libdw_window_save_sparc);
    tcase_add_test(tc, libdw_cfa_ops_invalidate);
    tcase_add_test(tc, libunwind_pc_outside_text);
    tcase_add_test(tc, libdw_abi_rax_for_rbx);
    tcase_add_test(tc, libdw_abi_rip_same_value);
    tcase_add_test(tc, return_column_item);
    tcase_add_test(tc, libdw_empty_expression);
    tcase_add_test(tc, libdw_empty_expression_status);
    tcase_add_test(tc, libdw_expression_decoded_with_rule);
    tcase_add_test(tc, libdw_expression_decoded_after_error);
    tcase_add_test(tc, libdw_location_backwards);
    tcase_add_test(tc, location_past_end);
    tcase_add_test(tc, libdw_address_size_4);
    tcase_add_test(tc, libunwind_no_debug_frame);
    tcase_add_test(tc, libunwind_trusts_eh_frame_hdr);
    tcase_add_test(tc, libdw_trusts_eh_frame_hdr);
    tcase_add_test(tc, libunwind_underflow_malformed);
    tcase_add_test(tc, debug_frame_zero_length);
    tcase_add_test(tc, sframe_three_columns);
    tcase_add_test(tc, sframe_pc_mask_lookup_pc);
    tcase_add_test(tc, libdwarf_negate_ra_state_ignored);
    tcase_add_test(tc, aarch64_ra_state_ops);
    tcase_add_test(tc, libdwarf_augmentation_b_key);
    tcase_add_test(tc, libdwarf_cie_ra_register_refused);
    tcase_add_test(tc, libdw_no_pac_strip);
    tcase_add_test(tc, libdw_return_column_stripped);
    tcase_add_test(tc, libdw_negate_ra_state_unchecked);
    tcase_add_test(tc, libdw_aarch64_abi_cfa_x30);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
