/* SPDX-License-Identifier: MIT */
/* libunwind_access.h — the accessors of libunwind's remote API, over the
 * harness's memory model and a register file: the one set that the
 * libunwind adapter (engines/oracle_libunwind.c) and the fuzz oracle
 * (fuzz/oracle_libunwind.c) give unw_create_addr_space.
 *
 * Every accessor's `arg` is a struct engine_libunwind_env. libunwind finds
 * the FDE through find_proc_info, over the .eh_frame_hdr search table
 * (_Ux86_64_dwarf_search_unwind_table, as perf does), and reads that
 * table, the FDEs and the stack through access_mem, 8 bytes at a time.
 * Nothing is ever written; there are no floating-point registers, no
 * dynamic unwind info, no procedure names.
 *
 * The lookup PC. A remote cursor's first frame is looked up at its exact
 * rip (unw_init_remote does not back up by one). Before the cursor is
 * initialised (engine_libunwind_init_remote), access_reg answers rip with
 * env->lookup_pc; every later read gets the callee's rip, so that the
 * rules see the request's registers exactly.
 */
#ifndef CFISEM_ENGINES_LIBUNWIND_ACCESS_H
#define CFISEM_ENGINES_LIBUNWIND_ACCESS_H

#ifndef UNW_REMOTE_ONLY
#define UNW_REMOTE_ONLY
#endif
#include <libunwind.h>
#include <stdbool.h>

#include "cfi/cfi.h"

/* What the accessors read, and what they saw during one request. */
struct engine_libunwind_env {
    unw_dyn_info_t table;        /* .eh_frame_hdr's search table */
    struct cfi_memory memory;
    const struct cfi_regs *callee;
    uint64_t lookup_pc;          /* rip, until the cursor is initialised */
    bool initialised;
    /* Recorded by the accessors: */
    bool searched;               /* the first FDE search happened */
    int search_result;           /* ... and what it returned */
    int unknown_reg;             /* first unknown callee register read, -1 */
    bool memory_fault;
    bool partial_word_fault;     /* an aligned word read failed on some of
                                    its bytes only */
};

/* access_reg's code for "the callee register is unknown": not one
 * libunwind itself returns for a CFI problem, so it is told apart. */
#define ENGINE_LIBUNWIND_UNKNOWN_REGISTER (-UNW_EUNSPEC)

/* The accessors (libunwind copies them into the address space). */
unw_accessors_t engine_libunwind_accessors(void);

/* The remote search table of an .eh_frame_hdr at `hdr_addr` (version 1,
 * a datarel|sdata4 table of `count` pairs after its 12-byte header), for
 * the text in [begin, end). */
unw_dyn_info_t engine_libunwind_table(uint64_t hdr_addr, uint64_t count,
                                      uint64_t begin, uint64_t end);

/* An environment for one request: nothing recorded yet, the cursor not
 * initialised. */
void engine_libunwind_env_start(struct engine_libunwind_env *env,
                                unw_dyn_info_t table, struct cfi_memory memory,
                                const struct cfi_regs *callee,
                                uint64_t lookup_pc);

/* unw_init_remote over `env`, which then answers the callee's rip. */
int engine_libunwind_init_remote(unw_cursor_t *cursor, unw_addr_space_t space,
                                 struct engine_libunwind_env *env);

#endif
