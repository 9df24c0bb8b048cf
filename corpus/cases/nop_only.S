/* nop_only.S — an FDE with no CFI directive: its program is only
 * DW_CFA_nop padding, and its one row is the CIE's. A normal FDE follows. */
    .text
    .globl leaf
leaf:                           /* 0x1000 */
    .cfi_startproc
    nop
    nop
    nop
    ret                         /* 0x1003 */
    .cfi_endproc                /* end 0x1004 */

    .globl next
next:                           /* 0x1004 */
    .cfi_startproc
    push %rbp                   /* 0x1004 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    pop %rbp                    /* 0x1005 */
    .cfi_def_cfa_offset 8
    .cfi_restore %rbp
    ret                         /* 0x1006 */
    .cfi_endproc                /* end 0x1007 */
