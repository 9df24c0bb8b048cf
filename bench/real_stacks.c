/* SPDX-License-Identifier: MIT */
/* real_stacks.c — unwinding real stacks of this process: every unwinder
 * on the same stacks, in one run, as ns per frame and ratios to cfisem's
 * eh_elf.
 *
 *   build/bench/real_stacks [ROUNDS]
 *
 * The stacks are bench/workload/workload.h's: recursion 10, 100 and
 * 1,000 deep through five frame shapes (the mixed build), the same under
 * qsort_r's comparison callback inside libc, a C++ chain through
 * libstdc++ (its ostream writing into our stream buffer), the
 * frame-pointer build for the frame-pointer walk (the physical floor: one
 * load per frame), and the Csmith workloads bench/workload/csmith.sh
 * built, when there are any ($CFISEM_WORKLOAD/csmith/workloads.txt):
 * random programs, each unwound from the first point where its calls are
 * deepest (the depth its list gives; inlined calls count), loaded after
 * the other stacks ran.
 * At the top of each stack every method unwinds it in turn, and every
 * method's PC list must name the same frames (checked: the run fails
 * otherwise). Methods: cfisem_backtrace (eh_elfs: the workload's beside
 * it, libc's and this program's from $CFISEM_EH_ELF and beside this
 * program), a cfisem cursor forced onto the interpreter, libunwind's
 * local unw_step loop with caching GLOBAL and NONE, unw_backtrace,
 * libgcc's _Unwind_Backtrace and glibc's backtrace() (both resolved with
 * dlopen/dlsym: linking libunwind replaces them), and the frame-pointer
 * walk. A round times each method on each stack (enough repetitions for
 * about 2 ms); the figures are ns per frame, the median and the best of
 * ROUNDS (default 21) rounds (the best is the less disturbed by other
 * programs on a loaded machine), each with its ratio to the eh_elf's.
 *
 * Not a test: the numbers depend on the machine and its load. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/stats.h"
#include "bench/workload/workload.h"
#include "runtime/cfisem-unwind.h"

enum { MAX_PCS = 2048, MAX_ROUNDS = BENCH_MAX_ROUNDS, SKIP = 4 };

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
/* The methods: each fills pcs (at most max) and returns the count       */
/* ------------------------------------------------------------------ */

typedef int method_fn(void **pcs, int max);

static int m_cfisem(void **pcs, int max)
{
    return cfisem_backtrace(pcs, max);
}

static int m_interp(void **pcs, int max)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    if (cfisem_init_local(&cursor, &context) != CFISEM_OK)
        return 0;
    cfisem_set_engine(&cursor, CFISEM_ENGINE_INTERP);
    int n = 0;
    uint64_t pc;
    while (n < max && cfisem_step(&cursor) == 1 &&
           cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc) == CFISEM_OK)
        pcs[n++] = (void *)(uintptr_t)pc;
    return n;
}

static int m_unw_step(void **pcs, int max)
{
    unw_context_t uc;
    unw_cursor_t cursor;
    unw_getcontext(&uc);
    if (unw_init_local(&cursor, &uc) < 0)
        return 0;
    int n = 0;
    while (n < max && unw_step(&cursor) > 0) {
        unw_word_t ip;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        pcs[n++] = (void *)(uintptr_t)ip;
    }
    return n;
}

