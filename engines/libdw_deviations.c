/* SPDX-License-Identifier: MIT */
/* libdw_deviations.c — the predicates of elfutils libdw's entries in the
 * deviation table (engines/deviations.c). */
#include "deviations_internal.h"

#include <stdlib.h>
#include <string.h>

/* The mismatch's FDE is read with `arch`'s descriptor (the back end
 * libdw chose by the same e_machine). */
static bool fde_of(const struct engine_mismatch *m,
                   const struct cfi_arch *arch)
{
    return m->fde && m->fde->cie && m->fde->cie->arch == arch;
}

/* rax (0) with no rule: libdw gives the callee's rax (same_value); rbx
 * (3) with no rule: libdw gives undefined. */
bool engine_deviation_libdw_abi_rax_for_rbx(const struct engine_mismatch *m)
{
    if (!engine_deviation_reg_item(m, ENGINE_libdw) ||
        !fde_of(m, &cfi_arch_x86_64) ||
        !engine_deviation_has_no_rule(m, m->reg))
        return false;
    if (m->reg == CFI_REG_RAX)
        return engine_deviation_is_undefined(m->expected, m->reg) &&
               engine_deviation_is_callee_reg(m->got, m->request, m->reg,
                                              m->reg);
    if (m->reg == CFI_REG_RBX)
        return engine_deviation_is_callee_reg(m->expected, m->request, m->reg,
                                              m->reg) &&
               engine_deviation_is_undefined(m->got, m->reg);
    return false;
}

/* rip (16) with no rule: the IL says undefined (the ABI default), libdw
 * the callee's rip (same_value). */
bool engine_deviation_libdw_abi_rip_same_value(const struct engine_mismatch *m)
{
    return engine_deviation_reg_item(m,
                                     ENGINE_libdw) && m->reg == CFI_REG_RIP &&
           fde_of(m, &cfi_arch_x86_64) &&
           engine_deviation_has_no_rule(m, CFI_REG_RIP) &&
           engine_deviation_is_undefined(m->expected, CFI_REG_RIP) &&
           engine_deviation_is_callee_reg(m->got, m->request, CFI_REG_RIP,
                                          CFI_REG_RIP);
}

bool engine_deviation_libdw_stops_at_lookup_pc(const struct engine_mismatch *m)
{
    return engine_deviation_stops_at_lookup_pc(m, ENGINE_libdw);
}

static bool is_empty_expression(const struct sem_rule *rule)
{
    return (rule->kind == SEM_RULE_EXPRESSION ||
            rule->kind == SEM_RULE_VAL_EXPRESSION) &&
           rule->expr.len == 0;
}

/* libdw's reading of a row: an empty expression rule is undefined. */
static bool empty_expression_undefined(struct sem_reg_rule *rule)
{
    if (is_empty_expression(&rule->rule))
        rule->rule = (struct sem_rule){.kind = SEM_RULE_UNDEFINED};
    return true;
}

/* expression or val_expression with an empty expression: libdw says
 * undefined. Seen on the register, and on the status when reading the
 * CFA's slot (expression) fails or a later rule fails first: the status
 * is then what the row gives with those rules undefined. */
bool engine_deviation_libdw_empty_expression(const struct engine_mismatch *m)
{
    struct sem_rule rule;
    if (m->engine != ENGINE_libdw || !m->row)
        return false;
    if (m->item == ENGINE_ITEM_STATUS) {
        bool any = false;
        if (!engine_deviation_item_differs(m))
            return false;
        for (uint32_t i = 0; i < m->row->nrules; i++)
            any |= is_empty_expression(&m->row->rules[i].rule);
        struct cfi_frame *model = malloc(sizeof *model);
        bool explained =
            any && model &&
            engine_deviation_eval_edited_row(m, empty_expression_undefined,
                                             model) &&
            engine_deviation_same_item(m, model);
        free(model);
        return explained;
    }
    return engine_deviation_reg_item(m, ENGINE_libdw) &&
           engine_deviation_row_rule(m, m->reg, &rule) &&
           is_empty_expression(&rule) &&
           engine_deviation_is_undefined(m->got, m->reg);
}

/* An expression of the row (the CFA's or a rule's) does not decode in
 * full. */
static bool row_has_undecodable(const struct sem_row *row)
{
    if (row->cfa.kind == SEM_CFA_RULE_EXPR && !sem_expr_decodes(&row->cfa.expr))
        return true;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_rule *rule = &row->rules[i].rule;
        if ((rule->kind == SEM_RULE_EXPRESSION ||
             rule->kind == SEM_RULE_VAL_EXPRESSION) &&
            !sem_expr_decodes(&rule->expr))
            return true;
    }
    return false;
}

/* The reference failed evaluating an expression that does not decode
 * (an unknown operation, a truncated operand), or failed on an earlier
 * operation of a row where an expression does not decode in full; libdw,
 * which decodes each whole expression when it reads the rule, calls the
 * frame invalid DWARF. */
