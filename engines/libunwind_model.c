/* SPDX-License-Identifier: MIT */
/* libunwind_model.c — see libunwind_model.h. */
#include "libunwind_model.h"

#include <string.h>

#include <dwarf.h> /* the DW_OP names (DWARF 5 section 7.7.1) */

/* DWARF expressions as dwarf/Gexpr.c evaluates them: cfi.h's rules
 * (operations, stack bound, jumps, errors) plus the quirks selected. */
struct lu_machine {
    const uint8_t *p, *end;
    const uint8_t *begin;
    uint64_t stack[CFI_EXPR_STACK_MAX];
    unsigned depth;
    unsigned steps;
    unsigned quirks;
    const struct cfi_regs *callee;
    struct cfi_memory memory;
    enum cfi_status status;   /* the error, when an operation fails */
    int reg;                  /* CFI_E_REG_UNKNOWN: the register read */
    bool traps;
};

static bool lu_fail(struct lu_machine *m, enum cfi_status status)
{
    m->status = status;
    return false;
}

static bool lu_push(struct lu_machine *m, uint64_t value)
{
    if (m->depth == CFI_EXPR_STACK_MAX)
        return lu_fail(m, CFI_E_EXPR_STACK);
    m->stack[m->depth++] = value;
    return true;
}

static bool lu_pop(struct lu_machine *m, uint64_t *value)
{
    if (m->depth == 0)
        return lu_fail(m, CFI_E_EXPR);
    *value = m->stack[--m->depth];
    return true;
}

static bool lu_fixed(struct lu_machine *m, unsigned size, uint64_t *value)
{
    if ((size_t)(m->end - m->p) < size)
        return lu_fail(m, CFI_E_EXPR);
    *value = cfi_load_le(m->p, size);
    m->p += size;
    return true;
}

static bool lu_leb(struct lu_machine *m, bool is_signed, uint64_t *value)
{
    *value = 0;
    for (unsigned shift = 0; m->p < m->end; shift += 7) {
        uint8_t byte = *m->p++;
        if (shift < 64)
            *value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            if (is_signed && shift + 7 < 64 && (byte & 0x40))
                *value |= ~(uint64_t)0 << (shift + 7);
            return true;
        }
    }
    return lu_fail(m, CFI_E_EXPR);
}

/* `size` bytes at `addr`, zero-extended: cfi.h reads 1, 2, 4 or 8 bytes
 * at once, other sizes byte by byte; libunwind's remote reads take each
 * byte from the aligned word that holds it. */
static bool lu_read(struct lu_machine *m, uint64_t addr, unsigned size,
                    uint64_t *value)
{
    struct cfi_memory mem = m->memory;
    *value = 0;
    if (m->quirks & ENGINE_LU_WORD_READS) {
        for (unsigned i = 0; i < size; i++) {
            uint64_t at = addr + i, word;
            if (mem.read(mem.env, at & ~(uint64_t)7, 8, &word) != CFI_OK)
                return lu_fail(m, CFI_E_MEMORY);
            *value |= ((word >> (8 * (at & 7))) & 0xff) << (8 * i);
        }
        return true;
    }
    if (size == 1 || size == 2 || size == 4 || size == 8)
        return mem.read(mem.env, addr, size, value) == CFI_OK ||
               lu_fail(m, CFI_E_MEMORY);
    for (unsigned i = 0; i < size; i++) {
        uint64_t byte;
        if (mem.read(mem.env, addr + i, 1, &byte) != CFI_OK)
            return lu_fail(m, CFI_E_MEMORY);
        *value |= byte << (8 * i);
    }
    return true;
}

static bool lu_deref_size(struct lu_machine *m, uint64_t size)
{
    uint64_t addr, value;
    if (!lu_pop(m, &addr))
        return false;
    if (size == 0 || size > 8)
        return lu_fail(m, CFI_E_EXPR);
    bool quirk = m->quirks & ENGINE_LU_DEREF_SIZE;
    unsigned read = !quirk || size == 1 || size == 2 ? (unsigned)size
                  : size <= 4 ? 4 : 8;
    if (!lu_read(m, addr, read, &value))
        return false;
    if (quirk && size == 3)
        value &= 0xffffff;
    else if (quirk && size > 4 && size < 8)
        value &= ~(uint64_t)0 << (8 * size);
    return lu_push(m, value);
}

static bool lu_register(struct lu_machine *m, uint64_t reg, uint64_t *value)
{
    if (reg >= CFI_NREGS)
        return lu_fail(m, CFI_E_EXPR);
    if (m->callee->status[reg] != CFI_REG_VALUE) {
        m->reg = (int)reg;
        return lu_fail(m, CFI_E_REG_UNKNOWN);
    }
    *value = m->callee->value[reg];
    return true;
}

