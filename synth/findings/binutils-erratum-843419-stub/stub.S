/* stub.S — binutils ld's Cortex-A53 erratum 843419 workaround: an adrp
 * at page offset 0xff8, a load, then a load through the adrp's register.
 * ld (--fix-cortex-a53-843419, on by default in Debian's cross gcc)
 * moves the second load into a stub after .text and branches there and
 * back; the stub has no FDE. f is called by stub-main.c, which asks
 * libgcc's unwinder for the stub's FDE. Build and run:
 *   aarch64-linux-gnu-gcc -O2 -Wl,--fix-cortex-a53-843419 stub.S \
 *       stub-main.c -o stub
 *   qemu-aarch64 -L /usr/aarch64-linux-gnu ./stub
 * (`aarch64-linux-gnu-objdump -d stub`: e843419@...; `cfisem synth stub
 * --limits`: f's instruction after the branch is unreached, the stub
 * returns into it). */
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
	.data
	.p2align 3
	.fill 0x300000, 1, 0
data:	.quad	42
	.section .note.GNU-stack,"",%progbits
