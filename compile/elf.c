/* SPDX-License-Identifier: MIT */
/* elf.c — what compile/ needs to know of an ELF file without loading it:
 * section sizes (for the size report), whether a dynamic symbol is
 * defined (to tell an eh_elf from a foreign shared object before dlopen
 * runs any of its code), its GNU build-id (the key of the run-time
 * library's cache), its object id (the stamp of its eh_elf), and the
 * stamp an eh_elf carries, read from the file before any of its code
 * runs. Every offset is checked against the file. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cfi/sha256.h"
#include "internal.h"

struct image {
    const uint8_t *bytes;
    uint8_t *owned;      /* what read_image allocated */
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
    uint8_t *buffer = malloc(cap);
    while (buffer && (n = fread(buffer + image->size, 1, cap - image->size, f)) > 0) {
        image->size += n;
        if (image->size == cap) {
            uint8_t *bigger = cap <= SIZE_MAX / 2 ? realloc(buffer, cap * 2)
                                                  : NULL;
            if (!bigger)
                free(buffer);
            buffer = bigger;
            cap *= 2;
        }
    }
    bool error = ferror(f);
    fclose(f);
    image->bytes = image->owned = buffer;
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
    free(image.owned);
    return status;
}

/* The definition of `name` in the symbol table `s`, or NULL. */
static const Elf64_Sym *definition(const struct image *image,
                                   const Elf64_Shdr *s, const char *name)
{
    if (s->sh_link >= image->nsections || s->sh_entsize != sizeof(Elf64_Sym) ||
        !in_file(image, s->sh_offset, s->sh_size) || s->sh_offset % 8)
        return NULL;
    const Elf64_Shdr *strings = &image->sections[s->sh_link];
    if (!in_file(image, strings->sh_offset, strings->sh_size))
        return NULL;
    const char *names = (const char *)image->bytes + strings->sh_offset;
    const Elf64_Sym *symbols = (const Elf64_Sym *)(image->bytes + s->sh_offset);
    size_t len = strlen(name);
    for (size_t i = 0; i < s->sh_size / sizeof *symbols; i++) {
        const Elf64_Sym *symbol = &symbols[i];
        if (symbol->st_shndx == SHN_UNDEF || symbol->st_name >= strings->sh_size ||
            strings->sh_size - symbol->st_name <= len)
            continue;
        if (!memcmp(names + symbol->st_name, name, len + 1))
            return symbol;
    }
    return NULL;
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
            *found = definition(&image, &image.sections[i], name) != NULL;
    free(image.owned);
    return status;
}

enum cfi_status cg_elf_machine(const char *path, unsigned *machine,
                               struct cfi_diag *diag)
{
    struct image image = {0};
    *machine = 0;
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    if (status == CFI_OK)
        *machine = image.header->e_machine;
    free(image.owned);
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

/* The build-id of a parsed image: from its PT_NOTE segments (what the
 * run-time library reads from a loaded object), else, in a file without
 * program headers (a relocatable object), from its SHT_NOTE sections. */
static enum cfi_status find_build_id(const struct image *image, uint8_t *id,
                                     size_t cap, size_t *len,
                                     struct cfi_diag *diag)
{
    const Elf64_Ehdr *h = image->header;
    *len = 0;
    if (h->e_phnum &&
        (h->e_phentsize != sizeof(Elf64_Phdr) ||
         !in_file(image, h->e_phoff, (uint64_t)h->e_phnum * sizeof(Elf64_Phdr))))
        return cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET,
                        "bad ELF program header table");
    for (size_t i = 0; *len == 0 && i < h->e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, image->bytes + h->e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_NOTE)
            *len = build_id_in(image, ph.p_offset, ph.p_filesz,
                               ph.p_align == 8 ? 8 : 4, id, cap);
    }
    for (size_t i = 0; h->e_phnum == 0 && *len == 0 && i < image->nsections;
         i++) {
        const Elf64_Shdr *sh = &image->sections[i];
        if (sh->sh_type == SHT_NOTE)
            *len = build_id_in(image, sh->sh_offset, sh->sh_size,
                               sh->sh_addralign == 8 ? 8 : 4, id, cap);
    }
    return CFI_OK;
}

enum cfi_status cg_build_id(const char *path, uint8_t *id, size_t cap,
                            size_t *len, struct cfi_diag *diag)
{
    struct image image = {0};
    *len = 0;
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    if (status == CFI_OK)
        status = find_build_id(&image, id, cap, len, diag);
    free(image.owned);
    return status;
}

/* ------------------------------------------------------------------ */
/* Object ids                                                           */
/* ------------------------------------------------------------------ */

