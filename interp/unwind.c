/* SPDX-License-Identifier: MIT */
/* unwind.c — interp_unwind_fde: the steps of "unwinding one frame"
 * (cfi.h) in order, for one given FDE; and its two halves as
 * interp_decode_row and interp_apply_row, the row in between kept as a
 * plain value. */
#include "internal.h"

/* Both programs with what decoding them needs. */
static void programs_of(const struct cfi_fde *fde,
                        struct interp_programs *programs)
{
    const struct cfi_cie *cie = fde->cie;
    programs->arch = cie->arch;
    struct interp_program common = {
        .code_align = cie->code_align,
        .data_align = cie->data_align,
        .section = fde->section,
        .fde_encoding = cie->fde_encoding,
        .address_size = cie->address_size,
        .arch = cie->arch,
    };
    programs->cie = common;
    programs->cie.bytes = cie->instructions;
    programs->cie.len = cie->instructions ? cie->instructions_len : 0;
    programs->cie.section_offset = cie->instructions_offset;
    programs->cie.addr = 0; /* unknown; set_loc is malformed in a CIE */
    programs->cie.in_cie = true;
    programs->fde = common;
    programs->fde.bytes = fde->instructions;
    programs->fde.len = fde->instructions ? fde->instructions_len : 0;
    programs->fde.section_offset = fde->instructions_offset;
    programs->fde.addr = fde->instructions_addr;
    programs->fde.in_cie = false;
    programs->pc_begin = fde->pc_begin;
    programs->pc_end = fde->pc_end;
}

/* The record-level checks, before any instruction runs. */
static enum cfi_status check_records(const struct cfi_fde *fde,
                                     uint64_t lookup_pc,
                                     struct cfi_diag *diag)
{
    if (fde->pc_end < fde->pc_begin)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        "FDE ends before it begins");
    if (lookup_pc < fde->pc_begin || lookup_pc >= fde->pc_end)
        return cfi_fail(diag, CFI_E_NO_FDE, CFI_NO_OFFSET,
                        "lookup PC outside the FDE");
    if (!fde->cie)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        "FDE without a CIE");
    if (fde->cie->ra_column >= CFI_NREGS)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        "return address column out of range");
    return CFI_OK;
}

static enum cfi_status finish(struct cfi_frame *frame, enum cfi_status status)
{
    frame->status = status;
    frame->diag.status = status;
    if (status == CFI_OK) {
        frame->diag.message = cfi_status_text(CFI_OK);
        frame->diag.offset = CFI_NO_OFFSET;
        frame->diag.reg = -1;
    }
    return status;
}

/* 6. The return address column gives the caller's PC, the value of
 * the architecture's PC register. Where return addresses may be signed
 * (AArch64), a signed one has its authentication code stripped from the
 * PC (not from the column's own register), and a state that is not a
 * value leaves the PC unknown. */
static enum cfi_status return_address(enum cfi_status status,
                                      const struct cfi_arch *arch,
                                      unsigned ra, unsigned va_bits,
                                      struct cfi_frame *frame)
{
    if (status != CFI_OK)
        return finish(frame, status);
    struct cfi_regs *caller = &frame->caller;
    unsigned pc = arch->pc;
    if (ra != pc) {
        caller->value[pc] = caller->value[ra];
        caller->status[pc] = caller->status[ra];
    }
    unsigned state = arch->ra_state;
    if (state != CFI_NO_RA_STATE && caller->status[pc] == CFI_REG_VALUE) {
        if (caller->status[state] != CFI_REG_VALUE) {
            caller->status[pc] = CFI_REG_UNKNOWN;
            caller->value[pc] = 0;
        } else if (caller->value[state] != CFI_RA_NOT_SIGNED) {
            caller->value[pc] = cfi_strip_pac(caller->value[pc], va_bits);
        }
    }
    return finish(frame, status);
}

/* The row of one FDE at one lookup PC, or the error finding it gave. */
struct interp_memo {
    const struct cfi_fde *fde;       /* NULL: nothing kept */
    uint64_t lookup_pc;
    enum cfi_status status;
    struct cfi_diag diag;
    struct interp_programs programs;
    struct interp_row row;
};

size_t interp_memo_size(void)
{
    return sizeof(struct interp_memo);
}

void interp_memo_clear(struct interp_memo *memo)
{
    memo->fde = NULL;
}

/* Steps 3 to 7 with the row of *memo, found again unless it is that of
 * the FDE at the lookup PC. */
