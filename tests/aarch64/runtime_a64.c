/* SPDX-License-Identifier: MIT */
/* runtime_a64.c — libcfisem-unwind on AArch64, run under qemu-aarch64
 * (make run-runtime_aarch64). A plain C program with its own checks
 * (Check is not installed for arm64): it prints each check, and exits
 * 1 when one failed.
 *
 * Usage: runtime_a64 NAME_DIR [ITERATIONS]. NAME_DIR holds the eh_elf
 * of the cross C library, libc.so.6.table.eh_elf.so (make eh-elfs); the
 * program's own is beside it (runtime_a64.eh_elf.so). ITERATIONS (200)
 * is the number of backtraces timed per method.
 *
 * Checked, against arm64 libgcc's _Unwind_Backtrace (the same PCs,
 * frame by frame, to the end of the stack, after at most SKIP frames of
 * each list's head, which are this program's own call sites):
 *   - a recursion 100 frames deep: cfisem_backtrace, a cursor through
 *     the eh_elfs (every step by an eh_elf: the program's and libc's),
 *     a cursor through the interpreter (every step by it), with its row
 *     cache and without, and a remote cursor (its reads through a
 *     callback); so on every stack below;
 *   - from a signal handler (raise, SIGUSR1, at the bottom of a
 *     recursion): cfisem_backtrace and a cursor through the signal
 *     frame (qemu's sigreturn trampoline, sigframe.c), and a cursor
 *     from the handler's ucontext, through the eh_elfs and the
 *     interpreter; the same for a timer's SIGALRM that interrupts a
 *     leaf function without a frame of its own (the caller's stack
 *     pointer is the interrupted frame's);
 *   - through frames built with -mbranch-protection=pac-ret and
 *     pac-ret+b-key (pac.c): the x30 the frames saved on the stack is
 *     signed (it differs from its stripped value: qemu's default CPU
 *     implements pointer authentication), and the unwound PCs are the
 *     stripped return addresses libgcc gives, through the eh_elfs and
 *     the interpreter; some frame's RA_SIGN_STATE is 1 and its x30 the
 *     signed value.
 * Then the cost of a backtrace 100 frames deep per frame, by each
 * method in this one run (the median of ITERATIONS, the methods in
 * turn): under emulation only the ratios mean something. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unwind.h>

#include "../../runtime/cfisem-unwind.h"
#include "pac.h"

enum { MAX_PCS = 256, SKIP = 3, DEPTH = 100 };

struct pcs {
    void *pc[MAX_PCS];
    int n;
};

/* Every check goes through here: failures are counted, and the
 * program's exit status says whether there was one. */
struct checks {
    int run;
    int failed;
};

static void check(struct checks *c, int ok, const char *what)
{
    c->run++;
    if (!ok)
        c->failed++;
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
}

/* ------------------------------------------------------------------ */
/* PC lists                                                              */
/* ------------------------------------------------------------------ */

static _Unwind_Reason_Code gcc_trace(struct _Unwind_Context *context,
                                     void *arg)
{
    struct pcs *list = arg;
    if (list->n == MAX_PCS)
        return _URC_NORMAL_STOP;
    list->pc[list->n++] = (void *)_Unwind_GetIP(context);
    return _URC_NO_REASON;
}

/* libgcc's: the outermost frame's undefined return address, a PC of 0,
 * dropped as glibc's backtrace() does. */
__attribute__((noinline)) static void gcc_backtrace(struct pcs *list)
{
    list->n = 0;
    _Unwind_Backtrace(gcc_trace, list);
    if (list->n > 0 && list->pc[list->n - 1] == NULL)
        list->n--;
}

__attribute__((noinline)) static void our_backtrace(struct pcs *list)
{
    list->n = cfisem_backtrace(list->pc, MAX_PCS);
}

/* A cursor's PCs, from the frame it is on; *last the last step's
 * result, stats its counts. */
