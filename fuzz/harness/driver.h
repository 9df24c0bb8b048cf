/* SPDX-License-Identifier: MIT */
/* driver.h — what the three harness mains share: the verdict on one input
 * and the replay program.
 *
 * Each harness (fuzz_*.c) is one source built two ways. With afl-clang-fast
 * (which defines __AFL_FUZZ_TESTCASE_LEN) it is an AFL++ persistent-mode
 * harness; with any other compiler it is a replay program that runs the
 * same target on the files and folders named on its command line. */
#ifndef CFISEM_FUZZ_DRIVER_H
#define CFISEM_FUZZ_DRIVER_H

#include <stdbool.h>

#include "fuzz/targets.h"

typedef enum fuzz_result (*fuzz_target_fn)(struct fuzz_context *context,
                                           const uint8_t *data, size_t size,
                                           struct fuzz_report *report);

/* A disagreement prints the report on stderr and aborts: AFL++ keeps the
 * input as a crash, and the replay program stops with a stack. A setup
 * failure (no memfd, no libdw) is printed; the input is not at fault. */
void fuzz_verdict(enum fuzz_result result, const struct fuzz_report *report);

/* Runs `target` on every file named in argv, and on every file under every
 * folder named (README files excepted), in sorted order. Prints one line
 * per file with -v, and a count at the end. Exit status 0, or 2 when the
 * harness could not be set up or a file could not be read. `libdw`: load
 * libdw before the first input. */
int fuzz_replay_main(const char *name, int argc, char **argv,
                     fuzz_target_fn target, bool libdw);

#endif
