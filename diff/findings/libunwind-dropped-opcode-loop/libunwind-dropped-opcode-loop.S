# libunwind 1.6.2: run_cfi_program has no case for DW_CFA_val_offset and
# no default, so it drops the opcode byte and runs its operands as
# instructions. Every other reader sees
#     val_offset r22, 12; advance_loc2 0xfd2f; restore r63
# (cfisem: location past the FDE's end), libunwind sees
#     val_expression r12, {skip -3}
# a skip onto itself, and dwarf/Gexpr.c has no step limit: unw_step at
# 0x1001 never returns. Any opcode it has no case for (0x28 in the robust
# campaign's mutant) hides an expression the same way.
#   cfisem unwind x.so --pc 0x1001 --regs rsp=0x7ffe1000,r12=1 --engine libunwind
	.text
	.globl	f
f:
	.cfi_startproc
	nop
	.cfi_escape 0x14,0x16,0x0c,0x03,0x2f,0xfd,0xff
	nop
	ret
	.cfi_endproc
