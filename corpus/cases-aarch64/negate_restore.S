/* negate_restore.S — negate_ra_state (0x2d) as a toggle whose result is
 * a rule, and DW_CFA_restore of register 34. Two negates bring the state
 * back to 0, printed as an explicit lit0: the second negate sets the
 * rule val_expression(lit0), it does not remove the first one's rule.
 * A third sets lit1 again; DW_CFA_restore 34 (0xc0|34 = 0xe2, written
 * with .cfi_escape) then gives 34 the CIE's initial rule, which is none
 * (DWARF 5 §6.4.2.3), so the state is the ABI default 0 again and a
 * fourth negate starts from it: lit1. The bug class: a state kept as a
 * counter or a flag beside the row, which restore does not reset (the
 * fourth negate would give lit0). */
    .text
    .globl n
n:                              /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_negate_ra_state
    nop                         /* 0x1004 */
    .cfi_negate_ra_state
    nop                         /* 0x1008 */
    .cfi_negate_ra_state
    nop                         /* 0x100c */
    .cfi_escape 0xe2            /* DW_CFA_restore 34 */
    nop                         /* 0x1010 */
    .cfi_negate_ra_state
    nop                         /* 0x1014 */
    .cfi_endproc                /* end 0x1018 */
