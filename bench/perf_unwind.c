/* SPDX-License-Identifier: MIT */
/* perf_unwind.c — the user stacks of a perf.data (`perf record
 * --call-graph dwarf`), unwound from the same samples by four methods,
 * unwinding timed alone (not reading the file, not symbolising):
 *
 *   - cfisem, compiled engine (remote/, as `cfisem perf` drives it: one
 *     address space, its objects shared, and one table of mappings per
 *     process and set of mappings, made at its first sample and switched
 *     to when the sample's process or its mappings change). Cold: the
 *     eh_elfs of every object the samples' processes mapped are built
 *     into an empty cache first (timed apart), then a first pass with a
 *     new space (files opened, eh_elfs loaded). Warm: later passes over
 *     the same space;
 *   - cfisem, interpreter (the same, engine interp);
 *   - nongnu libunwind through its remote API, as perf's
 *     util/unwind-libunwind-local.c drives it: one unw_addr_space per
 *     process (UNW_CACHE_GLOBAL), find_proc_info over the object's
 *     .eh_frame_hdr search table (dwarf_search_unwind_table), access_mem
 *     reading the stack copy, else the object's file; unw_init_remote,
 *     then unw_step with unw_is_signal_frame on every frame;
 *   - elfutils libdw's unwinder as perf 7 drives it: one Dwfl per
 *     process kept across its samples (its objects reported with
 *     dwfl_report_elf, dwfl_attach_state with thread callbacks that
 *     read the sample's registers and stack copy),
 *     dwfl_getthread_frames. libdw is loaded with dlopen (its dwarf_*
 *     names are also libdwarf's).
 *
 * Every method reads memory through the same reader: the stack copy
 * [sp, sp + dyn_size), else the bytes of the file mapped at the address
 * (mapped once). Each sample's PCs (as unwound, return addresses not
 * backed up) are compared with the warm compiled engine's, up to where
 * each stops; the differences are counted and the first ones printed.
 *
 *   build/bench/perf_unwind PERF.DATA [--rounds N] [--label TEXT]
 *                           [--header] [--max-frames N] [--cache DIR]
 *                           [--cpu-time]
 *
 * --cache DIR: the eh_elfs are built into DIR, kept, and taken from it
 * when there already (the first pass is then not cold): for profiling
 * the warm passes again and again. --cpu-time: the passes are timed in
 * the thread's CPU time, not wall time: on a machine loaded beyond its
 * processors, a long pass is preempted more often than a short one, and
 * wall times favour the fastest method.
 *
 * Prints one markdown table row per method (--header: the header
 * first) on stdout: frames, unwinding time (the best of N warm passes,
 * and the first pass), ns per frame and per sample, the ratio to the
 * warm compiled engine per frame and per sample, why the stacks ended.
 * On stderr: the eh_elf build, the differences. Exit status 0, 2 when
 * the file cannot be read. Not a test: the times depend on the machine
 * and its load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <libunwind.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/stats.h"
#include "bench/unwinders.h"
#include "compile/cg.h"
#include "perf/perf.h"
#include "remote/remote.h"


enum { MAX_MAPS = 4096, MAX_STOPS = 32, NREGS = 17, SHOW_DIFFS = 3 };

/* ------------------------------------------------------------------ */
/* Object files, mapped once                                            */
/* ------------------------------------------------------------------ */

struct segment {
    uint64_t offset, vaddr, filesz;
};

/* An object's file: its bytes, its PT_LOAD segments, its .eh_frame_hdr
 * (PT_GNU_EH_FRAME) and that table's FDE count. */
struct object {
    char *path;
    const uint8_t *bytes;        /* NULL: the file did not map */
    size_t size;
    struct segment loads[16];
    size_t nloads;
    uint64_t hdr_vaddr;
    uint64_t fde_count;
    bool has_table;              /* a version 1 sorted sdata4 table */
};

struct objects {
    struct object *list;
    size_t n, cap;
};

static uint64_t le(const uint8_t *at, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = size; i-- > 0;)
        v = v << 8 | at[i];
    return v;
}

/* The program headers of an ELF64 little-endian file (the only kind
 * perf_unwind reads), bounds checked. */
static void read_segments(struct object *o)
{
    const uint8_t *b = o->bytes;
    if (o->size < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2)
        return;
    uint64_t phoff = le(b + 32, 8), phentsize = le(b + 54, 2);
    uint64_t phnum = le(b + 56, 2);
    if (phentsize < 56 || phoff > o->size
        || phnum > (o->size - phoff) / phentsize)
        return;
    for (uint64_t i = 0; i < phnum; i++) {
        const uint8_t *ph = b + phoff + i * phentsize;
        uint32_t type = (uint32_t)le(ph, 4);
        uint64_t offset = le(ph + 8, 8), vaddr = le(ph + 16, 8);
        if (type == 1 && o->nloads < 16)
            o->loads[o->nloads++] = (struct segment){offset, vaddr,
                                                     le(ph + 32, 8)};
        else if (type == 0x6474e550)
            o->hdr_vaddr = vaddr;
    }
}

/* The file offset of a link-time address, if a segment holds it. */
static bool file_offset(const struct object *o, uint64_t vaddr,
                        uint64_t *offset)
{
    for (size_t i = 0; i < o->nloads; i++) {
        const struct segment *s = &o->loads[i];
        if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
            *offset = s->offset + (vaddr - s->vaddr);
            return true;
        }
    }
    return false;
}

