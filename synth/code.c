/* SPDX-License-Identifier: MIT */
/* code.c — the code no FDE covers: its functions found from the symbol
 * table, the entry point and the direct calls and jumps of analysed code,
 * each analysed from its start, and its synthesised table kept.
 *
 * The starts: the function symbols, the entry point, the entries of the
 * init and fini arrays and the executable sections' starts, then the
 * exits of analysed code.
 *
 * A function starts at a start that lies in an executable segment, in no
 * FDE, and not inside code already reached from another start; it runs to
 * the first of: the next start, the next FDE, the segment's end, the
 * symbol's size; and it ends after the last instruction reached from its
 * start. The start of a jump out of analysed code with a built frame (a
 * cold part, split off a function with no CFI) is analysed from the
 * jump's state; when that start was analysed first from the ABI's, it is
 * analysed again (once). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct start {
    uint64_t addr;
    uint64_t size;            /* from the symbol, 0: unknown */
    const char *name;
    enum synth_origin origin;
    struct synth_state *entry; /* a jump's state (malloc'd), or NULL: the
                                  ABI's */
    bool done;
    bool redone;
};

/* The starts and the functions are kept sorted by address (binary
 * search, insertion by memmove); `pending` is no greater than the index
 * of any start not analysed yet. */
struct finder {
    struct synth_decoder *decoder;
    const struct cfi_file *file;
    struct start *starts;
    size_t nstarts, capacity;
    size_t pending;
    struct synth_code *code;
    size_t functions_capacity;
};

const char *synth_origin_name(enum synth_origin origin)
{
    switch (origin) {
    case SYNTH_FROM_SYMBOL: return "symbol";
    case SYNTH_FROM_ENTRY: return "entry";
    case SYNTH_FROM_ARRAY: return "array";
    case SYNTH_FROM_CALL: return "call";
    case SYNTH_FROM_JUMP: return "jump";
    }
    return "?";
}

static bool executable_code(const struct cfi_file *file, uint64_t addr)
{
    const struct cfi_segment *seg = cfi_file_segment(file, addr);
    return seg && seg->executable && addr - seg->vaddr < seg->filesz &&
           !cfi_file_lookup(file, addr);
}

