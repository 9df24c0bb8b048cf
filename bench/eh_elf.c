/* SPDX-License-Identifier: MIT */
/* eh_elf.c — the figures of compile/: how big an eh_elf is, how long it
 * takes to build, and how fast it unwinds.
 *
 *   build/bench/eh_elf [PAIRS] [ROUNDS]
 *
 *   1. sizes: eh_elf .text (and .rodata) over .eh_frame bytes, for
 *      libc.so.6, ld-linux-x86-64.so.2 and libstdc++.so.6, with each
 *      search layout (tree: the if/else search in code; table: sorted
 *      offsets as data, compile/table.c);
 *   2. the time to build libc's eh_elf with -j 1 and -j 2: wall time,
 *      and the compilers' CPU time, each layout;
 *   3. per-frame unwind time on the same random (PC, state) pairs of
 *      libc, row lookup included, every engine (and both layouts) in one
 *      run, as ratios to the compiled eh_elf. An engine is one line of
 *      `engines` in per_frame.
 *
 * Not a test: the numbers depend on the machine and on what else runs on
 * it. Timings are the best of ROUNDS (default 5) rounds, engines
 * alternating, which damps the noise of a shared machine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "compile/cg.h"
#include "engines/oracle_libunwind.h"
#include "engines/engines.h"
#include "interp/interp.h"
#include "semantics/sem.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU seconds of the children waited for so far. */
static double children_cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

static void die(const char *what, const struct cfi_diag *diag)
{
    fprintf(stderr, "eh_elf bench: %s: %s\n", what,
            diag && diag->message ? diag->message : "failed");
    exit(1);
}

struct subject {
    char path[256];
    enum cg_search_kind kind;
    struct cfi_file *file;
    struct sem_file_il *il;
    struct cg_program *program;
    double generate_seconds;
};

static void open_subject(struct subject *s, const char *name,
                         enum cg_search_kind kind)
{
    s->kind = kind;
    struct cfi_diag diag;
    snprintf(s->path, sizeof s->path, "/lib/x86_64-linux-gnu/%s", name);
    if (access(s->path, R_OK) != 0)
        snprintf(s->path, sizeof s->path, "/usr/lib/x86_64-linux-gnu/%s", name);
    if (cfi_file_open(s->path, &s->file, &diag) != CFI_OK)
        die(s->path, &diag);
    double start = now();
    if (sem_file_il_build(s->file, &s->il) != CFI_OK ||
        cg_generate_search(s->il, CG_ABI_FULL, kind, &s->program, &diag) !=
            CFI_OK)
        die(s->path, &diag);
    s->generate_seconds = now() - start;
}

static void close_subject(struct subject *s)
{
    cg_program_free(s->program);
    sem_file_il_free(s->il);
    cfi_file_close(s->file);
}

/* Builds with `jobs` compilers; wall and CPU seconds. */
static void build(const struct subject *s, const char *output, unsigned jobs,
                  double *wall, double *cpu)
{
    struct cg_build_options options = {NULL, jobs, true};
    struct cg_build_report report;
    struct cfi_diag diag;
    double cpu_before = children_cpu();
    if (cg_build(s->program, output, &options, &report, &diag) != CFI_OK)
        die(output, &diag);
    *wall = report.seconds;
    *cpu = children_cpu() - cpu_before;
}

/* ------------------------------------------------------------------ */
/* 1 and 2: sizes and build times                                       */
/* ------------------------------------------------------------------ */

