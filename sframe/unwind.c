/* SPDX-License-Identifier: MIT */
/* unwind.c — lookup and one frame unwound with SFrame (sframe.h). */
#include "sframe.h"

#include <string.h>

const struct sframe_fde *sframe_lookup(const struct sframe_table *table,
                                       uint64_t pc)
{
    /* the FDEs with the greatest start at or before pc; an FDE that
     * starts earlier and reaches over a later one is not looked at */
    size_t lo = 0, hi = table->nfdes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table->by_start[mid]->start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i > 0; i--) {
        const struct sframe_fde *fde = table->by_start[i - 1];
        if (fde->start != table->by_start[lo - 1]->start)
            break;
        if (pc - fde->start < fde->size)
            return fde;
    }
    return NULL;
}

const struct sframe_fre *sframe_fre_at(const struct sframe_table *table,
                                       const struct sframe_fde *fde,
                                       uint64_t pc, uint64_t *end)
{
    uint64_t offset = pc - fde->start, base = fde->start;
    uint64_t limit = fde->size;
    if (fde->pc_mask) {
        base = pc - offset % fde->block_size;
        offset %= fde->block_size;
        limit = fde->block_size;
    }
    const struct sframe_fre *fres = table->fres + fde->first_fre;
    const struct sframe_fre *found = NULL;
    size_t i = 0;
    for (; i < fde->nfres && fres[i].start <= offset; i++)
        found = &fres[i];
    uint64_t stop = i < fde->nfres ? fres[i].start : limit;
    *end = base + stop;
    if (*end > fde->start + fde->size)
        *end = fde->start + fde->size;
    return found;
}

static enum cfi_status fail(struct cfi_frame *frame, enum cfi_status status,
                            const char *message, int reg)
{
    frame->status = status;
    frame->diag = (struct cfi_diag){status, message, CFI_NO_OFFSET, reg};
    return status;
}

/* The 8 bytes at CFA + offset into the caller's `reg`. */
static enum cfi_status read_saved(const struct cfi_request *request,
                                  struct cfi_frame *frame, unsigned reg,
                                  int32_t offset)
{
    uint64_t value;
    if (request->memory.read(request->memory.env,
                             frame->cfa + (uint64_t)(int64_t)offset, 8,
                             &value) != CFI_OK)
        return fail(frame, CFI_E_MEMORY, "memory fault", -1);
    cfi_regs_set(&frame->caller, reg, value);
    return CFI_OK;
}

enum cfi_status sframe_unwind(const struct sframe_table *table,
                              const struct cfi_request *request,
                              struct cfi_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    cfi_regs_clear(&frame->caller);
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const struct sframe_fde *fde = sframe_lookup(table, pc);
    uint64_t end;
    const struct sframe_fre *fre = fde ? sframe_fre_at(table, fde, pc, &end)
                                       : NULL;
    if (!fre)
        return fail(frame, CFI_E_NO_FDE, "no SFrame FDE or FRE covers the "
                    "address", -1);
    unsigned base = fre->cfa_from_sp ? CFI_REG_RSP : CFI_REG_RBP;
    if (request->callee->status[base] != CFI_REG_VALUE)
        return fail(frame, CFI_E_REG_UNKNOWN, "register value unknown",
                    (int)base);
    frame->cfa = request->callee->value[base] + (uint64_t)(int64_t)fre->cfa_offset;
    cfi_regs_set(&frame->caller, CFI_REG_RSP, frame->cfa);
    enum cfi_status status = CFI_OK;
    if (fre->fp_tracked)
        status = read_saved(request, frame, CFI_REG_RBP, fre->fp_offset);
    else {
        frame->caller.status[CFI_REG_RBP] = request->callee->status[CFI_REG_RBP];
        frame->caller.value[CFI_REG_RBP] = request->callee->value[CFI_REG_RBP];
    }
    if (status == CFI_OK && fre->ra_tracked)
        status = read_saved(request, frame, CFI_REG_RIP, fre->ra_offset);
    else if (status == CFI_OK)
        frame->caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    if (status == CFI_OK)
        frame->status = CFI_OK;
    return status;
}
