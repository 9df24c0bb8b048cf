/* SPDX-License-Identifier: MIT */
/* layouts.c — the two layouts of an eh_elf on the same real stacks, in
 * one run: cfisem_backtrace through tree-layout eh_elfs (cfisem compile
 * --layout tree) and through table-layout ones (--layout table), beside
 * libunwind's unw_backtrace, as ns per frame and ratios.
 *
 *   build/bench/layouts [ROUNDS]
 *
 * The run-time library keeps one eh_elf per object, chosen once by
 * cfisem_prepare; so this program loads two private copies of
 * libcfisem-unwind.so ($CFISEM_BUILD, else build/), each with its own
 * object table: one prepared with the eh_elfs NAME.full.eh_elf.so, the
 * other with NAME.table.eh_elf.so, both from $CFISEM_EH_ELF (else
 * build/eh_elf), where make's layouts-eh-elfs puts those of the system
 * libraries, of the workloads, of this program and of the library
 * (whose cfisem_backtrace frame is the first a walk unwinds). The workloads
 * ($CFISEM_WORKLOAD, else build/workload) are loaded through symbolic
 * links in a temporary folder, and no eh_elf sits beside this program,
 * so that no eh_elf is found beside an object (the library looks there
 * first); the build-id cache is pointed at a folder that does not exist.
 *
 * The stacks are real_stacks.c's, without the Csmith ones: recursion
 * 10, 100 and 1,000 deep through five frame shapes, the same under
 * qsort_r's callback inside libc, a C++ chain through libstdc++'s
 * ostream, and the frame-pointer build 10, 100 and 1,000 deep. At the
 * top of each stack, every round times each method in turn (about 2 ms
 * each, the order of the two layouts alternating from round to round);
 * both layouts must name the same frames, and unw_backtrace too (the run
 * fails otherwise), and no frame may go to the interpreter (every object
 * on the stacks has its eh_elfs: the run fails otherwise). The figures
 * are the median and the best of ROUNDS (default 21) rounds; on a
 * loaded machine the ratios of one run are what to read.
 *
 * Not a test: the numbers depend on the machine and its load. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/stats.h"
#include "bench/workload/workload.h"
#include "runtime/cfisem-unwind.h"

enum { MAX_PCS = 2048, MAX_ROUNDS = BENCH_MAX_ROUNDS, SKIP = 4 };

typedef long recurse_fn(int depth, workload_leaf_fn *leaf, void *arg);
typedef int backtrace_fn(void **pcs, int max);
typedef int prepare_fn(const struct cfisem_options *options);
typedef void stats_fn(struct cfisem_stats *stats);

/* One private copy of the run-time library. */
struct runtime {
    const char *layout;
    backtrace_fn *backtrace;
    stats_fn *stats;
};

enum { TREE, TABLE, UNW, NMETHODS };
static struct runtime runtimes[2] = {{"tree", NULL, NULL},
                                     {"table", NULL, NULL}};

static int m_tree(void **pcs, int max)
{
    return runtimes[TREE].backtrace(pcs, max);
}

static int m_table(void **pcs, int max)
{
    return runtimes[TABLE].backtrace(pcs, max);
}

static int m_unw_backtrace(void **pcs, int max)
{
    return unw_backtrace(pcs, max);
}

typedef int method_fn(void **pcs, int max);

static const struct {
    const char *name;
    method_fn *run;
} methods[NMETHODS] = {
    {"cfisem_backtrace, tree layout", m_tree},
    {"cfisem_backtrace, table layout", m_table},
    {"libunwind unw_backtrace", m_unw_backtrace},
};

/* ------------------------------------------------------------------ */
/* Timing at the top of a stack                                          */
/* ------------------------------------------------------------------ */

struct stack {
    const char *name;
    recurse_fn *recurse;
    int depth;
    void *pcs[NMETHODS][MAX_PCS];
    int n[NMETHODS];
    double ns[NMETHODS][MAX_ROUNDS]; /* ns per frame, per round */
    int rounds;
};

static void time_method(struct stack *s, int m, int round)
{
    s->n[m] = methods[m].run(s->pcs[m], MAX_PCS);
    int frames = s->n[m] > 0 ? s->n[m] : 1;
    void *scratch[MAX_PCS];
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
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
    for (int round = 0; round < s->rounds; round++) {
        int first = round % 2 ? TABLE : TREE;
        time_method(s, first, round);
        time_method(s, first == TREE ? TABLE : TREE, round);
        time_method(s, UNW, round);
    }
}

