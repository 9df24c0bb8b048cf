/* gas 2.40 `as --gsframe`: one .cfi_remember_state, after a directive at
 * the same address (.cfi_def_cfa_offset 16 right after the push). DWARF
 * gives cfa=rsp+16 after .cfi_restore_state (0x1004); SFrame gives rsp+8,
 * the row of the address before: gas remembers its last finished FRE,
 * not the current one. */
	.text
	.globl f
f:	.cfi_startproc
	push %rbp			/* 0x1000 */
	.cfi_def_cfa_offset 16
	.cfi_remember_state
	nop				/* 0x1001 */
	pop %rbp			/* 0x1002 */
	.cfi_def_cfa_offset 8
	nop				/* 0x1003 */
	.cfi_restore_state
	ret				/* 0x1004 */
	.cfi_endproc
