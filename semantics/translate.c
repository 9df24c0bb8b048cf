/* SPDX-License-Identifier: MIT */
/* translate.c — DWARF CFA instructions → IL rows.
 *
 * The translation state (struct translation) holds, beside the output:
 *
 *   row      the row being built: the CFA rule and one rule per register
 *   loc      the address where `row` starts
 *   init     the CIE's initial row (the row at the end of the CIE program)
 *   stack    the remembered rows (remember_state / restore_state)
 *
 * Each rule is one function `rule_<name>`, and every DW_CFA opcode applies
 * one of them: the opcodes that differ only in how their operands are
 * encoded or factored (advance_loc1..4, offset_extended_sf,
 * restore_extended, ...) share their rule, since the decoder has already
 * made their operands equal; SEM_RULES below says which opcode applies
 * which rule. The comment above each function states the rule in this
 * notation:
 *
 *   row[r] := R      the rule of register r becomes R in the current row
 *   row.cfa := C     the CFA rule becomes C
 *   emit             the range [loc, new loc) gets `row`; then loc := new loc
 *   R ::= undef | same | addr(cfa+n) | val(cfa+n) | reg(m)
 *       | addr(E) | val(E)                      (E: a DWARF expression)
 *   C ::= r+n | expr(E)
 *
 * and the section of DWARF 5 that says so. Where the 2018 report (the
 * origin of the IL) gives another rule, the comment says "Report:" and why
 * we differ. An FDE's table is: the CIE program run from an empty row (all
 * registers unspecified, no CFA rule), giving `init`; then the FDE program
 * from row := init, loc := pc_begin; then a last emit up to pc_end.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sem.h"

/* A row with a slot for every register: the working form. */
struct dense_row {
    struct sem_cfa cfa;
    struct sem_rule rules[CFI_NREGS];
};

struct translation {
    const struct cfi_fde *fde;
    struct sem_arena *arena;
    struct cfi_diag *diag;
    const struct sem_insn *insn;   /* the instruction being applied */
    uint64_t program_offset;       /* section offset of its program */
    bool in_cie;

    struct dense_row row;
    struct dense_row init;
    uint64_t loc;
    struct dense_row *stack;
    size_t depth;
    size_t stack_capacity;
    unsigned regs_used;            /* 1 + the highest register with a rule */

    struct sem_range *ranges;
    size_t nranges;
    size_t ranges_capacity;

    const struct sem_trace *trace; /* NULL: nothing is reported */
    struct dense_row *before;      /* with a trace: the row before an
                                      instruction (columns past regs_used
                                      stay unspecified) */
};

/* Reports an error at the current instruction. diag->offset is the
 * section offset of the instruction. */
static enum cfi_status fail(struct translation *t, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(t->diag, status, t->program_offset + t->insn->at,
                    message);
}

static void set_rule(struct translation *t, uint32_t reg, struct sem_rule rule)
{
    t->row.rules[reg] = rule;
    if (reg + 1 > t->regs_used)
        t->regs_used = reg + 1;
}

/* ------------------------------------------------------------------ */
/* Emitting rows                                                        */
/* ------------------------------------------------------------------ */

static bool same_expr(struct sem_expr a, struct sem_expr b)
{
    return a.len == b.len && (a.len == 0 || !memcmp(a.bytes, b.bytes, a.len));
}

bool sem_rule_equal(const struct sem_rule *a, const struct sem_rule *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case SEM_RULE_OFFSET:
    case SEM_RULE_VAL_OFFSET:
        return a->offset == b->offset;
    case SEM_RULE_REGISTER:
        return a->reg == b->reg;
    case SEM_RULE_EXPRESSION:
    case SEM_RULE_VAL_EXPRESSION:
        return same_expr(a->expr, b->expr);
    default:
        return true;
    }
}

bool sem_cfa_equal(const struct sem_cfa *a, const struct sem_cfa *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == SEM_CFA_RULE_REG_OFFSET)
        return a->reg == b->reg && a->offset == b->offset;
    if (a->kind == SEM_CFA_RULE_EXPR)
        return same_expr(a->expr, b->expr);
    return true;
}

