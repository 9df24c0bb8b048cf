/* gas 2.40 `as --gsframe`: the return address saved elsewhere than
 * CFA-8 (.cfi_offset %rip, -16). SFrame's x86-64 RA offset is fixed at
 * CFA-8, so the FDE cannot be expressed; gas keeps it and its FRE says
 * rip=[cfa-8] at 0x1001, where DWARF says rip=[cfa-16]. */
	.text
	.globl f
f:	.cfi_startproc
	push %rbx			/* 0x1000 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rip, -16
	nop				/* 0x1001 */
	pop %rbx			/* 0x1002 */
	.cfi_def_cfa_offset 8
	.cfi_offset %rip, -8
	ret				/* 0x1003 */
	.cfi_endproc
