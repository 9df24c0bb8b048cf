/* libdw-abi-rax-rbx.S — a leaf function: no rule for rax nor rbx.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdw-abi-rax-rbx.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