/* True when the sparse `row` holds exactly the rules of t->row. */
static bool row_matches(const struct translation *t, const struct sem_row *row)
{
    if (!sem_cfa_equal(&row->cfa, &t->row.cfa))
        return false;
    uint32_t i = 0;
    for (unsigned reg = 0; reg < t->regs_used; reg++) {
        const struct sem_rule *rule = &t->row.rules[reg];
        if (rule->kind == SEM_RULE_UNSPECIFIED)
            continue;
        if (i == row->nrules || row->rules[i].reg != reg ||
            !sem_rule_equal(&row->rules[i].rule, rule))
            return false;
        i++;
    }
    return i == row->nrules;
}

/* The sparse copy of t->row, shared with the previous range when equal. */
static const struct sem_row *freeze_row(struct translation *t)
{
    if (t->nranges > 0 && row_matches(t, t->ranges[t->nranges - 1].row))
        return t->ranges[t->nranges - 1].row;
    uint32_t n = 0;
    for (unsigned reg = 0; reg < t->regs_used; reg++)
        n += t->row.rules[reg].kind != SEM_RULE_UNSPECIFIED;
    struct sem_row *row = sem_arena_alloc(t->arena, sizeof *row);
    struct sem_reg_rule *rules =
        n ? sem_arena_alloc(t->arena, n * sizeof *rules) : NULL;
    if (!row || (n && !rules))
        return NULL;
    row->cfa = t->row.cfa;
    row->nrules = n;
    row->rules = rules;
    for (unsigned reg = 0, i = 0; reg < t->regs_used; reg++)
        if (t->row.rules[reg].kind != SEM_RULE_UNSPECIFIED)
            rules[i++] = (struct sem_reg_rule){reg, t->row.rules[reg]};
    return row;
}

/* emit: the range [loc, end) gets the current row; empty ranges vanish. */
static enum cfi_status emit(struct translation *t, uint64_t end)
{
    if (end > t->loc) {
        if (t->nranges == t->ranges_capacity) {
            size_t capacity = t->ranges_capacity ? t->ranges_capacity * 2 : 8;
            struct sem_range *grown =
                realloc(t->ranges, capacity * sizeof *grown);
            if (!grown)
                return fail(t, CFI_E_NOMEM, "out of memory");
            t->ranges = grown;
            t->ranges_capacity = capacity;
        }
        const struct sem_row *row = freeze_row(t);
        if (!row)
            return fail(t, CFI_E_NOMEM, "out of memory");
        t->ranges[t->nranges++] = (struct sem_range){t->loc, end, row};
        if (t->trace && t->trace->range)
            t->trace->range(t->trace->env, &t->ranges[t->nranges - 1]);
    }
    t->loc = end;
    return CFI_OK;
}

/* Moving to a new location: emit, then loc := new. A location before the
 * current one, or past the FDE's end, is an error: DWARF 5 §6.4.2.1 says
 * the new location "must be greater than the current one" (set_loc), and
 * the table describes only the FDE's range. In the CIE there is no
 * location at all. */
static enum cfi_status move_to(struct translation *t, uint64_t loc)
{
    if (t->in_cie)
        return fail(t, CFI_E_MALFORMED,
                    "location change in the CIE's initial instructions");
    if (loc < t->loc)
        return fail(t, CFI_E_MALFORMED, "location goes backwards");
    if (loc > t->fde->pc_end)
        return fail(t, CFI_E_MALFORMED, "location past the FDE's end");
    return emit(t, loc);
}

/* ------------------------------------------------------------------ */
/* Row creation: DWARF 5 §6.4.2.1                                       */
/* ------------------------------------------------------------------ */

/* set_loc(a):           emit; loc := a   (a > loc)              §6.4.2.1
 * "The new location value is always greater than the current one": a
 * set_loc to the current location is an error, unlike advance_loc by 0. */
static enum cfi_status rule_set_loc(struct translation *t)
{
    if (!t->in_cie && t->insn->address == t->loc)
        return fail(t, CFI_E_MALFORMED, "set_loc does not advance the location");
    return move_to(t, t->insn->address);
}

