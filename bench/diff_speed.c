/* SPDX-License-Identifier: MIT */
/* diff_speed.c — how long `cfisem diff --engines interp,il,compiled` takes
 * over every row of a file (libc.so.6 by default): each row's first and
 * last address and one inside, 4 states each, after the one-time compile
 * of the eh_elf (timed apart). Then which engine the time goes to: the
 * same run with no engine (the states and the reference alone) and with
 * each engine alone; an engine's share is its run minus the one with
 * none.
 *
 *   build/bench/diff_speed [FILE] [ROUNDS]
 *
 * Not a test: the numbers depend on the machine. Each figure is the best
 * of ROUNDS (default 3) runs, which damps the noise of a shared machine.
 * The eh_elf is built into a fresh temporary cache folder. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff/harness.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Best wall time of `rounds` runs with `engines` (a mask by engine id). */
static double best_run(const char *path, unsigned engines, unsigned jobs,
                       const char *cache, unsigned rounds, uint64_t *requests)
{
    struct diff_config config;
    diff_config_default(&config);
    for (int e = 0; e < ENGINE_COUNT; e++)
        config.engines[e] = (engines >> e) & 1;
    config.jobs = jobs;
    config.engine_config.cache_dir = cache;
    double best = 1e30;
    for (unsigned r = 0; r < rounds; r++) {
        struct diff_run *run;
        const char *paths[] = {path};
        if (diff_run(&config, paths, 1, &run) != CFI_OK) {
            fprintf(stderr, "diff_speed: out of memory\n");
            exit(1);
        }
        if (diff_run_unexplained(run) || run->files[0].status != CFI_OK) {
            fprintf(stderr, "diff_speed: %s: mismatches or a bad file\n", path);
            exit(1);
        }
        for (int e = 0; e < ENGINE_COUNT; e++)
            if (config.engines[e] && run->counts[e].errors) {
                fprintf(stderr, "diff_speed: %s could not answer\n",
                        engine_name((enum engine_id)e));
                exit(1);
            }
        *requests = run->requests;
        if (run->seconds < best)
            best = run->seconds;
        diff_run_free(run);
    }
    return best;
}

#define BIT(e) (1u << ENGINE_##e)

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";
    unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 3;
    if (rounds == 0)
        rounds = 1;
    char cache[] = "/tmp/cfisem-diff-speed-XXXXXX";
    if (!mkdtemp(cache)) {
        fprintf(stderr, "diff_speed: cannot make a cache folder\n");
        return 1;
    }
    uint64_t requests = 0;
    double started = now_seconds();
    best_run(path, BIT(compiled), 1, cache, 1, &requests);
    double compile = now_seconds() - started;
    printf("%s: %" PRIu64 " requests (row boundaries and one address inside,"
           " 4 states); eh_elf built once in %.1f s\n", path, requests,
           compile);
    const struct {
        const char *name;
        unsigned engines;
        unsigned jobs;
    } runs[] = {
        {"interp,il,compiled  --jobs 1", BIT(interp) | BIT(il) | BIT(compiled), 1},
        {"interp,il,compiled  --jobs 2", BIT(interp) | BIT(il) | BIT(compiled), 2},
        {"no engine (states and reference)", 0, 1},
        {"il only", BIT(il), 1},
        {"interp only", BIT(interp), 1},
        {"compiled only", BIT(compiled), 1},
    };
    double none = 0;
    printf("%-34s %9s %12s %14s\n", "run", "seconds", "requests/s",
           "engine's share");
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        double s = best_run(path, runs[i].engines, runs[i].jobs, cache, rounds,
                            &requests);
        if (runs[i].engines == 0)
            none = s;
        printf("%-34s %9.3f %12.0f", runs[i].name, s, (double)requests / s);
        if (i > 2)
            printf(" %11.3f s", s - none);
        printf("\n");
    }
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", cache);
    if (system(command) != 0)
        fprintf(stderr, "diff_speed: could not remove %s\n", cache);
    return 0;
}
