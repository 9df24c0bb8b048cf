/* SPDX-License-Identifier: MIT */
/* build.c — collecting CIEs and FDEs, then giving them the order and the
 * links the header promises: CIEs by (section, offset); FDEs by
 * (section, pc_begin, offset), each pointing at its CIE; the overlap list
 * and the lookup index. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void cfi_builder_init(struct cfi_builder *builder,
                      const struct cfi_arch *arch)
{
    memset(builder, 0, sizeof *builder);
    builder->arch = arch;
}

void cfi_builder_release(struct cfi_builder *builder)
{
    free(builder->cies);
    free(builder->fdes);
    cfi_builder_init(builder, builder->arch);
}

/* Grows *array (of `size`-byte elements) so that one more fits. */
static bool reserve_one(void **array, size_t count, size_t *cap, size_t size)
{
    if (count < *cap)
        return true;
    size_t new_cap = *cap ? *cap * 2 : 64;
    if (new_cap > SIZE_MAX / size)
        return false;
    void *grown = realloc(*array, new_cap * size);
    if (!grown)
        return false;
    *array = grown;
    *cap = new_cap;
    return true;
}

struct cfi_cie *cfi_builder_add_cie(struct cfi_builder *builder)
{
    if (!reserve_one((void **)&builder->cies, builder->ncies,
                     &builder->cies_cap, sizeof *builder->cies))
        return NULL;
    struct cfi_cie *cie = &builder->cies[builder->ncies++];
    memset(cie, 0, sizeof *cie);
    return cie;
}

struct cfi_fde *cfi_builder_add_fde(struct cfi_builder *builder)
{
    if (!reserve_one((void **)&builder->fdes, builder->nfdes,
                     &builder->fdes_cap, sizeof *builder->fdes))
        return NULL;
    struct cfi_fde *fde = &builder->fdes[builder->nfdes++];
    memset(fde, 0, sizeof *fde);
    return fde;
}

static int compare_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int compare_cies(const void *a, const void *b)
{
    const struct cfi_cie *x = a, *y = b;
    if (x->section != y->section)
        return x->section == CFI_EH_FRAME ? -1 : 1;
    return compare_u64(x->offset, y->offset);
}

static int compare_fdes(const void *a, const void *b)
{
    const struct cfi_fde *x = a, *y = b;
    if (x->section != y->section)
        return x->section == CFI_EH_FRAME ? -1 : 1;
    int by_pc = compare_u64(x->pc_begin, y->pc_begin);
    return by_pc ? by_pc : compare_u64(x->offset, y->offset);
}

static const struct cfi_cie *find_cie(const struct cfi_file *file,
                                      enum cfi_section section,
                                      uint64_t offset)
{
    struct cfi_cie key = {.section = section, .offset = offset};
    return bsearch(&key, file->cies, file->ncies, sizeof key, compare_cies);
}

/* fdes[lo .. hi) is one section's group. Fills reach[] (see struct
 * cfi_arena) and, when `overlaps` is non-NULL, the overlaps: each FDE that
 * begins before the furthest-reaching earlier FDE ends is paired with
 * that FDE. Returns the number of overlaps. Empty ranges take no part. */
static size_t scan_group(struct cfi_file *file, size_t lo, size_t hi,
                         uint64_t *reach, struct cfi_overlap *overlaps)
{
    size_t count = 0;
    uint64_t furthest = 0;
    const struct cfi_fde *reacher = NULL;
    for (size_t i = lo; i < hi; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        if (fde->pc_begin < fde->pc_end) {
            if (reacher && furthest > fde->pc_begin) {
                if (overlaps)
                    overlaps[count] = (struct cfi_overlap){reacher, fde};
                count++;
            }
            if (!reacher || fde->pc_end > furthest) {
                furthest = fde->pc_end;
                reacher = fde;
            }
        }
        reach[i] = furthest;
    }
    return count;
}

static enum cfi_status index_fdes(struct cfi_file *file,
                                  struct cfi_diag *diag)
{
    uint64_t *reach = cfi_arena_alloc(file->arena, file->nfdes, sizeof *reach);
    if (!reach)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    size_t count = scan_group(file, 0, file->n_eh_frame, reach, NULL) +
                   scan_group(file, file->n_eh_frame, file->nfdes, reach, NULL);
    struct cfi_overlap *overlaps =
        cfi_arena_alloc(file->arena, count, sizeof *overlaps);
    if (!overlaps)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    size_t first = scan_group(file, 0, file->n_eh_frame, reach, overlaps);
    scan_group(file, file->n_eh_frame, file->nfdes, reach, overlaps + first);
    file->overlaps = overlaps;
    file->noverlaps = count;
    file->arena->reach = reach;
    return CFI_OK;
}

