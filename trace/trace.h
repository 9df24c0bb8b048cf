/* SPDX-License-Identifier: MIT */
/* trace.h — ground truth from an execution: does the CFI describe the
 * code that runs?
 *
 * A program runs under ptrace, one instruction at a time. A shadow stack
 * keeps the truth of every live frame, taken from the machine itself: at
 * each call, the return address the call pushed, the CFA (the caller's rsp
 * just before the call) and the callee-saved registers (rbx, rbp, r12-r15)
 * as they were. At each stop, the innermost frame is unwound by each
 * engine asked (engines/engine.h), from the real registers and the real
 * memory, and compared with that truth: the CFA, the caller's rip, and
 * each callee-saved register.
 *
 * The shadow stack follows the machine, not the code's intent:
 *   - call (direct, indirect, through the PLT): a frame is pushed when the
 *     step left rsp 8 lower; its return address is the word at the new rsp;
 *   - any step that leaves rsp at or above a frame's CFA pops that frame
 *     (ret, longjmp, sigreturn, an exception landing, a frame discarded by
 *     hand); a pop that does not land on the popped frame's return address
 *     (longjmp, exceptions) is irregular: checking pauses until the PC
 *     leaves the function (FDE) that moved rsp, the code that restores a
 *     context running between two frames;
 *   - a tail call (a jump into another function) keeps the frame: the
 *     return address, the CFA and the saved registers are those of the
 *     frame it replaces;
 *   - signal delivery pushes two frames: the interrupted context (a signal
 *     frame: CFA the interrupted rsp, caller PC the interrupted PC, every
 *     register as it was), then the handler's (return address the word at
 *     rsp, __restore_rt);
 *   - exec starts again with an empty stack.
 * Only the first thread is followed (threads and processes it creates run
 * untraced; the report counts the clone calls).
 */
#ifndef CFISEM_TRACE_TRACE_H
#define CFISEM_TRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"
#include "engines/engines.h"
#include "semantics/sem.h"

/* What a mismatch is about. */
#define TRACE_KINDS(X)                                                      \
    X(cfa, "CFA wrong")                                                     \
    X(ra, "return address wrong")                                           \
    X(reg, "register wrong")                                                \
    X(ra_state, "RA_SIGN_STATE wrong")                                      \
    X(ra_undefined, "undefined return address in a live frame")             \
    X(error, "unwinding failed in a live frame")                            \
    X(no_fde, "no FDE where code runs")

enum trace_kind {
#define TRACE_KIND_ENUM(name, text) TRACE_KIND_##name,
    TRACE_KINDS(TRACE_KIND_ENUM)
#undef TRACE_KIND_ENUM
    TRACE_KIND_COUNT
};
const char *trace_kind_name(enum trace_kind kind);
const char *trace_kind_text(enum trace_kind kind);

/* The callee-saved registers the truth records: the traced machine's
 * (arch.h, callee_saved_list), in increasing DWARF number. */
#define TRACE_NSAVED 11

struct trace_options {
    bool engines[ENGINE_COUNT]; /* which engines are asked */
    bool check;               /* false: bare stepping, nothing checked */
    uint64_t sample;          /* check every Nth instruction (1: all) */
    uint64_t step_limit;      /* stop the program after this many steps */
    double timeout;           /* seconds; stop the program after them */
    const char *dump_dir;     /* where reproducers go, or NULL: none */
    const char *cache_dir;    /* compiled: the eh_elf cache, or NULL */
    const char *cfisem;       /* the tool's path, for reproducer lines */
    bool quiet_program;       /* the program's stdout/stderr to /dev/null */
    /* Run at full speed to this function of the executable, then step
     * from there (NULL: from the first instruction). */
    const char *from_symbol;
    /* Where the program stops: every instruction (single steps), or
     * breakpoints only, at the first address of every row, or at the SDT
     * probes (with breakpoints at function entries for the truth). */
    enum trace_at { TRACE_AT_STEP, TRACE_AT_ROWS, TRACE_AT_STAPSDT } at;
    /* The CFI of the ELF mapped from path cfi_elf (as /proc/PID/maps
     * names it) is read from cfi_file instead, a file with the same
     * addresses (synth's table built back by synth/il2s.py); NULL: none. */
    const char *cfi_elf;
    const char *cfi_file;
    /* AArch64: the guest's root, for qemu -L and the libraries; NULL:
     * TRACE_A64_SYSROOT. */
    const char *sysroot;
};
#define TRACE_A64_SYSROOT "/usr/aarch64-linux-gnu"

void trace_options_default(struct trace_options *options);

/* How the traced program ended. */
enum trace_end {
    TRACE_END_EXITED,         /* exit status in end_value */
    TRACE_END_SIGNALED,       /* killed by signal end_value */
    TRACE_END_TIMEOUT,        /* stopped after options.timeout */
    TRACE_END_STEP_LIMIT,     /* stopped after options.step_limit steps */
    TRACE_END_EXEC_FAILED,    /* PROGRAM could not be run; errno in end_value */
    TRACE_END_TRACE_FAILED,   /* ptrace itself failed */
    TRACE_END_NO_SYMBOL,      /* options.from_symbol: no such function */
    TRACE_END_TARGET_SILENT,  /* the gdbstub stopped answering: killed */
    TRACE_END_UNSUPPORTED,    /* an option the target's machine lacks */
};

#define TRACE_GROUP_PCS 512

/* One group of mismatches: one ELF, one FDE (or none), one kind, one
 * register (rip for ra kinds, -1 for cfa), every engine that got it
 * wrong. The first occurrence is kept whole, as a reproducer. */
