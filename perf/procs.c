/* SPDX-License-Identifier: MIT */
/* procs.c — every process's object table as it changes with time, made
 * once per file from its MMAP, MMAP2, FORK, COMM and EXIT records. */
#include "perf/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MISC_COMM_EXEC (1u << 13)
#define MISC_MMAP_BUILD_ID (1u << 14)
#define LIVE UINT64_MAX

struct comm {
    uint32_t tid;
    uint64_t from;
    const char *name;
};

struct proc {
    uint32_t pid;
    struct perf_map *maps;        /* in the order made */
    size_t nmaps, maps_cap;
    uint64_t *changes;            /* keys at which the live set changed */
    size_t nchanges, changes_cap;
};

struct perf_procs {
    bool by_time;                 /* keys are times, else record indexes */
    struct proc *procs;           /* sorted by pid after the build */
    size_t nprocs, procs_cap;
    struct comm *comms;           /* sorted by (tid, from) after */
    size_t ncomms, comms_cap;
};

/* A record of the replay: its key and index (the order). */
struct event {
    uint64_t key;
    size_t index;
};

static struct proc *find(struct perf_procs *p, uint32_t pid)
{
    for (size_t i = p->nprocs; i-- > 0;)
        if (p->procs[i].pid == pid)
            return &p->procs[i];
    return NULL;
}

static struct proc *get(struct perf_procs *p, uint32_t pid)
{
    struct proc *proc = find(p, pid);
    if (proc)
        return proc;
    if (!perf_grow(&p->procs, &p->procs_cap, p->nprocs, sizeof *p->procs))
        return NULL;
    proc = &p->procs[p->nprocs++];
    *proc = (struct proc){0};
    proc->pid = pid;
    return proc;
}

static bool changed(struct proc *proc, uint64_t key)
{
    if (proc->nchanges && proc->changes[proc->nchanges - 1] == key)
        return true;
    if (!perf_grow(&proc->changes, &proc->changes_cap, proc->nchanges,
                   sizeof *proc->changes))
        return false;
    proc->changes[proc->nchanges++] = key;
    return true;
}

static bool add_map(struct proc *proc, const struct perf_map *map)
{
    if (!perf_grow(&proc->maps, &proc->maps_cap, proc->nmaps,
                   sizeof *proc->maps))
        return false;
    proc->maps[proc->nmaps++] = *map;
    return true;
}

static void close_all(struct proc *proc, uint64_t key)
{
    for (size_t i = 0; i < proc->nmaps; i++)
        if (proc->maps[i].to == LIVE)
            proc->maps[i].to = key;
}

static bool add_comm(struct perf_procs *p, uint32_t tid, uint64_t key,
                     const char *name)
{
    if (!perf_grow(&p->comms, &p->comms_cap, p->ncomms, sizeof *p->comms))
        return false;
    p->comms[p->ncomms++] = (struct comm){tid, key, name};
    return true;
}

/* The latest name of `tid` during the build (the comms are in key
 * order then). */
static const char *comm_now(const struct perf_procs *p, uint32_t tid)
{
    for (size_t i = p->ncomms; i-- > 0;)
        if (p->comms[i].tid == tid)
            return p->comms[i].name;
    return NULL;
}

/* A string field from `at` to the record's end, which must hold a NUL. */
static const char *string_in(const struct perf_record *r, size_t at)
{
    if (at >= r->size || !memchr(r->data + at, 0, r->size - at))
        return NULL;
    return (const char *)r->data + at;
}

/* MMAP: u32 pid, tid; u64 addr, len, pgoff; char filename[].
 * MMAP2: the same, then {u32 maj, min; u64 ino, ino_generation} or, with
 * PERF_RECORD_MISC_MMAP_BUILD_ID, {u8 build_id_size; u8, u16 reserved;
 * u8 build_id[20]}; u32 prot, flags; char filename[]. */
static bool on_mmap(struct perf_procs *p, const struct perf_record *r,
                    uint64_t key, struct perf_diag *diag)
{
    bool v2 = r->type == PERF_REC_MMAP2;
    size_t name_at = v2 ? 8 + 64 : 8 + 32;
    const char *path = string_in(r, name_at);
    if (!path)
        return perf_fail(diag, r->offset, "mmap record without a file "
                                          "name");
    const uint8_t *b = r->data + 8;
    struct perf_map map = {perf_u64_at(b + 8), 0, perf_u64_at(b + 24), path,
                           NULL, 0, key, LIVE};
    uint64_t len = perf_u64_at(b + 16);
    if (len == 0 || map.start > UINT64_MAX - len)
        return perf_fail(diag, r->offset, "mmap record's range is empty or "
                                          "wraps");
    map.end = map.start + len;
    if (v2 && (r->misc & MISC_MMAP_BUILD_ID)) {
        map.build_id_size = b[32];
        map.build_id = b + 36;
        if (map.build_id_size > 20)
            return perf_fail(diag, r->offset, "mmap record's build-id is "
                                              "longer than 20 bytes");
    }
    struct proc *proc = get(p, perf_u32_at(b));
    if (!proc || !add_map(proc, &map) || !changed(proc, key))
        return perf_fail(diag, r->offset, "out of memory");
    return true;
}

