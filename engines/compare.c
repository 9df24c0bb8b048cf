/* SPDX-License-Identifier: MIT */
/* compare.c — see compare.h. */
#include "compare.h"

#include <stdlib.h>
#include <string.h>

bool engine_is_ours(enum engine_id id)
{
    return id == ENGINE_il || id == ENGINE_interp ||
           id == ENGINE_compiled;
}

/* Statuses that say the engine could not work, not what the CFI means. */
static bool cannot_answer(enum cfi_status status)
{
    return status == CFI_E_NOMEM || status == CFI_E_IO;
}

/* Either answer is a state no input reaches: a bug of cfisem. */
static bool internal_error(const struct cfi_frame *a,
                           const struct cfi_frame *b)
{
    return a->status == CFI_E_INTERNAL || b->status == CFI_E_INTERNAL;
}

static void found(struct engine_mismatch *context,
                  struct engine_outcome *outcome, enum engine_item item,
                  unsigned reg)
{
    context->item = item;
    context->reg = reg;
    const struct engine_deviation *deviation =
        engine_is_ours(context->engine) ||
                internal_error(context->expected, context->got)
            ? NULL
            : engine_deviation_find(context);
    struct engine_item_found found_item = {item, reg, deviation};
    if (outcome->nkept < ENGINE_ITEMS_KEPT) {
        outcome->items[outcome->nkept++] = found_item;
    } else if (!deviation) {
        /* New items are kept before explained ones. */
        for (unsigned i = ENGINE_ITEMS_KEPT; i-- > 0;)
            if (outcome->items[i].deviation) {
                memmove(&outcome->items[i], &outcome->items[i + 1],
                        (ENGINE_ITEMS_KEPT - 1 - i) * sizeof outcome->items[0]);
                outcome->items[ENGINE_ITEMS_KEPT - 1] = found_item;
                break;
            }
    }
    outcome->nitems++;
    outcome->nnew += deviation == NULL;
}

static bool same_status(const struct cfi_frame *a, const struct cfi_frame *b)
{
    if (a->status != b->status || internal_error(a, b))
        return false;
    return a->status != CFI_E_REG_UNKNOWN || a->diag.reg == b->diag.reg;
}

static bool same_reg(const struct cfi_regs *a, const struct cfi_regs *b,
                     unsigned reg)
{
    if (a->status[reg] != b->status[reg])
        return false;
    return a->status[reg] != CFI_REG_VALUE || a->value[reg] == b->value[reg];
}

/* Calls differ(item, reg, env) for each item of `answer` that differs
 * from `expected` (compare.h's list, in its order). */
static void each_differing_item(const struct cfi_frame *expected,
                                const struct engine_answer *answer,
                                void (*differ)(enum engine_item, unsigned,
                                               void *),
                                void *env)
{
    const struct cfi_frame *got = &answer->frame;
    if (!same_status(expected, got)) {
        differ(ENGINE_ITEM_STATUS, 0, env);
        return;
    }
    if (expected->status != CFI_OK)
        return;
    if (answer->cfa_comparable && expected->cfa != got->cfa)
        differ(ENGINE_ITEM_CFA, 0, env);
    /* Equal register files (the common case) have no register that
     * differs; else each register is compared by the rule above. */
    bool identical = !memcmp(&expected->caller, &got->caller,
                             sizeof expected->caller);
    for (unsigned reg = 0; !identical && reg < CFI_NREGS; reg++)
        if (answer->reg_comparable[reg] &&
            !same_reg(&expected->caller, &got->caller, reg))
            differ(ENGINE_ITEM_REG, reg, env);
    if (answer->signal_comparable &&
        expected->signal_frame != got->signal_frame)
        differ(ENGINE_ITEM_SIGNAL, 0, env);
}

static void count_item(enum engine_item item, unsigned reg, void *env)
{
    (void)item;
    (void)reg;
    (*(unsigned *)env)++;
}

bool engine_answer_agrees(const struct cfi_frame *expected,
                          const struct engine_answer *answer)
{
    unsigned n = 0;
    each_differing_item(expected, answer, count_item, &n);
    return n == 0;
}

bool engine_frames_agree(const struct cfi_frame *a, const struct cfi_frame *b)
{
    struct engine_answer *answer = malloc(sizeof *answer);
    if (!answer)
        return false;
    engine_answer_all_comparable(answer);
    answer->frame = *b;
    bool agree = engine_answer_agrees(a, answer);
    free(answer);
    return agree;
}

struct finding {
    struct engine_mismatch *context;
    struct engine_outcome *outcome;
};

static void found_item(enum engine_item item, unsigned reg, void *env)
{
    struct finding *finding = env;
    found(finding->context, finding->outcome, item, reg);
}

void engine_compare(struct engine_mismatch *context,
                    const struct engine_answer *answer,
                    struct engine_outcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    const struct cfi_frame *expected = context->expected;
    const struct cfi_frame *got = &answer->frame;
    context->got = got;
    if (!answer->comparable) {
        outcome->verdict = ENGINE_VERDICT_NOT_COMPARABLE;
        return;
    }
    if (cannot_answer(got->status) || cannot_answer(expected->status)) {
        outcome->verdict = ENGINE_VERDICT_ERROR;
        return;
    }
    struct finding finding = {context, outcome};
    each_differing_item(expected, answer, found_item, &finding);
    if (outcome->nitems == 0)
        outcome->verdict = ENGINE_VERDICT_AGREE;
    else
        outcome->verdict = outcome->nnew ? ENGINE_VERDICT_DIFFER
                                         : ENGINE_VERDICT_KNOWN;
}

const char *engine_item_label(const struct cfi_arch *arch,
                              enum engine_item item, unsigned reg, char *buf,
                              size_t size)
{
    switch (item) {
    case ENGINE_ITEM_STATUS:
        return "status";
    case ENGINE_ITEM_CFA:
        return "cfa";
    case ENGINE_ITEM_REG:
        return cfi_arch_reg_label(arch ? arch : &cfi_arch_x86_64, reg, buf,
                                  size);
    case ENGINE_ITEM_SIGNAL:
        return "signal_frame";
    }
    return "?";
}
