/* SPDX-License-Identifier: MIT */
/* oracle_llvmunwind.h — LLVM's libunwind (14, the runtime library
 * /usr/lib/llvm-14/lib/libunwind.so.1) as an outside engine.
 *
 * It unwinds only its own process, so it is asked in a child process
 * (engines/local_image.h, with the checks of engines/local_adapter.h):
 * the library is loaded there with dlopen(RTLD_LOCAL | RTLD_DEEPBIND),
 * so that its unw_* never meet nongnu libunwind's or libgcc's (without
 * RTLD_DEEPBIND under AddressSanitizer, which refuses it); no header
 * of it is used (libunwind-14-dev conflicts with libunwind-dev): the few
 * functions and constants are declared from its documented ABI. Each
 * FDE of .eh_frame is registered with __unw_add_dynamic_fde (version 14's
 * __unw_add_dynamic_eh_frame_section does not stop at the section's
 * zero terminator: it walks on, zero-length records after zero-length
 * records, until it faults; later versions test the length first).
 * For each request: unw_getcontext and unw_init_local, every register
 * 0-15 set with unw_set_reg and the IP last (setting it looks the FDE up
 * again, at that exact IP), unw_get_proc_info to tell "no FDE" apart, one
 * unw_step, and every register read back.
 *
 * The IP. The library treats every frame's IP as a return address when
 * it finds the row: it applies the instructions at locations below the
 * IP only (parseInstructions runs while codeOffset < pcoffset), so the
 * row it uses is the one at IP-1; but a set IP is looked up in the FDE
 * table as it is. The IP given is therefore the lookup PC + 1 (plus the
 * bias): the row is then the lookup PC's, and the FDE found at lookup PC
 * + 1 must be the lookup PC's (local_adapter.h), else the request is not
 * comparable; the rules see rip = that IP, which the bias check covers.
 *
 * An FDE whose rows name a register above 16 (the IL's rows: a rule for
 * one, a rule that reads one, the CFA based on one) is not comparable:
 * the library rejects any register number above its x86-64 set while it
 * parses the program, and then has no unwind information at all.
 *
 * What it says: UNW_STEP_END after a step whose caller has no unwind
 * information still leaves the caller's registers in the cursor, which
 * are read; a failing step is CFI_E_MALFORMED; no FDE at the lookup PC
 * is CFI_E_NO_FDE. The CFA is the caller's rsp after the step (the
 * library sets rsp to the CFA before the rules), so it is comparable
 * only when the row has no rule for rsp. The signal frame flag is the
 * library's unw_is_signal_frame after the step (the CIE's 'S' of the
 * frame just unwound).
 */
#ifndef CFISEM_ENGINES_ORACLE_LLVMUNWIND_H
#define CFISEM_ENGINES_ORACLE_LLVMUNWIND_H

#include "cfi/cfi.h"
#include "engines/engine.h"

#ifndef CFISEM_LLVMUNWIND_PATH
#define CFISEM_LLVMUNWIND_PATH "/usr/lib/llvm-14/lib/libunwind.so.1"
#endif

enum cfi_status engine_llvmunwind_open(const struct cfi_file *file,
                                       void **self, struct cfi_diag *diag);
enum cfi_status engine_llvmunwind_answer(void *self,
                                         const struct cfi_request *request,
                                         struct engine_answer *answer);
void engine_llvmunwind_close(void *self);

#endif
