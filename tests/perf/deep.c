/* SPDX-License-Identifier: MIT */
/* deep.c — the program the perf suite (tests/check_perf.c) records with
 * `perf record --call-graph dwarf`: a known chain of calls, main ->
 * deep_run -> deep_9 -> ... -> deep_1 -> deep_0, which spins in deep_0
 * for the time given (ms, default 300). Each call is followed by work
 * of its own, so that no call becomes a jump. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long deep_0(double until)
{
    unsigned long n = 0;
    while (now_ms() < until)
        for (int i = 0; i < 1000; i++)
            n += (unsigned long)i * sink;
    return n;
}

#define LEVEL(k, j)                                                         \
    __attribute__((noinline)) static unsigned long deep_##k(double until)   \
    {                                                                       \
        unsigned long n = deep_##j(until);                                  \
        sink += n;                                                          \
        return n + k;                                                       \
    }
LEVEL(1, 0)
LEVEL(2, 1)
LEVEL(3, 2)
LEVEL(4, 3)
LEVEL(5, 4)
LEVEL(6, 5)
LEVEL(7, 6)
LEVEL(8, 7)
LEVEL(9, 8)

__attribute__((noinline)) static unsigned long deep_run(double ms)
{
    unsigned long n = deep_9(now_ms() + ms);
    sink += n;
    return n;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 300;
    deep_run(ms);
    return (int)(sink & 0);
}
