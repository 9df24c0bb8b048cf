/* set_ra_state_reserved.S — set_ra_state (0x2b) with ra_state 3: states
 * 3-15 are "reserved for future use" (AADWARF64 Note 8), so the FDE is
 * unsupported, not a state the unwinder may guess. Its program: advance
 * 1 (+0x0), set_ra_state 3, 0 (+0x1). */
    .text
    .globl r
r:                              /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_escape 0x2b, 0x03, 0x00
    nop                         /* 0x1004 */
    .cfi_endproc                /* end 0x1008 */