enum cfi_status cfi_builder_finish(struct cfi_builder *builder,
                                   struct cfi_file *file,
                                   struct cfi_diag *diag)
{
    struct cfi_cie *cies = cfi_arena_copy(file->arena, builder->cies,
                                          builder->ncies * sizeof *cies);
    struct cfi_fde *fdes = cfi_arena_copy(file->arena, builder->fdes,
                                          builder->nfdes * sizeof *fdes);
    if (!cies || !fdes)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < builder->ncies; i++)
        cies[i].arch = file->arch;
    file->cies = cies;
    file->ncies = builder->ncies;
    file->fdes = fdes;
    file->nfdes = builder->nfdes;
    cfi_builder_release(builder);
    qsort(file->cies, file->ncies, sizeof *file->cies, compare_cies);
    file->n_eh_frame = 0;
    for (size_t i = 0; i < file->nfdes; i++) {
        struct cfi_fde *fde = &file->fdes[i];
        fde->cie = find_cie(file, fde->section, fde->cie_offset);
        if (!fde->cie)
            return cfi_fail(
                diag, CFI_E_MALFORMED, fde->offset,
                SECTION_MESSAGE(fde->section,
                                "CIE pointer does not point to a CIE"));
        file->n_eh_frame += fde->section == CFI_EH_FRAME;
    }
    qsort(file->fdes, file->nfdes, sizeof *file->fdes, compare_fdes);
    return index_fdes(file, diag);
}

static int compare_fde_offsets(const void *a, const void *b)
{
    const struct cfi_fde *x = a, *y = b;
    if (x->section != y->section)
        return x->section == CFI_EH_FRAME ? -1 : 1;
    return compare_u64(x->offset, y->offset);
}

/* Pointers are compared as pointers: both loaders point into the same
 * section bytes. */
static bool same_cie(const struct cfi_cie *a, const struct cfi_cie *b)
{
    return a->section == b->section && a->offset == b->offset &&
           a->length == b->length && a->version == b->version &&
           strcmp(a->augmentation, b->augmentation) == 0 &&
           a->augmentation_data == b->augmentation_data &&
           a->augmentation_data_len == b->augmentation_data_len &&
           a->code_align == b->code_align && a->data_align == b->data_align &&
           a->ra_column == b->ra_column &&
           a->address_size == b->address_size &&
           a->fde_encoding == b->fde_encoding &&
           a->lsda_encoding == b->lsda_encoding &&
           a->personality_encoding == b->personality_encoding &&
           a->personality == b->personality &&
           a->signal_frame == b->signal_frame &&
           a->instructions == b->instructions &&
           a->instructions_len == b->instructions_len &&
           a->instructions_offset == b->instructions_offset;
}

static bool same_fde(const struct cfi_fde *a, const struct cfi_fde *b)
{
    return a->section == b->section && a->offset == b->offset &&
           a->length == b->length && a->cie_offset == b->cie_offset &&
           a->pc_begin == b->pc_begin && a->pc_end == b->pc_end &&
           a->augmentation_data == b->augmentation_data &&
           a->augmentation_data_len == b->augmentation_data_len &&
           a->instructions == b->instructions &&
           a->instructions_len == b->instructions_len &&
           a->instructions_offset == b->instructions_offset &&
           a->instructions_addr == b->instructions_addr;
}

/* The first record where the two lists part; a missing record counts as
 * a difference at the other list's record. */
static enum cfi_status first_difference(const struct cfi_builder *ours,
                                        const struct cfi_builder *theirs,
                                        struct cfi_diag *diag)
{
    size_t ncies = ours->ncies > theirs->ncies ? ours->ncies : theirs->ncies;
    for (size_t i = 0; i < ncies; i++) {
        const struct cfi_cie *a = i < ours->ncies ? &ours->cies[i] : NULL;
        const struct cfi_cie *b = i < theirs->ncies ? &theirs->cies[i] : NULL;
        if (a && b && same_cie(a, b))
            continue;
        const struct cfi_cie *at = a ? a : b;
        return cfi_fail(
            diag, CFI_E_UNSUPPORTED, at->offset,
            at->section == CFI_DEBUG_FRAME
                ? "libdwarf: reads a CIE of .debug_frame differently"
                : "libdwarf: reads a CIE of .eh_frame differently");
    }
    size_t nfdes = ours->nfdes > theirs->nfdes ? ours->nfdes : theirs->nfdes;
    for (size_t i = 0; i < nfdes; i++) {
        const struct cfi_fde *a = i < ours->nfdes ? &ours->fdes[i] : NULL;
        const struct cfi_fde *b = i < theirs->nfdes ? &theirs->fdes[i] : NULL;
        if (a && b && same_fde(a, b))
            continue;
        const struct cfi_fde *at = a ? a : b;
        return cfi_fail(
            diag, CFI_E_UNSUPPORTED, at->offset,
            at->section == CFI_DEBUG_FRAME
                ? "libdwarf: reads an FDE of .debug_frame differently"
                : "libdwarf: reads an FDE of .eh_frame differently");
    }
    return CFI_OK;
}

enum cfi_status cfi_builder_compare(struct cfi_builder *ours,
                                    struct cfi_builder *theirs,
                                    struct cfi_diag *diag)
{
    struct cfi_builder *both[2] = {ours, theirs};
    for (size_t i = 0; i < 2; i++) {
        if (both[i]->ncies)
            qsort(both[i]->cies, both[i]->ncies, sizeof *both[i]->cies,
                  compare_cies);
        if (both[i]->nfdes)
            qsort(both[i]->fdes, both[i]->nfdes, sizeof *both[i]->fdes,
                  compare_fde_offsets);
    }
    return first_difference(ours, theirs, diag);
}
