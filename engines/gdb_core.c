/* SPDX-License-Identifier: MIT */
/* gdb_core.c — see gdb_core.h. The layout is the one the Linux kernel
 * writes (and gdb reads, corelow.c and the amd64 Linux target): the ELF
 * header, the program headers, a PT_NOTE with one NT_PRSTATUS note
 * ("CORE") a thread, then the PT_LOAD segments' bytes. */
#include "engines/gdb_core.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/reg.h>

/* `array` of n elements of `size` bytes, with room for one more (its
 * room *cap doubled, `first` at first); NULL when out of memory (the
 * array unchanged). */
static void *grow(void *array, size_t n, size_t *cap, size_t size,
                  size_t first)
{
    if (n < *cap)
        return array;
    size_t more = *cap ? *cap * 2 : first;
    void *grown = realloc(array, more * size);
    if (grown)
        *cap = more;
    return grown;
}

/* ------------------------------------------------------------------ */
/* Windows and images                                                   */
/* ------------------------------------------------------------------ */

enum cfi_status gdb_windows_add(struct gdb_windows *windows, uint64_t addr,
                                uint64_t before, uint64_t after)
{
    struct gdb_window *w = grow(windows->w, windows->n, &windows->cap,
                                sizeof *w, 32);
    if (!w)
        return CFI_E_NOMEM;
    windows->w = w;
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

static enum cfi_status image_push(struct gdb_image *image,
                                  struct gdb_word word)
{
    struct gdb_word *words = grow(image->words, image->n, &image->cap,
                                  sizeof *words, 512);
    if (!words)
        return CFI_E_NOMEM;
    image->words = words;
    image->words[image->n++] = word;
    return CFI_OK;
}

enum cfi_status gdb_image_read(struct gdb_image *image,
                               struct gdb_windows *windows,
                               struct cfi_memory memory)
{
    merge_windows(windows);
    image->n = 0;
    size_t readable = 0;
    for (size_t i = 0; i < windows->n; i++) {
        /* Merged windows are disjoint but may share an 8-byte word. */
        uint64_t a = windows->w[i].begin;
        if (image->n && image->words[image->n - 1].addr >= a)
            a = image->words[image->n - 1].addr + 8;
        for (; a < windows->w[i].end && a <= UINT64_MAX - 7 &&
               readable < GDB_CORE_MAX_BYTES / 8; a += 8) {
            uint64_t value = 0;
            bool ok = memory.read(memory.env, a, 8, &value) == CFI_OK;
            readable += ok;
            if (image_push(image, (struct gdb_word){a, value, ok}) != CFI_OK)
                return CFI_E_NOMEM;
            if (a == UINT64_MAX - 7)
                break;
        }
    }
    return CFI_OK;
}

void gdb_image_free(struct gdb_image *image)
{
    free(image->words);
    memset(image, 0, sizeof *image);
}

/* ------------------------------------------------------------------ */
/* The core: threads and a table of words                               */
/* ------------------------------------------------------------------ */

enum slot_state { SLOT_EMPTY, SLOT_READABLE, SLOT_HOLE };

struct slot {
    uint64_t addr, value;
    uint8_t state;          /* enum slot_state */
};

struct gdb_core {
    struct slot *slots;     /* open addressing, linear probing */
    size_t nslots;          /* a power of two, or 0 */
    size_t nwords;          /* slots in use */
    size_t nreadable;
    uint64_t (*regs)[GDB_NREGS];
    size_t nthreads, cap;
};

struct gdb_core *gdb_core_new(void)
{
    return calloc(1, sizeof(struct gdb_core));
}

void gdb_core_free(struct gdb_core *core)
{
    if (!core)
        return;
    free(core->slots);
    free(core->regs);
    free(core);
}

void gdb_core_clear(struct gdb_core *core)
{
    if (core->slots)
        memset(core->slots, 0, core->nslots * sizeof *core->slots);
    core->nwords = core->nreadable = core->nthreads = 0;
}

size_t gdb_core_nthreads(const struct gdb_core *core)
{
    return core->nthreads;
}

static size_t slot_of(const struct gdb_core *core, uint64_t addr)
{
    size_t mask = core->nslots - 1;
    size_t i = (size_t)((addr >> 3) * 0x9e3779b97f4a7c15ull >> 20) & mask;
    while (core->slots[i].state != SLOT_EMPTY && core->slots[i].addr != addr)
        i = (i + 1) & mask;
    return i;
}

/* Room for `more` words with the table at most half full. */
static bool reserve(struct gdb_core *core, size_t more)
{
    size_t want = core->nslots ? core->nslots : 1024;
    while (want < 2 * (core->nwords + more))
        want *= 2;
    if (want == core->nslots)
        return true;
    struct slot *old = core->slots;
    size_t nold = core->nslots;
    core->slots = calloc(want, sizeof *core->slots);
    if (!core->slots) {
        core->slots = old;
        return false;
    }
    core->nslots = want;
    for (size_t i = 0; i < nold; i++)
        if (old[i].state != SLOT_EMPTY)
            core->slots[slot_of(core, old[i].addr)] = old[i];
    free(old);
    return true;
}

/* Whether the image agrees with every word of the core, and how many
 * readable words it would add. */
static bool agrees(const struct gdb_core *core, const struct gdb_image *image,
                   size_t *new_readable)
{
    *new_readable = 0;
    for (size_t i = 0; i < image->n; i++) {
        const struct gdb_word *w = &image->words[i];
        const struct slot *s = core->nslots ? &core->slots[slot_of(core,
                                                                 w->addr)]
                                            : NULL;
        if (!s || s->state == SLOT_EMPTY) {
            *new_readable += w->readable;
            continue;
        }
        bool readable = s->state == SLOT_READABLE;
        if (readable != w->readable || (readable && s->value != w->value))
            return false;
    }
    return true;
}

static bool push_thread(struct gdb_core *core, const uint64_t regs[GDB_NREGS])
{
    uint64_t (*all)[GDB_NREGS] = grow(core->regs, core->nthreads, &core->cap,
                                      sizeof *all, 64);
    if (!all)
        return false;
    core->regs = all;
    memcpy(core->regs[core->nthreads++], regs, sizeof *core->regs);
    return true;
}

enum gdb_core_add gdb_core_add(struct gdb_core *core,
                               const uint64_t regs[GDB_NREGS],
                               const struct gdb_image *image)
{
    size_t new_readable;
    if (core->nthreads &&
        (!agrees(core, image, &new_readable) ||
         core->nreadable + new_readable > GDB_CORE_MAX_BYTES / 8))
        return GDB_CORE_CONFLICT;
    if (!reserve(core, image->n) || !push_thread(core, regs))
        return GDB_CORE_NOMEM;
    for (size_t i = 0; i < image->n; i++) {
        const struct gdb_word *w = &image->words[i];
        struct slot *s = &core->slots[slot_of(core, w->addr)];
        if (s->state != SLOT_EMPTY)
            continue;
        *s = (struct slot){w->addr, w->value,
                           w->readable ? SLOT_READABLE : SLOT_HOLE};
        core->nwords++;
        core->nreadable += w->readable;
    }
    return GDB_CORE_ADDED;
}

/* ------------------------------------------------------------------ */
/* Writing                                                              */
/* ------------------------------------------------------------------ */

/* A run of readable words: words [first, first + count) of the sorted
 * list, at addr. */
struct segment {
    uint64_t addr;
    size_t first, count;
};

struct layout {
    struct slot *words;     /* the readable words, sorted */
    size_t nwords;
    struct segment *segments;
    size_t nsegments;
};

static int by_addr(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* e_phnum is 16 bits (PN_XNUM and beyond take a section header): runs
 * past this many are left out. */
#define MAX_SEGMENTS 0xfff0u

static bool lay_out(const struct gdb_core *core, struct layout *layout)
{
    memset(layout, 0, sizeof *layout);
    layout->words = malloc((core->nreadable ? core->nreadable : 1) *
                           sizeof *layout->words);
    layout->segments = malloc((core->nreadable ? core->nreadable : 1) *
                              sizeof *layout->segments);
    if (!layout->words || !layout->segments)
        return false;
    for (size_t i = 0; i < core->nslots; i++)
        if (core->slots[i].state == SLOT_READABLE)
            layout->words[layout->nwords++] = core->slots[i];
    qsort(layout->words, layout->nwords, sizeof *layout->words, by_addr);
    for (size_t i = 0; i < layout->nwords; i++) {
        struct segment *last = layout->nsegments
                                   ? &layout->segments[layout->nsegments - 1]
                                   : NULL;
        if (last && last->addr + 8 * last->count == layout->words[i].addr)
            last->count++;
        else if (layout->nsegments < MAX_SEGMENTS)
            layout->segments[layout->nsegments++] =
                (struct segment){layout->words[i].addr, i, 1};
    }
    return true;
}

/* NT_PRSTATUS of one thread: DWARF register r in the kernel's slot. */
static void fill_prstatus(struct elf_prstatus *pr, pid_t lwp,
                          const uint64_t regs[GDB_NREGS])
{
    static const int slot[GDB_NREGS] = {RAX, RDX, RCX, RBX, RSI, RDI,
                                        RBP, RSP, R8,  R9,  R10, R11,
                                        R12, R13, R14, R15, RIP};
    memset(pr, 0, sizeof *pr);
    pr->pr_pid = lwp;
    for (unsigned r = 0; r < GDB_NREGS; r++)
        pr->pr_reg[slot[r]] = regs[r];
    pr->pr_reg[CS] = 0x33;
    pr->pr_reg[SS] = 0x2b;
}

static bool write_note(FILE *out, pid_t lwp, const uint64_t regs[GDB_NREGS])
{
    struct elf_prstatus pr;
    fill_prstatus(&pr, lwp, regs);
    Elf64_Nhdr note = {5, sizeof pr, NT_PRSTATUS};
    return fwrite(&note, sizeof note, 1, out) &&
           fwrite("CORE\0\0\0", 8, 1, out) && fwrite(&pr, sizeof pr, 1, out);
}

#define NOTE_SIZE (sizeof(Elf64_Nhdr) + 8 + sizeof(struct elf_prstatus))

static bool write_headers(FILE *out, const struct gdb_core *core,
                          const struct layout *layout)
{
    size_t nph = 1 + layout->nsegments;
    uint64_t notes = sizeof(Elf64_Ehdr) + nph * sizeof(Elf64_Phdr);
    uint64_t data = notes + (core->nthreads + 1) * NOTE_SIZE;
    Elf64_Ehdr eh = {.e_type = ET_CORE, .e_machine = EM_X86_64,
                     .e_version = EV_CURRENT, .e_phoff = sizeof eh,
                     .e_ehsize = sizeof eh, .e_phentsize = sizeof(Elf64_Phdr),
                     .e_phnum = (Elf64_Half)nph};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = notes,
                     .p_filesz = data - notes};
    bool ok = fwrite(&eh, sizeof eh, 1, out) && fwrite(&ph, sizeof ph, 1, out);
    for (size_t i = 0; i < layout->nsegments && ok; i++) {
        const struct segment *s = &layout->segments[i];
        ph = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W,
                          .p_offset = data + 8 * s->first,
                          .p_vaddr = s->addr, .p_filesz = 8 * s->count,
                          .p_memsz = 8 * s->count, .p_align = 1};
        ok = fwrite(&ph, sizeof ph, 1, out);
    }
    return ok;
}

static bool write_core(FILE *out, const struct gdb_core *core,
                       const struct layout *layout)
{
    static const uint64_t none[GDB_NREGS];
    bool ok = write_headers(out, core, layout) && write_note(out, 1, none);
    for (size_t t = 0; t < core->nthreads && ok; t++)
        ok = write_note(out, (pid_t)(GDB_CORE_FIRST_LWP + t), core->regs[t]);
    for (size_t i = 0; i < layout->nwords && ok; i++) {
        uint8_t bytes[8];
        for (unsigned b = 0; b < 8; b++)
            bytes[b] = (uint8_t)(layout->words[i].value >> (8 * b));
        ok = fwrite(bytes, 8, 1, out);
    }
    return ok;
}

enum cfi_status gdb_core_write(const struct gdb_core *core, const char *path)
{
    struct layout layout;
    enum cfi_status status = CFI_E_NOMEM;
    if (lay_out(core, &layout)) {
        FILE *out = fopen(path, "wb");
        status = out && write_core(out, core, &layout) ? CFI_OK : CFI_E_IO;
        if (out && fclose(out) != 0)
            status = CFI_E_IO;
    }
    free(layout.words);
    free(layout.segments);
    return status;
}
