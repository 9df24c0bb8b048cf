/* libmvec.S — glibc libmvec's register expression, which relies on the CFA
 * being pushed on the stack before the expression runs:
 *   DW_CFA_expression r12: lit8; minus; const4s -32; and; const4s -80; plus
 * (r12 is stored at ((CFA-8) & -32) - 80), and a val_expression in the same
 * style (r13 is the value CFA-8). */
    .text
    .globl mvec
mvec:                           /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    mov %rsp, %rbp              /* 0x1001, 3 bytes */
    .cfi_def_cfa 6, 16
    .cfi_offset 6, -16
    and $-32, %rsp              /* 0x1004, 4 bytes */
    sub $0x60, %rsp             /* 0x1008, 4 bytes */
    mov %r12, 0x10(%rsp)        /* 0x100c, 5 bytes */
    .cfi_escape 0x10, 0x0c, 0x0e, 0x38, 0x1c, 0x0d, 0xe0, 0xff, 0xff, 0xff, 0x1a, 0x0d, 0xb0, 0xff, 0xff, 0xff, 0x22
    .cfi_escape 0x16, 0x0d, 0x02, 0x38, 0x1c
    nop                         /* 0x1011 */
    mov %rbp, %rsp              /* 0x1012, 3 bytes */
    pop %rbp                    /* 0x1015 */
    .cfi_def_cfa 7, 8
    .cfi_restore 6
    .cfi_restore 12
    .cfi_restore 13
    ret                         /* 0x1016 */
    .cfi_endproc                /* end 0x1017 */
