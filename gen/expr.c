/* SPDX-License-Identifier: MIT */
/* expr.c — DWARF expressions: the operations the generator writes, their
 * encoding, their listing (as `cfisem il` prints them, written here
 * independently), and random expressions that are valid for CFI.
 *
 * A random expression is a walk over the stack depth: each step is an
 * operation valid at the current depth (never an underflow, at most 8
 * values), div and mod only right after pushing a non-zero constant,
 * skip and bra only forward, over a block that leaves the depth as it
 * found it (so both paths of a bra meet at the same depth, and every
 * execution ends). Registers read (breg*, bregx) are the target's
 * expr_regs (x86-64: 0-16; AArch64: x0-x30 and sp), which the harness
 * always gives. deref and deref_size read from a register plus a
 * small offset or from the image: in the harness's memory a read faults
 * only when it wraps past 2^64. */
#include "internal.h"

#include <inttypes.h>
#include <string.h>

const struct gen_dw_info gen_dw_ops[GEN_OP_COUNT] = {
#define GEN_DW_ENTRY(name, first, count, shape, need, delta) \
    {#name, first, count, GEN_DW_##shape, need, delta},
    GEN_DW_OPS(GEN_DW_ENTRY)
#undef GEN_DW_ENTRY
};

/* ------------------------------------------------------------------ */
/* Encoding and listing                                                 */
/* ------------------------------------------------------------------ */

size_t gen_put_uleb(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        out[n++] = v ? (byte | 0x80) : byte;
    } while (v);
    return n;
}

size_t gen_put_sleb(uint8_t *out, int64_t v)
{
    size_t n = 0;
    for (;;) {
        uint8_t byte = (uint8_t)((uint64_t)v & 0x7f);
        /* v >> 7, rounding down, without shifting a negative number */
        v = v < 0 ? -((-(v + 1)) / 128) - 1 : v / 128;
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        out[n++] = done ? byte : (byte | 0x80);
        if (done)
            return n;
    }
}

static size_t put_fixed(uint8_t *out, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        out[i] = (uint8_t)(v >> (8 * i));
    return size;
}

static size_t op_encode(const struct gen_op *op, uint8_t *out)
{
    const struct gen_dw_info *info = &gen_dw_ops[op->kind];
    out[0] = (uint8_t)(info->first + op->index);
    size_t n = 1;
    switch (info->shape) {
    case GEN_DW_NONE: break;
    case GEN_DW_ADDR: case GEN_DW_U8: case GEN_DW_S8:
        n += put_fixed(out + n, op->a, 8);
        break;
    case GEN_DW_U1: case GEN_DW_S1: n += put_fixed(out + n, op->a, 1); break;
    case GEN_DW_U2: case GEN_DW_S2: n += put_fixed(out + n, op->a, 2); break;
    case GEN_DW_U4: case GEN_DW_S4: n += put_fixed(out + n, op->a, 4); break;
    case GEN_DW_ULEB: n += gen_put_uleb(out + n, op->a); break;
    case GEN_DW_SLEB: n += gen_put_sleb(out + n, (int64_t)op->a); break;
    case GEN_DW_ULEB_SLEB:
        n += gen_put_uleb(out + n, op->a);
        n += gen_put_sleb(out + n, (int64_t)op->b);
        break;
    }
    return n;
}

static size_t op_size(const struct gen_op *op)
{
    uint8_t scratch[32];
    return op_encode(op, scratch);
}

void gen_expr_encode(struct gen_expr *expr)
{
    size_t len = 0;
    for (unsigned i = 0; i < expr->nops; i++)
        len += op_encode(&expr->ops[i], expr->bytes + len);
    expr->len = (unsigned)len;
}

void gen_expr_add(struct gen_expr *expr, enum gen_dw_op kind, unsigned index,
                  uint64_t a, uint64_t b)
{
    if (expr->nops < GEN_EXPR_OPS_MAX)
        expr->ops[expr->nops++] = (struct gen_op){kind, (uint8_t)index, a, b};
}

