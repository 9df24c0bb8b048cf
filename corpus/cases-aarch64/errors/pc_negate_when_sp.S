/* pc_negate_when_sp.S — negate_ra_state_with_pc (0x2c) when
 * negate_ra_state (0x2d) has set state 1: 0x2c toggles between states 0
 * and 2 only (AADWARF64, "Call frame instructions"), so from state 1 it
 * has no result: malformed, at the 0x2c. Its program: advance 1 (+0x0),
 * 0x2d (+0x1), advance 1 (+0x2), 0x2c (+0x3). */
    .text
    .globl v
v:                              /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_negate_ra_state
    nop                         /* 0x1004 */
    .cfi_escape 0x2c
    nop                         /* 0x1008 */
    .cfi_endproc                /* end 0x100c */
