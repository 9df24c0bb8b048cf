/* libdw-abi-rip-same-value.S — a CIE and FDE with no rule for rip (16),
 * the return address column.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdw-abi-rip-same-value.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc simple
	.cfi_def_cfa %rsp, 8
	nop
	ret
	.cfi_endproc
