/* SPDX-License-Identifier: MIT */
/* eval.c — applying a row to the callee's registers (cfi.h steps 4 and
 * 5): the CFA first, then registers 0 .. CFI_NREGS-1 in increasing
 * number, each rule reading only the callee's registers (never a result
 * being computed: libunwind#43) and memory only through the callback.
 * The first error ends the evaluation. */
#include "internal.h"

#include <string.h>

/* A register rule, as the instruction that gave it states it. */
enum rule_kind {
    RULE_UNDEFINED = INTERP_RULE_UNDEFINED,
    RULE_SAME_VALUE = INTERP_RULE_SAME_VALUE,
    RULE_OFFSET = INTERP_RULE_OFFSET,
    RULE_VAL_OFFSET = INTERP_RULE_VAL_OFFSET,
    RULE_REGISTER = INTERP_RULE_REGISTER,         /* reg: the callee's */
    RULE_EXPRESSION = INTERP_RULE_EXPRESSION,
    RULE_VAL_EXPRESSION = INTERP_RULE_VAL_EXPRESSION,
    RULE_STATE = INTERP_RULE_STATE,               /* val(offset) */
};

struct rule {
    enum rule_kind kind;
    unsigned reg;
    int64_t offset;
    const uint8_t *expr;
    size_t expr_len;
};

/* A row's rule source is an instruction that decoded and gave a rule
 * when the row was built: anything else is cfisem's error (cfi.h). */
static enum cfi_status internal_error(struct cfi_diag *diag)
{
    cfi_fail(diag, CFI_E_INTERNAL, CFI_NO_OFFSET,
             "internal error: a rule source is not a rule");
    return CFI_E_INTERNAL;
}

/* Decodes the instruction that `source` names again (it decoded once
 * already, while the row was built) and says which rule it gives; a
 * source that is a return address state gives val(state). */
