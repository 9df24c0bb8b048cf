/* SPDX-License-Identifier: MIT */
/* transfer.c — the abstract state: what one instruction does to it, and
 * the merge at a join point. */
#include "analyse.h"

int synth_aux_find(const struct synth_state *s, int reg)
{
    for (int i = 0; i < s->naux; i++)
        if (s->aux_reg[i] == reg)
            return i;
    return -1;
}

static void aux_drop(struct synth_state *s, int i)
{
    for (int j = i; j + 1 < s->naux; j++) {
        s->aux_reg[j] = s->aux_reg[j + 1];
        s->aux_a[j] = s->aux_a[j + 1];
    }
    s->naux--;
}

/* reg := CFA - a. There is room for every register but rsp and rbp;
 * were there not, the oldest entry would go. */
static void aux_set(struct synth_state *s, int reg, int64_t a)
{
    int i = synth_aux_find(s, reg);
    if (i >= 0)
        aux_drop(s, i);
    if (s->naux == SYNTH_NAUX)
        aux_drop(s, 0);
    s->aux_reg[s->naux] = (int8_t)reg;
    s->aux_a[s->naux++] = a;
}

static void rsp_unknown(struct synth_state *s, enum synth_reason reason)
{
    s->rsp_known = false;
    s->rsp_reason = reason;
}

/* A write of 8 bytes at CFA+addr: a slot that held a value no longer does,
 * unless it is the slot of `keep`. */
static void overwrite_slot(struct synth_state *s, int64_t addr, int keep)
{
    for (int k = 0; k < SYNTH_MAX_SAVED; k++)
        if (k != keep && s->regs[k].slot_valid && s->regs[k].slot == addr)
            s->regs[k].slot_valid = false;
}

/* Register k stored at CFA+addr. */
static void store(struct synth_state *s, int k, int64_t addr)
{
    overwrite_slot(s, addr, k);
    if (k < 0)
        return;
    struct synth_reg_state *r = &s->regs[k];
    if (r->in_reg && !r->slot_valid) {
        r->slot_valid = true;
        r->slot = addr;
        r->saved = true;
        r->restored = false;
    } else if (r->slot_valid && r->slot == addr && !r->in_reg) {
        r->slot_valid = false; /* another value stored over the saved one */
    }
}

/* Register k loaded from CFA+addr (known) or from anywhere else. */
static void load(struct synth_state *s, int k, bool known, int64_t addr)
{
    if (k < 0)
        return;
    struct synth_reg_state *r = &s->regs[k];
    if (known && r->slot_valid && r->slot == addr) {
        r->in_reg = true;
        r->restored = true;
    } else {
        r->in_reg = false;
    }
}

static void push(const struct synth_machine *m, struct synth_state *s,
                 int reg, int64_t size)
{
    if (!s->rsp_known)
        return;
    s->h += size;
    store(s, synth_saved_index(m, reg), -s->h);
}

static void pop(const struct synth_machine *m, struct synth_state *s,
                int reg, int64_t size)
{
    load(s, synth_saved_index(m, reg), s->rsp_known, -s->h);
    if (s->rsp_known)
        s->h -= size;
    if (reg == (int)m->fp)
        s->rbp_known = false;
    if (reg == (int)m->sp)
        rsp_unknown(s, SYNTH_REASON_RSP_UNKNOWN);
}

/* The CFA-relative address of [base+disp], when known. */
static bool frame_address(const struct synth_machine *m,
                          const struct synth_state *s, int base,
                          int64_t disp, int64_t *addr)
{
    if (base == (int)m->sp && s->rsp_known) {
        *addr = disp - s->h;
        return true;
    }
    if (base == (int)m->fp && s->rbp_known) {
        *addr = disp - s->f;
        return true;
    }
    int i = synth_aux_find(s, base);
    if (i >= 0) {
        *addr = disp - s->aux_a[i];
        return true;
    }
    return false;
}

/* rsp = reg + off. */
static void rsp_from(const struct synth_machine *m, struct synth_state *s,
                     int reg, int64_t off)
{
    if (reg == (int)m->fp && s->rbp_known) {
        s->rsp_known = true;
        s->h = s->f - off;
    } else if (synth_aux_find(s, reg) >= 0) {
        s->rsp_known = true;
        s->h = s->aux_a[synth_aux_find(s, reg)] - off;
    } else {
        rsp_unknown(s, SYNTH_REASON_RSP_UNKNOWN);
    }
}

