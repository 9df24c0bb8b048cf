/* SPDX-License-Identifier: MIT */
/* expr.c — the DWARF expression stack machine (DWARF 5 §2.5), with the
 * restrictions and limits that cfi.h sets for call frame information
 * (§6.4.2): 64-bit values, arithmetic mod 2^64, at most
 * CFI_EXPR_STACK_MAX entries and CFI_EXPR_STEP_LIMIT operations executed.
 *
 * One function per family of operations; the table below says which
 * family each DW_OP belongs to and how its operand is encoded. Every
 * operation not in the table, or in the FORBIDDEN family, is an
 * expression fault. Every error's diag.offset is the byte offset in the
 * expression of the operation being executed (cfi.h, struct cfi_frame). */
#include "internal.h"

/* X(name, number, operand, family). lit0, reg0 and breg0 stand for the 32
 * operations that follow them (op_key folds them together). */
#define EXPR_OPS(X)                                                        \
    X(addr, 0x03, U8, CONSTANT)                                             \
    X(deref, 0x06, NONE, DEREF)                                             \
    X(const1u, 0x08, U1, CONSTANT)                                          \
    X(const1s, 0x09, S1, CONSTANT)                                          \
    X(const2u, 0x0a, U2, CONSTANT)                                          \
    X(const2s, 0x0b, S2, CONSTANT)                                          \
    X(const4u, 0x0c, U4, CONSTANT)                                          \
    X(const4s, 0x0d, S4, CONSTANT)                                          \
    X(const8u, 0x0e, U8, CONSTANT)                                          \
    X(const8s, 0x0f, S8, CONSTANT)                                          \
    X(constu, 0x10, ULEB, CONSTANT)                                         \
    X(consts, 0x11, SLEB, CONSTANT)                                         \
    X(dup, 0x12, NONE, STACK)                                               \
    X(drop, 0x13, NONE, STACK)                                              \
    X(over, 0x14, NONE, STACK)                                              \
    X(pick, 0x15, U1, STACK)                                                \
    X(swap, 0x16, NONE, STACK)                                              \
    X(rot, 0x17, NONE, STACK)                                               \
    X(xderef, 0x18, NONE, FORBIDDEN)                                        \
    X(abs, 0x19, NONE, UNARY)                                               \
    X(and, 0x1a, NONE, BINARY)                                              \
    X(div, 0x1b, NONE, BINARY)                                              \
    X(minus, 0x1c, NONE, BINARY)                                            \
    X(mod, 0x1d, NONE, BINARY)                                              \
    X(mul, 0x1e, NONE, BINARY)                                              \
    X(neg, 0x1f, NONE, UNARY)                                               \
    X(not, 0x20, NONE, UNARY)                                               \
    X(or, 0x21, NONE, BINARY)                                               \
    X(plus, 0x22, NONE, BINARY)                                             \
    X(plus_uconst, 0x23, ULEB, PLUS_UCONST)                                 \
    X(shl, 0x24, NONE, BINARY)                                              \
    X(shr, 0x25, NONE, BINARY)                                              \
    X(shra, 0x26, NONE, BINARY)                                             \
    X(xor, 0x27, NONE, BINARY)                                              \
    X(bra, 0x28, S2, BRANCH)                                                \
    X(eq, 0x29, NONE, COMPARE)                                              \
    X(ge, 0x2a, NONE, COMPARE)                                              \
    X(gt, 0x2b, NONE, COMPARE)                                              \
    X(le, 0x2c, NONE, COMPARE)                                              \
    X(lt, 0x2d, NONE, COMPARE)                                              \
    X(ne, 0x2e, NONE, COMPARE)                                              \
    X(skip, 0x2f, S2, BRANCH)                                               \
    X(lit0, 0x30, NONE, LITERAL)                                            \
    X(reg0, 0x50, NONE, FORBIDDEN)                                          \
    X(breg0, 0x70, SLEB, REGISTER)                                          \
    X(regx, 0x90, NONE, FORBIDDEN)                                          \
    X(fbreg, 0x91, NONE, FORBIDDEN)                                         \
    X(bregx, 0x92, ULEB_SLEB, REGISTER)                                     \
    X(piece, 0x93, NONE, FORBIDDEN)                                         \
    X(deref_size, 0x94, U1, DEREF)                                          \
    X(xderef_size, 0x95, NONE, FORBIDDEN)                                   \
    X(nop, 0x96, NONE, NOP)                                                 \
    X(push_object_address, 0x97, NONE, FORBIDDEN)                           \
    X(call2, 0x98, NONE, FORBIDDEN)                                         \
    X(call4, 0x99, NONE, FORBIDDEN)                                         \
    X(call_ref, 0x9a, NONE, FORBIDDEN)                                      \
    X(form_tls_address, 0x9b, NONE, FORBIDDEN)                              \
    X(call_frame_cfa, 0x9c, NONE, FORBIDDEN)                                \
    X(bit_piece, 0x9d, NONE, FORBIDDEN)                                     \
    X(implicit_value, 0x9e, NONE, FORBIDDEN)                                \
    X(stack_value, 0x9f, NONE, FORBIDDEN)                                   \
    X(implicit_pointer, 0xa0, NONE, FORBIDDEN)                              \
    X(addrx, 0xa1, NONE, FORBIDDEN)                                         \
    X(constx, 0xa2, NONE, FORBIDDEN)                                        \
    X(entry_value, 0xa3, NONE, FORBIDDEN)                                   \
    X(const_type, 0xa4, NONE, FORBIDDEN)                                    \
    X(regval_type, 0xa5, NONE, FORBIDDEN)                                   \
    X(deref_type, 0xa6, NONE, FORBIDDEN)                                    \
    X(xderef_type, 0xa7, NONE, FORBIDDEN)                                   \
    X(convert, 0xa8, NONE, FORBIDDEN)                                       \
    X(reinterpret, 0xa9, NONE, FORBIDDEN)

