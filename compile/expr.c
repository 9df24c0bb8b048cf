/* SPDX-License-Identifier: MIT */
/* expr.c — DWARF expressions compiled to C (DWARF 5 §2.5, §6.4.2, and
 * cfi.h's rules; eh_elf.h repeats them).
 *
 * Each expression becomes a static function
 *   static int eh_x<unit>_<n>(eh_in_t in, eh_env_t env, eh_out_t f,
 *                             uint64_t cfa, uint64_t *result)
 * returning EH_ELF_OK with *result, or the error class. The operations
 * run as the reference machine runs them; every check it makes at run
 * time is either made by the C at the same point, or decided here once:
 *
 *   - without skip/bra (straight-line), the stack depth before each
 *     operation is known: the stack is plain locals s0, s1, ..., and
 *     underflow, overflow, the step limit and every decoding error
 *     (unknown or forbidden opcode, truncated operand) become one
 *     `return` at the operation where the machine would stop; what
 *     follows is never emitted;
 *   - with skip/bra, every operation reachable from offset 0 (a branch
 *     may land inside another operation's operands: decoding starts
 *     again there) gets a label, and the stack is an array with checks.
 *
 * The decoder is compile/'s own: it shares nothing with semantics/. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* DW_OP numbers (DWARF 5 §7.7.1) of the operations CFI allows. */
enum {
    OP_addr = 0x03, OP_deref = 0x06,
    OP_const1u = 0x08, OP_const1s, OP_const2u, OP_const2s, OP_const4u,
    OP_const4s, OP_const8u, OP_const8s, OP_constu, OP_consts,
    OP_dup = 0x12, OP_drop, OP_over, OP_pick, OP_swap, OP_rot,
    OP_abs = 0x19, OP_and, OP_div, OP_minus, OP_mod, OP_mul, OP_neg, OP_not,
    OP_or, OP_plus, OP_plus_uconst, OP_shl, OP_shr, OP_shra, OP_xor, OP_bra,
    OP_eq, OP_ge, OP_gt, OP_le, OP_lt, OP_ne, OP_skip,
    OP_lit0 = 0x30, OP_breg0 = 0x70, OP_bregx = 0x92, OP_deref_size = 0x94,
    OP_nop = 0x96,
};

/* Operations that compile to the same shape. */
enum op_class {
    OPC_BAD,      /* fails with EH_ELF_E_EXPR when executed */
    OPC_PUSH,     /* a constant */
    OPC_BREG,     /* a callee register plus an offset */
    OPC_DUP, OPC_DROP, OPC_OVER, OPC_PICK, OPC_SWAP, OPC_ROT,
    OPC_DEREF,    /* `value` bytes */
    OPC_UNARY, OPC_BINARY, OPC_PLUS_UCONST,
    OPC_SKIP, OPC_BRA,
    OPC_NOP,
};

struct op {
    uint8_t code;
    enum op_class cls;
    uint32_t at;          /* offset of the opcode */
    uint32_t next;        /* offset after the operands */
    uint64_t value;       /* constant, pick index, size, addend, offset */
    uint32_t reg;         /* OPC_BREG */
    int64_t target;       /* OPC_SKIP, OPC_BRA: may be out of range */
};

/* Past this many reachable operations an expression with branches is not
 * compiled (EH_ELF_E_UNSUPPORTED): it would be C of unbounded size. Real
 * CFI has a few operations per expression. */
#define MAX_BRANCHING_OPS 65536

/* ------------------------------------------------------------------ */
/* Decoding                                                             */
/* ------------------------------------------------------------------ */

struct reader {
    const uint8_t *bytes;
    uint32_t len;
    uint32_t pos;
};

static bool read_fixed(struct reader *r, unsigned size, bool is_signed,
                       uint64_t *value)
{
    if (r->len - r->pos < size)
        return false;
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)r->bytes[r->pos + i] << (8 * i);
    r->pos += size;
    if (is_signed && size < 8 && (v >> (8 * size - 1) & 1))
        v |= ~(uint64_t)0 << (8 * size);
    *value = v;
    return true;
}

