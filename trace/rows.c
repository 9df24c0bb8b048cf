/* SPDX-License-Identifier: MIT */
/* rows.c — `--at rows` and `--at stapsdt`: a breakpoint (int3) at the first address of
 * every row of every FDE of the mapped ELFs, the program otherwise
 * running at full speed, far cheaper than stepping.
 *
 * Without single steps the calls are not seen; the truth comes from the
 * breakpoints themselves. Each FDE's first address is a row boundary:
 * there, when the word at rsp is the address just after a call
 * instruction (the machine code says so, not the CFI), the function's
 * frame is taken (that return address, the CFA rsp+8, the callee-saved
 * registers as they are), after popping every
 * frame whose CFA is at or below it (frames that returned, and the frame
 * a tail call replaces). At any other boundary the frames whose CFA is at
 * or below rsp are popped, and the stop is checked when the innermost
 * frame left is the one of this FDE; otherwise (a function entered
 * elsewhere than at its FDE's start, a PLT stub) it is counted as before
 * any frame. Context restores are not recognised here (no step sees rsp
 * move): their differences count as mismatches.
 *
 * Breakpoints are set when an ELF is first mapped (system calls are
 * watched: mmap and mprotect bring new code) and stepped over one
 * instruction when hit. A fork or clone would copy them into a process
 * nobody traces, where an int3 kills it: at the first such system call
 * every breakpoint is removed and the program runs on, unchecked.
 * Signals for the program are delivered by one single step, which stops
 * at the handler's first instruction: the interrupted context and the
 * handler's frame are pushed there, as when stepping.
 *
 * `--at stapsdt` sets breakpoints at each FDE's first address (the truth,
 * not checked) and at every SDT probe of the mapped ELFs (sites.c),
 * checked there: a tracer stopped at a probe unwinds from that PC. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "internal.h"

enum {
    SYS_MMAP = 9, SYS_MPROTECT = 10, SYS_CLONE = 56, SYS_FORK = 57,
    SYS_VFORK = 58, SYS_CLONE3 = 435,
};

struct breakpoint {
    uint64_t addr;
    uint64_t function;        /* runtime start of its FDE */
    uint8_t original;
    bool set;                 /* the int3 is written */
    bool check;               /* compared with the truth when hit */
};

struct rows {
    struct breakpoint *bps;   /* sorted by addr */
    size_t n, capacity;
    bool *armed;              /* by ELF index */
    size_t narmed;
    bool active;              /* false once removed for good */
    uint64_t syscall_nr;      /* of the last syscall entry */
};

static int by_addr(const void *a, const void *b)
{
    const struct breakpoint *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static struct breakpoint *find_bp(struct rows *rows, uint64_t addr)
{
    struct breakpoint key = {addr, 0, 0, false, false};
    return bsearch(&key, rows->bps, rows->n, sizeof key, by_addr);
}

static bool add_bp(struct rows *rows, uint64_t addr, uint64_t function,
                   bool check)
{
    if (rows->n == rows->capacity) {
        size_t capacity = rows->capacity ? 2 * rows->capacity : 4096;
        struct breakpoint *grown = realloc(rows->bps, capacity * sizeof *grown);
        if (!grown)
            return false;
        rows->bps = grown;
        rows->capacity = capacity;
    }
    rows->bps[rows->n++] = (struct breakpoint){addr, function, 0, false, check};
    return true;
}

/* Writes byte `value` at addr, returning the byte that was there. */
static bool poke_byte(pid_t pid, uint64_t addr, uint8_t value, uint8_t *old)
{
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)addr, NULL);
    if (errno)
        return false;
    if (old)
        *old = (uint8_t)word;
    word = (long)(((unsigned long)word & ~0xfful) | value);
    return ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)addr,
                  (void *)word) == 0;
}

static bool executable(const struct trace_maps *maps, size_t elf, uint64_t addr)
{
    const struct trace_mapping *m = trace_maps_find(maps, addr);
    return m && m->elf == elf;
}

/* The row starts of ELF `index` mapped with `bias`, added unarmed: every
 * row's (--at rows) or only each FDE's first, for the truth, not checked
 * (--at stapsdt). */
