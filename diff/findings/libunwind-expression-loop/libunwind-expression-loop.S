/* libunwind-expression-loop.S — DW_CFA_def_cfa_expression
 * (lit0; dup; skip -3): the skip's target is the skip itself.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-expression-loop.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x0f, 0x05, 0x30, 0x12, 0x2f, 0xfd, 0xff
	nop
	ret
	.cfi_endproc