/* An unsigned LEB128 that must fit in 64 bits. */
static bool read_uleb(struct reader *r, uint64_t *value)
{
    uint64_t v = 0;
    bool fits = true;
    for (unsigned shift = 0;; shift += 7) {
        if (r->pos >= r->len)
            return false;
        uint8_t byte = r->bytes[r->pos++];
        uint64_t low = byte & 0x7f;
        if (shift < 64) {
            v |= low << shift;
            if (shift > 57 && low >> (64 - shift))
                fits = false;
        } else if (low) {
            fits = false;
        }
        if (!(byte & 0x80))
            break;
    }
    *value = v;
    return fits;
}

/* A signed LEB128 whose value must lie in [INT64_MIN, INT64_MAX]: every
 * bit from 63 up must equal the sign (the last byte's bit 6). */
static bool read_sleb(struct reader *r, int64_t *value)
{
    uint64_t v = 0, high = 0; /* high: OR of the bits at 63 and above */
    uint64_t high_and = 1;    /* AND of the same bits */
    unsigned shift = 0;
    uint8_t byte;
    do {
        if (r->pos >= r->len)
            return false;
        byte = r->bytes[r->pos++];
        for (unsigned bit = 0; bit < 7; bit++, shift++) {
            uint64_t b = (uint64_t)(byte >> bit) & 1;
            if (shift < 63)
                v |= b << shift;
            if (shift >= 63) {
                high |= b;
                high_and &= b;
            }
        }
    } while (byte & 0x80);
    bool negative = byte & 0x40;
    if (shift < 64) { /* sign-extend from the last byte */
        if (negative)
            v |= ~(uint64_t)0 << shift;
        *value = (int64_t)v;
        return true;
    }
    if (negative ? !high_and : high)
        return false;
    *value = (int64_t)(negative ? v | (uint64_t)1 << 63 : v);
    return true;
}

static enum op_class class_of(uint8_t code)
{
    switch (code) {
    case OP_dup: return OPC_DUP;
    case OP_drop: return OPC_DROP;
    case OP_over: return OPC_OVER;
    case OP_pick: return OPC_PICK;
    case OP_swap: return OPC_SWAP;
    case OP_rot: return OPC_ROT;
    case OP_deref: case OP_deref_size: return OPC_DEREF;
    case OP_abs: case OP_neg: case OP_not: return OPC_UNARY;
    case OP_and: case OP_div: case OP_minus: case OP_mod: case OP_mul:
    case OP_or: case OP_plus: case OP_shl: case OP_shr: case OP_shra:
    case OP_xor: case OP_eq: case OP_ge: case OP_gt: case OP_le: case OP_lt:
    case OP_ne:
        return OPC_BINARY;
    case OP_plus_uconst: return OPC_PLUS_UCONST;
    case OP_skip: return OPC_SKIP;
    case OP_bra: return OPC_BRA;
    case OP_nop: return OPC_NOP;
    case OP_bregx: return OPC_BREG;
    }
    if (code == OP_addr || (code >= OP_const1u && code <= OP_consts) ||
        (code >= OP_lit0 && code < OP_lit0 + 32))
        return OPC_PUSH;
    if (code >= OP_breg0 && code < OP_breg0 + 32)
        return OPC_BREG;
    return OPC_BAD; /* unknown, or not allowed in CFI (cfi.h) */
}

static bool decode_push(struct reader *r, uint8_t code, uint64_t *value)
{
    static const uint8_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8};
    if (code >= OP_lit0) {
        *value = code - OP_lit0;
        return true;
    }
    if (code == OP_addr)
        return read_fixed(r, 8, false, value);
    if (code == OP_constu)
        return read_uleb(r, value);
    if (code == OP_consts)
        return read_sleb(r, (int64_t *)value);
    return read_fixed(r, sizes[code - OP_const1u], (code - OP_const1u) & 1,
                      value);
}