/* .eh_frame_hdr: version 1, fde_count udata4, table datarel|sdata4. */
static void read_table(struct object *o)
{
    uint64_t at;
    if (!o->hdr_vaddr || !file_offset(o, o->hdr_vaddr, &at)
        || at > o->size || o->size - at < 12)
        return;
    const uint8_t *h = o->bytes + at;
    if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
        return;
    o->fde_count = le(h + 8, 4);
    o->has_table = true;
}

static struct object *object_get(struct objects *t, const char *path)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->list[i].path, path) == 0)
            return &t->list[i];
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        struct object *grown = realloc(t->list, cap * sizeof *grown);
        if (!grown)
            return NULL;
        t->list = grown;
        t->cap = cap;
    }
    struct object *o = &t->list[t->n];
    *o = (struct object){0};
    if (!(o->path = strdup(path)))
        return NULL;
    t->n++;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
        && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
                       fd, 0);
        if (m != MAP_FAILED) {
            o->bytes = m;
            o->size = (size_t)st.st_size;
            read_segments(o);
            read_table(o);
        }
    }
    if (fd >= 0)
        close(fd);
    return o;
}

static void objects_free(struct objects *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->list[i].bytes)
            munmap((void *)t->list[i].bytes, t->list[i].size);
        free(t->list[i].path);
    }
    free(t->list);
}

/* The file of a mapping, as `cfisem perf` finds it (perf_map_file),
 * but none for anonymous memory. */
static const char *map_path(const struct perf_map *m, char *buf,
                            size_t size)
{
    if (strncmp(m->path, "//anon", 6) == 0)
        return NULL; /* perf's name for anonymous memory */
    return perf_map_file(m, buf, size);
}

/* ------------------------------------------------------------------ */
/* Processes as the samples see them                                    */
/* ------------------------------------------------------------------ */

/* One mapping of a view, its object resolved, its load bias known when
 * a segment of the file holds its offset. */
struct view_map {
    uint64_t start, end, pgoff;
    const char *path;            /* the file read (the vDSO's copy) */
    const struct perf_map *perf;
    struct object *object;       /* NULL: no file */
    uint64_t bias;
    bool bias_known;
};

/* A process's mappings as they were at some samples (one view per pid
 * and set of mappings), and what each outside unwinder keeps for it. */
struct view {
    uint32_t pid;
    uint64_t generation;
    struct view_map *maps;
    size_t nmaps;
    struct remote_maps *remote[2]; /* each cfisem method's, likewise */
    unw_addr_space_t unw;        /* created at its first sample */
    Dwfl *dwfl;                  /* likewise; NULL after a failure */
    bool dwfl_tried;
    const char *dwfl_error;
};

static void map_bias(struct view_map *m)
{
    const struct object *o = m->object;
    for (size_t i = 0; o && i < o->nloads; i++) {
        const struct segment *s = &o->loads[i];
        if ((s->offset & ~(uint64_t)0xfff) <= m->pgoff
            && m->pgoff < s->offset + s->filesz) {
            m->bias = m->start - (s->vaddr + (m->pgoff - s->offset));
            m->bias_known = true;
            return;
        }
    }
}

static bool view_fill(struct view *v, const struct perf_map **maps,
                      size_t n, struct objects *objects)
{
    v->maps = calloc(n ? n : 1, sizeof *v->maps);
    if (!v->maps)
        return false;
    v->nmaps = n;
    for (size_t i = 0; i < n; i++) {
        char buf[512];
        const char *path = map_path(maps[i], buf, sizeof buf);
        struct view_map *m = &v->maps[i];
        *m = (struct view_map){maps[i]->start, maps[i]->end, maps[i]->pgoff,
                               NULL, maps[i], NULL, 0, false};
        if (path && (m->object = object_get(objects, path))) {
            m->path = m->object->path;
            map_bias(m);
        }
    }
    return true;
}

