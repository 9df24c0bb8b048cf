/* SPDX-License-Identifier: MIT */
/* harness_internal.h — what harness.c shares with isolate.c. Not a
 * public header. */
#ifndef CFISEM_DIFF_HARNESS_INTERNAL_H
#define CFISEM_DIFF_HARNESS_INTERNAL_H

#include "diff/harness.h"

double diff_harness_now(void);
/* An empty run over `paths` (files not run yet). NULL: out of memory. */
struct diff_run *diff_harness_run_new(const struct diff_config *config,
                                 const char *const *paths, size_t npaths);
/* Appends a failure; false when out of memory. */
bool diff_harness_add_failure(struct diff_run *run,
                         const struct diff_open_failure *failure);
/* Keeps the record (owning its row_text) when the run keeps fewer than
 * config.keep, else frees its row_text; false when out of memory. Does
 * not count it in records_total. */
bool diff_harness_add_record(struct diff_run *run, struct diff_record *record);
/* A copy of text that lives as long as the run; NULL for NULL or when
 * out of memory. */
const char *diff_harness_keep_string(struct diff_run *run, const char *text);

#endif
