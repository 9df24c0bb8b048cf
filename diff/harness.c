/* SPDX-License-Identifier: MIT */
/* harness.c — see harness.h. */
#include "harness_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void diff_config_default(struct diff_config *config)
{
    memset(config, 0, sizeof *config);
    /* sframe, the local unwinders and gdb only when asked for (--engines):
     * most files have no .sframe; llvmunwind and libgcc each ask a child
     * process of its own; gdb answers a few hundred requests a second */
    for (int e = 0; e < ENGINE_COUNT; e++)
        config->engines[e] = e != ENGINE_sframe && e != ENGINE_llvmunwind &&
                             e != ENGINE_libgcc && e != ENGINE_gdb;
    config->nstates = 4;
    config->seed = 1;
    config->jobs = 1;
    config->keep = DIFF_KEEP_DEFAULT;
    config->answer_timeout = DIFF_ANSWER_TIMEOUT_DEFAULT;
}

/* A work item: FDEs [first, last) of one file, and what they gave. */
struct item {
    size_t first, last;
    uint64_t requests;
    uint64_t reference[CFI_STATUS_COUNT];
    struct diff_counts counts[ENGINE_COUNT];
    uint64_t *deviation_counts;          /* [ndeviations] */
    struct diff_record **examples;       /* [ndeviations], NULL: none */
    struct diff_record *records;
    size_t nrecords, capacity;
    uint64_t records_total;
    bool failed[ENGINE_COUNT];           /* could not open the engine */
    struct cfi_diag failure[ENGINE_COUNT];
    uint64_t failed_requests[ENGINE_COUNT];
};

/* What the workers of one file share; read-only but for the counters. */
struct file_job {
    const struct diff_config *config;
    struct engine_state_config states;
    size_t file_index;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct cfi_symbol *symbols;          /* the file's functions, sorted */
    size_t nsymbols;
    const struct engine_deviation *deviations;
    size_t ndeviations;
    struct item *items;
    size_t nitems;
    atomic_size_t next_item;
    atomic_uint_fast64_t requests_done;
    atomic_uint running;
    atomic_bool out_of_memory;
};

/* A question kept for the engines that answer in batches, with the
 * reference's answer and the engine's. */
struct pending {
    struct engine_question question;
    struct cfi_frame expected;
    struct engine_answer answer;
};

/* One worker's own engines, memories and buffers, for one file. */
struct worker {
    struct file_job *job;
    struct engine_instance engines[ENGINE_COUNT];
    bool open[ENGINE_COUNT];
    struct cfi_diag open_diag[ENGINE_COUNT];
    struct engine_memory **memories;     /* [nstates] */
    struct engine_pc *pcs;
    size_t npcs, pcs_capacity;
    struct engine_answer *answer;
    struct cfi_frame *expected;
    struct engine_question question;     /* the one being asked */
    /* With an engine that answers in batches (unwind_batch), each
     * question is made in the next pending slot instead, and the batch
     * is asked when DIFF_BATCH questions wait or the item ends. */
    bool batching;
    struct pending *pending;             /* [DIFF_BATCH] */
    struct engine_batch_entry *entries;  /* [DIFF_BATCH] */
    size_t npending;
    pthread_t thread;
    /* For the watchdog: who is answering (an engine, ENGINE_COUNT
     * for the reference, -1 for nobody), and how many answers so far. */
    atomic_int answering;
    atomic_uint_fast64_t answers;
};

double diff_harness_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* Records                                                              */
/* ------------------------------------------------------------------ */

/* "name+0x12" of the function symbol that holds the lookup PC (a return
 * address is looked up at pc-1: the call may end its function), inside
 * the file's executable segments, the offset counted to pc itself; ""
 * when none. */
static void name_function(const struct file_job *job, uint64_t pc,
                          bool caller_frame, char *buf, size_t size)
{
    uint64_t offset, lookup = cfi_lookup_pc(pc, caller_frame);
    const struct cfi_segment *segment = cfi_file_segment(job->file, lookup);
    const struct cfi_symbol *symbol =
        segment && segment->executable
            ? cfi_symbol_find(job->symbols, job->nsymbols, lookup, &offset)
            : NULL;
    if (symbol)
        offset = pc - symbol->value;
    buf[0] = '\0';
    if (symbol && symbol->name[0] && offset == 0)
        snprintf(buf, size, "%s", symbol->name);
    else if (symbol && symbol->name[0])
        snprintf(buf, size, "%s+0x%" PRIx64, symbol->name, offset);
}

