/* SPDX-License-Identifier: MIT */
/* internal.h — the parts of trace/ (not part of its contract). */
#ifndef CFISEM_TRACE_INTERNAL_H
#define CFISEM_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
#include <time.h>

#include "cfi/cfi.h"
#include "engines/engines.h"
#include "semantics/sem.h"

/* The machine the tracer reads: ptrace's user_regs_struct and the
 * signal frame's ucontext_t are x86-64's (run.c, process.c). Registers,
 * the stack pointer, the PC and the callee-saved set are its
 * descriptor's; trace_saved_from_regs follows its callee_saved_list. */
#define TRACE_ARCH (&cfi_arch_x86_64)
#include "trace.h"

/* ---- insn.c: what an instruction does to the frames ------------------ */

/* Only what the shadow stack needs: calls and returns (near and far, any
 * prefixes), jumps (tail calls), syscall. Lengths are not needed: a
 * call's return address is read from the stack after the step. */
enum trace_insn {
    TRACE_INSN_OTHER,
    TRACE_INSN_CALL,
    TRACE_INSN_RET,
    TRACE_INSN_JMP,
    TRACE_INSN_SYSCALL,
    TRACE_INSN_SIGN_RA,       /* AArch64: x30 signed (paciasp, ...) */
    TRACE_INSN_AUTH_RA,       /* AArch64: x30 authenticated (autiasp) */
};
/* Classifies the instruction whose first `len` bytes are `code`. */
enum trace_insn trace_insn_classify(const uint8_t *code, size_t len);
/* Whether the `len` bytes before an address end with a call (E8 rel32,
 * or FF /2 with its prefixes, ModRM, SIB and displacement): whether a
 * word found on the stack can be the return address of a call. */
bool trace_insn_call_ends_at(const uint8_t *before, size_t len);
/* The same for one AArch64 instruction (A64, little-endian word); a
 * retaa/retab is a return. */
enum trace_insn trace_insn_classify_a64(uint32_t insn);
/* An exclusive sequence starting at pc (code[0..n) the words there):
 * a load-exclusive, then within TRACE_A64_SEQUENCE instructions its
 * store-exclusive. Single-stepping it never succeeds (each step clears
 * the exclusive monitor under qemu, as on hardware with a debugger), so
 * the tracer runs it to a breakpoint at each of its exits: the
 * instruction after the store, and the target of the one conditional
 * branch in between when that leaves the sequence. Returns the number of
 * exits (1 or 2), or 0 when code[0] is no load-exclusive or the sequence
 * is not of that shape (it is then stepped). */
#define TRACE_A64_SEQUENCE 16
#define TRACE_A64_EXITS 2
size_t trace_a64_exclusive_exits(const uint32_t *code, size_t n, uint64_t pc,
                                 uint64_t exits[TRACE_A64_EXITS]);

/* ---- process.c: the traced process ---------------------------------- */

/* The reader of the traced process's memory: process_vm_readv, with a
 * few 512-byte blocks cached for the current stop. */
#define TRACE_MEM_BLOCK 512
#define TRACE_MEM_BLOCKS 4
struct trace_mem {
    pid_t pid;
    /* The target's reader when it is not a local process (the gdbstub's
     * `m`, rsp.h): bytes read at addr, 0 on a fault; NULL: pid's memory
     * through process_vm_readv. */
    size_t (*read)(void *env, uint64_t addr, void *out, size_t len);
    void *read_env;
    struct {
        uint64_t base;
        size_t len;           /* bytes readable from base */
        bool valid;
        uint8_t bytes[TRACE_MEM_BLOCK];
    } block[TRACE_MEM_BLOCKS];
    unsigned next;            /* round-robin victim */
    uint64_t syscalls;
};
void trace_mem_reset(struct trace_mem *mem); /* a new stop */
/* Reads up to len bytes at addr; returns the count read (0: fault). */
size_t trace_mem_read(struct trace_mem *mem, uint64_t addr, void *out,
                      size_t len);
struct cfi_memory trace_mem_reader(struct trace_mem *mem);

/* The program's registers as DWARF numbers 0-16. */
void trace_regs_from_user(const struct user_regs_struct *user,
                          struct cfi_regs *regs);

