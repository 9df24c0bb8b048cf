/* libdwarf-val-offset-sf.S — DW_CFA_val_offset_sf r12, -2 (x -8 = 16).
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdwarf-val-offset-sf.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x15, 0x0c, 0x7e
	nop
	ret
	.cfi_endproc
