/* debug_frame.S — CFI in .debug_frame only (.cfi_sections .debug_frame):
 * a CIE with no augmentation, absolute 8-byte addresses in the FDE. */
    .cfi_sections .debug_frame
    .text
    .globl df
df:                             /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    pop %rbp                    /* 0x1001 */
    .cfi_def_cfa_offset 8
    .cfi_restore %rbp
    ret                         /* 0x1002 */
    .cfi_endproc                /* end 0x1003 */
