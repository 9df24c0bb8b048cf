/* SPDX-License-Identifier: MIT */
/* generate.c — the random program: functions, their attributes (CIE
 * variety), groups of directives and code sizes, and the patterns of real
 * binaries (FACTS.md).
 *
 * The generator keeps only what well-formedness needs: the kind of the
 * CFA rule (none, register+offset, expression) and the CFA kinds of the
 * remembered rows, on AArch64 the state of RA_SIGN_STATE (which negate
 * may come next) and the remembered states, the depth of the remember
 * stack, and whether the
 * directives so far still lead the function (gas may move those into a
 * CIE, where restore is an error). The rows themselves are the model's
 * business (model.c). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

enum { CFA_KIND_NONE, CFA_KIND_REG, CFA_KIND_EXPR };

#define REMEMBER_LIMIT 64

/* RA_SIGN_STATE's state as the generator knows it: 0-2, or another rule
 * (only before an injected error). */
enum { RA_STATE_OTHER = -1 };

struct genstate {
    struct gen_rng *rng;
    const struct gen_target *target;
    struct gen_program *program;
    struct gen_fde *fde;
    int cfa;
    int remembered[REMEMBER_LIMIT];
    int ra_state;                  /* AArch64 */
    int remembered_ra[REMEMBER_LIMIT];
    unsigned depth;
    unsigned gas_depth;    /* remember_state directives not yet restored */
    bool leading;
    bool touched[CFI_NREGS];
    uint64_t addr;
    bool big_gap;          /* one gap of 64 KiB or more is still allowed */
    bool inject_here;      /* this function gets the injected error */
    bool injecting;        /* the next instruction is the error */
    uint32_t inject_group; /* at this group */
    bool failed;           /* out of memory */
};

/* ------------------------------------------------------------------ */
/* Groups and instructions                                              */
/* ------------------------------------------------------------------ */

struct gen_insn *gen_fde_add_insn(struct gen_fde *fde)
{
    if (fde->ninsns == fde->insns_cap) {
        uint32_t cap = fde->insns_cap ? fde->insns_cap * 2 : 16;
        struct gen_insn *grown = realloc(fde->insns, cap * sizeof *grown);
        if (!grown)
            return NULL;
        fde->insns = grown;
        fde->insns_cap = cap;
    }
    struct gen_insn *insn = &fde->insns[fde->ninsns++];
    memset(insn, 0, sizeof *insn);
    return insn;
}

static void open_group(struct genstate *st)
{
    struct gen_fde *fde = st->fde;
    if (fde->ngroups == fde->groups_cap) {
        uint32_t cap = fde->groups_cap ? fde->groups_cap * 2 : 16;
        struct gen_group *grown = realloc(fde->groups, cap * sizeof *grown);
        if (!grown) {
            st->failed = true;
            return;
        }
        fde->groups = grown;
        fde->groups_cap = cap;
    }
    fde->groups[fde->ngroups++] = (struct gen_group){fde->ninsns, 0, 0, 0};
}

/* A code size: mostly a few bytes; sometimes enough for advance_loc1
 * (64+), advance_loc2 (256+), once in a while advance_loc4 (65536+);
 * now and then exactly at a boundary of the forms. */
static uint32_t code_size(struct genstate *st)
{
    struct gen_rng *rng = st->rng;
    static const uint32_t edges[] = {63, 64, 255, 256, 65535, 65536};
    unsigned roll = (unsigned)gen_rng_below(rng, 1000);
    if (st->big_gap && roll < 15) {
        st->big_gap = false;
        return (uint32_t)gen_rng_range(rng, 65536, 66000);
    }
    if (roll < 30)
        return edges[gen_rng_below(rng, st->big_gap ? 6 : 4)];
    if (roll < 80)
        return (uint32_t)gen_rng_range(rng, 256, 1500);
    if (roll < 160)
        return (uint32_t)gen_rng_range(rng, 64, 255);
    if (roll < 280)
        return (uint32_t)gen_rng_range(rng, 9, 63);
    return (uint32_t)gen_rng_range(rng, 1, 8);
}

/* Closes the group with `units` instructions' worth of code: bytes on
 * x86-64, 4-byte instructions on AArch64 (the advances count units). */
static void close_group(struct genstate *st, uint32_t units)
{
    if (st->failed)
        return;
    struct gen_group *g = &st->fde->groups[st->fde->ngroups - 1];
    g->code = units * st->target->code_align;
    unsigned style = (unsigned)gen_rng_below(st->rng, 5);
    if ((style == GEN_CODE_NOP && units > 4) ||
        (style == GEN_CODE_BYTES && units > 16))
        style = GEN_CODE_SKIP;
    g->code_style = (uint8_t)style;
    st->addr += g->code;
    st->leading = false;
}

/* What an instruction changes in the generator's state. */
static void track(struct genstate *st, const struct gen_insn *insn)
{
    if (st->leading && !(insn->spelling == GEN_SPELL_DIRECTIVE &&
                         gen_insn_cie_kind(insn)))
        st->leading = false;
    if (insn->spelling == GEN_SPELL_DIRECTIVE &&
        insn->opcode == GEN_CFA_remember_state)
        st->gas_depth++;
    if (insn->spelling == GEN_SPELL_DIRECTIVE &&
        insn->opcode == GEN_CFA_restore_state)
        st->gas_depth--;
    if (insn->injected)
        return;
    switch (insn->opcode) {
    case GEN_CFA_def_cfa: case GEN_CFA_def_cfa_sf: st->cfa = CFA_KIND_REG; break;
    case GEN_CFA_def_cfa_expression: st->cfa = CFA_KIND_EXPR; break;
    case GEN_CFA_remember_state:
        st->remembered_ra[st->depth] = st->ra_state;
        st->remembered[st->depth++] = st->cfa;
        break;
    case GEN_CFA_restore_state:
        st->cfa = st->remembered[--st->depth];
        st->ra_state = st->remembered_ra[st->depth];
        break;
    case GEN_A64_AARCH64_negate_ra_state:
        st->ra_state = 1 - st->ra_state;
        break;
    case GEN_A64_AARCH64_negate_ra_state_with_pc:
        st->ra_state = 2 - st->ra_state;
        break;
    case GEN_A64_AARCH64_set_ra_state: st->ra_state = (int)insn->operand; break;
    default: {
        enum gen_cfa_shape shape = GEN_CFA_NONE;
        gen_cfa_shape(insn->opcode, &shape);
        bool rule = shape == GEN_CFA_REG || shape == GEN_CFA_REG_REG ||
                    shape == GEN_CFA_REG_UFAC || shape == GEN_CFA_REG_SFAC ||
                    shape == GEN_CFA_REG_EXPR;
        if (rule && insn->opcode != GEN_CFA_def_cfa_register &&
            insn->reg < CFI_NREGS)
            st->touched[insn->reg] = true;
        if (rule && insn->opcode != GEN_CFA_def_cfa_register &&
            st->target->ra_signing && insn->reg == GEN_A64_RA_SIGN_STATE)
            st->ra_state = RA_STATE_OTHER;
        break;
    }
    }
}

