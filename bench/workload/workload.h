/* SPDX-License-Identifier: MIT */
/* workload.h — stacks to unwind: the benchmark's and the run-time
 * library's tests. Built into a shared object (build/workload/), once
 * with a mix of frame shapes and once with frame pointers everywhere
 * (the floor of a frame-pointer walk).
 *
 * workload_recurse(depth, leaf, arg) calls `depth` functions deep, each
 * the next of the cycle of shapes, then leaf(arg) from the innermost:
 *   0 frame pointer   (compiled -fno-omit-frame-pointer)
 *   1 plain           (no frame pointer, small frame)
 *   2 large frame     (8 KiB of locals)
 *   3 realigned stack (a 64-byte aligned local)
 *   4 alloca          (a variable-length array)
 * The calls go through a table of function pointers and use their
 * callee's result, so that none is inlined or made a tail call. */
#ifndef CFISEM_WORKLOAD_H
#define CFISEM_WORKLOAD_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void workload_leaf_fn(void *arg);

long workload_recurse(int depth, workload_leaf_fn *leaf, void *arg);
/* leaf(arg) from glibc's qsort_r comparison callback, under `depth`
 * frames of workload_recurse. */
long workload_qsort(int depth, workload_leaf_fn *leaf, void *arg);

/* `depth` small frames (the plain shape's, no frame pointer), then
 * leaf(arg): a 16 KiB copy of the stack, as perf takes, holds them. */
long workload_recurse_small(int depth, workload_leaf_fn *leaf, void *arg);

/* In its own object (libcfisem-cxx.so, bench/workload/cxx_chain.cc):
 * `depth` C++ frames with destructors, then libstdc++'s
 * ostream::operator<<(long), which writes into a stream buffer whose
 * xsputn calls leaf(arg). */
long workload_cxx(int depth, workload_leaf_fn *leaf, void *arg);

/* In each Csmith workload (bench/workload/csmith.sh, csmith_hook.c):
 * runs the random program once and calls leaf(arg) the first time
 * `depth` of its frames are live. Returns the most frames it had live at
 * once, negated when leaf was not called. */
int workload_csmith(int depth, workload_leaf_fn *leaf, void *arg);

/* Reads *p with its first instruction: given NULL, a fault whose PC is
 * the function's first byte (the previous byte is another function's,
 * or no function's), under `depth` frames of workload_recurse. */
long workload_fault(int depth, volatile long *p);

/* The shapes, one per frame; shape k calls workload_shapes[next]. */
typedef long workload_shape_fn(int depth, workload_leaf_fn *leaf, void *arg);
extern workload_shape_fn *const volatile workload_shapes[5];
long workload_shape_fp(int depth, workload_leaf_fn *leaf, void *arg);
long workload_shape_plain(int depth, workload_leaf_fn *leaf, void *arg);
long workload_shape_large(int depth, workload_leaf_fn *leaf, void *arg);
long workload_shape_aligned(int depth, workload_leaf_fn *leaf, void *arg);
long workload_shape_alloca(int depth, workload_leaf_fn *leaf, void *arg);

#ifdef __cplusplus
}
#endif

#endif
