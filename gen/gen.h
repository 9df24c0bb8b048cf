/* SPDX-License-Identifier: MIT */
/* gen.h — the structure-aware CFI program generator (`cfisem gen`).
 *
 * From a seed, the generator writes a random but well-formed CFI program
 * as a .S file for GNU as (x86-64, AT&T; or AArch64): several functions
 * (FDEs) with
 * real code bytes between `.cfi_*` directives, `.cfi_escape` for every
 * opcode gas has no directive for, DWARF expressions, nested
 * remember/restore, gaps large enough for every advance_loc form, CIEs
 * shared or not, in .eh_frame, .debug_frame or both.
 *
 * Beside it, it writes the IL it expects `cfisem il` to print for the
 * shared object built from the .S with the project's rule
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000
 *      -Wl,--build-id=none -o X.so X.S
 *
 * (for AArch64 with aarch64-linux-gnu-gcc, the same options)
 *
 * byte for byte, header lines included. The expectation is a third
 * statement of the semantics, independent of semantics/ and interp/: the
 * generator runs its own model of the rows (current row, the CIE's
 * initial row, the remember stack, the location) over the directives it
 * emitted, and its own model of how gas and ld lay the records out (which
 * FDEs share a CIE, the encoding gas picks for each directive and each
 * advance, record sizes and padding), and prints both itself. It uses
 * nothing of cfisem but the register names of cfi/.
 *
 * On AArch64 (aadwarf64) the program also signs its return address:
 * negate_ra_state (0x2d, .cfi_negate_ra_state), negate_ra_state_with_pc
 * (0x2c) and set_ra_state (0x2b) by .cfi_escape, inside remember/restore
 * nests too, and .cfi_b_key_frame. The model's RA_SIGN_STATE (register
 * 34): no rule is state 0; 0x2d toggles 0 and 1, 0x2c toggles 0 and 2,
 * 0x2b sets 0, 1 or 2; state s is the rule val_expression(lit<s>). A
 * well-formed program never negates a state the opcode does not toggle,
 * gives register 34 no other rule, and sets no reserved state.
 *
 * "Well-formed" means that every FDE translates: no def_cfa_offset or
 * def_cfa_register while the CFA is an expression or undefined, no
 * restore_state on an empty stack, no remember_state nesting deeper than
 * 64, no restore in a CIE, registers below 128, expressions valid for CFI
 * (cfi.h) that cannot fault on the memory model of the harness: every row
 * unwinds with registers 0-16 given (AArch64: x0-x30 and sp).
 *
 * With `ill_formed`, exactly one error is injected at a random place, and
 * the expectation ends with the error line `cfisem il` reports for it.
 */
#ifndef CFISEM_GEN_H
#define CFISEM_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"

/* Where the records go (`.cfi_sections`). RANDOM: chosen from the seed. */
enum gen_sections {
    GEN_SECTIONS_RANDOM,
    GEN_SECTIONS_EH_FRAME,
    GEN_SECTIONS_DEBUG_FRAME,
    GEN_SECTIONS_BOTH,
};

/* The machine the program is for. */
enum gen_arch {
    GEN_ARCH_X86_64,
    GEN_ARCH_AARCH64,
};

/* Largest number of functions in one program. */
#define GEN_FDES_MAX 64

struct gen_options {
    uint64_t seed;
    unsigned nfdes;             /* 1 .. GEN_FDES_MAX, or 0: from the seed */
    enum gen_sections sections;
    bool ill_formed;            /* inject exactly one error */
    enum gen_arch arch;
};

/* A generated program: its functions, directives and expectations. */
struct gen_program;

/* Generates the program of `options` (same options, same program, on every
 * machine). CFI_E_NOMEM, or CFI_E_MALFORMED for options out of range,
 * with diag filled; CFI_E_INTERNAL when the program breaks the
 * generator's own model of the rows (well-formed asked) or breaks none of
 * its rules (ill_formed asked): the generator is wrong. */
enum cfi_status gen_program_new(const struct gen_options *options,
                                struct gen_program **program,
                                struct cfi_diag *diag);
void gen_program_free(struct gen_program *program);

/* The .S file. */
void gen_write_asm(const struct gen_program *program, FILE *out);

/* The expected stdout of `cfisem il X.so`. For an ill-formed program the
 * last line is "error: " followed by what `cfisem il` prints on stderr
 * after "cfisem: PATH: " (see gen_expect_split). */
void gen_write_expect(const struct gen_program *program, FILE *out);

/* Splits an expectation into the expected stdout (length *stdout_len, from
 * the start of `expect`) and the expected error line without its
 * "error: " prefix and newline (*error, NULL for a well-formed program;
 * it points into `expect`, length *error_len). */
void gen_expect_split(const char *expect, size_t *stdout_len,
                      const char **error, size_t *error_len);

/* What the program contains, for coverage checks: how many times each
 * DW_CFA opcode (advance_loc, offset and restore counted under 0x40,
 * 0x80, 0xc0) and each DW_OP opcode occurs in the encoded sections, how
 * many CIEs and FDEs each section has. */
struct gen_stats {
    unsigned cfa_ops[256];
    unsigned dw_ops[256];
    unsigned eh_frame_cies, eh_frame_fdes;
    unsigned eh_frame_cies_merged;  /* written by gas, merged away by ld */
    unsigned debug_frame_cies, debug_frame_fdes;
    unsigned max_remember_depth;
    unsigned simple_fdes, personality_fdes, lsda_fdes, signal_fdes;
    unsigned b_key_fdes;
    unsigned nested_ra_state_ops; /* 0x2b-0x2d inside remember/restore */
};
void gen_program_stats(const struct gen_program *program,
                       struct gen_stats *stats);

/* The name of a DW_CFA opcode the generator emits or gas chooses
 * ("def_cfa_sf", "advance_loc1"; 0x2d is GNU_window_save), or NULL. */
const char *gen_cfa_op_name(unsigned opcode);

#endif
