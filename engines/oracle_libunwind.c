/* SPDX-License-Identifier: MIT */
/* oracle_libunwind.c — see oracle_libunwind.h. */
#include "oracle_libunwind.h"
#include "libunwind_access.h"
#include "libunwind_model.h"
#include "scan.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "semantics/sem.h"

struct engine_libunwind {
    const struct cfi_file *file;
    unw_addr_space_t space;
    unw_dyn_info_t table;      /* .eh_frame_hdr's search table */
    struct sem_file_il *il;    /* the rows, for the checks before a step */
    struct cfi_frame model;    /* engine_libunwind_model's answer */
    /* scan_fde's finding for the FDE asked last: a function of the FDE,
     * whose PCs and states are asked one after another. */
    const struct cfi_fde *scanned;
    int scanned_finding;       /* enum scan_finding */
};

/* ------------------------------------------------------------------ */
/* Opening                                                              */
/* ------------------------------------------------------------------ */

/* .eh_frame_hdr: version 1, eh_frame_ptr, fde_count (udata4), then a
 * table of (initial location, FDE address) pairs, datarel|sdata4. */
static bool read_header(const struct cfi_file *file, uint64_t *count)
{
    const struct cfi_segment *segment =
        cfi_file_segment(file, file->eh_frame_hdr_addr);
    if (!segment || file->eh_frame_hdr_size < 12)
        return false;
    uint64_t at = file->eh_frame_hdr_addr - segment->vaddr;
    if (at + 12 > segment->filesz)
        return false;
    const uint8_t *hdr = segment->bytes + at;
    if (hdr[0] != 1 || (hdr[1] & 0x0f) != CFI_PE_SDATA4 ||
        hdr[2] != CFI_PE_UDATA4 || hdr[3] != (CFI_PE_DATAREL | CFI_PE_SDATA4))
        return false;
    *count = cfi_load_le(hdr + 8, 4);
    return 12 + *count * 8 <= file->eh_frame_hdr_size;
}

/* The text range the table may cover: all executable segments. */
static void text_range(const struct cfi_file *file, uint64_t *begin,
                       uint64_t *end)
{
    *begin = UINT64_MAX;
    *end = 0;
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        if (!s->executable)
            continue;
        if (s->vaddr < *begin)
            *begin = s->vaddr;
        if (s->vaddr + s->memsz > *end)
            *end = s->vaddr + s->memsz;
    }
}

