/* stub.S — binutils ld's Cortex-A53 erratum 843419 workaround: an adrp
 * at page offset 0xff8, a load, then a load through the adrp's register.
 * ld (--fix-cortex-a53-843419, on by default in Debian's cross gcc)
 * moves the second load into a stub after .text and branches there and
 * back; the stub has no FDE. Build:
 *   aarch64-linux-gnu-gcc -Wl,--fix-cortex-a53-843419 stub.S -o stub
 * then `cfisem synth stub --limits`: f's instruction after the branch is
 * unreached (the stub returns into it) and the stub is covered by no
 * FDE (`aarch64-linux-gnu-objdump -d stub`: e843419@...). */
	.text
	.globl	f
	.type	f, %function
	.p2align 12
	.fill	1022, 4, 0xd503201f	/* nops: the adrp at page offset 0xff8 */
f:
	.cfi_startproc
	adrp	x0, data
	ldr	x1, [x2]
	ldr	x0, [x0, #:lo12:data]
	ret
	.cfi_endproc
	.size	f, .-f
	.globl	main
	.type	main, %function
main:
	.cfi_startproc
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x2, sp
	bl	f
	mov	w0, #0
	ldp	x29, x30, [sp], #16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	main, .-main
	.data
	.p2align 3
	.fill 0x300000, 1, 0
data:	.quad	42
	.section .note.GNU-stack,"",%progbits
