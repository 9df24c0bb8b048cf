/* gas 2.40 `as --gsframe`: any .cfi_escape makes gas leave the FDE out
 * of .sframe, silently (no warning), even DW_CFA_GNU_args_size (0x2e),
 * which changes no rule SFrame carries. When every FDE of a link is left
 * out, ld writes an empty .sframe section. */
	.text
	.globl f
f:	.cfi_startproc
	push %rbx			/* 0x1000 */
	.cfi_def_cfa_offset 16
	.cfi_escape 0x2e, 0x08
	nop				/* 0x1001 */
	pop %rbx			/* 0x1002 */
	.cfi_def_cfa_offset 8
	ret				/* 0x1003 */
	.cfi_endproc
