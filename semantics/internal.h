/* SPDX-License-Identifier: MIT */
/* internal.h — what the files of semantics/ share and nobody else sees. */
#ifndef CFISEM_SEM_INTERNAL_H
#define CFISEM_SEM_INTERNAL_H

#include <stddef.h>

#include "sem.h"

/* `size` zeroed bytes, 16-aligned, owned by the arena (freed with it).
 * NULL when out of memory (or size overflows). size 0 gives a valid,
 * unique pointer. */
void *sem_arena_alloc(struct sem_arena *arena, size_t size);

/* A copy of `size` bytes in the arena; NULL when out of memory. */
void *sem_arena_copy(struct sem_arena *arena, const void *bytes, size_t size);

/* Assembles the DW_OP listing of the text format ("breg7 160; deref")
 * that starts at line[*column] and ends at the ')' closing it. On success
 * *expr holds the bytes (copied into the arena) and *column is the column
 * of that ')'. Errors: CFI_E_MALFORMED with diag->offset the column of the
 * problem, CFI_E_NOMEM. */
enum cfi_status sem_expr_assemble(const char *line, size_t *column,
                                  struct sem_arena *arena,
                                  struct sem_expr *expr,
                                  struct cfi_diag *diag);

/* Bounded reading of the bytes [pos, len). Each function fails, leaving
 * pos anywhere, when the bytes end first. The LEB128 readers also fail
 * (and set *overflow) when the number does not fit in 64 bits; *overflow
 * must be false on entry. */
struct sem_cursor {
    const uint8_t *bytes;
    size_t len;
    size_t pos;
};
bool sem_read_fixed(struct sem_cursor *c, unsigned size, uint64_t *value);
bool sem_read_uleb(struct sem_cursor *c, uint64_t *value, bool *overflow);
bool sem_read_sleb(struct sem_cursor *c, int64_t *value, bool *overflow);

/* sem_eval_expr, telling `trace` (may be NULL) each operation. */
enum cfi_status sem_eval_expr_traced(const struct sem_expr *expr,
                                     const struct cfi_regs *callee,
                                     struct cfi_memory memory,
                                     bool has_initial, uint64_t initial,
                                     uint64_t *result, struct cfi_diag *diag,
                                     const struct sem_trace *trace);

#endif
