/* SPDX-License-Identifier: MIT */
/* samples.c — unwinding where profilers unwind: in a SIGPROF handler,
 * and later, from perf-style samples (registers and a copy of the top of
 * the stack).
 *
 *   build/bench/samples [SECONDS_PER_METHOD] [SAMPLES]
 *
 * 1. Sampling. SIGPROF at 1 kHz (ITIMER_PROF) while the program spins at
 *    the top of bench/workload's mixed recursion 100 deep. Each method in
 *    turn unwinds in the handler, for SECONDS_PER_METHOD (default 0.5) of
 *    CPU time: cfisem from the handler's ucontext (eh_elf, and the
 *    interpreter), cfisem_backtrace through the signal frame, libunwind's
 *    local unw_step loop (caching GLOBAL) and unw_backtrace, libgcc's
 *    _Unwind_Backtrace and glibc's backtrace() (resolved with dlsym:
 *    linking libunwind replaces them). After each timed unwind the
 *    handler unwinds again with cfisem_backtrace, and the two lists must
 *    name the same frames (checked). Reported: samples, ns per sample and
 *    per frame, the ratio to cfisem's eh_elf.
 * 2. Perf-style. SAMPLES (default 500) samples of the registers and the
 *    16 KiB above the stack pointer, taken in the handler at the top of a
 *    recursion of 40 small frames, then unwound offline by cfisem's
 *    remote cursor, by libunwind's remote API (its own accessors over
 *    the copy; the objects' .eh_frame_hdr tables found with
 *    dl_iterate_phdr), and by elfutils libdw's unwinder (libdwfl:
 *    dwfl_linux_proc_report for the objects, which libdw reads from
 *    their files, and dwfl_attach_state with thread callbacks of ours:
 *    the sample's registers, memory_read over the copy), as perf does
 *    with libdw; libdw is loaded with dlopen (its dwarf_* names are
 *    also libdwarf's). The PC lists must agree on every frame two
 *    methods both give, on every sample. Reported: time per sample and
 *    per frame, the best of 7 passes, and the ratio to cfisem's.
 *
 * Not a test: the numbers depend on the machine and its load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <libunwind.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench/stats.h"
#include "bench/unwinders.h"
#include "bench/workload/workload.h"
#include "runtime/cfisem-unwind.h"

enum { MAX_PCS = 512, SKIP = 4, COPY = 16 * 1024 };


typedef long recurse_fn(int depth, workload_leaf_fn *leaf, void *arg);
typedef int uw_trace_fn(void *context, void *arg);
typedef int uw_backtrace_fn(uw_trace_fn *trace, void *arg);
typedef uintptr_t uw_get_ip_fn(void *context);
typedef int glibc_backtrace_fn(void **pcs, int max);

static struct {
    uw_backtrace_fn *gcc_backtrace;
    uw_get_ip_fn *gcc_get_ip;
    glibc_backtrace_fn *glibc_backtrace;
} lib;

/* ------------------------------------------------------------------ */
/* 1. Methods in the handler                                             */
/* ------------------------------------------------------------------ */

typedef int handler_method_fn(const ucontext_t *uc, void **pcs, int max);

static int from_ucontext(const ucontext_t *uc, void **pcs, int max,
                         enum cfisem_engine engine)
{
    struct cfisem_cursor cursor;
    if (cfisem_init_ucontext(&cursor, uc) != CFISEM_OK)
        return 0;
    cfisem_set_engine(&cursor, engine);
    int n = 0;
    pcs[n++] = (void *)(uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uint64_t pc;
    while (n < max && cfisem_step(&cursor) == 1 &&
           cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc) == CFISEM_OK)
        pcs[n++] = (void *)(uintptr_t)pc;
    return n;
}

static int h_cfisem_uc(const ucontext_t *uc, void **pcs, int max)
{
    return from_ucontext(uc, pcs, max, CFISEM_ENGINE_AUTO);
}

static int h_interp_uc(const ucontext_t *uc, void **pcs, int max)
{
    return from_ucontext(uc, pcs, max, CFISEM_ENGINE_INTERP);
}

