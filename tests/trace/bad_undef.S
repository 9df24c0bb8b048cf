/* bad_undef.S — a live frame whose return address the CFI says is
 * undefined (the end of the stack), at every instruction. */
    .text
    .globl bad_undef, bad_undef_last
    .type bad_undef, @function
bad_undef:
    .cfi_startproc
    .cfi_undefined rip
    nop
bad_undef_last:
    ret
    .cfi_endproc
    .size bad_undef, . - bad_undef
    .section .note.GNU-stack,"",@progbits
