/* a64_svc.S — system calls under qemu-aarch64, whose single step of an
 * svc (qemu-user 7.2) runs the next instruction too: uid returns
 * within the step of its svc (`svc #0; ret`, as glibc's geteuid), pid
 * calls within it (`svc #0; bl leaf`). mid keeps a frame around both;
 * every stop must agree. */
    .text
    .globl leaf
    .type leaf, %function
leaf:
    .cfi_startproc
    add x0, x0, #1
    ret
    .cfi_endproc
    .globl uid
    .type uid, %function
uid:
    .cfi_startproc
    mov x8, #175
    svc #0
    ret
    .cfi_endproc
    .globl pid
    .type pid, %function
pid:
    .cfi_startproc
    stp x29, x30, [sp, #-16]!
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    mov x8, #172
    svc #0
    bl leaf
    ldp x29, x30, [sp], #16
    .cfi_restore 29
    .cfi_restore 30
    .cfi_def_cfa_offset 0
    ret
    .cfi_endproc
    .globl mid
    .type mid, %function
mid:
    .cfi_startproc
    stp x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    str x19, [sp, #16]
    .cfi_offset 19, -16
    mov x29, sp
    bl uid
    mov x19, x0
    bl pid
    add x0, x0, x19
    ldr x19, [sp, #16]
    .cfi_restore 19
    ldp x29, x30, [sp], #32
    .cfi_restore 29
    .cfi_restore 30
    .cfi_def_cfa_offset 0
    ret
    .cfi_endproc
    .globl _start
    .type _start, %function
_start:
    .cfi_startproc
    .cfi_undefined 30
    mov x19, #77
    bl mid
    mov x8, #93
    mov x0, #0
    svc #0
    .cfi_endproc