static void sizes(const char *dir)
{
    static const char *const names[] = {"libc.so.6", "ld-linux-x86-64.so.2",
                                        "libstdc++.so.6"};
    printf("== sizes (full ABI; ratio: .text / .eh_frame, all: (.text + "
           ".rodata) / .eh_frame)\n%-22s %-6s %10s %10s %8s %7s %6s %7s %8s\n",
           "file", "layout", ".eh_frame", ".text", ".rodata", "ratio", "all",
           "gen s", "build s");
    for (size_t k = 0; k < 2 * sizeof names / sizeof names[0]; k++) {
        size_t i = k / 2;
        enum cg_search_kind kind = k % 2 ? CG_SEARCH_TABLE : CG_SEARCH_TREE;
        struct subject s = {0};
        open_subject(&s, names[i], kind);
        char output[512];
        snprintf(output, sizeof output, "%s/%s.%s.eh_elf.so", dir, names[i],
                 cg_search_kind_name(kind));
        double wall, cpu;
        build(&s, output, 0, &wall, &cpu);
        struct cg_sizes z;
        struct cfi_diag diag;
        if (cg_section_sizes(output, &z, &diag) != CFI_OK)
            die(output, &diag);
        printf("%-22s %-6s %10" PRIu64 " %10" PRIu64 " %8" PRIu64
               " %6.2fx %5.2fx %7.2f %8.2f\n", names[i],
               cg_search_kind_name(kind), s.file->eh_frame_size, z.text,
               z.rodata, (double)z.text / (double)s.file->eh_frame_size,
               (double)(z.text + z.rodata) / (double)s.file->eh_frame_size,
               s.generate_seconds, wall);
        printf("%-22s leaves %zu, rows %zu, rule sets %zu, nodes %zu, "
               "parts %zu\n", "", s.program->stats.leaves, s.program->stats.rows,
               s.program->stats.rulesets, s.program->stats.nodes,
               s.program->stats.parts);
        unlink(output);
        close_subject(&s);
    }
}

static void build_times(const char *dir, enum cg_search_kind kind)
{
    struct subject s = {0};
    open_subject(&s, "libc.so.6", kind);
    char output[512];
    snprintf(output, sizeof output, "%s/libc.eh_elf.so", dir);
    printf("\n== building libc's eh_elf, %s layout (%zu units; generation "
           "%.2f s)\n", cg_search_kind_name(kind), s.program->nunits,
           s.generate_seconds);
    for (unsigned jobs = 1; jobs <= 2; jobs++) {
        double wall, cpu;
        build(&s, output, jobs, &wall, &cpu);
        printf("-j %u: %6.2f s wall, %6.2f s CPU in the compilers\n", jobs,
               wall, cpu);
    }
    unlink(output);
    close_subject(&s);
}

/* ------------------------------------------------------------------ */
/* 3: per-frame time                                                    */
/* ------------------------------------------------------------------ */

/* Register files are large: the pairs share a pool of states. */
enum { STATE_POOL = 256 };

struct engines_env {
    const struct cfi_file *file;
    const struct sem_file_il *il;
    const struct cg_eh_elf *eh;
    const struct cg_eh_elf *eh_table; /* the same, table layout */
    void *libunwind;
    /* the state pool, and the same states in eh_elf.h's form */
    const struct cfi_regs *states;
    const struct eh_elf_regs *eh_states;
};

struct engine {
    const char *name;
    enum cfi_status (*unwind)(const struct engines_env *env,
                              const struct cfi_request *request,
                              struct cfi_frame *frame);
};

static enum cfi_status run_compiled(const struct engines_env *env,
                                    const struct cfi_request *request,
                                    struct cfi_frame *frame)
{
    return cg_unwind(env->eh, request, frame);
}

/* The eh_elf called through its own ABI, as a native unwinder would: no
 * cfi_frame, the callee's registers already in eh_elf.h's form. */
static int read_memory(void *data, uint64_t addr, unsigned size,
                       uint64_t *value)
{
    const struct cfi_memory *memory = data;
    return memory->read(memory->env, addr, size, value) != CFI_OK;
}

static enum cfi_status eh_elf_direct(const struct cg_eh_elf *eh,
                                     const struct engines_env *env,
                                     const struct cfi_request *request,
                                     struct cfi_frame *frame)
{
    struct eh_elf_env eh_env = {read_memory, NULL, (void *)&request->memory,
                                0, 0};
    struct eh_elf_frame out;
    int error = cg_eh_elf_entry(eh)(
        request->pc, &env->eh_states[request->callee - env->states], &eh_env,
        &out);
    frame->status = (enum cfi_status)error;
    return frame->status;
}

