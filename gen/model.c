/* SPDX-License-Identifier: MIT */
/* model.c — the generator's own statement of the row semantics
 * (docs/semantics.md, "The semantics"; DWARF 5 §6.4), run over the lists
 * layout.c gives each CIE and FDE, and the expected IL printed from it.
 *
 * The state: the current row (CFA rule and a rule per register), the
 * CIE's initial row (for restore), the stack of remembered rows, the
 * location. The CIE's instructions run from an empty row and give the
 * CIE's initial row; the FDE's run from it at the FDE's start; each
 * advance closes the range [loc, loc + delta) with the current row (a
 * range per advance, rows are not merged); the FDE's end closes the last.
 * The first instruction that breaks a rule makes the whole FDE an error.
 *
 * AArch64's RA_SIGN_STATE (aadwarf64, Note 8 and "Call frame
 * instructions") is a column like any register whose rule, when the
 * vendor opcodes set it, is a state: no rule is state 0 (not signed);
 * negate_ra_state (0x2d) toggles 0 and 1, negate_ra_state_with_pc (0x2c)
 * toggles 0 and 2, set_ra_state (0x2b) sets 0, 1 or 2 (3-15 are
 * reserved); the IL writes state s as val_expression(lit<s>). A negate
 * of the state it does not toggle, or of a column holding another rule
 * (the ABI forbids mixing them with the register rule instructions on
 * RA_SIGN_STATE), breaks a rule.
 *
 * Written apart from semantics/ on purpose: when `cfisem il` and this
 * model disagree, one of the two is wrong. */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum rule_kind {
    RULE_NONE,           /* no rule: absent from the row */
    RULE_UNDEFINED,      /* undef */
    RULE_SAME,           /* same */
    RULE_OFFSET,         /* [cfa+N] */
    RULE_VAL_OFFSET,     /* cfa+N */
    RULE_REGISTER,       /* rM */
    RULE_EXPRESSION,     /* [expr(E)] */
    RULE_VAL_EXPRESSION, /* expr(E) */
    RULE_RA_STATE,       /* expr(lit<state>): RA_SIGN_STATE's state */
};

struct rule {
    uint8_t kind;
    uint32_t reg;                /* RULE_REGISTER; RULE_RA_STATE: the state */
    int64_t offset;
    const struct gen_expr *expr;
};

enum cfa_kind { CFA_NONE, CFA_REG_OFFSET, CFA_EXPR };

struct row {
    uint8_t cfa_kind;
    uint32_t cfa_reg;
    int64_t cfa_offset;
    const struct gen_expr *cfa_expr;
    struct rule rules[CFI_NREGS];
};

#define REMEMBER_MAX 64

struct model {
    const struct gen_target *target;
    struct row row;
    const struct row *cie_row;  /* NULL while the CIE's program runs */
    struct row *stack;          /* REMEMBER_MAX rows */
    unsigned depth;
    uint64_t loc, end;
    FILE *out;                  /* where ranges go, or NULL */
    const char *error;          /* the broken rule, fixed text */
};

/* ------------------------------------------------------------------ */
/* Printing                                                             */
/* ------------------------------------------------------------------ */

static void print_reg(FILE *out, const struct gen_target *target,
                      unsigned reg)
{
    char buf[16];
    fputs(cfi_arch_reg_label(target->names, reg, buf, sizeof buf), out);
}

static void print_expr(FILE *out, const struct gen_expr *expr)
{
    fputs("expr(", out);
    gen_expr_print(expr, out);
    putc(')', out);
}

static void print_rule(FILE *out, const struct gen_target *target,
                       const struct rule *rule)
{
    switch (rule->kind) {
    case RULE_UNDEFINED: fputs("undef", out); break;
    case RULE_SAME: fputs("same", out); break;
    case RULE_OFFSET: fprintf(out, "[cfa%+" PRId64 "]", rule->offset); break;
    case RULE_VAL_OFFSET: fprintf(out, "cfa%+" PRId64, rule->offset); break;
    case RULE_REGISTER: print_reg(out, target, rule->reg); break;
    case RULE_EXPRESSION:
        putc('[', out);
        print_expr(out, rule->expr);
        putc(']', out);
        break;
    case RULE_VAL_EXPRESSION: print_expr(out, rule->expr); break;
    case RULE_RA_STATE: fprintf(out, "expr(lit%" PRIu32 ")", rule->reg); break;
    default: break;
    }
}

