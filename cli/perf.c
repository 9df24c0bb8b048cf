/* SPDX-License-Identifier: MIT */
/* perf.c — `cfisem perf FILE`: the user stacks of `perf record
 * --call-graph dwarf` samples, unwound through remote/ from each
 * sample's registers and stack copy, printed as `perf script` does or
 * folded. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"
#include "compile/cg.h"
#include "perf/perf.h"
#include "perf_out.h"
#include "remote/remote.h"

static const char usage[] =
    "usage: cfisem perf FILE [--folded | --svg | --compare]\n"
    "                   [--compare-fp OBJECT] [--engine compiled|interp]\n"
    "                   [--build] [--cache DIR] [--max-frames N]\n"
    "\n"
    "Reads FILE, a perf.data that 'perf record --call-graph dwarf' wrote\n"
    "(file mode, or pipe mode: 'perf record -o -', FILE - for standard\n"
    "input; compressed records of 'perf record -z' too), and unwinds the\n"
    "user stack of every sample from its registers and stack copy, through\n"
    "the objects its process had mapped at the sample's time (MMAP2, FORK,\n"
    "exec, EXIT; the vDSO from the copy perf record saves in\n"
    "$HOME/.debug/[vdso]). Prints the samples in time order as 'perf\n"
    "script' does, which FlameGraph's stackcollapse-perf.pl reads: 'COMM\n"
    "PID/TID TIME: PERIOD EVENT:', then one line per frame, '\\tADDR\n"
    "SYMBOL+0xOFF (OBJECT)' (the kernel's frames first, from the sample's\n"
    "callchain, unsymbolised, then the user frames; ADDR is the link-time\n"
    "address in OBJECT, less 1 for a return address), then a blank\n"
    "line. On stderr, a summary: samples, frames, time, and why the stacks\n"
    "ended, summed: outermost frame, stack copy exhausted (a read at or\n"
    "beyond sp + dyn_size), no object at the PC, no CFI for the PC, ...;\n"
    "every stack has a reason.\n"
    "\n"
    "  --folded         one line per distinct stack instead, 'COMM;OUTER;\n"
    "                   ...;INNER COUNT', sorted\n"
    "  --svg            a flame graph instead: one self-contained SVG, one\n"
    "                   rect per frame (its width: its samples; its title:\n"
    "                   its name and count), the root 'all' at the bottom\n"
    "  --compare        runs 'perf script -F pid,tid,time,ip,sym,dso\n"
    "                   --no-inline -i FILE' and compares each sample's user\n"
    "                   frames with cfisem's, frame by frame (the address\n"
    "                   printed); prints instead a table of samples by\n"
    "                   cause: same chain, cfisem stopped earlier (with its\n"
    "                   reason), perf script stopped earlier, different\n"
    "                   address at depth N, a frame outside any object, not\n"
    "                   in perf script's output; with each cause's first\n"
    "                   sample. The differences are data: exit 0\n"
    "  --compare-fp OBJECT\n"
    "                   compares each chain with the frame-pointer chain\n"
    "                   (the sample's user callchain when it has one, else\n"
    "                   the rbp walk over its stack copy) for OBJECT, a path\n"
    "                   as mapped, built with -fno-omit-frame-pointer: the\n"
    "                   samples whose PC is in OBJECT where its frame record\n"
    "                   is set up, up to the first return address outside\n"
    "                   OBJECT; prints a table as --compare does; exit 1\n"
    "                   when a chain differs\n"
    "  --engine E       compiled (the default: each object's eh_elf from\n"
    "                   the cache, built into it on first sight, interp for\n"
    "                   an object whose eh_elf cannot be had) or interp\n"
    "  --build          compiled: build the missing eh_elfs of the samples'\n"
    "                   objects before unwinding; their time on a line of\n"
    "                   its own\n"
    "  --cache DIR      the eh_elf cache (default\n"
    "                   ${XDG_CACHE_HOME:-~/.cache}/cfisem)\n"
    "  --max-frames N   at most N user frames a sample (default 256)\n"
    "\n"
    "Exit status: 0 printed, 1 --compare-fp found a chain that differs, 2\n"
    "FILE unreadable or not a valid perf.data (one line says where) or\n"
    "perf script failed on it, 64 usage error.\n";

#define PERF_MAX_FRAMES_DEFAULT 256
/* The frame-pointer chain's own bound (not --max-frames: a limit of
 * cfisem's is a difference to see). */
#define FP_MAX_FRAMES 4096
#define MAX_MAPS 4096
/* Not a reason of remote/: the sample has no user registers or stack
 * (a kernel thread's, or recorded without --call-graph dwarf). */
