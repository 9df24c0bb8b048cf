/* SPDX-License-Identifier: MIT */
/* batch.c — diff_run_batch (batch.h). */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include "batch.h"
#include "harness_internal.h"
#include "merge.h"
#include "report.h"
#include "cfi/sha256.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* What a stored result must have been made by                         */
/* ------------------------------------------------------------------ */

struct build_id {
    char hex[2 * 64 + 1];
};

static void note_build_id(const uint8_t *p, size_t size, struct build_id *id)
{
    while (size >= sizeof(ElfW(Nhdr))) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
        size_t name = (n->n_namesz + 3) & ~(size_t)3;
        size_t desc = (n->n_descsz + 3) & ~(size_t)3;
        size_t whole = sizeof *n + name + desc;
        if (whole > size)
            return;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
            !memcmp(p + sizeof *n, "GNU", 4) && n->n_descsz <= 64)
            for (size_t i = 0; i < n->n_descsz; i++)
                snprintf(id->hex + 2 * i, 3, "%02x",
                         p[sizeof *n + name + i]);
        p += whole;
        size -= whole;
    }
}

static void object_build_id(const struct dl_phdr_info *info,
                            struct build_id *id)
{
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            note_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
                          ph->p_memsz, id);
    }
}

/* The first object dl_iterate_phdr gives is the program itself. */
static int program_notes(struct dl_phdr_info *info, size_t size, void *env)
{
    (void)size;
    object_build_id(info, env);
    return 1;
}

struct build_text {
    char *out;
    size_t size, used;
};

/* "NAME ID" of one loaded object (its file name, its build ID or "-"),
 * but for the kernel's vDSO, which is no file of this machine's. */
static int object_build(struct dl_phdr_info *info, size_t size, void *env)
{
    struct build_text *t = env;
    char exe[PATH_MAX];
    const char *name = info->dlpi_name;
    (void)size;
    if (t->used == 0) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        name = n > 0 ? exe : "program";
    } else if (!name || !*name || !strncmp(name, "linux-vdso", 10)) {
        return 0;
    }
    const char *slash = strrchr(name, '/');
    struct build_id id = {""};
    object_build_id(info, &id);
    int n = snprintf(t->out + t->used, t->size - t->used, "%s%s %s",
                     t->used ? "; " : "", slash ? slash + 1 : name,
                     id.hex[0] ? id.hex : "-");
    if (n > 0 && (size_t)n < t->size - t->used)
        t->used += (size_t)n;
    return 0;
}

void diff_build_describe(char *out, size_t size)
{
    struct build_text t = {out, size, 0};
    if (size == 0)
        return;
    out[0] = 0;
    dl_iterate_phdr(object_build, &t);
}

/* The key of a stored result: the settings that make it, and this
 * program (its build ID; without one, its size and time) and its
 * libraries'. */
static void settings_key(const struct diff_config *c, char key[17])
{
    struct build_id id = {""};
    dl_iterate_phdr(program_notes, &id);
    struct stat st;
    if (!id.hex[0] && stat("/proc/self/exe", &st) == 0)
        snprintf(id.hex, sizeof id.hex, "%lld-%lld", (long long)st.st_size,
                 (long long)st.st_mtime);
    char text[1024];
    int n = snprintf(text, sizeof text, "%s\n%s\n%" PRIu64 " %u %d %zu\n%s\n%s\n",
                     c->producer ? c->producer : "", id.hex, c->seed,
                     c->nstates, c->all_pcs, c->keep,
                     c->pcs_name ? c->pcs_name : "",
                     c->engine_config.eh_elf_path ? c->engine_config.eh_elf_path
                                                  : "");
    struct cfi_sha256 s;
    cfi_sha256_init(&s);
    cfi_sha256_add(&s, text, n > 0 ? (size_t)n : 0);
    cfi_sha256_add(&s, c->engines, sizeof c->engines);
    cfi_sha256_add(&s, c->faults, c->nfaults * sizeof c->faults[0]);
    /* The libraries' build IDs too, when the run says them. */
    if (c->build)
        cfi_sha256_add(&s, c->build, strlen(c->build));
    /* The debug directories, in order, when debug files are looked for;
     * nothing when not, so that keys stored before stay valid. */
    const struct cfi_debug_search *search = c->debug_search;
    for (size_t i = 0; search && i < search->ndirs; i++)
        cfi_sha256_add(&s, search->dirs[i], strlen(search->dirs[i]) + 1);
    if (search)
        cfi_sha256_add(&s, CFI_DEBUG_DIR, sizeof CFI_DEBUG_DIR);
    char hex[CFI_SHA256_HEX];
    cfi_sha256_hex(&s, hex);
    memcpy(key, hex, 16);
    key[16] = 0;
}

