/* high_regs.S — registers above rip: xmm0 (17, DW_CFA_offset), xmm16 (67)
 * and k0 (118) (DW_CFA_offset_extended: gas uses it above 63), a register
 * rule between two of them, restore_extended of one the CIE does not
 * define, and registers with no name (57, 126). */
    .text
    .globl vec
vec:                            /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_offset 67, -16
    .cfi_offset 118, -24
    .cfi_offset 17, -32
    nop                         /* 0x1001 */
    .cfi_register 125, 67
    .cfi_restore 67
    nop                         /* 0x1002 */
    .cfi_undefined 126
    .cfi_same_value 57
    nop                         /* 0x1003 */
    .cfi_endproc                /* end 0x1004 */
