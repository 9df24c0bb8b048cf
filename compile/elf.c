/* elf.c — what compile/ needs to know of an ELF file without loading it:
 * section sizes (for the size report), whether a dynamic symbol is
 * defined (to tell an eh_elf from a foreign shared object before dlopen
 * runs any of its code), and its GNU build-id (the key of the run-time
 * library's cache). Every offset is checked against the file. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct image {
    uint8_t *bytes;
    size_t size;
    const Elf64_Ehdr *header;
    const Elf64_Shdr *sections;
    size_t nsections;
    const char *names;   /* section names */
    size_t names_size;
};

static enum cfi_status read_image(const char *path, struct image *image,
                                  struct cfi_diag *diag)
{
    enum cfi_status regular = cfi_check_regular_file(path, diag);
    if (regular != CFI_OK)
        return regular;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, cfi_errno_text(errno));
    size_t cap = 1 << 16, n;
    image->bytes = malloc(cap);
    while (image->bytes &&
           (n = fread(image->bytes + image->size, 1, cap - image->size, f)) > 0) {
        image->size += n;
        if (image->size == cap) {
            uint8_t *bigger = cap <= SIZE_MAX / 2 ? realloc(image->bytes, cap * 2)
                                                  : NULL;
            if (!bigger) {
                free(image->bytes);
                image->bytes = NULL;
            }
            image->bytes = bigger;
            cap *= 2;
        }
    }
    bool error = ferror(f);
    fclose(f);
    if (!image->bytes)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    if (error)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, "cannot read file");
    return CFI_OK;
}

static bool in_file(const struct image *image, uint64_t offset, uint64_t size)
{
    return offset <= image->size && size <= image->size - offset;
}

/* Checks the header and finds the section table and its names. */
static enum cfi_status parse(struct image *image, struct cfi_diag *diag)
{
    const Elf64_Ehdr *h = (const Elf64_Ehdr *)image->bytes;
    if (image->size < sizeof *h || memcmp(h->e_ident, ELFMAG, SELFMAG) ||
        h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_ident[EI_DATA] != ELFDATA2LSB)
        return cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET,
                        "not a 64-bit little-endian ELF file");
    image->header = h;
    if (h->e_shnum == 0)
        return CFI_OK;
    if (h->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(image, h->e_shoff, (uint64_t)h->e_shnum * sizeof(Elf64_Shdr)) ||
        h->e_shoff % 8 != 0 || h->e_shstrndx >= h->e_shnum)
        return cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET,
                        "bad ELF section header table");
    image->sections = (const Elf64_Shdr *)(image->bytes + h->e_shoff);
    image->nsections = h->e_shnum;
    const Elf64_Shdr *names = &image->sections[h->e_shstrndx];
    if (names->sh_type != SHT_NOBITS &&
        in_file(image, names->sh_offset, names->sh_size)) {
        image->names = (const char *)image->bytes + names->sh_offset;
        image->names_size = names->sh_size;
    }
    return CFI_OK;
}

static bool section_is(const struct image *image, const Elf64_Shdr *s,
                       const char *name, bool prefix)
{
    size_t len = strlen(name);
    if (!image->names || s->sh_name >= image->names_size ||
        image->names_size - s->sh_name <= len)
        return false;
    const char *actual = image->names + s->sh_name;
    if (strncmp(actual, name, len))
        return false;
    return actual[len] == 0 || (prefix && actual[len] == '.');
}

enum cfi_status cg_section_sizes(const char *path, struct cg_sizes *sizes,
                                 struct cfi_diag *diag)
{
    struct image image = {0};
    *sizes = (struct cg_sizes){0};
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    for (size_t i = 0; status == CFI_OK && i < image.nsections; i++) {
        const Elf64_Shdr *s = &image.sections[i];
        if (section_is(&image, s, ".text", true))
            sizes->text += s->sh_size;
        else if (section_is(&image, s, ".rodata", true))
            sizes->rodata += s->sh_size;
        else if (section_is(&image, s, ".eh_frame", false))
            sizes->eh_frame += s->sh_size;
        else if (section_is(&image, s, ".eh_frame_hdr", false))
            sizes->eh_frame_hdr += s->sh_size;
    }
    sizes->file = image.size;
    free(image.bytes);
    return status;
}

