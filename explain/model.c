/* SPDX-License-Identifier: MIT */
/* model.c — explain/'s model (explain.h): the question run through
 * semantics/ with a trace sink, each event kept in a struct explanation.
 *
 * The question is the one `cfisem unwind --engine il` answers (same FDE
 * lookup, same translation, same evaluation: sem_unwind_fde_traced); the
 * explanation is made from those events only. Nothing here renders. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

/* ------------------------------------------------------------------ */
/* Growing arrays                                                       */
/* ------------------------------------------------------------------ */

/* Room for one more element of `size` bytes in *items; false when out of
 * memory (then e->out_of_memory is set). */
static bool reserve(struct explanation *e, void **items, size_t count,
                    size_t *capacity, size_t size)
{
    if (count < *capacity)
        return true;
    size_t grown_capacity = *capacity ? *capacity * 2 : 16;
    void *grown = realloc(*items, grown_capacity * size);
    if (!grown) {
        e->out_of_memory = true;
        return false;
    }
    *items = grown;
    *capacity = grown_capacity;
    return true;
}

#define RESERVE(e, array, count, capacity)                                  \
    reserve((e), (void **)&(e)->array, (e)->count, &(e)->capacity,          \
            sizeof *(e)->array)

/* ------------------------------------------------------------------ */
/* Memory: the harness's reader, each read kept with what answered it   */
/* ------------------------------------------------------------------ */

struct traced_memory {
    struct explanation *e;
    struct cfi_memory inner;
};

static bool in_range(uint64_t addr, unsigned size, uint64_t begin,
                     uint64_t end)
{
    return addr < end && addr + size > begin;
}

/* The part of the memory model that holds `addr` (memory.h's order). */
static const char *read_source(const struct explanation *e, uint64_t addr,
                               unsigned size, enum cfi_status status)
{
    const struct ex_state *s = e->state;
    if (status != CFI_OK)
        return "fault";
    for (size_t i = 0; i < s->nfaults; i++)
        if (in_range(addr, size, s->faults[i].begin, s->faults[i].end))
            return "fault";
    if (cfi_file_segment(e->file, addr))
        return "file segment";
    if (s->has_dump &&
        in_range(addr, size, s->dump_addr, s->dump_addr + s->dump_len))
        return "dump";
    return "synthetic";
}

static enum cfi_status traced_read(void *env, uint64_t addr, unsigned size,
                                   uint64_t *value)
{
    struct traced_memory *m = env;
    struct explanation *e = m->e;
    enum cfi_status status = m->inner.read(m->inner.env, addr, size, value);
    if (RESERVE(e, reads, nreads, reads_capacity))
        e->reads[e->nreads++] = (struct ex_read){
            addr, size, status, status == CFI_OK ? *value : 0,
            read_source(e, addr, size, status)};
    return status;
}

/* ------------------------------------------------------------------ */
/* The trace sink                                                       */
/* ------------------------------------------------------------------ */

/* The columns the event's instruction changed, into *insn. */
static bool record_changes(const struct sem_trace_insn *event,
                           struct ex_insn *insn)
{
    size_t n = !sem_cfa_equal(event->cfa_before, event->cfa_after);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        n += !sem_rule_equal(&event->rules_before[reg], &event->rules_after[reg]);
    insn->changed = n ? malloc(n * sizeof *insn->changed) : NULL;
    insn->rules = n ? calloc(n, sizeof *insn->rules) : NULL;
    if (n && (!insn->changed || !insn->rules))
        return false;
    if (!sem_cfa_equal(event->cfa_before, event->cfa_after)) {
        insn->cfa = *event->cfa_after;
        insn->changed[insn->nchanged++] = EX_CFA;
    }
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (!sem_rule_equal(&event->rules_before[reg], &event->rules_after[reg])) {
            insn->rules[insn->nchanged] = event->rules_after[reg];
            insn->changed[insn->nchanged++] = reg;
        }
    return true;
}

static void on_insn(void *env, const struct sem_trace_insn *event)
{
    struct explanation *e = env;
    if (!RESERVE(e, insns, ninsns, insns_capacity))
        return;
    struct ex_insn *insn = &e->insns[e->ninsns];
    *insn = (struct ex_insn){
        .decode_error = event->insn == NULL, .in_cie = event->in_cie,
        .section_offset = event->section_offset, .bytes = event->bytes,
        .len = event->len, .rule = event->rule, .loc = event->loc,
        .loc_after = event->loc_after, .status = event->status,
        .depth_before = e->depth_now, .depth = event->depth,
    };
    if (event->insn)
        insn->insn = *event->insn;
    if (event->status != CFI_OK && event->diag)
        insn->diag = *event->diag;
    if (!record_changes(event, insn)) {
        e->out_of_memory = true;
        return;
    }
    for (size_t i = 0; i < insn->nchanged; i++)
        e->origin_now[insn->changed[i]] = (int)e->ninsns;
    e->depth_now = event->depth;
    e->ninsns++;
}

static void on_range(void *env, const struct sem_range *range)
{
    struct explanation *e = env;
    if (!RESERVE(e, ranges, nranges, ranges_capacity))
        return;
    struct ex_range *r = &e->ranges[e->nranges++];
    r->range = *range;
    r->emitted_at = e->ninsns;
    memcpy(r->origin, e->origin_now, sizeof r->origin);
}

