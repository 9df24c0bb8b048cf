/* validate_internal.h — what validate.c, validate_direct.c and
 * validate_report.c share. Not a public header. */
#ifndef CFISEM_DIFF_VALIDATE_INTERNAL_H
#define CFISEM_DIFF_VALIDATE_INTERNAL_H

#include "compile/cg.h"
#include "diff/eh_elf_v1.h"
#include "diff/validate.h"

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

struct validator {
    const struct diff_validate_config *config;
    struct diff_validation *result;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct diff_state_config states;
    diff_reference_fn reference;
    struct diff_memory **memories;       /* [nstates] */
    struct diff_v1 *v1;
    struct cg_eh_elf *full;              /* compile/'s loaded eh_elf */
    bool open;                           /* `current` is being extended */
    struct diff_wrong_range current;
    struct diff_question question;
    struct cfi_frame *expected;
    struct diff_answer *answer;
    struct cfi_frame *got;               /* &answer->frame */
    uint64_t total;                      /* addresses, about */
    double started, last_progress;
};

/* One address to check: the FDE it belongs to and the lookup PC. */
struct check_address {
    size_t fde;
    uint64_t pc;
};

/* The reference restricted to what v1 evaluates (rbx, rbp, rip). */
enum cfi_status validate_v1_reference(const struct sem_file_il *il,
                                      const struct cfi_request *request,
                                      struct cfi_frame *frame);

void validate_v1_view(const struct cfi_frame *frame,
                      const struct cfi_regs *callee, struct v1_view *view);
/* Compares a v1 answer (crashed: the call never returned) with the
 * expected view. */
void validate_v1_compare(const struct v1_view *expected,
                         const struct diff_v1_context *got, bool faulted,
                         bool crashed, struct diff_outcome *outcome);
/* A cfi_frame that shows a v1 answer as the validator reads it. */
void validate_v1_frame(const struct diff_v1_context *got, bool faulted,
                       bool crashed, const struct cfi_regs *callee,
                       struct cfi_frame *frame);

/* An address's verdict: `wrong` (kind, first question) when wrong_requests
 * is not zero. Takes ownership of wrong->row_text. */
enum cfi_status validate_merge(struct validator *v,
                               const struct check_address *at,
                               struct diff_wrong_range *wrong);
/* Fills `wrong` from the first wrong question of an address. */
void validate_first_wrong(struct validator *v, const struct check_address *at,
                          const struct diff_question *q,
                          const struct cfi_frame *expected,
                          const struct cfi_frame *got,
                          const struct diff_outcome *outcome, bool crashed,
                          struct diff_wrong_range *wrong);
/* The kind bits of one wrong question. */
uint32_t validate_kind(const struct diff_outcome *outcome, bool crashed);
/* Adds one wrong question's outcome to an address's verdict: the kind of
 * an address is the kind of its first wrong question (states in order,
 * so that a fault state, whose fault falls where the reference reads,
 * does not split a range the full states see as one). */
void validate_add_kind(struct diff_wrong_range *wrong,
                       const struct cfi_frame *expected,
                       const struct cfi_frame *got,
                       const struct diff_outcome *outcome, bool crashed);

void validate_progress(struct validator *v, uint64_t done);

/* The stack region of v1-direct: REGION_SIZE bytes, the stack registers
 * REGION_STACK bytes into it. */
#define REGION_SIZE ((uint64_t)4 << 20)
#define REGION_STACK ((uint64_t)1 << 20)

/* The v1-direct run over `addresses` (validate_direct.c). */
enum cfi_status validate_direct(struct validator *v,
                                const struct check_address *addresses,
                                size_t count);

#endif
