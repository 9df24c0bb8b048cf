/* SPDX-License-Identifier: MIT */
/* elf.c — target 2: a whole ELF file through the loader and the paths of
 * `cfisem il` (the IL of every FDE, in the three formats) and `cfisem
 * unwind` (both engines, compared, at the rows' boundaries). */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>

#include "engines/engines.h"
#include "interp/interp.h"
#include "semantics/sem.h"

enum { STATES = 4 };

static void print_all(FILE *sink, const struct sem_file_il *il,
                      enum sem_format format)
{
    struct sem_printer *printer =
        sem_printer_new(sink, format, "fuzz", il->file->arch);
    if (!printer)
        return;
    for (size_t i = 0; i < il->nfdes; i++) {
        if (il->status[i] == CFI_OK)
            sem_printer_fde(printer, &il->fdes[i]);
        else
            sem_printer_fde_error(printer, &il->file->fdes[i], &il->diags[i]);
    }
    sem_printer_end(printer);
}

struct run {
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct fuzz_report *report;
    size_t requests;
    struct cfi_frame frames[2];
};

/* State k of a seed, as tests/check_agreement.c makes them: every
 * register 0-16 known, or (k == 3) only rsp, rbp and rip; k == 2 also
 * gives registers 17-127. */
static void make_state(uint64_t seed, unsigned k, uint64_t pc,
                       struct cfi_regs *regs)
{
    uint32_t known = k == 3 ? (1u << CFI_REG_RSP | 1u << CFI_REG_RBP |
                               1u << CFI_REG_RIP)
                            : (1u << CFI_NGPRS) - 1;
    fuzz_make_regs(seed * STATES + k, known, k == 2, k == 1, pc, regs);
}

static enum fuzz_result compare_at(struct run *run, uint64_t pc, bool caller,
                                   uint64_t seed)
{
    for (unsigned k = 0; k < STATES; k++) {
        if (run->requests++ >= FUZZ_ELF_MAX_REQUESTS)
            return FUZZ_OK;
        struct engine_memory *memory = engine_memory_new(k != 1, seed + k);
        if (!memory)
            return FUZZ_SETUP;
        engine_memory_map_file(memory, run->file);
        struct cfi_regs callee;
        make_state(seed ^ pc, k, pc, &callee);
        struct cfi_request request = {pc, caller, &callee,
                                      engine_memory_reader(memory), 0};
        interp_unwind(run->file, &request, &run->frames[0]);
        sem_unwind(run->il, &request, &run->frames[1]);
        bool agree = fuzz_frames_agree(&run->frames[0], &run->frames[1]);
        enum fuzz_result result = FUZZ_OK;
        if (!agree)
            result = fuzz_disagree(run->report, "interp_unwind vs sem_unwind",
                                   &request, "interp", &run->frames[0], "il",
                                   &run->frames[1]);
        engine_memory_free(memory);
        if (result != FUZZ_OK)
            return result;
    }
    return FUZZ_OK;
}

/* Every row's first address (innermost) and end (caller frame: its last
 * address), a failed FDE at its start; then outside every FDE. */
static enum fuzz_result compare_file(struct run *run)
{
    const struct cfi_file *file = run->file;
    const struct sem_file_il *il = run->il;
    enum fuzz_result result = FUZZ_OK;
    for (size_t i = 0; i < file->nfdes && result == FUZZ_OK &&
                       run->requests < FUZZ_ELF_MAX_REQUESTS; i++) {
        if (il->status[i] != CFI_OK) {
            result = compare_at(run, file->fdes[i].pc_begin, false, i);
            continue;
        }
        const struct sem_fde_il *fde = &il->fdes[i];
        for (size_t r = 0; r < fde->nranges && result == FUZZ_OK; r++) {
            result = compare_at(run, fde->ranges[r].begin, false, i * 7 + r);
            if (result == FUZZ_OK)
                result = compare_at(run, fde->ranges[r].end, true, i * 7 + r);
        }
    }
    run->requests = 0;   /* the two outside requests always run */
    if (result == FUZZ_OK)
        result = compare_at(run, 0, false, 1);
    if (result == FUZZ_OK)
        result = compare_at(run, UINT64_MAX, true, 2);
    return result;
}

enum fuzz_result fuzz_one_elf(struct fuzz_context *context,
                              const uint8_t *data, size_t size,
                              struct fuzz_report *report)
{
    report->text[0] = '\0';
    if (fuzz_context_write(context, data, size) != FUZZ_OK)
        return FUZZ_SETUP;
    struct cfi_file *file;
    struct cfi_diag diag;
    if (cfi_file_open(context->path, &file, &diag) != CFI_OK)
        return FUZZ_OK;
    struct sem_file_il *il;
    if (sem_file_il_build(file, &il) != CFI_OK) {
        cfi_file_close(file);
        return FUZZ_SETUP;
    }
    print_all(context->sink, il, SEM_FORMAT_TEXT);
    print_all(context->sink, il, SEM_FORMAT_JSON);
    print_all(context->sink, il, SEM_FORMAT_READELF);
    struct run *run = calloc(1, sizeof *run);
    enum fuzz_result result = FUZZ_SETUP;
    if (run) {
        *run = (struct run){.file = file, .il = il, .report = report};
        result = compare_file(run);
    }
    free(run);
    sem_file_il_free(il);
    cfi_file_close(file);
    return result;
}
