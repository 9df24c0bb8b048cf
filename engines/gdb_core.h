/* SPDX-License-Identifier: MIT */
/* gdb_core.h — a synthetic x86-64 ELF core for the gdb engine: one
 * thread (NT_PRSTATUS with registers 0-16 of the request) and a PT_LOAD
 * segment for each run of readable memory in the windows asked for,
 * read through the request's memory model. */
#ifndef CFISEM_ENGINES_GDB_CORE_H
#define CFISEM_ENGINES_GDB_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "cfi/cfi.h"

/* The bytes of one core never exceed this: windows past it are left out
 * (reads there are then outside the core: not comparable). */
#define GDB_CORE_MAX_BYTES (4u << 20)

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

/* Writes the core to `path`: registers 0-16 of `callee` (DWARF numbers:
 * rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip) and the readable words of
 * `windows` from `memory`. CFI_E_IO, CFI_E_NOMEM. */
enum cfi_status gdb_core_write(const char *path, const struct cfi_regs *callee,
                               struct gdb_windows *windows,
                               struct cfi_memory memory);

#endif
