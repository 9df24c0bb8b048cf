/* SPDX-License-Identifier: MIT */
/* check_runtime.c — runtime/: libcfisem-unwind on the running process.
 *
 * The stacks are those of the benchmark (bench/workload/workload.h),
 * loaded from $CFISEM_WORKLOAD: the mixed build with its eh_elf beside
 * it, the frame-pointer build, and a copy without an eh_elf. libc's
 * eh_elf comes from $CFISEM_EH_ELF (the name-keyed folder the Makefile
 * fills). The references are libgcc's _Unwind_Backtrace (resolved from
 * libgcc_s.so.1: libunwind, linked into the tests, replaces it) and a
 * frame-pointer walk on the frame-pointer build. Checked:
 *   - backtraces 10, 100 and 1,000 frames deep through every shape equal
 *     libgcc's, and the frame-pointer walk's on the frame-pointer build;
 *   - the workload's frames went through its eh_elf, the copy's through
 *     the interpreter (counters), with and without its row cache (the
 *     same PCs as the eh_elfs'), or through an eh_elf found by build-id
 *     in a cache that `cfisem cache` filled;
 *   - through libc: qsort_r's comparison callback; through libstdc++: a
 *     C++ chain, then its ostream into our stream buffer (eh_elfs and
 *     the interpreter);
 *   - from a signal handler: cfisem_backtrace through the signal frame,
 *     and a cursor on the handler's ucontext, both against libgcc; and
 *     SIGPROF samples at arbitrary PCs, every walk reaching the bottom;
 *   - the remote cursor on a copy of the stack gives the local PCs;
 *   - corrupt stacks (an unmapped stack pointer, a stack that ends in a
 *     PROT_NONE page, garbage return addresses) end with an error. */
#define _GNU_SOURCE /* REG_RIP, process_vm_readv */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/workload/workload.h"
#include "runtime/cfisem-unwind.h"
#include "runtime/internal.h"
#include "support.h"

enum { MAX_PCS = 4096 };

/* ------------------------------------------------------------------ */
/* Set-up: the workloads, libgcc, cfisem_prepare                         */
/* ------------------------------------------------------------------ */

typedef long recurse_fn(int depth, workload_leaf_fn *leaf, void *arg);

typedef long fault_fn(int depth, volatile long *p);

struct workload {
    recurse_fn *recurse;
    recurse_fn *qsort;
    fault_fn *fault;
};

/* libgcc's unwinder, with its context left opaque. */
typedef int uw_trace_fn(void *context, void *arg);
typedef int uw_backtrace_fn(uw_trace_fn *trace, void *arg);
typedef uintptr_t uw_get_ip_fn(void *context);

static struct {
    struct workload mixed, fp, noeh;
    recurse_fn *cxx;      /* libcfisem-cxx.so: through libstdc++ */
    uw_backtrace_fn *backtrace;
    uw_get_ip_fn *get_ip;
} the;

static void *symbol(void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    ck_assert_msg(p != NULL, "dlsym %s: %s", name, dlerror());
    return p;
}

static void load_workload(const char *name, struct workload *w)
{
    const char *dir = getenv("CFISEM_WORKLOAD");
    ck_assert_msg(dir != NULL, "CFISEM_WORKLOAD is not set");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "dlopen %s: %s", path, dlerror());
    void *r = symbol(handle, "workload_recurse");
    void *q = symbol(handle, "workload_qsort");
    memcpy(&w->recurse, &r, sizeof r);
    memcpy(&w->qsort, &q, sizeof q);
    void *f = symbol(handle, "workload_fault");
    memcpy(&w->fault, &f, sizeof f);
}

static void setup_with(const char *cache_dir);
static void load_libgcc(void);

static void setup(void)
{
    setup_with("/nonexistent");
}

static void setup_with(const char *cache_dir)
{
    load_workload("libcfisem-shapes.so", &the.mixed);
    load_workload("libcfisem-shapes-fp.so", &the.fp);
    load_workload("libcfisem-shapes-noeh.so", &the.noeh);
    char path[4096];
    snprintf(path, sizeof path, "%s/libcfisem-cxx.so",
             getenv("CFISEM_WORKLOAD"));
    void *cxx = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(cxx != NULL, "dlopen %s: %s", path, dlerror());
    void *c = symbol(cxx, "workload_cxx");
    memcpy(&the.cxx, &c, sizeof c);
    load_libgcc();
    struct cfisem_options options = {.cache_dir = cache_dir,
                                     .name_dir = getenv("CFISEM_EH_ELF"),
                                     .system_dir = ""};
    ck_assert_int_eq(cfisem_prepare(&options), CFISEM_OK);
}

static void load_libgcc(void)
{
    void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(gcc != NULL, "dlopen libgcc_s.so.1: %s", dlerror());
    void *b = symbol(gcc, "_Unwind_Backtrace");
    void *g = symbol(gcc, "_Unwind_GetIP");
    memcpy(&the.backtrace, &b, sizeof b);
    memcpy(&the.get_ip, &g, sizeof g);
}

/* ------------------------------------------------------------------ */
/* PC lists                                                              */
/* ------------------------------------------------------------------ */

struct pcs {
    void *pc[MAX_PCS];
    int n;
};

static int gcc_trace(void *context, void *arg)
{
    struct pcs *list = arg;
    if (list->n == MAX_PCS)
        return 4; /* _URC_NORMAL_STOP */
    list->pc[list->n++] = (void *)the.get_ip(context);
    return 0;
}

static void gcc_backtrace(struct pcs *list)
{
    list->n = 0;
    the.backtrace(gcc_trace, list);
    /* libgcc reports the outermost frame's undefined return address as
     * a PC of 0; glibc's backtrace() drops it too. */
    if (list->n > 0 && list->pc[list->n - 1] == NULL)
        list->n--;
}

/* Both lists start in the test's own functions (each its own call
 * sites, perhaps inlined): after skipping at most SKIP entries of each,
 * they must name the same callers, to the same end, at least `min`
 * frames. */
enum { SKIP = 3 };

static bool same_tail(const struct pcs *a, int i, const struct pcs *b, int j)
{
    if (a->n - i != b->n - j)
        return false;
    for (int k = 0; i + k < a->n; k++)
        if (a->pc[i + k] != b->pc[j + k])
            return false;
    return true;
}

static void assert_same_callers(const struct pcs *ours,
                                const struct pcs *theirs, int min)
{
    for (int i = 0; i <= SKIP && i < ours->n; i++)
        for (int j = 0; j <= SKIP && j < theirs->n; j++)
            if (ours->n - i >= min && same_tail(ours, i, theirs, j))
                return;
    if (getenv("CFISEM_TEST_DEBUG"))
        for (int k = 0; k < ours->n || k < theirs->n; k++)
            fprintf(stderr, "%3d %p %p\n", k,
                    k < ours->n ? ours->pc[k] : NULL,
                    k < theirs->n ? theirs->pc[k] : NULL);
    ck_abort_msg("%d PCs, libgcc %d: no common tail of %d frames "
                 "(first: %p, libgcc %p)", ours->n, theirs->n, min,
                 ours->n > 0 ? ours->pc[0] : NULL,
                 theirs->n > 0 ? theirs->pc[0] : NULL);
}

/* The index of pc in the list, or -1. */
static int index_of(const struct pcs *list, void *pc)
{
    for (int i = 0; i < list->n; i++)
        if (list->pc[i] == pc)
            return i;
    return -1;
}

/* A frame-pointer walk from the frame whose rbp is `rbp`: the return
 * addresses of `count` frames, stopping early when the chain does not
 * go up the stack. */
static int fp_walk(uint64_t rbp, void **pcs, int count)
{
    int n = 0;
    while (n < count && rbp) {
        const uint64_t *frame = (const uint64_t *)(uintptr_t)rbp;
        pcs[n++] = (void *)(uintptr_t)frame[1];
        if (frame[0] <= rbp)
            break;
        rbp = frame[0];
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Leaves: what runs at the top of a workload's stack                    */
/* ------------------------------------------------------------------ */

struct local_result {
    struct pcs ours, gcc, fp;
    struct cfisem_context entry; /* leaf_fp_walk's, as it starts */
    bool interp_only;     /* cursor_backtrace: CFISEM_ENGINE_INTERP */
    int depth;
    struct cfisem_cursor_stats stats;
    int last;             /* the last step's result */
};

/* cfisem through a cursor, counting how each frame was unwound. */
static void cursor_backtrace(struct local_result *r)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, &context), CFISEM_OK);
    if (r->interp_only)
        ck_assert_int_eq(cfisem_set_engine(&cursor, CFISEM_ENGINE_INTERP),
                         CFISEM_OK);
    r->ours.n = 0;
    /* The first PC is this function's own. */
    r->ours.pc[r->ours.n++] = (void *)(uintptr_t)context.regs[16];
    while (r->ours.n < MAX_PCS && (r->last = cfisem_step(&cursor)) == 1) {
        uint64_t pc;
        ck_assert_int_eq(cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc),
                         CFISEM_OK);
        r->ours.pc[r->ours.n++] = (void *)(uintptr_t)pc;
    }
    cfisem_cursor_stats(&cursor, &r->stats);
}

static void leaf_compare(void *arg)
{
    struct local_result *r = arg;
    cursor_backtrace(r);
    gcc_backtrace(&r->gcc);
}

/* The same, every frame by the interpreter. */
static void leaf_compare_interp(void *arg)
{
    struct local_result *r = arg;
    r->interp_only = true;
    cursor_backtrace(r);
    gcc_backtrace(&r->gcc);
}

/* The frame-pointer chain starts at the workload's innermost frame:
 * rbp is callee-saved, and nothing here changes it before the first
 * call. */
static void leaf_fp_walk(void *arg)
{
    struct local_result *r = arg;
    cfisem_getcontext(&r->entry);
    r->fp.n = fp_walk(r->entry.regs[CFISEM_REG_RBP], r->fp.pc, r->depth);
    leaf_compare(r);
}

