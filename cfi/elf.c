/* SPDX-License-Identifier: MIT */
/* elf.c — the parts of an ELF file this module needs, read from the image
 * in memory with every offset checked against the file size: the header,
 * the PT_LOAD segments, and the frame sections found by name. */
#include "internal.h"

#include <elf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* Headers are copied out of the image with memcpy into <elf.h> structs,
 * which holds only on a little-endian host, as the file is. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "cfi/elf.c reads little-endian ELF with host loads");

static bool in_file(const struct cfi_file *file, uint64_t offset,
                    uint64_t size)
{
    return offset <= file->image_size && size <= file->image_size - offset;
}

static enum cfi_status check_header(const struct cfi_file *file,
                                    Elf64_Ehdr *header, struct cfi_diag *diag)
{
    if (file->image_size < EI_NIDENT ||
        memcmp(file->image, ELFMAG, SELFMAG) != 0)
        return cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET, "no ELF magic");
    if (file->image[EI_CLASS] != ELFCLASS64)
        return cfi_fail(diag, CFI_E_NOT_ELF, EI_CLASS, "not a 64-bit ELF file");
    if (file->image[EI_DATA] != ELFDATA2LSB)
        return cfi_fail(diag, CFI_E_NOT_ELF, EI_DATA,
                        "not a little-endian ELF file");
    if (file->image_size < sizeof *header)
        return cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET,
                        "ELF header past end of file");
    memcpy(header, file->image, sizeof *header);
    /* The records mean what the machine's descriptor says; a machine
     * with none is refused. */
    if (!cfi_arch_of_machine(header->e_machine))
        return cfi_fail(diag, CFI_E_NOT_ELF,
                        offsetof(Elf64_Ehdr, e_machine),
                        "not an x86-64 or AArch64 ELF file");
    return CFI_OK;
}

/* Section header 0 holds the real counts when they overflow the header's
 * 16-bit fields (gABI "Extended Section Numbering"). */
static bool first_section(const struct cfi_file *file,
                          const Elf64_Ehdr *header, Elf64_Shdr *shdr)
{
    if (header->e_shoff == 0 || header->e_shentsize < sizeof *shdr ||
        !in_file(file, header->e_shoff, sizeof *shdr))
        return false;
    memcpy(shdr, file->image + header->e_shoff, sizeof *shdr);
    return true;
}

static enum cfi_status read_segment(const struct cfi_file *file,
                                    uint64_t phdr_offset,
                                    struct cfi_segment *segment,
                                    struct cfi_diag *diag)
{
    Elf64_Phdr phdr;
    memcpy(&phdr, file->image + phdr_offset, sizeof phdr);
    if (phdr.p_filesz > 0 && !in_file(file, phdr.p_offset, phdr.p_filesz))
        return cfi_fail(diag, CFI_E_MALFORMED, phdr_offset,
                        "segment past end of file");
    segment->vaddr = phdr.p_vaddr;
    segment->memsz = phdr.p_memsz;
    segment->filesz = phdr.p_filesz;
    /* An empty segment may name any offset; keep the pointer valid. */
    segment->bytes = file->image + (phdr.p_filesz ? phdr.p_offset : 0);
    segment->executable = (phdr.p_flags & PF_X) != 0;
    return CFI_OK;
}

/* The number of program headers, checked to lie in the file with an
 * entry size that holds an Elf64_Phdr. */
static enum cfi_status program_headers(const struct cfi_file *file,
                                       const Elf64_Ehdr *header,
                                       uint64_t *count, struct cfi_diag *diag)
{
    *count = header->e_phnum;
    Elf64_Shdr first;
    if (*count == PN_XNUM && first_section(file, header, &first))
        *count = first.sh_info;
    if (*count > 0 && header->e_phentsize < sizeof(Elf64_Phdr))
        return cfi_fail(diag, CFI_E_MALFORMED,
                        offsetof(Elf64_Ehdr, e_phentsize),
                        "bad program header size");
    if (*count > 0 && (*count > file->image_size / header->e_phentsize ||
                       !in_file(file, header->e_phoff,
                                *count * header->e_phentsize)))
        return cfi_fail(diag, CFI_E_MALFORMED, header->e_phoff,
                        "program headers past end of file");
    return CFI_OK;
}

