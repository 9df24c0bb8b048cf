/* bad_opcode.S — byte 0x17 is no DW_CFA opcode: the program does not
 * decode from there on, and the instructions before it are applied
 * first (the first error in program order is the one reported). */
    .text
    .globl g
g:                              /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_escape 0x17, 0x01      /* not an opcode */
    ret                         /* 0x1001 */
    .cfi_endproc                /* end 0x1002 */
