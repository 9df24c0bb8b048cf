/* SPDX-License-Identifier: MIT */
/* oracles.c — target 3: the outside parsers on a (mutated) ELF file or
 * frame section, chosen by the input's first byte; and the little ELF
 * reading the oracles need without going through cfi/. */
#include "internal.h"

#include <elf.h>
#include <string.h>

/* Every field read is checked against the image's size. */
static bool read_ehdr(const uint8_t *image, size_t size, Elf64_Ehdr *ehdr)
{
    if (size < sizeof *ehdr)
        return false;
    memcpy(ehdr, image, sizeof *ehdr);
    return memcmp(ehdr->e_ident, ELFMAG, SELFMAG) == 0 &&
           ehdr->e_ident[EI_CLASS] == ELFCLASS64 &&
           ehdr->e_ident[EI_DATA] == ELFDATA2LSB &&
           ehdr->e_phentsize == sizeof(Elf64_Phdr);
}

size_t fuzz_elf_phnum(const uint8_t *image, size_t size)
{
    Elf64_Ehdr ehdr;
    if (!read_ehdr(image, size, &ehdr) || ehdr.e_phoff > size)
        return 0;
    size_t fit = (size - ehdr.e_phoff) / sizeof(Elf64_Phdr);
    return ehdr.e_phnum < fit ? ehdr.e_phnum : fit;
}

bool fuzz_elf_phdr(const uint8_t *image, size_t size, size_t index,
                   struct fuzz_phdr *phdr)
{
    if (index >= fuzz_elf_phnum(image, size))
        return false;
    Elf64_Ehdr ehdr;
    read_ehdr(image, size, &ehdr);
    Elf64_Phdr raw;
    memcpy(&raw, image + ehdr.e_phoff + index * sizeof raw, sizeof raw);
    *phdr = (struct fuzz_phdr){raw.p_type, (raw.p_flags & PF_X) != 0,
                               raw.p_offset, raw.p_vaddr, raw.p_filesz,
                               raw.p_memsz};
    return true;
}

/* The initial locations of .eh_frame_hdr's search table (version 1,
 * datarel|sdata4 entries, the encoding every linker writes), spread over
 * the table. */
static size_t table_pcs(const uint8_t *image, size_t size,
                        const struct fuzz_phdr *hdr, uint64_t *pcs, size_t max)
{
    if (hdr->offset > size || size - hdr->offset < 12 || hdr->filesz < 12)
        return 0;
    const uint8_t *bytes = image + hdr->offset;
    size_t avail = size - hdr->offset < hdr->filesz ? size - hdr->offset
                                                    : hdr->filesz;
    if (bytes[0] != 1 || bytes[3] != (CFI_PE_DATAREL | CFI_PE_SDATA4))
        return 0;
    uint64_t count = cfi_load_le(bytes + 8, 4);
    if (count > (avail - 12) / 8)
        count = (avail - 12) / 8;
    size_t n = 0;
    uint64_t stride = count / max + 1;
    for (uint64_t i = 0; i < count && n < max; i += stride) {
        int32_t loc = (int32_t)(uint32_t)cfi_load_le(bytes + 12 + 8 * i, 4);
        pcs[n++] = hdr->vaddr + (uint64_t)(int64_t)loc;
    }
    return n;
}

size_t fuzz_elf_pcs(const uint8_t *image, size_t size, uint64_t *pcs,
                    size_t max)
{
    size_t n = 0, phnum = fuzz_elf_phnum(image, size);
    struct fuzz_phdr phdr;
    for (size_t i = 0; i < phnum && n < max / 2; i++)
        if (fuzz_elf_phdr(image, size, i, &phdr) &&
            phdr.type == PT_GNU_EH_FRAME)
            n += table_pcs(image, size, &phdr, pcs + n, max / 2 - n);
    /* Eight points across each executable segment, its end included. */
    for (size_t i = 0; i < phnum && n + 9 <= max; i++) {
        if (!fuzz_elf_phdr(image, size, i, &phdr) || phdr.type != PT_LOAD ||
            !phdr.executable)
            continue;
        for (uint64_t k = 0; k <= 8; k++)
            pcs[n++] = phdr.vaddr + phdr.memsz / 8 * k;
    }
    return n;
}

static enum fuzz_result explore(struct fuzz_context *context,
                               const uint8_t *data, size_t size)
{
    enum fuzz_oracle oracle = (enum fuzz_oracle)(data[0] & 3);
    const uint8_t *elf = data + 1;
    size_t elf_size = size - 1;
    switch (oracle) {
    case FUZZ_ORACLE_LIBDWARF:
        if (fuzz_context_write(context, elf, elf_size) != FUZZ_OK)
            return FUZZ_SETUP;
        fuzz_oracle_libdwarf(context->fd);
        fuzz_oracle_libdwarf_forget();
        return FUZZ_OK;
    case FUZZ_ORACLE_LIBDW:
        return fuzz_oracle_libdw(context, elf, elf_size);
    case FUZZ_ORACLE_LIBUNWIND:
        fuzz_oracle_libunwind(elf, elf_size);
        return FUZZ_OK;
    case FUZZ_ORACLE_LIBDWARF_SECTION:
        fuzz_oracle_libdwarf_section(elf, elf_size);
        return FUZZ_OK;
    }
    return FUZZ_SETUP;
}

enum fuzz_result fuzz_one_oracles(struct fuzz_context *context,
                                  const uint8_t *data, size_t size,
                                  struct fuzz_report *report)
{
    report->text[0] = '\0';
    if (size < 1)
        return FUZZ_OK;
    enum fuzz_oracle oracle = (enum fuzz_oracle)(data[0] & 3);
    if (context->oracles && !(context->oracles & 1u << oracle))
        return FUZZ_OK;   /* a campaign for another library */
    enum fuzz_result result = explore(context, data, size);
    if (result != FUZZ_OK || oracle == FUZZ_ORACLE_LIBDWARF_SECTION)
        return result;
    /* libdwarf's exploration wrote the file already, the others not */
    if (oracle != FUZZ_ORACLE_LIBDWARF &&
        fuzz_context_write(context, data + 1, size - 1) != FUZZ_OK)
        return FUZZ_SETUP;
    return fuzz_outside_compare(context, oracle, data, size, report);
}
