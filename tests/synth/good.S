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

/* Regression, aux registers forgotten (libcrypto's nistp224 code): rsp
 * is kept in r15 while five other registers point into the frame, then
 * `mov %r15,%rsp` brings it back. With room for four offsets the oldest,
 * r15, was dropped, and the CFA after the move was unknown. (The five
 * are caller-saved: the call forgets them; r15 it keeps.) */
        .p2align 4
manyaux:
        .cfi_startproc
        push %r15
        .cfi_def_cfa_offset 16
        .cfi_offset r15, -16
        sub $64, %rsp
        .cfi_def_cfa_offset 80
        mov %rsp, %r15
        lea 8(%rsp), %rdi
        lea 16(%rsp), %rsi
        lea 24(%rsp), %rdx
        lea 32(%rsp), %rcx
        lea 40(%rsp), %r8
        push $0
        .cfi_def_cfa_offset 88
        call leaf
        mov %r15, %rsp
        .cfi_def_cfa_offset 80
        add $64, %rsp
        .cfi_def_cfa_offset 16
        pop %r15
        .cfi_def_cfa_offset 8
        .cfi_restore r15
        ret
        .cfi_endproc

/* Regression, a jump table bounded by a compare of another register
 * (mesa: `cmp $0xef,%cl; ja` bounds cl, the index is cl >> 4): taken as
 * the bound, 32 entries were read, into the next table, whose entry,
 * against this table's base, lands on the ret with the frame still
 * built. This table has no bound; it ends where the next table the code
 * addresses begins. */
        .p2align 4
shifted:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        movzbl (%rdi), %ecx
        mov %ecx, %edx
        shr $4, %dl
        cmp $0x1f, %cl
        ja .Lsh_out
        lea .Lsh_table(%rip), %rsi
        movzbl %dl, %edx
        movslq (%rsi,%rdx,4), %rdx
        add %rsi, %rdx
        jmp *%rdx
.Lsh_case0:
        mov $1, %ebx
        jmp .Lsh_out
.Lsh_case1:
        lea .Lsh_other(%rip), %rax
        mov $2, %ebx
.Lsh_out:
        mov %ebx, %eax
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
.Lsh_ret:
        ret
        .cfi_endproc
        .section .rodata
        .balign 4
.Lsh_table:
        .long .Lsh_case0 - .Lsh_table, .Lsh_case1 - .Lsh_table
.Lsh_other:
        .long .Lsh_ret - .Lsh_table
        .text

/* Regression, a state left by a call that does not return (libpython):
 * the fall-through of the first call (height 48) reaches the join and
 * the loop after it before the jump (height 32) does; when the jump won
 * at the join, the loop, entered again by a call's fall-through, kept
 * the stale height its back edge had carried. The fixpoint now starts
 * again without that fall-through. */
        .p2align 4
stale:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        sub $16, %rsp
        .cfi_def_cfa_offset 32
        mov %edi, %ebx
        test %edi, %edi
        jne .Lstale_far
        sub $16, %rsp
        .cfi_def_cfa_offset 48
        call leaf
.Lstale_join:
        .cfi_def_cfa_offset 32
        call leaf
.Lstale_loop:
        sub $1, %ebx
        jne .Lstale_loop
        add $16, %rsp
        .cfi_def_cfa_offset 16
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
.Lstale_far:
        .cfi_def_cfa_offset 32
        .cfi_offset rbx, -16
        add $1, %ebx
        jmp .Lstale_join
        .cfi_endproc

/* clone's child runs on the stack it was given (the sanitizers'
 * internal_clone pops its function from there): after the syscall the
 * analysis stops. */
        .p2align 4
cloned:
        .cfi_startproc
        sub $8, %rsp
        .cfi_def_cfa_offset 16
        mov %rdi, %rsi
        mov $56, %eax
        syscall
.Lcloned_after:
        test %rax, %rax
        jne 1f
        pop %rax
        pop %rdi
        call *%rax
1:      add $8, %rsp
        .cfi_def_cfa_offset 8
        ret
.Lcloned_end:
        .cfi_endproc
        expect .Lcloned_after, .Lcloned_end, "not_analysable:new_stack"

/* The IL gives rsp its own rule (GHC's StgRun: cfa=rsp+0, the caller's
 * rsp an expression): its CFA is not the caller's rsp, not compared. */
        .p2align 4
rsprule:
        .cfi_startproc
        sub $8, %rsp
        .cfi_def_cfa rsp, 0
        .cfi_escape 0x16, 0x07, 0x02, 0x77, 0x10
        .cfi_offset rip, 8
.Lrsprule_body:
        nop
        add $8, %rsp
.Lrsprule_ret:
        .cfi_def_cfa rsp, 8
        .cfi_restore rsp
        .cfi_offset rip, -8
        ret
        .cfi_endproc
        expect .Lrsprule_body, .Lrsprule_ret, "not_analysable:rsp_rule"

/* The IL's CFA on rbp set from a value the analysis does not know
 * (libffi's ffi_call_unix64 builds its frame in memory it was given). */
        .p2align 4
ffiframe:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        lea 64(%rdi), %rbp
.Lffi_frame:
        .cfi_def_cfa rbp, 16
        nop
        pop %rbp
.Lffi_ret:
        .cfi_def_cfa rsp, 8
        .cfi_restore rbp
        ret
        .cfi_endproc
        expect .Lffi_frame, .Lffi_ret, "not_analysable:cfa_other_reg"

/* Dead code after a call that does not return, running into a trap
 * (GCC: `call fancy_abort; mov 0x0,%rax; ud2`): GCC's row there is the
 * function's entry row, which need not describe it. */
        .p2align 4
deadtrap:
        .cfi_startproc
        push %rax
        .cfi_def_cfa_offset 16
        call leaf
.Ldead_after:
        .cfi_def_cfa_offset 8
        mov 8, %rax
        ud2
.Ldead_end:
        .cfi_endproc
        expect .Ldead_after, .Ldead_end, "not_analysable:after_noreturn"

        expect_end
