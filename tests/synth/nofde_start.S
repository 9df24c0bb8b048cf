/* nofde_start.S — the entry point of the no-CFI programs: no CFI. */
        .text
        .globl _start
_start:
        xor %ebp, %ebp
        call start_c
        mov %eax, %edi
        and $0x7f, %edi
        mov $60, %eax
        syscall
        .section .note.GNU-stack, "", @progbits