/* The mapping holding addr: the latest made, as in cfisem perf. */
static const struct view_map *view_find(const struct view *v, uint64_t addr)
{
    for (size_t i = v->nmaps; i-- > 0;)
        if (addr >= v->maps[i].start && addr < v->maps[i].end)
            return &v->maps[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Samples and their memory                                             */
/* ------------------------------------------------------------------ */

/* perf's x86-64 user registers by DWARF number (as cli/perf.c). */
static const unsigned perf_reg_of_dwarf[NREGS] = {
    0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};

struct sample {
    struct view *view;
    uint64_t time;
    uint32_t tid;
    uint64_t regs[NREGS];
    uint64_t known;              /* bit i: regs[i] is known */
    const uint8_t *stack;
    uint64_t sp, stack_len;      /* the copy: [sp, sp + stack_len) */
};

/* What a read of a sample's memory found. */
struct sample_memory {
    const struct sample *sample;
    bool beyond_copy;            /* a read at or past the copy's end */
};

static enum remote_read_result read_memory(struct sample_memory *m,
                                           uint64_t addr, unsigned size,
                                           uint64_t *value)
{
    const struct sample *s = m->sample;
    *value = 0;
    if (perf_stack_read(s->stack, s->stack_len, s->sp, addr, size, value))
        return REMOTE_READ_OK;
    const struct view_map *map = view_find(s->view, addr);
    if (map && map->object && map->object->bytes
        && addr + size <= map->end) {
        uint64_t at = map->pgoff + (addr - map->start);
        if (at <= map->object->size && map->object->size - at >= size) {
            uint8_t bytes[8] = {0};
            memcpy(bytes, map->object->bytes + at, size);
            memcpy(value, bytes, 8);
            return REMOTE_READ_OK;
        }
    }
    if (addr >= s->sp) {
        m->beyond_copy = true;
        return REMOTE_READ_STACK_COPY_EXHAUSTED;
    }
    return REMOTE_READ_UNREADABLE;
}

static enum remote_read_result read_remote(void *data, uint64_t addr,
                                           unsigned size, uint64_t *value)
{
    return read_memory(data, addr, size, value);
}

/* ------------------------------------------------------------------ */
/* Results                                                              */
/* ------------------------------------------------------------------ */

/* Why stacks ended: a method's own words, and whether a read went past
 * the stack copy during the walk. */
struct stop_count {
    const char *reason;
    bool beyond_copy;
    uint64_t count;
};

struct outcome {
    size_t n;                    /* frames */
    const char *reason;
    bool beyond_copy;
    const char *detail;          /* cfisem: the stop's diagnostic, or NULL */
};

struct method;
typedef void unwind_fn(struct method *m, const struct sample *s,
                       uint64_t *pcs, size_t max, struct outcome *out);

struct method {
    const char *name;
    unwind_fn *unwind;
    bool available;
    const char *why_not;
    /* cfisem */
    struct remote_space *space;
    enum engine_id engine;
    unsigned slot;               /* its index in view.remote */
    const struct view *loaded;
    struct remote_frame *frames;
    uint64_t by_interp;          /* compiled: frames interp unwound */
    uint64_t switches;           /* of the space's mappings, a pass */
    uint64_t tables;             /* tables of mappings made */
    /* libdw */
    struct libdw *dw;
    /* the first pass's answers */
    uint64_t *pcs;
    size_t *first;               /* sample k's PCs: pcs[first[k] ..
                                    first[k + 1]) */
    struct outcome *outcomes;    /* sample k's stop */
    struct stop_count stops[MAX_STOPS];
    size_t nstops;
    uint64_t frames_total;
    double first_ns, best_ns;
    bool varied;                 /* a later pass gave other frames */
};

static void count_stop(struct method *m, const struct outcome *o)
{
    for (size_t i = 0; i < m->nstops; i++)
        if (m->stops[i].beyond_copy == o->beyond_copy
            && strcmp(m->stops[i].reason, o->reason) == 0) {
            m->stops[i].count++;
            return;
        }
    if (m->nstops < MAX_STOPS)
        m->stops[m->nstops++] = (struct stop_count){o->reason,
                                                    o->beyond_copy, 1};
}

/* ------------------------------------------------------------------ */
/* cfisem                                                               */
/* ------------------------------------------------------------------ */

/* Makes the view's mappings the space's: made at the view's first
 * sample (an unw_addr_space and a Dwfl are too), switched to after. */
static void load_space(struct method *m, struct view *v)
{
    if (m->loaded == v)
        return;
    m->loaded = v;
    m->switches++;
    struct remote_maps **maps = &v->remote[m->slot];
    if (!*maps && remote_maps_new(m->space, maps) == CFI_OK) {
        m->tables++;
        for (size_t i = 0; i < v->nmaps; i++) {
            const struct view_map *vm = &v->maps[i];
            if (!vm->path)
                continue;
            struct remote_map map = {vm->start, vm->end, vm->pgoff,
                                     vm->path, vm->perf->build_id,
                                     vm->perf->build_id_size};
            remote_maps_add(*maps, &map);
        }
    }
    remote_space_use(m->space, *maps);
}

static void unwind_cfisem(struct method *m, const struct sample *s,
                          uint64_t *pcs, size_t max, struct outcome *out)
{
    struct cfi_regs regs;
    remote_regs_from_mask(&regs, s->regs, s->known);
    load_space(m, s->view);
    struct sample_memory memory = {s, false};
    struct remote_stop stop;
    size_t n = remote_unwind(m->space, &regs, true, read_remote, &memory,
                             m->engine, m->frames, max, &stop);
    for (size_t i = 0; i < n; i++) {
        pcs[i] = m->frames[i].pc;
        m->by_interp += m->engine != ENGINE_interp
                        && m->frames[i].engine == ENGINE_interp;
    }
    *out = (struct outcome){n, remote_stop_name(stop.reason),
                            memory.beyond_copy, stop.diag.message};
}

/* ------------------------------------------------------------------ */
/* libunwind, remote API                                                */
/* ------------------------------------------------------------------ */

struct lu_arg {
    struct sample_memory memory;
};

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip,
                             unw_proc_info_t *pi, int need, void *arg)
{
    struct lu_arg *a = arg;
    const struct view_map *map = view_find(a->memory.sample->view, ip);
    if (!map || !map->object || !map->object->has_table
        || !map->bias_known)
        return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = map->start;
    di.end_ip = map->end;
    di.u.rti.segbase = map->bias + map->object->hdr_vaddr;
    di.u.rti.table_data = di.u.rti.segbase + 12;
    di.u.rti.table_len = map->object->fde_count * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi,
                               void *arg)
{
    (void)as, (void)pi, (void)arg; /* as perf: nothing to release */
}

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr,
                         unw_word_t *value, int write, void *arg)
{
    (void)as;
    struct lu_arg *a = arg;
    uint64_t v;
    if (write)
        return -UNW_EREADONLYREG;
    if (read_memory(&a->memory, addr, 8, &v) != REMOTE_READ_OK)
        return -UNW_EINVAL;
    *value = v;
    return 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t reg,
                         unw_word_t *value, int write, void *arg)
{
    (void)as;
    const struct sample *s = ((struct lu_arg *)arg)->memory.sample;
    if (write || reg < 0 || reg >= NREGS || !(s->known >> reg & 1))
        return -UNW_EBADREG;
    *value = s->regs[reg];
    return 0;
}

