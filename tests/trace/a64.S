/* a64.S — an AArch64 program with no libc for tracing under qemu: _start
 * calls mid twice, mid (signing its return address with paciasp) saves
 * x29, x30 and x19 and calls the leaf. -DBAD_OFFSET: the CFI puts x19 8
 * bytes off; -DNO_RA_STATE: the CFI never says the return address is
 * signed. */
    .text
    .globl leaf
    .type leaf, %function
leaf:
    .cfi_startproc
    add x0, x0, #1
    ret
    .cfi_endproc
    .globl mid
    .type mid, %function
mid:
    .cfi_startproc
    paciasp
#ifndef NO_RA_STATE
    .cfi_negate_ra_state
#endif
    stp x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    str x19, [sp, #16]
#ifdef BAD_OFFSET
    .cfi_offset 19, -8
#else
    .cfi_offset 19, -16
#endif
    mov x29, sp
    mov x19, x0
    bl leaf
    add x0, x0, x19
    ldr x19, [sp, #16]
    .cfi_restore 19
    ldp x29, x30, [sp], #32
    .cfi_restore 29
    .cfi_restore 30
    .cfi_def_cfa_offset 0
    autiasp
#ifndef NO_RA_STATE
    .cfi_negate_ra_state
#endif
    ret
    .cfi_endproc
    .globl _start
    .type _start, %function
_start:
    .cfi_startproc
    .cfi_undefined 30
    mov x0, #5
    mov x19, #77
    bl mid
    bl mid
    mov x8, #93
    mov x0, #0
    svc #0
    .cfi_endproc