/* FORK, EXIT: u32 pid, ppid, tid, ptid; u64 time. A new process (pid !=
 * ppid) gets a copy of its parent's live mappings; a new thread only its
 * parent thread's name. A process ends when its main thread exits. */
static bool on_fork_exit(struct perf_procs *p, const struct perf_record *r,
                         uint64_t key, struct perf_diag *diag)
{
    if (r->size < 8 + 24)
        return perf_fail(diag, r->offset, "fork or exit record too short");
    const uint8_t *b = r->data + 8;
    uint32_t pid = perf_u32_at(b), ppid = perf_u32_at(b + 4);
    uint32_t tid = perf_u32_at(b + 8), ptid = perf_u32_at(b + 12);
    if (r->type == PERF_REC_EXIT) {
        struct proc *proc = find(p, pid);
        if (proc && pid == tid) {
            /* Samples at the exit's own time still see the maps. */
            close_all(proc, key == LIVE - 1 ? key : key + 1);
            if (!changed(proc, key + 1))
                return perf_fail(diag, r->offset, "out of memory");
        }
        return true;
    }
    const char *name = comm_now(p, ptid);
    if (name && !add_comm(p, tid, key, name))
        return perf_fail(diag, r->offset, "out of memory");
    if (pid == ppid)
        return true;
    struct proc *child = get(p, pid);
    if (!child)
        return perf_fail(diag, r->offset, "out of memory");
    close_all(child, key);
    struct proc *parent = find(p, ppid);
    /* get() may have moved the array: find the parent after. */
    for (size_t i = 0; parent && i < parent->nmaps; i++) {
        struct perf_map map = parent->maps[i];
        if (map.to != LIVE)
            continue;
        map.from = key;
        if (!add_map(child, &map))
            return perf_fail(diag, r->offset, "out of memory");
    }
    if (!changed(child, key))
        return perf_fail(diag, r->offset, "out of memory");
    return true;
}

/* COMM: u32 pid, tid; char comm[]; PERF_RECORD_MISC_COMM_EXEC when the
 * name comes from an exec, which replaces the process's mappings. */
static bool on_comm(struct perf_procs *p, const struct perf_record *r,
                    uint64_t key, struct perf_diag *diag)
{
    const char *name = string_in(r, 16);
    if (!name)
        return perf_fail(diag, r->offset, "comm record without a name");
    uint32_t pid = perf_u32_at(r->data + 8), tid = perf_u32_at(r->data + 12);
    if (!add_comm(p, tid, key, name))
        return perf_fail(diag, r->offset, "out of memory");
    if (r->misc & MISC_COMM_EXEC) {
        struct proc *proc = get(p, pid);
        if (!proc || !changed(proc, key))
            return perf_fail(diag, r->offset, "out of memory");
        close_all(proc, key);
    }
    return true;
}