enum cfi_status engine_libunwind_open(const struct cfi_file *file, void **self,
                                      struct cfi_diag *diag)
{
    *self = NULL;
    uint64_t count;
    if (!file->eh_frame_hdr_addr || !read_header(file, &count))
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "libunwind: no usable .eh_frame_hdr");
    struct engine_libunwind *lu = calloc(1, sizeof *lu);
    if (!lu)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    lu->file = file;
    uint64_t begin, end;
    text_range(file, &begin, &end);
    lu->table = engine_libunwind_table(file->eh_frame_hdr_addr, count, begin,
                                       end);
    unw_accessors_t accessors = engine_libunwind_accessors();
    lu->space = unw_create_addr_space(&accessors, 0);
    if (!lu->space) {
        free(lu);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    unw_set_caching_policy(lu->space, UNW_CACHE_GLOBAL);
    if (sem_file_il_build(file, &lu->il) != CFI_OK) {
        engine_libunwind_close(lu);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    *self = lu;
    return CFI_OK;
}

void engine_libunwind_set_caching(void *self, bool global_cache)
{
    struct engine_libunwind *lu = self;
    unw_set_caching_policy(lu->space,
                           global_cache ? UNW_CACHE_GLOBAL : UNW_CACHE_NONE);
}

void engine_libunwind_close(void *self)
{
    struct engine_libunwind *lu = self;
    if (!lu)
        return;
    if (lu->space)
        unw_destroy_addr_space(lu->space);
    sem_file_il_free(lu->il);
    free(lu);
}

/* ------------------------------------------------------------------ */
/* Programs outside libunwind's register set                            */
/* ------------------------------------------------------------------ */

/* libunwind holds DWARF registers 0..16 only. Its run_cfi_program
 * (dwarf/Gparser.c) fails on any instruction whose register operand is
 * above 16 (read_regnum: -UNW_EBADREG; restore, restore_extended:
 * -UNW_EINVAL), so it cannot be asked about an FDE whose program names
 * one: such requests are not comparable, wherever the instruction lies
 * (the FDE is outside its register set, not only the rows after it).
 * One operand is never checked: the source register of DW_CFA_register,
 * which apply_reg_state reads out of bounds
 * (diff/findings/libunwind-register-oob); it gets its own reason. */
enum scan_finding {
    SCAN_NOTHING,
    SCAN_HIGH_REGISTER,     /* an operand names a register above 16 */
    SCAN_REGISTER_SOURCE,   /* DW_CFA_register from a register above 16 */
    SCAN_BACKWARD_JUMP,     /* an expression's skip or bra jumps back */
    SCAN_PAST_END,          /* an operand runs past the program's end */
};

/* A reader over a program, decoding as run_cfi_program does: the same
 * operand shapes, an opcode it has no case for skipped alone (its switch
 * has no default), the end where it stops with an error. */
struct scan {
    struct engine_scan bytes;
    uint8_t pointer_size;      /* of DW_CFA_set_loc, from the 'R' format */
    enum scan_finding finding; /* the worst found so far */
};

static void scan_found(struct scan *s, enum scan_finding finding)
{
    if (finding > s->finding)
        s->finding = finding;
}

/* An operand the program's bytes do not hold: libunwind reads on past the
 * FDE (dwarf/Gparser.c has no bound there; diff/findings/
 * libunwind-register-past-end.so). */
static bool scan_leb(struct scan *s, uint64_t *value)
{
    if (engine_scan_leb(&s->bytes, ENGINE_LEB_OVERLONG_DROPPED, value))
        return true;
    scan_found(s, SCAN_PAST_END);
    return false;
}

static bool scan_skip(struct scan *s, uint64_t n)
{
    if (engine_scan_skip(&s->bytes, n))
        return true;
    scan_found(s, SCAN_PAST_END);
    return false;
}

/* An expression block of n bytes: a skip or bra whose 2-byte operand is
 * negative jumps back, and dwarf/Gexpr.c runs it with no step limit
 * (diff/findings/libunwind-expression-loop). The bytes are not decoded
 * operation by operation: a 0x2f or 0x28 byte inside another operand
 * counts too, which only refuses more. */
static bool scan_expression(struct scan *s, uint64_t n)
{
    const uint8_t *block = s->bytes.p;
    if (!scan_skip(s, n))
        return false;
    for (uint64_t i = 0; i + 2 < n; i++)
        if ((block[i] == DW_OP_skip || block[i] == DW_OP_bra) &&
            (int16_t)(block[i + 1] | block[i + 2] << 8) < 0)
            scan_found(s, SCAN_BACKWARD_JUMP);
    return true;
}

/* A register operand. */
static void scan_register(struct scan *s, uint64_t reg)
{
    if (reg >= ENGINE_LU_NREGS)
        scan_found(s, SCAN_HIGH_REGISTER);
}

/* A register operand read as a ULEB128. */
static bool scan_register_leb(struct scan *s)
{
    uint64_t reg;
    if (!scan_leb(s, &reg))
        return false;
    scan_register(s, reg);
    return true;
}

/* Operands of an opcode below 0x40: a register first or not, then LEB128s,
 * a block or fixed bytes. Returns false where libunwind stops (an error
 * other than a register's, or the bytes end). */
static bool scan_operands(struct scan *s, uint8_t op)
{
    uint64_t a;
    switch (op) {
    case DW_CFA_advance_loc1: return scan_skip(s, 1);
    case DW_CFA_advance_loc2: return scan_skip(s, 2);
    case DW_CFA_advance_loc4: return scan_skip(s, 4);
    case DW_CFA_set_loc:
        return s->pointer_size && scan_skip(s, s->pointer_size);
    case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
    case DW_CFA_GNU_args_size:
        return scan_leb(s, &a);
    case DW_CFA_restore_extended: case DW_CFA_undefined:
    case DW_CFA_same_value: case DW_CFA_def_cfa_register:
        return scan_register_leb(s);
    case DW_CFA_offset_extended: case DW_CFA_def_cfa:
    case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf:
    case DW_CFA_GNU_negative_offset_extended:
        return scan_register_leb(s) && scan_leb(s, &a);
    case DW_CFA_register:
        if (!scan_register_leb(s) || !scan_leb(s, &a))
            return false;
        if (a >= ENGINE_LU_NREGS)
            scan_found(s, SCAN_REGISTER_SOURCE);
        return true;
    case DW_CFA_def_cfa_expression:
        return scan_leb(s, &a) && scan_expression(s, a);
    case DW_CFA_expression: case DW_CFA_val_expression:
        return scan_register_leb(s) && scan_leb(s, &a) &&
               scan_expression(s, a);
    case DW_CFA_lo_user: case DW_CFA_MIPS_advance_loc8:
    case DW_CFA_GNU_window_save: case DW_CFA_high_user:
        return false;
    default:
        return true; /* nop, remember/restore_state, and unknown opcodes */
    }
}

static void scan_program(struct scan *s, const uint8_t *bytes, size_t len)
{
    s->bytes = (struct engine_scan){bytes, bytes + len};
    while (s->bytes.p < s->bytes.end) {
        uint8_t op = *s->bytes.p++;
        uint64_t offset;
        switch (op & 0xc0) {
        case DW_CFA_advance_loc:
            break;
        case DW_CFA_offset: /* register in the low six bits */
            scan_register(s, op & 0x3f);
            if (!scan_leb(s, &offset))
                return;
            break;
        case DW_CFA_restore:
            scan_register(s, op & 0x3f);
            break;
        default:
            if (!scan_operands(s, op))
                return;
        }
    }
}

/* The size of a DW_CFA_set_loc operand in the CIE's 'R' format, 0 when
 * it has none (libunwind then fails on it). */
static uint8_t pointer_size(uint8_t encoding)
{
    switch (encoding & 0x0f) {
    case CFI_PE_ABSPTR: case CFI_PE_UDATA8: case CFI_PE_SDATA8: return 8;
    case CFI_PE_UDATA2: case CFI_PE_SDATA2: return 2;
    case CFI_PE_UDATA4: case CFI_PE_SDATA4: return 4;
    default: return 0;
    }
}

/* What the CIE's and the FDE's programs name outside libunwind's set. */
static enum scan_finding scan_fde(const struct cfi_fde *fde)
{
    struct scan s = {{NULL, NULL}, pointer_size(fde->cie->fde_encoding),
                     SCAN_NOTHING};
    scan_program(&s, fde->cie->instructions, fde->cie->instructions_len);
    scan_program(&s, fde->instructions, fde->instructions_len);
    return s.finding;
}

/* ------------------------------------------------------------------ */
/* Answers                                                              */
/* ------------------------------------------------------------------ */

/* A fresh answer: libunwind speaks for registers 0..16 only. */
static void answer_reset(struct engine_answer *answer)
{
    engine_answer_reset(answer);
    for (unsigned reg = ENGINE_LU_NREGS; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
}

static const char partial_word_reason[] =
    "libunwind: reads whole aligned words, and the state's fault covers "
    "part of one";

/* unw_init_remote or unw_step failed with `code`. */
static enum cfi_status step_failed(const struct engine_libunwind_env *env,
                                   int code, struct engine_answer *answer)
{
    if (env->unknown_reg >= 0)
        return engine_answer_error(
            answer, CFI_E_REG_UNKNOWN,
            "libunwind: reads a register whose value is unknown",
            env->unknown_reg);
    if (env->memory_fault && env->partial_word_fault)
        return engine_answer_not_comparable(answer, partial_word_reason);
    if (env->memory_fault)
        return engine_answer_error(answer, CFI_E_MEMORY, unw_strerror(code),
                                   -1);
    switch (code) {
    case -UNW_EBADREG:
        return engine_answer_not_comparable(answer,
                              "libunwind: a rule names a register above 16");
    case -UNW_EBADFRAME:
        return engine_answer_not_comparable(
            answer, "libunwind: caller's rip and CFA equal the callee's");
    case -UNW_ENOINFO:
        return engine_answer_error(answer, CFI_E_NO_FDE, unw_strerror(code),
                                   -1);
    case -UNW_ENOMEM:
        return engine_answer_error(answer, CFI_E_NOMEM, unw_strerror(code), -1);
    default:
        return engine_answer_error(answer, CFI_E_MALFORMED, unw_strerror(code),
                                   -1);
    }
}

/* One caller register after the step: a value, undefined (no location),
 * unknown (its location is a callee register we did not give), or a
 * memory fault. */
static bool read_register(unw_cursor_t *cursor,
                          struct engine_libunwind_env *env, unsigned reg,
                          struct cfi_frame *frame)
{
    env->unknown_reg = -1;
    env->memory_fault = false;
    unw_word_t value;
    if (unw_get_reg(cursor, (unw_regnum_t)reg, &value) == 0)
        cfi_regs_set(&frame->caller, reg, value);
    else if (env->memory_fault)
        return false;
    else if (env->unknown_reg >= 0)
        frame->caller.status[reg] = CFI_REG_UNKNOWN;
    return true;
}

/* The caller's registers after a successful step, 0..16 in order (a
 * memory fault ends it, as in cfi.h step 5). */
static enum cfi_status read_back(unw_cursor_t *cursor,
                                 struct engine_libunwind_env *env,
                                 struct engine_answer *answer)
{
    struct cfi_frame *frame = &answer->frame;
    memset(frame->caller.status, CFI_REG_UNDEFINED, sizeof frame->caller.status);
    for (unsigned reg = 0; reg < ENGINE_LU_NREGS; reg++)
        if (!read_register(cursor, env, reg, frame))
            return engine_answer_error(
                answer, CFI_E_MEMORY,
                "libunwind: saved register is in unreadable memory", (int)reg);
    unw_word_t cfa = 0;
    unw_get_reg(cursor, UNW_X86_64_CFA, &cfa);
    frame->cfa = cfa;
    frame->signal_frame = unw_is_signal_frame(cursor) > 0;
    frame->status = CFI_OK;
    return CFI_OK;
}

/* The IL's row of `fde` at `pc`, or NULL. */
static const struct sem_row *row_at(const struct engine_libunwind *lu,
                                    const struct cfi_fde *fde, uint64_t pc)
{
    size_t index = (size_t)(fde - lu->file->fdes);
    if (lu->il->status[index] != CFI_OK)
        return NULL;
    const struct sem_range *range = sem_fde_il_find(&lu->il->fdes[index], pc);
    return range ? range->row : NULL;
}

static bool expr_holds(const struct sem_expr *expr, uint8_t byte)
{
    return expr->len > 0 && memchr(expr->bytes, byte, expr->len) != NULL;
}

/* An expression libunwind evaluates for this row holds `byte` (perhaps
 * as an operand). The check is cheap, so that timing the adapter
 * (bench/unwind_speed.c) still times libunwind. */
static bool row_expr_holds(const struct sem_row *row, uint8_t byte)
{
    if (row->cfa.kind == SEM_CFA_RULE_EXPR && expr_holds(&row->cfa.expr, byte))
        return true;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_reg_rule *rule = &row->rules[i];
        if (rule->reg < ENGINE_LU_NREGS &&
            (rule->rule.kind == SEM_RULE_EXPRESSION ||
             rule->rule.kind == SEM_RULE_VAL_EXPRESSION) &&
            expr_holds(&rule->rule.expr, byte))
            return true;
    }
    return false;
}

/* Only DW_OP_div can trap, and only DW_OP_skip and DW_OP_bra can jump
 * back. */
static bool row_needs_model(const struct sem_row *row)
{
    return row_expr_holds(row, DW_OP_div) || row_expr_holds(row, DW_OP_skip) ||
           row_expr_holds(row, DW_OP_bra);
}

/* What libunwind cannot be asked about this row, or NULL.
 *
 * A caller frame is given to libunwind with rip = PC-1 (its first frame
 * is looked up at the exact rip), and its DW_OP_breg16, same_value and
 * register rules read rip from the cursor: in a caller frame whose row
 * reads rip (the PLT's CFA expression), libunwind is not asked the same
 * question.
 *
 * Refused for safety, where the row's expressions, as libunwind
 * evaluates them (engine_libunwind_model), divide INT64_MIN by -1:
 * dwarf/Gexpr.c's signed division traps (SIGFPE;
 * diff/findings/libunwind-div-trap); or jump back without end:
 * dwarf/Gexpr.c has no step limit, and loops forever where cfi.h stops
 * at CFI_EXPR_STEP_LIMIT (diff/findings/libunwind-expression-loop). A
 * row with no CFA rule: dwarf/Gparser.c apply_reg_state reads the CFA
 * column's initial "same" as an expression at address 0, which kills a
 * local unwinder (diff/findings/libunwind-no-cfa-rule-null-read). An
 * expression that reads a register above 16: dwarf/Gexpr.c maps it to
 * register 0 and reads rax (diff/findings/libunwind-expression-register-
 * rax). */
static bool expression_reads_high(const struct sem_expr *expr)
{
    for (unsigned reg = ENGINE_LU_NREGS; reg < CFI_NREGS; reg++)
        if (sem_expr_reads_register(expr, reg))
            return true;
    return false;
}

static bool row_reads_high(const struct sem_row *row)
{
    if (row->cfa.kind == SEM_CFA_RULE_EXPR &&
        expression_reads_high(&row->cfa.expr))
        return true;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_rule *rule = &row->rules[i].rule;
        if ((rule->kind == SEM_RULE_EXPRESSION ||
             rule->kind == SEM_RULE_VAL_EXPRESSION) &&
            expression_reads_high(&rule->expr))
            return true;
    }
    return false;
}

