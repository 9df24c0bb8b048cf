/* SPDX-License-Identifier: MIT */
/* arch.c — the architecture descriptors (arch.h). */
#include "arch.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

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
    .ndefaults = 17,
    .reg_names = x86_64_names,
    .sp = 7,
    .fp = 6,
    .pc = 16,
    .ra_column = 16,
    .defaults = x86_64_defaults,
    .callee_saved = 1u << 3 | 1u << 6 | 0xf000u,
    .callee_saved_list = x86_64_callee_saved,
    .ncallee_saved = sizeof x86_64_callee_saved,
    .vendor_ops = {CFI_VENDOR_NONE, CFI_VENDOR_NONE, CFI_VENDOR_NONE},
    .ra_state = CFI_NO_RA_STATE,
};

/* aadwarf64, "DWARF register names" (35-39: the thread ID registers,
 * whose names the ABI writes with a letter O for the digit 0). */
static const char *const aarch64_names[CFI_NREGS] = {
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
    "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
    "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",
    "pc", "elr_mode", "ra_sign_state", "tpidrro_el0", "tpidr_el0",
    "tpidr_el1", "tpidr_el2", "tpidr_el3",
    [46] = "vg", "ffr",
    "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7",
    "p8", "p9", "p10", "p11", "p12", "p13", "p14", "p15",
    "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7",
    "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
    "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
    "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
    "z0", "z1", "z2", "z3", "z4", "z5", "z6", "z7",
    "z8", "z9", "z10", "z11", "z12", "z13", "z14", "z15",
    "z16", "z17", "z18", "z19", "z20", "z21", "z22", "z23",
    "z24", "z25", "z26", "z27", "z28", "z29", "z30", "z31",
};

/* AAPCS64 "General-purpose registers" and "SIMD and Floating-Point
 * registers": x19-x28 and the frame pointer x29 belong to the calling
 * function, and so do the low 64 bits of v8-v15 (the only bits CFI
 * reaches: aadwarf64, Note 5); sp is restored by the return (its
 * caller's value is the CFA); the PC and ELR_mode are not preserved;
 * RA_SIGN_STATE starts at 0, not signed (aadwarf64, "Common information
 * entries"). x30, the link register, is not preserved by a call either,
 * but it is the return address column: at a function's entry it holds
 * the return address, and producers give it no rule in the CIE (gcc's
 * CIE is "def_cfa sp, 0" alone), so its default is the callee's value,
 * as libgcc (every register without a rule is unsaved) and elfutils
 * (its aarch64 abi_cfi) read it; undefined would end the stack at every
 * leaf function. The ABI also has VG default to same_value; VG (46) is
 * not reported, and an SVE frame is outside what cfisem models. */
#define A64_KEEP CFI_DEFAULT_SAME_VALUE
#define A64_LOSE CFI_DEFAULT_UNDEFINED
static const uint8_t aarch64_defaults[80] = {
    A64_LOSE, A64_LOSE, A64_LOSE, A64_LOSE,   /* x0..x3 */
    A64_LOSE, A64_LOSE, A64_LOSE, A64_LOSE,   /* x4..x7 */
    A64_LOSE, A64_LOSE, A64_LOSE, A64_LOSE,   /* x8..x11 */
    A64_LOSE, A64_LOSE, A64_LOSE, A64_LOSE,   /* x12..x15 */
    A64_LOSE, A64_LOSE, A64_LOSE, A64_KEEP,   /* x16..x19 */
    A64_KEEP, A64_KEEP, A64_KEEP, A64_KEEP,   /* x20..x23 */
    A64_KEEP, A64_KEEP, A64_KEEP, A64_KEEP,   /* x24..x27 */
    A64_KEEP, A64_KEEP, A64_KEEP,             /* x28, x29, x30 */
    CFI_DEFAULT_CFA, A64_LOSE, A64_LOSE,      /* sp, pc, elr_mode */
    CFI_DEFAULT_ZERO,                         /* ra_sign_state */
    /* 35..71: undefined (zero-initialized below, A64_LOSE is 0) */
    [72] = A64_KEEP, A64_KEEP, A64_KEEP, A64_KEEP, /* v8..v11 */
    A64_KEEP, A64_KEEP, A64_KEEP, A64_KEEP,        /* v12..v15 */
};
#undef A64_KEEP
#undef A64_LOSE

