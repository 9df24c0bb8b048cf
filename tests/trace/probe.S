/* probe.S — an SDT probe (the note sys/sdt.h writes, by hand) in a
 * function main calls twice. Built with -DSHIFT=N, the note records a
 * .stapsdt.base N bytes above the section's address, as in a file
 * prelink moved: the probe's PC is then N bytes below the one recorded.
 * Built with -DBROKEN, the function's CFI misses the push before the
 * probe: the CFA is wrong there. */
#ifndef SHIFT
#define SHIFT 0
#endif
    .text
    .globl probed, probe_site, main
    .type probed, @function
probed:
    .cfi_startproc
    push %rbx
#ifndef BROKEN
    .cfi_def_cfa_offset 16
    .cfi_offset rbx, -16
#endif
    mov $5, %rbx
probe_site:
    nop
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size probed, . - probed

    .type main, @function
main:
    .cfi_startproc
    sub $8, %rsp
    .cfi_def_cfa_offset 16
    call probed
    call probed
    xor %eax, %eax
    add $8, %rsp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size main, . - main

    .section .stapsdt.base, "aG", @progbits, .stapsdt.base, comdat
    .weak _.stapsdt.base
    .hidden _.stapsdt.base
_.stapsdt.base:
    .space 1

    .section .note.stapsdt, "?", "note"
    .balign 4
    .4byte 992f-991f, 994f-993f, 3
991: .asciz "stapsdt"
992: .balign 4
993: .8byte probe_site
    .8byte _.stapsdt.base + SHIFT
    .8byte 0
    .asciz "cfisem"
    .asciz "probe"
    .asciz "-4@%ebx 8@%rsp"
994: .balign 4
    .section .note.GNU-stack, "", @progbits
