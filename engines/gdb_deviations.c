/* SPDX-License-Identifier: MIT */
/* gdb_deviations.c — the predicates of gdb's entries in the deviation
 * table (engines/deviations.c). */
#include "deviations_internal.h"

#include "interp/interp.h"

/* A register the row gives no rule, undefined by the x86-64 ABI (a
 * caller-saved one): the IL says undefined, gdb the callee's value. */
bool engine_deviation_gdb_unspecified_same_value(
    const struct engine_mismatch *m)
{
    return engine_deviation_reg_item(m, ENGINE_gdb) && m->fde &&
           m->fde->cie && m->fde->cie->arch == &cfi_arch_x86_64 &&
           engine_deviation_has_no_rule(m, m->reg) &&
           engine_deviation_is_undefined(m->expected, m->reg) &&
           engine_deviation_is_callee_reg(m->got, m->request, m->reg, m->reg);
}

static bool keep_rule(struct sem_reg_rule *rule)
{
    (void)rule;
    return true;
}

/* A CIE whose return address column is not 16: the IL's caller rip is
 * that column's value (cfi.h step 6), gdb's is column 16's own rule, as
 * the row without step 6 gives it. */
bool engine_deviation_gdb_rip_own_column(const struct engine_mismatch *m)
{
    if (!engine_deviation_reg_item(m, ENGINE_gdb) || m->reg != 16 ||
        !m->fde || !m->fde->cie || m->fde->cie->arch != &cfi_arch_x86_64 ||
        m->fde->cie->ra_column == 16)
        return false;
    struct cfi_frame own;
    return engine_deviation_eval_edited_row(m, keep_rule, &own) &&
           own.status == CFI_OK && engine_deviation_same_item(m, &own);
}

/* A caller frame whose FDE (at PC-1) has the 'S' augmentation: gdb
 * looks its row up at PC, as it does for any frame of its own signal
 * frame type; cfi.h looks up at PC only the frame above a signal frame.
 * The model: the same request as an innermost frame (lookup at PC),
 * through the direct interpreter. */
bool engine_deviation_gdb_signal_frame_at_pc(const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_gdb || !m->request->caller_frame || !m->fde ||
        !m->fde->cie || !m->fde->cie->signal_frame ||
        m->fde->cie->arch != &cfi_arch_x86_64)
        return false;
    struct cfi_request at_pc = *m->request;
    at_pc.caller_frame = false;
    struct cfi_frame model;
    interp_unwind(m->file, &at_pc, &model);
    return engine_deviation_same_item(m, &model);
}

/* The IL rejects the FDE for an instruction after the lookup PC, which
 * gdb never runs. */
bool engine_deviation_gdb_stops_at_lookup_pc(const struct engine_mismatch *m)
{
    return engine_deviation_stops_at_lookup_pc(m, ENGINE_gdb);
}

/* def_cfa_register / def_cfa_offset on an expression CFA, which gdb
 * runs: it switches back to register+offset. */
bool engine_deviation_gdb_cfa_ops_on_expression(
    const struct engine_mismatch *m)
{
    return engine_deviation_accepts_cfa_ops_on_expression(m, ENGINE_gdb);
}
