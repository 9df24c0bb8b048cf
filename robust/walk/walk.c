/* SPDX-License-Identifier: MIT */
/* walk.c — robust-walk: the run-time library's interpreter fallback
 * (libcfisem-unwind) on one shared object's .eh_frame and .eh_frame_hdr,
 * as the robustness campaign mutates them.
 *
 *   robust-walk FILE [SEED [EH_ELF]]
 *
 * loads FILE (dlopen), then walks from many PCs of its executable
 * segments through cfisem_init_remote and cfisem_step, the registers
 * and a small stack made up from SEED (return addresses into FILE among
 * them, so that walks go on for several frames). Every step must end
 * with a result, never a crash. Prints one line of counts; exit 0, or 2
 * with one line when FILE does not load.
 *
 * With EH_ELF (the eh_elf of the file FILE was made from: the campaign
 * gives FILE that file's headers and the mutant's frame sections, so
 * the eh_elf's stamp names FILE when it is a build-id), a copy of it
 * goes beside FILE first (FILE.eh_elf.so, removed at the end), and as
 * many walks again are local ones (cfisem_init_local, the engine
 * chosen by the library) on a stack in pages of their own: the eh_elf
 * unwinds and the frame cache learns each PC's row from FILE's mutated
 * .eh_frame, checks it against the eh_elf's frame, and replays it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/cfisem-unwind.h"

enum { NPCS = 512, MAX_STEPS = 32, STACK_WORDS = 512, NRESULTS = 8 };

/* Where a walk may read: a made-up stack at a made-up address. */
struct fake_stack {
    uint64_t base;
    uint64_t words[STACK_WORDS];
};

struct object_text {
    uintptr_t bias;
    uint64_t lo, hi;   /* the executable segments' run-time span */
};

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int read_stack(void *data, uint64_t addr, unsigned size,
                      uint64_t *value)
{
    const struct fake_stack *s = data;
    if (addr < s->base || addr - s->base > sizeof s->words - size ||
        (size != 1 && size != 2 && size != 4 && size != 8))
        return -1;
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)s->words + (addr - s->base), size);
    *value = v;
    return 0;
}

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_text *t = data;
    if (info->dlpi_addr != t->bias)
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
            continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!t->hi || lo < t->lo)
            t->lo = lo;
        if (hi > t->hi)
            t->hi = hi;
    }
    return 1;
}

/* Words of the stack: a third return addresses into the text, a third
 * addresses in the stack, the rest anything. */
static void fill_stack(struct fake_stack *s, const struct object_text *t,
                       uint64_t *rng)
{
    s->base = 0x7ffe00000000u;
    for (unsigned i = 0; i < STACK_WORDS; i++) {
        uint64_t r = next_random(rng);
        switch (r % 3) {
        case 0: s->words[i] = t->lo + (r >> 8) % (t->hi - t->lo); break;
        case 1: s->words[i] = s->base + (r >> 8) % sizeof s->words; break;
        default: s->words[i] = next_random(rng); break;
        }
    }
}

/* One walk from pc: the result of each step counted (index -result). */
static unsigned walk_from(uint64_t pc, struct fake_stack *s, uint64_t *rng,
                          unsigned engine, uint64_t counts[NRESULTS])
{
    uint64_t regs[CFISEM_NREGS];
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        regs[r] = next_random(rng);
    regs[CFISEM_REG_RSP] = s->base + 8 * (next_random(rng) % (STACK_WORDS / 2));
    regs[CFISEM_REG_RBP] = regs[CFISEM_REG_RSP] + 8 * (next_random(rng) % 32);
    regs[CFISEM_REG_RIP] = pc;
    uint32_t known = next_random(rng) % 4 ? 0x1ffffu
                                          : (1u << CFISEM_REG_RSP) |
                                                (1u << CFISEM_REG_RIP);
    struct cfisem_cursor cursor;
    int result = cfisem_init_remote(&cursor, regs, known, (int)(pc & 1),
                                    read_stack, s);
    unsigned steps = 0;
    if (result == CFISEM_OK &&
        cfisem_set_engine(&cursor, (enum cfisem_engine)engine) == CFISEM_OK) {
        while (steps < MAX_STEPS && (result = cfisem_step(&cursor)) == 1)
            steps++;
        uint64_t value;
        for (unsigned r = 0; r < CFISEM_NREGS; r++)
            cfisem_get_reg(&cursor, r, &value);
    }
    counts[result <= 0 && result > -NRESULTS ? -result : 0]++;
    return steps;
}

/* One local walk from pc on the stack s, whose words lie at s->base
 * (pages of their own, a PROT_NONE page above), with the engine the
 * library chooses: the eh_elf and the frame cache. */
static unsigned local_walk_from(uint64_t pc, const struct fake_stack *s,
                                uint64_t *rng, uint64_t counts[NRESULTS])
{
    struct cfisem_context context;
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        context.regs[r] = next_random(rng);
    context.regs[CFISEM_REG_RSP] =
        s->base + 8 * (next_random(rng) % (STACK_WORDS / 2));
    context.regs[CFISEM_REG_RBP] =
        context.regs[CFISEM_REG_RSP] + 8 * (next_random(rng) % 32);
    context.regs[CFISEM_REG_RIP] = pc;
    context.known = 0x1ffffu;
    struct cfisem_cursor cursor;
    int result = cfisem_init_local(&cursor, &context);
    unsigned steps = 0;
    if (result == CFISEM_OK)
        while (steps < MAX_STEPS && (result = cfisem_step(&cursor)) == 1)
            steps++;
    counts[result <= 0 && result > -NRESULTS ? -result : 0]++;
    return steps;
}

