/* SPDX-License-Identifier: MIT */
/* eh_elf_v1.h — eh_elfs of the first published ABI (2018-2019), as the
 * validator calls them.
 *
 * The ABI (DESIGN.md), written here again from that text rather than
 * taken from compile/eh_elf.h, so that the validator does not share a
 * mistake with the generator it checks:
 *
 *   typedef struct { uint8_t flags; uintptr_t rip, rsp, rbp, rbx; }
 *       unwind_context_t;
 *   unwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc,
 *                            uintptr_t (*deref)(uintptr_t));   v1
 *   unwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc); v1-direct
 *
 * flags: bit 0 rip, 1 rsp, 2 rbp, 3 rbx defined; bit 7 error. `pc` is the
 * lookup PC, a file address. The result's rsp is the CFA.
 *
 * A foreign file: loaded with dlopen and dlsym("_eh_elf"); no version
 * symbol is required (2018 tools wrote none). Which variant it is cannot
 * be read from the file: the caller says.
 *
 * v1: deref has no context argument and cannot fail. The validator gives
 * it one: a thread-local pointer to the call in progress (the memory
 * reader and a "faulted" flag), set for the duration of the call. This is
 * the one piece of mutable non-local state in engines/, forced by the
 * foreign ABI. A read that faults returns 0 and marks the call faulted;
 * the call's answer is then a memory fault, whatever the eh_elf returns.
 *
 * v1-direct: the eh_elf dereferences raw pointers. The caller must make
 * every address it may read real memory of this process (validate.c maps
 * a region and places the stack there), and must survive a stray read
 * (validate.c calls it in a child process).
 */
#ifndef CFISEM_ENGINES_EH_ELF_V1_H
#define CFISEM_ENGINES_EH_ELF_V1_H

#include <stdbool.h>
#include <stdint.h>

#include "cfi/cfi.h"

enum {
    ENGINE_V1_RIP = 1 << 0,
    ENGINE_V1_RSP = 1 << 1,
    ENGINE_V1_RBP = 1 << 2,
    ENGINE_V1_RBX = 1 << 3,
    ENGINE_V1_ERROR = 1 << 7,
};

struct engine_v1_context {
    uint8_t flags;
    uintptr_t rip, rsp, rbp, rbx;
};

enum engine_v1_variant {
    ENGINE_V1_DEREF,   /* _eh_elf(ctx, pc, deref) */
    ENGINE_V1_DIRECT,  /* _eh_elf(ctx, pc) */
};

struct engine_v1;

/* CFI_E_IO when dlopen fails, CFI_E_UNSUPPORTED when there is no
 * _eh_elf; the message says which. */
enum cfi_status engine_v1_open(const char *path, enum engine_v1_variant variant,
                               struct engine_v1 **v1, struct cfi_diag *diag);
void engine_v1_close(struct engine_v1 *v1);

/* The context for a callee: rip, rsp, rbp, rbx with their flags set
 * when known. */
struct engine_v1_context engine_v1_context_of(const struct cfi_regs *callee);

/* One call. DEREF: memory is read through `memory`, and *faulted says
 * whether a read failed. DIRECT: memory and faulted are not used. */
struct engine_v1_context engine_v1_call(const struct engine_v1 *v1,
                                        struct engine_v1_context ctx,
                                        uint64_t pc, struct cfi_memory memory,
                                        bool *faulted);

#endif
