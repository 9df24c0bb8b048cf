/* SPDX-License-Identifier: MIT */
/* pac.c — a recursion built with -mbranch-protection=pac-ret (PAC_NAME
 * pac_a: the A key) or pac-ret+b-key (pac_b), for runtime_a64.c: each
 * frame signs its return address (paciasp or pacibsp) before it saves
 * x30, and its CFI says so (DW_CFA_AARCH64_negate_ra_state; the CIE's
 * 'B' for the B key). Frame pointers, so that the leaf can read the
 * signed x30 each frame saved in its frame record. */
#include <stdint.h>

#include "pac.h"

/* A frame of the recursion: the callee is called through a volatile
 * pointer, and works after the call, so that neither is inlined nor a
 * tail call. */
__attribute__((noinline)) static int step(int depth, pac_leaf_fn *leaf,
                                          void *arg);

static int (*volatile again)(int, pac_leaf_fn *, void *) = step;

static int step(int depth, pac_leaf_fn *leaf, void *arg)
{
    if (depth <= 0) {
        /* This frame's record: x29 -> {the caller's x29, the x30 this
         * frame saved}, signed by this frame's prologue. (Not a tail
         * call: the record must stay.) */
        return leaf(arg, __builtin_frame_address(0)) + 1;
    }
    return again(depth - 1, leaf, arg) + 1;
}

int PAC_NAME(int depth, pac_leaf_fn *leaf, void *arg)
{
    return again(depth, leaf, arg) + 1;
}