static uint32_t program_header_type(const struct cfi_file *file,
                                    const Elf64_Ehdr *header, uint64_t i)
{
    uint32_t type;
    memcpy(&type, file->image + header->e_phoff + i * header->e_phentsize,
           sizeof type);
    return type;
}

static enum cfi_status read_segments(struct cfi_file *file,
                                     const Elf64_Ehdr *header,
                                     struct cfi_diag *diag)
{
    uint64_t count;
    enum cfi_status status = program_headers(file, header, &count, diag);
    if (status != CFI_OK)
        return status;
    size_t loads = 0;
    for (uint64_t i = 0; i < count; i++)
        loads += program_header_type(file, header, i) == PT_LOAD;
    file->segments =
        cfi_arena_alloc(file->arena, loads, sizeof *file->segments);
    if (!file->segments)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    for (uint64_t i = 0; i < count; i++) {
        if (program_header_type(file, header, i) != PT_LOAD)
            continue;
        status = read_segment(file, header->e_phoff + i * header->e_phentsize,
                              &file->segments[file->nsegments], diag);
        if (status != CFI_OK)
            return status;
        file->nsegments++;
    }
    return CFI_OK;
}

bool cfi_file_program_header(const struct cfi_file *file, uint32_t type,
                             struct cfi_segment *out)
{
    Elf64_Ehdr header;
    struct cfi_diag diag;
    uint64_t count;
    if (file->image_size < sizeof header)
        return false;
    memcpy(&header, file->image, sizeof header);
    if (program_headers(file, &header, &count, &diag) != CFI_OK)
        return false;
    for (uint64_t i = 0; i < count; i++)
        if (program_header_type(file, &header, i) == type)
            return read_segment(file, header.e_phoff +
                                          i * header.e_phentsize,
                                out, &diag) == CFI_OK;
    return false;
}

/* Where the section headers are and which one names the others. */
struct section_table {
    uint64_t offset;
    uint64_t count;
    uint64_t entsize;
    const uint8_t *names;    /* the section name string table */
    uint64_t names_size;     /* 0: sections have no names */
};

static Elf64_Shdr section_header(const struct cfi_file *file,
                                 const struct section_table *table,
                                 uint64_t index)
{
    Elf64_Shdr shdr;
    memcpy(&shdr, file->image + table->offset + index * table->entsize,
           sizeof shdr);
    return shdr;
}

static enum cfi_status read_name_table(const struct cfi_file *file,
                                       const Elf64_Ehdr *header,
                                       struct section_table *table,
                                       struct cfi_diag *diag)
{
    uint64_t index = header->e_shstrndx;
    Elf64_Shdr first;
    if (index == SHN_XINDEX && first_section(file, header, &first))
        index = first.sh_link;
    if (index == SHN_UNDEF)
        return CFI_OK;
    if (index >= table->count)
        return cfi_fail(diag, CFI_E_MALFORMED,
                        offsetof(Elf64_Ehdr, e_shstrndx),
                        "section name table index out of range");
    Elf64_Shdr names = section_header(file, table, index);
    if (names.sh_type == SHT_NOBITS ||
        !in_file(file, names.sh_offset, names.sh_size))
        return cfi_fail(diag, CFI_E_MALFORMED,
                        table->offset + index * table->entsize,
                        "section name table past end of file");
    table->names = file->image + names.sh_offset;
    table->names_size = names.sh_size;
    return CFI_OK;
}

static enum cfi_status read_section_table(const struct cfi_file *file,
                                          const Elf64_Ehdr *header,
                                          struct section_table *table,
                                          struct cfi_diag *diag)
{
    memset(table, 0, sizeof *table);
    if (header->e_shoff == 0)
        return CFI_OK;
    Elf64_Shdr first;
    table->offset = header->e_shoff;
    table->entsize = header->e_shentsize;
    table->count = header->e_shnum;
    if (table->entsize < sizeof(Elf64_Shdr))
        return cfi_fail(diag, CFI_E_MALFORMED,
                        offsetof(Elf64_Ehdr, e_shentsize),
                        "bad section header size");
    if (table->count == 0) {
        if (!first_section(file, header, &first))
            return cfi_fail(diag, CFI_E_MALFORMED, header->e_shoff,
                            "section headers past end of file");
        table->count = first.sh_size;
        if (table->count == 0)
            return CFI_OK;
    }
    if (table->count > file->image_size / table->entsize ||
        !in_file(file, table->offset, table->count * table->entsize))
        return cfi_fail(diag, CFI_E_MALFORMED, header->e_shoff,
                        "section headers past end of file");
    return read_name_table(file, header, table, diag);
}