/* The local walks' stack: s's words copied to pages of their own, a
 * PROT_NONE page above them (a local walk reads the stack's pages
 * directly, up to the first it cannot read). NULL when mmap fails. */
static uint64_t *local_stack(const struct fake_stack *s, size_t *size)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t data = (sizeof s->words + (size_t)page - 1) & ~((size_t)page - 1);
    *size = data + (size_t)page;
    uint8_t *at = mmap(NULL, *size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED)
        return NULL;
    if (mprotect(at + data, (size_t)page, PROT_NONE) != 0) {
        munmap(at, *size);
        return NULL;
    }
    uint64_t *words = (uint64_t *)(at + data - sizeof s->words);
    memcpy(words, s->words, sizeof s->words);
    return words;
}

/* A copy of the file at from, at to (made here: not there before). */
static bool copy_to(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    int fd = in ? open(to, O_WRONLY | O_CREAT | O_EXCL, 0644) : -1;
    FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    char buf[65536];
    size_t n;
    bool ok = out != NULL;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out)
        ok = fclose(out) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    return ok;
}

/* The local walks, when EH_ELF was given: the stack's words moved to
 * pages of their own, the return addresses into the text kept. */
static uint64_t local_walks(const struct fake_stack *s,
                            const struct object_text *text, uint64_t *rng,
                            uint64_t counts[NRESULTS])
{
    size_t size;
    uint64_t *words = local_stack(s, &size);
    if (!words) {
        fputs("robust-walk: no memory for the local walks' stack\n",
              stderr);
        exit(2);
    }
    struct fake_stack local = {(uint64_t)(uintptr_t)words, {0}};
    for (unsigned i = 0; i < STACK_WORDS; i++) /* stack addresses moved */
        if (s->words[i] - s->base < sizeof s->words)
            words[i] = s->words[i] - s->base + local.base;
    uint64_t steps = 0, span = text->hi - text->lo;
    for (unsigned i = 0; i < NPCS; i++) {
        uint64_t pc = text->lo +
                      (i * span / NPCS + next_random(rng) % 16) % span;
        steps += local_walk_from(pc, &local, rng, counts);
    }
    long page = sysconf(_SC_PAGESIZE);
    uint64_t first = (local.base + sizeof s->words + (uint64_t)page) -
                     size;
    munmap((void *)(uintptr_t)first, size);
    return steps;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fputs("usage: robust-walk FILE [SEED [EH_ELF]]\n", stderr);
        return 64;
    }
    char eh_elf[4200] = "";
    if (argc == 4) {
        snprintf(eh_elf, sizeof eh_elf, "%s.eh_elf.so", argv[1]);
        if (!copy_to(argv[3], eh_elf)) {
            fprintf(stderr, "robust-walk: %s: cannot copy it to %s\n",
                    argv[3], eh_elf);
            return 2;
        }
    }
    uint64_t rng = argc == 3 ? strtoull(argv[2], NULL, 0) : 1;
    void *handle = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    struct link_map *map = NULL;
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) || !map) {
        fprintf(stderr, "robust-walk: %s: does not load: %s\n", argv[1],
                handle ? "no link map" : dlerror());
        return 2;
    }
    struct object_text text = {map->l_addr, 0, 0};
    dl_iterate_phdr(find_text, &text);
    if (text.hi <= text.lo) {
        fprintf(stderr, "robust-walk: %s: no executable segment\n", argv[1]);
        return 2;
    }
    struct cfisem_options options = {.cache_dir = "/nonexistent/robust-walk",
                                     .system_dir = ""};
    cfisem_prepare(&options);
    struct fake_stack *stack = malloc(sizeof *stack);
    if (!stack)
        return 2;
    fill_stack(stack, &text, &rng);
    uint64_t counts[NRESULTS] = {0}, steps = 0, span = text.hi - text.lo;
    for (unsigned i = 0; i < NPCS; i++) {
        uint64_t pc = text.lo + (i * span / NPCS + next_random(&rng) % 16) % span;
        unsigned engine = i % 2 ? CFISEM_ENGINE_INTERP
                                : CFISEM_ENGINE_INTERP_NO_CACHE;
        steps += walk_from(pc, stack, &rng, engine, counts);
    }
    int walks = NPCS;
    if (eh_elf[0]) {
        struct cfisem_stats stats;
        cfisem_stats(&stats);
        steps += local_walks(stack, &text, &rng, counts);
        walks += NPCS;
        unlink(eh_elf);
        printf("robust-walk: %s: %s\n", argv[1],
               stats.objects_eh_elf > 0 ? "local walks through its eh_elf"
                                        : "its eh_elf refused (stale): "
                                          "local walks by the interpreter");
    }
    printf("robust-walk: %s: %d walks, %llu steps; ends:", argv[1], walks,
           (unsigned long long)steps);
    for (int r = 0; r < NRESULTS; r++)
        if (counts[r])
            printf(" %s %llu", r ? cfisem_strerror(-r) : "end or ok",
                   (unsigned long long)counts[r]);
    putchar('\n');
    free(stack);
    return 0;
}
