/* bad_cfa.S — a push the CFI does not tell: from the instruction after the
 * push to the pop, the CFA the CFI gives (rsp+8) is 8 bytes short. */
    .text
    .globl bad_cfa, bad_cfa_first, bad_cfa_last
    .type bad_cfa, @function
bad_cfa:
    .cfi_startproc
    push %rbx
    /* missing: .cfi_adjust_cfa_offset 8 */
bad_cfa_first:
    nop
bad_cfa_last:
    pop %rbx
    ret
    .cfi_endproc
    .size bad_cfa, . - bad_cfa
    .section .note.GNU-stack,"",@progbits
