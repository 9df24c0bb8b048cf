/* pac_ret_b_key.S — pac-ret with the B key (-mbranch-protection=
 * pac-ret+b-key): .cfi_b_key_frame puts 'B' in the CIE's augmentation
 * (AADWARF64, "Common information entries": "zRB"), pacibsp (hint 27)
 * and autibsp (hint 31) bracket the frame, negate_ra_state (0x2d) follows
 * each. An A-key function comes first, so the file has two CIEs: the
 * augmentation printed is each FDE's own CIE's, and 'B' changes no rule
 * of the table (it says which key signed x30, which only the unwinder's
 * authentication uses). The bug class: a CIE with an augmentation
 * character the reader does not know ('B') refused, or its FDEs given
 * the other CIE. */
    .text
    .globl a
a:                              /* 0x1000 */
    .cfi_startproc
    hint 25                     /* 0x1000: paciasp */
    .cfi_negate_ra_state
    stp x29, x30, [sp, -16]!    /* 0x1004 */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    ldp x29, x30, [sp], 16      /* 0x1008 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    hint 29                     /* 0x100c: autiasp */
    .cfi_negate_ra_state
    ret                         /* 0x1010 */
    .cfi_endproc                /* end 0x1014 */

    .globl b
b:                              /* 0x1014 */
    .cfi_startproc
    .cfi_b_key_frame
    hint 27                     /* 0x1014: pacibsp */
    .cfi_negate_ra_state
    stp x29, x30, [sp, -16]!    /* 0x1018 */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    ldp x29, x30, [sp], 16      /* 0x101c */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    hint 31                     /* 0x1020: autibsp */
    .cfi_negate_ra_state
    ret                         /* 0x1024 */
    .cfi_endproc                /* end 0x1028 */