static const char *row_refused(struct engine_libunwind *lu,
                               const struct cfi_fde *fde,
                               const struct sem_row *row,
                               const struct cfi_request *request)
{
    const struct cfi_arch *arch = fde->cie->arch;
    if (row->cfa.kind == SEM_CFA_RULE_INVALID)
        return "libunwind: a row with no CFA rule (libunwind reads a CFA "
               "expression at address 0)";
    if (row_reads_high(row))
        return "libunwind: a DWARF expression reads a register above 16 "
               "(libunwind reads rax instead)";
    if (request->caller_frame && sem_row_reads_register(arch, row, arch->pc))
        return "libunwind: a caller frame whose row reads rip (its cursor "
               "is given PC-1 as rip)";
    if (!row_needs_model(row))
        return NULL;
    bool traps = false;
    engine_libunwind_model(row, (unsigned)fde->cie->ra_column, request,
                           ENGINE_LU_QUIRKS_ALL, &lu->model, &traps);
    if (traps)
        return "libunwind: DW_OP_div of INT64_MIN by -1 (SIGFPE in "
               "libunwind)";
    if (lu->model.status == CFI_E_STEP_LIMIT)
        return "libunwind: a DWARF expression that does not end (libunwind "
               "has no step limit and loops forever)";
    return NULL;
}

