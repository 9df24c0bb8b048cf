/* libunwind.h — libunwind (nongnu, 1.6.2) as an outside engine.
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
 * What it says that cfi.h does not (answered as is; diff/deviations.c
 * explains it, most of it through diff_libunwind_model below): no
 * "undefined" default for rax..r11 (they keep their location); the
 * caller's rsp is always the CFA; an undefined rbp after a step ends the
 * stack (rip undefined); DW_CFA_val_offset{,_sf} are not known to it; its
 * DWARF expressions (deref_size 5..7, division by zero, shift counts, the
 * CFA expression's first value), address 0 as "no location", the order
 * of its errors, the caller's rip read from the return address column
 * alone.
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
 * a row whose expressions, as libunwind evaluates them (the model below),
 * divide INT64_MIN by -1: a SIGFPE (diff/findings/libunwind-div-trap).
 *
 * Files without a usable .eh_frame_hdr are not supported.
 */
#ifndef CFISEM_DIFF_LIBUNWIND_H
#define CFISEM_DIFF_LIBUNWIND_H

#include <stdbool.h>

#include "cfi/cfi.h"
#include "diff/engine.h"
#include "semantics/sem.h"

enum cfi_status diff_libunwind_open(const struct cfi_file *file, void **self,
                                    struct cfi_diag *diag);
enum cfi_status diff_libunwind_answer(void *self,
                                      const struct cfi_request *request,
                                      struct diff_answer *answer);
void diff_libunwind_close(void *self);

/* ------------------------------------------------------------------ */
/* A model of libunwind's step, for the deviation table                 */
/* ------------------------------------------------------------------ */

/* What libunwind 1.6.2 does differently from cfi.h when it unwinds a
 * row, each checked on a minimal input (tests/check_deviations.c). The
 * model applies the behaviours selected; with none, it computes cfi.h's
 * answer for registers 0..16. */
enum diff_libunwind_quirk {
    /* dwarf/Gexpr.c DW_OP_deref_size: sizes 5..7 read 8 bytes and keep
     * the high bytes (the mask is inverted); size 3 reads 4 bytes. */
    DIFF_LU_DEREF_SIZE = 1u << 0,
    /* DW_OP_div and DW_OP_mod by zero push 0. */
    DIFF_LU_DIV_BY_ZERO = 1u << 1,
    /* DW_OP_shl, shr, shra by 64 or more: the x86-64 shift instruction
     * takes the count mod 64. */
    DIFF_LU_SHIFT_COUNT = 1u << 2,
    /* DW_OP_div of INT64_MIN by -1 traps (SIGFPE). */
    DIFF_LU_DIV_TRAP = 1u << 3,
    /* DW_CFA_def_cfa_expression is evaluated with 0 pushed first. */
    DIFF_LU_CFA_ZERO_PUSHED = 1u << 4,
    /* A register saved at address 0 has no location (DWARF_NULL_LOC):
     * undefined, and nothing is read. */
    DIFF_LU_NULL_ADDRESS = 1u << 5,
    /* Expressions read memory byte by byte from the aligned 8-byte
     * words that hold the bytes (dwarf_readu8 in remote mode). */
    DIFF_LU_WORD_READS = 1u << 6,
    /* apply_reg_state evaluates the expressions of registers 0..16, then
     * reads the IP's location; registers are read back after: with two
     * failing rules, the error reported is not cfi.h's first. */
    DIFF_LU_EXPRESSIONS_FIRST = 1u << 7,
    /* register(r, m) with m < r: apply_reg_state gives r the location m
     * has just been given, the caller's m. */
    DIFF_LU_REGISTER_NEW_LOCATION = 1u << 8,
    /* A register with no rule keeps its location (DWARF_WHERE_SAME): the
     * callee's value, where cfi.h makes rax..r11 and rip undefined. */
    DIFF_LU_NO_RULE_SAME = 1u << 9,
    /* unw_get_reg(rsp) is the CFA whatever rsp's rule; rsp's location
     * (the callee's rsp when it has no rule) is never read as rsp. */
    DIFF_LU_RSP_IS_CFA = 1u << 10,
    /* The caller's rip is the IP read from the return address column's
     * location; column 16's own location is not read when the column is
     * another. */
    DIFF_LU_RIP_IS_IP = 1u << 11,
    /* The IP must be a value: read from a callee register the request
     * left unknown, it is an error. */
    DIFF_LU_IP_NEEDS_VALUE = 1u << 12,
    /* x86_64/Gstep.c ends the stack (rip undefined) when rbp has no
     * location. */
    DIFF_LU_UNDEFINED_RBP_ENDS = 1u << 13,
};
#define DIFF_LU_QUIRKS_ALL 0x3fffu

/* libunwind's answer to `request` at `row` (the IL's row there), its
 * CIE's return address column `ra_column`, as far as the model goes: the
 * CFA and registers 0..16, the first error in the order the quirks say.
 * *traps says libunwind's evaluation would trap (SIGFPE); the frame is
 * then an error. A val_offset rule, which libunwind has no word for,
 * makes the frame CFI_E_UNSUPPORTED. */
void diff_libunwind_model(const struct sem_row *row, unsigned ra_column,
                          const struct cfi_request *request, unsigned quirks,
                          struct cfi_frame *frame, bool *traps);

/* UNW_CACHE_GLOBAL (the default of an open engine) or UNW_CACHE_NONE:
 * for bench/unwind_speed.c, which times both. */
void diff_libunwind_set_caching(void *self, bool global_cache);

#endif
