/* SPDX-License-Identifier: MIT */
/* sframe_deviations.c — the predicates of the sframe engine's entries in
 * the deviation table (engines/deviations.c): what SFrame does not carry. */
#include "deviations_internal.h"

#include <stdlib.h>

static bool carried_by_sframe(struct sem_reg_rule *rule)
{
    return rule->reg == CFI_REG_RBP || rule->reg == CFI_REG_RIP;
}

/* The IL's answer with the rules of every register but rbp and rip left
 * out is the engine's on the item: the difference is a register SFrame
 * does not carry (its saved slot faults, its source is unknown). */
bool engine_deviation_sframe_three_columns(const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_sframe || m->item != ENGINE_ITEM_STATUS ||
        !m->row || !engine_deviation_item_differs(m))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_edited_row(m, carried_by_sframe,
                                                      model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

/* A caller frame in a row whose CFA is an expression (the PLT's, which
 * reads rip): SFrame's pc-mask FDE matches the lookup PC, PC-1, where the
 * expression reads the callee's rip, PC. The engine's answer is the IL's
 * row evaluated with rip = PC-1. */
bool engine_deviation_sframe_pc_mask_lookup_pc(const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_sframe || !m->row ||
        !m->request->caller_frame || m->row->cfa.kind != SEM_CFA_RULE_EXPR ||
        !engine_deviation_item_differs(m))
        return false;
    struct cfi_regs *callee = malloc(sizeof *callee);
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = false;
    if (callee && model) {
        *callee = *m->request->callee;
        cfi_regs_set(callee, CFI_REG_RIP, m->request->pc - 1);
        struct sem_reg_rule rules[CFI_NREGS];
        struct sem_row row = {m->row->cfa, 0, rules};
        for (uint32_t i = 0; i < m->row->nrules && i < CFI_NREGS; i++)
            if (carried_by_sframe((struct sem_reg_rule *)&m->row->rules[i]))
                rules[row.nrules++] = m->row->rules[i];
        sem_eval_row(m->file->arch, &row, callee, m->request->memory, model);
        explained = engine_deviation_same_item(m, model);
    }
    free(callee);
    free(model);
    return explained;
}
