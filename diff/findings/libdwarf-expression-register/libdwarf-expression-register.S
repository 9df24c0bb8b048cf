/* libdwarf-expression-register.S — DW_CFA_expression on register 2^32+1
 * (ULEB 81 80 80 80 10), expression DW_OP_nop.
 * Build: cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so libdwarf-expression-register.S
 * See README.md. */
	.text
	.globl f
f:
	.cfi_startproc
	.cfi_escape 0x10, 0x81, 0x80, 0x80, 0x80, 0x10, 1, 0x96
	nop
	ret
	.cfi_endproc