static bool has_name(const struct section_table *table, uint32_t name,
                     const char *wanted)
{
    size_t len = strlen(wanted) + 1;
    return name < table->names_size && len <= table->names_size - name &&
           memcmp(table->names + name, wanted, len) == 0;
}

/* A decompressed section larger than this is refused rather than
 * allocated: the size comes from the file. */
#define DECOMPRESSED_MAX ((uint64_t)1 << 30)

/* A zstd frame expands a block of up to 128 KiB from 4 bytes at best
 * (an RLE block), but frame sections compress about 10:1: a declared size
 * above this many times the compressed size is refused before anything
 * is allocated, so that memory follows the bytes in the file and not
 * the size the file claims. */
#define ZSTD_RATIO_MAX 1024

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* gABI; <elf.h> of glibc before 2.37 lacks it */
#endif

/* SHF_COMPRESSED with ELFCOMPRESS_ZSTD (gABI): an Elf64_Chdr, then one or
 * more zstd frames that decompress to exactly ch_size bytes. libelf
 * 0.188 reads only zlib; libzstd does it here. */
static enum cfi_status decompress_zstd(struct cfi_file *file,
                                       const Elf64_Shdr *shdr,
                                       const Elf64_Chdr *chdr,
                                       enum cfi_section section,
                                       struct cfi_elf_section *found,
                                       struct cfi_diag *diag)
{
    size_t compressed = (size_t)shdr->sh_size - sizeof *chdr;
    if (chdr->ch_size > DECOMPRESSED_MAX ||
        chdr->ch_size / ZSTD_RATIO_MAX > compressed)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "zstd: declared size too "
                                                 "large for the section"));
    uint8_t *copy = cfi_arena_alloc(file->arena, (size_t)chdr->ch_size, 1);
    if (!copy)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    size_t length = ZSTD_decompress(copy, (size_t)chdr->ch_size,
                                    file->image + shdr->sh_offset +
                                        sizeof *chdr,
                                    compressed);
    if (ZSTD_isError(length))
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "zstd: cannot decompress "
                                                 "section"));
    if (length != chdr->ch_size)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "zstd: decompressed size "
                                                 "differs from the declared "
                                                 "size"));
    found->bytes = copy;
    found->file_size = length;
    return CFI_OK;
}

/* libelf decompresses a section in place in its own view of the file,
 * and would write the new section header into our image: it is given a
 * scratch ELF holding only this section instead. */
static enum cfi_status decompress(struct cfi_file *file,
                                  const Elf64_Shdr *shdr,
                                  enum cfi_section section,
                                  struct cfi_elf_section *found,
                                  struct cfi_diag *diag)
{
    Elf64_Chdr chdr;
    if (shdr->sh_size < sizeof chdr)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "cannot decompress section"));
    memcpy(&chdr, file->image + shdr->sh_offset, sizeof chdr);
    if (chdr.ch_type == ELFCOMPRESS_ZSTD)
        return decompress_zstd(file, shdr, &chdr, section, found, diag);
    if (chdr.ch_type != ELFCOMPRESS_ZLIB || chdr.ch_size > DECOMPRESSED_MAX)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "unsupported compression"));
    size_t shoff = (sizeof(Elf64_Ehdr) + shdr->sh_size + 7) & ~(size_t)7;
    size_t size = shoff + 2 * sizeof(Elf64_Shdr);
    char *scratch = calloc(1, size);
    if (!scratch)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    Elf64_Ehdr header = {
        .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
                    ELFDATA2LSB, EV_CURRENT},
        .e_type = ET_REL, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
        .e_shoff = shoff, .e_ehsize = sizeof header,
        .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 2,
    };
    Elf64_Shdr compressed = {
        .sh_type = SHT_PROGBITS, .sh_flags = SHF_COMPRESSED,
        .sh_offset = sizeof header, .sh_size = shdr->sh_size,
        .sh_addralign = 1,
    };
    memcpy(scratch, &header, sizeof header);
    memcpy(scratch + sizeof header, file->image + shdr->sh_offset,
           shdr->sh_size);
    memcpy(scratch + shoff + sizeof(Elf64_Shdr), &compressed,
           sizeof compressed);
    Elf *elf = elf_version(EV_CURRENT) != EV_NONE ? elf_memory(scratch, size)
                                                  : NULL;
    Elf_Scn *scn = elf ? elf_getscn(elf, 1) : NULL;
    Elf_Data *data = scn && elf_compress(scn, 0, 0) >= 0
                         ? elf_getdata(scn, NULL) : NULL;
    void *copy = data && data->d_size == chdr.ch_size
                     ? cfi_arena_copy(file->arena, data->d_buf, data->d_size)
                     : NULL;
    elf_end(elf);
    free(scratch);
    if (!copy)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "cannot decompress section"));
    found->bytes = copy;
    found->file_size = (size_t)chdr.ch_size;
    return CFI_OK;
}