/* Reads the operands of op->cls; false when they are truncated or out of
 * range (the operation then fails when executed). */
static bool decode_operands(struct reader *r, struct op *op)
{
    uint64_t reg = (uint64_t)op->code - OP_breg0, offset;
    int64_t soffset;
    switch (op->cls) {
    case OPC_PUSH:
        return decode_push(r, op->code, &op->value);
    case OPC_BREG:
        if (op->code == OP_bregx && !read_uleb(r, &reg))
            return false;
        if (!read_sleb(r, &soffset) || reg >= CFI_NREGS)
            return false;
        op->reg = (uint32_t)reg;
        op->value = (uint64_t)soffset;
        return true;
    case OPC_PICK:
        return read_fixed(r, 1, false, &op->value);
    case OPC_DEREF:
        op->value = 8;
        if (op->code == OP_deref_size && !read_fixed(r, 1, false, &op->value))
            return false;
        return op->value >= 1 && op->value <= 8;
    case OPC_PLUS_UCONST:
        return read_uleb(r, &op->value);
    case OPC_SKIP: case OPC_BRA:
        if (!read_fixed(r, 2, true, &offset))
            return false;
        op->target = (int64_t)r->pos + (int64_t)offset;
        return true;
    default:
        return true;
    }
}

static struct op decode(const struct sem_expr *expr, uint32_t at)
{
    struct reader r = {expr->bytes, expr->len, at + 1};
    struct op op = {.code = expr->bytes[at], .at = at};
    op.cls = class_of(op.code);
    if (op.cls != OPC_BAD && !decode_operands(&r, &op))
        op.cls = OPC_BAD;
    op.next = r.pos;
    return op;
}

/* ------------------------------------------------------------------ */
/* C for one operation's computation                                    */
/* ------------------------------------------------------------------ */

static const char *binary_operator(uint8_t code)
{
    switch (code) {
    case OP_and: return "&";
    case OP_or: return "|";
    case OP_xor: return "^";
    case OP_plus: return "+";
    case OP_minus: return "-";
    case OP_mul: return "*";
    case OP_mod: return "%";
    case OP_eq: return "==";
    case OP_ne: return "!=";
    case OP_lt: return "<";
    case OP_le: return "<=";
    case OP_gt: return ">";
    case OP_ge: return ">=";
    }
    return NULL;
}

/* r = a OP b, for the C expressions a, b and the lvalue r. */
static void emit_binary(struct cg_text *t, uint8_t code, const char *r,
                        const char *a, const char *b)
{
    if (code == OP_div || code == OP_mod)
        cg_printf(t, "    if (%s == 0) return EH_ELF_E_EXPR;\n", b);
    switch (code) {
    case OP_div:
        cg_printf(t, "    %s = eh_div(%s, %s);\n", r, a, b);
        return;
    case OP_shl: case OP_shr:
        cg_printf(t, "    %s = %s >= 64 ? 0 : %s %s %s;\n", r, b, a,
                  code == OP_shl ? "<<" : ">>", b);
        return;
    case OP_shra:
        cg_printf(t, "    %s = eh_shra(%s, %s);\n", r, a, b);
        return;
    case OP_eq: case OP_ne: case OP_lt: case OP_le: case OP_gt: case OP_ge:
        cg_printf(t, "    %s = (int64_t)%s %s (int64_t)%s;\n", r, a,
                  binary_operator(code), b);
        return;
    default:
        cg_printf(t, "    %s = %s %s %s;\n", r, a, binary_operator(code), b);
    }
}

static void emit_unary(struct cg_text *t, uint8_t code, const char *r)
{
    if (code == OP_abs)
        cg_printf(t, "    %s = (int64_t)%s < 0 ? 0 - %s : %s;\n", r, r, r, r);
    else if (code == OP_neg)
        cg_printf(t, "    %s = 0 - %s;\n", r, r);
    else
        cg_printf(t, "    %s = ~%s;\n", r, r);
}

