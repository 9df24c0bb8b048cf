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
    bool has_entry;           /* a jump's state, not the ABI's */
    struct synth_state entry;
    bool done;
    bool redone;
};

struct finder {
    struct synth_decoder *decoder;
    const struct cfi_file *file;
    struct start *starts;
    size_t nstarts, capacity;
    struct synth_code *code;
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

/* The function whose code (as analysed) holds addr, or NULL. */
static struct synth_code_function *function_at(const struct synth_code *code,
                                               uint64_t addr)
{
    for (size_t i = 0; i < code->count; i++) {
        struct synth_code_function *fn = &code->functions[i];
        if (addr >= fn->range.pc_begin && addr < fn->range.pc_end)
            return fn;
    }
    return NULL;
}

static struct start *find_start(struct finder *f, uint64_t addr)
{
    for (size_t i = 0; i < f->nstarts; i++)
        if (f->starts[i].addr == addr)
            return &f->starts[i];
    return NULL;
}

static bool abi_entry(const struct synth_state *s)
{
    if (!s->rsp_known || s->h != 8)
        return false;
    for (int k = 0; k < SYNTH_NSAVED; k++)
        if (!s->regs[k].in_reg)
            return false;
    return true;
}

/* A jump's state for a start already there: taken when the start has none
 * yet (analysed again if it was analysed from the ABI's). */
static void give_entry(struct start *s, const struct synth_state *entry)
{
    if (!entry || abi_entry(entry) || s->has_entry || s->redone)
        return;
    s->has_entry = true;
    s->entry = *entry;
    if (s->done) {
        s->done = false;
        s->redone = true;
    }
}

static enum cfi_status add_start(struct finder *f, uint64_t addr,
                                 uint64_t size, const char *name,
                                 enum synth_origin origin,
                                 const struct synth_state *entry)
{
    if (!executable_code(f->file, addr))
        return CFI_OK;
    struct start *old = find_start(f, addr);
    if (old) {
        give_entry(old, entry);
        return CFI_OK;
    }
    if (function_at(f->code, addr))
        return CFI_OK; /* inside code reached from another start */
    if (f->nstarts == f->capacity) {
        size_t capacity = f->capacity ? 2 * f->capacity : 64;
        struct start *grown = realloc(f->starts, capacity * sizeof *grown);
        if (!grown)
            return CFI_E_NOMEM;
        f->starts = grown;
        f->capacity = capacity;
    }
    struct start *s = &f->starts[f->nstarts++];
    memset(s, 0, sizeof *s);
    s->addr = addr;
    s->size = size;
    s->name = name;
    s->origin = origin;
    give_entry(s, entry);
    return CFI_OK;
}

/* The lowest start not analysed yet, or NULL. */
static struct start *next_start(struct finder *f)
{
    struct start *best = NULL;
    for (size_t i = 0; i < f->nstarts; i++)
        if (!f->starts[i].done && (!best || f->starts[i].addr < best->addr))
            best = &f->starts[i];
    return best;
}

/* The first FDE beginning after addr, in either section (UINT64_MAX). */
static uint64_t next_fde(const struct cfi_file *file, uint64_t addr)
{
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < file->nfdes; i++) {
        uint64_t b = file->fdes[i].pc_begin;
        if (b > addr && b < best && file->fdes[i].pc_end > b)
            best = b;
    }
    return best;
}

/* Where the function at s ends at the latest. */
static uint64_t bound(const struct finder *f, const struct start *s,
                      uint64_t fde_after)
{
    const struct cfi_segment *seg = cfi_file_segment(f->file, s->addr);
    uint64_t end = seg->vaddr + seg->filesz;
    if (fde_after < end)
        end = fde_after;
    if (s->size && s->addr + s->size < end)
        end = s->addr + s->size;
    for (size_t i = 0; i < f->nstarts; i++)
        if (f->starts[i].addr > s->addr && f->starts[i].addr < end)
            end = f->starts[i].addr;
    if (end - s->addr > SYNTH_MAX_INSNS)
        end = s->addr + SYNTH_MAX_INSNS;
    return end;
}

/* The record of the function at addr: the old one (analysed again), or a
 * new one. */
static struct synth_code_function *record(struct synth_code *code,
                                          uint64_t addr, size_t *capacity)
{
    for (size_t i = 0; i < code->count; i++)
        if (code->functions[i].range.pc_begin == addr) {
            synth_table_free(&code->functions[i].table);
            return &code->functions[i];
        }
    if (code->count == *capacity) {
        size_t grown_capacity = *capacity ? 2 * *capacity : 64;
        struct synth_code_function *grown = realloc(
            code->functions, grown_capacity * sizeof *grown);
        if (!grown)
            return NULL;
        code->functions = grown;
        *capacity = grown_capacity;
    }
    return &code->functions[code->count++];
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

/* Analyses the function at s into its record. */
static enum cfi_status analyse_start(struct finder *f, struct start *s,
                                     size_t *capacity)
{
    s->done = true;
    struct cfi_fde range;
    memset(&range, 0, sizeof range);
    range.pc_begin = s->addr;
    range.pc_end = bound(f, s, next_fde(f->file, s->addr));
    struct synth_fde a;
    enum cfi_status status =
        synth_analyse_code(f->decoder, f->file, &range,
                           s->has_entry ? &s->entry : NULL, &a);
    struct synth_code_function *fn =
        status == CFI_OK && a.ninsns ? record(f->code, s->addr, capacity)
                                     : NULL;
    if (status == CFI_OK && a.ninsns && !fn)
        status = CFI_E_NOMEM;
    if (fn) {
        memset(fn, 0, sizeof *fn);
        fn->range = range;
        fn->range.pc_end = a.code_end;
        fn->origin = s->origin;
        fn->name = s->name;
        fn->entered_mid_frame = a.entered_mid_frame;
        fn->fully_analysed = a.fully_analysed;
        fn->ninsns = a.ninsns;
        a.fde = &fn->range;
        status = synth_fde_table(&a, &fn->table);
    }
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

static int by_begin(const void *pa, const void *pb)
{
    const struct synth_code_function *a = pa, *b = pb;
    return a->range.pc_begin < b->range.pc_begin ? -1
                                                 : a->range.pc_begin >
                                                       b->range.pc_begin;
}

enum cfi_status synth_code_find(struct synth_decoder *decoder,
                                const struct cfi_file *file,
                                const uint64_t *targets, size_t ntargets,
                                struct synth_code *code)
{
    memset(code, 0, sizeof *code);
    struct finder f = {decoder, file, NULL, 0, 0, code};
    size_t capacity = 0;
    enum cfi_status status = seed(&f, targets, ntargets);
    struct start *s;
    /* Each start is analysed at most twice. */
    while (status == CFI_OK && (s = next_start(&f)))
        status = analyse_start(&f, s, &capacity);
    free(f.starts);
    if (code->count > 1)
        qsort(code->functions, code->count, sizeof *code->functions,
              by_begin);
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
