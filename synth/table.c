/* SPDX-License-Identifier: MIT */
/* table.c — the synthesised table as IL, and code covered by no FDE. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* RA_SIGN_STATE 1, as the IL writes it: val(lit1). */
static const uint8_t ra_signed_lit[] = {0x31};

/* The row at one instruction: the CFA from the frame pointer when it is
 * one, else from the stack pointer; x86-64's rip at CFA-8; a register at
 * its slot from its save until its restore; AArch64's RA_SIGN_STATE 1
 * while x30 is signed. `rules` has room for SYNTH_MAX_SAVED + 1. */
static struct sem_row row_at(const struct synth_fde *o, size_t i,
                             struct sem_reg_rule *rules)
{
    const struct synth_machine *m = &o->machine;
    struct sem_row row = {{SEM_CFA_RULE_INVALID, 0, 0, {NULL, 0}}, 0, rules};
    const struct synth_state *s = &o->states[i];
    if (!s->reached || o->limits[i] != SYNTH_REASON_NONE)
        return row;
    if (s->rbp_known)
        row.cfa = (struct sem_cfa){SEM_CFA_RULE_REG_OFFSET, m->fp, s->f,
                                   {NULL, 0}};
    else if (s->rsp_known)
        row.cfa = (struct sem_cfa){SEM_CFA_RULE_REG_OFFSET, m->sp, s->h,
                                   {NULL, 0}};
    else
        row.cfa = (struct sem_cfa){SEM_CFA_RULE_REG_OFFSET,
                                   (uint32_t)s->aux_reg[s->naux - 1],
                                   s->aux_a[s->naux - 1], {NULL, 0}};
    for (int k = 0; k < m->nsaved; k++) {
        const struct synth_reg_state *r = &s->regs[k];
        if (r->slot_valid && (!r->in_reg || !r->restored))
            rules[row.nrules++] = (struct sem_reg_rule){
                m->saved[k], {SEM_RULE_OFFSET, 0, r->slot, {NULL, 0}}};
    }
    unsigned ra = m->arch->ra_column;
    /* the entry point has no caller: the return address undefined, the
     * outermost frame */
    if (o->outermost)
        rules[row.nrules++] = (struct sem_reg_rule){
            ra, {SEM_RULE_UNDEFINED, 0, 0, {NULL, 0}}};
    else if (m->ra_on_stack)
        rules[row.nrules++] = (struct sem_reg_rule){
            ra, {SEM_RULE_OFFSET, 0, -m->entry_height, {NULL, 0}}};
    if (s->ra_sign == SYNTH_RA_SIGNED_A || s->ra_sign == SYNTH_RA_SIGNED_B)
        rules[row.nrules++] = (struct sem_reg_rule){
            m->arch->ra_state,
            {SEM_RULE_VAL_EXPRESSION, 0, 0, {ra_signed_lit, 1}}};
    return row;
}

static bool same_row(const struct sem_row *a, const struct sem_row *b)
{
    if (a->cfa.kind != b->cfa.kind || a->nrules != b->nrules ||
        (a->cfa.kind == SEM_CFA_RULE_REG_OFFSET &&
         (a->cfa.reg != b->cfa.reg || a->cfa.offset != b->cfa.offset)))
        return false;
    for (uint32_t j = 0; j < a->nrules; j++)
        if (a->rules[j].reg != b->rules[j].reg ||
            a->rules[j].rule.kind != b->rules[j].rule.kind ||
            a->rules[j].rule.offset != b->rules[j].rule.offset)
            return false;
    return true;
}

enum cfi_status synth_fde_table(const struct synth_fde *o,
                                struct synth_table *t)
{
    size_t n = o->ninsns, per = SYNTH_MAX_SAVED + 2;
    memset(t, 0, sizeof *t);
    t->il.fde = o->fde;
    t->rows = calloc(n ? n : 1, sizeof *t->rows);
    t->rules = calloc((n ? n : 1) * per, sizeof *t->rules);
    t->il.ranges = calloc(n ? n : 1, sizeof *t->il.ranges);
    if (!t->rows || !t->rules || !t->il.ranges) {
        synth_table_free(t);
        return CFI_E_NOMEM;
    }
    size_t nrows = 0;
    for (size_t i = 0; i < n; i++) {
        struct sem_row row = row_at(o, i, &t->rules[nrows * per]);
        struct sem_range *last = nrows ? &t->il.ranges[nrows - 1] : NULL;
        if (last && same_row(last->row, &row)) {
            last->end = o->addrs[i + 1];
            continue;
        }
        t->rows[nrows] = row;
        t->il.ranges[nrows] = (struct sem_range){o->addrs[i], o->addrs[i + 1],
                                                 &t->rows[nrows]};
        nrows++;
    }
    t->il.nranges = nrows;
    return CFI_OK;
}

