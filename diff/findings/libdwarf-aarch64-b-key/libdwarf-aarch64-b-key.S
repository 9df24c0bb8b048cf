/* libdwarf-aarch64-b-key.S — pac-ret with the B key: .cfi_b_key_frame
 * makes the CIE's augmentation "zRB" (aadwarf64, "Common information
 * entries").
 * Build: aarch64-linux-gnu-gcc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdwarf-aarch64-b-key.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_b_key_frame
	hint 27
	.cfi_negate_ra_state
	stp x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint 31
	.cfi_negate_ra_state
	ret
	.cfi_endproc