/* Writes the instruction makes to callee-saved registers other than the
 * ones its own rule handled: the caller's value is gone from them. */
static void clobber(const struct synth_machine *m, struct synth_state *s,
                    const struct synth_insn *in)
{
    struct synth_insn w = *in; /* its writes, less the rule's own */
    bool moves = in->op == SYNTH_OP_POP || in->op == SYNTH_OP_LOAD ||
                 in->op == SYNTH_OP_LEAVE;
    if (moves && in->reg >= 0 && in->reg < 32)
        w.writes &= ~(1u << in->reg);
    if (moves && in->reg >= 64 && in->reg < 96)
        w.vwrites &= ~(1u << (in->reg - 64));
    if (in->op == SYNTH_OP_LOAD && in->reg2 >= 0 && in->reg2 < 32)
        w.writes &= ~(1u << in->reg2);
    if (in->op == SYNTH_OP_LOAD && in->reg2 >= 64 && in->reg2 < 96)
        w.vwrites &= ~(1u << (in->reg2 - 64));
    if (in->op == SYNTH_OP_LEAVE)
        w.writes &= ~(1u << m->fp);
    if (in->wb != SYNTH_WB_NONE && in->base >= 0 && in->base < 32)
        w.writes &= ~(1u << in->base); /* writeback: memory_move's */
    for (int k = 0; k < m->nsaved; k++)
        if (synth_insn_writes(&w, m->saved[k]))
            s->regs[k].in_reg = false;
    bool sets_rbp = in->op == SYNTH_OP_RBP_FROM_RSP ||
                    in->op == SYNTH_OP_RBP_FROM_REG || in->op == SYNTH_OP_ENTER;
    if (synth_insn_writes(&w, (int)m->fp) && !sets_rbp)
        s->rbp_known = false;
    struct synth_insn all = *in; /* every write but a writeback's */
    if (in->wb != SYNTH_WB_NONE && in->base >= 0 && in->base < 32)
        all.writes &= ~(1u << in->base);
    for (int i = s->naux - 1; i >= 0; i--)
        if (synth_insn_writes(&all, s->aux_reg[i]))
            aux_drop(s, i); /* REG_FROM_RSP sets it again after */
    if (synth_insn_writes(&w, (int)m->sp) && in->op == SYNTH_OP_OTHER)
        rsp_unknown(s, SYNTH_REASON_RSP_UNKNOWN);
}

/* A call may change every register the ABI does not preserve (System V:
 * rax rdx rcx rsi rdi r8-r11): none of them holds a CFA offset after it.
 * The callee-saved ones and the stack pointer keep their values and
 * their states. */
static void call(const struct synth_machine *m, struct synth_state *s)
{
    const uint64_t preserved =
        m->arch->callee_saved | (uint64_t)1 << m->sp;
    for (int i = s->naux - 1; i >= 0; i--)
        if (!((preserved >> s->aux_reg[i]) & 1))
            aux_drop(s, i);
}

static void enter(const struct synth_machine *m, struct synth_state *s,
                  const struct synth_insn *in)
{
    push(m, s, (int)m->fp, 8);
    s->rbp_known = s->rsp_known;
    s->f = s->h;
    if (in->imm2 != 0)
        rsp_unknown(s, SYNTH_REASON_RSP_UNKNOWN);
    else if (s->rsp_known)
        s->h += in->imm;
}

/* The base register of a writeback moves by `by`: sp's height, the
 * frame pointer's offset or an auxiliary register's follow it. */
static void move_base(const struct synth_machine *m, struct synth_state *s,
                      int base, int64_t by)
{
    int i = synth_aux_find(s, base);
    if (base == (int)m->sp && s->rsp_known)
        s->h -= by;
    else if (base == (int)m->fp && s->rbp_known)
        s->f -= by;
    else if (i >= 0)
        s->aux_a[i] -= by;
    else if (base == (int)m->fp)
        s->rbp_known = false;
}

