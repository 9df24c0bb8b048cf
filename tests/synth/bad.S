/* bad.S — functions whose CFI is wrong on purpose, each wrong range
 * listed with `expect`: synth must report exactly these. */
#include "expect.inc"
        .text
        .globl _start
_start:
        .cfi_startproc
        .cfi_undefined rip
        hlt
.Lstart_end:
        .cfi_endproc
        expect _start, .Lstart_end, "not_analysable:outermost"

/* The CFA offset after the push is 24 instead of 16. */
        .p2align 4
height:
        .cfi_startproc
        push %rbx
.Lheight_bad:
        .cfi_def_cfa_offset 24
        .cfi_offset rbx, -16
        xor %ebx, %ebx
        pop %rbx
.Lheight_good:
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc
        expect .Lheight_bad, .Lheight_good, "cfa_height"

/* rbx is said to be at CFA-16 (rbp's slot); the push put it at CFA-24. */
        .p2align 4
slot:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        push %rbx
.Lslot_bad:
        .cfi_def_cfa_offset 24
        .cfi_offset rbx, -16
        xor %ebx, %ebx
        pop %rbx
.Lslot_good:
        .cfi_def_cfa_offset 16
        .cfi_restore rbx
        pop %rbp
        .cfi_def_cfa_offset 8
        .cfi_restore rbp
        ret
        .cfi_endproc
        expect .Lslot_bad, .Lslot_good, "save_slot", 3

/* rbx's rule is dropped before the pop that restores it. */
        .p2align 4
early:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov $5, %ebx
.Learly_bad:
        .cfi_restore rbx
        nop
        pop %rbx
.Learly_good:
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        expect .Learly_bad, .Learly_good, "restored_early", 3

/* rbx's rule outlives the pop, and the slot is then overwritten. */
        .p2align 4
late:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov $5, %ebx
        pop %rbx
        .cfi_def_cfa_offset 8
        push $0
.Llate_bad:
        .cfi_def_cfa_offset 16
        pop %rax
        .cfi_def_cfa_offset 8
        ret
.Llate_end:
        .cfi_endproc
        expect .Llate_bad, .Llate_end, "restored_late", 3

/* No CFI for the pushes at all (glibc's mpn functions, see
 * synth/findings/). */
        .p2align 4
missing:
        .cfi_startproc
        push %rbx
.Lmissing_bad:
        xor %ebx, %ebx
.Lmissing_clobbered:
        pop %rbx
.Lmissing_good:
        ret
        .cfi_endproc
        expect .Lmissing_bad, .Lmissing_good, "cfa_height"
        expect .Lmissing_clobbered, .Lmissing_good, "save_slot", 3

/* The return address is said to be at CFA-16. */
        .p2align 4
retaddr:
        .cfi_startproc
        nop
.Lretaddr_bad:
        .cfi_offset rip, -16
        nop
        ret
.Lretaddr_end:
        .cfi_endproc
        expect .Lretaddr_bad, .Lretaddr_end, "save_slot", 16

/* A frame-pointer CFA whose offset is wrong after mov %rsp, %rbp. */
        .p2align 4
fpoff:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        mov %rsp, %rbp
.Lfpoff_bad:
        .cfi_def_cfa rbp, 24
        nop
        pop %rbp
.Lfpoff_good:
        .cfi_def_cfa rsp, 8
        .cfi_restore rbp
        ret
        .cfi_endproc
        expect .Lfpoff_bad, .Lfpoff_good, "cfa_height"

/* The CFA on the register rsp was copied into, with a wrong offset. */
        .p2align 4
auxoff:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset rbx, -16
        mov %rsp, %rbx
.Lauxoff_bad:
        .cfi_def_cfa rbx, 24
        and $-64, %rsp
        mov %rbx, %rsp
.Lauxoff_good:
        .cfi_def_cfa rsp, 16
        pop %rbx
        .cfi_def_cfa_offset 8
        .cfi_restore rbx
        ret
        .cfi_endproc
        expect .Lauxoff_bad, .Lauxoff_good, "cfa_height"

/* Code with no FDE between two functions that have one. */
        .p2align 4
nofde:
        push %rbx
        pop %rbx
        ret
.Lnofde_end:
        .p2align 4
after:
        .cfi_startproc
        ret
        .cfi_endproc
        expect nofde, .Lnofde_end, "no_fde"

        expect_end
