/* start.S — the entry of the tracing suite's freestanding programs: main,
 * then exit with its value. The return address is undefined: the
 * outermost frame. */
    .text
    .globl _start
    .type _start, @function
_start:
    .cfi_startproc
    .cfi_undefined rip
    xor %ebp, %ebp
    and $-16, %rsp
    call main
    mov %eax, %edi
    mov $60, %eax
    syscall
    hlt
    .cfi_endproc
    .size _start, . - _start

/* exit(status) from anywhere: the program ends early. */
    .globl sys_exit
    .type sys_exit, @function
sys_exit:
    .cfi_startproc
    mov $60, %eax
    syscall
    hlt
    .cfi_endproc
    .size sys_exit, . - sys_exit
/* pause(): blocks until a signal. */
    .globl sys_pause
    .type sys_pause, @function
sys_pause:
    .cfi_startproc
    mov $34, %eax
    syscall
    ret
    .cfi_endproc
    .size sys_pause, . - sys_pause
    .section .note.GNU-stack,"",@progbits