/* .zdebug_frame, the older GNU compression (before SHF_COMPRESSED): the
 * bytes "ZLIB", the uncompressed size as 8 bytes big-endian, then a zlib
 * stream. readelf and eu-readelf read it; so does this. */
static enum cfi_status decompress_gnu(struct cfi_file *file,
                                      const Elf64_Shdr *shdr,
                                      struct cfi_elf_section *found,
                                      struct cfi_diag *diag)
{
    const uint8_t *bytes = file->image + shdr->sh_offset;
    if (shdr->sh_size < 12 || memcmp(bytes, "ZLIB", 4) != 0)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        ".zdebug_frame: no ZLIB header");
    uint64_t size = 0;
    for (unsigned i = 4; i < 12; i++)
        size = size << 8 | bytes[i];
    if (size > DECOMPRESSED_MAX || shdr->sh_size - 12 > ULONG_MAX)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        ".zdebug_frame: section too large");
    uint8_t *copy = cfi_arena_alloc(file->arena, (size_t)size, 1);
    if (!copy)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    uLongf length = (uLongf)size;
    if (uncompress(copy, &length, bytes + 12, (uLong)(shdr->sh_size - 12)) !=
            Z_OK || length != size)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        ".zdebug_frame: cannot decompress section");
    found->bytes = copy;
    found->file_size = (size_t)size;
    return CFI_OK;
}

static enum cfi_status read_frame_section(struct cfi_file *file,
                                          uint64_t index,
                                          const Elf64_Shdr *shdr,
                                          enum cfi_section section,
                                          bool gnu_compressed,
                                          struct cfi_elf_section *found,
                                          struct cfi_diag *diag)
{
    found->present = true;
    found->offset = shdr->sh_offset;
    found->addr = shdr->sh_addr;
    found->index = index;
    found->size = shdr->sh_size;
    if (shdr->sh_type == SHT_NOBITS)
        return CFI_OK; /* e.g. a separate debug file: no bytes here */
    if (!in_file(file, shdr->sh_offset, shdr->sh_size))
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        SECTION_MESSAGE(section, "section past end of file"));
    if (shdr->sh_flags & SHF_COMPRESSED)
        return decompress(file, shdr, section, found, diag);
    if (gnu_compressed)
        return decompress_gnu(file, shdr, found, diag);
    found->bytes = file->image + shdr->sh_offset;
    found->file_size = shdr->sh_size;
    return CFI_OK;
}

/* The desc of the first NT_GNU_BUILD_ID note named "GNU" of an SHT_NOTE
 * section (gABI note layout: namesz, descsz, type, then name and desc,
 * each padded to 4 bytes). */
