/* libunwind-no-cfa-rule-null-read.S — a CIE that defines no CFA rule
 * (`.cfi_startproc simple`), rip at CFA-8: the row at f has no CFA.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libunwind-no-cfa-rule-null-read.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc simple
	.cfi_offset %rip, -8
	nop
	ret
	.cfi_endproc
