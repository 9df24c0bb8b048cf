/* SPDX-License-Identifier: MIT */
/* validate/v1.c — the v1 ABIs: the reference restricted to what v1
 * evaluates, the comparison of a v1 answer with it, and the frame that
 * shows a v1 answer (validate.h). */
#include "internal.h"

#include <string.h>

static enum cfi_status frame_fail(struct cfi_frame *frame,
                                  enum cfi_status status,
                                  const struct cfi_diag *diag,
                                  const char *message)
{
    frame->status = status;
    frame->diag = diag ? *diag
                       : (struct cfi_diag){status, message, CFI_NO_OFFSET, -1};
    return status;
}

/* The registers of v1's context. */
static bool v1_carries(uint32_t reg)
{
    return reg == CFI_REG_RIP || reg == CFI_REG_RSP || reg == CFI_REG_RBP ||
           reg == CFI_REG_RBX;
}

/* The caller's rip is the return address column's value (DWARF 5 §6.4.1;
 * cfi.h step 6): that column's rule, as a rule for rip. A column without
 * rule has its ABI default; same_value of the column is register(column).
 * A column the IL evaluator does not apply (>= CFI_NREGS) leaves rip's. */
static struct sem_rule return_address_rule(const struct cfi_arch *arch,
                                           const struct sem_row *row,
                                           uint64_t ra_column)
{
    if (ra_column == CFI_REG_RIP || ra_column >= CFI_NREGS)
        return sem_row_rule(row, CFI_REG_RIP);
    unsigned ra = (unsigned)ra_column;
    struct sem_rule rule = sem_row_rule(row, ra);
    struct sem_rule same = {SEM_RULE_REGISTER, ra, 0, {0}};
    if (rule.kind == SEM_RULE_SAME_VALUE)
        return same;
    if (rule.kind != SEM_RULE_UNSPECIFIED)
        return rule;
    switch (cfi_arch_default(arch, ra)) {
    case CFI_DEFAULT_SAME_VALUE:
        return same;
    case CFI_DEFAULT_CFA:
        return (struct sem_rule){SEM_RULE_VAL_OFFSET, 0, 0, {0}};
    default:
        return (struct sem_rule){SEM_RULE_UNDEFINED, 0, 0, {0}};
    }
}

enum cfi_status validate_v1_reference(const struct sem_file_il *il,
                                      const struct cfi_request *request,
                                      struct cfi_frame *frame)
{
    uint64_t lookup = cfi_lookup_pc(request->pc, request->caller_frame);
    const struct cfi_fde *fde = cfi_file_lookup(il->file, lookup);
    if (!fde)
        return frame_fail(frame, CFI_E_NO_FDE, NULL,
                          "no FDE covers the address");
    size_t index = (size_t)(fde - il->file->fdes);
    if (il->status[index] != CFI_OK)
        return frame_fail(frame, il->status[index], &il->diags[index], NULL);
    const struct sem_range *range = sem_fde_il_find(&il->fdes[index], lookup);
    if (!range)
        return frame_fail(frame, CFI_E_NO_FDE, NULL,
                          "no FDE covers the address");
    struct sem_reg_rule all[3] = {
        {CFI_REG_RBX, sem_row_rule(range->row, CFI_REG_RBX)},
        {CFI_REG_RBP, sem_row_rule(range->row, CFI_REG_RBP)},
        {CFI_REG_RIP, return_address_rule(fde->cie->arch, range->row,
                                         fde->cie->ra_column)}};
    struct sem_reg_rule rules[3];
    uint32_t n = 0;
    static const char *const lacks[3] = {
        "v1 cannot carry it: rbx is a register v1's context lacks",
        "v1 cannot carry it: rbp is a register v1's context lacks",
        "v1 cannot carry it: the return address is a register v1's context "
        "lacks"};
    for (size_t i = 0; i < 3; i++) {
        if (all[i].rule.kind == SEM_RULE_REGISTER &&
            !v1_carries(all[i].rule.reg)) {
            frame_fail(frame, CFI_E_UNSUPPORTED, NULL, lacks[i]);
            frame->diag.reg = (int)all[i].rule.reg;
            return CFI_E_UNSUPPORTED;
        }
        if (all[i].rule.kind != SEM_RULE_UNSPECIFIED)
            rules[n++] = all[i];
    }
    struct sem_row row = {range->row->cfa, n, rules};
    return sem_eval_row(fde->cie->arch, &row, request->callee,
                        request->memory, frame);
}

