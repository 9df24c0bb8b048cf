/* signal.S — a signal frame, as glibc's __restore_rt: the CIE has 'S'
 * (.cfi_signal_frame), the CFA is read from the saved context
 * (def_cfa_expression: breg7 160; deref) and every register is stored at
 * an address the expression breg7 K computes (DW_CFA_expression). A plain
 * function comes first, so the file has two CIEs. */
    .text
    .globl plain
plain:                          /* 0x1000 */
    .cfi_startproc
    nop                         /* 0x1000 */
    ret                         /* 0x1001 */
    .cfi_endproc                /* end 0x1002 */

    .globl restore_rt
restore_rt:                     /* 0x1002 */
    .cfi_startproc
    .cfi_signal_frame
    .cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06   /* cfa: breg7 160; deref */
    .cfi_escape 0x10, 0x08, 0x02, 0x77, 0x28         /* r8:  breg7 40 */
    .cfi_escape 0x10, 0x05, 0x03, 0x77, 0xe8, 0x00   /* rdi: breg7 104 */
    .cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00   /* rbp: breg7 120 */
    .cfi_escape 0x10, 0x03, 0x03, 0x77, 0x80, 0x01   /* rbx: breg7 128 */
    .cfi_escape 0x10, 0x07, 0x03, 0x77, 0xa0, 0x01   /* rsp: breg7 160 */
    .cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01   /* rip: breg7 168 */
    mov $15, %rax               /* 0x1002, 7 bytes */
    syscall                     /* 0x1009, 2 bytes */
    .cfi_endproc                /* end 0x100b */
