/* SPDX-License-Identifier: MIT */
/* validate/sframe.c — see validate/sframe_check.h. */
#include "sframe_check.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engines/engines.h"
#include "semantics/sem.h"

/* At most 1 MiB of addresses per FDE are checked, as validate does: the
 * time follows the file, never the range an FDE claims. */
#define SFRAME_FDE_ADDRESSES_MAX ((uint64_t)1 << 20)

/* What one run shares: the IL, one memory per state. */
struct run {
    const struct cfi_file *file;
    const struct sframe_table *table;
    struct sem_file_il *il;
    struct engine_state_config config;
    struct engine_memory **memories;
    struct validate_sframe_result *v;
    struct validate_sframe_wrong *open;  /* the wrong range being extended */
};

/* ------------------------------------------------------------------ */
/* One address                                                          */
/* ------------------------------------------------------------------ */

/* The IL's answer for the three columns: its row with only rbp's and
 * rip's rules kept. */
static void expected_answer(const struct cfi_arch *arch,
                            const struct sem_row *row,
                            const struct cfi_request *request,
                            struct cfi_frame *frame)
{
    struct sem_reg_rule rules[2];
    struct sem_row kept = {row->cfa, 0, rules};
    for (uint32_t i = 0; i < row->nrules && kept.nrules < 2; i++)
        if (row->rules[i].reg == CFI_REG_RBP ||
            row->rules[i].reg == CFI_REG_RIP)
            rules[kept.nrules++] = row->rules[i];
    sem_eval_row(arch, &kept, request->callee, request->memory, frame);
}

static bool same_reg(const struct cfi_frame *a, const struct cfi_frame *b,
                     unsigned reg)
{
    return a->caller.status[reg] == b->caller.status[reg] &&
           (a->caller.status[reg] != CFI_REG_VALUE ||
            a->caller.value[reg] == b->caller.value[reg]);
}

/* The first item that differs; false when none does. */
static bool differs(const struct cfi_frame *e, const struct cfi_frame *g,
                    enum validate_sframe_item *item)
{
    if (e->status != g->status ||
        (e->status == CFI_E_REG_UNKNOWN && e->diag.reg != g->diag.reg))
        *item = VALIDATE_SF_STATUS;
    else if (e->status != CFI_OK)
        return false;
    else if (e->cfa != g->cfa)
        *item = VALIDATE_SF_CFA;
    else if (!same_reg(e, g, CFI_REG_RBP))
        *item = VALIDATE_SF_RBP;
    else if (!same_reg(e, g, CFI_REG_RIP))
        *item = VALIDATE_SF_RIP;
    else
        return false;
    return true;
}

static void wrong_at(struct run *r, const struct cfi_fde *fde,
                     const struct sframe_fde *sfde, uint64_t pc,
                     enum validate_sframe_item item, unsigned k,
                     const struct cfi_frame *e, const struct cfi_frame *g)
{
    struct validate_sframe_wrong *open = r->open;
    if (open && open->fde == fde && open->item == item && open->end == pc) {
        open->end = pc + 1;
        return;
    }
    struct validate_sframe_result *v = r->v;
    v->nwrong++;
    r->open = NULL;
    if (v->kept_wrong == VALIDATE_SFRAME_KEPT)
        return;
    open = r->open = &v->wrong[v->kept_wrong++];
    *open = (struct validate_sframe_wrong){pc, pc + 1, item, fde, sfde, k,
                                           *e, *g};
}

