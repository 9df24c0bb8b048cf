/* libunwind-div-trap.S — DW_CFA_val_expression rbx,
 * (const8u 0x8000000000000000; lit1; neg; div): INT64_MIN / -1.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-div-trap.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x16, 0x03, 0x0c, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x31, 0x1f, 0x1b
	nop
	ret
	.cfi_endproc
