/* SPDX-License-Identifier: MIT */
/* libfuzzer_entry.h — libFuzzer's entry points of a harness, the same in
 * the three: included once, by a harness built with CFISEM_LIBFUZZER,
 * after its `target` function and with
 *   FUZZ_HARNESS_LIBDW   true when libdw is loaded before the first input
 *   FUZZ_HARNESS_SHAPE   the structured mutator's shape (enum fuzz_shape),
 *                        used with CFISEM_STRUCTURED
 * defined. LLVMFuzzerInitialize opens the harness's context (driver.c),
 * LLVMFuzzerTestOneInput runs `target` on one input and aborts on a
 * disagreement, LLVMFuzzerCustomMutator is the structured mutator. */
#ifndef CFISEM_FUZZ_LIBFUZZER_ENTRY_H
#define CFISEM_FUZZ_LIBFUZZER_ENTRY_H

#include "fuzz/harness/driver.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return fuzz_libfuzzer_init(FUZZ_HARNESS_LIBDW);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_libfuzzer_one(target, data, size);
}

#ifdef CFISEM_STRUCTURED
#include "fuzz/mutator/structured.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed)
{
    return fuzz_mutator_libfuzzer(FUZZ_HARNESS_SHAPE, data, size, max_size,
                                  seed);
}
#endif

#endif
