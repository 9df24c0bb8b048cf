/* shapes.S — rule sets that differ only in their offsets, which the
 * compiled engine's AArch64 eh_elfs share one function for (one per
 * shape, the offsets read from data: compile/internal.h): three frames
 * of the same shape (x19, x20, x29, x30 saved) at other CFA offsets,
 * one reached through sp and one through x29 (one shape, two CFA
 * registers), one with a val_offset where another has an offset, and
 * two whose x19 lies more than 2^31 bytes below the CFA (an offset that
 * does not fit the data's int32_t: a constant of the shape), equal but
 * for x20's offset. The bug class: a rule set given another's offsets
 * (the parameters counted in another order than the code reads them),
 * or two shapes merged that differ in a constant. */
    .text
    .globl small
small:                          /* 0x1000 */
    .cfi_startproc
    stp x29, x30, [sp, -32]!    /* 0x1000 */
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    stp x19, x20, [sp, 16]      /* 0x1004 */
    .cfi_offset 19, -16
    .cfi_offset 20, -8
    nop                         /* 0x1008 */
    ldp x19, x20, [sp, 16]      /* 0x100c */
    .cfi_restore 20
    .cfi_restore 19
    ldp x29, x30, [sp], 32      /* 0x1010 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    ret                         /* 0x1014 */
    .cfi_endproc

    .globl large
large:                          /* 0x1018 */
    .cfi_startproc
    stp x29, x30, [sp, -112]!   /* 0x1018 */
    .cfi_def_cfa_offset 112
    .cfi_offset 29, -112
    .cfi_offset 30, -104
    mov x29, sp                 /* 0x101c */
    .cfi_def_cfa_register 29
    stp x19, x20, [sp, 96]      /* 0x1020 */
    .cfi_offset 19, -16
    .cfi_offset 20, -8
    nop                         /* 0x1024 */
    .cfi_val_offset 20, -40
    nop                         /* 0x1028 */
    .cfi_offset 20, -8
    ldp x19, x20, [sp, 96]      /* 0x102c */
    .cfi_restore 20
    .cfi_restore 19
    ldp x29, x30, [sp], 112     /* 0x1030 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa 31, 0
    ret                         /* 0x1034 */
    .cfi_endproc

    .globl far
far:                            /* 0x1038 */
    .cfi_startproc
    stp x29, x30, [sp, -48]!    /* 0x1038 */
    .cfi_def_cfa_offset 48
    .cfi_offset 29, -48
    .cfi_offset 30, -40
    nop                         /* 0x103c */
    .cfi_offset 19, -0x100000010
    .cfi_offset 20, -8
    nop                         /* 0x1040 */
    .cfi_offset 20, -24
    nop                         /* 0x1044 */
    .cfi_restore 20
    .cfi_restore 19
    ldp x29, x30, [sp], 48      /* 0x1048 */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    ret                         /* 0x104c */
    .cfi_endproc