#define STOP_NO_USER_STATE REMOTE_STOP_COUNT

struct options {
    const char *path;
    bool folded;                 /* folded stacks kept (--folded, --svg) */
    bool svg;
    bool compare;                /* with perf script */
    const char *fp_object;       /* --compare-fp OBJECT */
    enum engine_id engine;
    bool build;
    const char *cache;
    size_t max_frames;
};

/* The files of the objects, opened once, for memory outside the stack
 * copy (code and read-only data). */
struct object_files {
    char **paths;
    int *fds;
    size_t n, cap;
};

struct memory {
    const struct perf_sample *sample;
    uint64_t sp;
    const struct perf_map **maps;
    size_t nmaps;
    struct object_files *files;
};

/* A process's mappings at its latest sample: perf's, for reading its
 * files, and remote/'s table of them, which the space switches to. */
struct proc_maps {
    uint64_t generation;         /* perf_procs_maps_at's; 0: none yet */
    const struct perf_map **maps;
    size_t nmaps;
    struct remote_maps *remote;
};

struct run {
    const struct options *o;
    struct perf_file *file;
    struct perf_procs *procs;
    struct remote_space *space;
    struct proc_maps *procs_maps; /* by process: generation >> 32 */
    size_t nprocs_maps;
    const struct perf_map *maps[MAX_MAPS];
    struct object_files files;
    struct remote_frame *frames;
    uint64_t samples, frames_total, kernel_frames;
    uint64_t stops[REMOTE_STOP_COUNT + 1];
    char **folded;
    size_t nfolded, folded_cap;
    char *line;
    size_t line_len, line_cap;
    struct script_chains *script;
    struct chain_tally *script_tally, *fp_tally;
    struct chain_frame *ours;    /* max_frames */
    uint64_t *fp_pcs;            /* FP_MAX_FRAMES */
    struct chain_frame *fp_ours, *fp_theirs;
    uint64_t fp_differ;
};

/* The samples are printed as perf script does (not folded, not
 * compared). */
static bool prints_text(const struct options *o)
{
    return !o->folded && !o->compare && !o->fp_object;
}

/* ------------------------------------------------------------------ */
/* Memory of a sample                                                   */
/* ------------------------------------------------------------------ */

static int object_fd(struct object_files *f, const char *path)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->paths[i], path) == 0)
            return f->fds[i];
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        char **p = realloc(f->paths, cap * sizeof *p);
        if (p)
            f->paths = p;
        int *d = realloc(f->fds, cap * sizeof *d);
        if (d)
            f->fds = d;
        if (!p || !d)
            return -1;
        f->cap = cap;
    }
    char *copy = strdup(path);
    if (!copy)
        return -1;
    f->paths[f->n] = copy;
    f->fds[f->n] = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    return f->fds[f->n++];
}

static bool read_object(struct memory *m, uint64_t addr, unsigned size,
                        uint64_t *value)
{
    for (size_t i = m->nmaps; i-- > 0;) {
        const struct perf_map *map = m->maps[i];
        if (addr < map->start || addr + size > map->end)
            continue;
        char buf[512];
        const char *path = perf_map_file(map, buf, sizeof buf);
        if (!path)
            continue;
        int fd = object_fd(m->files, path);
        uint8_t bytes[8] = {0};
        if (fd < 0 || pread(fd, bytes, size,
                            (off_t)(map->pgoff + (addr - map->start)))
                          != (ssize_t)size)
            return false;
        memcpy(value, bytes, 8);
        return true;
    }
    return false;
}

/* The stack copy holds [sp, sp + dyn_size); a read at or beyond its end
 * is "stack copy exhausted", apart from memory that is not there. */
static enum remote_read_result read_sample(void *data, uint64_t addr,
                                           unsigned size, uint64_t *value)
{
    struct memory *m = data;
    const struct perf_sample *s = m->sample;
    *value = 0;
    if (perf_stack_read(s->stack, s->stack_dyn_size, m->sp, addr, size,
                        value))
        return REMOTE_READ_OK;
    if (read_object(m, addr, size, value))
        return REMOTE_READ_OK;
    if (addr >= m->sp)
        return REMOTE_READ_STACK_COPY_EXHAUSTED;
    return REMOTE_READ_UNREADABLE;
}

/* perf's x86-64 user registers (perf_regs.h: AX, BX, CX, DX, SI, DI, BP,
 * SP, IP, FLAGS, CS, SS, DS, ES, FS, GS, R8 .. R15) by DWARF number (the
 * psABI's: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8 .. r15, RA). */