static void cursor_pcs(struct cfisem_cursor *cursor, struct pcs *list,
                       int *last, struct cfisem_cursor_stats *stats)
{
    uint64_t pc;
    list->n = 0;
    if (cfisem_get_reg(cursor, CFISEM_REG_PC, &pc) == CFISEM_OK)
        list->pc[list->n++] = (void *)(uintptr_t)pc;
    while (list->n < MAX_PCS && (*last = cfisem_step(cursor)) == 1 &&
           cfisem_get_reg(cursor, CFISEM_REG_PC, &pc) == CFISEM_OK)
        list->pc[list->n++] = (void *)(uintptr_t)pc;
    cfisem_cursor_stats(cursor, stats);
}

/* A cursor from here, through `engine`. */
__attribute__((noinline)) static void local_pcs(enum cfisem_engine engine,
                                                struct pcs *list, int *last,
                                                struct cfisem_cursor_stats *s)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    *last = -100;
    list->n = 0;
    if (cfisem_init_local(&cursor, &context) != CFISEM_OK ||
        cfisem_set_engine(&cursor, engine) != CFISEM_OK)
        return;
    cursor_pcs(&cursor, list, last, s);
}

static bool same_tail(const struct pcs *a, int i, const struct pcs *b, int j)
{
    if (a->n - i != b->n - j)
        return false;
    for (int k = 0; i + k < a->n; k++)
        if (a->pc[i + k] != b->pc[j + k])
            return false;
    return true;
}

/* After skipping at most `skip` entries of each, the two lists name the
 * same PCs to the same end, at least `min` of them. */
static bool same_callers(const struct pcs *ours, const struct pcs *gcc,
                         int skip, int min)
{
    for (int i = 0; i <= skip && i < ours->n; i++)
        for (int j = 0; j <= skip && j < gcc->n; j++)
            if (ours->n - i >= min && same_tail(ours, i, gcc, j))
                return true;
    if (getenv("CFISEM_TEST_DEBUG"))
        for (int k = 0; k < ours->n || k < gcc->n; k++)
            fprintf(stderr, "%3d %p %p\n", k,
                    k < ours->n ? ours->pc[k] : NULL,
                    k < gcc->n ? gcc->pc[k] : NULL);
    return false;
}

static int index_of(const struct pcs *list, void *pc)
{
    for (int i = 0; i < list->n; i++)
        if (list->pc[i] == pc)
            return i;
    return -1;
}

/* ------------------------------------------------------------------ */
/* A recursion                                                           */
/* ------------------------------------------------------------------ */

typedef void leaf_fn(void *arg);

__attribute__((noinline)) static int recurse(int depth, leaf_fn *leaf,
                                             void *arg);
static int (*volatile again)(int, leaf_fn *, void *) = recurse;

static int recurse(int depth, leaf_fn *leaf, void *arg)
{
    if (depth <= 0) {
        leaf(arg);
        return 0;
    }
    return again(depth - 1, leaf, arg) + 1;
}

/* A remote cursor's reads: this process's memory, through the
 * callback (a remote walk loads nothing itself). */
static int read_own(void *data, uint64_t addr, unsigned size,
                    uint64_t *value)
{
    (void)data;
    *value = 0;
    memcpy(value, (const void *)(uintptr_t)addr, size);
    return 0;
}

/* A remote cursor from here, its registers those of cfisem_getcontext. */
__attribute__((noinline)) static void remote_pcs(struct pcs *list,
                                                 int *last)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    struct cfisem_cursor_stats stats;
    *last = -100;
    list->n = 0;
    if (cfisem_init_remote(&cursor, context.regs, context.known, 0,
                           read_own, NULL) == CFISEM_OK)
        cursor_pcs(&cursor, list, last, &stats);
}

/* The backtraces of one stack by every method. */
struct stack {
    struct pcs gcc, ours, eh_elf, interp, interp_no_cache, remote;
    int last_eh_elf, last_interp, last_no_cache, last_remote;
    struct cfisem_cursor_stats stats_eh_elf, stats_interp, stats_no_cache;
};