static void collect_rows(struct rows *rows, struct trace_maps *maps,
                         size_t index, uint64_t bias, bool every_row)
{
    const struct sem_file_il *il = trace_elf_il(&maps->elves[index]);
    for (size_t f = 0; il && f < il->nfdes; f++) {
        if (il->status[f] != CFI_OK)
            continue;
        const struct sem_fde_il *fde = &il->fdes[f];
        for (size_t r = 0; r < fde->nranges && (every_row || r == 0); r++) {
            uint64_t addr = fde->ranges[r].begin + bias;
            if (executable(maps, index, addr))
                add_bp(rows, addr, fde->fde->pc_begin + bias, every_row);
        }
    }
}

/* The SDT probes of ELF `index`, checked when hit. */
static void collect_probes(struct rows *rows, struct trace_maps *maps,
                           size_t index, uint64_t bias)
{
    struct trace_elf *elf = &maps->elves[index];
    struct trace_sites sites;
    if (trace_sites_read(elf->file_path, &sites, NULL) != CFI_OK)
        return;
    for (size_t i = 0; i < sites.n; i++) {
        uint64_t addr = sites.sites[i].pc + bias;
        const struct cfi_fde *fde = cfi_file_lookup(elf->file,
                                                    sites.sites[i].pc);
        if (executable(maps, index, addr))
            add_bp(rows, addr, fde ? fde->pc_begin + bias : 0, true);
    }
    trace_sites_free(&sites);
}

/* Sets breakpoints in every mapped ELF not yet armed. */
static void arm_new(struct tracer *t, struct rows *rows)
{
    struct trace_maps *maps = &t->maps;
    if (rows->narmed < maps->nelves) {
        bool *grown = realloc(rows->armed, maps->nelves * sizeof *grown);
        if (!grown)
            return;
        memset(grown + rows->narmed, 0,
               (maps->nelves - rows->narmed) * sizeof *grown);
        rows->armed = grown;
        rows->narmed = maps->nelves;
    }
    for (size_t i = 0; i < maps->nmappings; i++) {
        size_t elf = maps->mappings[i].elf;
        if (rows->armed[elf] || !maps->elves[elf].file)
            continue;
        rows->armed[elf] = true;
        bool every_row = t->options->at == TRACE_AT_ROWS;
        collect_rows(rows, maps, elf, maps->mappings[i].bias, every_row);
        if (!every_row)
            collect_probes(rows, maps, elf, maps->mappings[i].bias);
    }
    /* One breakpoint per address (FDEs of .eh_frame and .debug_frame may
     * share rows): the one already set wins, its original byte kept. */
    qsort(rows->bps, rows->n, sizeof *rows->bps, by_addr);
    size_t kept = 0;
    for (size_t i = 0; i < rows->n; i++) {
        if (kept > 0 && rows->bps[kept - 1].addr == rows->bps[i].addr) {
            bool check = rows->bps[kept - 1].check || rows->bps[i].check;
            if (rows->bps[i].set)
                rows->bps[kept - 1] = rows->bps[i];
            rows->bps[kept - 1].check = check;
            continue;
        }
        rows->bps[kept++] = rows->bps[i];
    }
    rows->n = kept;
    for (size_t i = 0; i < rows->n; i++)
        if (!rows->bps[i].set)
            rows->bps[i].set = poke_byte(t->pid, rows->bps[i].addr, 0xcc,
                                         &rows->bps[i].original);
}

static void disarm_all(struct tracer *t, struct rows *rows)
{
    for (size_t i = 0; i < rows->n; i++)
        if (rows->bps[i].set)
            poke_byte(t->pid, rows->bps[i].addr, rows->bps[i].original, NULL);
    rows->n = 0;
    rows->active = false;
}

/* ---- at a breakpoint --------------------------------------------------- */

/* Reads code as the program wrote it: the original byte in place of
 * every breakpoint of the range. */
static size_t read_code(struct tracer *t, struct rows *rows, uint64_t addr,
                        uint8_t *out, size_t len)
{
    size_t n = trace_mem_read(&t->mem, addr, out, len);
    for (size_t i = 0; i < n; i++) {
        const struct breakpoint *bp = find_bp(rows, addr + i);
        if (bp && bp->set)
            out[i] = bp->original;
    }
    return n;
}