static void print_range(FILE *out, const struct gen_target *target,
                        uint64_t begin, uint64_t end, const struct row *row)
{
    fprintf(out, "[0x%" PRIx64 ",0x%" PRIx64 ")  cfa=", begin, end);
    if (row->cfa_kind == CFA_REG_OFFSET) {
        print_reg(out, target, row->cfa_reg);
        fprintf(out, "%+" PRId64, row->cfa_offset);
    } else if (row->cfa_kind == CFA_EXPR) {
        print_expr(out, row->cfa_expr);
    } else {
        fputs("undef", out);
    }
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (row->rules[reg].kind == RULE_NONE)
            continue;
        fputs("  ", out);
        print_reg(out, target, reg);
        putc('=', out);
        print_rule(out, target, &row->rules[reg]);
    }
    putc('\n', out);
}

/* ------------------------------------------------------------------ */
/* The rules, one a function                                            */
/* ------------------------------------------------------------------ */

static bool fail(struct model *m, const char *message)
{
    m->error = message;
    return false;
}

/* The factored offset N × data_align, data_align = -8 (both machines),
 * mod 2^64. */
static int64_t factored(uint64_t n)
{
    return (int64_t)(n * (uint64_t)-8);
}

/* advance(d): emit [loc, loc+d) with the row; loc := loc + d. */
static bool rule_advance(struct model *m, uint64_t delta)
{
    if (!m->cie_row)
        return fail(m, "location change in the CIE's initial instructions");
    if (delta > m->end - m->loc)
        return fail(m, "location past the FDE's end");
    if (m->out && delta > 0)
        print_range(m->out, m->target, m->loc, m->loc + delta, &m->row);
    m->loc += delta;
    return true;
}

/* def_cfa(r, n), def_cfa_sf(r, f): cfa := r + n (n = f × -8). */
static bool rule_def_cfa(struct model *m, uint32_t reg, int64_t offset)
{
    m->row.cfa_kind = CFA_REG_OFFSET;
    m->row.cfa_reg = reg;
    m->row.cfa_offset = offset;
    m->row.cfa_expr = NULL;
    return true;
}

/* def_cfa_register(r): cfa = _ + n ⇒ cfa := r + n. */
static bool rule_def_cfa_register(struct model *m, uint32_t reg)
{
    if (m->row.cfa_kind != CFA_REG_OFFSET)
        return fail(m, "def_cfa_register without a register+offset CFA");
    m->row.cfa_reg = reg;
    return true;
}

/* def_cfa_offset(n), def_cfa_offset_sf(f): cfa = r + _ ⇒ cfa := r + n. */
static bool rule_def_cfa_offset(struct model *m, int64_t offset)
{
    if (m->row.cfa_kind != CFA_REG_OFFSET)
        return fail(m, "def_cfa_offset without a register+offset CFA");
    m->row.cfa_offset = offset;
    return true;
}

/* def_cfa_expression(E): cfa := expr(E). */
static bool rule_def_cfa_expression(struct model *m, const struct gen_expr *e)
{
    m->row.cfa_kind = CFA_EXPR;
    m->row.cfa_expr = e;
    return true;
}

/* Every rule of a register: row[r] := rule. */
static bool rule_set(struct model *m, uint32_t reg, struct rule rule)
{
    m->row.rules[reg] = rule;
    return true;
}

/* restore(r), restore_extended(r): row[r] := cie_row[r]. */
static bool rule_restore(struct model *m, uint32_t reg)
{
    if (!m->cie_row)
        return fail(m, "restore in the CIE's initial instructions");
    m->row.rules[reg] = m->cie_row->rules[reg];
    return true;
}

