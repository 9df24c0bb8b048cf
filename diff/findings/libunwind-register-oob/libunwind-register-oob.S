/* libunwind-register-oob.S — DW_CFA_register rbx, 100000000.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-register-oob.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_register %rbx, 100000000
	nop
	ret
	.cfi_endproc
