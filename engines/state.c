/* SPDX-License-Identifier: MIT */
/* state.c — see state.h. */
#include "state.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* --all-pcs asks every address of an FDE of at most this many bytes; a
 * longer FDE (no real function is) gets its row boundaries and sampled
 * addresses, so that a malformed range cannot make the run endless. */
#define ALL_PCS_MAX ((uint64_t)1 << 20)

void engine_state_config_default(struct engine_state_config *config,
                                 uint64_t seed)
{
    *config = (struct engine_state_config){
        .seed = seed,
        .stack_base = ENGINE_STACK_BASE,
        .stack_window = ENGINE_STACK_WINDOW,
        .regs = ENGINE_REGS_ALL,
        .faults = true,
    };
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
    return engine_mix(a ^ engine_mix(b ^ engine_mix(c)));
}

/* ------------------------------------------------------------------ */
/* PCs                                                                  */
/* ------------------------------------------------------------------ */

struct pc_list {
    struct engine_pc **pcs;
    size_t *count;
    size_t *capacity;
};

static enum cfi_status push_pc(struct pc_list *list, uint64_t pc, bool caller)
{
    if (*list->count == *list->capacity) {
        size_t capacity = *list->capacity ? *list->capacity * 2 : 64;
        struct engine_pc *grown = realloc(*list->pcs, capacity * sizeof *grown);
        if (!grown)
            return CFI_E_NOMEM;
        *list->pcs = grown;
        *list->capacity = capacity;
    }
    (*list->pcs)[(*list->count)++] = (struct engine_pc){pc, caller};
    return CFI_OK;
}

/* One range: its first address, its last as a caller frame, and either
 * one chosen address inside or (all) every address. */
static enum cfi_status range_pcs(struct pc_list *list,
                                 const struct sem_range *range,
                                 uint64_t seed, bool all)
{
    enum cfi_status status = CFI_OK;
    uint64_t length = range->end - range->begin;
    if (all) {
        for (uint64_t at = range->begin; at < range->end && !status; at++)
            status = push_pc(list, at, false);
    } else {
        status = push_pc(list, range->begin, false);
        if (!status && length > 2) {
            uint64_t h = hash3(seed, range->begin, 0x696e73696465ull);
            uint64_t at = range->begin + 1 + h % (length - 2);
            bool caller = h >> 63;
            status = push_pc(list, caller ? at + 1 : at, caller);
        }
    }
    return status ? status : push_pc(list, range->end, true);
}

enum cfi_status engine_pcs_of_fde(const struct sem_file_il *il, size_t index,
                                  const struct engine_state_config *config,
                                  bool all_pcs, struct engine_pc **pcs,
                                  size_t *count, size_t *capacity)
{
    struct pc_list list = {pcs, count, capacity};
    const struct cfi_fde *fde = &il->file->fdes[index];
    enum cfi_status status = CFI_OK;
    if (il->status[index] != CFI_OK || il->fdes[index].nranges == 0) {
        status = push_pc(&list, fde->pc_begin, false);
        if (!status && fde->pc_end > fde->pc_begin)
            status = push_pc(&list, fde->pc_end, true);
    } else {
        const struct sem_fde_il *fde_il = &il->fdes[index];
        bool all = all_pcs && fde->pc_end - fde->pc_begin <= ALL_PCS_MAX;
        for (size_t r = 0; r < fde_il->nranges && !status; r++)
            status = range_pcs(&list, &fde_il->ranges[r], config->seed, all);
    }
    if (!status && fde->pc_end > fde->pc_begin &&
        !cfi_file_lookup(il->file, fde->pc_end))
        status = push_pc(&list, fde->pc_end, false);
    return status;
}

/* ------------------------------------------------------------------ */
/* States                                                               */
/* ------------------------------------------------------------------ */

uint64_t engine_state_mem_seed(uint64_t seed, unsigned k)
{
    return engine_mix(seed ^ (0x6d656d0000ull + k));
}

enum engine_state_kind engine_state_kind_of(
    unsigned k, const struct engine_state_config *config)
{
    if (k % 4 == 3 && config->faults)
        return ENGINE_STATE_FAULT;
    return k % 4 == 2 ? ENGINE_STATE_PARTIAL : ENGINE_STATE_FULL;
}

const char *engine_state_kind_name(enum engine_state_kind kind)
{
    switch (kind) {
    case ENGINE_STATE_FULL:
        return "full";
    case ENGINE_STATE_PARTIAL:
        return "partial";
    case ENGINE_STATE_FAULT:
        return "fault";
    }
    return "?";
}

/* The register the CFA rule reads: reg of reg+off, or the register of a
 * leading DW_OP_breg0..31 of an expression; -1 when there is none. */
