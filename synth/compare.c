/* SPDX-License-Identifier: MIT */
/* compare.c — the synthesised state against the IL at every instruction,
 * each disagreement classified, and runs of equal classifications
 * coalesced into address ranges. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse.h"

static const char *const reason_texts[] = {
#define SYNTH_REASON_TEXT(name, id, text) text,
    SYNTH_REASONS(SYNTH_REASON_TEXT)
#undef SYNTH_REASON_TEXT
};
static const char *const reason_names[] = {
#define SYNTH_REASON_NAME(name, id, text) #id,
    SYNTH_REASONS(SYNTH_REASON_NAME)
#undef SYNTH_REASON_NAME
};
static const char *const kind_texts[] = {
#define SYNTH_KIND_TEXT(name, id, text) text,
    SYNTH_KINDS(SYNTH_KIND_TEXT)
#undef SYNTH_KIND_TEXT
};
static const char *const kind_names[] = {
#define SYNTH_KIND_NAME(name, id, text) #id,
    SYNTH_KINDS(SYNTH_KIND_NAME)
#undef SYNTH_KIND_NAME
};

const char *synth_reason_text(enum synth_reason r)
{
    return r < SYNTH_REASON_COUNT ? reason_texts[r] : "?";
}
const char *synth_reason_name(enum synth_reason r)
{
    return r < SYNTH_REASON_COUNT ? reason_names[r] : "?";
}
const char *synth_kind_text(enum synth_kind k)
{
    return k < SYNTH_KIND_COUNT ? kind_texts[k] : "?";
}
const char *synth_kind_name(enum synth_kind k)
{
    return k < SYNTH_KIND_COUNT ? kind_names[k] : "?";
}

bool synth_reason_applies(enum synth_reason r, const struct cfi_arch *arch)
{
    return r != SYNTH_REASON_RA_SIGN_CONFLICT ||
           arch->ra_state != CFI_NO_RA_STATE;
}

bool synth_kind_applies(enum synth_kind k, const struct cfi_arch *arch)
{
    if (k == SYNTH_NO_FDE_CALL_WEAK_FN)
        return arch == &cfi_arch_aarch64;
    return k != SYNTH_RA_SIGN_STATE || arch->ra_state != CFI_NO_RA_STATE;
}

bool synth_kind_known(enum synth_kind k)
{
    return k == SYNTH_NO_FDE_CRTSTUFF || k == SYNTH_NO_FDE_CALL_WEAK_FN;
}

/* One instruction's finding, before coalescing. */
struct finding {
    size_t insn;
    enum synth_kind kind;
    enum synth_reason reason;
    int reg;
    char il[48];
    char synth[48];
};

struct findings {
    struct finding *items;
    size_t count;
    size_t capacity;
    bool nomem;
};

static struct finding *add(struct findings *f, size_t insn,
                           enum synth_kind kind, enum synth_reason reason,
                           int reg)
{
    if (f->count == f->capacity) {
        size_t cap = f->capacity ? 2 * f->capacity : 16;
        struct finding *items = realloc(f->items, cap * sizeof *items);
        if (!items) {
            f->nomem = true;
            return NULL;
        }
        f->items = items;
        f->capacity = cap;
    }
    struct finding *x = &f->items[f->count++];
    memset(x, 0, sizeof *x);
    x->insn = insn;
    x->kind = kind;
    x->reason = reason;
    x->reg = reg;
    return x;
}

/* A limit at an instruction, once: several registers lost there are one
 * limit. */
static void limit(struct findings *f, size_t insn, enum synth_reason reason)
{
    for (size_t k = f->count; k > 0 && f->items[k - 1].insn == insn; k--)
        if (f->items[k - 1].kind == SYNTH_NOT_ANALYSABLE &&
            f->items[k - 1].reason == reason)
            return;
    add(f, insn, SYNTH_NOT_ANALYSABLE, reason, -1);
}

static void rule_text(char *buf, size_t size, struct sem_rule r)
{
    switch (r.kind) {
    case SEM_RULE_UNSPECIFIED: snprintf(buf, size, "unspecified"); break;
    case SEM_RULE_SAME_VALUE: snprintf(buf, size, "same"); break;
    case SEM_RULE_OFFSET:
        snprintf(buf, size, "[cfa%+" PRId64 "]", r.offset);
        break;
    default: snprintf(buf, size, "another rule kind"); break;
    }
}