enum spell_choice { SPELL_RANDOM, SPELL_DIRECTIVE, SPELL_ESCAPE };

/* Appends an instruction, spelled as asked, or (SPELL_RANDOM) as a
 * directive when gas has one for it, most of the time, and as a
 * .cfi_escape otherwise. */
static struct gen_insn *emit_spelled(struct genstate *st,
                                     enum spell_choice choice, uint8_t opcode,
                                     uint32_t reg, uint32_t reg2,
                                     uint64_t operand, struct gen_expr *expr)
{
    struct gen_insn *insn = st->failed ? NULL : gen_fde_add_insn(st->fde);
    if (!insn) {
        st->failed = true;
        free(expr);
        return NULL;
    }
    *insn = (struct gen_insn){.opcode = opcode, .reg = reg, .reg2 = reg2,
                              .operand = operand, .expr = expr,
                              .injected = st->injecting};
    bool directive = gen_insn_has_directive(insn) &&
                     (choice == SPELL_DIRECTIVE ||
                      (choice == SPELL_RANDOM && gen_rng_chance(st->rng, 65)));
    /* A restore leading a function could land in a CIE, where it is an
     * error; escaped, it cannot (gas never moves an escape into a CIE). */
    if (choice == SPELL_RANDOM && st->leading &&
        (opcode == GEN_CFA_restore || opcode == GEN_CFA_restore_extended))
        directive = false;
    /* gas keeps a stack of its own for .cfi_remember_state and refuses a
     * .cfi_restore_state that has no directive to pair with: restore
     * with an escape then. */
    if (opcode == GEN_CFA_restore_state && st->gas_depth == 0)
        directive = false;
    insn->spelling = directive ? GEN_SPELL_DIRECTIVE : GEN_SPELL_ESCAPE;
    insn->reg_as_number = gen_rng_chance(st->rng, 30);
    st->fde->groups[st->fde->ngroups - 1].count++;
    track(st, insn);
    return insn;
}

static struct gen_insn *emit(struct genstate *st, uint8_t opcode, uint32_t reg,
                             uint32_t reg2, uint64_t operand,
                             struct gen_expr *expr)
{
    return emit_spelled(st, SPELL_RANDOM, opcode, reg, reg2, operand, expr);
}

static struct gen_expr *new_expr(struct genstate *st)
{
    struct gen_expr *expr = calloc(1, sizeof *expr);
    if (!expr)
        st->failed = true;
    return expr;
}

/* An expression from a fixed list of operations (a pattern). */
struct fixed_op {
    enum gen_dw_op kind;
    unsigned index;
    int64_t a;
};

static struct gen_expr *fixed_expr(struct genstate *st,
                                   const struct fixed_op *ops, size_t n)
{
    struct gen_expr *expr = new_expr(st);
    if (!expr)
        return NULL;
    for (size_t i = 0; i < n; i++)
        gen_expr_add(expr, ops[i].kind, ops[i].index, (uint64_t)ops[i].a, 0);
    gen_expr_encode(expr);
    return expr;
}

static struct gen_expr *random_expr(struct genstate *st, bool cfa_pushed)
{
    struct gen_expr *expr = new_expr(st);
    if (expr)
        gen_expr_random(st->rng, st->target, expr, cfa_pushed);
    return expr;
}

/* ------------------------------------------------------------------ */
/* Operands                                                             */
/* ------------------------------------------------------------------ */

/* AArch64: mostly x0-x30 and sp (the callee-saved x19-x30 most), then
 * the callee-saved v8-v15 (72-79), other vector registers, and the rest
 * up to 127 but RA_SIGN_STATE, which only its own opcodes set. */
static uint32_t rule_reg_a64(struct gen_rng *rng)
{
    static const unsigned weights[32] = {
        2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 8, 8, 2};
    unsigned roll = (unsigned)gen_rng_below(rng, 100);
    if (roll < 70)
        return (uint32_t)gen_rng_pick(rng, weights, 32);
    if (roll < 85)
        return (uint32_t)gen_rng_range(rng, 72, 79);
    if (roll < 92)
        return (uint32_t)gen_rng_range(rng, 64, 95);
    uint32_t reg = (uint32_t)gen_rng_range(rng, 32, CFI_NREGS - 1);
    return reg == GEN_A64_RA_SIGN_STATE ? reg + 1 : reg;
}

/* A register given a rule: mostly 0-16, sometimes above, up to 127. */
static uint32_t rule_reg(struct gen_rng *rng, const struct gen_target *target)
{
    if (target->ra_signing)
        return rule_reg_a64(rng);
    static const unsigned weights[17] = {3, 3, 3, 8, 3, 3, 8, 2, 3, 3,
                                         3, 3, 6, 6, 6, 6, 6};
    unsigned roll = (unsigned)gen_rng_below(rng, 100);
    if (roll < 75)
        return (uint32_t)gen_rng_pick(rng, weights, 17);
    if (roll < 88)
        return (uint32_t)gen_rng_range(rng, 17, 63);
    return (uint32_t)gen_rng_range(rng, 64, CFI_NREGS - 1);
}

/* A register the CFA is computed from: 0-16, mostly rsp and rbp
 * (AArch64: x0-x30 and sp, mostly sp and x29). */
static uint32_t cfa_reg(struct gen_rng *rng, const struct gen_target *target)
{
    if (target->ra_signing) {
        static const unsigned weights[32] = {
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2,
            2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 10, 1, 14};
        return (uint32_t)gen_rng_pick(rng, weights, 32);
    }
    static const unsigned weights[17] = {2, 1, 1, 2, 1, 1, 10, 14, 1, 1,
                                         3, 1, 1, 1, 1, 1, 1};
    return (uint32_t)gen_rng_pick(rng, weights, 17);
}

/* A register to restore: one that had a rule, mostly. */
static uint32_t restore_reg(struct genstate *st)
{
    if (gen_rng_chance(st->rng, 75)) {
        uint32_t start = (uint32_t)gen_rng_below(st->rng, CFI_NREGS);
        for (uint32_t k = 0; k < CFI_NREGS; k++)
            if (st->touched[(start + k) % CFI_NREGS])
                return (start + k) % CFI_NREGS;
    }
    return gen_rng_chance(st->rng, 30) ? st->target->ra
                                       : rule_reg(st->rng, st->target);
}

