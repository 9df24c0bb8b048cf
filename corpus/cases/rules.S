/* rules.S — the rules without an expression: undefined (rip undefined from
 * the first byte: the outermost frame, end of the stack), same_value,
 * register (rbp=rbx: the caller's rbp is this frame's rbx), val_offset
 * (r12 is the value CFA-32), and undefined replacing same_value. */
    .text
    .globl _start
_start:                         /* 0x1000 */
    .cfi_startproc
    .cfi_undefined %rip
    nop                         /* 0x1000 */
    .cfi_same_value %rbx
    nop                         /* 0x1001 */
    .cfi_register %rbp, %rbx
    nop                         /* 0x1002 */
    .cfi_val_offset %r12, -32
    nop                         /* 0x1003 */
    .cfi_undefined %rbx
    nop                         /* 0x1004 */
    .cfi_endproc                /* end 0x1005 */
