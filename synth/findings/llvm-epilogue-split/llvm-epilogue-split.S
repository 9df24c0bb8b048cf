/* llvm-epilogue-split.S — the shape of 218 functions of librsvg
 * 2.54 (Rust, LLVM) on Debian 12: the epilogue's `add $8,%rsp` is
 * followed by a test and a conditional branch to two pop sequences, and
 * the CFA offset changes only at the pops, so between the add and the
 * branch the CFI still has the frame (cfa=rsp+32 where the code has
 * rsp+24).
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports cfa_height on [0x1010,0x1014): the test and the je (the
 * offset is right again from the first pop, whose row LLVM gives 24). */
        .text
        .globl split
split:
        .cfi_startproc
        push %r14
        .cfi_def_cfa_offset 16
        push %rbx
        .cfi_def_cfa_offset 24
        push %rax
        .cfi_def_cfa_offset 32
        .cfi_offset rbx, -24
        .cfi_offset r14, -16
        mov %rsi, %rbx
        mov %rdi, %r14
        call *%rbx
        add $8, %rsp
        test %al, %al
        je 1f
        .cfi_def_cfa_offset 24
        pop %rbx
        .cfi_def_cfa_offset 16
        pop %r14
        .cfi_def_cfa_offset 8
        ret
1:
        .cfi_def_cfa_offset 24
        pop %rbx
        .cfi_def_cfa_offset 16
        pop %r14
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
