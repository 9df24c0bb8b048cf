/* SPDX-License-Identifier: MIT */
/* arena.c — a cfi_file's private storage: every allocation lives until
 * the file is closed, so blocks are simply chained and freed together. */
#include "internal.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct cfi_arena_block {
    struct cfi_arena_block *next;
    alignas(max_align_t) unsigned char bytes[];
};

struct cfi_arena *cfi_arena_new(void)
{
    return calloc(1, sizeof(struct cfi_arena));
}

void cfi_arena_free(struct cfi_arena *arena)
{
    if (!arena)
        return;
    struct cfi_arena_block *block = arena->blocks;
    while (block) {
        struct cfi_arena_block *next = block->next;
        free(block);
        block = next;
    }
    free(arena);
}

/* One block per allocation: the file holds a handful of large arrays,
 * not many small objects, so there is nothing to gain from packing. */
void *cfi_arena_alloc(struct cfi_arena *arena, size_t count, size_t size)
{
    if (size != 0 && count > (SIZE_MAX - sizeof(struct cfi_arena_block)) / size)
        return NULL;
    struct cfi_arena_block *block =
        calloc(1, sizeof(struct cfi_arena_block) + count * size);
    if (!block)
        return NULL;
    block->next = arena->blocks;
    arena->blocks = block;
    return block->bytes;
}

void *cfi_arena_copy(struct cfi_arena *arena, const void *bytes, size_t size)
{
    void *copy = cfi_arena_alloc(arena, size, 1);
    if (copy && size)
        memcpy(copy, bytes, size);
    return copy;
}
