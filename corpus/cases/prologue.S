/* prologue.S — the classic prologue and epilogue, two FDEs in one file:
 * f1 sets up a frame pointer (push rbp; mov rsp,rbp; push rbx; sub) and
 * undoes it with .cfi_restore; f2 pushes callee-saved registers without a
 * frame pointer and tracks every push and pop with def_cfa_offset. */
    .text
    .globl f1
f1:                             /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000, 1 byte */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp              /* 0x1001, 3 bytes */
    .cfi_def_cfa_register %rbp
    push %rbx                   /* 0x1004, 1 byte */
    sub $0x18, %rsp             /* 0x1005, 4 bytes */
    .cfi_offset %rbx, -24
    nop                         /* 0x1009 */
    add $0x18, %rsp             /* 0x100a, 4 bytes */
    pop %rbx                    /* 0x100e */
    .cfi_restore %rbx
    pop %rbp                    /* 0x100f */
    .cfi_def_cfa %rsp, 8
    .cfi_restore %rbp
    ret                         /* 0x1010 */
    .cfi_endproc                /* end 0x1011 */

    .globl f2
f2:                             /* 0x1011 */
    .cfi_startproc
    push %r15                   /* 0x1011, 2 bytes */
    .cfi_def_cfa_offset 16
    .cfi_offset %r15, -16
    push %r14                   /* 0x1013, 2 bytes */
    .cfi_def_cfa_offset 24
    .cfi_offset %r14, -24
    push %rbx                   /* 0x1015, 1 byte */
    .cfi_def_cfa_offset 32
    .cfi_offset %rbx, -32
    sub $0x40, %rsp             /* 0x1016, 4 bytes */
    .cfi_def_cfa_offset 96
    nop                         /* 0x101a */
    add $0x40, %rsp             /* 0x101b, 4 bytes */
    .cfi_def_cfa_offset 32
    pop %rbx                    /* 0x101f */
    .cfi_def_cfa_offset 24
    pop %r14                    /* 0x1020, 2 bytes */
    .cfi_def_cfa_offset 16
    pop %r15                    /* 0x1022, 2 bytes */
    .cfi_def_cfa_offset 8
    ret                         /* 0x1024 */
    .cfi_endproc                /* end 0x1025 */