static void op_print(const struct gen_op *op, FILE *out)
{
    const struct gen_dw_info *info = &gen_dw_ops[op->kind];
    fputs(info->name, out);
    if (info->count > 1)
        fprintf(out, "%u", op->index);
    switch (info->shape) {
    case GEN_DW_NONE: break;
    case GEN_DW_ADDR: fprintf(out, " 0x%" PRIx64, op->a); break;
    case GEN_DW_U1: case GEN_DW_U2: case GEN_DW_U4: case GEN_DW_U8:
    case GEN_DW_ULEB:
        fprintf(out, " %" PRIu64, op->a);
        break;
    case GEN_DW_S1: case GEN_DW_S2: case GEN_DW_S4: case GEN_DW_S8:
    case GEN_DW_SLEB:
        fprintf(out, " %" PRId64, (int64_t)op->a);
        break;
    case GEN_DW_ULEB_SLEB:
        fprintf(out, " %" PRIu64 " %" PRId64, op->a, (int64_t)op->b);
        break;
    }
}

void gen_expr_print(const struct gen_expr *expr, FILE *out)
{
    for (unsigned i = 0; i < expr->nops; i++) {
        if (i)
            fputs("; ", out);
        op_print(&expr->ops[i], out);
    }
}

/* ------------------------------------------------------------------ */
/* Random expressions                                                   */
/* ------------------------------------------------------------------ */

#define WALK_DEPTH_MAX 8
#define WALK_NEST_MAX 2

struct walk {
    struct gen_rng *rng;
    const struct gen_target *target;
    struct gen_expr *expr;
    int depth;
    unsigned budget;  /* operations still allowed */
    unsigned nest;    /* skip/bra blocks open */
};

static void add(struct walk *w, enum gen_dw_op kind, unsigned index,
                uint64_t a, uint64_t b)
{
    gen_expr_add(w->expr, kind, index, a, b);
    w->depth += gen_dw_ops[kind].delta;
    if (w->budget)
        w->budget--;
}

/* A number of about `bits` random bits, sometimes negative. */
static uint64_t some_number(struct gen_rng *rng, unsigned bits, bool is_signed)
{
    uint64_t v = bits >= 64 ? gen_rng_next(rng)
                            : gen_rng_below(rng, UINT64_C(1) << bits);
    if (is_signed && bits < 64 && gen_rng_chance(rng, 40))
        v = 0 - v;
    return v;
}

/* A sign-extended constant of `size` bytes. */
static uint64_t fixed_constant(struct gen_rng *rng, unsigned size,
                               bool is_signed)
{
    uint64_t v = size == 8 ? gen_rng_next(rng)
                           : gen_rng_below(rng, UINT64_C(1) << (8 * size));
    if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
        v |= ~((UINT64_C(1) << (8 * size)) - 1);
    return v;
}

static unsigned random_reg(const struct walk *w)
{
    static const unsigned weights[17] = {2, 2, 2, 3, 2, 2, 6, 8, 2, 2,
                                         3, 2, 2, 2, 2, 2, 2};
    return w->target->expr_regs[gen_rng_pick(w->rng, weights, 17)];
}

/* An offset from a register: mostly small, sometimes far. */
static uint64_t reg_offset(struct gen_rng *rng)
{
    if (gen_rng_chance(rng, 80))
        return (uint64_t)((int64_t)gen_rng_below(rng, 401) - 200);
    return some_number(rng, (unsigned)gen_rng_range(rng, 8, 40), true);
}

/* Pushes one value with no operand on the stack. */
static void push_leaf(struct walk *w)
{
    struct gen_rng *rng = w->rng;
    switch (gen_rng_below(rng, 10)) {
    case 0: case 1:
        add(w, GEN_OP_lit, (unsigned)gen_rng_below(rng, 32), 0, 0);
        return;
    case 2: case 3: case 4:
        add(w, GEN_OP_breg, random_reg(w), reg_offset(rng), 0);
        return;
    case 5:
        add(w, GEN_OP_bregx, 0, random_reg(w), reg_offset(rng));
        return;
    case 6: {
        static const enum gen_dw_op sized[] = {
            GEN_OP_const1u, GEN_OP_const1s, GEN_OP_const2u, GEN_OP_const2s,
            GEN_OP_const4u, GEN_OP_const4s, GEN_OP_const8u, GEN_OP_const8s};
        size_t i = gen_rng_below(rng, 8);
        add(w, sized[i], 0, fixed_constant(rng, 1u << (i / 2), i % 2), 0);
        return;
    }
    case 7:
        add(w, GEN_OP_constu, 0, some_number(rng, (unsigned)gen_rng_range(rng, 1, 64), false), 0);
        return;
    case 8:
        add(w, GEN_OP_consts, 0, some_number(rng, (unsigned)gen_rng_range(rng, 1, 63), true), 0);
        return;
    default:
        add(w, GEN_OP_addr, 0,
            gen_rng_chance(rng, 70) ? 0x1000 + gen_rng_below(rng, 0x100) * 8
                                    : gen_rng_next(rng),
            0);
        return;
    }
}