static void take_all(struct stack *s)
{
    gcc_backtrace(&s->gcc);
    our_backtrace(&s->ours);
    local_pcs(CFISEM_ENGINE_AUTO, &s->eh_elf, &s->last_eh_elf,
              &s->stats_eh_elf);
    local_pcs(CFISEM_ENGINE_INTERP, &s->interp, &s->last_interp,
              &s->stats_interp);
    local_pcs(CFISEM_ENGINE_INTERP_NO_CACHE, &s->interp_no_cache,
              &s->last_no_cache, &s->stats_no_cache);
    remote_pcs(&s->remote, &s->last_remote);
}

static void leaf_all(void *arg)
{
    take_all(arg);
}

/* The three of ours against libgcc's, each to the end of the stack,
 * which every walk reached cleanly (its last step 0), every step (the
 * last, which found the end, included) by the engine asked for, but
 * `sigreturn` steps at the sigreturn trampoline, which are neither's
 * (sigframe.c). */
static void check_stack(struct checks *c, const struct stack *s,
                        const char *what, int min, int sigreturn)
{
    char text[240];
    snprintf(text, sizeof text, "%s: cfisem_backtrace = _Unwind_Backtrace "
             "(%d PCs, libgcc %d)", what, s->ours.n, s->gcc.n);
    check(c, same_callers(&s->ours, &s->gcc, SKIP, min), text);
    snprintf(text, sizeof text, "%s: cursor through eh_elfs = "
             "_Unwind_Backtrace (%d PCs; %u eh_elf steps, %u interpreter; "
             "last step %d)", what, s->eh_elf.n, s->stats_eh_elf.frames_eh_elf,
             s->stats_eh_elf.frames_interp, s->last_eh_elf);
    check(c, same_callers(&s->eh_elf, &s->gcc, SKIP, min) &&
                 s->last_eh_elf == 0 && s->stats_eh_elf.frames_interp == 0 &&
                 (int)s->stats_eh_elf.frames_eh_elf == s->eh_elf.n - sigreturn,
          text);
    snprintf(text, sizeof text, "%s: cursor through the interpreter = "
             "_Unwind_Backtrace (%d PCs; %u interpreter steps, %u eh_elf; "
             "last step %d)", what, s->interp.n, s->stats_interp.frames_interp,
             s->stats_interp.frames_eh_elf, s->last_interp);
    check(c, same_callers(&s->interp, &s->gcc, SKIP, min) &&
                 s->last_interp == 0 && s->stats_interp.frames_eh_elf == 0 &&
                 (int)s->stats_interp.frames_interp == s->interp.n - sigreturn,
          text);
    snprintf(text, sizeof text, "%s: cursor through the interpreter "
             "without its row cache = _Unwind_Backtrace (%d PCs; last step "
             "%d)", what, s->interp_no_cache.n, s->last_no_cache);
    check(c, same_callers(&s->interp_no_cache, &s->gcc, SKIP, min) &&
                 s->last_no_cache == 0 &&
                 s->stats_no_cache.frames_eh_elf == 0, text);
    snprintf(text, sizeof text, "%s: remote cursor (reads through a "
             "callback) = _Unwind_Backtrace (%d PCs; last step %d)", what,
             s->remote.n, s->last_remote);
    check(c, same_callers(&s->remote, &s->gcc, SKIP, min) &&
                 s->last_remote == 0, text);
}

static void test_recursion(struct checks *c)
{
    static struct stack s;
    recurse(DEPTH, leaf_all, &s);

    check_stack(c, &s, "recursion 100 deep", DEPTH, 0);
}

/* ------------------------------------------------------------------ */
/* From a signal handler                                                 */
/* ------------------------------------------------------------------ */