static enum cfi_status run_eh_elf(const struct engines_env *env,
                                  const struct cfi_request *request,
                                  struct cfi_frame *frame)
{
    return eh_elf_direct(env->eh, env, request, frame);
}

static enum cfi_status run_eh_elf_table(const struct engines_env *env,
                                        const struct cfi_request *request,
                                        struct cfi_frame *frame)
{
    return eh_elf_direct(env->eh_table, env, request, frame);
}

static enum cfi_status run_compiled_table(const struct engines_env *env,
                                          const struct cfi_request *request,
                                          struct cfi_frame *frame)
{
    return cg_unwind(env->eh_table, request, frame);
}

static enum cfi_status run_il(const struct engines_env *env,
                              const struct cfi_request *request,
                              struct cfi_frame *frame)
{
    return sem_unwind(env->il, request, frame);
}

static enum cfi_status run_interp(const struct engines_env *env,
                                  const struct cfi_request *request,
                                  struct cfi_frame *frame)
{
    return interp_unwind(env->file, request, frame);
}

static enum cfi_status run_libunwind(const struct engines_env *env,
                                     const struct cfi_request *request,
                                     struct cfi_frame *frame)
{
    struct engine_answer answer;
    enum cfi_status status = engine_libunwind_answer(env->libunwind, request,
                                                     &answer);
    *frame = answer.frame;
    return status;
}

struct pair {
    uint64_t pc;
    const struct cfi_regs *callee;
};

