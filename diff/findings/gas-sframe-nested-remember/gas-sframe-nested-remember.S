/* gas 2.40 `as --gsframe`: nested .cfi_remember_state. At 0x1006, after
 * the inner .cfi_restore_state, DWARF gives cfa=rsp+24 (the state
 * remembered at 0x1004); SFrame gives rsp+16 (the outer one). */
	.text
	.globl f
f:	.cfi_startproc
	push %rbp			/* 0x1000 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	.cfi_remember_state
	push %rbx			/* 0x1001 */
	.cfi_def_cfa_offset 24
	.cfi_remember_state
	push %r12			/* 0x1002 */
	.cfi_def_cfa_offset 32
	pop %r12			/* 0x1004 */
	.cfi_restore_state
	pop %rbx			/* 0x1006 */
	.cfi_restore_state
	pop %rbp			/* 0x1007 */
	.cfi_def_cfa_offset 8
	ret				/* 0x1008 */
	.cfi_endproc
