/* SPDX-License-Identifier: MIT */
/* run.c — executing the CIE's program, then the FDE's (DWARF 5 §6.4.2,
 * §6.4.4), to find the row in effect at the lookup PC.
 *
 * One function per opcode, op_<name> (the dispatch is generated from the
 * opcode table, so every opcode has its own, even where several apply one
 * rule), with the rule it applies above it in the notation of DESIGN.md: `row` is the row being built, `row[r]`
 * the rule of register r, `cfa` the CFA rule, `loc` the location,
 * `initial` the CIE's initial row, `stack` the remembered rows. The
 * dispatch switch is generated from the opcode table and only dispatches.
 *
 * The row in effect at address A is the row after executing every
 * instruction up to the first location change that moves the location
 * past A. Execution goes on to the end of both programs all the same:
 * the table is defined by the whole program, so an error after A is an
 * error (cfi.h step 3). */
#include "internal.h"

#include <string.h>

/* The interpreter's state; it lives beside the row, never in it, so that
 * restore_state cannot bring back a location (gimli#273). */
struct run {
    const struct interp_programs *programs;
    const struct interp_program *program;   /* the one being executed */
    interp_source source_base;  /* source of the program's byte 0, minus 1 */
    struct interp_row row;                  /* the row in effect */
    struct interp_row initial;              /* the CIE's initial row */
    struct interp_row stack[INTERP_REMEMBER_MAX];
    unsigned depth;
    uint64_t loc;
    uint64_t lookup_pc;
    bool captured;                          /* *wanted has been filled */
    struct interp_row *wanted;              /* the row at lookup_pc */
    const char *message;                    /* why the last op failed */
};

static enum cfi_status fail(struct run *run, enum cfi_status status,
                            const char *message)
{
    run->message = message;
    return status;
}

