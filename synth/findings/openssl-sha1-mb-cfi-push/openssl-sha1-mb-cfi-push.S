/* openssl-sha1-mb-cfi-push.S — the prologue of sha1_multi_block as node
 * 20.20.2 (nodesource) ships it (OpenSSL's sha1-mb-x86_64.pl): the second
 * push, of rbp, is described as a push of rbx.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports save_slot rbx (il=[cfa-24], the code has it at [cfa-16]) and
 * save_slot rbp (no rule, the code has it at [cfa-24] and overwrites the
 * register). */
        .text
        .globl sha1_multi_block
sha1_multi_block:
        .cfi_startproc
        mov %rsp, %rax
        .cfi_def_cfa_register rax
        push %rbx
        .cfi_offset rbx, -16
        push %rbp
        .cfi_offset rbx, -24
        sub $0x120, %rsp
        lea 1(%rdi), %rbp
        add $0x120, %rsp
        pop %rbp
        .cfi_restore rbp
        pop %rbx
        .cfi_restore rbx
        .cfi_def_cfa_register rsp
        ret
        .cfi_endproc
