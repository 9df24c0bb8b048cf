/* libunwind-deref-size.S — DW_CFA_val_expression rbx, (breg7 16; deref_size 5):
 * the caller's rbx is the 5 low bytes of the 8 at rsp+16.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-deref-size.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x16, 0x03, 0x04, 0x77, 0x10, 0x94, 0x05
	nop
	ret
	.cfi_endproc
