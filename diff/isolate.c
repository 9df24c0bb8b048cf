/* SPDX-License-Identifier: MIT */
/* isolate.c — diff_run_isolated (harness.h): each file in a child process,
 * whose results come back through a pipe as a flat stream (the records
 * as they are, their strings after them: deviation pointers point into
 * the table of this very program, which the child shares). The parent
 * reads the whole stream first and merges it only when the child ended
 * well, so that a crash never leaves half a file counted. */
#include "harness_internal.h"
#include "engines/engines.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STREAM_MAGIC 0x6366697365646966ull
#define NO_STRING UINT32_MAX

/* ------------------------------------------------------------------ */
/* The child: writing                                                   */
/* ------------------------------------------------------------------ */

struct writer {
    int fd;
    bool ok;
};

static void put(struct writer *w, const void *bytes, size_t n)
{
    const uint8_t *p = bytes;
    while (w->ok && n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->ok = false;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static void put_string(struct writer *w, const char *text)
{
    uint32_t len = text ? (uint32_t)strlen(text) : NO_STRING;
    put(w, &len, sizeof len);
    if (text)
        put(w, text, len);
}

static void put_record(struct writer *w, const struct diff_record *record)
{
    put(w, record, sizeof *record);
    put_string(w, record->row_text);
    put_string(w, record->expected.diag.message);
    put_string(w, record->got.diag.message);
}

static void put_run(struct writer *w, const struct diff_run *run)
{
    uint64_t magic = STREAM_MAGIC, n;
    put(w, &magic, sizeof magic);
    put(w, &run->files[0], sizeof run->files[0]);
    put_string(w, run->files[0].diag.message);
    put(w, run->reference, sizeof run->reference);
    put(w, run->counts, sizeof run->counts);
    put(w, run->deviation_counts,
        run->ndeviations * sizeof *run->deviation_counts);
    for (size_t d = 0; d < run->ndeviations; d++) {
        uint8_t has = run->deviation_examples[d].engine != ENGINE_COUNT;
        put(w, &has, 1);
        if (has)
            put_record(w, &run->deviation_examples[d]);
    }
    put(w, &run->records_total, sizeof run->records_total);
    n = run->nrecords;
    put(w, &n, sizeof n);
    for (size_t r = 0; r < run->nrecords; r++)
        put_record(w, &run->records[r]);
    n = run->nfailures;
    put(w, &n, sizeof n);
    for (size_t f = 0; f < run->nfailures; f++) {
        put(w, &run->failures[f], sizeof run->failures[f]);
        put_string(w, run->failures[f].diag.message);
    }
    put(w, &magic, sizeof magic);
}

/* ------------------------------------------------------------------ */
/* The parent: reading and merging                                      */
/* ------------------------------------------------------------------ */

struct reader {
    const uint8_t *at;
    size_t left;
    bool ok;
};

static void get(struct reader *r, void *out, size_t n)
{
    if (!r->ok || r->left < n) {
        r->ok = false;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->at, n);
    r->at += n;
    r->left -= n;
}

/* A malloc'd string, or NULL. */
static char *get_string(struct reader *r)
{
    uint32_t len;
    get(r, &len, sizeof len);
    if (!r->ok || len == NO_STRING)
        return NULL;
    char *text = len <= r->left ? malloc((size_t)len + 1) : NULL;
    if (!text) {
        r->ok = false;
        return NULL;
    }
    get(r, text, len);
    text[len] = 0;
    return text;
}

/* A string kept by the run, as a diag message is. */
static const char *get_message(struct reader *r, struct diff_run *run)
{
    char *text = get_string(r);
    const char *kept = diff_harness_keep_string(run, text);
    free(text);
    return kept;
}

static void get_record(struct reader *r, struct diff_run *run, size_t file,
                       struct diff_record *record)
{
    get(r, record, sizeof *record);
    record->file = file;
    record->row_text = get_string(r);
    record->expected.diag.message = get_message(r, run);
    record->got.diag.message = get_message(r, run);
}

static void merge_file(struct reader *r, struct diff_run *run, size_t i,
                       bool with_file)
{
    struct diff_file_result file;
    get(r, &file, sizeof file);
    file.diag.message = get_message(r, run);
    file.path = run->files[i].path;
    file.index = run->files[i].index;
    uint64_t reference[CFI_STATUS_COUNT];
    get(r, reference, sizeof reference);
    if (!with_file)
        return;
    run->files[i] = file;
    run->requests += file.requests;
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        run->reference[s] += reference[s];
}

static void merge_counts(struct reader *r, struct diff_run *run, size_t i)
{
    struct diff_counts counts[ENGINE_COUNT];
    get(r, counts, sizeof counts);
    for (int e = 0; e < ENGINE_COUNT; e++) {
        struct diff_counts *c = &run->counts[e];
        c->compared += counts[e].compared;
        c->agree += counts[e].agree;
        c->differ += counts[e].differ;
        c->known_deviation += counts[e].known_deviation;
        c->not_comparable += counts[e].not_comparable;
        c->errors += counts[e].errors;
    }
    for (size_t d = 0; d < run->ndeviations; d++) {
        uint64_t n;
        get(r, &n, sizeof n);
        run->deviation_counts[d] += n;
    }
    for (size_t d = 0; d < run->ndeviations && r->ok; d++) {
        uint8_t has;
        get(r, &has, 1);
        if (!has)
            continue;
        struct diff_record example;
        get_record(r, run, i, &example);
        if (run->deviation_examples[d].engine == ENGINE_COUNT && r->ok)
            run->deviation_examples[d] = example;
        else
            free(example.row_text);
    }
}

static bool merge_records(struct reader *r, struct diff_run *run, size_t i)
{
    uint64_t total, n;
    get(r, &total, sizeof total);
    get(r, &n, sizeof n);
    run->records_total += total;
    for (uint64_t k = 0; k < n && r->ok; k++) {
        struct diff_record record;
        get_record(r, run, i, &record);
        if (r->ok && !diff_harness_add_record(run, &record))
            return false;
    }
    get(r, &n, sizeof n);
    for (uint64_t k = 0; k < n && r->ok; k++) {
        struct diff_open_failure failure;
        get(r, &failure, sizeof failure);
        failure.file = i;
        failure.diag.message = get_message(r, run);
        if (r->ok && !diff_harness_add_failure(run, &failure))
            return false;
    }
    return true;
}

/* Merges a child's stream: the file's figures when with_file, and the
 * engines' counts, deviations, records and failures. */
static bool merge_stream(struct diff_run *run, size_t i, const uint8_t *bytes,
                         size_t len, bool with_file)
{
    struct reader r = {bytes, len, true};
    uint64_t magic;
    get(&r, &magic, sizeof magic);
    if (magic != STREAM_MAGIC)
        return false;
    merge_file(&r, run, i, with_file);
    merge_counts(&r, run, i);
    bool ok = merge_records(&r, run, i);
    get(&r, &magic, sizeof magic);
    return ok && r.ok && magic == STREAM_MAGIC;
}

/* ------------------------------------------------------------------ */
/* Children                                                             */
/* ------------------------------------------------------------------ */

/* Progress of a child, as a share of the whole run. */
struct shift {
    const struct diff_config *outer;
    size_t index, nfiles;
    uint64_t base;
    double started;
};

static void shifted_progress(void *env, const struct diff_progress *p)
{
    const struct shift *shift = env;
    struct diff_progress whole = *p;
    whole.files_done = shift->index + p->files_done;
    whole.files = shift->nfiles;
    whole.requests_done = shift->base + p->requests_done;
    whole.seconds = diff_harness_now() - shift->started;
    shift->outer->progress(shift->outer->progress_env, &whole);
}

/* How a child ends: 0 with its stream written, CHILD_FAILED when it could
 * not run, CHILD_HUNG + the engine when the watchdog found that engine
 * (ENGINE_COUNT: the reference) stuck on one answer. */
enum { CHILD_FAILED = 3, CHILD_HUNG = 64 };

static void child_hung(void *env, enum engine_id engine)
{
    (void)env;
    _exit(CHILD_HUNG + (int)engine);
}

static _Noreturn void child_main(const struct diff_config *config,
                                 const char *path, int fd)
{
    struct diff_run *run;
    struct writer w = {fd, true};
    engine_child_default_signals();
    struct diff_config watched = *config;
    watched.hung = child_hung;
    if (diff_run(&watched, &path, 1, &run) != CFI_OK)
        _exit(CHILD_FAILED);
    put_run(&w, run);
    _exit(w.ok ? 0 : CHILD_FAILED);
}

struct stream {
    uint8_t *bytes;
    size_t len, capacity;
};

static bool read_all(int fd, struct stream *s)
{
    for (;;) {
        if (s->len == s->capacity) {
            size_t capacity = s->capacity ? s->capacity * 2 : 1 << 16;
            uint8_t *grown = realloc(s->bytes, capacity);
            if (!grown)
                return false;
            s->bytes = grown;
            s->capacity = capacity;
        }
        ssize_t n = read(fd, s->bytes + s->len, s->capacity - s->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0;
        s->len += (size_t)n;
    }
}

/* The wait status of a child that could not be started (fork failed:
 * no process or no memory left), which is no bug of the file's. */
enum { NO_CHILD = -1 };
#define NOT_STARTED "no process could be started for this file (fork failed)"

/* Runs file i with `config` in a child. True when it ended well (its
 * stream in *s); else *wait_status says how it ended (NO_CHILD: it was
 * not started). */
static bool run_child(const struct diff_run *run, size_t i,
                      const struct diff_config *config, struct stream *s,
                      int *wait_status)
{
    int fds[2];
    s->len = 0;
    *wait_status = 0;
    if (pipe(fds) != 0)
        return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_main(config, run->files[i].path, fds[1]);
    }
    if (pid < 0)
        *wait_status = NO_CHILD;
    close(fds[1]);
    bool read = pid > 0 && read_all(fds[0], s);
    close(fds[0]);
    bool waited = false;
    for (int tries = 0; pid > 0 && !waited && tries < 1000; tries++)
        waited = waitpid(pid, wait_status, 0) == pid || errno != EINTR;
    return read && waited && WIFEXITED(*wait_status) &&
           WEXITSTATUS(*wait_status) == 0;
}

static bool hung(int wait_status)
{
    return WIFEXITED(wait_status) &&
           WEXITSTATUS(wait_status) >= CHILD_HUNG &&
           WEXITSTATUS(wait_status) <= CHILD_HUNG + ENGINE_COUNT;
}

static const char *crash_reason(int wait_status)
{
    if (wait_status == NO_CHILD)
        return NOT_STARTED;
    if (hung(wait_status))
        return "timed out (an answer took longer than the watchdog allows)";
    if (!WIFSIGNALED(wait_status))
        return "crashed (its process exited with an error)";
    switch (WTERMSIG(wait_status)) {
    case SIGSEGV:
        return "crashed (SIGSEGV)";
    case SIGBUS:
        return "crashed (SIGBUS)";
    case SIGABRT:
        return "crashed (SIGABRT)";
    case SIGFPE:
        return "crashed (SIGFPE)";
    case SIGILL:
        return "crashed (SIGILL)";
    default:
        return "crashed (killed by a signal)";
    }
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

/* Engine e alone, after the whole file crashed: its results, or its
 * requests counted as errors "crashed". */
static bool run_engine_alone(struct diff_run *run, size_t i,
                             const struct diff_config *base, int e,
                             struct stream *s)
{
    struct diff_config config = *base;
    for (int other = 0; other < ENGINE_COUNT; other++)
        config.engines[other] = other == e;
    int wait_status;
    if (run_child(run, i, &config, s, &wait_status))
        return merge_stream(run, i, s->bytes, s->len, false);
    uint64_t requests = run->files[i].requests;
    run->counts[e].errors += requests;
    struct diff_open_failure failure = {
        i, (enum engine_id)e,
        {CFI_E_UNSUPPORTED, crash_reason(wait_status), CFI_NO_OFFSET, -1},
        requests};
    return diff_harness_add_failure(run, &failure);
}

static bool run_file_isolated(struct diff_run *run, size_t i,
                              const struct diff_config *config,
                              struct stream *s)
{
    int wait_status;
    if (run_child(run, i, config, s, &wait_status))
        return merge_stream(run, i, s->bytes, s->len, true);
    struct diff_config reference = *config;
    for (int e = 0; e < ENGINE_COUNT; e++)
        reference.engines[e] = false;
    if (!run_child(run, i, &reference, s, &wait_status)) {
        run->files[i].status = CFI_E_UNSUPPORTED;
        run->files[i].diag = (struct cfi_diag){
            CFI_E_UNSUPPORTED,
            wait_status == NO_CHILD ? NOT_STARTED
            : hung(wait_status)
                ? "cfisem stopped answering on this file (a bug of ours)"
                : "cfisem crashed on this file (a bug of ours)",
            CFI_NO_OFFSET, -1};
        return true;
    }
    if (!merge_stream(run, i, s->bytes, s->len, true))
        return false;
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (config->engines[e] && !run_engine_alone(run, i, config, e, s))
            return false;
    return true;
}

enum cfi_status diff_run_isolated(const struct diff_config *config,
                                  const char *const *paths, size_t npaths,
                                  struct diff_run **result)
{
    *result = NULL;
    double started = diff_harness_now();
    struct diff_run *run = diff_harness_run_new(config, paths, npaths);
    if (!run)
        return CFI_E_NOMEM;
    struct stream s = {NULL, 0, 0};
    bool ok = true;
    for (size_t i = 0; i < npaths && ok; i++) {
        struct shift shift = {&run->config, i, npaths, run->requests, started};
        struct diff_config child = run->config;
        if (child.progress) {
            child.progress = shifted_progress;
            child.progress_env = &shift;
        }
        ok = run_file_isolated(run, i, &child, &s);
    }
    free(s.bytes);
    if (!ok) {
        diff_run_free(run);
        return CFI_E_NOMEM;
    }
    run->seconds = diff_harness_now() - started;
    *result = run;
    return CFI_OK;
}