static enum cfi_status unwind_row(const struct cfi_fde *fde,
                                  uint64_t lookup_pc,
                                  const struct cfi_request *request,
                                  struct cfi_frame *frame,
                                  struct interp_memo *memo)
{
    /* 3. The row in effect at the lookup PC; both programs checked whole. */
    if (memo->fde != fde || memo->lookup_pc != lookup_pc) {
        programs_of(fde, &memo->programs);
        memo->diag = frame->diag;
        memo->status = interp_find_row(&memo->programs, lookup_pc,
                                       &memo->row, &memo->diag);
        memo->fde = fde;
        memo->lookup_pc = lookup_pc;
    }
    if (memo->status != CFI_OK) {
        frame->diag = memo->diag;
        return finish(frame, memo->status);
    }
    /* 4, 5. CFA, then every register. */
    enum cfi_status status = interp_eval_row(&memo->programs, &memo->row,
                                             request->callee,
                                             request->memory, frame);
    return return_address(status, fde->cie->arch,
                          (unsigned)fde->cie->ra_column, request->va_bits,
                          frame);
}

/* interp_unwind_fde with the row of *memo (internal.h). */
enum cfi_status interp_unwind_fde_memo(const struct cfi_fde *fde,
                                       const struct cfi_request *request,
                                       struct cfi_frame *frame,
                                       struct interp_memo *memo)
{
    frame->cfa = 0;
    frame->signal_frame = false;
    frame->ra_b_key = false;
    /* 1. A return address is looked up at PC-1 (libunwind#54). */
    uint64_t lookup_pc = cfi_lookup_pc(request->pc, request->caller_frame);
    enum cfi_status status = check_records(fde, lookup_pc, &frame->diag);
    if (status != CFI_OK)
        return finish(frame, status);
    frame->signal_frame = fde->cie->signal_frame; /* 7. */
    frame->ra_b_key = fde->cie->ra_b_key;
    return unwind_row(fde, lookup_pc, request, frame, memo);
}

enum cfi_status interp_unwind_fde(const struct cfi_fde *fde,
                                  const struct cfi_request *request,
                                  struct cfi_frame *frame)
{
    struct interp_memo memo;
    memo.fde = NULL;
    return interp_unwind_fde_memo(fde, request, frame, &memo);
}

/* ------------------------------------------------------------------ */
/* A decoded row kept for later (interp.h)                              */
/* ------------------------------------------------------------------ */

_Static_assert(CFI_NREGS <= 256, "a register number fits uint8_t");
_Static_assert(INTERP_CFA_NONE == 0 && INTERP_CFA_REG_OFFSET == 1 &&
                   INTERP_CFA_EXPR == 2,
               "cfa_kind is enum interp_cfa_kind");

enum cfi_status interp_decode_row(const struct cfi_fde *fde,
                                  uint64_t lookup_pc,
                                  struct interp_decoded_row *row,
                                  struct cfi_diag *diag)
{
    enum cfi_status status = check_records(fde, lookup_pc, diag);
    if (status != CFI_OK)
        return status;
    struct interp_programs programs;
    programs_of(fde, &programs);
    struct interp_row found;
    status = interp_find_row(&programs, lookup_pc, &found, diag);
    if (status != CFI_OK)
        return status;
    if (found.cfa.expr_len > UINT32_MAX)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "row too large to keep");
    row->ra_column = (uint8_t)fde->cie->ra_column;
    row->arch = fde->cie->arch;
    row->signal_frame = fde->cie->signal_frame;
    row->ra_b_key = fde->cie->ra_b_key;
    row->cfa_kind = (uint8_t)found.cfa.kind;
    row->cfa_reg = (uint8_t)found.cfa.reg;
    row->cfa_expr_len = (uint32_t)found.cfa.expr_len;
    row->cfa_offset = found.cfa.offset;
    row->cfa_expr = found.cfa.expr;
    return interp_keep_rules(&programs, &found, row, diag);
}

enum cfi_status interp_apply_row(const struct interp_decoded_row *row,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame)
{
    frame->cfa = 0;
    frame->signal_frame = row->signal_frame; /* 7. */
    frame->ra_b_key = row->ra_b_key;
    /* 4, 5. CFA, then every register. */
    enum cfi_status status = interp_eval_kept(row, request->callee,
                                              request->memory, frame);
    return return_address(status, row->arch, row->ra_column,
                          request->va_bits, frame);
}
