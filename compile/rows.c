/* SPDX-License-Identifier: MIT */
/* rows.c — the C of row bodies.
 *
 * A row is split in functions, so that rows differing only in their CFA
 * share the rest:
 *   eh_row_<n>(pc, in, env, f)      the CFA (cfi.h step 4): an expression
 *                                   computed here, or reg+offset handed to
 *                                   its head with the offset;
 *   eh_head_<n>(off, in, env, f)    the CFA register, which must hold a
 *                                   value, plus off; then the rule set;
 *   eh_rules_<n>(cfa, in, env, f)   applies the ABI defaults and every rule
 *                                   (step 5), in increasing register order.
 * An FDE that failed to translate has a row that returns its error, and
 * a row without CFA rule returns EH_ELF_E_MALFORMED.
 *
 * Both ABIs use the same helpers (prelude.c): eh_reg(in, env, f, r, &v)
 * gives a callee register that must hold a value, eh_reg_status(in, env,
 * r, &v) a callee register as it is, eh_load(env, addr, size, &v) reads
 * memory. */
#include "internal.h"

/* The expression functions a rule set needs, emitted before it. */
struct rule_exprs {
    long number[CFI_NREGS];
};

/* Whether the full ABI's code evaluates the rule of `reg`: a reported
 * register's, or one that can fail. */
static bool matters_full(const struct cfi_arch *arch, uint32_t reg,
                         enum sem_rule_kind kind)
{
    return kind != SEM_RULE_UNSPECIFIED &&
           (reg < arch->nreported || cg_rule_can_fail(kind));
}

/* Mask literals of the machine's eh_elf_mask_t (eh_elf.h): 32 bits on
 * x86-64, 64 where more registers are reported. */
static bool wide_masks(const struct cfi_arch *arch)
{
    return arch->nreported > 32;
}

static const char *bit_one(const struct cfi_arch *arch)
{
    return wide_masks(arch) ? "UINT64_C(1)" : "1u";
}

static void emit_mask(struct cg_text *t, const struct cfi_arch *arch,
                      uint64_t mask)
{
    if (wide_masks(arch))
        cg_printf(t, "UINT64_C(0x%llx)", (unsigned long long)mask);
    else
        cg_printf(t, "0x%xu", (unsigned)mask);
}

static bool matters_v1(uint32_t reg, enum sem_rule_kind kind,
                       uint32_t ra_column)
{
    return kind != SEM_RULE_UNSPECIFIED &&
           (reg == CFI_REG_RBX || reg == CFI_REG_RBP ||
            reg == cg_v1_return_column(ra_column));
}

static void emit_exprs(struct cg_text *t, struct cg_expr_set *exprs,
                       const struct cg_ruleset *set, enum cg_abi abi,
                       struct rule_exprs *numbers)
{
    const struct sem_row *row = set->row;
    uint32_t ra_column = set->ra_column;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_reg_rule *entry = &row->rules[i];
        enum sem_rule_kind kind = entry->rule.kind;
        bool matters = abi == CG_ABI_V1
                           ? matters_v1(entry->reg, kind, ra_column)
                           : matters_full(set->arch, entry->reg, kind);
        if (!matters || (kind != SEM_RULE_EXPRESSION &&
                         kind != SEM_RULE_VAL_EXPRESSION))
            continue;
        numbers->number[i] = cg_emit_expr(t, exprs, &entry->rule.expr, true);
        if (numbers->number[i] < 0)
            t->failed = true;
    }
}

/* The parameters of a parametric rule set's code (internal.h): the
 * next offset read from p[next]; off, every offset is a constant. */
struct params {
    bool on;
    unsigned next;
};

static void emit_offset(struct cg_text *t, int64_t offset)
{
    if (offset < 0) {
        cg_puts(t, " - ");
        cg_emit_u64(t, 0 - (uint64_t)offset);
    } else {
        cg_puts(t, " + ");
        cg_emit_u64(t, (uint64_t)offset);
    }
}

