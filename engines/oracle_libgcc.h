/* SPDX-License-Identifier: MIT */
/* oracle_libgcc.h — libgcc's unwinder (libgcc_s.so.1) as an outside
 * engine.
 *
 * libgcc has no per-frame interface and unwinds only its own process: it
 * is asked in a child process (engines/local_image.h, with the checks of
 * engines/local_adapter.h) the way it unwinds signal frames. The child
 * registers the frame section with __register_frame, raises a signal,
 * overwrites the handler's ucontext with the request's registers (its
 * RIP the lookup PC plus the bias) and calls _Unwind_Backtrace from the
 * handler. The signal trampoline's frame (glibc's __restore_rt, whose
 * CIE is a signal frame's, 'S') gives the frame asked about the
 * ucontext's registers; that frame, being just after a signal frame, is
 * looked up at its exact IP, which is why a caller frame (cfi.h step 1:
 * PC-1) is asked at PC-1 plus the bias. The callback after it sees the
 * caller: _Unwind_GetIP, _Unwind_GetCFA (the CFA of the frame asked
 * about) and _Unwind_GetGR for rax..r15, _Unwind_GetIPInfo for the
 * signal flag (the 'S' of the frame asked about).
 *
 * Before that callback libgcc looks the caller's IP up, and, when no FDE
 * covers it, reads the code there (its sigreturn check). A fault there
 * that cannot be served (a non-canonical return address, say) comes
 * after the frame is complete: the registers are then read from the
 * context in the fault handler.
 *
 * libgcc's semantics, and what is compared. A register without a rule,
 * or whose rule is DW_CFA_undefined, keeps the callee's value (it is
 * "unsaved": the context keeps pointing at the callee's slot); only the
 * return address has an "undefined", which libgcc turns into IP 0, the
 * end of the stack: local_adapter.h says which registers are therefore
 * not comparable. libgcc keeps no slot for the caller's rsp without a
 * rule: its CFA is the caller's rsp (what _Unwind_Resume installs), so
 * rsp is read as the CFA then. An IP of 0 is read as "undefined".
 *
 * Errors: the frame asked about has no FDE (_Unwind_Backtrace ends
 * there): CFI_E_NO_FDE. Its frame state cannot be built (libgcc returns
 * _URC_FATAL_PHASE1_ERROR before the callback): CFI_E_MALFORMED. libgcc
 * aborts on CFI it does not understand (gcc_unreachable): the child dies,
 * and the request is not comparable.
 */
#ifndef CFISEM_ENGINES_ORACLE_LIBGCC_H
#define CFISEM_ENGINES_ORACLE_LIBGCC_H

#include "cfi/cfi.h"
#include "engines/engine.h"

enum cfi_status engine_libgcc_open(const struct cfi_file *file, void **self,
                                   struct cfi_diag *diag);
enum cfi_status engine_libgcc_answer(void *self,
                                     const struct cfi_request *request,
                                     struct engine_answer *answer);
void engine_libgcc_close(void *self);

#endif