static int m_unw_backtrace(void **pcs, int max)
{
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

static int m_libgcc(void **pcs, int max)
{
    struct gcc_list list = {pcs, 0, max};
    lib.gcc_backtrace(gcc_trace, &list);
    /* The outermost frame's undefined return address comes as 0. */
    if (list.n > 0 && pcs[list.n - 1] == NULL)
        list.n--;
    return list.n;
}

static int m_glibc(void **pcs, int max)
{
    return lib.glibc_backtrace(pcs, max);
}

static int m_fp_walk(void **pcs, int max);

struct method {
    const char *name;
    method_fn *run;
    bool fp_only;         /* only on the frame-pointer build */
};

static const struct method methods[] = {
    {"cfisem eh_elf (cfisem_backtrace)", m_cfisem, false},
    {"cfisem interp (cursor)", m_interp, false},
    {"libunwind unw_step (CACHE_GLOBAL)", m_unw_step, false},
    {"libunwind unw_step (CACHE_NONE)", m_unw_step, false},
    {"libunwind unw_backtrace", m_unw_backtrace, false},
    {"libgcc _Unwind_Backtrace", m_libgcc, false},
    {"glibc backtrace()", m_glibc, false},
    {"frame-pointer walk", m_fp_walk, true},
};
enum { NMETHODS = sizeof methods / sizeof methods[0], M_UNCACHED = 3 };

/* The frame-pointer walk reads the chain from the workload's innermost
 * frame, whose rbp the leaf captured as it started; it stops after the
 * workload's frames (the rest of the program keeps no frame pointer). */
static uint64_t fp_start;
static int fp_frames;

static int m_fp_walk(void **pcs, int max)
{
    uint64_t rbp = fp_start;
    int n = 0, limit = fp_frames < max ? fp_frames : max;
    while (n < limit) {
        const uint64_t *frame = (const uint64_t *)(uintptr_t)rbp;
        pcs[n++] = (void *)(uintptr_t)frame[1];
        rbp = frame[0];
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Timing at the top of a stack                                          */
/* ------------------------------------------------------------------ */

typedef int csmith_fn(int depth, workload_leaf_fn *leaf, void *arg);

struct spec {
    const char *name;
    recurse_fn *recurse;
    int depth;
    bool fp_build;
};

struct stack {
    const char *name;
    recurse_fn *recurse;
    csmith_fn *csmith;    /* instead of recurse: a Csmith workload */
    int depth;
    bool fp_build;
    /* Filled by the leaf. */
    void *pcs[NMETHODS][MAX_PCS];
    int n[NMETHODS];
    double ns[NMETHODS][MAX_ROUNDS]; /* ns per frame, per round */
    int rounds;
};

static void set_caching(int method)
{
    unw_set_caching_policy(unw_local_addr_space, method == M_UNCACHED
                                                     ? UNW_CACHE_NONE
                                                     : UNW_CACHE_GLOBAL);
}

/* One method: its PC list, then repetitions timed. */
static void time_method(struct stack *s, int m, int round)
{
    set_caching(m);
    s->n[m] = methods[m].run(s->pcs[m], MAX_PCS);
    int frames = s->n[m] > 0 ? s->n[m] : 1;
    void *scratch[MAX_PCS];
    /* About 2 ms of unwinding: calibrated on one call. */
    double t0 = bench_now_ns();
    methods[m].run(scratch, MAX_PCS);
    double one = bench_now_ns() - t0;
    long reps = one > 0 ? (long)(2e6 / one) : 1000;
    if (reps < 3)
        reps = 3;
    if (reps > 200000)
        reps = 200000;
    t0 = bench_now_ns();
    for (long r = 0; r < reps; r++)
        methods[m].run(scratch, MAX_PCS);
    s->ns[m][round] = (bench_now_ns() - t0) / (double)reps / frames;
}

static void leaf(void *arg)
{
    struct stack *s = arg;
    struct cfisem_context entry;
    cfisem_getcontext(&entry);
    fp_start = entry.regs[CFISEM_REG_RBP];
    fp_frames = s->depth;
    for (int round = 0; round < s->rounds; round++)
        for (int m = 0; m < NMETHODS; m++)
            if (!methods[m].fp_only || s->fp_build)
                time_method(s, m, round);
    set_caching(0);
}

/* ------------------------------------------------------------------ */
/* Same frames                                                           */
/* ------------------------------------------------------------------ */

static bool same_tail(void *const *a, int na, void *const *b, int nb)
{
    if (na != nb)
        return false;
    return memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

/* Method m names the reference's frames: after skipping at most SKIP
 * entries of each (their own functions), the same PCs to the same end;
 * the frame-pointer walk: `depth` consecutive frames of the reference. */
static bool check_method(const struct stack *s, int m)
{
    void *const *ref = s->pcs[0];
    int nref = s->n[0];
    if (methods[m].fp_only) {
        for (int i = 0; i + s->n[m] <= nref; i++)
            if (s->n[m] == s->depth &&
                !memcmp(ref + i, s->pcs[m], (size_t)s->n[m] * sizeof *ref))
                return true;
        return false;
    }
    for (int i = 0; i <= SKIP && i < nref; i++)
        for (int j = 0; j <= SKIP && j < s->n[m]; j++)
            if (nref - i >= s->depth &&
                same_tail(ref + i, nref - i, s->pcs[m] + j, s->n[m] - j))
                return true;
    return false;
}

static bool report(const struct stack *s)
{
    bool ok = true;
    double base = bench_median(s->ns[0], s->rounds);
    double base_best = bench_best(s->ns[0], s->rounds);
    printf("\n%s (%d frames unwound by cfisem)\n", s->name, s->n[0]);
    printf("  %-36s %10s %10s %9s %9s %7s\n", "method", "median ns",
           "vs eh_elf", "best ns", "vs eh_elf", "frames");
    for (int m = 0; m < NMETHODS; m++) {
        if (methods[m].fp_only && !s->fp_build)
            continue;
        bool same = check_method(s, m);
        ok = ok && same;
        double ns = bench_median(s->ns[m], s->rounds);
        double b = bench_best(s->ns[m], s->rounds);
        printf("  %-36s %10.2f %9.2fx %9.2f %8.2fx %7d%s\n", methods[m].name,
               ns, ns / base, b, b / base_best, s->n[m],
               same ? "" : "  DIFFERENT PCs");
    }
    return ok;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                                */
/* ------------------------------------------------------------------ */

static void *must(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "real_stacks: %s: %s\n", what, dlerror());
        exit(2);
    }
    return p;
}

static void *workload_symbol(const char *lib_name, const char *symbol)
{
    const char *dir = getenv("CFISEM_WORKLOAD");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "build/workload",
             lib_name);
    void *handle = must(dlopen(path, RTLD_NOW | RTLD_LOCAL), path);
    return must(dlsym(handle, symbol), symbol);
}

/* The Csmith workloads bench/workload/csmith.sh listed, loaded (the
 * caller prepares again: their eh_elfs are beside them). */
enum { MAX_CSMITH = 16 };

struct csmith_workload {
    char name[160];
    int depth;
    csmith_fn *run;
};

static int load_csmith(struct csmith_workload *list)
{
    const char *dir = getenv("CFISEM_WORKLOAD");
    char path[4096];
    snprintf(path, sizeof path, "%s/csmith/workloads.txt",
             dir ? dir : "build/workload");
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("Csmith workloads: none (%s: not built; make bench runs "
               "bench/workload/csmith.sh)\n", path);
        return 0;
    }
    int n = 0;
    char file[128];
    int depth;
    while (n < MAX_CSMITH && fscanf(f, "%127s %d", file, &depth) == 2) {
        snprintf(path, sizeof path, "%s/csmith/%s",
                 dir ? dir : "build/workload", file);
        void *handle = must(dlopen(path, RTLD_NOW | RTLD_LOCAL), path);
        void *p = must(dlsym(handle, "workload_csmith"), "workload_csmith");
        memcpy(&list[n].run, &p, sizeof p);
        /* libcfisem-csmith-SEED-CC.so */
        unsigned seed = 0;
        char cc[32] = "?";
        sscanf(file, "libcfisem-csmith-%u-%31[a-z]", &seed, cc);
        snprintf(list[n].name, sizeof list[n].name,
                 "Csmith seed %u, %s -O2, %d of its calls deep", seed, cc,
                 depth);
        list[n].depth = depth;
        n++;
    }
    fclose(f);
    if (n == 0)
        printf("Csmith workloads: none (csmith not installed: "
               "bench/workload/csmith.sh built no program)\n");
    return n;
}

static void load_libraries(void)
{
    void *gcc = must(dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL),
                     "libgcc_s.so.1");
    void *p = must(dlsym(gcc, "_Unwind_Backtrace"), "_Unwind_Backtrace");
    memcpy(&lib.gcc_backtrace, &p, sizeof p);
    p = must(dlsym(gcc, "_Unwind_GetIP"), "_Unwind_GetIP");
    memcpy(&lib.gcc_get_ip, &p, sizeof p);
    void *libc = must(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "libc");
    p = must(dlsym(libc, "backtrace"), "backtrace");
    memcpy(&lib.glibc_backtrace, &p, sizeof p);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 21;
    load_libraries();
    recurse_fn *mixed, *mixed_qsort, *fp;
    void *p = workload_symbol("libcfisem-shapes.so", "workload_recurse");
    memcpy(&mixed, &p, sizeof p);
    p = workload_symbol("libcfisem-shapes.so", "workload_qsort");
    memcpy(&mixed_qsort, &p, sizeof p);
    p = workload_symbol("libcfisem-shapes-fp.so", "workload_recurse");
    memcpy(&fp, &p, sizeof p);
    recurse_fn *cxx;
    p = workload_symbol("libcfisem-cxx.so", "workload_cxx");
    memcpy(&cxx, &p, sizeof p);
    /* CFISEM_EH_ELF_FLAVOUR=table: the system libraries' eh_elfs of the
     * table layout (make eh-elfs builds both). */
    struct cfisem_options options = {
        .name_dir = getenv("CFISEM_EH_ELF"),
        .name_flavour = getenv("CFISEM_EH_ELF_FLAVOUR")};
    cfisem_prepare(&options);
    printf("eh_elfs of the system libraries: %s layout\n",
           options.name_flavour && !strcmp(options.name_flavour, "table")
               ? "table" : "tree");
    struct cfisem_stats stats;
    cfisem_stats(&stats);
    printf("real stacks: median and best of %d rounds; %llu objects, %llu with an "
           "eh_elf\n", rounds, (unsigned long long)stats.objects,
           (unsigned long long)stats.objects_eh_elf);
    const struct spec stacks[] = {
        {"recursion 10, mixed shapes", mixed, 10, false},
        {"recursion 100, mixed shapes", mixed, 100, false},
        {"recursion 1000, mixed shapes", mixed, 1000, false},
        {"qsort_r callback under recursion 10", mixed_qsort, 10, false},
        {"C++ chain 10 deep through libstdc++'s ostream", cxx, 10,
         false},
        {"recursion 10, frame pointers", fp, 10, true},
        {"recursion 100, frame pointers", fp, 100, true},
        {"recursion 1000, frame pointers", fp, 1000, true},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++) {
        struct stack *s = calloc(1, sizeof *s);
        if (!s)
            return 2;
        s->name = stacks[i].name;
        s->recurse = stacks[i].recurse;
        s->depth = stacks[i].depth;
        s->fp_build = stacks[i].fp_build;
        s->rounds = rounds;
        s->recurse(s->depth, leaf, s);
        ok = report(s) && ok;
        free(s);
    }
    /* The Csmith workloads are loaded only now (and prepared, for their
     * eh_elfs), so that their objects do not slow, on the stacks above,
     * the unwinders that search every loaded object. */
    printf("\n");
    struct csmith_workload csmith[MAX_CSMITH];
    int ncsmith = load_csmith(csmith);
    cfisem_prepare(&options);
    for (int i = 0; i < ncsmith; i++) {
        struct stack *s = calloc(1, sizeof *s);
        if (!s)
            return 2;
        s->name = csmith[i].name;
        s->csmith = csmith[i].run;
        s->depth = csmith[i].depth;
        s->rounds = rounds;
        if (s->csmith(s->depth, leaf, s) < 0) {
            printf("\n%s: its calls never went that deep\n", s->name);
            ok = false;
        } else {
            ok = report(s) && ok;
        }
        free(s);
    }
    cfisem_stats(&stats);
    printf("\ninterpreter frames: %llu (the forced-interp method, and objects "
           "without an eh_elf); failed steps: %llu\n",
           (unsigned long long)stats.frames_interp,
           (unsigned long long)stats.frames_failed);
    if (!ok)
        fprintf(stderr, "real_stacks: a method named other frames\n");
    return ok ? 0 : 1;
}
