/* SPDX-License-Identifier: MIT */
/* libunwind_model.h — a model of libunwind's step, for the deviation
 * table and the libunwind adapter's safety checks.
 *
 * What libunwind 1.6.2 does differently from cfi.h when it unwinds a
 * row, each behaviour one quirk flag, each checked on a minimal input
 * (tests/check_deviations.c). The model evaluates an IL row as
 * libunwind's apply_reg_state and dwarf/Gexpr.c would, with the
 * behaviours selected; with none, it computes cfi.h's answer for
 * registers 0..16. It has its own DW_OP machine (cfi.h's rules plus the
 * quirks): it never calls libunwind, so it can say what libunwind would
 * do where running libunwind is unsafe (a trap, an endless loop).
 */
#ifndef CFISEM_ENGINES_LIBUNWIND_MODEL_H
#define CFISEM_ENGINES_LIBUNWIND_MODEL_H

#include <stdbool.h>

#include "cfi/cfi.h"
#include "semantics/sem.h"

/* libunwind's x86-64 register set: DWARF registers 0..16. */
enum { ENGINE_LU_NREGS = 17 };

/* X(name): the behaviours, in the order of their flag bits. */
#define ENGINE_LU_QUIRK_LIST(X)                                             \
    /* dwarf/Gexpr.c DW_OP_deref_size: sizes 5..7 read 8 bytes and keep     \
     * the high bytes (the mask is inverted); size 3 reads 4 bytes. */      \
    X(DEREF_SIZE)                                                           \
    /* DW_OP_div and DW_OP_mod by zero push 0. */                           \
    X(DIV_BY_ZERO)                                                          \
    /* DW_OP_shl, shr, shra by 64 or more: the x86-64 shift instruction     \
     * takes the count mod 64. */                                           \
    X(SHIFT_COUNT)                                                          \
    /* DW_OP_div of INT64_MIN by -1 traps (SIGFPE). */                      \
    X(DIV_TRAP)                                                             \
    /* DW_CFA_def_cfa_expression is evaluated with 0 pushed first. */       \
    X(CFA_ZERO_PUSHED)                                                      \
    /* A register saved at address 0 has no location (DWARF_NULL_LOC):      \
     * undefined, and nothing is read. */                                   \
    X(NULL_ADDRESS)                                                         \
    /* Expressions read memory byte by byte from the aligned 8-byte         \
     * words that hold the bytes (dwarf_readu8 in remote mode). */          \
    X(WORD_READS)                                                           \
    /* apply_reg_state evaluates the expressions of registers 0..16, then   \
     * reads the IP's location; registers are read back after: with two     \
     * failing rules, the error reported is not cfi.h's first. */           \
    X(EXPRESSIONS_FIRST)                                                    \
    /* register(r, m) with m < r: apply_reg_state gives r the location m    \
     * has just been given, the caller's m. */                              \
    X(REGISTER_NEW_LOCATION)                                                \
    /* A register with no rule keeps its location (DWARF_WHERE_SAME): the   \
     * callee's value, where cfi.h makes rax..r11 and rip undefined. */     \
    X(NO_RULE_SAME)                                                         \
    /* unw_get_reg(rsp) is the CFA whatever rsp's rule; rsp's location      \
     * (the callee's rsp when it has no rule) is never read as rsp. */      \
    X(RSP_IS_CFA)                                                           \
    /* The caller's rip is the IP read from the return address column's     \
     * location; column 16's own location is not read when the column is   \
     * another. */                                                          \
    X(RIP_IS_IP)                                                            \
    /* The IP must be a value: read from a callee register the request      \
     * left unknown, it is an error. */                                     \
    X(IP_NEEDS_VALUE)                                                       \
    /* x86_64/Gstep.c ends the stack (rip undefined) when rbp has no        \
     * location. */                                                         \
    X(UNDEFINED_RBP_ENDS)

/* The bit of each behaviour, and how many there are. */
enum engine_libunwind_quirk_bit {
#define ENGINE_LU_QUIRK_BIT(name) ENGINE_LU_BIT_##name,
    ENGINE_LU_QUIRK_LIST(ENGINE_LU_QUIRK_BIT)
#undef ENGINE_LU_QUIRK_BIT
    ENGINE_LU_QUIRK_COUNT
};

/* The flags: ENGINE_LU_DEREF_SIZE, ... */
enum engine_libunwind_quirk {
#define ENGINE_LU_QUIRK_FLAG(name)                                          \
    ENGINE_LU_##name = 1u << ENGINE_LU_BIT_##name,
    ENGINE_LU_QUIRK_LIST(ENGINE_LU_QUIRK_FLAG)
#undef ENGINE_LU_QUIRK_FLAG
};

_Static_assert(ENGINE_LU_QUIRK_COUNT < 32, "the quirks fit in an unsigned");

/* Every behaviour: libunwind as it is. */
#define ENGINE_LU_QUIRKS_ALL ((1u << ENGINE_LU_QUIRK_COUNT) - 1u)

/* libunwind's answer to `request` at `row` (the IL's row there), its
 * CIE's return address column `ra_column`, as far as the model goes: the
 * CFA and registers 0..16, the first error in the order the quirks say.
 * *traps says libunwind's evaluation would trap (SIGFPE); the frame is
 * then an error. A val_offset rule, which libunwind has no word for,
 * makes the frame CFI_E_UNSUPPORTED. */
void engine_libunwind_model(const struct sem_row *row, unsigned ra_column,
                            const struct cfi_request *request, unsigned quirks,
                            struct cfi_frame *frame, bool *traps);

#endif
