/* SPDX-License-Identifier: MIT */
/* state.h — the questions the harness asks: which PCs, with which
 * callee registers, over which memory.
 *
 * Everything here is a pure function of a seed and of the file: no random
 * generator carries state from one question to the next, so the same
 * seed gives the same questions whatever the order or the thread that
 * asks them, and every question can be written as one `cfisem unwind`
 * command line (engine_state_reproducer).
 *
 * PCs of one FDE (engine_pcs_of_fde):
 *   - each row's first address, as an innermost frame;
 *   - each row's last address as the lookup PC of a caller frame: the PC
 *     is the return address, last + 1, with caller_frame set;
 *   - in a row of more than two addresses, one address chosen by the
 *     seed inside it, innermost or caller;
 *   - with all_pcs, every address of the FDE as an innermost frame (and
 *     each row's last address as a caller frame still);
 *   - an FDE that cannot be translated: its first address, innermost, and
 *     its last as a caller frame (every engine must say why it fails);
 *   - the first address after the FDE when no FDE covers it (no FDE).
 *
 * States (engine_state_make), state k of N at one PC, by k mod 4:
 *   0, 1  full: registers 0-16 known, random; rsp, rbp and the register
 *         the row's CFA rule is based on in a plausible stack
 *         (stack_base + a few hundred KiB at most);
 *   2     partial: rsp, rip and the CFA's register known, each other
 *         register of 0-16 known or unknown by the seed; one partial
 *         state in eight lacks the CFA's register (rsp included);
 *   3     fault: as full, and one read the reference makes is made to
 *         fault (engine_state_place_fault), so that engines must agree on
 *         memory errors too.
 * rip is the PC. Memory of state k: synthetic with seed engine_state_mem_seed
 * (seed, k), the file's segments mapped, the run's fault ranges, and the
 * state's own fault range (an overlay: engine_overlay).
 */
#ifndef CFISEM_ENGINES_STATE_H
#define CFISEM_ENGINES_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"
#include "engines/memory.h"
#include "semantics/sem.h"

/* The default stack: registers that point into the stack get values in
 * [ENGINE_STACK_BASE, ENGINE_STACK_BASE + ENGINE_STACK_WINDOW). */
#define ENGINE_STACK_BASE 0x7ffe00000000ull
#define ENGINE_STACK_WINDOW 0x40000ull

enum engine_state_kind {
    ENGINE_STATE_FULL,
    ENGINE_STATE_PARTIAL,
    ENGINE_STATE_FAULT,
};

/* Which registers a state may know. */
enum engine_state_regs {
    ENGINE_REGS_ALL,    /* 0-16 as the kind says */
    ENGINE_REGS_V1,     /* rip, rsp, rbp, rbx, always all four (the v1
                           eh_elf ABI); the kinds differ only by faults */
};

struct engine_state_config {
    uint64_t seed;
    uint64_t stack_base;     /* ENGINE_STACK_BASE, or a mapped region */
    uint64_t stack_window;   /* ENGINE_STACK_WINDOW */
    enum engine_state_regs regs;
    bool faults;             /* make state 3 of each 4 a fault state */
};

void engine_state_config_default(struct engine_state_config *config,
                                 uint64_t seed);

/* One PC to ask about. */
struct engine_pc {
    uint64_t pc;
    bool caller_frame;
};

/* Appends the PCs of fde (index `index` in il's file) to *pcs (grown with
 * realloc; *count and *capacity updated). CFI_E_NOMEM on failure. */
enum cfi_status engine_pcs_of_fde(const struct sem_file_il *il, size_t index,
                                  const struct engine_state_config *config,
                                  bool all_pcs, struct engine_pc **pcs,
                                  size_t *count, size_t *capacity);

/* One question: PC, callee registers, memory. */
struct engine_state {
    unsigned index;                 /* k */
    enum engine_state_kind kind;
    struct engine_pc at;
    const struct cfi_arch *arch;    /* the file's: its register names */
    struct cfi_regs callee;
    uint64_t mem_seed;
    bool has_fault;                 /* the state's own faulting range */
    uint64_t fault_begin, fault_end;
};

