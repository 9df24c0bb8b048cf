/* SPDX-License-Identifier: MIT */
/* eval.c — the IL evaluator: (row, callee registers, memory) → caller
 * registers, and unwinding one frame from prepared IL (cfi.h, steps 1-6).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sem.h"

static enum cfi_status frame_fail(struct cfi_frame *frame,
                                  enum cfi_status status, const char *message)
{
    cfi_fail(&frame->diag, status, CFI_NO_OFFSET, message);
    frame->status = status;
    return status;
}

/* A callee register that must hold a value (the CFA's register). */
static enum cfi_status read_callee(const struct cfi_regs *callee, unsigned reg,
                                   uint64_t *value, struct cfi_frame *frame)
{
    if (callee->status[reg] != CFI_REG_VALUE) {
        frame_fail(frame, CFI_E_REG_UNKNOWN,
                   "CFA rule reads a register whose value is unknown");
        frame->diag.reg = (int)reg;
        return CFI_E_REG_UNKNOWN;
    }
    *value = callee->value[reg];
    return CFI_OK;
}

static void trace_cfa(const struct sem_trace *trace, const struct sem_cfa *cfa,
                      bool has_base, uint64_t base, enum cfi_status status,
                      const struct cfi_frame *frame)
{
    if (!trace || !trace->cfa)
        return;
    struct sem_trace_cfa event = {cfa, has_base, base, status, &frame->diag,
                                  frame->cfa};
    trace->cfa(trace->env, &event);
}

/* Step 4: the CFA. */
static enum cfi_status eval_cfa(const struct sem_cfa *cfa,
                                const struct cfi_regs *callee,
                                struct cfi_memory memory,
                                struct cfi_frame *frame,
                                const struct sem_trace *trace)
{
    uint64_t base = 0;
    enum cfi_status status;
    switch (cfa->kind) {
    case SEM_CFA_RULE_REG_OFFSET:
        status = read_callee(callee, cfa->reg, &base, frame);
        if (status == CFI_OK)
            frame->cfa = base + (uint64_t)cfa->offset;
        trace_cfa(trace, cfa, status == CFI_OK, base, status, frame);
        return status;
    case SEM_CFA_RULE_EXPR:
        status = sem_eval_expr_traced(&cfa->expr, callee, memory, false, 0,
                                      &frame->cfa, &frame->diag, trace);
        trace_cfa(trace, cfa, false, 0, status, frame);
        return frame->status = status;
    case SEM_CFA_RULE_INVALID:
        frame_fail(frame, CFI_E_MALFORMED, "row has no CFA rule");
        trace_cfa(trace, cfa, false, 0, CFI_E_MALFORMED, frame);
        return CFI_E_MALFORMED;
    }
    return frame_fail(frame, CFI_E_INTERNAL,
                      "internal error: a CFA rule of no kind");
}

/* The ABI default of every register (the rules then override some):
 * from arch->ndefaults up, every register's is "undefined". */
static void apply_defaults(const struct cfi_arch *arch,
                           const struct cfi_regs *callee, uint64_t cfa,
                           struct cfi_regs *caller)
{
    memset(caller->value, 0, sizeof caller->value);
    memset(caller->status, CFI_REG_UNDEFINED, sizeof caller->status);
    for (unsigned reg = 0; reg < arch->ndefaults; reg++) {
        enum cfi_abi_default rule = cfi_arch_default(arch, reg);
        if (rule == CFI_DEFAULT_CFA) {
            caller->value[reg] = cfa;
            caller->status[reg] = CFI_REG_VALUE;
        } else if (rule == CFI_DEFAULT_ZERO) {
            caller->status[reg] = CFI_REG_VALUE;
        } else if (rule == CFI_DEFAULT_SAME_VALUE) {
            caller->value[reg] = callee->value[reg];
            caller->status[reg] = callee->status[reg];
        }
    }
}

static enum cfi_status load(struct cfi_memory memory, uint64_t address,
                            uint64_t *value, struct cfi_frame *frame)
{
    if (memory.read(memory.env, address, 8, value) != CFI_OK)
        return frame_fail(frame, CFI_E_MEMORY,
                          "saved register is in unreadable memory");
    return CFI_OK;
}

static void trace_reg(const struct sem_trace *trace,
                      const struct cfi_arch *arch, unsigned reg,
                      const struct sem_rule *rule, bool has_address,
                      uint64_t address, enum cfi_status status,
                      const struct cfi_frame *frame)
{
    if (!trace || !trace->reg)
        return;
    struct sem_trace_reg event = {
        .reg = reg, .rule = rule, .abi_default = cfi_arch_default(arch, reg),
        .has_address = has_address, .address = address, .status = status,
        .diag = &frame->diag, .caller_status = frame->caller.status[reg],
        .caller_value = frame->caller.value[reg],
    };
    trace->reg(trace->env, &event);
}

