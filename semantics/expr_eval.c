/* SPDX-License-Identifier: MIT */
/* expr_eval.c — the DWARF expression machine of semantics/.
 *
 * DWARF 5 §2.5 and the rules of cfi.h: a stack of 64-bit values, bounded
 * depth, bounded number of operations executed, memory only through the
 * reader. One function per family of operations; `step` only dispatches.
 * interp/ has its own machine: the two must agree.
 *
 * An error's diag.offset is the byte offset in the expression of the
 * operation being executed (cfi.h, struct cfi_frame): every fault below
 * is that operation's.
 */
#include <stdlib.h>

#include "dwop.h"
#include "internal.h"
#include "sem.h"

enum {
#define SEM_DWOP_ENUM(name, first, count, shape) OP_##name = first,
    SEM_DW_OPS(SEM_DWOP_ENUM)
#undef SEM_DWOP_ENUM
};

struct machine {
    struct sem_cursor code;
    size_t op_at;                  /* the operation being executed */
    uint64_t stack[CFI_EXPR_STACK_MAX];
    unsigned depth;
    const struct cfi_regs *callee;
    struct cfi_memory memory;
    struct cfi_diag *diag;
    const struct sem_expr *expr;
    const struct sem_trace *trace; /* NULL: nothing is reported */
};

static enum cfi_status fault(struct machine *m, enum cfi_status status,
                             const char *message)
{
    return cfi_fail(m->diag, status, m->op_at, message);
}

static enum cfi_status push(struct machine *m, uint64_t value)
{
    if (m->depth == CFI_EXPR_STACK_MAX)
        return fault(m, CFI_E_EXPR_STACK, "expression stack overflow");
    m->stack[m->depth++] = value;
    return CFI_OK;
}

/* The entry `i` places below the top (0 is the top). */
static bool peek(const struct machine *m, unsigned i, uint64_t *value)
{
    if (i >= m->depth)
        return false;
    *value = m->stack[m->depth - 1 - i];
    return true;
}

static enum cfi_status underflow(struct machine *m)
{
    return fault(m, CFI_E_EXPR, "expression stack underflow");
}

