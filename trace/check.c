/* SPDX-License-Identifier: MIT */
/* check.c — one stop: each engine unwinds the innermost frame from the
 * real registers and memory; the answer is compared with the frame's
 * truth, and every difference lands in its group with a reproducer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Groups kept; past this, mismatches are still counted per engine. */
#define TRACE_GROUPS_MAX 4096
/* Bytes of stack a reproducer copies, from rsp up. */
#define TRACE_DUMP_BYTES 16384

struct difference {
    enum trace_kind kind;
    int reg;
    uint64_t expected, got;
    bool got_value;
    const char *got_text;
};

struct stop {
    const struct cfi_regs *callee;
    const struct trace_frame *truth;
    struct trace_elf *elf;
    const struct cfi_fde *fde;
    uint64_t pc;              /* file address */
    uint64_t bias;
};

static struct trace_group *find_group(struct trace_report *report,
                                      const struct stop *stop,
                                      const struct difference *d)
{
    uint64_t begin = stop->fde ? stop->fde->pc_begin : 0;
    for (size_t i = report->ngroups; i-- > 0;) {
        struct trace_group *g = &report->groups[i];
        if (g->kind == d->kind && g->reg == d->reg && g->fde_begin == begin &&
            !strcmp(g->elf, stop->elf->path) &&
            (stop->fde || (g->pc_last + 64 >= stop->pc &&
                           stop->pc + 64 >= g->pc_first)))
            return g;
    }
    return NULL;
}

static char *row_text(struct trace_elf *elf, const struct stop *stop)
{
    const struct sem_file_il *il = trace_elf_il(elf);
    if (!il || !stop->fde)
        return NULL;
    size_t index = (size_t)(stop->fde - elf->file->fdes);
    if (index >= il->nfdes || il->status[index] != CFI_OK)
        return NULL;
    const struct sem_range *range = sem_fde_il_find(&il->fdes[index], stop->pc);
    if (!range)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    sem_print_range_text(out, elf->file->arch, range);
    fclose(out);
    if (text)
        text[strcspn(text, "\n")] = 0;
    return text;
}