/* Every state at pc; the first difference makes the address wrong. */
static enum cfi_status check_address(struct run *r, const struct cfi_fde *fde,
                                     const struct sem_row *row, uint64_t pc)
{
    const struct sframe_fde *sfde = sframe_lookup(r->table, pc);
    struct cfi_frame *e = malloc(sizeof *e), *g = malloc(sizeof *g);
    struct engine_state *state = malloc(sizeof *state);
    if (!e || !g || !state) {
        free(e), free(g), free(state);
        return CFI_E_NOMEM;
    }
    r->v->compared++;
    bool wrong = false;
    for (unsigned k = 0; k < r->v->nstates && !wrong; k++) {
        engine_state_make(&r->config, &cfi_arch_x86_64,
                          (struct engine_pc){pc, false}, k, row, state);
        struct cfi_request request = {pc, false, &state->callee,
                                      engine_memory_reader(r->memories[k]), 0};
        expected_answer(fde->cie->arch, row, &request, e);
        sframe_unwind(r->table, &request, g);
        enum validate_sframe_item item;
        if (differs(e, g, &item)) {
            wrong_at(r, fde, sfde, pc, item, k, e, g);
            wrong = true;
        }
    }
    r->v->agree += !wrong;
    free(e), free(g), free(state);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* One FDE                                                              */
/* ------------------------------------------------------------------ */

static void keep(struct validate_sframe_coverage *list, size_t *kept,
                 struct validate_sframe_coverage entry)
{
    if (*kept < VALIDATE_SFRAME_KEPT)
        list[(*kept)++] = entry;
}

/* Why gas may have left the FDE out, as its DWARF shows it. */
static const char *drop_reason(const struct sem_file_il *il, size_t index)
{
    if (il->status[index] != CFI_OK)
        return "the DWARF does not translate";
    const struct sem_fde_il *fde = &il->fdes[index];
    for (size_t i = 0; i < fde->nranges; i++) {
        const struct sem_row *row = fde->ranges[i].row;
        struct sem_rule rbp = sem_row_rule(row, CFI_REG_RBP);
        struct sem_rule rip = sem_row_rule(row, CFI_REG_RIP);
        if (row->cfa.kind != SEM_CFA_RULE_REG_OFFSET)
            return "a CFA that is an expression";
        if (row->cfa.reg != CFI_REG_RSP && row->cfa.reg != CFI_REG_RBP)
            return "a CFA from a register other than rsp and rbp";
        if (rip.kind != SEM_RULE_OFFSET || rip.offset != -8)
            return "a return address not at CFA-8";
        if (rbp.kind != SEM_RULE_UNSPECIFIED && rbp.kind != SEM_RULE_OFFSET)
            return "an rbp rule SFrame cannot say";
    }
    return NULL;
}

/* The SFrame FDE that covers some address of the DWARF FDE, or NULL. */
static const struct sframe_fde *covering(const struct sframe_table *t,
                                         const struct cfi_fde *fde)
{
    const struct sframe_fde *s = sframe_lookup(t, fde->pc_begin);
    if (s)
        return s;
    for (size_t i = 0; i < t->nfdes; i++) {
        s = t->by_start[i];
        if (s->start > fde->pc_begin && s->start < fde->pc_end)
            return s;
    }
    return NULL;
}

/* An SFrame FDE covering addresses of `fde` must lie inside it (SFrame
 * may split one DWARF FDE in several: the PLT's). */
static void check_range(struct validate_sframe_result *v,
                        const struct cfi_fde *fde,
                        const struct sframe_fde *sfde)
{
    if (sfde->start >= fde->pc_begin &&
        sfde->start + sfde->size <= fde->pc_end)
        return;
    v->nrange++;
    keep(v->range, &v->kept_range,
         (struct validate_sframe_coverage){fde, sfde, 0, 0, NULL});
}

static enum cfi_status check_fde(struct run *r, size_t index)
{
    const struct cfi_fde *fde = &r->file->fdes[index];
    struct validate_sframe_result *v = r->v;
    if (fde->pc_end <= fde->pc_begin)
        return CFI_OK;
    const struct sframe_fde *sfde = covering(r->table, fde);
    if (!sfde) {
        const char *reason = drop_reason(r->il, index);
        v->ndropped++;
        v->ndropped_reason += reason != NULL;
        keep(v->dropped, &v->kept_dropped,
             (struct validate_sframe_coverage){fde, NULL, 0, 0, reason});
        return CFI_OK;
    }
    if (r->il->status[index] != CFI_OK)
        return CFI_OK;
    const struct sem_fde_il *il = &r->il->fdes[index];
    r->open = NULL;
    const struct sframe_fde *last = NULL;
    bool uncovered = false;
    uint64_t budget = SFRAME_FDE_ADDRESSES_MAX;
    for (size_t i = 0; i < il->nranges; i++)
        for (uint64_t pc = il->ranges[i].begin;
             pc < il->ranges[i].end && budget > 0; pc++, budget--) {
            v->addresses++;
            sfde = sframe_lookup(r->table, pc);
            uncovered |= !sfde;
            if (sfde && sfde != last)
                check_range(v, fde, sfde);
            last = sfde ? sfde : last;
            if (!sfde)
                continue;
            enum cfi_status status = check_address(r, fde, il->ranges[i].row,
                                                   pc);
            if (status != CFI_OK)
                return status;
        }
    if (uncovered) {
        v->nrange++;
        keep(v->range, &v->kept_range,
             (struct validate_sframe_coverage){fde, NULL, 0, 0, NULL});
    }
    return CFI_OK;
}

/* The least pc_begin above pc of the FDEs of one section group
 * fdes[lo .. hi) (sorted by pc_begin), or UINT64_MAX. */
static uint64_t next_begin(const struct cfi_fde *fdes, size_t lo, size_t hi,
                           uint64_t pc)
{
    size_t end = hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fdes[mid].pc_begin <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end ? fdes[lo].pc_begin : UINT64_MAX;
}

/* Where the next address a DWARF FDE covers may be, after pc. */
static uint64_t next_covered(const struct cfi_file *file, uint64_t pc)
{
    const struct cfi_fde *fdes = file->fdes;
    size_t n = file->n_eh_frame;
    uint64_t a = n ? next_begin(fdes, 0, n, pc) : UINT64_MAX;
    uint64_t b = file->nfdes > n ? next_begin(fdes, n, file->nfdes, pc)
                                 : UINT64_MAX;
    return a < b ? a : b;
}

/* Addresses of SFrame FDEs that no DWARF FDE covers: each a walk from
 * FDE to FDE, not address by address. */
static void check_alone(struct run *r)
{
    struct validate_sframe_result *v = r->v;
    for (size_t i = 0; i < r->table->nfdes; i++) {
        const struct sframe_fde *s = r->table->by_start[i];
        uint64_t pc = s->start, end = s->start + s->size;
        while (pc < end) {
            const struct cfi_fde *fde = cfi_file_lookup(r->file, pc);
            if (fde) {
                pc = fde->pc_end;
                continue;
            }
            uint64_t stop = next_covered(r->file, pc);
            stop = stop < end ? stop : end;
            v->nalone++;
            keep(v->alone, &v->kept_alone,
                 (struct validate_sframe_coverage){NULL, s, pc, stop, NULL});
            pc = stop;
        }
    }
}

enum cfi_status validate_sframe_check(const struct cfi_file *file,
                                      const struct sframe_table *table,
                                      unsigned nstates, uint64_t seed,
                                      struct validate_sframe_result *v)
{
    memset(v, 0, sizeof *v);
    v->table = table;
    v->n_eh_frame = file->n_eh_frame;
    v->nfdes = file->nfdes;
    v->nstates = nstates;
    struct run r = {file, table, NULL, {0}, NULL, v, NULL};
    engine_state_config_default(&r.config, seed);
    r.config.faults = false;
    enum cfi_status status = sem_file_il_build(file, &r.il);
    r.memories = calloc(nstates ? nstates : 1, sizeof *r.memories);
    if (status == CFI_OK && !r.memories)
        status = CFI_E_NOMEM;
    for (unsigned k = 0; status == CFI_OK && k < nstates; k++)
        if (!(r.memories[k] = engine_state_memory(&r.config, k, file, NULL, 0)))
            status = CFI_E_NOMEM;
    for (size_t i = 0; status == CFI_OK && i < file->nfdes; i++)
        if (i < file->n_eh_frame ||
            !cfi_file_lookup_in(file, CFI_EH_FRAME, file->fdes[i].pc_begin))
            status = check_fde(&r, i);
    if (status == CFI_OK)
        check_alone(&r);
    for (unsigned k = 0; r.memories && k < nstates; k++)
        engine_memory_free(r.memories[k]);
    free(r.memories);
    sem_file_il_free(r.il);
    return status;
}

uint64_t validate_sframe_problems(const struct validate_sframe_result *v)
{
    return v->nwrong + v->nrange + v->nalone;
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

static const char *item_name(enum validate_sframe_item item)
{
    switch (item) {
    case VALIDATE_SF_STATUS: return "status";
    case VALIDATE_SF_CFA: return "cfa";
    case VALIDATE_SF_RBP: return "rbp";
    case VALIDATE_SF_RIP: return "rip";
    }
    return "?";
}

static void item_text(const struct cfi_frame *frame,
                      enum validate_sframe_item item, char *buf, size_t size)
{
    char text[128];
    switch (item) {
    case VALIDATE_SF_STATUS:
        snprintf(buf, size, "%s", engine_status_text(frame, text, sizeof text));
        return;
    case VALIDATE_SF_CFA:
        snprintf(buf, size, "0x%" PRIx64, frame->cfa);
        return;
    case VALIDATE_SF_RBP:
    case VALIDATE_SF_RIP:
        snprintf(buf, size, "%s",
                 engine_reg_text(frame, item == VALIDATE_SF_RBP ? CFI_REG_RBP
                                                          : CFI_REG_RIP,
                                 text, sizeof text));
        return;
    }
    snprintf(buf, size, "?");
}

static void print_wrong(FILE *out, const struct validate_sframe_wrong *w)
{
    char e[160], g[160];
    item_text(&w->expected, w->item, e, sizeof e);
    item_text(&w->got, w->item, g, sizeof g);
    fprintf(out, "  [0x%" PRIx64 ",0x%" PRIx64 ") %s: DWARF %s, SFrame %s "
            "(state %u; %s+0x%" PRIx64 ", .sframe+0x%" PRIx64 ")\n",
            w->begin, w->end, item_name(w->item), e, g, w->state,
            cfi_section_name(w->fde->section), w->fde->offset, w->sfde ? w->sfde->offset : 0);
}

static void print_lists(FILE *out, const struct validate_sframe_result *v,
                        size_t show)
{
    if (v->nwrong)
        fprintf(out, "wrong ranges: %" PRIu64 "\n", v->nwrong);
    for (size_t i = 0; i < v->kept_wrong && i < show; i++)
        print_wrong(out, &v->wrong[i]);
    if (v->nrange)
        fprintf(out, "FDE ranges that differ: %" PRIu64 "\n", v->nrange);
    for (size_t i = 0; i < v->kept_range && i < show; i++) {
        const struct validate_sframe_coverage *c = &v->range[i];
        fprintf(out, "  %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64
                "), ", cfi_section_name(c->fde->section), c->fde->offset, c->fde->pc_begin, c->fde->pc_end);
        if (c->sfde)
            fprintf(out, ".sframe+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64
                    ") reaches out of it\n", c->sfde->offset, c->sfde->start,
                    c->sfde->start + c->sfde->size);
        else
            fprintf(out, "SFrame covers part of it only\n");
    }
    if (v->nalone)
        fprintf(out, "addresses SFrame covers and DWARF does not: %" PRIu64
                " ranges\n", v->nalone);
    for (size_t i = 0; i < v->kept_alone && i < show; i++)
        fprintf(out, "  [0x%" PRIx64 ",0x%" PRIx64 ") .sframe+0x%" PRIx64 "\n",
                v->alone[i].begin, v->alone[i].end, v->alone[i].sfde->offset);
    if (v->ndropped)
        fprintf(out, "DWARF FDEs with no SFrame FDE: %" PRIu64
                " (%" PRIu64 " with a reason in the DWARF)\n", v->ndropped,
                v->ndropped_reason);
    for (size_t i = 0; i < v->kept_dropped && i < show; i++) {
        const struct validate_sframe_coverage *c = &v->dropped[i];
        fprintf(out, "  %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64
                "): %s\n", cfi_section_name(c->fde->section), c->fde->offset, c->fde->pc_begin, c->fde->pc_end,
                c->reason ? c->reason
                          : "no reason in the rows (a .cfi_escape? an "
                            "object assembled without --gsframe?)");
    }
}

void validate_sframe_text(FILE *out, const char *path,
                          const struct validate_sframe_result *v, size_t show)
{
    char version[32] = "an empty .sframe";
    if (v->table->version)
        snprintf(version, sizeof version, "SFrame v%u", v->table->version);
    fprintf(out, "cfisem validate: %s --sframe: %s, %zu FDEs, %zu FREs; "
            "DWARF %zu FDEs (.eh_frame %zu); %u states per address\n",
            path, version, v->table->nfdes, v->table->nfres, v->nfdes,
            v->n_eh_frame, v->nstates);
    fprintf(out, "  %" PRIu64 " addresses of DWARF FDEs, %" PRIu64
            " covered by SFrame: %" PRIu64 " agree, %" PRIu64 " wrong\n",
            v->addresses, v->compared, v->agree, v->compared - v->agree);
    print_lists(out, v, show);
    uint64_t problems = validate_sframe_problems(v);
    fprintf(out, "\nresult: %" PRIu64 " problem%s (%" PRIu64 " wrong ranges, "
            "%" PRIu64 " FDE ranges, %" PRIu64 " ranges SFrame covers alone);"
            " %" PRIu64 " FDEs not in SFrame\n", problems,
            problems == 1 ? "" : "s", v->nwrong, v->nrange, v->nalone,
            v->ndropped);
}