struct in_handler {
    struct stack s;
    struct pcs uc_eh_elf, uc_interp;
    int last_uc_eh_elf, last_uc_interp;
    struct cfisem_cursor_stats stats_uc_eh_elf, stats_uc_interp;
};

static struct in_handler *handler_data;

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)info;
    struct in_handler *h = handler_data;
    take_all(&h->s);
    struct cfisem_cursor cursor;
    h->last_uc_eh_elf = h->last_uc_interp = -100;
    if (cfisem_init_ucontext(&cursor, uc) == CFISEM_OK)
        cursor_pcs(&cursor, &h->uc_eh_elf, &h->last_uc_eh_elf,
                   &h->stats_uc_eh_elf);
    if (cfisem_init_ucontext(&cursor, uc) == CFISEM_OK &&
        cfisem_set_engine(&cursor, CFISEM_ENGINE_INTERP) == CFISEM_OK)
        cursor_pcs(&cursor, &h->uc_interp, &h->last_uc_interp,
                   &h->stats_uc_interp);
}

static void leaf_raise(void *arg)
{
    (void)arg;
    raise(SIGUSR1);
}

/* The ucontext's cursor: its first PC is the interrupted one, exact;
 * libgcc's list has it after the trampoline's: the tails from there
 * are the same. */
static void check_ucontext(struct checks *c, const struct pcs *gcc,
                           const struct pcs *uc, int last, int min,
                           const char *what)
{
    int at = uc->n > 0 ? index_of(gcc, uc->pc[0]) : -1;
    char text[240];
    snprintf(text, sizeof text, "signal: cursor from the ucontext through "
             "%s = _Unwind_Backtrace from the interrupted PC (%d PCs, at "
             "libgcc's %d; last step %d)", what, uc->n, at, last);
    check(c, at > 0 && last == 0 && same_tail(uc, 0, gcc, at) &&
                 uc->n > min, text);
}

static void test_signal(struct checks *c)
{
    static struct in_handler h;
    handler_data = &h;
    struct sigaction action, old;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, &old);
    recurse(DEPTH / 2, leaf_raise, NULL);
    sigaction(SIGUSR1, &old, NULL);
    /* Through the signal frame: more frames than the recursion's. */
    check_stack(c, &h.s, "signal handler", DEPTH / 2 + 4, 1);
    check_ucontext(c, &h.s.gcc, &h.uc_eh_elf, h.last_uc_eh_elf, DEPTH / 2,
                   "eh_elfs");
    check_ucontext(c, &h.s.gcc, &h.uc_interp, h.last_uc_interp, DEPTH / 2,
                   "the interpreter");
    check(c, h.stats_uc_eh_elf.frames_interp == 0 &&
                 h.stats_uc_interp.frames_eh_elf == 0,
          "signal: the ucontext's cursors used the engine asked for");
}

/* A timer's signal interrupting a leaf function that has no frame of
 * its own (its CFA is its stack pointer): the interrupted frame's
 * caller has the same stack pointer, which a step from an exact PC
 * takes (step.c, sp_grows). */
static volatile sig_atomic_t spin_done;

__attribute__((noinline)) static void spin(void)
{
    while (!spin_done)
        continue;
}

static void on_alarm(int sig, siginfo_t *info, void *uc)
{
    on_signal(sig, info, uc);
    spin_done = 1;
}

static void leaf_spin(void *arg)
{
    (void)arg;
    spin();
}

static void test_leaf_signal(struct checks *c)
{
    static struct in_handler h;
    handler_data = &h;
    struct sigaction action, old;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_alarm;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, &old);
    struct itimerval timer = {.it_value = {.tv_usec = 20000}};
    spin_done = 0;
    setitimer(ITIMER_REAL, &timer, NULL);
    recurse(10, leaf_spin, NULL);
    sigaction(SIGALRM, &old, NULL);
    /* The interrupted PC is spin's, a leaf: the ucontext's cursor
     * starts there, libgcc's list has it after the trampoline's. */
    check_stack(c, &h.s, "signal in a leaf without a frame", 14, 1);
    check_ucontext(c, &h.s.gcc, &h.uc_eh_elf, h.last_uc_eh_elf, 10,
                   "eh_elfs, from a leaf without a frame");
    check_ucontext(c, &h.s.gcc, &h.uc_interp, h.last_uc_interp, 10,
                   "the interpreter, from a leaf without a frame");
}

