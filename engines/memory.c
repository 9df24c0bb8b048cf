/* SPDX-License-Identifier: MIT */
/* memory.c — see memory.h. */
#include "memory.h"

#include <stdlib.h>
#include <string.h>

struct mapping {
    uint64_t begin;        /* [begin, end) */
    uint64_t end;
    uint64_t filled;       /* bytes of `bytes`; zeros after, up to end */
    const uint8_t *bytes;
    uint8_t *owned;        /* the copy, for mapped bytes */
};

struct fault_range {
    uint64_t begin;
    uint64_t end;
};

struct engine_memory {
    bool synthetic;
    uint64_t seed;
    struct mapping *mappings;
    size_t nmappings;
    struct fault_range *faults;
    size_t nfaults;
};

uint64_t engine_mix(uint64_t x)
{
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct engine_memory *engine_memory_new(bool synthetic, uint64_t seed)
{
    struct engine_memory *memory = calloc(1, sizeof *memory);
    if (memory) {
        memory->synthetic = synthetic;
        memory->seed = seed;
    }
    return memory;
}

void engine_memory_free(struct engine_memory *memory)
{
    if (!memory)
        return;
    for (size_t i = 0; i < memory->nmappings; i++)
        free(memory->mappings[i].owned);
    free(memory->mappings);
    free(memory->faults);
    free(memory);
}

static enum cfi_status add_mapping(struct engine_memory *memory,
                                   struct mapping mapping)
{
    struct mapping *grown = realloc(memory->mappings,
                                    (memory->nmappings + 1) * sizeof *grown);
    if (!grown)
        return CFI_E_NOMEM;
    memory->mappings = grown;
    memory->mappings[memory->nmappings++] = mapping;
    return CFI_OK;
}

enum cfi_status engine_memory_map_file(struct engine_memory *memory,
                                       const struct cfi_file *file)
{
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        if (s->memsz == 0 || s->vaddr + s->memsz < s->vaddr)
            continue;
        uint64_t filled = s->filesz < s->memsz ? s->filesz : s->memsz;
        struct mapping m = {s->vaddr, s->vaddr + s->memsz, filled, s->bytes,
                            NULL};
        enum cfi_status status = add_mapping(memory, m);
        if (status != CFI_OK)
            return status;
    }
    return CFI_OK;
}

enum cfi_status engine_memory_map_bytes(struct engine_memory *memory,
                                        uint64_t addr, const uint8_t *bytes,
                                        uint64_t len)
{
    if (addr + len < addr || len > SIZE_MAX)
        return CFI_E_MALFORMED;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return CFI_E_NOMEM;
    memcpy(copy, bytes, len);
    struct mapping m = {addr, addr + len, len, copy, copy};
    enum cfi_status status = add_mapping(memory, m);
    if (status != CFI_OK)
        free(copy);
    return status;
}

enum cfi_status engine_memory_add_fault(struct engine_memory *memory,
                                        uint64_t begin, uint64_t end)
{
    struct fault_range *grown =
        realloc(memory->faults, (memory->nfaults + 1) * sizeof *grown);
    if (!grown)
        return CFI_E_NOMEM;
    memory->faults = grown;
    memory->faults[memory->nfaults++] = (struct fault_range){begin, end};
    return CFI_OK;
}

static bool faults(const struct engine_memory *memory, uint64_t begin,
                   uint64_t end)
{
    for (size_t i = 0; i < memory->nfaults; i++)
        if (begin < memory->faults[i].end && memory->faults[i].begin < end)
            return true;
    return false;
}

/* The byte at addr, or false when nothing holds it. The first mapping
 * that holds an address wins. */
static bool byte_at(const struct engine_memory *memory, uint64_t addr,
                    uint8_t *byte)
{
    for (size_t i = 0; i < memory->nmappings; i++) {
        const struct mapping *m = &memory->mappings[i];
        if (addr >= m->begin && addr < m->end) {
            uint64_t at = addr - m->begin;
            *byte = at < m->filled ? m->bytes[at] : 0;
            return true;
        }
    }
    if (!memory->synthetic)
        return false;
    uint64_t word = engine_mix(memory->seed ^ (addr & ~(uint64_t)7));
    *byte = (uint8_t)(word >> (8 * (addr & 7)));
    return true;
}

/* The common cases without the byte loop: a read inside one mapping, and
 * an aligned word of synthetic memory that no mapping touches. */
static bool read_fast(const struct engine_memory *memory, uint64_t addr,
                      unsigned size, uint64_t *value)
{
    for (size_t i = 0; i < memory->nmappings; i++) {
        const struct mapping *m = &memory->mappings[i];
        if (!(addr < m->end && m->begin < addr + size))
            continue;
        /* The first mapping that touches the read decides. */
        if (addr < m->begin || addr + size > m->begin + m->filled)
            return false;
        *value = cfi_load_le(m->bytes + (addr - m->begin), size);
        return true;
    }
    if (!memory->synthetic || size != 8 || (addr & 7))
        return false;
    *value = engine_mix(memory->seed ^ addr);
    return true;
}

static enum cfi_status read_memory(void *env, uint64_t addr, unsigned size,
                                   uint64_t *value)
{
    const struct engine_memory *memory = env;
    if (size == 0 || size > 8 || addr + size < addr ||
        faults(memory, addr, addr + size))
        return CFI_E_MEMORY;
    uint64_t result = 0;
    if (read_fast(memory, addr, size, value))
        return CFI_OK;
    for (unsigned i = 0; i < size; i++) {
        uint8_t byte;
        if (!byte_at(memory, addr + i, &byte))
            return CFI_E_MEMORY;
        result |= (uint64_t)byte << (8 * i);
    }
    *value = result;
    return CFI_OK;
}

struct cfi_memory engine_memory_reader(struct engine_memory *memory)
{
    return (struct cfi_memory){read_memory, memory};
}