static int h_cfisem_backtrace(const ucontext_t *uc, void **pcs, int max)
{
    (void)uc;
    return cfisem_backtrace(pcs, max);
}

static int h_unw_step(const ucontext_t *uc, void **pcs, int max)
{
    (void)uc;
    unw_context_t context;
    unw_cursor_t cursor;
    unw_getcontext(&context);
    if (unw_init_local(&cursor, &context) < 0)
        return 0;
    int n = 0;
    while (n < max && unw_step(&cursor) > 0) {
        unw_word_t ip;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        pcs[n++] = (void *)(uintptr_t)ip;
    }
    return n;
}

static int h_unw_backtrace(const ucontext_t *uc, void **pcs, int max)
{
    (void)uc;
    return unw_backtrace(pcs, max);
}

struct gcc_list {
    void **pcs;
    int n, max;
};

static int gcc_trace(void *context, void *arg)
{
    struct gcc_list *list = arg;
    if (list->n == list->max)
        return 4; /* _URC_NORMAL_STOP */
    list->pcs[list->n++] = (void *)lib.gcc_get_ip(context);
    return 0;
}

static int h_libgcc(const ucontext_t *uc, void **pcs, int max)
{
    (void)uc;
    struct gcc_list list = {pcs, 0, max};
    lib.gcc_backtrace(gcc_trace, &list);
    if (list.n > 0 && pcs[list.n - 1] == NULL)
        list.n--;
    return list.n;
}

static int h_glibc(const ucontext_t *uc, void **pcs, int max)
{
    (void)uc;
    return lib.glibc_backtrace(pcs, max);
}

static const struct {
    const char *name;
    handler_method_fn *run;
} handler_methods[] = {
    {"cfisem eh_elf (cursor on the ucontext)", h_cfisem_uc},
    {"cfisem eh_elf (cfisem_backtrace)", h_cfisem_backtrace},
    {"cfisem interp (cursor on the ucontext)", h_interp_uc},
    {"libunwind unw_step (CACHE_GLOBAL)", h_unw_step},
    {"libunwind unw_backtrace", h_unw_backtrace},
    {"libgcc _Unwind_Backtrace", h_libgcc},
    {"glibc backtrace()", h_glibc},
};
enum { NHANDLER = sizeof handler_methods / sizeof handler_methods[0] };

enum { MAX_SAMPLES = 8192 };

/* What the handler records for the current method: each sample's time
 * and frames (medians are reported: a sample the scheduler interrupts
 * on a loaded machine is an outlier). */
static struct {
    _Atomic int method;           /* -1: sampling off */
    long samples, frames, mismatches;
    double ns[MAX_SAMPLES], ns_per_frame[MAX_SAMPLES];
    void *pcs[MAX_PCS], *check[MAX_PCS];
} sampling = {.method = -1};

/* a[i..] and b[j..] name the same frames to the same end, for some
 * i, j <= SKIP (each list starts in its own functions). */
static bool same_frames(void *const *a, int na, void *const *b, int nb)
{
    for (int i = 0; i <= SKIP && i < na; i++)
        for (int j = 0; j <= SKIP && j < nb; j++)
            if (na - i == nb - j && na - i > 2 &&
                !memcmp(a + i, b + j, (size_t)(na - i) * sizeof *a))
                return true;
    return false;
}

static void on_sigprof(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    int m = atomic_load(&sampling.method);
    if (m < 0)
        return;
    if (sampling.samples == MAX_SAMPLES)
        return;
    double t0 = bench_now_ns();
    int n = handler_methods[m].run(ucontext, sampling.pcs, MAX_PCS);
    double ns = bench_now_ns() - t0;
    sampling.ns[sampling.samples] = ns;
    sampling.ns_per_frame[sampling.samples] = n > 0 ? ns / n : ns;
    sampling.samples++;
    sampling.frames += n;
    int k = cfisem_backtrace(sampling.check, MAX_PCS);
    if (!same_frames(sampling.pcs, n, sampling.check, k))
        sampling.mismatches++;
}

