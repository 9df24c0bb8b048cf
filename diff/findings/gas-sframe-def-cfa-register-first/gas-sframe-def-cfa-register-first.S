/* gas 2.40 `as --gsframe`: an Internal error (Segmentation fault) when
 * .cfi_def_cfa_register is the first directive of a function, before any
 * instruction (%rbp or %rsp alike). Without --gsframe it assembles. */
	.text
	.globl f
f:	.cfi_startproc
	.cfi_def_cfa_register %rbp
	nop
	.cfi_endproc