static enum cfi_status rule_of(const struct interp_programs *programs,
                               interp_source source, struct rule *rule,
                               struct cfi_diag *diag)
{
    if (interp_source_is_state(source)) {
        *rule = (struct rule){RULE_STATE, 0,
                              (int64_t)interp_source_state(source), NULL, 0};
        return CFI_OK;
    }
    struct interp_insn insn;
    if (interp_decode_source(programs, source, &insn) != CFI_OK)
        return internal_error(diag);
    *rule = (struct rule){RULE_UNDEFINED, insn.reg2, insn.offset, insn.expr,
                          insn.expr_len};
    switch (insn.opcode) {
    case INTERP_CFA_undefined: rule->kind = RULE_UNDEFINED; break;
    case INTERP_CFA_same_value: rule->kind = RULE_SAME_VALUE; break;
    case INTERP_CFA_offset:
    case INTERP_CFA_offset_extended:
    case INTERP_CFA_offset_extended_sf:
    case INTERP_CFA_GNU_negative_offset_extended:
        rule->kind = RULE_OFFSET; break;
    case INTERP_CFA_val_offset:
    case INTERP_CFA_val_offset_sf: rule->kind = RULE_VAL_OFFSET; break;
    case INTERP_CFA_register: rule->kind = RULE_REGISTER; break;
    case INTERP_CFA_expression: rule->kind = RULE_EXPRESSION; break;
    case INTERP_CFA_val_expression: rule->kind = RULE_VAL_EXPRESSION; break;
    default: return internal_error(diag);
    }
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Reading registers and memory                                        */
/* ------------------------------------------------------------------ */

static enum cfi_status unknown_register(struct cfi_diag *diag, unsigned reg,
                                        const char *message)
{
    cfi_fail(diag, CFI_E_REG_UNKNOWN, CFI_NO_OFFSET, message);
    diag->reg = (int)reg;
    return CFI_E_REG_UNKNOWN;
}

/* The caller's `reg` is the callee's `from`, as it is: a value,
 * undefined, or unknown. */
static void copy_register(const struct cfi_regs *callee, unsigned from,
                          struct cfi_regs *caller, unsigned reg)
{
    uint8_t status = callee->status[from];
    if (status != CFI_REG_VALUE && status != CFI_REG_UNDEFINED)
        status = CFI_REG_UNKNOWN;
    caller->status[reg] = status;
    caller->value[reg] = status == CFI_REG_VALUE ? callee->value[from] : 0;
}

static void set_value(struct cfi_regs *caller, unsigned reg, uint64_t value)
{
    caller->status[reg] = CFI_REG_VALUE;
    caller->value[reg] = value;
}

static void set_undefined(struct cfi_regs *caller, unsigned reg)
{
    caller->status[reg] = CFI_REG_UNDEFINED;
    caller->value[reg] = 0;
}

static enum cfi_status load8(struct cfi_memory memory, uint64_t addr,
                             uint64_t *value, struct cfi_diag *diag)
{
    if (memory.read(memory.env, addr, 8, value) != CFI_OK)
        return cfi_fail(diag, CFI_E_MEMORY, CFI_NO_OFFSET,
                        "memory fault reading a saved register");
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* CFA and registers                                                   */
/* ------------------------------------------------------------------ */

/* reg + off: the callee's reg plus off, mod 2^64. expr(E): the value E
 * leaves, the stack started empty. */
static enum cfi_status eval_cfa(const struct interp_cfa *cfa,
                                const struct cfi_regs *callee,
                                struct cfi_memory memory, uint64_t *value,
                                struct cfi_diag *diag)
{
    switch (cfa->kind) {
    case INTERP_CFA_REG_OFFSET:
        if (callee->status[cfa->reg] != CFI_REG_VALUE)
            return unknown_register(diag, cfa->reg,
                                    "CFA register value unknown");
        *value = callee->value[cfa->reg] + cfa->offset;
        return CFI_OK;
    case INTERP_CFA_EXPR:
        return interp_eval_expr(cfa->expr, cfa->expr_len, callee, memory,
                                NULL, value, diag);
    case INTERP_CFA_NONE:
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        "no CFA rule at this address");
    default:
        return cfi_fail(diag, CFI_E_INTERNAL, CFI_NO_OFFSET,
                        "internal error: a CFA rule of no kind");
    }
}

/* A register with no rule: the ABI default. */
static inline void apply_default(const struct cfi_arch *arch, unsigned reg,
                                 uint64_t cfa, const struct cfi_regs *callee,
                                 struct cfi_regs *caller)
{
    switch (cfi_arch_default(arch, reg)) {
    case CFI_DEFAULT_CFA:
        set_value(caller, reg, cfa);
        break;
    case CFI_DEFAULT_SAME_VALUE:
        copy_register(callee, reg, caller, reg);
        break;
    case CFI_DEFAULT_ZERO:
        set_value(caller, reg, 0);
        break;
    case CFI_DEFAULT_UNDEFINED:
    default:
        set_undefined(caller, reg);
        break;
    }
}

static enum cfi_status apply_rule(const struct rule *rule, unsigned reg,
                                  uint64_t cfa, const struct cfi_regs *callee,
                                  struct cfi_memory memory,
                                  struct cfi_regs *caller,
                                  struct cfi_diag *diag)
{
    uint64_t value = 0;
    enum cfi_status status = CFI_OK;
    switch (rule->kind) {
    case RULE_UNDEFINED:
        set_undefined(caller, reg);
        return CFI_OK;
    case RULE_SAME_VALUE:
        copy_register(callee, reg, caller, reg);
        return CFI_OK;
    case RULE_REGISTER:
        copy_register(callee, rule->reg, caller, reg);
        return CFI_OK;
    case RULE_OFFSET:
        status = load8(memory, cfa + (uint64_t)rule->offset, &value, diag);
        break;
    case RULE_VAL_OFFSET:
        value = cfa + (uint64_t)rule->offset;
        break;
    case RULE_STATE:
        value = (uint64_t)rule->offset;
        break;
    case RULE_EXPRESSION:
    case RULE_VAL_EXPRESSION:
        status = interp_eval_expr(rule->expr, rule->expr_len, callee, memory,
                                  &cfa, &value, diag);
        if (status == CFI_OK && rule->kind == RULE_EXPRESSION)
            status = load8(memory, value, &value, diag);
        break;
    default:
        return internal_error(diag);
    }
    if (status == CFI_OK)
        set_value(caller, reg, value);
    return status;
}

/* A register with a rule. */
static enum cfi_status eval_rule(const struct interp_programs *programs,
                                 interp_source source, unsigned reg,
                                 uint64_t cfa, const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 struct cfi_frame *frame)
{
    struct rule rule;
    enum cfi_status status = rule_of(programs, source, &rule, &frame->diag);
    if (status == CFI_OK)
        status = apply_rule(&rule, reg, cfa, callee, memory, &frame->caller,
                            &frame->diag);
    return status;
}

/* Whether register `reg` has a rule. */
static bool has_rule(const struct interp_row *row, unsigned reg)
{
    return row->has_rule[reg / 64] >> (reg % 64) & 1;
}

/* Registers are visited in increasing number, so the first error is the
 * one cfi.h names. From arch->ndefaults up, the ABI default is
 * "undefined" for every register (arch.h): they are set so in bulk, and
 * only those with a rule are visited. Which registers have one is read
 * from has_rule (a word with no bit set skips 64 registers); source[] is
 * read only for those. */
enum cfi_status interp_eval_row(const struct interp_programs *programs,
                                const struct interp_row *row,
                                const struct cfi_regs *callee,
                                struct cfi_memory memory,
                                struct cfi_frame *frame)
{
    struct cfi_regs callee_copy;
    if (callee == &frame->caller) { /* unwinding in place */
        callee_copy = *callee;
        callee = &callee_copy;
    }
    uint64_t cfa;
    enum cfi_status status = eval_cfa(&row->cfa, callee, memory, &cfa,
                                      &frame->diag);
    if (status != CFI_OK)
        return status;
    frame->cfa = cfa;
    const struct cfi_arch *arch = programs->arch;
    unsigned defaults = arch->ndefaults;
    memset(frame->caller.status + defaults, CFI_REG_UNDEFINED,
           CFI_NREGS - defaults);
    memset(frame->caller.value + defaults, 0,
           (CFI_NREGS - defaults) * sizeof frame->caller.value[0]);
    for (unsigned reg = 0; reg < defaults && status == CFI_OK; reg++) {
        if (has_rule(row, reg))
            status = eval_rule(programs, row->source[reg], reg, cfa, callee,
                               memory, frame);
        else
            apply_default(arch, reg, cfa, callee, &frame->caller);
    }
    for (unsigned reg = defaults; reg < CFI_NREGS && status == CFI_OK;
         reg++) {
        if (row->has_rule[reg / 64] >> (reg % 64) == 0)
            reg |= 63; /* none up to the end of the word */
        else if (has_rule(row, reg))
            status = eval_rule(programs, row->source[reg], reg, cfa, callee,
                               memory, frame);
    }
    return status;
}

/* ------------------------------------------------------------------ */
/* Kept rows (interp.h: interp_decode_row, interp_apply_row)           */
/* ------------------------------------------------------------------ */

enum cfi_status interp_keep_rules(const struct interp_programs *programs,
                                  const struct interp_row *row,
                                  struct interp_decoded_row *kept,
                                  struct cfi_diag *diag)
{
    kept->nrules = 0;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (row->has_rule[reg / 64] >> (reg % 64) == 0) {
            reg |= 63; /* none up to the end of the word */
            continue;
        }
        if (!has_rule(row, reg))
            continue;
        if (kept->nrules == INTERP_ROW_RULES)
            return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                            "row too large to keep");
        struct rule rule;
        enum cfi_status status = rule_of(programs, row->source[reg], &rule,
                                         diag);
        if (status != CFI_OK)
            return status;
        if (rule.expr_len > UINT32_MAX)
            return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                            "row too large to keep");
        kept->rules[kept->nrules++] = (struct interp_kept_rule){
            .reg = (uint8_t)reg,
            .kind = (uint8_t)rule.kind,
            .from = (uint8_t)(rule.kind == RULE_REGISTER ? rule.reg : 0),
            .expr_len = (uint32_t)rule.expr_len,
            .offset = rule.offset,
            .expr = rule.expr,
        };
    }
    return CFI_OK;
}