static const unsigned perf_reg_of_dwarf[17] = {
    0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};

static bool sample_regs(const struct perf_sample *s, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    if (!s->regs || !s->stack)
        return false;
    for (unsigned dwarf = 0; dwarf < 17; dwarf++) {
        uint64_t v;
        if (perf_sample_reg(s, perf_reg_of_dwarf[dwarf], &v))
            cfi_regs_set(regs, dwarf, v);
    }
    return regs->status[7] == CFI_REG_VALUE
           && regs->status[16] == CFI_REG_VALUE;
}

/* ------------------------------------------------------------------ */
/* The address space of a sample's process                              */
/* ------------------------------------------------------------------ */



/* The slot of the process whose generation is `generation`, grown to
 * hold it; NULL when out of memory. */
static struct proc_maps *proc_maps_of(struct run *r, uint64_t generation)
{
    size_t at = (size_t)(generation >> 32);
    if (at >= r->nprocs_maps) {
        size_t n = at + 1 > 2 * r->nprocs_maps ? at + 1 : 2 * r->nprocs_maps;
        struct proc_maps *grown = realloc(r->procs_maps, n * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + r->nprocs_maps, 0,
               (n - r->nprocs_maps) * sizeof *grown);
        r->procs_maps = grown;
        r->nprocs_maps = n;
    }
    return &r->procs_maps[at];
}

/* Loads a process's mappings at `generation` (their list in r->maps)
 * into its slot. False when out of memory. */
static bool proc_maps_load(struct run *r, struct proc_maps *p,
                           uint64_t generation, size_t n)
{
    remote_maps_free(p->remote);
    p->remote = NULL;
    p->generation = generation;
    const struct perf_map **maps = realloc(p->maps, (n ? n : 1)
                                                     * sizeof *maps);
    if (!maps)
        return false;
    p->maps = maps;
    p->nmaps = n;
    memcpy(maps, r->maps, n * sizeof *maps);
    if (remote_maps_new(r->space, &p->remote) != CFI_OK)
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct perf_map *m = maps[i];
        char buf[512];
        const char *path = perf_map_file(m, buf, sizeof buf);
        if (!path)
            continue;
        struct remote_map map = {m->start, m->end, m->pgoff, path,
                                 m->build_id, m->build_id_size};
        remote_maps_add(p->remote, &map);
    }
    return true;
}

/* The mappings of the sample's process at its time, which the space now
 * uses: loaded once per process and set of mappings (samples of
 * processes that take turns switch, not load). NULL when the process is
 * unknown (the space's own table, empty, is used). */
