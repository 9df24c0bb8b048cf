/* SPDX-License-Identifier: MIT */
/* campaign.c — robust: mutants of seed files and odd inputs through every
 * cfisem command, each run classified; failures kept with their command
 * line. See robust/README.md. */
#define _XOPEN_SOURCE 700  /* nftw */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include "robust.h"

extern char **environ;

enum { MAX_SEEDS = 256, PATH_MAX_LEN = 1024, KEEP_PER_CLASS = 1000,
       MAX_SIGNATURES = 256, KEEP_PER_SIGNATURE = 3, SIGNATURE_LEN = 96,
       ARG_TEXT = 4096 };

struct options {
    const char *cfisem;
    const char *walker;     /* robust-walk: the run-time library's walks */
    const char *eh_elf_dir; /* the seeds' eh_elfs, NAME.full.eh_elf.so */
    const char *out;        /* work folder: mutants, failures */
    uint64_t runs, seed;
    unsigned jobs;
    double timeout;
    unsigned compile_share; /* 1 in N mutants: compile + validate */
    unsigned memory_mb;     /* ASan's hard_rss_limit_mb, malloc_limit_mb */
    bool odd, usage, stats, quiet;
    const char *seeds[MAX_SEEDS];
    unsigned nseeds;
    /* --mutate SEEDFILE --index I [--kind K] -o OUT */
    const char *mutate, *mutate_out, *kind;
    bool list_kinds;
    const char *skip_odd[8];
    unsigned nskip_odd;
    uint64_t index;
};

/* What a seed is, and so which commands its mutants go through. */
enum seed_type {
    SEED_ELF,       /* il, unwind, diff, compile, validate */
    SEED_PERF,      /* a perf.data: cfisem perf, file and pipe mode */
    SEED_CORE,      /* an ELF core: cfisem stack --core CORE [EXE] */
    SEED_DEBUG,     /* a separate debug file: the ELF commands on the
                       stripped file it belongs to, with --debug-dir */
};

/* One seed file, read once. */
struct seed {
    const char *path;
    uint8_t *bytes;
    size_t size;
    enum seed_type type;
    char *exe;          /* SEED_CORE: CORE without ".core", when there */
    char *debug_dir;    /* SEED_ELF: FILE.d, its --debug-dir, when there */
    char *stripped;     /* SEED_DEBUG: the stripped file */
    char *rel;          /* SEED_DEBUG: its path under the --debug-dir */
};

/* The eh_elf paths of a mutant, one a compiled mutant (in turn). */
enum eh_elf_path { PATH_TREE, PATH_TABLE, PATH_V1, PATH_CACHE, NPATHS };

/* A mutant on disk, shared by the runs made of it. */
struct mutant {
    char path[PATH_MAX_LEN];
    char file[PATH_MAX_LEN];    /* what the commands name: path, or the
                                   stripped file of a debug file */
    char debug_dir[PATH_MAX_LEN];   /* --debug-dir, or "" */
    char tree[PATH_MAX_LEN];    /* a folder of its own, removed with it */
    const struct seed *seed;
    char eh_elf[PATH_MAX_LEN];
    char cache[PATH_MAX_LEN];   /* cfisem cache's folder, or "" */
    char walk[PATH_MAX_LEN];    /* its seed with its frame sections, or "" */
    enum eh_elf_path eh_elf_path;
    const char *seed_path;
    uint64_t index;
    enum rb_kind kind;
    uint64_t pc;            /* where its unwind runs ask */
    unsigned refs;
    bool owned;             /* unlinked when the last run ends */
};

/* One queued or running command, its argv text its own. */
struct job {
    struct rb_command cmd;
    char text[ARG_TEXT];
    size_t used;
    struct mutant *mutant;  /* NULL for fixed inputs */
    bool then_validate;
    bool retried;           /* timed out once: run again */
    char json[PATH_MAX_LEN];  /* its --json report, or "" */
    struct job *next;
};

struct tally {
    uint64_t runs;
    uint64_t by_class[RB_NCLASSES];
    uint64_t kept[RB_NCLASSES];
    /* failures by class, subcommand and the first frame of a report */
    struct signature {
        enum rb_class cls;
        char text[SIGNATURE_LEN];
        uint64_t runs;
    } signatures[MAX_SIGNATURES];
    unsigned nsignatures;
    uint64_t kind_mutants[RB_NKINDS], kind_changed[RB_NKINDS];
    uint64_t mutants;
    uint64_t noisy, noisy_kept;  /* clean errors of more than one line */
    uint64_t retried;       /* timed out once, run again (counted once) */
};

struct campaign {
    struct options opt;
    struct seed seeds[MAX_SEEDS];
    unsigned nseeds;
    struct rb_pool *pool;
    struct job *queue, *queue_tail;
    struct tally tally;
    char cache[PATH_MAX_LEN];
    char env_cache[PATH_MAX_LEN + 32];
    char env_asan[1024];
    char *envp[512];
    double start, last_progress;
    uint64_t next_mutant;
    uint64_t next_report;   /* names the --json reports */
};

/* ---- jobs ------------------------------------------------------------- */

static void job_arg(struct job *j, const char *arg)
{
    size_t n = strlen(arg) + 1;
    if (j->cmd.argc >= RB_MAX_ARGS || j->used + n > ARG_TEXT)
        return;
    memcpy(j->text + j->used, arg, n);
    j->cmd.argv[j->cmd.argc++] = j->text + j->used;
    j->cmd.argv[j->cmd.argc] = NULL;
    j->used += n;
}

/* A copy of text in the job's own storage (not an argument), or NULL
 * when it has no room: what the job names must outlive its planner. */
static const char *job_text(struct job *j, const char *text)
{
    size_t n = strlen(text) + 1;
    if (j->used + n > ARG_TEXT)
        return NULL;
    memcpy(j->text + j->used, text, n);
    j->used += n;
    return j->text + j->used - n;
}

static void job_argf(struct job *j, const char *fmt, uint64_t v)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    job_arg(j, buf);
}

/* The documented statuses of a well-formed command line (the help texts). */
static unsigned allowed_statuses(const char *sub)
{
    if (!strcmp(sub, "unwind"))
        return 0x1d; /* 0, 2, 3, 4 (an engine crashed or hung, isolated) */
    if (!strcmp(sub, "il"))
        return 0xd;  /* 0, 2, 3 */
    if (!strcmp(sub, "diff") || !strcmp(sub, "validate"))
        return 0x7;  /* 0, 1 (differences found), 2 */
    if (!strcmp(sub, "stack"))
        return 0x7;  /* 0, 1 (own engines differ: rb_classify), 2 */
    return 0x5;      /* compile, gen, perf: 0, 2 */
}

static struct job *job_new_tool(const char *tool, const char *sub,
                                struct mutant *m)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    job_arg(j, tool);
    if (sub)
        job_arg(j, sub);
    j->cmd.subcommand = sub ? j->cmd.argv[1] : "cfisem";
    j->cmd.allowed = sub ? allowed_statuses(sub) : 0x1;
    j->mutant = m;
    if (m)
        m->refs++;
    return j;
}

static struct job *job_new(struct campaign *c, const char *sub,
                           struct mutant *m)
{
    return job_new_tool(c->opt.cfisem, sub, m);
}

/* --json OUT/work/rN.json, read by the classifier (rb_classify_report). */
static void job_json(struct campaign *c, struct job *j)
{
    snprintf(j->json, sizeof j->json, "%s/work/r%" PRIu64 ".json",
             c->opt.out, c->next_report++);
    job_arg(j, "--json");
    job_arg(j, j->json);
    j->cmd.json = j->json;
}

/* --debug-dir of a mutant that has one (a stripped seed's, or the
 * folder its mutated debug file went to). */