enum cfi_status engine_libunwind_answer(void *self,
                                        const struct cfi_request *request,
                                        struct engine_answer *answer)
{
    struct engine_libunwind *lu = self;
    answer_reset(answer);
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const char *overlap = engine_overlap_reason(lu->file, pc);
    if (overlap)
        return engine_answer_not_comparable(answer, overlap);
    const struct cfi_fde *fde = cfi_file_lookup_in(lu->file, CFI_EH_FRAME, pc);
    if (fde && fde != lu->scanned) {
        lu->scanned = fde;
        lu->scanned_finding = scan_fde(fde);
    }
    enum scan_finding finding =
        fde ? (enum scan_finding)lu->scanned_finding : SCAN_NOTHING;
    if (finding == SCAN_REGISTER_SOURCE)
        return engine_answer_not_comparable(answer,
                              "libunwind: DW_CFA_register from a register "
                              "above 16 (out-of-bounds read in libunwind)");
    if (finding == SCAN_BACKWARD_JUMP)
        return engine_answer_not_comparable(
            answer, "libunwind: a DWARF expression that jumps back, as "
                    "libunwind decodes the program (it has no step limit)");
    if (finding == SCAN_PAST_END)
        return engine_answer_not_comparable(
            answer, "libunwind: an operand past the end of the program "
                    "(libunwind reads on)");
    if (finding == SCAN_HIGH_REGISTER)
        return engine_answer_not_comparable(answer,
                              "libunwind: the CFI names a register above 16, "
                              "outside libunwind's register set");
    const struct sem_row *row = fde ? row_at(lu, fde, pc) : NULL;
    const char *refused = row ? row_refused(lu, fde, row, request) : NULL;
    if (refused)
        return engine_answer_not_comparable(answer, refused);
    struct engine_libunwind_env env;
    engine_libunwind_env_start(&env, lu->table, request->memory,
                               request->callee, pc);
    unw_cursor_t cursor;
    int code = engine_libunwind_init_remote(&cursor, lu->space, &env);
    if (code < 0)
        return step_failed(&env, code, answer);
    code = unw_step(&cursor);
    /* Without an FDE, x86-64 unw_step guesses from rbp or the code
     * bytes: that is no CFI answer. */
    if (env.searched && env.search_result == -UNW_ENOINFO)
        return engine_answer_error(answer, CFI_E_NO_FDE,
                                   "libunwind: no FDE covers the address", -1);
    if (code < 0)
        return step_failed(&env, code, answer);
    enum cfi_status status = read_back(&cursor, &env, answer);
    if (status == CFI_OK && code == 0) /* end of stack: no return address */
        answer->frame.caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    return status;
}
