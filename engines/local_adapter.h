/* SPDX-License-Identifier: MIT */
/* local_adapter.h — what the adapters of the libraries that unwind their
 * own process share (engines/oracle_llvmunwind.h, engines/oracle_libgcc.h):
 * the checks made before a request is put to the library's process
 * (engines/local_image.h), and the reading of the frame it sends back.
 *
 * Before asking, a request is not comparable when:
 *   - a callee register 0-16 is undefined (a process's registers always
 *     hold values, so the library cannot be told);
 *   - the FDE at the lookup PC overlaps another (engine_overlap_reason),
 *     or is in .debug_frame only (only .eh_frame is registered), or its
 *     CIE's pointer format is not pc-relative (the library would see its
 *     addresses without the bias);
 *   - the bias leaks into a value: the library is asked at the IP
 *     lookup PC + B (+ 1, see local_adapter_prepare), and its rip is
 *     that IP (a caller frame is asked at PC-1 + B, like the frame after
 *     a signal frame, at its exact IP). The
 *     reference (il) is run twice, once with rip = the request's and once
 *     with rip = that IP: when the two frames differ in anything (a rule
 *     that reads rip, the caller's rip taken from the callee's), the
 *     library's answer would hold the bias;
 *   - a read the reference makes falls in the library process's own
 *     mappings (local_image_taken), where no fault would tell the read.
 *
 * Unknown callee registers. A process's registers all hold values, so an
 * unknown one is given a value twice: the library is asked once with
 * each register the request left unknown set to LOCAL_POISON_A + its
 * number << 20, once with LOCAL_POISON_B + that. A caller register whose
 * two values differ depends on an unknown one: unknown (cfi.h step 5),
 * when its rule carries a callee register over (no rule, same_value,
 * register, undefined as the libraries read it). When the CFA differs,
 * a register whose rule computes its value differs, or the two asks end
 * otherwise (a fault in one, a different code), the request is not
 * comparable: cfi.h makes those an error naming the register the rule
 * read (CFI_E_REG_UNKNOWN, diag.reg), which the library cannot say.
 *
 * Registers. Both libraries speak for rax..r15 and rip only (the CFA
 * too), and neither has a word for "undefined" other than the end of
 * the stack: a register without a rule keeps the callee's value in
 * both, and so does one whose rule is DW_CFA_undefined. So a register
 * of 0-15 whose rule is undefined, or that has no rule and whose ABI
 * default is undefined (the caller-saved ones), is not comparable; rip
 * is not comparable when it has no rule.
 */
#ifndef CFISEM_ENGINES_LOCAL_ADAPTER_H
#define CFISEM_ENGINES_LOCAL_ADAPTER_H

#include "cfi/cfi.h"
#include "engines/engine.h"
#include "engines/local_image.h"
#include "semantics/sem.h"

struct local_adapter {
    const struct cfi_file *file;
    struct sem_file_il *il;
    struct local_image *image;
    uint32_t unknown;          /* the request's unknown registers 0-15 */
    uint32_t carried;          /* registers whose rule carries a callee
                                  register over (see above) */
    /* local_adapter_high_registers's answer for the FDE asked last */
    const struct cfi_fde *scanned;
    bool scanned_high;
};

/* Poison values of unknown registers: canonical addresses a process can
 * map (above AddressSanitizer's shadow too), far from the stack window
 * and the image (LOCAL_BIAS). */
#define LOCAL_POISON_A 0x200000000000ull
#define LOCAL_POISON_B 0x300000000000ull

/* question->flags: the row has a rule for rsp (else the caller's rsp is
 * the CFA). */
#define LOCAL_FLAG_RSP_RULE 1u
/* question->flags: rsp's rule is DW_CFA_undefined (nothing to read). */
#define LOCAL_FLAG_RSP_UNDEFINED 2u

enum cfi_status local_adapter_open(const struct cfi_file *file,
                                   const struct local_library *library,
                                   struct local_adapter **adapter,
                                   struct cfi_diag *diag);
void local_adapter_close(struct local_adapter *adapter);

/* Resets *answer and makes the checks above. True: ask the library
 * *question (filled), whose IP is the lookup PC + `after` + B: `after` is
 * 1 for a library that applies a row's instructions at locations below
 * its IP only (the FDE found at lookup PC + 1 must then be the one at
 * the lookup PC). False: *answer is final. */
bool local_adapter_prepare(struct local_adapter *adapter,
                           const struct cfi_request *request, unsigned after,
                           struct local_question *question,
                           struct engine_answer *answer);

/* Whether a row of the FDE at the lookup PC of `request` (as the IL
 * has it) names a register above 16: a rule for one, a rule that reads
 * one, or the CFA based on one. */
bool local_adapter_high_registers(struct local_adapter *adapter,
                                  const struct cfi_request *request);

/* Asks and reads the outcome: true when the library answered (then the
 * adapter reads frame->code and calls local_adapter_fill); false when
 * *answer is final (a memory fault, or not comparable). */
bool local_adapter_ask(struct local_adapter *adapter,
                       const struct cfi_request *request,
                       const struct local_question *question,
                       struct local_frame *frame,
                       struct engine_answer *answer);

/* The caller's registers and CFA of a frame the library computed. */
enum cfi_status local_adapter_fill(const struct local_frame *frame,
                                   struct engine_answer *answer);

#endif