/* A push that reads the stack: dup, over, pick. */
static void push_copy(struct walk *w)
{
    if (w->depth >= 2 && gen_rng_chance(w->rng, 30))
        add(w, GEN_OP_over, 0, 0, 0);
    else if (gen_rng_chance(w->rng, 50))
        add(w, GEN_OP_pick, 0, gen_rng_below(w->rng, (uint64_t)w->depth), 0);
    else
        add(w, GEN_OP_dup, 0, 0, 0);
}

/* A load: deref or deref_size of a register plus a small offset, or of an
 * address in the image, so that the address stays plausible (the memory
 * of the harness faults only on a read that wraps past 2^64). */
static void load(struct walk *w)
{
    struct gen_rng *rng = w->rng;
    unsigned roll = (unsigned)gen_rng_below(rng, 10);
    if (roll < 6)
        add(w, GEN_OP_breg, random_reg(w),
            (uint64_t)((int64_t)gen_rng_below(rng, 401) - 200), 0);
    else if (roll < 8)
        add(w, GEN_OP_bregx, 0, random_reg(w),
            (uint64_t)((int64_t)gen_rng_below(rng, 401) - 200));
    else
        add(w, GEN_OP_addr, 0, 0x1000 + 8 * gen_rng_below(rng, 0x40), 0);
    if (gen_rng_chance(rng, 60))
        add(w, GEN_OP_deref, 0, 0, 0);
    else
        add(w, GEN_OP_deref_size, 0, gen_rng_range(rng, 1, 8), 0);
}

static void unary(struct walk *w)
{
    static const enum gen_dw_op ops[] = {GEN_OP_abs, GEN_OP_neg, GEN_OP_not,
                                         GEN_OP_plus_uconst, GEN_OP_nop};
    enum gen_dw_op op = ops[gen_rng_below(w->rng, 5)];
    uint64_t a = 0;
    if (op == GEN_OP_plus_uconst)
        a = gen_rng_chance(w->rng, 80) ? gen_rng_below(w->rng, 256)
                                       : some_number(w->rng, 40, false);
    add(w, op, 0, a, 0);
}

static void binary(struct walk *w)
{
    static const enum gen_dw_op ops[] = {
        GEN_OP_and, GEN_OP_minus, GEN_OP_mul, GEN_OP_or, GEN_OP_plus,
        GEN_OP_shl, GEN_OP_shr, GEN_OP_shra, GEN_OP_xor, GEN_OP_eq,
        GEN_OP_ge, GEN_OP_gt, GEN_OP_le, GEN_OP_lt, GEN_OP_ne};
    add(w, ops[gen_rng_below(w->rng, sizeof ops / sizeof ops[0])], 0, 0, 0);
}

/* div and mod by a constant that is not zero. */
static void divide(struct walk *w)
{
    if (gen_rng_chance(w->rng, 60))
        add(w, GEN_OP_lit, (unsigned)gen_rng_range(w->rng, 1, 31), 0, 0);
    else
        add(w, GEN_OP_const2s, 0, gen_rng_chance(w->rng, 50) ? 0xfffffffffffffff8u
                                                             : 3, 0);
    add(w, gen_rng_chance(w->rng, 50) ? GEN_OP_div : GEN_OP_mod, 0, 0, 0);
}

static void shuffle(struct walk *w)
{
    if (w->depth >= 3 && gen_rng_chance(w->rng, 35))
        add(w, GEN_OP_rot, 0, 0, 0);
    else if (gen_rng_chance(w->rng, 60))
        add(w, GEN_OP_swap, 0, 0, 0);
    else
        add(w, GEN_OP_drop, 0, 0, 0);
}

static void walk_steps(struct walk *w, unsigned steps);

