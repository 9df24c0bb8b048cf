/* restore.S — .cfi_restore of a register the CIE defines (rip: back to
 * the CIE's [cfa-8], also after undefined) and of one it does not (rbx:
 * back to no rule at all). */
    .text
    .globl h
h:                              /* 0x1000 */
    .cfi_startproc
    push %rbx                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbx, -16
    nop                         /* 0x1001 */
    .cfi_offset %rip, -16
    nop                         /* 0x1002 */
    .cfi_restore %rip
    .cfi_restore %rbx
    nop                         /* 0x1003 */
    .cfi_undefined %rip
    nop                         /* 0x1004 */
    .cfi_restore %rip
    nop                         /* 0x1005 */
    .cfi_endproc                /* end 0x1006 */