static void read_build_id(const struct cfi_file *file, const Elf64_Shdr *shdr,
                          struct cfi_elf_debug_names *names)
{
    if (!in_file(file, shdr->sh_offset, shdr->sh_size))
        return;
    const uint8_t *notes = file->image + shdr->sh_offset;
    uint64_t pos = 0, size = shdr->sh_size;
    while (!names->build_id && size - pos >= 12) {
        uint64_t namesz = cfi_load_le(notes + pos, 4);
        uint64_t descsz = cfi_load_le(notes + pos + 4, 4);
        uint64_t type = cfi_load_le(notes + pos + 8, 4);
        uint64_t name_at = pos + 12, desc_at = name_at + (namesz + 3) / 4 * 4;
        if (desc_at > size || descsz > size - desc_at)
            return;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && descsz > 0 &&
            memcmp(notes + name_at, "GNU", 4) == 0) {
            names->build_id = notes + desc_at;
            names->build_id_size = (size_t)descsz;
        }
        pos = desc_at + (descsz + 3) / 4 * 4;
        if (pos > size)
            return;
    }
}

/* .gnu_debuglink: a file name ending with NUL, padding to 4 bytes, the
 * CRC-32 of the debug file (little-endian, as the file is). */
static void read_debuglink(const struct cfi_file *file, const Elf64_Shdr *shdr,
                           struct cfi_elf_debug_names *names)
{
    if (shdr->sh_type == SHT_NOBITS ||
        !in_file(file, shdr->sh_offset, shdr->sh_size))
        return;
    const char *text = (const char *)file->image + shdr->sh_offset;
    const char *nul = memchr(text, 0, shdr->sh_size);
    if (!nul || nul == text)
        return;
    uint64_t crc_at = ((uint64_t)(nul - text) + 1 + 3) / 4 * 4;
    if (crc_at > shdr->sh_size || shdr->sh_size - crc_at < 4)
        return;
    names->debuglink = text;
    names->debuglink_crc =
        (uint32_t)cfi_load_le((const uint8_t *)text + crc_at, 4);
}

static void find_debug_names(const struct cfi_file *file,
                             const struct section_table *table,
                             struct cfi_elf_debug_names *names)
{
    for (uint64_t i = 0; i < table->count; i++) {
        Elf64_Shdr shdr = section_header(file, table, i);
        if (shdr.sh_type == SHT_NOTE && !names->build_id)
            read_build_id(file, &shdr, names);
        else if (has_name(table, shdr.sh_name, ".gnu_debuglink") &&
                 !names->debuglink)
            read_debuglink(file, &shdr, names);
    }
}

/* The first section of each name counts; later ones are ignored. A
 * .zdebug_frame stands for .debug_frame when it comes first. */
static enum cfi_status find_frame_sections(struct cfi_file *file,
                                           const struct section_table *table,
                                           struct cfi_elf_frames *frames,
                                           struct cfi_diag *diag)
{
    for (uint64_t i = 0; i < table->count; i++) {
        Elf64_Shdr shdr = section_header(file, table, i);
        enum cfi_status status = CFI_OK;
        if (has_name(table, shdr.sh_name, ".eh_frame") &&
            !frames->eh_frame.present)
            status = read_frame_section(file, i, &shdr, CFI_EH_FRAME, false,
                                        &frames->eh_frame, diag);
        else if (has_name(table, shdr.sh_name, ".debug_frame") &&
                 !frames->debug_frame.present)
            status = read_frame_section(file, i, &shdr, CFI_DEBUG_FRAME,
                                        false, &frames->debug_frame, diag);
        else if (has_name(table, shdr.sh_name, ".zdebug_frame") &&
                 !frames->debug_frame.present)
            status = read_frame_section(file, i, &shdr, CFI_DEBUG_FRAME,
                                        true, &frames->debug_frame, diag);
        else if (has_name(table, shdr.sh_name, ".eh_frame_hdr") &&
                 !frames->eh_frame_hdr.present) {
            frames->eh_frame_hdr.present = true;
            frames->eh_frame_hdr.addr = shdr.sh_addr;
            frames->eh_frame_hdr.size = shdr.sh_size;
        }
        if (status != CFI_OK)
            return status;
    }
    return CFI_OK;
}

/* The SHT_RELA section that applies to section `target`, if any. */
static bool find_relocations(const struct cfi_file *file,
                             const struct section_table *table,
                             uint64_t target, Elf64_Shdr *rela,
                             Elf64_Shdr *symtab)
{
    for (uint64_t i = 0; i < table->count; i++) {
        *rela = section_header(file, table, i);
        if (rela->sh_type == SHT_RELA && rela->sh_info == target &&
            rela->sh_link < table->count) {
            *symtab = section_header(file, table, rela->sh_link);
            return true;
        }
    }
    return false;
}