/* ---- maps.c: the ELFs mapped in the process, and their engines ------- */

struct trace_elf {
    char *path;               /* as /proc/PID/maps names it ("[vdso]") */
    char *file_path;          /* what was opened (a copy for the vDSO) */
    struct cfi_file *file;    /* NULL: could not be opened */
    uint64_t min_vaddr;       /* lowest segment, page-aligned */
    struct engine_instance engines[ENGINE_COUNT];
    bool engine_open[ENGINE_COUNT];
    struct sem_file_il *il;   /* for reports, built on first need */
    /* The function symbols (cfi_file_functions), read on first need. */
    struct cfi_symbol *symbols;
    size_t nsymbols;
    bool symbols_read;
    uint64_t checked;         /* stops checked in it */
};

struct trace_mapping {
    uint64_t start, end;      /* executable, runtime addresses */
    uint64_t bias;            /* runtime = file address + bias */
    size_t elf;               /* index in trace_maps.elves */
};

struct trace_maps {
    pid_t pid;
    struct trace_elf *elves;
    size_t nelves;
    struct trace_mapping *mappings;
    size_t nmappings;
    uint64_t generation;      /* bumped on every reread */
    const struct trace_options *options;
    char *tmp_dir;            /* for the vDSO's copy */
    struct trace_report *report; /* where open errors go */
};

/* Rereads /proc/PID/maps; opens ELFs seen for the first time. */
enum cfi_status trace_maps_reread(struct trace_maps *maps,
                                  struct trace_mem *mem);
/* The mapping holding pc, or NULL. */
const struct trace_mapping *trace_maps_find(const struct trace_maps *maps,
                                            uint64_t pc);
void trace_maps_forget(struct trace_maps *maps); /* after exec */
/* Adds the ELF at `path` (a target with no /proc/PID/maps: qemu-user's
 * program), its executable segments placed so that its entry point is at
 * runtime address entry_pc; its index in *index. CFI_E_IO when it cannot
 * be opened (the reason among report->open_errors). */
enum cfi_status trace_maps_add_file(struct trace_maps *maps,
                                    struct trace_mem *mem, const char *path,
                                    uint64_t entry_pc, size_t *index);
/* The same, placed at `bias` (runtime = file address + bias); nothing
 * when that ELF is placed already. */
enum cfi_status trace_maps_add_at(struct trace_maps *maps,
                                  struct trace_mem *mem, const char *path,
                                  uint64_t bias, size_t *index);
void trace_maps_free(struct trace_maps *maps);
/* The IL of an ELF's file (built once), or NULL. */
const struct sem_file_il *trace_elf_il(struct trace_elf *elf);
/* The function holding file address pc, as `name` or `name+0xOFF`, into
 * buf; false when no named function symbol holds it. */
bool trace_elf_function(struct trace_elf *elf, uint64_t pc, char *buf,
                        size_t size);

/* ---- from.c: running free up to a function --------------------------- */

enum trace_from_result {
    TRACE_FROM_REACHED,       /* stopped at the function's first byte */
    TRACE_FROM_ENDED,         /* the program ended first (report->end) */
    TRACE_FROM_NO_SYMBOL,     /* the executable has no such function */
    TRACE_FROM_FAILED,        /* ptrace failed */
};
/* Runs the program (stopped, maps read) to the entry of function `name`
 * of its executable. */
enum trace_from_result trace_run_from(struct trace_maps *maps,
                                      const char *name,
                                      struct trace_report *report);

/* ---- shadow.c: the live frames -------------------------------------- */

enum trace_frame_kind { TRACE_FRAME_CALL, TRACE_FRAME_SIGNAL };

struct trace_frame {
    enum trace_frame_kind kind;
    uint64_t ra;              /* caller's PC (exact for a signal frame) */
    uint64_t cfa;
    uint64_t saved[TRACE_NSAVED]; /* callee_saved_list, as at the call */
    uint64_t function;        /* --at rows: runtime start of its FDE */
    /* AArch64: the return address is signed (paciasp/pacibsp ran in the
     * frame, autiasp/autibsp not yet); always false elsewhere. */
    bool ra_signed;
};