static void leaf_backtrace(void *arg)
{
    struct local_result *r = arg;
    r->ours.n = cfisem_backtrace(r->ours.pc, MAX_PCS);
    gcc_backtrace(&r->gcc);
}

static struct local_result *run(recurse_fn *recurse, int depth,
                                workload_leaf_fn *leaf)
{
    struct local_result *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    r->depth = depth;
    recurse(depth, leaf, r);
    return r;
}

/* ------------------------------------------------------------------ */
/* Local backtraces                                                      */
/* ------------------------------------------------------------------ */

static const int depths[] = {10, 100, 1000};

START_TEST(test_prepare_finds_eh_elfs)
{
    setup();
    struct cfisem_stats stats;
    cfisem_stats(&stats);
    /* The mixed and frame-pointer workloads and libc at least. */
    ck_assert_uint_ge(stats.objects_eh_elf, 3);
    ck_assert_uint_gt(stats.objects, stats.objects_eh_elf);
}
END_TEST

START_TEST(test_backtrace_equals_libgcc)
{
    setup();
    struct local_result *r = run(the.mixed.recurse, depths[_i], leaf_backtrace);
    ck_assert_int_ge(r->ours.n, depths[_i]);
    assert_same_callers(&r->ours, &r->gcc, depths[_i]);
    free(r);
}
END_TEST

START_TEST(test_cursor_uses_eh_elf)
{
    setup();
    struct local_result *r = run(the.mixed.recurse, depths[_i], leaf_compare);
    assert_same_callers(&r->ours, &r->gcc, depths[_i]);
    ck_assert_int_eq(r->last, 0); /* the clean end of the stack */
    /* Every workload frame (and libc's) went through an eh_elf. */
    ck_assert_uint_ge(r->stats.frames_eh_elf, (unsigned)depths[_i]);
    free(r);
}
END_TEST

START_TEST(test_fallback_interp)
{
    setup();
    struct cfisem_stats before, after;
    cfisem_stats(&before);
    struct local_result *r = run(the.noeh.recurse, depths[_i], leaf_compare);
    cfisem_stats(&after);
    assert_same_callers(&r->ours, &r->gcc, depths[_i]);
    ck_assert_int_eq(r->last, 0);
    ck_assert_uint_ge(r->stats.frames_interp, (unsigned)depths[_i]);
    ck_assert_uint_ge(after.frames_interp - before.frames_interp,
                      (uint64_t)depths[_i]);
    free(r);
}
END_TEST

START_TEST(test_engine_interp)
{
    setup();
    struct local_result *r = run(the.mixed.recurse, depths[_i],
                                 leaf_compare_interp);
    assert_same_callers(&r->ours, &r->gcc, depths[_i]);
    ck_assert_int_eq(r->last, 0);
    ck_assert_uint_eq(r->stats.frames_eh_elf, 0);
    ck_assert_uint_ge(r->stats.frames_interp, (unsigned)depths[_i]);
    free(r);
}
END_TEST

/* The PCs of a cursor walk from here with `engine`. */
static void engine_walk(enum cfisem_engine engine, struct pcs *list,
                        struct cfisem_cursor_stats *stats)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, &context), CFISEM_OK);
    ck_assert_int_eq(cfisem_set_engine(&cursor, engine), CFISEM_OK);
    list->n = 0;
    uint64_t pc;
    while (list->n < MAX_PCS && cfisem_step(&cursor) == 1 &&
           cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc) == CFISEM_OK)
        list->pc[list->n++] = (void *)(uintptr_t)pc;
    cfisem_cursor_stats(&cursor, stats);
}

struct engines_result {
    struct pcs eh_elf, cached, again, uncached;
    struct cfisem_cursor_stats stats[4];
};

/* One call site for every walk: the same PCs from each. */
static void leaf_engines(void *arg)
{
    struct engines_result *r = arg;
    for (int k = 0; k < 4; k++) {
        static const enum cfisem_engine which[4] = {
            CFISEM_ENGINE_AUTO, CFISEM_ENGINE_INTERP, CFISEM_ENGINE_INTERP,
            CFISEM_ENGINE_INTERP_NO_CACHE};
        struct pcs *lists[4] = {&r->eh_elf, &r->cached, &r->again,
                                &r->uncached};
        engine_walk(which[k], lists[k], &r->stats[k]);
    }
}

/* The interpreter with its row cache (a first walk fills it, a second
 * takes every row from it) and without gives the eh_elfs' PCs. */
START_TEST(test_engine_interp_row_cache)
{
    setup();
    struct engines_result *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    the.mixed.recurse(depths[_i], leaf_engines, r);
    ck_assert_int_ge(r->eh_elf.n, depths[_i]);
    const struct pcs *others[3] = {&r->cached, &r->again, &r->uncached};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(others[k]->n, r->eh_elf.n);
        for (int i = 0; i < r->eh_elf.n; i++)
            ck_assert_msg(others[k]->pc[i] == r->eh_elf.pc[i],
                          "walk %d, frame %d: %p, eh_elf %p", k, i,
                          others[k]->pc[i], r->eh_elf.pc[i]);
        ck_assert_uint_eq(r->stats[k + 1].frames_eh_elf, 0);
        ck_assert_uint_ge(r->stats[k + 1].frames_interp,
                          (unsigned)depths[_i]);
    }
    free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The frame cache (runtime/frames.c)                                    */
/* ------------------------------------------------------------------ */

/* A cursor whose steps never replay the frame cache: every frame by its
 * object's eh_elf (or the interpreter). */
static void no_frame_cache(struct cfisem_cursor *cursor)
{
    ((struct rt_cursor *)(void *)cursor->opaque)->walk.frame_cache = 0;
}

static const struct eh_elf_regs *regs_of(const struct cfisem_cursor *cursor)
{
    return &((const struct rt_cursor *)(const void *)cursor->opaque)->regs;
}

/* Two register files agree: the same registers known and undefined, the
 * same values of the known ones. */
static void assert_same_regs(const struct eh_elf_regs *a,
                             const struct eh_elf_regs *b, int pass,
                             int frame)
{
    ck_assert_msg(a->known == b->known && a->undefined == b->undefined,
                  "pass %d, frame %d: known %#x/%#x, undefined %#x/%#x",
                  pass, frame, a->known, b->known, a->undefined,
                  b->undefined);
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        if (a->known >> r & 1u)
            ck_assert_msg(a->value[r] == b->value[r],
                          "pass %d, frame %d, register %u: %#llx, eh_elf "
                          "%#llx", pass, frame, r,
                          (unsigned long long)a->value[r],
                          (unsigned long long)b->value[r]);
}

struct cache_result {
    int frames;           /* of the last pass */
    int replayed;         /* rows replayed on their own, last pass */
    int kept;             /* frames of the last pass whose row is kept */
    int walked;           /* replayed by the backtrace's loop, last pass */
    struct pcs backtrace[2], uncached;
};

/* Two cursors up the same stack in step, one with the frame cache and
 * one without, twice (the first pass learns the rows, the second
 * replays them); at every frame both give the same result and the same
 * registers. In the second pass, the row kept for each frame is also
 * replayed alone on a copy of the uncached cursor's registers, which
 * must become the eh_elf's caller's, and the backtrace's replay loop
 * (rt_frame_walk, the rows' fast form) makes one step from the uncached
 * cursor's registers and a copy of its walk, which must give the same
 * registers (those a row loads as it goes, rbx and r12-r15, among
 * them). Then cfisem_backtrace twice, and the uncached cursor's PCs. */
static void leaf_cache(void *arg)
{
    struct cache_result *r = arg;
    for (int pass = 0; pass < 2; pass++) {
        struct cfisem_context context;
        cfisem_getcontext(&context);
        struct cfisem_cursor cached, uncached;
        ck_assert_int_eq(cfisem_init_local(&cached, &context), CFISEM_OK);
        ck_assert_int_eq(cfisem_init_local(&uncached, &context), CFISEM_OK);
        no_frame_cache(&uncached);
        r->frames = r->replayed = r->walked = 0;
        r->uncached.n = 0;
        for (;;) {
            struct rt_cursor *u = (struct rt_cursor *)(void *)uncached.opaque;
            struct eh_elf_regs alone = u->regs, walked = u->regs;
            struct rt_walk walk = u->walk;
            bool caller_frame = u->walk.caller_frame != 0;
            uint64_t lookup_pc = alone.value[CFISEM_REG_RIP] -
                                 (caller_frame ? 1 : 0);
            int a = cfisem_step(&cached), b = cfisem_step(&uncached);
            /* (the objects the uncached step found valid, its own too) */
            uint32_t valid = u->walk.entries[0] |
                             (uint32_t)u->walk.entries[1] << 16;
            uint16_t entry;
            int by_row = rt_frame_replay(lookup_pc, &alone, &u->walk.env,
                                         valid, &entry);
            if (pass == 1 && by_row != RT_NO_ROW)
                r->kept++;
            ck_assert_int_eq(a, b);
            if (a != 1)
                break;
            assert_same_regs(regs_of(&cached), regs_of(&uncached), pass,
                             r->frames);
            if (by_row == RT_REPLAYED && pass == 1 &&
                (alone.known >> CFISEM_REG_RIP & 1u)) {
                assert_same_regs(&alone, regs_of(&uncached), pass,
                                 r->frames);
                r->replayed++;
            }
            void *walked_pc;
            int stop;
            if (pass == 1 && rt_frame_walk(&walk, &walked, caller_frame,
                                           &walked_pc, 0, 1, &stop) == 1) {
                assert_same_regs(&walked, regs_of(&uncached), pass,
                                 r->frames);
                r->walked++;
            }
            uint64_t pc;
            ck_assert_int_eq(cfisem_get_reg(&uncached, CFISEM_REG_RIP, &pc),
                             CFISEM_OK);
            if (r->uncached.n < MAX_PCS)
                r->uncached.pc[r->uncached.n++] = (void *)(uintptr_t)pc;
            r->frames++;
        }
    }
    for (int k = 0; k < 2; k++)
        r->backtrace[k].n = cfisem_backtrace(r->backtrace[k].pc, MAX_PCS);
}

