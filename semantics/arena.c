/* SPDX-License-Identifier: MIT */
/* arena.c — the memory of the IL: a bump allocator over a list of chunks.
 *
 * Allocations are never freed one by one: freeing the arena frees every
 * row, rule and expression it holds. Chunks come from calloc, so every
 * allocation is zeroed without a memset, and each chunk's data starts
 * 16-aligned (the header is padded to 16 bytes; malloc aligns to 16 on
 * x86-64). An allocation larger than a quarter of the usual chunk gets a
 * chunk of its own, so that big rows do not waste the current chunk. */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16
#define ARENA_CHUNK_MIN ((size_t)4096)
#define ARENA_CHUNK_MAX ((size_t)1 << 20)

struct arena_chunk {
    struct arena_chunk *next;
    size_t size; /* bytes of data after the header */
    size_t used;
    /* Pads the header to ARENA_ALIGN bytes. */
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

struct sem_arena {
    struct arena_chunk *chunks; /* the current chunk first */
    size_t next_size;           /* data size of the next ordinary chunk */
};

struct sem_arena *sem_arena_new(void)
{
    struct sem_arena *arena = calloc(1, sizeof *arena);
    if (arena)
        arena->next_size = ARENA_CHUNK_MIN;
    return arena;
}

void sem_arena_free(struct sem_arena *arena)
{
    if (!arena)
        return;
    struct arena_chunk *chunk = arena->chunks;
    while (chunk) {
        struct arena_chunk *next = chunk->next;
        free(chunk);
        chunk = next;
    }
    free(arena);
}

static struct arena_chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(struct arena_chunk))
        return NULL;
    struct arena_chunk *chunk = calloc(1, sizeof *chunk + size);
    if (chunk)
        chunk->size = size;
    return chunk;
}

/* A dedicated chunk for a big allocation goes second in the list, so the
 * current chunk keeps serving small ones. */
static void *alloc_big(struct sem_arena *arena, size_t size)
{
    struct arena_chunk *chunk = chunk_new(size);
    if (!chunk)
        return NULL;
    chunk->used = size;
    if (arena->chunks) {
        chunk->next = arena->chunks->next;
        arena->chunks->next = chunk;
    } else {
        arena->chunks = chunk;
    }
    return chunk->data;
}

void *sem_arena_alloc(struct sem_arena *arena, size_t size)
{
    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (rounded == 0)
        rounded = ARENA_ALIGN;
    if (rounded > ARENA_CHUNK_MIN / 4)
        return alloc_big(arena, rounded);
    struct arena_chunk *chunk = arena->chunks;
    if (!chunk || chunk->size - chunk->used < rounded) {
        chunk = chunk_new(arena->next_size);
        if (!chunk)
            return NULL;
        if (arena->next_size < ARENA_CHUNK_MAX)
            arena->next_size *= 2;
        chunk->next = arena->chunks;
        arena->chunks = chunk;
    }
    void *p = chunk->data + chunk->used;
    chunk->used += rounded;
    return p;
}

void *sem_arena_copy(struct sem_arena *arena, const void *bytes, size_t size)
{
    void *p = sem_arena_alloc(arena, size);
    if (p && size)
        memcpy(p, bytes, size);
    return p;
}
