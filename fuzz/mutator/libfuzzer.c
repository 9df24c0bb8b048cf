/* SPDX-License-Identifier: MIT */
/* libfuzzer.c — the structured mutator as libFuzzer's custom mutator
 * (structured.h); linked into the NAME_structured targets only, where
 * libFuzzer provides LLVMFuzzerMutate. */
#include "structured.h"

/* libFuzzer's own mutations (its interface; no header declares it). */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

size_t fuzz_mutator_libfuzzer(enum fuzz_shape shape, uint8_t *data,
                              size_t size, size_t max_size, unsigned seed)
{
    if (seed % 4 == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    enum fuzz_mutation what;
    size_t out = fuzz_mutator_structured(shape, data, size, max_size, seed,
                                         &what);
    if (what == FUZZ_MUT_NONE)
        return LLVMFuzzerMutate(data, size, max_size);
    return out;
}