/* Copies the stack from rsp into DIR/trace-N.bin. */
static char *write_dump(struct trace_checker *c, const struct stop *stop,
                        uint64_t *addr)
{
    if (!c->options->dump_dir)
        return NULL;
    uint8_t *bytes = malloc(TRACE_DUMP_BYTES);
    char *path = malloc(strlen(c->options->dump_dir) + 40);
    if (!bytes || !path) {
        free(bytes);
        free(path);
        return NULL;
    }
    *addr = stop->callee->value[c->arch->sp];
    size_t len = trace_mem_read(c->mem, *addr, bytes, TRACE_DUMP_BYTES);
    sprintf(path, "%s/trace-%" PRIu64 ".bin", c->options->dump_dir, c->dumps++);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(bytes, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    free(bytes);
    if (!ok) {
        free(path);
        return NULL;
    }
    return path;
}

static char *reproducer(struct trace_checker *c, const struct trace_group *g,
                        const char *file_path)
{
    if (!g->dump_path)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    fprintf(out, "%s unwind %s --pc 0x%" PRIx64 " --regs ",
            c->options->cfisem ? c->options->cfisem : "cfisem", file_path,
            g->pc);
    const struct cfi_arch *arch = c->arch;
    for (unsigned reg = 0; reg < arch->nreported; reg++) {
        char name[16];
        if (g->callee.status[reg] != CFI_REG_VALUE)
            continue;
        fprintf(out, "%s%s=0x%" PRIx64, reg ? "," : "",
                cfi_arch_reg_label(arch, reg, name, sizeof name),
                g->callee.value[reg]);
    }
    fprintf(out, " --mem %s@0x%" PRIx64 " --engine %s", g->dump_path,
            g->dump_addr, engine_name(g->engine));
    fclose(out);
    return text;
}

static void new_group(struct trace_checker *c, enum engine_id engine,
                      const struct stop *stop, const struct difference *d)
{
    struct trace_report *r = c->report;
    if (r->ngroups == TRACE_GROUPS_MAX)
        return;
    if (r->ngroups == c->groups_capacity) {
        size_t capacity = c->groups_capacity ? 2 * c->groups_capacity : 16;
        struct trace_group *grown = realloc(r->groups, capacity * sizeof *grown);
        if (!grown)
            return;
        r->groups = grown;
        c->groups_capacity = capacity;
    }
    struct trace_group *g = &r->groups[r->ngroups];
    memset(g, 0, sizeof *g);
    g->elf = strdup(stop->elf->path);
    if (!g->elf)
        return;
    r->ngroups++;
    g->fde_begin = stop->fde ? stop->fde->pc_begin : 0;
    g->fde_end = stop->fde ? stop->fde->pc_end : 0;
    g->kind = d->kind;
    g->reg = d->reg;
    g->pc_first = g->pc_last = g->pc = stop->pc;
    g->runtime_pc = stop->callee->value[c->arch->pc];
    g->engine = engine;
    g->expected = d->expected;
    g->got = d->got;
    g->got_value = d->got_value;
    g->got_text = d->got_text;
    g->callee = *stop->callee;
    g->row_il = row_text(stop->elf, stop);
    char function[256];
    if (trace_elf_function(stop->elf, stop->pc, function, sizeof function))
        g->function = strdup(function);
    if (d->kind == TRACE_KIND_no_fde)
        return;
    g->dump_path = write_dump(c, stop, &g->dump_addr);
    g->reproducer = reproducer(c, g, stop->elf->file_path);
}

/* pc among the group's distinct PCs, in order. */
static void add_pc(struct trace_group *g, uint64_t pc)
{
    size_t at = 0;
    while (at < g->npcs && g->pcs[at] < pc)
        at++;
    if (at < g->npcs && g->pcs[at] == pc)
        return;
    if (g->npcs == TRACE_GROUP_PCS) {
        g->pcs_truncated = true;
        return;
    }
    memmove(&g->pcs[at + 1], &g->pcs[at], (g->npcs - at) * sizeof g->pcs[0]);
    g->pcs[at] = pc;
    g->npcs++;
}

static void record(struct trace_checker *c, enum engine_id engine,
                   const struct stop *stop, const struct difference *d,
                   bool first_of_stop)
{
    struct trace_group *g = find_group(c->report, stop, d);
    if (!g) {
        new_group(c, engine, stop, d);
        g = find_group(c->report, stop, d);
        if (!g)
            return;
    }
    g->count++;
    if (d->kind != TRACE_KIND_no_fde)
        g->engines[engine] = true;
    if (first_of_stop)
        g->stops[engine]++;
    /* Already known to restore contexts (an earlier longjmp). */
    if (first_of_stop && g->context_restore)
        c->report->engines[engine].explained++;
    if (stop->pc < g->pc_first)
        g->pc_first = stop->pc;
    if (stop->pc > g->pc_last)
        g->pc_last = stop->pc;
    add_pc(g, stop->pc);
}

static const char *reg_status_text(uint8_t status)
{
    return status == CFI_REG_UNDEFINED ? "undefined" : "unknown";
}

/* RA_SIGN_STATE of the row against the truth (AArch64): signed or not
 * (the row's value 1 or 2 both say signed); a difference into *d. */
static bool compare_ra_state(const struct cfi_arch *arch,
                             const struct cfi_regs *caller,
                             const struct trace_frame *truth,
                             struct difference *d)
{
    unsigned reg = arch->ra_state;
    if (reg == CFI_NO_RA_STATE)
        return false;
    bool value = caller->status[reg] == CFI_REG_VALUE;
    if (value && (caller->value[reg] != CFI_RA_NOT_SIGNED) == truth->ra_signed)
        return false;
    *d = (struct difference){TRACE_KIND_ra_state, (int)reg, truth->ra_signed,
                             value ? caller->value[reg] : 0, value,
                             value ? NULL
                                   : reg_status_text(caller->status[reg])};
    return true;
}

/* The differences of one answer from the truth, into d[] (at most
 * 3 + TRACE_NSAVED); their count. */
static size_t compare(const struct cfi_arch *arch,
                      const struct cfi_frame *frame,
                      const struct trace_frame *truth, struct difference *d)
{
    size_t n = 0;
    if (frame->status != CFI_OK) {
        d[n++] = (struct difference){TRACE_KIND_error, -1, 0, 0, false,
                                     cfi_status_name(frame->status)};
        return n;
    }
    if (frame->cfa != truth->cfa)
        d[n++] = (struct difference){TRACE_KIND_cfa, -1, truth->cfa,
                                     frame->cfa, true, NULL};
    const struct cfi_regs *caller = &frame->caller;
    const unsigned pc = arch->pc;
    if (caller->status[pc] != CFI_REG_VALUE)
        d[n++] = (struct difference){
            caller->status[pc] == CFI_REG_UNDEFINED
                ? TRACE_KIND_ra_undefined : TRACE_KIND_ra,
            (int)pc, truth->ra, 0, false,
            reg_status_text(caller->status[pc])};
    else if (caller->value[pc] != truth->ra)
        d[n++] = (struct difference){TRACE_KIND_ra, (int)pc, truth->ra,
                                     caller->value[pc], true, NULL};
    if (compare_ra_state(arch, caller, truth, &d[n]))
        n++;
    for (unsigned i = 0; i < arch->ncallee_saved && i < TRACE_NSAVED; i++) {
        unsigned reg = arch->callee_saved_list[i];
        if (caller->status[reg] == CFI_REG_VALUE &&
            caller->value[reg] == truth->saved[i])
            continue;
        bool value = caller->status[reg] == CFI_REG_VALUE;
        d[n++] = (struct difference){TRACE_KIND_reg, (int)reg,
                                     truth->saved[i],
                                     value ? caller->value[reg] : 0, value,
                                     value ? NULL
                                           : reg_status_text(caller->status[reg])};
    }
    return n;
}

static void ask_engine(struct trace_checker *c, enum engine_id id,
                       const struct stop *stop)
{
    struct trace_elf *elf = stop->elf;
    struct engine_answer answer;
    engine_answer_reset(&answer);
    struct cfi_request request = {stop->pc, false, stop->callee,
                                  trace_mem_reader(c->mem), 0};
    elf->engines[id].unwind(elf->engines[id].self, &request, &answer);
    struct difference d[3 + TRACE_NSAVED];
    size_t n = answer.comparable ? compare(c->arch, &answer.frame,
                                           stop->truth, d) : 0;
    if (n == 0) {
        c->report->engines[id].agree++;
        return;
    }
    c->report->engines[id].mismatch++;
    for (size_t i = 0; i < n; i++)
        record(c, id, stop, &d[i], i == 0);
}

void trace_check_stop(struct trace_checker *c, const struct cfi_regs *callee,
                      const struct trace_frame *truth)
{
    uint64_t pc = callee->value[c->arch->pc];
    const struct trace_mapping *m = trace_maps_find(c->maps, pc);
    if (!m) {
        c->report->no_elf++;
        return;
    }
    struct trace_elf *elf = &c->maps->elves[m->elf];
    if (!elf->file) {
        c->report->no_elf++;
        return;
    }
    struct stop stop = {callee, truth, elf, NULL, pc - m->bias, m->bias};
    stop.fde = cfi_file_lookup(elf->file, stop.pc);
    if (!stop.fde) {
        c->report->no_fde++;
        struct difference d = {TRACE_KIND_no_fde, -1, 0, 0, false, "no FDE"};
        record(c, ENGINE_il, &stop, &d, false);
        return;
    }
    c->report->stops_checked++;
    elf->checked++;
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (elf->engine_open[id])
            ask_engine(c, (enum engine_id)id, &stop);
}

void trace_check_context_restore(struct trace_checker *c, uint64_t pc)
{
    const struct trace_mapping *m = trace_maps_find(c->maps, pc);
    const struct trace_elf *elf = m ? &c->maps->elves[m->elf] : NULL;
    const struct cfi_fde *fde =
        elf && elf->file ? cfi_file_lookup(elf->file, pc - m->bias) : NULL;
    if (!fde)
        return;
    for (size_t i = 0; i < c->report->ngroups; i++) {
        struct trace_group *g = &c->report->groups[i];
        if (g->context_restore || g->kind == TRACE_KIND_no_fde ||
            g->fde_begin != fde->pc_begin || strcmp(g->elf, elf->path))
            continue;
        g->context_restore = true;
        for (int id = 0; id < ENGINE_COUNT; id++)
            c->report->engines[id].explained += g->stops[id];
    }
}