/* _i: the mixed recursion 10, 100 and 1,000 deep, qsort_r's callback,
 * the C++ chain through libstdc++. */
START_TEST(test_frame_cache_gives_the_eh_elf_frame)
{
    setup();
    struct cache_result *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    int depth = _i < 3 ? depths[_i] : 10;
    if (_i < 3)
        the.mixed.recurse(depth, leaf_cache, r);
    else if (_i == 3)
        the.mixed.qsort(depth, leaf_cache, r);
    else
        the.cxx(depth, leaf_cache, r);
    ck_assert_int_ge(r->frames, depth);
    /* Rows were kept, and replayed alone: at least the workload's. */
    ck_assert_int_ge(r->kept, depth);
    ck_assert_int_ge(r->replayed, depth);
    ck_assert_int_ge(r->walked, depth);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_ge(r->backtrace[k].n, depth);
        assert_same_callers(&r->backtrace[k], &r->uncached, depth);
    }
    /* (the first PC: the call site in leaf_cache, which may be two) */
    ck_assert_int_eq(r->backtrace[0].n, r->backtrace[1].n);
    for (int i = 1; i < r->backtrace[0].n; i++)
        ck_assert_ptr_eq(r->backtrace[0].pc[i], r->backtrace[1].pc[i]);
    free(r);
}
END_TEST

/* Threads that walk the same stacks at once, from a cold frame cache:
 * every backtrace names the frames the walk without the cache names
 * (rows learnt, kept and replayed by all at the same time). */
enum { THREADS = 4, THREAD_WALKS = 300 };

struct thread_walks {
    struct pcs reference, walk;
    int failures;
};

static void leaf_threads(void *arg)
{
    struct thread_walks *t = arg;
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, &context), CFISEM_OK);
    no_frame_cache(&cursor);
    t->reference.n = 0;
    uint64_t pc;
    while (t->reference.n < MAX_PCS && cfisem_step(&cursor) == 1 &&
           cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc) == CFISEM_OK)
        t->reference.pc[t->reference.n++] = (void *)(uintptr_t)pc;
    for (int k = 0; k < THREAD_WALKS; k++) {
        t->walk.n = cfisem_backtrace(t->walk.pc, MAX_PCS);
        /* (its first PC: the call site here; the cursor's: our caller) */
        bool same = t->walk.n == t->reference.n + 1;
        for (int i = 0; same && i < t->reference.n; i++)
            same = t->walk.pc[i + 1] == t->reference.pc[i];
        t->failures += !same;
    }
}

static void *thread_main(void *arg)
{
    the.mixed.recurse(100, leaf_threads, arg);
    return NULL;
}

START_TEST(test_frame_cache_threads)
{
    setup();
    pthread_t threads[THREADS];
    struct thread_walks *t = calloc(THREADS, sizeof *t);
    ck_assert_ptr_nonnull(t);
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, thread_main,
                                        &t[i]), 0);
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        ck_assert_int_ge(t[i].reference.n, 100);
        ck_assert_msg(t[i].failures == 0, "thread %d: %d walks of %d "
                      "differ", i, t[i].failures, THREAD_WALKS);
    }
    free(t);
}
END_TEST

/* The frame cache's rows of the PCs of a walk's stack (from a cursor on
 * this leaf's frame): how many frames have one kept. */
struct kept_rows {
    int frames, kept;
};

static void leaf_kept_rows(void *arg)
{
    struct kept_rows *k = arg;
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, &context), CFISEM_OK);
    no_frame_cache(&cursor);
    do {
        struct rt_cursor *c = (struct rt_cursor *)(void *)cursor.opaque;
        struct eh_elf_regs regs = c->regs;
        uint16_t entry;
        uint64_t lookup_pc = regs.value[CFISEM_REG_RIP] -
                             (c->walk.caller_frame ? 1 : 0);
        if (rt_frame_replay(lookup_pc, &regs, &c->walk.env, 0, &entry) !=
            RT_NO_ROW)
            k->kept++;
        k->frames++;
    } while (cfisem_step(&cursor) == 1);
}

/* C++ frames (CIEs with a personality and an LSDA, 'zPLR') through
 * libstdc++'s ostream into our stream buffer: _i 0 the eh_elfs, 1 the
 * interpreter on every frame. */
START_TEST(test_cxx_through_libstdcxx)
{
    setup();
    struct local_result *r = run(the.cxx, 10,
                                 _i ? leaf_compare_interp : leaf_compare);
    assert_same_callers(&r->ours, &r->gcc, 12);
    ck_assert_int_eq(r->last, 0);
    if (_i)
        ck_assert_uint_eq(r->stats.frames_eh_elf, 0);
    else
        ck_assert_uint_ge(r->stats.frames_eh_elf, 12);
    free(r);
}
END_TEST

/* The output of `cfisem cache --cache DIR FILE`, and its exit status. */
static int cfisem_cache(const char *dir, const char *file, char *out,
                        size_t size)
{
    const char *cfisem = getenv("CFISEM");
    ck_assert_ptr_nonnull(cfisem);
    char command[8192];
    snprintf(command, sizeof command, "'%s' cache --cache '%s' '%s' -j 1",
             cfisem, dir, file);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t n = fread(out, 1, size - 1, pipe);
    out[n] = 0;
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `cfisem cache` fills a cache keyed by build-id, where cfisem_prepare
 * finds the copy's eh_elf; a second run keeps it. */
START_TEST(test_build_id_cache)
{
    char *dir = test_temp_dir();
    const char *workload = getenv("CFISEM_WORKLOAD");
    ck_assert_ptr_nonnull(workload);
    char file[4096], out[8192];
    snprintf(file, sizeof file, "%s/libcfisem-shapes-noeh.so", workload);
    ck_assert_int_eq(cfisem_cache(dir, file, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "/.build-id/") && strstr(out, "(compiled)"),
                  "%s", out);
    ck_assert_int_eq(cfisem_cache(dir, file, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "(kept)"), "%s", out);
    setup_with(dir);
    struct local_result *r = run(the.noeh.recurse, 100, leaf_compare);
    assert_same_callers(&r->ours, &r->gcc, 100);
    ck_assert_uint_ge(r->stats.frames_eh_elf, 100);
    free(r);
    char command[8192];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(command), 0);
    free(dir);
}
END_TEST

START_TEST(test_frame_pointer_walk)
{
    setup();
    int depth = depths[_i];
    struct local_result *r = run(the.fp.recurse, depth, leaf_fp_walk);
    assert_same_callers(&r->ours, &r->gcc, depth);
    /* The chain names the callers of the workload's innermost frame,
     * through `depth` of the workload's frames. */
    ck_assert_int_eq(r->fp.n, depth);
    int at = index_of(&r->ours, r->fp.pc[0]);
    ck_assert_int_ge(at, 1);
    ck_assert_int_ge(r->ours.n - at, depth);
    for (int i = 0; i < depth; i++)
        ck_assert_msg(r->fp.pc[i] == r->ours.pc[at + i],
                      "frame %d: %p, frame pointers %p", i, r->ours.pc[at + i],
                      r->fp.pc[i]);
    free(r);
}
END_TEST

START_TEST(test_qsort_callback)
{
    setup();
    struct local_result *r = run(the.mixed.qsort, 10, leaf_compare);
    assert_same_callers(&r->ours, &r->gcc, 12);
    ck_assert_int_eq(r->last, 0);
    free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Signal handlers                                                       */
/* ------------------------------------------------------------------ */

/* What the handler saw: written in the handler, read after it. */
struct signal_result {
    struct pcs ours, gcc, from_ucontext;
    uint64_t interrupted_pc;
};

static struct signal_result *volatile signal_out;

static void on_signal(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    struct signal_result *s = signal_out;
    s->ours.n = cfisem_backtrace(s->ours.pc, MAX_PCS);
    gcc_backtrace(&s->gcc);
    struct cfisem_cursor cursor;
    const ucontext_t *uc = ucontext;
    s->interrupted_pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    s->from_ucontext.n = 0;
    if (cfisem_init_ucontext(&cursor, uc) != CFISEM_OK)
        return;
    s->from_ucontext.pc[s->from_ucontext.n++] =
        (void *)(uintptr_t)s->interrupted_pc;
    while (s->from_ucontext.n < MAX_PCS && cfisem_step(&cursor) == 1) {
        uint64_t pc = 0;
        cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc);
        s->from_ucontext.pc[s->from_ucontext.n++] = (void *)(uintptr_t)pc;
    }
}

static void leaf_raise(void *arg)
{
    signal_out = arg;
    raise(SIGUSR1);
}

START_TEST(test_signal_handler)
{
    setup();
    struct sigaction action = {.sa_sigaction = on_signal,
                               .sa_flags = SA_SIGINFO};
    sigemptyset(&action.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &action, NULL), 0);
    struct signal_result *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    the.mixed.recurse(10, leaf_raise, s);
    /* Through the signal frame (__restore_rt) to the bottom. */
    assert_same_callers(&s->ours, &s->gcc, 12);
    ck_assert_int_gt(s->ours.n, 10);
    /* From the ucontext: the interrupted PC, then its callers, as the
     * tail of libgcc's list from the same PC (exact after a signal
     * frame). */
    int at = index_of(&s->gcc, (void *)(uintptr_t)s->interrupted_pc);
    ck_assert_int_ge(at, 0);
    ck_assert_int_eq(s->from_ucontext.n, s->gcc.n - at);
    for (int i = 0; i < s->from_ucontext.n; i++)
        ck_assert_ptr_eq(s->from_ucontext.pc[i], s->gcc.pc[at + i]);
    free(s);
}
END_TEST

/* A fault at a function's first instruction: the PC after the signal
 * frame is exact, not a return address (looked up at PC-1 it would be
 * another function's, or none). */
