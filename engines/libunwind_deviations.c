/* SPDX-License-Identifier: MIT */
/* libunwind_deviations.c — the predicates of libunwind's entries in the
 * deviation table (engines/deviations.c), most of them through the model of
 * its step (engines/libunwind_model.h): an entry matches when its behaviour
 * is needed to give libunwind's answer. */
#include "deviations_internal.h"

#include <stdlib.h>
#include <string.h>

#include "engines/libunwind_model.h"

/* ------------------------------------------------------------------ */
/* Its step                                                             */
/* ------------------------------------------------------------------ */

/* The behaviours the model always applies: those the adapter answers
 * for (a fault on part of a word is not comparable, a trap refused). */
#define LU_BASE (ENGINE_LU_WORD_READS | ENGINE_LU_DIV_TRAP)

/* Whether the model with `quirks` answers the item as libunwind did. */
static bool libunwind_model_agrees(const struct engine_mismatch *m,
                                   unsigned quirks, struct cfi_frame *model)
{
    bool traps;
    engine_libunwind_model(m->row, (unsigned)m->fde->cie->ra_column,
                           m->request, quirks, model, &traps);
    return engine_deviation_same_item(m, model);
}

/* libunwind's step as engine_libunwind_model describes it, with every
 * behaviour, answers the item as libunwind did, and `quirk` is one of
 * its causes: without it the model answers otherwise, or it alone
 * (beside LU_BASE) turns cfi.h's answer into libunwind's (two behaviours
 * may each explain an item: an address shifted by a huge count mod 64
 * instead of to 0, where 0 is no location). */
static bool libunwind_needs(const struct engine_mismatch *m, unsigned quirk)
{
    if (m->engine != ENGINE_libunwind || !m->row || !m->fde ||
        !engine_deviation_item_differs(m))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained =
        model && libunwind_model_agrees(m, ENGINE_LU_QUIRKS_ALL, model) &&
        (!libunwind_model_agrees(m, ENGINE_LU_QUIRKS_ALL & ~quirk, model) ||
         (libunwind_model_agrees(m, LU_BASE | quirk, model) &&
          !libunwind_model_agrees(m, LU_BASE, model)));
    free(model);
    return explained;
}

bool engine_deviation_libunwind_deref_size(const struct engine_mismatch *m)
{
    return libunwind_needs(m, ENGINE_LU_DEREF_SIZE);
}

bool engine_deviation_libunwind_div_by_zero(const struct engine_mismatch *m)
{
    return libunwind_needs(m, ENGINE_LU_DIV_BY_ZERO);
}

bool engine_deviation_libunwind_shift_count(const struct engine_mismatch *m)
{
    return libunwind_needs(m, ENGINE_LU_SHIFT_COUNT);
}

bool engine_deviation_libunwind_cfa_zero_pushed(const struct engine_mismatch *m)
{
    return libunwind_needs(m, ENGINE_LU_CFA_ZERO_PUSHED);
}

bool engine_deviation_libunwind_null_address(const struct engine_mismatch *m)
{
    return libunwind_needs(m, ENGINE_LU_NULL_ADDRESS);
}

bool engine_deviation_libunwind_expressions_first(
    const struct engine_mismatch *m)
{
    return m->item == ENGINE_ITEM_STATUS &&
           libunwind_needs(m, ENGINE_LU_EXPRESSIONS_FIRST);
}

/* A caller-saved register with no rule: the IL says undefined (the ABI
 * default), libunwind the callee's register. */
bool engine_deviation_libunwind_no_undefined_default(
    const struct engine_mismatch *m)
{
    if (engine_deviation_reg_item(m, ENGINE_libunwind) &&
        cfi_arch_default(m->file->arch, m->reg) == CFI_DEFAULT_UNDEFINED &&
        engine_deviation_has_no_rule(m, m->reg) &&
        engine_deviation_is_undefined(m->expected, m->reg) &&
        engine_deviation_is_callee_reg(m->got, m->request, m->reg, m->reg))
        return true;
    /* Its consequences: the return address from such a register (a
     * return address column other than 16), the IP then read from an
     * unknown register. */
    return libunwind_needs(m, ENGINE_LU_NO_RULE_SAME);
}

static bool drop_rsp_rule(struct sem_reg_rule *rule)
{
    return rule->reg != CFI_REG_RSP;
}

/* The IL's answer to the request when rsp's rule is left out of the row,
 * as libunwind leaves it out. */
