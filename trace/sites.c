/* SPDX-License-Identifier: MIT */
/* sites.c — SystemTap SDT probes: the notes of type 3 named "stapsdt"
 * (in .note.stapsdt, but any SHT_NOTE section is read). After the note
 * header, the descriptor holds (64-bit ELF): the probe's PC, the
 * link-time address of .stapsdt.base, the semaphore's address (0: none),
 * then three NUL-terminated strings: provider, name, argument format.
 * Prelink moves .stapsdt.base's section header but not the non-allocated
 * notes: the PC and the semaphore are adjusted by (sh_addr of
 * .stapsdt.base) - (the base the note records) (SystemTap's
 * "UserSpaceProbeImplementation"). */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define NT_STAPSDT 3
#define SITES_MAX 1000000

static bool base_section(Elf *elf, uint64_t *addr)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr shdr;
        const char *name;
        if (gelf_getshdr(scn, &shdr) &&
            (name = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
            !strcmp(name, ".stapsdt.base")) {
            *addr = shdr.sh_addr;
            return true;
        }
    }
    return false;
}

/* The next NUL-terminated string of desc[*at, len), or NULL. */
static const char *take_string(const uint8_t *desc, size_t len, size_t *at)
{
    if (*at >= len)
        return NULL;
    const uint8_t *end = memchr(desc + *at, 0, len - *at);
    if (!end)
        return NULL;
    const char *text = (const char *)desc + *at;
    *at = (size_t)(end - desc) + 1;
    return text;
}

static char *copy(const char *text)
{
    char *c = strdup(text);
    return c;
}

static enum cfi_status add_site(struct trace_sites *sites,
                                const struct trace_site *site)
{
    if (sites->n == SITES_MAX)
        return CFI_E_MALFORMED;
    if (sites->n == sites->capacity) {
        size_t capacity = sites->capacity ? 2 * sites->capacity : 16;
        struct trace_site *grown = realloc(sites->sites, capacity * sizeof *grown);
        if (!grown)
            return CFI_E_NOMEM;
        sites->sites = grown;
        sites->capacity = capacity;
    }
    sites->sites[sites->n++] = *site;
    return CFI_OK;
}

static enum cfi_status read_note(struct trace_sites *sites,
                                 const uint8_t *desc, size_t len,
                                 bool has_base, uint64_t base_addr)
{
    if (len < 24)
        return CFI_E_MALFORMED;
    struct trace_site site;
    memset(&site, 0, sizeof site);
    site.pc = site.link_pc = cfi_load_le(desc, 8);
    site.base = cfi_load_le(desc + 8, 8);
    site.semaphore = cfi_load_le(desc + 16, 8);
    if (has_base && site.base) {
        site.pc += base_addr - site.base;
        if (site.semaphore)
            site.semaphore += base_addr - site.base;
    }
    size_t at = 24;
    const char *provider = take_string(desc, len, &at);
    const char *name = take_string(desc, len, &at);
    const char *args = take_string(desc, len, &at);
    if (!provider || !name)
        return CFI_E_MALFORMED;
    site.provider = copy(provider);
    site.name = copy(name);
    site.args = copy(args ? args : "");
    if (!site.provider || !site.name || !site.args) {
        free(site.provider);
        free(site.name);
        free(site.args);
        return CFI_E_NOMEM;
    }
    return add_site(sites, &site);
}

static enum cfi_status read_notes(Elf *elf, struct trace_sites *sites)
{
    uint64_t base_addr = 0;
    bool has_base = base_section(elf, &base_addr);
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        GElf_Nhdr nhdr;
        size_t offset = 0, name_at, desc_at, next;
        /* Bounded: gelf_getnote advances or returns 0. */
        while (data && (next = gelf_getnote(data, offset, &nhdr, &name_at,
                                            &desc_at)) > offset) {
            offset = next;
            const char *owner = (const char *)data->d_buf + name_at;
            if (nhdr.n_type != NT_STAPSDT || nhdr.n_namesz != 8 ||
                memcmp(owner, "stapsdt", 8))
                continue;
            enum cfi_status status = read_note(
                sites, (const uint8_t *)data->d_buf + desc_at, nhdr.n_descsz,
                has_base, base_addr);
            if (status != CFI_OK)
                return status;
        }
    }
    return CFI_OK;
}

enum cfi_status trace_sites_read(const char *path, struct trace_sites *sites,
                                 struct cfi_diag *diag)
{
    memset(sites, 0, sizeof *sites);
    enum cfi_status status = cfi_check_regular_file(path, diag);
    if (status != CFI_OK)
        return status;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, "cannot open file");
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr ehdr;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
        status = cfi_fail(diag, CFI_E_NOT_ELF, CFI_NO_OFFSET, "not an ELF file");
    } else if (gelf_getclass(elf) != ELFCLASS64) {
        status = cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                          "not a 64-bit ELF file");
    } else {
        status = read_notes(elf, sites);
        if (status != CFI_OK)
            cfi_fail(diag, status, CFI_NO_OFFSET,
                     status == CFI_E_NOMEM ? "out of memory"
                                           : "malformed stapsdt note");
    }
    if (elf)
        elf_end(elf);
    close(fd);
    if (status != CFI_OK)
        trace_sites_free(sites);
    return status;
}

void trace_sites_free(struct trace_sites *sites)
{
    for (size_t i = 0; i < sites->n; i++) {
        free(sites->sites[i].provider);
        free(sites->sites[i].name);
        free(sites->sites[i].args);
    }
    free(sites->sites);
    memset(sites, 0, sizeof *sites);
}