struct trace_group {
    char *elf;
    uint64_t fde_begin, fde_end;  /* file addresses; 0, 0: no FDE */
    enum trace_kind kind;
    int reg;
    uint64_t count;               /* differences, over all engines */
    bool engines[ENGINE_COUNT];
    /* Stops of each engine whose first difference is in this group: the
     * groups' stops add up to the engine's mismatches. */
    uint64_t stops[ENGINE_COUNT];
    /* The FDE's code then moved rsp above the frame other than by a
     * return (longjmp, __builtin_eh_return): it was restoring another
     * context, which its CFI describes (explained, not a mismatch). */
    bool context_restore;
    uint64_t pc_first, pc_last;   /* lowest and highest PC, file addresses */
    /* The distinct PCs, sorted (the first TRACE_GROUP_PCS of them; more:
     * pcs_truncated). */
    uint64_t pcs[TRACE_GROUP_PCS];
    size_t npcs;
    bool pcs_truncated;
    /* The first occurrence. */
    enum engine_id engine;
    uint64_t pc;                  /* file address */
    uint64_t runtime_pc;
    uint64_t expected, got;
    bool got_value;               /* false: got_text says what instead */
    const char *got_text;         /* "undefined", an error class, ... */
    struct cfi_regs callee;       /* rax..r15, rip (runtime) */
    char *row_il;                 /* the row's IL, one line */
    char *function;               /* name+0xOFF of pc, or NULL */
    char *dump_path;              /* the stack copied, or NULL */
    uint64_t dump_addr;
    char *reproducer;             /* a cfisem unwind line, or NULL */
};

struct trace_engine_count {
    uint64_t agree, mismatch;
    uint64_t explained;           /* of mismatch: in context restores */
};

struct trace_report {
    const struct cfi_arch *arch;  /* the traced machine's; NULL: x86-64 */
    enum trace_end end;
    int end_value;
    uint64_t instructions;        /* steps completed */
    uint64_t stops_checked;       /* stops where the truth was compared */
    uint64_t no_frame;            /* stops before any frame exists */
    uint64_t no_fde;              /* stops in code no FDE covers */
    uint64_t no_elf;              /* stops in code of no mapped ELF */
    uint64_t resync;              /* stops skipped while resynchronising */
    uint64_t signals;             /* signal deliveries seen */
    uint64_t irregular_pops;      /* longjmp, exceptions, ... */
    uint64_t execs;
    uint64_t clones;              /* clone calls: threads not followed */
    uint64_t max_depth;
    /* options.from_symbol was set and never reached (the program ended
     * first, or rewrote the function's first byte, the breakpoint). */
    bool from_missed;
    double seconds;
    struct trace_engine_count engines[ENGINE_COUNT];
    bool engine_asked[ENGINE_COUNT];
    struct trace_group *groups;
    size_t ngroups;
    char **open_errors;           /* "ELF: message" per ELF not checkable */
    size_t nopen_errors;
    /* Every ELF the program mapped, with the stops checked in it. */
    struct trace_elf_count {
        char *path;
        uint64_t checked;
    } *elves;
    size_t nelves;
};

/* Runs argv[0] (searched in PATH) with argv under ptrace and fills
 * *report (to be freed with trace_report_free even on failure). CFI_OK
 * when the trace ran, whatever the program did; CFI_E_IO when it could
 * not be started (report->end says why); CFI_E_NOMEM. */
enum cfi_status trace_run(char *const argv[],
                          const struct trace_options *options,
                          struct trace_report *report);
void trace_report_free(struct trace_report *report);

/* Mismatches over every engine, those explained as context restores
 * left out. */
uint64_t trace_report_mismatches(const struct trace_report *report);
/* "exited with status 0", "killed by SIGSEGV", ... into buf. */
const char *trace_end_text(const struct trace_report *report, char *buf,
                           size_t size);

void trace_report_text(FILE *out, const struct trace_report *report,
                       bool disassemble);
void trace_report_json(FILE *out, const struct trace_report *report);

/* ---- SystemTap SDT probes (sites.c) ---------------------------------- */

/* One probe of a file's .note.stapsdt. */
struct trace_site {
    uint64_t pc;              /* file address, adjusted by .stapsdt.base */
    uint64_t link_pc;         /* as the note records it */
    uint64_t base;            /* the note's .stapsdt.base */
    uint64_t semaphore;       /* adjusted like pc; 0: none */
    char *provider, *name, *args;
};

struct trace_sites {
    struct trace_site *sites;
    size_t n, capacity;
};

/* Reads every stapsdt note of `path` (64-bit ELF). CFI_E_IO,
 * CFI_E_NOT_ELF, CFI_E_UNSUPPORTED (32-bit), CFI_E_MALFORMED (a note too
 * short or a string without its NUL) with diag's message. A file with no
 * probe gives none and CFI_OK. */
enum cfi_status trace_sites_read(const char *path, struct trace_sites *sites,
                                 struct cfi_diag *diag);
void trace_sites_free(struct trace_sites *sites);

/* The probes of several files, for `cfisem diff --pcs stapsdt`: the
 * harness's diff_config.pcs_of_fde is trace_probe_pcs_of_fde with this as
 * its env (read only: safe from the worker threads). */
struct trace_probe_pcs {
    struct trace_probe_file *files;
    size_t nfiles;
};
/* On failure, *failed is the index of the path that could not be read. */
enum cfi_status trace_probe_pcs_load(struct trace_probe_pcs *probes,
                                     const char *const *paths, size_t n,
                                     size_t *failed, struct cfi_diag *diag);
void trace_probe_pcs_free(struct trace_probe_pcs *probes);
/* Each probe PC inside FDE `index`, as an innermost frame. */
enum cfi_status trace_probe_pcs_of_fde(void *env, const struct sem_file_il *il,
                                       size_t index, struct engine_pc **pcs,
                                       size_t *count, size_t *capacity);

#endif