static sigjmp_buf fault_return;

static void on_fault(int sig, siginfo_t *info, void *ucontext)
{
    on_signal(sig, info, ucontext);
    siglongjmp(fault_return, 1);
}

START_TEST(test_signal_at_function_entry)
{
    setup();
    struct sigaction action = {.sa_sigaction = on_fault,
                               .sa_flags = SA_SIGINFO | SA_NODEFER};
    sigemptyset(&action.sa_mask);
    ck_assert_int_eq(sigaction(SIGSEGV, &action, NULL), 0);
    struct signal_result *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    signal_out = s;
    if (sigsetjmp(fault_return, 1) == 0)
        the.mixed.fault(10, NULL);
    signal(SIGSEGV, SIG_DFL);
    assert_same_callers(&s->ours, &s->gcc, 12);
    ck_assert_int_ge(index_of(&s->ours, (void *)(uintptr_t)s->interrupted_pc),
                     1);
    free(s);
}
END_TEST

/* SIGPROF samples: the handler walks from the ucontext, wherever the
 * timer stopped the program, and records how each walk ended. */
static volatile sig_atomic_t samples, samples_deep, samples_failed;
static volatile int min_depth;

static void on_sigprof(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    struct cfisem_cursor cursor;
    if (cfisem_init_ucontext(&cursor, ucontext) != CFISEM_OK) {
        samples_failed++;
        return;
    }
    int frames = 0, result;
    while (frames < MAX_PCS && (result = cfisem_step(&cursor)) == 1)
        frames++;
    samples++;
    if (result != 0)
        samples_failed++;
    if (frames >= min_depth)
        samples_deep++;
}

static void leaf_spin(void *arg)
{
    (void)arg;
    for (volatile long i = 0; samples < 50 && i < 4000000000L; i++)
        continue;
}

START_TEST(test_sigprof_sampling)
{
    setup();
    struct sigaction action = {.sa_sigaction = on_sigprof,
                               .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&action.sa_mask);
    ck_assert_int_eq(sigaction(SIGPROF, &action, NULL), 0);
    min_depth = 100;
    struct itimerval timer = {{0, 1000}, {0, 1000}};
    ck_assert_int_eq(setitimer(ITIMER_PROF, &timer, NULL), 0);
    the.mixed.recurse(100, leaf_spin, NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    ck_assert_int_ge(samples, 50);
    ck_assert_int_eq(samples_failed, 0);
    ck_assert_int_eq(samples_deep, samples);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Remote: a copy of the stack, unwound after the frames are gone         */
/* ------------------------------------------------------------------ */

struct sample {
    uint64_t regs[CFISEM_NREGS];
    uint32_t known;
    uint64_t base;        /* address of stack[0] */
    uint8_t *stack;
    size_t size;
    struct pcs local;
};

static int read_sample(void *data, uint64_t addr, unsigned size,
                       uint64_t *value)
{
    const struct sample *s = data;
    if (addr < s->base || addr - s->base > s->size - size)
        return 1;
    *value = 0;
    memcpy(value, s->stack + (addr - s->base), size);
    return 0;
}

static void leaf_capture(void *arg)
{
    struct sample *s = arg;
    struct cfisem_context context;
    cfisem_getcontext(&context);
    memcpy(s->regs, context.regs, sizeof s->regs);
    s->known = context.known;
    s->base = context.regs[CFISEM_REG_RSP];
    /* The copy ends below the test function's frame, whose address the
     * caller left in s->size. */
    s->size = (size_t)(s->size - s->base);
    s->stack = malloc(s->size);
    ck_assert_ptr_nonnull(s->stack);
    /* Copied as perf does, by the kernel: the copy crosses the frames'
     * locals, which a sanitizer's memcpy would refuse to read. */
    struct iovec to = {s->stack, s->size};
    struct iovec from = {(void *)(uintptr_t)s->base, s->size};
    ck_assert_int_eq(process_vm_readv(getpid(), &to, 1, &from, 1, 0),
                     (ssize_t)s->size);
    s->local.n = 0;
    s->local.pc[s->local.n++] = (void *)(uintptr_t)context.regs[16];
    s->local.n += cfisem_backtrace(s->local.pc + 1, MAX_PCS - 1);
}

START_TEST(test_remote_copy)
{
    setup();
    volatile char marker = 0;
    struct sample *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->size = (size_t)(uintptr_t)&marker;
    the.mixed.recurse(10, leaf_capture, s);
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_remote(&cursor, s->regs, s->known, 0,
                                        read_sample, s), CFISEM_OK);
    /* The workload's frames (11) and the leaf lie inside the copy. */
    int n = 1;
    ck_assert_ptr_eq((void *)(uintptr_t)s->regs[16], s->local.pc[0]);
    while (n < 12 && cfisem_step(&cursor) == 1) {
        uint64_t pc;
        ck_assert_int_eq(cfisem_get_reg(&cursor, CFISEM_REG_RIP, &pc), 0);
        /* local.pc[1] is the leaf's return address from cfisem_backtrace
         * in leaf_capture, not a caller: skip it. */
        ck_assert_ptr_eq((void *)(uintptr_t)pc, s->local.pc[n + 1]);
        n++;
    }
    ck_assert_int_eq(n, 12);
    /* Past the copy, reads fail: the walk ends with an error. */
    int result;
    for (int i = 0; i < MAX_PCS && (result = cfisem_step(&cursor)) == 1; i++)
        continue;
    ck_assert_int_lt(result, 0);
    free(s->stack);
    free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Corrupt stacks                                                        */
/* ------------------------------------------------------------------ */

/* A real return address inside the mixed workload, and its frame's
 * registers, to start from. */
static void leaf_context(void *arg)
{
    struct cfisem_context *context = arg;
    struct cfisem_context here;
    cfisem_getcontext(&here);
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, &here), CFISEM_OK);
    ck_assert_int_eq(cfisem_step(&cursor), 1); /* into the workload */
    *context = here;
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        if (cfisem_get_reg(&cursor, r, &context->regs[r]) == CFISEM_OK)
            context->known |= 1u << r;
}

static struct cfisem_context workload_context(void)
{
    struct cfisem_context context;
    memset(&context, 0, sizeof context);
    the.mixed.recurse(3, leaf_context, &context);
    return context;
}

static int walk(struct cfisem_context *context)
{
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, context), CFISEM_OK);
    int result = 1;
    for (int i = 0; i < MAX_PCS && result == 1; i++)
        result = cfisem_step(&cursor);
    return result;
}

START_TEST(test_corrupt_unmapped_sp)
{
    setup();
    struct cfisem_context context = workload_context();
    context.regs[CFISEM_REG_RSP] = 0x10;
    ck_assert_int_eq(walk(&context), CFISEM_E_MEMORY);
}
END_TEST

START_TEST(test_corrupt_guard_page)
{
    setup();
    /* A one-page "stack" followed by a PROT_NONE page: the CFA of the
     * workload's frame lies past the readable page. */
    uint8_t *pages = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(pages, MAP_FAILED);
    ck_assert_int_eq(mprotect(pages + 4096, 4096, PROT_NONE), 0);
    struct cfisem_context context = workload_context();
    context.regs[CFISEM_REG_RSP] = (uint64_t)(uintptr_t)(pages + 4096 - 8);
    ck_assert_int_eq(walk(&context), CFISEM_E_MEMORY);
    munmap(pages, 2 * 4096);
}
END_TEST

START_TEST(test_corrupt_garbage)
{
    setup();
    /* A readable stack full of a pattern: the caller's PC read from it
     * lies in no object. */
    uint64_t *stack = malloc(64 * 1024);
    ck_assert_ptr_nonnull(stack);
    for (size_t i = 0; i < 64 * 1024 / 8; i++)
        stack[i] = 0x0123456789abcdefull + i;
    struct cfisem_context context = workload_context();
    context.regs[CFISEM_REG_RSP] = (uint64_t)(uintptr_t)(stack + 16);
    context.regs[CFISEM_REG_RBP] = (uint64_t)(uintptr_t)(stack + 32);
    int result = walk(&context);
    ck_assert_int_lt(result, 0);
    ck_assert_int_ne(result, CFISEM_E_ARGUMENT);
    free(stack);
}
END_TEST

/* ------------------------------------------------------------------ */
/* What is trusted: eh_elfs are code                                     */
/* ------------------------------------------------------------------ */

struct found_id {
    const char *suffix;
    uint8_t id[64];
    size_t len;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct found_id *f = data;
    size_t n = strlen(info->dlpi_name), k = strlen(f->suffix);
    if (n < k || strcmp(info->dlpi_name + n - k, f->suffix))
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
            const uint8_t *desc = p + sizeof *note + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_descsz <= 64) {
                memcpy(f->id, desc, note->n_descsz);
                f->len = note->n_descsz;
                return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

/* The build-id of the loaded object whose name ends with suffix. */
static size_t loaded_build_id(const char *suffix, uint8_t id[64])
{
    struct found_id f = {.suffix = suffix};
    dl_iterate_phdr(find_build_id, &f);
    ck_assert_msg(f.len > 0, "no build-id for %s", suffix);
    memcpy(id, f.id, f.len);
    return f.len;
}

static void *load_noeh(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libcfisem-shapes-noeh.so",
             getenv("CFISEM_WORKLOAD"));
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "dlopen %s: %s", path, dlerror());
    return handle;
}

/* dir/.build-id/xx/rest.eh_elf.so of a build-id (dir/.build-id/xx made). */
static void build_id_path(const char *dir, const uint8_t *id, size_t len,
                          char *path, size_t size)
{
    int n = snprintf(path, size, "%s/.build-id", dir);
    mkdir(path, 0755);
    n += snprintf(path + n, size - (size_t)n, "/%02x", id[0]);
    mkdir(path, 0755);
    n += snprintf(path + n, size - (size_t)n, "/");
    for (size_t i = 1; i < len; i++)
        n += snprintf(path + n, size - (size_t)n, "%02x", id[i]);
    snprintf(path + n, size - (size_t)n, ".eh_elf.so");
}