/* v = the value an expression rule's expression leaves. */
static void emit_rule_expr(struct cg_text *t, const struct cg_expr_set *exprs,
                           long number, const char *dest)
{
    cg_printf(t, "    e = eh_x%u_%ld(in, env, f, cfa, %s);\n"
                 "    if (e != EH_ELF_OK) return e;\n", exprs->unit, number,
              dest);
}

/* ------------------------------------------------------------------ */
/* Full ABI                                                              */
/* ------------------------------------------------------------------ */

/* The status bits every rule set sets without looking at the callee:
 * value (known) and undefined, and those copied from the callee (same);
 * the registers whose value is the CFA (the stack pointer's default) or
 * 0 (AArch64's RA_SIGN_STATE's). */
struct masks {
    uint64_t known, undefined, same, zero;
    bool sp_is_cfa;
};

static struct masks static_masks(const struct cfi_arch *arch,
                                 const struct sem_row *row)
{
    struct masks m = {0, 0, 0, 0, false};
    for (unsigned reg = 0; reg < arch->nreported; reg++) {
        uint64_t bit = (uint64_t)1 << reg;
        enum sem_rule_kind kind = sem_row_rule(row, reg).kind;
        if (kind == SEM_RULE_UNSPECIFIED) {
            enum cfi_abi_default rule = cfi_arch_default(arch, reg);
            if (rule == CFI_DEFAULT_CFA) {
                m.known |= bit;
                m.sp_is_cfa = true;
            } else if (rule == CFI_DEFAULT_ZERO) {
                m.known |= bit;
                m.zero |= bit;
            } else if (rule == CFI_DEFAULT_SAME_VALUE) {
                m.same |= bit;
            } else {
                m.undefined |= bit;
            }
        } else if (kind == SEM_RULE_UNDEFINED) {
            m.undefined |= bit;
        } else if (kind == SEM_RULE_SAME_VALUE) {
            m.same |= bit;
        } else if (kind != SEM_RULE_REGISTER) {
            m.known |= bit;
        }
    }
    return m;
}

/* The caller's register `reg` (reported) is the callee's register
 * `from`. */
static void emit_register_rule_full(struct cg_text *t,
                                    const struct cfi_arch *arch, uint32_t reg,
                                    uint32_t from)
{
    if (from < arch->nreported) {
        cg_printf(t, "    f->caller.value[%u] = in->value[%u];\n"
                     "    f->caller.known |= (in->known >> %u & 1u) << %u;\n"
                     "    f->caller.undefined |= (in->undefined >> %u & 1u)"
                     " << %u;\n", reg, from, from, reg, from, reg);
        return;
    }
    const char *one = bit_one(arch);
    cg_printf(t, "    switch (eh_reg_status(in, env, %u, &v)) {\n"
                 "    case EH_ELF_REG_VALUE:\n"
                 "        f->caller.value[%u] = v;\n"
                 "        f->caller.known |= %s << %u;\n"
                 "        break;\n"
                 "    case EH_ELF_REG_UNDEFINED:\n"
                 "        f->caller.undefined |= %s << %u;\n"
                 "        break;\n"
                 "    }\n", from, reg, one, reg, one, reg);
}

/* cfa plus the rule's offset, or its parameter. */
static void emit_rule_offset(struct cg_text *t, struct params *params,
                             const struct sem_rule *rule)
{
    if (params->on && cg_param_offset(rule))
        cg_printf(t, " + (uint64_t)(int64_t)p[%u]", params->next++);
    else
        emit_offset(t, rule->offset);
}

