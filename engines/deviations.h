/* SPDX-License-Identifier: MIT */
/* deviations.h — the known differences between an outside engine and DWARF
 * 5 (or the x86-64 ABI), in one place, each with its reason.
 *
 * When an engine's answer differs from the IL evaluator's, the harness
 * builds a struct engine_mismatch for each differing item and asks this
 * table. A mismatch that some entry recognises is a known deviation
 * (counted and reported by its id); any other is new: for our own engines
 * (interp, compiled) every mismatch is a bug and no entry may name them.
 * Each entry is demonstrated by a test (tests/check_deviations.c).
 */
#ifndef CFISEM_ENGINES_DEVIATIONS_H
#define CFISEM_ENGINES_DEVIATIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "cfi/cfi.h"
#include "engines/engine.h"
#include "semantics/sem.h"

/* What differs: the whole status, the CFA, one register, or the signal
 * frame flag (cfi.h step 7). */
enum engine_item { ENGINE_ITEM_STATUS, ENGINE_ITEM_CFA, ENGINE_ITEM_REG,
                 ENGINE_ITEM_SIGNAL };

struct engine_mismatch {
    enum engine_id engine;
    const struct cfi_file *file;
    const struct cfi_fde *fde;         /* at the lookup PC, or NULL */
    const struct sem_row *row;         /* the IL's row there, or NULL */
    enum cfi_status translation;       /* the IL's status for that FDE */
    const struct cfi_request *request;
    const struct cfi_frame *expected;  /* the IL evaluator's answer */
    const struct cfi_frame *got;       /* the engine's */
    enum engine_item item;
    unsigned reg;                      /* ENGINE_ITEM_REG */
};

struct engine_deviation {
    const char *id;          /* "libunwind-no-undefined-default" */
    enum engine_id engine;
    const char *summary;     /* one line */
    const char *reason;      /* what DWARF 5 / the ABI says, what it does */
    bool (*matches)(const struct engine_mismatch *mismatch);
};

/* The entry that explains `mismatch`, or NULL. */
const struct engine_deviation *engine_deviation_find(const struct engine_mismatch *mismatch);
/* The whole table. */
const struct engine_deviation *engine_deviation_table(size_t *count);

#endif
