/* SPDX-License-Identifier: MIT */
/* harness.h — the differential run: every engine asked the same questions
 * as the reference (the IL evaluator), every answer compared, counted and
 * the differences kept.
 *
 * A run takes files one at a time: the file is loaded and its IL built
 * once (the reference, read-only from then on), its FDEs are cut into
 * work items of DIFF_CHUNK_FDES consecutive FDEs, and `jobs` worker
 * threads take the items in turn. Each worker opens its own engines for
 * the file (engines are not thread-safe) and its own memories; each item
 * keeps its own counts and records; the results are merged in item order
 * afterwards. The result is therefore the same for any number of jobs.
 * An engine that answers in batches (engine_instance.unwind_batch: gdb)
 * is asked the questions of an item together, DIFF_BATCH at most at a
 * time, after the other engines have answered each.
 *
 * A request is one (PC, state) question (engines/state.h). For each request
 * and each engine the verdict (engines/compare.h) is counted:
 *   compared        the engine answered the request (it did not say "not
 *                   comparable" and could answer): agree + differ +
 *                   known_deviation;
 *   agree           every item it speaks for equals the reference's;
 *   differ          some item differs, and at least one differing item is
 *                   explained by no known deviation: a new mismatch;
 *   known_deviation items differ, each explained by a known deviation;
 *   not_comparable  the engine says it cannot be asked this request at all
 *                   (registers it does not speak for are left out of the
 *                   comparison, and not counted here);
 *   errors          the engine could not answer: it could not be opened
 *                   for the file (not built, file unsupported: every
 *                   request of the file), or it ran out of memory.
 * For every engine, requests = compared + not_comparable + errors.
 */
#ifndef CFISEM_DIFF_HARNESS_H
#define CFISEM_DIFF_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engines/engines.h"

#define DIFF_CHUNK_FDES 32
/* Questions an engine that answers in batches (gdb) is asked at once, at
 * most: a work item's, or fewer. */
#define DIFF_BATCH 1024
/* Bound on --fault ranges: `cfisem unwind` takes 16, one is the state's. */
#define DIFF_FAULTS_MAX 15
/* Default and bound of the records kept (mismatches listed). */
#define DIFF_KEEP_DEFAULT 1000
#define DIFF_KEEP_MAX 100000

typedef enum cfi_status (*diff_open_fn)(void *env, enum engine_id id,
                                        const struct cfi_file *file,
                                        const struct engine_config *config,
                                        struct engine_instance *engine,
                                        struct cfi_diag *diag);

struct diff_progress {
    size_t files_done, files;
    uint64_t requests_done;
    double seconds;
    const char *phase;       /* NULL, or what is done before a file runs */
    const char *path;        /* the file in progress */
};

struct diff_config {
    bool engines[ENGINE_COUNT];       /* compared with the reference */
    unsigned nstates;                 /* states per PC (default 4) */
    uint64_t seed;
    bool all_pcs;
    unsigned jobs;                    /* worker threads, >= 1 */
    uint64_t faults[DIFF_FAULTS_MAX][2];  /* run-wide [begin, end) */
    size_t nfaults;
    struct engine_config engine_config;
    size_t keep;                      /* records kept, <= DIFF_KEEP_MAX */
    /* Opens an engine; NULL: engine_open. Tests substitute one. */
    diff_open_fn open;
    void *open_env;
    /* Called about twice a second from the calling thread while a file
     * runs; NULL: never. */
    void (*progress)(void *env, const struct diff_progress *progress);
    void *progress_env;
    /* The watchdog: when one answer (the reference's or an engine's) has
     * taken longer than answer_timeout seconds, `hung` is called from the
     * calling thread with the engine that stopped answering
     * (ENGINE_COUNT: the reference), and must not return: the stuck
     * thread cannot be stopped, so the process ends (diff_run_isolated's
     * child does so, and its parent counts the engine's requests as
     * errors). NULL or a timeout of 0: no watchdog. */
    double answer_timeout;
    void (*hung)(void *env, enum engine_id engine);
    void *hung_env;
    /* The PCs asked in FDE `index` of il's file, instead of those of
     * engine_pcs_of_fde (cfisem diff --pcs stapsdt); NULL: those. Called
     * from the worker threads: it must only read its env. */
    enum cfi_status (*pcs_of_fde)(void *env, const struct sem_file_il *il,
                                  size_t index, struct engine_pc **pcs,
                                  size_t *count, size_t *capacity);
    void *pcs_env;
    /* For the reports: what pcs_of_fde asks ("stapsdt"; NULL: the
     * default PCs), and the program that ran ("cfisem 0.6.0"; NULL: not
     * said). Runs merge only when both are the same (diff/merge.h). */
    const char *pcs_name;
    const char *producer;
    /* The program and the libraries it loaded, each by its build ID
     * ("cfisem 1f2e...; libdw.so.1 9a8b...; ...", diff_build_describe;
     * NULL: not said). Runs merge only when both are the same. */
    const char *build;
    /* Where a stripped file's separate debug file is looked for
     * (cfi_file_open_debug); NULL: files are opened with cfi_file_open,
     * their own sections only. Part of a stored result's key. */
    const struct cfi_debug_search *debug_search;
};

