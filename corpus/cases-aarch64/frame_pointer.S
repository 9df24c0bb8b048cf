/* frame_pointer.S — a frame-pointer CFA and every callee-saved register
 * of AAPCS64: the frame record is pushed, x29 set to sp and the CFA
 * moved onto it (.cfi_def_cfa x29, 16), then x19-x28 and d8-d15 (the low
 * halves of v8-v15, DWARF 72-79: AADWARF64 "DWARF register names",
 * Note 5) saved below the record and described with DW_CFA_offset and,
 * above 63, DW_CFA_offset_extended. Rows list registers in increasing
 * DWARF number, x19..x30 before v8..v15, and name 72-79 v8-v15 (the
 * DWARF names are the V registers', not d8-d15). The epilogue reloads
 * them, restores their rules (back to none: the CIE gives none), moves
 * the CFA back to sp and pops the record. The bug class: register
 * numbers above 63 (offset_extended) or the V-register range dropped or
 * mapped to another register file. */
    .text
    .globl fp
fp:                             /* 0x1000 */
    .cfi_startproc
    stp x29, x30, [sp, -16]!    /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset 29, -16
    .cfi_offset 30, -8
    mov x29, sp                 /* 0x1004 */
    .cfi_def_cfa x29, 16
    sub sp, sp, 144             /* 0x1008 */
    stp x19, x20, [x29, -16]    /* 0x100c */
    stp x21, x22, [x29, -32]    /* 0x1010 */
    stp x23, x24, [x29, -48]    /* 0x1014 */
    stp x25, x26, [x29, -64]    /* 0x1018 */
    stp x27, x28, [x29, -80]    /* 0x101c */
    .cfi_offset 19, -32
    .cfi_offset 20, -24
    .cfi_offset 21, -48
    .cfi_offset 22, -40
    .cfi_offset 23, -64
    .cfi_offset 24, -56
    .cfi_offset 25, -80
    .cfi_offset 26, -72
    .cfi_offset 27, -96
    .cfi_offset 28, -88
    stp d8, d9, [x29, -96]      /* 0x1020 */
    stp d10, d11, [x29, -112]   /* 0x1024 */
    stp d12, d13, [x29, -128]   /* 0x1028 */
    stp d14, d15, [x29, -144]   /* 0x102c */
    .cfi_offset 72, -112        /* v8 (d8) */
    .cfi_offset 73, -104
    .cfi_offset 74, -128
    .cfi_offset 75, -120
    .cfi_offset 76, -144
    .cfi_offset 77, -136
    .cfi_offset 78, -160
    .cfi_offset 79, -152        /* v15 (d15) */
    nop                         /* 0x1030 */
    ldp d14, d15, [x29, -144]   /* 0x1034 */
    ldp d12, d13, [x29, -128]   /* 0x1038 */
    ldp d10, d11, [x29, -112]   /* 0x103c */
    ldp d8, d9, [x29, -96]      /* 0x1040 */
    ldp x27, x28, [x29, -80]    /* 0x1044 */
    ldp x25, x26, [x29, -64]    /* 0x1048 */
    ldp x23, x24, [x29, -48]    /* 0x104c */
    ldp x21, x22, [x29, -32]    /* 0x1050 */
    ldp x19, x20, [x29, -16]    /* 0x1054 */
    .cfi_restore 72
    .cfi_restore 73
    .cfi_restore 74
    .cfi_restore 75
    .cfi_restore 76
    .cfi_restore 77
    .cfi_restore 78
    .cfi_restore 79
    .cfi_restore 19
    .cfi_restore 20
    .cfi_restore 21
    .cfi_restore 22
    .cfi_restore 23
    .cfi_restore 24
    .cfi_restore 25
    .cfi_restore 26
    .cfi_restore 27
    .cfi_restore 28
    mov sp, x29                 /* 0x1058 */
    .cfi_def_cfa sp, 16
    ldp x29, x30, [sp], 16      /* 0x105c */
    .cfi_restore 30
    .cfi_restore 29
    .cfi_def_cfa_offset 0
    ret                         /* 0x1060 */
    .cfi_endproc                /* end 0x1064 */
