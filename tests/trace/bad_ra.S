/* bad_ra.S — the return address said to be in the slot of the saved rbp
 * (cfa-16, not cfa-8), from the push to the pop. */
    .text
    .globl bad_ra, bad_ra_first, bad_ra_last
    .type bad_ra, @function
bad_ra:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset rip, -16
bad_ra_first:
    nop
bad_ra_last:
    pop %rbp
    .cfi_def_cfa_offset 8
    .cfi_offset rip, -8
    ret
    .cfi_endproc
    .size bad_ra, . - bad_ra
    .section .note.GNU-stack,"",@progbits