/* A block of operations that leaves the depth as it found it. */
static void neutral_block(struct walk *w)
{
    int depth = w->depth;
    w->nest++;
    walk_steps(w, (unsigned)gen_rng_range(w->rng, 1, 4));
    while (w->depth > depth)
        if (w->depth >= 2 && gen_rng_chance(w->rng, 70))
            binary(w);
        else
            add(w, GEN_OP_drop, 0, 0, 0);
    while (w->depth < depth)
        push_leaf(w);
    w->nest--;
}

static uint64_t block_bytes(const struct gen_expr *expr, unsigned from)
{
    uint64_t n = 0;
    for (unsigned i = from; i < expr->nops; i++)
        n += op_size(&expr->ops[i]);
    return n;
}

/* skip N over a block that never runs; or a condition, then bra N over a
 * block that runs when the condition is zero. */
static void branch(struct walk *w)
{
    bool conditional = gen_rng_chance(w->rng, 60);
    if (conditional) {
        if (gen_rng_chance(w->rng, 50))
            add(w, GEN_OP_lit, (unsigned)gen_rng_below(w->rng, 2), 0, 0);
        else
            push_leaf(w);
    }
    unsigned at = w->expr->nops;
    add(w, conditional ? GEN_OP_bra : GEN_OP_skip, 0, 0, 0);
    neutral_block(w);
    if (at < w->expr->nops)
        w->expr->ops[at].a = block_bytes(w->expr, at + 1);
}

enum step_kind { STEP_LEAF, STEP_LOAD, STEP_COPY, STEP_UNARY, STEP_BINARY,
                 STEP_DIVIDE, STEP_SHUFFLE, STEP_BRANCH, STEP_KINDS };

static void walk_step(struct walk *w)
{
    int d = w->depth;
    bool room = d < WALK_DEPTH_MAX;
    unsigned weights[STEP_KINDS] = {
        [STEP_LEAF] = room ? 8 : 0,
        [STEP_LOAD] = room ? 3 : 0,
        [STEP_COPY] = room && d >= 1 ? 2 : 0,
        [STEP_UNARY] = d >= 1 ? 5 : 0,
        [STEP_BINARY] = d >= 2 ? 7 : 0,
        [STEP_DIVIDE] = room && d >= 1 ? 1 : 0,
        [STEP_SHUFFLE] = d >= 2 ? 2 : 0,
        [STEP_BRANCH] = room && w->nest < WALK_NEST_MAX && w->budget > 6 ? 1 : 0,
    };
    switch (gen_rng_pick(w->rng, weights, STEP_KINDS)) {
    case STEP_LEAF: push_leaf(w); break;
    case STEP_LOAD: load(w); break;
    case STEP_COPY: push_copy(w); break;
    case STEP_UNARY: unary(w); break;
    case STEP_BINARY: binary(w); break;
    case STEP_DIVIDE: divide(w); break;
    case STEP_SHUFFLE: shuffle(w); break;
    default: branch(w); break;
    }
}

/* A step adds at most 2 operations, then maybe a block (whose steps are
 * bounded the same way) and the operations that bring the depth back (at
 * most WALK_DEPTH_MAX + 1 per block): RESERVE operations are always left
 * for them. */
#define RESERVE 40

static void walk_steps(struct walk *w, unsigned steps)
{
    for (unsigned i = 0; i < steps && w->budget > 0 &&
                         w->expr->nops + RESERVE <= GEN_EXPR_OPS_MAX;
         i++)
        walk_step(w);
}

void gen_expr_random(struct gen_rng *rng, const struct gen_target *target,
                     struct gen_expr *expr, bool cfa_pushed)
{
    memset(expr, 0, sizeof *expr);
    struct walk w = {rng, target, expr, cfa_pushed ? 1 : 0, 0, 0};
    if (!(cfa_pushed && gen_rng_chance(rng, 4))) {
        /* mostly short; now and then long enough for a 2-byte length */
        unsigned steps = gen_rng_chance(rng, 4) ? (unsigned)gen_rng_range(rng, 30, 60)
                                                : (unsigned)gen_rng_range(rng, 1, 8);
        w.budget = steps + 24; /* room for the blocks of skip and bra */
        walk_steps(&w, steps);
        if (w.depth == 0)
            push_leaf(&w);
    }
    gen_expr_encode(expr);
}
