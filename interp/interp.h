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

#endif