bool engine_deviation_libdw_expression_decoded_with_rule(
    const struct engine_mismatch *m)
{
    const char *expected = m->expected->diag.message;
    const char *got = m->got->diag.message;
    if (m->engine != ENGINE_libdw || m->item != ENGINE_ITEM_STATUS ||
        m->expected->status != CFI_E_EXPR ||
        m->got->status != CFI_E_MALFORMED || !expected || !got ||
        strcmp(got, "invalid DWARF") != 0)
        return false;
    return !strcmp(expected, "unknown operation") ||
           !strcmp(expected, "truncated expression operand") ||
           (m->row && row_has_undecodable(m->row));
}

/* set_loc to a location before the current one (or to it): the IL fails
 * there, libdw runs it and goes on. A location past the FDE's end is
 * never run for a PC inside the FDE: *-stops-at-lookup-pc explains it. */
bool engine_deviation_libdw_location_backwards(const struct engine_mismatch *m)
{
    static const enum sem_opcode set_loc[] = {SEM_CFA_set_loc};
    return engine_deviation_accepts(m, ENGINE_libdw, false, set_loc,
                                    sizeof set_loc / sizeof set_loc[0]);
}

/* The FDE's CIE says addresses are 4 bytes (version 4's address_size):
 * libdw finds no FDE where the IL found this one. */
bool engine_deviation_libdw_address_size_4(const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libdw && m->item == ENGINE_ITEM_STATUS &&
           m->fde && m->fde->cie && m->fde->cie->address_size == 4 &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE;
}

/* dwarf_next_cfi.c takes a zero length word as the end of .debug_frame. */
bool engine_deviation_libdw_zero_length(const struct engine_mismatch *m)
{
    return engine_deviation_stops_at_zero_length(m, ENGINE_libdw);
}

/* The caller's PC where the reference's RA_SIGN_STATE says the return
 * address is signed: the IL strips the column's value (or, the state
 * not being a value, has no PC), libdw's PC is the column's value as it
 * is, the same value the IL gives the column. */
bool engine_deviation_libdw_no_pac_strip(const struct engine_mismatch *m)
{
    if (!engine_deviation_reg_item(m, ENGINE_libdw) || !m->fde ||
        !m->fde->cie)
        return false;
    const struct cfi_arch *arch = m->fde->cie->arch;
    uint64_t column = m->fde->cie->ra_column;
    if (arch->ra_state == CFI_NO_RA_STATE || m->reg != arch->pc ||
        column == arch->pc || column >= CFI_NREGS)
        return false;
    const struct cfi_regs *want = &m->expected->caller;
    const struct cfi_regs *got = &m->got->caller;
    unsigned ra = (unsigned)column, state = arch->ra_state;
    bool signed_state = want->status[state] != CFI_REG_VALUE ||
                        want->value[state] != CFI_RA_NOT_SIGNED;
    return signed_state && want->status[ra] == CFI_REG_VALUE &&
           got->status[ra] == CFI_REG_VALUE &&
           got->value[ra] == want->value[ra] &&
           got->status[arch->pc] == CFI_REG_VALUE &&
           got->value[arch->pc] == want->value[ra];
}

static const enum sem_opcode ra_state_ops[] = {
    SEM_CFA_AARCH64_set_ra_state, SEM_CFA_AARCH64_negate_ra_state_with_pc};

/* The AArch64 opcodes 0x2b (set_ra_state) and 0x2c
 * (negate_ra_state_with_pc) ran: libdw has no case for them and fails
 * the row with "invalid CFI", whatever the IL's row gives there, or
 * where the IL rejects the FDE at one of them (a reserved state),
 * whatever class the IL gives its error. */
bool engine_deviation_libdw_aarch64_ra_state_ops(
    const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libdw || m->item != ENGINE_ITEM_STATUS ||
        !fde_of(m, &cfi_arch_aarch64) ||
        m->expected->status == m->got->status ||
        m->got->status != CFI_E_MALFORMED)
        return false;
    if (m->translation != CFI_OK)
        return engine_deviation_il_fails_at(m, ra_state_ops, 2);
    return m->row &&
           (engine_deviation_runs(m, SEM_CFA_AARCH64_set_ra_state) ||
            engine_deviation_runs(m, SEM_CFA_AARCH64_negate_ra_state_with_pc));
}

/* The IL rejects the FDE at a negate_ra_state (0x2d) that libdw runs
 * for the lookup PC, and libdw, running it as nothing, unwinds. */
bool engine_deviation_libdw_negate_ra_state_unchecked(
    const struct engine_mismatch *m)
{
    static const enum sem_opcode negate[] = {SEM_CFA_GNU_window_save};
    return m->engine == ENGINE_libdw && m->item == ENGINE_ITEM_STATUS &&
           fde_of(m, &cfi_arch_aarch64) && m->got->status == CFI_OK &&
           engine_deviation_il_fails_at(m, negate, 1);
}

