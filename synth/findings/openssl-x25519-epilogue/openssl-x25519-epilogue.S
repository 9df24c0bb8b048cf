/* openssl-x25519-epilogue.S — the epilogue of x25519_fe51_sqr and
 * x25519_fe64_sqr as node 20.20.2 (nodesource) ships them (OpenSSL's
 * x25519-x86_64.pl): the frame is freed with `lea 0x58(%rsp),%rsp` and
 * the CFA offset goes up by 88 instead of down, so the final `ret` has
 * cfa=rsp+184 where the code has rsp+8.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports cfa_height on the ret only. */
        .text
        .globl fe51_sqr
fe51_sqr:
        .cfi_startproc
        lea -0x58(%rsp), %rsp
        .cfi_adjust_cfa_offset 88
        mov %rdi, 0x20(%rsp)
        lea 0x58(%rsp), %rsp
        .cfi_adjust_cfa_offset 88
        ret
        .cfi_endproc
