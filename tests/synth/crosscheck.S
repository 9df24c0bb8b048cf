/* crosscheck.S — the CFI mistakes of synth/findings/README.md, each in a
 * function the program runs, for the test that `cfisem trace` (the truth
 * of the run) differs from the CFI exactly where `cfisem synth` says:
 *   pushes       pushes with no CFI (glibc's __mpn_addmul_1)
 *   late_adjust  `sub $8,%rsp` described after the branch (LLVM)
 *   split        `add $8,%rsp` described at the pops (LLVM)
 *   shared_ret   a ret shared with a shrink-wrapped early exit keeps the
 *                save rules (LLVM); _start leaves a value below the
 *                stack, so that the stale slot differs from rbx
 *   rbp_adjust   a push after realignment adjusting an rbp-based CFA
 *                (glibc's libmvec wrappers); r13 is given a value apart
 *                from rbp's, which its wrong slot holds
 * and one correct function. No libc: `cc -static -nostdlib`. */
        .text
        .globl _start
_start:
        .cfi_startproc
        .cfi_undefined rip
        xor %ebp, %ebp
        mov $0x1313, %r13
        call pushes
        call late_adjust
        call split
        movq $0x5eed, -16(%rsp)
        xor %edi, %edi
        call shared_ret
        mov $1, %edi
        call shared_ret
        call rbp_adjust
        call correct
        mov $60, %eax
        xor %edi, %edi
        syscall
        .cfi_endproc

        .p2align 4
pushes:
        .cfi_startproc
        push %rbx
        push %rbp
        mov $1, %ebx
        mov $2, %ebp
        pop %rbp
        pop %rbx
        ret
        .cfi_endproc

        .p2align 4
late_adjust:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov $5, %ebx
        sub $8, %rsp
        test %ebx, %ebx
        je 1f
        .cfi_adjust_cfa_offset 8
        add $8, %rsp
        .cfi_adjust_cfa_offset -8
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
1:      .cfi_def_cfa_offset 24
        .cfi_offset rbx, -16
        add $8, %rsp
        .cfi_def_cfa_offset 16
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc

        .p2align 4
split:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        sub $8, %rsp
        .cfi_def_cfa_offset 24
        mov $3, %ebx
        add $8, %rsp
        test %ebx, %ebx
        je 1f
        .cfi_def_cfa_offset 16
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
1:      .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc

        .p2align 4
shared_ret:
        .cfi_startproc
        test %rdi, %rdi
        je .Lret
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        lea 1(%rdi), %rbx
        pop %rbx
        .cfi_def_cfa_offset 8
.Lret:
        ret
        .cfi_endproc

        .p2align 4
rbp_adjust:
        .cfi_startproc
        push %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset rbp, 0
        mov %rsp, %rbp
        .cfi_def_cfa_register rbp
        and $-32, %rsp
        push %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset r13, 0
        mov $7, %r13
        pop %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore r13
        mov %rbp, %rsp
        .cfi_def_cfa_register rsp
        pop %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore rbp
        ret
        .cfi_endproc

        .p2align 4
correct:
        .cfi_startproc
        push %r12
        .cfi_def_cfa_offset 16
        .cfi_offset r12, -16
        mov $9, %r12
        pop %r12
        .cfi_def_cfa_offset 8
        .cfi_restore r12
        ret
        .cfi_endproc
        .section .note.GNU-stack, "", @progbits