/* ------------------------------------------------------------------ */
/* The results folder                                                   */
/* ------------------------------------------------------------------ */

static bool stored_path(const char *dir, const char *sha, const char *key,
                        char *out, size_t size)
{
    return snprintf(out, size, "%s/%s-%s.json", dir, sha, key) < (int)size;
}

/* Written under a temporary name, then renamed: a run stopped while it
 * writes leaves no half result. */
static bool store(const char *path, const struct diff_run *part)
{
    char tmp[PATH_MAX + 192];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >=
        (int)sizeof tmp)
        return false;
    FILE *out = fopen(tmp, "w");
    if (!out)
        return false;
    diff_report_json(out, part);
    bool ok = fclose(out) == 0 && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    return ok;
}

/* ------------------------------------------------------------------ */
/* One file                                                             */
/* ------------------------------------------------------------------ */

struct batch_run {
    const struct diff_config *outer;
    const struct diff_batch *batch;
    const char *const *paths;
    size_t npaths;
    struct diff_run **parts;
    char (*sha)[CFI_SHA256_HEX];   /* "" when it could not be read */
    char key[17];
    double started;
    uint64_t requests_before;       /* of the files done */
    size_t current;
    struct diff_batch_counts *counts;
};

static void shifted_progress(void *env, const struct diff_progress *p)
{
    const struct batch_run *b = env;
    struct diff_progress whole = *p;
    whole.files_done = b->current + p->files_done;
    whole.files = b->npaths;
    whole.requests_done = b->requests_before + p->requests_done;
    whole.seconds = diff_harness_now() - b->started;
    b->outer->progress(b->outer->progress_env, &whole);
}

/* A copy of an earlier part, as the result of file i. */
static struct diff_run *same_as(struct batch_run *b, size_t i, size_t earlier)
{
    size_t bad;
    char why[160];
    struct diff_run *copy;
    if (diff_run_merge(&b->parts[earlier], 1, &copy, &bad, why,
                       sizeof why) != CFI_OK)
        return NULL;
    copy->files[0].path = diff_harness_keep_string(copy, b->paths[i]);
    if (!copy->files[0].path) {
        diff_run_free(copy);
        return NULL;
    }
    return copy;
}

/* The stored result of file i, when there is one that fits. */
static struct diff_run *read_stored(struct batch_run *b, size_t i,
                                    const char *path)
{
    struct diff_run *part;
    char why[256];
    if (access(path, R_OK) != 0 ||
        diff_run_read_json(path, &part, why, sizeof why) != CFI_OK)
        return NULL;
    if (part->nfiles != 1 || part->files_total != 1 ||
        !(part->files[0].path = diff_harness_keep_string(part, b->paths[i]))) {
        diff_run_free(part);
        return NULL;
    }
    return part;
}

static struct diff_run *run_one(struct batch_run *b, size_t i)
{
    struct diff_config config = *b->outer;
    if (config.progress) {
        config.progress = shifted_progress;
        config.progress_env = b;
    }
    struct diff_run *part;
    enum cfi_status status =
        b->batch->isolate ? diff_run_isolated(&config, &b->paths[i], 1, &part)
                          : diff_run(&config, &b->paths[i], 1, &part);
    if (status != CFI_OK)
        return NULL;
    part->config.progress = NULL;
    part->config.progress_env = NULL;
    return part;
}

static struct diff_run *result_of(struct batch_run *b, size_t i)
{
    for (size_t j = 0; b->sha[i][0] && j < i; j++)
        if (!strcmp(b->sha[i], b->sha[j])) {
            b->counts->same_contents++;
            return same_as(b, i, j);
        }
    char stored[PATH_MAX + 128];
    bool storable = b->batch->results_dir && b->sha[i][0] &&
                    stored_path(b->batch->results_dir, b->sha[i], b->key,
                                stored, sizeof stored);
    struct diff_run *part = storable ? read_stored(b, i, stored) : NULL;
    if (part) {
        b->counts->stored++;
        return part;
    }
    part = run_one(b, i);
    b->counts->ran++;
    if (part && storable && !store(stored, part))
        b->counts->store_failures++;
    return part;
}

/* ------------------------------------------------------------------ */
/* Files in parallel                                                    */
/* ------------------------------------------------------------------ */

