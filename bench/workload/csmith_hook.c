/* SPDX-License-Identifier: MIT */
/* csmith_hook.c — the hook of the Csmith workloads of bench/real_stacks
 * (built by bench/workload/csmith.sh). A Csmith program is built with
 * -finstrument-functions, its main renamed csmith_main and its printf
 * csmith_printf (it prints its checksum): every function of it calls
 * __cyg_profile_func_enter on entry and __cyg_profile_func_exit on
 * exit, which count the program's frames. This file is built without
 * -finstrument-functions, into the same object.
 *
 * workload_csmith(depth, leaf, arg) runs the program once and calls
 * leaf(arg) the first time `depth` of its frames are live, from the
 * entry hook of the innermost: the leaf sees a stack of the program's
 * own frames, as its compiler laid them out. With CSMITH_DEPTH_PROBE,
 * the file is a main program instead, which prints the deepest count
 * (the depth the benchmark then asks for). */
#include <stdio.h>

#include "workload.h"

int csmith_main(void);
int csmith_printf(const char *format, ...);
void __cyg_profile_func_enter(void *function, void *call_site);
void __cyg_profile_func_exit(void *function, void *call_site);

static int live, deepest, wanted, fired;
static workload_leaf_fn *leaf;
static void *leaf_arg;

void __cyg_profile_func_enter(void *function, void *call_site)
{
    (void)function;
    (void)call_site;
    if (++live > deepest)
        deepest = live;
    if (leaf && !fired && live == wanted) {
        fired = 1;
        leaf(leaf_arg);
    }
}

void __cyg_profile_func_exit(void *function, void *call_site)
{
    (void)function;
    (void)call_site;
    live--;
}

/* The program's output is not wanted. */
int csmith_printf(const char *format, ...)
{
    (void)format;
    return 0;
}

int workload_csmith(int depth, workload_leaf_fn *f, void *arg)
{
    live = deepest = fired = 0;
    wanted = depth;
    leaf = f;
    leaf_arg = arg;
    csmith_main();
    leaf = NULL;
    return fired ? deepest : -deepest;
}

#ifdef CSMITH_DEPTH_PROBE
int main(void)
{
    workload_csmith(0, NULL, NULL);
    printf("%d\n", deepest);
    return 0;
}
#endif
