/* SPDX-License-Identifier: MIT */
/* fuzz_cfi_bytes.c — AFL++ harness 1: raw CIE and FDE records through our
 * parser, translator and both engines (fuzz/targets.h, target 1). Aborts
 * on any disagreement between the direct interpreter and the IL
 * evaluator.
 *
 * Built with CFISEM_LIBFUZZER: a libFuzzer target (libfuzzer_entry.h:
 * LLVMFuzzerInitialize, LLVMFuzzerTestOneInput; with CFISEM_STRUCTURED
 * also the structured mutator as LLVMFuzzerCustomMutator). Built with
 * afl-clang-fast: an AFL++ persistent-mode harness (the input in shared
 * memory, 10000 inputs per process). Built with any other
 * compiler: the replay program, `fuzz_cfi_bytes [-v] FILE|FOLDER...`.
 * AFL++'s macros are GNU C (statement expressions): the one documented
 * exception to C11 in our sources. */
#include "fuzz/harness/driver.h"

static enum fuzz_result target(struct fuzz_context *context,
                               const uint8_t *data, size_t size,
                               struct fuzz_report *report)
{
    (void)context;
    return fuzz_one_cfi_bytes(data, size, report);
}

#if defined(CFISEM_LIBFUZZER)
#define FUZZ_HARNESS_LIBDW false
#define FUZZ_HARNESS_SHAPE FUZZ_SHAPE_CFI_BYTES
#include "fuzz/harness/libfuzzer_entry.h"
#elif defined(__AFL_FUZZ_TESTCASE_LEN)
#include <unistd.h> /* read(), which __AFL_FUZZ_TESTCASE_LEN calls */

__AFL_FUZZ_INIT();

int main(void)
{
    struct fuzz_context context;
    struct fuzz_report report;
    if (fuzz_context_open(&context) != FUZZ_OK)
        return 2;
    __AFL_INIT();
    const uint8_t *input = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(10000)) {
        size_t size = __AFL_FUZZ_TESTCASE_LEN;
        fuzz_verdict(target(&context, input, size, &report), &report);
    }
    fuzz_context_close(&context);
    return 0;
}
#else
int main(int argc, char **argv)
{
    return fuzz_replay_main("fuzz_cfi_bytes", argc, argv, target, false);
}
#endif