static const char *unw_code_name(int code)
{
    switch (-code) {
    case UNW_EUNSPEC: return "UNW_EUNSPEC";
    case UNW_ENOMEM: return "UNW_ENOMEM";
    case UNW_EBADREG: return "UNW_EBADREG";
    case UNW_EREADONLYREG: return "UNW_EREADONLYREG";
    case UNW_ESTOPUNWIND: return "UNW_ESTOPUNWIND";
    case UNW_EINVALIDIP: return "UNW_EINVALIDIP";
    case UNW_EBADFRAME: return "UNW_EBADFRAME";
    case UNW_EINVAL: return "UNW_EINVAL";
    case UNW_EBADVERSION: return "UNW_EBADVERSION";
    case UNW_ENOINFO: return "UNW_ENOINFO";
    default: return "unw_step < 0 (another code)";
    }
}

static void unwind_libunwind(struct method *m, const struct sample *s,
                             uint64_t *pcs, size_t max, struct outcome *out)
{
    (void)m;
    struct view *v = s->view;
    if (!v->unw) {
        static const unw_accessors_t accessors = {
            .find_proc_info = lu_find_proc_info,
            .put_unwind_info = lu_put_unwind_info,
            .get_dyn_info_list_addr = bench_lu_get_dyn_info_list_addr,
            .access_mem = lu_access_mem,
            .access_reg = lu_access_reg,
            .access_fpreg = bench_lu_access_fpreg,
            .resume = bench_lu_resume,
            .get_proc_name = bench_lu_get_proc_name,
        };
        v->unw = unw_create_addr_space((unw_accessors_t *)&accessors, 0);
        if (v->unw)
            unw_set_caching_policy(v->unw, UNW_CACHE_GLOBAL);
    }
    struct lu_arg arg = {{s, false}};
    unw_cursor_t cursor;
    unw_word_t ip;
    *out = (struct outcome){0, "unw_create_addr_space failed", false, NULL};
    if (!v->unw)
        return;
    int ret = unw_init_remote(&cursor, v->unw, &arg);
    if (ret < 0) {
        *out = (struct outcome){0, "unw_init_remote failed", false, NULL};
        return;
    }
    size_t n = 0;
    unw_get_reg(&cursor, UNW_REG_IP, &ip);
    pcs[n++] = ip;
    while (n < max && (ret = unw_step(&cursor)) > 0) {
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        (void)unw_is_signal_frame(&cursor); /* perf asks, to back up */
        pcs[n++] = ip;
    }
    const char *reason = n == max ? "max_frames"
                         : ret == 0 ? "end (unw_step 0)"
                                    : unw_code_name(ret);
    *out = (struct outcome){n, reason, arg.memory.beyond_copy, NULL};
}

/* ------------------------------------------------------------------ */
/* elfutils libdw                                                       */
/* ------------------------------------------------------------------ */

struct libdw {
#define DWFL_POINTER(name, ret, params) ret(*name) params;
    DWFL_FUNCTIONS(DWFL_POINTER)
#undef DWFL_POINTER
    Dwfl_Callbacks callbacks;
    /* The sample dwfl_getthread_frames walks, and what its reads saw. */
    struct sample_memory current;
    uint64_t *pcs;
    size_t n, max;
};

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg,
                          void **thread_arg)
{
    (void)dwfl, (void)tid;
    *thread_arg = arg;
    return true;
}

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
    (void)dwfl;
    if (*thread_arg)
        return 0;
    *thread_arg = arg;
    return (pid_t)((struct libdw *)arg)->current.sample->tid;
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
                           void *arg)
{
    (void)dwfl;
    struct libdw *dw = arg;
    uint64_t v;
    if (read_memory(&dw->current, addr, 8, &v) != REMOTE_READ_OK)
        return false;
    *result = v;
    return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    struct libdw *dw = arg;
    Dwarf_Word regs[NREGS];
    for (unsigned r = 0; r < NREGS; r++)
        regs[r] = dw->current.sample->regs[r];
    return dw->dwfl_thread_state_registers(thread, 0, NREGS, regs);
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
    .next_thread = dw_next_thread,
    .get_thread = dw_get_thread,
    .memory_read = dw_memory_read,
    .set_initial_registers = dw_set_initial_registers,
};