static void state_text(char *buf, size_t size, const struct synth_reg_state *r)
{
    if (r->slot_valid && r->in_reg)
        snprintf(buf, size, "in register and [cfa%+" PRId64 "]", r->slot);
    else if (r->slot_valid)
        snprintf(buf, size, "[cfa%+" PRId64 "]", r->slot);
    else
        snprintf(buf, size, r->in_reg ? "in register" : "lost");
}

static void cfa_text(char *buf, size_t size, const struct synth_machine *m,
                     const struct synth_state *s)
{
    char aux[8], sp[8], fp[8];
    const struct cfi_arch *a = m->arch;
    int n = 0;
    buf[0] = '\0';
    if (s->rsp_known)
        n += snprintf(buf + n, size - (size_t)n, "%s+%" PRId64,
                      cfi_arch_reg_label(a, m->sp, sp, sizeof sp), s->h);
    if (s->rbp_known && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "%s%s+%" PRId64,
                      n ? " or " : "",
                      cfi_arch_reg_label(a, m->fp, fp, sizeof fp), s->f);
    for (int i = 0; i < s->naux && n >= 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%s+%" PRId64,
                      n ? " or " : "",
                      cfi_arch_reg_label(a, (unsigned)s->aux_reg[i], aux,
                                         sizeof aux),
                      s->aux_a[i]);
}

/* Whether the state has the CFA at reg+off. */
static bool cfa_matches(const struct synth_machine *m,
                        const struct synth_state *s, uint32_t reg,
                        int64_t off)
{
    return (reg == m->sp && s->rsp_known && off == s->h) ||
           (reg == m->fp && s->rbp_known && off == s->f) ||
           (synth_aux_find(s, (int)reg) >= 0 &&
            off == s->aux_a[synth_aux_find(s, (int)reg)]);
}

static void compare_cfa(struct findings *f, size_t i,
                        const struct synth_machine *m,
                        const struct synth_state *s, const struct sem_cfa *c)
{
    if (c->kind == SEM_CFA_RULE_EXPR) {
        limit(f, i, SYNTH_REASON_CFA_EXPRESSION);
        return;
    }
    if (c->kind == SEM_CFA_RULE_REG_OFFSET &&
        cfa_matches(m, s, c->reg, c->offset))
        return;
    /* rsp lost at a join, or to clone's child, is the analysis' limit,
     * not the CFI's fault; rsp moved by an unknown amount (`sub
     * %rax,%rsp`) is, when the CFI still counts from it. */
    if (c->kind == SEM_CFA_RULE_REG_OFFSET && c->reg == m->sp &&
        !s->rsp_known && (s->rsp_reason == SYNTH_REASON_JOIN_CONFLICT ||
                          s->rsp_reason == SYNTH_REASON_NEW_STACK)) {
        limit(f, i, s->rsp_reason);
        return;
    }
    struct finding *x = add(f, i, SYNTH_CFA_HEIGHT, SYNTH_REASON_NONE, -1);
    if (!x)
        return;
    char reg[8];
    if (c->kind == SEM_CFA_RULE_REG_OFFSET)
        snprintf(x->il, sizeof x->il, "%s%+" PRId64,
                 cfi_arch_reg_label(m->arch, c->reg, reg, sizeof reg),
                 c->offset);
    else
        snprintf(x->il, sizeof x->il, "undef");
    cfa_text(x->synth, sizeof x->synth, m, s);
}

/* Whether the IL has an offset rule for reg before range `upto`. */
static bool saved_before(const struct sem_fde_il *il,
                         const struct sem_range *upto, unsigned reg)
{
    for (const struct sem_range *r = il->ranges; r < upto; r++)
        if (sem_row_rule(r->row, reg).kind == SEM_RULE_OFFSET)
            return true;
    return false;
}

static enum synth_kind reg_kind(const struct sem_fde_il *il,
                                const struct sem_range *range, unsigned reg,
                                struct sem_rule r,
                                const struct synth_reg_state *s)
{
    if (r.kind != SEM_RULE_OFFSET)
        return saved_before(il, range, reg) ? SYNTH_RESTORED_EARLY
                                            : SYNTH_SAVE_SLOT;
    if (!s->slot_valid && s->in_reg && s->restored)
        return SYNTH_RESTORED_LATE;
    return SYNTH_SAVE_SLOT;
}

