/* remember_negate.S — negate_ra_state (0x2d) inside remember_state /
 * restore_state nests. RA_SIGN_STATE (34) is a column of the row like any
 * register, so restore_state brings back the remembered state with the
 * rest of the row (DWARF 5 §6.4.2.4) — the 2024 bug class was unwinders
 * that kept it beside the row and left it as the last negate set it.
 * The inner pair is GCC's epilogue pattern for a function with two exits:
 * remember before the first epilogue (signed, CFA sp+16), its autiasp
 * and negate, ret; restore_state at the second exit brings back state 1
 * though the last negate left 0. The outer pair is remembered before the
 * paciasp, when 34 has no rule: restoring it removes the rule (back to
 * the ABI default, not printed) rather than leaving lit0 or lit1. */
    .text
    .globl g
g:                              /* 0x1000 */
    .cfi_startproc
    .cfi_remember_state         /* R0: the CIE's row, no rule for 34 */
    hint 25                     /* 0x1000: paciasp */
    .cfi_negate_ra_state
    stp x29, x30, [sp, -16]!    /* 0x1004 */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    cbz x0, 1f                  /* 0x1008 */
    .cfi_remember_state         /* R1: cfa=sp+16, x29, x30, state 1 */
    ldp x29, x30, [sp], 16      /* 0x100c */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    hint 29                     /* 0x1010: autiasp */
    .cfi_negate_ra_state
    ret                         /* 0x1014 */
1:
    .cfi_restore_state          /* R1 again, at 0x1018 */
    ldp x29, x30, [sp], 16      /* 0x1018 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    hint 29                     /* 0x101c: autiasp */
    .cfi_restore_state          /* R0 again, at 0x1020 */
    ret                         /* 0x1020 */
    .cfi_endproc                /* end 0x1024 */