static void emit_rule_full(struct cg_text *t, const struct cg_expr_set *exprs,
                           const struct cfi_arch *arch,
                           const struct sem_reg_rule *entry, long number,
                           struct params *params)
{
    const struct sem_rule *rule = &entry->rule;
    char dest[32];
    if (entry->reg < arch->nreported)
        snprintf(dest, sizeof dest, "&f->caller.value[%u]", entry->reg);
    else
        snprintf(dest, sizeof dest, "&v");
    switch (rule->kind) {
    case SEM_RULE_OFFSET:
        cg_printf(t, "    if (eh_load(env, cfa");
        emit_rule_offset(t, params, rule);
        cg_printf(t, ", 8, %s)) return EH_ELF_E_MEMORY;\n", dest);
        return;
    case SEM_RULE_VAL_OFFSET:
        cg_printf(t, "    %s = cfa", dest + 1);
        emit_rule_offset(t, params, rule);
        cg_puts(t, ";\n");
        return;
    case SEM_RULE_REGISTER:
        emit_register_rule_full(t, arch, entry->reg, rule->reg);
        return;
    case SEM_RULE_EXPRESSION:
        emit_rule_expr(t, exprs, number, "&v");
        cg_printf(t, "    if (eh_load(env, v, 8, %s)) return EH_ELF_E_MEMORY;\n",
                  dest);
        return;
    case SEM_RULE_VAL_EXPRESSION:
        emit_rule_expr(t, exprs, number, dest);
        return;
    default: /* undefined, same_value: in the masks */
        return;
    }
}

/* cfi.h step 6, after every rule (so that errors come in their order):
 * the caller's PC register (arch->pc) is the return address column's
 * value. A column of the ABI's register file is already in f->caller; a
 * higher one has its rule computed again into the PC register (its
 * errors, if any, were returned when it was first computed; memory reads
 * give the same bytes again). */
static void emit_return_column(struct cg_text *t, const struct cg_expr_set *exprs,
                               const struct cg_ruleset *set,
                               const struct rule_exprs *numbers)
{
    const struct cfi_arch *arch = set->arch;
    uint32_t ra = set->ra_column, pc = arch->pc;
    const char *one = bit_one(arch);
    cg_printf(t, "    f->caller.known &= ~(%s << %u);\n"
                 "    f->caller.undefined &= ~(%s << %u);\n", one, pc, one,
              pc);
    if (ra < arch->nreported) {
        cg_printf(t, "    f->caller.value[%u] = f->caller.value[%u];\n"
                     "    f->caller.known |= (f->caller.known >> %u & 1u)"
                     " << %u;\n"
                     "    f->caller.undefined |= (f->caller.undefined >> %u"
                     " & 1u) << %u;\n", pc, ra, ra, pc, ra, pc);
        return;
    }
    const struct sem_row *row = set->row;
    struct sem_reg_rule entry = {pc, sem_row_rule(row, ra)};
    long number = -1;
    for (uint32_t i = 0; i < row->nrules; i++)
        if (row->rules[i].reg == ra)
            number = numbers->number[i];
    if (entry.rule.kind == SEM_RULE_UNSPECIFIED) /* the column's default */
        switch (cfi_arch_default(arch, ra)) {
        case CFI_DEFAULT_SAME_VALUE:
            entry.rule.kind = SEM_RULE_SAME_VALUE;
            break;
        case CFI_DEFAULT_CFA:
            entry.rule = (struct sem_rule){SEM_RULE_VAL_OFFSET, 0, 0, {0}};
            break;
        case CFI_DEFAULT_ZERO:
            cg_printf(t, "    f->caller.value[%u] = 0;\n"
                         "    f->caller.known |= %s << %u;\n", pc, one, pc);
            return;
        default:
            break;
        }
    switch (entry.rule.kind) {
    case SEM_RULE_SAME_VALUE:
        emit_register_rule_full(t, arch, pc, ra);
        return;
    case SEM_RULE_REGISTER:
        emit_register_rule_full(t, arch, pc, entry.rule.reg);
        return;
    case SEM_RULE_UNSPECIFIED: /* its default is undefined */
    case SEM_RULE_UNDEFINED:
        cg_printf(t, "    f->caller.undefined |= %s << %u;\n", one, pc);
        return;
    default: {
        struct params constants = {false, 0}; /* in the shape's key */
        emit_rule_full(t, exprs, arch, &entry, number, &constants);
        cg_printf(t, "    f->caller.known |= %s << %u;\n", one, pc);
    }
        return;
    }
}

/* cfi.h step 6 on a machine with return-address signing (AArch64): a
 * caller's PC that holds a value loses its pointer-authentication code
 * when the caller's RA_SIGN_STATE is a value other than 0, and becomes
 * unknown when the state is not a value. */
