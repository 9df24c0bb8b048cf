/* SPDX-License-Identifier: MIT */
/* arch.h — what call frame information means on one architecture.
 *
 * The same DWARF CFI program means different things on different
 * machines: which register numbers exist and what they are called, which
 * one is the stack pointer, which column holds the return address and
 * which register is the caller's PC, what a register with no rule holds
 * (the ABI default), which registers a call preserves, and what the
 * opcodes that DWARF leaves to vendors (0x2b..0x2d) do. One descriptor
 * per architecture says all of it; it is chosen from the ELF header's
 * e_machine when a file is opened (as elfutils chooses its backends),
 * and every CIE carries its file's.
 *
 * Engines, the harness, tracing and synthesis read registers, defaults
 * and callee-saved sets from here and from nowhere else.
 */
#ifndef CFISEM_CFI_ARCH_H
#define CFISEM_CFI_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ABI default for a register that has no rule. */
enum cfi_abi_default {
    CFI_DEFAULT_UNDEFINED,
    CFI_DEFAULT_SAME_VALUE, /* the callee's value: a callee-saved register */
    CFI_DEFAULT_CFA,        /* the stack pointer: the CFA */
    CFI_DEFAULT_ZERO,       /* the value 0: AArch64's RA_SIGN_STATE */
};

/* What a vendor opcode does on an architecture. */
enum cfi_vendor_op {
    CFI_VENDOR_NONE,               /* no meaning: CFI_E_UNSUPPORTED */
    CFI_VENDOR_GNU_WINDOW_SAVE,    /* SPARC register windows */
    CFI_VENDOR_NEGATE_RA_STATE,    /* AArch64: toggle RA_SIGN_STATE */
    CFI_VENDOR_NEGATE_RA_STATE_WITH_PC, /* AArch64: the same, PC-bound */
    CFI_VENDOR_SET_RA_STATE,       /* AArch64: set RA_SIGN_STATE */
};

/* The vendor opcodes an architecture may give a meaning to. */
enum {
    CFI_VENDOR_OP_FIRST = 0x2b, /* DW_CFA_AARCH64_set_ra_state */
    CFI_VENDOR_OP_LAST = 0x2d,  /* DW_CFA_GNU_window_save */
    CFI_VENDOR_OPS = CFI_VENDOR_OP_LAST - CFI_VENDOR_OP_FIRST + 1,
};

struct cfi_arch {
    const char *name;       /* "x86-64" */
    uint16_t e_machine;     /* EM_X86_64 */
    /* Registers 0 .. nreported-1 are the ones every engine reports in a
     * frame. Registers 0 .. ndefaults-1 (ndefaults >= nreported) are the
     * ones whose ABI default may be other than "undefined". */
    unsigned nreported;
    unsigned ndefaults;
    /* DWARF register names, CFI_NREGS of them (NULL: no register). */
    const char *const *reg_names;
    unsigned sp;            /* the stack pointer: its default is the CFA */
    unsigned fp;            /* the frame pointer of the ABI's frame chain */
    unsigned pc;            /* the register that holds the caller's PC */
    unsigned ra_column;     /* the return address column of the ABI */
    /* The ABI default of registers 0 .. ndefaults-1 (enum
     * cfi_abi_default); every register from ndefaults up is
     * undefined. */
    const uint8_t *defaults;
    /* The registers a call preserves, as a set of register numbers
     * below 64, and the same as a list in increasing number. */
    uint64_t callee_saved;
    const uint8_t *callee_saved_list;
    unsigned ncallee_saved;
    /* The meaning of opcodes CFI_VENDOR_OP_FIRST .. _LAST. */
    uint8_t vendor_ops[CFI_VENDOR_OPS]; /* enum cfi_vendor_op */
    /* Return-address signing (AArch64 pointer authentication): the
     * pseudo-register that says whether the return address is signed
     * (RA_SIGN_STATE), or CFI_NO_RA_STATE when the architecture has
     * none. The CIE augmentation letters 'B' (B key) and 'G' (tagged
     * stack) have a meaning only where it has one. */
    unsigned ra_state;
};

enum { CFI_NO_RA_STATE = ~0u };

/* The values of AArch64's RA_SIGN_STATE (aadwarf64, Note 8): 3..15 are
 * reserved, and only bits 0..3 are meaningful. */
enum cfi_ra_state {
    CFI_RA_NOT_SIGNED = 0,
    CFI_RA_SIGNED_SP = 1,
    CFI_RA_SIGNED_SP_PC = 2,
    CFI_RA_STATE_MAX = 2,
};

/* The default number of virtual-address bits of a return address whose
 * signature is stripped (Linux on AArch64: 48-bit user addresses). */
enum { CFI_VA_BITS_DEFAULT = 48 };

/* x86-64, System V psABI; AArch64, aadwarf64 and AAPCS64. */
extern const struct cfi_arch cfi_arch_x86_64;
extern const struct cfi_arch cfi_arch_aarch64;

/* The descriptor for an ELF e_machine; NULL when cfisem has none. */
const struct cfi_arch *cfi_arch_of_machine(unsigned e_machine);

/* The ABI default of `reg` with no rule. */
static inline enum cfi_abi_default cfi_arch_default(
    const struct cfi_arch *arch, unsigned reg)
{
    return reg < arch->ndefaults ? (enum cfi_abi_default)arch->defaults[reg]
                                 : CFI_DEFAULT_UNDEFINED;
}

/* Whether a call preserves `reg`. */
static inline bool cfi_arch_callee_saved(const struct cfi_arch *arch,
                                         unsigned reg)
{
    return reg < 64 && (arch->callee_saved >> reg & 1);
}

/* What opcode `op` means; CFI_VENDOR_NONE outside 0x2b..0x2d. */
static inline enum cfi_vendor_op cfi_arch_vendor_op(
    const struct cfi_arch *arch, unsigned op)
{
    if (op < CFI_VENDOR_OP_FIRST || op > CFI_VENDOR_OP_LAST)
        return CFI_VENDOR_NONE;
    return (enum cfi_vendor_op)arch->vendor_ops[op - CFI_VENDOR_OP_FIRST];
}

/* The register's name on `arch`, or NULL when the number has none. */
const char *cfi_arch_reg_name(const struct cfi_arch *arch, unsigned reg);
/* Its name or "rN"; writes into buf (>= 8 bytes) when needed. */
const char *cfi_arch_reg_label(const struct cfi_arch *arch, unsigned reg,
                               char *buf, size_t size);
/* Parses a name of `arch`, "rN" or "N" into a DWARF number; -1 if
 * unknown. */
int cfi_arch_reg_parse(const struct cfi_arch *arch, const char *text,
                       size_t len);
/* The register's width in bytes in the ABI's mapping; 0 for a number
 * with no register. The engines read every saved register as 8 bytes:
 * only 8-byte registers are modelled. */
unsigned cfi_arch_reg_size(const struct cfi_arch *arch, unsigned reg);

/* A return address with its pointer-authentication code removed: the
 * bits above the `va_bits` low ones become copies of bit 55 (which
 * selects the upper or lower address range, and is never part of the
 * code), as the XPACI instruction does. va_bits 0 means
 * CFI_VA_BITS_DEFAULT; bits 56..63 (the top byte, which the address
 * tag may use) are cleared or set likewise. */
uint64_t cfi_strip_pac(uint64_t address, unsigned va_bits);

#endif
