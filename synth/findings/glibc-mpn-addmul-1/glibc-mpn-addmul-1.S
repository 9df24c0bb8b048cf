/* glibc-mpn-addmul-1.S — the shape of glibc 2.36's __mpn_addmul_1 and
 * __mpn_submul_1 (sysdeps/x86_64/addmul_1.S): two pushes and two pops
 * with no CFI for them, so the FDE says cfa=rsp+8 throughout.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports cfa_height on [0x1001,0x1013) (rsp+8 where the code has rsp+16,
 * then rsp+24), and save_slot for rbx on [0x1005,0x1013) and rbp on
 * [0x100e,0x1012), where they are overwritten while the CFI says they are
 * in place. */
        .text
        .globl addmul_1
addmul_1:
        .cfi_startproc
        push %rbx
        push %rbp
        lea (%rdx), %rbx
        neg %rbx
        mov (%rsi), %rax
        lea (%rdx), %rbp
        mul %rcx
        pop %rbp
        pop %rbx
        ret
        .cfi_endproc
