/* SPDX-License-Identifier: MIT */
/* unwind_speed.c — per-frame time of each engine on the same random
 * (PC, state) pairs of one file (libc.so.6 by default), row lookup
 * included, in one run. Prints ns per frame and the ratio to libunwind's
 * unw_step with its global cache.
 *
 *   build/bench/unwind_speed [FILE] [PAIRS] [ROUNDS] [ENGINE-SUBSTRING]
 *
 * Not a test: numbers depend on the machine. Rounds alternate engines and
 * the best round of each is kept, which damps the noise of a shared
 * machine. The pairs are innermost frames (PC exact), so that libunwind's
 * remote cursor, which looks its first frame up at the exact PC, sees the
 * same question as the other engines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/stats.h"

#include "engines/oracle_libunwind.h"
#include "engines/engines.h"
#include "interp/interp.h"
#include "semantics/sem.h"

/* A register file is 1.2 KiB: the pairs share a small pool of states so
 * that the benchmark measures the engines, not the memory bandwidth. */
enum { STATE_POOL = 256 };

struct pair {
    const struct cfi_regs *callee;
    uint64_t pc;
};

struct engine {
    const char *name;
    enum cfi_status (*unwind)(void *env, const struct cfi_request *request,
                              struct cfi_frame *frame);
    void *env;
};

struct context {
    const struct cfi_file *file;
    struct sem_file_il *il;
    void *libunwind_cached;
    void *libunwind_uncached;
};

static enum cfi_status run_interp(void *env, const struct cfi_request *r,
                                  struct cfi_frame *f)
{
    return interp_unwind(((struct context *)env)->file, r, f);
}

static enum cfi_status run_il(void *env, const struct cfi_request *r,
                              struct cfi_frame *f)
{
    return sem_unwind(((struct context *)env)->il, r, f);
}

/* The harness's libunwind adapter: unw_init_remote + one unw_step. */
static enum cfi_status run_libunwind(void *libunwind,
                                     const struct cfi_request *r,
                                     struct cfi_frame *f)
{
    struct engine_answer answer;
    enum cfi_status status = engine_libunwind_answer(libunwind, r, &answer);
    *f = answer.frame;
    return status;
}

static enum cfi_status run_libunwind_cached(void *env,
                                            const struct cfi_request *r,
                                            struct cfi_frame *f)
{
    return run_libunwind(((struct context *)env)->libunwind_cached, r, f);
}

static enum cfi_status run_libunwind_uncached(void *env,
                                              const struct cfi_request *r,
                                              struct cfi_frame *f)
{
    return run_libunwind(((struct context *)env)->libunwind_uncached, r, f);
}

static void make_state(uint64_t r, struct cfi_regs *callee)
{
    cfi_regs_clear(callee);
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        cfi_regs_set(callee, reg, engine_mix(r + reg));
    uint64_t rsp = 0x7ffe00000000ull + (engine_mix(r ^ 7) & 0xffff0);
    cfi_regs_set(callee, CFI_REG_RSP, rsp);
    cfi_regs_set(callee, CFI_REG_RBP, rsp + 0x100);
}

/* Random PCs inside FDEs that translate, each with one of the states. The
 * callee's rip is not set: no rule of libc reads it but the PLT's, which
 * all engines read the same way. */
static struct pair *make_pairs(const struct context *c, size_t count,
                               const struct cfi_regs *states)
{
    struct pair *pairs = calloc(count, sizeof *pairs);
    size_t candidates = c->file->n_eh_frame;
    for (size_t i = 0, tries = 0; i < count && tries < count * 100; tries++) {
        uint64_t r = engine_mix(tries);
        size_t index = r % candidates;
        const struct cfi_fde *fde = &c->file->fdes[index];
        if (c->il->status[index] != CFI_OK || fde->pc_end == fde->pc_begin)
            continue;
        struct pair *p = &pairs[i++];
        p->pc = fde->pc_begin + (r >> 32) % (fde->pc_end - fde->pc_begin);
        p->callee = &states[engine_mix(r) % STATE_POOL];
    }
    return pairs;
}