/* An unsigned factored offset (× -8): mostly 1-8 (cfa-8 .. cfa-64). */
static uint64_t ufactor(struct gen_rng *rng)
{
    unsigned roll = (unsigned)gen_rng_below(rng, 100);
    if (roll < 80)
        return gen_rng_range(rng, 1, 8);
    if (roll < 88)
        return 0;
    if (roll < 96)
        return gen_rng_range(rng, 9, 300);
    return gen_rng_range(rng, 301, UINT64_C(1) << 24);
}

/* A signed factored offset: either sign. */
static uint64_t sfactor(struct gen_rng *rng)
{
    uint64_t magnitude = ufactor(rng);
    return gen_rng_chance(rng, 50) ? 0 - magnitude : magnitude;
}

/* A CFA offset: mostly a multiple of 8 up to 512. */
static uint64_t cfa_offset(struct gen_rng *rng)
{
    unsigned roll = (unsigned)gen_rng_below(rng, 100);
    if (roll < 80)
        return 8 * gen_rng_range(rng, 1, 64);
    if (roll < 90)
        return gen_rng_below(rng, 64);
    if (roll < 98)
        return gen_rng_range(rng, 512, UINT64_C(1) << 28);
    /* at or above 2^63: valid, the offset is mod 2^64 (a small negative) */
    return 0 - 8 * gen_rng_range(rng, 1, 8);
}

/* ------------------------------------------------------------------ */
/* One random instruction                                               */
/* ------------------------------------------------------------------ */

static const uint8_t cfa_opcodes[] = {
#define GEN_CFA_OPCODE(name, opcode, shape, weight) opcode,
    GEN_CFA_OPS(GEN_CFA_OPCODE)
#undef GEN_CFA_OPCODE
};
static const unsigned cfa_weights[] = {
#define GEN_CFA_WEIGHT(name, opcode, shape, weight) weight,
    GEN_CFA_OPS(GEN_CFA_WEIGHT)
#undef GEN_CFA_WEIGHT
};
#define NCFA_OPS (sizeof cfa_opcodes / sizeof cfa_opcodes[0])

/* May `opcode` come next? `rules_only`: no CFA or stack change. */
static bool allowed(const struct genstate *st, uint8_t opcode, bool rules_only)
{
    switch (opcode) {
    case GEN_CFA_def_cfa_register: case GEN_CFA_def_cfa_offset:
    case GEN_CFA_def_cfa_offset_sf:
        return !rules_only && st->cfa == CFA_KIND_REG;
    case GEN_CFA_def_cfa: case GEN_CFA_def_cfa_sf:
    case GEN_CFA_def_cfa_expression:
        return !rules_only;
    case GEN_CFA_remember_state: return !rules_only && st->depth < 8;
    case GEN_CFA_restore_state: return !rules_only && st->depth > 0;
    default: return true;
    }
}

static const uint8_t a64_opcodes[] = {
#define GEN_A64_OPCODE(name, opcode, shape, weight) opcode,
    GEN_A64_OPS(GEN_A64_OPCODE)
#undef GEN_A64_OPCODE
};
static const unsigned a64_weights[] = {
#define GEN_A64_WEIGHT(name, opcode, shape, weight) weight,
    GEN_A64_OPS(GEN_A64_WEIGHT)
#undef GEN_A64_WEIGHT
};
#define NA64_OPS (sizeof a64_opcodes / sizeof a64_opcodes[0])

/* May this AArch64 opcode come in state st->ra_state? A negate only
 * toggles its own signed state and "not signed". */
static bool ra_allowed(const struct genstate *st, uint8_t opcode)
{
    switch (opcode) {
    case GEN_A64_AARCH64_negate_ra_state:
        return st->ra_state == 0 || st->ra_state == 1;
    case GEN_A64_AARCH64_negate_ra_state_with_pc:
        return st->ra_state == 0 || st->ra_state == 2;
    default: return true;
    }
}

/* The code offset of set_ra_state (× 4): mostly the PAC instruction a
 * few instructions back, sometimes anything. */
static uint64_t ra_code_offset(struct gen_rng *rng)
{
    if (gen_rng_chance(rng, 80))
        return 0 - gen_rng_below(rng, 4);
    return sfactor(rng);
}

static void emit_set_ra_state(struct genstate *st, unsigned state)
{
    struct gen_insn *insn = emit(st, GEN_A64_AARCH64_set_ra_state, 0, 0, state,
                                 NULL);
    if (insn)
        insn->operand2 = ra_code_offset(st->rng);
}

/* One of the opcodes that change RA_SIGN_STATE, valid in the state. */
static void ra_state_insn(struct genstate *st)
{
    unsigned weights[NA64_OPS];
    for (size_t i = 0; i < NA64_OPS; i++)
        weights[i] = ra_allowed(st, a64_opcodes[i]) ? a64_weights[i] : 0;
    uint8_t op = a64_opcodes[gen_rng_pick(st->rng, weights, NA64_OPS)];
    if (op == GEN_A64_AARCH64_set_ra_state)
        emit_set_ra_state(st, (unsigned)gen_rng_below(st->rng, 3));
    else
        emit(st, op, 0, 0, 0, NULL);
}

static struct gen_expr *cfa_expr(struct genstate *st);
static struct gen_expr *reg_expr(struct genstate *st);

