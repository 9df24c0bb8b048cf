/* SPDX-License-Identifier: MIT */
/* fuzz_oracles.c — harness 3: outside parsers (libdwarf, elfutils libdw,
 * libunwind) on a mutated ELF file, the first byte choosing which
 * (fuzz/targets.h, target 3). A crash inside a library is the finding;
 * then that library's engine is compared with ours (fuzz_outside_compare):
 * our own engines' disagreement aborts, the library's unexplained
 * differences go to $CFISEM_FUZZ_FINDINGS. The libraries may leak: an
 * AFL++ process runs a modest number of inputs.
 *
 * Built with CFISEM_LIBFUZZER: a libFuzzer target (libfuzzer_entry.h:
 * LLVMFuzzerInitialize, LLVMFuzzerTestOneInput; with CFISEM_STRUCTURED
 * also the structured mutator as LLVMFuzzerCustomMutator). Built with
 * afl-clang-fast: an AFL++ persistent-mode harness (the input in shared
 * memory, 1000 inputs per process). Built with any other
 * compiler: the replay program, `fuzz_oracles [-v] FILE|FOLDER...`.
 * AFL++'s macros are GNU C (statement expressions): the one documented
 * exception to C11 in our sources. */
#include "fuzz/harness/driver.h"

static enum fuzz_result target(struct fuzz_context *context,
                               const uint8_t *data, size_t size,
                               struct fuzz_report *report)
{
    return fuzz_one_oracles(context, data, size, report);
}

#if defined(CFISEM_LIBFUZZER)
#define FUZZ_HARNESS_LIBDW true
#define FUZZ_HARNESS_SHAPE FUZZ_SHAPE_ORACLES
#include "fuzz/harness/libfuzzer_entry.h"
#elif defined(__AFL_FUZZ_TESTCASE_LEN)
#include <unistd.h> /* read(), which __AFL_FUZZ_TESTCASE_LEN calls */

__AFL_FUZZ_INIT();

int main(void)
{
    struct fuzz_context context;
    struct fuzz_report report;
    if (fuzz_context_open(&context) != FUZZ_OK ||
        fuzz_oracle_libdw_load(&context) != FUZZ_OK)
        return 2;
    __AFL_INIT();
    const uint8_t *input = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(1000)) {
        size_t size = __AFL_FUZZ_TESTCASE_LEN;
        fuzz_verdict(target(&context, input, size, &report), &report);
    }
    fuzz_context_close(&context);
    return 0;
}
#else
int main(int argc, char **argv)
{
    return fuzz_replay_main("fuzz_oracles", argc, argv, target, true);
}
#endif
