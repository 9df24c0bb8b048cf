/* SPDX-License-Identifier: MIT */
/* validate/internal.h — what validate.c, validate/v1.c, validate/child.c,
 * validate/text.c and validate/report.c share. Not a public header. */
#ifndef CFISEM_VALIDATE_INTERNAL_H
#define CFISEM_VALIDATE_INTERNAL_H

#include "compile/cg.h"
#include "engines/engines.h"
#include "validate/validate.h"

/* What v1 can be compared on: status, CFA, and rip, rbp, rbx. */
enum { V1_RIP, V1_RBP, V1_RBX, V1_NREGS };

struct v1_view {
    enum cfi_status status;
    uint64_t cfa;
    uint8_t reg_status[V1_NREGS];
    uint64_t reg_value[V1_NREGS];
    uint8_t callee_status[V1_NREGS];  /* the callee's rbp, rbx (rip unused) */
    uint64_t callee_value[V1_NREGS];
};

/* A full-ABI answer as a child sends it back: registers 0-16 only (the
 * message is a fixed text of this process, valid in the parent too). */
struct raw_full {
    uint8_t status;
    bool signal_frame;
    int32_t reg;
    uint64_t offset;
    const char *message;
    uint64_t cfa;
    uint8_t reg_status[VALIDATE_REGS_MAX];  /* the reported registers */
    uint64_t value[VALIDATE_REGS_MAX];
};

/* One question's answer, as a child sends it back. */
struct raw_answer {
    uint8_t expected_status;     /* the reference's */
    uint8_t got_status;
    bool wrong;
    bool faulted;                /* v1: a deref read faulted */
    uint64_t kind;               /* VALIDATE_KIND_* when wrong */
    struct engine_v1_context v1;
    struct raw_full full;
};

struct validator {
    const struct validate_config *config;
    struct validate_result *result;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct engine_state_config states;
    engine_reference_fn reference;
    struct engine_memory **memories;     /* [nstates] */
    struct engine_v1 *v1;
    struct cg_eh_elf *full;              /* compile/'s loaded eh_elf */
    bool open;                           /* `current` is being extended */
    struct validate_wrong_range current;
    struct engine_question question;
    struct cfi_frame *expected;
    struct engine_answer *answer;
    struct cfi_frame *got;               /* &answer->frame */
    uint64_t total;                      /* addresses, about */
    double started, last_progress;
    struct cfi_symbol *symbols;          /* the file's functions, sorted */
    size_t nsymbols;
};

/* One address to check: the FDE it belongs to (for a gap, the FDE before
 * it, SIZE_MAX when none) and the lookup PC. */
struct check_address {
    size_t fde;
    uint64_t pc;
    bool in_gap;
};

/* ---- validate/v1.c ---- */

/* The reference restricted to what v1 evaluates (validate.h). */
enum cfi_status validate_v1_reference(const struct sem_file_il *il,
                                      const struct cfi_request *request,
                                      struct cfi_frame *frame);
void validate_v1_view(const struct cfi_frame *frame,
                      const struct cfi_regs *callee, struct v1_view *view);
/* Compares a v1 answer (crashed: the call never returned) with the
 * expected view. */
void validate_v1_compare(const struct v1_view *expected,
                         const struct engine_v1_context *got, bool faulted,
                         bool crashed, struct engine_outcome *outcome);
/* A cfi_frame that shows a v1 answer as the validator reads it: rip,
 * rsp, rbp, rbx (a clear rbp/rbx flag: the callee's), every other
 * register unknown (v1 does not speak for it). */
void validate_v1_frame(const struct engine_v1_context *got, bool faulted,
                       bool crashed, const struct cfi_regs *callee,
                       struct cfi_frame *frame);

/* ---- validate.c ---- */

/* An address's verdict: `wrong` (kind, first question) when wrong_requests
 * is not zero. Takes ownership of wrong->row_text and crash_text. */
enum cfi_status validate_merge(struct validator *v,
                               const struct check_address *at,
                               struct validate_wrong_range *wrong);
/* Fills `wrong` from the representative wrong question of an address. */
void validate_first_wrong(struct validator *v, const struct check_address *at,
                          const struct engine_question *q,
                          const struct cfi_frame *expected,
                          const struct cfi_frame *got,
                          const struct engine_outcome *outcome, bool crashed,
                          struct validate_wrong_range *wrong);
/* The kind bits of one wrong question. */
uint64_t validate_kind(const struct validator *v,
                       const struct engine_outcome *outcome, bool crashed);
/* The class of a wrong question. */
enum validate_wrong_class validate_class(uint64_t kind,
                                         enum cfi_status expected_status,
                                         enum cfi_status got_status);
void validate_progress(struct validator *v, uint64_t done);

/* ---- validate/child.c ---- */

/* Makes question k at `at` (v->question, v->expected), asks the eh_elf
 * (in the calling process) and fills *raw. */
void validate_ask(struct validator *v, const struct check_address *at,
                  unsigned k, struct raw_answer *raw);
/* From v->question, v->expected and a raw answer (or a crash): v->got
 * and the comparison. */
void validate_judge(struct validator *v, const struct raw_answer *raw,
                    bool crashed, struct engine_outcome *outcome);
/* Every question of `addresses`, the eh_elf's calls in children. */
enum cfi_status validate_run(struct validator *v,
                             const struct check_address *addresses,
                             size_t count);
/* Loads the eh_elf in a child first: CFI_E_IO with dlerror()'s text in
 * detail when it cannot be loaded, or when loading it crashes. */
enum cfi_status validate_try_load(const char *path, struct cfi_diag *diag,
                                  char *detail, size_t size);

/* The stack region of v1-direct: REGION_SIZE bytes, the stack registers
 * REGION_STACK bytes into it. */
#define REGION_SIZE ((uint64_t)4 << 20)
#define REGION_STACK ((uint64_t)1 << 20)

/* ---- validate/text.c ---- */

/* The object's text: its SHF_EXECINSTR sections (from the section
 * headers of file->image), else its executable segments. *ranges is
 * malloc'd, sorted, [begin, end) pairs. False: out of memory. */
bool validate_text_ranges(const struct cfi_file *file, uint64_t (**ranges)[2],
                          size_t *count);

#endif