/* With jobs > 1 and isolation, up to `jobs` files run at once, each in a
 * child of the batch that runs it (isolated as usual) and writes its
 * result as JSON: to the results folder, or to a scratch folder. The
 * parent reads the results back, so that what it merges is the same as
 * with one file at a time. */
struct slot {
    pid_t pid;
    size_t file;
    char json[PATH_MAX + 192];
};

static _Noreturn void file_child(struct batch_run *b, size_t i,
                                 const char *json)
{
    struct diff_config quiet = *b->outer;
    quiet.progress = NULL;
    const struct diff_config *outer = b->outer;
    b->outer = &quiet;
    struct diff_run *part = run_one(b, i);
    b->outer = outer;
    _exit(part && store(json, part) ? 0 : 1);
}

static bool start_file(struct batch_run *b, size_t i, const char *scratch,
                       struct slot *slot)
{
    slot->file = i;
    if (b->batch->results_dir && b->sha[i][0])
        stored_path(b->batch->results_dir, b->sha[i], b->key, slot->json,
                    sizeof slot->json);
    else
        snprintf(slot->json, sizeof slot->json, "%s/%zu.json", scratch, i);
    fflush(NULL);
    slot->pid = fork();
    if (slot->pid == 0)
        file_child(b, i, slot->json);
    return slot->pid > 0;
}

static void progress_done(struct batch_run *b, size_t done, size_t i)
{
    if (!b->outer->progress)
        return;
    struct diff_progress p = {done,
                              b->npaths,
                              b->requests_before,
                              diff_harness_now() - b->started,
                              NULL,
                              b->paths[i]};
    b->outer->progress(b->outer->progress_env, &p);
}

/* The result of a child, read back; else the file run here. */
static struct diff_run *finish_file(struct batch_run *b, struct slot *slot,
                                    int wait_status)
{
    struct diff_run *part = NULL;
    if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
        part = read_stored(b, slot->file, slot->json);
    if (!b->batch->results_dir || !b->sha[slot->file][0])
        unlink(slot->json);
    if (!part)
        part = run_one(b, slot->file);
    b->counts->ran++;
    return part;
}

/* The file an earlier file has the contents of, or SIZE_MAX. */
static size_t first_with_contents(const struct batch_run *b, size_t i)
{
    for (size_t j = 0; b->sha[i][0] && j < i; j++)
        if (!strcmp(b->sha[i], b->sha[j]))
            return j;
    return SIZE_MAX;
}

static bool reap_one(struct batch_run *b, struct slot *slots, size_t nslots,
                     size_t *running, size_t *done)
{
    int wait_status;
    pid_t pid = waitpid(-1, &wait_status, 0);
    if (pid < 0)
        return errno == EINTR;
    for (size_t k = 0; k < nslots; k++) {
        if (slots[k].pid != pid)
            continue;
        slots[k].pid = 0;
        (*running)--;
        size_t i = slots[k].file;
        b->parts[i] = finish_file(b, &slots[k], wait_status);
        if (!b->parts[i])
            return false;
        b->requests_before += b->parts[i]->requests;
        progress_done(b, ++*done, i);
    }
    return true;
}

struct sized {
    size_t file;
    off_t size;
};

static int larger_first(const void *a, const void *b)
{
    const struct sized *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->file < y->file ? -1 : x->file > y->file;
}

/* The files by size, largest first: started in that order, the last
 * ones to end are small, and the slots stay busy to the end. */
static size_t *largest_first(const struct batch_run *b)
{
    struct sized *sized = calloc(b->npaths, sizeof *sized);
    size_t *order = calloc(b->npaths, sizeof *order);
    for (size_t i = 0; sized && order && i < b->npaths; i++) {
        struct stat st;
        sized[i] = (struct sized){i, stat(b->paths[i], &st) == 0 ? st.st_size : 0};
    }
    if (sized && order) {
        qsort(sized, b->npaths, sizeof *sized, larger_first);
        for (size_t i = 0; i < b->npaths; i++)
            order[i] = sized[i].file;
    }
    free(sized);
    if (!sized) {
        free(order);
        return NULL;
    }
    return order;
}

