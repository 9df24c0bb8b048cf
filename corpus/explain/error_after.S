/* error_after.S — a restore_state with an empty stack after 0x1001: the
 * row of 0x1001 is emitted before it, but the whole program must be well
 * formed (cfi.h step 3), so unwinding at 0x1001 is an error too. */
    .text
    .globl f
f:                              /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    nop                         /* 0x1001 */
    .cfi_escape 0x0b            /* restore_state, nothing remembered */
    ret                         /* 0x1002 */
    .cfi_endproc                /* end 0x1003 */
