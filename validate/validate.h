/* SPDX-License-Identifier: MIT */
/* validate.h — checking an eh_elf against the reference at every address.
 *
 * The addresses: every address of every FDE of the file (where it is the
 * FDE the lookup finds; at most 1 MiB of addresses per FDE), as the
 * lookup PC of an innermost frame, and every address of the object's
 * text (its executable sections; its executable segments when it has no
 * section headers) that no FDE covers (a gap: the eh_elf must say "no
 * FDE" there; at most 1 MiB per gap). Each in `nstates` states
 * (engines/state.h). The eh_elf's answer is compared with the IL
 * evaluator's:
 *
 *   full       (an eh_elf of ours, compile/eh_elf.h, through compile/'s
 *              loader) status (error class, the register of reg_unknown),
 *              CFA, registers 0-16 (value, undefined, unknown; the value);
 *   v1, v1-direct (engines/eh_elf_v1.h) only what v1 carries: error or not,
 *              the CFA (the result's rsp, whose flag must be set), rip,
 *              rbp, rbx. The states know only rip, rsp, rbp, rbx. The
 *              reference (validate/v1.c) is the IL row restricted to the
 *              rules of rbx, rbp and of the return address column (the
 *              caller's rip), evaluated as the IL evaluates them; where
 *              one of those rules is DW_CFA_register of a register v1's
 *              context lacks, the value is well defined but v1 cannot
 *              carry it, and the expected answer is the error flag (a
 *              clear flag would say "undefined" for rip, "the callee's
 *              value" for rbp and rbx: both wrong). A clear rip flag
 *              means undefined; a clear rbp or rbx flag means "not
 *              restored", the callee's value, which v1 cannot tell from
 *              undefined or unknown, so it agrees with any of the three
 *              when the callee's value is the expected one or the
 *              expected is not a value. A read that faults (v1) makes
 *              the answer a memory fault.
 *
 * Isolation. The eh_elf runs only in child processes (validate/child.c),
 * one per batch of questions, which send their answers back through
 * shared memory. A child catches the signals of a call that crashes
 * (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP, SIGSYS), records
 * the signal and goes on; a call that hangs (CALL_SECONDS per 1024
 * calls, config.timeout), exits or kills the child otherwise ends it, and a new child
 * goes on after that call. A crash is a wrong answer with its signal and
 * the first lines the child wrote on stderr before it.
 *
 *   v1-direct: the eh_elf reads raw pointers. The child maps a 4 MiB
 *   region (mmap), the stack registers 1 MiB into it, filled with the
 *   bytes the memory model has at those same addresses for the state's
 *   seed, so the reference and the eh_elf read the same bytes. No state
 *   has a fault.
 *
 * An address is wrong when any state's answer differs. Its kind is that
 * of its first wrong question that is not "unsupported" (else of its
 * first): the set of differing items (status with the pair of classes,
 * cfa, each register), or "crashed" with the signal. Consecutive wrong
 * addresses of one FDE (or of one gap) with the same kind make one wrong
 * range, reported with its first wrong question: state, expected, got,
 * the row's IL and the `cfisem unwind` lines of the reference and of the
 * eh_elf. Wrong ranges are summed up by kind.
 *
 * "Unsupported": the eh_elf says it cannot (the error flag of v1, or
 * EH_ELF_E_UNSUPPORTED) where the reference answers something else, and
 * nothing else differs: a generator's limitation, safe for a consumer
 * that falls back to DWARF, apart from a wrong value (unsafe).
 */
#ifndef CFISEM_VALIDATE_VALIDATE_H
#define CFISEM_VALIDATE_VALIDATE_H

#include <stdio.h>

#include "engines/engines.h"
#include "validate/sframe_check.h"

enum validate_abi {
    VALIDATE_ABI_FULL,
    VALIDATE_ABI_V1,
    VALIDATE_ABI_V1_DIRECT
};

/* "full", "v1", "v1-direct"; parse returns false for anything else. */
const char *validate_abi_name(enum validate_abi abi);
bool validate_abi_parse(const char *text, enum validate_abi *abi);

struct validate_config {
    enum validate_abi abi;
    unsigned nstates;        /* default 4 */
    uint64_t seed;           /* default 1 */
    size_t keep;             /* wrong ranges kept (all are counted) */
    bool allow_unsupported;  /* "unsupported" ranges do not fail */
    uint64_t max_addresses;  /* 0: all; else the first N (a sample) */
    unsigned timeout;        /* seconds a child has for 1024 calls (0: 10) */
    void (*progress)(void *env, uint64_t done, uint64_t total,
                     double seconds);
    void *progress_env;
    /* Only these file addresses, innermost (cfisem validate --pcs
     * stapsdt: the SDT probes); NULL: every address of every FDE. */
    const uint64_t *only_pcs;
    size_t nonly_pcs;
    /* Where a stripped FILE's separate debug file is looked for
     * (cfi_file_open_debug); NULL: cfi_file_open, its own sections. */
    const struct cfi_debug_search *debug_search;
};

void validate_config_default(struct validate_config *config);

/* Bits of a wrong range's kind: register r is VALIDATE_KIND_REG0 << r,
 * for r below the file's reported registers (x86-64: 17, AArch64: 35;
 * at most VALIDATE_REGS_MAX). */
#define VALIDATE_REGS_MAX 40
#define VALIDATE_KIND_STATUS ((uint64_t)1 << 0)
#define VALIDATE_KIND_CFA ((uint64_t)1 << 1)
#define VALIDATE_KIND_REG0 ((uint64_t)1 << 2)
#define VALIDATE_KIND_CRASH ((uint64_t)1 << 62)