static const unsigned v1_regs[V1_NREGS] = {CFI_REG_RIP, CFI_REG_RBP,
                                           CFI_REG_RBX};
static const uint8_t v1_flags[V1_NREGS] = {ENGINE_V1_RIP, ENGINE_V1_RBP,
                                           ENGINE_V1_RBX};

void validate_v1_view(const struct cfi_frame *frame,
                      const struct cfi_regs *callee, struct v1_view *view)
{
    memset(view, 0, sizeof *view);
    view->status = frame->status;
    view->cfa = frame->cfa;
    for (unsigned i = 0; i < V1_NREGS; i++) {
        unsigned reg = v1_regs[i];
        if (frame->status == CFI_OK) {
            view->reg_status[i] = frame->caller.status[reg];
            view->reg_value[i] = frame->caller.value[reg];
        }
        view->callee_status[i] = callee->status[reg];
        view->callee_value[i] = callee->value[reg];
    }
}

static void add_item(struct engine_outcome *outcome, enum engine_item item,
                     unsigned reg)
{
    if (outcome->nkept < ENGINE_ITEMS_KEPT)
        outcome->items[outcome->nkept++] =
            (struct engine_item_found){item, reg, NULL};
    outcome->nitems++;
    outcome->nnew++;
}

/* rip: a clear flag is undefined. rbp, rbx: a clear flag is "kept", which
 * agrees with an expected callee value, undefined or unknown. */
static bool v1_reg_agrees(const struct v1_view *e, unsigned i, bool flag,
                          uint64_t value)
{
    if (flag)
        return e->reg_status[i] == CFI_REG_VALUE && e->reg_value[i] == value;
    if (e->reg_status[i] != CFI_REG_VALUE)
        return true;
    return i != V1_RIP && e->callee_status[i] == CFI_REG_VALUE &&
           e->callee_value[i] == e->reg_value[i];
}

void validate_v1_compare(const struct v1_view *expected,
                         const struct engine_v1_context *got, bool faulted,
                         bool crashed, struct engine_outcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    bool got_error = crashed || faulted || (got->flags & ENGINE_V1_ERROR);
    if (crashed || got_error != (expected->status != CFI_OK)) {
        add_item(outcome, ENGINE_ITEM_STATUS, 0);
    } else if (!got_error) {
        if (!(got->flags & ENGINE_V1_RSP) || got->rsp != expected->cfa)
            add_item(outcome, ENGINE_ITEM_CFA, 0);
        const uintptr_t values[V1_NREGS] = {got->rip, got->rbp, got->rbx};
        for (unsigned i = 0; i < V1_NREGS; i++)
            if (!v1_reg_agrees(expected, i, (got->flags & v1_flags[i]) != 0,
                               values[i]))
                add_item(outcome, ENGINE_ITEM_REG, v1_regs[i]);
    }
    outcome->verdict = outcome->nitems ? ENGINE_VERDICT_DIFFER
                                       : ENGINE_VERDICT_AGREE;
}

void validate_v1_frame(const struct engine_v1_context *got, bool faulted,
                       bool crashed, const struct cfi_regs *callee,
                       struct cfi_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (crashed || faulted || (got->flags & ENGINE_V1_ERROR)) {
        frame->status = faulted ? CFI_E_MEMORY : CFI_E_UNSUPPORTED;
        frame->diag.status = frame->status;
        frame->diag.message =
            crashed ? "the call crashed"
            : faulted ? "a read of the eh_elf's deref faulted"
                      : "the eh_elf set its error flag";
        return;
    }
    memset(frame->caller.status, CFI_REG_UNKNOWN, sizeof frame->caller.status);
    frame->cfa = got->rsp;
    if (got->flags & ENGINE_V1_RSP)
        cfi_regs_set(&frame->caller, CFI_REG_RSP, got->rsp);
    else
        frame->caller.status[CFI_REG_RSP] = CFI_REG_UNDEFINED;
    const uintptr_t values[V1_NREGS] = {got->rip, got->rbp, got->rbx};
    for (unsigned i = 0; i < V1_NREGS; i++) {
        unsigned reg = v1_regs[i];
        if (got->flags & v1_flags[i]) {
            cfi_regs_set(&frame->caller, reg, values[i]);
        } else if (i != V1_RIP) {   /* kept: the callee's, as it is */
            frame->caller.status[reg] = callee->status[reg];
            frame->caller.value[reg] = callee->value[reg];
        } else {
            frame->caller.status[reg] = CFI_REG_UNDEFINED;
        }
    }
}