/* One register of a store or a load at CFA+addr (known). */
static void move_one(const struct synth_machine *m, struct synth_state *s,
                     const struct synth_insn *in, int reg, bool known,
                     int64_t addr)
{
    int k = synth_saved_index(m, reg);
    if (in->op == SYNTH_OP_STORE) {
        if (known)
            store(s, k, addr);
    } else {
        load(s, k, known, addr);
        if (reg == (int)m->fp)
            s->rbp_known = false;
        if (reg == (int)m->sp)
            rsp_unknown(s, SYNTH_REASON_RSP_UNKNOWN);
    }
}

static void memory_move(const struct synth_machine *m, struct synth_state *s,
                        const struct synth_insn *in)
{
    int64_t addr = 0, disp = in->disp;
    if (in->wb == SYNTH_WB_PRE) {
        move_base(m, s, in->base, in->disp);
        disp = 0;
    }
    bool known = frame_address(m, s, in->base, disp, &addr);
    move_one(m, s, in, in->reg, known, addr);
    if (in->has_pair)
        move_one(m, s, in, in->reg2, known, addr + in->pair);
    if (in->wb == SYNTH_WB_POST && in->base != in->reg &&
        (!in->has_pair || in->base != in->reg2))
        move_base(m, s, in->base, in->wb_imm);
}

/* paciasp, pacibsp: the return address in x30 is signed; autiasp,
 * autibsp: it is not. */
static void ra_sign(struct synth_state *s, const struct synth_insn *in)
{
    if (in->op == SYNTH_OP_RA_SIGN)
        s->ra_sign = in->imm ? SYNTH_RA_SIGNED_B : SYNTH_RA_SIGNED_A;
    else
        s->ra_sign = SYNTH_RA_NOT_SIGNED;
}

void synth_transfer(const struct synth_machine *m, struct synth_state *s,
                    const struct synth_insn *in)
{
    clobber(m, s, in);
    switch (in->op) {
    case SYNTH_OP_PUSH: push(m, s, in->reg, in->imm); break;
    case SYNTH_OP_POP: pop(m, s, in->reg, in->imm); break;
    case SYNTH_OP_ADD_RSP:
        if (s->rsp_known)
            s->h -= in->imm;
        break;
    case SYNTH_OP_RSP_FROM_REG: rsp_from(m, s, in->base, in->imm); break;
    case SYNTH_OP_RSP_UNKNOWN: rsp_unknown(s, SYNTH_REASON_RSP_UNKNOWN); break;
    case SYNTH_OP_AND_RSP: rsp_unknown(s, SYNTH_REASON_REALIGNED); break;
    case SYNTH_OP_RBP_FROM_RSP:
        s->rbp_known = s->rsp_known;
        s->f = s->h - in->imm;
        break;
    case SYNTH_OP_RBP_FROM_REG:
        s->rbp_known = synth_aux_find(s, in->base) >= 0;
        if (s->rbp_known)
            s->f = s->aux_a[synth_aux_find(s, in->base)] - in->imm;
        break;
    case SYNTH_OP_REG_FROM_RSP:
        if (s->rsp_known && in->dst >= 0)
            aux_set(s, in->dst, s->h - in->imm);
        break;
    case SYNTH_OP_LEAVE:
        rsp_from(m, s, (int)m->fp, 0);
        pop(m, s, (int)m->fp, 8);
        break;
    case SYNTH_OP_ENTER: enter(m, s, in); break;
    case SYNTH_OP_STORE: case SYNTH_OP_LOAD: memory_move(m, s, in); break;
    case SYNTH_OP_CALL: call(m, s); break;
    case SYNTH_OP_RA_SIGN: case SYNTH_OP_RA_AUTH: ra_sign(s, in); break;
    case SYNTH_OP_CLONE: rsp_unknown(s, SYNTH_REASON_NEW_STACK); break;
    case SYNTH_OP_SYSCALL:
    case SYNTH_OP_OTHER: case SYNTH_OP_RET:
    case SYNTH_OP_JMP: case SYNTH_OP_JMP_INDIRECT: case SYNTH_OP_JCC:
    case SYNTH_OP_STOP: case SYNTH_OP_PADDING:
        break;
    default:
        break; /* every op is listed above */
    }
}

