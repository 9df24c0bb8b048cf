/* SPDX-License-Identifier: MIT */
/* context.S — cfisem_getcontext: the registers of its caller as they are
 * when the call returns (cfisem-unwind.h). Assembly because C cannot
 * name registers. One variant per machine, chosen by the compiler's.
 *
 * x86-64: it changes no register of its caller but rax. struct
 * cfisem_context: uint64_t regs[17] (DWARF numbers), then uint32_t known
 * at byte 136.
 *
 * AArch64: it changes no register of its caller. struct cfisem_context:
 * uint64_t regs[35] (DWARF numbers: x0-x30 0-30, sp 31, pc 32), then
 * uint64_t known at byte 280. x30 and the PC are the return address
 * (bl wrote it to x30, which holds it still when the call returns, not
 * signed); sp is unchanged by a call. */
#if defined(__x86_64__)
    .text
/* rt_getregs (internal.h): the same into a struct eh_elf_regs, whose
 * `undefined` (byte 140) it clears first; it then runs on into
 * cfisem_getcontext, its return address still at the top of the stack. */
    .globl  rt_getregs
    .hidden rt_getregs
    .type   rt_getregs, @function
rt_getregs:
    .cfi_startproc
    movl    $0, 140(%rdi)
    .cfi_endproc
    .size   rt_getregs, .-rt_getregs
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
#elif defined(__aarch64__)
    .text
/* rt_getregs: as on x86-64 (`undefined` at byte 288). */
    .globl  rt_getregs
    .hidden rt_getregs
    .type   rt_getregs, %function
    .p2align 2
rt_getregs:
    .cfi_startproc
    str     xzr, [x0, #288]
    .cfi_endproc
    .size   rt_getregs, .-rt_getregs
    .globl  cfisem_getcontext
    .type   cfisem_getcontext, %function
cfisem_getcontext:
    .cfi_startproc
    stp     x19, x20, [x0, #152]    /* 19, 20 */
    stp     x21, x22, [x0, #168]    /* 21, 22 */
    stp     x23, x24, [x0, #184]    /* 23, 24 */
    stp     x25, x26, [x0, #200]    /* 25, 26 */
    stp     x27, x28, [x0, #216]    /* 27, 28 */
    stp     x29, x30, [x0, #232]    /* 29, 30 x30: the return address */
    str     x30, [x0, #256]         /* 32 pc: the return address */
    /* 31 sp and the mask (bits 19-32: 0x1fff80000) through x16 and x17,
     * which the AAPCS64 lets a call clobber (the linker's veneers do);
     * they are put back from the context's own slots 16 and 17. */
    stp     x16, x17, [x0, #128]
    mov     x16, sp
    str     x16, [x0, #248]
    movz    x16, #0xfff8, lsl #16
    movk    x16, #0x1, lsl #32
    str     x16, [x0, #280]
    ldp     x16, x17, [x0, #128]
    ret
    .cfi_endproc
    .size   cfisem_getcontext, .-cfisem_getcontext
#else
#error "cfisem_getcontext: no variant for this machine"
#endif
    .section .note.GNU-stack,"",%progbits