/* The default of answer_timeout, in seconds: one answer normally takes
 * microseconds. */
#define DIFF_ANSWER_TIMEOUT_DEFAULT 10.0

void diff_config_default(struct diff_config *config);

struct diff_counts {
    uint64_t compared, agree, differ, known_deviation, not_comparable, errors;
};

/* One request an engine answered differently from the reference. Owns
 * row_text. */
struct diff_record {
    enum engine_id engine;
    size_t file;                 /* index in the run's files */
    bool has_fde;                /* the FDE at the lookup PC */
    enum cfi_section fde_section;
    uint64_t fde_offset, fde_begin, fde_end;
    enum cfi_status translation; /* the reference's for that FDE */
    char *row_text;              /* the IL of the row, or NULL */
    struct engine_state state;
    struct cfi_frame expected;
    struct cfi_frame got;
    struct engine_outcome outcome;
    /* The function symbol that holds the PC asked (a caller frame's
     * looked up at PC-1), as "name+0x12", the offset PC's (cut to fit);
     * "" when none does. */
    char function[128];
};

struct diff_file_result {
    const char *path;            /* as given */
    size_t index;                /* in the whole list of files asked: its
                                  * place in a run's files, but a shard's
                                  * run (cfisem diff --shard) holds only
                                  * some of them */
    enum cfi_status status;      /* CFI_OK: loaded and run */
    struct cfi_diag diag;        /* why it could not be loaded */
    size_t nfdes, nrows, nfailed_fdes;
    uint64_t requests;
    /* .eh_frame_hdr against .eh_frame (engines/eh_frame_hdr.h): the problems
     * found, and the first one's kind when there are. */
    uint64_t hdr_problems;
    enum engine_hdr_problem_kind hdr_first;
};

/* An engine that could not be opened for a file. */
struct diff_open_failure {
    size_t file;
    enum engine_id engine;
    struct cfi_diag diag;
    uint64_t requests;           /* counted as its errors */
};

struct diff_run {
    struct diff_config config;
    size_t nfiles;
    struct diff_file_result *files;
    size_t files_total;          /* the whole list's length (>= nfiles) */
    uint64_t requests;           /* over all files */
    uint64_t reference[CFI_STATUS_COUNT];  /* the reference's answers */
    struct diff_counts counts[ENGINE_COUNT];
    /* The deviation table; per entry, the requests it explained (at least
     * one item of) and the first such request. */
    const struct engine_deviation *deviations;
    size_t ndeviations;
    uint64_t *deviation_counts;
    struct diff_record *deviation_examples;   /* engine == COUNT: none */
    /* New mismatches (verdict differ), in file, FDE, PC, state, engine
     * order: the first `config.keep`; `records_total` counts them all. */
    struct diff_record *records;
    size_t nrecords;
    uint64_t records_total;
    struct diff_open_failure *failures;
    size_t nfailures;
    double seconds;
    /* Private: messages copied from child processes (diff_run_isolated). */
    char **strings;
    size_t nstrings;
};

/* Runs the harness over `paths`. Returns CFI_OK when the run took place
 * (bad files are recorded in run->files, not an error of the run);
 * CFI_E_NOMEM otherwise. */
enum cfi_status diff_run(const struct diff_config *config,
                         const char *const *paths, size_t npaths,
                         struct diff_run **run);
void diff_run_free(struct diff_run *run);

/* The same run, each file in a child process of its own, so that an
 * engine that crashes on a file (an outside library on a malformed file,
 * say) does not end the run. The child sends its results back through a
 * pipe. When it dies, the file is run again, the reference alone, then
 * each engine alone, each in a child: an engine whose run dies has every
 * request of the file counted as an error, with the reason "crashed"
 * (and the signal); the others' results are kept. Then a new mismatch's
 * order within the file is by engine. If the reference alone dies (a bug
 * of ours), the file is reported as not loaded: "cfisem crashed on this
 * file". Progress is reported as by diff_run. */
enum cfi_status diff_run_isolated(const struct diff_config *config,
                                  const char *const *paths, size_t npaths,
                                  struct diff_run **run);

/* Whether any file could not be loaded; whether any new mismatch. */
bool diff_run_bad_input(const struct diff_run *run);
bool diff_run_unexplained(const struct diff_run *run);

#endif
