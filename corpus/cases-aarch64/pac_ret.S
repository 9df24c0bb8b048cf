/* pac_ret.S — pac-ret as GCC emits it (-mbranch-protection=pac-ret, the
 * A key): paciasp (hint 25) then DW_CFA_AARCH64_negate_ra_state (0x2d),
 * the frame record and x19 saved, the epilogue's restores, autiasp
 * (hint 29) then a second negate before ret. RA_SIGN_STATE (DWARF 34,
 * AADWARF64 Note 8) has no rule until the first negate (the ABI default,
 * 0, not printed); each negate toggles it between 0 and 1 and leaves
 * val_expression(DW_OP_lit<state>), so the ret has an explicit lit0 and
 * not "no rule". The bug class: an unwinder that misses a negate, or
 * sees one too many, authenticates x30 when it is not signed (or not when
 * it is). The second FDE is GCC 12's spelling: .cfi_window_save is the
 * same opcode 0x2d, and it means negate_ra_state on AArch64, not SPARC's
 * register window save. */
    .text
    .globl f
f:                              /* 0x1000 */
    .cfi_startproc
    hint 25                     /* 0x1000: paciasp */
    .cfi_negate_ra_state
    stp x29, x30, [sp, -32]!    /* 0x1004 */
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    mov x29, sp                 /* 0x1008 */
    str x19, [sp, 16]           /* 0x100c */
    .cfi_offset 19, -16
    nop                         /* 0x1010 */
    ldr x19, [sp, 16]           /* 0x1014 */
    ldp x29, x30, [sp], 32      /* 0x1018 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_restore 19
    .cfi_def_cfa_offset 0
    hint 29                     /* 0x101c: autiasp */
    .cfi_negate_ra_state
    ret                         /* 0x1020 */
    .cfi_endproc                /* end 0x1024 */

    .globl g
g:                              /* 0x1024 */
    .cfi_startproc
    hint 25                     /* 0x1024: paciasp */
    .cfi_window_save
    stp x29, x30, [sp, -16]!    /* 0x1028 */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    ldp x29, x30, [sp], 16      /* 0x102c */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    hint 29                     /* 0x1030: autiasp */
    .cfi_window_save
    ret                         /* 0x1034 */
    .cfi_endproc                /* end 0x1038 */