static void emit_strip_pac(struct cg_text *t, const struct cfi_arch *arch)
{
    uint32_t pc = arch->pc, state = arch->ra_state;
    cg_printf(t, "    if (f->caller.known >> %u & 1u) {\n"
                 "        if (!(f->caller.known >> %u & 1u))\n"
                 "            f->caller.known &= ~(%s << %u);\n"
                 "        else if (f->caller.value[%u] != 0)\n"
                 "            f->caller.value[%u] =\n"
                 "                eh_strip_pac(f->caller.value[%u], "
                 "env->va_bits);\n"
                 "    }\n", pc, state, bit_one(arch), pc, state, pc, pc);
}

/* The values of the registers that keep the callee's (their status bits
 * are copied with the masks); the other values come from the rules. One
 * 8-byte move each: the callee's values were stored 8 bytes at a time,
 * and a wider load of two of them would wait for both stores to reach
 * the cache instead of taking them from the store buffer. */
static void emit_same_values(struct cg_text *t, const struct cfi_arch *arch,
                             uint64_t same)
{
    for (unsigned reg = 0; reg < arch->nreported; reg++)
        if (same >> reg & 1u)
            cg_printf(t, "    f->caller.value[%u] = in->value[%u];\n", reg,
                      reg);
}

/* The saved registers of a rule set whose only memory reads are offset
 * rules of registers 0-16 (most of them; x86-64 only: on AArch64 the
 * return address column is not the PC register): read together, one range check
 * of the caller's window for all of them (eh_elf.h, version 3), then a
 * plain load each; off the window, eh_load_slots reads them one by one
 * through read_memory. Any of them failing is EH_ELF_E_MEMORY, whichever
 * it is, and no other rule of such a set can fail: the order of the
 * reads does not show. */
struct slots {
    unsigned n;
    uint32_t reg[EH_ELF_NREGS];
    int64_t offset[EH_ELF_NREGS];
    int64_t lowest, highest;
};

static bool gather_slots(const struct cg_ruleset *set, struct slots *slots)
{
    const struct sem_row *row = set->row;
    slots->n = 0;
    if (set->ra_column != set->arch->pc)
        return false;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_reg_rule *entry = &row->rules[i];
        enum sem_rule_kind kind = entry->rule.kind;
        if (!matters_full(set->arch, entry->reg, kind) ||
            kind != SEM_RULE_OFFSET)
            continue;
        if (entry->reg >= EH_ELF_NREGS || entry->rule.offset < INT32_MIN ||
            entry->rule.offset > INT32_MAX)
            return false;
        slots->reg[slots->n] = entry->reg;
        slots->offset[slots->n++] = entry->rule.offset;
    }
    for (uint32_t i = 0; i < row->nrules; i++) {
        enum sem_rule_kind kind = row->rules[i].rule.kind;
        if (matters_full(set->arch, row->rules[i].reg, kind) &&
            (kind == SEM_RULE_EXPRESSION || kind == SEM_RULE_VAL_EXPRESSION))
            return false;
    }
    if (slots->n < 2)
        return false;
    slots->lowest = slots->highest = slots->offset[0];
    for (unsigned k = 1; k < slots->n; k++) {
        if (slots->offset[k] < slots->lowest)
            slots->lowest = slots->offset[k];
        if (slots->offset[k] > slots->highest)
            slots->highest = slots->offset[k];
    }
    return true;
}

/* The tables eh_load_slots reads, before the rule set's function. */
static void emit_slot_tables(struct cg_text *t, size_t index,
                             const struct slots *slots)
{
    cg_printf(t, "\nstatic const int32_t eh_slot_offset_%zu[%u] = {", index,
              slots->n);
    for (unsigned k = 0; k < slots->n; k++)
        cg_printf(t, "%s%lld", k ? ", " : "", (long long)slots->offset[k]);
    cg_printf(t, "};\nstatic const uint8_t eh_slot_reg_%zu[%u] = {", index,
              slots->n);
    for (unsigned k = 0; k < slots->n; k++)
        cg_printf(t, "%s%u", k ? ", " : "", slots->reg[k]);
    cg_puts(t, "};\n");
}

