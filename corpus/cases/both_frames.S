/* both_frames.S — the same CFI in .eh_frame and in .debug_frame
 * (.cfi_sections .eh_frame, .debug_frame): the .eh_frame FDEs are listed
 * first, then those of .debug_frame. */
    .cfi_sections .eh_frame, .debug_frame
    .text
    .globl b1
b1:                             /* 0x1000 */
    .cfi_startproc
    push %rbx                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbx, -16
    pop %rbx                    /* 0x1001 */
    .cfi_def_cfa_offset 8
    ret                         /* 0x1002 */
    .cfi_endproc                /* end 0x1003 */

    .globl b2
b2:                             /* 0x1003 */
    .cfi_startproc
    nop                         /* 0x1003 */
    .cfi_undefined %rip
    ret                         /* 0x1004 */
    .cfi_endproc                /* end 0x1005 */