#define TRACE_SHADOW_MAX 65536
struct trace_shadow {
    struct trace_frame *frames;
    size_t depth;
    bool overflowed;          /* frames beyond the bound were dropped */
};

bool trace_shadow_init(struct trace_shadow *shadow);
void trace_shadow_free(struct trace_shadow *shadow);
void trace_shadow_push(struct trace_shadow *shadow,
                       const struct trace_frame *frame);
/* Pops every frame whose CFA is at or below rsp; returns how many and
 * the last popped into *last (when any). */
size_t trace_shadow_pop_to(struct trace_shadow *shadow, uint64_t rsp,
                           struct trace_frame *last);
const struct trace_frame *trace_shadow_top(const struct trace_shadow *shadow);

/* ---- check.c: one stop compared with the truth ---------------------- */

struct trace_checker {
    const struct cfi_arch *arch;  /* the traced machine's */
    const struct trace_options *options;
    struct trace_report *report;
    struct trace_maps *maps;
    struct trace_mem *mem;
    size_t groups_capacity;
    uint64_t dumps;           /* reproducers written */
};

/* Compares every engine's answer at this stop with the frame's truth. */
void trace_check_stop(struct trace_checker *checker,
                      const struct cfi_regs *callee,
                      const struct trace_frame *truth);

/* An irregular pop by the instruction at runtime address pc: the groups
 * of its FDE were a context being restored. */
void trace_check_context_restore(struct trace_checker *checker, uint64_t pc);

/* ---- report.c ------------------------------------------------------- */

void trace_group_free(struct trace_group *group);

/* ---- run.c: the tracer ----------------------------------------------- */

struct trace_pc_entry {
    uint64_t pc;
    uint8_t insn;             /* enum trace_insn */
    bool valid;
};

struct tracer {
    const struct trace_options *options;
    struct trace_report *report;
    pid_t pid;
    struct trace_mem mem;
    struct trace_maps maps;
    struct trace_shadow shadow;
    struct trace_checker checker;
    struct trace_pc_entry *pc_cache;
    bool resyncing;
    uint64_t resync_begin, resync_end; /* runtime addresses */
    int pending_signal;
    struct timespec started;
};

enum trace_wait { TRACE_WAIT_STOPPED, TRACE_WAIT_EXEC, TRACE_WAIT_ENDED };

double trace_elapsed(const struct tracer *t);
void trace_saved_from_regs(const struct user_regs_struct *u, uint64_t *saved);
bool trace_read_word(struct tracer *t, uint64_t addr, uint64_t *value);
void trace_stop_program(struct tracer *t, enum trace_end end);
/* The program's next stop, its signal in *sig; TRACE_WAIT_ENDED when it
 * ended (report->end says how). */
enum trace_wait trace_wait_stop(struct tracer *t, int *sig);
bool trace_get_regs(struct tracer *t, struct user_regs_struct *regs);
void trace_on_exec(struct tracer *t);
/* After a step that delivered signal `sig`: when post is the handler's
 * first instruction, pushes the interrupted context (a signal frame) and
 * the handler's frame; false when no handler runs. */
bool trace_handler_entry(struct tracer *t, const struct user_regs_struct *pre,
                         const struct user_regs_struct *post, int sig);

/* Checking pauses until the PC leaves the function holding pc. */
void trace_start_resync(struct tracer *t, uint64_t pc);

/* ---- qemu.c: an AArch64 program under qemu-user's gdbstub ------------ */

/* Whether the program argv[0] (searched in PATH) is an AArch64 ELF;
 * its path into path. */
bool trace_program_is_a64(const char *name, char *path, size_t size);
/* Runs it under qemu-aarch64 -g and traces it over the remote protocol
 * (rsp.h), the tracer initialised. */
void trace_a64_run(struct tracer *t, char *const argv[], const char *path);

/* ---- rows.c: breakpoints at row boundaries --------------------------- */

/* Runs the program with a breakpoint at the first address of every row
 * of every FDE of its ELFs, checking there. */
void trace_rows_loop(struct tracer *t);

#endif