static void emit_slots(struct cg_text *t, size_t index,
                       const struct slots *slots)
{
    cg_puts(t, "    if (!eh_direct(env, cfa");
    emit_offset(t, slots->lowest);
    cg_puts(t, ") || !eh_direct(env, cfa");
    emit_offset(t, slots->highest);
    cg_printf(t, "))\n        return eh_load_slots(cfa, env, f, "
                 "eh_slot_offset_%zu, eh_slot_reg_%zu, %u);\n", index, index,
              slots->n);
    for (unsigned k = 0; k < slots->n; k++) {
        cg_printf(t, "    f->caller.value[%u] = eh_word(cfa", slots->reg[k]);
        emit_offset(t, slots->offset[k]);
        cg_puts(t, ");\n");
    }
}

static void emit_rules_full(struct cg_text *t, const struct cg_expr_set *exprs,
                            const struct cg_ruleset *set,
                            const struct rule_exprs *numbers, size_t index,
                            const struct slots *slots, bool parametric)
{
    const struct sem_row *row = set->row;
    const struct cfi_arch *arch = set->arch;
    struct masks m = static_masks(arch, row);
    struct params params = {parametric, 0};
    cg_puts(t, "    f->cfa = cfa;\n");
    if (set->signal_frame)
        cg_puts(t, "    f->signal_frame = 1;\n");
    if (set->ra_b_key)
        cg_puts(t, "    f->ra_b_key = 1;\n");
    cg_puts(t, "    f->caller.known = ");
    emit_mask(t, arch, m.known);
    cg_puts(t, " | (in->known & ");
    emit_mask(t, arch, m.same);
    cg_puts(t, ");\n    f->caller.undefined = ");
    emit_mask(t, arch, m.undefined);
    cg_puts(t, " | (in->undefined & ");
    emit_mask(t, arch, m.same);
    cg_puts(t, ");\n");
    if (m.sp_is_cfa)
        cg_printf(t, "    f->caller.value[%u] = cfa;\n", arch->sp);
    for (unsigned reg = 0; reg < arch->nreported; reg++)
        if (m.zero >> reg & 1u)
            cg_printf(t, "    f->caller.value[%u] = 0;\n", reg);
    emit_same_values(t, arch, m.same);
    for (uint32_t i = 0; i < row->nrules; i++)
        if (matters_full(arch, row->rules[i].reg, row->rules[i].rule.kind) &&
            !(slots->n && row->rules[i].rule.kind == SEM_RULE_OFFSET))
            emit_rule_full(t, exprs, arch, &row->rules[i],
                           numbers->number[i], &params);
    if (slots->n)
        emit_slots(t, index, slots);
    if (set->ra_column != arch->pc) {
        emit_return_column(t, exprs, set, numbers);
        if (arch->ra_state != CFI_NO_RA_STATE)
            emit_strip_pac(t, arch);
    }
}

/* ------------------------------------------------------------------ */
/* v1 ABI                                                                */
/* ------------------------------------------------------------------ */

/* rbx, rbp, rip: their field and flag. */
static const char *v1_field(uint32_t reg)
{
    return reg == CFI_REG_RBX ? "rbx" : reg == CFI_REG_RBP ? "rbp" : "rip";
}

static const char *v1_flag(uint32_t reg)
{
    return reg == CFI_REG_RBX ? "UNWF_RBX"
           : reg == CFI_REG_RBP ? "UNWF_RBP" : "UNWF_RIP";
}

/* The value `v` becomes the register's; `from` says whether v is the
 * callee's register (its status decides) or computed. */
static void emit_v1_set(struct cg_text *t, uint32_t reg, const char *status)
{
    if (status)
        cg_printf(t, "    if (%s == EH_ELF_REG_VALUE) {\n"
                     "        f->%s = v;\n"
                     "        f->flags |= 1u << %s;\n"
                     "    }\n", status, v1_field(reg), v1_flag(reg));
    else
        cg_printf(t, "    f->%s = v;\n    f->flags |= 1u << %s;\n",
                  v1_field(reg), v1_flag(reg));
}