static void record_fill(struct diff_record *record, const struct file_job *job,
                        const struct engine_question *q, enum engine_id engine,
                        const struct cfi_frame *expected,
                        const struct cfi_frame *got,
                        const struct engine_outcome *outcome)
{
    memset(record, 0, sizeof *record);
    record->engine = engine;
    record->file = job->file_index;
    record->has_fde = q->fde != NULL;
    if (q->fde) {
        record->fde_section = q->fde->section;
        record->fde_offset = q->fde->offset;
        record->fde_begin = q->fde->pc_begin;
        record->fde_end = q->fde->pc_end;
    }
    record->translation = q->translation;
    record->row_text = q->range && q->fde
        ? sem_range_text(q->fde->cie->arch, q->range) : NULL;
    record->state = q->state;
    name_function(job, q->state.at.pc, q->state.at.caller_frame,
                  record->function, sizeof record->function);
    record->expected = *expected;
    record->got = *got;
    record->outcome = *outcome;
}

static struct diff_record *record_push(struct item *item, size_t keep)
{
    item->records_total++;
    if (item->nrecords >= keep)
        return NULL;
    if (item->nrecords == item->capacity) {
        size_t capacity = item->capacity ? item->capacity * 2 : 4;
        struct diff_record *grown =
            realloc(item->records, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        item->records = grown;
        item->capacity = capacity;
    }
    return &item->records[item->nrecords++];
}

static size_t deviation_index(const struct file_job *job,
                              const struct engine_deviation *deviation)
{
    for (size_t i = 0; i < job->ndeviations; i++)
        if (&job->deviations[i] == deviation ||
            !strcmp(job->deviations[i].id, deviation->id))
            return i;
    return job->ndeviations;
}

/* A request whose every differing item is a known deviation: each entry
 * that explains an item counts it once, and keeps the first example. */
static void count_known(struct item *item, const struct file_job *job,
                        const struct engine_question *q, enum engine_id engine,
                        const struct cfi_frame *expected,
                        const struct engine_answer *answer,
                        const struct engine_outcome *outcome)
{
    for (unsigned i = 0; i < outcome->nkept; i++) {
        const struct engine_deviation *deviation = outcome->items[i].deviation;
        bool first = true;
        for (unsigned j = 0; j < i; j++)
            first &= outcome->items[j].deviation != deviation;
        size_t d = deviation_index(job, deviation);
        if (!first || d >= job->ndeviations)
            continue;
        item->deviation_counts[d]++;
        if (item->examples[d])
            continue;
        item->examples[d] = malloc(sizeof *item->examples[d]);
        if (item->examples[d])
            record_fill(item->examples[d], job, q, engine, expected,
                        &answer->frame, outcome);
    }
}

static void count(struct item *item, const struct file_job *job,
                  const struct engine_question *q, enum engine_id engine,
                  const struct cfi_frame *expected,
                  const struct engine_answer *answer,
                  const struct engine_outcome *outcome)
{
    struct diff_counts *c = &item->counts[engine];
    switch (outcome->verdict) {
    case ENGINE_VERDICT_AGREE:
        c->compared++, c->agree++;
        return;
    case ENGINE_VERDICT_KNOWN:
        c->compared++, c->known_deviation++;
        count_known(item, job, q, engine, expected, answer, outcome);
        return;
    case ENGINE_VERDICT_DIFFER: {
        c->compared++, c->differ++;
        struct diff_record *record = record_push(item, job->config->keep);
        if (record)
            record_fill(record, job, q, engine, expected, &answer->frame,
                        outcome);
        return;
    }
    case ENGINE_VERDICT_NOT_COMPARABLE:
        c->not_comparable++;
        return;
    case ENGINE_VERDICT_ERROR:
        c->errors++;
        return;
    }
}

/* ------------------------------------------------------------------ */
/* One request                                                          */
/* ------------------------------------------------------------------ */

/* Marks the start (engine, or ENGINE_COUNT for the reference) and
 * the end (-1) of an answer, for the watchdog. */
static void answering(struct worker *w, int who)
{
    atomic_store_explicit(&w->answering, who, memory_order_relaxed);
    if (who < 0)
        atomic_fetch_add_explicit(&w->answers, 1, memory_order_relaxed);
}

static bool answers_in_batches(const struct worker *w, enum engine_id e)
{
    return w->open[e] && w->engines[e].unwind_batch;
}

static void ask_engine(struct worker *w, struct item *item,
                       enum engine_id e, struct engine_mismatch *context,
                       struct engine_question *q, struct cfi_frame *expected)
{
    if (!w->open[e]) {
        item->counts[e].errors++;
        if (!item->failed[e])
            item->failure[e] = w->open_diag[e];
        item->failed[e] = true;
        item->failed_requests[e]++;
        return;
    }
    engine_question_rewind(q);
    answering(w, (int)e);
    w->engines[e].unwind(w->engines[e].self, &q->request, w->answer);
    answering(w, -1);
    context->engine = e;
    struct engine_outcome outcome;
    engine_compare(context, w->answer, &outcome);
    count(item, w->job, q, e, expected, w->answer, &outcome);
}

static struct engine_mismatch mismatch_context(const struct file_job *job,
                                               const struct engine_question *q,
                                               const struct cfi_frame *expected)
{
    return (struct engine_mismatch){
        .file = job->file, .fde = q->fde,
        .row = q->range ? q->range->row : NULL, .translation = q->translation,
        .request = &q->request, .expected = expected};
}

/* A batch's progress: one more answer, or the engine waiting for its
 * own process (bounded by the engine), for the watchdog. */
static void batch_answered(void *env)
{
    struct worker *w = env;
    atomic_fetch_add_explicit(&w->answers, 1, memory_order_relaxed);
}

/* Asks the pending questions of each engine that answers in batches,
 * and counts its answers as ask_engine does. */
static void ask_batches(struct worker *w, struct item *item)
{
    const struct file_job *job = w->job;
    struct engine_batch_progress progress = {batch_answered, batch_answered,
                                             w};
    for (int e = 0; e < ENGINE_COUNT && w->npending > 0; e++) {
        if (!job->config->engines[e] || !answers_in_batches(w, e))
            continue;
        for (size_t i = 0; i < w->npending; i++) {
            struct engine_question *q = &w->pending[i].question;
            engine_question_rewind(q);
            w->entries[i] = (struct engine_batch_entry){
                &q->request, q->base, q->state.has_fault,
                q->state.fault_begin, q->state.fault_end,
                &w->pending[i].answer};
        }
        answering(w, e);
        w->engines[e].unwind_batch(w->engines[e].self, w->entries,
                                   w->npending, &progress);
        answering(w, -1);
        for (size_t i = 0; i < w->npending; i++) {
            struct pending *p = &w->pending[i];
            struct engine_mismatch context =
                mismatch_context(job, &p->question, &p->expected);
            context.engine = (enum engine_id)e;
            struct engine_outcome outcome;
            engine_compare(&context, &p->answer, &outcome);
            count(item, job, &p->question, (enum engine_id)e, &p->expected,
                  &p->answer, &outcome);
        }
    }
    w->npending = 0;
}

static void ask(struct worker *w, struct item *item, struct engine_pc at,
                unsigned k)
{
    const struct file_job *job = w->job;
    struct engine_question *q = &w->question;
    struct cfi_frame *expected = w->expected;
    if (w->batching) {
        q = &w->pending[w->npending].question;
        expected = &w->pending[w->npending].expected;
    }
    answering(w, ENGINE_COUNT);
    engine_question_make(q, job->il, &job->states, at, k,
                         engine_memory_reader(w->memories[k]), sem_unwind,
                         expected);
    answering(w, -1);
    struct engine_mismatch context = mismatch_context(job, q, expected);
    item->requests++;
    item->reference[expected->status < CFI_STATUS_COUNT
                        ? expected->status : CFI_E_INTERNAL]++;
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (job->config->engines[e] && !answers_in_batches(w, e))
            ask_engine(w, item, (enum engine_id)e, &context, q, expected);
    if (w->batching && ++w->npending == DIFF_BATCH)
        ask_batches(w, item);
}

static void run_item(struct worker *w, struct item *item)
{
    const struct diff_config *config = w->job->config;
    for (size_t f = item->first; f < item->last; f++) {
        w->npcs = 0;
        enum cfi_status listed =
            config->pcs_of_fde
                ? config->pcs_of_fde(config->pcs_env, w->job->il, f, &w->pcs,
                                     &w->npcs, &w->pcs_capacity)
                : engine_pcs_of_fde(w->job->il, f, &w->job->states,
                                    config->all_pcs, &w->pcs, &w->npcs,
                                    &w->pcs_capacity);
        if (listed != CFI_OK) {
            atomic_store(&w->job->out_of_memory, true);
            break;
        }
        for (size_t p = 0; p < w->npcs; p++)
            for (unsigned k = 0; k < config->nstates; k++)
                ask(w, item, w->pcs[p], k);
        atomic_fetch_add(&w->job->requests_done,
                         (uint_fast64_t)w->npcs * config->nstates);
    }
    ask_batches(w, item);
}

/* ------------------------------------------------------------------ */
/* Workers                                                              */
/* ------------------------------------------------------------------ */

static enum cfi_status open_engine(const struct diff_config *config,
                                   enum engine_id id,
                                   const struct cfi_file *file,
                                   struct engine_instance *engine,
                                   struct cfi_diag *diag)
{
    if (config->open)
        return config->open(config->open_env, id, file,
                            &config->engine_config, engine, diag);
    return engine_open(id, file, &config->engine_config, engine, diag);
}

static bool worker_open(struct worker *w)
{
    const struct file_job *job = w->job;
    const struct diff_config *config = job->config;
    for (int e = 0; e < ENGINE_COUNT; e++) {
        w->open_diag[e] = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
        w->open[e] = config->engines[e] &&
                     open_engine(config, (enum engine_id)e, job->file,
                                 &w->engines[e], &w->open_diag[e]) == CFI_OK;
    }
    w->memories = calloc(config->nstates, sizeof *w->memories);
    w->answer = malloc(sizeof *w->answer);
    w->expected = malloc(sizeof *w->expected);
    bool ok = w->memories && w->answer && w->expected;
    for (int e = 0; e < ENGINE_COUNT; e++)
        w->batching |= config->engines[e] && answers_in_batches(w, e);
    if (w->batching) {
        w->pending = malloc(DIFF_BATCH * sizeof *w->pending);
        w->entries = malloc(DIFF_BATCH * sizeof *w->entries);
        ok = ok && w->pending && w->entries;
    }
    for (unsigned k = 0; ok && k < config->nstates; k++)
        ok = (w->memories[k] = engine_state_memory(&job->states, k, job->file,
                                                   config->faults,
                                                   config->nfaults)) != NULL;
    return ok;
}

static void worker_close(struct worker *w)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (w->open[e])
            engine_close(&w->engines[e]);
    for (unsigned k = 0; w->memories && k < w->job->config->nstates; k++)
        engine_memory_free(w->memories[k]);
    free(w->memories);
    free(w->answer);
    free(w->expected);
    free(w->pcs);
    free(w->pending);
    free(w->entries);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct file_job *job = w->job;
    if (!worker_open(w))
        atomic_store(&job->out_of_memory, true);
    while (!atomic_load(&job->out_of_memory)) {
        size_t i = atomic_fetch_add(&job->next_item, 1);
        if (i >= job->nitems)
            break;
        run_item(w, &job->items[i]);
    }
    worker_close(w);
    atomic_fetch_sub(&job->running, 1);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* One file                                                             */
/* ------------------------------------------------------------------ */

static bool items_make(struct file_job *job)
{
    size_t n = (job->file->nfdes + DIFF_CHUNK_FDES - 1) / DIFF_CHUNK_FDES;
    job->items = calloc(n ? n : 1, sizeof *job->items);
    if (!job->items)
        return false;
    job->nitems = n;
    for (size_t i = 0; i < n; i++) {
        struct item *item = &job->items[i];
        item->first = i * DIFF_CHUNK_FDES;
        item->last = item->first + DIFF_CHUNK_FDES;
        if (item->last > job->file->nfdes)
            item->last = job->file->nfdes;
        item->deviation_counts = calloc(job->ndeviations + 1,
                                        sizeof *item->deviation_counts);
        item->examples = calloc(job->ndeviations + 1, sizeof *item->examples);
        if (!item->deviation_counts || !item->examples)
            return false;
    }
    return true;
}

static void items_free(struct file_job *job)
{
    for (size_t i = 0; job->items && i < job->nitems; i++) {
        struct item *item = &job->items[i];
        for (size_t r = 0; r < item->nrecords; r++)
            free(item->records[r].row_text);
        free(item->records);
        for (size_t d = 0; item->examples && d < job->ndeviations; d++)
            if (item->examples[d]) {
                free(item->examples[d]->row_text);
                free(item->examples[d]);
            }
        free(item->examples);
        free(item->deviation_counts);
    }
    free(job->items);
}

static void report_progress(const struct diff_run *run, size_t files_done,
                            uint64_t requests, double started,
                            const char *phase)
{
    const struct diff_config *config = &run->config;
    if (!config->progress)
        return;
    struct diff_progress progress = {files_done, run->nfiles, requests,
                                     diff_harness_now() - started, phase,
                                     run->files[files_done < run->nfiles
                                                    ? files_done : 0].path};
    config->progress(config->progress_env, &progress);
}

/* What the watchdog saw of one worker at its last look. */
struct watch {
    uint_fast64_t answers;
    unsigned still;      /* looks since the same answer started */
};

#define WATCH_TICK_SECONDS 0.1

/* Called every tick: a worker whose answer has not moved for the
 * configured time makes config->hung end the process. */
static void watch_workers(const struct diff_config *config,
                          struct worker *workers, struct watch *watches,
                          unsigned n)
{
    if (!config->hung || config->answer_timeout <= 0)
        return;
    for (unsigned j = 0; j < n; j++) {
        int who = atomic_load_explicit(&workers[j].answering,
                                       memory_order_relaxed);
        uint_fast64_t answers = atomic_load_explicit(&workers[j].answers,
                                                     memory_order_relaxed);
        bool stuck = who >= 0 && answers == watches[j].answers;
        watches[j].still = stuck ? watches[j].still + 1 : 0;
        watches[j].answers = answers;
        if (watches[j].still * WATCH_TICK_SECONDS > config->answer_timeout)
            config->hung(config->hung_env, (enum engine_id)who);
    }
}

/* Starts the workers and waits for them, reporting progress. */
static bool run_workers(struct file_job *job, const struct diff_run *run,
                        size_t files_done, double started)
{
    unsigned jobs = job->config->jobs ? job->config->jobs : 1;
    struct worker *workers = calloc(jobs, sizeof *workers);
    struct watch *watches = calloc(jobs, sizeof *watches);
    if (!workers || !watches) {
        free(workers);
        free(watches);
        return false;
    }
    unsigned started_workers = 0;
    atomic_store(&job->running, jobs);
    for (unsigned j = 0; j < jobs; j++) {
        workers[j].job = job;
        atomic_init(&workers[j].answering, -1);
        atomic_init(&workers[j].answers, 0);
        if (pthread_create(&workers[j].thread, NULL, worker_main, &workers[j]))
            break;
        started_workers++;
    }
    atomic_fetch_sub(&job->running, jobs - started_workers);
    if (started_workers == 0)
        atomic_store(&job->out_of_memory, true);
    struct timespec tick = {0, (long)(WATCH_TICK_SECONDS * 1e9)};
    for (unsigned ticks = 1; atomic_load(&job->running) > 0; ticks++) {
        nanosleep(&tick, NULL);
        watch_workers(job->config, workers, watches, started_workers);
        if (ticks % 5 == 0)
            report_progress(run, files_done,
                            run->requests + atomic_load(&job->requests_done),
                            started, NULL);
    }
    free(watches);
    for (unsigned j = 0; j < started_workers; j++)
        pthread_join(workers[j].thread, NULL);
    free(workers);
    return !atomic_load(&job->out_of_memory);
}

/* ------------------------------------------------------------------ */
/* Merging, in item order                                               */
/* ------------------------------------------------------------------ */

static void add_counts(struct diff_counts *to, const struct diff_counts *from)
{
    to->compared += from->compared;
    to->agree += from->agree;
    to->differ += from->differ;
    to->known_deviation += from->known_deviation;
    to->not_comparable += from->not_comparable;
    to->errors += from->errors;
}

static bool merge_failures(struct diff_run *run, const struct file_job *job)
{
    for (int e = 0; e < ENGINE_COUNT; e++) {
        struct diff_open_failure failure = {job->file_index,
                                            (enum engine_id)e,
                                            {CFI_OK, NULL, CFI_NO_OFFSET, -1},
                                            0};
        bool failed = false;
        for (size_t i = 0; i < job->nitems; i++) {
            const struct item *item = &job->items[i];
            if (item->failed[e] && !failed)
                failure.diag = item->failure[e];
            failed |= item->failed[e];
            failure.requests += item->failed_requests[e];
        }
        if (failed && !diff_harness_add_failure(run, &failure))
            return false;
    }
    return true;
}

bool diff_harness_add_failure(struct diff_run *run,
                         const struct diff_open_failure *failure)
{
    struct diff_open_failure *grown =
        realloc(run->failures, (run->nfailures + 1) * sizeof *grown);
    if (!grown)
        return false;
    run->failures = grown;
    run->failures[run->nfailures++] = *failure;
    return true;
}

bool diff_harness_add_record(struct diff_run *run, struct diff_record *record)
{
    if (run->nrecords >= run->config.keep) {
        free(record->row_text);
        return true;
    }
    if (run->nrecords % 64 == 0) {
        struct diff_record *grown =
            realloc(run->records, (run->nrecords + 64) * sizeof *grown);
        if (!grown) {
            free(record->row_text);
            return false;
        }
        run->records = grown;
    }
    run->records[run->nrecords++] = *record;
    return true;
}

const char *diff_harness_keep_string(struct diff_run *run, const char *text)
{
    if (!text)
        return NULL;
    char **grown = realloc(run->strings, (run->nstrings + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    run->strings = grown;
    return run->strings[run->nstrings++] = strdup(text);
}

/* Moves the item's records (and examples) into the run; what the run
 * does not keep is freed. */
static bool merge_records(struct diff_run *run, struct item *item)
{
    run->records_total += item->records_total;
    bool ok = true;
    for (size_t r = 0; r < item->nrecords; r++)
        ok &= diff_harness_add_record(run, &item->records[r]);
    item->nrecords = 0;
    if (!ok)
        return false;
    for (size_t d = 0; d < run->ndeviations; d++) {
        run->deviation_counts[d] += item->deviation_counts[d];
        if (item->examples[d] &&
            run->deviation_examples[d].engine == ENGINE_COUNT) {
            run->deviation_examples[d] = *item->examples[d];
            free(item->examples[d]);
            item->examples[d] = NULL;
        }
    }
    return true;
}

static bool merge(struct diff_run *run, struct file_job *job,
                  struct diff_file_result *result)
{
    for (size_t i = 0; i < job->nitems; i++) {
        struct item *item = &job->items[i];
        result->requests += item->requests;
        for (int s = 0; s < CFI_STATUS_COUNT; s++)
            run->reference[s] += item->reference[s];
        for (int e = 0; e < ENGINE_COUNT; e++)
            add_counts(&run->counts[e], &item->counts[e]);
        if (!merge_records(run, item))
            return false;
    }
    run->requests += result->requests;
    return merge_failures(run, job);
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

static void describe_file(const struct sem_file_il *il,
                          struct diff_file_result *result)
{
    result->nfdes = il->file->nfdes;
    result->nfailed_fdes = il->nfailed;
    for (size_t i = 0; i < il->nfdes; i++)
        if (il->status[i] == CFI_OK)
            result->nrows += il->fdes[i].nranges;
}

/* The compiled engine builds its eh_elf into a cache the first time it
 * opens for a file: once here, before the workers open theirs. A failure
 * is the workers' to record. */
static void prepare_compiled(const struct diff_run *run, size_t index,
                             const struct cfi_file *file, double started)
{
    const struct diff_config *config = &run->config;
    if (!config->engines[ENGINE_compiled] ||
        config->engine_config.eh_elf_path)
        return;
    report_progress(run, index, run->requests, started,
                    "the compiled engine's eh_elf (built once, then cached)");
    struct engine_instance engine;
    struct cfi_diag diag;
    if (open_engine(config, ENGINE_compiled, file, &engine, &diag) ==
        CFI_OK)
        engine_close(&engine);
}

/* Loads one file and runs every item of it. False: out of memory. */
/* The file's .eh_frame_hdr, checked once per file like its FDEs. */
static void check_hdr(const struct cfi_file *file,
                      struct diff_file_result *result)
{
    struct engine_hdr_check *check = malloc(sizeof *check);
    if (check && engine_hdr_check(file, check) == CFI_OK && check->nproblems) {
        result->hdr_problems = check->nproblems;
        result->hdr_first = check->kept[0].kind;
    }
    free(check);
}

static bool run_file(struct diff_run *run, size_t index, double started)
{
    struct diff_file_result *result = &run->files[index];
    struct cfi_file *file;
    const struct cfi_debug_search *search = run->config.debug_search;
    result->status =
        search ? cfi_file_open_debug(result->path, search, &file,
                                     &result->diag)
               : cfi_file_open(result->path, &file, &result->diag);
    if (result->status != CFI_OK)
        return result->status != CFI_E_NOMEM;
    struct sem_file_il *il;
    if (sem_file_il_build(file, &il) != CFI_OK) {
        cfi_file_close(file);
        return false;
    }
    describe_file(il, result);
    check_hdr(file, result);
    prepare_compiled(run, index, file, started);
    struct file_job job = {.config = &run->config, .file_index = index,
                           .file = file, .il = il,
                           .deviations = run->deviations,
                           .ndeviations = run->ndeviations};
    engine_state_config_default(&job.states, run->config.seed);
    if (cfi_file_functions(file, &job.symbols, &job.nsymbols) != CFI_OK)
        job.nsymbols = 0;
    atomic_init(&job.next_item, 0);
    atomic_init(&job.requests_done, 0);
    atomic_init(&job.running, 0);
    atomic_init(&job.out_of_memory, false);
    bool ok = items_make(&job) && run_workers(&job, run, index, started) &&
              merge(run, &job, result);
    items_free(&job);
    free(job.symbols);
    sem_file_il_free(il);
    cfi_file_close(file);
    return ok;
}

struct diff_run *diff_harness_run_new(const struct diff_config *config,
                                 const char *const *paths, size_t npaths)
{
    struct diff_run *run = calloc(1, sizeof *run);
    if (!run)
        return NULL;
    run->config = *config;
    if (run->config.keep > DIFF_KEEP_MAX)
        run->config.keep = DIFF_KEEP_MAX;
    if (run->config.nstates == 0)
        run->config.nstates = 1;
    run->deviations = engine_deviation_table(&run->ndeviations);
    run->deviation_counts = calloc(run->ndeviations + 1,
                                   sizeof *run->deviation_counts);
    run->deviation_examples = calloc(run->ndeviations + 1,
                                     sizeof *run->deviation_examples);
    run->files = calloc(npaths ? npaths : 1, sizeof *run->files);
    run->nfiles = run->files_total = npaths;
    if (!run->deviation_counts || !run->deviation_examples || !run->files) {
        diff_run_free(run);
        return NULL;
    }
    for (size_t d = 0; d < run->ndeviations; d++)
        run->deviation_examples[d].engine = ENGINE_COUNT;
    for (size_t i = 0; i < npaths; i++) {
        run->files[i].path = paths[i];
        run->files[i].index = i;
    }
    return run;
}

enum cfi_status diff_run(const struct diff_config *config,
                         const char *const *paths, size_t npaths,
                         struct diff_run **result)
{
    *result = NULL;
    double started = diff_harness_now();
    struct diff_run *run = diff_harness_run_new(config, paths, npaths);
    if (!run)
        return CFI_E_NOMEM;
    for (size_t i = 0; i < npaths; i++) {
        if (!run_file(run, i, started)) {
            diff_run_free(run);
            return CFI_E_NOMEM;
        }
        report_progress(run, i + 1, run->requests, started, NULL);
    }
    run->seconds = diff_harness_now() - started;
    *result = run;
    return CFI_OK;
}

void diff_run_free(struct diff_run *run)
{
    if (!run)
        return;
    for (size_t r = 0; r < run->nrecords; r++)
        free(run->records[r].row_text);
    for (size_t d = 0; run->deviation_examples && d < run->ndeviations; d++)
        if (run->deviation_examples[d].engine != ENGINE_COUNT)
            free(run->deviation_examples[d].row_text);
    free(run->records);
    free(run->deviation_examples);
    free(run->deviation_counts);
    free(run->failures);
    free(run->files);
    for (size_t i = 0; i < run->nstrings; i++)
        free(run->strings[i]);
    free(run->strings);
    free(run);
}

bool diff_run_bad_input(const struct diff_run *run)
{
    for (size_t i = 0; i < run->nfiles; i++)
        if (run->files[i].status != CFI_OK)
            return true;
    return false;
}

bool diff_run_unexplained(const struct diff_run *run)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        if (run->counts[e].differ)
            return true;
    return false;
}