static void update_truth(struct tracer *t, struct rows *rows,
                         const struct user_regs_struct *regs,
                         const struct breakpoint *bp)
{
    struct trace_frame last;
    if (bp->addr != bp->function) {
        trace_shadow_pop_to(&t->shadow, regs->rsp, &last);
        return;
    }
    struct trace_frame frame = {TRACE_FRAME_CALL, 0, regs->rsp + 8, {0},
                                bp->function, false};
    if (!trace_read_word(t, regs->rsp, &frame.ra))
        return;
    /* The handler's frame, pushed when the signal was delivered (no
     * function yet): this is its entry. Any other frame is taken again,
     * with the registers as they are now (a call from the same site
     * since may have other callee-saved values). */
    struct trace_frame *top = t->shadow.depth
                                  ? &t->shadow.frames[t->shadow.depth - 1]
                                  : NULL;
    if (top && top->function == 0 && top->kind == TRACE_FRAME_CALL &&
        top->cfa == frame.cfa && top->ra == frame.ra) {
        top->function = bp->function;
        return;
    }
    trace_shadow_pop_to(&t->shadow, regs->rsp + 8, &last);
    trace_saved_from_regs(regs, frame.saved);
    uint8_t before[8];
    if (frame.ra < sizeof before ||
        read_code(t, rows, frame.ra - sizeof before, before,
                  sizeof before) != sizeof before ||
        !trace_insn_call_ends_at(before, sizeof before))
        return; /* not entered by a call: _start, a PLT's jump, ... */
    trace_shadow_push(&t->shadow, &frame);
    if (t->shadow.depth > t->report->max_depth)
        t->report->max_depth = t->shadow.depth;
}

static void check_here(struct tracer *t, const struct user_regs_struct *regs,
                       const struct breakpoint *bp)
{
    const struct trace_frame *top = trace_shadow_top(&t->shadow);
    if (!top || top->function != bp->function) {
        t->report->no_frame++;
        return;
    }
    struct cfi_regs callee;
    trace_regs_from_user(regs, &callee);
    trace_check_stop(&t->checker, &callee, top);
}

static bool forks(const uint8_t *code, size_t len, uint64_t rax)
{
    return trace_insn_classify(code, len) == TRACE_INSN_SYSCALL &&
           (rax == SYS_CLONE || rax == SYS_FORK || rax == SYS_VFORK ||
            rax == SYS_CLONE3);
}

/* Runs the instruction under the breakpoint (the original byte back for
 * one step), then sets the breakpoint again. A signal that stops the
 * step is passed on with the next resumption. */
static bool step_over(struct tracer *t, struct rows *rows,
                      const struct user_regs_struct *regs,
                      struct breakpoint *bp, int *pending)
{
    uint8_t code[16];
    size_t len = read_code(t, rows, bp->addr, code, sizeof code);
    if (forks(code, len, regs->rax)) {
        t->report->clones++;
        disarm_all(t, rows);
        return true;
    }
    int sig;
    if (!poke_byte(t->pid, bp->addr, bp->original, NULL) ||
        ptrace(PTRACE_SINGLESTEP, t->pid, NULL, NULL) != 0) {
        trace_stop_program(t, TRACE_END_TRACE_FAILED);
        return false;
    }
    enum trace_wait w = trace_wait_stop(t, &sig);
    if (w == TRACE_WAIT_ENDED)
        return false;
    if (w == TRACE_WAIT_EXEC) {
        *pending = -1; /* the caller starts again */
        return true;
    }
    if (sig != SIGTRAP)
        *pending = sig;
    return poke_byte(t->pid, bp->addr, 0xcc, NULL);
}

/* A SIGTRAP stop: our breakpoint (checked and stepped over) or not. */
static bool on_trap(struct tracer *t, struct rows *rows, int *pending)
{
    struct user_regs_struct regs;
    if (!trace_get_regs(t, &regs))
        return false;
    struct breakpoint *bp = rows->active ? find_bp(rows, regs.rip - 1) : NULL;
    if (!bp || !bp->set) {
        *pending = SIGTRAP; /* the program's own */
        return true;
    }
    regs.rip = bp->addr;
    if (ptrace(PTRACE_SETREGS, t->pid, NULL, &regs) != 0) {
        trace_stop_program(t, TRACE_END_TRACE_FAILED);
        return false;
    }
    trace_mem_reset(&t->mem);
    t->report->instructions++;
    update_truth(t, rows, &regs, bp);
    if (bp->check)
        check_here(t, &regs, bp);
    return step_over(t, rows, &regs, bp, pending);
}