/* The ABI defaults of the registers that have no rule, as applied. */
static void trace_defaults(const struct sem_trace *trace,
                           const struct cfi_arch *arch,
                           const struct sem_row *row,
                           const struct cfi_frame *frame)
{
    static const struct sem_rule none = {.kind = SEM_RULE_UNSPECIFIED};
    for (unsigned reg = 0; reg < arch->nreported; reg++)
        if (sem_row_rule(row, reg).kind == SEM_RULE_UNSPECIFIED)
            trace_reg(trace, arch, reg, &none, false, 0, CFI_OK, frame);
}

static enum cfi_status eval_rule(const struct sem_reg_rule *entry,
                                 const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 struct cfi_frame *frame,
                                 const struct sem_trace *trace,
                                 uint64_t *address);

/* Step 5 for one register that has a rule, told to the sink. */
static enum cfi_status eval_rule_traced(const struct cfi_arch *arch,
                                        const struct sem_reg_rule *entry,
                                        const struct cfi_regs *callee,
                                        struct cfi_memory memory,
                                        struct cfi_frame *frame,
                                        const struct sem_trace *trace)
{
    uint64_t address = UINT64_MAX;
    enum cfi_status status = eval_rule(entry, callee, memory, frame, trace,
                                       &address);
    enum sem_rule_kind kind = entry->rule.kind;
    bool has_address = (kind == SEM_RULE_OFFSET ||
                        kind == SEM_RULE_EXPRESSION) && address != UINT64_MAX;
    trace_reg(trace, arch, entry->reg, &entry->rule, has_address, address,
              status, frame);
    return status;
}

static enum cfi_status eval_rule(const struct sem_reg_rule *entry,
                                 const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 struct cfi_frame *frame,
                                 const struct sem_trace *trace,
                                 uint64_t *address)
{
    const struct sem_rule *rule = &entry->rule;
    uint64_t *value = &frame->caller.value[entry->reg];
    uint8_t *status = &frame->caller.status[entry->reg];
    enum cfi_status result = CFI_OK;
    switch (rule->kind) {
    case SEM_RULE_UNSPECIFIED:
        return CFI_OK; /* the default stays */
    case SEM_RULE_UNDEFINED:
        *value = 0;
        *status = CFI_REG_UNDEFINED;
        return CFI_OK;
    case SEM_RULE_SAME_VALUE:
        *value = callee->value[entry->reg];
        *status = callee->status[entry->reg];
        return CFI_OK;
    case SEM_RULE_REGISTER:
        *value = callee->value[rule->reg];
        *status = callee->status[rule->reg];
        return CFI_OK;
    case SEM_RULE_OFFSET:
        *address = frame->cfa + (uint64_t)rule->offset;
        result = load(memory, *address, value, frame);
        break;
    case SEM_RULE_VAL_OFFSET:
        *value = frame->cfa + (uint64_t)rule->offset;
        break;
    case SEM_RULE_EXPRESSION:
        result = sem_eval_expr_traced(&rule->expr, callee, memory, true,
                                      frame->cfa, address, &frame->diag, trace);
        if (result == CFI_OK)
            result = load(memory, *address, value, frame);
        break;
    case SEM_RULE_VAL_EXPRESSION:
        result = sem_eval_expr_traced(&rule->expr, callee, memory, true,
                                      frame->cfa, value, &frame->diag, trace);
        break;
    default:
        return frame_fail(frame, CFI_E_INTERNAL,
                          "internal error: a register rule of no kind");
    }
    if (result == CFI_OK)
        *status = CFI_REG_VALUE;
    return frame->status = result;
}

static enum cfi_status eval_row(const struct cfi_arch *arch,
                                const struct sem_row *row,
                                const struct cfi_regs *callee,
                                struct cfi_memory memory,
                                struct cfi_frame *frame,
                                const struct sem_trace *trace)
{
    frame->status = CFI_OK;
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    enum cfi_status status = eval_cfa(&row->cfa, callee, memory, frame, trace);
    if (status != CFI_OK)
        return status;
    apply_defaults(arch, callee, frame->cfa, &frame->caller);
    if (trace)
        trace_defaults(trace, arch, row, frame);
    /* Rules are sorted by register: this is cfi.h's order. */
    uint64_t address;
    for (uint32_t i = 0; i < row->nrules; i++) {
        status = trace ? eval_rule_traced(arch, &row->rules[i], callee,
                                          memory, frame, trace)
                       : eval_rule(&row->rules[i], callee, memory, frame,
                                   NULL, &address);
        if (status != CFI_OK)
            return status;
    }
    return CFI_OK;
}