static struct synth_reg_state merge_reg(struct synth_reg_state a,
                                        struct synth_reg_state b,
                                        bool *conflict)
{
    struct synth_reg_state m = a;
    m.in_reg = a.in_reg && b.in_reg;
    m.slot_valid = a.slot_valid && b.slot_valid && a.slot == b.slot;
    m.saved = a.saved || b.saved;
    m.restored = a.restored || b.restored;
    if (!m.in_reg && !m.slot_valid &&
        (a.in_reg || a.slot_valid || b.in_reg || b.slot_valid))
        *conflict = true;
    return m;
}

/* a := a ⊔ b. */
static void join(struct synth_state *a, const struct synth_state *b)
{
    if (a->rsp_known && b->rsp_known && a->h != b->h)
        rsp_unknown(a, SYNTH_REASON_JOIN_CONFLICT);
    else if (a->rsp_known && !b->rsp_known)
        rsp_unknown(a, b->rsp_reason);
    if (!b->rbp_known || (a->rbp_known && a->f != b->f))
        a->rbp_known = false;
    for (int i = a->naux - 1; i >= 0; i--) {
        int j = synth_aux_find(b, a->aux_reg[i]);
        if (j < 0 || b->aux_a[j] != a->aux_a[i])
            aux_drop(a, i);
    }
    a->regs_conflict = a->regs_conflict || b->regs_conflict;
    if (a->ra_sign != b->ra_sign)
        a->ra_sign = SYNTH_RA_CONFLICT;
    for (int k = 0; k < SYNTH_MAX_SAVED; k++)
        a->regs[k] = merge_reg(a->regs[k], b->regs[k], &a->regs_conflict);
    a->weak = a->weak && b->weak;
}

/* Whether the join of a and b loses a register: one has it only in the
 * register, the other only in its slot (or in another slot). */
static bool regs_conflicting(const struct synth_state *a,
                             const struct synth_state *b)
{
    for (int k = 0; k < SYNTH_MAX_SAVED; k++) {
        bool conflict = false;
        merge_reg(a->regs[k], b->regs[k], &conflict);
        if (conflict)
            return true;
    }
    return false;
}

static bool conflicting(const struct synth_state *a,
                        const struct synth_state *b)
{
    return a->rsp_known != b->rsp_known ||
           (a->rsp_known && a->h != b->h) || regs_conflicting(a, b);
}

static bool state_equal(const struct synth_state *a,
                        const struct synth_state *b)
{
    if (a->weak != b->weak || a->rsp_known != b->rsp_known ||
        a->rbp_known != b->rbp_known || a->regs_conflict != b->regs_conflict ||
        (a->rsp_known && a->h != b->h) || (a->rbp_known && a->f != b->f) ||
        a->naux != b->naux || a->ra_sign != b->ra_sign ||
        (!a->rsp_known && a->rsp_reason != b->rsp_reason))
        return false;
    for (int i = 0; i < a->naux; i++)
        if (a->aux_reg[i] != b->aux_reg[i] || a->aux_a[i] != b->aux_a[i])
            return false;
    for (int k = 0; k < SYNTH_MAX_SAVED; k++) {
        const struct synth_reg_state *x = &a->regs[k], *y = &b->regs[k];
        if (x->in_reg != y->in_reg || x->slot_valid != y->slot_valid ||
            x->saved != y->saved || x->restored != y->restored ||
            (x->slot_valid && x->slot != y->slot))
            return false;
    }
    return true;
}

bool synth_merge(struct synth_state *into, const struct synth_state *in,
                 long *lost_call)
{
    if (!into->reached) {
        *into = *in;
        into->reached = true;
        return true;
    }
    /* A call's fall-through loses to a jump when they disagree (on the
     * height, or on where a register is): the call is then taken not to
     * return. */
    if (conflicting(into, in) && into->weak != in->weak) {
        *lost_call = (long)(in->weak ? in->weak_call : into->weak_call);
        if (in->weak)
            return false;
        *into = *in;
        into->reached = true;
        return true;
    }
    struct synth_state old = *into;
    join(into, in);
    return !state_equal(&old, into);
}