static void random_insn(struct genstate *st, bool rules_only)
{
    struct gen_rng *rng = st->rng;
    if (st->target->ra_signing && st->ra_state != RA_STATE_OTHER &&
        gen_rng_chance(rng, 15)) {
        ra_state_insn(st);
        return;
    }
    unsigned weights[NCFA_OPS];
    for (size_t i = 0; i < NCFA_OPS; i++)
        weights[i] = allowed(st, cfa_opcodes[i], rules_only) ? cfa_weights[i] : 0;
    uint8_t op = cfa_opcodes[gen_rng_pick(rng, weights, NCFA_OPS)];
    uint32_t reg = rule_reg(rng, st->target);
    switch (op) {
    case GEN_CFA_offset:
        emit(st, reg > 63 ? GEN_CFA_offset_extended : op, reg, 0, ufactor(rng), NULL);
        return;
    case GEN_CFA_offset_extended: case GEN_CFA_val_offset:
    case GEN_CFA_GNU_negative_offset_extended:
        emit(st, op, reg, 0, ufactor(rng), NULL);
        return;
    case GEN_CFA_offset_extended_sf: case GEN_CFA_val_offset_sf:
        emit(st, op, reg, 0, sfactor(rng), NULL);
        return;
    case GEN_CFA_restore: case GEN_CFA_restore_extended:
        reg = restore_reg(st);
        emit(st, reg > 63 ? GEN_CFA_restore_extended : op, reg, 0, 0, NULL);
        return;
    case GEN_CFA_undefined: case GEN_CFA_same_value:
        emit(st, op, reg, 0, 0, NULL);
        return;
    case GEN_CFA_register:
        emit(st, op, reg, rule_reg(rng, st->target), 0, NULL);
        return;
    case GEN_CFA_def_cfa:
        emit(st, op, cfa_reg(rng, st->target), 0, cfa_offset(rng), NULL);
        return;
    case GEN_CFA_def_cfa_sf:
        emit(st, op, cfa_reg(rng, st->target), 0, sfactor(rng), NULL);
        return;
    case GEN_CFA_def_cfa_register:
        emit(st, op, cfa_reg(rng, st->target), 0, 0, NULL);
        return;
    case GEN_CFA_def_cfa_offset: emit(st, op, 0, 0, cfa_offset(rng), NULL); return;
    case GEN_CFA_def_cfa_offset_sf: emit(st, op, 0, 0, sfactor(rng), NULL); return;
    case GEN_CFA_def_cfa_expression: emit(st, op, 0, 0, 0, cfa_expr(st)); return;
    case GEN_CFA_expression: case GEN_CFA_val_expression:
        emit(st, op, reg, 0, 0, reg_expr(st));
        return;
    case GEN_CFA_GNU_args_size:
        emit(st, op, 0, 0, gen_rng_chance(rng, 85) ? 8 * gen_rng_below(rng, 17)
                                                   : gen_rng_below(rng, 1u << 20),
             NULL);
        return;
    default: /* nop, remember_state, restore_state */
        emit(st, op, 0, 0, 0, NULL);
        return;
    }
}

/* ------------------------------------------------------------------ */
/* Expressions of real binaries (FACTS.md)                              */
/* ------------------------------------------------------------------ */

/* PLT: rsp+8, plus 8 when rip&15 >= 11. */
static const struct fixed_op plt_cfa[] = {
    {GEN_OP_breg, 7, 8}, {GEN_OP_breg, 16, 0}, {GEN_OP_lit, 15, 0},
    {GEN_OP_and, 0, 0}, {GEN_OP_lit, 11, 0}, {GEN_OP_ge, 0, 0},
    {GEN_OP_lit, 3, 0}, {GEN_OP_shl, 0, 0}, {GEN_OP_plus, 0, 0}};
/* OpenSSL perlasm: the caller's rsp saved in the frame. */
static const struct fixed_op openssl_cfa[] = {
    {GEN_OP_breg, 7, 32}, {GEN_OP_deref, 0, 0}, {GEN_OP_plus_uconst, 0, 8}};
/* libmvec: ((CFA - 8) & -32) - 80, the CFA pushed first. */
static const struct fixed_op libmvec_reg[] = {
    {GEN_OP_lit, 8, 0}, {GEN_OP_minus, 0, 0}, {GEN_OP_const4s, 0, -32},
    {GEN_OP_and, 0, 0}, {GEN_OP_const4s, 0, -80}, {GEN_OP_plus, 0, 0}};
static const struct fixed_op libmvec_val[] = {
    {GEN_OP_lit, 8, 0}, {GEN_OP_minus, 0, 0}};

/* breg<reg> <offset>[; deref]: the signal frame and stack realignment. */
static struct gen_expr *breg_expr(struct genstate *st, unsigned reg,
                                  int64_t offset, bool deref)
{
    struct fixed_op ops[] = {{GEN_OP_breg, reg, offset}, {GEN_OP_deref, 0, 0}};
    return fixed_expr(st, ops, deref ? 2 : 1);
}

/* AArch64: the CFA read from the frame (a signal frame's sp, a frame
 * record's x29), or random. */
static struct gen_expr *cfa_expr_a64(struct genstate *st)
{
    switch (gen_rng_below(st->rng, 6)) {
    case 0:
        return breg_expr(st, 31, 16 * (int64_t)gen_rng_range(st->rng, 1, 40),
                         true);
    case 1: return breg_expr(st, 29, 0, true);
    default: return random_expr(st, false);
    }
}

static struct gen_expr *cfa_expr(struct genstate *st)
{
    if (st->target->ra_signing)
        return cfa_expr_a64(st);
    switch (gen_rng_below(st->rng, 8)) {
    case 0: return fixed_expr(st, plt_cfa, sizeof plt_cfa / sizeof plt_cfa[0]);
    case 1: return fixed_expr(st, openssl_cfa, 3);
    case 2: return breg_expr(st, CFI_REG_RSP, 160, true);
    case 3: return breg_expr(st, CFI_REG_RBP, -8 * (int64_t)gen_rng_range(st->rng, 1, 6), true);
    default: return random_expr(st, false);
    }
}

static struct gen_expr *reg_expr(struct genstate *st)
{
    if (st->target->ra_signing && gen_rng_chance(st->rng, 70))
        return random_expr(st, true);
    switch (st->target->ra_signing ? 2 : gen_rng_below(st->rng, 8)) {
    case 0: return fixed_expr(st, libmvec_reg, 6);
    case 1: return fixed_expr(st, libmvec_val, 2);
    case 2:
        return breg_expr(st, cfa_reg(st->rng, st->target),
                         8 * (int64_t)gen_rng_below(st->rng, 40) - 160, false);
    default: return random_expr(st, true);
    }
}

/* ------------------------------------------------------------------ */
/* Patterns of real code, a few groups each                             */
/* ------------------------------------------------------------------ */

static void one_group(struct genstate *st, uint8_t opcode, uint32_t reg,
                      uint64_t operand, struct gen_expr *expr, uint32_t code)
{
    open_group(st);
    emit(st, opcode, reg, 0, operand, expr);
    close_group(st, code);
}

/* The CFA moved to sp + offset, as a push or a sub does. */
static void set_sp_offset(struct genstate *st, uint64_t offset)
{
    if (st->cfa == CFA_KIND_REG && gen_rng_chance(st->rng, 70))
        emit(st, GEN_CFA_def_cfa_offset, 0, 0, offset, NULL);
    else
        emit(st, GEN_CFA_def_cfa, st->target->sp, 0, offset, NULL);
}

/* push rbp; mov rsp, rbp; push rbx; ... ; leave; ret — with GCC's
 * remember/restore around the epilogue. */