/* The memory seed of state k. */
uint64_t engine_state_mem_seed(uint64_t seed, unsigned k);
enum engine_state_kind engine_state_kind_of(
    unsigned k, const struct engine_state_config *config);
const char *engine_state_kind_name(enum engine_state_kind kind);

/* Builds state k at `at` for a file of `arch`: its reported registers,
 * the stack pointer in the stack window, the frame pointer above it,
 * the PC register. `row` is the reference's row at the lookup PC (NULL
 * when there is none): its CFA register gets a stack value. */
void engine_state_make(const struct engine_state_config *config,
                       const struct cfi_arch *arch, struct engine_pc at,
                       unsigned k, const struct sem_row *row,
                       struct engine_state *state);

/* The base memory of state k for one file: synthetic memory with the
 * state's seed, the file's segments, and the run's faulting ranges
 * (`faults`: nfaults pairs begin, end). NULL when out of memory. */
struct engine_memory *engine_state_memory(
    const struct engine_state_config *config, unsigned k,
    const struct cfi_file *file, const uint64_t (*faults)[2], size_t nfaults);

/* A reader over a base memory with one more faulting range, which can
 * also record the reads it serves (to choose where a fault goes). The
 * same rule as engine_memory_add_fault: a read touching the range faults. */
#define ENGINE_OVERLAY_READS 32
struct engine_overlay {
    struct cfi_memory base;
    bool has_fault;
    uint64_t fault_begin, fault_end;
    bool record;
    size_t nreads;                          /* reads served, recorded or not */
    uint64_t read_addr[ENGINE_OVERLAY_READS];
    uint8_t read_size[ENGINE_OVERLAY_READS];
};

void engine_overlay_init(struct engine_overlay *overlay, struct cfi_memory base,
                         const struct engine_state *state);
struct cfi_memory engine_overlay_reader(struct engine_overlay *overlay);

/* For a fault state: given the reads the reference made on the state
 * without its own fault (an overlay with record set), makes one of them
 * (chosen by the seed) fault. No read: no fault; the state stays full. */
void engine_state_place_fault(struct engine_state *state,
                              const struct engine_overlay *recorded);

/* One question ready to be asked: the state, where the lookup PC falls,
 * and the request, whose memory is `overlay` (so a question must not be
 * moved once made). */
struct engine_question {
    struct engine_state state;
    const struct cfi_fde *fde;        /* at the lookup PC, or NULL */
    const struct sem_range *range;    /* the reference's row, or NULL */
    enum cfi_status translation;      /* of that FDE; CFI_E_NO_FDE: none */
    struct cfi_memory base;
    struct engine_overlay overlay;
    struct cfi_request request;
};

/* The reference's way of answering (sem_unwind, or a restriction of it). */
typedef enum cfi_status (*engine_reference_fn)(
    const struct sem_file_il *il, const struct cfi_request *request,
    struct cfi_frame *frame);

/* Makes state k at `at` over memory `base` and the reference's answer to
 * it in *expected; a fault state gets its fault here (placed on one of
 * the reads `reference` makes without it). */
void engine_question_make(struct engine_question *q,
                          const struct sem_file_il *il,
                          const struct engine_state_config *config,
                          struct engine_pc at, unsigned k,
                          struct cfi_memory base, engine_reference_fn reference,
                          struct cfi_frame *expected);
/* Resets the overlay's recording before another engine is asked. */
void engine_question_rewind(struct engine_question *q);

/* Writes the `cfisem unwind` command line that asks the same question:
 *   cfisem unwind FILE --pc 0x.. [--caller] --regs rax=0x..,... \
 *       --mem-seed S [--fault B-E]... --engine ENGINE [EXTRA]
 * `faults` are the run's ranges; `extra` (or NULL) is appended as is
 * (e.g. "--eh-elf X.so"). FILE is quoted when it needs to be. */
void engine_state_reproducer(FILE *out, const char *path,
                             const struct engine_state *state,
                             const uint64_t (*faults)[2], size_t nfaults,
                             const char *engine, const char *extra);

#endif
