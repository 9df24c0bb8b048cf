/* libdw-aarch64-abi-cfa-x30.S — an AArch64 CIE that defines no CFA.
 * Build: aarch64-linux-gnu-gcc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdw-aarch64-abi-cfa-x30.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc simple
	nop
	ret
	.cfi_endproc
