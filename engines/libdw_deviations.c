/* SPDX-License-Identifier: MIT */
/* libdw_deviations.c — the predicates of elfutils libdw's entries in the
 * deviation table (engines/deviations.c). */
#include "deviations_internal.h"

#include <stdlib.h>
#include <string.h>

/* rax (0) with no rule: libdw gives the callee's rax (same_value); rbx
 * (3) with no rule: libdw gives undefined. */
bool engine_deviation_libdw_abi_rax_for_rbx(const struct engine_mismatch *m)
{
    if (!engine_deviation_reg_item(m, ENGINE_libdw) ||
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

/* The reference failed evaluating the CFA expression, which does not
 * decode (an unknown operation, a truncated operand); libdw, which
 * decodes each expression when it reads the rule, calls the frame
 * invalid DWARF. */
bool engine_deviation_libdw_expression_decoded_with_rule(
    const struct engine_mismatch *m)
{
    const char *expected = m->expected->diag.message;
    const char *got = m->got->diag.message;
    return m->engine == ENGINE_libdw && m->item == ENGINE_ITEM_STATUS &&
           m->expected->status == CFI_E_EXPR &&
           m->got->status == CFI_E_MALFORMED && expected && got &&
           (!strcmp(expected, "unknown operation") ||
            !strcmp(expected, "truncated expression operand")) &&
           !strcmp(got, "invalid DWARF");
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