/* ------------------------------------------------------------------ */
/* Report                                                                */
/* ------------------------------------------------------------------ */

/* Method m names the tree layout's frames, after skipping at most SKIP
 * entries of each (the methods' own functions). */
static bool same_frames(const struct stack *s, int m)
{
    void *const *ref = s->pcs[TREE];
    int nref = s->n[TREE];
    for (int i = 0; i <= SKIP && i < nref; i++)
        for (int j = 0; j <= SKIP && j < s->n[m]; j++)
            if (nref - i >= s->depth && nref - i == s->n[m] - j &&
                !memcmp(ref + i, s->pcs[m] + j,
                        (size_t)(nref - i) * sizeof *ref))
                return true;
    return false;
}

static bool report(const struct stack *s)
{
    bool ok = true;
    double base = bench_median(s->ns[TREE], s->rounds);
    double base_best = bench_best(s->ns[TREE], s->rounds);
    printf("\n%s (%d frames)\n", s->name, s->n[TREE]);
    printf("  %-32s %10s %8s %9s %8s %7s\n", "method", "median ns", "vs tree",
           "best ns", "vs tree", "frames");
    for (int m = 0; m < NMETHODS; m++) {
        bool same = m == TREE || same_frames(s, m);
        ok = ok && same;
        double ns = bench_median(s->ns[m], s->rounds);
        double b = bench_best(s->ns[m], s->rounds);
        printf("  %-32s %10.2f %7.2fx %9.2f %7.2fx %7d%s\n", methods[m].name,
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
        fprintf(stderr, "layouts: %s: %s\n", what, dlerror());
        exit(2);
    }
    return p;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *value = getenv(name);
    return value && *value ? value : fallback;
}

/* Copies `from` to `to`: a file of its own (the loader would take a
 * hard or symbolic link for the object it already loaded). */
static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    FILE *out = in ? fopen(to, "wb") : NULL;
    if (!in || !out) {
        fprintf(stderr, "layouts: cannot copy %s to %s\n", from, to);
        exit(2);
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            fprintf(stderr, "layouts: cannot write %s\n", to);
            exit(2);
        }
    fclose(in);
    if (fclose(out) != 0) {
        fprintf(stderr, "layouts: cannot write %s\n", to);
        exit(2);
    }
}

static void load_runtime(struct runtime *rt, const char *tmp)
{
    char from[PATH_MAX], to[PATH_MAX];
    snprintf(from, sizeof from, "%s/libcfisem-unwind.so",
             env_or("CFISEM_BUILD", "build"));
    snprintf(to, sizeof to, "%s/%s", tmp, rt->layout);
    if (mkdir(to, 0700) != 0) {
        fprintf(stderr, "layouts: cannot create %s\n", to);
        exit(2);
    }
    snprintf(to, sizeof to, "%s/%s/libcfisem-unwind.so", tmp, rt->layout);
    copy_file(from, to);
    void *handle = must(dlopen(to, RTLD_NOW | RTLD_LOCAL), to);
    void *p = must(dlsym(handle, "cfisem_backtrace"), "cfisem_backtrace");
    memcpy(&rt->backtrace, &p, sizeof p);
    p = must(dlsym(handle, "cfisem_stats"), "cfisem_stats");
    memcpy(&rt->stats, &p, sizeof p);
}

static void prepare_runtime(const struct runtime *rt, const char *tmp)
{
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/no-cache", tmp);
    struct cfisem_options options = {
        .cache_dir = missing,
        .name_dir = env_or("CFISEM_EH_ELF", "build/eh_elf"),
        .name_flavour = rt == &runtimes[TREE] ? "full" : "table"};
    /* The copy's own cfisem_prepare, found in its handle. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/libcfisem-unwind.so", tmp, rt->layout);
    void *handle = must(dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD),
                        path);
    void *p = must(dlsym(handle, "cfisem_prepare"), "cfisem_prepare");
    prepare_fn *prepare;
    memcpy(&prepare, &p, sizeof p);
    if (prepare(&options) != CFISEM_OK) {
        fprintf(stderr, "layouts: cfisem_prepare failed\n");
        exit(2);
    }
    dlclose(handle); /* the reference NOLOAD took */
}