/* The rule v1's field `field` (rbx, rbp, rip) gets from column `column`
 * (itself, or for rip the return address column). rbx and rbp keep their
 * value when they have no rule; rip has no default (undefined). For rip
 * from another column, that column's rule, its same_value being
 * register(column) and its missing rule the column's ABI default. */
static struct sem_rule v1_rule(const struct cfi_arch *arch,
                               const struct sem_row *row, uint32_t column,
                               uint32_t field)
{
    struct sem_rule rule = sem_row_rule(row, column);
    struct sem_rule undefined = {SEM_RULE_UNDEFINED, 0, 0, {0}};
    struct sem_rule same = {SEM_RULE_REGISTER, column, 0, {0}};
    if (column == field) {
        if (rule.kind == SEM_RULE_UNSPECIFIED)
            rule.kind = field == CFI_REG_RIP ? SEM_RULE_UNDEFINED
                                             : SEM_RULE_SAME_VALUE;
        return rule;
    }
    if (rule.kind == SEM_RULE_SAME_VALUE)
        return same;
    if (rule.kind != SEM_RULE_UNSPECIFIED)
        return rule;
    switch (cfi_arch_default(arch, column)) {
    case CFI_DEFAULT_SAME_VALUE:
        return same;
    case CFI_DEFAULT_CFA:
        return (struct sem_rule){SEM_RULE_VAL_OFFSET, 0, 0, {0}};
    default:
        return undefined;
    }
}

/* The registers of v1's context. */
static bool v1_carries(uint32_t reg)
{
    return reg == CFI_REG_RIP || reg == CFI_REG_RSP || reg == CFI_REG_RBP ||
           reg == CFI_REG_RBX;
}

static void emit_rule_v1(struct cg_text *t, const struct cg_expr_set *exprs,
                         uint32_t reg, const struct sem_rule *rule,
                         long number)
{
    enum sem_rule_kind kind = rule->kind;
    switch (kind) {
    case SEM_RULE_SAME_VALUE:
    case SEM_RULE_REGISTER:
        cg_printf(t, "    s = eh_reg_status(in, env, %u, &v);\n",
                  kind == SEM_RULE_REGISTER ? rule->reg : reg);
        emit_v1_set(t, reg, "s");
        return;
    case SEM_RULE_OFFSET:
        cg_puts(t, "    if (eh_load(env, cfa");
        emit_offset(t, rule->offset);
        cg_puts(t, ", 8, &v)) return EH_ELF_E_MEMORY;\n");
        break;
    case SEM_RULE_VAL_OFFSET:
        cg_puts(t, "    v = cfa");
        emit_offset(t, rule->offset);
        cg_puts(t, ";\n");
        break;
    case SEM_RULE_EXPRESSION:
    case SEM_RULE_VAL_EXPRESSION:
        emit_rule_expr(t, exprs, number, "&v");
        if (kind == SEM_RULE_EXPRESSION)
            cg_puts(t, "    if (eh_load(env, v, 8, &v)) "
                       "return EH_ELF_E_MEMORY;\n");
        break;
    default: /* undefined: the flag stays clear */
        return;
    }
    emit_v1_set(t, reg, NULL);
}

/* rip is the return address column's value (cfi.h step 6). A rule that
 * is the value of a register v1's context lacks (DW_CFA_register) is
 * well defined, but v1 cannot carry it: a clear flag would say
 * "undefined" (rip) or "the callee's value" (rbp, rbx), both wrong, so
 * the answer is the error bit, and a consumer falls back to DWARF. */