enum dw_op {
#define OP_ENUM(name, number, operand, family) OP_##name = number,
    EXPR_OPS(OP_ENUM)
#undef OP_ENUM
};

enum operand { OPERAND_NONE, OPERAND_U1, OPERAND_S1, OPERAND_U2, OPERAND_S2,
               OPERAND_U4, OPERAND_S4, OPERAND_U8, OPERAND_S8, OPERAND_ULEB,
               OPERAND_SLEB, OPERAND_ULEB_SLEB };

enum family { FAMILY_CONSTANT, FAMILY_LITERAL, FAMILY_REGISTER, FAMILY_STACK,
              FAMILY_DEREF, FAMILY_UNARY, FAMILY_BINARY, FAMILY_COMPARE,
              FAMILY_PLUS_UCONST, FAMILY_BRANCH, FAMILY_NOP, FAMILY_FORBIDDEN };

/* One decoded operation. */
struct operation {
    unsigned op;          /* the byte, e.g. 0x75 for breg5 */
    enum family family;
    uint64_t u;           /* unsigned operand (or the first of bregx) */
    int64_t s;            /* signed operand (or the second of bregx) */
};

/* The machine: its stack, where it is, and what it may read. */
struct machine {
    uint64_t stack[CFI_EXPR_STACK_MAX];
    unsigned depth;
    const uint8_t *bytes;
    size_t len;
    size_t pc;            /* offset of the next operation */
    size_t op_at;         /* offset of the one being executed */
    const struct cfi_regs *callee;
    struct cfi_memory memory;
    struct cfi_diag *diag;
};

static enum cfi_status fault(struct machine *m, const char *message)
{
    cfi_fail(m->diag, CFI_E_EXPR, m->op_at, message);
    return CFI_E_EXPR;
}

/* A state no input reaches: the table gave an operation to the wrong
 * family, or a family no function (cfi.h's CFI_E_INTERNAL). */
