/* args_size.S — DW_CFA_GNU_args_size (0x2e), which changes no rule: in the
 * second function it is the only thing after an advance, so two ranges
 * have the same row (rows are not merged: a range per advance). */
    .text
    .globl caller
caller:                         /* 0x1000 */
    .cfi_startproc
    push %rbx                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbx, -16
    push $1                     /* 0x1001, 2 bytes */
    .cfi_escape 0x2e, 0x08
    .cfi_def_cfa_offset 24
    nop                         /* 0x1003 */
    pop %rax                    /* 0x1004 */
    .cfi_escape 0x2e, 0x00
    .cfi_def_cfa_offset 16
    pop %rbx                    /* 0x1005 */
    .cfi_def_cfa_offset 8
    .cfi_restore %rbx
    ret                         /* 0x1006 */
    .cfi_endproc                /* end 0x1007 */

    .globl only_args_size
only_args_size:                 /* 0x1007 */
    .cfi_startproc
    nop                         /* 0x1007 */
    .cfi_escape 0x2e, 0x10
    nop                         /* 0x1008 */
    .cfi_endproc                /* end 0x1009 */
