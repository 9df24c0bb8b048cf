/* SPDX-License-Identifier: MIT */
/* engine.h — what the differential harness drives: engines that unwind
 * one frame, ours and outside ones, all behind one contract.
 *
 * An engine is opened for one file and answers requests (cfi.h's struct
 * cfi_request: PC, caller-frame flag, callee registers, memory) with a
 * struct engine_answer: the frame it computed and, register by register,
 * whether it can speak for that register at all. An outside engine that
 * cannot express something (a register outside its set, a rule it has no
 * word for, a caller frame it cannot be asked about) marks it "not
 * comparable", never a guess. A difference that it *can* express but
 * answers differently is data: the comparison classifies it as a known
 * deviation (engines/deviations.h) or a new mismatch.
 *
 * Engines are not shared between threads: the harness opens one per
 * worker.
 */
#ifndef CFISEM_ENGINES_ENGINE_H
#define CFISEM_ENGINES_ENGINE_H

#include <stdbool.h>

#include "cfi/cfi.h"

/* The engines, in the order reports list them. `il` is the reference every
 * other engine is compared with. */
#define ENGINES(X)                                                          \
    X(il, "the IL evaluator (semantics/), the reference")                   \
    X(interp, "the direct interpreter (interp/)")                           \
    X(compiled, "the compiled eh_elf (compile/)")                           \
    X(libdwarf, "libdwarf's rule table, evaluated by the harness")          \
    X(libdw, "elfutils libdw's rules, evaluated by the harness")            \
    X(libunwind, "libunwind's remote unw_step")                            \
    X(llvmunwind, "LLVM libunwind's unw_step, in a child process")         \
    X(libgcc, "libgcc's _Unwind_Backtrace from a signal, in a child")      \
    X(sframe, "the file's .sframe (sframe/): the CFA, rbp and rip")        \
    X(gdb, "gdb's DWARF unwinder on a synthetic core, one gdb per file")

enum engine_id {
#define ENGINE_ENUM(name, summary) ENGINE_##name,
    ENGINES(ENGINE_ENUM)
#undef ENGINE_ENUM
    ENGINE_COUNT
};

const char *engine_name(enum engine_id id);
const char *engine_summary(enum engine_id id);
/* -1 when no engine has that name. */
int engine_parse(const char *name, size_t len);

/* An engine's answer to one request. */
struct engine_answer {
    struct cfi_frame frame;
    /* False: the engine cannot be asked this request at all (the frame is
     * then ignored), with the reason. */
    bool comparable;
    const char *not_comparable_reason;
    /* When comparable: does the engine speak for the CFA, and for each
     * caller register? Ignored when frame.status != CFI_OK. */
    bool cfa_comparable;
    bool reg_comparable[CFI_NREGS];
    /* Does frame.signal_frame say what cfi.h step 7 says (the 'S' flag of
     * the FDE's CIE)? */
    bool signal_comparable;
};

/* Marks every register and the CFA comparable, the request comparable. */
void engine_answer_all_comparable(struct engine_answer *answer);
/* A fresh answer: an empty frame (status CFI_OK, no diagnostic) and
 * everything comparable; adapters then narrow it. */
void engine_answer_reset(struct engine_answer *answer);
/* The answer is the error `status`, with a fixed message and the register
 * it names (-1: none). Returns status. */
enum cfi_status engine_answer_error(struct engine_answer *answer,
                                    enum cfi_status status, const char *message,
                                    int reg);

/* The engine cannot be asked this request at all, for `reason` (a fixed
 * string). Returns CFI_E_UNSUPPORTED. */
enum cfi_status engine_answer_not_comparable(struct engine_answer *answer,
                                             const char *reason);

/* Why no outside engine is asked at `lookup_pc`, or NULL: an FDE that
 * covers it overlaps another FDE of its section (the functions of a
 * relocatable object's sections all start at 0, say). DWARF 5 §6.4.1
 * gives no rule for choosing among overlapping FDEs: cfi.h's (the
 * greatest pc_begin) is cfisem's own, and a library may choose another,
 * or, searching a list it takes to be sorted and disjoint, miss the FDE
 * that covers the address alone. */
const char *engine_overlap_reason(const struct cfi_file *file,
                                  uint64_t lookup_pc);

/* One request of a batch, with what the asker knows of its memory:
 * request->memory reads as `shared` does, but faults in [fault_begin,
 * fault_end) when has_fault. Requests of one batch with the same
 * `shared` (function and env) read the same bytes but for their own
 * faulting ranges. shared.read NULL: nothing is known, the request
 * shares its memory with no other. */
struct engine_batch_entry {
    const struct cfi_request *request;
    struct cfi_memory shared;
    bool has_fault;
    uint64_t fault_begin, fault_end;
    struct engine_answer *answer;    /* filled as `unwind` fills it */
};

/* Called once for each answer of a batch, when it is known, and about
 * once a second while the engine waits for a process of its own to
 * start or to load the batch (which its own bound limits): a watchdog
 * sees the batch move. Either may be NULL. */
struct engine_batch_progress {
    void (*answered)(void *env);
    void (*waiting)(void *env);
    void *env;
};

/* An open engine. `unwind` fills *answer completely (frame included) and
 * returns answer->frame.status. `unwind_batch`, NULL for most engines,
 * answers many requests at once, each exactly as `unwind` would but for
 * the cost: an engine whose start-up per question is dear (gdb) pays it
 * once per batch. */
struct engine_instance {
    enum engine_id id;
    void *self;
    enum cfi_status (*unwind)(void *self, const struct cfi_request *request,
                              struct engine_answer *answer);
    void (*close)(void *self);
    void (*unwind_batch)(void *self, struct engine_batch_entry *entries,
                         size_t n, const struct engine_batch_progress *progress);
};

/* What opening an engine may need beyond the file. */
struct engine_config {
    const char *eh_elf_path;   /* compiled: a prebuilt eh_elf, or NULL */
    const char *cache_dir;     /* compiled: where to build one, or NULL */
};

/* Opens engine `id` for `file`. CFI_E_UNSUPPORTED (with a message) when the
 * engine cannot handle this file at all (e.g. libunwind without
 * .eh_frame_hdr); the harness then counts the file's requests as errors of
 * that engine. */
enum cfi_status engine_open(enum engine_id id,
                            const struct cfi_file *file,
                            const struct engine_config *config,
                            struct engine_instance *engine,
                            struct cfi_diag *diag);
void engine_close(struct engine_instance *engine);

#endif
