/* SPDX-License-Identifier: MIT */
/* read.c — parsing an .sframe section (sframe.h), and finding it in an
 * ELF file's section headers. */
#include "sframe.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 28
#define FDE_SIZE_V1 17
#define FDE_SIZE_V2 20

static enum cfi_status malformed(struct cfi_diag *diag, uint64_t offset,
                                 const char *message)
{
    return cfi_fail(diag, CFI_E_MALFORMED, offset, message);
}

/* The parts of the header the rest of the section is read with. */
struct layout {
    uint32_t nfdes, nfres, fre_len;
    uint64_t fdes_at;         /* section offset of the FDE sub-section */
    uint64_t fres_at;         /* of the FRE sub-section */
    unsigned fde_size;
};

static enum cfi_status read_preamble(const uint8_t *b, size_t size,
                                     struct sframe_table *t,
                                     struct cfi_diag *diag)
{
    if (size < HEADER_SIZE)
        return malformed(diag, 0, ".sframe: section too short for its header");
    if (cfi_load_le(b, 2) != SFRAME_MAGIC)
        return malformed(diag, 0, ".sframe: bad magic");
    t->version = b[2];
    t->flags = b[3];
    t->abi = b[4];
    t->fixed_fp_offset = (int8_t)b[5];
    t->fixed_ra_offset = (int8_t)b[6];
    if (t->version != 1 && t->version != 2)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, 2,
                        ".sframe: unsupported version");
    uint8_t known = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER |
                    (t->version == 2 ? SFRAME_F_FDE_FUNC_START_PCREL : 0);
    if (t->flags & ~known)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, 3,
                        ".sframe: unknown flags");
    if (t->abi != SFRAME_ABI_AMD64)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, 4,
                        ".sframe: ABI/arch other than AMD64");
    return CFI_OK;
}

