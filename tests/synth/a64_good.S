/* a64_good.S — AArch64 functions for each pattern the analysis follows
 * (synth/decode_aarch64.c), written as GCC writes them, with correct
 * CFI: synth must agree everywhere but where `expect` says. Built with
 * the cross compiler, -nostdlib -static. */
#include "expect.inc"
        .text
        .globl _start
        .type _start, %function
_start:
        .cfi_startproc
        .cfi_undefined x30
        mov x29, #0
        brk #0
.Lstart_end:
        .cfi_endproc
        expect _start, .Lstart_end, "not_analysable:outermost"

        .type leaf, %function
leaf:
        .cfi_startproc
        add x0, x0, #1
        ret
        .cfi_endproc

/* The frame record by a pre-index stp, the frame pointer, x19 and x20
 * by stp, d8 by str, a call, and the restores; the last ldp moves sp
 * after its loads (post-index). */
        .type frame, %function
frame:
        .cfi_startproc
        stp x29, x30, [sp, #-48]!
        .cfi_def_cfa_offset 48
        .cfi_offset 29, -48
        .cfi_offset 30, -40
        mov x29, sp
        stp x19, x20, [sp, #16]
        .cfi_offset 19, -32
        .cfi_offset 20, -24
        str d8, [sp, #32]
        .cfi_offset 72, -16
        mov x19, x0
        fmov d8, d0
        bl leaf
        ldr d8, [sp, #32]
        .cfi_restore 72
        ldp x19, x20, [sp, #16]
        .cfi_restore 20
        .cfi_restore 19
        ldp x29, x30, [sp], #48
        .cfi_restore 30
        .cfi_restore 29
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc

/* -O0's shape: sub sp, the frame record above the locals, the CFA on
 * x29 from `add x29, sp, #16` to the restore. */
        .type locals, %function
locals:
        .cfi_startproc
        sub sp, sp, #32
        .cfi_def_cfa_offset 32
        stp x29, x30, [sp, #16]
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        add x29, sp, #16
        .cfi_def_cfa 29, 16
        str x0, [sp, #8]
        bl leaf
        ldp x29, x30, [sp, #16]
        .cfi_def_cfa 31, 32
        .cfi_restore 30
        .cfi_restore 29
        add sp, sp, #32
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc

/* A frame too large for an immediate: sp moved by a register set from
 * one (GCC: mov x12, #N; sub sp, sp, x12), given back in two adds. */
        .type bigframe, %function
bigframe:
        .cfi_startproc
        mov x12, #0x2010
        sub sp, sp, x12
        .cfi_def_cfa_offset 0x2010
        stp x29, x30, [sp]
        .cfi_offset 29, -0x2010
        .cfi_offset 30, -0x2008
        mov x29, sp
        bl leaf
        ldp x29, x30, [sp]
        .cfi_restore 30
        .cfi_restore 29
        add sp, sp, #0x2, lsl #12
        .cfi_def_cfa_offset 0x10
        add sp, sp, #0x10
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc

/* pac-ret, the A key: paciasp (hint 25) and autiasp (hint 29), each
 * followed by DW_CFA_AARCH64_negate_ra_state. */
        .type pac_a, %function
pac_a:
        .cfi_startproc
        hint 25
        .cfi_negate_ra_state
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        mov x29, sp
        bl leaf
        ldp x29, x30, [sp], #16
        .cfi_restore 30
        .cfi_restore 29
        .cfi_def_cfa_offset 0
        hint 29
        .cfi_negate_ra_state
        ret
        .cfi_endproc

/* pac-ret+b-key: the CIE's 'B', pacibsp (hint 27), and retab, which
 * authenticates as it returns (capstone 4 does not decode it). */
        .type pac_b, %function
pac_b:
        .cfi_startproc
        .cfi_b_key_frame
        hint 27
        .cfi_negate_ra_state
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        bl leaf
        ldp x29, x30, [sp], #16
        .cfi_restore 30
        .cfi_restore 29
        .cfi_def_cfa_offset 0
        .inst 0xd65f0fff        /* retab */
        .cfi_endproc

/* A tail call: the epilogue, then b. */
        .type tail, %function
tail:
        .cfi_startproc
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        mov x29, sp
        bl leaf
        ldp x29, x30, [sp], #16
        .cfi_restore 30
        .cfi_restore 29
        .cfi_def_cfa_offset 0
        b leaf
        .cfi_endproc

/* GCC's switch: the index copied before the compare, the table of byte
 * offsets (in words) from the base, br; every case is reached through
 * the table only. */
        .type table, %function
table:
        .cfi_startproc
        mov w2, w0
        cmp w0, #3
        b.hi .Ltable_default
        adrp x1, .Ltable_data
        add x1, x1, :lo12:.Ltable_data
        ldrb w1, [x1, w2, uxtw]
        adr x3, .Ltable_base
        add x1, x3, w1, sxtb #2
        br x1
.Ltable_base:
        mov w0, #10
        ret
.Ltable_1:
        mov w0, #11
        ret
.Ltable_2:
        mov w0, #12
        ret
.Ltable_3:
        mov w0, #13
        ret
.Ltable_default:
        mov w0, #0
        ret
        .cfi_endproc
        .section .rodata.table, "a"
.Ltable_data:
        .byte 0, (.Ltable_1 - .Ltable_base) / 4
        .byte (.Ltable_2 - .Ltable_base) / 4, (.Ltable_3 - .Ltable_base) / 4
        .text
        expect_end