static struct libdw *libdw_load(const char **why_not)
{
    void *handle = dlopen("libdw.so.1", DW_DLOPEN_FLAGS);
    struct libdw *dw = handle ? calloc(1, sizeof *dw) : NULL;
    *why_not = handle ? "out of memory" : "cannot load libdw.so.1";
    if (!dw)
        return NULL;
#define DWFL_RESOLVE(name, ret, params)                                     \
    {                                                                       \
        void *symbol = dlsym(handle, #name);                                \
        if (!symbol) {                                                      \
            *why_not = "libdw.so.1 lacks " #name;                           \
            free(dw);                                                       \
            return NULL;                                                    \
        }                                                                   \
        memcpy(&dw->name, &symbol, sizeof symbol);                          \
    }
    DWFL_FUNCTIONS(DWFL_RESOLVE)
#undef DWFL_RESOLVE
    dw->callbacks.find_elf = dw->dwfl_build_id_find_elf;
    dw->callbacks.find_debuginfo = dw->dwfl_standard_find_debuginfo;
    return dw;
}

/* A process's Dwfl: each file it maps reported once, at its load bias;
 * then its thread state attached. */
static Dwfl *dw_begin(struct libdw *dw, struct view *v)
{
    Dwfl *dwfl = dw->dwfl_begin(&dw->callbacks);
    if (!dwfl)
        return NULL;
    dw->dwfl_report_begin(dwfl);
    for (size_t i = 0; i < v->nmaps; i++) {
        const struct view_map *m = &v->maps[i];
        bool reported = false;
        for (size_t j = 0; j < i && !reported; j++)
            reported = v->maps[j].object == m->object;
        if (!m->object || !m->object->bytes || !m->bias_known || reported)
            continue;
        dw->dwfl_report_elf(dwfl, m->path, m->path, -1, m->bias, false);
    }
    if (dw->dwfl_report_end(dwfl, NULL, NULL) != 0
        || !dw->dwfl_attach_state(dwfl, NULL, (pid_t)v->pid,
                                  &dw_thread_callbacks, dw)) {
        v->dwfl_error = dw->dwfl_errmsg(dw->dwfl_errno());
        dw->dwfl_end(dwfl);
        return NULL;
    }
    return dwfl;
}

static int dw_frame(Dwfl_Frame *state, void *arg)
{
    struct libdw *dw = arg;
    Dwarf_Addr pc;
    bool activation;
    if (dw->n == dw->max || !dw->dwfl_frame_pc(state, &pc, &activation))
        return DWARF_CB_ABORT;
    dw->pcs[dw->n++] = pc;
    return DWARF_CB_OK;
}

static void unwind_libdw(struct method *m, const struct sample *s,
                         uint64_t *pcs, size_t max, struct outcome *out)
{
    struct libdw *dw = m->dw;
    struct view *v = s->view;
    if (!v->dwfl_tried) {
        v->dwfl_tried = true;
        v->dwfl = dw_begin(dw, v);
    }
    if (!v->dwfl) {
        *out = (struct outcome){0, v->dwfl_error ? v->dwfl_error
                                                 : "dwfl_begin failed",
                                false, NULL};
        return;
    }
    dw->current = (struct sample_memory){s, false};
    dw->pcs = pcs;
    dw->n = 0;
    dw->max = max;
    int ret = dw->dwfl_getthread_frames(v->dwfl, (pid_t)s->tid, dw_frame,
                                        dw);
    const char *reason = dw->n == max ? "max_frames"
                         : ret == 0   ? "end (no caller)"
                         : ret > 0    ? "dwfl_frame_pc failed"
                                      : dw->dwfl_errmsg(dw->dwfl_errno());
    *out = (struct outcome){dw->n, reason, dw->current.beyond_copy, NULL};
}

/* ------------------------------------------------------------------ */
/* The samples of the file                                              */
/* ------------------------------------------------------------------ */

struct bench {
    struct perf_file *file;
    struct perf_procs *procs;
    struct objects objects;
    struct view *views;
    size_t nviews, views_cap;
    struct sample *samples;
    size_t nsamples;
    uint64_t no_user_state;      /* samples without registers or stack */
    uint64_t unparsed;
    size_t max_frames;
    bool cpu_time;               /* passes timed in CPU time */
    const struct perf_map *maps[MAX_MAPS]; /* perf_procs_maps_at's */
};

static struct view *view_of(struct bench *b, uint32_t pid, uint64_t key)
{
    const struct perf_map **maps = b->maps;
    size_t n = 0;
    uint64_t generation = 0;
    perf_procs_maps_at(b->procs, pid, key, maps, MAX_MAPS, &n, &generation);
    for (size_t i = b->nviews; i-- > 0;)
        if (b->views[i].pid == pid && b->views[i].generation == generation
            && b->views[i].nmaps == n)
            return &b->views[i];
    if (b->nviews == b->views_cap) {
        size_t cap = b->views_cap ? 2 * b->views_cap : 64;
        struct view *grown = realloc(b->views, cap * sizeof *grown);
        if (!grown)
            return NULL;
        b->views = grown;
        b->views_cap = cap;
    }
    struct view *v = &b->views[b->nviews];
    *v = (struct view){0};
    v->pid = pid;
    v->generation = generation;
    if (!view_fill(v, maps, n, &b->objects))
        return NULL;
    b->nviews++;
    return v;
}

static bool sample_of(struct bench *b, const struct perf_sample *ps,
                      struct sample *s)
{
    *s = (struct sample){0};
    if (!ps->regs || !ps->stack)
        return false;
    for (unsigned d = 0; d < NREGS; d++)
        if (perf_sample_reg(ps, perf_reg_of_dwarf[d], &s->regs[d]))
            s->known |= (uint64_t)1 << d;
    if (!(s->known >> 7 & 1) || !(s->known >> 16 & 1))
        return false;
    s->time = ps->time;
    s->tid = ps->tid;
    s->stack = ps->stack;
    s->sp = s->regs[7];
    s->stack_len = ps->stack_dyn_size;
    (void)b;
    return true;
}

/* Every sample with user registers and a stack copy, in time order, and
 * the view of its process at its time. Views move when their array
 * grows: they are found again by index after. */
static bool read_samples(struct bench *b)
{
    size_t n = 0;
    struct perf_sample_ref *order = perf_samples_in_order(b->procs, b->file,
                                                          &n);
    size_t *view_index = malloc((n + 1) * sizeof *view_index);
    b->samples = malloc((n + 1) * sizeof *b->samples);
    if (!order || !view_index || !b->samples) {
        free(order);
        free(view_index);
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        struct perf_sample ps;
        struct sample *s = &b->samples[b->nsamples];
        if (!perf_sample_parse(b->file, perf_record_at(b->file,
                                                       order[k].index),
                               &ps, NULL)) {
            b->unparsed++;
            continue;
        }
        if (!sample_of(b, &ps, s)) {
            b->no_user_state++;
            continue;
        }
        struct view *v = view_of(b, ps.pid, order[k].key);
        if (!v) {
            free(order);
            free(view_index);
            return false;
        }
        view_index[b->nsamples++] = (size_t)(v - b->views);
    }
    for (size_t i = 0; i < b->nsamples; i++)
        b->samples[i].view = &b->views[view_index[i]];
    free(order);
    free(view_index);
    return true;
}

static void bench_free(struct bench *b, struct libdw *dw)
{
    for (size_t i = 0; i < b->nviews; i++) {
        if (b->views[i].unw)
            unw_destroy_addr_space(b->views[i].unw);
        if (b->views[i].dwfl)
            dw->dwfl_end(b->views[i].dwfl);
        free(b->views[i].maps);
    }
    free(b->views);
    free(b->samples);
    objects_free(&b->objects);
    perf_procs_free(b->procs);
    perf_close(b->file);
}

/* ------------------------------------------------------------------ */
/* The eh_elfs, built cold                                              */
/* ------------------------------------------------------------------ */

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Builds the eh_elf of every ELF file the samples' processes mapped
 * into the empty cache `cache`; returns the wall time in ns. */
static double build_eh_elfs(const struct bench *b, const char *cache,
                            size_t *built, size_t *failed)
{
    double start = bench_now_ns();
    *built = *failed = 0;
    for (size_t i = 0; i < b->objects.n; i++) {
        const struct object *o = &b->objects.list[i];
        struct cfi_file *file;
        struct cfi_diag diag;
        if (o->bytes && (o->size < 4 || memcmp(o->bytes, "\177ELF", 4)))
            continue; /* not an object (ld.so.cache, a data file) */
        if (!o->bytes || cfi_file_open(o->path, &file, &diag) != CFI_OK) {
            fprintf(stderr, "  no eh_elf for %s: %s\n", o->path,
                    o->bytes ? diag.message : "the file cannot be mapped");
            (*failed)++;
            continue;
        }
        struct cg_build_options options = {NULL, 0, true};
        char *path = NULL;
        bool was_built = false;
        if (cg_cached_eh_elf(file, cache, CG_ABI_FULL, &options, &path,
                             &was_built, &diag) != CFI_OK) {
            fprintf(stderr, "  no eh_elf for %s: %s\n", o->path,
                    diag.message);
            (*failed)++;
        }
        *built += was_built;
        free(path);
        cfi_file_close(file);
    }
    return bench_now_ns() - start;
}

/* ------------------------------------------------------------------ */
/* Passes                                                               */
/* ------------------------------------------------------------------ */

/* The clock of the passes: wall time, or the thread's CPU time. */
static double pass_now_ns(const struct bench *b)
{
    if (!b->cpu_time)
        return bench_now_ns();
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One pass over every sample; the first records the answers. Returns
 * the time in ns. */
static double run_pass(struct method *m, const struct bench *b, bool first)
{
    uint64_t *pcs = malloc(b->max_frames * sizeof *pcs);
    if (!pcs)
        return 0;
    size_t at = 0;
    uint64_t frames = 0;
    m->switches = 0;
    double start = pass_now_ns(b);
    for (size_t k = 0; k < b->nsamples; k++) {
        struct outcome out;
        m->unwind(m, &b->samples[k], pcs, b->max_frames, &out);
        frames += out.n;
        if (first) {
            m->first[k] = at;
            m->outcomes[k] = out;
            memcpy(m->pcs + at, pcs, out.n * sizeof *pcs);
            at += out.n;
            count_stop(m, &out);
        }
    }
    double ns = pass_now_ns(b) - start;
    if (first) {
        m->first[b->nsamples] = at;
        m->frames_total = frames;
    } else if (frames != m->frames_total) {
        m->varied = true;
    }
    free(pcs);
    return ns;
}

/* ------------------------------------------------------------------ */
/* Report                                                               */
/* ------------------------------------------------------------------ */

static void print_header(int rounds, bool cpu_time)
{
    printf("| perf.data | method | samples | frames | unwinding ms "
           "(warm, best of %d%s) | ns/frame | ns/sample | × per frame | "
           "× per sample | first pass ms (cold) | stops |\n", rounds,
           cpu_time ? ", CPU time" : "");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static void print_stops(const struct method *m)
{
    for (size_t i = 0; i < m->nstops; i++)
        printf("%s%s%s %" PRIu64, i ? "; " : "", m->stops[i].reason,
               m->stops[i].beyond_copy ? " (after a read past the stack "
                                         "copy)"
                                       : "",
               m->stops[i].count);
}

static void print_row(const char *label, const struct method *m,
                      const struct method *ref, const struct bench *b)
{
    double per_frame = m->frames_total ? m->best_ns / m->frames_total : 0;
    double per_sample = b->nsamples ? m->best_ns / b->nsamples : 0;
    double ref_frame = ref->frames_total ? ref->best_ns / ref->frames_total
                                         : 0;
    double ref_sample = b->nsamples ? ref->best_ns / b->nsamples : 0;
    printf("| %s | %s | %zu | %" PRIu64 " | %.2f | %.1f | %.0f | %.1f | "
           "%.1f | %.2f | ", label, m->name, b->nsamples, m->frames_total,
           m->best_ns / 1e6, per_frame, per_sample,
           ref_frame > 0 ? per_frame / ref_frame : 0,
           ref_sample > 0 ? per_sample / ref_sample : 0, m->first_ns / 1e6);
    print_stops(m);
    printf(" |\n");
}

static const char *object_at(const struct sample *s, uint64_t pc)
{
    const struct view_map *map = view_find(s->view, pc);
    return map && map->path ? map->path : "[no object]";
}

/* Compares a method's PCs with the reference's, sample by sample, up to
 * where the shorter stops. */
static void compare(const struct method *m, const struct method *ref,
                    const struct bench *b, const char *label)
{
    uint64_t same = 0, shorter = 0, longer = 0, differ = 0;
    unsigned shown = 0;
    for (size_t k = 0; k < b->nsamples; k++) {
        const uint64_t *p = m->pcs + m->first[k];
        const uint64_t *q = ref->pcs + ref->first[k];
        size_t np = m->first[k + 1] - m->first[k];
        size_t nq = ref->first[k + 1] - ref->first[k];
        size_t i = 0;
        while (i < np && i < nq && p[i] == q[i])
            i++;
        if (i < np && i < nq) {
            differ++;
            if (shown++ < SHOW_DIFFS)
                fprintf(stderr, "  %s: sample at %" PRIu64 ".%09" PRIu64
                        " (tid %" PRIu32 "), frame %zu: %s 0x%" PRIx64
                        " (%s), %s 0x%" PRIx64 " (%s)\n", label,
                        b->samples[k].time / 1000000000,
                        b->samples[k].time % 1000000000, b->samples[k].tid,
                        i, m->name, p[i], object_at(&b->samples[k], p[i]),
                        ref->name, q[i], object_at(&b->samples[k], q[i]));
        } else if (np == nq) {
            same++;
        } else if (np < nq) {
            shorter++;
        } else if (longer++ < SHOW_DIFFS) {
            const struct outcome *o = &ref->outcomes[k];
            fprintf(stderr, "  %s: sample at %" PRIu64 ".%09" PRIu64
                    " (tid %" PRIu32 "): %s stopped after %zu frames (%s%s%s"
                    ", at 0x%" PRIx64 " in %s), %s went on to 0x%" PRIx64
                    " (%s)\n", label, b->samples[k].time / 1000000000,
                    b->samples[k].time % 1000000000, b->samples[k].tid,
                    ref->name, nq, o->reason, o->detail ? ": " : "",
                    o->detail ? o->detail : "", nq ? q[nq - 1] : 0,
                    nq ? object_at(&b->samples[k], q[nq - 1]) : "-",
                    m->name, p[nq], object_at(&b->samples[k], p[nq]));
        }
    }
    fprintf(stderr, "%s: %s vs %s: %" PRIu64 " samples the same PCs, %"
            PRIu64 " the same up to where %s stopped earlier, %" PRIu64
            " up to where %s stopped earlier, %" PRIu64 " differ at a "
            "frame\n", label, m->name, ref->name, same, shorter, m->name,
            longer, ref->name, differ);
}

/* ------------------------------------------------------------------ */
/* Main                                                                 */
/* ------------------------------------------------------------------ */

struct options {
    const char *path;
    const char *label;
    int rounds;
    bool header;
    size_t max_frames;
    const char *cache;
    bool cpu_time;
};

static bool parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){NULL, NULL, 5, false, 256, NULL, false};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--header")) {
            o->header = true;
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            o->rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--label") && i + 1 < argc) {
            o->label = argv[++i];
        } else if (!strcmp(argv[i], "--cpu-time")) {
            o->cpu_time = true;
        } else if (!strcmp(argv[i], "--cache") && i + 1 < argc) {
            o->cache = argv[++i];
        } else if (!strcmp(argv[i], "--max-frames") && i + 1 < argc) {
            o->max_frames = (size_t)atoi(argv[++i]);
        } else if (argv[i][0] != '-' && !o->path) {
            o->path = argv[i];
        } else {
            return false;
        }
    }
    if (o->rounds < 1 || o->rounds > 1000 || o->max_frames < 1
        || o->max_frames > 100000)
        return false;
    if (!o->label)
        o->label = o->path;
    return o->path || o->header;
}