enum cfi_status sem_eval_row(const struct cfi_arch *arch,
                             const struct sem_row *row,
                             const struct cfi_regs *callee,
                             struct cfi_memory memory,
                             struct cfi_frame *frame)
{
    return eval_row(arch, row, callee, memory, frame, NULL);
}

/* ------------------------------------------------------------------ */
/* Unwinding with prepared IL                                           */
/* ------------------------------------------------------------------ */

enum cfi_status sem_file_il_build(const struct cfi_file *file,
                                  struct sem_file_il **result)
{
    struct sem_file_il *il = calloc(1, sizeof *il);
    if (!il)
        return CFI_E_NOMEM;
    il->file = file;
    il->nfdes = file->nfdes;
    il->arena = sem_arena_new();
    il->fdes = calloc(file->nfdes + 1, sizeof *il->fdes);
    il->status = calloc(file->nfdes + 1, sizeof *il->status);
    il->diags = calloc(file->nfdes + 1, sizeof *il->diags);
    if (!il->arena || !il->fdes || !il->status || !il->diags) {
        sem_file_il_free(il);
        return CFI_E_NOMEM;
    }
    for (size_t i = 0; i < file->nfdes; i++) {
        il->status[i] = sem_translate_fde(&file->fdes[i], il->arena,
                                          &il->fdes[i], &il->diags[i]);
        il->nfailed += il->status[i] != CFI_OK;
    }
    *result = il;
    return CFI_OK;
}

void sem_file_il_free(struct sem_file_il *il)
{
    if (!il)
        return;
    sem_arena_free(il->arena);
    free(il->fdes);
    free(il->status);
    free(il->diags);
    free(il);
}

/* Step 1: a return address is looked up at PC-1. */
static uint64_t lookup_pc(const struct cfi_request *request)
{
    return cfi_lookup_pc(request->pc, request->caller_frame);
}

void sem_apply_return_column(const struct cfi_arch *arch,
                             struct cfi_frame *frame, unsigned ra_column,
                             unsigned va_bits)
{
    struct cfi_regs *caller = &frame->caller;
    if (ra_column != arch->pc && ra_column < CFI_NREGS) {
        caller->value[arch->pc] = caller->value[ra_column];
        caller->status[arch->pc] = caller->status[ra_column];
    }
    unsigned state = arch->ra_state;
    if (state == CFI_NO_RA_STATE || caller->status[arch->pc] != CFI_REG_VALUE)
        return;
    if (caller->status[state] != CFI_REG_VALUE) {
        caller->status[arch->pc] = CFI_REG_UNKNOWN;
        caller->value[arch->pc] = 0;
    } else if (caller->value[state] != CFI_RA_NOT_SIGNED) {
        caller->value[arch->pc] =
            cfi_strip_pac(caller->value[arch->pc], va_bits);
    }
}

static void trace_lookup(const struct sem_trace *trace,
                         const struct cfi_request *request,
                         const struct sem_range *range)
{
    if (!trace || !trace->lookup)
        return;
    struct sem_trace_lookup event = {request->pc, request->caller_frame,
                                     lookup_pc(request), range};
    trace->lookup(trace->env, &event);
}

/* Steps 3 to 7 once the FDE's IL is known. */
static enum cfi_status unwind_in(const struct sem_fde_il *il,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame,
                                 const struct sem_trace *trace)
{
    frame->signal_frame = il->fde->cie->signal_frame;
    frame->ra_b_key = il->fde->cie->ra_b_key;
    const struct sem_range *range = sem_fde_il_find(il, lookup_pc(request));
    trace_lookup(trace, request, range);
    if (!range)
        return frame_fail(frame, CFI_E_NO_FDE, "no FDE covers the address");
    const struct cfi_arch *arch = il->fde->cie->arch;
    enum cfi_status status = eval_row(arch, range->row, request->callee,
                                      request->memory, frame, trace);
    if (status == CFI_OK)
        sem_apply_return_column(arch, frame,
                                (unsigned)il->fde->cie->ra_column,
                                request->va_bits);
    return status;
}

static enum cfi_status translation_failed(struct cfi_frame *frame,
                                          enum cfi_status status,
                                          const struct cfi_diag *diag)
{
    frame->status = status;
    frame->diag = *diag;
    return status;
}

enum cfi_status sem_unwind(const struct sem_file_il *il,
                           const struct cfi_request *request,
                           struct cfi_frame *frame)
{
    const struct cfi_fde *fde = cfi_file_lookup(il->file, lookup_pc(request));
    if (!fde)
        return frame_fail(frame, CFI_E_NO_FDE, "no FDE covers the address");
    size_t index = (size_t)(fde - il->file->fdes);
    if (il->status[index] != CFI_OK)
        return translation_failed(frame, il->status[index], &il->diags[index]);
    return unwind_in(&il->fdes[index], request, frame, NULL);
}

