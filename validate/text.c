/* SPDX-License-Identifier: MIT */
/* validate/text.c — the object's text, where a PC may be: the allocated
 * SHF_EXECINSTR sections of its section headers (read from the file's
 * bytes, every offset checked), else its executable segments. */
#include "internal.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

static bool push(uint64_t (**ranges)[2], size_t *count, uint64_t begin,
                 uint64_t end)
{
    if (end <= begin)
        return true;
    uint64_t (*grown)[2] = realloc(*ranges, (*count + 1) * sizeof *grown);
    if (!grown)
        return false;
    grown[*count][0] = begin;
    grown[*count][1] = end;
    *ranges = grown;
    ++*count;
    return true;
}

/* Section headers: true when read (even if none is executable); false
 * with *nomem when out of memory. */
static bool from_sections(const struct cfi_file *file, uint64_t (**ranges)[2],
                          size_t *count, bool *nomem)
{
    Elf64_Ehdr eh;
    if (!file->image || file->image_size < sizeof eh)
        return false;
    memcpy(&eh, file->image, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shnum == 0 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > file->image_size ||
        (file->image_size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
        return false;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, file->image + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) ||
            !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_addr + sh.sh_size < sh.sh_addr)
            continue;
        if (!push(ranges, count, sh.sh_addr, sh.sh_addr + sh.sh_size)) {
            *nomem = true;
            return false;
        }
    }
    return true;
}

static int by_begin(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

bool validate_text_ranges(const struct cfi_file *file, uint64_t (**ranges)[2],
                          size_t *count)
{
    *ranges = NULL;
    *count = 0;
    bool nomem = false;
    if (!from_sections(file, ranges, count, &nomem)) {
        if (nomem)
            return false;
        free(*ranges);
        *ranges = NULL;
        *count = 0;
        for (size_t i = 0; i < file->nsegments; i++) {
            const struct cfi_segment *s = &file->segments[i];
            if (s->executable &&
                !push(ranges, count, s->vaddr, s->vaddr + s->memsz))
                return false;
        }
    }
    if (*count > 1)
        qsort(*ranges, *count, sizeof **ranges, by_begin);
    return true;
}
