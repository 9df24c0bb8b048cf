/* a64_bad.S — AArch64 functions whose CFI is wrong on purpose, each
 * wrong range listed with `expect`: synth must report exactly these. */
#include "expect.inc"
        .text
        .globl _start
        .type leaf, %function
_start:
leaf:
        .cfi_startproc
        ret
        .cfi_endproc

/* The CFA offset after sub sp, sp, #16 is 32 instead of 16. */
        .type height, %function
height:
        .cfi_startproc
        sub sp, sp, #16
.Lheight_bad:
        .cfi_def_cfa_offset 32
        add sp, sp, #16
.Lheight_good:
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        expect .Lheight_bad, .Lheight_good, "cfa_height"

/* x19 is said to be at CFA-8 (x20's slot); the stp put it at CFA-16. */
        .type slot, %function
slot:
        .cfi_startproc
        stp x19, x20, [sp, #-16]!
.Lslot_bad:
        .cfi_def_cfa_offset 16
        .cfi_offset 19, -8
        .cfi_offset 20, -8
        mov x19, #1
        ldp x19, x20, [sp], #16
.Lslot_good:
        .cfi_restore 19
        .cfi_restore 20
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        expect .Lslot_bad, .Lslot_good, "save_slot", 19

/* x30's rule is dropped before the ldp that restores it: after the
 * call, x30 holds leaf's return address. */
        .type early, %function
early:
        .cfi_startproc
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        bl leaf
.Learly_bad:
        .cfi_restore 30
        ldp x29, x30, [sp], #16
.Learly_good:
        .cfi_restore 29
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        expect .Learly_bad, .Learly_good, "restored_early", 30

/* paciasp with no negate_ra_state: the CFI says x30 is not signed while
 * it is, up to the autiasp. */
        .type nosign, %function
nosign:
        .cfi_startproc
        hint 25
.Lnosign_bad:
        stp x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset 29, -16
        .cfi_offset 30, -8
        ldp x29, x30, [sp], #16
        .cfi_restore 30
        .cfi_restore 29
        .cfi_def_cfa_offset 0
        hint 29
.Lnosign_good:
        ret
        .cfi_endproc
        expect .Lnosign_bad, .Lnosign_good, "ra_sign_state", 34

/* pacibsp under a CIE without 'B': an unwinder authenticates x30 with
 * the A key. */
        .type wrongkey, %function
wrongkey:
        .cfi_startproc
        hint 27
        .cfi_negate_ra_state
.Lwrongkey_bad:
        hint 31
        .cfi_negate_ra_state
.Lwrongkey_good:
        ret
        .cfi_endproc
        expect .Lwrongkey_bad, .Lwrongkey_good, "ra_sign_state", 34

/* The negate after autiasp comes one instruction late. */
        .type late, %function
late:
        .cfi_startproc
        hint 25
        .cfi_negate_ra_state
        hint 29
.Llate_bad:
        nop
        .cfi_negate_ra_state
.Llate_good:
        ret
        .cfi_endproc
        expect .Llate_bad, .Llate_good, "ra_sign_state", 34
        expect_end