static void compare_reg(struct findings *f, size_t i,
                        const struct sem_fde_il *il,
                        const struct sem_range *range, int k,
                        const struct synth_machine *m,
                        const struct synth_state *s)
{
    unsigned reg = m->saved[k];
    struct sem_rule r = sem_row_rule(range->row, reg);
    const struct synth_reg_state *rs = &s->regs[k];
    bool in_place = r.kind == SEM_RULE_UNSPECIFIED ||
                    r.kind == SEM_RULE_SAME_VALUE;
    if (!in_place && r.kind != SEM_RULE_OFFSET) {
        limit(f, i, SYNTH_REASON_RULE_NOT_COMPARED);
        return;
    }
    if ((in_place && rs->in_reg) ||
        (!in_place && rs->slot_valid && rs->slot == r.offset))
        return;
    if (!rs->in_reg && !rs->slot_valid) {
        limit(f, i, s->regs_conflict ? SYNTH_REASON_REGS_CONFLICT
                                     : SYNTH_REASON_REG_LOST);
        return;
    }
    struct finding *x = add(f, i, reg_kind(il, range, reg, r, rs),
                            SYNTH_REASON_NONE, (int)reg);
    if (!x)
        return;
    rule_text(x->il, sizeof x->il, r);
    state_text(x->synth, sizeof x->synth, rs);
}

/* The return address on the stack (x86-64: at CFA-8 while the frame
 * exists); where it is a register of its own (AArch64's x30), it is
 * compared as the followed registers are. */
static void compare_ra(struct findings *f, size_t i,
                       const struct synth_machine *m,
                       const struct sem_row *row)
{
    unsigned column = m->arch->ra_column;
    if (!m->ra_on_stack)
        return;
    struct sem_rule r = sem_row_rule(row, column);
    if (r.kind == SEM_RULE_OFFSET && r.offset == -m->entry_height)
        return;
    if (r.kind != SEM_RULE_OFFSET && r.kind != SEM_RULE_UNSPECIFIED) {
        limit(f, i, SYNTH_REASON_RULE_NOT_COMPARED); /* rip=rdi (vfork) */
        return;
    }
    struct finding *x = add(f, i, SYNTH_SAVE_SLOT, SYNTH_REASON_NONE,
                            (int)column);
    if (!x)
        return;
    rule_text(x->il, sizeof x->il, r);
    snprintf(x->synth, sizeof x->synth, "[cfa%+" PRId64 "]",
             -m->entry_height);
}

uint8_t synth_row_ra_sign(const struct synth_machine *m,
                          const struct cfi_cie *cie, const struct sem_row *row)
{
    static const uint8_t lit0 = 0x30, lit1 = 0x31; /* DW_OP_lit0, lit1 */
    if (m->arch->ra_state == CFI_NO_RA_STATE)
        return SYNTH_RA_NOT_SIGNED;
    struct sem_rule r = sem_row_rule(row, m->arch->ra_state);
    if (r.kind == SEM_RULE_UNSPECIFIED)
        return SYNTH_RA_NOT_SIGNED;
    if (r.kind != SEM_RULE_VAL_EXPRESSION || r.expr.len != 1 ||
        (r.expr.bytes[0] != lit0 && r.expr.bytes[0] != lit1))
        return SYNTH_RA_CONFLICT;
    if (r.expr.bytes[0] == lit0)
        return SYNTH_RA_NOT_SIGNED;
    return cie && cie->ra_b_key ? SYNTH_RA_SIGNED_B : SYNTH_RA_SIGNED_A;
}

static const char *ra_sign_text(uint8_t state)
{
    switch (state) {
    case SYNTH_RA_NOT_SIGNED: return "0";
    case SYNTH_RA_SIGNED_A: return "1 (a key)";
    case SYNTH_RA_SIGNED_B: return "1 (b key)";
    default: return "another rule";
    }
}

/* RA_SIGN_STATE and the key (the CIE's 'B') against the code's signing:
 * an unwinder that authenticates with the wrong state or key gets a
 * corrupted return address. */
