/* SPDX-License-Identifier: MIT */
/* reloc.c — relocating the frame sections of a relocatable object (.o).
 *
 * In an ET_REL file the PC fields of .eh_frame and .debug_frame are not
 * final: the assembler leaves them to relocations (R_X86_64_PC32 for
 * .eh_frame's pc-relative pc_begin, R_X86_64_64 for .debug_frame's
 * addresses). Every section of a relocatable object is at address 0, so a
 * symbol's address is its value: a function's pc_begin becomes its offset
 * in its own section, as readelf shows it. Sections of several functions
 * (.text.a, .text.b) then overlap, which the loader reports. */
#include "internal.h"

#include <elf.h>
#include <string.h>

struct symbols {
    const uint8_t *bytes;
    uint64_t count;
};

static bool in_file(const struct cfi_file *file, uint64_t offset,
                    uint64_t size)
{
    return offset <= file->image_size && size <= file->image_size - offset;
}

/* How a relocation type of `machine` writes its value: its width and
 * whether it is PC-relative; 0 for no relocation (R_*_NONE), -1 for a
 * type cfisem does not apply. Frame sections need only data
 * relocations: x86-64's R_X86_64_64/32/32S/PC32/PC64, AArch64's
 * R_AARCH64_ABS64/ABS32/PREL64/PREL32. */
static int reloc_width(unsigned machine, uint32_t type, bool *pcrel)
{
    *pcrel = false;
    if (machine == EM_AARCH64) {
        switch (type) {
        case R_AARCH64_NONE:   return 0;
        case R_AARCH64_ABS64:  return 8;
        case R_AARCH64_ABS32:  return 4;
        case R_AARCH64_PREL64: *pcrel = true; return 8;
        case R_AARCH64_PREL32: *pcrel = true; return 4;
        default:               return -1;
        }
    }
    switch (type) {
    case R_X86_64_NONE:  return 0;
    case R_X86_64_64:    return 8;
    case R_X86_64_32:
    case R_X86_64_32S:   return 4;
    case R_X86_64_PC32:  *pcrel = true; return 4;
    case R_X86_64_PC64:  *pcrel = true; return 8;
    default:             return -1;
    }
}

/* Applies one relocation to the section's bytes. */
static enum cfi_status apply(uint8_t *bytes, uint64_t size,
                             const Elf64_Rela *rela,
                             const struct symbols *symbols, unsigned machine,
                             enum cfi_section section, struct cfi_diag *diag)
{
    uint32_t type = ELF64_R_TYPE(rela->r_info);
    uint64_t index = ELF64_R_SYM(rela->r_info);
    bool pcrel;
    int width = reloc_width(machine, type, &pcrel);
    if (width == 0)
        return CFI_OK;
    if (index >= symbols->count)
        return cfi_fail(diag, CFI_E_MALFORMED, rela->r_offset,
                        SECTION_MESSAGE(section, "relocation symbol out of range"));
    if (width < 0)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, rela->r_offset,
                        SECTION_MESSAGE(section, "unsupported relocation type"));
    Elf64_Sym sym;
    memcpy(&sym, symbols->bytes + index * sizeof sym, sizeof sym);
    uint64_t value = sym.st_value + (uint64_t)rela->r_addend;
    if (pcrel)
        value -= rela->r_offset;
    if (rela->r_offset > size || (uint64_t)width > size - rela->r_offset)
        return cfi_fail(diag, CFI_E_MALFORMED, rela->r_offset,
                        SECTION_MESSAGE(section, "relocation past the section"));
    for (int i = 0; i < width; i++)
        bytes[rela->r_offset + i] = (uint8_t)(value >> (8 * i));
    return CFI_OK;
}

static enum cfi_status read_symbols(const struct cfi_file *file,
                                    const Elf64_Shdr *symtab,
                                    enum cfi_section section,
                                    struct symbols *symbols,
                                    struct cfi_diag *diag)
{
    if (symtab->sh_type != SHT_SYMTAB ||
        !in_file(file, symtab->sh_offset, symtab->sh_size))
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "bad symbol table"));
    symbols->bytes = file->image + symtab->sh_offset;
    symbols->count = symtab->sh_size / sizeof(Elf64_Sym);
    return CFI_OK;
}

enum cfi_status cfi_relocate(struct cfi_file *file, struct cfi_elf_section *found,
                             const Elf64_Shdr *rela_section,
                             const Elf64_Shdr *symtab,
                             enum cfi_section section, struct cfi_diag *diag)
{
    struct symbols symbols = {NULL, 0};
    enum cfi_status status = read_symbols(file, symtab, section, &symbols, diag);
    if (status != CFI_OK)
        return status;
    if (rela_section->sh_entsize != sizeof(Elf64_Rela) ||
        !in_file(file, rela_section->sh_offset, rela_section->sh_size))
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "bad relocation section"));
    uint8_t *bytes = cfi_arena_copy(file->arena, found->bytes, found->file_size);
    if (!bytes)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    uint64_t count = rela_section->sh_size / sizeof(Elf64_Rela);
    for (uint64_t i = 0; i < count && status == CFI_OK; i++) {
        Elf64_Rela rela;
        memcpy(&rela, file->image + rela_section->sh_offset + i * sizeof rela,
               sizeof rela);
        status = apply(bytes, found->file_size, &rela, &symbols,
                       file->arch->e_machine, section, diag);
    }
    found->bytes = bytes;
    found->relocated = true;
    return status;
}