static int by_key(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_pid(const void *a, const void *b)
{
    const struct proc *x = a, *y = b;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_tid(const void *a, const void *b)
{
    const struct comm *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

static bool has_times(const struct perf_file *file)
{
    for (size_t i = 0; i < file->nattrs; i++)
        if (!file->attrs[i].sample_id_all
            || !(file->attrs[i].sample_type & PERF_S_TIME))
            return false;
    return true;
}

uint64_t perf_procs_key(const struct perf_procs *procs,
                        const struct perf_file *file, size_t index)
{
    const struct perf_record *r = &file->records[index];
    if (!procs->by_time)
        return index;
    if (r->type == PERF_REC_SAMPLE) {
        struct perf_sample s;
        if (perf_sample_parse(file, r, &s, NULL))
            return s.time;
        return 0;
    }
    struct perf_sample_id id;
    if (perf_record_sample_id(file, r, &id) && id.time_known)
        return id.time;
    return 0;
}

static bool is_process_record(uint32_t type)
{
    return type == PERF_REC_MMAP || type == PERF_REC_MMAP2
           || type == PERF_REC_FORK || type == PERF_REC_EXIT
           || type == PERF_REC_COMM;
}

static bool replay(struct perf_procs *p, const struct perf_file *file,
                   const struct event *ev, size_t n, struct perf_diag *diag)
{
    for (size_t i = 0; i < n; i++) {
        const struct perf_record *r = &file->records[ev[i].index];
        bool ok;
        if (r->type == PERF_REC_MMAP || r->type == PERF_REC_MMAP2)
            ok = on_mmap(p, r, ev[i].key, diag);
        else if (r->type == PERF_REC_COMM)
            ok = on_comm(p, r, ev[i].key, diag);
        else
            ok = on_fork_exit(p, r, ev[i].key, diag);
        if (!ok)
            return false;
    }
    return true;
}

/* The file's build-ids for the mappings that have none, by path. */
static void attach_build_ids(struct perf_procs *p,
                             const struct perf_file *file)
{
    for (size_t i = 0; i < p->nprocs; i++)
        for (size_t j = 0; j < p->procs[i].nmaps; j++) {
            struct perf_map *m = &p->procs[i].maps[j];
            for (size_t k = 0; !m->build_id && k < file->nbuild_ids; k++)
                if (strcmp(file->build_ids[k].path, m->path) == 0) {
                    m->build_id = file->build_ids[k].id;
                    m->build_id_size = file->build_ids[k].size;
                }
        }
}

bool perf_procs_build(const struct perf_file *file, struct perf_procs **out,
                      struct perf_diag *diag)
{
    struct perf_procs *p = calloc(1, sizeof *p);
    struct event *ev = malloc((file->nrecords + 1) * sizeof *ev);
    if (!p || !ev) {
        free(p);
        free(ev);
        return perf_fail(diag, PERF_NO_OFFSET, "out of memory");
    }
    p->by_time = has_times(file);
    size_t n = 0;
    for (size_t i = 0; i < file->nrecords; i++)
        if (is_process_record(file->records[i].type))
            ev[n++] = (struct event){perf_procs_key(p, file, i), i};
    qsort(ev, n, sizeof *ev, by_key);
    bool ok = replay(p, file, ev, n, diag);
    free(ev);
    if (!ok) {
        perf_procs_free(p);
        return false;
    }
    qsort(p->procs, p->nprocs, sizeof *p->procs, by_pid);
    qsort(p->comms, p->ncomms, sizeof *p->comms, by_tid);
    attach_build_ids(p, file);
    *out = p;
    return true;
}

void perf_procs_free(struct perf_procs *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nprocs; i++) {
        free(p->procs[i].maps);
        free(p->procs[i].changes);
    }
    free(p->procs);
    free(p->comms);
    free(p);
}

size_t perf_procs_count(const struct perf_procs *p) { return p->nprocs; }

static const struct proc *lookup(const struct perf_procs *p, uint32_t pid)
{
    size_t lo = 0, hi = p->nprocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->procs[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nprocs && p->procs[lo].pid == pid ? &p->procs[lo] : NULL;
}

const char *perf_map_file(const struct perf_map *map, char *buf,
                          size_t size)
{
    if (map->path[0] == '/')
        return map->path;
    const char *home = getenv("HOME");
    if (strcmp(map->path, "[vdso]") != 0 || !map->build_id || !home)
        return NULL;
    char hex[41] = "";
    for (unsigned i = 0; i < map->build_id_size && i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", map->build_id[i]);
    snprintf(buf, size, "%s/.debug/[vdso]/%s/vdso", home, hex);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

static int by_order(const void *a, const void *b)
{
    const struct perf_sample_ref *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

struct perf_sample_ref *perf_samples_in_order(const struct perf_procs *procs,
                                              const struct perf_file *file,
                                              size_t *n)
{
    size_t total = perf_record_count(file);
    struct perf_sample_ref *order = malloc((total + 1) * sizeof *order);
    *n = 0;
    if (!order)
        return NULL;
    for (size_t i = 0; i < total; i++)
        if (perf_record_at(file, i)->type == PERF_REC_SAMPLE)
            order[(*n)++] = (struct perf_sample_ref){
                perf_procs_key(procs, file, i), i};
    qsort(order, *n, sizeof *order, by_order);
    return order;
}

bool perf_procs_maps_at(const struct perf_procs *p, uint32_t pid,
                        uint64_t key, const struct perf_map **maps,
                        size_t max, size_t *n, uint64_t *generation)
{
    const struct proc *proc = lookup(p, pid);
    *n = 0;
    if (!proc)
        return false;
    size_t lo = 0, hi = proc->nchanges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (proc->changes[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *generation = ((uint64_t)(proc - p->procs + 1) << 32) | lo;
    for (size_t i = 0; i < proc->nmaps && *n < max; i++) {
        const struct perf_map *m = &proc->maps[i];
        if (m->from <= key && key < m->to)
            maps[(*n)++] = m;
    }
    return true;
}

const char *perf_procs_comm(const struct perf_procs *p, uint32_t tid,
                            uint64_t key)
{
    size_t lo = 0, hi = p->ncomms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->comms[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The name at `key`, or the first one for a sample before any. */
    const char *name = NULL;
    for (size_t i = lo; i < p->ncomms && p->comms[i].tid == tid; i++)
        if (p->comms[i].from <= key || !name)
            name = p->comms[i].name;
    return name ? name : "[unknown]";
}