static enum cfi_status status_without_rsp_rule(const struct engine_mismatch *m)
{
    struct cfi_frame *frame = malloc(sizeof *frame);
    if (!frame || !engine_deviation_eval_edited_row(m, drop_rsp_rule, frame)) {
        free(frame);
        return CFI_E_NOMEM;
    }
    enum cfi_status status = frame->status;
    free(frame);
    return status;
}

/* rsp has a rule; libunwind's caller rsp is its CFA all the same. Seen on
 * rsp's value, and on the status when only rsp's rule fails (its saved
 * slot is unreadable): libunwind never reads that slot. */
bool engine_deviation_libunwind_rsp_is_cfa(const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libunwind || !m->row)
        return false;
    /* rsp as the return address column: the IP is read from rsp's
     * location, the callee's rsp when it has no rule. */
    if (libunwind_needs(m, ENGINE_LU_RSP_IS_CFA))
        return true;
    if (engine_deviation_has_no_rule(m, CFI_REG_RSP))
        return false;
    if (m->item == ENGINE_ITEM_STATUS)
        return m->got->status == CFI_OK &&
               m->expected->status == CFI_E_MEMORY &&
               status_without_rsp_rule(m) == CFI_OK;
    return engine_deviation_reg_item(m, ENGINE_libunwind) &&
           m->reg == CFI_REG_RSP &&
           m->got->caller.status[CFI_REG_RSP] == CFI_REG_VALUE &&
           m->got->caller.value[CFI_REG_RSP] == m->got->cfa;
}

/* The caller's rip comes from a callee register (register rule, or
 * same_value) that the request left unknown: cfi.h says the caller's rip
 * is unknown; libunwind needs it as a value and fails reading that
 * register. */
bool engine_deviation_libunwind_needs_caller_rip(
    const struct engine_mismatch *m)
{
    if (m->item == ENGINE_ITEM_STATUS &&
        libunwind_needs(m, ENGINE_LU_IP_NEEDS_VALUE))
        return true;
    if (m->engine != ENGINE_libunwind || m->item != ENGINE_ITEM_STATUS ||
        !m->row || m->expected->status != CFI_OK ||
        m->got->status != CFI_E_REG_UNKNOWN ||
        m->expected->caller.status[CFI_REG_RIP] != CFI_REG_UNKNOWN)
        return false;
    struct sem_rule rip = sem_row_rule(m->row, CFI_REG_RIP);
    int source = rip.kind == SEM_RULE_REGISTER ? (int)rip.reg
               : rip.kind == SEM_RULE_SAME_VALUE ? CFI_REG_RIP : -1;
    return source >= 0 && source == m->got->diag.reg;
}

/* A val_offset or val_offset_sf ran: libunwind skips the opcode byte and
 * reads its operands as instructions, so anything may differ. */
bool engine_deviation_libunwind_val_offset_unknown(
    const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libunwind &&
           (engine_deviation_runs(m, SEM_CFA_val_offset) ||
            engine_deviation_runs(m, SEM_CFA_val_offset_sf));
}

bool engine_deviation_libunwind_stops_at_lookup_pc(
    const struct engine_mismatch *m)
{
    return engine_deviation_stops_at_lookup_pc(m, ENGINE_libunwind);
}

bool engine_deviation_libunwind_cfa_ops_on_expression(
    const struct engine_mismatch *m)
{
    return engine_deviation_accepts_cfa_ops_on_expression(m, ENGINE_libunwind);
}

bool engine_deviation_libunwind_cie_restore_and_location(
    const struct engine_mismatch *m)
{
    return engine_deviation_accepts_cie_restore_and_location(
        m, ENGINE_libunwind);
}

/* rbp is undefined by the row: libunwind ends the stack (rip undefined)
 * where the IL gives rip a value. */
bool engine_deviation_libunwind_undefined_rbp_ends_stack(
    const struct engine_mismatch *m)
{
    struct sem_rule rule;
    if (engine_deviation_reg_item(m, ENGINE_libunwind) &&
        m->reg == CFI_REG_RIP && engine_deviation_row_rule(m, CFI_REG_RBP,
                                                           &rule) &&
        rule.kind == SEM_RULE_UNDEFINED &&
        m->expected->caller.status[CFI_REG_RIP] == CFI_REG_VALUE &&
        engine_deviation_is_undefined(m->got, CFI_REG_RIP))
        return true;
    return m->item == ENGINE_ITEM_REG && m->reg == CFI_REG_RIP &&
           libunwind_needs(m, ENGINE_LU_UNDEFINED_RBP_ENDS);
}

