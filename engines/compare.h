/* SPDX-License-Identifier: MIT */
/* compare.h — one engine's answer against the reference's, item by item,
 * and the verdict the harness counts.
 *
 * Items, in this order (engines/deviations.h's enum engine_item):
 *   status  the error class (CFI_OK when unwound); when both fail with
 *           CFI_E_REG_UNKNOWN, also the register named by diag.reg. An
 *           answer of CFI_E_INTERNAL (cfisem is wrong) differs from
 *           every answer, another CFI_E_INTERNAL too, and no deviation
 *           explains it;
 *   cfa     when both unwound and the engine speaks for the CFA;
 *   reg N   when both unwound and the engine speaks for register N
 *           (0 .. CFI_NREGS-1): the same status (value, undefined,
 *           unknown) and, for a value, the same value;
 *   signal  when both unwound and the engine speaks for it: the same
 *           signal frame flag (cfi.h step 7).
 * When the status differs nothing else is compared: one item.
 *
 * Verdict of one (engine, request):
 *   not_comparable  the engine says it cannot be asked this request;
 *   error           the engine could not answer (out of memory, I/O),
 *                   or the reference could not;
 *   agree           no item differs;
 *   known           items differ, and every one is explained by an entry
 *                   of the deviation table (engine_deviation_find);
 *   differ          at least one differing item is explained by none:
 *                   a new mismatch. Our own engines (il, interp,
 *                   compiled) are never looked up in the table: any
 *                   difference of theirs is new.
 */
#ifndef CFISEM_ENGINES_COMPARE_H
#define CFISEM_ENGINES_COMPARE_H

#include <stdbool.h>

#include "engines/deviations.h"
#include "engines/engine.h"

enum engine_verdict {
    ENGINE_VERDICT_AGREE,
    ENGINE_VERDICT_DIFFER,
    ENGINE_VERDICT_KNOWN,
    ENGINE_VERDICT_NOT_COMPARABLE,
    ENGINE_VERDICT_ERROR,
};

/* The first items found are kept with their explanation; past
 * ENGINE_ITEMS_KEPT, a new item replaces the last explained one kept. */
#define ENGINE_ITEMS_KEPT 8

struct engine_item_found {
    enum engine_item item;
    unsigned reg;                            /* ENGINE_ITEM_REG */
    const struct engine_deviation *deviation;  /* NULL: new */
};

struct engine_outcome {
    enum engine_verdict verdict;
    unsigned nitems;          /* differing items, all of them */
    unsigned nnew;            /* of which explained by no deviation */
    unsigned nkept;           /* min(nitems, ENGINE_ITEMS_KEPT) */
    struct engine_item_found items[ENGINE_ITEMS_KEPT];
};

/* The one definition of agreement, for engine_compare, the fuzz harnesses
 * and the tests: no item above differs, each compared when `answer` says
 * the engine speaks for it (the status always). engine_frames_agree
 * compares every item. Neither looks at the deviation table, nor at
 * whether the answer is comparable at all. */
bool engine_answer_agrees(const struct cfi_frame *expected,
                          const struct engine_answer *answer);
bool engine_frames_agree(const struct cfi_frame *a, const struct cfi_frame *b);

/* Whether `id` is one of ours (il, interp, compiled). */
bool engine_is_ours(enum engine_id id);

/* Compares answer with context->expected. `context` gives everything a
 * deviation may look at (engine, file, fde, row, translation, request,
 * expected); its `got`, `item` and `reg` are filled here for each item
 * looked up. */
void engine_compare(struct engine_mismatch *context,
                    const struct engine_answer *answer,
                    struct engine_outcome *outcome);

/* "status", "cfa", or the register's name on `arch` ("rbx", "r17";
 * "x30" on AArch64; NULL: x86-64). */
const char *engine_item_label(const struct cfi_arch *arch,
                              enum engine_item item, unsigned reg, char *buf,
                              size_t size);

#endif
