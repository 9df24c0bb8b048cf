/* return_column.S — a CIE whose return address column is pc (32), not
 * x30 (.cfi_return_column 32): the caller's PC is what the table says
 * for column 32 (DWARF 5 §6.4.1, return_address_register), here first
 * "the value of x30" (the register rule), then undefined (the end of the
 * stack). Also the names of the columns above x30: sp (31) given the
 * value CFA+0 (val_offset), elr_mode (33) undefined. The bug class: the
 * return address read from x30 whatever the CIE says, or column 32
 * taken for a register number out of range. gas puts the rule given
 * before the first instruction (pc=x30) in the CIE's program, so the
 * FDE's first row is the CIE's initial row with that rule. */
    .text
    .globl rc
rc:                             /* 0x1000 */
    .cfi_startproc
    .cfi_return_column 32
    .cfi_register 32, 30
    nop                         /* 0x1000 */
    .cfi_val_offset 31, 0
    .cfi_undefined 33
    nop                         /* 0x1004 */
    .cfi_undefined 32
    nop                         /* 0x1008 */
    .cfi_endproc                /* end 0x100c */