/* The return address column is not 16: libunwind's caller rip is the IP
 * it read from that column's location, and column 16's own rule is not
 * read (its slot's fault goes unseen). */
bool engine_deviation_libunwind_rip_is_ip(const struct engine_mismatch *m)
{
    return libunwind_needs(m, ENGINE_LU_RIP_IS_IP);
}

/* register(r, m) with m < r and m given a rule of its own: libunwind
 * takes m's new location, i.e. the caller's m, not this frame's m. Seen
 * on r, and on the status when that location fails (the caller's rip
 * from an unknown register, a read). */
bool engine_deviation_libunwind_register_new_location(
    const struct engine_mismatch *m)
{
    if (m->item == ENGINE_ITEM_STATUS)
        return libunwind_needs(m, ENGINE_LU_REGISTER_NEW_LOCATION);
    struct sem_rule rule, source;
    if (!engine_deviation_reg_item(m, ENGINE_libunwind) ||
        !engine_deviation_row_rule(m, m->reg, &rule) ||
        rule.kind != SEM_RULE_REGISTER || rule.reg >= m->reg ||
        !engine_deviation_row_rule(m, rule.reg, &source) ||
        source.kind == SEM_RULE_UNSPECIFIED ||
        source.kind == SEM_RULE_SAME_VALUE)
        return false;
    const struct cfi_regs *want = &m->expected->caller, *got = &m->got->caller;
    return got->status[m->reg] == want->status[rule.reg] &&
           (got->status[m->reg] != CFI_REG_VALUE ||
            got->value[m->reg] == want->value[rule.reg]);
}

/* ------------------------------------------------------------------ */
/* What it reads                                                        */
/* ------------------------------------------------------------------ */

/* The FDE that covers the lookup PC is in .debug_frame: libunwind, which
 * reads only .eh_frame (through .eh_frame_hdr), finds none. */
bool engine_deviation_libunwind_no_debug_frame(const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libunwind &&
           m->item == ENGINE_ITEM_STATUS && m->fde &&
           m->fde->section == CFI_DEBUG_FRAME &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE;
}

/* The IL's error is an expression stack underflow (semantics/
 * expr_eval.c's message), libunwind's the malformed input it reports
 * for every bad operand. */
bool engine_deviation_libunwind_underflow_malformed(
    const struct engine_mismatch *m)
{
    const char *message = m->expected->diag.message;
    return m->engine == ENGINE_libunwind &&
           m->item == ENGINE_ITEM_STATUS &&
           m->expected->status == CFI_E_EXPR && message &&
           strcmp(message, "expression stack underflow") == 0 &&
           m->got->status == CFI_E_MALFORMED;
}

/* The .eh_frame_hdr lookup (dwarf/Gfind_proc_info-lsb.c lookup) gives
 * another FDE than .eh_frame holds for the lookup PC. */
bool engine_deviation_libunwind_trusts_eh_frame_hdr(
    const struct engine_mismatch *m)
{
    return engine_deviation_trusts_eh_frame_hdr(m, ENGINE_libunwind);
}

/* Whether `pc` lies inside the span of the file's executable segments,
 * the [start_ip, end_ip) of the table the caller gives libunwind
 * (engines/oracle_libunwind.c text_range, as perf and libunwind's own
 * dwarf_callback set it from the text segment). */
static bool in_text_span(const struct cfi_file *file, uint64_t pc)
{
    uint64_t begin = UINT64_MAX, end = 0;
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        if (!s->executable)
            continue;
        if (s->vaddr < begin)
            begin = s->vaddr;
        if (s->vaddr + s->memsz > end)
            end = s->vaddr + s->memsz;
    }
    return pc >= begin && pc < end;
}

/* The lookup PC lies outside the executable segments: the remote table
 * is not asked (dwarf_search_unwind_table asserts the range), so
 * libunwind says "no FDE" where an FDE of .eh_frame covers the PC. */
bool engine_deviation_libunwind_pc_outside_text(
    const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libunwind &&
           m->item == ENGINE_ITEM_STATUS && m->file && m->fde &&
           m->fde->section == CFI_EH_FRAME &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE &&
           !in_text_span(m->file,
                         cfi_lookup_pc(m->request->pc,
                                       m->request->caller_frame));
}
