/* gaps.S — for the tests of `cfisem validate` (tests/check_diff.c),
 * linked at 0x1000 as the corpus cases are: two gaps between FDEs, a
 * row whose return address is another register (rip=rdi, as at libc's
 * __vfork), a CIE whose return address column is rcx (2) with no rule
 * (the caller's PC is undefined), the PLT's CFA expression, and a row
 * whose rbp is another register (rbp=rsi). */
    .text
    .globl f1
f1:                             /* [0x1000,0x1003) */
    .cfi_startproc
    push %rbp                   /* 0x1000: cfa=rsp+8 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    pop %rbp                    /* 0x1001: cfa=rsp+16 rbp=[cfa-16] */
    .cfi_def_cfa_offset 8
    .cfi_restore %rbp
    ret                         /* 0x1002: cfa=rsp+8 */
    .cfi_endproc
    .fill 5, 1, 0x90            /* no FDE: [0x1003,0x1008) */

    .globl f2
f2:                             /* [0x1008,0x100b) */
    .cfi_startproc
    nop                         /* 0x1008: cfa=rsp+8 rip=[cfa-8] */
    .cfi_def_cfa_offset 0
    .cfi_register %rip, %rdi
    nop                         /* 0x1009, 0x100a: cfa=rsp+0 rip=rdi */
    nop
    .cfi_endproc

    .globl f3
f3:                             /* [0x100b,0x100d), return column rcx */
    .cfi_startproc
    .cfi_return_column 2
    nop
    nop
    .cfi_endproc
    .fill 3, 1, 0x90            /* no FDE: [0x100d,0x1010) */

    .globl plt
plt:                            /* [0x1010,0x1020): the PLT's CFA */
    .cfi_startproc
    /* def_cfa_expression: breg7 8; breg16 0; lit15; and; lit11; ge;
     * lit3; shl; plus */
    .cfi_escape 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
    .fill 16, 1, 0x90
    .cfi_endproc

    .globl f4
f4:                             /* [0x1020,0x1022) */
    .cfi_startproc
    .cfi_register %rbp, %rsi    /* cfa=rsp+8 rbp=rsi rip=[cfa-8] */
    nop
    nop
    .cfi_endproc