static volatile double spin_seconds;

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Spins for spin_seconds of CPU time (the profiling timer's clock). */
static void leaf_spin(void *arg)
{
    (void)arg;
    double end = cpu_ns() + spin_seconds * 1e9;
    for (volatile long i = 0; cpu_ns() < end; i++)
        continue;
}

static bool sampling_run(recurse_fn *mixed, double seconds)
{
    struct sigaction action = {.sa_sigaction = on_sigprof,
                               .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, &action, NULL);
    struct itimerval timer = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &timer, NULL);
    printf("== sampling: SIGPROF at 1 kHz, recursion 100 (mixed shapes), "
           "%.2f s of CPU per method; medians over the samples\n", seconds);
    printf("  %-40s %8s %11s %10s %10s %s\n", "method", "samples",
           "ns/sample", "ns/frame", "vs eh_elf", "frames/sample");
    double base = 0;
    bool ok = true;
    for (int m = 0; m < NHANDLER; m++) {
        sampling.samples = sampling.frames = sampling.mismatches = 0;
        spin_seconds = seconds;
        atomic_store(&sampling.method, m);
        mixed(100, leaf_spin, NULL);
        atomic_store(&sampling.method, -1);
        double per_frame = bench_median_sorting(sampling.ns_per_frame, sampling.samples);
        if (m == 0)
            base = per_frame;
        printf("  %-40s %8ld %11.0f %10.2f %9.2fx %6.1f%s\n",
               handler_methods[m].name, sampling.samples,
               bench_median_sorting(sampling.ns, sampling.samples),
               per_frame, base > 0 ? per_frame / base : 0,
               sampling.samples ? (double)sampling.frames / sampling.samples
                                : 0,
               sampling.mismatches ? "  DIFFERENT PCs" : "");
        if (sampling.mismatches)
            printf("    (%ld of %ld samples named other frames than "
                   "cfisem_backtrace)\n", sampling.mismatches,
                   sampling.samples);
        ok = ok && sampling.mismatches == 0 && sampling.samples > 0;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    return ok;
}

/* ------------------------------------------------------------------ */
/* 2. Perf-style samples                                                 */
/* ------------------------------------------------------------------ */

struct sample {
    uint64_t regs[CFISEM_NREGS];
    uint64_t sp;
    size_t size;                  /* bytes of stack copied */
    uint8_t stack[COPY];
};

static struct {
    struct sample *samples;
    _Atomic long count;
    long max;
} capture;

static void on_capture(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    long k = atomic_load(&capture.count);
    if (k >= capture.max)
        return;
    const ucontext_t *uc = ucontext;
    static const int greg[CFISEM_NREGS] = {
        REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP,
        REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13,
        REG_R14, REG_R15, REG_RIP};
    struct sample *s = &capture.samples[k];
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        s->regs[r] = (uint64_t)uc->uc_mcontext.gregs[greg[r]];
    s->sp = s->regs[CFISEM_REG_RSP];
    /* As the kernel does for perf: what can be read of the 16 KiB. */
    struct iovec to = {s->stack, COPY};
    struct iovec from = {(void *)(uintptr_t)s->sp, COPY};
    ssize_t got = process_vm_readv(getpid(), &to, 1, &from, 1, 0);
    s->size = got > 0 ? (size_t)got : 0;
    atomic_store(&capture.count, k + 1);
}

static void leaf_capture(void *arg)
{
    (void)arg;
    for (volatile long i = 0; atomic_load(&capture.count) < capture.max; i++)
        continue;
}

/* Memory of a sample: the stack copy, else this process's objects
 * (their code and tables are still mapped: the run-time library checks
 * that the PC lies in one before it reads them). */
static int read_sample(void *data, uint64_t addr, unsigned size,
                       uint64_t *value)
{
    const struct sample *s = data;
    if (addr >= s->sp && addr - s->sp <= s->size - size && s->size >= size) {
        *value = 0;
        memcpy(value, s->stack + (addr - s->sp), size);
        return 0;
    }
    return 1;
}

/* The objects for libunwind's find_proc_info. */
struct object_table {
    unw_dyn_info_t table[64];
    int count;
};

static struct object_table objects;

static int collect_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_table *t = data;
    if (t->count == 64)
        return 1;
    uint64_t lo = UINT64_MAX, hi = 0, hdr = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (ph->p_vaddr < lo)
                lo = ph->p_vaddr;
            if (ph->p_vaddr + ph->p_memsz > hi)
                hi = ph->p_vaddr + ph->p_memsz;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            hdr = info->dlpi_addr + ph->p_vaddr;
        }
    }
    const uint8_t *h = (const uint8_t *)(uintptr_t)hdr;
    if (!hdr || lo == UINT64_MAX || h[0] != 1 || h[2] != 0x03 ||
        h[3] != 0x3b)
        return 0;
    uint32_t count;
    memcpy(&count, h + 8, 4);
    unw_dyn_info_t *d = &t->table[t->count++];
    memset(d, 0, sizeof *d);
    d->format = UNW_INFO_FORMAT_REMOTE_TABLE;
    d->start_ip = info->dlpi_addr + lo;
    d->end_ip = info->dlpi_addr + hi;
    d->u.rti.segbase = hdr;
    d->u.rti.table_data = hdr + 12;
    d->u.rti.table_len = (unw_word_t)count * 8 / sizeof(unw_word_t);
    return 0;
}

