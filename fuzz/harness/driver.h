/* SPDX-License-Identifier: MIT */
/* driver.h — what the three harness mains share: the verdict on one input,
 * the replay program and libFuzzer's entry points.
 *
 * Each harness (fuzz_*.c) is one source built three ways. With
 * CFISEM_LIBFUZZER defined it is a libFuzzer target
 * (LLVMFuzzerInitialize, LLVMFuzzerTestOneInput; with CFISEM_STRUCTURED
 * also LLVMFuzzerCustomMutator), linked with -fsanitize=fuzzer or any
 * $LIB_FUZZING_ENGINE; else with afl-clang-fast (which defines
 * __AFL_FUZZ_TESTCASE_LEN) an AFL++ persistent-mode harness; with any
 * other compiler a replay program that runs the same target on the files
 * and folders named on its command line. */
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

/* libFuzzer's entry points hand the target no state of the caller's: the
 * harness's context is the one static object of these programs, opened by
 * fuzz_libfuzzer_init (from LLVMFuzzerInitialize; 0, or 1 when it could
 * not be set up) and used by fuzz_libfuzzer_one, which runs `target` on
 * one input and aborts on a disagreement (fuzz_verdict). */
int fuzz_libfuzzer_init(bool libdw);
int fuzz_libfuzzer_one(fuzz_target_fn target, const uint8_t *data,
                       size_t size);

/* libFuzzer's interface (the harnesses define the first two, the
 * structured builds the third; libFuzzer defines LLVMFuzzerMutate). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#endif
