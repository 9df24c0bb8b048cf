/* SPDX-License-Identifier: MIT */
/* frame_id.c — the id of a loaded object without a GNU build-id: the
 * SHA-256 of its file's frame sections (.eh_frame, then .debug_frame, as
 * `cfisem compile` stamps an eh_elf of such a file: compile/eh_elf.h).
 *
 * The file is read from its path, which may name another file than the
 * one loaded (replaced since, say). So the id is given only when every
 * .eh_frame section the file allocates is, byte for byte, what the
 * loaded object has at that address (inside one of its readable PT_LOAD
 * segments): the frames an eh_elf of this file describes are then the
 * loaded object's. .debug_frame is not loaded; it is hashed as it is in
 * the file. Called by cfisem_prepare only, while the loader holds the
 * object (it reads a file, and memory of the object). Memory grows with
 * the number of sections, never with the sizes the headers claim: the
 * sections are read in chunks, and only what lies in the file. */
#define _GNU_SOURCE
#include "internal.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cfi/sha256.h"

/* A file's section headers and their names, read and checked to lie in
 * the file; the sections' bytes are read when they are hashed. */
struct elf_view {
    int fd;
    uint64_t size;
    Elf64_Shdr *sections;
    size_t nsections;
    char *names;
    size_t names_size;
};

static bool in_view(const struct elf_view *v, uint64_t offset, uint64_t size)
{
    return offset <= v->size && size <= v->size - offset;
}

static bool read_at(const struct elf_view *v, void *buf, size_t size,
                    uint64_t offset)
{
    return in_view(v, offset, size) &&
           pread(v->fd, buf, size, (off_t)offset) == (ssize_t)size;
}

/* A copy of size bytes at offset, or NULL. */
static void *read_copy(const struct elf_view *v, uint64_t size,
                       uint64_t offset)
{
    void *buf = in_view(v, offset, size) ? malloc(size ? size : 1) : NULL;
    if (buf && !read_at(v, buf, size, offset)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* A 64-bit little-endian ELF file's section headers and their names. */
static bool parse_view(struct elf_view *v)
{
    Elf64_Ehdr eh;
    if (!read_at(v, &eh, sizeof eh, 0) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
        return false;
    v->nsections = eh.e_shnum;
    v->sections = read_copy(v, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr),
                            eh.e_shoff);
    if (!v->sections)
        return false;
    const Elf64_Shdr *names = &v->sections[eh.e_shstrndx];
    if (names->sh_type == SHT_NOBITS)
        return false;
    v->names = read_copy(v, names->sh_size, names->sh_offset);
    v->names_size = names->sh_size;
    return v->names != NULL;
}

/* Section s is named `name` exactly, and its bytes lie in the file. */
static bool is_section(const struct elf_view *v, const Elf64_Shdr *s,
                       const char *name)
{
    size_t len = strlen(name);
    return s->sh_type != SHT_NOBITS && s->sh_name < v->names_size &&
           v->names_size - s->sh_name > len &&
           !memcmp(v->names + s->sh_name, name, len + 1) &&
           in_view(v, s->sh_offset, s->sh_size);
}

/* [addr, addr + size) lies in the file-backed part of one readable
 * PT_LOAD segment of the loaded object. */
static bool mapped_in(const struct dl_phdr_info *info, uint64_t addr,
                      uint64_t size)
{
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && addr >= lo &&
            addr - lo <= ph->p_filesz && size <= ph->p_filesz - (addr - lo))
            return true;
    }
    return false;
}

enum { CHUNK = 65536 };

/* Section s's bytes into sha; when `loaded` is not NULL, they must also
 * be the loaded object's at its address. */
static bool hash_section(const struct elf_view *v, const Elf64_Shdr *s,
                         const struct dl_phdr_info *loaded,
                         struct cfi_sha256 *sha, uint8_t *chunk)
{
    uint64_t addr = loaded ? loaded->dlpi_addr + s->sh_addr : 0;
    if (loaded && !mapped_in(loaded, addr, s->sh_size))
        return false;
    for (uint64_t done = 0; done < s->sh_size;) {
        size_t n = s->sh_size - done < CHUNK ? s->sh_size - done : CHUNK;
        if (!read_at(v, chunk, n, s->sh_offset + done))
            return false;
        if (loaded && memcmp((const void *)(uintptr_t)(addr + done), chunk, n))
            return false;
        cfi_sha256_add(sha, chunk, n);
        done += n;
    }
    return true;
}

/* Every section named `name` in section order; an allocated .eh_frame
 * checked against the loaded object. */
static bool hash_sections(const struct elf_view *v, const char *name,
                          const struct dl_phdr_info *info,
                          struct cfi_sha256 *sha, uint8_t *chunk)
{
    for (size_t i = 0; i < v->nsections; i++) {
        const Elf64_Shdr *s = &v->sections[i];
        if (!is_section(v, s, name))
            continue;
        bool loaded = !strcmp(name, ".eh_frame") && (s->sh_flags & SHF_ALLOC);
        if (!hash_section(v, s, loaded ? info : NULL, sha, chunk))
            return false;
    }
    return true;
}

bool rt_frame_sha256(const char *path, const struct dl_phdr_info *info,
                     uint8_t digest[32])
{
    struct elf_view v = {.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (v.fd < 0)
        return false;
    struct stat st;
    uint8_t *chunk = malloc(CHUNK);
    bool ok = chunk && fstat(v.fd, &st) == 0 && S_ISREG(st.st_mode);
    v.size = ok ? (uint64_t)st.st_size : 0;
    struct cfi_sha256 sha;
    cfi_sha256_init(&sha);
    ok = ok && parse_view(&v) &&
         hash_sections(&v, ".eh_frame", info, &sha, chunk) &&
         hash_sections(&v, ".debug_frame", info, &sha, chunk);
    if (ok)
        cfi_sha256_digest(&sha, digest);
    free(chunk);
    free(v.sections);
    free(v.names);
    close(v.fd);
    return ok;
}
