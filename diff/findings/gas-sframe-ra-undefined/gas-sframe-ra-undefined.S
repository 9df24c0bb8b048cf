/* gas 2.40 `as --gsframe`: .cfi_undefined %rip (the outermost frame,
 * DWARF 5 6.4.4) is dropped: SFrame says rip=[cfa-8] at 0x1001, DWARF
 * says the return address is undefined (the end of the stack). */
	.text
	.globl f
f:	.cfi_startproc
	nop				/* 0x1000 */
	.cfi_undefined %rip
	nop				/* 0x1001 */
	ret				/* 0x1002 */
	.cfi_endproc