static enum cfi_status read_header(const uint8_t *b, size_t size,
                                   struct sframe_table *t, struct layout *l,
                                   struct cfi_diag *diag)
{
    enum cfi_status status = read_preamble(b, size, t, diag);
    if (status != CFI_OK)
        return status;
    uint64_t end = HEADER_SIZE + (uint64_t)b[7];
    l->nfdes = (uint32_t)cfi_load_le(b + 8, 4);
    l->nfres = (uint32_t)cfi_load_le(b + 12, 4);
    l->fre_len = (uint32_t)cfi_load_le(b + 16, 4);
    l->fdes_at = end + cfi_load_le(b + 20, 4);
    l->fres_at = end + cfi_load_le(b + 24, 4);
    l->fde_size = t->version == 1 ? FDE_SIZE_V1 : FDE_SIZE_V2;
    if (end > size)
        return malformed(diag, 7, ".sframe: auxiliary header past the end");
    if (l->fdes_at > size ||
        (uint64_t)l->nfdes * l->fde_size > size - l->fdes_at)
        return malformed(diag, 20, ".sframe: FDEs past the end");
    if (l->fres_at > size || l->fre_len > size - l->fres_at)
        return malformed(diag, 24, ".sframe: FREs past the end");
    /* each FRE takes at least 2 bytes */
    if (l->nfres > l->fre_len / 2)
        return malformed(diag, 12, ".sframe: more FREs than their bytes hold");
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* FREs                                                                 */
/* ------------------------------------------------------------------ */

static int64_t load_signed(const uint8_t *p, unsigned size)
{
    uint64_t v = cfi_load_le(p, size);
    if (size < 8 && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    return (int64_t)v;
}

/* One FRE at section offset `at` (inside the FRE sub-section, which ends
 * at `end`); *next is the offset after it. */
static enum cfi_status read_fre(const uint8_t *b, uint64_t at, uint64_t end,
                                const struct sframe_table *t,
                                const struct sframe_fde *fde,
                                struct sframe_fre *fre, uint64_t *next,
                                struct cfi_diag *diag)
{
    static const unsigned address_sizes[] = {1, 2, 4};
    unsigned address_size = address_sizes[fde->fre_type];
    if (end - at < address_size + 1)
        return malformed(diag, at, ".sframe: FRE past the end");
    memset(fre, 0, sizeof *fre);
    fre->offset = at;
    fre->start = (uint32_t)cfi_load_le(b + at, address_size);
    uint8_t info = b[at + address_size];
    unsigned count = (info >> 1) & 0xf, size_code = (info >> 5) & 3;
    if (size_code > 2)
        return malformed(diag, at, ".sframe: bad FRE offset size");
    unsigned offset_size = 1u << size_code;
    /* CFA, then RA unless the header fixes it, then FP */
    unsigned most = t->fixed_ra_offset != 0 ? 2 : 3;
    if (count < 1 || count > most)
        return malformed(diag, at, ".sframe: too many or no FRE offsets");
    uint64_t pos = at + address_size + 1;
    if (end - pos < (uint64_t)count * offset_size)
        return malformed(diag, at, ".sframe: FRE offsets past the end");
    fre->cfa_from_sp = info & 1;
    fre->cfa_offset = (int32_t)load_signed(b + pos, offset_size);
    unsigned index = 1;
    fre->ra_tracked = t->fixed_ra_offset != 0;
    fre->ra_offset = t->fixed_ra_offset;
    if (!fre->ra_tracked && count > index) {
        fre->ra_tracked = true;
        fre->ra_offset = (int32_t)load_signed(b + pos + offset_size * index++,
                                              offset_size);
    }
    if (count > index) {
        fre->fp_tracked = true;
        fre->fp_offset = (int32_t)load_signed(b + pos + offset_size * index,
                                              offset_size);
    } else if (t->fixed_fp_offset != 0) {
        fre->fp_tracked = true;
        fre->fp_offset = t->fixed_fp_offset;
    }
    *next = pos + (uint64_t)count * offset_size;
    return CFI_OK;
}

/* The FREs of one FDE, appended at t->fres[t->nfres..]. Their start
 * addresses must increase and lie in the function (or the block). */
static enum cfi_status read_fres(const uint8_t *b, const struct layout *l,
                                 struct sframe_table *t, uint64_t fre_off,
                                 struct sframe_fde *fde, struct cfi_diag *diag)
{
    if (fre_off > l->fre_len)
        return malformed(diag, fde->offset, ".sframe: FDE's FREs past the end");
    if (fde->nfres > l->nfres - t->nfres)
        return malformed(diag, fde->offset, ".sframe: more FREs than the "
                         "header counts");
    uint64_t at = l->fres_at + fre_off, end = l->fres_at + l->fre_len;
    uint64_t limit = fde->pc_mask ? fde->block_size : fde->size;
    fde->first_fre = t->nfres;
    for (size_t i = 0; i < fde->nfres; i++) {
        struct sframe_fre *fre = &t->fres[t->nfres];
        enum cfi_status status = read_fre(b, at, end, t, fde, fre, &at, diag);
        if (status != CFI_OK)
            return status;
        if (i > 0 && fre->start <= fre[-1].start)
            return malformed(diag, fre->offset,
                             ".sframe: FRE start addresses do not increase");
        if (fre->start > limit)
            return malformed(diag, fre->offset,
                             ".sframe: FRE starts past its function");
        t->nfres++;
    }
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* FDEs                                                                 */
/* ------------------------------------------------------------------ */

static enum cfi_status read_fde(const uint8_t *b, const struct layout *l,
                                struct sframe_table *t, size_t index,
                                struct cfi_diag *diag)
{
    uint64_t at = l->fdes_at + (uint64_t)index * l->fde_size;
    const uint8_t *p = b + at;
    struct sframe_fde *fde = &t->fdes[index];
    memset(fde, 0, sizeof *fde);
    fde->offset = at;
    int64_t start = load_signed(p, 4);
    uint64_t base = t->addr + ((t->flags & SFRAME_F_FDE_FUNC_START_PCREL) ? at
                                                                           : 0);
    fde->start = base + (uint64_t)start;
    fde->size = (uint32_t)cfi_load_le(p + 4, 4);
    uint64_t fre_off = cfi_load_le(p + 8, 4);
    fde->nfres = (size_t)cfi_load_le(p + 12, 4);
    uint8_t info = p[16];
    fde->fre_type = info & 0xf;
    fde->pc_mask = (info >> 4) & 1;
    fde->block_size = t->version == 1 ? SFRAME_V1_BLOCK_SIZE : p[17];
    if (fde->fre_type > 2)
        return malformed(diag, at, ".sframe: bad FRE type");
    if (fde->pc_mask && fde->block_size == 0)
        return malformed(diag, at, ".sframe: pc-mask FDE with no block size");
    if (fde->size > UINT64_MAX - fde->start)
        return malformed(diag, at, ".sframe: function range wraps around");
    return read_fres(b, l, t, fre_off, fde, diag);
}

static int by_start(const void *a, const void *b)
{
    const struct sframe_fde *x = *(const struct sframe_fde *const *)a;
    const struct sframe_fde *y = *(const struct sframe_fde *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

enum cfi_status sframe_read(const uint8_t *bytes, size_t size, uint64_t addr,
                            struct sframe_table **table, struct cfi_diag *diag)
{
    *table = NULL;
    struct sframe_table *t = calloc(1, sizeof *t);
    if (!t)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    t->addr = addr;
    t->size = size;
    struct layout l = {0};
    /* ld writes an empty section when its inputs' .sframe had no FDE
     * (gas leaves a header alone): a table with no FDE, version 0 */
    enum cfi_status status = size == 0 ? CFI_OK
                                       : read_header(bytes, size, t, &l, diag);
    if (status == CFI_OK) {
        t->fdes = calloc(l.nfdes ? l.nfdes : 1, sizeof *t->fdes);
        t->fres = calloc(l.nfres ? l.nfres : 1, sizeof *t->fres);
        t->by_start = calloc(l.nfdes ? l.nfdes : 1, sizeof *t->by_start);
        if (!t->fdes || !t->fres || !t->by_start)
            status = cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                              "out of memory");
    }
    for (size_t i = 0; status == CFI_OK && i < l.nfdes; i++) {
        status = read_fde(bytes, &l, t, i, diag);
        t->nfdes += status == CFI_OK;
    }
    if (status == CFI_OK && t->nfres != l.nfres)
        status = malformed(diag, 12, ".sframe: the FDEs do not have as many "
                           "FREs as the header counts");
    if (status != CFI_OK) {
        sframe_free(t);
        return status;
    }
    for (size_t i = 0; i < t->nfdes; i++)
        t->by_start[i] = &t->fdes[i];
    qsort(t->by_start, t->nfdes, sizeof *t->by_start, by_start);
    *table = t;
    return CFI_OK;
}

void sframe_free(struct sframe_table *table)
{
    if (!table)
        return;
    free(table->fdes);
    free(table->fres);
    free(table->by_start);
    free(table);
}

/* ------------------------------------------------------------------ */
/* Finding .sframe in the file                                          */
/* ------------------------------------------------------------------ */

static bool in_image(const struct cfi_file *file, uint64_t offset,
                     uint64_t size)
{
    return offset <= file->image_size && size <= file->image_size - offset;
}

/* The section header of ".sframe", from file->image (already checked by
 * cfi_file_open to be a 64-bit little-endian x86-64 ELF file). */
static bool find_section(const struct cfi_file *file, Elf64_Shdr *found)
{
    Elf64_Ehdr header;
    memcpy(&header, file->image, sizeof header);
    uint64_t count = header.e_shnum, entsize = header.e_shentsize;
    if (header.e_shoff == 0 || entsize < sizeof(Elf64_Shdr) || count == 0 ||
        count > file->image_size / entsize ||
        !in_image(file, header.e_shoff, count * entsize) ||
        header.e_shstrndx >= count)
        return false;
    Elf64_Shdr names;
    memcpy(&names, file->image + header.e_shoff + header.e_shstrndx * entsize,
           sizeof names);
    if (!in_image(file, names.sh_offset, names.sh_size))
        return false;
    const char *strings = (const char *)file->image + names.sh_offset;
    for (uint64_t i = 0; i < count; i++) {
        memcpy(found, file->image + header.e_shoff + i * entsize,
               sizeof *found);
        if (found->sh_name < names.sh_size &&
            names.sh_size - found->sh_name > 7 &&
            memcmp(strings + found->sh_name, ".sframe", 8) == 0)
            return true;
    }
    return false;
}

enum cfi_status sframe_open(const struct cfi_file *file,
                            struct sframe_table **table, struct cfi_diag *diag)
{
    *table = NULL;
    Elf64_Shdr shdr;
    if (file->image_size < sizeof(Elf64_Ehdr) || !find_section(file, &shdr))
        return cfi_fail(diag, CFI_E_NO_CFI, CFI_NO_OFFSET,
                        "no .sframe section");
    Elf64_Ehdr header;
    memcpy(&header, file->image, sizeof header);
    if (header.e_type == ET_REL)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        ".sframe: a relocatable object's is not read (its "
                        "function starts need relocating)");
    if (shdr.sh_type == SHT_NOBITS || !in_image(file, shdr.sh_offset,
                                                shdr.sh_size))
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        ".sframe: section past end of file");
    return sframe_read(file->image + shdr.sh_offset, (size_t)shdr.sh_size,
                       shdr.sh_addr, table, diag);
}