static void compare_ra_sign(struct findings *f, size_t i,
                            const struct synth_fde *o,
                            const struct sem_row *row,
                            const struct synth_state *s)
{
    const struct synth_machine *m = &o->machine;
    if (m->arch->ra_state == CFI_NO_RA_STATE)
        return;
    uint8_t want = synth_row_ra_sign(m, o->fde->cie, row);
    if (s->ra_sign == SYNTH_RA_CONFLICT) {
        limit(f, i, SYNTH_REASON_RA_SIGN_CONFLICT);
        return;
    }
    if (want == SYNTH_RA_CONFLICT) {
        limit(f, i, SYNTH_REASON_RULE_NOT_COMPARED);
        return;
    }
    if (want == s->ra_sign)
        return;
    struct finding *x = add(f, i, SYNTH_RA_SIGN_STATE, SYNTH_REASON_NONE,
                            (int)m->arch->ra_state);
    if (!x)
        return;
    snprintf(x->il, sizeof x->il, "%s", ra_sign_text(want));
    snprintf(x->synth, sizeof x->synth, "%s", ra_sign_text(s->ra_sign));
}

/* Whether a finding from `before` on is a disagreement (not a limit). */
static bool disagrees_since(const struct findings *f, size_t before)
{
    for (size_t k = before; k < f->count; k++)
        if (f->items[k].kind != SYNTH_NOT_ANALYSABLE)
            return true;
    return false;
}

/* Whether the caller's rsp is the CFA, as the ABI default has it. */
static bool rsp_is_cfa(const struct synth_machine *m,
                       const struct sem_row *row)
{
    struct sem_rule r = sem_row_rule(row, m->sp);
    return r.kind == SEM_RULE_UNSPECIFIED ||
           (r.kind == SEM_RULE_VAL_OFFSET && r.offset == 0);
}

/* Whether the analysis knows nothing of the register the IL's CFA is on:
 * not rsp, not an offset from the CFA, and not the caller's value (rbp
 * set from an unknown value, as libffi's ffi_call_unix64 builds its frame
 * in memory the caller gave it). rbp still holding the caller's value is
 * known: no CFA can be on it. */
static bool cfa_reg_unknown(const struct synth_machine *m,
                            const struct synth_state *s, uint32_t reg)
{
    if (reg == m->sp || synth_aux_find(s, (int)reg) >= 0)
        return false;
    if (reg == m->fp)
        return !s->rbp_known &&
               !s->regs[synth_saved_index(m, (int)m->fp)].in_reg;
    return true;
}

static void compare_insn(struct findings *f, const struct synth_fde *o,
                         size_t i, const struct sem_fde_il *il)
{
    const struct synth_state *s = &o->states[i];
    if (o->limits[i] != SYNTH_REASON_NONE) {
        limit(f, i, o->limits[i]);
        return;
    }
    if (!s->reached)
        return; /* padding */
    if (!il) {
        if (!o->no_fde)
            limit(f, i, SYNTH_REASON_NO_IL);
        return;
    }
    const struct sem_range *range = sem_fde_il_find(il, o->addrs[i]);
    if (!range)
        return; /* the IL covers the FDE: never */
    const struct synth_machine *m = &o->machine;
    const struct sem_cfa *cfa = &range->row->cfa;
    if (sem_row_rule(range->row, m->arch->ra_column).kind ==
        SEM_RULE_UNDEFINED) {
        limit(f, i, SYNTH_REASON_OUTERMOST); /* no caller: no CFA needed */
        return;
    }
    if (!rsp_is_cfa(m, range->row)) {
        limit(f, i, SYNTH_REASON_RSP_RULE); /* GHC's StgRun: cfa=rsp+0 */
        return;
    }
    if (cfa->kind == SEM_CFA_RULE_REG_OFFSET &&
        cfa_reg_unknown(m, s, cfa->reg)) {
        limit(f, i, SYNTH_REASON_CFA_OTHER_REG); /* longjmp: cfa=rdi */
        return;
    }
    size_t before = f->count;
    compare_cfa(f, i, m, s, cfa);
    compare_ra(f, i, m, range->row);
    for (int k = 0; k < m->nsaved; k++)
        compare_reg(f, i, il, range, k, m, s);
    compare_ra_sign(f, i, o, range->row, s);
    if (o->dead[i] && disagrees_since(f, before)) {
        f->count = before;
        limit(f, i, SYNTH_REASON_AFTER_NORETURN);
    }
}

