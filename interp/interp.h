/* SPDX-License-Identifier: MIT */
/* interp.h — the direct interpreter of DWARF call frame information.
 *
 * This module promises "unwinding one frame" exactly as cfi.h defines it
 * (the comment before struct cfi_frame), computed the direct way: it
 * decodes the DW_CFA bytes of the CIE and the FDE itself while executing
 * them, keeps the row in effect and the stack of remembered rows, takes
 * the row in effect at the lookup PC, then applies it to the callee's
 * registers with its own DWARF expression stack machine.
 *
 * It shares no code with semantics/ (DESIGN.md's independence rule): a
 * decoding or evaluation bug in either shows up as a disagreement.
 *
 * Cost of one call: no heap allocation; about 40 KiB of stack at most
 * (64 remembered rows of ~550 bytes); time linear in the length of the
 * two programs plus the operations the expressions execute (at most
 * CFI_EXPR_STEP_LIMIT each). Memory is read only through
 * request->memory.read: 8 bytes for offset and expression rules and
 * DW_OP_deref, n bytes for DW_OP_deref_size n (sizes other than 1, 2, 4
 * and 8 one byte at a time). No global state: calls are reentrant.
 *
 * Both functions fill *frame and return frame->status. On error,
 * frame->diag holds the status, a fixed message, diag.reg the register
 * for CFI_E_REG_UNKNOWN (else -1), and diag.offset the section offset of
 * the faulty instruction for an error in the CIE's or FDE's program, the
 * byte offset of the failing operation inside the expression for an error
 * of evaluating one (cfi.h, struct cfi_frame), CFI_NO_OFFSET otherwise
 * (no FDE, bad record fields, a saved slot that faults, the CFA register
 * unknown).
 *
 * request->callee may be &frame->caller (unwinding in place). */
#ifndef CFISEM_INTERP_H
#define CFISEM_INTERP_H

#include "../cfi/cfi.h"

/* Unwinds one frame of a loaded file: the FDE is found with
 * cfi_file_lookup at the lookup PC (cfi.h step 2). */
enum cfi_status interp_unwind(const struct cfi_file *file,
                              const struct cfi_request *request,
                              struct cfi_frame *frame);

/* Unwinds one frame with a given FDE (and its CIE). Checked in this
 * order: an FDE whose pc_end is below pc_begin is CFI_E_MALFORMED; a
 * lookup PC outside [pc_begin, pc_end) is CFI_E_NO_FDE; a CIE return
 * address column at or above CFI_NREGS is CFI_E_MALFORMED; then the
 * programs and the evaluation, as cfi.h says. */
enum cfi_status interp_unwind_fde(const struct cfi_fde *fde,
                                  const struct cfi_request *request,
                                  struct cfi_frame *frame);

/* interp_unwind with the row of the last request kept in *memo, so
 * that the next request at the same lookup PC of the same FDE (another
 * state of the callee's registers and memory) runs neither program
 * again: the row depends on the FDE, its CIE and the lookup PC alone.
 * The same answers, statuses and diagnostics as interp_unwind. A memo
 * is interp_memo_size() bytes the caller allocates (this module
 * allocates nothing), interp_memo_clear'd before its first use; it
 * serves one file, whose FDEs must stay loaded while it is used. */
struct interp_memo;
size_t interp_memo_size(void);
void interp_memo_clear(struct interp_memo *memo);
enum cfi_status interp_unwind_memo(const struct cfi_file *file,
                                   const struct cfi_request *request,
                                   struct cfi_frame *frame,
                                   struct interp_memo *memo);

/* interp_unwind_fde in two halves, for an unwinder that meets the same
 * lookup PC again and again (libcfisem-unwind's row cache):
 * interp_decode_row runs the checks and both programs (cfi.h steps 1-3)
 * and keeps the row in effect at the lookup PC in *row, its rules
 * decoded, a plain value that may be copied anywhere; interp_apply_row
 * applies it (steps 4-7) to the callee's registers of a request with
 * the same lookup PC. Together they compute exactly what
 * interp_unwind_fde computes, which is made of the same steps. The row
 * points into the CIE's and FDE's bytes (the expressions): they must
 * stay where they were. A row whose registers with a rule are more than
 * INTERP_ROW_RULES cannot be kept: CFI_E_UNSUPPORTED, "row too large to
 * keep" (interp_unwind_fde takes any). On an error of the programs, the
 * status and diagnostic are interp_unwind_fde's. One difference, for
 * unwinders that report the architecture's registers only (arch.h,
 * nreported: 0-16 on x86-64): interp_apply_row writes frame->caller's
 * registers 0 to ndefaults - 1 (those whose ABI default may be other
 * than undefined, nreported of them or more; and the status, cfa, diag,
 * signal_frame, ra_b_key) but not the registers from ndefaults up,
 * whose contents are unspecified after it (interp_unwind_fde makes them
 * undefined); their rules are evaluated all the same, for their
 * errors. */
#define INTERP_ROW_RULES 20

/* A register's rule, as the instruction that gave it states it. */
enum interp_rule_kind {
    INTERP_RULE_UNDEFINED,       /* undefined */
    INTERP_RULE_SAME_VALUE,      /* same_value */
    INTERP_RULE_OFFSET,          /* addr(cfa + offset) */
    INTERP_RULE_VAL_OFFSET,      /* val(cfa + offset) */
    INTERP_RULE_REGISTER,        /* reg(from): the callee's from */
    INTERP_RULE_EXPRESSION,      /* addr(expr), the CFA pushed first */
    INTERP_RULE_VAL_EXPRESSION,  /* val(expr), the CFA pushed first */
    INTERP_RULE_STATE,           /* val(offset): a return address state */
};

struct interp_kept_rule {
    uint8_t reg;              /* whose rule it is */
    uint8_t kind;             /* enum interp_rule_kind */
    uint8_t from;             /* INTERP_RULE_REGISTER */
    uint32_t expr_len;        /* the expressions' */
    int64_t offset;           /* the offset rules', the state's value */
    const uint8_t *expr;
};

struct interp_decoded_row {
    uint8_t nrules;           /* rules[0 .. nrules), reg increasing */
    uint8_t ra_column;
    uint8_t cfa_kind;         /* 0 none, 1 register + offset, 2 expr */
    uint8_t cfa_reg;
    bool signal_frame;
    bool ra_b_key;            /* the CIE's 'B' (cfi.h step 7) */
    uint32_t cfa_expr_len;
    uint64_t cfa_offset;
    const uint8_t *cfa_expr;
    const struct cfi_arch *arch; /* the CIE's: defaults, the PC register */
    struct interp_kept_rule rules[INTERP_ROW_RULES];
};

enum cfi_status interp_decode_row(const struct cfi_fde *fde,
                                  uint64_t lookup_pc,
                                  struct interp_decoded_row *row,
                                  struct cfi_diag *diag);
enum cfi_status interp_apply_row(const struct interp_decoded_row *row,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame);

#endif