static const uint8_t aarch64_callee_saved[] = {
    19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
};

/* Registers 0-34 are reported: x0-x30, sp, pc, ELR_mode and
 * RA_SIGN_STATE, whose value in a frame says whether that frame's
 * return address was signed. The callee-saved mask holds the
 * registers below 64 (v8-v15 are in the defaults only). */
const struct cfi_arch cfi_arch_aarch64 = {
    .name = "aarch64",
    .e_machine = EM_AARCH64,
    .nreported = 35,
    .ndefaults = 80,
    .reg_names = aarch64_names,
    .sp = 31,
    .fp = 29,
    .pc = 32,
    .ra_column = 30,
    .defaults = aarch64_defaults,
    .callee_saved = 0x3ff80000u,
    .callee_saved_list = aarch64_callee_saved,
    .ncallee_saved = sizeof aarch64_callee_saved,
    .vendor_ops = {CFI_VENDOR_SET_RA_STATE,
                   CFI_VENDOR_NEGATE_RA_STATE_WITH_PC,
                   CFI_VENDOR_NEGATE_RA_STATE},
    .ra_state = 34,
};

static const struct cfi_arch *const arches[] = {
    &cfi_arch_x86_64, &cfi_arch_aarch64,
};

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

const char *cfi_arch_reg_label(const struct cfi_arch *arch, unsigned reg,
                               char *buf, size_t size)
{
    const char *name = cfi_arch_reg_name(arch, reg);
    if (name)
        return name;
    snprintf(buf, size, "r%u", reg);
    return buf;
}

static int parse_number(const char *text, size_t len)
{
    if (len == 0 || len > 3)
        return -1;
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        n = n * 10 + (text[i] - '0');
    }
    return n < CFI_NREGS ? n : -1;
}

int cfi_arch_reg_parse(const struct cfi_arch *arch, const char *text,
                       size_t len)
{
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        const char *name = arch->reg_names[reg];
        if (name && strlen(name) == len && memcmp(name, text, len) == 0)
            return (int)reg;
    }
    if (len > 1 && text[0] == 'r')
        return parse_number(text + 1, len - 1);
    return parse_number(text, len);
}

/* psABI "DWARF Register Number Mapping": rax..rip, mm0-7, rflags,
 * fs.base, gs.base and k0-7 are 8 bytes; xmm 16; st 10; mxcsr 4; the
 * segment selectors, tr, ldtr, fcw and fsw 2. */
static unsigned x86_64_reg_size(unsigned reg)
{
    if (reg <= 16)
        return 8;
    if (reg <= 32 || (reg >= 67 && reg <= 82))
        return 16; /* xmm0-15, xmm16-31 */
    if (reg <= 40)
        return 10; /* st0-7 */
    if (reg <= 49 || reg == 58 || reg == 59 || (reg >= 118 && reg <= 125))
        return 8;  /* mm0-7, rflags, fs.base, gs.base, k0-7 */
    if (reg == 64)
        return 4;  /* mxcsr */
    return 2;      /* es..gs, tr, ldtr, fcw, fsw */
}

/* aadwarf64 Notes 1 and 5: with no context (CFI), a general register,
 * sp, pc, ELR_mode, RA_SIGN_STATE, the thread ID registers and VG are
 * 64-bit, and so is what CFI reaches of a V register (its low half);
 * the SVE registers' size depends on VG. */
static unsigned aarch64_reg_size(unsigned reg)
{
    if (reg < 47 || (reg >= 64 && reg < 96))
        return 8;
    return 0; /* FFR, P0-P15, Z0-Z31: VG-sized, not modelled */
}

unsigned cfi_arch_reg_size(const struct cfi_arch *arch, unsigned reg)
{
    if (!cfi_arch_reg_name(arch, reg))
        return 0;
    return arch == &cfi_arch_aarch64 ? aarch64_reg_size(reg)
                                     : x86_64_reg_size(reg);
}

uint64_t cfi_strip_pac(uint64_t address, unsigned va_bits)
{
    if (va_bits == 0 || va_bits > 55)
        va_bits = CFI_VA_BITS_DEFAULT;
    uint64_t low = ((uint64_t)1 << va_bits) - 1;
    return address >> 55 & 1 ? address | ~low : address & low;
}
