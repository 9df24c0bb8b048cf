/* tail.S — a tail call: tail_caller saves rbx, changes it, restores it
 * and jumps to tail_callee, which then runs in tail_caller's frame (the
 * same return address, CFA and caller's rbx) and saves rbx itself. Every
 * row is right. */
    .text
    .globl main, tail_caller, tail_callee, tail_callee_body
    .type main, @function
main:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    .cfi_offset rbx, -16
    mov $0x1234, %rbx
    call tail_caller
    xor %eax, %eax
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size main, . - main

    .type tail_caller, @function
tail_caller:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    .cfi_offset rbx, -16
    mov $1, %rbx
    pop %rbx
    .cfi_def_cfa_offset 8
    .cfi_restore rbx
    jmp tail_callee
    .cfi_endproc
    .size tail_caller, . - tail_caller

    .type tail_callee, @function
tail_callee:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    .cfi_offset rbx, -16
    mov $2, %rbx
tail_callee_body:
    nop
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size tail_callee, . - tail_callee
    .section .note.GNU-stack, "", @progbits