static bool open_file(struct bench *b, const char *path)
{
    struct perf_diag diag;
    if (perf_open(path, &b->file, &diag)
        && perf_procs_build(b->file, &b->procs, &diag))
        return true;
    if (diag.offset == PERF_NO_OFFSET)
        fprintf(stderr, "perf_unwind: %s: %s\n", path, diag.message);
    else
        fprintf(stderr, "perf_unwind: %s: offset %" PRIu64 ": %s\n", path,
                diag.offset, diag.message);
    return false;
}

static bool method_start(struct method *m, const struct bench *b,
                         const struct remote_options *space_options)
{
    size_t total = b->nsamples * b->max_frames;
    m->first = malloc((b->nsamples + 1) * sizeof *m->first);
    m->outcomes = malloc((b->nsamples + 1) * sizeof *m->outcomes);
    m->pcs = malloc((total ? total : 1) * sizeof *m->pcs);
    if (!m->first || !m->pcs || !m->outcomes)
        return false;
    if (m->unwind == unwind_cfisem) {
        m->frames = malloc(b->max_frames * sizeof *m->frames);
        if (!m->frames
            || remote_space_new(&cfi_arch_x86_64, space_options, &m->space)
                   != CFI_OK)
            return false;
    }
    return true;
}

static void method_free(struct method *m, struct bench *b)
{
    for (size_t i = 0; m->space && i < b->nviews; i++) {
        remote_maps_free(b->views[i].remote[m->slot]);
        b->views[i].remote[m->slot] = NULL;
    }
    remote_space_free(m->space);
    free(m->frames);
    free(m->first);
    free(m->outcomes);
    free(m->pcs);
}

