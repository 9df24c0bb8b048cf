/* remember.S — nested remember_state / restore_state. restore_state brings
 * back the whole remembered row, the CFA rule included, but not the
 * location: the row it restores starts where the restore_state is. The
 * last pair is GCC's epilogue pattern (remember before the epilogue,
 * restore after the ret for the code that follows). */
    .text
    .globl g
g:                              /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp              /* 0x1001, 3 bytes */
    .cfi_def_cfa_register %rbp
    .cfi_remember_state         /* S1: cfa=rbp+16, rbp, rip */
    push %rbx                   /* 0x1004 */
    .cfi_offset %rbx, -24
    .cfi_remember_state         /* S2: S1 + rbx */
    nop                         /* 0x1005 */
    .cfi_def_cfa %rsp, 32
    .cfi_undefined %r12
    nop                         /* 0x1006 */
    .cfi_restore_state          /* back to S2: cfa=rbp+16, no r12 */
    nop                         /* 0x1007 */
    pop %rbx                    /* 0x1008 */
    .cfi_restore_state          /* back to S1: no rbx */
    .cfi_remember_state
    leave                       /* 0x1009 */
    .cfi_def_cfa %rsp, 8
    .cfi_restore %rbp
    ret                         /* 0x100a */
    .cfi_restore_state          /* S1 again, at 0x100b */
    nop                         /* 0x100b */
    .cfi_endproc                /* end 0x100c */