/* What a wrong range means for whoever ships the eh_elf. */
enum validate_wrong_class {
    VALIDATE_WRONG_VALUE,        /* a wrong answer: unsafe */
    VALIDATE_WRONG_UNSUPPORTED,  /* the eh_elf says it cannot: safe with a
                                fallback */
    VALIDATE_WRONG_CRASH,        /* the call crashed (or hung) */
};
const char *validate_wrong_class_name(enum validate_wrong_class c);

struct validate_wrong_range {
    bool has_fde;
    enum cfi_section fde_section;
    uint64_t fde_offset, fde_begin, fde_end;
    uint64_t begin, end;         /* lookup PCs [begin, end) */
    uint64_t kind;               /* VALIDATE_KIND_* */
    /* with VALIDATE_KIND_STATUS */
    enum cfi_status expected_status, got_status;
    uint64_t wrong_requests;     /* (address, state) pairs wrong */
    /* The first wrong question. */
    struct engine_state state;
    struct cfi_frame expected;
    struct cfi_frame got;
    struct engine_outcome outcome;
    bool crashed;
    int signal;                  /* of the crash; 0: none (exited, not run) */
    char *crash_text;            /* owned, or NULL: what the call said on
                                    stderr, the first lines */
    char *row_text;              /* owned, or NULL */
    bool in_gap;                 /* addresses no FDE covers */
    enum validate_wrong_class wrong_class;
    /* The function symbol that holds begin, "name+0x12"; "" when none
     * does (cut to fit). */
    char function[128];
};

/* Wrong ranges of one kind (kind, statuses, signal), summed. */
struct validate_kind_total {
    enum validate_wrong_class wrong_class;
    uint64_t kind;
    enum cfi_status expected_status, got_status;
    int signal;
    uint64_t ranges, addresses, wrong_requests;
};

/* A crashed call's signal, as text: "SIGSEGV", "timed out (SIGALRM)",
 * "exited" (0). */
const char *validate_crash_text(int signal);

struct validate_result {
    struct validate_config config;
    const char *path;
    const char *eh_elf_path;
    const struct cfi_arch *arch;       /* the file's: register names */
    size_t nfdes;
    uint64_t addresses, requests;
    uint64_t gap_addresses;            /* of `addresses`, in no FDE */
    uint64_t wrong_addresses, wrong_requests, crashes;
    uint64_t reference[CFI_STATUS_COUNT];
    struct validate_wrong_range *ranges;   /* the first config.keep */
    size_t nranges;
    uint64_t ranges_total;
    struct validate_kind_total *kinds;     /* every range, summed by kind */
    size_t nkinds;
    uint64_t unsupported_ranges;       /* of ranges_total */
    /* When most calls crashed: the ABI that fits, if another does. */
    bool abi_hint;
    enum validate_abi hint_abi;
    uint64_t hint_addresses, hint_wrong;
    double seconds;
    /* The debug file FILE names (.gnu_debuglink) that was found nowhere
     * (config.debug_search), owned; NULL: none missing. */
    char *debug_missing;
};

/* Whether the validation fails: a wrong range, not counting the
 * "unsupported" ones when config.allow_unsupported. */
bool validate_result_failed(const struct validate_result *v);

/* Why the file or the eh_elf could not be used. */
struct validate_error {
    const char *path;            /* the file at fault */
    struct cfi_diag diag;
    char detail[320];            /* e.g. dlerror()'s text, or "" */
};

/* Validates `eh_elf_path` for `path`. On CFI_OK *result holds the
 * findings (wrong ranges are findings, not errors). Otherwise *error
 * names the file that could not be used (the ELF or the eh_elf) and says
 * why: the file's own error classes, CFI_E_IO or CFI_E_UNSUPPORTED for an
 * eh_elf that cannot be loaded (with dlerror()'s text in detail) or was
 * built from another file (cg_check_stamp; cg_stale_text in detail),
 * CFI_E_NOMEM. The eh_elf is first loaded in a child process: a
 * constructor that crashes is an error, not a crash. */
enum cfi_status validate_eh_elf(const struct validate_config *config,
                                const char *path, const char *eh_elf_path,
                                struct validate_result **result,
                                struct validate_error *error);
void validate_result_free(struct validate_result *validation);

/* One question asked of a v1 eh_elf (abi v1 or v1-direct) as validate
 * asks it, in a child process: `callee`'s rip, rsp, rbp, rbx, the lookup
 * PC, memory read through `memory` (v1), or (v1-direct) 4 MiB of real
 * memory mapped around the callee's rsp at those very addresses and
 * filled from `memory`. For `cfisem unwind --engine compiled` with a v1
 * eh_elf. CFI_OK with *answer filled (a crash is an answer); CFI_E_IO
 * when the eh_elf cannot be loaded or the stack cannot be mapped there,
 * with the reason in detail. */
struct validate_v1_answer {
    struct engine_v1_context got;
    bool faulted;                /* v1: a read of deref faulted */
    bool crashed;
    int signal;
    char text[400];              /* a crash: the first lines of its stderr */
};
enum cfi_status validate_v1_ask(const char *eh_elf_path,
                                enum validate_abi abi,
                                const struct cfi_regs *callee,
                                uint64_t lookup_pc, struct cfi_memory memory,
                                struct validate_v1_answer *answer,
                                struct cfi_diag *diag, char *detail,
                                size_t size);

void validate_result_text(FILE *out, const struct validate_result *v,
                          size_t show);
void validate_result_json(FILE *out, const struct validate_result *v);

#endif
