/* validate.h — checking an eh_elf against the reference at every address.
 *
 * For each FDE of the file, every address it covers (where it is the FDE
 * the lookup finds; at most 1 MiB of addresses per FDE), as the lookup PC
 * of an innermost frame, and the first address after the FDE when no FDE
 * covers it (the eh_elf must say "no FDE" there), each in `nstates`
 * states (diff/state.h). The eh_elf's answer is compared with the IL
 * evaluator's:
 *
 *   full       (an eh_elf of ours, compile/eh_elf.h, through compile/'s
 *              loader) status (error class, the register of reg_unknown),
 *              CFA, registers 0-16 (value, undefined, unknown; the value);
 *   v1, v1-direct (diff/eh_elf_v1.h) only what v1 carries: error or not,
 *              the CFA (the result's rsp, whose flag must be set), rip,
 *              rbp, rbx. The states know only rip, rsp, rbp, rbx. The
 *              reference is the IL row restricted to rbx, rbp and rip
 *              (v1 evaluates no other rule, so their errors are not its
 *              business). A flag that is clear means: rip undefined; rbp,
 *              rbx "not restored", i.e. the callee's value, which v1
 *              cannot tell from undefined or unknown, so a clear flag
 *              agrees with any of the three when the callee's value is
 *              the expected one or the expected is not a value. A read
 *              that faults (v1) makes the answer a memory fault.
 *
 *   v1-direct: the eh_elf reads raw pointers. The validator maps a 4 MiB
 *   region (mmap), puts the stack registers 1 MiB into it, and fills it
 *   with the bytes the memory model has at those same addresses for the
 *   state's seed, so the reference and the eh_elf read the same bytes.
 *   No state has a fault. The calls run in a child process per batch of
 *   addresses, writing results to shared memory: a stray read kills the
 *   child, the address it was at is reported "crashed", and a new child
 *   goes on from the next one (after 64 crashes in a batch its remaining
 *   addresses are reported crashed without being run).
 *
 * An address is wrong when any state's answer differs. Consecutive wrong
 * addresses of one FDE with the same kind (the set of differing items:
 * status with the pair of classes, cfa, each register, "crashed") make one
 * wrong range, reported with its first wrong question: state, expected,
 * got, the row's IL and the `cfisem unwind` line of the reference.
 */
#ifndef CFISEM_DIFF_VALIDATE_H
#define CFISEM_DIFF_VALIDATE_H

#include <stdio.h>

#include "diff/compare.h"
#include "diff/state.h"

enum diff_abi { DIFF_ABI_FULL, DIFF_ABI_V1, DIFF_ABI_V1_DIRECT };

/* "full", "v1", "v1-direct"; parse returns false for anything else. */
const char *diff_abi_name(enum diff_abi abi);
bool diff_abi_parse(const char *text, enum diff_abi *abi);

struct diff_validate_config {
    enum diff_abi abi;
    unsigned nstates;        /* default 4 */
    uint64_t seed;           /* default 1 */
    size_t keep;             /* wrong ranges kept (all are counted) */
    void (*progress)(void *env, uint64_t done, uint64_t total,
                     double seconds);
    void *progress_env;
    /* Only these file addresses, innermost (cfisem validate --pcs
     * stapsdt: the SDT probes); NULL: every address of every FDE. */
    const uint64_t *only_pcs;
    size_t nonly_pcs;
};

void diff_validate_config_default(struct diff_validate_config *config);

/* Bits of a wrong range's kind. */
enum {
    DIFF_KIND_STATUS = 1u << 0,
    DIFF_KIND_CFA = 1u << 1,
    DIFF_KIND_REG0 = 1u << 2,          /* reg r: DIFF_KIND_REG0 << r, r < 17 */
    DIFF_KIND_CRASH = 1u << 20,
};

struct diff_wrong_range {
    bool has_fde;
    enum cfi_section fde_section;
    uint64_t fde_offset, fde_begin, fde_end;
    uint64_t begin, end;         /* lookup PCs [begin, end) */
    uint32_t kind;               /* DIFF_KIND_* */
    enum cfi_status expected_status, got_status;  /* with DIFF_KIND_STATUS */
    uint64_t wrong_requests;     /* (address, state) pairs wrong */
    /* The first wrong question. */
    struct diff_state state;
    struct cfi_frame expected;
    struct cfi_frame got;
    struct diff_outcome outcome;
    bool crashed;
    char *row_text;              /* owned, or NULL */
};

struct diff_validation {
    struct diff_validate_config config;
    const char *path;
    const char *eh_elf_path;
    size_t nfdes;
    uint64_t addresses, requests;
    uint64_t wrong_addresses, wrong_requests, crashes;
    uint64_t reference[CFI_STATUS_COUNT];
    struct diff_wrong_range *ranges;   /* the first config.keep */
    size_t nranges;
    uint64_t ranges_total;
    double seconds;
};

/* Validates `eh_elf_path` for `path`. On CFI_OK *result holds the
 * findings (wrong ranges are findings, not errors). Otherwise *bad_path
 * is the file that could not be used (the ELF or the eh_elf) and *diag
 * says why: the file's own error classes, CFI_E_IO or CFI_E_UNSUPPORTED
 * for an eh_elf that cannot be loaded, CFI_E_NOMEM. */
enum cfi_status diff_validate(const struct diff_validate_config *config,
                              const char *path, const char *eh_elf_path,
                              struct diff_validation **result,
                              const char **bad_path, struct cfi_diag *diag);
void diff_validation_free(struct diff_validation *validation);

void diff_validation_text(FILE *out, const struct diff_validation *v,
                          size_t show);
void diff_validation_json(FILE *out, const struct diff_validation *v);

#endif