/* advance_loc(d), advance_loc1/2/4(d), MIPS_advance_loc8(d):
 *                       emit; loc := loc + d × code_align      §6.4.2.1
 * (the decoder has scaled d already) */
static enum cfi_status rule_advance_loc(struct translation *t)
{
    uint64_t delta = t->insn->delta;
    if (delta > UINT64_MAX - t->loc)
        return fail(t, CFI_E_MALFORMED, "location past the FDE's end");
    return move_to(t, t->loc + delta);
}

/* ------------------------------------------------------------------ */
/* CFA definition: DWARF 5 §6.4.2.2                                     */
/* ------------------------------------------------------------------ */

/* def_cfa(r, n), def_cfa_sf(r, n × data_align):
 *                       row.cfa := r+n                          §6.4.2.2 */
static enum cfi_status rule_def_cfa(struct translation *t)
{
    t->row.cfa = (struct sem_cfa){.kind = SEM_CFA_RULE_REG_OFFSET,
                                  .reg = t->insn->reg,
                                  .offset = t->insn->offset};
    return CFI_OK;
}

/* def_cfa_register(r):  row.cfa = _+n  ⇒  row.cfa := r+n          §6.4.2.2
 * "valid only if the current CFA rule is defined to use a register and
 * offset": an expression CFA, or no CFA rule yet, is an error. */
static enum cfi_status rule_def_cfa_register(struct translation *t)
{
    if (t->row.cfa.kind != SEM_CFA_RULE_REG_OFFSET)
        return fail(t, CFI_E_MALFORMED,
                    "def_cfa_register without a register+offset CFA");
    t->row.cfa.reg = t->insn->reg;
    return CFI_OK;
}

/* def_cfa_offset(n), def_cfa_offset_sf(n × data_align):
 *                       row.cfa = r+_  ⇒  row.cfa := r+n          §6.4.2.2
 * Same precondition as def_cfa_register. */
static enum cfi_status rule_def_cfa_offset(struct translation *t)
{
    if (t->row.cfa.kind != SEM_CFA_RULE_REG_OFFSET)
        return fail(t, CFI_E_MALFORMED,
                    "def_cfa_offset without a register+offset CFA");
    t->row.cfa.offset = t->insn->offset;
    return CFI_OK;
}

/* def_cfa_expression(E): row.cfa := expr(E)                      §6.4.2.2
 * The stack starts empty when E is evaluated (nothing is pushed).
 * Report: left "to be defined". */
