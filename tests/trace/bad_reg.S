/* bad_reg.S — rbx saved by a push and then changed, with no .cfi_offset:
 * the CFI says the caller's rbx is the current one, wrong from the
 * instruction after the change to the pop. */
    .text
    .globl bad_reg, bad_reg_first, bad_reg_last
    .type bad_reg, @function
bad_reg:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    /* missing: .cfi_offset rbx, -16 */
    mov $7, %rbx
bad_reg_first:
    nop
bad_reg_last:
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size bad_reg, . - bad_reg
    .section .note.GNU-stack,"",@progbits