/* A relocatable object's frame sections get their relocations applied. */
static enum cfi_status relocate_frames(struct cfi_file *file,
                                       const struct section_table *table,
                                       struct cfi_elf_frames *frames,
                                       struct cfi_diag *diag)
{
    struct cfi_elf_section *sections[] = {&frames->eh_frame,
                                          &frames->debug_frame};
    const enum cfi_section kinds[] = {CFI_EH_FRAME, CFI_DEBUG_FRAME};
    for (size_t k = 0; k < 2; k++) {
        struct cfi_elf_section *found = sections[k];
        Elf64_Shdr rela, symtab;
        if (!found->present || !found->bytes ||
            !find_relocations(file, table, found->index, &rela, &symtab))
            continue;
        enum cfi_status status =
            cfi_relocate(file, found, &rela, &symtab, kinds[k], diag);
        if (status != CFI_OK)
            return status;
    }
    return CFI_OK;
}

enum cfi_status cfi_elf_read(struct cfi_file *file,
                             struct cfi_elf_frames *frames,
                             struct cfi_diag *diag)
{
    memset(frames, 0, sizeof *frames);
    Elf64_Ehdr header;
    enum cfi_status status = check_header(file, &header, diag);
    if (status == CFI_OK)
        status = read_segments(file, &header, diag);
    struct section_table table;
    if (status == CFI_OK)
        status = read_section_table(file, &header, &table, diag);
    if (status == CFI_OK)
        status = find_frame_sections(file, &table, frames, diag);
    if (status == CFI_OK)
        find_debug_names(file, &table, &frames->debug_names);
    file->arch = status == CFI_OK ? cfi_arch_of_machine(header.e_machine)
                                  : NULL;
    file->relocatable = status == CFI_OK && header.e_type == ET_REL;
    file->entry = status == CFI_OK ? header.e_entry : 0;
    if (status == CFI_OK && file->relocatable)
        status = relocate_frames(file, &table, frames, diag);
    return status;
}

/* ------------------------------------------------------------------ */
/* Function symbols                                                     */
/* ------------------------------------------------------------------ */

struct symbol_list {
    struct cfi_symbol *items;
    size_t count, capacity;
};

static bool push_symbol(struct symbol_list *list, struct cfi_symbol symbol)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 64;
        struct cfi_symbol *grown =
            realloc(list->items, capacity * sizeof *grown);
        if (!grown)
            return false;
        list->items = grown;
        list->capacity = capacity;
    }
    list->items[list->count++] = symbol;
    return true;
}

/* The name at `offset` of string table `strtab`, if it ends inside it. */
static const char *symbol_name(const struct cfi_file *file,
                               const Elf64_Shdr *strtab, uint32_t offset)
{
    if (strtab->sh_type != SHT_STRTAB || offset >= strtab->sh_size ||
        !in_file(file, strtab->sh_offset, strtab->sh_size))
        return "";
    const char *start = (const char *)file->image + strtab->sh_offset;
    return memchr(start + offset, 0, strtab->sh_size - offset) ? start + offset
                                                                : "";
}

/* The function symbols of one symbol table section. */
static bool table_functions(const struct cfi_file *file,
                            const struct section_table *table,
                            const Elf64_Shdr *symtab,
                            struct symbol_list *list)
{
    if (symtab->sh_entsize < sizeof(Elf64_Sym) ||
        !in_file(file, symtab->sh_offset, symtab->sh_size) ||
        symtab->sh_link >= table->count)
        return true;
    Elf64_Shdr strtab = section_header(file, table, symtab->sh_link);
    uint64_t count = symtab->sh_size / symtab->sh_entsize;
    for (uint64_t i = 0; i < count; i++) {
        Elf64_Sym sym;
        memcpy(&sym, file->image + symtab->sh_offset + i * symtab->sh_entsize,
               sizeof sym);
        unsigned type = ELF64_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
            sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
            continue;
        struct cfi_symbol symbol = {sym.st_value, sym.st_size,
                                    symbol_name(file, &strtab, sym.st_name)};
        if (!push_symbol(list, symbol))
            return false;
    }
    return true;
}