static void pattern_frame(struct genstate *st)
{
    open_group(st);
    set_sp_offset(st, 16);
    emit(st, GEN_CFA_offset, CFI_REG_RBP, 0, 2, NULL);
    close_group(st, (uint32_t)gen_rng_range(st->rng, 1, 3));
    one_group(st, GEN_CFA_def_cfa_register, CFI_REG_RBP, 0, NULL, 3);
    one_group(st, GEN_CFA_offset, CFI_REG_RBX, 3, NULL, code_size(st));
    open_group(st);
    bool remember = st->depth < REMEMBER_LIMIT;
    if (remember)
        emit(st, GEN_CFA_remember_state, 0, 0, 0, NULL);
    emit(st, GEN_CFA_def_cfa, CFI_REG_RSP, 0, 8, NULL);
    emit(st, GEN_CFA_restore, CFI_REG_RBP, 0, 0, NULL);
    emit(st, GEN_CFA_restore, CFI_REG_RBX, 0, 0, NULL);
    close_group(st, 1);
    if (remember)
        one_group(st, GEN_CFA_restore_state, 0, 0, NULL, code_size(st));
}

/* A PLT: push, jmp, then the PLT's CFA expression over its entries. */
static void pattern_plt(struct genstate *st)
{
    open_group(st);
    emit(st, GEN_CFA_def_cfa, CFI_REG_RSP, 0, 16, NULL);
    close_group(st, 6);
    one_group(st, GEN_CFA_def_cfa_offset, 0, 24, NULL, 10);
    one_group(st, GEN_CFA_def_cfa_expression, 0, 0,
              fixed_expr(st, plt_cfa, sizeof plt_cfa / sizeof plt_cfa[0]),
              16 * (uint32_t)gen_rng_range(st->rng, 1, 4));
}

/* glibc's __restore_rt: the CFA and the registers read from the
 * saved context (breg7 K). */
static void pattern_signal(struct genstate *st)
{
    static const struct { uint8_t reg; uint8_t at; } saved[] = {
        {8, 40}, {9, 48}, {10, 56}, {11, 64}, {12, 72}, {13, 80}, {14, 88},
        {15, 96}, {5, 104}, {4, 112}, {6, 120}, {3, 128}, {1, 136}, {0, 144},
        {2, 152}, {7, 160}, {16, 168}};
    open_group(st);
    emit(st, GEN_CFA_def_cfa_expression, 0, 0, 0,
         breg_expr(st, CFI_REG_RSP, 160, true));
    for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++)
        if (gen_rng_chance(st->rng, 60))
            emit(st, GEN_CFA_expression, saved[i].reg, 0, 0,
                 breg_expr(st, CFI_REG_RSP, saved[i].at, false));
    close_group(st, code_size(st));
}

/* GCC's stack realignment: CFA r10+0, then read back from the frame;
 * rbp and rbx at addresses computed from rbp. */
static void pattern_realign(struct genstate *st)
{
    int64_t k = -8 * (int64_t)gen_rng_range(st->rng, 1, 5);
    open_group(st);
    emit(st, GEN_CFA_def_cfa, 10, 0, 0, NULL);
    close_group(st, 9);
    one_group(st, GEN_CFA_expression, CFI_REG_RBP, 0,
              breg_expr(st, CFI_REG_RBP, 0, false), 2);
    one_group(st, GEN_CFA_def_cfa_expression, 0, 0,
              breg_expr(st, CFI_REG_RBP, k, true), 2);
    one_group(st, GEN_CFA_expression, CFI_REG_RBX, 0,
              breg_expr(st, CFI_REG_RBP, k - 8, false), code_size(st));
    one_group(st, GEN_CFA_def_cfa, 10, 0, NULL, 3);
    one_group(st, GEN_CFA_def_cfa, CFI_REG_RSP, 8, NULL, 1);
}

/* OpenSSL perlasm: rax holds the caller's rsp, saved in the frame. */
static void pattern_openssl(struct genstate *st)
{
    open_group(st);
    if (st->cfa == CFA_KIND_REG)
        emit(st, GEN_CFA_def_cfa_register, 0, 0, 0, NULL);
    else
        emit(st, GEN_CFA_def_cfa, 0, 0, 8, NULL);
    close_group(st, 3);
    one_group(st, GEN_CFA_offset, CFI_REG_RBX, 2, NULL, 5);
    one_group(st, GEN_CFA_def_cfa_expression, 0, 0,
              fixed_expr(st, openssl_cfa, 3), code_size(st));
    one_group(st, GEN_CFA_def_cfa, 4, 8, NULL, 4);
    one_group(st, GEN_CFA_restore, CFI_REG_RBX, 0, NULL, 3);
    one_group(st, GEN_CFA_def_cfa_register, CFI_REG_RSP, 0, NULL, 1);
}

/* libmvec: registers saved in a realigned area, found from the CFA. */
static void pattern_libmvec(struct genstate *st)
{
    open_group(st);
    emit(st, GEN_CFA_expression, 12, 0, 0, fixed_expr(st, libmvec_reg, 6));
    emit(st, GEN_CFA_val_expression, 13, 0, 0, fixed_expr(st, libmvec_val, 2));
    close_group(st, code_size(st));
}

/* remember_state nested k deep (now and then the limit, 64), rules
 * changed at each level, then every level restored. */
static void pattern_nested(struct genstate *st)
{
    unsigned room = REMEMBER_LIMIT - st->depth;
    unsigned k = gen_rng_chance(st->rng, 10) ? room
               : (unsigned)gen_rng_range(st->rng, 2, 10);
    if (k > room)
        k = room;
    for (unsigned i = 0; i < k; i++) {
        open_group(st);
        emit(st, GEN_CFA_remember_state, 0, 0, 0, NULL);
        if (st->target->ra_signing && gen_rng_chance(st->rng, 50))
            ra_state_insn(st);
        for (uint64_t n = gen_rng_below(st->rng, 3); n > 0; n--)
            random_insn(st, true);
        close_group(st, (uint32_t)gen_rng_range(st->rng, 1, 8));
    }
    for (unsigned i = 0; i < k; i++) {
        open_group(st);
        emit(st, GEN_CFA_restore_state, 0, 0, 0, NULL);
        if (gen_rng_chance(st->rng, 30))
            random_insn(st, true);
        close_group(st, (uint32_t)gen_rng_range(st->rng, 1, 8));
    }
}

/* A call with stack arguments: GNU_args_size around it. */
static void pattern_args(struct genstate *st)
{
    uint64_t bytes = 8 * gen_rng_range(st->rng, 1, 4);
    open_group(st);
    emit(st, GEN_CFA_GNU_args_size, 0, 0, bytes, NULL);
    close_group(st, 5);
    one_group(st, GEN_CFA_GNU_args_size, 0, 0, NULL, code_size(st));
}