static uint64_t lu_shift(const struct lu_machine *m, uint8_t op, uint64_t a,
                         uint64_t count)
{
    if (m->quirks & ENGINE_LU_SHIFT_COUNT)
        count &= 63;
    if (op == DW_OP_shra)
        return count >= 64 ? ((int64_t)a < 0 ? UINT64_MAX : 0)
                           : (uint64_t)((int64_t)a >> count);
    if (count >= 64)
        return 0;
    return op == DW_OP_shl ? a << count : a >> count;
}

/* DW_OP_div and DW_OP_mod: b is the divisor, on top. */
static bool lu_divide(struct lu_machine *m, uint8_t op, uint64_t a,
                      uint64_t b)
{
    if (b == 0)
        return (m->quirks & ENGINE_LU_DIV_BY_ZERO) ? lu_push(m, 0)
                                                 : lu_fail(m, CFI_E_EXPR);
    if (op == DW_OP_mod)
        return lu_push(m, a % b);
    if ((int64_t)a == INT64_MIN && (int64_t)b == -1) {
        if (m->quirks & ENGINE_LU_DIV_TRAP) {
            m->traps = true;
            return lu_fail(m, CFI_E_UNSUPPORTED);
        }
        return lu_push(m, a);
    }
    return lu_push(m, (uint64_t)((int64_t)a / (int64_t)b));
}

/* The binary operations: a (second) op b (top). */
static bool lu_binary(struct lu_machine *m, uint8_t op)
{
    uint64_t a, b;
    if (!lu_pop(m, &b) || !lu_pop(m, &a))
        return false;
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (op) {
    case DW_OP_and: return lu_push(m, a & b);
    case DW_OP_div: case DW_OP_mod: return lu_divide(m, op, a, b);
    case DW_OP_minus: return lu_push(m, a - b);
    case DW_OP_mul: return lu_push(m, a * b);
    case DW_OP_or: return lu_push(m, a | b);
    case DW_OP_plus: return lu_push(m, a + b);
    case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
        return lu_push(m, lu_shift(m, op, a, b));
    case DW_OP_xor: return lu_push(m, a ^ b);
    case DW_OP_eq: return lu_push(m, sa == sb);
    case DW_OP_ge: return lu_push(m, sa >= sb);
    case DW_OP_gt: return lu_push(m, sa > sb);
    case DW_OP_le: return lu_push(m, sa <= sb);
    case DW_OP_lt: return lu_push(m, sa < sb);
    default: return lu_push(m, sa != sb); /* DW_OP_ne */
    }
}

static bool lu_is_binary(uint8_t op)
{
    return op == DW_OP_and || op == DW_OP_div || op == DW_OP_minus ||
           op == DW_OP_mod || op == DW_OP_mul || op == DW_OP_or ||
           op == DW_OP_plus || (op >= DW_OP_shl && op <= DW_OP_xor) ||
           (op >= DW_OP_eq && op <= DW_OP_ne);
}

/* dup, drop, over, pick, swap, rot. */
static bool lu_stack_op(struct lu_machine *m, uint8_t op, uint64_t index)
{
    uint64_t a, b, c;
    switch (op) {
    case DW_OP_dup:
        index = 0;
        /* fall through */
    case DW_OP_over: case DW_OP_pick:
        if (op == DW_OP_over)
            index = 1;
        if (index >= m->depth)
            return lu_fail(m, CFI_E_EXPR);
        return lu_push(m, m->stack[m->depth - 1 - index]);
    case DW_OP_drop:
        return lu_pop(m, &a);
    case DW_OP_swap:
        return lu_pop(m, &b) && lu_pop(m, &a) && lu_push(m, b) &&
               lu_push(m, a);
    default: /* DW_OP_rot: a b c (c on top) becomes c a b */
        return lu_pop(m, &c) && lu_pop(m, &b) && lu_pop(m, &a) &&
               lu_push(m, c) && lu_push(m, a) && lu_push(m, b);
    }
}

/* DW_OP_skip and DW_OP_bra: a jump from the end of the operand. */
static bool lu_jump(struct lu_machine *m, uint64_t operand)
{
    int64_t target = (m->p - m->begin) + (int16_t)operand;
    if (target < 0 || target > m->end - m->begin)
        return lu_fail(m, CFI_E_EXPR);
    m->p = m->begin + target;
    return true;
}