static int cfa_base(const struct cfi_arch *arch, const struct sem_row *row)
{
    if (!row)
        return -1;
    unsigned n = arch->nreported;
    if (row->cfa.kind == SEM_CFA_RULE_REG_OFFSET)
        return row->cfa.reg < n ? (int)row->cfa.reg : -1;
    if (row->cfa.kind == SEM_CFA_RULE_EXPR && row->cfa.expr.len > 0 &&
        row->cfa.expr.bytes[0] >= 0x70 && row->cfa.expr.bytes[0] <= 0x8f)
        return row->cfa.expr.bytes[0] - 0x70u < n
                   ? row->cfa.expr.bytes[0] - 0x70 : -1;
    return -1;
}

static bool knows(const struct engine_state_config *config,
                  const struct cfi_arch *arch, enum engine_state_kind kind,
                  unsigned reg, uint64_t h)
{
    /* v1 (x86-64's) carries rip, rsp, rbp, rbx, and eh_elfs of that ABI
     * read them without looking at the flags: all four are always
     * given. */
    if (config->regs == ENGINE_REGS_V1)
        return reg == CFI_REG_RSP || reg == CFI_REG_RBP ||
               reg == CFI_REG_RBX || reg == CFI_REG_RIP;
    if (kind != ENGINE_STATE_PARTIAL || reg == arch->sp)
        return true;
    return (engine_mix(h ^ (0x6b6e6f77ull + reg)) & 1) != 0;
}

void engine_state_make(const struct engine_state_config *config,
                       const struct cfi_arch *arch, struct engine_pc at,
                       unsigned k, const struct sem_row *row,
                       struct engine_state *state)
{
    memset(state, 0, sizeof *state);
    state->arch = arch;
    state->index = k;
    state->kind = engine_state_kind_of(k, config);
    state->at = at;
    state->mem_seed = engine_state_mem_seed(config->seed, k);
    uint64_t h = hash3(config->seed, at.pc * 2 + at.caller_frame, k);
    struct cfi_regs *regs = &state->callee;
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < arch->nreported; reg++)
        if (knows(config, arch, state->kind, reg, h))
            cfi_regs_set(regs, reg, engine_mix(h ^ (0x7265670000ull + reg)));
    uint64_t window = config->stack_window ? config->stack_window : 8;
    uint64_t sp = config->stack_base +
                  ((engine_mix(h ^ 0x727370ull) % window) & ~(uint64_t)7);
    unsigned fp = arch->fp;
    cfi_regs_set(regs, arch->sp, sp);
    if (regs->status[fp] == CFI_REG_VALUE)
        cfi_regs_set(regs, fp, sp + (engine_mix(h ^ 0x726270ull) & 0xff8));
    int base = cfa_base(arch, row);
    if (base >= 0 && (unsigned)base != arch->sp && (unsigned)base != fp &&
        (unsigned)base != arch->pc &&
        (config->regs == ENGINE_REGS_ALL || base == CFI_REG_RBX))
        cfi_regs_set(regs, (unsigned)base, sp + (engine_mix(h ^ 0x636661ull) & 0xff8));
    else if (base >= 0 && (unsigned)base == fp)
        cfi_regs_set(regs, fp, sp + (engine_mix(h ^ 0x726270ull) & 0xff8));
    cfi_regs_set(regs, arch->pc, at.pc);
    /* One partial state in eight lacks the CFA's register itself, so that
     * engines must agree on reg_unknown too. */
    if (state->kind == ENGINE_STATE_PARTIAL &&
        config->regs == ENGINE_REGS_ALL && base >= 0 &&
        (unsigned)base != arch->pc &&
        (engine_mix(h ^ 0x6e6f636661ull) & 7) == 0)
        regs->status[base] = CFI_REG_UNKNOWN;
}

struct engine_memory *engine_state_memory(
    const struct engine_state_config *config, unsigned k,
    const struct cfi_file *file, const uint64_t (*faults)[2], size_t nfaults)
{
    struct engine_memory *memory =
        engine_memory_new(true, engine_state_mem_seed(config->seed, k));
    if (!memory)
        return NULL;
    enum cfi_status status = file ? engine_memory_map_file(memory,
                                                           file) : CFI_OK;
    for (size_t i = 0; i < nfaults && status == CFI_OK; i++)
        status = engine_memory_add_fault(memory, faults[i][0], faults[i][1]);
    if (status != CFI_OK) {
        engine_memory_free(memory);
        return NULL;
    }
    return memory;
}

/* ------------------------------------------------------------------ */
/* The overlay reader                                                   */
/* ------------------------------------------------------------------ */

static enum cfi_status overlay_read(void *env, uint64_t addr, unsigned size,
                                    uint64_t *value)
{
    struct engine_overlay *overlay = env;
    if (addr + size < addr)
        return CFI_E_MEMORY;
    if (overlay->has_fault && size > 0 && addr < overlay->fault_end &&
        overlay->fault_begin < addr + size)
        return CFI_E_MEMORY;
    enum cfi_status status = overlay->base.read(overlay->base.env, addr, size,
                                                value);
    if (status == CFI_OK && overlay->record) {
        if (overlay->nreads < ENGINE_OVERLAY_READS) {
            overlay->read_addr[overlay->nreads] = addr;
            overlay->read_size[overlay->nreads] = (uint8_t)size;
        }
        overlay->nreads++;
    }
    return status;
}