/* AArch64: signs the return address in the way `kind` says (0x2d,
 * 0x2c, or set_ra_state), from any state; returns the state. */
static unsigned sign_ra(struct genstate *st, uint8_t kind)
{
    unsigned state = kind == GEN_A64_AARCH64_negate_ra_state_with_pc ? 2 : 1;
    if (kind == GEN_A64_AARCH64_set_ra_state || st->ra_state != 0)
        emit_set_ra_state(st, kind == GEN_A64_AARCH64_set_ra_state
                                  ? (unsigned)gen_rng_range(st->rng, 1, 2)
                                  : state);
    else
        emit(st, kind, 0, 0, 0, NULL);
    return (unsigned)st->ra_state;
}

/* The instruction that authenticates again: the same toggle, or
 * set_ra_state 0. */
static void unsign_ra(struct genstate *st, uint8_t kind)
{
    if (kind == GEN_A64_AARCH64_set_ra_state || !ra_allowed(st, kind))
        emit_set_ra_state(st, 0);
    else
        emit(st, kind, 0, 0, 0, NULL);
}

/* GCC's -mbranch-protection=pac-ret: paciasp and its negate, stp x29,
 * x30 with the frame record, sometimes x29 as the CFA; the epilogue
 * inside remember/restore (ldp, restores, autiasp and its negate, ret),
 * so that the code after it is signed again. */
static void pattern_pac_frame(struct genstate *st)
{
    static const uint8_t kinds[] = {
        GEN_A64_AARCH64_negate_ra_state, GEN_A64_AARCH64_negate_ra_state,
        GEN_A64_AARCH64_negate_ra_state,
        GEN_A64_AARCH64_negate_ra_state_with_pc, GEN_A64_AARCH64_set_ra_state};
    uint8_t kind = kinds[gen_rng_below(st->rng, sizeof kinds)];
    bool sign = gen_rng_chance(st->rng, 80);
    open_group(st);
    if (sign)
        sign_ra(st, kind);
    close_group(st, 1);
    open_group(st);
    set_sp_offset(st, 16);
    emit(st, GEN_CFA_offset, 29, 0, 2, NULL);
    emit(st, GEN_CFA_offset, 30, 0, 1, NULL);
    close_group(st, 1);
    bool fp = gen_rng_chance(st->rng, 50);
    if (fp)
        one_group(st, GEN_CFA_def_cfa_register, 29, 0, NULL, 1);
    open_group(st);
    bool remember = st->depth < REMEMBER_LIMIT;
    if (remember)
        emit(st, GEN_CFA_remember_state, 0, 0, 0, NULL);
    if (fp)
        emit(st, GEN_CFA_def_cfa, 31, 0, 16, NULL);
    close_group(st, code_size(st));
    open_group(st);
    emit(st, GEN_CFA_restore, 30, 0, 0, NULL);
    emit(st, GEN_CFA_restore, 29, 0, 0, NULL);
    emit(st, GEN_CFA_def_cfa_offset, 0, 0, 0, NULL);
    close_group(st, 1);
    open_group(st);
    if (sign)
        unsign_ra(st, kind);
    close_group(st, 1);
    if (remember)
        one_group(st, GEN_CFA_restore_state, 0, 0, NULL, code_size(st));
}

/* A signal frame (the kernel's rt_sigframe): the CFA and the registers
 * read from the saved context at sp + K. */
static void pattern_sigframe_a64(struct genstate *st)
{
    int64_t base = 16 * (int64_t)gen_rng_range(st->rng, 8, 40);
    open_group(st);
    emit(st, GEN_CFA_def_cfa_expression, 0, 0, 0,
         breg_expr(st, 31, base + 8 * 31, true));
    for (uint32_t reg = 0; reg <= 30; reg++)
        if (gen_rng_chance(st->rng, 40))
            emit(st, GEN_CFA_expression, reg, 0, 0,
                 breg_expr(st, 31, base + 8 * (int64_t)reg, false));
    close_group(st, code_size(st));
}

/* ------------------------------------------------------------------ */
/* The error of an ill-formed program                                   */
/* ------------------------------------------------------------------ */

/* The kinds of injected error; each breaks one rule of the semantics. */
enum inject_kind {
    INJECT_EMPTY_STACK,   /* restore_state with an empty stack */
    INJECT_CFA_NOT_REG,   /* def_cfa_offset/_register on an expression CFA */
    INJECT_WINDOW_SAVE,   /* GNU_window_save: no meaning on x86-64 */
    INJECT_BAD_REGISTER,  /* a register number >= 128 */
    INJECT_TOO_DEEP,      /* remember_state 65 deep */
    INJECT_CIE_RESTORE,   /* restore in a CIE's initial instructions */
    INJECT_KINDS,         /* x86-64's: the kinds above */
    /* AArch64's, where 0x2d negates RA_SIGN_STATE: */
    INJECT_NEGATE_WHEN_PC = INJECT_KINDS, /* 0x2d in state 2 */
    INJECT_PC_NEGATE_WHEN_SP,             /* 0x2c in state 1 */
    INJECT_RESERVED_STATE,                /* set_ra_state 3.. */
    INJECT_NEGATE_MIXED,                  /* a negate after another rule */
};

/* The kinds of AArch64 (GNU_window_save is its negate there). */
static const uint8_t a64_inject_kinds[] = {
    INJECT_EMPTY_STACK, INJECT_CFA_NOT_REG, INJECT_BAD_REGISTER,
    INJECT_TOO_DEEP, INJECT_CIE_RESTORE, INJECT_NEGATE_WHEN_PC,
    INJECT_PC_NEGATE_WHEN_SP, INJECT_RESERVED_STATE, INJECT_NEGATE_MIXED};

/* The erroneous instruction: the generator's state does not follow it. */
static void emit_error(struct genstate *st, enum spell_choice choice,
                       uint8_t opcode, uint32_t reg, uint64_t operand)
{
    st->injecting = true;
    emit_spelled(st, choice, opcode, reg, 0, operand, NULL);
    st->injecting = false;
}

/* Brings RA_SIGN_STATE to `state` (1 or 2) with the toggles. */
static void reach_ra_state(struct genstate *st, int state)
{
    static const uint8_t toggle[] = {
        0, GEN_A64_AARCH64_negate_ra_state,
        GEN_A64_AARCH64_negate_ra_state_with_pc};
    if (st->ra_state != 0 && st->ra_state != state)
        emit(st, toggle[st->ra_state], 0, 0, 0, NULL);
    if (st->ra_state == 0)
        emit(st, toggle[state], 0, 0, 0, NULL);
}