static enum cfi_status internal(struct machine *m, const char *message)
{
    cfi_fail(m->diag, CFI_E_INTERNAL, m->op_at, message);
    return CFI_E_INTERNAL;
}

/* ------------------------------------------------------------------ */
/* Stack                                                               */
/* ------------------------------------------------------------------ */

static enum cfi_status push(struct machine *m, uint64_t value)
{
    if (m->depth == CFI_EXPR_STACK_MAX)
        return cfi_fail(m->diag, CFI_E_EXPR_STACK, m->op_at,
                        "expression stack overflow");
    m->stack[m->depth++] = value;
    return CFI_OK;
}

static enum cfi_status need(struct machine *m, unsigned entries)
{
    return m->depth < entries ? fault(m, "expression stack underflow")
                              : CFI_OK;
}

/* The entry `i` below the top (0 is the top). */
static uint64_t *entry(struct machine *m, unsigned i)
{
    return &m->stack[m->depth - 1 - i];
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* lit0..31, reg0..31 and breg0..31 share the table entry of their
 * first. */
static unsigned op_key(unsigned op)
{
    if (op >= OP_lit0 && op < OP_lit0 + 32)
        return OP_lit0;
    if (op >= OP_reg0 && op < OP_reg0 + 32)
        return OP_reg0;
    if (op >= OP_breg0 && op < OP_breg0 + 32)
        return OP_breg0;
    return op;
}

static bool op_shape(unsigned op, enum operand *operand, enum family *family)
{
    switch (op_key(op)) {
#define OP_SHAPE(name, number, operand_, family_)                          \
    case number:                                                            \
        *operand = OPERAND_##operand_;                                      \
        *family = FAMILY_##family_;                                         \
        return true;
        EXPR_OPS(OP_SHAPE)
#undef OP_SHAPE
    default:
        return false;
    }
}

static enum cfi_status read_failure(struct machine *m, enum interp_read read)
{
    return read == INTERP_READ_OVERFLOW
               ? fault(m, "LEB128 operand overflows 64 bits")
               : fault(m, "truncated operand");
}

/* A fixed-size operand of `size` bytes, sign-extended when `is_signed`. */
static enum cfi_status read_fixed(struct machine *m, unsigned size,
                                  bool is_signed, struct operation *op)
{
    enum interp_read read =
        interp_read_fixed(m->bytes, m->len, &m->pc, size, &op->u);
    if (read != INTERP_READ_OK)
        return read_failure(m, read);
    if (is_signed && size < 8 && (op->u >> (8 * size - 1)) & 1)
        op->u |= ~(uint64_t)0 << (8 * size);
    op->s = interp_signed(op->u);
    return CFI_OK;
}

static enum cfi_status read_operand(struct machine *m, enum operand operand,
                                    struct operation *op)
{
    enum interp_read read = INTERP_READ_OK;
    switch (operand) {
    case OPERAND_NONE:
        return CFI_OK;
    case OPERAND_U1: return read_fixed(m, 1, false, op);
    case OPERAND_S1: return read_fixed(m, 1, true, op);
    case OPERAND_U2: return read_fixed(m, 2, false, op);
    case OPERAND_S2: return read_fixed(m, 2, true, op);
    case OPERAND_U4: return read_fixed(m, 4, false, op);
    case OPERAND_S4: return read_fixed(m, 4, true, op);
    case OPERAND_U8: return read_fixed(m, 8, false, op);
    case OPERAND_S8: return read_fixed(m, 8, true, op);
    case OPERAND_ULEB:
        read = interp_read_uleb(m->bytes, m->len, &m->pc, &op->u);
        break;
    case OPERAND_SLEB:
        read = interp_read_sleb(m->bytes, m->len, &m->pc, &op->s);
        op->u = (uint64_t)op->s;
        break;
    case OPERAND_ULEB_SLEB:
        read = interp_read_uleb(m->bytes, m->len, &m->pc, &op->u);
        if (read == INTERP_READ_OK)
            read = interp_read_sleb(m->bytes, m->len, &m->pc, &op->s);
        break;
    default:
        return internal(m, "internal error: an operand of no encoding");
    }
    return read == INTERP_READ_OK ? CFI_OK : read_failure(m, read);
}

/* Reads the operation at m->pc and its operand; m->pc moves past both. */
static enum cfi_status decode(struct machine *m, struct operation *op)
{
    enum operand operand;
    op->op = m->bytes[m->pc++];
    op->u = 0;
    op->s = 0;
    if (!op_shape(op->op, &operand, &op->family))
        return fault(m, "unknown DW_OP");
    if (op->family == FAMILY_FORBIDDEN)
        return fault(m, "DW_OP not allowed in call frame information");
    return read_operand(m, operand, op);
}

/* ------------------------------------------------------------------ */
/* Families                                                            */
/* ------------------------------------------------------------------ */

/* litN: push N. addr a, constNx n, constu n, consts n: push the operand. */
static enum cfi_status do_constant(struct machine *m, const struct operation *op)
{
    if (op->family == FAMILY_LITERAL)
        return push(m, op->op - OP_lit0);
    return push(m, op->u);
}

/* bregN n, bregx r n: push the callee's register plus n. The register
 * must hold a value (cfi.h: unknown or undefined is CFI_E_REG_UNKNOWN). */
static enum cfi_status do_register(struct machine *m, const struct operation *op)
{
    uint64_t reg = op->op == OP_bregx ? op->u : op->op - (unsigned)OP_breg0;
    if (reg >= CFI_NREGS)
        return fault(m, "bregx register out of range");
    if (m->callee->status[reg] != CFI_REG_VALUE) {
        enum cfi_status status =
            cfi_fail(m->diag, CFI_E_REG_UNKNOWN, m->op_at,
                     "expression reads a register whose value is unknown");
        if (m->diag)
            m->diag->reg = (int)reg;
        return status;
    }
    return push(m, m->callee->value[reg] + (uint64_t)op->s);
}

/* dup, drop, over, pick i, swap, rot (§2.5.1.3). */
static enum cfi_status do_stack(struct machine *m, const struct operation *op)
{
    uint64_t top, second;
    switch (op->op) {
    case OP_dup:
        return need(m, 1) != CFI_OK ? CFI_E_EXPR : push(m, *entry(m, 0));
    case OP_drop:
        if (need(m, 1) != CFI_OK)
            return CFI_E_EXPR;
        m->depth--;
        return CFI_OK;
    case OP_over:
        return need(m, 2) != CFI_OK ? CFI_E_EXPR : push(m, *entry(m, 1));
    case OP_pick:
        if (op->u >= m->depth)
            return fault(m, "expression stack underflow");
        return push(m, *entry(m, (unsigned)op->u));
    case OP_swap:
        if (need(m, 2) != CFI_OK)
            return CFI_E_EXPR;
        top = *entry(m, 0);
        *entry(m, 0) = *entry(m, 1);
        *entry(m, 1) = top;
        return CFI_OK;
    case OP_rot: /* the top becomes third, the second top, the third second */
        if (need(m, 3) != CFI_OK)
            return CFI_E_EXPR;
        top = *entry(m, 0);
        second = *entry(m, 1);
        *entry(m, 0) = second;
        *entry(m, 1) = *entry(m, 2);
        *entry(m, 2) = top;
        return CFI_OK;
    default:
        return internal(m, "internal error: not a stack operation");
    }
}

/* Reads `size` bytes at addr through the callback: sizes 1, 2, 4, 8 in
 * one read, the others one byte at a time (cfi.h), little-endian. */
static enum cfi_status read_memory(struct machine *m, uint64_t addr,
                                   unsigned size, uint64_t *value)
{
    if (size == 1 || size == 2 || size == 4 || size == 8) {
        if (m->memory.read(m->memory.env, addr, size, value) != CFI_OK)
            return cfi_fail(m->diag, CFI_E_MEMORY, m->op_at,
                            "memory fault in DW_OP_deref");
        return CFI_OK;
    }
    uint64_t result = 0;
    for (unsigned i = 0; i < size; i++) {
        uint64_t byte;
        if (m->memory.read(m->memory.env, addr + i, 1, &byte) != CFI_OK)
            return cfi_fail(m->diag, CFI_E_MEMORY, m->op_at,
                            "memory fault in DW_OP_deref_size");
        result |= (byte & 0xff) << (8 * i);
    }
    *value = result;
    return CFI_OK;
}

/* deref: top := the 8 bytes at top. deref_size n: the n bytes (1..8),
 * zero-extended. */
static enum cfi_status do_deref(struct machine *m, const struct operation *op)
{
    unsigned size = op->op == OP_deref ? 8 : (unsigned)op->u;
    if (size == 0 || size > 8)
        return fault(m, "DW_OP_deref_size size not in 1..8");
    if (need(m, 1) != CFI_OK)
        return CFI_E_EXPR;
    return read_memory(m, *entry(m, 0), size, entry(m, 0));
}

/* abs, neg, not: top := f(top). abs(INT64_MIN) wraps to INT64_MIN. */
static enum cfi_status do_unary(struct machine *m, const struct operation *op)
{
    if (need(m, 1) != CFI_OK)
        return CFI_E_EXPR;
    uint64_t *top = entry(m, 0);
    switch (op->op) {
    case OP_abs:
        if (interp_signed(*top) < 0)
            *top = (uint64_t)0 - *top;
        return CFI_OK;
    case OP_neg:
        *top = (uint64_t)0 - *top;
        return CFI_OK;
    case OP_not:
        *top = ~*top;
        return CFI_OK;
    default:
        return internal(m, "internal error: not a unary operation");
    }
}

/* shl, shr, shra by b: 64 or more shifts every bit out. */
static uint64_t shift(unsigned op, uint64_t a, uint64_t b)
{
    bool negative = interp_signed(a) < 0;
    if (op == OP_shra)
        return b >= 64 ? (negative ? ~(uint64_t)0 : 0)
                       : (negative ? ~(~a >> b) : a >> b);
    if (b >= 64)
        return 0;
    return op == OP_shl ? a << b : a >> b;
}

/* a b → a OP b, b being the former top (§2.5.1.4). */
static enum cfi_status binary(struct machine *m, unsigned op, uint64_t a,
                              uint64_t b, uint64_t *result)
{
    switch (op) {
    case OP_and: *result = a & b; return CFI_OK;
    case OP_or: *result = a | b; return CFI_OK;
    case OP_xor: *result = a ^ b; return CFI_OK;
    case OP_plus: *result = a + b; return CFI_OK;
    case OP_minus: *result = a - b; return CFI_OK;
    case OP_mul: *result = a * b; return CFI_OK;
    case OP_shl:
    case OP_shr:
    case OP_shra: *result = shift(op, a, b); return CFI_OK;
    case OP_div: /* signed; INT64_MIN / -1 wraps to INT64_MIN */
        if (b == 0)
            return fault(m, "division by zero");
        *result = interp_signed(b) == -1
                      ? (uint64_t)0 - a
                      : (uint64_t)(interp_signed(a) / interp_signed(b));
        return CFI_OK;
    case OP_mod: /* unsigned */
        if (b == 0)
            return fault(m, "modulo by zero");
        *result = a % b;
        return CFI_OK;
    default:
        return internal(m, "internal error: not a binary operation");
    }
}

static enum cfi_status do_binary(struct machine *m, const struct operation *op)
{
    if (need(m, 2) != CFI_OK)
        return CFI_E_EXPR;
    uint64_t b = *entry(m, 0), a = *entry(m, 1), result;
    enum cfi_status status = binary(m, op->op, a, b, &result);
    if (status == CFI_OK) {
        m->depth--;
        *entry(m, 0) = result;
    }
    return status;
}

/* eq ge gt le lt ne: a b → 1 if a REL b else 0, signed. */
static enum cfi_status do_compare(struct machine *m, const struct operation *op)
{
    if (need(m, 2) != CFI_OK)
        return CFI_E_EXPR;
    int64_t b = interp_signed(*entry(m, 0)), a = interp_signed(*entry(m, 1));
    bool holds;
    switch (op->op) {
    case OP_eq: holds = a == b; break;
    case OP_ge: holds = a >= b; break;
    case OP_gt: holds = a > b; break;
    case OP_le: holds = a <= b; break;
    case OP_lt: holds = a < b; break;
    case OP_ne: holds = a != b; break;
    default: return internal(m, "internal error: not a comparison");
    }
    m->depth--;
    *entry(m, 0) = holds;
    return CFI_OK;
}

/* plus_uconst n: top := top + n */
static enum cfi_status do_plus_uconst(struct machine *m, const struct operation *op)
{
    if (need(m, 1) != CFI_OK)
        return CFI_E_EXPR;
    *entry(m, 0) += op->u;
    return CFI_OK;
}

/* skip n: pc := pc + n. bra n: pop; if it was not 0, pc := pc + n. pc is
 * the end of the operand; the target must be in [0, len] (len ends the
 * expression). A bra not taken does not jump, so its target is not
 * checked. */
static enum cfi_status do_branch(struct machine *m, const struct operation *op)
{
    if (op->op == OP_bra) {
        if (need(m, 1) != CFI_OK)
            return CFI_E_EXPR;
        if (m->stack[--m->depth] == 0)
            return CFI_OK;
    }
    uint64_t distance = op->s < 0 ? (uint64_t)0 - (uint64_t)op->s
                                  : (uint64_t)op->s;
    if (op->s < 0 ? distance > m->pc : distance > m->len - m->pc)
        return fault(m, "branch target outside the expression");
    m->pc = op->s < 0 ? m->pc - distance : m->pc + distance;
    return CFI_OK;
}

static enum cfi_status execute(struct machine *m, const struct operation *op)
{
    switch (op->family) {
    case FAMILY_CONSTANT:
    case FAMILY_LITERAL: return do_constant(m, op);
    case FAMILY_REGISTER: return do_register(m, op);
    case FAMILY_STACK: return do_stack(m, op);
    case FAMILY_DEREF: return do_deref(m, op);
    case FAMILY_UNARY: return do_unary(m, op);
    case FAMILY_BINARY: return do_binary(m, op);
    case FAMILY_COMPARE: return do_compare(m, op);
    case FAMILY_PLUS_UCONST: return do_plus_uconst(m, op);
    case FAMILY_BRANCH: return do_branch(m, op);
    case FAMILY_NOP: return CFI_OK;
    case FAMILY_FORBIDDEN:
        return fault(m, "DW_OP not allowed in call frame information");
    default: return internal(m, "internal error: an operation of no family");
    }
}

enum cfi_status interp_eval_expr(const uint8_t *bytes, size_t len,
                                 const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 const uint64_t *initial, uint64_t *result,
                                 struct cfi_diag *diag)
{
    struct machine m;
    m.depth = 0;
    m.bytes = bytes;
    m.len = len;
    m.pc = 0;
    m.op_at = 0;
    m.callee = callee;
    m.memory = memory;
    m.diag = diag;
    if (initial)
        m.stack[m.depth++] = *initial;
    for (unsigned steps = 0; m.pc < m.len; steps++) {
        m.op_at = m.pc;
        if (steps == CFI_EXPR_STEP_LIMIT)
            return cfi_fail(diag, CFI_E_STEP_LIMIT, m.op_at,
                            "expression step limit reached");
        struct operation op;
        enum cfi_status status = decode(&m, &op);
        if (status == CFI_OK)
            status = execute(&m, &op);
        if (status != CFI_OK)
            return status;
    }
    m.op_at = m.len;
    if (m.depth == 0)
        return fault(&m, "expression leaves an empty stack");
    *result = *entry(&m, 0);
    return CFI_OK;
}
