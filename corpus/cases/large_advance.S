/* large_advance.S — advances that need advance_loc1 (100 bytes),
 * advance_loc2 (300 bytes) and advance_loc4 (70000 bytes). */
    .text
    .globl big
big:                            /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .skip 100, 0x90             /* 0x1001 */
    .cfi_def_cfa_offset 24
    .skip 300, 0x90             /* 0x1065 */
    .cfi_def_cfa_offset 32
    .skip 70000, 0x90           /* 0x1191 */
    .cfi_def_cfa_offset 40
    nop                         /* 0x12301 */
    .cfi_endproc                /* end 0x12302 */