/* Whether the symbol table `s` defines `name`. */
static bool defines(const struct image *image, const Elf64_Shdr *s,
                    const char *name)
{
    if (s->sh_link >= image->nsections || s->sh_entsize != sizeof(Elf64_Sym) ||
        !in_file(image, s->sh_offset, s->sh_size) || s->sh_offset % 8)
        return false;
    const Elf64_Shdr *strings = &image->sections[s->sh_link];
    if (!in_file(image, strings->sh_offset, strings->sh_size))
        return false;
    const char *names = (const char *)image->bytes + strings->sh_offset;
    const Elf64_Sym *symbols = (const Elf64_Sym *)(image->bytes + s->sh_offset);
    size_t len = strlen(name);
    for (size_t i = 0; i < s->sh_size / sizeof *symbols; i++) {
        const Elf64_Sym *symbol = &symbols[i];
        if (symbol->st_shndx == SHN_UNDEF || symbol->st_name >= strings->sh_size ||
            strings->sh_size - symbol->st_name <= len)
            continue;
        if (!memcmp(names + symbol->st_name, name, len + 1))
            return true;
    }
    return false;
}

enum cfi_status cg_elf_has_symbol(const char *path, const char *name,
                                  bool *found, struct cfi_diag *diag)
{
    struct image image = {0};
    *found = false;
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    for (size_t i = 0; status == CFI_OK && i < image.nsections && !*found; i++)
        if (image.sections[i].sh_type == SHT_DYNSYM)
            *found = defines(&image, &image.sections[i], name);
    free(image.bytes);
    return status;
}

/* The GNU build-id among the notes of [at, at + size) of the file,
 * padded to `align` (4, or 8 for a segment aligned so). */
static size_t build_id_in(const struct image *image, uint64_t at,
                          uint64_t size, uint64_t align, uint8_t *id,
                          size_t cap)
{
    if (!in_file(image, at, size))
        return 0;
    const uint8_t *p = image->bytes + at, *end = p + size;
    while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr note;
        memcpy(&note, p, sizeof note);
        uint64_t name = ((uint64_t)note.n_namesz + align - 1) & ~(align - 1);
        uint64_t desc = ((uint64_t)note.n_descsz + align - 1) & ~(align - 1);
        const uint8_t *data = p + sizeof note;
        if (name > (uint64_t)(end - data) || desc > (uint64_t)(end - data) - name)
            return 0;
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
            !memcmp(data, "GNU", 4) && note.n_descsz <= cap) {
            memcpy(id, data + name, note.n_descsz);
            return note.n_descsz;
        }
        p = data + name + desc;
    }
    return 0;
}

enum cfi_status cg_build_id(const char *path, uint8_t *id, size_t cap,
                            size_t *len, struct cfi_diag *diag)
{
    struct image image = {0};
    *len = 0;
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    const Elf64_Ehdr *h = image.header;
    if (status == CFI_OK && h->e_phnum &&
        (h->e_phentsize != sizeof(Elf64_Phdr) ||
         !in_file(&image, h->e_phoff, (uint64_t)h->e_phnum * sizeof(Elf64_Phdr))))
        status = cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET,
                          "bad ELF program header table");
    for (size_t i = 0; status == CFI_OK && *len == 0 && i < h->e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, image.bytes + h->e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_NOTE)
            *len = build_id_in(&image, ph.p_offset, ph.p_filesz,
                               ph.p_align == 8 ? 8 : 4, id, cap);
    }
    free(image.bytes);
    return status;
}