/* A register rule on RA_SIGN_STATE that is no state, then a negate. */
static void inject_negate_mixed(struct genstate *st)
{
    struct gen_rng *rng = st->rng;
    static const uint8_t rules[] = {
        GEN_CFA_offset, GEN_CFA_undefined, GEN_CFA_same_value,
        GEN_CFA_val_offset};
    emit(st, rules[gen_rng_below(rng, sizeof rules)], GEN_A64_RA_SIGN_STATE, 0,
         gen_rng_range(rng, 1, 8), NULL);
    uint8_t negate = gen_rng_chance(rng, 70)
                         ? GEN_A64_AARCH64_negate_ra_state
                         : GEN_A64_AARCH64_negate_ra_state_with_pc;
    emit_error(st, SPELL_RANDOM, negate, 0, 0);
}

static void inject_a64(struct genstate *st, enum inject_kind kind)
{
    struct gen_rng *rng = st->rng;
    switch (kind) {
    case INJECT_NEGATE_WHEN_PC:
        reach_ra_state(st, 2);
        emit_error(st, SPELL_RANDOM, GEN_A64_AARCH64_negate_ra_state, 0, 0);
        return;
    case INJECT_PC_NEGATE_WHEN_SP:
        reach_ra_state(st, 1);
        emit_error(st, SPELL_RANDOM, GEN_A64_AARCH64_negate_ra_state_with_pc,
                   0, 0);
        return;
    case INJECT_RESERVED_STATE:
        emit_error(st, SPELL_RANDOM, GEN_A64_AARCH64_set_ra_state, 0,
                   gen_rng_chance(rng, 80) ? gen_rng_range(rng, 3, 15)
                                           : gen_rng_range(rng, 16, 1u << 20));
        return;
    default: /* INJECT_NEGATE_MIXED */
        inject_negate_mixed(st);
        return;
    }
}

static void inject(struct genstate *st, enum inject_kind kind)
{
    struct gen_rng *rng = st->rng;
    if (kind >= INJECT_KINDS) {
        inject_a64(st, kind);
        return;
    }
    switch (kind) {
    case INJECT_EMPTY_STACK:
        while (st->depth > 0)
            emit(st, GEN_CFA_restore_state, 0, 0, 0, NULL);
        emit_error(st, SPELL_RANDOM, GEN_CFA_restore_state, 0, 0);
        return;
    case INJECT_CFA_NOT_REG:
        if (st->cfa != CFA_KIND_EXPR)
            emit(st, GEN_CFA_def_cfa_expression, 0, 0, 0, cfa_expr(st));
        if (gen_rng_chance(rng, 50))
            emit_error(st, SPELL_RANDOM, GEN_CFA_def_cfa_register,
                       cfa_reg(rng, st->target), 0);
        else
            emit_error(st, SPELL_RANDOM,
                       gen_rng_chance(rng, 50) ? GEN_CFA_def_cfa_offset
                                               : GEN_CFA_def_cfa_offset_sf,
                       0, gen_rng_range(rng, 1, 8));
        return;
    case INJECT_WINDOW_SAVE:
        emit_error(st, SPELL_RANDOM, GEN_CFA_GNU_window_save, 0, 0);
        return;
    case INJECT_BAD_REGISTER:
        emit_error(st, SPELL_ESCAPE,
                   gen_rng_chance(rng, 50) ? GEN_CFA_undefined
                                           : GEN_CFA_offset_extended,
                   (uint32_t)gen_rng_range(rng, CFI_NREGS, 300), 1);
        return;
    case INJECT_TOO_DEEP:
        while (st->depth < REMEMBER_LIMIT)
            emit(st, GEN_CFA_remember_state, 0, 0, 0, NULL);
        emit_error(st, SPELL_RANDOM, GEN_CFA_remember_state, 0, 0);
        return;
    default: /* INJECT_CIE_RESTORE: at the head of the first function */
        emit_error(st, SPELL_DIRECTIVE, GEN_CFA_restore,
                   (uint32_t)gen_rng_below(rng, 17), 0);
        return;
    }
}

/* ------------------------------------------------------------------ */
/* Functions                                                            */
/* ------------------------------------------------------------------ */

/* What the functions of one program share, so that CIEs are shared: two
 * sequences of leading directives, a personality routine. */
#define LEADING_MAX 4
struct plan {
    struct leading {
        unsigned n;
        struct { uint8_t opcode; uint32_t reg, reg2; uint64_t operand; } insns[LEADING_MAX];
    } leading[2];
    uint8_t per_encoding;
    uint32_t personality;
    bool inject;
    enum inject_kind inject_kind;
    uint32_t inject_fde;
};

static void plan_leading(struct gen_rng *rng, const struct gen_target *target,
                         struct leading *l)
{
    static const uint8_t kinds[] = {
        GEN_CFA_def_cfa_offset, GEN_CFA_offset, GEN_CFA_val_offset,
        GEN_CFA_register, GEN_CFA_undefined, GEN_CFA_same_value,
        GEN_CFA_def_cfa_register, GEN_CFA_def_cfa};
    l->n = (unsigned)gen_rng_range(rng, 1, LEADING_MAX);
    for (unsigned i = 0; i < l->n; i++) {
        uint8_t op = kinds[gen_rng_below(rng, sizeof kinds)];
        uint32_t reg = rule_reg(rng, target);
        if (op == GEN_CFA_offset && reg > 63)
            op = GEN_CFA_offset_extended;
        uint64_t operand = op == GEN_CFA_def_cfa_offset || op == GEN_CFA_def_cfa
                               ? 8 * gen_rng_range(rng, 1, 32) : ufactor(rng);
        if (op == GEN_CFA_def_cfa_register || op == GEN_CFA_def_cfa)
            reg = cfa_reg(rng, target);
        l->insns[i].opcode = op;
        l->insns[i].reg = reg;
        l->insns[i].reg2 = rule_reg(rng, target);
        l->insns[i].operand = operand;
    }
}

/* The directives at the function's start: the CFA of a `simple`
 * function, then, often, a sequence gas puts in a CIE. */
