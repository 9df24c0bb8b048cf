/* no_cfa.S — a hand-made .eh_frame whose CIE gives no CFA rule (only
 * rip at cfa-8): the rows have no CFA rule (cfa=undef) until one is given,
 * which here never happens. gas always puts def_cfa in its CIE, so the
 * CIE and the FDE are written byte by byte. The linker trims the CIE's
 * DW_CFA_nop padding to 4-byte alignment, so the FDE lands at 0x14. */
    .text
    /* local: a PC-relative reference to it needs no dynamic relocation */
nocfa:                          /* 0x1000 */
    nop                         /* 0x1000 */
    nop                         /* 0x1001 */

    .section .eh_frame, "a", @progbits
cie:
    .long 0x14                  /* length */
    .long 0                     /* CIE id */
    .byte 1                     /* version */
    .asciz "zR"
    .byte 1                     /* code alignment factor */
    .byte 0x78                  /* data alignment factor: -8 */
    .byte 16                    /* return address column: rip */
    .byte 1, 0x1b               /* augmentation data: pcrel sdata4 */
    .byte 0x90, 0x01            /* DW_CFA_offset rip, 1*-8 */
    .byte 0, 0, 0, 0, 0
fde:
    .long 0x14                  /* length */
    .long fde + 4 - cie         /* CIE pointer */
    .long nocfa - .             /* PC begin */
    .long 2                     /* PC range */
    .byte 0                     /* augmentation data length */
    .byte 0x41                  /* DW_CFA_advance_loc 1 */
    .byte 0x83, 0x02            /* DW_CFA_offset rbx, 2*-8 */
    .byte 0, 0, 0, 0
