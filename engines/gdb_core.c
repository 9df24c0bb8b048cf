/* SPDX-License-Identifier: MIT */
/* gdb_core.c — see gdb_core.h. The layout is the one the Linux kernel
 * writes (and gdb reads, corelow.c and the amd64 Linux target): the ELF
 * header, the program headers, a PT_NOTE with one NT_PRSTATUS note
 * ("CORE"), then the PT_LOAD segments' bytes. */
#include "engines/gdb_core.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/reg.h>

enum cfi_status gdb_windows_add(struct gdb_windows *windows, uint64_t addr,
                                uint64_t before, uint64_t after)
{
    if (windows->n == windows->cap) {
        size_t cap = windows->cap ? windows->cap * 2 : 32;
        struct gdb_window *w = realloc(windows->w, cap * sizeof *w);
        if (!w)
            return CFI_E_NOMEM;
        windows->w = w;
        windows->cap = cap;
    }
    uint64_t begin = addr >= before ? addr - before : 0;
    uint64_t end = UINT64_MAX - addr >= after ? addr + after : UINT64_MAX;
    windows->w[windows->n++] = (struct gdb_window){begin & ~7ull, end};
    return CFI_OK;
}

void gdb_windows_free(struct gdb_windows *windows)
{
    free(windows->w);
    memset(windows, 0, sizeof *windows);
}

static int by_begin(const void *a, const void *b)
{
    const struct gdb_window *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Sorts and merges the windows in place. */
static void merge_windows(struct gdb_windows *windows)
{
    if (windows->n == 0)
        return;
    qsort(windows->w, windows->n, sizeof *windows->w, by_begin);
    size_t kept = 0;
    for (size_t i = 1; i < windows->n; i++) {
        struct gdb_window *last = &windows->w[kept];
        if (windows->w[i].begin <= last->end) {
            if (windows->w[i].end > last->end)
                last->end = windows->w[i].end;
        } else {
            windows->w[++kept] = windows->w[i];
        }
    }
    windows->n = kept + 1;
}

/* A run of readable words, its bytes in `bytes` from `offset`. */
struct segment {
    uint64_t addr, len, offset;
};

struct image {
    uint8_t *bytes;
    size_t len;
    struct segment *segments;
    size_t nsegments, cap;
};

static enum cfi_status add_word(struct image *image, uint64_t addr,
                                uint64_t word)
{
    struct segment *last = image->nsegments
                               ? &image->segments[image->nsegments - 1]
                               : NULL;
    if (!last || last->addr + last->len != addr) {
        if (image->nsegments == image->cap) {
            size_t cap = image->cap ? image->cap * 2 : 16;
            struct segment *s = realloc(image->segments, cap * sizeof *s);
            if (!s)
                return CFI_E_NOMEM;
            image->segments = s;
            image->cap = cap;
        }
        last = &image->segments[image->nsegments++];
        *last = (struct segment){addr, 0, image->len};
    }
    for (unsigned i = 0; i < 8; i++)
        image->bytes[image->len++] = (uint8_t)(word >> (8 * i));
    last->len += 8;
    return CFI_OK;
}

/* Reads the windows' readable words, up to GDB_CORE_MAX_BYTES. */
static enum cfi_status read_windows(struct image *image,
                                    const struct gdb_windows *windows,
                                    struct cfi_memory memory)
{
    image->bytes = malloc(GDB_CORE_MAX_BYTES);
    if (!image->bytes)
        return CFI_E_NOMEM;
    for (size_t i = 0; i < windows->n; i++) {
        for (uint64_t a = windows->w[i].begin; a < windows->w[i].end &&
                                               a <= UINT64_MAX - 7; a += 8) {
            if (image->len + 8 > GDB_CORE_MAX_BYTES)
                return CFI_OK;
            uint64_t word;
            if (memory.read(memory.env, a, 8, &word) != CFI_OK)
                continue; /* a fault ends the run: a hole in the core */
            enum cfi_status status = add_word(image, a, word);
            if (status != CFI_OK)
                return status;
        }
    }
    return CFI_OK;
}

/* NT_PRSTATUS of one thread: DWARF register r in the kernel's slot. */
static void fill_prstatus(struct elf_prstatus *pr, const struct cfi_regs *regs)
{
    static const int slot[17] = {RAX, RDX, RCX, RBX, RSI, RDI, RBP, RSP,
                                 R8,  R9,  R10, R11, R12, R13, R14, R15, RIP};
    memset(pr, 0, sizeof *pr);
    pr->pr_pid = 1;
    for (unsigned r = 0; r < 17; r++)
        pr->pr_reg[slot[r]] = regs->value[r];
    pr->pr_reg[CS] = 0x33;
    pr->pr_reg[SS] = 0x2b;
}

static enum cfi_status write_core(FILE *out, const struct cfi_regs *regs,
                                  const struct image *image)
{
    struct elf_prstatus pr;
    fill_prstatus(&pr, regs);
    Elf64_Nhdr note = {5, sizeof pr, NT_PRSTATUS};
    size_t note_size = sizeof note + 8 + sizeof pr;
    size_t nph = 1 + image->nsegments;
    uint64_t data = sizeof(Elf64_Ehdr) + nph * sizeof(Elf64_Phdr);
    Elf64_Ehdr eh = {.e_type = ET_CORE, .e_machine = EM_X86_64,
                     .e_version = EV_CURRENT, .e_phoff = sizeof eh,
                     .e_ehsize = sizeof eh, .e_phentsize = sizeof(Elf64_Phdr),
                     .e_phnum = (Elf64_Half)nph};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = data,
                     .p_filesz = note_size};
    bool ok = fwrite(&eh, sizeof eh, 1, out) && fwrite(&ph, sizeof ph, 1, out);
    for (size_t i = 0; i < image->nsegments && ok; i++) {
        const struct segment *s = &image->segments[i];
        ph = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W,
                          .p_offset = data + note_size + s->offset,
                          .p_vaddr = s->addr, .p_filesz = s->len,
                          .p_memsz = s->len, .p_align = 1};
        ok = fwrite(&ph, sizeof ph, 1, out);
    }
    ok = ok && fwrite(&note, sizeof note, 1, out) &&
         fwrite("CORE\0\0\0", 8, 1, out) && fwrite(&pr, sizeof pr, 1, out) &&
         (image->len == 0 || fwrite(image->bytes, image->len, 1, out));
    return ok ? CFI_OK : CFI_E_IO;
}

enum cfi_status gdb_core_write(const char *path, const struct cfi_regs *callee,
                               struct gdb_windows *windows,
                               struct cfi_memory memory)
{
    merge_windows(windows);
    struct image image = {0};
    enum cfi_status status = read_windows(&image, windows, memory);
    if (status == CFI_OK) {
        FILE *out = fopen(path, "wb");
        status = out ? write_core(out, callee, &image) : CFI_E_IO;
        if (out && fclose(out) != 0)
            status = CFI_E_IO;
    }
    free(image.bytes);
    free(image.segments);
    return status;
}