static int lu_find_proc_info(unw_addr_space_t space, unw_word_t ip,
                             unw_proc_info_t *info, int need, void *arg)
{
    for (int i = 0; i < objects.count; i++)
        if (ip >= objects.table[i].start_ip && ip < objects.table[i].end_ip)
            return _Ux86_64_dwarf_search_unwind_table(
                space, ip, &objects.table[i], info, need, arg);
    return -UNW_ENOINFO;
}

static void lu_put_unwind_info(unw_addr_space_t space, unw_proc_info_t *info,
                               void *arg)
{
    (void)space, (void)arg;
    free(info->unwind_info);
    info->unwind_info = NULL;
}

/* The stack from the copy; the objects' tables read in place (they lie
 * in the ranges find_proc_info accepted). */
static int lu_access_mem(unw_addr_space_t space, unw_word_t addr,
                         unw_word_t *value, int write, void *arg)
{
    (void)space;
    if (write)
        return -UNW_EREADONLYREG;
    uint64_t v;
    if (read_sample(arg, addr, 8, &v) == 0) {
        *value = v;
        return 0;
    }
    struct iovec to = {&v, 8};
    struct iovec from = {(void *)(uintptr_t)addr, 8};
    if (process_vm_readv(getpid(), &to, 1, &from, 1, 0) != 8)
        return -UNW_EINVAL;
    *value = v;
    return 0;
}

static int lu_access_reg(unw_addr_space_t space, unw_regnum_t reg,
                         unw_word_t *value, int write, void *arg)
{
    (void)space;
    const struct sample *s = arg;
    if (write || reg < 0 || reg >= CFISEM_NREGS)
        return -UNW_EBADREG;
    *value = s->regs[reg];
    return 0;
}

static unw_accessors_t lu_accessors = {
    .find_proc_info = lu_find_proc_info,
    .put_unwind_info = lu_put_unwind_info,
    .get_dyn_info_list_addr = bench_lu_get_dyn_info_list_addr,
    .access_mem = lu_access_mem,
    .access_reg = lu_access_reg,
    .access_fpreg = bench_lu_access_fpreg,
    .resume = bench_lu_resume,
    .get_proc_name = bench_lu_get_proc_name,
};

static int offline_cfisem(struct sample *s, void **pcs, int max)
{
    struct cfisem_cursor cursor;
    if (cfisem_init_remote(&cursor, s->regs, (1u << CFISEM_NREGS) - 1, 1,
                           read_sample, s) != CFISEM_OK)
        return 0;
    int n = 0;
    pcs[n++] = (void *)(uintptr_t)s->regs[CFISEM_REG_RIP];
    uint64_t pc;
    while (n < max && cfisem_step(&cursor) == 1 &&
           cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc) == CFISEM_OK)
        pcs[n++] = (void *)(uintptr_t)pc;
    return n;
}