/* Gives register `reg` the rule that `insn` states. */
static enum cfi_status set_rule(struct run *run, const struct interp_insn *insn)
{
    interp_row_set(&run->row, insn->reg,
                   run->source_base + 1 + (interp_source)insn->at);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Location: set_loc, advance_loc*                                     */
/* ------------------------------------------------------------------ */

/* loc := target, where loc <= target <= pc_end, and only in an FDE. The
 * row in effect at lookup_pc is the current one when this change is the
 * first to move loc past lookup_pc. */
static enum cfi_status move_to(struct run *run, uint64_t target)
{
    if (run->program->in_cie)
        return fail(run, CFI_E_MALFORMED, "location change in a CIE");
    if (target < run->loc)
        return fail(run, CFI_E_MALFORMED, "location goes backwards");
    if (target > run->programs->pc_end)
        return fail(run, CFI_E_MALFORMED, "location past the end of the FDE");
    if (!run->captured && target > run->lookup_pc) {
        *run->wanted = run->row;
        run->captured = true;
    }
    run->loc = target;
    return CFI_OK;
}

static enum cfi_status move_by(struct run *run, uint64_t delta)
{
    if (delta > UINT64_MAX - run->loc)
        return fail(run, CFI_E_MALFORMED, "location past the end of the FDE");
    return move_to(run, run->loc + delta);
}

/* set_loc(a): loc := a, where "the new location value is always greater
 * than the current one" (DWARF 5 §6.4.2.1): a == loc is an error too. */
static enum cfi_status op_set_loc(struct run *run, const struct interp_insn *insn)
{
    if (!run->program->in_cie && insn->address == run->loc)
        return fail(run, CFI_E_MALFORMED, "set_loc does not advance the location");
    return move_to(run, insn->address);
}

/* advance_loc(d): loc := loc + d × code_align (the decoder scaled d) */
static enum cfi_status op_advance_loc(struct run *run, const struct interp_insn *insn)
{
    return move_by(run, insn->delta);
}

/* advance_loc1(d): loc := loc + d × code_align (a 1-byte d) */
static enum cfi_status op_advance_loc1(struct run *run, const struct interp_insn *insn)
{
    return move_by(run, insn->delta);
}

/* advance_loc2(d): loc := loc + d × code_align (a 2-byte d) */
static enum cfi_status op_advance_loc2(struct run *run, const struct interp_insn *insn)
{
    return move_by(run, insn->delta);
}

/* advance_loc4(d): loc := loc + d × code_align (a 4-byte d) */
static enum cfi_status op_advance_loc4(struct run *run, const struct interp_insn *insn)
{
    return move_by(run, insn->delta);
}

/* MIPS_advance_loc8(d): loc := loc + d × code_align (an 8-byte d) */
static enum cfi_status op_MIPS_advance_loc8(struct run *run, const struct interp_insn *insn)
{
    return move_by(run, insn->delta);
}

/* ------------------------------------------------------------------ */
/* CFA rules                                                           */
/* ------------------------------------------------------------------ */

/* def_cfa(r, n): cfa := r + n (n not factored) */
static enum cfi_status op_def_cfa(struct run *run, const struct interp_insn *insn)
{
    run->row.cfa = (struct interp_cfa){INTERP_CFA_REG_OFFSET, insn->reg,
                                       insn->number, NULL, 0};
    return CFI_OK;
}

/* def_cfa_sf(r, n): cfa := r + n × data_align */
static enum cfi_status op_def_cfa_sf(struct run *run, const struct interp_insn *insn)
{
    run->row.cfa = (struct interp_cfa){INTERP_CFA_REG_OFFSET, insn->reg,
                                       (uint64_t)insn->offset, NULL, 0};
    return CFI_OK;
}

/* The three below change one part of a reg+offset CFA rule; on any other
 * CFA rule (an expression, or none yet) they are malformed (§6.4.2.2:
 * "valid only if the current CFA rule is defined to use a register and
 * offset"). */
static enum cfi_status need_reg_offset_cfa(struct run *run)
{
    if (run->row.cfa.kind != INTERP_CFA_REG_OFFSET)
        return fail(run, CFI_E_MALFORMED, "CFA rule is not register+offset");
    return CFI_OK;
}

/* def_cfa_register(r): cfa = _ + n  ⇒  cfa := r + n */
static enum cfi_status op_def_cfa_register(struct run *run, const struct interp_insn *insn)
{
    enum cfi_status status = need_reg_offset_cfa(run);
    if (status == CFI_OK)
        run->row.cfa.reg = insn->reg;
    return status;
}

/* def_cfa_offset(n): cfa = r + _  ⇒  cfa := r + n (n not factored) */
static enum cfi_status op_def_cfa_offset(struct run *run, const struct interp_insn *insn)
{
    enum cfi_status status = need_reg_offset_cfa(run);
    if (status == CFI_OK)
        run->row.cfa.offset = insn->number;
    return status;
}

/* def_cfa_offset_sf(n): cfa = r + _  ⇒  cfa := r + n × data_align */
static enum cfi_status op_def_cfa_offset_sf(struct run *run, const struct interp_insn *insn)
{
    enum cfi_status status = need_reg_offset_cfa(run);
    if (status == CFI_OK)
        run->row.cfa.offset = (uint64_t)insn->offset;
    return status;
}

/* def_cfa_expression(E): cfa := expr(E) */
static enum cfi_status op_def_cfa_expression(struct run *run, const struct interp_insn *insn)
{
    run->row.cfa = (struct interp_cfa){INTERP_CFA_EXPR, 0, 0, insn->expr,
                                       insn->expr_len};
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Register rules: the rule is the instruction (see interp_source)     */
/* ------------------------------------------------------------------ */

/* undefined(r): row[r] := undefined */
static enum cfi_status op_undefined(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* same_value(r): row[r] := same_value */
static enum cfi_status op_same_value(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* offset(r, n): row[r] := addr(cfa + n × data_align) */
static enum cfi_status op_offset(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* offset_extended(r, n): row[r] := addr(cfa + n × data_align), r a ULEB */
static enum cfi_status op_offset_extended(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* offset_extended_sf(r, n): row[r] := addr(cfa + n × data_align), n
 * signed */
static enum cfi_status op_offset_extended_sf(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* GNU_negative_offset_extended(r, n): row[r] := addr(cfa - n × data_align) */
static enum cfi_status op_GNU_negative_offset_extended(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* val_offset(r, n): row[r] := val(cfa + n × data_align) */
static enum cfi_status op_val_offset(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* val_offset_sf(r, n): row[r] := val(cfa + n × data_align), n signed */
static enum cfi_status op_val_offset_sf(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* register(r, m): row[r] := reg(m), the callee's m when applied (not m's
 * rule) */
static enum cfi_status op_register(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* expression(r, E): row[r] := addr(expr(E)), the CFA pushed first */
static enum cfi_status op_expression(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* val_expression(r, E): row[r] := val(expr(E)), the CFA pushed first */
static enum cfi_status op_val_expression(struct run *run, const struct interp_insn *insn)
{
    return set_rule(run, insn);
}

/* restore(r): row[r] := initial[r], only in an FDE (in the CIE there is
 * no initial row yet). initial[r] may be "no rule". */
static enum cfi_status op_restore(struct run *run, const struct interp_insn *insn)
{
    if (run->program->in_cie)
        return fail(run, CFI_E_MALFORMED, "restore in a CIE");
    interp_row_set(&run->row, insn->reg, run->initial.source[insn->reg]);
    return CFI_OK;
}

/* restore_extended(r): row[r] := initial[r], r a ULEB; as restore */
static enum cfi_status op_restore_extended(struct run *run, const struct interp_insn *insn)
{
    return op_restore(run, insn);
}

/* ------------------------------------------------------------------ */
/* Remembered rows                                                     */
/* ------------------------------------------------------------------ */

/* remember_state: push row (CFA rule included, loc not: it is no part of
 * a row) */
static enum cfi_status op_remember_state(struct run *run, const struct interp_insn *insn)
{
    (void)insn;
    if (run->depth == INTERP_REMEMBER_MAX)
        return fail(run, CFI_E_MALFORMED, "remember_state nested too deep");
    run->stack[run->depth++] = run->row;
    return CFI_OK;
}

/* restore_state: row := pop (CFA rule included; loc unchanged) */
static enum cfi_status op_restore_state(struct run *run, const struct interp_insn *insn)
{
    (void)insn;
    if (run->depth == 0)
        return fail(run, CFI_E_MALFORMED, "restore_state with no remembered row");
    run->row = run->stack[--run->depth];
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* No effect on rows                                                   */
/* ------------------------------------------------------------------ */

/* nop: row unchanged */
static enum cfi_status op_nop(struct run *run, const struct interp_insn *insn)
{
    (void)run;
    (void)insn;
    return CFI_OK;
}

/* GNU_args_size(n): row unchanged (n is for the personality routine) */
static enum cfi_status op_GNU_args_size(struct run *run, const struct interp_insn *insn)
{
    (void)run;
    (void)insn;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Return address state (AArch64's RA_SIGN_STATE, aadwarf64 Note 8)    */
/* ------------------------------------------------------------------ */

enum { OP_LIT0 = 0x30 }; /* DW_OP_lit0 (DWARF 5 §7.7.1) */

/* Whether the column's rule is a state s, val(s): no rule is the ABI
 * default (0 where it is CFI_DEFAULT_ZERO); a val_expression of the one
 * operation lit0..lit2 states s as well. Any other rule is none. */
static enum cfi_status current_state(struct run *run, unsigned column,
                                     bool *is_state, uint64_t *state)
{
    interp_source source = run->row.source[column];
    *state = CFI_RA_NOT_SIGNED;
    *is_state = true;
    if (source == 0) {
        *is_state = cfi_arch_default(run->programs->arch, column) ==
                    CFI_DEFAULT_ZERO;
        return CFI_OK;
    }
    if (interp_source_is_state(source)) {
        *state = interp_source_state(source);
        return CFI_OK;
    }
    struct interp_insn insn;
    if (interp_decode_source(run->programs, source, &insn) != CFI_OK)
        return fail(run, CFI_E_INTERNAL,
                    "internal error: a rule source is not a rule");
    *is_state = insn.opcode == INTERP_CFA_val_expression &&
                insn.expr_len == 1 && insn.expr[0] >= OP_LIT0 &&
                insn.expr[0] <= OP_LIT0 + CFI_RA_STATE_MAX;
    if (*is_state)
        *state = insn.expr[0] - (uint64_t)OP_LIT0;
    return CFI_OK;
}

/* The architecture's meaning of `opcode` is `meaning`, with a column. */
static bool means(const struct run *run, unsigned opcode,
                  enum cfi_vendor_op meaning)
{
    const struct cfi_arch *arch = run->programs->arch;
    return cfi_arch_vendor_op(arch, opcode) == meaning &&
           arch->ra_state < CFI_NREGS;
}

static enum cfi_status not_implemented(struct run *run)
{
    return fail(run, CFI_E_UNSUPPORTED,
                "this architecture's meaning of the opcode is not "
                "implemented");
}

/* negate: row[ra_state] = val(0)  ⇒  row[ra_state] := val(signed)
 *         row[ra_state] = val(signed)  ⇒  row[ra_state] := val(0)
 * where "no rule" is val(0); any other rule, or the other signed state,
 * is malformed (aadwarf64: negates "must not be mixed with other DWARF
 * Register Rule Instructions" on RA_SIGN_STATE). */
static enum cfi_status negate_state(struct run *run, uint64_t signed_state)
{
    unsigned column = run->programs->arch->ra_state;
    uint64_t state;
    bool is_state;
    enum cfi_status status = current_state(run, column, &is_state, &state);
    if (status != CFI_OK)
        return status;
    if (!is_state)
        return fail(run, CFI_E_MALFORMED,
                    "negate_ra_state on RA_SIGN_STATE with another rule");
    if (state != CFI_RA_NOT_SIGNED && state != signed_state)
        return fail(run, CFI_E_MALFORMED,
                    "negate_ra_state on a state it does not toggle");
    uint64_t toggled = state == CFI_RA_NOT_SIGNED ? signed_state
                                                  : CFI_RA_NOT_SIGNED;
    interp_row_set(&run->row, column,
                   INTERP_SOURCE_STATE((interp_source)toggled));
    return CFI_OK;
}

/* GNU_window_save: its meaning is the architecture's (arch.h): SPARC
 * register windows, none on x86-64; on AArch64
 * (AARCH64_negate_ra_state) the state toggles between 0 and 1. */
static enum cfi_status op_GNU_window_save(struct run *run, const struct interp_insn *insn)
{
    (void)insn;
    if (cfi_arch_vendor_op(run->programs->arch, 0x2d) == CFI_VENDOR_NONE)
        return fail(run, CFI_E_UNSUPPORTED,
                    "GNU_window_save has no meaning on x86-64");
    if (!means(run, 0x2d, CFI_VENDOR_NEGATE_RA_STATE))
        return not_implemented(run);
    return negate_state(run, CFI_RA_SIGNED_SP);
}

/* AARCH64_negate_ra_state_with_pc: the state toggles between 0 and 2
 * (the code location it records is no part of a row). */
static enum cfi_status op_AARCH64_negate_ra_state_with_pc(
    struct run *run, const struct interp_insn *insn)
{
    (void)insn;
    if (!means(run, 0x2c, CFI_VENDOR_NEGATE_RA_STATE_WITH_PC))
        return not_implemented(run);
    return negate_state(run, CFI_RA_SIGNED_SP_PC);
}

/* AARCH64_set_ra_state(s, o): row[ra_state] := val(s), whatever its rule
 * was; s above 2 is reserved (aadwarf64 Note 8). The offset o × code_align
 * locates the signing instruction, which is no part of a row. */
static enum cfi_status op_AARCH64_set_ra_state(
    struct run *run, const struct interp_insn *insn)
{
    if (!means(run, 0x2b, CFI_VENDOR_SET_RA_STATE))
        return not_implemented(run);
    if (insn->number > CFI_RA_STATE_MAX)
        return fail(run, CFI_E_UNSUPPORTED,
                    "set_ra_state: a reserved return address state");
    interp_row_set(&run->row, run->programs->arch->ra_state,
                   INTERP_SOURCE_STATE((interp_source)insn->number));
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

static enum cfi_status execute(struct run *run, const struct interp_insn *insn)
{
    switch (insn->opcode) {
#define CFA_DISPATCH(name, number, shape)                                  \
    case INTERP_CFA_##name:                                                 \
        return op_##name(run, insn);
        INTERP_CFA_OPCODES(CFA_DISPATCH)
#undef CFA_DISPATCH
    default: /* interp_decode gives only the opcodes above */
        return fail(run, CFI_E_INTERNAL,
                    "internal error: an opcode without an operation");
    }
}

/* Decodes and executes every instruction of `program`. The loop is
 * bounded: each instruction takes at least one byte. */
static enum cfi_status run_program(struct run *run,
                                   const struct interp_program *program,
                                   interp_source source_base,
                                   struct cfi_diag *diag)
{
    run->program = program;
    run->source_base = source_base;
    size_t at = 0;
    while (at < program->len) {
        if (program->bytes[at] == INTERP_CFA_nop) {
            at++; /* op_nop without decoding: nops pad most programs */
            continue;
        }
        struct interp_insn insn;
        const char *message = NULL;
        enum cfi_status status = interp_decode(program, at, &insn, &message);
        if (status == CFI_OK) {
            status = execute(run, &insn);
            message = run->message;
        }
        if (status != CFI_OK)
            return cfi_fail(diag, status, program->section_offset + at,
                            message);
        at = insn.next;
    }
    return CFI_OK;
}

enum cfi_status interp_find_row(const struct interp_programs *programs,
                                uint64_t lookup_pc, struct interp_row *row,
                                struct cfi_diag *diag)
{
    /* Every byte's source (its offset plus one) must be below the
     * sources that are states. */
    const size_t most = (size_t)INTERP_SOURCE_STATE(0) - 1;
    if (programs->cie.len > most ||
        programs->fde.len > most - programs->cie.len)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "CIE and FDE programs longer than 4 GiB");
    struct run run; /* not zeroed: ~36 KiB, of which only used rows matter */
    run.programs = programs;
    run.row.cfa = (struct interp_cfa){INTERP_CFA_NONE, 0, 0, NULL, 0};
    memset(run.row.source, 0, sizeof run.row.source);
    memset(run.row.has_rule, 0, sizeof run.row.has_rule);
    run.depth = 0;
    run.loc = programs->pc_begin;
    run.lookup_pc = lookup_pc;
    run.captured = false;
    run.wanted = row;
    run.message = NULL;
    enum cfi_status status = run_program(&run, &programs->cie, 0, diag);
    if (status != CFI_OK)
        return status;
    run.initial = run.row;
    run.depth = 0; /* remembered rows do not cross from the CIE to the FDE */
    status = run_program(&run, &programs->fde,
                         (interp_source)programs->cie.len, diag);
    if (status == CFI_OK && !run.captured)
        *row = run.row;
    return status;
}
