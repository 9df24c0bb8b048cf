/* no_fde.S — code with no CFI at all: no FDE covers it. */
    .text
    .globl no_fde, no_fde_last
    .type no_fde, @function
no_fde:
    nop
no_fde_last:
    ret
    .size no_fde, . - no_fde
    .section .note.GNU-stack,"",@progbits
