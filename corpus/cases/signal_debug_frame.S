# A signal frame whose CFI is in .debug_frame only: gas writes the CIE's
# augmentation as "S" alone (no 'z': there is no augmentation data in
# .debug_frame). libdwarf 20210528 cannot read such a CIE; the loader reads
# it with its own parser.
	.cfi_sections .debug_frame
	.text
	.globl	handler_trampoline
handler_trampoline:
	.cfi_startproc
	.cfi_signal_frame
	nop
	.cfi_def_cfa_offset 16
	nop
	nop
	.cfi_endproc