static unw_addr_space_t lu_space;

static int offline_libunwind(struct sample *s, void **pcs, int max)
{
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, lu_space, s) < 0)
        return 0;
    int n = 0;
    pcs[n++] = (void *)(uintptr_t)s->regs[CFISEM_REG_RIP];
    while (n < max && unw_step(&cursor) > 0) {
        unw_word_t ip;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        pcs[n++] = (void *)(uintptr_t)ip;
    }
    return n;
}

/* elfutils libdw's unwinder over the samples: one Dwfl for the process's
 * objects, one thread whose state is the sample being unwound. The
 * functions (DWFL_FUNCTIONS) are resolved with dlsym. */
static struct {
#define DWFL_POINTER(name, ret, params) ret(*name) params;
    DWFL_FUNCTIONS(DWFL_POINTER)
#undef DWFL_POINTER
    Dwfl *dwfl;
    Dwfl_Callbacks callbacks;
    struct sample *current;   /* the sample dwfl_getthread_frames walks */
} dw;

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
    (void)dwfl, (void)arg;
    if (*thread_arg)
        return 0; /* one thread */
    *thread_arg = &dw;
    return getpid();
}

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
    (void)dwfl, (void)arg;
    *thread_arg = &dw;
    return tid == getpid();
}

/* The stack from the copy, else this process's memory (as for
 * libunwind). */
static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
                           void *arg)
{
    (void)dwfl, (void)arg;
    uint64_t v;
    if (read_sample(dw.current, addr, 8, &v) == 0) {
        *result = v;
        return true;
    }
    struct iovec to = {&v, 8};
    struct iovec from = {(void *)(uintptr_t)addr, 8};
    if (process_vm_readv(getpid(), &to, 1, &from, 1, 0) != 8)
        return false;
    *result = v;
    return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    (void)arg;
    Dwarf_Word regs[CFISEM_NREGS];
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        regs[r] = dw.current->regs[r];
    return dw.dwfl_thread_state_registers(thread, 0, CFISEM_NREGS, regs);
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
    .next_thread = dw_next_thread,
    .get_thread = dw_get_thread,
    .memory_read = dw_memory_read,
    .set_initial_registers = dw_set_initial_registers,
};

/* libdw loaded and attached to this process; false (with a message) when
 * it cannot be. */