/* ------------------------------------------------------------------ */
/* Pointer authentication                                                */
/* ------------------------------------------------------------------ */

enum { PAC_DEPTH = 20 };

struct pac_run {
    struct stack s;
    /* The x30 the frames of pac.c saved, read through their records:
     * how many differ from their stripped value, how many of those
     * stripped values are PCs of libgcc's list. */
    int records;
    int records_signed;
    int records_found;
    /* The eh_elf cursor's frames whose RA_SIGN_STATE is 1, of which
     * those whose PC is x30 stripped, and those whose x30 differs. */
    int signed_frames;
    int signed_stripped;
    int signed_differs;
};

/* The return address without its code: Linux's user addresses have 48
 * bits, and bit 55 is 0. (Under qemu-user the code is in bits 48-54:
 * the top byte is ignored, so one signed address in 128 has a code of
 * 0 and is its own stripped value.) */
static uint64_t strip(uint64_t address)
{
    return address & (((uint64_t)1 << 48) - 1);
}

/* The eh_elf cursor again, looking at RA_SIGN_STATE and x30. */
__attribute__((noinline)) static void pac_states(struct pac_run *r)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    if (cfisem_init_local(&cursor, &context) != CFISEM_OK)
        return;
    while (cfisem_step(&cursor) == 1) {
        uint64_t state, x30, pc;
        if (cfisem_get_reg(&cursor, CFISEM_REG_RA_SIGN_STATE, &state) ||
            state != 1 || cfisem_get_reg(&cursor, CFISEM_REG_X30, &x30) ||
            cfisem_get_reg(&cursor, CFISEM_REG_PC, &pc))
            continue;
        r->signed_frames++;
        r->signed_stripped += strip(x30) == pc;
        r->signed_differs += x30 != pc;
        if (getenv("CFISEM_TEST_DEBUG"))
            fprintf(stderr, "signed: x30 %#llx pc %#llx\n",
                    (unsigned long long)x30, (unsigned long long)pc);
    }
}

static int pac_leaf(void *arg, const uint64_t *record)
{
    struct pac_run *r = arg;
    take_all(&r->s);
    pac_states(r);
    for (; record && r->records < PAC_DEPTH + 1;
         record = (const uint64_t *)(uintptr_t)record[0]) {
        r->records++;
        r->records_signed += record[1] != strip(record[1]);
        r->records_found +=
            index_of(&r->s.gcc, (void *)(uintptr_t)strip(record[1])) >= 0;
    }
    return 0;
}

static void test_pac(struct checks *c, const char *key,
                     int (*pac)(int, pac_leaf_fn *, void *))
{
    static struct pac_run r;
    memset(&r, 0, sizeof r);
    pac(PAC_DEPTH, pac_leaf, &r);
    char text[200];
    snprintf(text, sizeof text, "pac-ret (%s key): of the x30 %d frames "
             "saved, %d are signed, %d stripped are libgcc's PCs", key,
             r.records, r.records_signed, r.records_found);
    check(c, r.records == PAC_DEPTH + 1 &&
                 r.records_signed >= r.records - 4 &&
                 r.records_found == r.records, text);
    snprintf(text, sizeof text, "pac-ret (%s key)", key);
    check_stack(c, &r.s, text, PAC_DEPTH, 0);
    snprintf(text, sizeof text, "pac-ret (%s key): %d frames with "
             "RA_SIGN_STATE 1: %d with the PC x30 stripped, %d with x30 "
             "signed", key, r.signed_frames, r.signed_stripped,
             r.signed_differs);
    check(c, r.signed_frames >= PAC_DEPTH + 1 &&
                 r.signed_stripped == r.signed_frames &&
                 r.signed_differs >= r.signed_frames - 4, text);
}

