/* SPDX-License-Identifier: MIT */
/* probe_pcs.c — the SDT probe PCs of files, as the PCs `cfisem diff`
 * asks (`--pcs stapsdt`): each probe of an FDE, as an innermost frame (a
 * tracer stopped there unwinds from that PC). */
#include <stdlib.h>
#include <string.h>

#include "trace.h"

struct trace_probe_file {
    char *path;
    struct trace_sites sites;
};

void trace_probe_pcs_free(struct trace_probe_pcs *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        free(p->files[i].path);
        trace_sites_free(&p->files[i].sites);
    }
    free(p->files);
    p->files = NULL;
    p->nfiles = 0;
}

enum cfi_status trace_probe_pcs_load(struct trace_probe_pcs *p,
                                     const char *const *paths, size_t n,
                                     size_t *failed, struct cfi_diag *diag)
{
    p->files = calloc(n ? n : 1, sizeof *p->files);
    p->nfiles = 0;
    if (!p->files)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct trace_probe_file *f = &p->files[p->nfiles];
        enum cfi_status status = trace_sites_read(paths[i], &f->sites, diag);
        f->path = status == CFI_OK ? strdup(paths[i]) : NULL;
        if (status != CFI_OK || !f->path) {
            if (status == CFI_OK)
                trace_sites_free(&f->sites);
            *failed = i;
            trace_probe_pcs_free(p);
            return status != CFI_OK ? status
                                    : cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                                               "out of memory");
        }
        p->nfiles++;
    }
    return CFI_OK;
}

static bool push(struct engine_pc **pcs, size_t *count, size_t *capacity,
                 uint64_t pc)
{
    if (*count == *capacity) {
        size_t grown_capacity = *capacity ? 2 * *capacity : 16;
        struct engine_pc *grown = realloc(*pcs, grown_capacity * sizeof *grown);
        if (!grown)
            return false;
        *pcs = grown;
        *capacity = grown_capacity;
    }
    (*pcs)[(*count)++] = (struct engine_pc){pc, false};
    return true;
}

enum cfi_status trace_probe_pcs_of_fde(void *env, const struct sem_file_il *il,
                                       size_t index, struct engine_pc **pcs,
                                       size_t *count, size_t *capacity)
{
    const struct trace_probe_pcs *p = env;
    const struct cfi_file *file = il->file;
    const struct cfi_fde *fde = &file->fdes[index];
    for (size_t i = 0; i < p->nfiles; i++) {
        if (!file->path || strcmp(p->files[i].path, file->path))
            continue;
        const struct trace_sites *sites = &p->files[i].sites;
        for (size_t s = 0; s < sites->n; s++) {
            uint64_t pc = sites->sites[s].pc;
            if (cfi_file_lookup(file, pc) == fde &&
                !push(pcs, count, capacity, pc))
                return CFI_E_NOMEM;
        }
    }
    return CFI_OK;
}
