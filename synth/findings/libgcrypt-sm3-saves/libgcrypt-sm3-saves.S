/* libgcrypt-sm3-saves.S — the prologue of libgcrypt 1.10.1's SM3 with
 * AVX and BMI2 (cipher/sm3-avx-bmi2-amd64.S): the frame pointer is set
 * up and described (cfa=rbp+16), rsp lowered and realigned to 64, then
 * rbx and r12-r15 stored at rsp-relative slots and described with
 * CFI_REL_OFFSET, which gas counts from the CFA register: rbp. The rules
 * say rbx=[cfa+176] ... r12=[cfa+208], slots above the CFA, in the
 * caller's frame; the values are below it, at an offset from rbp that
 * depends on the alignment (a CFA-relative rule cannot name them: the
 * CFI would need DW_CFA_expression on rsp).
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports save_slot for each of the five from its store to where it is
 * overwritten (later the analysis loses the saves to the realignment: a
 * limit, not compared). */
        .text
        .globl sm3_prologue
sm3_prologue:
        .cfi_startproc
        vzeroupper
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq $0x100, %rsp
        andq $-64, %rsp
        movq %rbx, 0xc0(%rsp)
        .cfi_rel_offset %rbx, 0xc0
        movq %r15, 0xc8(%rsp)
        .cfi_rel_offset %r15, 0xc8
        movq %r14, 0xd0(%rsp)
        .cfi_rel_offset %r14, 0xd0
        movq %r13, 0xd8(%rsp)
        .cfi_rel_offset %r13, 0xd8
        movq %r12, 0xe0(%rsp)
        .cfi_rel_offset %r12, 0xe0
        movl (%rdi), %r8d
        movl 4(%rdi), %r12d
        movl 8(%rdi), %r13d
        movl 12(%rdi), %r14d
        movl 16(%rdi), %r15d
        movl 20(%rdi), %ebx
        movq 0xc0(%rsp), %rbx
        .cfi_restore %rbx
        movq 0xc8(%rsp), %r15
        .cfi_restore %r15
        movq 0xd0(%rsp), %r14
        .cfi_restore %r14
        movq 0xd8(%rsp), %r13
        .cfi_restore %r13
        movq 0xe0(%rsp), %r12
        .cfi_restore %r12
        vzeroall
        movq %rbp, %rsp
        .cfi_def_cfa_register %rsp
        popq %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        ret
        .cfi_endproc