/* A row with no CFA rule (the CIE defines none): the IL says malformed,
 * libdw takes the CFA its AArch64 back end starts with, x30 + 0: the
 * callee's x30, or the error of reading it when the request leaves it
 * unknown. */
bool engine_deviation_libdw_aarch64_abi_cfa_x30(
    const struct engine_mismatch *m)
{
    const unsigned lr = cfi_arch_aarch64.ra_column;
    const struct cfi_regs *callee = m->request->callee;
    if (m->engine != ENGINE_libdw || m->item != ENGINE_ITEM_STATUS ||
        !fde_of(m, &cfi_arch_aarch64) || !m->row ||
        m->row->cfa.kind != SEM_CFA_RULE_INVALID ||
        m->expected->status != CFI_E_MALFORMED)
        return false;
    if (callee->status[lr] == CFI_REG_VALUE)
        return m->got->status == CFI_OK && m->got->cfa == callee->value[lr];
    return m->got->status == CFI_E_REG_UNKNOWN && m->got->diag.reg == (int)lr;
}

/* The .eh_frame_hdr lookup (libdw/fde.c __libdw_find_fde) gives another FDE
 * than .eh_frame holds for the lookup PC. */
bool engine_deviation_libdw_trusts_eh_frame_hdr(
    const struct engine_mismatch *m)
{
    return engine_deviation_trusts_eh_frame_hdr(m, ENGINE_libdw);
}

/* Appends ULEB128 `value` at out[n]: the new length. */
static size_t put_uleb(uint8_t *out, size_t n, uint64_t value)
{
    do {
        uint8_t byte = value & 0x7f;
        value >>= 7;
        out[n++] = byte | (value ? 0x80 : 0);
    } while (value);
    return n;
}

/* libdw's reading of DW_CFA_GNU_window_save off AArch64 (libdw/cfi.c
 * execute_cfi, SPARC's register window): registers 8..15 get
 * register(r + 16), registers 16..31 are saved at CFA + (r - 16) * 8 in
 * an ELFCLASS64 file. Written as DW_CFA_register and DW_CFA_expression
 * (DW_OP_plus_uconst on the CFA pushed): the same rules, whatever the
 * CIE's data alignment factor. */
static size_t window_save_as_sparc(const struct engine_mismatch *m,
                                   const struct sem_insn *insn, uint8_t *out)
{
    (void)m;
    if (insn->opcode != SEM_CFA_GNU_window_save)
        return 0;
    size_t n = 0;
    for (uint8_t reg = 8; reg < 16; reg++) {
        out[n++] = 0x09; /* DW_CFA_register */
        out[n++] = reg;
        out[n++] = (uint8_t)(reg + 16);
    }
    for (uint8_t reg = 16; reg < 32; reg++) {
        uint8_t op[4] = {0x23}; /* DW_OP_plus_uconst */
        size_t len = put_uleb(op, 1, (uint64_t)(reg - 16) * 8);
        out[n++] = 0x10; /* DW_CFA_expression */
        out[n++] = reg;
        out[n++] = (uint8_t)len;
        memcpy(out + n, op, len);
        n += len;
    }
    return n;
}

static const enum sem_opcode window_save[] = {SEM_CFA_GNU_window_save};

/* The IL rejects an x86-64 FDE at a window_save that libdw runs for the
 * lookup PC, and libdw's answer is what the row gives with each
 * window_save read as SPARC's rules. */
bool engine_deviation_libdw_window_save_sparc(const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libdw || !fde_of(m, &cfi_arch_x86_64) ||
        m->translation == CFI_OK || !engine_deviation_item_differs(m) ||
        !engine_deviation_il_fails_at(m, window_save, 1))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_expanded(m, window_save_as_sparc,
                                                    model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

/* def_cfa_register / def_cfa_offset{,_sf} when the CFA rule is not
 * register+offset (none yet, or an expression): the IL rejects the FDE;
 * libdw/cfi.c require_cfa_offset makes the CFA rule cfa_invalid, a state
 * a later def_cfa, def_cfa_sf or def_cfa_expression replaces. Where one
 * does before the lookup PC, libdw's answer is the row's with the
 * instruction read as nops (with none, both say malformed). */
bool engine_deviation_libdw_cfa_ops_invalidate(const struct engine_mismatch *m)
{
    static const enum sem_opcode cfa_rule_ops[] = {
        SEM_CFA_def_cfa_register, SEM_CFA_def_cfa_offset,
        SEM_CFA_def_cfa_offset_sf};
    if (m->engine != ENGINE_libdw || m->item != ENGINE_ITEM_STATUS ||
        !engine_deviation_item_differs(m) ||
        !engine_deviation_il_fails_at(m, cfa_rule_ops, 3))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_faulty_as_nops(m, model) &&
                     model->status == CFI_OK &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}