static const struct proc_maps *load_space(struct run *r,
                                          const struct perf_sample *s,
                                          uint64_t key)
{
    uint64_t generation = 0;
    size_t n = 0;
    struct proc_maps *p = NULL;
    if (perf_procs_maps_at(r->procs, s->pid, key, r->maps, 0, &n,
                           &generation)
        && (p = proc_maps_of(r, generation)) && p->generation != generation) {
        perf_procs_maps_at(r->procs, s->pid, key, r->maps, MAX_MAPS, &n,
                           &generation);
        if (!proc_maps_load(r, p, generation, n))
            p = NULL;
    }
    remote_space_use(r->space, p ? p->remote : NULL);
    return p;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

static void line_add(struct run *r, const char *text)
{
    size_t len = strlen(text);
    if (r->line_len + len + 2 > r->line_cap) {
        size_t cap = 2 * (r->line_len + len + 2);
        char *grown = realloc(r->line, cap);
        if (!grown)
            return;
        r->line = grown;
        r->line_cap = cap;
    }
    if (r->line_len)
        r->line[r->line_len++] = ';';
    memcpy(r->line + r->line_len, text, len + 1);
    r->line_len += len;
}

static const char *event_name(const struct perf_attr *attr, char *buf,
                              size_t size)
{
    if (attr->name)
        return attr->name;
    if (attr->type == 0 && attr->config == 0)
        return "cycles";
    if (attr->type == 1 && attr->config == 0)
        return "cpu-clock";
    if (attr->type == 1 && attr->config == 1)
        return "task-clock";
    snprintf(buf, size, "raw-%" PRIu32 "-%" PRIx64, attr->type,
             attr->config);
    return buf;
}

static void print_header(struct run *r, const struct perf_sample *s,
                         const char *comm)
{
    char buf[64];
    printf("%s %" PRIu32 "/%" PRIu32 " %" PRIu64 ".%06" PRIu64 ": %" PRIu64
           " %s:\n", comm, s->pid, s->tid, s->time / 1000000000,
           s->time % 1000000000 / 1000, s->period,
           event_name(s->attr, buf, sizeof buf));
    (void)r;
}

/* The kernel's frames of the callchain (PERF_CONTEXT_KERNEL up to the
 * next context), innermost first. */
static void kernel_frames(struct run *r, const struct perf_sample *s,
                          const char **folded_names, size_t *nfold)
{
    bool kernel = false;
    for (uint64_t i = 0; i < s->callchain_nr; i++) {
        uint64_t ip = perf_u64_at(s->callchain + 8 * i);
        if (ip >= PERF_CONTEXT_MAX) {
            kernel = ip == PERF_CONTEXT_KERNEL;
            continue;
        }
        if (!kernel)
            continue;
        r->kernel_frames++;
        if (r->o->folded) {
            if (*nfold < 1024)
                folded_names[(*nfold)++] = "[unknown]_[k]";
        } else if (prints_text(r->o)) {
            printf("\t%16" PRIx64 " [unknown] ([kernel.kallsyms])\n", ip);
        }
    }
}

static void user_frame(struct run *r, const struct remote_frame *f,
                       char *name, size_t size, struct chain_frame *chain)
{
    struct remote_symbol sym;
    remote_symbolize(r->space, f, &sym);
    /* A return address is printed as perf prints it, less 1: the call
     * instruction's last byte, where it was looked up. */
    uint64_t back = f->exact ? 0 : 1;
    uint64_t addr = (sym.object ? sym.rel : f->pc) - back;
    if (sym.offset >= back)
        sym.offset -= back;
    if (sym.name)
        snprintf(name, size, "%s", sym.name);
    else
        snprintf(name, size, "[unknown]");
    *chain = (struct chain_frame){addr, sym.object == NULL};
    if (prints_text(r->o)) {
        if (sym.name)
            printf("\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", addr, sym.name,
                   sym.offset, sym.object ? sym.object : "[unknown]");
        else
            printf("\t%16" PRIx64 " [unknown] (%s)\n", addr,
                   sym.object ? sym.object : "[unknown]");
    }
}

static bool add_folded(struct run *r)
{
    if (r->nfolded == r->folded_cap) {
        size_t cap = r->folded_cap ? 2 * r->folded_cap : 256;
        char **grown = realloc(r->folded, cap * sizeof *grown);
        if (!grown)
            return false;
        r->folded = grown;
        r->folded_cap = cap;
    }
    char *copy = strdup(r->line ? r->line : "");
    if (!copy)
        return false;
    r->folded[r->nfolded++] = copy;
    return true;
}

/* ------------------------------------------------------------------ */
/* One sample                                                           */
/* ------------------------------------------------------------------ */

/* The user part of the sample's callchain (the kernel's frame-pointer
 * walk, present when the event did not exclude user callchains). */
static size_t user_callchain(const struct perf_sample *s, uint64_t *pcs,
                             size_t max)
{
    bool user = false;
    size_t n = 0;
    for (uint64_t i = 0; i < s->callchain_nr && n < max; i++) {
        uint64_t ip = perf_u64_at(s->callchain + 8 * i);
        if (ip >= PERF_CONTEXT_MAX)
            user = ip == PERF_CONTEXT_USER;
        else if (user)
            pcs[n++] = ip;
    }
    return n;
}

/* The object --compare-fp names holds `addr`. */
static bool in_fp_object(const struct memory *m, const char *object,
                         uint64_t addr)
{
    for (size_t i = m->nmaps; i-- > 0;) {
        const struct perf_map *map = m->maps[i];
        if (addr >= map->start && addr < map->end)
            return strcmp(map->path, object) == 0;
    }
    return false;
}

/* Code built with frame pointers has its frame record from after `mov
 * %rsp,%rbp` up to its `leave` or `pop %rbp`; where rbp is still (or
 * again) the caller's, a walk from it skips the caller: at the entry
 * (endbr64, push %rbp), at the mov, at a ret, at a jump that leaves the
 * function (a tail call after the pop: jmp rel32, jmp *GOT(%rip)) and
 * in the linker's PLT stubs, which make no record (jmp *GOT(%rip), push
 * $n, push *GOT(%rip); with a bnd prefix too). */
static bool frame_set_up(struct memory *m, uint64_t pc)
{
    uint64_t code;
    if (!read_object(m, pc, 4, &code))
        return false;
    uint32_t word = (uint32_t)code;
    if (word == 0xfa1e0ff3u || (word & 0xffffffu) == 0xe58948u)
        return false;                          /* endbr64, mov rsp,rbp */
    if ((word & 0xff) == 0xf2)                 /* bnd */
        word >>= 8;
    uint8_t first = (uint8_t)word;
    uint16_t two = (uint16_t)word;
    return first != 0x55 && first != 0xc3 && first != 0xe9
           && first != 0x68 && two != 0x25ff && two != 0x35ff;
}

/* The frame record is made by `mov %rsp,%rbp` (48 89 e5), which a
 * compiler may schedule after other instructions than `push %rbp`, or
 * after a shrink-wrapped path: from the function's start up to the PC,
 * no such mov means rbp is still the caller's. Scanned for at most
 * MOV_SCAN bytes; a function without a symbol is not judged here. */
enum { MOV_SCAN = 256 };

static bool mov_rbp_before(struct run *r, struct memory *m,
                           const struct remote_frame *f)
{
    struct remote_symbol sym;
    remote_symbolize(r->space, f, &sym);
    if (!sym.name || sym.offset > f->pc)
        return true;
    uint64_t start = f->pc - sym.offset;
    uint64_t end = sym.offset > MOV_SCAN ? start + MOV_SCAN : f->pc;
    for (uint64_t a = start; a + 3 <= end; a++) {
        uint64_t code;
        if (!read_object(m, a, 3, &code))
            return true;
        if ((code & 0xffffffu) == 0xe58948u)
            return true;
    }
    return false;
}

/* --compare-fp: cfisem's chain against the frame-pointer chain, on the
 * frames whose frame records OBJECT's code made: up to the first return
 * address outside OBJECT (read from the last record OBJECT made). */
static void compare_fp(struct run *r, struct memory *m,
                       const struct cfi_regs *regs, size_t n,
                       const char *stop, const char *label)
{
    const char *object = r->o->fp_object;
    uint64_t pc = regs->value[16];
    if (!in_fp_object(m, object, pc)) {
        chain_tally_add(r->fp_tally, "skipped: the PC is not in OBJECT",
                        label);
        return;
    }
    if (!frame_set_up(m, pc)
        || (n > 0 && !mov_rbp_before(r, m, &r->frames[0]))) {
        chain_tally_add(r->fp_tally, "skipped: no frame record at the PC",
                        label);
        return;
    }
    size_t nfp = user_callchain(m->sample, r->fp_pcs, FP_MAX_FRAMES);
    if (nfp == 0 && regs->status[6] == CFI_REG_VALUE)
        nfp = fp_chain(pc, regs->value[6], read_sample, m, r->fp_pcs,
                       FP_MAX_FRAMES);
    size_t limit = 0;
    while (limit < nfp && in_fp_object(m, object, r->fp_pcs[limit]))
        limit++;
    size_t nours = n;
    if (limit < nfp) {
        limit++;
        nours = n < limit ? n : limit;
    }
    for (size_t k = 0; k < limit; k++)
        r->fp_theirs[k] = (struct chain_frame){r->fp_pcs[k], false};
    for (size_t k = 0; k < nours; k++)
        r->fp_ours[k] = (struct chain_frame){r->frames[k].pc, false};
    if (!chain_tally_compare(r->fp_tally, label, r->fp_ours, nours,
                             r->fp_theirs, limit, stop))
        r->fp_differ++;
}

/* --compare: cfisem's chain against perf script's. */
static void compare_script(struct run *r, const struct perf_sample *s,
                           size_t n, const char *stop, const char *label)
{
    char name[256];
    for (size_t i = 0; i < n; i++)
        user_frame(r, &r->frames[i], name, sizeof name, &r->ours[i]);
    size_t nt;
    const struct chain_frame *theirs = script_chains_take(r->script, s->tid,
                                                          s->time, &nt);
    if (!theirs)
        chain_tally_add(r->script_tally, "not in perf script's output",
                        label);
    else
        chain_tally_compare(r->script_tally, label, r->ours, n, theirs, nt,
                            stop);
}

static void compare_sample(struct run *r, struct memory *m,
                           const struct cfi_regs *regs, size_t n,
                           const char *stop)
{
    const struct perf_sample *s = m->sample;
    char label[96];
    snprintf(label, sizeof label, "tid %" PRIu32 " at %" PRIu64 ".%06"
             PRIu64, s->tid, s->time / 1000000000,
             s->time % 1000000000 / 1000);
    if (r->script_tally)
        compare_script(r, s, n, stop, label);
    if (r->fp_tally && m->maps)
        compare_fp(r, m, regs, n, stop, label);
    else if (r->fp_tally)
        chain_tally_add(r->fp_tally, "skipped: no user registers or stack",
                        label);
}

static void print_sample(struct run *r, const char *comm, size_t n,
                         const char *const *kfold, size_t nk)
{
    char name[256];
    struct chain_frame chain;
    r->line_len = 0;
    if (r->line)
        r->line[0] = 0;
    if (r->o->folded) {
        line_add(r, comm);
        for (size_t i = n; i-- > 0;) {
            user_frame(r, &r->frames[i], name, sizeof name, &chain);
            line_add(r, name);
        }
        for (size_t i = nk; i-- > 0;)
            line_add(r, kfold[i]);
        add_folded(r);
        return;
    }
    for (size_t i = 0; i < n; i++)
        user_frame(r, &r->frames[i], name, sizeof name, &chain);
    printf("\n");
}

static void one_sample(struct run *r, const struct perf_sample *s,
                       uint64_t key)
{
    const char *comm = perf_procs_comm(r->procs, s->tid, key);
    const char *kfold[1024];
    size_t nk = 0;
    r->samples++;
    if (prints_text(r->o))
        print_header(r, s, comm);
    kernel_frames(r, s, kfold, &nk);
    struct cfi_regs regs;
    size_t n = 0;
    struct remote_stop stop;
    struct memory m = {s, 0, NULL, 0, &r->files};
    const char *stop_name = "no_user_state";
    if (!sample_regs(s, &regs)) {
        r->stops[STOP_NO_USER_STATE]++;
    } else {
        const struct proc_maps *p = load_space(r, s, key);
        m = (struct memory){s, regs.value[7], p ? p->maps : r->maps,
                            p ? p->nmaps : 0, &r->files};
        n = remote_unwind(r->space, &regs, true, read_sample, &m,
                          r->o->engine, r->frames, r->o->max_frames, &stop);
        r->stops[stop.reason]++;
        stop_name = remote_stop_name(stop.reason);
    }
    r->frames_total += n;
    if (r->o->compare || r->o->fp_object)
        compare_sample(r, &m, &regs, n, stop_name);
    else
        print_sample(r, comm, n, kfold, nk);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_folded(struct run *r)
{
    if (r->nfolded)
        qsort(r->folded, r->nfolded, sizeof *r->folded, by_string);
    for (size_t i = 0; i < r->nfolded;) {
        size_t j = i;
        while (j < r->nfolded && strcmp(r->folded[i], r->folded[j]) == 0)
            j++;
        printf("%s %zu\n", r->folded[i], j - i);
        i = j;
    }
}

/* ------------------------------------------------------------------ */
/* The file                                                             */
/* ------------------------------------------------------------------ */

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* --build: the eh_elfs of every file the samples' processes mapped,
 * built into the cache when missing or stale. */
static void build_eh_elfs(struct run *r,
                          const struct perf_sample_ref *order, size_t n)
{
    double start = seconds_now();
    size_t built = 0, failed = 0, seen = 0;
    char **done = NULL;
    for (size_t k = 0; k < n; k++) {
        struct perf_sample s;
        const struct perf_map *maps[MAX_MAPS];
        size_t nm = 0;
        uint64_t generation;
        if (!perf_sample_parse(r->file, perf_record_at(r->file,
                                                       order[k].index),
                               &s, NULL))
            continue;
        perf_procs_maps_at(r->procs, s.pid, order[k].key, maps, MAX_MAPS,
                           &nm, &generation);
        for (size_t i = 0; i < nm; i++) {
            char buf[512];
            const char *object = perf_map_file(maps[i], buf, sizeof buf);
            if (!object || object == buf)
                continue;
            bool known = false;
            for (size_t d = 0; d < seen && !known; d++)
                known = strcmp(done[d], object) == 0;
            if (known)
                continue;
            char **grown = realloc(done, (seen + 1) * sizeof *done);
            if (!grown)
                break;
            done = grown;
            done[seen++] = (char *)object;
            struct cfi_file *file;
            struct cfi_diag diag;
            if (cfi_file_open(object, &file, &diag) != CFI_OK)
                continue;
            struct cg_build_options options = {NULL, 0, true};
            char *path = NULL;
            bool was_built = false;
            if (cg_cached_eh_elf(file, r->o->cache, CG_ABI_FULL, &options,
                                 &path, &was_built, &diag) != CFI_OK)
                failed++;
            built += was_built;
            free(path);
            cfi_file_close(file);
        }
    }
    free(done);
    fprintf(stderr, "cfisem perf: build: %zu eh_elf(s) built, %zu could "
            "not be, of %zu object(s), %.3f s\n", built, failed, seen,
            seconds_now() - start);
}

/* What follows the samples: the folded stacks, the flame graph or the
 * comparisons. --compare-fp's differences are cfisem's (OBJECT's frame
 * records are the truth): exit 1. */
static int finish(struct run *r)
{
    if (r->o->svg) {
        char title[600];
        snprintf(title, sizeof title, "cfisem perf %s: %" PRIu64
                 " samples", r->o->path, r->samples);
        if (r->nfolded)
            qsort(r->folded, r->nfolded, sizeof *r->folded, by_string);
        if (!perf_svg_write(stdout, r->folded, r->nfolded, title)) {
            fprintf(stderr, "cfisem perf: out of memory\n");
            return CLI_INTERNAL;
        }
    } else if (r->o->folded) {
        print_folded(r);
    }
    if (r->script_tally)
        chain_tally_print(r->script_tally, stdout);
    if (r->fp_tally) {
        if (r->script_tally)
            printf("\n");
        chain_tally_print(r->fp_tally, stdout);
        if (r->fp_differ)
            return CLI_MISMATCH;
    }
    return CLI_OK;
}

static void summary(const struct run *r, double secs)
{
    fprintf(stderr, "cfisem perf: %" PRIu64 " samples, %" PRIu64
            " user frames, %" PRIu64 " kernel frames, %.3f s\n",
            r->samples, r->frames_total, r->kernel_frames, secs);
    fprintf(stderr, "cfisem perf: stops:");
    for (int i = 0; i < REMOTE_STOP_COUNT; i++)
        if (r->stops[i])
            fprintf(stderr, " %s %" PRIu64 ";", remote_stop_name(i),
                    r->stops[i]);
    if (r->stops[STOP_NO_USER_STATE])
        fprintf(stderr, " no_user_state %" PRIu64 ";",
                r->stops[STOP_NO_USER_STATE]);
    fprintf(stderr, "\n");
}

static int unwind_all(struct run *r)
{
    size_t n = 0;
    struct perf_sample_ref *order = perf_samples_in_order(r->procs, r->file,
                                                          &n);
    r->frames = malloc(r->o->max_frames * sizeof *r->frames);
    if (!order || !r->frames) {
        free(order);
        fprintf(stderr, "cfisem perf: out of memory\n");
        return CLI_INTERNAL;
    }
    if (r->o->build)
        build_eh_elfs(r, order, n);
    double start = seconds_now();
    int status = CLI_OK;
    for (size_t k = 0; k < n; k++) {
        const struct perf_record *rec = perf_record_at(r->file,
                                                       order[k].index);
        struct perf_sample s;
        struct perf_diag diag;
        if (!perf_sample_parse(r->file, rec, &s, &diag)) {
            fprintf(stderr, "cfisem perf: %s: offset %" PRIu64 ": %s\n",
                    r->o->path, rec->offset, diag.message);
            status = CLI_BAD_INPUT;
            break;
        }
        one_sample(r, &s, order[k].key);
    }
    if (status == CLI_OK)
        status = finish(r);
    fflush(stdout);
    if (status == CLI_OK)
        summary(r, seconds_now() - start);
    free(order);
    return status;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){NULL, false, false, false, NULL, ENGINE_COUNT,
                          false, NULL, PERF_MAX_FRAMES_DEFAULT};
    int outputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            fputs(usage, stdout);
            return -1;
        } else if (!strcmp(arg, "--folded")) {
            o->folded = true;
            outputs++;
        } else if (!strcmp(arg, "--svg")) {
            o->folded = o->svg = true;
            outputs++;
        } else if (!strcmp(arg, "--compare")) {
            outputs += !o->compare && !o->fp_object;
            o->compare = true;
        } else if (!strcmp(arg, "--compare-fp")) {
            if (i + 1 >= argc)
                return cli_usage_error("perf", "missing value after", arg);
            outputs += !o->compare && !o->fp_object;
            o->fp_object = argv[++i];
        } else if (!strcmp(arg, "--build")) {
            o->build = true;
        } else if (!strcmp(arg, "--engine") || !strcmp(arg, "--cache")
                   || !strcmp(arg, "--max-frames")) {
            if (i + 1 >= argc)
                return cli_usage_error("perf", "missing value after", arg);
            const char *value = argv[++i];
            if (!strcmp(arg, "--cache")) {
                o->cache = value;
            } else if (!strcmp(arg, "--max-frames")) {
                char *end;
                long v = strtol(value, &end, 10);
                if (*end || v < 1 || v > 100000)
                    return cli_usage_error("perf", "bad --max-frames",
                                           value);
                o->max_frames = (size_t)v;
            } else if (!strcmp(value, "compiled")) {
                o->engine = ENGINE_compiled;
            } else if (!strcmp(value, "interp")) {
                o->engine = ENGINE_interp;
            } else {
                return cli_usage_error("perf", "unknown engine (compiled, "
                                       "interp):", value);
            }
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage_error("perf", "unknown option", arg);
        } else if (o->path) {
            return cli_usage_error("perf", "more than one FILE:", arg);
        } else {
            o->path = arg;
        }
    }
    if (!o->path)
        return cli_usage_error("perf", "no FILE given", "");
    if (outputs > 1)
        return cli_usage_error("perf", "one output only:", "--folded, "
                               "--svg, or --compare and --compare-fp");
    if (o->compare && !strcmp(o->path, "-"))
        return cli_usage_error("perf", "--compare runs perf script on "
                               "FILE, which cannot be", "-");
    if (o->build && o->engine == ENGINE_interp)
        return cli_usage_error("perf", "--build is for the compiled "
                               "engine, not", "--engine interp");
    return CLI_OK;
}