/* The bytes of every section named `name`, in section order, hashed. */
static void hash_sections(const struct image *image, const char *name,
                          struct cfi_sha256 *sha)
{
    for (size_t i = 0; i < image->nsections; i++) {
        const Elf64_Shdr *sh = &image->sections[i];
        if (sh->sh_type != SHT_NOBITS && section_is(image, sh, name, false) &&
            in_file(image, sh->sh_offset, sh->sh_size))
            cfi_sha256_add(sha, image->bytes + sh->sh_offset, sh->sh_size);
    }
}

static enum cfi_status image_object_id(const struct image *image,
                                       struct eh_elf_object_id *id,
                                       struct cfi_diag *diag)
{
    size_t len;
    *id = (struct eh_elf_object_id){0};
    enum cfi_status status =
        find_build_id(image, id->id, sizeof id->id, &len, diag);
    if (status != CFI_OK)
        return status;
    if (len > 0) {
        id->kind = EH_ELF_OBJECT_ID_BUILD_ID;
        id->size = (uint32_t)len;
        return CFI_OK;
    }
    struct cfi_sha256 sha;
    cfi_sha256_init(&sha);
    hash_sections(image, ".eh_frame", &sha);
    hash_sections(image, ".debug_frame", &sha);
    cfi_sha256_digest(&sha, id->id);
    id->kind = EH_ELF_OBJECT_ID_FRAME_SHA256;
    id->size = CFI_SHA256_BYTES;
    return CFI_OK;
}

enum cfi_status cg_object_id_of_bytes(const uint8_t *bytes, size_t size,
                                      struct eh_elf_object_id *id,
                                      struct cfi_diag *diag)
{
    struct image image = {.bytes = bytes, .size = size};
    enum cfi_status status = parse(&image, diag);
    return status == CFI_OK ? image_object_id(&image, id, diag) : status;
}

enum cfi_status cg_object_id(const char *path, struct eh_elf_object_id *id,
                             struct cfi_diag *diag)
{
    struct image image = {0};
    *id = (struct eh_elf_object_id){0};
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    if (status == CFI_OK)
        status = image_object_id(&image, id, diag);
    free(image.owned);
    return status;
}

enum cfi_status cg_file_object_id(const struct cfi_file *file,
                                  struct eh_elf_object_id *id,
                                  struct cfi_diag *diag)
{
    *id = (struct eh_elf_object_id){0};
    if (!file->image) /* CFI from memory (cfi_file_from_section) */
        return CFI_OK;
    return cg_object_id_of_bytes(file->image, file->image_size, id, diag);
}

bool cg_object_id_equal(const struct eh_elf_object_id *a,
                        const struct eh_elf_object_id *b)
{
    return a->kind == b->kind && a->size == b->size &&
           a->size <= EH_ELF_OBJECT_ID_MAX && !memcmp(a->id, b->id, a->size);
}

void cg_object_id_text(const struct eh_elf_object_id *id, char *buf,
                       size_t size)
{
    const char *kind = id->kind == EH_ELF_OBJECT_ID_BUILD_ID ? "build-id"
                       : id->kind == EH_ELF_OBJECT_ID_FRAME_SHA256
                           ? "frame sha256" : NULL;
    if (!kind || id->size == 0 || id->size > EH_ELF_OBJECT_ID_MAX) {
        snprintf(buf, size, "no recorded file");
        return;
    }
    int n = snprintf(buf, size, "%s ", kind);
    for (uint32_t i = 0; i < id->size && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%02x", id->id[i]);
}

/* The definition of `name` among the dynamic symbols: its bytes in the
 * file, when it is `size` bytes inside one section that has them. */
static const uint8_t *defined_bytes(const struct image *image,
                                    const char *name, size_t size)
{
    for (size_t i = 0; i < image->nsections; i++) {
        const Elf64_Shdr *s = &image->sections[i];
        const Elf64_Sym *symbol =
            s->sh_type == SHT_DYNSYM ? definition(image, s, name) : NULL;
        if (!symbol || symbol->st_shndx >= image->nsections)
            continue;
        const Elf64_Shdr *in = &image->sections[symbol->st_shndx];
        uint64_t at = symbol->st_value - in->sh_addr;
        if (in->sh_type == SHT_NOBITS || symbol->st_value < in->sh_addr ||
            at > in->sh_size || size > in->sh_size - at ||
            !in_file(image, in->sh_offset + at, size))
            return NULL;
        return image->bytes + in->sh_offset + at;
    }
    return NULL;
}

enum cfi_status cg_eh_elf_stamp(const char *path, struct eh_elf_object_id *id,
                                bool *found, struct cfi_diag *diag)
{
    struct image image = {0};
    *id = (struct eh_elf_object_id){0};
    *found = false;
    enum cfi_status status = read_image(path, &image, diag);
    if (status == CFI_OK)
        status = parse(&image, diag);
    const uint8_t *bytes = status == CFI_OK
        ? defined_bytes(&image, "eh_elf_object_id", sizeof *id) : NULL;
    if (bytes) {
        memcpy(id, bytes, sizeof *id);
        *found = true;
    }
    free(image.owned);
    return status;
}
