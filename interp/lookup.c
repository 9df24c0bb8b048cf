/* SPDX-License-Identifier: MIT */
/* lookup.c — interp_unwind and interp_unwind_memo: finding the FDE in a
 * loaded file (cfi.h step 2), then interp_unwind_fde. Kept apart so that users of
 * interp_unwind_fde alone need no file loader. */
#include "internal.h"

enum cfi_status interp_unwind(const struct cfi_file *file,
                              const struct cfi_request *request,
                              struct cfi_frame *frame)
{
    /* A return address is looked up at PC-1 (libunwind#54): both the FDE
     * and, in interp_unwind_fde, the row. */
    uint64_t lookup_pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const struct cfi_fde *fde = cfi_file_lookup(file, lookup_pc);
    if (!fde) {
        frame->status = cfi_fail(&frame->diag, CFI_E_NO_FDE, CFI_NO_OFFSET,
                                 "no FDE covers the lookup PC");
        frame->cfa = 0;
        frame->signal_frame = false;
        frame->ra_b_key = false;
        return frame->status;
    }
    return interp_unwind_fde(fde, request, frame);
}

enum cfi_status interp_unwind_memo(const struct cfi_file *file,
                                   const struct cfi_request *request,
                                   struct cfi_frame *frame,
                                   struct interp_memo *memo)
{
    uint64_t lookup_pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const struct cfi_fde *fde = cfi_file_lookup(file, lookup_pc);
    if (!fde)
        return interp_unwind(file, request, frame);
    return interp_unwind_fde_memo(fde, request, frame, memo);
}