static void fake_eh_elf_with(const char *path, const uint8_t *id,
                             size_t len, const char *link);

/* A stand-in eh_elf stamped with the build-id `id` (NULL: no stamp; its
 * unwinder finds no FDE): what cfisem_prepare checks, built with the C
 * compiler. */
static void fake_eh_elf(const char *path, const uint8_t *id, size_t len)
{
    fake_eh_elf_with(path, id, len, NULL);
}

/* The same; when link is not NULL, the file defines no symbol of its
 * own and is linked with `link` (a library that defines them). */
static void fake_eh_elf_with(const char *path, const uint8_t *id,
                             size_t len, const char *link)
{
    char source[4200], text[4096], command[13000];
    snprintf(source, sizeof source, "%s.c", path);
    int n = snprintf(text, sizeof text,
        "#include \"compile/eh_elf.h\"\n"
        "const char eh_elf_ident[] = EH_ELF_IDENT_FULL;\n"
        "const uint32_t eh_elf_abi_version = EH_ELF_ABI_VERSION;\n");
    if (id) {
        n += snprintf(text + n, sizeof text - (size_t)n,
            "const struct eh_elf_object_id eh_elf_object_id = {\n"
            "    EH_ELF_OBJECT_ID_BUILD_ID, %zu, {", len);
        for (size_t i = 0; i < len; i++)
            n += snprintf(text + n, sizeof text - (size_t)n, "%u,", id[i]);
        n += snprintf(text + n, sizeof text - (size_t)n, "}};\n");
    }
    snprintf(text + n, sizeof text - (size_t)n,
        "int eh_elf_unwind(uint64_t pc, const struct eh_elf_regs *callee,\n"
        "                  const struct eh_elf_env *env,\n"
        "                  struct eh_elf_frame *frame)\n"
        "{ (void)pc; (void)callee; (void)env;\n"
        "  return (int)(frame->error = EH_ELF_E_NO_FDE); }\n");
    if (link)
        snprintf(text, sizeof text, "int eh_elf_nothing;\n");
    ck_assert_int_eq(test_write_file(source, text, strlen(text)), 0);
    snprintf(command, sizeof command,
             "cc -shared -fPIC -I'%s' -o '%s' '%s' %s%s%s && rm -f '%s'",
             getenv("CFISEM_SRC"), path, source, link ? "-Wl,--no-as-needed '" : "",
             link ? link : "", link ? "'" : "", source);
    ck_assert_int_eq(system(command), 0);
}

/* What a child loads and prepares with (prepare_child). */
struct child_prepare {
    const char *object; /* dlopen'd first; NULL: the noeh workload */
    const char *after;  /* a shell command run after the load, or NULL */
    const char *cache;  /* cfisem_options.cache_dir */
    const char *system; /* cfisem_options.system_dir ("": none) */
};

/* cfisem_prepare in a child, as `how` says; the child's statistics. */
static struct cfisem_stats prepare_child(const struct child_prepare *how)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!how->object)
            load_noeh();
        else if (!dlopen(how->object, RTLD_NOW | RTLD_LOCAL))
            _exit(1);
        if (how->after && system(how->after) != 0)
            _exit(1);
        struct cfisem_options options = {.cache_dir = how->cache,
                                         .system_dir = how->system};
        struct cfisem_stats stats;
        cfisem_prepare(&options);
        cfisem_stats(&stats);
        _exit(write(fds[1], &stats, sizeof stats) == sizeof stats ? 0 : 1);
    }
    close(fds[1]);
    struct cfisem_stats stats = {0};
    ck_assert_int_eq(read(fds[0], &stats, sizeof stats), sizeof stats);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return stats;
}

/* cfisem_prepare's stats in a child that loads the noeh workload, with
 * `cache` as the user's cache and no system folder. */
static struct cfisem_stats prepare_in_child(const char *cache)
{
    struct child_prepare how = {.cache = cache, .system = ""};
    return prepare_child(&how);
}

static void run_command(const char *format, const char *a, const char *b)
{
    char command[9000];
    snprintf(command, sizeof command, format, a, b);
    ck_assert_msg(system(command) == 0, "%s", command);
}

/* A cache with the noeh workload's eh_elf (cfisem cache), its path in
 * file; dir is made readable by every user. */
static void filled_cache(const char *dir, char *file, size_t size)
{
    char workload[4096], out[8192];
    snprintf(workload, sizeof workload, "%s/libcfisem-shapes-noeh.so",
             getenv("CFISEM_WORKLOAD"));
    ck_assert_int_eq(cfisem_cache(dir, workload, out, sizeof out), 0);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    uint8_t id[64];
    void *handle = load_noeh();
    size_t len = loaded_build_id("/libcfisem-shapes-noeh.so", id);
    dlclose(handle);
    build_id_path(dir, id, len, file, size);
}

/* Any user but root could have put code there: an eh_elf writable by
 * group or others, under such a folder, or owned by another user, is
 * never loaded (ssh's rule for its keys). */
START_TEST(test_untrusted_eh_elf_refused)
{
    char *dir = test_temp_dir();
    char file[4096], folder[4096];
    filled_cache(dir, file, sizeof file);
    snprintf(folder, sizeof folder, "%s", file);
    *strrchr(folder, '/') = '\0';
    struct cfisem_stats s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 1);
    ck_assert_uint_eq(s.eh_elfs_untrusted, 0);
    static const char *const spoil[][2] = {
        {"chmod g+w '%s'%s", "chmod g-w '%s'%s"},
        {"chmod o+w '%s'%s", "chmod o-w '%s'%s"},
        {"chown nobody '%s'%s", "chown root '%s'%s"},
    };
    const char *const targets[3] = {file, folder, dir};
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 3; k++) {
            run_command(spoil[k][0], targets[t], "");
            s = prepare_in_child(dir);
            ck_assert_msg(s.objects_eh_elf == 0 && s.eh_elfs_untrusted == 1,
                          "%s after %s: %d eh_elfs loaded", targets[t],
                          spoil[k][0], (int)s.objects_eh_elf);
            run_command(spoil[k][1], targets[t], "");
        }
    /* A symbolic link in the cache is not followed. */
    char moved[4200];
    snprintf(moved, sizeof moved, "%s.real", file);
    ck_assert_int_eq(rename(file, moved), 0);
    ck_assert_int_eq(symlink(moved, file), 0);
    s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 0);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* The eh_elfs the program (a copy of this one) loads, as printed by its
 * probe mode run with `env` (a string of NAME=value words). */
static int probe_eh_elfs(const char *program, const char *env)
{
    char command[9000], out[64] = "";
    snprintf(command, sizeof command, "env -u CFISEM_CACHE -u XDG_CACHE_HOME "
             "%s '%s' --prepare-probe", env, program);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t n = fread(out, 1, sizeof out - 1, pipe);
    out[n] = '\0';
    ck_assert_int_eq(pclose(pipe), 0);
    return atoi(out);
}

/* A setuid program gets its environment from whoever runs it: a cache
 * named by $CFISEM_CACHE, $XDG_CACHE_HOME or $HOME would let that user
 * choose code the program runs with its privileges. Run here as root,
 * a copy of this program setuid to nobody is such a process
 * (AT_SECURE). */
START_TEST(test_secure_environment_ignores_cache_variables)
{
    char *dir = test_temp_dir();
    ck_assert_int_eq(chmod(dir, 0755), 0);
    char cache[4200], file[4096], program[4200], xdg[4200], home[4200];
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    snprintf(cache, sizeof cache, "%s/xdg/cfisem", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    ck_assert_int_eq(mkdir(xdg, 0755), 0);
    ck_assert_int_eq(mkdir(cache, 0755), 0);
    ck_assert_int_eq(mkdir(home, 0755), 0);
    filled_cache(cache, file, sizeof file);
    run_command("ln -s '%s' '%s/.cache'", xdg, home);
    snprintf(program, sizeof program, "%s/probe", dir);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    run_command("cp '%s' '%s'", self, program);
    /* The workload where the setuid probe (user nobody) can read it: the
     * build tree may lie in a folder only root enters. */
    char workload[4200];
    snprintf(workload, sizeof workload, "%s/workload", dir);
    ck_assert_int_eq(mkdir(workload, 0755), 0);
    run_command("cp \"$CFISEM_WORKLOAD/libcfisem-shapes-noeh.so\" '%s'",
                workload, "");
    char env[3][8800];
    snprintf(env[0], sizeof env[0], "CFISEM_WORKLOAD='%s' CFISEM_CACHE='%s'",
             workload, cache);
    snprintf(env[1], sizeof env[1], "CFISEM_WORKLOAD='%s' XDG_CACHE_HOME='%s'",
             workload, xdg);
    snprintf(env[2], sizeof env[2], "CFISEM_WORKLOAD='%s' HOME='%s'",
             workload, home);
    for (int k = 0; k < 3; k++)
        ck_assert_msg(probe_eh_elfs(program, env[k]) == 1,
                      "%s: the cache is not used", env[k]);
    run_command("chown nobody '%s' && chmod 4755 '%s'", program, program);
    for (int k = 0; k < 3; k++)
        ck_assert_msg(probe_eh_elfs(program, env[k]) == 0,
                      "setuid, %s: the cache is used", env[k]);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* The probe mode of this program: loads the noeh workload, prepares
 * with the default folders but the system one, prints how many eh_elfs
 * were loaded. */
static int prepare_probe(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libcfisem-shapes-noeh.so",
             getenv("CFISEM_WORKLOAD"));
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    struct cfisem_options options = {.system_dir = ""};
    cfisem_prepare(&options);
    struct cfisem_stats stats;
    cfisem_stats(&stats);
    printf("%d\n", (int)stats.objects_eh_elf);
    /* No exit handlers: LeakSanitizer's cannot run setuid. */
    fflush(stdout);
    _exit(0);
}

/* An eh_elf unwinds the object it was built from: one found under an
 * object's build-id but stamped with another's (a cache filled by hand,
 * a hash collision of names) is not used. */
START_TEST(test_stale_eh_elf_refused)
{
    char *dir = test_temp_dir();
    uint8_t id[64];
    void *handle = load_noeh();
    size_t len = loaded_build_id("/libcfisem-shapes-noeh.so", id);
    dlclose(handle);
    char file[4096];
    build_id_path(dir, id, len, file, sizeof file);
    fake_eh_elf(file, id, len);
    struct cfisem_stats s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 1);
    ck_assert_uint_eq(s.eh_elfs_stale, 0);
    id[len - 1] ^= 1;
    fake_eh_elf(file, id, len);
    s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 0);
    ck_assert_uint_eq(s.eh_elfs_stale, 1);
    /* No stamp: which object it was built from cannot be told. */
    fake_eh_elf(file, NULL, 0);
    s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 0);
    ck_assert_uint_eq(s.eh_elfs_stale, 1);
    /* A real eh_elf of another object (the frame-pointer build) in the
     * place of the noeh build's. */
    char other[4200];
    snprintf(other, sizeof other, "%s/libcfisem-shapes-fp.so.eh_elf.so",
             getenv("CFISEM_WORKLOAD"));
    run_command("cp '%s' '%s'", other, file);
    s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 0);
    ck_assert_uint_eq(s.eh_elfs_stale, 1);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* A shared object without build-id, from `body` (C source), with its
 * eh_elf compiled by cfisem beside it (PATH.eh_elf.so) when eh_elf. */
