/* SPDX-License-Identifier: MIT */
/* cfi_bytes.c — target 1: raw CIE and FDE records (targets.h gives the
 * header). The section goes through our own parser (cfi_file_from_section)
 * and every FDE through the translator, both engines and the printers. */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engines/engines.h"
#include "interp/interp.h"
#include "semantics/sem.h"

struct header {
    uint8_t flags;
    uint16_t pc_offset;
    uint32_t seed;
    uint32_t known;
    uint8_t fault_words;
    uint64_t section_addr;
};

static struct header read_header(const uint8_t *data)
{
    return (struct header){
        .flags = data[0],
        .pc_offset = (uint16_t)cfi_load_le(data + 1, 2),
        .seed = (uint32_t)cfi_load_le(data + 3, 4),
        .known = (uint32_t)cfi_load_le(data + 7, 4),
        .fault_words = data[11],
        .section_addr = cfi_load_le(data + 12, 4),
    };
}

/* Everything one input's requests share. */
struct run {
    const struct header *header;
    const struct cfi_file *file;
    const struct sem_file_il *file_il;  /* NULL when it could not be built */
    struct engine_memory *memory;
    struct fuzz_report *report;
    struct cfi_frame frames[2];
};

static enum fuzz_result compare(struct run *run, const char *what,
                                const struct cfi_request *request,
                                const char *name_a, const char *name_b)
{
    if (fuzz_frames_agree(&run->frames[0], &run->frames[1]))
        return FUZZ_OK;
    return fuzz_disagree(run->report, what, request, name_a, &run->frames[0],
                         name_b, &run->frames[1]);
}

/* One request against one FDE: interp and the IL evaluator on that FDE,
 * then on the whole file (the lookup included). */
static enum fuzz_result ask(struct run *run, const struct cfi_fde *fde,
                            uint64_t pc, bool caller)
{
    const struct header *h = run->header;
    struct cfi_regs callee;
    fuzz_make_regs(h->seed ^ pc, h->known, h->flags & FUZZ_CFI_HIGH_REGS,
                   h->flags & FUZZ_CFI_UNDEFINED, pc, &callee);
    struct cfi_request request = {pc, caller, &callee,
                                  engine_memory_reader(run->memory), 0};
    interp_unwind_fde(fde, &request, &run->frames[0]);
    sem_unwind_fde(fde, &request, &run->frames[1]);
    enum fuzz_result result =
        compare(run, "interp_unwind_fde vs sem_unwind_fde", &request,
                "interp", "il");
    if (result != FUZZ_OK || !run->file_il)
        return result;
    interp_unwind(run->file, &request, &run->frames[0]);
    sem_unwind(run->file_il, &request, &run->frames[1]);
    return compare(run, "interp_unwind vs sem_unwind", &request, "interp",
                   "il");
}

/* The ranges cover [pc_begin, pc_end) in order, none empty, no gap. */
static enum fuzz_result check_ranges(const struct sem_fde_il *il,
                                     struct fuzz_report *report)
{
    const struct cfi_fde *fde = il->fde;
    uint64_t at = fde->pc_begin;
    for (size_t i = 0; i < il->nranges; i++) {
        const struct sem_range *range = &il->ranges[i];
        if (range->begin != at || range->end <= range->begin) {
            snprintf(report->text, sizeof report->text,
                     "FDE at 0x%" PRIx64 ": range %zu is [0x%" PRIx64
                     ",0x%" PRIx64 "), expected to start at 0x%" PRIx64 "\n",
                     fde->offset, i, range->begin, range->end, at);
            return FUZZ_DISAGREE;
        }
        at = range->end;
    }
    bool empty = il->nranges == 0 && fde->pc_end <= fde->pc_begin;
    if (at != fde->pc_end && !empty) {
        snprintf(report->text, sizeof report->text,
                 "FDE at 0x%" PRIx64 ": ranges end at 0x%" PRIx64
                 ", the FDE at 0x%" PRIx64 "\n", fde->offset, at, fde->pc_end);
        return FUZZ_DISAGREE;
    }
    return FUZZ_OK;
}

