/* sf_ops.S — the opcodes gas has no directive for, through .cfi_escape:
 * def_cfa_sf (0x12), def_cfa_offset_sf (0x13), offset_extended_sf (0x11),
 * val_offset_sf (0x15), GNU_negative_offset_extended (0x2f: the offset is
 * negated after factoring), offset_extended (0x05), restore_extended
 * (0x06) of a CIE register (rip) and of another (r14), and a nop. */
    .text
    .globl sf
sf:                             /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_escape 0x12, 0x06, 0x7e     /* def_cfa_sf rbp, -2*-8 = 16 */
    nop                         /* 0x1001 */
    .cfi_escape 0x13, 0x7c           /* def_cfa_offset_sf -4*-8 = 32 */
    .cfi_escape 0x11, 0x03, 0x03     /* offset_extended_sf rbx, 3*-8 */
    nop                         /* 0x1002 */
    .cfi_escape 0x15, 0x0c, 0x7e     /* val_offset_sf r12, -2*-8 */
    .cfi_escape 0x2f, 0x0d, 0x02     /* GNU_negative_offset_extended r13, -(2*-8) */
    .cfi_escape 0x00                 /* nop */
    nop                         /* 0x1003 */
    .cfi_escape 0x05, 0x0e, 0x04     /* offset_extended r14, 4*-8 */
    .cfi_escape 0x05, 0x10, 0x03     /* offset_extended rip, 3*-8 */
    nop                         /* 0x1004 */
    .cfi_escape 0x06, 0x10           /* restore_extended rip */
    .cfi_escape 0x06, 0x0e           /* restore_extended r14 */
    nop                         /* 0x1005 */
    .cfi_endproc                /* end 0x1006 */