/* A signal for the program, delivered by one step: a handler's first
 * instruction is then where the step stops, and its frames are pushed
 * as when single-stepping. */
static bool deliver_signal(struct tracer *t, int sig, int *pending)
{
    struct user_regs_struct pre, post;
    if (!trace_get_regs(t, &pre))
        return false;
    if (ptrace(PTRACE_SINGLESTEP, t->pid, NULL, (void *)(long)sig) != 0) {
        trace_stop_program(t, TRACE_END_TRACE_FAILED);
        return false;
    }
    int stop_sig;
    enum trace_wait w = trace_wait_stop(t, &stop_sig);
    if (w == TRACE_WAIT_ENDED)
        return false;
    if (w == TRACE_WAIT_EXEC) {
        *pending = -1;
        return true;
    }
    if (stop_sig != SIGTRAP) {
        *pending = stop_sig;
        return true;
    }
    if (!trace_get_regs(t, &post))
        return false;
    trace_mem_reset(&t->mem);
    trace_handler_entry(t, &pre, &post, sig);
    return true;
}

/* A system-call stop: new code after mmap and mprotect; a fork or clone
 * ends the breakpoints. */
static void on_syscall(struct tracer *t, struct rows *rows)
{
    struct __ptrace_syscall_info info;
    if (ptrace(PTRACE_GET_SYSCALL_INFO, t->pid, (void *)sizeof info, &info) <= 0)
        return;
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
        rows->syscall_nr = info.entry.nr;
        if (rows->active && forks((const uint8_t *)"\x0f\x05", 2, info.entry.nr)) {
            t->report->clones++;
            disarm_all(t, rows);
        }
        return;
    }
    if (info.op == PTRACE_SYSCALL_INFO_EXIT && rows->active &&
        (rows->syscall_nr == SYS_MMAP || rows->syscall_nr == SYS_MPROTECT)) {
        trace_mem_reset(&t->mem);
        trace_maps_reread(&t->maps, &t->mem);
        arm_new(t, rows);
    }
}

static void restart(struct tracer *t, struct rows *rows)
{
    rows->n = 0;
    memset(rows->armed, 0, rows->narmed * sizeof *rows->armed);
    rows->active = true;
    trace_on_exec(t);
    arm_new(t, rows);
}

void trace_rows_loop(struct tracer *t)
{
    struct rows rows = {NULL, 0, 0, NULL, 0, true, 0};
    int pending = 0;
    if (ptrace(PTRACE_SETOPTIONS, t->pid, NULL,
               (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC |
                              PTRACE_O_TRACESYSGOOD)) != 0) {
        trace_stop_program(t, TRACE_END_TRACE_FAILED);
        return;
    }
    arm_new(t, &rows);
    /* Bounded by the program's end, the timeout and the step limit. */
    for (;;) {
        if (t->report->instructions >= t->options->step_limit) {
            trace_stop_program(t, TRACE_END_STEP_LIMIT);
            break;
        }
        int sig;
        enum __ptrace_request how = rows.active ? PTRACE_SYSCALL : PTRACE_CONT;
        if (ptrace(how, t->pid, NULL, (void *)(long)pending) != 0) {
            trace_stop_program(t, TRACE_END_TRACE_FAILED);
            break;
        }
        pending = 0;
        enum trace_wait w = trace_wait_stop(t, &sig);
        if (w == TRACE_WAIT_ENDED)
            break;
        if (w == TRACE_WAIT_EXEC) {
            restart(t, &rows);
        } else if (sig == (SIGTRAP | 0x80)) {
            on_syscall(t, &rows);
        } else if (sig == SIGTRAP) {
            if (!on_trap(t, &rows, &pending))
                break;
            if (pending == -1) {
                pending = 0;
                restart(t, &rows);
            }
        } else {
            if (!deliver_signal(t, sig, &pending))
                break;
            if (pending == -1) {
                pending = 0;
                restart(t, &rows);
            }
        }
        if (trace_elapsed(t) >= t->options->timeout) {
            trace_stop_program(t, TRACE_END_TIMEOUT);
            break;
        }
    }
    free(rows.bps);
    free(rows.armed);
}
