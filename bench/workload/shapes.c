/* SPDX-License-Identifier: MIT */
/* shapes.c — the other frame shapes and the entry points (workload.h).
 * Compiled with -fomit-frame-pointer in the mixed build. */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>

#include "workload.h"

workload_shape_fn *const volatile workload_shapes[5] = {
    workload_shape_fp, workload_shape_plain, workload_shape_large,
    workload_shape_aligned, workload_shape_alloca,
};

static long next(int depth, workload_leaf_fn *leaf, void *arg)
{
    if (depth <= 0) {
        leaf(arg);
        return 1;
    }
    return workload_shapes[(unsigned)depth % 5u](depth - 1, leaf, arg);
}

long workload_shape_plain(int depth, workload_leaf_fn *leaf, void *arg)
{
    volatile long local = depth;
    return next(depth, leaf, arg) + local;
}

long workload_shape_large(int depth, workload_leaf_fn *leaf, void *arg)
{
    volatile char big[8192];
    big[depth & 8191] = (char)depth;
    return next(depth, leaf, arg) + big[depth & 8191];
}

long workload_shape_aligned(int depth, workload_leaf_fn *leaf, void *arg)
{
    _Alignas(64) volatile char line[64];
    line[depth & 63] = (char)depth;
    return next(depth, leaf, arg) + line[depth & 63];
}

long workload_shape_alloca(int depth, workload_leaf_fn *leaf, void *arg)
{
    int n = 16 + (depth & 15);
    volatile char bytes[n];
    bytes[n - 1] = (char)depth;
    return next(depth, leaf, arg) + bytes[n - 1];
}

long workload_recurse(int depth, workload_leaf_fn *leaf, void *arg)
{
    return next(depth, leaf, arg) + 1;
}

/* qsort_r's comparison calls the leaf once, from inside libc. */
struct qsort_leaf {
    workload_leaf_fn *leaf;
    void *arg;
    int called;
};

static int compare(const void *a, const void *b, void *data)
{
    struct qsort_leaf *q = data;
    if (!q->called) {
        q->called = 1;
        q->leaf(q->arg);
    }
    return *(const int *)a - *(const int *)b;
}

static void sort_leaf(void *arg)
{
    int values[2] = {2, 1};
    struct qsort_leaf *q = arg;
    qsort_r(values, 2, sizeof values[0], compare, q);
}

long workload_qsort(int depth, workload_leaf_fn *leaf, void *arg)
{
    struct qsort_leaf q = {leaf, arg, 0};
    return workload_recurse(depth, sort_leaf, &q);
}

static volatile long *volatile fault_address;

static long load_first(volatile long *p)
{
    return *p;
}

static long (*const volatile load_fn)(volatile long *) = load_first;

static void fault_leaf(void *arg)
{
    (void)arg;
    load_fn(fault_address);
}

long workload_fault(int depth, volatile long *p)
{
    fault_address = p;
    return workload_recurse(depth, fault_leaf, NULL);
}

/* workload_recurse_small: small frames without a frame pointer. */
static long small_plain(int depth, workload_leaf_fn *leaf, void *arg);

/* Through a pointer, so that gcc cannot turn the recursion into a loop. */
static long (*const volatile small_call)(int, workload_leaf_fn *, void *) =
    small_plain;

static long small_next(int depth, workload_leaf_fn *leaf, void *arg)
{
    if (depth <= 0) {
        leaf(arg);
        return 1;
    }
    return small_call(depth - 1, leaf, arg);
}

static long small_plain(int depth, workload_leaf_fn *leaf, void *arg)
{
    volatile long local = depth;
    return small_next(depth, leaf, arg) + local;
}

long workload_recurse_small(int depth, workload_leaf_fn *leaf, void *arg)
{
    return small_next(depth, leaf, arg) + 1;
}
