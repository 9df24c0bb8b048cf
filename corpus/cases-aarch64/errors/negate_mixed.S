/* negate_mixed.S — a DW_CFA_offset rule on RA_SIGN_STATE (34) and then
 * negate_ra_state (0x2d): "must not be mixed with other DWARF Register
 * Rule Instructions on the RA_SIGN_STATE pseudo-register" (AADWARF64,
 * "Call frame instructions"). A negate of a state stored in memory has
 * no meaning: the FDE is malformed, at the negate. gas moves the
 * offset, given before the first instruction, into the CIE's program
 * (the rule forbids the mix across CIE and FDE alike), so the FDE's
 * program is: advance 1 (+0x0), negate_ra_state (+0x1). */
    .text
    .globl m
m:                              /* 0x1000 */
    .cfi_startproc
    .cfi_offset 34, -16
    nop                         /* 0x1000 */
    .cfi_negate_ra_state
    nop                         /* 0x1004 */
    .cfi_endproc                /* end 0x1008 */