static bool dw_open(void)
{
    void *handle = dlopen("libdw.so.1", DW_DLOPEN_FLAGS);
    if (!handle) {
        printf("  (elfutils libdw: %s)\n", dlerror());
        return false;
    }
#define DWFL_RESOLVE(name, ret, params)                                      \
    {                                                                        \
        void *symbol = dlsym(handle, #name);                                 \
        if (!symbol) {                                                       \
            printf("  (elfutils libdw: no %s)\n", #name);                    \
            return false;                                                    \
        }                                                                    \
        memcpy(&dw.name, &symbol, sizeof symbol);                            \
    }
    DWFL_FUNCTIONS(DWFL_RESOLVE)
#undef DWFL_RESOLVE
    dw.callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
    dw.callbacks.find_debuginfo = dw.dwfl_standard_find_debuginfo;
    dw.dwfl = dw.dwfl_begin(&dw.callbacks);
    if (!dw.dwfl)
        return false;
    dw.dwfl_report_begin(dw.dwfl);
    bool ok = dw.dwfl_linux_proc_report(dw.dwfl, getpid()) == 0 &&
              dw.dwfl_report_end(dw.dwfl, NULL, NULL) == 0 &&
              dw.dwfl_attach_state(dw.dwfl, NULL, getpid(),
                                   &dw_thread_callbacks, NULL);
    if (!ok) {
        printf("  (elfutils libdw: %s)\n", dw.dwfl_errmsg(dw.dwfl_errno()));
        dw.dwfl_end(dw.dwfl);
        dw.dwfl = NULL;
    }
    return ok;
}

struct dw_list {
    void **pcs;
    int n, max;
};

static int dw_frame(Dwfl_Frame *state, void *arg)
{
    struct dw_list *list = arg;
    Dwarf_Addr pc;
    bool activation;
    if (list->n == list->max || !dw.dwfl_frame_pc(state, &pc, &activation))
        return DWARF_CB_ABORT;
    list->pcs[list->n++] = (void *)(uintptr_t)pc;
    return DWARF_CB_OK;
}

static int offline_libdw(struct sample *s, void **pcs, int max)
{
    struct dw_list list = {pcs, 0, max};
    dw.current = s;
    dw.dwfl_getthread_frames(dw.dwfl, getpid(), dw_frame, &list);
    return list.n;
}

typedef int offline_fn(struct sample *s, void **pcs, int max);

static double time_offline(offline_fn *fn, long count, long *frames)
{
    void *pcs[MAX_PCS];
    *frames = 0;
    double t0 = bench_now_ns();
    for (long k = 0; k < count; k++)
        *frames += fn(&capture.samples[k], pcs, MAX_PCS);
    return bench_now_ns() - t0;
}

static bool perf_style_run(recurse_fn *small, long count)
{
    capture.samples = calloc((size_t)count, sizeof *capture.samples);
    if (!capture.samples)
        return false;
    capture.max = count;
    struct sigaction action = {.sa_sigaction = on_capture,
                               .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, &action, NULL);
    struct itimerval timer = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &timer, NULL);
    small(40, leaf_capture, NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    dl_iterate_phdr(collect_object, &objects);
    lu_space = unw_create_addr_space(&lu_accessors, 0);
    unw_set_caching_policy(lu_space, UNW_CACHE_GLOBAL);
    printf("\n== perf-style: %ld samples of the registers and 16 KiB of "
           "stack, recursion 40 (small frames), unwound offline\n", count);
    bool libdw = dw_open();
    /* Same frames: every PC two methods both give, on every sample. (The
     * lists are static: on this frame they would push the frames below
     * it out of the samples' 16 KiB.) */
    long agree = 0, shorter = 0, agree_dw = 0, shorter_dw = 0;
    for (long k = 0; k < count; k++) {
        static void *a[MAX_PCS], *b[MAX_PCS], *c[MAX_PCS];
        int na = offline_cfisem(&capture.samples[k], a, MAX_PCS);
        int nb = offline_libunwind(&capture.samples[k], b, MAX_PCS);
        int n = na < nb ? na : nb;
        agree += n >= 40 && !memcmp(a, b, (size_t)n * sizeof *a);
        shorter += na < nb;
        if (libdw) {
            int nc = offline_libdw(&capture.samples[k], c, MAX_PCS);
            n = na < nc ? na : nc;
            agree_dw += n >= 40 && !memcmp(a, c, (size_t)n * sizeof *a);
            shorter_dw += na < nc;
        }
    }
    /* The best of 7 passes over all the samples, the methods in turn: a
     * pass is short, and one preemption on a loaded machine would
     * dominate it. */
    long frames_c, frames_l, frames_d = 0;
    double ns_c = 1e300, ns_l = 1e300, ns_d = 1e300;
    for (int pass = 0; pass < 7; pass++) {
        double c = time_offline(offline_cfisem, count, &frames_c);
        double l = time_offline(offline_libunwind, count, &frames_l);
        double d = libdw ? time_offline(offline_libdw, count, &frames_d) : 0;
        ns_c = c < ns_c ? c : ns_c;
        ns_l = l < ns_l ? l : ns_l;
        ns_d = d < ns_d ? d : ns_d;
    }
    double per_c = ns_c / (double)frames_c;
    printf("  %-36s %11s %10s %10s %14s\n", "method", "ns/sample",
           "ns/frame", "vs cfisem", "frames/sample");
    printf("  %-36s %11.0f %10.2f %9.2fx %14.1f\n",
           "cfisem remote cursor (eh_elf)", ns_c / count, per_c, 1.0,
           (double)frames_c / count);
    printf("  %-36s %11.0f %10.2f %9.2fx %14.1f\n",
           "libunwind remote (CACHE_GLOBAL)", ns_l / count,
           ns_l / (double)frames_l, (ns_l / (double)frames_l) / per_c,
           (double)frames_l / count);
    if (libdw && frames_d > 0)
        printf("  %-36s %11.0f %10.2f %9.2fx %14.1f\n",
               "elfutils libdw (dwfl_getthread_frames)", ns_d / count,
               ns_d / (double)frames_d, (ns_d / (double)frames_d) / per_c,
               (double)frames_d / count);
    printf("  same PCs on every frame both give: libunwind %ld of %ld samples "
           "(cfisem shorter on %ld)", agree, count, shorter);
    if (libdw)
        printf(", libdw %ld of %ld (cfisem shorter on %ld)", agree_dw, count,
               shorter_dw);
    printf("\n");
    if (libdw)
        dw.dwfl_end(dw.dwfl);
    unw_destroy_addr_space(lu_space);
    free(capture.samples);
    return agree == count && (!libdw || agree_dw == count);
}

/* ------------------------------------------------------------------ */
/* Set-up                                                                */
/* ------------------------------------------------------------------ */

static void *must(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "samples: %s: %s\n", what, dlerror());
        exit(2);
    }
    return p;
}