static void leading_group(struct genstate *st, const struct plan *plan)
{
    struct gen_rng *rng = st->rng;
    open_group(st);
    if (st->inject_here && plan->inject_kind == INJECT_CIE_RESTORE)
        inject(st, INJECT_CIE_RESTORE);
    if (st->fde->simple) {
        unsigned roll = (unsigned)gen_rng_below(rng, 100);
        if (roll < 70)
            emit(st, GEN_CFA_def_cfa, cfa_reg(rng, st->target), 0,
                 cfa_offset(rng), NULL);
        else if (roll < 85)
            emit(st, GEN_CFA_def_cfa_sf, cfa_reg(rng, st->target), 0,
                 sfactor(rng), NULL);
        else
            emit(st, GEN_CFA_def_cfa_expression, 0, 0, 0, cfa_expr(st));
        if (gen_rng_chance(rng, 60))
            emit(st, GEN_CFA_offset, st->target->ra, 0, 1, NULL);
    }
    unsigned roll = (unsigned)gen_rng_below(rng, 100);
    const struct leading *l = roll < 25 ? &plan->leading[0]
                            : roll < 40 ? &plan->leading[1] : NULL;
    for (unsigned i = 0; l && st->cfa == CFA_KIND_REG && i < l->n; i++)
        emit_spelled(st, SPELL_DIRECTIVE, l->insns[i].opcode, l->insns[i].reg,
                     l->insns[i].reg2, l->insns[i].operand, NULL);
    for (uint64_t n = roll >= 85 ? gen_rng_range(rng, 1, 3) : 0; n > 0; n--)
        random_insn(st, false);
    close_group(st, code_size(st));
}

static void attributes(struct genstate *st, const struct plan *plan)
{
    struct gen_rng *rng = st->rng;
    struct gen_fde *fde = st->fde;
    static const uint8_t encodings[] = {0x1b, 0x1c, 0x10};
    fde->simple = gen_rng_chance(rng, 12);
    bool a64 = st->target->ra_signing;
    fde->ra = gen_rng_chance(rng, 4)
                  ? (uint32_t)gen_rng_below(rng, a64 ? 31 : 17)
                  : st->target->ra;
    /* gas writes the augmentation "S" alone in a .debug_frame CIE (no
     * 'z'), a CIE shape the layout model does not cover: signal frames
     * only when there is no .debug_frame (corpus/cases has that shape). */
    fde->signal_frame = !st->program->debug_frame && gen_rng_chance(rng, 8);
    fde->per_encoding = fde->lsda_encoding = CFI_PE_OMIT;
    if (gen_rng_chance(rng, 25)) {
        bool usual = gen_rng_chance(rng, 70);
        fde->per_encoding = usual ? plan->per_encoding : encodings[gen_rng_below(rng, 3)];
        fde->personality = usual ? plan->personality
                                 : (uint32_t)gen_rng_below(rng, st->program->nfdes);
    }
    if (gen_rng_chance(rng, 25)) {
        fde->lsda_encoding = encodings[gen_rng_below(rng, 2)];
        fde->lsda = (uint32_t)gen_rng_below(rng, st->program->nfdes);
    }
    /* pac-ret+b-key: 'B' in the CIE's augmentation, a CIE of its own */
    fde->b_key = a64 && gen_rng_chance(rng, 15);
}

static void random_group(struct genstate *st)
{
    open_group(st);
    for (uint64_t n = gen_rng_range(st->rng, 1, 4); n > 0; n--)
        random_insn(st, false);
    close_group(st, code_size(st));
}

static void body_step(struct genstate *st)
{
    typedef void (*pattern_fn)(struct genstate *);
    static const pattern_fn patterns[] = {
        pattern_frame, pattern_plt, pattern_signal, pattern_realign,
        pattern_openssl, pattern_libmvec, pattern_nested, pattern_args};
    static const pattern_fn a64_patterns[] = {
        pattern_pac_frame, pattern_pac_frame, pattern_pac_frame,
        pattern_sigframe_a64, pattern_nested, pattern_nested, pattern_args};
    if (st->target->ra_signing && gen_rng_chance(st->rng, 15))
        a64_patterns[gen_rng_below(st->rng, sizeof a64_patterns /
                                                sizeof a64_patterns[0])](st);
    else if (!st->target->ra_signing && gen_rng_chance(st->rng, 12))
        patterns[gen_rng_below(st->rng, sizeof patterns / sizeof patterns[0])](st);
    else
        random_group(st);
}

static void generate_function(struct genstate *st, const struct plan *plan)
{
    attributes(st, plan);
    st->fde->begin = st->addr;
    st->cfa = st->fde->simple ? CFA_KIND_NONE : CFA_KIND_REG;
    st->ra_state = 0;
    st->depth = 0;
    st->gas_depth = 0;
    st->leading = true;
    memset(st->touched, 0, sizeof st->touched);
    leading_group(st, plan);
    uint64_t steps = gen_rng_chance(st->rng, 10) ? gen_rng_range(st->rng, 20, 50)
                                                 : gen_rng_range(st->rng, 0, 15);
    uint64_t inject_at = gen_rng_below(st->rng, steps + 1);
    for (uint64_t i = 0; i <= steps && !st->failed; i++) {
        if (st->inject_here && i == inject_at &&
            plan->inject_kind != INJECT_CIE_RESTORE) {
            open_group(st);
            inject(st, plan->inject_kind);
            close_group(st, code_size(st));
        }
        if (i < steps)
            body_step(st);
    }
    if (gen_rng_chance(st->rng, 5)) { /* directives at the very end */
        open_group(st);
        random_insn(st, false);
        close_group(st, 0);
    }
    st->fde->end = st->addr;
}

/* ------------------------------------------------------------------ */
/* Programs                                                             */
/* ------------------------------------------------------------------ */

static void make_plan(struct gen_rng *rng, const struct gen_program *p,
                      struct plan *plan)
{
    static const uint8_t encodings[] = {0x1b, 0x1c, 0x10};
    plan_leading(rng, p->target, &plan->leading[0]);
    plan_leading(rng, p->target, &plan->leading[1]);
    plan->per_encoding = encodings[gen_rng_below(rng, 3)];
    plan->personality = (uint32_t)gen_rng_below(rng, p->nfdes);
    plan->inject = p->options.ill_formed;
    plan->inject_kind =
        p->target->ra_signing
            ? (enum inject_kind)a64_inject_kinds[gen_rng_below(
                  rng, sizeof a64_inject_kinds)]
            : (enum inject_kind)gen_rng_below(rng, INJECT_KINDS);
    plan->inject_fde = plan->inject_kind == INJECT_CIE_RESTORE
                           ? 0 : (uint32_t)gen_rng_below(rng, p->nfdes);
}

enum cfi_status gen_generate(struct gen_program *p, struct gen_rng *rng)
{
    struct plan plan;
    make_plan(rng, p, &plan);
    struct genstate st = {.rng = rng, .target = p->target, .program = p,
                          .addr = 0x1000,
                          .big_gap = gen_rng_chance(rng, 8)};
    for (uint32_t f = 0; f < p->nfdes && !st.failed; f++) {
        st.fde = &p->fdes[f];
        st.inject_here = plan.inject && f == plan.inject_fde;
        generate_function(&st, &plan);
    }
    return st.failed ? CFI_E_NOMEM : CFI_OK;
}
