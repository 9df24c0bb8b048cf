/* gas 2.40 `as --gsframe`: a CFA from a register other than rsp and rbp
 * (.cfi_def_cfa %r10, 8) cannot be expressed in SFrame; gas keeps the FDE
 * and its FRE says cfa=rsp+8 at 0x1001. */
	.text
	.globl f
f:	.cfi_startproc
	nop				/* 0x1000 */
	.cfi_def_cfa %r10, 8
	nop				/* 0x1001 */
	ret				/* 0x1002 */
	.cfi_endproc