void engine_overlay_init(struct engine_overlay *overlay, struct cfi_memory base,
                         const struct engine_state *state)
{
    overlay->base = base;
    overlay->has_fault = state->has_fault;
    overlay->fault_begin = state->fault_begin;
    overlay->fault_end = state->fault_end;
    overlay->record = false;
    overlay->nreads = 0;
}

struct cfi_memory engine_overlay_reader(struct engine_overlay *overlay)
{
    return (struct cfi_memory){overlay_read, overlay};
}

void engine_state_place_fault(struct engine_state *state,
                              const struct engine_overlay *recorded)
{
    size_t n = recorded->nreads < ENGINE_OVERLAY_READS ? recorded->nreads
                                                     : ENGINE_OVERLAY_READS;
    if (n == 0 || state->kind != ENGINE_STATE_FAULT)
        return;
    uint64_t h = hash3(state->mem_seed, state->at.pc, 0x6661756c74ull);
    size_t i = (size_t)(h % n);
    state->has_fault = true;
    state->fault_begin = recorded->read_addr[i];
    state->fault_end = recorded->read_addr[i] + recorded->read_size[i];
}

/* ------------------------------------------------------------------ */
/* Questions                                                            */
/* ------------------------------------------------------------------ */

static void locate(struct engine_question *q, const struct sem_file_il *il,
                   struct engine_pc at)
{
    uint64_t lookup = cfi_lookup_pc(at.pc, at.caller_frame);
    q->fde = cfi_file_lookup(il->file, lookup);
    q->range = NULL;
    q->translation = CFI_E_NO_FDE;
    if (!q->fde)
        return;
    size_t index = (size_t)(q->fde - il->file->fdes);
    q->translation = il->status[index];
    if (q->translation == CFI_OK)
        q->range = sem_fde_il_find(&il->fdes[index], lookup);
}

void engine_question_make(struct engine_question *q,
                          const struct sem_file_il *il,
                          const struct engine_state_config *config,
                          struct engine_pc at, unsigned k,
                          struct cfi_memory base, engine_reference_fn reference,
                          struct cfi_frame *expected)
{
    locate(q, il, at);
    engine_state_make(config, il->file->arch, at, k,
                      q->range ? q->range->row : NULL, &q->state);
    q->base = base;
    q->request = (struct cfi_request){at.pc, at.caller_frame,
                                      &q->state.callee,
                                      engine_overlay_reader(&q->overlay), 0};
    if (q->state.kind == ENGINE_STATE_FAULT) {
        engine_overlay_init(&q->overlay, base, &q->state);
        q->overlay.record = true;
        reference(il, &q->request, expected);
        engine_state_place_fault(&q->state, &q->overlay);
    }
    engine_overlay_init(&q->overlay, base, &q->state);
    reference(il, &q->request, expected);
}

void engine_question_rewind(struct engine_question *q)
{
    engine_overlay_init(&q->overlay, q->base, &q->state);
}

/* ------------------------------------------------------------------ */
/* Reproducer                                                           */
/* ------------------------------------------------------------------ */

static void print_shell_word(FILE *out, const char *word)
{
    bool plain = *word != 0;
    for (const char *c = word; *c && plain; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789/._+-=,:@%", *c) != NULL;
    if (plain) {
        fputs(word, out);
        return;
    }
    fputc('\'', out);
    for (const char *c = word; *c; c++)
        if (*c == '\'')
            fputs("'\\''", out);
        else
            fputc(*c, out);
    fputc('\'', out);
}

void engine_state_reproducer(FILE *out, const char *path,
                             const struct engine_state *state,
                             const uint64_t (*faults)[2], size_t nfaults,
                             const char *engine, const char *extra)
{
    fputs("cfisem unwind ", out);
    print_shell_word(out, path ? path : "FILE");
    fprintf(out, " --pc 0x%" PRIx64 "%s --regs ", state->at.pc,
            state->at.caller_frame ? " --caller" : "");
    const char *separator = "";
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (state->callee.status[reg] != CFI_REG_VALUE)
            continue;
        char name[16];
        fprintf(out, "%s%s=0x%" PRIx64, separator,
                cfi_arch_reg_label(state->arch, reg, name, sizeof name),
                state->callee.value[reg]);
        separator = ",";
    }
    fprintf(out, " --mem-seed 0x%" PRIx64, state->mem_seed);
    for (size_t i = 0; i < nfaults; i++)
        fprintf(out, " --fault 0x%" PRIx64 "-0x%" PRIx64, faults[i][0],
                faults[i][1]);
    if (state->has_fault)
        fprintf(out, " --fault 0x%" PRIx64 "-0x%" PRIx64, state->fault_begin,
                state->fault_end);
    fprintf(out, " --engine %s", engine);
    if (extra) {
        fputc(' ', out);
        fputs(extra, out);
    }
}