/* The value at address `lvalue`, replacing it. */
static void emit_deref(struct cg_text *t, uint64_t size, const char *lvalue)
{
    bool whole = size == 1 || size == 2 || size == 4 || size == 8;
    cg_printf(t, "    if (%s(env, %s, %u, &%s)) return EH_ELF_E_MEMORY;\n",
              whole ? "eh_load" : "eh_load_bytes", lvalue, (unsigned)size,
              lvalue);
}

static void emit_breg(struct cg_text *t, const struct op *op)
{
    cg_printf(t, "    e = eh_reg(in, env, f, %u, &v);\n"
                 "    if (e != EH_ELF_OK) return e;\n", (unsigned)op->reg);
}

static const char *op_name(uint8_t code)
{
    static const char *const names[] = {
        [OP_addr] = "addr", [OP_deref] = "deref", [OP_const1u] = "const1u",
        [OP_const1s] = "const1s", [OP_const2u] = "const2u",
        [OP_const2s] = "const2s", [OP_const4u] = "const4u",
        [OP_const4s] = "const4s", [OP_const8u] = "const8u",
        [OP_const8s] = "const8s", [OP_constu] = "constu",
        [OP_consts] = "consts", [OP_dup] = "dup", [OP_drop] = "drop",
        [OP_over] = "over", [OP_pick] = "pick", [OP_swap] = "swap",
        [OP_rot] = "rot", [OP_abs] = "abs", [OP_and] = "and", [OP_div] = "div",
        [OP_minus] = "minus", [OP_mod] = "mod", [OP_mul] = "mul",
        [OP_neg] = "neg", [OP_not] = "not", [OP_or] = "or", [OP_plus] = "plus",
        [OP_plus_uconst] = "plus_uconst", [OP_shl] = "shl", [OP_shr] = "shr",
        [OP_shra] = "shra", [OP_xor] = "xor", [OP_bra] = "bra", [OP_eq] = "eq",
        [OP_ge] = "ge", [OP_gt] = "gt", [OP_le] = "le", [OP_lt] = "lt",
        [OP_ne] = "ne", [OP_skip] = "skip", [OP_bregx] = "bregx",
        [OP_deref_size] = "deref_size", [OP_nop] = "nop",
    };
    if (code >= OP_lit0 && code < OP_lit0 + 32)
        return "lit";
    if (code >= OP_breg0 && code < OP_breg0 + 32)
        return "breg";
    return code < sizeof names / sizeof names[0] && names[code] ? names[code]
                                                                : "op";
}

/* The operation and its decoded operands, as a comment: 12: breg7 160. */
static void emit_comment(struct cg_text *t, const struct op *op)
{
    const char *name = op_name(op->code);
    cg_printf(t, "    /* %u: ", (unsigned)op->at);
    if (op->cls == OPC_BAD)
        cg_printf(t, "0x%02x: fails", op->code);
    else if (op->code >= OP_lit0 && op->code < OP_lit0 + 32)
        cg_printf(t, "lit%u", op->code - OP_lit0);
    else if (op->cls == OPC_BREG && op->code != OP_bregx)
        cg_printf(t, "breg%u %lld", op->reg, (long long)op->value);
    else if (op->cls == OPC_BREG)
        cg_printf(t, "bregx %u %lld", op->reg, (long long)op->value);
    else if (op->cls == OPC_SKIP || op->cls == OPC_BRA)
        cg_printf(t, "%s to %lld", name, (long long)op->target);
    else if (op->cls == OPC_PUSH || op->cls == OPC_PICK ||
             op->cls == OPC_PLUS_UCONST || op->code == OP_deref_size)
        cg_printf(t, "%s 0x%llx", name, (unsigned long long)op->value);
    else
        cg_puts(t, name);
    cg_puts(t, " */\n");
}

/* ------------------------------------------------------------------ */
/* Straight-line expressions: locals s0.., the depth known statically   */
/* ------------------------------------------------------------------ */