static enum cfi_status rule_def_cfa_expression(struct translation *t)
{
    t->row.cfa = (struct sem_cfa){.kind = SEM_CFA_RULE_EXPR, .expr = t->insn->expr};
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Register rules: DWARF 5 §6.4.2.3                                     */
/* ------------------------------------------------------------------ */

/* undefined(r):         row[r] := undef                          §6.4.2.3 */
static enum cfi_status rule_undefined(struct translation *t)
{
    set_rule(t, t->insn->reg, (struct sem_rule){.kind = SEM_RULE_UNDEFINED});
    return CFI_OK;
}

/* same_value(r):        row[r] := same                           §6.4.2.3
 * Report: its rule returned the value instead of continuing with the rest
 * of the program, so every later instruction was lost. The translation
 * goes on like for every other rule. */
static enum cfi_status rule_same_value(struct translation *t)
{
    set_rule(t, t->insn->reg, (struct sem_rule){.kind = SEM_RULE_SAME_VALUE});
    return CFI_OK;
}

/* offset(r, n), offset_extended(r, n), offset_extended_sf(r, n),
 * GNU_negative_offset_extended(r, n)   (n already × data_align, negated
 * for the GNU opcode):
 *                       row[r] := addr(cfa+n)                    §6.4.2.3 */
static enum cfi_status rule_offset(struct translation *t)
{
    set_rule(t, t->insn->reg, (struct sem_rule){.kind = SEM_RULE_OFFSET,
                                                .offset = t->insn->offset});
    return CFI_OK;
}

/* val_offset(r, n), val_offset_sf(r, n):
 *                       row[r] := val(cfa+n)                     §6.4.2.3 */
static enum cfi_status rule_val_offset(struct translation *t)
{
    set_rule(t, t->insn->reg, (struct sem_rule){.kind = SEM_RULE_VAL_OFFSET,
                                                .offset = t->insn->offset});
    return CFI_OK;
}

/* register(r, m):       row[r] := reg(m)                         §6.4.2.3
 * "the previous value of this register is saved in another register m":
 * the caller's r is the value m holds in this frame, read when the frame
 * is unwound. Report: took m's rule from the previous row, which is the
 * rule for the caller's m, not the content of m in this frame. */
static enum cfi_status rule_register(struct translation *t)
{
    set_rule(t, t->insn->reg, (struct sem_rule){.kind = SEM_RULE_REGISTER,
                                                .reg = t->insn->reg2});
    return CFI_OK;
}

/* expression(r, E):     row[r] := addr(E)                        §6.4.2.3
 * E is evaluated with the CFA pushed first; the caller's r is stored at
 * the address it yields. Report: left "to be defined". */
static enum cfi_status rule_expression(struct translation *t)
{
    set_rule(t, t->insn->reg, (struct sem_rule){.kind = SEM_RULE_EXPRESSION,
                                                .expr = t->insn->expr});
    return CFI_OK;
}

/* val_expression(r, E): row[r] := val(E)                         §6.4.2.3
 * E is evaluated with the CFA pushed first; its value is the caller's r.
 * Report: left "to be defined". */
static enum cfi_status rule_val_expression(struct translation *t)
{
    set_rule(t, t->insn->reg,
             (struct sem_rule){.kind = SEM_RULE_VAL_EXPRESSION,
                               .expr = t->insn->expr});
    return CFI_OK;
}

/* restore(r), restore_extended(r):
 *                       row[r] := init[r]                        §6.4.2.3
 * "the rule assigned to it by the initial_instructions in the CIE", which
 * may be no rule at all. Report: not defined (it lacked the CIE's row).
 * In the CIE's own program `init` is what is being defined: an error. */
static enum cfi_status rule_restore(struct translation *t)
{
    if (t->in_cie)
        return fail(t, CFI_E_MALFORMED,
                    "restore in the CIE's initial instructions");
    set_rule(t, t->insn->reg, t->init.rules[t->insn->reg]);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Row state: DWARF 5 §6.4.2.4                                          */
/* ------------------------------------------------------------------ */

/* remember_state:       stack := stack · row                     §6.4.2.4
 * The whole row is pushed, the CFA rule included (the "rules for each
 * register"; the CFA is column 0 of the table in §6.4.1). The location is
 * not part of a row and is not saved. Depth bounded by SEM_REMEMBER_MAX. */
static enum cfi_status rule_remember_state(struct translation *t)
{
    if (t->depth == SEM_REMEMBER_MAX)
        return fail(t, CFI_E_MALFORMED, "remember_state nested too deep");
    if (t->depth == t->stack_capacity) {
        size_t capacity = t->stack_capacity ? t->stack_capacity * 2 : 4;
        struct dense_row *grown = realloc(t->stack, capacity * sizeof *grown);
        if (!grown)
            return fail(t, CFI_E_NOMEM, "out of memory");
        t->stack = grown;
        t->stack_capacity = capacity;
    }
    t->stack[t->depth++] = t->row;
    return CFI_OK;
}

/* restore_state:        stack = s · top  ⇒  row := top; stack := s
 *                                                                 §6.4.2.4
 * Restores the CFA rule with the registers, and leaves loc alone. An empty
 * stack is an error. */
static enum cfi_status rule_restore_state(struct translation *t)
{
    if (t->depth == 0)
        return fail(t, CFI_E_MALFORMED, "restore_state with an empty stack");
    t->row = t->stack[--t->depth];
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Padding and the rest: DWARF 5 §6.4.2.5, GNU extensions               */
/* ------------------------------------------------------------------ */

/* nop:                  nothing                                  §6.4.2.5 */
static enum cfi_status rule_nop(struct translation *t)
{
    (void)t;
    return CFI_OK;
}

/* GNU_args_size(n):     nothing. It tells the personality routine how many
 * bytes of outgoing arguments are on the stack; it changes no rule. */
static enum cfi_status rule_GNU_args_size(struct translation *t)
{
    (void)t;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Return-address signing: aadwarf64, "Call frame instructions"         */
/* ------------------------------------------------------------------ */

/* RA_SIGN_STATE (arch->ra_state) is a column of the row like any
 * register, whose value is a constant: the IL writes state s as the
 * rule val(lit<s>). No rule is the ABI's initial state, 0 (not signed).
 * The code location that set_ra_state and negate_ra_state_with_pc
 * record for authentication is not part of the row. */
static const uint8_t ra_state_lits[CFI_RA_STATE_MAX + 1] = {
    0x30, 0x31, 0x32, /* DW_OP_lit0 .. lit2 */
};

static unsigned ra_state_column(const struct translation *t)
{
    return t->fde->cie->arch->ra_state;
}

/* The state the current row says, or -1 when the column has a rule that
 * is no state. */
static int current_ra_state(const struct translation *t)
{
    const struct sem_rule *rule = &t->row.rules[ra_state_column(t)];
    if (rule->kind == SEM_RULE_UNSPECIFIED)
        return CFI_RA_NOT_SIGNED;
    if (rule->kind != SEM_RULE_VAL_EXPRESSION || rule->expr.len != 1)
        return -1;
    for (int state = 0; state <= CFI_RA_STATE_MAX; state++)
        if (rule->expr.bytes[0] == ra_state_lits[state])
            return state;
    return -1;
}

static void set_ra_state(struct translation *t, unsigned state)
{
    struct sem_rule rule = {.kind = SEM_RULE_VAL_EXPRESSION,
                            .expr = {&ra_state_lits[state], 1}};
    set_rule(t, ra_state_column(t), rule);
}

/* negate_ra_state:            s = state(row) ∈ {0, 1}
 *                             ⇒ row[ra_state] := val(lit(1 - s))
 * negate_ra_state_with_pc:    s = state(row) ∈ {0, 2}
 *                             ⇒ row[ra_state] := val(lit(2 - s))
 *                                                   aadwarf64 §"Call
 * frame instructions": each toggles between "not signed" and its own
 * signed state. A state it does not toggle, or a column holding a rule
 * of another kind (the ABI forbids mixing these with the register rule
 * instructions on RA_SIGN_STATE; libgcc asserts the same), is
 * malformed. */
static enum cfi_status negate_ra_state(struct translation *t, int signed_state)
{
    int state = current_ra_state(t);
    if (state < 0)
        return fail(t, CFI_E_MALFORMED,
                    "negate_ra_state on RA_SIGN_STATE with another rule");
    if (state != CFI_RA_NOT_SIGNED && state != signed_state)
        return fail(t, CFI_E_MALFORMED,
                    "negate_ra_state on a state it does not toggle");
    set_ra_state(t, (unsigned)(signed_state - state));
    return CFI_OK;
}

/* GNU_window_save, AARCH64_negate_ra_state: the meaning of 0x2d is the
 * architecture's (arch.h, vendor_ops): AArch64 return address signing
 * (above), SPARC register windows (not implemented), none on x86-64. */
static enum cfi_status rule_GNU_window_save(struct translation *t)
{
    switch (cfi_arch_vendor_op(t->fde->cie->arch, SEM_CFA_GNU_window_save)) {
    case CFI_VENDOR_NEGATE_RA_STATE:
        return negate_ra_state(t, CFI_RA_SIGNED_SP);
    case CFI_VENDOR_NONE:
        return fail(t, CFI_E_UNSUPPORTED,
                    "GNU_window_save has no meaning on x86-64");
    default:
        return fail(t, CFI_E_UNSUPPORTED,
                    "GNU_window_save: this architecture's meaning is not "
                    "implemented");
    }
}

/* AARCH64_negate_ra_state_with_pc: above. The decoder gives it only on
 * AArch64. */
static enum cfi_status rule_AARCH64_negate_ra_state_with_pc(
    struct translation *t)
{
    return negate_ra_state(t, CFI_RA_SIGNED_SP_PC);
}

/* AARCH64_set_ra_state(s, n):  s ∈ {0, 1, 2} ⇒ row[ra_state] := val(lit s)
 *                                                   aadwarf64 §"Call
 * frame instructions". States 3..15 are reserved (Note 8): unsupported,
 * as is any larger number. */
static enum cfi_status rule_AARCH64_set_ra_state(struct translation *t)
{
    if (t->insn->number > CFI_RA_STATE_MAX)
        return fail(t, CFI_E_UNSUPPORTED,
                    "set_ra_state: a reserved return address state");
    set_ra_state(t, (unsigned)t->insn->number);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                             */
/* ------------------------------------------------------------------ */

/* The rule of each opcode: X(opcode, the function that applies it). */
#define SEM_RULES(X)                                                        \
    X(set_loc, rule_set_loc)                                                \
    X(advance_loc, rule_advance_loc)                                        \
    X(advance_loc1, rule_advance_loc)                                       \
    X(advance_loc2, rule_advance_loc)                                       \
    X(advance_loc4, rule_advance_loc)                                       \
    X(MIPS_advance_loc8, rule_advance_loc)                                  \
    X(def_cfa, rule_def_cfa)                                                \
    X(def_cfa_sf, rule_def_cfa)                                             \
    X(def_cfa_register, rule_def_cfa_register)                              \
    X(def_cfa_offset, rule_def_cfa_offset)                                  \
    X(def_cfa_offset_sf, rule_def_cfa_offset)                               \
    X(def_cfa_expression, rule_def_cfa_expression)                          \
    X(undefined, rule_undefined)                                            \
    X(same_value, rule_same_value)                                          \
    X(offset, rule_offset)                                                  \
    X(offset_extended, rule_offset)                                         \
    X(offset_extended_sf, rule_offset)                                      \
    X(GNU_negative_offset_extended, rule_offset)                            \
    X(val_offset, rule_val_offset)                                          \
    X(val_offset_sf, rule_val_offset)                                       \
    X(register, rule_register)                                              \
    X(expression, rule_expression)                                          \
    X(val_expression, rule_val_expression)                                  \
    X(restore, rule_restore)                                                \
    X(restore_extended, rule_restore)                                       \
    X(remember_state, rule_remember_state)                                  \
    X(restore_state, rule_restore_state)                                    \
    X(nop, rule_nop)                                                        \
    X(GNU_args_size, rule_GNU_args_size)                                    \
    X(GNU_window_save, rule_GNU_window_save)                                \
    X(AARCH64_negate_ra_state_with_pc, rule_AARCH64_negate_ra_state_with_pc) \
    X(AARCH64_set_ra_state, rule_AARCH64_set_ra_state)

static enum cfi_status apply(struct translation *t, const struct sem_insn *insn)
{
    t->insn = insn;
    switch (insn->opcode) {
#define SEM_RULE_CASE(opcode, rule) case SEM_CFA_##opcode: return rule(t);
    SEM_RULES(SEM_RULE_CASE)
#undef SEM_RULE_CASE
    }
    /* The decoder gives only the opcodes above. */
    return fail(t, CFI_E_INTERNAL, "internal error: an opcode without a rule");
}

const char *sem_rule_name(enum sem_opcode opcode)
{
    switch (opcode) {
#define SEM_RULE_NAME(opcode, rule) case SEM_CFA_##opcode: return #rule;
    SEM_RULES(SEM_RULE_NAME)
#undef SEM_RULE_NAME
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Tracing                                                              */
/* ------------------------------------------------------------------ */

/* apply, telling the sink the row before and after. `bytes` are the
 * instruction's own. */
static enum cfi_status apply_traced(struct translation *t,
                                    const struct sem_insn *insn,
                                    const uint8_t *bytes, size_t len)
{
    struct dense_row *before = t->before;
    before->cfa = t->row.cfa;
    memcpy(before->rules, t->row.rules, t->regs_used * sizeof before->rules[0]);
    uint64_t loc = t->loc;
    enum cfi_status status = apply(t, insn);
    struct sem_trace_insn event = {
        .insn = insn, .in_cie = t->in_cie,
        .section_offset = t->program_offset + insn->at,
        .bytes = bytes, .len = len, .rule = sem_rule_name(insn->opcode),
        .loc = loc, .loc_after = t->loc, .status = status, .diag = t->diag,
        .cfa_before = &before->cfa, .cfa_after = &t->row.cfa,
        .rules_before = before->rules, .rules_after = t->row.rules,
        .depth = t->depth,
    };
    if (t->trace->insn)
        t->trace->insn(t->trace->env, &event);
    return status;
}

/* The decoding error that ends a program: its bytes from the faulty
 * instruction on. */
static void trace_decode_error(struct translation *t, const uint8_t *bytes,
                               size_t len, enum cfi_status status)
{
    uint64_t at = t->diag->offset - t->program_offset;
    struct sem_trace_insn event = {
        .in_cie = t->in_cie, .section_offset = t->diag->offset,
        .bytes = at <= len ? bytes + at : NULL,
        .len = at <= len ? len - (size_t)at : 0,
        .loc = t->loc, .loc_after = t->loc, .status = status,
        .diag = t->diag, .cfa_before = &t->row.cfa, .cfa_after = &t->row.cfa,
        .rules_before = t->row.rules, .rules_after = t->row.rules,
        .depth = t->depth,
    };
    if (t->trace->insn)
        t->trace->insn(t->trace->env, &event);
}

/* The end of instruction i: where the next starts, or where decoding
 * stopped. */
static size_t insn_end(const struct sem_program *program, size_t i,
                       size_t decoded_len)
{
    return i + 1 < program->count ? (size_t)program->insns[i + 1].at
                                  : decoded_len;
}

/* Decodes and applies one program (the CIE's or the FDE's). The first
 * error in program order is the one reported: when decoding stops at a
 * bad instruction, the instructions before it are applied first. */
static enum cfi_status run_program(struct translation *t, const uint8_t *bytes,
                                   size_t len, const struct sem_decode_env *env,
                                   uint64_t program_offset)
{
    struct sem_program program = {0};
    struct cfi_diag decode_diag = {0};
    enum cfi_status decoded = sem_decode(bytes, len, env, &program,
                                         &decode_diag);
    enum cfi_status status = CFI_OK;
    size_t decoded_len = decoded == CFI_OK || decode_diag.offset > len
                             ? len : (size_t)decode_diag.offset;
    t->program_offset = program_offset;
    for (size_t i = 0; i < program.count && status == CFI_OK; i++) {
        const struct sem_insn *insn = &program.insns[i];
        if (t->trace)
            status = apply_traced(t, insn, bytes + insn->at,
                                  insn_end(&program, i, decoded_len) -
                                      (size_t)insn->at);
        else
            status = apply(t, insn);
    }
    sem_program_free(&program);
    if (status != CFI_OK || decoded == CFI_OK)
        return status;
    if (decode_diag.offset != CFI_NO_OFFSET)
        decode_diag.offset += program_offset;
    if (t->diag)
        *t->diag = decode_diag;
    if (t->trace && t->diag && decode_diag.offset != CFI_NO_OFFSET)
        trace_decode_error(t, bytes, len, decoded);
    return decoded;
}

static struct sem_decode_env decode_env(const struct cfi_fde *fde, bool in_cie)
{
    const struct cfi_cie *cie = fde->cie;
    return (struct sem_decode_env){
        .code_align = cie->code_align,
        .data_align = cie->data_align,
        .section = fde->section,
        .address_size = cie->address_size ? cie->address_size : 8,
        .pointer_encoding = cie->fde_encoding,
        .bytes_addr = in_cie ? 0 : fde->instructions_addr,
        .in_cie = in_cie,
        .arch = cie->arch,
    };
}

/* The CIE program from an empty row gives `init`; the stack it leaves is
 * dropped: remembered rows do not cross from the CIE into the FDE (the CIE
 * defines "the initial setting of each column", §6.4.1, nothing more). */
static enum cfi_status run_cie(struct translation *t)
{
    const struct cfi_cie *cie = t->fde->cie;
    struct sem_decode_env env = decode_env(t->fde, true);
    t->in_cie = true;
    enum cfi_status status = run_program(t, cie->instructions,
                                         cie->instructions_len, &env,
                                         cie->instructions_offset);
    t->in_cie = false;
    t->init = t->row;
    t->depth = 0;
    return status;
}

static enum cfi_status run_fde(struct translation *t)
{
    const struct cfi_fde *fde = t->fde;
    struct sem_decode_env env = decode_env(fde, false);
    t->loc = fde->pc_begin;
    enum cfi_status status = run_program(t, fde->instructions,
                                         fde->instructions_len, &env,
                                         fde->instructions_offset);
    if (status == CFI_OK)
        status = emit(t, fde->pc_end);
    return status;
}

static enum cfi_status check_fde(const struct cfi_fde *fde,
                                 struct cfi_diag *diag)
{
    if (!fde->cie)
        return cfi_fail(diag, CFI_E_MALFORMED, fde->offset, "FDE without a CIE");
    if (fde->cie->ra_column >= CFI_NREGS)
        return cfi_fail(diag, CFI_E_MALFORMED, fde->cie->offset,
                        "return address register out of range");
    if (fde->pc_end < fde->pc_begin)
        return cfi_fail(diag, CFI_E_MALFORMED, fde->offset,
                        "FDE's address range wraps around");
    return CFI_OK;
}

/* Moves the ranges into the arena, so that *il lives as long as it. */
static enum cfi_status finish(struct translation *t, struct sem_fde_il *il)
{
    il->fde = t->fde;
    il->nranges = t->nranges;
    il->ranges = NULL;
    if (t->nranges) {
        il->ranges = sem_arena_copy(t->arena, t->ranges,
                                    t->nranges * sizeof *t->ranges);
        if (!il->ranges)
            return cfi_fail(t->diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                            "out of memory");
    }
    return CFI_OK;
}

enum cfi_status sem_translate_fde(const struct cfi_fde *fde,
                                  struct sem_arena *arena,
                                  struct sem_fde_il *il,
                                  struct cfi_diag *diag)
{
    return sem_translate_fde_traced(fde, arena, il, diag, NULL);
}

enum cfi_status sem_translate_fde_traced(const struct cfi_fde *fde,
                                         struct sem_arena *arena,
                                         struct sem_fde_il *il,
                                         struct cfi_diag *diag,
                                         const struct sem_trace *trace)
{
    struct cfi_diag local_diag;
    if (trace && !diag)
        diag = &local_diag;
    memset(il, 0, sizeof *il);
    enum cfi_status status = check_fde(fde, diag);
    if (status != CFI_OK)
        return status;
    struct translation *t = calloc(1, sizeof *t);
    if (!t)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    t->fde = fde;
    t->arena = arena;
    t->diag = diag;
    t->trace = trace;
    if (trace && !(t->before = calloc(1, sizeof *t->before))) {
        free(t);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    status = run_cie(t);
    if (status == CFI_OK)
        status = run_fde(t);
    if (status == CFI_OK)
        status = finish(t, il);
    free(t->before);
    free(t->stack);
    free(t->ranges);
    free(t);
    return status;
}

/* ------------------------------------------------------------------ */
/* Lookups                                                              */
/* ------------------------------------------------------------------ */

struct sem_rule sem_row_rule(const struct sem_row *row, unsigned reg)
{
    size_t lo = 0, hi = row->nrules;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (row->rules[mid].reg == reg)
            return row->rules[mid].rule;
        if (row->rules[mid].reg < reg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (struct sem_rule){.kind = SEM_RULE_UNSPECIFIED};
}

const struct sem_range *sem_fde_il_find(const struct sem_fde_il *il,
                                        uint64_t pc)
{
    size_t lo = 0, hi = il->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct sem_range *range = &il->ranges[mid];
        if (pc < range->begin)
            hi = mid;
        else if (pc >= range->end)
            lo = mid + 1;
        else
            return range;
    }
    return NULL;
}