/* Every file of first contents not stored yet, `jobs` at a time. */
static bool run_parallel(struct batch_run *b, unsigned jobs, const char *scratch)
{
    struct slot *slots = calloc(jobs, sizeof *slots);
    size_t *order = largest_first(b);
    size_t running = 0, done = b->counts->stored;
    bool ok = slots && order;
    for (size_t n = 0; ok && n < b->npaths; n++) {
        size_t i = order[n];
        if (b->parts[i] || first_with_contents(b, i) != SIZE_MAX)
            continue;
        while (ok && running == jobs)
            ok = reap_one(b, slots, jobs, &running, &done);
        size_t k = 0;
        while (k < jobs && slots[k].pid)
            k++;
        if (ok && k < jobs && start_file(b, i, scratch, &slots[k]))
            running++;
        else if (ok)
            ok = (b->parts[i] = run_one(b, i)) != NULL;
    }
    while (running > 0 && ok)
        ok = reap_one(b, slots, jobs, &running, &done);
    free(slots);
    free(order);
    return ok;
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

/* The digests, and the results the folder has already. */
static void read_known(struct batch_run *b)
{
    for (size_t i = 0; i < b->npaths; i++) {
        struct cfi_diag diag;
        if (cfi_sha256_file(b->paths[i], b->sha[i], &diag) != CFI_OK)
            b->sha[i][0] = 0;   /* the run says what is wrong with it */
        char stored[PATH_MAX + 128];
        if (b->batch->results_dir && b->sha[i][0] &&
            first_with_contents(b, i) == SIZE_MAX &&
            stored_path(b->batch->results_dir, b->sha[i], b->key, stored,
                        sizeof stored) &&
            (b->parts[i] = read_stored(b, i, stored)) != NULL)
            b->counts->stored++;
    }
}

/* The files of the same contents as an earlier one. */
static bool fill_copies(struct batch_run *b)
{
    for (size_t i = 0; i < b->npaths; i++) {
        size_t j = first_with_contents(b, i);
        if (j == SIZE_MAX || b->parts[i])
            continue;
        b->counts->same_contents++;
        if (!b->parts[j] || !(b->parts[i] = same_as(b, i, j)))
            return false;
    }
    return true;
}

static bool run_all(struct batch_run *b)
{
    unsigned jobs = b->outer->jobs ? b->outer->jobs : 1;
    if (jobs > 1 && b->batch->isolate) {
        read_known(b);
        char scratch[] = "/tmp/cfisem-diff-XXXXXX";
        if (!mkdtemp(scratch))
            return false;
        bool ok = run_parallel(b, jobs, scratch) && fill_copies(b);
        rmdir(scratch);
        return ok;
    }
    for (size_t i = 0; i < b->npaths; i++) {
        struct cfi_diag diag;
        if (cfi_sha256_file(b->paths[i], b->sha[i], &diag) != CFI_OK)
            b->sha[i][0] = 0;   /* the run says what is wrong with it */
        b->current = i;
        b->parts[i] = result_of(b, i);
        if (!b->parts[i])
            return false;
        b->requests_before += b->parts[i]->requests;
    }
    return true;
}

static struct diff_run *merge_all(struct batch_run *b)
{
    struct diff_run *run;
    size_t bad;
    char why[160];
    for (size_t i = 0; i < b->npaths; i++) {
        b->parts[i]->files[0].index = i;
        b->parts[i]->files_total = b->npaths;
    }
    if (diff_run_merge(b->parts, b->npaths, &run, &bad, why, sizeof why) != CFI_OK)
        return NULL;
    run->seconds = diff_harness_now() - b->started;
    if (b->batch->places) {
        for (size_t i = 0; i < run->nfiles; i++)
            run->files[i].index = b->batch->places[i];
        run->files_total = b->batch->files_total;
    }
    return run;
}

enum cfi_status diff_run_batch(const struct diff_config *config,
                               const struct diff_batch *batch,
                               const char *const *paths, size_t npaths,
                               struct diff_run **run,
                               struct diff_batch_counts *counts)
{
    *run = NULL;
    memset(counts, 0, sizeof *counts);
    if (npaths == 0)
        return diff_run(config, paths, 0, run);
    if (batch->results_dir && !cfi_make_dirs(batch->results_dir))
        return CFI_E_IO;
    struct batch_run b = {config, batch, paths, npaths,
                          calloc(npaths, sizeof *b.parts),
                          calloc(npaths, sizeof *b.sha), "", diff_harness_now(),
                          0, 0, counts};
    settings_key(config, b.key);
    bool ok = b.parts && b.sha && run_all(&b);
    *run = ok ? merge_all(&b) : NULL;
    for (size_t i = 0; b.parts && i < npaths; i++)
        diff_run_free(b.parts[i]);
    free(b.parts);
    free(b.sha);
    return *run ? CFI_OK : CFI_E_NOMEM;
}