static void object_without_build_id(const char *path, const char *body,
                                    bool eh_elf)
{
    char source[4200];
    snprintf(source, sizeof source, "%s.c", path);
    ck_assert_int_eq(test_write_file(source, body, strlen(body)), 0);
    run_command("cc -O2 -shared -fPIC -Wl,--build-id=none -o '%s' '%s'", path,
                source);
    if (eh_elf)
        run_command("\"$CFISEM\" compile '%s' -o '%s.eh_elf.so' > /dev/null",
                    path, path);
}

/* cfisem_prepare in a child that has loaded `object`, then run `after`
 * (a shell command, or NULL); no cache, no system folder. */
static struct cfisem_stats prepare_loading(const char *object,
                                           const char *after)
{
    struct child_prepare how = {.object = object, .after = after,
                                .cache = "/nonexistent", .system = ""};
    return prepare_child(&how);
}

/* The last DW_CFA_nop of the last FDE of the .eh_frame of the file at
 * path (before its 4-byte terminator) becomes DW_CFA_remember_state: the
 * same layout, other frame bytes, the same meaning. */
static void patch_last_nop(const char *path)
{
    size_t size;
    uint8_t *bytes = (uint8_t *)test_read_file(path, &size);
    ck_assert_ptr_nonnull(bytes);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(void *)bytes;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(void *)(bytes + eh->e_shoff);
    const char *names = (const char *)bytes + sh[eh->e_shstrndx].sh_offset;
    bool patched = false;
    for (unsigned i = 0; i < eh->e_shnum && !patched; i++) {
        if (strcmp(names + sh[i].sh_name, ".eh_frame") || sh[i].sh_size < 8)
            continue;
        uint8_t *last = bytes + sh[i].sh_offset + sh[i].sh_size - 5;
        ck_assert_uint_eq(*last, 0x00); /* DW_CFA_nop */
        *last = 0x0a;                   /* DW_CFA_remember_state */
        patched = true;
    }
    ck_assert(patched);
    ck_assert_int_eq(test_write_file(path, bytes, size), 0);
    free(bytes);
}

/* An object without build-id: its eh_elf is stamped with the hash of its
 * frame sections, and the run-time library takes it when that hash is
 * the object's file's and the file's .eh_frame is what is loaded; an
 * eh_elf of another such object, or of the file that replaced the one
 * loaded, is stale. */