/* The index of the first start at or after addr. */
static size_t start_index(const struct finder *f, uint64_t addr)
{
    size_t lo = 0, hi = f->nstarts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->starts[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The index of the first function beginning after addr. */
static size_t function_index(const struct synth_code *code, uint64_t addr)
{
    size_t lo = 0, hi = code->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (code->functions[mid].range.pc_begin <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether addr lies inside (not at the start of) code already reached
 * from another start. */
static bool inside_function(const struct synth_code *code, uint64_t addr)
{
    size_t i = function_index(code, addr);
    if (i == 0)
        return false;
    const struct synth_code_function *fn = &code->functions[i - 1];
    return addr > fn->range.pc_begin && addr < fn->range.pc_end;
}

static bool abi_entry(const struct synth_machine *m,
                      const struct synth_state *s)
{
    if (!s->rsp_known || s->h != m->entry_height ||
        s->ra_sign != SYNTH_RA_NOT_SIGNED)
        return false;
    for (int k = 0; k < m->nsaved; k++)
        if (!s->regs[k].in_reg)
            return false;
    return true;
}

/* A jump's state for the start at index i: taken when the start has none
 * yet (analysed again if it was analysed from the ABI's). */
static enum cfi_status give_entry(struct finder *f, size_t i,
                                  const struct synth_state *entry)
{
    struct start *s = &f->starts[i];
    if (!entry || abi_entry(synth_decoder_machine(f->decoder), entry) || s->entry || s->redone)
        return CFI_OK;
    s->entry = malloc(sizeof *s->entry);
    if (!s->entry)
        return CFI_E_NOMEM;
    *s->entry = *entry;
    if (s->done) {
        s->done = false;
        s->redone = true;
        if (i < f->pending)
            f->pending = i;
    }
    return CFI_OK;
}

static enum cfi_status add_start(struct finder *f, uint64_t addr,
                                 uint64_t size, const char *name,
                                 enum synth_origin origin,
                                 const struct synth_state *entry)
{
    if (!executable_code(f->file, addr))
        return CFI_OK;
    size_t i = start_index(f, addr);
    if (i < f->nstarts && f->starts[i].addr == addr)
        return give_entry(f, i, entry);
    if (inside_function(f->code, addr))
        return CFI_OK; /* inside code reached from another start */
    if (f->nstarts == f->capacity) {
        size_t capacity = f->capacity ? 2 * f->capacity : 64;
        struct start *grown = realloc(f->starts, capacity * sizeof *grown);
        if (!grown)
            return CFI_E_NOMEM;
        f->starts = grown;
        f->capacity = capacity;
    }
    memmove(&f->starts[i + 1], &f->starts[i],
            (f->nstarts - i) * sizeof *f->starts);
    f->nstarts++;
    f->starts[i] = (struct start){addr, size, name, origin, NULL, false,
                                  false};
    if (i <= f->pending)
        f->pending = i;
    return give_entry(f, i, entry);
}

/* The index of the lowest start not analysed yet; nstarts: none. */
static size_t next_start(struct finder *f)
{
    while (f->pending < f->nstarts && f->starts[f->pending].done)
        f->pending++;
    return f->pending;
}

/* The first pc_begin after addr among fdes[lo, hi) (sorted). */
static uint64_t next_fde_in(const struct cfi_file *file, size_t lo, size_t hi,
                            uint64_t addr)
{
    size_t end = hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (file->fdes[mid].pc_begin <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end ? file->fdes[lo].pc_begin : UINT64_MAX;
}

/* The first FDE beginning after addr, in either section (UINT64_MAX). */
static uint64_t next_fde(const struct cfi_file *file, uint64_t addr)
{
    uint64_t eh = next_fde_in(file, 0, file->n_eh_frame, addr);
    uint64_t debug = next_fde_in(file, file->n_eh_frame, file->nfdes, addr);
    return eh < debug ? eh : debug;
}

/* Where the function at start i ends at the latest. */
static uint64_t bound(const struct finder *f, size_t i)
{
    const struct start *s = &f->starts[i];
    const struct cfi_segment *seg = cfi_file_segment(f->file, s->addr);
    uint64_t end = seg->vaddr + seg->filesz, fde = next_fde(f->file, s->addr);
    if (fde < end)
        end = fde;
    if (s->size && s->addr + s->size < end)
        end = s->addr + s->size;
    if (i + 1 < f->nstarts && f->starts[i + 1].addr < end)
        end = f->starts[i + 1].addr;
    if (end - s->addr > SYNTH_MAX_INSNS)
        end = s->addr + SYNTH_MAX_INSNS;
    return end;
}

/* The record of the function at addr: the old one (analysed again), or a
 * new one in its place by address. */
static struct synth_code_function *record(struct finder *f, uint64_t addr)
{
    struct synth_code *code = f->code;
    size_t i = function_index(code, addr);
    if (i > 0 && code->functions[i - 1].range.pc_begin == addr) {
        synth_table_free(&code->functions[i - 1].table);
        return &code->functions[i - 1];
    }
    if (code->count == f->functions_capacity) {
        size_t capacity =
            f->functions_capacity ? 2 * f->functions_capacity : 64;
        struct synth_code_function *grown =
            realloc(code->functions, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        code->functions = grown;
        f->functions_capacity = capacity;
    }
    memmove(&code->functions[i + 1], &code->functions[i],
            (code->count - i) * sizeof *code->functions);
    code->count++;
    return &code->functions[i];
}

static enum cfi_status note_exits(struct finder *f, const struct synth_fde *a)
{
    enum cfi_status status = CFI_OK;
    for (size_t i = 0; i < a->nexits && status == CFI_OK; i++) {
        const struct synth_exit *x = &a->exits[i];
        status = add_start(f, x->target, 0, NULL,
                           x->is_call ? SYNTH_FROM_CALL : SYNTH_FROM_JUMP,
                           x->is_call ? NULL : &x->state);
    }
    return status;
}

/* The analysis of the function at start i, kept in its record. */
static enum cfi_status keep(struct finder *f, const struct start *s,
                            const struct cfi_fde *range, struct synth_fde *a)
{
    struct synth_code_function *fn = record(f, s->addr);
    if (!fn)
        return CFI_E_NOMEM;
    memset(fn, 0, sizeof *fn);
    fn->range = *range;
    fn->range.pc_end = a->code_end;
    fn->origin = s->origin;
    fn->name = s->name;
    fn->entered_mid_frame = a->entered_mid_frame;
    fn->fully_analysed = a->fully_analysed;
    fn->ninsns = a->ninsns;
    a->fde = &fn->range;
    return synth_fde_table(a, &fn->table);
}

/* Analyses the function at start i. The starts move as exits add more:
 * the start is copied first. */
static enum cfi_status analyse_start(struct finder *f, size_t i)
{
    f->starts[i].done = true;
    struct start s = f->starts[i];
    struct cfi_fde range;
    memset(&range, 0, sizeof range);
    range.pc_begin = s.addr;
    range.pc_end = bound(f, i);
    struct synth_fde a;
    enum cfi_status status =
        synth_analyse_code(f->decoder, f->file, &range, s.entry, &a);
    if (status == CFI_OK && a.ninsns)
        status = keep(f, &s, &range, &a);
    if (status == CFI_OK)
        status = note_exits(f, &a);
    synth_fde_free(&a);
    return status;
}

static enum cfi_status seed(struct finder *f, const uint64_t *targets,
                            size_t ntargets)
{
    struct cfi_symbol *symbols;
    size_t nsymbols;
    enum cfi_status status = cfi_file_functions(f->file, &symbols, &nsymbols);
    for (size_t i = 0; i < nsymbols && status == CFI_OK; i++)
        status = add_start(f, symbols[i].value, symbols[i].size,
                           symbols[i].name, SYNTH_FROM_SYMBOL, NULL);
    free(symbols);
    if (status == CFI_OK && f->file->entry)
        status = add_start(f, f->file->entry, 0, NULL, SYNTH_FROM_ENTRY, NULL);
    uint64_t *starts = NULL;
    size_t nstarts = 0;
    if (status == CFI_OK)
        status = cfi_file_code_starts(f->file, &starts, &nstarts);
    for (size_t i = 0; i < nstarts && status == CFI_OK; i++)
        status = add_start(f, starts[i], 0, NULL, SYNTH_FROM_ARRAY, NULL);
    free(starts);
    for (size_t i = 0; i < ntargets && status == CFI_OK; i++)
        status = add_start(f, targets[i], 0, NULL, SYNTH_FROM_CALL, NULL);
    return status;
}

enum cfi_status synth_code_find(struct synth_decoder *decoder,
                                const struct cfi_file *file,
                                const uint64_t *targets, size_t ntargets,
                                struct synth_code *code)
{
    memset(code, 0, sizeof *code);
    struct finder f = {decoder, file, NULL, 0, 0, 0, code, 0};
    enum cfi_status status = seed(&f, targets, ntargets);
    size_t at;
    /* Each start is analysed at most twice. */
    while (status == CFI_OK && (at = next_start(&f)) < f.nstarts)
        status = analyse_start(&f, at);
    for (size_t k = 0; k < f.nstarts; k++)
        free(f.starts[k].entry);
    free(f.starts);
    for (size_t i = 0; i < code->count; i++)
        code->functions[i].table.il.fde = &code->functions[i].range;
    if (status != CFI_OK)
        synth_code_free(code);
    return status;
}

void synth_code_free(struct synth_code *code)
{
    for (size_t i = 0; i < code->count; i++)
        synth_table_free(&code->functions[i].table);
    free(code->functions);
    memset(code, 0, sizeof *code);
}
