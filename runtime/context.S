/* SPDX-License-Identifier: MIT */
/* context.S — cfisem_getcontext: the registers of its caller as they are
 * when the call returns (cfisem-unwind.h). Assembly because C cannot
 * name registers; it changes no register of its caller but rax.
 *
 * struct cfisem_context: uint64_t regs[17] (DWARF numbers), then
 * uint32_t known at byte 136. */
    .text
    .globl  cfisem_getcontext
    .type   cfisem_getcontext, @function
cfisem_getcontext:
    .cfi_startproc
    movq    %rbx, 24(%rdi)          /* 3 rbx */
    movq    %rbp, 48(%rdi)          /* 6 rbp */
    leaq    8(%rsp), %rax
    movq    %rax, 56(%rdi)          /* 7 rsp after the return */
    movq    %r12, 96(%rdi)          /* 12-15 */
    movq    %r13, 104(%rdi)
    movq    %r14, 112(%rdi)
    movq    %r15, 120(%rdi)
    movq    (%rsp), %rax
    movq    %rax, 128(%rdi)         /* 16 rip: the return address */
    movl    $0x1f0c8, 136(%rdi)     /* bits 3 6 7 12 13 14 15 16 */
    ret
    .cfi_endproc
    .size   cfisem_getcontext, .-cfisem_getcontext
    .section .note.GNU-stack,"",@progbits
