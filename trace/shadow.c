/* SPDX-License-Identifier: MIT */
/* shadow.c — the stack of live frames, as the machine made them. */
#include <stdlib.h>

#include "internal.h"

bool trace_shadow_init(struct trace_shadow *shadow)
{
    shadow->frames = malloc(TRACE_SHADOW_MAX * sizeof *shadow->frames);
    shadow->depth = 0;
    shadow->overflowed = false;
    return shadow->frames != NULL;
}

void trace_shadow_free(struct trace_shadow *shadow)
{
    free(shadow->frames);
    shadow->frames = NULL;
    shadow->depth = 0;
}

/* Beyond the bound, the outermost frames are kept and the new ones
 * dropped: the frames above are then unknown (pops still pass them, as
 * they go by CFA). */
void trace_shadow_push(struct trace_shadow *shadow,
                       const struct trace_frame *frame)
{
    if (shadow->depth == TRACE_SHADOW_MAX) {
        shadow->overflowed = true;
        return;
    }
    shadow->frames[shadow->depth++] = *frame;
}

/* A frame whose CFA is at or below rsp has returned: the return address
 * lies just below the CFA, and a live frame's rsp is below it. */
size_t trace_shadow_pop_to(struct trace_shadow *shadow, uint64_t rsp,
                           struct trace_frame *last)
{
    size_t popped = 0;
    while (shadow->depth > 0 && shadow->frames[shadow->depth - 1].cfa <= rsp) {
        *last = shadow->frames[--shadow->depth];
        popped++;
    }
    return popped;
}

const struct trace_frame *trace_shadow_top(const struct trace_shadow *shadow)
{
    return shadow->depth ? &shadow->frames[shadow->depth - 1] : NULL;
}
