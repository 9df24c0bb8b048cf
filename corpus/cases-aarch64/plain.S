/* plain.S — AArch64 CFI without pointer authentication, as GCC emits it
 * without -mbranch-protection: a leaf with no directive (its one row is
 * the CIE's: cfa=sp+0, and no rule for x30, which keeps the return
 * address: AADWARF64 "Common information entries", a register the CIE
 * does not mention gets the ABI default), then a frame record pushed
 * and popped. No row has a rule for RA_SIGN_STATE (34): nothing sets it,
 * and its default (0, not signed) is not printed. The bug class: a
 * column invented for 34, or the CIE's row of another architecture. */
    .text
leaf:                           /* 0x1000 */
    .cfi_startproc
    ret                         /* 0x1000 */
    .cfi_endproc                /* end 0x1004 */

    .globl caller
caller:                         /* 0x1004 */
    .cfi_startproc
    stp x29, x30, [sp, -16]!    /* 0x1004 */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    mov x29, sp                 /* 0x1008 */
    bl leaf                     /* 0x100c */
    ldp x29, x30, [sp], 16      /* 0x1010 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    ret                         /* 0x1014 */
    .cfi_endproc                /* end 0x1018 */
