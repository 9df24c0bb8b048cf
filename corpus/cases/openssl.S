/* openssl.S — OpenSSL perlasm's CFA expression: the caller's stack pointer
 * saved in the frame, read back and adjusted
 * (def_cfa_expression: breg7 32; deref; plus_uconst 8). */
    .text
    .globl ossl
ossl:                           /* 0x1000 */
    .cfi_startproc
    mov %rsp, %rax              /* 0x1000, 3 bytes */
    .cfi_def_cfa_register %rax
    push %rbx                   /* 0x1003 */
    .cfi_offset %rbx, -16
    sub $0x28, %rsp             /* 0x1004, 4 bytes */
    mov %rax, 0x20(%rsp)        /* 0x1008, 5 bytes */
    .cfi_escape 0x0f, 0x05, 0x77, 0x20, 0x06, 0x23, 0x08
    nop                         /* 0x100d */
    mov 0x20(%rsp), %rsi        /* 0x100e, 5 bytes */
    .cfi_def_cfa %rsi, 8
    mov -8(%rsi), %rbx          /* 0x1013, 4 bytes */
    .cfi_restore %rbx
    lea (%rsi), %rsp            /* 0x1017, 3 bytes */
    .cfi_def_cfa_register %rsp
    ret                         /* 0x101a */
    .cfi_endproc                /* end 0x101b */
