/* llvm-dwarfdump-negate-ra-state-with-pc.S — two
 * DW_CFA_AARCH64_negate_ra_state_with_pc (0x2c): the second toggles the
 * state back.
 * Build: aarch64-linux-gnu-gcc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so llvm-dwarfdump-negate-ra-state-with-pc.S
 * Run: llvm-dwarfdump (a version that knows 0x2c) --eh-frame x.so (row
 * 0x1008); llvm-dwarfdump-14 stops at the opcode. See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	nop
	.cfi_escape 0x2c
	nop
	.cfi_escape 0x2c
	ret
	.cfi_endproc