void synth_table_free(struct synth_table *t)
{
    free(t->rows);
    free(t->rules);
    free(t->il.ranges);
    memset(t, 0, sizeof *t);
}

/* Padding: a nop, int3, or zeros (up to `room` bytes: the part before
 * the gap's end). */
static bool is_padding_insn(const struct synth_insn *in, const uint8_t *b,
                            uint64_t room)
{
    bool zeros = true;
    for (unsigned j = 0; j < in->len && j < room; j++)
        zeros = zeros && b[j] == 0;
    return zeros || in->op == SYNTH_OP_PADDING ||
           (in->op == SYNTH_OP_STOP && b[0] == 0xcc);
}

/* The part of [begin, end) from the first instruction that is not
 * padding (zeros, int3, nop) to the end of the last; empty (*first ==
 * *last) when there is none. Undecodable bytes are not padding. The
 * decoder may read `extra` bytes past end: a nop that the next FDE's
 * start cuts (the signal trampoline's FDE starts one byte early) is
 * still a nop. */
static enum cfi_status trim_padding(struct synth_decoder *d,
                                    const uint8_t *bytes, uint64_t begin,
                                    uint64_t end, uint64_t extra,
                                    uint64_t *first, uint64_t *last)
{
    size_t len = (size_t)(end - begin);
    struct synth_insn *insns = calloc(len, sizeof *insns);
    if (!insns)
        return CFI_E_NOMEM;
    size_t n;
    uint64_t stopped;
    synth_decode(d, bytes, begin, end + extra, insns, len, &n, &stopped);
    if (stopped > end)
        stopped = end;
    *first = *last = begin;
    bool found = false;
    for (size_t i = 0; i < n && insns[i].addr < end; i++) {
        if (is_padding_insn(&insns[i], bytes + (insns[i].addr - begin),
                            end - insns[i].addr))
            continue;
        if (!found)
            *first = insns[i].addr;
        found = true;
        *last = insns[i].addr + insns[i].len;
        if (*last > end)
            *last = end;
    }
    if (stopped < end) {
        if (!found)
            *first = stopped;
        *last = end;
    }
    free(insns);
    return CFI_OK;
}

static enum cfi_status check_gap(struct synth_decoder *d,
                                 const struct cfi_file *file, uint64_t begin,
                                 uint64_t end, struct synth_range **ranges,
                                 size_t *count)
{
    const struct cfi_segment *seg = cfi_file_segment(file, begin);
    const uint8_t *bytes = synth_file_bytes(file, begin, end - begin);
    if (!seg || !seg->executable || !bytes || end - begin > SYNTH_MAX_INSNS ||
        cfi_file_segment(file, end - 1) != seg)
        return CFI_OK;
    uint64_t first, last, room = seg->vaddr + seg->filesz - end;
    if (trim_padding(d, bytes, begin, end, room < 15 ? room : 15, &first,
                     &last) != CFI_OK)
        return CFI_E_NOMEM;
    if (first == last)
        return CFI_OK;
    struct synth_range *grown =
        realloc(*ranges, (*count + 1) * sizeof **ranges);
    if (!grown)
        return CFI_E_NOMEM;
    *ranges = grown;
    enum synth_kind kind = synth_known_gap(d, bytes + (first - begin),
                                           first, last - first);
    grown[*count] = (struct synth_range){first, last, kind,
                                         SYNTH_REASON_NONE, -1, "", ""};
    (*count)++;
    return CFI_OK;
}

enum cfi_status synth_uncovered(struct synth_decoder *d,
                                const struct cfi_file *file,
                                struct synth_range **ranges, size_t *count)
{
    uint64_t covered = 0;
    for (size_t i = 0; i < file->n_eh_frame; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        if (fde->pc_end <= fde->pc_begin)
            continue;
        if (covered && fde->pc_begin > covered &&
            check_gap(d, file, covered, fde->pc_begin, ranges, count) !=
                CFI_OK)
            return CFI_E_NOMEM;
        if (fde->pc_end > covered)
            covered = fde->pc_end;
    }
    return CFI_OK;
}
