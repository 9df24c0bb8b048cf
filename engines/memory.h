/* SPDX-License-Identifier: MIT */
/* memory.h — the memory model of the harness (DESIGN.md).
 *
 * Memory is a pure function, so that every engine sees the same bytes:
 *   - inside a mapping (the loadable segments of an ELF image, a raw dump
 *     mapped at an address), the mapping's bytes (zeros past a segment's
 *     file size, up to its memory size);
 *   - elsewhere, when synthetic memory is on, the 8-byte little-endian
 *     word at an 8-aligned address a is splitmix64(seed ^ a); reads of
 *     other sizes and alignments take the bytes of those words;
 *   - elsewhere, when it is off, a fault;
 *   - any byte inside a faulting range faults, whatever else holds it.
 * A read faults when any of its bytes does (or it wraps past 2^64).
 */
#ifndef CFISEM_ENGINES_MEMORY_H
#define CFISEM_ENGINES_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "cfi/cfi.h"

struct engine_memory;

/* synthetic: whether unmapped addresses hold mix(seed ^ a). */
struct engine_memory *engine_memory_new(bool synthetic, uint64_t seed);
void engine_memory_free(struct engine_memory *memory);

/* Maps the loadable segments of a file (borrowed: the file must outlive
 * the memory). */
enum cfi_status engine_memory_map_file(struct engine_memory *memory,
                                       const struct cfi_file *file);
/* Maps `len` bytes at `addr` (copied). CFI_E_MALFORMED if it wraps. */
enum cfi_status engine_memory_map_bytes(struct engine_memory *memory,
                                        uint64_t addr, const uint8_t *bytes,
                                        uint64_t len);
/* Makes [begin, end) fault. */
enum cfi_status engine_memory_add_fault(struct engine_memory *memory,
                                        uint64_t begin, uint64_t end);

/* The reader every engine is given. */
struct cfi_memory engine_memory_reader(struct engine_memory *memory);

/* The synthetic word function: splitmix64's finaliser of x. */
uint64_t engine_mix(uint64_t x);

#endif