/* print → parse → print is the identity, on every range. */
static enum fuzz_result check_round_trip(const struct sem_fde_il *il,
                                         struct sem_arena *arena,
                                         struct fuzz_report *report)
{
    enum fuzz_result result = FUZZ_OK;
    const struct cfi_arch *arch = il->fde->cie->arch;
    for (size_t i = 0; i < il->nranges && result == FUZZ_OK; i++) {
        char *first = sem_range_text(arch, &il->ranges[i]);
        if (!first)
            return FUZZ_SETUP;
        struct sem_range parsed;
        struct cfi_diag diag;
        char *second = NULL;
        if (sem_parse_range_text(first, arch, arena, &parsed, &diag) !=
            CFI_OK) {
            snprintf(report->text, sizeof report->text,
                     "printed IL does not parse back (column %" PRIu64
                     ": %s):\n  %s", diag.offset, diag.message, first);
            result = FUZZ_DISAGREE;
        } else if (!(second = sem_range_text(arch, &parsed))) {
            result = FUZZ_SETUP;
        } else if (strcmp(first, second) != 0) {
            snprintf(report->text, sizeof report->text,
                     "print, parse, print differ:\n  %s\n  %s", first, second);
            result = FUZZ_DISAGREE;
        }
        free(first);
        free(second);
    }
    return result;
}

/* Translation, its invariants, and the three requests of one FDE. */
static enum fuzz_result check_fde(struct run *run, const struct cfi_fde *fde,
                                  struct sem_arena *arena)
{
    struct sem_fde_il il;
    struct cfi_diag diag;
    enum fuzz_result result = FUZZ_OK;
    if (sem_translate_fde(fde, arena, &il, &diag) == CFI_OK) {
        result = check_ranges(&il, run->report);
        if (result == FUZZ_OK)
            result = check_round_trip(&il, arena, run->report);
    }
    const struct header *h = run->header;
    uint64_t pc = h->pc_offset == FUZZ_CFI_PC_END
                      ? fde->pc_end
                      : fde->pc_begin + h->pc_offset;
    if (result == FUZZ_OK)
        result = ask(run, fde, pc, h->flags & FUZZ_CFI_CALLER);
    if (result == FUZZ_OK)
        result = ask(run, fde, fde->pc_begin, false);
    if (result == FUZZ_OK)
        result = ask(run, fde, fde->pc_end, true);
    return result;
}

static enum fuzz_result check_file(struct run *run)
{
    const struct cfi_file *file = run->file;
    const struct header *h = run->header;
    /* The faulting window sits above the rsp every request gets (its
     * seed is mixed with the PC, so only the first FDE's is known here:
     * the window is placed for that one). */
    if (h->flags & FUZZ_CFI_FAULT_WINDOW && file->nfdes > 0) {
        struct cfi_regs regs;
        fuzz_make_regs(h->seed ^ file->fdes[0].pc_begin, h->known, false,
                       false, 0, &regs);
        uint64_t at = regs.value[CFI_REG_RSP] + 8u * h->fault_words;
        engine_memory_add_fault(run->memory, at, at + 64);
    }
    struct sem_arena *arena = sem_arena_new();
    if (!arena)
        return FUZZ_SETUP;
    enum fuzz_result result = FUZZ_OK;
    size_t count = file->nfdes < FUZZ_MAX_FDES ? file->nfdes : FUZZ_MAX_FDES;
    for (size_t i = 0; i < count && result == FUZZ_OK; i++)
        result = check_fde(run, &file->fdes[i], arena);
    sem_arena_free(arena);
    return result;
}

enum fuzz_result fuzz_one_cfi_bytes(const uint8_t *data, size_t size,
                                    struct fuzz_report *report)
{
    report->text[0] = '\0';
    if (size < FUZZ_CFI_HEADER_SIZE)
        return FUZZ_OK;
    struct header h = read_header(data);
    const uint8_t *section = data + FUZZ_CFI_HEADER_SIZE;
    size_t section_size = size - FUZZ_CFI_HEADER_SIZE;
    struct cfi_file *file;
    struct cfi_diag diag;
    enum cfi_section kind = h.flags & FUZZ_CFI_DEBUG_FRAME ? CFI_DEBUG_FRAME
                                                           : CFI_EH_FRAME;
    if (cfi_file_from_section(section, section_size, kind, h.section_addr,
                              &file, &diag) != CFI_OK)
        return FUZZ_OK;
    struct run *run = calloc(1, sizeof *run);
    struct engine_memory *memory =
        engine_memory_new(!(h.flags & FUZZ_CFI_NO_SYNTHETIC), h.seed);
    if (!run || !memory) {
        free(run);
        engine_memory_free(memory);
        cfi_file_close(file);
        return FUZZ_SETUP;
    }
    engine_memory_map_bytes(memory, h.section_addr, section, section_size);
    struct sem_file_il *file_il = NULL;
    if (sem_file_il_build(file, &file_il) != CFI_OK)
        file_il = NULL;
    *run = (struct run){.header = &h, .file = file, .file_il = file_il,
                        .memory = memory, .report = report};
    enum fuzz_result result = check_file(run);
    sem_file_il_free(file_il);
    free(run);
    engine_memory_free(memory);
    cfi_file_close(file);
    return result;
}
