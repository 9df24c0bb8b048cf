/* SPDX-License-Identifier: MIT */
/* gdb_core.h — a synthetic x86-64 ELF core for the gdb engine, for a
 * batch of requests: one thread per request (NT_PRSTATUS with registers
 * 0-16 of the request), after a first thread of the core's own, and
 * PT_LOAD segments holding the union of the requests' memory images.
 *
 * A request's image is the words of the address windows it may read,
 * each readable (its value, through the request's memory model) or not
 * (a hole of the core). Images go into one core only where they agree:
 * no word that one image has readable with one value is readable with
 * another value, or a hole, in another. */
#ifndef CFISEM_ENGINES_GDB_CORE_H
#define CFISEM_ENGINES_GDB_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "cfi/cfi.h"

/* Registers 0-16 (DWARF numbers: rax rdx rcx rbx rsi rdi rbp rsp r8-r15
 * rip): those a core gives a thread. */
#define GDB_NREGS 17

/* The readable bytes of one core never exceed this: an image that would
 * pass it goes to another core; the first image of a core is cut there
 * (reads past it are then outside the core: not comparable). */
#define GDB_CORE_MAX_BYTES (16u << 20)

/* The LWP of the thread of request i of a core is GDB_CORE_FIRST_LWP + i.
 * The core's first thread (LWP 1, every register 0) is the one gdb
 * selects and shows when it loads the core: no request's frame is
 * unwound before it is asked for. */
#define GDB_CORE_FIRST_LWP 2

/* Address windows [begin, end), in any order, overlapping or not. */
struct gdb_windows {
    size_t n, cap;
    struct gdb_window { uint64_t begin, end; } *w;
};

/* Adds [addr - before, addr + after), clamped to the address space.
 * CFI_E_NOMEM only. */
enum cfi_status gdb_windows_add(struct gdb_windows *windows, uint64_t addr,
                                uint64_t before, uint64_t after);
void gdb_windows_free(struct gdb_windows *windows);

/* One request's image: its words (8-aligned addresses), sorted, each
 * once. */
struct gdb_image {
    struct gdb_word { uint64_t addr, value; bool readable; } *words;
    size_t n, cap;
};

/* Reads the words of `windows` (sorted and merged in place) from
 * `memory`, at most GDB_CORE_MAX_BYTES of them readable. A word any of
 * whose bytes faults is a hole. CFI_E_NOMEM only. */
enum cfi_status gdb_image_read(struct gdb_image *image,
                               struct gdb_windows *windows,
                               struct cfi_memory memory);
void gdb_image_free(struct gdb_image *image);

/* A core being put together. */
struct gdb_core;

struct gdb_core *gdb_core_new(void);   /* NULL: out of memory */
void gdb_core_free(struct gdb_core *core);
/* Empties the core: no thread, no word. */
void gdb_core_clear(struct gdb_core *core);
size_t gdb_core_nthreads(const struct gdb_core *core);

enum gdb_core_add {
    GDB_CORE_ADDED,     /* a new thread, LWP GDB_CORE_FIRST_LWP + index */
    GDB_CORE_CONFLICT,  /* the image disagrees with the core's, or would
                           pass GDB_CORE_MAX_BYTES: the core unchanged */
    GDB_CORE_NOMEM,     /* the core unchanged */
};

/* Adds a thread with `regs` (registers 0-16) and its image. An empty
 * core takes any image. */
enum gdb_core_add gdb_core_add(struct gdb_core *core,
                               const uint64_t regs[GDB_NREGS],
                               const struct gdb_image *image);

/* Writes the core to `path`. CFI_E_IO, CFI_E_NOMEM. */
enum cfi_status gdb_core_write(const struct gdb_core *core,
                               const char *path);

#endif