static int compare_setup(struct run *r)
{
    const struct options *o = r->o;
    size_t max = o->max_frames;
    if (o->compare && !script_chains_load(o->path, &r->script, stderr))
        return CLI_BAD_INPUT;
    if (o->compare && (!(r->script_tally = chain_tally_new("perf script"))
                       || !(r->ours = malloc(max * sizeof *r->ours))))
        return CLI_INTERNAL;
    if (o->fp_object
        && (!(r->fp_tally = chain_tally_new("frame pointers"))
            || !(r->fp_pcs = malloc(FP_MAX_FRAMES * sizeof *r->fp_pcs))
            || !(r->fp_ours = malloc(max * sizeof *r->fp_ours))
            || !(r->fp_theirs = malloc(FP_MAX_FRAMES
                                       * sizeof *r->fp_theirs))))
        return CLI_INTERNAL;
    return CLI_OK;
}

static void run_free(struct run *r)
{
    for (size_t i = 0; i < r->files.n; i++) {
        if (r->files.fds[i] >= 0)
            close(r->files.fds[i]);
        free(r->files.paths[i]);
    }
    free(r->files.paths);
    free(r->files.fds);
    for (size_t i = 0; i < r->nfolded; i++)
        free(r->folded[i]);
    free(r->folded);
    free(r->line);
    free(r->frames);
    free(r->ours);
    free(r->fp_pcs);
    free(r->fp_ours);
    free(r->fp_theirs);
    for (size_t i = 0; i < r->nprocs_maps; i++) {
        remote_maps_free(r->procs_maps[i].remote);
        free(r->procs_maps[i].maps);
    }
    free(r->procs_maps);
    chain_tally_free(r->script_tally);
    chain_tally_free(r->fp_tally);
    script_chains_free(r->script);
    remote_space_free(r->space);
    perf_procs_free(r->procs);
    perf_close(r->file);
    free(r);
}

int cli_perf(int argc, char **argv)
{
    struct options o;
    int status = parse_options(argc, argv, &o);
    if (status < 0)
        return CLI_OK;
    if (status != CLI_OK)
        return status;
    struct run *r = calloc(1, sizeof *r);
    if (!r)
        return CLI_INTERNAL;
    r->o = &o;
    struct perf_diag diag;
    if (!perf_open(o.path, &r->file, &diag)
        || !perf_procs_build(r->file, &r->procs, &diag)) {
        if (diag.offset == PERF_NO_OFFSET)
            fprintf(stderr, "cfisem perf: %s: %s\n", o.path, diag.message);
        else
            fprintf(stderr, "cfisem perf: %s: offset %" PRIu64 ": %s\n",
                    o.path, diag.offset, diag.message);
        run_free(r);
        return CLI_BAD_INPUT;
    }
    status = compare_setup(r);
    if (status != CLI_OK) {
        run_free(r);
        return status;
    }
    struct remote_options options = {ENGINE_compiled, o.cache, true};
    if (remote_space_new(&cfi_arch_x86_64, &options, &r->space) != CFI_OK) {
        run_free(r);
        return CLI_INTERNAL;
    }
    status = unwind_all(r);
    run_free(r);
    return status;
}
