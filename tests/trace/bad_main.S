/* bad_main.S — calls each wrong function once, with rbx holding a value
 * none of them writes. Its own CFI is right. */
    .text
    .globl main
    .type main, @function
main:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    .cfi_offset rbx, -16
    mov $0x1234, %rbx
    call bad_cfa
    call bad_ra
    call bad_reg
    call bad_undef
    call no_fde
    xor %eax, %eax
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size main, . - main
    .section .note.GNU-stack,"",@progbits
