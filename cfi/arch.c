/* SPDX-License-Identifier: MIT */
/* arch.c — the architecture descriptors (arch.h). */
#include "arch.h"

#include <elf.h>

#include "cfi.h"

/* x86-64 System V psABI, "DWARF Register Number Mapping". */
static const char *const x86_64_names[CFI_NREGS] = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
    "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
    "st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7",
    "mm0", "mm1", "mm2", "mm3", "mm4", "mm5", "mm6", "mm7",
    [49] = "rflags", "es", "cs", "ss", "ds", "fs", "gs",
    [58] = "fs.base", "gs.base",
    [62] = "tr", "ldtr", "mxcsr", "fcw", "fsw",
    "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
    "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",
    [118] = "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
};

/* psABI "Registers": rbx, rbp and r12-r15 belong to the calling
 * function, rsp is restored by the return (its caller's value is the
 * CFA), and every other register may be clobbered by the call. */
#define X86_64_KEEP CFI_DEFAULT_SAME_VALUE
#define X86_64_LOSE CFI_DEFAULT_UNDEFINED
static const uint8_t x86_64_defaults[17] = {
    X86_64_LOSE, X86_64_LOSE, X86_64_LOSE, X86_64_KEEP,  /* rax..rbx */
    X86_64_LOSE, X86_64_LOSE, X86_64_KEEP, CFI_DEFAULT_CFA, /* rsi..rsp */
    X86_64_LOSE, X86_64_LOSE, X86_64_LOSE, X86_64_LOSE,  /* r8..r11 */
    X86_64_KEEP, X86_64_KEEP, X86_64_KEEP, X86_64_KEEP,  /* r12..r15 */
    X86_64_LOSE,                                         /* rip */
};
#undef X86_64_KEEP
#undef X86_64_LOSE

static const uint8_t x86_64_callee_saved[] = {3, 6, 12, 13, 14, 15};

const struct cfi_arch cfi_arch_x86_64 = {
    .name = "x86-64",
    .e_machine = EM_X86_64,
    .nreported = 17,
    .reg_names = x86_64_names,
    .sp = 7,
    .pc = 16,
    .ra_column = 16,
    .defaults = x86_64_defaults,
    .callee_saved = 1u << 3 | 1u << 6 | 0xf000u,
    .callee_saved_list = x86_64_callee_saved,
    .ncallee_saved = sizeof x86_64_callee_saved,
    .vendor_ops = {CFI_VENDOR_NONE, CFI_VENDOR_NONE, CFI_VENDOR_NONE},
};

/* AArch64 (aadwarf64) is the next descriptor. */
static const struct cfi_arch *const arches[] = {&cfi_arch_x86_64};

const struct cfi_arch *cfi_arch_of_machine(unsigned e_machine)
{
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (arches[i]->e_machine == e_machine)
            return arches[i];
    return NULL;
}

const char *cfi_arch_reg_name(const struct cfi_arch *arch, unsigned reg)
{
    return reg < CFI_NREGS ? arch->reg_names[reg] : NULL;
}
