/* llvm-dwarfdump-negate-ra-state.S — two DW_CFA_AARCH64_negate_ra_state:
 * the second brings RA_SIGN_STATE back to 0.
 * Build: aarch64-linux-gnu-gcc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so llvm-dwarfdump-negate-ra-state.S
 * Run: llvm-dwarfdump-14 --eh-frame x.so (row 0x1008). See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