/* remember_state: stack := stack · row (the CFA rule included). */
static bool rule_remember_state(struct model *m)
{
    if (m->depth == REMEMBER_MAX)
        return fail(m, "remember_state nested too deep");
    m->stack[m->depth++] = m->row;
    return true;
}

/* restore_state: stack = s · top ⇒ row := top; stack := s. */
static bool rule_restore_state(struct model *m)
{
    if (m->depth == 0)
        return fail(m, "restore_state with an empty stack");
    m->row = m->stack[--m->depth];
    return true;
}

/* The state RA_SIGN_STATE holds: no rule is 0; -1 for another rule. */
static int ra_state(const struct model *m)
{
    const struct rule *rule = &m->row.rules[GEN_A64_RA_SIGN_STATE];
    if (rule->kind == RULE_NONE)
        return 0;
    return rule->kind == RULE_RA_STATE ? (int)rule->reg : -1;
}

/* negate_ra_state (signed 1), negate_ra_state_with_pc (signed 2):
 *   s = state(row) ∈ {0, signed} ⇒ row[34] := state(signed - s) */
static bool rule_negate_ra_state(struct model *m, uint32_t signed_state)
{
    int state = ra_state(m);
    if (state < 0)
        return fail(m, "negate_ra_state on RA_SIGN_STATE with another rule");
    if (state != 0 && (uint32_t)state != signed_state)
        return fail(m, "negate_ra_state on a state it does not toggle");
    return rule_set(m, GEN_A64_RA_SIGN_STATE,
                    (struct rule){RULE_RA_STATE, signed_state - (uint32_t)state,
                                  0, NULL});
}

/* set_ra_state(s, n): s ∈ {0, 1, 2} ⇒ row[34] := state(s). The code
 * location n records is not a rule of the row. */
static bool rule_set_ra_state(struct model *m, uint64_t state)
{
    if (state > GEN_A64_RA_STATE_MAX)
        return fail(m, "set_ra_state: a reserved return address state");
    return rule_set(m, GEN_A64_RA_SIGN_STATE,
                    (struct rule){RULE_RA_STATE, (uint32_t)state, 0, NULL});
}

/* The opcodes whose meaning is the machine's: 0x2b-0x2d on AArch64; on
 * x86-64 0x2d has none (and 0x2b, 0x2c are not written). */
static bool apply_vendor(struct model *m, const struct gen_insn *i)
{
    if (!m->target->ra_signing)
        return fail(m, i->opcode == GEN_CFA_GNU_window_save
                           ? "GNU_window_save has no meaning on x86-64"
                           : "unknown opcode");
    switch (i->opcode) {
    case GEN_A64_AARCH64_negate_ra_state: return rule_negate_ra_state(m, 1);
    case GEN_A64_AARCH64_negate_ra_state_with_pc:
        return rule_negate_ra_state(m, 2);
    default: return rule_set_ra_state(m, i->operand);
    }
}

static bool regs_in_range(struct model *m, const struct gen_insn *insn)
{
    enum gen_cfa_shape shape = GEN_CFA_NONE;
    gen_cfa_shape(insn->opcode, &shape);
    bool one = shape == GEN_CFA_REG || shape == GEN_CFA_REG_REG ||
               shape == GEN_CFA_REG_UOFF || shape == GEN_CFA_REG_UFAC ||
               shape == GEN_CFA_REG_SFAC || shape == GEN_CFA_REG_EXPR;
    if ((one && insn->reg >= CFI_NREGS) ||
        (shape == GEN_CFA_REG_REG && insn->reg2 >= CFI_NREGS))
        return fail(m, "register number out of range");
    return true;
}

