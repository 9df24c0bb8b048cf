/* negate_when_pc.S — negate_ra_state (0x2d) when negate_ra_state_with_pc
 * (0x2c) has set state 2: 0x2d toggles between states 0 and 1 only
 * (AADWARF64, "Call frame instructions"), so from state 2 it has no
 * result: malformed, at the 0x2d. Its program: advance 1 (+0x0), 0x2c
 * (+0x1), advance 1 (+0x2), 0x2d (+0x3). */
    .text
    .globl w
w:                              /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_escape 0x2c
    nop                         /* 0x1004 */
    .cfi_negate_ra_state
    nop                         /* 0x1008 */
    .cfi_endproc                /* end 0x100c */