enum { NMETHODS = 4 };

/* The first pass of each method, then `rounds` rounds of one warm pass
 * each, alternating; false when out of memory. */
static bool time_methods(struct method *methods, const struct bench *b,
                         int rounds, const struct remote_options *space)
{
    for (int i = 0; i < NMETHODS; i++) {
        struct method *m = &methods[i];
        if (!m->available)
            continue;
        if (!method_start(m, b, space))
            return false;
        m->first_ns = run_pass(m, b, true);
        m->best_ns = m->first_ns;
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NMETHODS; i++) {
            struct method *m = &methods[i];
            if (!m->available)
                continue;
            double ns = run_pass(m, b, false);
            if (r == 0 || ns < m->best_ns)
                m->best_ns = ns;
        }
    return true;
}

static void report_methods(const struct method *methods,
                           const struct bench *b, const char *label)
{
    for (int i = 0; i < NMETHODS; i++) {
        const struct method *m = &methods[i];
        if (!m->available) {
            printf("| %s | %s | — | — | — | — | — | — | — | — | not run: "
                   "%s |\n", label, m->name, m->why_not);
            continue;
        }
        print_row(label, m, &methods[0], b);
        if (m->varied)
            fprintf(stderr, "%s: %s gave other frame counts in later "
                    "passes\n", label, m->name);
        if (m->unwind == unwind_cfisem)
            fprintf(stderr, "%s: %s: the space's mappings switched %"
                    PRIu64 " times a pass (the sample's process or its "
                    "mappings changed, as in cfisem perf), among %" PRIu64
                    " tables of mappings made in the first pass\n", label,
                    m->name, m->switches, m->tables);
        if (i > 0)
            compare(m, &methods[0], b, label);
    }
    fprintf(stderr, "%s: cfisem eh_elf: %" PRIu64 " frames of the first "
            "pass unwound by interp (objects without an eh_elf)\n", label,
            methods[0].by_interp);
}

