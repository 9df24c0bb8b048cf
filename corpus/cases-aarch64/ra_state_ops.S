/* ra_state_ops.S — the two other vendor opcodes of AADWARF64 ("Call
 * frame instructions"), written with .cfi_escape (binutils 2.40 has no
 * directive for them). p: negate_ra_state_with_pc (0x2c) toggles between
 * 0 and 2 (DW_AARCH64_RA_SIGNED_SP_PC), rule expr(lit2) then expr(lit0);
 * from state 0, negate_ra_state (0x2d) may follow it and toggles between
 * 0 and 1. s: set_ra_state (0x2b, ULEB ra_state, SLEB factored offset)
 * sets the state whatever it was: 1, 2 (offset -1: the PAC instruction
 * one instruction back, 0x1018), 0, 2, then 1 straight from 2, which no
 * toggle can do. The code location 0x2c and 0x2b record is not a rule
 * of the row and is not printed. The bug class: an opcode in the vendor
 * space (0x1c-0x3f) skipped with a wrong length or read as another
 * vendor's (0x2d is SPARC's window_save elsewhere). */
    .text
    .globl p
p:                              /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    .cfi_escape 0x2c            /* negate_ra_state_with_pc: 2 */
    nop                         /* 0x1004 */
    .cfi_escape 0x2c            /* negate_ra_state_with_pc: 0 */
    nop                         /* 0x1008 */
    .cfi_negate_ra_state        /* 1 */
    nop                         /* 0x100c */
    .cfi_negate_ra_state        /* 0 */
    nop                         /* 0x1010 */
    .cfi_endproc                /* end 0x1014 */

    .globl s
s:                              /* 0x1014 */
    .cfi_startproc
    nop                         /* 0x1014 */
    .cfi_escape 0x2b, 0x01, 0x00    /* set_ra_state 1, 0 */
    nop                         /* 0x1018 */
    .cfi_escape 0x2b, 0x02, 0x7f    /* set_ra_state 2, -1 */
    nop                         /* 0x101c */
    .cfi_escape 0x2b, 0x00, 0x00    /* set_ra_state 0, 0 */
    nop                         /* 0x1020 */
    .cfi_escape 0x2b, 0x02, 0x00    /* set_ra_state 2, 0 */
    nop                         /* 0x1024 */
    .cfi_escape 0x2b, 0x01, 0x00    /* set_ra_state 1, 0 */
    nop                         /* 0x1028 */
    .cfi_endproc                /* end 0x102c */