static void emit_rules_v1(struct cg_text *t, const struct cg_expr_set *exprs,
                          const struct cg_ruleset *set,
                          const struct rule_exprs *numbers)
{
    const struct sem_row *row = set->row;
    const uint32_t fields[3] = {CFI_REG_RBX, CFI_REG_RBP, CFI_REG_RIP};
    const uint32_t columns[3] = {CFI_REG_RBX, CFI_REG_RBP,
                                 cg_v1_return_column(set->ra_column)};
    struct sem_rule rules[3];
    for (unsigned k = 0; k < 3; k++) {
        rules[k] = v1_rule(set->arch, row, columns[k], fields[k]);
        if (rules[k].kind == SEM_RULE_REGISTER && !v1_carries(rules[k].reg)) {
            cg_puts(t, "    (void)cfa, (void)in, (void)env, (void)f, (void)v, "
                       "(void)e, (void)s;\n"
                       "    return EH_ELF_E_UNSUPPORTED; /* v1 cannot carry "
                       "it */\n");
            return;
        }
    }
    cg_puts(t, "    f->rsp = cfa;\n    f->flags = 1u << UNWF_RSP;\n");
    for (unsigned k = 0; k < 3; k++) {
        long number = -1;
        for (uint32_t i = 0; i < row->nrules; i++)
            if (row->rules[i].reg == columns[k])
                number = numbers->number[i];
        emit_rule_v1(t, exprs, fields[k], &rules[k], number);
    }
}

/* ------------------------------------------------------------------ */
/* Rule sets and rows                                                    */
/* ------------------------------------------------------------------ */

size_t cg_rule_bodies(const struct cg_layout *layout)
{
    return layout->parametric ? layout->nshapes : layout->nrulesets;
}

uint32_t cg_row_code(const struct cg_layout *layout, const struct cg_row *row)
{
    return layout->parametric ? layout->rulesets[row->ruleset].shape
                              : row->ruleset;
}

const char *cg_param_decl(const struct cg_layout *layout)
{
    return layout->parametric ? ", const int32_t *p" : "";
}

void cg_emit_param_extern(struct cg_text *t, const struct cg_layout *layout)
{
    if (layout->parametric)
        cg_puts(t, "extern EH_HIDDEN const int32_t eh_param[];\n");
}

void cg_emit_params(struct cg_text *t, const struct cg_layout *layout)
{
    if (!layout->parametric)
        return;
    cg_printf(t, "\n/* The offsets of the rule sets (compile/rows.c) */\n"
                 "EH_HIDDEN const int32_t eh_param[%zu] = {",
              layout->nparams ? layout->nparams : 1);
    for (size_t i = 0; i < layout->nparams; i++)
        cg_printf(t, "%s%ld,", i % 12 ? " " : "\n    ",
                  (long)layout->params[i]);
    cg_puts(t, layout->nparams ? "\n};\n" : "0};\n");
}

/* eh_rules_<index>: a rule set's code, or a shape's (parametric: its
 * first rule set's code with the offsets read from p). */
void cg_emit_rules(struct cg_text *t, struct cg_expr_set *exprs,
                   const struct cg_layout *layout, size_t index)
{
    size_t first = layout->parametric ? layout->shapes[index] : index;
    const struct cg_ruleset *set = &layout->rulesets[first];
    struct rule_exprs numbers;
    for (unsigned i = 0; i < CFI_NREGS; i++)
        numbers.number[i] = -1;
    emit_exprs(t, exprs, set, layout->abi, &numbers);
    struct slots slots = {0};
    if (layout->abi == CG_ABI_FULL && !layout->parametric &&
        gather_slots(set, &slots))
        emit_slot_tables(t, index, &slots);
    else
        slots.n = 0; /* every rule read on its own */
    cg_printf(t, "\nEH_HIDDEN int eh_rules_%zu(uint64_t cfa, eh_in_t in, "
                 "eh_env_t env, eh_out_t f%s)\n{\n"
                 "    uint64_t v = 0;\n    int e = EH_ELF_OK, s = 0;\n"
                 "    (void)in; (void)env; (void)v; (void)e; (void)s;%s\n",
              index, cg_param_decl(layout),
              layout->parametric ? " (void)p;" : "");
    if (layout->abi == CG_ABI_V1)
        emit_rules_v1(t, exprs, set, &numbers);
    else
        emit_rules_full(t, exprs, set, &numbers, index, &slots,
                        layout->parametric);
    cg_puts(t, "    return EH_ELF_OK;\n}\n");
}