static void on_lookup(void *env, const struct sem_trace_lookup *event)
{
    struct explanation *e = env;
    e->has_lookup = true;
    e->lookup = *event;
    e->row = NULL;
    for (size_t i = 0; event->range && i < e->nranges; i++)
        if (e->ranges[i].range.begin == event->range->begin) {
            e->row = &e->ranges[i].range;
            e->row_index = i;
        }
}

/* The operations since the last value belong to this one, and so do the
 * reads after its last operation (a saved register's load). */
static void claim(struct explanation *e, struct ex_value *v)
{
    v->present = true;
    v->first_op = e->ops_pending;
    v->nops = e->nops - e->ops_pending;
    v->first_read = e->reads_pending;
    if (v->nops) {
        const struct ex_op *last = &e->ops[e->nops - 1];
        v->first_read = last->first_read + last->nreads;
    }
    v->nreads = e->nreads - v->first_read;
    e->ops_pending = e->nops;
    e->reads_pending = e->nreads;
}

static void on_cfa(void *env, const struct sem_trace_cfa *event)
{
    struct explanation *e = env;
    struct ex_value *v = &e->cfa;
    claim(e, v);
    v->has_base = event->has_base;
    v->base = event->base;
    v->status = event->status;
    if (event->status != CFI_OK && event->diag)
        v->diag = *event->diag;
    v->value = event->value;
}

static void on_reg(void *env, const struct sem_trace_reg *event)
{
    struct explanation *e = env;
    if (event->reg >= CFI_NREGS)
        return;
    struct ex_value *v = &e->regs[event->reg];
    claim(e, v);
    v->rule = event->rule;
    v->abi_default = event->abi_default;
    v->has_address = event->has_address;
    v->address = event->address;
    v->status = event->status;
    if (event->status != CFI_OK && event->diag)
        v->diag = *event->diag;
    v->caller_status = event->caller_status;
    v->value = event->caller_value;
}

static void on_op(void *env, const struct sem_trace_op *event)
{
    struct explanation *e = env;
    if (!RESERVE(e, ops, nops, ops_capacity))
        return;
    struct ex_op *op = &e->ops[e->nops++];
    op->expr = event->expr;
    op->start = event->start;
    op->at = event->at;
    op->next = event->next;
    op->depth = event->depth <= CFI_EXPR_STACK_MAX ? event->depth
                                                    : CFI_EXPR_STACK_MAX;
    memcpy(op->stack, event->stack, op->depth * sizeof op->stack[0]);
    op->status = event->status;
    op->message = event->status != CFI_OK && event->diag
                      ? event->diag->message : NULL;
    /* The reads since the previous operation are this one's. */
    size_t first = op == e->ops ? e->reads_pending : op[-1].first_read +
                                                         op[-1].nreads;
    if (first < e->reads_pending)
        first = e->reads_pending;
    op->first_read = first;
    op->nreads = e->nreads - first;
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

void ex_explanation_free(struct explanation *e)
{
    for (size_t i = 0; i < e->ninsns; i++) {
        free(e->insns[i].changed);
        free(e->insns[i].rules);
    }
    free(e->insns);
    free(e->ranges);
    free(e->ops);
    free(e->reads);
}

const struct cfi_arch *ex_arch(const struct explanation *e)
{
    return e->file->arch;
}

bool ex_pc_from_return_column(const struct explanation *e)
{
    return e->fde && e->fde->cie->ra_column != ex_arch(e)->pc;
}

void ex_explain(struct explanation *e, struct cfi_memory memory,
                struct sem_arena *arena)
{
    for (size_t i = 0; i < EX_NCOLUMNS; i++)
        e->origin_now[i] = EX_ORIGIN_NONE;
    struct traced_memory traced = {e, memory};
    e->va_bits = CFI_VA_BITS_DEFAULT;
    struct cfi_request request = {e->pc, e->caller, &e->state->callee,
                                  {traced_read, &traced}, e->va_bits};
    e->lookup_pc = e->caller ? e->pc - 1 : e->pc;
    e->fde = cfi_file_lookup(e->file, e->lookup_pc);
    if (!e->fde) {
        e->frame.status = CFI_E_NO_FDE;
        e->frame.diag = (struct cfi_diag){CFI_E_NO_FDE,
                                          "no FDE covers the address",
                                          CFI_NO_OFFSET, -1};
        return;
    }
    struct sem_trace trace = {e, on_insn, on_range, on_lookup,
                              on_cfa, on_reg, on_op};
    sem_unwind_fde_traced(e->fde, &request, arena, &e->frame, &trace);
}

size_t ex_lookup_mark(const struct explanation *e,
                      const struct sem_range **range)
{
    *range = NULL;
    if (e->row) {
        *range = e->row;
        return e->ranges[e->row_index].emitted_at;
    }
    for (size_t i = 0; i < e->nranges; i++)
        if (e->ranges[i].range.begin <= e->lookup_pc &&
            e->lookup_pc < e->ranges[i].range.end) {
            *range = &e->ranges[i].range;
            return e->ranges[i].emitted_at;
        }
    const struct ex_insn *last = e->ninsns ? &e->insns[e->ninsns - 1] : NULL;
    if (last && last->status != CFI_OK && !last->in_cie &&
        last->loc <= e->lookup_pc)
        return e->ninsns - 1;
    return SIZE_MAX;
}