static struct rule unkept(const struct interp_kept_rule *kept)
{
    return (struct rule){(enum rule_kind)kept->kind, kept->from,
                         kept->offset, kept->expr, kept->expr_len};
}

/* interp_eval_row with the rules decoded already: the same order, the
 * same defaults, but the registers from arch->ndefaults up are not made
 * undefined in bulk (interp.h: they are left unspecified). */
enum cfi_status interp_eval_kept(const struct interp_decoded_row *kept,
                                 const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 struct cfi_frame *frame)
{
    struct cfi_regs callee_copy;
    if (callee == &frame->caller) { /* unwinding in place */
        callee_copy = *callee;
        callee = &callee_copy;
    }
    struct interp_cfa rule = {(enum interp_cfa_kind)kept->cfa_kind,
                              kept->cfa_reg, kept->cfa_offset, kept->cfa_expr,
                              kept->cfa_expr_len};
    uint64_t cfa;
    enum cfi_status status = eval_cfa(&rule, callee, memory, &cfa,
                                      &frame->diag);
    if (status != CFI_OK)
        return status;
    frame->cfa = cfa;
    unsigned next = 0, n = kept->nrules < INTERP_ROW_RULES
                               ? kept->nrules : INTERP_ROW_RULES;
    for (unsigned reg = 0; reg < kept->arch->ndefaults && status == CFI_OK;
         reg++) {
        if (next < n && kept->rules[next].reg == reg) {
            struct rule r = unkept(&kept->rules[next++]);
            status = apply_rule(&r, reg, cfa, callee, memory, &frame->caller,
                                &frame->diag);
        } else {
            apply_default(kept->arch, reg, cfa, callee, &frame->caller);
        }
    }
    for (; next < n && status == CFI_OK; next++) {
        struct rule r = unkept(&kept->rules[next]);
        status = apply_rule(&r, kept->rules[next].reg, cfa, callee, memory,
                            &frame->caller, &frame->diag);
    }
    return status;
}
