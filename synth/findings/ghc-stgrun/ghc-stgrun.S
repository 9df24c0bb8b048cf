/* ghc-stgrun.S — the shape of GHC's StgRun (rts/StgCRun.c, x86_64, in
 * shellcheck 0.9.0): `subq $0x30,%rsp; movq %rsp,%rax; subq
 * $0x4000,%rsp`, the callee-saved registers stored at (%rax), then the
 * CFI of Note [Unwinding foreign exports on x86-64]: cfa=rsp+0, the
 * registers at cfa+16384.., rsp an expression. Before that row the FDE
 * has only the CIE's (cfa=rsp+8): over the two subtractions and the
 * stores the CFA is 0x30, then 0x4030 bytes too low. After `jmp *%rax`
 * into STG code returns to StgReturn, the same row stays over the
 * epilogue that takes the 0x4030 bytes back, where it is wrong too (seen
 * by `cfisem trace`; synth does not compare a row that gives rsp its own
 * rule).
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports cfa_height on [0x1004,0x1025) (il=rsp+8, code=rsp+56, then
 * rsp+16440). */
        .text
        .globl StgRun
StgRun:
        .cfi_startproc
        subq $0x30, %rsp
        movq %rsp, %rax
        subq $0x4000, %rsp
        movq %rbx, 0(%rax)
        movq %rbp, 8(%rax)
        movq %r12, 16(%rax)
        movq %r13, 24(%rax)
        movq %r14, 32(%rax)
        movq %r15, 40(%rax)
        .cfi_def_cfa rsp, 0
        .cfi_offset rbx, 0x4000
        .cfi_offset rbp, 0x4008
        .cfi_offset r12, 0x4010
        .cfi_offset r13, 0x4018
        .cfi_offset r14, 0x4020
        .cfi_offset r15, 0x4028
        .cfi_offset rip, 0x4030
        .cfi_escape 0x16, 0x07, 0x04, 0x77, 0xb8, 0x80, 0x01
        movq %rsi, %r13
        movq %rdi, %rax
        jmp *%rax
StgReturn:
        movq %rbx, %rax
        addq $0x4000, %rsp
        movq 0(%rsp), %rbx
        movq 8(%rsp), %rbp
        movq 16(%rsp), %r12
        movq 24(%rsp), %r13
        movq 32(%rsp), %r14
        movq 40(%rsp), %r15
        addq $0x30, %rsp
        ret
        .cfi_endproc