static int by_key(const void *pa, const void *pb)
{
    const struct finding *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->reason != b->reason)
        return a->reason < b->reason ? -1 : 1;
    if (a->reg != b->reg)
        return a->reg < b->reg ? -1 : 1;
    return a->insn < b->insn ? -1 : a->insn > b->insn;
}

static int by_begin(const void *pa, const void *pb)
{
    const struct synth_range *a = pa, *b = pb;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static bool same_key(const struct finding *a, const struct finding *b)
{
    return a->kind == b->kind && a->reason == b->reason && a->reg == b->reg;
}

/* Runs of consecutive instructions with one key become one range. */
static enum cfi_status coalesce(struct synth_fde *o, struct findings *f)
{
    if (f->count > 1)
        qsort(f->items, f->count, sizeof *f->items, by_key);
    o->ranges = calloc(f->count ? f->count : 1, sizeof *o->ranges);
    if (!o->ranges)
        return CFI_E_NOMEM;
    for (size_t i = 0; i < f->count; i++) {
        const struct finding *x = &f->items[i];
        struct synth_range *last = o->nranges ? &o->ranges[o->nranges - 1]
                                              : NULL;
        if (i > 0 && same_key(x, x - 1) && x->insn == (x - 1)->insn + 1 &&
            last) {
            last->end = o->addrs[x->insn + 1];
            continue;
        }
        struct synth_range *r = &o->ranges[o->nranges++];
        r->begin = o->addrs[x->insn];
        r->end = o->addrs[x->insn + 1];
        r->kind = x->kind;
        r->reason = x->reason;
        r->reg = x->reg;
        memcpy(r->il, x->il, sizeof r->il);
        memcpy(r->synth, x->synth, sizeof r->synth);
    }
    if (o->nranges > 1)
        qsort(o->ranges, o->nranges, sizeof *o->ranges, by_begin);
    return CFI_OK;
}

enum cfi_status synth_compare(struct synth_fde *o, const struct sem_fde_il *il)
{
    struct findings f = {0};
    for (size_t i = 0; i < o->ninsns; i++)
        compare_insn(&f, o, i, il);
    if (f.nomem) {
        free(f.items);
        return CFI_E_NOMEM;
    }
    enum cfi_status status = coalesce(o, &f);
    free(f.items);
    o->fully_analysed = true;
    for (size_t i = 0; i < o->nranges; i++)
        if (o->ranges[i].kind == SYNTH_NOT_ANALYSABLE)
            o->fully_analysed = false;
    return status;
}

void synth_print_range(FILE *out, const struct cfi_arch *arch,
                       const struct synth_range *r)
{
    char buf[8];
    fprintf(out, "[0x%" PRIx64 ",0x%" PRIx64 ")  %s", r->begin, r->end,
            synth_kind_name(r->kind));
    if (r->kind == SYNTH_NOT_ANALYSABLE) {
        fprintf(out, "  %s (%s)\n", synth_reason_name(r->reason),
                synth_reason_text(r->reason));
        return;
    }
    if (r->reg >= 0)
        fprintf(out, "  %s",
                cfi_arch_reg_label(arch, (unsigned)r->reg, buf, sizeof buf));
    if (r->il[0] || r->synth[0])
        fprintf(out, "  il=%s  code=%s", r->il, r->synth);
    fputc('\n', out);
}

void synth_report_add(struct synth_report *rep, const struct synth_fde *o)
{
    bool disagrees = false;
    rep->nfdes++;
    rep->fully_analysed += o->fully_analysed;
    rep->entered_mid_frame += o->entered_mid_frame;
    rep->ninsns += o->ninsns;
    rep->jump_tables += o->jump_tables;
    rep->noreturn_calls += o->noreturn_calls;
    bool seen[SYNTH_REASON_COUNT] = {false};
    for (size_t i = 0; i < o->nranges; i++) {
        const struct synth_range *r = &o->ranges[i];
        rep->kind_ranges[r->kind]++;
        if (r->kind == SYNTH_NOT_ANALYSABLE) {
            seen[r->reason] = true;
        } else {
            disagrees = true;
        }
    }
    for (size_t i = 0; i < o->ninsns; i++)
        rep->reason_insns[o->limits[i]]++;
    for (int r = 1; r < SYNTH_REASON_COUNT; r++)
        rep->reason_fdes[r] += seen[r];
    rep->fdes_with_disagreement += disagrees;
}