static int by_value(const void *pa, const void *pb)
{
    const struct cfi_symbol *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return (a->size == 0) - (b->size == 0); /* sized first */
}

/* One symbol per value: the first after sorting. */
static size_t unique_values(struct cfi_symbol *items, size_t count)
{
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (kept == 0 || items[kept - 1].value != items[i].value)
            items[kept++] = items[i];
    return kept;
}

enum cfi_status cfi_file_functions(const struct cfi_file *file,
                                   struct cfi_symbol **symbols,
                                   size_t *count)
{
    *symbols = NULL;
    *count = 0;
    Elf64_Ehdr header;
    struct section_table table;
    if (check_header(file, &header, NULL) != CFI_OK ||
        read_section_table(file, &header, &table, NULL) != CFI_OK)
        return CFI_OK;
    struct symbol_list list = {NULL, 0, 0};
    for (uint64_t i = 0; i < table.count; i++) {
        Elf64_Shdr shdr = section_header(file, &table, i);
        if ((shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) &&
            !table_functions(file, &table, &shdr, &list)) {
            free(list.items);
            return CFI_E_NOMEM;
        }
    }
    if (list.count > 1)
        qsort(list.items, list.count, sizeof *list.items, by_value);
    *symbols = list.items;
    *count = unique_values(list.items, list.count);
    return CFI_OK;
}

const struct cfi_symbol *cfi_symbol_find(const struct cfi_symbol *symbols,
                                         size_t count, uint64_t addr,
                                         uint64_t *offset)
{
    *offset = 0;
    size_t lo = 0, hi = count; /* the first symbol above addr: lo */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (symbols[mid].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct cfi_symbol *symbol = &symbols[lo - 1];
    uint64_t distance = addr - symbol->value;
    if (symbol->size != 0 && distance >= symbol->size)
        return NULL;
    *offset = distance;
    return symbol;
}

/* ------------------------------------------------------------------ */
/* Code addresses from the init and fini arrays and section starts      */
/* ------------------------------------------------------------------ */

struct address_list {
    uint64_t *items;
    size_t count, capacity;
};

static bool push_address(struct address_list *list, uint64_t addr)
{
    if (addr == 0 || addr == UINT64_MAX)
        return true;
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 16;
        uint64_t *grown = realloc(list->items, capacity * sizeof *grown);
        if (!grown)
            return false;
        list->items = grown;
        list->capacity = capacity;
    }
    list->items[list->count++] = addr;
    return true;
}

static bool section_code_starts(const struct cfi_file *file,
                                const Elf64_Shdr *shdr,
                                struct address_list *list)
{
    bool array = shdr->sh_type == SHT_INIT_ARRAY ||
                 shdr->sh_type == SHT_FINI_ARRAY ||
                 shdr->sh_type == SHT_PREINIT_ARRAY;
    if ((shdr->sh_flags & SHF_EXECINSTR) && shdr->sh_type == SHT_PROGBITS &&
        !push_address(list, shdr->sh_addr))
        return false;
    if (!array || !in_file(file, shdr->sh_offset, shdr->sh_size))
        return true;
    for (uint64_t at = 0; at + 8 <= shdr->sh_size; at += 8)
        if (!push_address(list, cfi_load_le(file->image + shdr->sh_offset + at,
                                            8)))
            return false;
    return true;
}

enum cfi_status cfi_file_code_starts(const struct cfi_file *file,
                                     uint64_t **addrs, size_t *count)
{
    *addrs = NULL;
    *count = 0;
    Elf64_Ehdr header;
    struct section_table table;
    if (check_header(file, &header, NULL) != CFI_OK ||
        read_section_table(file, &header, &table, NULL) != CFI_OK)
        return CFI_OK;
    struct address_list list = {NULL, 0, 0};
    for (uint64_t i = 0; i < table.count; i++) {
        Elf64_Shdr shdr = section_header(file, &table, i);
        if (!section_code_starts(file, &shdr, &list)) {
            free(list.items);
            return CFI_E_NOMEM;
        }
    }
    *addrs = list.items;
    *count = list.count;
    return CFI_OK;
}