struct straight {
    struct cg_text *t;
    unsigned depth;
    unsigned max_depth;
};

static const char *slot(char *buf, unsigned index)
{
    snprintf(buf, 16, "s%u", index);
    return buf;
}

/* `return status;` and false: the operation ends the expression. */
static bool stop(struct straight *s, const char *status)
{
    cg_printf(s->t, "    return %s;\n", status);
    return false;
}

enum push_kind { PUSH_CONSTANT, PUSH_REGISTER, PUSH_SLOT };

/* Pushes a constant, v + a constant (after eh_reg), or a copy of a slot. */
static bool push_value(struct straight *s, enum push_kind kind,
                       uint64_t constant, unsigned source)
{
    char name[16], from[16];
    if (s->depth == CFI_EXPR_STACK_MAX)
        return stop(s, "EH_ELF_E_EXPR_STACK");
    cg_printf(s->t, "    %s = ", slot(name, s->depth));
    if (kind == PUSH_SLOT) {
        cg_puts(s->t, slot(from, source));
    } else {
        if (kind == PUSH_REGISTER)
            cg_puts(s->t, "v + ");
        cg_emit_u64(s->t, constant);
    }
    cg_puts(s->t, ";\n");
    if (++s->depth > s->max_depth)
        s->max_depth = s->depth;
    return true;
}

static bool straight_stack_op(struct straight *s, const struct op *op)
{
    char a[16], b[16], c[16];
    unsigned d = s->depth;
    uint64_t need = op->cls == OPC_ROT                           ? 3
                    : op->cls == OPC_SWAP || op->cls == OPC_OVER ? 2
                    : op->cls == OPC_PICK                        ? op->value + 1
                                                                 : 1;
    if (d < need)
        return stop(s, "EH_ELF_E_EXPR");
    switch (op->cls) {
    case OPC_DUP: return push_value(s, PUSH_SLOT, 0, d - 1);
    case OPC_OVER: return push_value(s, PUSH_SLOT, 0, d - 2);
    case OPC_PICK: return push_value(s, PUSH_SLOT, 0, d - 1 - (unsigned)op->value);
    case OPC_DROP: s->depth--; return true;
    case OPC_SWAP:
        cg_printf(s->t, "    v = %s; %s = %s; %s = v;\n", slot(a, d - 1), a,
                  slot(b, d - 2), b);
        return true;
    default: /* OPC_ROT */
        cg_printf(s->t, "    v = %s; %s = %s; %s = %s; %s = v;\n",
                  slot(a, d - 1), a, slot(b, d - 2), b, slot(c, d - 3), c);
        return true;
    }
}

static bool straight_op(struct straight *s, const struct op *op)
{
    char a[16], b[16];
    unsigned d = s->depth;
    switch (op->cls) {
    case OPC_BAD:
        return stop(s, "EH_ELF_E_EXPR");
    case OPC_NOP:
        return true;
    case OPC_PUSH:
        return push_value(s, PUSH_CONSTANT, op->value, 0);
    case OPC_BREG:
        emit_breg(s->t, op);
        return push_value(s, PUSH_REGISTER, op->value, 0);
    case OPC_DUP: case OPC_DROP: case OPC_OVER: case OPC_PICK: case OPC_SWAP:
    case OPC_ROT:
        return straight_stack_op(s, op);
    default:
        break;
    }
    unsigned need = op->cls == OPC_BINARY ? 2 : 1;
    if (d < need)
        return stop(s, "EH_ELF_E_EXPR");
    slot(a, d - need);
    if (op->cls == OPC_DEREF) {
        emit_deref(s->t, op->value, a);
    } else if (op->cls == OPC_UNARY) {
        emit_unary(s->t, op->code, a);
    } else if (op->cls == OPC_PLUS_UCONST) {
        cg_printf(s->t, "    %s += ", a);
        cg_emit_u64(s->t, op->value);
        cg_puts(s->t, ";\n");
    } else { /* OPC_BINARY */
        emit_binary(s->t, op->code, a, a, slot(b, d - 1));
        s->depth--;
    }
    return true;
}

