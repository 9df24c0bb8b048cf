/* libdwarf-negative-offset-extended.S — DW_CFA_GNU_negative_offset_extended r13, 2.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdwarf-negative-offset-extended.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x2f, 0x0d, 0x02
	nop
	ret
	.cfi_endproc
