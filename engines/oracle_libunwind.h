/* SPDX-License-Identifier: MIT */
/* oracle_libunwind.h — libunwind (nongnu, 1.6.2) as an outside engine.
 *
 * The remote API: an address space whose accessors read the harness's
 * memory model and the request's registers. libunwind finds and parses
 * .eh_frame_hdr and .eh_frame itself, in the ELF image mapped in that
 * memory (the FDE search goes through _Ux86_64_dwarf_search_unwind_table
 * over the .eh_frame_hdr table, as perf does). One unw_step per request,
 * then the caller's registers are read back with unw_get_reg.
 *
 * The lookup PC. A remote cursor's first frame is looked up at its exact
 * rip (unw_init_remote does not back up by one). For a caller frame the
 * accessor therefore answers rip = PC-1 to the one read unw_init_remote
 * makes (the lookup), and the callee's true rip to every later read (a
 * DW_OP_breg16, a same_value or register rule from rip): the rules see
 * the request's registers exactly.
 *
 * What it says that cfi.h does not (answered as is; engines/deviations.c
 * explains it, most of it through the model of libunwind's step,
 * engines/libunwind_model.h): no "undefined" default for rax..r11 (they keep
 * their location); the caller's rsp is always the CFA; an undefined rbp
 * after a step ends the stack (rip undefined); DW_CFA_val_offset{,_sf}
 * are not known to it; its DWARF expressions (deref_size 5..7, division
 * by zero, shift counts, the CFA expression's first value), address 0 as
 * "no location", the order of its errors, the caller's rip read from the
 * return address column alone.
 *
 * What it cannot say, marked not comparable: registers above 16 (outside
 * its register set: every request whose FDE's or CIE's program names one,
 * as libunwind decodes the bytes, wherever the instruction lies; running
 * one makes unw_step fail, UNW_EBADREG or, for restore and
 * restore_extended, UNW_EINVAL, and the caller's registers above 16 are
 * never compared); a step
 * libunwind refuses because the caller's rip and CFA equal the callee's
 * (its loop guard, no CFI meaning). A PC with no FDE is answered "no FDE"
 * without looking at what unw_step's frame-chain heuristics make up.
 *
 * A fault on part of an aligned word: libunwind's remote expression
 * reads ask access_mem for the whole aligned word of each byte, and a
 * word-sized accessor cannot say that only some of its bytes are
 * unreadable (real faults are pages); a memory error that such a read
 * caused makes the request not comparable.
 *
 * Refused for safety (the request is not comparable): an FDE whose CIE or
 * FDE program holds a DW_CFA_register whose source register is above 16,
 * as libunwind decodes the bytes: apply_reg_state indexes its 17-entry
 * location array with it unchecked (diff/findings/libunwind-register-oob);
 * a row whose expressions, as libunwind evaluates them (the model),
 * divide INT64_MIN by -1: a SIGFPE (diff/findings/libunwind-div-trap).
 *
 * Files without a usable .eh_frame_hdr are not supported.
 */
#ifndef CFISEM_ENGINES_ORACLE_LIBUNWIND_H
#define CFISEM_ENGINES_ORACLE_LIBUNWIND_H

#include <stdbool.h>

#include "cfi/cfi.h"
#include "engines/engine.h"

enum cfi_status engine_libunwind_open(const struct cfi_file *file, void **self,
                                      struct cfi_diag *diag);
enum cfi_status engine_libunwind_answer(void *self,
                                        const struct cfi_request *request,
                                        struct engine_answer *answer);
void engine_libunwind_close(void *self);

/* UNW_CACHE_GLOBAL (the default of an open engine) or UNW_CACHE_NONE:
 * for bench/unwind_speed.c, which times both. */
void engine_libunwind_set_caching(void *self, bool global_cache);

#endif