/* Whether the operations run in a straight line from offset 0: decoding
 * in order meets no skip or bra before the end or a failing opcode. */
static bool is_straight(const struct sem_expr *expr)
{
    uint32_t pos = 0;
    for (unsigned steps = 0; pos < expr->len && steps < CFI_EXPR_STEP_LIMIT;
         steps++) {
        struct op op = decode(expr, pos);
        if (op.cls == OPC_SKIP || op.cls == OPC_BRA)
            return false;
        if (op.cls == OPC_BAD)
            return true;
        pos = op.next;
    }
    return true;
}

static void emit_straight(struct cg_text *t, const struct sem_expr *expr,
                          bool push_cfa)
{
    struct cg_text body = {0};
    struct straight s = {&body, push_cfa, push_cfa};
    if (push_cfa)
        cg_puts(&body, "    s0 = cfa;\n");
    bool running = true;
    uint32_t pos = 0;
    for (unsigned steps = 0; running && pos < expr->len; steps++) {
        if (steps == CFI_EXPR_STEP_LIMIT) {
            running = stop(&s, "EH_ELF_E_STEP_LIMIT");
            break;
        }
        struct op op = decode(expr, pos);
        emit_comment(&body, &op);
        running = straight_op(&s, &op);
        pos = op.next;
    }
    if (running && s.depth == 0)
        cg_puts(&body, "    return EH_ELF_E_EXPR; /* empty stack */\n");
    else if (running)
        cg_printf(&body, "    *result = s%u;\n    return EH_ELF_OK;\n",
                  s.depth - 1);
    cg_puts(t, "    uint64_t v = 0");
    for (unsigned i = 0; i < s.max_depth; i++)
        cg_printf(t, ", s%u = 0", i);
    cg_puts(t, ";\n    int e = EH_ELF_OK;\n"
               "    (void)in; (void)env; (void)f; (void)cfa; (void)result;\n"
               "    (void)v; (void)e;");
    for (unsigned i = 0; i < s.max_depth; i++)
        cg_printf(t, " (void)s%u;", i);
    cg_puts(t, "\n");
    if (body.failed)
        t->failed = true;
    else if (body.data)
        cg_puts(t, body.data);
    cg_text_free(&body);
}

/* ------------------------------------------------------------------ */
/* Expressions with branches: labels and a checked stack                 */
/* ------------------------------------------------------------------ */

/* The operations reachable from offset 0, by offset. */
struct reach {
    struct op *ops;      /* ops[at] valid when reached[at] */
    uint8_t *reached;    /* 1: an operation starts here; 2: also a label */
    bool end_label;      /* some transfer goes to the end */
    size_t count;
};

/* Marks `target` as reached through a jump; false when the machine would
 * fail there (out of range). */
static bool mark(struct reach *r, const struct sem_expr *expr, int64_t target,
                 uint32_t *queue, size_t *queued)
{
    if (target < 0 || target > (int64_t)expr->len)
        return false;
    if (target == (int64_t)expr->len) {
        r->end_label = true;
        return true;
    }
    if (!r->reached[target]) {
        queue[(*queued)++] = (uint32_t)target;
        r->ops[target] = decode(expr, (uint32_t)target);
        r->count++;
    }
    r->reached[target] = 2;
    return true;
}

static bool explore(struct reach *r, const struct sem_expr *expr)
{
    uint32_t *queue = malloc((size_t)expr->len * sizeof *queue);
    if (!queue)
        return false;
    size_t queued = 1, done = 0;
    queue[0] = 0;
    r->ops[0] = decode(expr, 0);
    r->reached[0] = 1;
    r->count = 1;
    while (done < queued && r->count <= MAX_BRANCHING_OPS) {
        const struct op *op = &r->ops[queue[done++]];
        if (op->cls == OPC_BAD)
            continue;
        if (op->cls == OPC_SKIP || op->cls == OPC_BRA)
            mark(r, expr, op->target, queue, &queued);
        if (op->cls != OPC_SKIP)
            mark(r, expr, op->next, queue, &queued);
    }
    free(queue);
    return true;
}