/* Operations with an operand, and those that read registers or memory. */
static bool lu_operand_op(struct lu_machine *m, uint8_t op)
{
    static const uint8_t fixed[256] = {
        [DW_OP_addr] = 8,    [DW_OP_const1u] = 1, [DW_OP_const1s] = 1,
        [DW_OP_const2u] = 2, [DW_OP_const2s] = 2, [DW_OP_const4u] = 4,
        [DW_OP_const4s] = 4, [DW_OP_const8u] = 8, [DW_OP_const8s] = 8,
        [DW_OP_pick] = 1,
        [DW_OP_bra] = 2, [DW_OP_skip] = 2, [DW_OP_deref_size] = 1};
    uint64_t operand = 0, offset, value;
    if (fixed[op] && !lu_fixed(m, fixed[op], &operand))
        return false;
    if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
        return lu_leb(m, true, &offset) &&
               lu_register(m, op - DW_OP_breg0, &value) &&
               lu_push(m, value + offset);
    switch (op) {
    case DW_OP_addr: case DW_OP_const1u: case DW_OP_const2u:
    case DW_OP_const4u: case DW_OP_const8u: case DW_OP_const8s:
        return lu_push(m, operand);   /* addr, const1u .. const8s */
    case DW_OP_const1s: return lu_push(m, (uint64_t)(int64_t)(int8_t)operand);
    case DW_OP_const2s: return lu_push(m, (uint64_t)(int64_t)(int16_t)operand);
    case DW_OP_const4s: return lu_push(m, (uint64_t)(int64_t)(int32_t)operand);
    case DW_OP_constu:
        return lu_leb(m, false, &operand) && lu_push(m, operand);
    case DW_OP_consts:
        return lu_leb(m, true, &operand) && lu_push(m, operand);
    case DW_OP_plus_uconst:
        return lu_leb(m, false, &operand) && lu_pop(m, &value) &&
               lu_push(m, value + operand);
    case DW_OP_bregx:
        return lu_leb(m, false, &operand) && lu_leb(m, true, &offset) &&
               lu_register(m, operand, &value) && lu_push(m, value + offset);
    case DW_OP_deref:
        return lu_pop(m, &value) && lu_read(m, value, 8, &value) &&
               lu_push(m, value);
    case DW_OP_deref_size: return lu_deref_size(m, operand);
    case DW_OP_pick: return lu_stack_op(m, op, operand);
    case DW_OP_skip: return lu_jump(m, operand);
    case DW_OP_bra:
        return lu_pop(m, &value) && (value == 0 || lu_jump(m, operand));
    default:
        return lu_fail(m, CFI_E_EXPR); /* not allowed in CFI (cfi.h) */
    }
}

static bool lu_step(struct lu_machine *m)
{
    uint8_t op = *m->p++;
    uint64_t a;
    if (op >= DW_OP_lit0 && op <= DW_OP_lit31)
        return lu_push(m, op - DW_OP_lit0);
    if (lu_is_binary(op))
        return lu_binary(m, op);
    switch (op) {
    case DW_OP_dup: case DW_OP_drop: case DW_OP_over: case DW_OP_swap:
    case DW_OP_rot:
        return lu_stack_op(m, op, 0);
    case DW_OP_abs:
        return lu_pop(m, &a) && lu_push(m, (int64_t)a < 0 ? -a : a);
    case DW_OP_neg: return lu_pop(m, &a) && lu_push(m, -a);
    case DW_OP_not: return lu_pop(m, &a) && lu_push(m, ~a);
    case DW_OP_nop: return true;
    default: return lu_operand_op(m, op);
    }
}

/* Evaluates `expr`, `initial` pushed first when has_initial. */
static bool lu_eval(const struct sem_expr *expr, bool has_initial,
                    uint64_t initial, const struct cfi_request *request,
                    unsigned quirks, struct lu_machine *m, uint64_t *result)
{
    memset(m, 0, sizeof *m);
    m->begin = m->p = expr->bytes;
    m->end = expr->bytes + expr->len;
    m->quirks = quirks;
    m->callee = request->callee;
    m->memory = request->memory;
    m->reg = -1;
    if (has_initial && !lu_push(m, initial))
        return false;
    while (m->p < m->end) {
        if (++m->steps > CFI_EXPR_STEP_LIMIT)
            return lu_fail(m, CFI_E_STEP_LIMIT);
        if (!lu_step(m))
            return false;
    }
    return lu_pop(m, result);
}

/* The model's frame fails with `status` (reg for CFI_E_REG_UNKNOWN). */
static void model_fail(struct cfi_frame *frame, enum cfi_status status,
                       int reg)
{
    frame->status = status;
    frame->diag = (struct cfi_diag){status, "libunwind model", CFI_NO_OFFSET,
                                    reg};
}

