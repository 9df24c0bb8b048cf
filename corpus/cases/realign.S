/* realign.S — GCC's stack realignment (main with a 32-byte aligned frame):
 * the CFA is first r10+0, then read back from the frame
 * (def_cfa_expression: breg6 -8; deref), rbp and rbx are stored at
 * addresses computed from rbp (DW_CFA_expression: breg6 0, breg6 -16). */
    .text
    .globl realign
realign:                        /* 0x1000 */
    .cfi_startproc
    lea 0x8(%rsp), %r10         /* 0x1000, 5 bytes */
    .cfi_def_cfa %r10, 0
    and $-32, %rsp              /* 0x1005, 4 bytes */
    pushq -0x8(%r10)            /* 0x1009, 4 bytes */
    push %rbp                   /* 0x100d */
    mov %rsp, %rbp              /* 0x100e, 3 bytes */
    .cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00         /* rbp: breg6 0 */
    push %r10                   /* 0x1011, 2 bytes */
    .cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06         /* cfa: breg6 -8; deref */
    push %rbx                   /* 0x1013 */
    .cfi_escape 0x10, 0x03, 0x02, 0x76, 0x70         /* rbx: breg6 -16 */
    nop                         /* 0x1014 */
    pop %rbx                    /* 0x1015 */
    pop %r10                    /* 0x1016, 2 bytes */
    .cfi_def_cfa %r10, 0
    pop %rbp                    /* 0x1018 */
    lea -0x8(%r10), %rsp        /* 0x1019, 4 bytes */
    .cfi_def_cfa %rsp, 8
    ret                         /* 0x101d */
    .cfi_endproc                /* end 0x101e */