struct sem_memo {
    const struct cfi_fde *fde; /* NULL: nothing kept */
    struct sem_arena *arena;
    struct sem_fde_il il;
    enum cfi_status status;
    struct cfi_diag diag;
};

struct sem_memo *sem_memo_new(void)
{
    return calloc(1, sizeof(struct sem_memo));
}

void sem_memo_free(struct sem_memo *memo)
{
    if (!memo)
        return;
    sem_arena_free(memo->arena);
    free(memo);
}

/* Keeps the IL of `fde` in *memo, translated into a new arena; false
 * when there is no memory for the arena. */
static bool memo_translate(struct sem_memo *memo, const struct cfi_fde *fde)
{
    sem_arena_free(memo->arena);
    memo->fde = NULL;
    memo->arena = sem_arena_new();
    if (!memo->arena)
        return false;
    memo->status = sem_translate_fde(fde, memo->arena, &memo->il, &memo->diag);
    memo->fde = fde;
    return true;
}

enum cfi_status sem_unwind_memo(const struct cfi_file *file,
                                const struct cfi_request *request,
                                struct cfi_frame *frame,
                                struct sem_memo *memo)
{
    const struct cfi_fde *fde = cfi_file_lookup(file, lookup_pc(request));
    if (!fde)
        return frame_fail(frame, CFI_E_NO_FDE, "no FDE covers the address");
    if (fde != memo->fde && !memo_translate(memo, fde))
        return frame_fail(frame, CFI_E_NOMEM, "out of memory");
    if (memo->status != CFI_OK)
        return translation_failed(frame, memo->status, &memo->diag);
    return unwind_in(&memo->il, request, frame, NULL);
}

enum cfi_status sem_unwind_fde_traced(const struct cfi_fde *fde,
                                      const struct cfi_request *request,
                                      struct sem_arena *arena,
                                      struct cfi_frame *frame,
                                      const struct sem_trace *trace)
{
    uint64_t pc = lookup_pc(request);
    if (fde->pc_end < fde->pc_begin)
        return frame_fail(frame, CFI_E_MALFORMED,
                          "FDE's address range wraps around");
    if (pc < fde->pc_begin || pc >= fde->pc_end)
        return frame_fail(frame, CFI_E_NO_FDE, "no FDE covers the address");
    struct sem_fde_il il;
    struct cfi_diag diag;
    enum cfi_status status = sem_translate_fde_traced(fde, arena, &il, &diag,
                                                      trace);
    if (status != CFI_OK)
        return translation_failed(frame, status, &diag);
    return unwind_in(&il, request, frame, trace);
}

enum cfi_status sem_unwind_fde(const struct cfi_fde *fde,
                               const struct cfi_request *request,
                               struct cfi_frame *frame)
{
    struct sem_arena *arena = sem_arena_new();
    if (!arena)
        return frame_fail(frame, CFI_E_NOMEM, "out of memory");
    enum cfi_status status = sem_unwind_fde_traced(fde, request, arena, frame,
                                                   NULL);
    sem_arena_free(arena);
    return status;
}

/* ------------------------------------------------------------------ */
/* Which callee registers a row reads                                   */
/* ------------------------------------------------------------------ */

static bool rule_reads(const struct cfi_arch *arch,
                       const struct sem_rule *rule, unsigned self,
                       unsigned reg)
{
    switch (rule->kind) {
    case SEM_RULE_UNSPECIFIED:
        return self == reg &&
               cfi_arch_default(arch, reg) == CFI_DEFAULT_SAME_VALUE;
    case SEM_RULE_SAME_VALUE:
        return self == reg;
    case SEM_RULE_REGISTER:
        return rule->reg == reg;
    case SEM_RULE_EXPRESSION:
    case SEM_RULE_VAL_EXPRESSION:
        return sem_expr_reads_register(&rule->expr, reg);
    default:
        return false;
    }
}

bool sem_row_reads_register(const struct cfi_arch *arch,
                            const struct sem_row *row, unsigned reg)
{
    if (row->cfa.kind == SEM_CFA_RULE_REG_OFFSET && row->cfa.reg == reg)
        return true;
    if (row->cfa.kind == SEM_CFA_RULE_EXPR &&
        sem_expr_reads_register(&row->cfa.expr, reg))
        return true;
    struct sem_rule own = sem_row_rule(row, reg);
    if (rule_reads(arch, &own, reg, reg))
        return true;
    for (uint32_t i = 0; i < row->nrules; i++)
        if (row->rules[i].reg != reg &&
            rule_reads(arch, &row->rules[i].rule, row->rules[i].reg, reg))
            return true;
    return false;
}