static bool model_cfa(const struct sem_row *row,
                      const struct cfi_request *request, unsigned quirks,
                      struct cfi_frame *frame, bool *traps)
{
    const struct sem_cfa *cfa = &row->cfa;
    const struct cfi_regs *callee = request->callee;
    if (cfa->kind == SEM_CFA_RULE_REG_OFFSET) {
        if (cfa->reg >= CFI_NREGS ||
            callee->status[cfa->reg] != CFI_REG_VALUE) {
            model_fail(frame, CFI_E_REG_UNKNOWN, (int)cfa->reg);
            return false;
        }
        frame->cfa = callee->value[cfa->reg] + (uint64_t)cfa->offset;
        return true;
    }
    if (cfa->kind != SEM_CFA_RULE_EXPR) {
        model_fail(frame, CFI_E_MALFORMED, -1);
        return false;
    }
    struct lu_machine m;
    if (lu_eval(&cfa->expr, quirks & ENGINE_LU_CFA_ZERO_PUSHED, 0, request,
                quirks, &m, &frame->cfa))
        return true;
    *traps = m.traps;
    model_fail(frame, m.status, m.reg);
    return false;
}

/* Where a caller register is found: at an address, as a value, in a
 * callee register, or nowhere (undefined). */
enum lu_where { LU_NOWHERE, LU_ADDRESS, LU_VALUE, LU_CALLEE };

struct lu_location {
    enum lu_where where;
    uint64_t at;    /* the address, the value, or the callee register */
};

/* The location of a register with no rule. */
static struct lu_location model_default(unsigned reg, uint64_t cfa,
                                        unsigned quirks)
{
    if (reg == CFI_REG_RSP)
        return (quirks & ENGINE_LU_RSP_IS_CFA)
            ? (struct lu_location){LU_CALLEE, reg}
            : (struct lu_location){LU_VALUE, cfa};
    /* libunwind's x86_64 back end, which this models: the psABI's. */
    if ((quirks & ENGINE_LU_NO_RULE_SAME) ||
        cfi_arch_default(&cfi_arch_x86_64, reg) == CFI_DEFAULT_SAME_VALUE)
        return (struct lu_location){LU_CALLEE, reg};
    return (struct lu_location){LU_NOWHERE, 0};
}

/* The location of register `reg` (0..16) after apply_reg_state, given
 * those of the registers below it: false when evaluating its expression
 * fails (the frame says why). */
static bool model_location(const struct sem_row *row, unsigned reg,
                           const struct cfi_request *request, unsigned quirks,
                           struct cfi_frame *frame, bool *traps,
                           struct lu_location *locs)
{
    struct sem_rule rule = sem_row_rule(row, reg);
    struct lu_location *loc = &locs[reg];
    struct lu_machine m;
    uint64_t value;
    switch (rule.kind) {
    case SEM_RULE_UNSPECIFIED:
        *loc = model_default(reg, frame->cfa, quirks);
        return true;
    case SEM_RULE_SAME_VALUE:
        *loc = (struct lu_location){LU_CALLEE, reg};
        return true;
    case SEM_RULE_UNDEFINED:
        *loc = (struct lu_location){LU_NOWHERE, 0};
        return true;
    case SEM_RULE_REGISTER:
        /* m's new location is the callee's m unless m has a rule. */
        if ((quirks & ENGINE_LU_REGISTER_NEW_LOCATION) && rule.reg < reg &&
            sem_row_rule(row, rule.reg).kind != SEM_RULE_UNSPECIFIED &&
            sem_row_rule(row, rule.reg).kind != SEM_RULE_SAME_VALUE)
            *loc = locs[rule.reg];
        else
            *loc = (struct lu_location){LU_CALLEE, rule.reg};
        return true;
    case SEM_RULE_OFFSET:
        *loc = (struct lu_location){LU_ADDRESS,
                                    frame->cfa + (uint64_t)rule.offset};
        break;
    case SEM_RULE_EXPRESSION: case SEM_RULE_VAL_EXPRESSION:
        if (!lu_eval(&rule.expr, true, frame->cfa, request, quirks, &m,
                     &value)) {
            *traps = m.traps;
            model_fail(frame, m.status, m.reg);
            return false;
        }
        *loc = (struct lu_location){
            rule.kind == SEM_RULE_EXPRESSION ? LU_ADDRESS : LU_VALUE, value};
        break;
    default: /* val_offset: libunwind has no case for it */
        model_fail(frame, CFI_E_UNSUPPORTED, -1);
        return false;
    }
    if (loc->where == LU_ADDRESS && loc->at == 0 &&
        (quirks & ENGINE_LU_NULL_ADDRESS))
        loc->where = LU_NOWHERE;
    return true;
}

