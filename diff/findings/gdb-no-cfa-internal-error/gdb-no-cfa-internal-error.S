/* gdb-no-cfa-internal-error.S — f's CIE gives no CFA rule
 * (.cfi_startproc simple, no .cfi_def_cfa): gdb 13.1 stops with an
 * internal error ("dwarf2/frame.c:994: Unknown CFA rule") instead of
 * reporting bad CFI when it unwinds f.
 * Build: cc -static -nostdlib -o x gdb-no-cfa-internal-error.S
 * Run: gdb -nx -batch -ex run -ex bt ./x   (f stops at ud2: SIGILL)
 * See README.md. */
	.text
	.globl _start
_start:
	call f
	hlt
	.globl f
f:
	.cfi_startproc simple
	.cfi_offset %rip, -8
	ud2
	ret
	.cfi_endproc
