/* good.S — one function per pattern the analysis follows, each with
 * correct CFI: synth must agree everywhere, apart from the expected
 * limits listed with `expect`. */
#include "expect.inc"
        .text
        .globl _start
_start:
        .cfi_startproc
        .cfi_undefined rip
        xor %ebp, %ebp
        call pushpop
        hlt
.Lstart_end:
        .cfi_endproc
        expect _start, .Lstart_end, "not_analysable:outermost"

/* push/pop, sub/add on rsp, a call in between. */
        .p2align 4
pushpop:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        push %rbp
        .cfi_def_cfa_offset 24
        .cfi_offset rbp, -24
        sub $40, %rsp
        .cfi_def_cfa_offset 64
        mov $1, %ebx
        xor %ebp, %ebp
        call leaf
        add $40, %rsp
        .cfi_def_cfa_offset 24
        pop %rbp
        .cfi_def_cfa_offset 16
        .cfi_restore rbp
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc

        .p2align 4
leaf:
        .cfi_startproc
        lea 1(%rdi), %rax
        ret
        .cfi_endproc

/* The frame pointer, torn down by leave. */
        .p2align 4
frame:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register rbp
        push %rbx
        .cfi_offset rbx, -24
        sub $24, %rsp
        mov %rdi, %rbx
        call leaf
        mov -8(%rbp), %rbx
        leave
        .cfi_def_cfa rsp, 8
        .cfi_restore rbp
        .cfi_restore rbx
        ret
        .cfi_endproc

/* Stack realignment: the CFA must come from rbp. */
        .p2align 4
realign:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register rbp
        push %rbx
        .cfi_offset rbx, -24
        and $-32, %rsp
        sub $64, %rsp
        xor %ebx, %ebx
        vmovdqa %ymm0, (%rsp)
        lea -8(%rbp), %rsp
        pop %rbx
        .cfi_restore rbx
        pop %rbp
        .cfi_def_cfa rsp, 8
        .cfi_restore rbp
        ret
        .cfi_endproc

/* enter and leave. */
        .p2align 4
enterleave:
        .cfi_startproc
        enter $32, $0
        .cfi_def_cfa rbp, 16
        .cfi_offset rbp, -16
        mov %rdi, -8(%rbp)
        leave
        .cfi_def_cfa rsp, 8
        .cfi_restore rbp
        ret
        .cfi_endproc

/* A tail call after the epilogue. */
        .p2align 4
tailcall:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov %rdi, %rbx
        call leaf
        mov %rbx, %rdi
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        jmp leaf
        .cfi_endproc

/* A jump table (gcc's PIC form); case 2 is reached only through it. */
        .p2align 4
jumptable:
        .cfi_startproc
        cmp $3, %edi
        ja .Ldefault
        lea .Ltable(%rip), %rdx
        movslq (%rdx,%rdi,4), %rax
        add %rdx, %rax
        jmp *%rax
.Lcase0:
        mov $10, %eax
        ret
.Lcase1:
        mov $11, %eax
        ret
.Lcase2:
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov $12, %ebx
        mov %ebx, %eax
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
.Lcase3:
.Ldefault:
        xor %eax, %eax
        ret
        .cfi_endproc
        .section .rodata
        .balign 4
.Ltable:
        .long .Lcase0 - .Ltable, .Lcase1 - .Ltable
        .long .Lcase2 - .Ltable, .Lcase3 - .Ltable
        .text

/* The red zone: a leaf saves rbx below rsp without moving rsp. */
        .p2align 4
redzone:
        .cfi_startproc
        mov %rbx, -8(%rsp)
        .cfi_offset rbx, -16
        mov %rdi, %rbx
        lea 1(%rbx), %rax
        mov -8(%rsp), %rbx
        .cfi_restore rbx
        ret
        .cfi_endproc

/* Conditional branches joining at the same height, one path saving and
 * restoring a register. */
        .p2align 4
samejoin:
        .cfi_startproc
        test %edi, %edi
        je 1f
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov %edi, %ebx
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
1:      mov %edi, %eax
        ret
        .cfi_endproc

/* A join where the heights conflict: not analysable from the join on. */
        .p2align 4
conflict:
        .cfi_startproc
        test %edi, %edi
        je .Lconflict_join
        push %rax
        .cfi_def_cfa_offset 16
.Lconflict_join:
        mov %edi, %eax
.Lconflict_ret:
        ret
.Lconflict_end:
        .cfi_endproc
        expect .Lconflict_join, .Lconflict_end, "not_analysable:join_conflict"

/* A callee-saved register saved with mov into a frame built by sub. */
        .p2align 4
movsave:
        .cfi_startproc
        sub $24, %rsp
        .cfi_def_cfa_offset 32
        mov %r12, 8(%rsp)
        .cfi_offset r12, -24
        xor %r12d, %r12d
        call leaf
        mov 8(%rsp), %r12
        .cfi_restore r12
        add $24, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc

/* rsp copied into another register before a realignment, the CFA on
 * that register (ld.so's _dl_runtime_resolve). */
        .p2align 4
auxframe:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov %rsp, %rbx
        .cfi_def_cfa_register rbx
        and $-64, %rsp
        sub $128, %rsp
        call leaf
        mov %rbx, %rsp
        .cfi_def_cfa_register rsp
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc

/* A landing pad, reached only by the unwinder from the call in its
 * call-site range (the LSDA below), with the stack as at the call. */
        .p2align 4
landingpad:
        .cfi_startproc
        .cfi_lsda 0x1b, .Llsda
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov %edi, %ebx
.Lcall:
        call leaf
.Lcall_end:
        mov %ebx, %eax
        pop %rbx
        .cfi_remember_state
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
.Lpad:
        .cfi_restore_state
        xor %eax, %eax
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc
        .section .gcc_except_table, "a"
.Llsda:
        .byte 0xff                      /* no LPStart: the FDE's start */
        .byte 0xff                      /* no type table */
        .byte 0x01                      /* call sites in uleb128 */
        .uleb128 .Lcs_end - .Lcs_begin
.Lcs_begin:
        .uleb128 .Lcall - landingpad
        .uleb128 .Lcall_end - .Lcall
        .uleb128 .Lpad - landingpad
        .uleb128 0
.Lcs_end:
        .text

/* A call with an argument pushed (GNU_args_size 8): the unwinder pops it
 * before it enters the landing pad. */
        .p2align 4
argspad:
        .cfi_startproc
        .cfi_lsda 0x1b, .Llsda2
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        push %rdi
        .cfi_def_cfa_offset 24
        .cfi_escape 0x2e, 0x08
.Lcall2:
        call leaf
.Lcall2_end:
        add $8, %rsp
        .cfi_def_cfa_offset 16
        .cfi_escape 0x2e, 0x00
        pop %rbx
        .cfi_remember_state
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
.Lpad2:
        .cfi_restore_state
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc
        .section .gcc_except_table, "a"
.Llsda2:
        .byte 0xff, 0xff, 0x01
        .uleb128 .Lcs2_end - .Lcs2_begin
.Lcs2_begin:
        .uleb128 .Lcall2 - argspad
        .uleb128 .Lcall2_end - .Lcall2
        .uleb128 .Lpad2 - argspad
        .uleb128 0
.Lcs2_end:
        .text

/* A call that does not return: its fall-through (height 16) reaches the
 * join where the jump arrives at height 8; the jump wins. */
        .p2align 4
noreturn:
        .cfi_startproc
        test %edi, %edi
        jne .Lnoreturn_join
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        call leaf
.Lnoreturn_join:
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        xor %eax, %eax
        ret
        .cfi_endproc

        expect_end