static void emit_transfer(struct cg_text *t, const struct sem_expr *expr,
                          int64_t target)
{
    if (target < 0 || target > (int64_t)expr->len)
        cg_puts(t, "return EH_ELF_E_EXPR; /* outside the expression */\n");
    else if (target == (int64_t)expr->len)
        cg_puts(t, "goto Lend;\n");
    else
        cg_printf(t, "goto L%u;\n", (unsigned)target);
}

/* Stack checks, as the machine makes them before it changes anything. */
static void emit_checks(struct cg_text *t, unsigned need, bool pushes)
{
    if (need)
        cg_printf(t, "    if (sp < %u) return EH_ELF_E_EXPR;\n", need);
    if (pushes)
        cg_puts(t, "    if (sp == EH_ELF_EXPR_STACK_MAX) "
                   "return EH_ELF_E_EXPR_STACK;\n");
}

static void branching_stack_op(struct cg_text *t, const struct op *op)
{
    switch (op->cls) {
    case OPC_DUP:
        emit_checks(t, 1, true);
        cg_puts(t, "    st[sp] = st[sp - 1]; sp++;\n");
        return;
    case OPC_DROP:
        emit_checks(t, 1, false);
        cg_puts(t, "    sp--;\n");
        return;
    case OPC_OVER:
        emit_checks(t, 2, true);
        cg_puts(t, "    st[sp] = st[sp - 2]; sp++;\n");
        return;
    case OPC_PICK:
        emit_checks(t, (unsigned)op->value + 1, true);
        cg_printf(t, "    st[sp] = st[sp - %u]; sp++;\n",
                  (unsigned)op->value + 1);
        return;
    case OPC_SWAP:
        emit_checks(t, 2, false);
        cg_puts(t, "    v = st[sp - 1]; st[sp - 1] = st[sp - 2]; "
                   "st[sp - 2] = v;\n");
        return;
    default: /* OPC_ROT */
        emit_checks(t, 3, false);
        cg_puts(t, "    v = st[sp - 1]; st[sp - 1] = st[sp - 2]; "
                   "st[sp - 2] = st[sp - 3]; st[sp - 3] = v;\n");
    }
}

static void branching_op(struct cg_text *t, const struct sem_expr *expr,
                         const struct op *op)
{
    switch (op->cls) {
    case OPC_BAD:
        cg_puts(t, "    return EH_ELF_E_EXPR;\n");
        return;
    case OPC_PUSH:
        emit_checks(t, 0, true);
        cg_puts(t, "    st[sp++] = ");
        cg_emit_u64(t, op->value);
        cg_puts(t, ";\n");
        break;
    case OPC_BREG:
        emit_breg(t, op);
        emit_checks(t, 0, true);
        cg_puts(t, "    st[sp++] = v + ");
        cg_emit_u64(t, op->value);
        cg_puts(t, ";\n");
        break;
    case OPC_DEREF:
        emit_checks(t, 1, false);
        emit_deref(t, op->value, "st[sp - 1]");
        break;
    case OPC_UNARY:
        emit_checks(t, 1, false);
        emit_unary(t, op->code, "st[sp - 1]");
        break;
    case OPC_BINARY:
        emit_checks(t, 2, false);
        emit_binary(t, op->code, "st[sp - 2]", "st[sp - 2]", "st[sp - 1]");
        cg_puts(t, "    sp--;\n");
        break;
    case OPC_PLUS_UCONST:
        emit_checks(t, 1, false);
        cg_puts(t, "    st[sp - 1] += ");
        cg_emit_u64(t, op->value);
        cg_puts(t, ";\n");
        break;
    case OPC_SKIP:
        cg_puts(t, "    ");
        emit_transfer(t, expr, op->target);
        return;
    case OPC_BRA:
        emit_checks(t, 1, false);
        cg_puts(t, "    if (st[--sp] != 0) ");
        emit_transfer(t, expr, op->target);
        break;
    case OPC_NOP:
        break;
    default:
        branching_stack_op(t, op);
    }
    cg_puts(t, "    ");
    emit_transfer(t, expr, op->next);
}