static enum cfi_status pop(struct machine *m, uint64_t *value)
{
    if (!peek(m, 0, value))
        return underflow(m);
    m->depth--;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Operands                                                             */
/* ------------------------------------------------------------------ */

static enum cfi_status truncated(struct machine *m)
{
    return fault(m, CFI_E_EXPR, "truncated expression operand");
}

static enum cfi_status operand_fixed(struct machine *m, unsigned size,
                                     bool is_signed, uint64_t *value)
{
    if (!sem_read_fixed(&m->code, size, value))
        return truncated(m);
    if (is_signed && size < 8 && (*value >> (8 * size - 1)) & 1)
        *value |= ~(uint64_t)0 << (8 * size);
    return CFI_OK;
}

static enum cfi_status operand_uleb(struct machine *m, uint64_t *value)
{
    bool overflow = false;
    return sem_read_uleb(&m->code, value, &overflow) ? CFI_OK : truncated(m);
}

static enum cfi_status operand_sleb(struct machine *m, int64_t *value)
{
    bool overflow = false;
    return sem_read_sleb(&m->code, value, &overflow) ? CFI_OK : truncated(m);
}

/* ------------------------------------------------------------------ */
/* Families of operations                                               */
/* ------------------------------------------------------------------ */

/* lit0..31, addr, const1u..const8s, constu, consts: push a constant. */
static enum cfi_status op_constant(struct machine *m, uint8_t op)
{
    static const struct { uint8_t size; bool is_signed; } fixed[] = {
        [OP_addr] = {8, false},
        [OP_const1u] = {1, false}, [OP_const1s] = {1, true},
        [OP_const2u] = {2, false}, [OP_const2s] = {2, true},
        [OP_const4u] = {4, false}, [OP_const4s] = {4, true},
        [OP_const8u] = {8, false}, [OP_const8s] = {8, true},
    };
    uint64_t value = 0;
    enum cfi_status status = CFI_OK;
    if (op >= OP_lit && op < OP_lit + 32)
        value = op - OP_lit;
    else if (op == OP_constu)
        status = operand_uleb(m, &value);
    else if (op == OP_consts)
        status = operand_sleb(m, (int64_t *)&value);
    else
        status = operand_fixed(m, fixed[op].size, fixed[op].is_signed, &value);
    return status != CFI_OK ? status : push(m, value);
}

/* dup, drop, over, pick, swap, rot. */
static enum cfi_status op_stack(struct machine *m, uint8_t op)
{
    uint64_t a, b, c, index;
    enum cfi_status status;
    switch (op) {
    case OP_dup:
        return peek(m, 0, &a) ? push(m, a) : underflow(m);
    case OP_drop:
        return pop(m, &a);
    case OP_over:
        return peek(m, 1, &a) ? push(m, a) : underflow(m);
    case OP_pick:
        if ((status = operand_fixed(m, 1, false, &index)) != CFI_OK)
            return status;
        return peek(m, (unsigned)index, &a) ? push(m, a) : underflow(m);
    case OP_swap:
        if (!peek(m, 1, &b) || !peek(m, 0, &a))
            return underflow(m);
        m->stack[m->depth - 1] = b;
        m->stack[m->depth - 2] = a;
        return CFI_OK;
    case OP_rot: /* top three: a b c (c on top) become c a b */
        if (!peek(m, 2, &a) || !peek(m, 1, &b) || !peek(m, 0, &c))
            return underflow(m);
        m->stack[m->depth - 1] = b;
        m->stack[m->depth - 2] = a;
        m->stack[m->depth - 3] = c;
        return CFI_OK;
    }
    return fault(m, CFI_E_INTERNAL, "internal error: not a stack operation");
}

/* deref, deref_size n: the value at the address on top. */
static enum cfi_status op_deref(struct machine *m, uint8_t op)
{
    uint64_t size = 8, address = 0, value = 0;
    enum cfi_status status;
    if (op == OP_deref_size &&
        (status = operand_fixed(m, 1, false, &size)) != CFI_OK)
        return status;
    if (size == 0 || size > 8)
        return fault(m, CFI_E_EXPR, "deref_size out of range");
    if ((status = pop(m, &address)) != CFI_OK)
        return status;
    if (size == 1 || size == 2 || size == 4 || size == 8) {
        status = m->memory.read(m->memory.env, address, (unsigned)size, &value);
    } else {
        for (unsigned i = 0; i < size && status == CFI_OK; i++) {
            uint64_t byte;
            status = m->memory.read(m->memory.env, address + i, 1, &byte);
            value |= (byte & 0xff) << (8 * i);
        }
    }
    if (status != CFI_OK)
        return fault(m, CFI_E_MEMORY, "expression reads unreadable memory");
    return push(m, value);
}

/* abs, neg, not: replace the top. */
static enum cfi_status op_unary(struct machine *m, uint8_t op)
{
    uint64_t a;
    if (!peek(m, 0, &a))
        return underflow(m);
    if (op == OP_abs)
        a = (int64_t)a < 0 ? -a : a;
    else if (op == OP_neg)
        a = -a;
    else
        a = ~a;
    m->stack[m->depth - 1] = a;
    return CFI_OK;
}

/* Shift by `count`, 64 or more included (cfi.h). */
static uint64_t shift(uint8_t op, uint64_t value, uint64_t count)
{
    bool negative = (int64_t)value < 0;
    if (count >= 64)
        return op == OP_shra && negative ? ~(uint64_t)0 : 0;
    if (op == OP_shl)
        return value << count;
    if (op == OP_shr || !negative)
        return value >> count;
    return ~(~value >> count); /* arithmetic shift, without relying on C */
}

/* The binary operations: `a` the former second entry, `b` the top. */
static enum cfi_status binary(struct machine *m, uint8_t op, uint64_t a,
                              uint64_t b, uint64_t *r)
{
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (op) {
    case OP_and:   *r = a & b; return CFI_OK;
    case OP_or:    *r = a | b; return CFI_OK;
    case OP_xor:   *r = a ^ b; return CFI_OK;
    case OP_plus:  *r = a + b; return CFI_OK;
    case OP_minus: *r = a - b; return CFI_OK;
    case OP_mul:   *r = a * b; return CFI_OK;
    case OP_shl: case OP_shr: case OP_shra:
        *r = shift(op, a, b);
        return CFI_OK;
    case OP_div:
        if (b == 0)
            return fault(m, CFI_E_EXPR, "division by zero");
        *r = sa == INT64_MIN && sb == -1 ? a : (uint64_t)(sa / sb);
        return CFI_OK;
    case OP_mod:
        if (b == 0)
            return fault(m, CFI_E_EXPR, "modulo by zero");
        *r = a % b;
        return CFI_OK;
    case OP_eq: *r = sa == sb; return CFI_OK;
    case OP_ne: *r = sa != sb; return CFI_OK;
    case OP_lt: *r = sa < sb;  return CFI_OK;
    case OP_le: *r = sa <= sb; return CFI_OK;
    case OP_gt: *r = sa > sb;  return CFI_OK;
    case OP_ge: *r = sa >= sb; return CFI_OK;
    }
    return fault(m, CFI_E_INTERNAL, "internal error: not a binary operation");
}

static enum cfi_status op_binary(struct machine *m, uint8_t op)
{
    uint64_t a, b, result = 0;
    if (!peek(m, 1, &a) || !peek(m, 0, &b))
        return underflow(m);
    enum cfi_status status = binary(m, op, a, b, &result);
    if (status != CFI_OK)
        return status;
    m->depth--;
    m->stack[m->depth - 1] = result;
    return CFI_OK;
}

static enum cfi_status op_plus_uconst(struct machine *m)
{
    uint64_t n, a;
    enum cfi_status status = operand_uleb(m, &n);
    if (status != CFI_OK)
        return status;
    if (!peek(m, 0, &a))
        return underflow(m);
    m->stack[m->depth - 1] = a + n;
    return CFI_OK;
}

/* skip, bra: a 2-byte signed offset from the end of the operand. */
static enum cfi_status op_branch(struct machine *m, uint8_t op)
{
    uint64_t offset, condition = 1;
    enum cfi_status status = operand_fixed(m, 2, true, &offset);
    if (status != CFI_OK)
        return status;
    if (op == OP_bra && (status = pop(m, &condition)) != CFI_OK)
        return status;
    if (condition == 0)
        return CFI_OK;
    int64_t target = (int64_t)m->code.pos + (int64_t)offset;
    if (target < 0 || (uint64_t)target > m->code.len)
        return fault(m, CFI_E_EXPR, "branch outside the expression");
    m->code.pos = (size_t)target;
    return CFI_OK;
}

/* The callee's register, which must hold a value. */
static enum cfi_status callee_reg(struct machine *m, uint64_t reg,
                                  uint64_t *value)
{
    if (reg >= CFI_NREGS)
        return fault(m, CFI_E_EXPR, "register number out of range");
    if (m->callee->status[reg] != CFI_REG_VALUE) {
        fault(m, CFI_E_REG_UNKNOWN,
              "expression reads a register whose value is unknown");
        if (m->diag)
            m->diag->reg = (int)reg;
        return CFI_E_REG_UNKNOWN;
    }
    *value = m->callee->value[reg];
    return CFI_OK;
}

/* breg0..31 n, bregx r n: the callee's register plus n. */
static enum cfi_status op_breg(struct machine *m, uint8_t op)
{
    uint64_t reg = (uint64_t)op - OP_breg, value = 0;
    int64_t offset = 0;
    enum cfi_status status = CFI_OK;
    if (op == OP_bregx)
        status = operand_uleb(m, &reg);
    if (status == CFI_OK)
        status = operand_sleb(m, &offset);
    if (status == CFI_OK)
        status = callee_reg(m, reg, &value);
    return status != CFI_OK ? status : push(m, value + (uint64_t)offset);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                             */
/* ------------------------------------------------------------------ */

static bool is_binary(uint8_t op)
{
    switch (op) {
    case OP_and: case OP_div: case OP_minus: case OP_mod: case OP_mul:
    case OP_or: case OP_plus: case OP_shl: case OP_shr: case OP_shra:
    case OP_xor: case OP_eq: case OP_ge: case OP_gt: case OP_le:
    case OP_lt: case OP_ne:
        return true;
    }
    return false;
}

static bool is_constant(uint8_t op)
{
    return (op >= OP_lit && op < OP_lit + 32) || op == OP_addr ||
           (op >= OP_const1u && op <= OP_consts);
}

/* True for the opcodes DWARF 5 defines that CFI does not allow (cfi.h). */
static bool is_known(uint8_t op)
{
    static const struct sem_dwop ops[] = {
#define SEM_DWOP_ENTRY(name, first, count, shape) {#name, first, count, DWOP_##shape},
        SEM_DW_OPS(SEM_DWOP_ENTRY)
#undef SEM_DWOP_ENTRY
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op >= ops[i].first && op < ops[i].first + ops[i].count)
            return true;
    return false;
}

static enum cfi_status step(struct machine *m, uint8_t op)
{
    if (is_constant(op))
        return op_constant(m, op);
    if (is_binary(op))
        return op_binary(m, op);
    if (op >= OP_breg && op < OP_breg + 32)
        return op_breg(m, op);
    switch (op) {
    case OP_dup: case OP_drop: case OP_over: case OP_pick: case OP_swap:
    case OP_rot:
        return op_stack(m, op);
    case OP_deref: case OP_deref_size:
        return op_deref(m, op);
    case OP_abs: case OP_neg: case OP_not:
        return op_unary(m, op);
    case OP_plus_uconst:
        return op_plus_uconst(m);
    case OP_skip: case OP_bra:
        return op_branch(m, op);
    case OP_bregx:
        return op_breg(m, op);
    case OP_nop:
        return CFI_OK;
    }
    if (is_known(op))
        return fault(m, CFI_E_EXPR, "operation not allowed in CFI");
    return fault(m, CFI_E_EXPR, "unknown operation");
}

/* Tells the sink the operation at `at` and the stack after it. */
static void trace_op(const struct machine *m, bool start, size_t at,
                     enum cfi_status status)
{
    if (!m->trace->op)
        return;
    struct sem_trace_op event = {
        .expr = m->expr, .start = start, .at = at, .next = m->code.pos,
        .stack = m->stack, .depth = m->depth, .status = status,
        .diag = m->diag,
    };
    m->trace->op(m->trace->env, &event);
}

enum cfi_status sem_eval_expr(const struct sem_expr *expr,
                              const struct cfi_regs *callee,
                              struct cfi_memory memory, bool has_initial,
                              uint64_t initial, uint64_t *result,
                              struct cfi_diag *diag)
{
    return sem_eval_expr_traced(expr, callee, memory, has_initial, initial,
                                result, diag, NULL);
}

enum cfi_status sem_eval_expr_traced(const struct sem_expr *expr,
                                     const struct cfi_regs *callee,
                                     struct cfi_memory memory,
                                     bool has_initial, uint64_t initial,
                                     uint64_t *result, struct cfi_diag *diag,
                                     const struct sem_trace *trace)
{
    struct machine m = {
        .code = {expr->bytes, expr->len, 0},
        .callee = callee, .memory = memory, .diag = diag,
        .expr = expr, .trace = trace,
    };
    if (has_initial)
        m.stack[m.depth++] = initial;
    if (trace)
        trace_op(&m, true, 0, CFI_OK);
    for (unsigned steps = 0; m.code.pos < m.code.len; steps++) {
        m.op_at = m.code.pos;
        if (steps == CFI_EXPR_STEP_LIMIT)
            return fault(&m, CFI_E_STEP_LIMIT, "expression step limit reached");
        enum cfi_status status = step(&m, m.code.bytes[m.code.pos++]);
        if (trace)
            trace_op(&m, false, m.op_at, status);
        if (status != CFI_OK)
            return status;
    }
    m.op_at = m.code.len;
    if (m.depth == 0)
        return fault(&m, CFI_E_EXPR, "expression leaves an empty stack");
    *result = m.stack[m.depth - 1];
    return CFI_OK;
}
