/* SPDX-License-Identifier: MIT */
/* batch.h — a differential run over many files (a whole system's),
 * one file at a time, each file's result a run of its own merged at the
 * end (diff/merge.h), so that the result is that of diff_run, and:
 *   - a file whose contents (SHA-256) are those of an earlier file of
 *     the run is not run again: its result is the earlier one's, under
 *     its own path (a system has hard links and copies);
 *   - with a results folder, each file's result is written there as the
 *     JSON of its one-file run, named by the file's SHA-256 and a key of
 *     the settings and of this very program (its build ID); a later run
 *     finds it there and reads it instead of running the file: a run
 *     stopped half-way goes on where it stopped, and a file that changed
 *     is run again;
 *   - the files may be a shard of a longer list (cfisem diff --shard):
 *     each keeps its place in the whole list, so that the shards' JSON
 *     merge into the run over the whole list.
 */
#ifndef CFISEM_DIFF_BATCH_H
#define CFISEM_DIFF_BATCH_H

#include "diff/harness.h"

struct diff_batch {
    const char *results_dir;  /* NULL: no results stored */
    bool isolate;             /* each file in a child (diff_run_isolated) */
    /* The files' places in a whole list of files_total; NULL: the files
     * are the whole list. */
    const size_t *places;
    size_t files_total;
};

struct diff_batch_counts {
    size_t ran;               /* files run */
    size_t same_contents;     /* taken from an earlier file of the run */
    size_t stored;            /* read from the results folder */
    size_t store_failures;    /* results that could not be written */
};

/* The program and every library it has loaded, "NAME ID" each (its
 * file name, its GNU build ID in hex or "-"), "; " between them, the
 * program first: what diff_config's build says. Cut short when it does
 * not fit in `size`. */
void diff_build_describe(char *out, size_t size);

/* CFI_E_NOMEM when out of memory (bad files are results, as for
 * diff_run); CFI_E_IO when the results folder cannot be created. */
enum cfi_status diff_run_batch(const struct diff_config *config,
                               const struct diff_batch *batch,
                               const char *const *paths, size_t npaths,
                               struct diff_run **run,
                               struct diff_batch_counts *counts);

#endif