static void *workload_symbol(const char *symbol)
{
    const char *dir = getenv("CFISEM_WORKLOAD");
    char path[4096];
    snprintf(path, sizeof path, "%s/libcfisem-shapes.so",
             dir ? dir : "build/workload");
    void *handle = must(dlopen(path, RTLD_NOW | RTLD_LOCAL), path);
    return must(dlsym(handle, symbol), symbol);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    long count = argc > 2 ? atol(argv[2]) : 500;
    if (seconds <= 0 || count <= 0) {
        fprintf(stderr, "usage: samples [SECONDS_PER_METHOD] [SAMPLES]\n");
        return 1;
    }
    void *gcc = must(dlopen("libgcc_s.so.1", RTLD_NOW), "libgcc_s.so.1");
    void *p = must(dlsym(gcc, "_Unwind_Backtrace"), "_Unwind_Backtrace");
    memcpy(&lib.gcc_backtrace, &p, sizeof p);
    p = must(dlsym(gcc, "_Unwind_GetIP"), "_Unwind_GetIP");
    memcpy(&lib.gcc_get_ip, &p, sizeof p);
    void *libc = must(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "libc");
    p = must(dlsym(libc, "backtrace"), "backtrace");
    memcpy(&lib.glibc_backtrace, &p, sizeof p);
    recurse_fn *mixed, *small;
    p = workload_symbol("workload_recurse");
    memcpy(&mixed, &p, sizeof p);
    p = workload_symbol("workload_recurse_small");
    memcpy(&small, &p, sizeof p);
    /* CFISEM_EH_ELF_FLAVOUR=table: the system libraries' eh_elfs of the
     * table layout (make eh-elfs builds both). */
    struct cfisem_options options = {
        .name_dir = getenv("CFISEM_EH_ELF"),
        .name_flavour = getenv("CFISEM_EH_ELF_FLAVOUR")};
    cfisem_prepare(&options);
    printf("eh_elfs of the system libraries: %s layout\n",
           options.name_flavour && !strcmp(options.name_flavour, "table")
               ? "table" : "tree");
    /* First calls outside the handler: glibc's backtrace() loads
     * libgcc_s on its first call, which is not async-signal-safe. */
    void *warm[MAX_PCS];
    lib.glibc_backtrace(warm, MAX_PCS);
    unw_backtrace(warm, MAX_PCS);
    bool ok = sampling_run(mixed, seconds);
    ok = perf_style_run(small, count) && ok;
    if (!ok)
        fprintf(stderr, "samples: a method named other frames\n");
    return ok ? 0 : 1;
}