/* Random innermost PCs inside FDEs that translate, each with a state. */
static struct pair *make_pairs(const struct sem_file_il *il, size_t count,
                               const struct cfi_regs *states)
{
    const struct cfi_file *file = il->file;
    struct pair *pairs = calloc(count, sizeof *pairs);
    for (size_t i = 0, tries = 0; pairs && i < count && tries < 100 * count;
         tries++) {
        uint64_t r = engine_mix(tries);
        size_t index = r % file->n_eh_frame;
        const struct cfi_fde *fde = &file->fdes[index];
        if (il->status[index] != CFI_OK || fde->pc_end == fde->pc_begin)
            continue;
        pairs[i].pc = fde->pc_begin + (r >> 32) % (fde->pc_end - fde->pc_begin);
        pairs[i++].callee = &states[engine_mix(r) % STATE_POOL];
    }
    return pairs;
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

/* ns per frame of one pass; *unwound counts the frames that unwound. */
static double time_engine(const struct engine *engine,
                          const struct engines_env *env,
                          const struct pair *pairs, size_t count,
                          struct cfi_memory memory, size_t *unwound)
{
    struct cfi_frame *frame = malloc(sizeof *frame);
    *unwound = 0;
    double start = now();
    for (size_t i = 0; i < count; i++) {
        struct cfi_request request = {pairs[i].pc, false, pairs[i].callee,
                                      memory, 0};
        *unwound += engine->unwind(env, &request, frame) == CFI_OK;
    }
    double seconds = now() - start;
    free(frame);
    return seconds * 1e9 / (double)count;
}

/* Times every engine, `rounds` times in turn, and prints the best. */
static void time_all(const struct engine *engines, size_t n,
                     const struct engines_env *env, const struct pair *pairs,
                     size_t count, struct cfi_memory memory, int rounds)
{
    double *best = calloc(n, sizeof *best);
    size_t *unwound = calloc(n, sizeof *unwound);
    for (size_t e = 0; e < n; e++)
        best[e] = 1e300;
    for (int round = 0; round < rounds; round++)
        for (size_t e = 0; e < n; e++) {
            double ns = time_engine(&engines[e], env, pairs, count, memory,
                                    &unwound[e]);
            if (ns < best[e])
                best[e] = ns;
        }
    printf("%-40s %10s %12s %9s\n", "engine", "ns/frame", "/ compiled",
           "unwound");
    for (size_t e = 0; e < n; e++)
        printf("%-40s %10.1f %11.1fx %9zu\n", engines[e].name, best[e],
               best[e] / best[0], unwound[e]);
    free(best);
    free(unwound);
}

static struct cg_eh_elf *build_and_load(const char *dir, const char *name,
                                        enum cg_search_kind kind)
{
    struct subject s = {0};
    open_subject(&s, name, kind);
    char output[512];
    snprintf(output, sizeof output, "%s/%s.%s.eh_elf.so", dir, name,
             cg_search_kind_name(kind));
    double wall, cpu;
    build(&s, output, 0, &wall, &cpu);
    struct cfi_diag diag;
    struct cg_eh_elf *eh;
    if (cg_load(output, &eh, &diag) != CFI_OK)
        die(output, &diag);
    unlink(output);
    close_subject(&s);
    return eh;
}

static void per_frame(const char *dir, size_t count, int rounds)
{
    struct subject s = {0};
    open_subject(&s, "libc.so.6", CG_SEARCH_TREE);
    struct cfi_diag diag;
    struct engines_env env = {s.file, s.il, NULL, NULL, NULL, NULL, NULL};
    struct cg_eh_elf *eh = build_and_load(dir, "libc.so.6", CG_SEARCH_TREE);
    struct cg_eh_elf *eh_table = build_and_load(dir, "libc.so.6",
                                                CG_SEARCH_TABLE);
    env.eh = eh;
    env.eh_table = eh_table;
    if (engine_libunwind_open(s.file, &env.libunwind, &diag) != CFI_OK)
        die("libunwind", &diag);
    const struct engine engines[] = {
        {"compiled (eh_elf, cg_unwind)", run_compiled},
        {"eh_elf_unwind (eh_elf.h, no cfi_frame)", run_eh_elf},
        {"compiled, table layout (cg_unwind)", run_compiled_table},
        {"eh_elf_unwind, table layout", run_eh_elf_table},
        {"il (IL evaluator, prepared rows)", run_il},
        {"interp (direct interpreter)", run_interp},
        {"libunwind unw_step (UNW_CACHE_GLOBAL)", run_libunwind},
    };
    enum { NENGINES = sizeof engines / sizeof engines[0] };
    struct cfi_regs *states = calloc(STATE_POOL, sizeof *states);
    struct eh_elf_regs *eh_states = calloc(STATE_POOL, sizeof *eh_states);
    for (size_t i = 0; i < STATE_POOL; i++) {
        make_state(engine_mix(i + 1000), &states[i]);
        for (unsigned reg = 0; reg < EH_ELF_NREGS; reg++)
            eh_states[i].value[reg] = states[i].value[reg];
        eh_states[i].known = (1u << EH_ELF_NREGS) - 1;
    }
    env.states = states;
    env.eh_states = eh_states;
    struct pair *pairs = make_pairs(s.il, count, states);
    struct engine_memory *memory = engine_memory_new(true, 42);
    engine_memory_map_file(memory, s.file);
    printf("\n== per frame: libc.so.6, %zu random (pc, state) pairs, best of "
           "%d rounds\n", count, rounds);
    time_all(engines, NENGINES, &env, pairs, count,
             engine_memory_reader(memory), rounds);
    engine_memory_free(memory);
    free(pairs);
    free(states);
    free(eh_states);
    engine_libunwind_close(env.libunwind);
    cg_unload(eh);
    cg_unload(eh_table);
    close_subject(&s);
}

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (count == 0 || rounds <= 0) {
        fprintf(stderr, "usage: eh_elf [PAIRS] [ROUNDS]\n");
        return 1;
    }
    char dir[] = "/tmp/cfisem-bench-eh_elf-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "eh_elf bench: cannot make a temporary folder\n");
        return 1;
    }
    sizes(dir);
    build_times(dir, CG_SEARCH_TREE);
    build_times(dir, CG_SEARCH_TABLE);
    per_frame(dir, count, rounds);
    rmdir(dir);
    return 0;
}
