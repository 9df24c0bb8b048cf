# A CIE whose return address column is rbx (3), not rip (16): the caller's
# PC is what the table says for rbx (DWARF 5 6.4.1, return_address_register;
# cfi.h step 6), whatever rip's own rule says.
	.text
	.globl	f
f:
	.cfi_startproc
	.cfi_return_column 3
	nop
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	nop
	.cfi_register %rbx, %r12
	nop
	.cfi_undefined %rbx
	nop
	.cfi_endproc
