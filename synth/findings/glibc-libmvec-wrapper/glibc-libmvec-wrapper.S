/* glibc-libmvec-wrapper.S — the two shapes of glibc 2.36's libmvec
 * wrappers that take an AVX argument to two calls of the SSE version.
 *
 * wrapper_fFF (WRAPPER_IMPL_AVX_fFF, sysdeps/x86_64/fpu/svml_d_wrapper_impl.h,
 * the sincos variants with linear pointers; the AVX-512 ones alike): after
 * `cfi_def_cfa_register (%rbp)` and the realignment, each push of a saved
 * register still says `cfi_adjust_cfa_offset (8)` and `cfi_rel_offset
 * (reg, 0)`. The CFA is on rbp: the adjustment moves it 8 bytes up (the
 * return address is read from the caller's frame), and the rel_offset
 * names a slot counted from that CFA, not the push's slot after the
 * realignment (rbp's own slot for the first push).
 *
 * vvv (_ZGVcN4vvv_sincos, _ZGVcN8vvv_sincosf): an FDE with the CIE's row
 * only, over push %rbp; mov %rsp,%rbp; and $-32,%rsp; sub; two calls.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so FILE
 *   cfisem synth x.so
 *
 * reports, for wrapper_fFF, cfa_height (il=rbp+24, code=rbp+16) from the
 * first push to the restore, and save_slot for r13 and r14 while they are
 * still in place; for vvv, cfa_height from the push to the ret and
 * save_slot for rbp. */
        .text
        .globl wrapper_fFF
wrapper_fFF:
        .cfi_startproc
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        andq $-32, %rsp
        pushq %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        pushq %r14
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r14, 0
        subq $48, %rsp
        movq %rsi, %r14
        movq %rdi, %r13
        call callee
        call callee
        addq $48, %rsp
        popq %r14
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r14
        popq %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        movq %rbp, %rsp
        .cfi_def_cfa_register %rsp
        popq %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        ret
        .cfi_endproc

        .globl vvv
vvv:
        .cfi_startproc
        pushq %rbp
        movq %rsp, %rbp
        andq $-32, %rsp
        subq $160, %rsp
        call callee
        call callee
        movq %rbp, %rsp
        popq %rbp
        ret
        .cfi_endproc

callee:
        .cfi_startproc
        ret
        .cfi_endproc