/* eh_head_<n>(off, ...): the CFA is the callee's register plus off
 * (mod 2^64), then the rule set (parametric: with its offsets p). */
void cg_emit_head(struct cg_text *t, const struct cg_layout *layout,
                  size_t index)
{
    const struct cg_head *head = &layout->heads[index];
    const char *decl = cg_param_decl(layout);
    cg_printf(t, "\nEH_HIDDEN int eh_head_%zu(uint64_t off, eh_in_t in, "
                 "eh_env_t env, eh_out_t f%s);\n"
                 "EH_HIDDEN int eh_head_%zu(uint64_t off, eh_in_t in, "
                 "eh_env_t env, eh_out_t f%s)\n{\n"
                 "    uint64_t cfa = 0;\n"
                 "    int e = eh_reg(in, env, f, %u, &cfa);\n"
                 "    if (e != EH_ELF_OK) return e;\n"
                 "    return eh_rules_%u(cfa + off, in, env, f%s);\n}\n",
              index, decl, index, decl, head->reg, head->ruleset,
              layout->parametric ? ", p" : "");
}

/* The arguments after f of a row's call of its head or rule set. */
static void emit_row_params(struct cg_text *t, const struct cg_layout *layout,
                            const struct cg_row *row)
{
    if (layout->parametric)
        cg_printf(t, ", eh_param + %u",
                  layout->rulesets[row->ruleset].param);
}

static void emit_cfa(struct cg_text *t, const struct cg_expr_set *exprs,
                     const struct cg_layout *layout, const struct cg_row *row,
                     long number)
{
    const struct sem_cfa *cfa = &row->row->cfa;
    switch (cfa->kind) {
    case SEM_CFA_RULE_REG_OFFSET:
        cg_printf(t, "    return eh_head_%u(", row->head);
        cg_emit_u64(t, (uint64_t)cfa->offset);
        cg_puts(t, ", in, env, f");
        emit_row_params(t, layout, row);
        cg_puts(t, ");\n");
        return;
    case SEM_CFA_RULE_EXPR:
        cg_printf(t, "    e = eh_x%u_%ld(in, env, f, 0, &cfa);\n"
                     "    if (e != EH_ELF_OK) return e;\n", exprs->unit, number);
        cg_printf(t, "    return eh_rules_%u(cfa, in, env, f",
                  cg_row_code(layout, row));
        emit_row_params(t, layout, row);
        cg_puts(t, ");\n");
        return;
    default:
        cg_puts(t, "    return EH_ELF_E_MALFORMED; /* no CFA rule */\n");
    }
}
void cg_emit_row(struct cg_text *t, struct cg_expr_set *exprs,
                 const struct cg_layout *layout, size_t index)
{
    const struct cg_row *row = &layout->rows[index];
    long number = -1;
    if (row->kind == CG_ROW_RULES && row->row->cfa.kind == SEM_CFA_RULE_EXPR &&
        (number = cg_emit_expr(t, exprs, &row->row->cfa.expr, false)) < 0)
        t->failed = true;
    cg_printf(t, "\nEH_HIDDEN int eh_row_%zu(uint64_t pc, eh_in_t in, "
                 "eh_env_t env, eh_out_t f)\n{\n"
                 "    uint64_t cfa = 0;\n    int e = EH_ELF_OK;\n"
                 "    (void)pc; (void)in; (void)env; (void)f; (void)cfa; "
                 "(void)e;\n", index);
    if (row->kind == CG_ROW_FAIL) {
        cg_puts(t, "    eh_fail_at(f, ");
        cg_emit_u64(t, row->offset);
        cg_printf(t, ");\n    return %s; /* the FDE's translation failed */\n",
                  row->status == CFI_E_UNSUPPORTED ? "EH_ELF_E_UNSUPPORTED"
                                                   : "EH_ELF_E_MALFORMED");
    } else {
        emit_cfa(t, exprs, layout, row, number);
    }
    cg_puts(t, "}\n");
}