static bool apply(struct model *m, const struct gen_insn *i)
{
    if (!regs_in_range(m, i))
        return false;
    uint64_t n = i->operand;
    switch (i->opcode) {
    case GEN_CFA_def_cfa: return rule_def_cfa(m, i->reg, (int64_t)n);
    case GEN_CFA_def_cfa_sf: return rule_def_cfa(m, i->reg, factored(n));
    case GEN_CFA_def_cfa_register: return rule_def_cfa_register(m, i->reg);
    case GEN_CFA_def_cfa_offset: return rule_def_cfa_offset(m, (int64_t)n);
    case GEN_CFA_def_cfa_offset_sf: return rule_def_cfa_offset(m, factored(n));
    case GEN_CFA_def_cfa_expression: return rule_def_cfa_expression(m, i->expr);
    case GEN_CFA_offset: case GEN_CFA_offset_extended:
    case GEN_CFA_offset_extended_sf:
        return rule_set(m, i->reg, (struct rule){RULE_OFFSET, 0, factored(n), NULL});
    case GEN_CFA_GNU_negative_offset_extended:
        return rule_set(m, i->reg, (struct rule){RULE_OFFSET, 0, -factored(n), NULL});
    case GEN_CFA_val_offset: case GEN_CFA_val_offset_sf:
        return rule_set(m, i->reg, (struct rule){RULE_VAL_OFFSET, 0, factored(n), NULL});
    case GEN_CFA_register:
        return rule_set(m, i->reg, (struct rule){RULE_REGISTER, i->reg2, 0, NULL});
    case GEN_CFA_expression:
        return rule_set(m, i->reg, (struct rule){RULE_EXPRESSION, 0, 0, i->expr});
    case GEN_CFA_val_expression:
        return rule_set(m, i->reg, (struct rule){RULE_VAL_EXPRESSION, 0, 0, i->expr});
    case GEN_CFA_undefined:
        return rule_set(m, i->reg, (struct rule){RULE_UNDEFINED, 0, 0, NULL});
    case GEN_CFA_same_value:
        return rule_set(m, i->reg, (struct rule){RULE_SAME, 0, 0, NULL});
    case GEN_CFA_restore: case GEN_CFA_restore_extended:
        return rule_restore(m, i->reg);
    case GEN_CFA_remember_state: return rule_remember_state(m);
    case GEN_CFA_restore_state: return rule_restore_state(m);
    case GEN_CFA_nop: case GEN_CFA_GNU_args_size: return true;
    case GEN_A64_AARCH64_negate_ra_state:
    case GEN_A64_AARCH64_negate_ra_state_with_pc:
    case GEN_A64_AARCH64_set_ra_state:
        return apply_vendor(m, i);
    default: return fail(m, "unknown opcode");
    }
}

/* ------------------------------------------------------------------ */
/* Running a CIE and an FDE                                             */
/* ------------------------------------------------------------------ */

/* Where an FDE's translation fails: the program (CIE's or FDE's), the
 * byte offset of the instruction in it, the broken rule. */
struct failure {
    bool in_cie;
    uint64_t at;
    const char *message;
};

/* Runs nodes[0 .. count); false with *at the byte offset of the
 * instruction whose rule failed. */
static bool run_nodes(struct model *m, const struct gen_node *nodes,
                      size_t count, uint64_t *at)
{
    uint8_t scratch[GEN_INSN_BYTES_MAX];
    *at = 0;
    for (size_t i = 0; i < count; i++) {
        bool ok = nodes[i].insn ? apply(m, nodes[i].insn)
                                : rule_advance(m, nodes[i].advance);
        if (!ok)
            return false;
        *at += gen_node_encode(&nodes[i], m->target->code_align, scratch);
    }
    return true;
}

/* The table of FDE f in section l: the ranges go to `out` (may be NULL).
 * False with *failure filled when a rule fails. */