static void emit_branching(struct cg_text *t, const struct sem_expr *expr,
                           bool push_cfa, const struct reach *r)
{
    cg_puts(t, "    uint64_t st[EH_ELF_EXPR_STACK_MAX], v = 0;\n"
               "    unsigned sp = 0, steps = 0;\n"
               "    int e = EH_ELF_OK;\n"
               "    (void)in; (void)env; (void)f; (void)cfa; (void)result;\n"
               "    (void)st; (void)v; (void)e;\n");
    if (push_cfa)
        cg_puts(t, "    st[sp++] = cfa;\n");
    for (uint32_t at = 0; at < expr->len; at++) {
        if (!r->reached[at])
            continue;
        if (r->reached[at] == 2)
            cg_printf(t, "L%u:\n", (unsigned)at);
        cg_puts(t, "    if (steps++ == EH_ELF_EXPR_STEP_LIMIT) "
                   "return EH_ELF_E_STEP_LIMIT;\n");
        emit_comment(t, &r->ops[at]);
        branching_op(t, expr, &r->ops[at]);
    }
    if (r->end_label)
        cg_puts(t, "Lend:\n"
                   "    if (sp == 0) return EH_ELF_E_EXPR; /* empty stack */\n"
                   "    *result = st[sp - 1];\n"
                   "    return EH_ELF_OK;\n");
}

/* ------------------------------------------------------------------ */
/* The function                                                          */
/* ------------------------------------------------------------------ */

static void emit_function(struct cg_text *t, unsigned unit, size_t number,
                          const struct sem_expr *expr, bool push_cfa)
{
    cg_printf(t, "\nstatic int eh_x%u_%zu(eh_in_t in, eh_env_t env, "
                 "eh_out_t f, uint64_t cfa, uint64_t *result)\n{\n",
              unit, number);
    if (expr->len == 0) {
        cg_puts(t, "    (void)in; (void)env; (void)f; (void)cfa; (void)result;\n");
        if (push_cfa)
            cg_puts(t, "    *result = cfa;\n    return EH_ELF_OK;\n}\n");
        else
            cg_puts(t, "    return EH_ELF_E_EXPR; /* empty stack */\n}\n");
        return;
    }
    if (is_straight(expr)) {
        emit_straight(t, expr, push_cfa);
        cg_puts(t, "}\n");
        return;
    }
    struct reach r = {0};
    r.ops = malloc((size_t)expr->len * sizeof *r.ops);
    r.reached = calloc(expr->len, 1);
    if (!r.ops || !r.reached || !explore(&r, expr))
        t->failed = true;
    else if (r.count > MAX_BRANCHING_OPS)
        cg_puts(t, "    (void)in; (void)env; (void)f; (void)cfa; (void)result;\n"
                   "    return EH_ELF_E_UNSUPPORTED; /* too large */\n");
    else
        emit_branching(t, expr, push_cfa, &r);
    cg_puts(t, "}\n");
    free(r.ops);
    free(r.reached);
}

long cg_emit_expr(struct cg_text *text, struct cg_expr_set *set,
                  const struct sem_expr *expr, bool push_cfa)
{
    struct cg_bytes key = {0};
    uint8_t flag = push_cfa;
    cg_bytes_put(&key, &flag, 1);
    cg_bytes_put(&key, expr->bytes, expr->len);
    bool added = false;
    long number = key.failed ? -1 : cg_intern(&set->keys, key.data, key.len,
                                              &added);
    free(key.data);
    if (number >= 0 && added) {
        emit_function(text, set->unit, (size_t)number, expr, push_cfa);
        set->emitted++;
    }
    return number;
}
