/* SPDX-License-Identifier: MIT */
/* shape_fp.c — the frame-pointer shape (compiled -fno-omit-frame-pointer,
 * see workload.h). */
#include "workload.h"

long workload_shape_fp(int depth, workload_leaf_fn *leaf, void *arg)
{
    volatile long local = depth;
    if (depth <= 0) {
        leaf(arg);
        return local;
    }
    return workload_shapes[(unsigned)depth % 5u](depth - 1, leaf, arg) +
           local;
}