/* ------------------------------------------------------------------ */
/* Timing                                                                */
/* ------------------------------------------------------------------ */

enum { MAX_ITERATIONS = 1000 };

/* Each method's time of every backtrace; the median is reported (the
 * machine is shared, and qemu stops now and then). */
struct timing {
    int iterations;
    int frames[4];
    double ns[4][MAX_ITERATIONS];
};

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, by_value);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One backtrace by method m into list. */
static void backtrace_by(int m, struct pcs *list)
{
    int last;
    struct cfisem_cursor_stats stats;
    if (m == 0)
        our_backtrace(list);
    else if (m == 1)
        local_pcs(CFISEM_ENGINE_AUTO, list, &last, &stats);
    else if (m == 2)
        local_pcs(CFISEM_ENGINE_INTERP, list, &last, &stats);
    else
        gcc_backtrace(list);
}

/* Each method once untimed (qemu translates the code it meets first),
 * then in turn, so that a change of the machine's load meanwhile falls
 * on every method alike. */
static void leaf_time(void *arg)
{
    struct timing *t = arg;
    struct pcs list;
    for (int m = 0; m < 4; m++)
        backtrace_by(m, &list);
    for (int i = 0; i < t->iterations; i++)
        for (int m = 0; m < 4; m++) {
            double start = now_ns();
            backtrace_by(m, &list);
            t->ns[m][i] = now_ns() - start;
            t->frames[m] = list.n;
        }
}

static void test_timing(int iterations)
{
    static const char *const names[4] = {
        "cfisem_backtrace (eh_elfs)", "cursor, eh_elfs",
        "cursor, interpreter (row cache)", "libgcc _Unwind_Backtrace",
    };
    static struct timing t;
    if (iterations < 1 || iterations > MAX_ITERATIONS)
        iterations = MAX_ITERATIONS;
    t.iterations = iterations;
    recurse(DEPTH, leaf_time, &t);
    double per[4];
    for (int m = 0; m < 4; m++)
        per[m] = median(t.ns[m], iterations) / t.frames[m];
    printf("timing under emulation (qemu's speed, not the hardware's: only "
           "the ratios\nmean something), the median of %d backtraces of "
           "each, 100-deep recursion:\n", iterations);
    for (int m = 0; m < 4; m++)
        printf("  %-34s %3d frames  %9.1f ns/frame  %.3f x libgcc's\n",
               names[m], t.frames[m], per[m], per[m] / per[3]);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s NAME_DIR [ITERATIONS]\n", argv[0]);
        return 2;
    }
    struct cfisem_options options = {
        .name_dir = argv[1],
        .name_flavour = "table",
        .system_dir = "",
    };
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct checks c = {0, 0};
    check(&c, cfisem_prepare(&options) == CFISEM_OK, "cfisem_prepare");
    struct cfisem_stats stats;
    cfisem_stats(&stats);
    char text[120];
    snprintf(text, sizeof text, "eh_elfs loaded: %llu of %llu objects "
             "(the program's and libc's at least)",
             (unsigned long long)stats.objects_eh_elf,
             (unsigned long long)stats.objects);
    check(&c, stats.objects_eh_elf >= 2, text);
    test_recursion(&c);
    test_signal(&c);
    test_leaf_signal(&c);
    test_pac(&c, "A", pac_a);
    test_pac(&c, "B", pac_b);
    cfisem_stats(&stats);
    snprintf(text, sizeof text, "no step failed (cfisem_stats: %llu)",
             (unsigned long long)stats.frames_failed);
    check(&c, stats.frames_failed == 0, text);
    test_timing(argc > 2 ? atoi(argv[2]) : 200);
    printf("%d checks, %d failed\n", c.run, c.failed);
    return c.failed ? 1 : 0;
}
