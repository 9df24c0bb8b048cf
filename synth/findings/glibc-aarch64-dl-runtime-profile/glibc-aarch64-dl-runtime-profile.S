/* glibc-aarch64-dl-runtime-profile.S: the frame of glibc's
 * _dl_runtime_profile (sysdeps/aarch64/dl-trampoline.S), with its macros
 * as glibc defines them. SF_SIZE is `OFFSET_RG + DL_SIZEOF_RG` without
 * parentheses, so `cfi_adjust_cfa_offset (- SF_SIZE - 16)` expands to
 * -16 + 8 + 16 + 8 + 208 + 240 - 16 = +448: the CFA goes up by 448
 * (def_cfa_offset 944) where the code gives back 512 (cfa=sp-16).
 * Build with -DFIXED for the parenthesised macro. Sizes are glibc 2.36's
 * (dl-link.sym: DL_SIZEOF_RV 208, DL_SIZEOF_RG 240).
 *   aarch64-linux-gnu-gcc -c glibc-aarch64-dl-runtime-profile.S -o x.o
 *   aarch64-linux-gnu-readelf --debug-dump=frames x.o */
#define DL_SIZEOF_RV		208
#define DL_SIZEOF_RG		240
#define OFFSET_T1		16
#define OFFSET_SAVED_CALL_X0	OFFSET_T1 + 8
#define OFFSET_FS		OFFSET_SAVED_CALL_X0 + 16
#define OFFSET_RV		OFFSET_FS + 8
#define OFFSET_RG		OFFSET_RV + DL_SIZEOF_RV
#ifdef FIXED
# define SF_SIZE		(OFFSET_RG + DL_SIZEOF_RG)
#else
# define SF_SIZE		OFFSET_RG + DL_SIZEOF_RG
#endif

	.text
	.globl	profile
	.type	profile, %function
profile:
	.cfi_startproc
	/* entered from PLT0, which pushed 16 bytes (x16, x30) */
	sub	sp, sp, #SF_SIZE
	.cfi_adjust_cfa_offset SF_SIZE
	stp	x29, x30, [sp, #0]
	mov	x29, sp
	.cfi_def_cfa_register x29
	.cfi_rel_offset x29, 0
	.cfi_rel_offset x30, 8
	.cfi_def_cfa_register sp
	ldp	x29, x30, [x29, #0]
	.cfi_restore x29
	.cfi_restore x30
	add	sp, sp, SF_SIZE + 16
	.cfi_adjust_cfa_offset - SF_SIZE - 16
	br	x16
	.cfi_endproc
	.size	profile, .-profile
	.section .note.GNU-stack,"",%progbits
