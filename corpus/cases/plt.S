/* plt.S — a PLT: the first 16 bytes push and jump (CFA rsp+16, rsp+24),
 * then the CFA expression every PLT uses:
 *   DW_CFA_def_cfa_expression: breg7 8; breg16 0; lit15; and; lit11; ge;
 *   lit3; shl; plus
 * (rsp+8, plus 8 more when rip&15 >= 11: past the push of an entry). */
    .text
    .globl plt
plt:                            /* 0x1000 */
    .cfi_startproc
    .cfi_def_cfa_offset 16
    .byte 0xff, 0x35, 0, 0, 0, 0     /* 0x1000: pushq 0(%rip) */
    .cfi_def_cfa_offset 24
    .byte 0xff, 0x25, 0, 0, 0, 0     /* 0x1006: jmpq *0(%rip) */
    .byte 0x0f, 0x1f, 0x40, 0x00     /* 0x100c: nopl 0(%rax) */
    .cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
    .skip 32, 0x90                   /* 0x1010: two entries */
    .cfi_endproc                     /* end 0x1030 */
