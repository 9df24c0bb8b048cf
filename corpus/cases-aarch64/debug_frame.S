/* debug_frame.S — pac-ret CFI in .debug_frame only (.cfi_sections
 * .debug_frame): a CIE with no augmentation (so no 'B': the A key), an
 * FDE with absolute 8-byte addresses, and negate_ra_state (0x2d), whose
 * meaning is the architecture's in either section (AADWARF64 "Call frame
 * instructions" speaks of "the debug frame"). The bug class: vendor
 * opcodes decoded only on the .eh_frame path. */
    .cfi_sections .debug_frame
    .text
    .globl df
df:                             /* 0x1000 */
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
