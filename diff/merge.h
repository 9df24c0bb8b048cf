/* SPDX-License-Identifier: MIT */
/* merge.h — differential runs read back from their JSON (report.h) and
 * merged, so that a run can be split (by file, by shard over many
 * machines) and put together again into the report one run would give.
 *
 * A run's JSON says everything its text report and its JSON are made
 * of, and each file's place in the whole list of files asked
 * ("index", "files_total"). Merging parts puts their files in that
 * order, sums the counts, takes each deviation's example from the first
 * file that has one, and keeps the first `keep` new mismatches in file
 * order: the text and the JSON (time excepted) are those of a single
 * run over all the files with the same settings, whatever the split.
 */
#ifndef CFISEM_DIFF_MERGE_H
#define CFISEM_DIFF_MERGE_H

#include <stddef.h>

#include "diff/harness.h"

/* Reads the JSON of a run (diff_report_json). CFI_E_IO: the file cannot
 * be read; CFI_E_MALFORMED: it is not the JSON of a run of this program
 * (a member missing or of the wrong type, a deviation or engine this
 * program does not know). `why` gets one line saying what is wrong. */
enum cfi_status diff_run_read_json(const char *path, struct diff_run **run,
                                   char *why, size_t size);

/* One run from parts run with the same settings (seed, states, PCs,
 * engines, faults, keep, producer, build) whose files are each a place of the
 * same whole list, every place in exactly one part. Otherwise
 * CFI_E_MALFORMED, with *bad_part the part that does not fit and `why`
 * what is wrong. Parts stay the caller's. */
enum cfi_status diff_run_merge(struct diff_run *const *parts, size_t nparts,
                               struct diff_run **run, size_t *bad_part,
                               char *why, size_t size);

/* One run from runs over different lists (each holding its whole list:
 * a package's files, say), with the same settings: the list is theirs
 * one after the other, in the order of `parts`. Otherwise
 * CFI_E_MALFORMED, as diff_run_merge. */
enum cfi_status diff_run_concat(struct diff_run *const *parts, size_t nparts,
                                struct diff_run **run, size_t *bad_part,
                                char *why, size_t size);

#endif