static void *workload_symbol(const char *tmp, const char *lib_name,
                             const char *symbol)
{
    char target[PATH_MAX], link[PATH_MAX];
    const char *dir = env_or("CFISEM_WORKLOAD", "build/workload");
    if (!realpath(dir, target)) {
        fprintf(stderr, "layouts: %s: no such folder\n", dir);
        exit(2);
    }
    size_t len = strlen(target);
    snprintf(target + len, sizeof target - len, "/%s", lib_name);
    snprintf(link, sizeof link, "%s/%s", tmp, lib_name);
    if (access(link, F_OK) != 0 && symlink(target, link) != 0) {
        fprintf(stderr, "layouts: cannot link %s\n", link);
        exit(2);
    }
    void *handle = must(dlopen(link, RTLD_NOW | RTLD_LOCAL), link);
    return must(dlsym(handle, symbol), symbol);
}

static recurse_fn *workload(const char *tmp, const char *lib_name,
                            const char *symbol)
{
    void *p = workload_symbol(tmp, lib_name, symbol);
    recurse_fn *fn;
    memcpy(&fn, &p, sizeof p);
    return fn;
}

static void remove_tmp(const char *tmp)
{
    const char *names[] = {"tree/libcfisem-unwind.so",
                           "table/libcfisem-unwind.so", "tree", "table",
                           "libcfisem-shapes.so", "libcfisem-shapes-fp.so",
                           "libcfisem-cxx.so"};
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
        remove(path);
    }
    rmdir(tmp);
}

/* Every frame of both walks went through an eh_elf. */
static bool all_eh_elf(void)
{
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        struct cfisem_stats st;
        runtimes[i].stats(&st);
        printf("%s layout: %llu objects, %llu with an eh_elf; interpreter "
               "frames %llu, failed steps %llu\n", runtimes[i].layout,
               (unsigned long long)st.objects,
               (unsigned long long)st.objects_eh_elf,
               (unsigned long long)st.frames_interp,
               (unsigned long long)st.frames_failed);
        ok = ok && st.frames_interp == 0 && st.frames_failed == 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 21;
    char tmp[] = "/tmp/cfisem-layouts-XXXXXX";
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "layouts: cannot create a temporary folder\n");
        return 2;
    }
    recurse_fn *mixed = workload(tmp, "libcfisem-shapes.so", "workload_recurse");
    recurse_fn *mixed_qsort =
        workload(tmp, "libcfisem-shapes.so", "workload_qsort");
    recurse_fn *fp = workload(tmp, "libcfisem-shapes-fp.so", "workload_recurse");
    recurse_fn *cxx = workload(tmp, "libcfisem-cxx.so", "workload_cxx");
    load_runtime(&runtimes[TREE], tmp);
    load_runtime(&runtimes[TABLE], tmp);
    prepare_runtime(&runtimes[TREE], tmp);
    prepare_runtime(&runtimes[TABLE], tmp);
    printf("layouts: median and best of %d rounds; eh_elfs from %s\n", rounds,
           env_or("CFISEM_EH_ELF", "build/eh_elf"));
    const struct {
        const char *name;
        recurse_fn *recurse;
        int depth;
    } stacks[] = {
        {"recursion 10, mixed shapes", mixed, 10},
        {"recursion 100, mixed shapes", mixed, 100},
        {"recursion 1000, mixed shapes", mixed, 1000},
        {"qsort_r callback under recursion 10", mixed_qsort, 10},
        {"C++ chain 10 deep through libstdc++'s ostream", cxx, 10},
        {"recursion 10, frame pointers", fp, 10},
        {"recursion 100, frame pointers", fp, 100},
        {"recursion 1000, frame pointers", fp, 1000},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++) {
        struct stack *s = calloc(1, sizeof *s);
        if (!s)
            return 2;
        s->name = stacks[i].name;
        s->recurse = stacks[i].recurse;
        s->depth = stacks[i].depth;
        s->rounds = rounds;
        s->recurse(s->depth, leaf, s);
        ok = report(s) && ok;
        free(s);
    }
    printf("\n");
    ok = all_eh_elf() && ok;
    remove_tmp(tmp);
    if (!ok)
        fprintf(stderr, "layouts: a method named other frames, or a frame "
                        "had no eh_elf\n");
    return ok ? 0 : 1;
}
