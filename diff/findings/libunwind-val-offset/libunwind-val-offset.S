/* libunwind-val-offset.S — DW_CFA_val_offset r12, -32 (bytes 14 0c 04).
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-val-offset.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	nop
	.cfi_val_offset %r12, -32
	nop
	ret
	.cfi_endproc