/* ns per frame for one pass; counts the frames that unwound. */
static double time_engine(const struct engine *e, const struct pair *pairs,
                          size_t count, struct cfi_memory memory,
                          size_t *unwound)
{
    struct cfi_frame *frame = malloc(sizeof *frame);
    *unwound = 0;
    double start = bench_now_ns();
    for (size_t i = 0; i < count; i++) {
        struct cfi_request request = {pairs[i].pc, false, pairs[i].callee,
                                      memory, 0};
        *unwound += e->unwind(e->env, &request, frame) == CFI_OK;
    }
    double elapsed = bench_now_ns() - start;
    free(frame);
    return elapsed / (double)count;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";
    size_t count = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    struct context c = {0};
    struct cfi_file *file;
    struct cfi_diag diag;
    if (cfi_file_open(path, &file, &diag) != CFI_OK) {
        fprintf(stderr, "unwind_speed: %s: %s\n", path, diag.message);
        return 2;
    }
    c.file = file;
    double t0 = bench_now_ns();
    sem_file_il_build(file, &c.il);
    double prepare_ms = (bench_now_ns() - t0) / 1e6;
    if (engine_libunwind_open(file, &c.libunwind_cached, &diag) != CFI_OK ||
        engine_libunwind_open(file, &c.libunwind_uncached, &diag) != CFI_OK) {
        fprintf(stderr, "unwind_speed: %s: %s\n", path, diag.message);
        return 2;
    }
    engine_libunwind_set_caching(c.libunwind_uncached, false);
    struct engine engines[] = {
        {"libunwind unw_step (UNW_CACHE_GLOBAL)", run_libunwind_cached, &c},
        {"libunwind unw_step (UNW_CACHE_NONE)", run_libunwind_uncached, &c},
        {"interp (direct interpreter)", run_interp, &c},
        {"il (IL evaluator, prepared rows)", run_il, &c},
    };
    enum { NENGINES = sizeof engines / sizeof engines[0] };
    struct cfi_regs *states = calloc(STATE_POOL, sizeof *states);
    for (size_t i = 0; i < STATE_POOL; i++)
        make_state(engine_mix(i + 1000), &states[i]);
    struct pair *pairs = make_pairs(&c, count, states);
    struct engine_memory *memory = engine_memory_new(true, 42);
    engine_memory_map_file(memory, file);
    double best[NENGINES];
    size_t unwound[NENGINES];
    for (int e = 0; e < NENGINES; e++)
        best[e] = 1e300;
    const char *only = argc > 4 ? argv[4] : NULL;
    for (int round = 0; round < rounds; round++)
        for (int e = 0; e < NENGINES; e++) {
            if (only && !strstr(engines[e].name, only))
                continue;
            double ns = time_engine(&engines[e], pairs, count,
                                    engine_memory_reader(memory), &unwound[e]);
            if (ns < best[e])
                best[e] = ns;
        }
    printf("%s: %zu random (pc, state) pairs, best of %d rounds; IL prepared "
           "once in %.1f ms\n", path, count, rounds, prepare_ms);
    printf("%-40s %10s %10s %9s\n", "engine", "ns/frame", "vs cached", "unwound");
    for (int e = 0; e < NENGINES; e++)
        if (best[e] < 1e300)
            printf("%-40s %10.1f %9.2fx %9zu\n", engines[e].name, best[e],
                   best[0] / best[e], unwound[e]);
    free(pairs);
    free(states);
    engine_memory_free(memory);
    engine_libunwind_close(c.libunwind_cached);
    engine_libunwind_close(c.libunwind_uncached);
    sem_file_il_free(c.il);
    cfi_file_close(file);
    return 0;
}