static bool run_fde(const struct gen_program *p,
                    const struct gen_section_layout *l, uint32_t f,
                    struct model *m, FILE *out, struct failure *failure)
{
    const struct gen_fde *fde = &p->fdes[f];
    const struct gen_cie_layout *cie = &l->cies[l->fdes[f].cie];
    struct row *cie_row = malloc(sizeof *cie_row);
    bool ok = cie_row != NULL;
    memset(&m->row, 0, sizeof m->row);
    m->cie_row = NULL;
    m->depth = 0;
    m->out = NULL;
    m->error = ok ? NULL : "out of memory";
    failure->in_cie = true;
    if (ok && !run_nodes(m, p->nodes[cie->fde], cie->ninsns, &failure->at))
        ok = false;
    if (ok) {
        *cie_row = m->row;
        m->cie_row = cie_row;
        m->depth = 0;
        m->loc = fde->begin;
        m->end = fde->end;
        m->out = out;
        failure->in_cie = false;
        ok = run_nodes(m, p->nodes[f] + cie->ninsns, p->nnodes[f] - cie->ninsns,
                       &failure->at) &&
             rule_advance(m, m->end - m->loc);
    }
    failure->message = m->error;
    free(cie_row);
    return ok;
}

static void print_header(FILE *out, const struct gen_program *p,
                         const struct gen_section_layout *l, uint32_t f)
{
    const struct gen_fde *fde = &p->fdes[f];
    const struct gen_cie_layout *cie = &l->cies[l->cies[l->fdes[f].cie].kept];
    fprintf(out, "fde %s+0x%" PRIx64 " cie=0x%" PRIx64 " [0x%" PRIx64
                 ",0x%" PRIx64 ") aug=%s caf=%u daf=-8 ra=%" PRIu32 "%s\n",
            cfi_section_name(l->section), l->fdes[f].offset, cie->offset,
            fde->begin, fde->end, cie->augmentation, p->target->code_align,
            fde->ra,
            fde->signal_frame ? " signal" : "");
}

/* The first failing FDE and how many fail, in `cfisem il`'s order. */
struct failures {
    size_t count;
    const struct gen_section_layout *layout;
    uint32_t fde;
    struct failure first;
};

/* Runs every FDE of both sections; prints those that translate when out
 * is not NULL. */
static bool run_all(const struct gen_program *p, FILE *out,
                    struct failures *failures)
{
    struct model m = {0};
    m.target = p->target;
    m.stack = malloc(REMEMBER_MAX * sizeof *m.stack);
    if (!m.stack)
        return false;
    memset(failures, 0, sizeof *failures);
    for (int s = 0; s < 2; s++) {
        const struct gen_section_layout *l = &p->layouts[s];
        if (!(s == CFI_EH_FRAME ? p->eh_frame : p->debug_frame))
            continue;
        for (uint32_t f = 0; f < p->nfdes; f++) {
            struct failure failure;
            if (!run_fde(p, l, f, &m, NULL, &failure)) {
                if (failures->count++ == 0)
                    *failures = (struct failures){1, l, f, failure};
                continue;
            }
            if (!out)
                continue;
            print_header(out, p, l, f);
            run_fde(p, l, f, &m, out, &failure);
            putc('\n', out);
        }
    }
    free(m.stack);
    return true;
}

static void print_failure(FILE *out, const struct failures *f)
{
    fprintf(out, "error: %s FDE 0x%" PRIx64 ": %sinstruction at +0x%" PRIx64
                 ": %s",
            cfi_section_name(f->layout->section),
            f->layout->fdes[f->fde].offset, f->first.in_cie ? "CIE " : "",
            f->first.at, f->first.message);
    if (f->count > 1)
        fprintf(out, " (and %zu more FDEs with errors)", f->count - 1);
    putc('\n', out);
}

void gen_model_write(const struct gen_program *p, FILE *out)
{
    struct failures failures;
    if (run_all(p, out, &failures) && failures.count)
        print_failure(out, &failures);
}

enum cfi_status gen_check_model(const struct gen_program *p,
                                struct cfi_diag *diag)
{
    struct failures failures;
    if (!run_all(p, NULL, &failures))
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    /* The generator broke its own rules: its error, not the options'. */
    if (!p->options.ill_formed && failures.count)
        return cfi_fail(diag, CFI_E_INTERNAL, failures.first.at,
                        failures.first.message);
    if (p->options.ill_formed && failures.count == 0)
        return cfi_fail(diag, CFI_E_INTERNAL, CFI_NO_OFFSET,
                        "the injected error breaks no rule");
    return CFI_OK;
}
