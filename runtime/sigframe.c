/* SPDX-License-Identifier: MIT */
/* sigframe.c — AArch64 Linux signal frames.
 *
 * A signal handler returns to the sigreturn trampoline, `mov x8, #139;
 * svc #0` (rt_sigreturn): the vDSO's __kernel_rt_sigreturn, or the copy
 * qemu-user writes for a guest (qemu 7 has no vDSO). Its frame is the
 * kernel's struct rt_sigframe, at the stack pointer the handler was
 * entered with (its CFA, the trampoline frame's stack pointer): a
 * siginfo_t, then the ucontext_t, whose sigcontext holds x0-x30, sp and
 * pc of the interrupted frame. The vDSO's CFI for the trampoline gives
 * x29 and x30 only, from the frame record the kernel pushes (the
 * interrupted x29 and x30, not its PC: the interrupted function's frame
 * would be skipped), and qemu's copy has none; so the trampoline is
 * recognised by its two instructions, as libgcc's fallback for AArch64
 * Linux (MD_FALLBACK_FRAME_STATE_FOR) and debuggers do, and every
 * register is read from the sigcontext. The interrupted PC is exact:
 * the frame is a signal frame. */
#define _GNU_SOURCE
#include "internal.h"

#if defined(__aarch64__)
#include <signal.h>
#include <stddef.h>
#include <ucontext.h>

enum {
    MOV_X8_139 = 0xd2801168, /* mov x8, #139 (__NR_rt_sigreturn) */
    SVC_0 = 0xd4000001,      /* svc #0 */
};

/* The 8 bytes at addr through the walk's reader. */
static bool read8(struct rt_walk *w, uint64_t addr, uint64_t *value)
{
    return w->env.read_memory(w->env.data, addr, 8, value) == 0;
}

bool rt_sigreturn_frame(struct rt_walk *w, const struct eh_elf_regs *callee,
                        struct eh_elf_frame *frame)
{
    eh_elf_mask_t needed = RT_BIT(RT_PC) | RT_BIT(RT_SP);
    uint64_t code;
    if ((callee->known & needed) != needed ||
        !read8(w, callee->value[RT_PC], &code) ||
        code != ((uint64_t)SVC_0 << 32 | MOV_X8_139))
        return false;
    uint64_t uc = callee->value[RT_SP] + sizeof(siginfo_t);
    uint64_t regs = uc + offsetof(ucontext_t, uc_mcontext.regs);
    struct eh_elf_regs *caller = &frame->caller;
    for (unsigned r = 0; r < 31; r++)
        if (!read8(w, regs + 8 * r, &caller->value[r]))
            return false;
    if (!read8(w, uc + offsetof(ucontext_t, uc_mcontext.sp),
               &caller->value[RT_SP]) ||
        !read8(w, uc + offsetof(ucontext_t, uc_mcontext.pc),
               &caller->value[RT_PC]))
        return false;
    caller->known = RT_BIT(RT_PC + 1) - 1; /* x0-x30, sp, pc */
    caller->undefined = 0;
    frame->error = EH_ELF_OK;
    frame->error_reg = -1;
    frame->error_offset = UINT64_MAX;
    frame->cfa = callee->value[RT_SP];
    frame->signal_frame = 1;
    frame->ra_b_key = 0;
    return true;
}
#else
/* (x86-64: libc's __restore_rt has an 'S' FDE that gives every
 * register.) */
typedef int rt_sigframe_unused;
#endif
