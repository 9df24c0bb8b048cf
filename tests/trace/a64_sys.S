/* a64_sys.S — the start and the system call of the AArch64 programs
 * with no libc: _start calls main and exits with its value; a64_syscall
 * (nr, a, b, c) is `svc #0` with x8 = nr. */
    .text
    .globl a64_syscall
    .type a64_syscall, %function
a64_syscall:
    .cfi_startproc
    mov x8, x0
    mov x0, x1
    mov x1, x2
    mov x2, x3
    mov x3, x4
    svc #0
    ret
    .cfi_endproc
    .size a64_syscall, .-a64_syscall
    .globl _start
    .type _start, %function
_start:
    .cfi_startproc
    .cfi_undefined 30
    bl main
    mov x8, #93
    svc #0
    .cfi_endproc
    .size _start, .-_start