/* Caller register `reg` read from `loc` (rsp is the CFA when
 * ENGINE_LU_RSP_IS_CFA, its location unread). False on a memory fault, or
 * for the IP (`is_ip`) an unknown callee register when
 * ENGINE_LU_IP_NEEDS_VALUE; the frame says which. */
static bool model_read(const struct lu_location *loc, unsigned reg,
                       bool is_ip, const struct cfi_request *request,
                       unsigned quirks, struct cfi_frame *frame)
{
    struct cfi_regs *caller = &frame->caller;
    uint64_t value;
    if (reg == CFI_REG_RSP && !is_ip && (quirks & ENGINE_LU_RSP_IS_CFA)) {
        cfi_regs_set(caller, reg, frame->cfa);
        return true;
    }
    switch (loc->where) {
    case LU_NOWHERE:
        caller->status[reg] = CFI_REG_UNDEFINED;
        return true;
    case LU_VALUE:
        cfi_regs_set(caller, reg, loc->at);
        return true;
    case LU_CALLEE:
        if (is_ip && (quirks & ENGINE_LU_IP_NEEDS_VALUE) &&
            request->callee->status[loc->at] != CFI_REG_VALUE) {
            model_fail(frame, CFI_E_REG_UNKNOWN, (int)loc->at);
            return false;
        }
        caller->status[reg] = request->callee->status[loc->at];
        caller->value[reg] = request->callee->value[loc->at];
        return true;
    default:
        if (request->memory.read(request->memory.env, loc->at, 8, &value) !=
            CFI_OK) {
            model_fail(frame, CFI_E_MEMORY, (int)reg);
            return false;
        }
        cfi_regs_set(caller, reg, value);
        return true;
    }
}

/* The caller's rip: the return address column's location, read as the
 * IP (ENGINE_LU_RIP_IS_IP: column 16's own location is then not read when
 * the column is another), or cfi.h's step 6 over the values read. */
static bool model_rip(const struct lu_location *locs, unsigned ra,
                      const struct cfi_request *request, unsigned quirks,
                      struct cfi_frame *frame)
{
    if (quirks & ENGINE_LU_RIP_IS_IP)
        return model_read(&locs[ra], CFI_REG_RIP, true, request, quirks,
                          frame);
    struct cfi_regs *caller = &frame->caller;
    if (ra != CFI_REG_RIP) {
        caller->status[CFI_REG_RIP] = caller->status[ra];
        caller->value[CFI_REG_RIP] = caller->value[ra];
    }
    return true;
}

void engine_libunwind_model(const struct sem_row *row, unsigned ra_column,
                            const struct cfi_request *request, unsigned quirks,
                            struct cfi_frame *frame, bool *traps)
{
    memset(frame, 0, sizeof *frame);
    memset(frame->caller.status, CFI_REG_UNDEFINED,
           sizeof frame->caller.status);
    *traps = false;
    unsigned ra = ra_column < ENGINE_LU_NREGS ? ra_column : CFI_REG_RIP;
    bool first = quirks & ENGINE_LU_EXPRESSIONS_FIRST;
    bool ip = quirks & ENGINE_LU_RIP_IS_IP;
    if (!model_cfa(row, request, quirks, frame, traps))
        return;
    struct lu_location locs[ENGINE_LU_NREGS];
    /* cfi.h: each register in turn, its rule to its end; libunwind
     * (ENGINE_LU_EXPRESSIONS_FIRST): every location, then the IP, then
     * the registers read back. */
    for (unsigned reg = 0; reg < ENGINE_LU_NREGS; reg++) {
        if (!model_location(row, reg, request, quirks, frame, traps, locs))
            return;
        if (first || (ip && reg == CFI_REG_RIP && ra != CFI_REG_RIP))
            continue;
        if (!model_read(&locs[reg], reg, ip && reg == CFI_REG_RIP, request,
                        quirks, frame))
            return;
    }
    if (ip && (first || ra != CFI_REG_RIP) &&
        !model_rip(locs, ra, request, quirks, frame))
        return;
    for (unsigned reg = 0; first && reg < ENGINE_LU_NREGS; reg++)
        if (!(ip && reg == CFI_REG_RIP) &&
            !model_read(&locs[reg], reg, false, request, quirks, frame))
            return;
    if (!ip)
        model_rip(locs, ra, request, quirks, frame);
    if ((quirks & ENGINE_LU_UNDEFINED_RBP_ENDS) &&
        locs[CFI_REG_RBP].where == LU_NOWHERE)
        frame->caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    frame->status = CFI_OK;
}

