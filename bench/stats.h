/* SPDX-License-Identifier: MIT */
/* stats.h — what the benchmarks share to time and summarise: a monotonic
 * clock in ns, and the best and the median of a series of figures. Each
 * benchmark is a program of its own (no module); these are inline. */
#ifndef CFISEM_BENCH_STATS_H
#define CFISEM_BENCH_STATS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline int bench_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The smallest of count (> 0) values. */
static inline double bench_best(const double *values, long count)
{
    double b = values[0];
    for (long i = 1; i < count; i++)
        if (values[i] < b)
            b = values[i];
    return b;
}

/* The median of count values, sorting them in place; 0 when none. */
static inline double bench_median_sorting(double *values, long count)
{
    if (count <= 0)
        return 0;
    qsort(values, (size_t)count, sizeof *values, bench_compare_double);
    return count % 2 ? values[count / 2]
                     : (values[count / 2 - 1] + values[count / 2]) / 2;
}

/* The median of at most BENCH_MAX_ROUNDS values, left in their order. */
enum { BENCH_MAX_ROUNDS = 64 };
static inline double bench_median(const double *values, int count)
{
    double sorted[BENCH_MAX_ROUNDS];
    if (count > BENCH_MAX_ROUNDS)
        count = BENCH_MAX_ROUNDS;
    memcpy(sorted, values, (size_t)(count > 0 ? count : 0) * sizeof *values);
    return bench_median_sorting(sorted, count);
}

#endif
