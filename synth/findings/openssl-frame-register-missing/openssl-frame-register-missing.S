/* openssl-frame-register-missing.S — ossl_bsaes_xts_decrypt and
 * bn_gather5 as node 20.20.2 (nodesource) ships them (OpenSSL's
 * bsaes-x86_64.pl, x86_64-mont5.pl): rsp is copied into a register and
 * then moved by an amount the CFI cannot follow (`sub %rax,%rsp`, `and
 * $-16,%rsp`), but no def_cfa_register names the copy: the CFA stays
 * rsp-based and is wrong from there to the epilogue.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports cfa_height from the instruction after `sub $0x108,%rsp` to the
 * one that restores rsp (il=rsp+8, the code has rsp+272 or r10+8). */
        .text
        .globl gather5
gather5:
        .cfi_startproc
        lea (%rsp), %r10
        sub $0x108, %rsp
        and $-16, %rsp
        movdqa %xmm0, (%rsp)
        lea (%r10), %rsp
        ret
        .cfi_endproc