START_TEST(test_eh_elf_of_object_without_build_id)
{
    static const char body[] = "int f(int x) { return x + 1; }\n";
    char *dir = test_temp_dir();
    char mine[4200], other[4200], patched[4200], folder[4200];
    snprintf(mine, sizeof mine, "%s/libnoid.so", dir);
    snprintf(other, sizeof other, "%s/other/libnoid.so", dir);
    snprintf(patched, sizeof patched, "%s/patched/libnoid.so", dir);
    snprintf(folder, sizeof folder, "%s/other", dir);
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    snprintf(folder, sizeof folder, "%s/patched", dir);
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    object_without_build_id(mine, body, false);
    object_without_build_id(
        other, "#include <stdio.h>\nint f(int x) { return x + 1; }\n"
               "int g(const char *s) { char b[256];\n"
               "  snprintf(b, sizeof b, \"%s\", s); return puts(b); }\n",
        true);
    struct cfisem_stats base = prepare_loading(mine, NULL);
    ck_assert_uint_eq(base.eh_elfs_stale, 0);
    object_without_build_id(mine, body, true);
    struct cfisem_stats s = prepare_loading(mine, NULL);
    ck_assert_uint_eq(s.objects_eh_elf, base.objects_eh_elf + 1);
    ck_assert_uint_eq(s.eh_elfs_stale, 0);
    /* The other object's eh_elf beside this one. */
    run_command("cp '%s.eh_elf.so' '%s.eh_elf.so'", other, mine);
    s = prepare_loading(mine, NULL);
    ck_assert_uint_eq(s.objects_eh_elf, base.objects_eh_elf);
    ck_assert_uint_eq(s.eh_elfs_stale, 1);
    /* The same object with one frame byte changed, and its eh_elf:
     * taken when it is the file loaded... */
    run_command("cp '%s' '%s'", mine, patched);
    patch_last_nop(patched);
    run_command("\"$CFISEM\" compile '%s' -o '%s.eh_elf.so' > /dev/null",
                patched, patched);
    s = prepare_loading(patched, NULL);
    ck_assert_uint_eq(s.objects_eh_elf, base.objects_eh_elf + 1);
    ck_assert_uint_eq(s.eh_elfs_stale, 0);
    /* ...not when it replaced, with its eh_elf, the file loaded: the
     * file and the eh_elf agree, the memory does not. */
    char after[30000];
    snprintf(after, sizeof after,
             "cp '%s' '%s.new' && mv '%s.new' '%s' && "
             "cp '%s.eh_elf.so' '%s.eh_elf.so'",
             patched, mine, mine, mine, patched, mine);
    s = prepare_loading(mine, after);
    ck_assert_uint_eq(s.objects_eh_elf, base.objects_eh_elf);
    ck_assert_uint_eq(s.eh_elfs_stale, 1);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* dlsym on an eh_elf's handle also finds the symbols of the libraries
 * it depends on: an eh_elf that defines none of its own, linked with a
 * library that does, is not an eh_elf. */
START_TEST(test_eh_elf_symbols_of_a_dependency_ignored)
{
    char *dir = test_temp_dir();
    uint8_t id[64];
    void *handle = load_noeh();
    size_t len = loaded_build_id("/libcfisem-shapes-noeh.so", id);
    dlclose(handle);
    char file[4096], dep[4200];
    build_id_path(dir, id, len, file, sizeof file);
    snprintf(dep, sizeof dep, "%s/dep.so", dir);
    fake_eh_elf(dep, id, len);
    fake_eh_elf_with(file, id, len, dep);
    struct cfisem_stats s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 0);
    fake_eh_elf(file, id, len);
    s = prepare_in_child(dir);
    ck_assert_uint_eq(s.objects_eh_elf, 1);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Objects unloaded                                                      */
/* ------------------------------------------------------------------ */

static recurse_fn *recurse_of(void *handle, void **base)
{
    void *r = symbol(handle, "workload_recurse");
    Dl_info info;
    ck_assert(dladdr(r, &info));
    *base = info.dli_fbase;
    recurse_fn *fn;
    memcpy(&fn, &r, sizeof r);
    return fn;
}

/* A copy of file at copy whose build-id (id) has one bit changed: the
 * same code, another object. */
static void copy_other_build_id(const char *file, const char *copy,
                                const uint8_t *id, size_t len)
{
    size_t size;
    char *bytes = test_read_file(file, &size);
    ck_assert_ptr_nonnull(bytes);
    uint8_t *at = memmem(bytes, size, id, len);
    ck_assert_ptr_nonnull(at);
    at[len - 1] ^= 1;
    ck_assert_int_eq(test_write_file(copy, bytes, size), 0);
    free(bytes);
}

/* After dlclose, the table's entry of the object and its eh_elf stay;
 * another object loaded at the same place must not be unwound by that
 * eh_elf (it would read the other object's stack with the wrong CFI). */
START_TEST(test_unloaded_object_eh_elf_not_used)
{
    load_libgcc();
    char *dir = test_temp_dir();
    const char *workload = getenv("CFISEM_WORKLOAD");
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/a.so", dir);
    snprintf(b, sizeof b, "%s/b.so", dir);
    run_command("cp '%s/libcfisem-shapes.so' '%s'", workload, a);
    run_command("cp '%s/libcfisem-shapes.so.eh_elf.so' '%s.eh_elf.so'",
                workload, a);
    void *first = dlopen(a, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(first != NULL, "dlopen %s: %s", a, dlerror());
    uint8_t id[64];
    size_t len = loaded_build_id("/a.so", id);
    copy_other_build_id(a, b, id, len);
    struct cfisem_options options = {.cache_dir = "/nonexistent",
                                     .system_dir = ""};
    ck_assert_int_eq(cfisem_prepare(&options), CFISEM_OK);
    void *base_a, *base_b;
    struct local_result *r = run(recurse_of(first, &base_a), 50,
                                 leaf_compare);
    assert_same_callers(&r->ours, &r->gcc, 50);
    ck_assert_uint_ge(r->stats.frames_eh_elf, 50);
    free(r);
    /* The frame cache keeps the rows of a.so's frames, at the PCs b.so's
     * frames will have (the same code at the same place): replayed for
     * b.so, they would count as a.so's eh_elf's frames below. */
    struct kept_rows kept = {0, 0};
    recurse_of(first, &base_a)(50, leaf_kept_rows, &kept);
    ck_assert_int_ge(kept.kept, 50);
    ck_assert_int_eq(dlclose(first), 0);
    void *second = dlopen(b, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(second != NULL, "dlopen %s: %s", b, dlerror());
    recurse_fn *recurse = recurse_of(second, &base_b);
    ck_assert_msg(base_a == base_b, "b.so at %p, not where a.so was (%p)",
                  base_b, base_a);
    for (int k = 0; k < 2; k++) {
        r = run(recurse, 50, leaf_compare);
        assert_same_callers(&r->ours, &r->gcc, 50);
        ck_assert_int_eq(r->last, 0);
        ck_assert_uint_eq(r->stats.frames_eh_elf, 0);
        ck_assert_uint_ge(r->stats.frames_interp, 50);
        free(r);
        r = run(recurse, 50, leaf_backtrace); /* (the fast form) */
        assert_same_callers(&r->ours, &r->gcc, 50);
        free(r);
        struct cfisem_stats stats;
        cfisem_stats(&stats);
        ck_assert_uint_eq(stats.objects_unloaded, 1);
        ck_assert_int_eq(cfisem_prepare(&options), CFISEM_OK); /* again */
    }
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* hop(fn, arg) calls fn(arg) with rbx 0x5eed, rbx pushed: the same code
 * in both objects; the CFI of SAVED says so (the caller's rbx at CFA -
 * 16), the other's says rbx keeps its value (the caller's rbx 0x5eed).
 * Both rules take two bytes: the objects' layouts are the same. */
static const char hop_source[] =
    "    .text\n"
    "    .globl hop\n"
    "    .type hop, @function\n"
    "hop:\n"
    "    .cfi_startproc\n"
    "    push %rbx\n"
    "    .cfi_def_cfa_offset 16\n"
    "#ifdef SAVED\n"
    "    .cfi_offset %rbx, -16\n"
    "#else\n"
    "    .cfi_same_value %rbx\n"
    "#endif\n"
    "    mov $0x5eed, %ebx\n"
    "    mov %rdi, %rax\n"
    "    mov %rsi, %rdi\n"
    "    call *%rax\n"
    "    pop %rbx\n"
    "    .cfi_def_cfa_offset 8\n"
    "    ret\n"
    "    .cfi_endproc\n"
    "    .size hop, .-hop\n"
    "    .section .note.GNU-stack,\"\",@progbits\n";

typedef long hop_fn(long (*fn)(void *), void *arg);

enum { HOP_RBX = 3 }; /* rbx's DWARF number */

/* The frame of hop's caller, as a cursor of `engine` sees it from the
 * callback hop calls: two steps up. */
struct hop_walk {
    uint64_t value[CFISEM_NREGS];
    uint32_t known;
    int steps;
    struct cfisem_cursor_stats stats;
};

static void walk_to_hop_caller(const struct cfisem_context *context,
                               enum cfisem_engine engine,
                               struct hop_walk *out)
{
    struct cfisem_cursor cursor;
    ck_assert_int_eq(cfisem_init_local(&cursor, context), CFISEM_OK);
    ck_assert_int_eq(cfisem_set_engine(&cursor, engine), CFISEM_OK);
    out->steps = 0;
    while (out->steps < 2 && cfisem_step(&cursor) == 1)
        out->steps++;
    out->known = 0;
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        if (cfisem_get_reg(&cursor, r, &out->value[r]) == CFISEM_OK)
            out->known |= 1u << r;
    cfisem_cursor_stats(&cursor, &out->stats);
}

/* The walks of one call of hop: with the row cache (twice: cold, then
 * warm) and without it. */
struct hop_walks {
    struct hop_walk cached[2];
    struct hop_walk uncached;
};

static long __attribute__((noinline)) at_hop(void *arg)
{
    struct hop_walks *walks = arg;
    struct cfisem_context context;
    cfisem_getcontext(&context);
    walk_to_hop_caller(&context, CFISEM_ENGINE_INTERP, &walks->cached[0]);
    walk_to_hop_caller(&context, CFISEM_ENGINE_INTERP, &walks->cached[1]);
    walk_to_hop_caller(&context, CFISEM_ENGINE_INTERP_NO_CACHE,
                       &walks->uncached);
    return 0;
}

/* hop of the object loaded from path (its base in *base) walked through
 * by the interpreter: with its row cache, cold and warm, the caller's
 * registers are those of the interpreter without it, register by
 * register, and rbx is what the object's CFI says (0x5eed: the same
 * value, else the one saved). */
static void walk_through_hop(void *handle, bool saved, void **base)
{
    void *h = symbol(handle, "hop");
    Dl_info info;
    ck_assert(dladdr(h, &info));
    *base = info.dli_fbase;
    hop_fn *hop;
    memcpy(&hop, &h, sizeof h);
    struct hop_walks walks;
    memset(&walks, 0, sizeof walks);
    hop(at_hop, &walks);
    const struct hop_walk *u = &walks.uncached;
    ck_assert_int_eq(u->steps, 2);
    ck_assert_uint_eq(u->stats.frames_interp, 2);
    ck_assert(u->known >> HOP_RBX & 1u);
    if (saved)
        ck_assert_uint_ne(u->value[HOP_RBX], 0x5eed);
    else
        ck_assert_uint_eq(u->value[HOP_RBX], 0x5eed);
    for (int k = 0; k < 2; k++) {
        const struct hop_walk *c = &walks.cached[k];
        ck_assert_int_eq(c->steps, 2);
        ck_assert_uint_eq(c->stats.frames_interp, 2);
        ck_assert_uint_eq(c->known, u->known);
        for (unsigned r = 0; r < CFISEM_NREGS; r++)
            if (u->known >> r & 1u)
                ck_assert_msg(c->value[r] == u->value[r],
                              "%s walk %d: register %u is %#llx, the "
                              "object's CFI says %#llx", saved ? "a.so" :
                              "b.so", k, r,
                              (unsigned long long)c->value[r],
                              (unsigned long long)u->value[r]);
    }
}

/* The interpreter's row cache after dlclose: another object at the
 * same place, with the same code at the same PCs but other CFI, must
 * not be unwound with the rows kept for the unloaded one. b.so is
 * walked found by _dl_find_object (loaded after cfisem_prepare), then
 * with an entry of its own (prepared again). */
START_TEST(test_unloaded_object_rows_not_used)
{
    char *dir = test_temp_dir();
    char source[4200], a[4200], b[4200];
    snprintf(source, sizeof source, "%s/hop.S", dir);
    snprintf(a, sizeof a, "%s/a.so", dir);
    snprintf(b, sizeof b, "%s/b.so", dir);
    ck_assert_int_eq(test_write_file(source, hop_source,
                                     strlen(hop_source)), 0);
    run_command("cc -shared -nostdlib -DSAVED -o '%s' '%s'", a, source);
    run_command("cc -shared -nostdlib -o '%s' '%s'", b, source);
    struct cfisem_options options = {.cache_dir = "/nonexistent",
                                     .system_dir = ""};
    void *base_a, *base_b = NULL;
    void *first = dlopen(a, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(first != NULL, "dlopen %s: %s", a, dlerror());
    ck_assert_int_eq(cfisem_prepare(&options), CFISEM_OK);
    walk_through_hop(first, true, &base_a);
    ck_assert_int_eq(dlclose(first), 0);
    /* The loader maps an object of the same size where the last one
     * was, the first hole large enough; tried a few times. */
    void *second = NULL;
    for (int k = 0; k < 8 && base_b != base_a; k++) {
        if (second)
            ck_assert_int_eq(dlclose(second), 0);
        second = dlopen(b, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(second != NULL, "dlopen %s: %s", b, dlerror());
        Dl_info info;
        ck_assert(dladdr(symbol(second, "hop"), &info));
        base_b = info.dli_fbase;
    }
    ck_assert_msg(base_a == base_b, "b.so at %p, not where a.so was (%p)",
                  base_b, base_a);
    walk_through_hop(second, false, &base_b);
    ck_assert_int_eq(cfisem_prepare(&options), CFISEM_OK);
    walk_through_hop(second, false, &base_b);
    ck_assert_int_eq(dlclose(second), 0);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

/* The objects loaded with the program stay and are not checked again
 * at every walk (runtime/startup.c): the program, libc and the dynamic
 * loader are among them; an object loaded with dlopen is not, nor a
 * library loaded with it as its dependency (libstdc++, unless the
 * program was loaded with it). */
static const struct link_map *map_of(void *handle)
{
    struct link_map *map = NULL;
    ck_assert_msg(handle != NULL, "dlopen: %s", dlerror());
    ck_assert_int_eq(dlinfo(handle, RTLD_DI_LINKMAP, &map), 0);
    return map;
}

static bool stays_listed(const void *map)
{
    static const void *maps[RT_MAX_STARTUP];
    size_t n = rt_startup_maps(maps, RT_MAX_STARTUP);
    for (size_t i = 0; i < n; i++)
        if (maps[i] == map)
            return true;
    return false;
}

START_TEST(test_objects_loaded_with_the_program_stay)
{
    const int noload = RTLD_NOW | RTLD_NOLOAD;
    ck_assert(stays_listed(map_of(dlopen(NULL, RTLD_NOW))));
    ck_assert(stays_listed(map_of(dlopen("libc.so.6", noload))));
    ck_assert(stays_listed(map_of(dlopen("ld-linux-x86-64.so.2", noload))));
    /* (the sanitizers' run-time library loads libstdc++ with the
     * program: then it stays) */
    bool with_program = dlopen("libstdc++.so.6", noload) != NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/libcfisem-cxx.so",
             getenv("CFISEM_WORKLOAD"));
    const struct link_map *opened =
        map_of(dlopen(path, RTLD_NOW | RTLD_LOCAL));
    const struct link_map *dependency =
        map_of(dlopen("libstdc++.so.6", noload));
    ck_assert(!stays_listed(opened));
    ck_assert(stays_listed(dependency) == with_program);
    ck_assert(stays_listed(map_of(dlopen("libc.so.6", noload))));
}
END_TEST

/* Regression (fallback_read_in_segment_hole): the interpreter fallback
 * bounded its reads of .eh_frame_hdr and .eh_frame by the object's
 * run-time range, which holds the PROT_NONE hole between segments
 * aligned to 2 MiB: an FDE address pointing there (a table entry of a
 * corrupt .eh_frame_hdr) made the step fault. It reads the segment of
 * .eh_frame_hdr only, and the step fails instead. The object: a real
 * library of the fuzzing seeds, whose segments lie 2 MiB apart. */
static const Elf64_Phdr *phdr_of(const char *image, unsigned type,
                                 unsigned nth)
{
    const Elf64_Ehdr *ehdr = (const Elf64_Ehdr *)image;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(image + ehdr->e_phoff);
    for (unsigned i = 0; i < ehdr->e_phnum; i++)
        if (ph[i].p_type == type && nth-- == 0)
            return &ph[i];
    return NULL;
}

static int read_nothing(void *data, uint64_t addr, unsigned size,
                        uint64_t *value)
{
    (void)data;
    (void)addr;
    (void)size;
    *value = 0;
    return 1;
}

START_TEST(test_fallback_fde_in_a_segment_hole)
{
    char *seed = test_src_path("fuzz/seeds/elf/real-libxshmfence.so");
    size_t len;
    char *image = test_read_file(seed, &len);
    ck_assert_ptr_nonnull(image);
    const Elf64_Phdr *hdr = phdr_of(image, PT_GNU_EH_FRAME, 0);
    const Elf64_Phdr *first = phdr_of(image, PT_LOAD, 0);
    const Elf64_Phdr *second = phdr_of(image, PT_LOAD, 1);
    ck_assert(hdr && first && second);
    uint64_t hole = (first->p_vaddr + first->p_memsz + 0x1fff) & ~0xfffu;
    ck_assert_msg(hole + 0x1000 <= (second->p_vaddr & ~0xfffu),
                  "no hole of a page between the segments");
    /* Every table entry's FDE in the hole. */
    uint32_t count, fde = (uint32_t)(int32_t)(hole - hdr->p_vaddr);
    memcpy(&count, image + hdr->p_offset + 8, 4);
    ck_assert_uint_gt(count, 0);
    ck_assert_uint_le(hdr->p_offset + 12 + 8 * (uint64_t)count, len);
    int32_t start;
    memcpy(&start, image + hdr->p_offset + 12, 4);
    for (uint32_t i = 0; i < count; i++)
        memcpy(image + hdr->p_offset + 12 + 8 * i + 4, &fde, 4);
    char *dir = test_temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/hole.so", dir);
    ck_assert_int_eq(test_write_file(path, image, len), 0);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "dlopen %s: %s", path, dlerror());
    struct link_map *map;
    ck_assert_int_eq(dlinfo(handle, RTLD_DI_LINKMAP, &map), 0);
    uint64_t regs[CFISEM_NREGS] = {0};
    regs[CFISEM_REG_RIP] = map->l_addr + hdr->p_vaddr + (int64_t)start;
    regs[CFISEM_REG_RSP] = 0x10000;
    uint32_t known = 1u << CFISEM_REG_RIP | 1u << CFISEM_REG_RSP;
    for (int engine = 0; engine < 2; engine++) {
        struct cfisem_cursor cursor;
        ck_assert_int_eq(cfisem_init_remote(&cursor, regs, known, 1,
                                            read_nothing, NULL),
                         CFISEM_OK);
        ck_assert_int_eq(cfisem_set_engine(&cursor,
                                           engine ? CFISEM_ENGINE_INTERP
                                                  : CFISEM_ENGINE_AUTO),
                         CFISEM_OK);
        ck_assert_int_eq(cfisem_step(&cursor), CFISEM_E_NO_CFI);
    }
    dlclose(handle);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
    free(image);
    free(seed);
}
END_TEST

/* The system folder is named by the prefix it was built for, and
 * `cfisem cache --system` writes there. */
START_TEST(test_system_eh_elf_dir)
{
    const char *dir = cfisem_system_eh_elf_dir();
    ck_assert_ptr_nonnull(dir);
    ck_assert_msg(dir[0] == '/' && strstr(dir, "/lib/") &&
                  strstr(dir, "/cfisem/eh_elf"), "%s", dir);
    /* cfisem cache --system fills it */
    char command[8192], out[8192];
    snprintf(command, sizeof command,
             "'%s' cache --system --path '%s/libcfisem-shapes-noeh.so'",
             getenv("CFISEM"), getenv("CFISEM_WORKLOAD"));
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t n = fread(out, 1, sizeof out - 1, pipe);
    out[n] = '\0';
    ck_assert_int_eq(pclose(pipe), 0);
    char expected[4200];
    snprintf(expected, sizeof expected, "-> %s/.build-id/", dir);
    ck_assert_msg(strstr(out, expected), "%s", out);
}
END_TEST

/* The system folder is searched by build-id, as the user's cache. */
START_TEST(test_system_folder_used)
{
    char *dir = test_temp_dir();
    char file[4096];
    filled_cache(dir, file, sizeof file);
    struct child_prepare how = {.cache = "/nonexistent", .system = dir};
    struct cfisem_stats stats = prepare_child(&how);
    ck_assert_uint_eq(stats.objects_eh_elf, 1);
    run_command("rm -rf '%s'%s", dir, "");
    free(dir);
}
END_TEST

START_TEST(test_arguments)
{
    struct cfisem_cursor cursor;
    struct cfisem_context context = {.known = 0};
    ck_assert_int_eq(cfisem_init_local(&cursor, &context), CFISEM_E_ARGUMENT);
    ck_assert_int_eq(cfisem_init_local(NULL, &context), CFISEM_E_ARGUMENT);
    cfisem_getcontext(&context);
    ck_assert_int_eq(cfisem_init_local(&cursor, &context), CFISEM_OK);
    uint64_t value;
    ck_assert_int_eq(cfisem_get_reg(&cursor, 17, &value), CFISEM_E_ARGUMENT);
    ck_assert_int_eq(cfisem_get_reg(&cursor, 0, &value), CFISEM_E_ARGUMENT);
    ck_assert_int_eq(cfisem_get_reg(&cursor, CFISEM_REG_RSP, &value),
                     CFISEM_OK);
    ck_assert_uint_eq(value, context.regs[CFISEM_REG_RSP]);
    ck_assert_int_eq(cfisem_backtrace(NULL, 4), 0);
    ck_assert_int_eq(cfisem_set_engine(&cursor, 7), CFISEM_E_ARGUMENT);
    ck_assert_str_eq(cfisem_strerror(CFISEM_E_MEMORY), "a memory read failed");
}
END_TEST

static Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *local = tcase_create("local");
    tcase_set_timeout(local, 60);
    tcase_add_test(local, test_prepare_finds_eh_elfs);
    tcase_add_loop_test(local, test_backtrace_equals_libgcc, 0, 3);
    tcase_add_loop_test(local, test_cursor_uses_eh_elf, 0, 3);
    tcase_add_loop_test(local, test_fallback_interp, 0, 3);
    tcase_add_loop_test(local, test_engine_interp, 0, 3);
    tcase_add_loop_test(local, test_engine_interp_row_cache, 0, 3);
    tcase_add_loop_test(local, test_frame_cache_gives_the_eh_elf_frame, 0, 5);
    tcase_add_test(local, test_frame_cache_threads);
    tcase_add_loop_test(local, test_frame_pointer_walk, 0, 3);
    tcase_add_test(local, test_qsort_callback);
    tcase_add_loop_test(local, test_cxx_through_libstdcxx, 0, 2);
    tcase_add_test(local, test_build_id_cache);
    suite_add_tcase(s, local);
    TCase *signals = tcase_create("signals");
    tcase_set_timeout(signals, 60);
    tcase_add_test(signals, test_signal_handler);
    tcase_add_test(signals, test_signal_at_function_entry);
    tcase_add_test(signals, test_sigprof_sampling);
    suite_add_tcase(s, signals);
    TCase *remote = tcase_create("remote");
    tcase_add_test(remote, test_remote_copy);
    suite_add_tcase(s, remote);
    TCase *corrupt = tcase_create("corrupt");
    tcase_add_test(corrupt, test_corrupt_unmapped_sp);
    tcase_add_test(corrupt, test_corrupt_guard_page);
    tcase_add_test(corrupt, test_corrupt_garbage);
    tcase_add_test(corrupt, test_arguments);
    tcase_add_test(corrupt, test_fallback_fde_in_a_segment_hole);
    suite_add_tcase(s, corrupt);
    TCase *trust = tcase_create("trust");
    tcase_set_timeout(trust, 120);
    tcase_add_test(trust, test_untrusted_eh_elf_refused);
    tcase_add_test(trust, test_secure_environment_ignores_cache_variables);
    tcase_add_test(trust, test_stale_eh_elf_refused);
    tcase_add_test(trust, test_eh_elf_of_object_without_build_id);
    tcase_add_test(trust, test_eh_elf_symbols_of_a_dependency_ignored);
    tcase_add_test(trust, test_unloaded_object_eh_elf_not_used);
    tcase_add_test(trust, test_unloaded_object_rows_not_used);
    tcase_add_test(trust, test_objects_loaded_with_the_program_stay);
    tcase_add_test(trust, test_system_eh_elf_dir);
    tcase_add_test(trust, test_system_folder_used);
    suite_add_tcase(s, trust);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--prepare-probe"))
        return prepare_probe();
    SRunner *runner = srunner_create(runtime_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
