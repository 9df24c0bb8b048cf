/* llvm-dwarfdump-restore-state-cfa.S — remember_state, a new CFA, then
 * restore_state: the CFA rule must come back with the registers.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so llvm-dwarfdump-restore-state-cfa.S
 * Run: llvm-dwarfdump-14 --eh-frame x.so (row 0x1002). See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_remember_state
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	pop %rbx
	.cfi_restore_state
	ret
	.cfi_endproc