static void job_debug_dir(struct job *j, const struct mutant *m)
{
    if (m && m->debug_dir[0]) {
        job_arg(j, "--debug-dir");
        job_arg(j, m->debug_dir);
    }
}

static void enqueue(struct campaign *c, struct job *j)
{
    if (!j)
        return;
    if (c->queue_tail)
        c->queue_tail->next = j;
    else
        c->queue = j;
    c->queue_tail = j;
}

static struct job *dequeue(struct campaign *c)
{
    struct job *j = c->queue;
    if (j) {
        c->queue = j->next;
        if (!c->queue)
            c->queue_tail = NULL;
        j->next = NULL;
    }
    return j;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void mutant_release(struct mutant *m)
{
    if (!m || --m->refs > 0)
        return;
    if (m->owned) {
        unlink(m->path);
        unlink(m->eh_elf);
        if (m->walk[0])
            unlink(m->walk);
        if (m->cache[0])
            nftw(m->cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
        if (m->tree[0])
            nftw(m->tree, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
    free(m);
}

/* ---- the commands of one input ---------------------------------------- */

/* An address the file's CFI speaks of: an FDE's start, as the mutator
 * decodes it (pc-relative for .eh_frame), else 0x1000. */
static uint64_t some_pc(const uint8_t *bytes, size_t size, struct rb_rng *rng)
{
    struct rb_elf *e = malloc(sizeof *e);
    uint64_t pc = 0x1000;
    if (!e)
        return pc;
    rb_elf_scan(e, (uint8_t *)bytes, size);
    unsigned fdes[RB_MAX_RECORDS], n = 0;
    for (unsigned i = 0; i < e->nrecords; i++)
        if (!e->records[i].is_cie && (e->records[i].pc_size == 4 ||
                                      e->records[i].pc_size == 8))
            fdes[n++] = i;
    if (n) {
        const struct rb_record *r = &e->records[fdes[rb_below(rng, n)]];
        const struct rb_section *s = &e->sections[r->section];
        if (r->pc_size == 8) {  /* .debug_frame: an address */
            pc = rb_load(bytes, size, r->pc_at, 8);
        } else {
            int32_t rel = (int32_t)(uint32_t)rb_load(bytes, size,
                                                     r->pc_at, 4);
            pc = s->addr + (r->pc_at - s->offset) + (uint64_t)(int64_t)rel;
        }
        pc += rb_below(rng, 4);
    }
    free(e);
    return pc;
}

static const char *const engines[] = {"interp", "il", "libdwarf", "libdw",
                                      "libunwind"};
/* The unwinders asked in a child process of their own (LLVM's libunwind,
 * libgcc's) and gdb: the second unwind run, now and then. */
static const char *const child_engines[] = {"llvmunwind", "libgcc", "gdb"};
/* diff with every engine (gdb, the slowest, too) on mutants up to this
 * size; larger ones with diff's default engines. */
#define ALL_ENGINES_MAX_SIZE (256u << 10)
#define OWN_AND_LIBRARIES "il,interp,libdwarf,libdw,libunwind"
static const char *const formats[] = {"text", "json", "readelf"};

static void add_unwind(struct campaign *c, struct mutant *m, const char *path,
                       uint64_t pc, const char *engine, struct rb_rng *rng);

/* The eh_elf that compile wrote, through unwind --engine compiled. */
static void add_unwind_compiled(struct campaign *c, struct mutant *m)
{
    struct rb_rng rng;
    rb_rng_seed(&rng, c->opt.seed, m->index ^ 0xc0de);
    add_unwind(c, m, m->file, m->pc, "compiled", &rng);
}

static void add_unwind(struct campaign *c, struct mutant *m, const char *path,
                       uint64_t pc, const char *engine, struct rb_rng *rng)
{
    struct job *j = job_new(c, "unwind", m);
    if (!j)
        return;
    job_arg(j, path);
    job_arg(j, "--pc");
    job_argf(j, "0x%" PRIx64, pc);
    /* DWARF numbers, which every architecture reads: the stack and frame
     * pointers of x86-64 (rsp 7, rbp 6) and of AArch64 (sp 31, x29 29),
     * and in the long list the other general registers of both. */
    job_arg(j, "--regs");
    job_arg(j, rb_one_in(rng, 3)
                   ? "7=0x7ffe1000,6=0x7ffe1100,31=0x7ffe1000,29=0x7ffe1100"
                   : "0=1,1=2,2=3,3=4,4=5,5=6,6=0x7ffe1100,7=0x7ffe1000,"
                     "8=8,9=9,10=10,11=11,12=12,13=13,14=14,15=15,17=17,"
                     "18=18,19=19,20=20,21=21,22=22,23=23,24=24,25=25,26=26,"
                     "27=27,28=28,29=0x7ffe1100,30=0x2000,31=0x7ffe1000");
    job_arg(j, "--engine");
    job_arg(j, engine);
    if (!strcmp(engine, "compiled")) {
        job_arg(j, "--eh-elf");
        job_arg(j, m->eh_elf);
        if (m->eh_elf_path == PATH_V1) {
            job_arg(j, "--abi");
            job_arg(j, "v1");
        }
    }
    if (rb_one_in(rng, 3))
        job_arg(j, "--caller");
    if (rb_one_in(rng, 3))
        job_arg(j, "--json");
    if (rb_one_in(rng, 2)) {
        job_arg(j, "--mem-seed");
        job_argf(j, "%" PRIu64, rb_below(rng, 1000));
    }
    if (rb_one_in(rng, 6)) {
        job_arg(j, "--fault");
        job_arg(j, "0x7ffe0ff0-0x7ffe1010");
    }
    job_debug_dir(j, m);
    enqueue(c, j);
}

/* diff with --engines `list`, or diff's default engines (NULL). */
static void add_diff(struct campaign *c, struct mutant *m, const char *path,
                     const char *list, struct rb_rng *rng)
{
    struct job *j = job_new(c, "diff", m);
    if (!j)
        return;
    job_arg(j, path);
    job_arg(j, "--states");
    job_arg(j, "1");
    job_arg(j, "--jobs");
    job_arg(j, "1");
    job_arg(j, "--seed");
    job_argf(j, "%" PRIu64, 1 + rb_below(rng, 100));
    job_arg(j, "--cache");
    job_arg(j, c->cache);
    if (list) {
        job_arg(j, "--engines");
        job_arg(j, list);
    }
    job_debug_dir(j, m);
    job_json(c, j);
    enqueue(c, j);
}

/* compile with the tree layout, the table layout or the v1 ABI, then
 * validate and unwind with it; or cfisem cache into a folder of the
 * mutant's own. */
static void add_compile(struct campaign *c, struct mutant *m)
{
    bool cache = m->eh_elf_path == PATH_CACHE;
    struct job *j = job_new(c, cache ? "cache" : "compile", m);
    if (!j)
        return;
    job_arg(j, m->file);
    if (!cache)     /* cfisem cache reads no debug file */
        job_debug_dir(j, m);
    if (cache) {
        snprintf(m->cache, sizeof m->cache, "%.1000s.cache", m->path);
        job_arg(j, "--cache");
        job_arg(j, m->cache);
        job_arg(j, "-j");
        job_arg(j, "1");
        if (m->index / c->opt.compile_share % 8 == 3)
            job_arg(j, "--force");
        enqueue(c, j);
        return;
    }
    job_arg(j, "-o");
    job_arg(j, m->eh_elf);
    static const char *const how[][2] = {{"--layout", "tree"},
                                         {"--layout", "table"},
                                         {"--abi", "v1"}};
    job_arg(j, how[m->eh_elf_path][0]);
    job_arg(j, how[m->eh_elf_path][1]);
    j->then_validate = true;
    enqueue(c, j);
}

static void add_validate(struct campaign *c, struct mutant *m,
                         const char *file, const char *eh_elf)
{
    struct job *j = job_new(c, "validate", m);
    if (!j)
        return;
    job_arg(j, file);
    job_arg(j, eh_elf);
    job_arg(j, "--states");
    job_arg(j, "1");
    if (m && m->eh_elf_path == PATH_V1) {
        job_arg(j, "--abi");
        job_arg(j, "v1");
    }
    job_debug_dir(j, m);
    job_json(c, j);
    enqueue(c, j);
}

static void add_il(struct campaign *c, struct mutant *m, const char *path,
                   const char *format, const char *pc)
{
    struct job *j = job_new(c, "il", m);
    if (!j)
        return;
    job_arg(j, path);
    if (format) {
        job_arg(j, "--format");
        job_arg(j, format);
    }
    if (pc) {
        job_arg(j, "--pc");
        job_arg(j, pc);
    }
    job_debug_dir(j, m);
    enqueue(c, j);
}

/* The eh_elf of the seed at path in --eh-elf-dir (NAME.full.eh_elf.so
 * for NAME.so), when there is one. */
static bool seed_eh_elf(const struct campaign *c, const char *path,
                        char *out, size_t size)
{
    if (!c->opt.eh_elf_dir)
        return false;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(base);
    if (len > 3 && !strcmp(base + len - 3, ".so"))
        len -= 3;
    int n = snprintf(out, size, "%s/%.*s.full.eh_elf.so", c->opt.eh_elf_dir,
                     (int)len, base);
    return n > 0 && (size_t)n < size && access(out, R_OK) == 0;
}

/* robust-walk on the seed carrying the mutant's frame sections: the
 * run-time library's interpreter on them, in a child like the rest;
 * with the seed's eh_elf, local walks too (the eh_elf and the frame
 * cache, which learns its rows from the mutated sections). */
static void add_walk(struct campaign *c, struct mutant *m)
{
    struct job *j = job_new_tool(c->opt.walker, NULL, m);
    if (!j)
        return;
    j->cmd.subcommand = "walk";
    j->cmd.allowed = 0x5;   /* 0, 2 (the copy does not load) */
    job_arg(j, m->walk);
    job_argf(j, "%" PRIu64, m->index);
    char eh_elf[PATH_MAX_LEN];
    if (seed_eh_elf(c, m->seed_path, eh_elf, sizeof eh_elf))
        job_arg(j, eh_elf);
    enqueue(c, j);
}

/* The runs of one mutant: il in a format, il --pc, unwind with two
 * engines, a short diff; now and then every engine (the small mutants:
 * gdb, llvmunwind, libgcc and sframe too), compile + validate. */
static void plan_mutant(struct campaign *c, struct mutant *m,
                        const uint8_t *bytes, size_t size, struct rb_rng *rng)
{
    char pc_text[32];
    uint64_t pc = some_pc(bytes, size, rng);
    m->pc = pc;
    snprintf(pc_text, sizeof pc_text, "0x%" PRIx64, pc);
    add_il(c, m, m->file, formats[rb_below(rng, 3)], NULL);
    add_il(c, m, m->file, NULL, pc_text);
    unsigned e1 = (unsigned)rb_below(rng, 5);
    unsigned e2 = (e1 + 1 + (unsigned)rb_below(rng, 4)) % 5;
    add_unwind(c, m, m->file, pc, engines[e1], rng);
    add_unwind(c, m, m->file, pc, rb_one_in(rng, 6)
                   ? child_engines[rb_below(rng, 3)] : engines[e2], rng);
    add_diff(c, m, m->file, OWN_AND_LIBRARIES, rng);
    if (m->walk[0])
        add_walk(c, m);
    /* a mutant read with --debug-dir: compile + validate more often */
    unsigned share = c->opt.compile_share;
    if (share > 8 && m->debug_dir[0])
        share = 8;
    if (share && m->index % share == 0) {
        m->eh_elf_path = (enum eh_elf_path)(m->index / share % NPATHS);
        add_diff(c, m, m->file,
                 size <= ALL_ENGINES_MAX_SIZE ? "all" : NULL, rng);
        add_compile(c, m);
    }
}

/* cfisem perf on a perf.data: by name, or as standard input ("-", as
 * perf record -o - writes it: the pipe mode; a file-mode one too);
 * --folded or not, --max-frames now and then; the interpreter, or one
 * run in 8 the compiled engine with the campaign's cache. */
static void add_perf(struct campaign *c, struct mutant *m, bool from_stdin,
                     struct rb_rng *rng)
{
    struct job *j = job_new(c, "perf", m);
    if (!j)
        return;
    job_arg(j, from_stdin ? "-" : m->path);
    if (from_stdin)
        j->cmd.stdin_path = m->path;
    if (rb_one_in(rng, 2))
        job_arg(j, "--folded");
    if (rb_one_in(rng, 4)) {
        job_arg(j, "--max-frames");
        job_argf(j, "%" PRIu64, 1 + rb_below(rng, 8));
    }
    job_arg(j, "--engine");
    if (rb_one_in(rng, 8)) {
        job_arg(j, "compiled");
        job_arg(j, "--cache");
        job_arg(j, c->cache);
    } else {
        job_arg(j, "interp");
    }
    enqueue(c, j);
}

/* cfisem stack --core: with its EXE or not; two own engines (exit 1, a
 * disagreement, is a failure), one, or with outside engines (only
 * flagged); --json or not. */
static void add_stack(struct campaign *c, struct mutant *m,
                      struct rb_rng *rng)
{
    static const char *const lists[] = {"interp,il", "interp", "il,interp",
                                        "interp,il,libdw,libunwind"};
    struct job *j = job_new(c, "stack", m);
    if (!j)
        return;
    job_arg(j, "--core");
    job_arg(j, m->path);
    if (m->seed->exe && !rb_one_in(rng, 4))
        job_arg(j, m->seed->exe);
    job_arg(j, "--engines");
    job_arg(j, lists[rb_below(rng, sizeof lists / sizeof lists[0])]);
    if (rb_one_in(rng, 3))
        job_arg(j, "--json");
    if (rb_one_in(rng, 4)) {
        job_arg(j, "--max-frames");
        job_argf(j, "%" PRIu64, 1 + rb_below(rng, 8));
    }
    job_arg(j, "--cache");
    job_arg(j, c->cache);
    enqueue(c, j);
}

/* The runs of a perf.data or core mutant. */
static void plan_reader(struct campaign *c, struct mutant *m,
                        struct rb_rng *rng)
{
    if (m->seed->type == SEED_PERF) {
        add_perf(c, m, false, rng);
        add_perf(c, m, true, rng);
        return;
    }
    add_stack(c, m, rng);
    add_stack(c, m, rng);
}

/* ---- fixed inputs: odd files, usage errors, gen ------------------------ */

static bool write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(b, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* An ELF32 header (x86, ET_DYN) with no sections: a 32-bit ELF file. */
static bool write_elf32(const char *path)
{
    uint8_t h[52] = {0x7f, 'E', 'L', 'F', 1, 1, 1};
    h[16] = 3;   /* ET_DYN */
    h[18] = 3;   /* EM_386 */
    h[20] = 1;   /* EV_CURRENT */
    h[40] = 52;  /* e_ehsize */
    return write_bytes(path, h, sizeof h);
}

static unsigned make_odd_files(struct campaign *c, char paths[][PATH_MAX_LEN],
                               unsigned max)
{
    static const char *const names[] = {"empty", "dir", "fifo", "link-to-dir",
                                        "elf32", "magic-only", "one-byte"};
    unsigned n = 0;
    char dir[PATH_MAX_LEN];
    snprintf(dir, sizeof dir, "%s/odd", c->opt.out);
    mkdir(dir, 0755);
    for (unsigned i = 0; i < sizeof names / sizeof names[0] && n < max; i++) {
        char *p = paths[n];
        snprintf(p, PATH_MAX_LEN, "%.900s/%s", dir, names[i]);
        unlink(p);
        bool ok = false;
        switch (i) {
        case 0: ok = write_bytes(p, "", 0); break;
        case 1: ok = mkdir(p, 0755) == 0 || errno == EEXIST; break;
        case 2: ok = mkfifo(p, 0644) == 0; break;
        case 3: ok = symlink(dir, p) == 0; break;
        case 4: ok = write_elf32(p); break;
        case 5: ok = write_bytes(p, "\x7f" "ELF", 4); break;
        default: ok = write_bytes(p, "\x7f", 1); break;
        }
        n += ok;
    }
    static const char *const devices[] = {"/dev/zero", "/dev/null",
                                          "/nonexistent/cfisem-robust"};
    for (unsigned i = 0; i < 3 && n < max; i++)
        snprintf(paths[n++], PATH_MAX_LEN, "%s", devices[i]);
    return n;
}

/* perf FILE, perf - < FILE, stack --core FILE, il --debug-dir FILE
 * (a file where a folder is meant: no debug file, no error). */
static void plan_odd_readers(struct campaign *c, const char *path)
{
    static const char *const lines[][6] = {
        {"perf", "@", "--engine", "interp"},
        {"perf", "-", "--engine", "interp"},
        {"stack", "--core", "@", "--engines", "interp"},
        {"stack", "--core", "@", "@", "--engines", "interp,il"},
        {"il", "@", "--debug-dir", "@"}};
    for (unsigned i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        struct job *j = job_new(c, lines[i][0], NULL);
        if (!j)
            continue;
        for (unsigned k = 1; k < 6 && lines[i][k]; k++)
            job_arg(j, !strcmp(lines[i][k], "@") ? path : lines[i][k]);
        struct stat st;     /* a FIFO's open would block robust */
        if (i == 1 && stat(path, &st) == 0 &&
            (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
            j->cmd.stdin_path = job_text(j, path);  /* path is freed */
        enqueue(c, j);
    }
}

static void plan_odd(struct campaign *c, const char *path, const char *good)
{
    struct rb_rng rng;
    rb_rng_seed(&rng, c->opt.seed, 0x0dd);
    for (unsigned f = 0; f < 3; f++)
        add_il(c, NULL, path, formats[f], NULL);
    add_il(c, NULL, path, NULL, "0x1000");
    for (unsigned e = 0; e < 5; e++)
        add_unwind(c, NULL, path, 0x1000, engines[e], &rng);
    add_diff(c, NULL, path, OWN_AND_LIBRARIES, &rng);
    struct job *j = job_new(c, "compile", NULL);
    if (j) {
        char out[PATH_MAX_LEN + 16];
        snprintf(out, sizeof out, "%s/odd/out.eh_elf.so", c->opt.out);
        job_arg(j, path);
        job_arg(j, "-o");
        job_arg(j, out);
        enqueue(c, j);
    }
    if (good) {
        add_validate(c, NULL, good, path);
        add_validate(c, NULL, path, path);
    }
    plan_odd_readers(c, path);
}

/* Command lines a new user gets wrong: each must exit RB_EXIT_USAGE with a
 * message. */
static void plan_usage(struct campaign *c, const char *good)
{
    static const char *const lines[][6] = {
        {NULL}, {"il"}, {"il", "@", "--format", "xml"}, {"il", "@", "--pc", "zz"},
        {"unwind", "@"}, {"unwind", "@", "--pc", "0x1000", "--regs", "rsp"},
        {"unwind", "@", "--pc", "0x1000", "--engine", "nope"},
        {"diff"}, {"diff", "@", "--states", "x"}, {"diff", "@", "--engines", "x"},
        {"compile", "@"}, {"validate", "@"}, {"gen"}, {"gen", "--seed", "x"},
        {"nope"}, {"il", "@", "--nope"},
        {"perf"}, {"perf", "@", "@"}, {"perf", "@", "--engine", "il"},
        {"perf", "@", "--max-frames", "x"}, {"stack"},
        {"stack", "--core"}, {"stack", "--core", "@", "--engines", "x"},
        {"il", "@", "--debug-dir"}, {"il", "@", "--debug-dir", ""}};
    for (unsigned i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        struct job *j = job_new(c, lines[i][0], NULL);
        if (!j)
            continue;
        for (unsigned k = 1; k < 6 && lines[i][0] && lines[i][k]; k++)
            job_arg(j, !strcmp(lines[i][k], "@") ? good : lines[i][k]);
        j->cmd.allowed = 0;    /* a usage error: RB_EXIT_USAGE alone */
        j->cmd.usage = true;
        enqueue(c, j);
    }
}

static void plan_gen(struct campaign *c, uint64_t index)
{
    struct job *j = job_new(c, "gen", NULL);
    if (!j)
        return;
    char s[PATH_MAX_LEN + 16], il[PATH_MAX_LEN + 16];
    snprintf(s, sizeof s, "%s/work/gen.S", c->opt.out);
    snprintf(il, sizeof il, "%s/work/gen.il", c->opt.out);
    job_arg(j, "--seed");
    job_argf(j, "%" PRIu64, c->opt.seed * 1000003 + index);
    job_arg(j, "-o");
    job_arg(j, s);
    job_arg(j, "--expect");
    job_arg(j, il);
    if (index % 3 == 0)
        job_arg(j, "--ill-formed");
    static const char *const sections[] = {"eh_frame", "debug_frame", "both"};
    job_arg(j, "--section");
    job_arg(j, sections[index % 3]);
    enqueue(c, j);
}

/* ---- mutants ---------------------------------------------------------- */

/* The seed, a shared object, with the bytes of the mutant at its
 * .eh_frame and .eh_frame_hdr (as the seed's section headers place
 * them) and nowhere else: the loader sees the seed, the unwinder the
 * mutant's frames. False when the seed is no shared object or the frame
 * sections came out the same. */
static bool frames_into_seed(const struct seed *s, const struct rb_mutant *m,
                             uint8_t *copy)
{
    struct rb_elf *e = malloc(sizeof *e);
    if (!e)
        return false;
    rb_elf_scan(e, s->bytes, s->size);
    bool changed = false;
    memcpy(copy, s->bytes, s->size);
    int frames[2] = {e->eh_frame, e->eh_frame_hdr};
    for (unsigned k = 0; e->elf64 && rb_load(s->bytes, s->size, 16, 2) == 3 &&
                         k < 2; k++) {
        if (frames[k] < 0)
            continue;
        const struct rb_section *sec = &e->sections[frames[k]];
        uint64_t end = sec->offset + sec->size;
        if (sec->offset >= s->size || end > s->size || end < sec->offset)
            continue;
        uint64_t stop = end < m->size ? end : m->size;
        for (uint64_t at = sec->offset; at < stop; at++) {
            changed |= copy[at] != m->bytes[at];
            copy[at] = m->bytes[at];
        }
    }
    free(e);
    return changed;
}

static void write_walk_copy(struct campaign *c, struct mutant *mu,
                            const struct seed *s, const struct rb_mutant *m)
{
    uint8_t *copy = c->opt.walker ? malloc(s->size) : NULL;
    if (copy && frames_into_seed(s, m, copy)) {
        snprintf(mu->walk, sizeof mu->walk, "%.1000s.rt.so", mu->path);
        if (!write_bytes(mu->walk, copy, s->size))
            mu->walk[0] = 0;
    }
    free(copy);
}

/* mkdir -p of path's folders. */
static void make_parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        mkdir(path, 0755);
        *p = '/';
    }
}

/* Writes the mutant OUT/work/mN; a mutated debug file goes to
 * OUT/work/mN.d/REL instead (REL its path under its seed's debug
 * folder), which the commands on the stripped file take as
 * --debug-dir. */
static bool place_mutant(struct campaign *c, struct mutant *mu,
                         const struct rb_mutant *m)
{
    const struct seed *s = mu->seed;
    snprintf(mu->path, sizeof mu->path, "%s/work/m%" PRIu64, c->opt.out,
             mu->index);
    snprintf(mu->eh_elf, sizeof mu->eh_elf, "%.1000s.eh_elf.so", mu->path);
    snprintf(mu->file, sizeof mu->file, "%s", mu->path);
    if (s->debug_dir)
        snprintf(mu->debug_dir, sizeof mu->debug_dir, "%s", s->debug_dir);
    if (s->type == SEED_DEBUG) {
        snprintf(mu->tree, sizeof mu->tree, "%.1000s.d", mu->path);
        snprintf(mu->debug_dir, sizeof mu->debug_dir, "%s", mu->tree);
        snprintf(mu->file, sizeof mu->file, "%s", s->stripped);
        snprintf(mu->path, sizeof mu->path, "%.500s/%.500s", mu->tree,
                 s->rel);
        make_parents(mu->path);
    }
    return write_bytes(mu->path, m->bytes, m->size);
}

static struct mutant *new_mutant(struct campaign *c, uint64_t index)
{
    const struct seed *s = &c->seeds[index % c->nseeds];
    struct rb_mutant m = {malloc(s->size + 1), s->size, s->size + 1};
    struct mutant *mu = calloc(1, sizeof *mu);
    if (!m.bytes || !mu) {
        free(m.bytes);
        free(mu);
        return NULL;
    }
    memcpy(m.bytes, s->bytes, s->size);
    rb_make_mutant(&m, c->opt.seed, index, &mu->kind);
    c->tally.kind_mutants[mu->kind]++;
    c->tally.kind_changed[mu->kind] +=
        m.size != s->size || memcmp(m.bytes, s->bytes, s->size) != 0;
    c->tally.mutants++;
    mu->index = index;
    mu->seed_path = s->path;
    mu->seed = s;
    mu->owned = true;
    bool ok = place_mutant(c, mu, &m);
    if (ok && s->type == SEED_ELF)
        write_walk_copy(c, mu, s, &m);
    struct rb_rng rng;
    rb_rng_seed(&rng, c->opt.seed, ~index);
    mu->refs = 1;  /* held while planning */
    if (ok && (s->type == SEED_PERF || s->type == SEED_CORE))
        plan_reader(c, mu, &rng);
    else if (ok)
        plan_mutant(c, mu, m.bytes, m.size, &rng);
    free(m.bytes);
    return mu;
}

/* ---- results ---------------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    if (in) fclose(in);
    if (out) fclose(out);
}

/* The files of a mutant a command may name, and their names when kept. */
enum { NKEPT_FILES = 3 };
static const char *const kept_names[NKEPT_FILES] = {"input", "eh_elf.so",
                                                    "walked.so"};

static void write_command(FILE *f, const struct rb_command *cmd,
                          const char *const *replace,
                          char with[][PATH_MAX_LEN + 32])
{
    for (unsigned i = 0; i < cmd->argc; i++) {
        const char *a = cmd->argv[i];
        for (unsigned k = 0; k < NKEPT_FILES; k++)
            if (replace[k] && replace[k][0] && !strcmp(a, replace[k]))
                a = with[k];
        fprintf(f, "%s'%s'", i ? " " : "", a);
    }
    const char *in = cmd->stdin_path;
    for (unsigned k = 0; in && k < NKEPT_FILES; k++)
        if (replace[k] && !strcmp(in, replace[k]))
            in = with[k];
    if (in)
        fprintf(f, " < '%s'", in);
    fputc('\n', f);
}

/* The mutant's files the command names, copied into dir; kept[k] their
 * copies' paths. */
static void keep_files(const struct job *j, const char *dir,
                       const char **files, char kept[][PATH_MAX_LEN + 32])
{
    const struct mutant *m = j->mutant;
    files[0] = m ? m->path : NULL;
    files[1] = m ? m->eh_elf : NULL;
    files[2] = m ? m->walk : NULL;
    for (unsigned k = 0; k < NKEPT_FILES; k++) {
        snprintf(kept[k], PATH_MAX_LEN + 32, "%s/%s", dir, kept_names[k]);
        bool named = false;
        for (unsigned i = 0; files[k] && files[k][0] && i < j->cmd.argc; i++)
            named |= !strcmp(j->cmd.argv[i], files[k]);
        if (named || (k == 0 && m))
            copy_file(files[k], kept[k]);
    }
}

/* failures/CLASS/N-SUBCOMMAND/: input, command (cfisem's, with the kept
 * input, and the mutator's), stdout, stderr. */
static void keep_run(struct campaign *c, const struct rb_slot *s,
                     const struct job *j, const char *folder, uint64_t n)
{
    enum rb_class cls = s->outcome.cls;
    char dir[PATH_MAX_LEN], p[PATH_MAX_LEN + 32];
    snprintf(dir, sizeof dir, "%s/failures", c->opt.out);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/failures/%s", c->opt.out, folder);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/failures/%s/%03" PRIu64 "-%s", c->opt.out,
             folder, n, j->cmd.subcommand);
    mkdir(dir, 0755);
    const char *files[NKEPT_FILES];
    char kept[NKEPT_FILES][PATH_MAX_LEN + 32];
    keep_files(j, dir, files, kept);
    char cmdpath[PATH_MAX_LEN + 32];
    snprintf(cmdpath, sizeof cmdpath, "%s/command", dir);
    FILE *f = fopen(cmdpath, "w");
    if (f) {
        write_command(f, &j->cmd, files, kept);
        if (j->mutant)
            fprintf(f, "# mutant: robust --mutate '%s' --seed %" PRIu64
                       " --index %" PRIu64 " -o OUT   (kind %s)\n",
                    j->mutant->seed_path, c->opt.seed, j->mutant->index,
                    rb_kind_name(j->mutant->kind));
        fprintf(f, "# %s: exit %d, signal %d, %.2f s\n", rb_class_name(cls),
                s->outcome.exit_code, s->outcome.signal, s->outcome.seconds);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/stderr", dir);
    write_bytes(p, s->outcome.err, s->outcome.err_len);
    if (j->json[0]) {
        snprintf(p, sizeof p, "%s/report.json", dir);
        copy_file(j->json, p);
    }
    snprintf(p, sizeof p, "%s/stdout", dir);
    write_bytes(p, s->outcome.out, s->outcome.out_len);
}

/* "SUBCOMMAND ENGINE FRAME": the first frame of a sanitizer report that
 * is neither the sanitizer's nor libc's, else the signal. */
static void signature_of(const struct rb_slot *s, const struct job *j,
                         char *text, size_t size)
{
    const char *engine = "";
    for (unsigned i = 0; i + 1 < j->cmd.argc; i++)
        if (!strcmp(j->cmd.argv[i], "--engine"))
            engine = j->cmd.argv[i + 1];
    char frame[64] = "", line[256];
    const char *p = s->outcome.err;
    for (unsigned n = 0; (p = strstr(p, "    #")) && n < 64; n++, p++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
        const char *in = strstr(line, " in ");
        if (!in || strstr(in, "sanitizer") || strstr(in, "__interceptor") ||
            strstr(in, "sysdeps") || strstr(in, "libc.so") ||
            strstr(in, "libc_start") || strstr(in, "_start "))
            continue;
        sscanf(in + 4, "%63s", frame);
        break;
    }
    if (!frame[0] && s->outcome.signal)
        snprintf(frame, sizeof frame, "signal %d", s->outcome.signal);
    snprintf(text, size, "%s %s %s", j->cmd.subcommand, engine, frame);
}

static struct signature *find_signature(struct tally *t, enum rb_class cls,
                                        const char *text)
{
    for (unsigned i = 0; i < t->nsignatures; i++)
        if (t->signatures[i].cls == cls && !strcmp(t->signatures[i].text, text))
            return &t->signatures[i];
    if (t->nsignatures == MAX_SIGNATURES)
        return NULL;
    struct signature *g = &t->signatures[t->nsignatures++];
    g->cls = cls;
    snprintf(g->text, sizeof g->text, "%s", text);
    g->runs = 0;
    return g;
}

/* The first few runs of each signature are kept, not the first of all:
 * one frequent failure must not hide a rare one. */
static void keep_failure(struct campaign *c, const struct rb_slot *s,
                         const struct job *j)
{
    enum rb_class cls = s->outcome.cls;
    char text[SIGNATURE_LEN];
    signature_of(s, j, text, sizeof text);
    struct signature *g = find_signature(&c->tally, cls, text);
    uint64_t seen = g ? g->runs++ : 0;
    if ((cls == RB_MISMATCH || seen < KEEP_PER_SIGNATURE) &&
        c->tally.kept[cls] < KEEP_PER_CLASS)
        keep_run(c, s, j, rb_class_name(cls), c->tally.kept[cls]++);
}

/* The README promises one line on stderr for a bad input. */
static void keep_noisy(struct campaign *c, const struct rb_slot *s,
                       const struct job *j)
{
    if (c->tally.noisy_kept < KEEP_PER_CLASS)
        keep_run(c, s, j, "noisy", c->tally.noisy_kept++);
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static uint64_t failures(const struct tally *t)
{
    return t->by_class[RB_CRASH] + t->by_class[RB_HANG] +
           t->by_class[RB_SILENT] + t->by_class[RB_BAD_EXIT] +
           t->by_class[RB_DISAGREE] + t->by_class[RB_WRONG_RANGE] +
           t->by_class[RB_CHILD_CRASH];
}

/* "C crashes, H hangs, ..., K child crashes": every failure class. */
static void failure_counts(FILE *f, const struct tally *t)
{
    fprintf(f, "%" PRIu64 " crashes, %" PRIu64 " hangs, %" PRIu64
            " silent, %" PRIu64 " bad exit codes, %" PRIu64
            " own-engine disagreements, %" PRIu64 " wrong ranges, %" PRIu64
            " child crashes",
            t->by_class[RB_CRASH], t->by_class[RB_HANG],
            t->by_class[RB_SILENT], t->by_class[RB_BAD_EXIT],
            t->by_class[RB_DISAGREE], t->by_class[RB_WRONG_RANGE],
            t->by_class[RB_CHILD_CRASH]);
}

static void progress(struct campaign *c, bool force)
{
    double now = rb_now();
    if (c->opt.quiet || (!force && now - c->last_progress < 5))
        return;
    c->last_progress = now;
    const struct tally *t = &c->tally;
    fprintf(stderr, "robust: %" PRIu64 "/%" PRIu64 " runs, %" PRIu64
            " mutants, ", t->runs, c->opt.runs, t->mutants);
    failure_counts(stderr, t);
    fprintf(stderr, ", %.0f runs/s\n", t->runs / (now - c->start + 1e-9));
}

/* A run past the timeout goes again, first in the queue: a machine
 * that others load can stall a run of a tenth of a second for half a
 * minute; a run that times out twice is a hang. */
static bool retry_timed_out(struct campaign *c, struct rb_slot *s)
{
    struct job *j = s->tag;
    if (s->outcome.cls != RB_HANG || j->retried)
        return false;
    j->retried = true;
    c->tally.retried++;
    if (j->json[0])
        unlink(j->json);
    j->next = c->queue;
    c->queue = j;
    if (!c->queue_tail)
        c->queue_tail = j;
    rb_pool_release(s);
    return true;
}

static void finish(struct campaign *c, struct rb_slot *s)
{
    struct job *j = s->tag;
    enum rb_class cls = s->outcome.cls;
    if (retry_timed_out(c, s))
        return;
    c->tally.runs++;
    c->tally.by_class[cls]++;
    if (cls != RB_OK && cls != RB_CLEAN)
        keep_failure(c, s, j);
    if (j->json[0])
        unlink(j->json);
    if (j->then_validate && access(j->mutant->eh_elf, F_OK) == 0) {
        add_validate(c, j->mutant, j->mutant->file, j->mutant->eh_elf);
        add_unwind_compiled(c, j->mutant);
    }
    if (cls == RB_CLEAN && count_lines(s->outcome.err) > 1) {
        c->tally.noisy++;
        keep_noisy(c, s, j);
    }
    mutant_release(j->mutant);
    free(j);
    rb_pool_release(s);
    progress(c, false);
}

/* ---- seeds -------------------------------------------------------------- */

enum { SEED_MAX_SIZE = 4 << 20 };

static bool read_file(const char *path, uint8_t **bytes, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) ||
        st.st_size > SEED_MAX_SIZE) {
        fclose(f);
        return false;
    }
    *size = (size_t)st.st_size;
    *bytes = malloc(*size + 1);
    bool ok = *bytes && fread(*bytes, 1, *size, f) == *size;
    fclose(f);
    if (!ok) {
        free(*bytes);
        *bytes = NULL;
    }
    return ok;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void add_seed(struct campaign *c, const char *path);

/* A seed FILE with a folder FILE.d beside it is a stripped file and its
 * --debug-dir: its debug file, FILE.d/.build-id/NN/REST.debug, is a
 * seed too (SEED_DEBUG), mutated in place of the stripped file. */
static void add_debug_seed(struct campaign *c, struct seed *stripped)
{
    char dir[PATH_MAX_LEN], pattern[PATH_MAX_LEN + 32];
    snprintf(dir, sizeof dir, "%s.d", stripped->path);
    if (!is_dir(dir))
        return;
    stripped->debug_dir = strdup(dir);
    snprintf(pattern, sizeof pattern, "%s/.build-id/*/*.debug", dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return;
    unsigned before = c->nseeds;
    add_seed(c, g.gl_pathv[0]);
    if (c->nseeds > before) {
        struct seed *d = &c->seeds[before];
        d->type = SEED_DEBUG;
        d->stripped = strdup(stripped->path);
        d->rel = strdup(g.gl_pathv[0] + strlen(dir) + 1);
        free(d->debug_dir);
        d->debug_dir = NULL;
    }
    globfree(&g);
}

/* The type of a seed by its bytes: a perf.data, an ELF core (EXE: its
 * path without ".core", when that file is there), else an ELF file. */
static void add_seed(struct campaign *c, const char *path)
{
    if (c->nseeds >= MAX_SEEDS)
        return;
    struct seed *s = &c->seeds[c->nseeds];
    memset(s, 0, sizeof *s);
    if (!read_file(path, &s->bytes, &s->size) || s->size == 0)
        return;
    s->path = strdup(path);
    c->nseeds++;
    size_t len = strlen(path);
    if (rb_is_perf(s->bytes, s->size)) {
        s->type = SEED_PERF;
    } else if (s->size >= 64 && !memcmp(s->bytes, "\x7f" "ELF", 4) &&
               rb_load(s->bytes, s->size, 16, 2) == 4 /* ET_CORE */) {
        s->type = SEED_CORE;
        if (len > 5 && !strcmp(path + len - 5, ".core")) {
            s->exe = strndup(path, len - 5);
            if (access(s->exe, R_OK) != 0) {
                free(s->exe);
                s->exe = NULL;
            }
        }
    } else {
        add_debug_seed(c, s);
    }
}

/* Seeds of its own: a personality and an LSDA (zPLR), a signal frame
 * with expressions, both sections; as a shared object and an object. */
static const char own_source[] =
    "\t.text\n"
    "\t.globl f\nf:\n"
    "\t.cfi_startproc\n"
    "\t.cfi_personality 0x9b, pers\n"
    "\t.cfi_lsda 0x1b, lsda\n"
    "\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16\n"
    "\tmov %rsp, %rbp\n\t.cfi_def_cfa_register %rbp\n"
    "\t.cfi_remember_state\n\tleave\n\t.cfi_def_cfa %rsp, 8\n\tret\n"
    "\t.cfi_restore_state\n\tnop\n"
    "\t.cfi_endproc\n"
    "\t.globl g\ng:\n"
    "\t.cfi_startproc simple\n"
    "\t.cfi_signal_frame\n"
    "\t.cfi_escape 0x0f,0x03,0x77,0xa0,0x01\n"
    "\t.cfi_escape 0x10,0x03,0x02,0x77,0x28\n"
    "\t.cfi_escape 0x16,0x10,0x04,0x77,0x08,0x06,0x9f\n"
    "\tnop\n\tnop\n\t.cfi_undefined %rip\n\tret\n"
    "\t.cfi_endproc\n"
    "\t.data\npers:\t.quad 0\nlsda:\t.quad 0\n";

static void own_seeds(struct campaign *c)
{
    char dir[PATH_MAX_LEN], src[PATH_MAX_LEN + 16], cmd[4 * PATH_MAX_LEN];
    snprintf(dir, sizeof dir, "%s/seeds", c->opt.out);
    mkdir(dir, 0755);
    snprintf(src, sizeof src, "%s/own.S", dir);
    if (!write_bytes(src, own_source, sizeof own_source - 1))
        return;
    static const char *const builds[][2] = {
        {"own.so", "-shared -nostdlib -Wl,--build-id=none"},
        {"own.o", "-c"},
        {"own-debug.so", "-shared -nostdlib -Wa,--gdwarf-5 -Wl,--build-id=none"},
    };
    for (unsigned i = 0; i < sizeof builds / sizeof builds[0]; i++) {
        char out[PATH_MAX_LEN + 16];
        snprintf(out, sizeof out, "%s/%s", dir, builds[i][0]);
        snprintf(cmd, sizeof cmd, "cc %s -o '%s' '%s' 2>/dev/null",
                 builds[i][1], out, src);
        if (system(cmd) == 0)
            add_seed(c, out);
    }
}

/* ---- the campaign ------------------------------------------------------ */

static void make_env(struct campaign *c)
{
    unsigned n = 0;
    snprintf(c->env_cache, sizeof c->env_cache, "XDG_CACHE_HOME=%s", c->cache);
    for (char **e = environ; *e && n + 2 < sizeof c->envp / sizeof c->envp[0]; e++)
        if (strncmp(*e, "XDG_CACHE_HOME=", 15) &&
            (!c->opt.memory_mb || strncmp(*e, "ASAN_OPTIONS=", 13)))
            c->envp[n++] = *e;
    c->envp[n++] = c->env_cache;
    /* memory bound of the ASan+UBSan build: a run past it is a crash */
    const char *asan = getenv("ASAN_OPTIONS");
    snprintf(c->env_asan, sizeof c->env_asan,
             "ASAN_OPTIONS=%s%shard_rss_limit_mb=%u:malloc_limit_mb=%u",
             asan ? asan : "", asan && *asan ? ":" : "", c->opt.memory_mb,
             c->opt.memory_mb);
    if (c->opt.memory_mb)
        c->envp[n++] = c->env_asan;
    c->envp[n] = NULL;
}

/* The file the odd inputs and usage errors pair with: the first ELF
 * seed. */
static const char *good_seed(const struct campaign *c)
{
    for (unsigned i = 0; i < c->nseeds; i++)
        if (c->seeds[i].type == SEED_ELF)
            return c->seeds[i].path;
    return c->seeds[0].path;
}

static void plan_fixed(struct campaign *c)
{
    char (*odd)[PATH_MAX_LEN] = calloc(16, PATH_MAX_LEN);
    if (!odd)
        return;
    unsigned n = make_odd_files(c, odd, 16);
    for (unsigned i = 0; i < n; i++) {
        const char *base = strrchr(odd[i], '/') ? strrchr(odd[i], '/') + 1 : odd[i];
        bool skip = false;
        for (unsigned k = 0; k < c->opt.nskip_odd; k++)
            skip |= !strcmp(base, c->opt.skip_odd[k]);
        if (!skip)
            plan_odd(c, odd[i], good_seed(c));
    }
    free(odd);
    if (c->opt.usage)
        plan_usage(c, good_seed(c));
}

/* The eh_elfs of the objects the perf.data seeds sampled, built into the
 * campaign's cache before the runs (one run each, unclassified, with a
 * timeout of 10 times --timeout): a first build of libc's under ASan
 * takes seconds, which a mutant's run with --engine compiled must not
 * pay against its timeout. */
static void warm_cache(struct campaign *c)
{
    double timeout = c->pool->timeout;
    c->pool->timeout = 10 * timeout;
    for (unsigned i = 0; i < c->nseeds; i++) {
        if (c->seeds[i].type != SEED_PERF)
            continue;
        struct job *j = job_new(c, "perf", NULL);
        struct rb_slot *slot = rb_pool_free_slot(c->pool);
        if (!j || !slot)
            break;
        const char *args[] = {c->seeds[i].path, "--folded", "--engine",
                              "compiled", "--cache", c->cache};
        for (unsigned k = 0; k < sizeof args / sizeof args[0]; k++)
            job_arg(j, args[k]);
        struct rb_slot *done = rb_pool_start(c->pool, slot, &j->cmd, j)
                                   ? rb_pool_wait(c->pool) : NULL;
        if (done)
            rb_pool_release(done);
        free(j);
    }
    c->pool->timeout = timeout;
}

static void run_loop(struct campaign *c)
{
    uint64_t started = 0;
    unsigned unplanned = 0;  /* mutants in a row that could not be written */
    for (;;) {
        struct rb_slot *slot;
        while ((slot = rb_pool_free_slot(c->pool))) {
            if (!c->queue) {
                if (started >= c->opt.runs || unplanned > 100)
                    break;
                uint64_t index = c->next_mutant++;
                if (index % 64 == 63)
                    plan_gen(c, index);
                mutant_release(new_mutant(c, index));
                unplanned = c->queue ? 0 : unplanned + 1;
                if (!c->queue)
                    continue;
            }
            struct job *j = dequeue(c);
            if (!rb_pool_start(c->pool, slot, &j->cmd, j)) {
                mutant_release(j->mutant);
                free(j);
                continue;
            }
            started += !j->retried;
        }
        struct rb_slot *done = rb_pool_wait(c->pool);
        if (!done && !c->queue && (started >= c->opt.runs || unplanned > 100))
            return;
        if (done)
            finish(c, done);
    }
}

static void print_summary(const struct campaign *c, double seconds)
{
    const struct tally *t = &c->tally;
    printf("robust: %" PRIu64 " runs, ", t->runs);
    failure_counts(stdout, t);
    putchar('\n');
    printf("robust: %.1f s; ok %" PRIu64 ", clean errors %" PRIu64
           " (%" PRIu64 " of more than one stderr line), mismatches %" PRIu64
           "; %" PRIu64 " timed out once and ran again; seed %" PRIu64
           ", %" PRIu64 " mutants of %u seeds; kept under %s/failures\n",
           seconds, t->by_class[RB_OK], t->by_class[RB_CLEAN], t->noisy,
           t->by_class[RB_MISMATCH], t->retried, c->opt.seed, t->mutants,
           c->nseeds, c->opt.out);
    for (unsigned i = 0; i < t->nsignatures; i++)
        if (t->signatures[i].cls != RB_MISMATCH)
            printf("  %-11s %6" PRIu64 "  %s\n",
                   rb_class_name(t->signatures[i].cls), t->signatures[i].runs,
                   t->signatures[i].text);
    if (!c->opt.stats)
        return;
    for (unsigned k = 0; k < RB_NKINDS; k++)
        printf("kind %-18s mutants %6" PRIu64 " changed %6" PRIu64 "  %s\n",
               rb_kind_name((enum rb_kind)k), t->kind_mutants[k],
               t->kind_changed[k], rb_kind_summary((enum rb_kind)k));
}

static int campaign(struct campaign *c)
{
    char work[PATH_MAX_LEN + 16];
    mkdir(c->opt.out, 0755);
    snprintf(work, sizeof work, "%s/work", c->opt.out);
    mkdir(work, 0755);
    snprintf(c->cache, sizeof c->cache, "%s/cache", c->opt.out);
    mkdir(c->cache, 0755);
    for (unsigned i = 0; i < c->opt.nseeds; i++)
        add_seed(c, c->opt.seeds[i]);
    own_seeds(c);
    if (c->nseeds == 0) {
        fprintf(stderr, "robust: no seed file could be read\n");
        return 2;
    }
    make_env(c);
    c->pool = malloc(sizeof *c->pool);
    if (!c->pool)
        return 2;
    rb_pool_init(c->pool, c->opt.jobs, c->opt.timeout, c->envp);
    c->start = c->last_progress = rb_now();
    warm_cache(c);
    if (c->opt.odd)
        plan_fixed(c);
    run_loop(c);
    progress(c, true);
    print_summary(c, rb_now() - c->start);
    free(c->pool);
    for (unsigned i = 0; i < c->nseeds; i++) {
        free(c->seeds[i].bytes);
        free((char *)c->seeds[i].path);
        free(c->seeds[i].exe);
        free(c->seeds[i].debug_dir);
        free(c->seeds[i].stripped);
        free(c->seeds[i].rel);
    }
    return failures(&c->tally) ? 1 : 0;
}

/* --mutate: one mutant, as the campaign made it. */
static int mutate_only(const struct options *o)
{
    uint8_t *bytes;
    size_t size;
    if (!o->mutate_out || !read_file(o->mutate, &bytes, &size)) {
        fprintf(stderr, "robust: --mutate SEEDFILE --index I -o OUT\n");
        return 2;
    }
    struct rb_mutant m = {bytes, size, size + 1};
    enum rb_kind kind = RB_NKINDS;
    for (unsigned k = 0; o->kind && k < RB_NKINDS; k++)
        if (!strcmp(o->kind, rb_kind_name((enum rb_kind)k)))
            kind = (enum rb_kind)k;
    bool applied = true;
    if (o->kind && kind == RB_NKINDS) {
        fprintf(stderr, "robust: unknown kind %s (see robust --kinds)\n", o->kind);
        free(bytes);
        return 2;
    }
    if (o->kind) {
        struct rb_rng rng;
        rb_rng_seed(&rng, o->seed, o->index);
        applied = rb_mutate(&m, kind, &rng);
    } else {
        rb_make_mutant(&m, o->seed, o->index, &kind);
    }
    bool ok = write_bytes(o->mutate_out, m.bytes, m.size);
    printf("%s%s\n", rb_kind_name(kind), applied ? "" : " (not applicable)");
    free(bytes);
    return !ok ? 2 : applied ? 0 : 3;
}

static const char usage[] =
    "usage: robust [--cfisem PATH] [--walker PATH] [--runs N] [--seed S]\n"
    "              [--eh-elf-dir DIR]\n"
    "              [--jobs J] [--timeout SECONDS] [--out DIR]\n"
    "              [--compile-share N] [--memory MB]\n"
    "              [--no-odd] [--no-usage] [--stats] [--quiet] SEEDFILE...\n"
    "              [--skip-odd NAME]...\n"
    "       robust --mutate SEEDFILE [--seed S] --index I [--kind K] -o OUT\n"
    "       robust --kinds\n";

static bool parse_number(const char *text, uint64_t *v)
{
    char *end;
    if (!text || !*text)
        return false;
    errno = 0;
    *v = strtoull(text, &end, 0);
    return !errno && !*end;
}

static bool parse_option(struct options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    uint64_t n = 0;
    if (!strcmp(a, "--no-odd")) { o->odd = false; return true; }
    if (!strcmp(a, "--no-usage")) { o->usage = false; return true; }
    if (!strcmp(a, "--stats")) { o->stats = true; return true; }
    if (!strcmp(a, "--quiet")) { o->quiet = true; return true; }
    if (!strcmp(a, "--kinds")) { o->list_kinds = true; return true; }
    if (a[0] != '-') {
        if (o->nseeds < MAX_SEEDS)
            o->seeds[o->nseeds++] = a;
        return true;
    }
    if (!v)
        return false;
    (*i)++;
    if (!strcmp(a, "--cfisem")) o->cfisem = v;
    else if (!strcmp(a, "--walker")) o->walker = v;
    else if (!strcmp(a, "--eh-elf-dir")) o->eh_elf_dir = v;
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--mutate")) o->mutate = v;
    else if (!strcmp(a, "-o")) o->mutate_out = v;
    else if (!strcmp(a, "--kind")) o->kind = v;
    else if (!strcmp(a, "--skip-odd") && o->nskip_odd < 8)
        o->skip_odd[o->nskip_odd++] = v;
    else if (!parse_number(v, &n)) return false;
    else if (!strcmp(a, "--runs")) o->runs = n;
    else if (!strcmp(a, "--seed")) o->seed = n;
    else if (!strcmp(a, "--index")) o->index = n;
    else if (!strcmp(a, "--jobs") && n >= 1 && n <= RB_MAX_JOBS) o->jobs = (unsigned)n;
    else if (!strcmp(a, "--timeout") && n >= 1) o->timeout = (double)n;
    else if (!strcmp(a, "--compile-share")) o->compile_share = (unsigned)n;
    else if (!strcmp(a, "--memory") && n <= 1u << 20)
        o->memory_mb = (unsigned)n;
    else return false;
    return true;
}

/* robust-walk beside robust, when it is there. */
static bool default_walker(const char *self, char *path, size_t size)
{
    const char *slash = strrchr(self, '/');
    int dir = slash ? (int)(slash - self) : 1;
    snprintf(path, size, "%.*s/robust-walk", dir, slash ? self : ".");
    return access(path, X_OK) == 0;
}

int main(int argc, char **argv)
{
    struct campaign *c = calloc(1, sizeof *c);
    if (!c)
        return 2;
    struct options *o = &c->opt;
    o->cfisem = getenv("CFISEM") ? getenv("CFISEM") : "build/cfisem";
    o->out = "build/robust";
    o->runs = 1000;
    o->seed = 1;
    o->jobs = 2;
    o->timeout = 20;
    o->compile_share = 40;
    o->memory_mb = 2048;
    o->odd = o->usage = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !parse_option(o, argc, argv, &i)) {
            fputs(usage, strcmp(argv[i], "--help") ? stderr : stdout);
            free(c);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (o->list_kinds) {
        for (unsigned k = 0; k < RB_NKINDS; k++)
            printf("%s\n", rb_kind_name((enum rb_kind)k));
        free(c);
        return 0;
    }
    char walker[PATH_MAX_LEN];
    if (!o->walker && default_walker(argv[0], walker, sizeof walker))
        o->walker = walker;
    else if (o->walker && !*o->walker)
        o->walker = NULL;   /* --walker '': no walks */
    int status = o->mutate ? mutate_only(o) : campaign(c);
    free(c);
    return status;
}
