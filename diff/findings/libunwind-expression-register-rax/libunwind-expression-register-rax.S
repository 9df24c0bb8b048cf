/* libunwind-expression-register-rax.S — DW_CFA_val_expression rbx,
 * (DW_OP_breg26 0): the caller's rbx is the value of DWARF register 26
 * (xmm9 on x86-64), which libunwind does not hold.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-expression-register-rax.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x16, 0x03, 0x02, 0x8a, 0x00
	nop
	ret
	.cfi_endproc