/* The eh_elf method is cfisem perf's default: the space's engine
 * (ENGINE_COUNT), compiled, falling back to interp for an object whose
 * eh_elf cannot be had. */
static int run(const struct options *o, struct bench *b, const char *cache)
{
    const char *why_not;
    struct libdw *dw = libdw_load(&why_not);
    struct remote_options space_options = {ENGINE_compiled, cache, true};
    struct method methods[NMETHODS] = {
        {.name = "cfisem eh_elf", .unwind = unwind_cfisem,
         .engine = ENGINE_COUNT, .available = true},
        {.name = "cfisem interp", .unwind = unwind_cfisem,
         .engine = ENGINE_interp, .available = true, .slot = 1},
        {.name = "libunwind (perf's way)", .unwind = unwind_libunwind,
         .available = true},
        {.name = "libdw (perf 7's way)", .unwind = unwind_libdw,
         .available = dw != NULL, .why_not = why_not, .dw = dw},
    };
    size_t built, failed;
    double build_ns = build_eh_elfs(b, cache, &built, &failed);
    fprintf(stderr, "%s: %zu samples (%" PRIu64 " without user registers "
            "or stack, %" PRIu64 " unparsable), %zu processes' views, %zu "
            "objects; eh_elfs built cold: %zu (%zu could not be) in %.1f "
            "ms\n", o->label, b->nsamples, b->no_user_state, b->unparsed,
            b->nviews, b->objects.n, built, failed, build_ns / 1e6);
    int status = 0;
    if (time_methods(methods, b, o->rounds, &space_options)) {
        report_methods(methods, b, o->label);
    } else {
        fprintf(stderr, "perf_unwind: out of memory\n");
        status = 70;
    }
    for (int i = 0; i < NMETHODS; i++)
        method_free(&methods[i], b);
    bench_free(b, dw);
    free(dw);
    return status;
}

int main(int argc, char **argv)
{
    struct options o;
    if (!parse(argc, argv, &o)) {
        fprintf(stderr, "usage: perf_unwind PERF.DATA [--rounds N] "
                "[--label TEXT] [--header] [--max-frames N] "
                "[--cache DIR] [--cpu-time]\n");
        return 64;
    }
    if (o.header)
        print_header(o.rounds, o.cpu_time);
    if (!o.path)
        return 0;
    struct bench *b = calloc(1, sizeof *b);
    if (!b)
        return 70;
    b->max_frames = o.max_frames;
    b->cpu_time = o.cpu_time;
    if (!open_file(b, o.path) || !read_samples(b)) {
        bench_free(b, NULL);
        free(b);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/perf_unwind-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (o.cache) {
        int status = run(&o, b, o.cache);
        free(b);
        return status;
    }
    if (!mkdtemp(cache)) {
        fprintf(stderr, "perf_unwind: cannot make a cache folder\n");
        bench_free(b, NULL);
        free(b);
        return 70;
    }
    int status = run(&o, b, cache);
    free(b);
    nftw(cache, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    fflush(stdout);
    return status;
}
