/* SPDX-License-Identifier: MIT */
/* check_unwind.c — "unwinding one frame" (cfi.h), for every engine.
 *
 * One table of cases; each case runs against each engine of `engines`
 * (the direct interpreter, the IL evaluator, and the interpreter in its
 * two halves: interp_decode_row, then interp_apply_row). A case is a CIE program, an
 * FDE program, a request (PC, caller frame, callee registers) and a
 * memory, with the expected result: the status and, when it is CFI_OK,
 * the CFA and chosen registers (or, for errors, diag.reg and the section
 * offset of the faulty instruction).
 *
 * Every expected value is worked out here by hand from the test memory
 * below and the rules of cfi.h and DWARF 5 §6.4, never by running an
 * engine. When an engine disagrees, one of them is wrong: decide from
 * DWARF 5 and cfi.h, never by editing the expectation to match. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "semantics/sem.h"

/* ------------------------------------------------------------------ */
/* Opcode numbers (DWARF 5 §7.7.1, §7.24), written out independently    */
/* ------------------------------------------------------------------ */

enum {
    DW_CFA_nop = 0x00, DW_CFA_set_loc = 0x01, DW_CFA_advance_loc1 = 0x02,
    DW_CFA_advance_loc2 = 0x03, DW_CFA_advance_loc4 = 0x04,
    DW_CFA_offset_extended = 0x05, DW_CFA_restore_extended = 0x06,
    DW_CFA_undefined = 0x07, DW_CFA_same_value = 0x08,
    DW_CFA_register = 0x09, DW_CFA_remember_state = 0x0a,
    DW_CFA_restore_state = 0x0b, DW_CFA_def_cfa = 0x0c,
    DW_CFA_def_cfa_register = 0x0d, DW_CFA_def_cfa_offset = 0x0e,
    DW_CFA_def_cfa_expression = 0x0f, DW_CFA_expression = 0x10,
    DW_CFA_offset_extended_sf = 0x11, DW_CFA_def_cfa_sf = 0x12,
    DW_CFA_def_cfa_offset_sf = 0x13, DW_CFA_val_offset = 0x14,
    DW_CFA_val_offset_sf = 0x15, DW_CFA_val_expression = 0x16,
    DW_CFA_MIPS_advance_loc8 = 0x1d, DW_CFA_AARCH64_set_ra_state = 0x2b,
    DW_CFA_AARCH64_negate_ra_state_with_pc = 0x2c,
    DW_CFA_GNU_window_save = 0x2d, /* AARCH64_negate_ra_state there */
    DW_CFA_GNU_args_size = 0x2e, DW_CFA_GNU_negative_offset_extended = 0x2f,
    DW_CFA_advance_loc = 0x40, DW_CFA_offset = 0x80, DW_CFA_restore = 0xc0,
};

enum {
    DW_OP_addr = 0x03, DW_OP_deref = 0x06, DW_OP_const1u = 0x08,
    DW_OP_const1s = 0x09, DW_OP_const2u = 0x0a, DW_OP_const2s = 0x0b,
    DW_OP_const4u = 0x0c, DW_OP_const4s = 0x0d, DW_OP_const8u = 0x0e,
    DW_OP_const8s = 0x0f, DW_OP_constu = 0x10, DW_OP_consts = 0x11,
    DW_OP_dup = 0x12, DW_OP_drop = 0x13, DW_OP_over = 0x14,
    DW_OP_pick = 0x15, DW_OP_swap = 0x16, DW_OP_rot = 0x17,
    DW_OP_abs = 0x19, DW_OP_and = 0x1a, DW_OP_div = 0x1b,
    DW_OP_minus = 0x1c, DW_OP_mod = 0x1d, DW_OP_mul = 0x1e,
    DW_OP_neg = 0x1f, DW_OP_not = 0x20, DW_OP_or = 0x21, DW_OP_plus = 0x22,
    DW_OP_plus_uconst = 0x23, DW_OP_shl = 0x24, DW_OP_shr = 0x25,
    DW_OP_shra = 0x26, DW_OP_xor = 0x27, DW_OP_bra = 0x28, DW_OP_eq = 0x29,
    DW_OP_ge = 0x2a, DW_OP_gt = 0x2b, DW_OP_le = 0x2c, DW_OP_lt = 0x2d,
    DW_OP_ne = 0x2e, DW_OP_skip = 0x2f, DW_OP_lit0 = 0x30, DW_OP_reg0 = 0x50,
    DW_OP_breg0 = 0x70, DW_OP_regx = 0x90, DW_OP_fbreg = 0x91,
    DW_OP_bregx = 0x92, DW_OP_piece = 0x93, DW_OP_deref_size = 0x94,
    DW_OP_nop = 0x96, DW_OP_call2 = 0x98, DW_OP_call_frame_cfa = 0x9c,
    DW_OP_stack_value = 0x9f,
};
#define LIT(n) (DW_OP_lit0 + (n))
#define BREG(n) (DW_OP_breg0 + (n))

/* ------------------------------------------------------------------ */
/* The test memory                                                      */
/* ------------------------------------------------------------------ */

/* A read of n bytes at address a gives the low n bytes of a ^ KEY, except
 * that it faults when one of the bytes [a, a+n) is in [fault_lo,
 * fault_hi). Sizes other than 1, 2, 4, 8 are a test failure (cfi.h:
 * engines read those one byte at a time). Note that the model is a
 * function of the address of the read, not a byte array: reading 3 bytes
 * as 4 and masking gives another value than three 1-byte reads. */
#define KEY 0x5555555555555555ull
#define M8(a) ((uint64_t)(a) ^ KEY)              /* 8 bytes at a */
#define B(a) (M8(a) & 0xff)                      /* 1 byte at a */

struct test_memory {
    uint64_t fault_lo, fault_hi;
    bool bad_size;
};

static enum cfi_status test_read(void *env, uint64_t addr, unsigned size,
                                 uint64_t *value)
{
    struct test_memory *memory = env;
    if (size != 1 && size != 2 && size != 4 && size != 8) {
        memory->bad_size = true;
        return CFI_E_MEMORY;
    }
    for (unsigned i = 0; i < size; i++) {
        uint64_t byte = addr + i;
        if (byte >= memory->fault_lo && byte < memory->fault_hi)
            return CFI_E_MEMORY;
    }
    *value = size == 8 ? M8(addr) : M8(addr) & ((1ull << (8 * size)) - 1);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

/* The callee's registers unless a case says otherwise: rax..r15 and rip
 * (0..16) hold R(n); registers from 17 up are unknown. */
#define R(n) (0x10000ull * ((n) + 1))
#define RSP R(7)                  /* 0x80000 */
#define PC0 0x1000ull             /* the FDE covers [PC0, PC_END) */
#define PC_END 0x1100ull
#define CFA0 (RSP + 8)            /* the CFA of STD_CIE */

/* Where the records are (section offsets) and the FDE program's address. */
#define CIE_INSNS_OFFSET 0x110ull
#define FDE_INSNS_OFFSET 0x220ull
#define FDE_INSNS_ADDR 0x5000ull
#define AT_CIE(k) (CIE_INSNS_OFFSET + (k))
#define AT_FDE(k) (FDE_INSNS_OFFSET + (k))

struct cie_options {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_column;
    bool signal_frame;
    enum cfi_section section;
    uint8_t fde_encoding;
    uint8_t address_size;
    uint64_t pc_begin, pc_end;
    const struct cfi_arch *arch;  /* NULL: x86-64 */
    bool ra_b_key;                /* 'B' (AArch64) */
};

static const struct cie_options default_options = {
    1, -8, 16, false, CFI_EH_FRAME, CFI_PE_PCREL | CFI_PE_SDATA4, 8, PC0, PC_END,
    NULL, false,
};

#define OPTIONS(...) .options = &(const struct cie_options){__VA_ARGS__}
/* An .eh_frame CIE whose 'R' encoding is `encoding`. */
#define ENCODING(encoding)                                                 \
    OPTIONS(1, -8, 16, false, CFI_EH_FRAME, (encoding), 8, PC0, PC_END,    \
            NULL, false)

struct reg_value {
    bool used;
    unsigned reg;
    uint8_t status; /* enum cfi_reg_status */
    uint64_t value;
};
#define VAL(r, v) {true, (r), CFI_REG_VALUE, (v)}
#define UNDEF(r) {true, (r), CFI_REG_UNDEFINED, 0}
#define UNKNOWN(r) {true, (r), CFI_REG_UNKNOWN, 0}

/* Where the case's expression goes, in front of the FDE's program. */
enum expr_use {
    NO_EXPR,
    AS_CFA,        /* def_cfa_expression(E) */
    AS_VAL_RBX,    /* val_expression(rbx, E) */
    AS_ADDR_RBX,   /* expression(rbx, E) */
};

struct unwind_case {
    const char *name;
    const uint8_t *cie;
    size_t cie_len;
    const uint8_t *fde;
    size_t fde_len;
    const uint8_t *expr;
    size_t expr_len;
    enum expr_use use;
    const struct cie_options *options;  /* NULL: default_options */
    uint64_t pc;
    bool caller;
    struct reg_value callee[4];         /* changes to the default callee */
    unsigned va_bits;                   /* the request's */
    uint64_t fault_lo, fault_hi;
    /* Expected. */
    enum cfi_status status;
    uint64_t cfa;
    struct reg_value regs[8];
    bool abi_rest;      /* every register not in regs has its ABI default */
    bool signal_frame;
    bool ra_b_key;
    int diag_reg;       /* CFI_E_REG_UNKNOWN */
    bool check_offset;  /* diag.offset: an instruction error's section
                           offset, an expression error's operation offset
                           inside the expression (cfi.h) */
    uint64_t offset;
};

#define CIE(...) .cie = (const uint8_t[]){__VA_ARGS__},                      \
                 .cie_len = sizeof((const uint8_t[]){__VA_ARGS__})
#define FDE(...) .fde = (const uint8_t[]){__VA_ARGS__},                      \
                 .fde_len = sizeof((const uint8_t[]){__VA_ARGS__})
#define EXPR(...) .expr = (const uint8_t[]){__VA_ARGS__},                    \
                  .expr_len = sizeof((const uint8_t[]){__VA_ARGS__})
#define EMPTY_EXPR .expr = (const uint8_t *)"", .expr_len = 0

/* The usual x86-64 CIE: cfa = rsp + 8; rip = [cfa - 8]. */
#define STD_CIE_BYTES DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1
#define STD_CIE CIE(STD_CIE_BYTES)
#define RIP0 M8(CFA0 - 8)   /* the return address under STD_CIE */

#define FAILS_AT(st, off) .status = (st), .check_offset = true, .offset = (off)

/* The expression E as the CFA rule: the CFA is E's value. */
#define CFA_EXPR_OK(label, result, ...)                                    \
    {.name = label, STD_CIE, EXPR(__VA_ARGS__), .use = AS_CFA, .pc = PC0,   \
     .status = CFI_OK, .cfa = (result)}
#define CFA_EXPR_FAILS(label, st, ...)                                     \
    {.name = label, STD_CIE, EXPR(__VA_ARGS__), .use = AS_CFA, .pc = PC0,   \
     .status = (st)}

/* Cases with only the standard CIE and an FDE program. */
#define FDE_OK(label, pc_, cfa_, ...)                                      \
    .name = label, STD_CIE, FDE(__VA_ARGS__), .pc = (pc_), .status = CFI_OK, \
    .cfa = (cfa_)

#define LIT0_X8 LIT(0), LIT(0), LIT(0), LIT(0), LIT(0), LIT(0), LIT(0), LIT(0)
#define LIT0_X64 LIT0_X8, LIT0_X8, LIT0_X8, LIT0_X8, LIT0_X8, LIT0_X8,      \
                 LIT0_X8, LIT0_X8
#define DUP_X8 DW_OP_dup, DW_OP_dup, DW_OP_dup, DW_OP_dup, DW_OP_dup,        \
               DW_OP_dup, DW_OP_dup, DW_OP_dup
#define DUP_X64 DUP_X8, DUP_X8, DUP_X8, DUP_X8, DUP_X8, DUP_X8, DUP_X8, DUP_X8
#define REMEMBER_X8 DW_CFA_remember_state, DW_CFA_remember_state,           \
    DW_CFA_remember_state, DW_CFA_remember_state, DW_CFA_remember_state,    \
    DW_CFA_remember_state, DW_CFA_remember_state, DW_CFA_remember_state
#define REMEMBER_X64 REMEMBER_X8, REMEMBER_X8, REMEMBER_X8, REMEMBER_X8,    \
    REMEMBER_X8, REMEMBER_X8, REMEMBER_X8, REMEMBER_X8
#define RESTORE_X8 DW_CFA_restore_state, DW_CFA_restore_state,              \
    DW_CFA_restore_state, DW_CFA_restore_state, DW_CFA_restore_state,       \
    DW_CFA_restore_state, DW_CFA_restore_state, DW_CFA_restore_state
#define RESTORE_X64 RESTORE_X8, RESTORE_X8, RESTORE_X8, RESTORE_X8,         \
    RESTORE_X8, RESTORE_X8, RESTORE_X8, RESTORE_X8

/* The step-limit loop: const2u 2499; L: lit1; minus; dup; bra L. It runs
 * 1 + 4 × 2499 = 9997 operations and leaves 0. */
#define COUNTDOWN_2499 DW_OP_const2u, 0xc3, 0x09, LIT(1), DW_OP_minus,       \
    DW_OP_dup, DW_OP_bra, 0xfa, 0xff

/* The PLT CFA expression (FACTS.md): rsp + 8 + ((rip & 15) >= 11) << 3. */
#define PLT_EXPR BREG(7), 8, BREG(16), 0, LIT(15), DW_OP_and, LIT(11),        \
    DW_OP_ge, LIT(3), DW_OP_shl, DW_OP_plus


/* ------------------------------------------------------------------ */
/* AArch64 (aadwarf64): return address signing                         */
/* ------------------------------------------------------------------ */

/* An AArch64 CIE as GCC writes it: code alignment 4, data alignment -8,
 * return address column x30, cfa = sp + 0. */
#define A64_OPTIONS(b_key)                                                 \
    OPTIONS(4, -8, 30, false, CFI_EH_FRAME, CFI_PE_PCREL | CFI_PE_SDATA4,  \
            8, PC0, PC_END, &cfi_arch_aarch64, (b_key))
#define A64_CIE_BYTES DW_CFA_def_cfa, 31, 0
#define A64 CIE(A64_CIE_BYTES), A64_OPTIONS(false)
#define NEGATE DW_CFA_GNU_window_save /* AARCH64_negate_ra_state */
#define NEGATE_PC DW_CFA_AARCH64_negate_ra_state_with_pc
#define SET_STATE DW_CFA_AARCH64_set_ra_state

/* The prologue after the signing instruction (4 bytes on): cfa = sp +
 * 16, x29 at cfa - 16, x30 at cfa - 8. */
#define A64_FRAME DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16,          \
    DW_CFA_offset | 29, 2, DW_CFA_offset | 30, 1

/* A signed return address, saved where the test memory holds it: the
 * 8 bytes at a are a ^ KEY, so sp is chosen to put it at cfa - 8. The
 * code sits in bits 48-54 (bit 55 clear: a user address); stripped with
 * 48 address bits it is 0xdeadbeef, with 52 bits 0xa0000deadbeef. */
#define SIGNED_RA 0x002a0000deadbeefull
#define A64_SP ((SIGNED_RA ^ KEY) - 8)
#define A64_CFA (A64_SP + 16)
#define A64_X29 M8(A64_SP)
/* Bit 55 set (the upper address range): stripping sets bits 48-63. */
#define SIGNED_HIGH_RA 0x0080123456789abcull
#define A64_HIGH_SP ((SIGNED_HIGH_RA ^ KEY) - 8)

/* After A64_FRAME with state `state`: the caller's PC is `pc`. */
#define A64_AFTER_FRAME(state, pc)                                         \
    .status = CFI_OK, .cfa = A64_CFA,                                     \
    .regs = {VAL(30, SIGNED_RA), VAL(32, (pc)), VAL(34, (state)),          \
             VAL(29, A64_X29), VAL(31, A64_CFA)},                          \
    .abi_rest = true
#define A64_CALLEE .callee = {VAL(31, A64_SP)}

/* SLEB128 offsets times code_align 4: 2^61 × 4 = 2^63 does not fit
 * int64, -2^61 × 4 = -2^63 does. */
#define SLEB_2_61 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20
#define SLEB_MINUS_2_61 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x60


static const struct unwind_case cases[] = {
    /* ---------------------------------------------------------------- */
    /* DW_OP, each operation (the expression is the CFA rule)            */
    /* ---------------------------------------------------------------- */
    CFA_EXPR_OK("op lit0", 0, LIT(0)),
    CFA_EXPR_OK("op lit17", 17, LIT(17)),
    CFA_EXPR_OK("op lit31", 31, LIT(31)),
    CFA_EXPR_OK("op addr", 0x1122334455667788ull,
                DW_OP_addr, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11),
    CFA_EXPR_OK("op const1u", 0xff, DW_OP_const1u, 0xff),
    CFA_EXPR_OK("op const1s negative", UINT64_MAX, DW_OP_const1s, 0xff),
    CFA_EXPR_OK("op const1s positive", 0x7f, DW_OP_const1s, 0x7f),
    CFA_EXPR_OK("op const2u", 0xfffe, DW_OP_const2u, 0xfe, 0xff),
    CFA_EXPR_OK("op const2s", 0xffffffffffff8000ull, DW_OP_const2s, 0x00, 0x80),
    CFA_EXPR_OK("op const4u", 0xfffffff0ull, DW_OP_const4u, 0xf0, 0xff, 0xff, 0xff),
    CFA_EXPR_OK("op const4s", 0xffffffff80000000ull,
                DW_OP_const4s, 0x00, 0x00, 0x00, 0x80),
    CFA_EXPR_OK("op const8u", 0x8877665544332211ull,
                DW_OP_const8u, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88),
    CFA_EXPR_OK("op const8s", 0xfffffffffffffffeull,
                DW_OP_const8s, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
    CFA_EXPR_OK("op constu", 624485, DW_OP_constu, 0xe5, 0x8e, 0x26),
    CFA_EXPR_OK("op constu max", UINT64_MAX, DW_OP_constu,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
    CFA_EXPR_OK("op consts -1", UINT64_MAX, DW_OP_consts, 0x7f),
    CFA_EXPR_OK("op consts -123456", (uint64_t)-123456,
                DW_OP_consts, 0xc0, 0xbb, 0x78),
    CFA_EXPR_OK("op dup", 10, LIT(5), DW_OP_dup, DW_OP_plus),
    CFA_EXPR_OK("op drop", 5, LIT(5), LIT(7), DW_OP_drop),
    /* [5 7] over → [5 7 5]; minus: 7 - 5 */
    CFA_EXPR_OK("op over", 2, LIT(5), LIT(7), DW_OP_over, DW_OP_minus),
    CFA_EXPR_OK("op pick 2", 1, LIT(1), LIT(2), LIT(3), DW_OP_pick, 2),
    CFA_EXPR_OK("op pick 0", 4, LIT(1), LIT(2), DW_OP_pick, 0, DW_OP_plus),
    /* [5 7] swap → [7 5]; minus: 7 - 5 */
    CFA_EXPR_OK("op swap", 2, LIT(5), LIT(7), DW_OP_swap, DW_OP_minus),
    /* [1 2 3] rot → [3 1 2]; minus → [3 -1]; minus → 4 */
    CFA_EXPR_OK("op rot", 4, LIT(1), LIT(2), LIT(3), DW_OP_rot, DW_OP_minus,
                DW_OP_minus),
    CFA_EXPR_OK("op deref", M8(0x20000),
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref),
    CFA_EXPR_OK("op deref_size 1", B(0x20000),
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 1),
    CFA_EXPR_OK("op deref_size 2", M8(0x20000) & 0xffff,
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 2),
    /* Three 1-byte reads: bytes 0x55 0x54 0x57 (not 0x55 0x55 0x57). */
    CFA_EXPR_OK("op deref_size 3", B(0x20000) | B(0x20001) << 8 | B(0x20002) << 16,
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 3),
    CFA_EXPR_OK("op deref_size 4", M8(0x20000) & 0xffffffff,
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 4),
    CFA_EXPR_OK("op deref_size 5",
                B(0x20000) | B(0x20001) << 8 | B(0x20002) << 16 |
                    B(0x20003) << 24 | B(0x20004) << 32,
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 5),
    CFA_EXPR_OK("op deref_size 7",
                B(0x20000) | B(0x20001) << 8 | B(0x20002) << 16 |
                    B(0x20003) << 24 | B(0x20004) << 32 | B(0x20005) << 40 |
                    B(0x20006) << 48,
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 7),
    CFA_EXPR_OK("op deref_size 8", M8(0x20000),
                DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 8),
    CFA_EXPR_FAILS("op deref_size 0", CFI_E_EXPR,
                   DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 0),
    CFA_EXPR_FAILS("op deref_size 9", CFI_E_EXPR,
                   DW_OP_const4u, 0x00, 0x00, 0x02, 0x00, DW_OP_deref_size, 9),
    CFA_EXPR_OK("op abs", 5, DW_OP_consts, 0x7b, DW_OP_abs),
    CFA_EXPR_OK("op abs positive", 7, LIT(7), DW_OP_abs),
    CFA_EXPR_OK("op abs INT64_MIN", 0x8000000000000000ull,
                DW_OP_const8s, 0, 0, 0, 0, 0, 0, 0, 0x80, DW_OP_abs),
    CFA_EXPR_OK("op and", 0x30, DW_OP_const1u, 0xf0, DW_OP_const1u, 0x3c,
                DW_OP_and),
    CFA_EXPR_OK("op div signed", (uint64_t)-3, DW_OP_consts, 0x79, LIT(2),
                DW_OP_div),
    CFA_EXPR_OK("op div by negative", (uint64_t)-3, LIT(7), DW_OP_consts, 0x7e,
                DW_OP_div),
    CFA_EXPR_OK("op div INT64_MIN by -1", 0x8000000000000000ull,
                DW_OP_const8s, 0, 0, 0, 0, 0, 0, 0, 0x80, DW_OP_consts, 0x7f,
                DW_OP_div),
    CFA_EXPR_FAILS("op div by zero", CFI_E_EXPR, LIT(1), LIT(0), DW_OP_div),
    CFA_EXPR_OK("op minus", (uint64_t)-2, LIT(3), LIT(5), DW_OP_minus),
    /* unsigned: (2^64 - 1) mod 10 = 5 (signed would give -1) */
    CFA_EXPR_OK("op mod unsigned", 5, DW_OP_consts, 0x7f, LIT(10), DW_OP_mod),
    CFA_EXPR_OK("op mod", 1, LIT(10), LIT(3), DW_OP_mod),
    CFA_EXPR_FAILS("op mod by zero", CFI_E_EXPR, LIT(1), LIT(0), DW_OP_mod),
    CFA_EXPR_OK("op mul", 0x100000000ull, DW_OP_const4u, 0, 0, 1, 0, DW_OP_dup,
                DW_OP_mul),
    CFA_EXPR_OK("op mul wraps", 0, DW_OP_const8u, 0, 0, 0, 0, 0, 0, 0, 0x80,
                LIT(2), DW_OP_mul),
    CFA_EXPR_OK("op neg", (uint64_t)-5, LIT(5), DW_OP_neg),
    CFA_EXPR_OK("op not", UINT64_MAX, LIT(0), DW_OP_not),
    CFA_EXPR_OK("op or", 0xff, DW_OP_const1u, 0xf0, DW_OP_const1u, 0x0f, DW_OP_or),
    CFA_EXPR_OK("op plus", 12, LIT(5), LIT(7), DW_OP_plus),
    CFA_EXPR_OK("op plus wraps", 1, DW_OP_consts, 0x7f, LIT(2), DW_OP_plus),
    CFA_EXPR_OK("op plus_uconst", 133, LIT(5), DW_OP_plus_uconst, 0x80, 0x01),
    CFA_EXPR_OK("op shl", 16, LIT(1), LIT(4), DW_OP_shl),
    CFA_EXPR_OK("op shl 63", 0x8000000000000000ull, LIT(1), DW_OP_const1u, 63,
                DW_OP_shl),
    CFA_EXPR_OK("op shl 64", 0, LIT(1), DW_OP_const1u, 64, DW_OP_shl),
    CFA_EXPR_OK("op shl 200", 0, LIT(1), DW_OP_const1u, 200, DW_OP_shl),
    CFA_EXPR_OK("op shl 2^64-1", 0, LIT(1), DW_OP_consts, 0x7f, DW_OP_shl),
    CFA_EXPR_OK("op shr", 0x0fffffffffffffffull, DW_OP_consts, 0x7f, LIT(4),
                DW_OP_shr),
    CFA_EXPR_OK("op shr 64", 0, DW_OP_consts, 0x7f, DW_OP_const1u, 64, DW_OP_shr),
    CFA_EXPR_OK("op shra", (uint64_t)-4, DW_OP_consts, 0x70, LIT(2), DW_OP_shra),
    CFA_EXPR_OK("op shra top bit", 0xc000000000000000ull,
                DW_OP_const8u, 0, 0, 0, 0, 0, 0, 0, 0x80, LIT(1), DW_OP_shra),
    CFA_EXPR_OK("op shra 63", UINT64_MAX, DW_OP_consts, 0x7e, DW_OP_const1u, 63,
                DW_OP_shra),
    CFA_EXPR_OK("op shra 64 negative", UINT64_MAX, DW_OP_consts, 0x7f,
                DW_OP_const1u, 64, DW_OP_shra),
    CFA_EXPR_OK("op shra 64 positive", 0, LIT(5), DW_OP_const1u, 64, DW_OP_shra),
    CFA_EXPR_OK("op shra 2^64-1", UINT64_MAX, DW_OP_consts, 0x70, DW_OP_consts,
                0x7f, DW_OP_shra),
    CFA_EXPR_OK("op xor", 0xf0, DW_OP_const1u, 0xff, DW_OP_const1u, 0x0f, DW_OP_xor),
    CFA_EXPR_OK("op eq true", 1, LIT(3), LIT(3), DW_OP_eq),
    CFA_EXPR_OK("op eq false", 0, LIT(3), LIT(4), DW_OP_eq),
    CFA_EXPR_OK("op ne true", 1, LIT(3), LIT(4), DW_OP_ne),
    CFA_EXPR_OK("op ne false", 0, LIT(3), LIT(3), DW_OP_ne),
    /* Comparisons are signed: -1 < 1. */
    CFA_EXPR_OK("op lt signed", 1, DW_OP_consts, 0x7f, LIT(1), DW_OP_lt),
    CFA_EXPR_OK("op lt equal", 0, LIT(1), LIT(1), DW_OP_lt),
    CFA_EXPR_OK("op gt signed", 0, DW_OP_consts, 0x7f, LIT(1), DW_OP_gt),
    CFA_EXPR_OK("op gt", 1, LIT(2), LIT(1), DW_OP_gt),
    CFA_EXPR_OK("op ge signed", 0, DW_OP_consts, 0x7f, LIT(1), DW_OP_ge),
    CFA_EXPR_OK("op ge equal", 1, LIT(1), LIT(1), DW_OP_ge),
    CFA_EXPR_OK("op le equal", 1, LIT(1), LIT(1), DW_OP_le),
    CFA_EXPR_OK("op le signed", 0, LIT(1), DW_OP_consts, 0x7f, DW_OP_le),
    /* skip and bra jump from the end of their operand. */
    CFA_EXPR_OK("op skip", 1, LIT(1), DW_OP_skip, 1, 0, LIT(2), LIT(3),
                DW_OP_drop),
    CFA_EXPR_OK("op skip 0", 2, LIT(1), DW_OP_skip, 0, 0, LIT(2)),
    CFA_EXPR_OK("op skip to the end", 1, LIT(1), DW_OP_skip, 1, 0, LIT(2)),
    /* 0 lit1; 1 skip +4 → 8; 4 lit7; 5 skip +3 → 11 (end); 8 skip -7 → 4 */
    CFA_EXPR_OK("op skip backwards", 7, LIT(1), DW_OP_skip, 4, 0, LIT(7),
                DW_OP_skip, 3, 0, DW_OP_skip, 0xf9, 0xff),
    CFA_EXPR_FAILS("op skip past the end", CFI_E_EXPR, LIT(1), DW_OP_skip, 2, 0),
    CFA_EXPR_FAILS("op skip before the start", CFI_E_EXPR, LIT(1), DW_OP_skip,
                   0xfb, 0xff),
    CFA_EXPR_OK("op bra taken", 1, LIT(1), LIT(1), DW_OP_bra, 1, 0, LIT(2)),
    CFA_EXPR_OK("op bra taken on -1", 1, LIT(1), DW_OP_consts, 0x7f, DW_OP_bra,
                1, 0, LIT(2)),
    CFA_EXPR_OK("op bra not taken", 2, LIT(1), LIT(0), DW_OP_bra, 1, 0, LIT(2)),
    CFA_EXPR_FAILS("op bra taken out of range", CFI_E_EXPR, LIT(1), LIT(1),
                   DW_OP_bra, 5, 0),
    /* A bra that is not taken does not jump: its target is not checked. */
    CFA_EXPR_OK("op bra not taken out of range", 3, LIT(0), DW_OP_bra, 5, 0,
                LIT(3)),
    CFA_EXPR_FAILS("op bra loop hits the step limit", CFI_E_STEP_LIMIT,
                   LIT(1), DW_OP_bra, 0xfc, 0xff),
    CFA_EXPR_FAILS("op skip loop hits the step limit", CFI_E_STEP_LIMIT,
                   DW_OP_skip, 0xfd, 0xff),
    /* A loop that pushes overflows the stack before the step limit. */
    CFA_EXPR_FAILS("op pushing loop overflows", CFI_E_EXPR_STACK,
                   LIT(1), DW_OP_skip, 0xfc, 0xff),
    CFA_EXPR_OK("op 10000 steps is the limit", 0, COUNTDOWN_2499, DW_OP_nop,
                DW_OP_nop, DW_OP_nop),
    CFA_EXPR_FAILS("op 10001 steps is too many", CFI_E_STEP_LIMIT,
                   COUNTDOWN_2499, DW_OP_nop, DW_OP_nop, DW_OP_nop, DW_OP_nop),
    CFA_EXPR_OK("op breg0", R(0), BREG(0), 0),
    CFA_EXPR_OK("op breg3", R(3) + 8, BREG(3), 8),
    CFA_EXPR_OK("op breg16 negative", R(16) - 1, BREG(16), 0x7f),
    {.name = "op breg31", STD_CIE, EXPR(BREG(31), 2), .use = AS_CFA, .pc = PC0,
     .callee = {VAL(31, 0x1234)}, .status = CFI_OK, .cfa = 0x1236},
    {.name = "op breg31 unknown", STD_CIE, EXPR(BREG(31), 0), .use = AS_CFA,
     .pc = PC0, .status = CFI_E_REG_UNKNOWN, .diag_reg = 31},
    {.name = "op breg5 undefined", STD_CIE, EXPR(BREG(5), 0), .use = AS_CFA,
     .pc = PC0, .callee = {UNDEF(5)}, .status = CFI_E_REG_UNKNOWN, .diag_reg = 5},
    CFA_EXPR_OK("op bregx", RSP + 16, DW_OP_bregx, 7, 0x10),
    {.name = "op bregx 127", STD_CIE, EXPR(DW_OP_bregx, 0x7f, 0x78), .use = AS_CFA,
     .pc = PC0, .callee = {VAL(127, 0x7000)}, .status = CFI_OK, .cfa = 0x6ff8},
    CFA_EXPR_FAILS("op bregx 128", CFI_E_EXPR, DW_OP_bregx, 0x80, 0x01, 0),
    CFA_EXPR_FAILS("op bregx 200", CFI_E_EXPR, DW_OP_bregx, 0xc8, 0x01, 0),
    {.name = "op bregx 17 unknown", STD_CIE, EXPR(DW_OP_bregx, 17, 0), .use = AS_CFA,
     .pc = PC0, .status = CFI_E_REG_UNKNOWN, .diag_reg = 17},
    CFA_EXPR_OK("op nop", 3, LIT(3), DW_OP_nop),

    /* Limits and faults. */
    CFA_EXPR_OK("64 pushes fit", 0, LIT0_X64),
    CFA_EXPR_FAILS("65 pushes overflow", CFI_E_EXPR_STACK, LIT0_X64, LIT(0)),
    CFA_EXPR_OK("lit + 63 dup fit", 0, LIT(0), DUP_X8, DUP_X8, DUP_X8, DUP_X8,
                DUP_X8, DUP_X8, DUP_X8, DW_OP_dup, DW_OP_dup, DW_OP_dup,
                DW_OP_dup, DW_OP_dup, DW_OP_dup, DW_OP_dup),
    CFA_EXPR_FAILS("lit + 64 dup overflow", CFI_E_EXPR_STACK, LIT(0), DUP_X64),
    /* The CFA pushed first takes one of the 64 entries. */
    {.name = "CFA + 63 pushes fit", STD_CIE, EXPR(LIT0_X8, LIT0_X8, LIT0_X8,
     LIT0_X8, LIT0_X8, LIT0_X8, LIT0_X8, LIT(0), LIT(0), LIT(0), LIT(0),
     LIT(0), LIT(0), LIT(0)), .use = AS_VAL_RBX, .pc = PC0,
     .status = CFI_OK, .cfa = CFA0, .regs = {VAL(3, 0)}},
    {.name = "CFA + 64 pushes overflow", STD_CIE, EXPR(LIT0_X64), .use = AS_VAL_RBX,
     .pc = PC0, .status = CFI_E_EXPR_STACK},
    {.name = "deref fault", STD_CIE, EXPR(DW_OP_const4u, 0, 0, 3, 0, DW_OP_deref),
     .use = AS_CFA, .pc = PC0, .fault_lo = 0x30000, .fault_hi = 0x30008,
     .status = CFI_E_MEMORY},
    {.name = "deref touching a fault", STD_CIE,
     EXPR(DW_OP_const4u, 0xfc, 0xff, 2, 0, DW_OP_deref), .use = AS_CFA,
     .pc = PC0, .fault_lo = 0x30000, .fault_hi = 0x30001, .status = CFI_E_MEMORY},
    {.name = "deref next to a fault", STD_CIE,
     EXPR(DW_OP_const4u, 0x08, 0, 3, 0, DW_OP_deref), .use = AS_CFA, .pc = PC0,
     .fault_lo = 0x30000, .fault_hi = 0x30008, .status = CFI_OK,
     .cfa = M8(0x30008)},
    {.name = "deref_size 1 fault", STD_CIE,
     EXPR(DW_OP_const4u, 0x07, 0, 3, 0, DW_OP_deref_size, 1), .use = AS_CFA,
     .pc = PC0, .fault_lo = 0x30000, .fault_hi = 0x30008, .status = CFI_E_MEMORY},
    /* 3 bytes at 0x2fffe: the third one, 0x30000, faults. */
    {.name = "deref_size 3 fault on its last byte", STD_CIE,
     EXPR(DW_OP_const4u, 0xfe, 0xff, 2, 0, DW_OP_deref_size, 3), .use = AS_CFA,
     .pc = PC0, .fault_lo = 0x30000, .fault_hi = 0x30001, .status = CFI_E_MEMORY},
    {.name = "deref_size 2 before a fault", STD_CIE,
     EXPR(DW_OP_const4u, 0xfe, 0xff, 2, 0, DW_OP_deref_size, 2), .use = AS_CFA,
     .pc = PC0, .fault_lo = 0x30000, .fault_hi = 0x30001, .status = CFI_OK,
     .cfa = M8(0x2fffe) & 0xffff},

    /* Malformed expressions. */
    CFA_EXPR_FAILS("op call2", CFI_E_EXPR, DW_OP_call2, 0, 0),
    CFA_EXPR_FAILS("op call_frame_cfa", CFI_E_EXPR, DW_OP_call_frame_cfa),
    CFA_EXPR_FAILS("op reg0", CFI_E_EXPR, DW_OP_reg0),
    CFA_EXPR_FAILS("op stack_value", CFI_E_EXPR, LIT(1), DW_OP_stack_value),
    CFA_EXPR_FAILS("op fbreg", CFI_E_EXPR, DW_OP_fbreg, 0),
    CFA_EXPR_FAILS("op piece", CFI_E_EXPR, LIT(1), DW_OP_piece, 8),
    CFA_EXPR_FAILS("op regx", CFI_E_EXPR, DW_OP_regx, 3),
    CFA_EXPR_FAILS("unknown op 0x00", CFI_E_EXPR, LIT(1), 0x00),
    CFA_EXPR_FAILS("unknown op 0xff", CFI_E_EXPR, LIT(1), 0xff),
    CFA_EXPR_FAILS("truncated const4u", CFI_E_EXPR, DW_OP_const4u, 1, 2),
    CFA_EXPR_FAILS("truncated addr", CFI_E_EXPR, DW_OP_addr, 1, 2, 3, 4, 5, 6, 7),
    CFA_EXPR_FAILS("truncated const1u", CFI_E_EXPR, DW_OP_const1u),
    CFA_EXPR_FAILS("truncated const8s", CFI_E_EXPR, DW_OP_const8s, 1, 2, 3, 4, 5,
                   6, 7),
    CFA_EXPR_FAILS("truncated skip", CFI_E_EXPR, LIT(1), DW_OP_skip, 1),
    CFA_EXPR_FAILS("truncated bregx", CFI_E_EXPR, DW_OP_bregx, 7),
    CFA_EXPR_FAILS("truncated breg", CFI_E_EXPR, BREG(3)),
    CFA_EXPR_FAILS("truncated constu", CFI_E_EXPR, DW_OP_constu, 0x80),
    CFA_EXPR_FAILS("truncated plus_uconst", CFI_E_EXPR, LIT(1),
                   DW_OP_plus_uconst, 0x80),
    CFA_EXPR_FAILS("truncated pick", CFI_E_EXPR, LIT(1), DW_OP_pick),
    CFA_EXPR_FAILS("truncated deref_size", CFI_E_EXPR, LIT(1), DW_OP_deref_size),
    CFA_EXPR_FAILS("constu overflows 64 bits", CFI_E_EXPR, DW_OP_constu,
                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02),
    {.name = "empty expression as CFA", STD_CIE, EMPTY_EXPR, .use = AS_CFA,
     .pc = PC0, .status = CFI_E_EXPR},
    CFA_EXPR_FAILS("empty stack at the end", CFI_E_EXPR, LIT(1), DW_OP_drop),
    CFA_EXPR_FAILS("only a nop", CFI_E_EXPR, DW_OP_nop),

    /* ---------------------------------------------------------------- */
    /* CFA rules                                                         */
    /* ---------------------------------------------------------------- */
    {FDE_OK("def_cfa", PC0, RSP + 16, DW_CFA_def_cfa, 7, 16),
     .regs = {VAL(16, M8(RSP + 8)), VAL(7, RSP + 16)}},
    {FDE_OK("def_cfa_sf", PC0, R(6) + 16, DW_CFA_def_cfa_sf, 6, 0x7e)},
    {FDE_OK("def_cfa_register", PC0, R(6) + 8, DW_CFA_def_cfa_register, 6)},
    {FDE_OK("def_cfa_offset", PC0, RSP + 32, DW_CFA_def_cfa_offset, 32)},
    {FDE_OK("def_cfa_offset_sf", PC0, RSP + 32, DW_CFA_def_cfa_offset_sf, 0x7c)},
    /* def_cfa's ULEB offset is not factored; the sum wraps mod 2^64. */
    {FDE_OK("def_cfa offset 2^64-8", PC0, RSP - 8, DW_CFA_def_cfa, 7,
            0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
    {FDE_OK("def_cfa_offset max ULEB", PC0, RSP - 1, DW_CFA_def_cfa_offset,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
    {FDE_OK("def_cfa_offset padded ULEB", PC0, RSP + 16, DW_CFA_def_cfa_offset,
            0x90, 0x80, 0x80, 0x00)},
    {FDE_OK("def_cfa high register", PC0, 0x9000 + 4, DW_CFA_def_cfa, 100, 4),
     .callee = {VAL(100, 0x9000)}},
    {.name = "def_cfa_register after def_cfa_expression", STD_CIE,
     FDE(DW_CFA_def_cfa_expression, 1, BREG(7), DW_CFA_def_cfa_register, 6),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(3))},
    {.name = "def_cfa_offset after def_cfa_expression", STD_CIE,
     FDE(DW_CFA_def_cfa_expression, 2, BREG(7), 0, DW_CFA_def_cfa_offset, 8),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(4))},
    {.name = "def_cfa_offset_sf after def_cfa_expression", STD_CIE,
     FDE(DW_CFA_def_cfa_expression, 2, BREG(7), 0, DW_CFA_def_cfa_offset_sf, 1),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(4))},
    {.name = "def_cfa_offset with no CFA rule", CIE(DW_CFA_offset | 16, 1),
     FDE(DW_CFA_def_cfa_offset, 8), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "def_cfa_register with no CFA rule", CIE(DW_CFA_nop),
     FDE(DW_CFA_nop, DW_CFA_def_cfa_register, 7), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "def_cfa_offset_sf with no CFA rule in the CIE",
     CIE(DW_CFA_def_cfa_offset_sf, 2), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_CIE(0))},
    {.name = "def_cfa after def_cfa_expression", STD_CIE,
     FDE(DW_CFA_def_cfa_expression, 1, BREG(7), DW_CFA_def_cfa, 6, 8),
     .pc = PC0, .status = CFI_OK, .cfa = R(6) + 8},
    {.name = "no CFA rule", CIE(DW_CFA_offset | 16, 1), .pc = PC0,
     .status = CFI_E_MALFORMED},
    {.name = "CFA register unknown", CIE(DW_CFA_def_cfa, 10, 8), .pc = PC0,
     .callee = {UNKNOWN(10)}, .status = CFI_E_REG_UNKNOWN, .diag_reg = 10},
    {.name = "CFA register above 16, unknown", CIE(DW_CFA_def_cfa, 20, 8),
     .pc = PC0, .status = CFI_E_REG_UNKNOWN, .diag_reg = 20},
    {.name = "CFA register undefined", STD_CIE, .pc = PC0,
     .callee = {UNDEF(7)}, .status = CFI_E_REG_UNKNOWN, .diag_reg = 7},

    /* ---------------------------------------------------------------- */
    /* Register rules                                                    */
    /* ---------------------------------------------------------------- */
    {FDE_OK("undefined", PC0, CFA0, DW_CFA_undefined, 3), .regs = {UNDEF(3)}},
    {FDE_OK("same_value known", PC0, CFA0, DW_CFA_same_value, 0),
     .regs = {VAL(0, R(0))}},
    {FDE_OK("same_value unknown", PC0, CFA0, DW_CFA_same_value, 10),
     .callee = {UNKNOWN(10)}, .regs = {UNKNOWN(10)}},
    {FDE_OK("same_value undefined", PC0, CFA0, DW_CFA_same_value, 10),
     .callee = {UNDEF(10)}, .regs = {UNDEF(10)}},
    /* same_value goes on with the program like any rule. */
    {FDE_OK("same_value then more", PC0, RSP + 16, DW_CFA_same_value, 0,
            DW_CFA_def_cfa_offset, 16, DW_CFA_offset | 3, 2),
     .regs = {VAL(0, R(0)), VAL(3, M8(RSP + 16 - 16))}},
    {FDE_OK("offset", PC0, CFA0, DW_CFA_offset | 3, 2),
     .regs = {VAL(3, M8(CFA0 - 16))}},
    {FDE_OK("offset_extended", PC0, CFA0, DW_CFA_offset_extended, 3, 2),
     .regs = {VAL(3, M8(CFA0 - 16))}},
    {FDE_OK("offset_extended high register", PC0, CFA0,
            DW_CFA_offset_extended, 17, 4), .regs = {VAL(17, M8(CFA0 - 32))}},
    {FDE_OK("offset_extended_sf", PC0, CFA0, DW_CFA_offset_extended_sf, 3, 0x7e),
     .regs = {VAL(3, M8(CFA0 + 16))}},
    {FDE_OK("GNU_negative_offset_extended", PC0, CFA0,
            DW_CFA_GNU_negative_offset_extended, 3, 2),
     .regs = {VAL(3, M8(CFA0 + 16))}},
    {FDE_OK("val_offset", PC0, CFA0, DW_CFA_val_offset, 3, 2),
     .regs = {VAL(3, CFA0 - 16)}},
    {FDE_OK("val_offset_sf", PC0, CFA0, DW_CFA_val_offset_sf, 3, 0x7e),
     .regs = {VAL(3, CFA0 + 16)}},
    {FDE_OK("offset data_align +4", PC0, CFA0, DW_CFA_offset | 3, 2),
     OPTIONS(1, 4, 16, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .regs = {VAL(3, M8(CFA0 + 8)), VAL(16, M8(CFA0 + 4))}},
    {FDE_OK("register", PC0, CFA0, DW_CFA_register, 3, 0), .regs = {VAL(3, R(0))}},
    {FDE_OK("register from unknown", PC0, CFA0, DW_CFA_register, 3, 10),
     .callee = {UNKNOWN(10)}, .regs = {UNKNOWN(3)}},
    {FDE_OK("register from undefined", PC0, CFA0, DW_CFA_register, 3, 10),
     .callee = {UNDEF(10)}, .regs = {UNDEF(3)}},
    /* register(rbx, rax): the callee's rax, not rax's rule. */
    {FDE_OK("register reads the callee, not the rule", PC0, CFA0,
            DW_CFA_offset | 0, 2, DW_CFA_register, 3, 0),
     .regs = {VAL(0, M8(CFA0 - 16)), VAL(3, R(0))}},
    {.name = "expression", STD_CIE, EXPR(LIT(8), DW_OP_minus), .use = AS_ADDR_RBX,
     .pc = PC0, .status = CFI_OK, .cfa = CFA0, .regs = {VAL(3, M8(CFA0 - 8))}},
    {.name = "val_expression", STD_CIE, EXPR(LIT(16), DW_OP_plus),
     .use = AS_VAL_RBX, .pc = PC0, .status = CFI_OK, .cfa = CFA0,
     .regs = {VAL(3, CFA0 + 16)}},
    /* The CFA alone on the stack is the result. */
    {.name = "val_expression empty", STD_CIE, EMPTY_EXPR, .use = AS_VAL_RBX,
     .pc = PC0, .status = CFI_OK, .cfa = CFA0, .regs = {VAL(3, CFA0)}},
    /* libmvec: cfa = 0x80040; (cfa - 8) & -32 = 0x80020; - 80 = 0x7ffd0 */
    {.name = "expression libmvec", STD_CIE,
     EXPR(LIT(8), DW_OP_minus, DW_OP_const4s, 0xe0, 0xff, 0xff, 0xff, DW_OP_and,
          DW_OP_const4s, 0xb0, 0xff, 0xff, 0xff, DW_OP_plus),
     .use = AS_ADDR_RBX, .pc = PC0, .callee = {VAL(7, 0x80038)},
     .status = CFI_OK, .cfa = 0x80040, .regs = {VAL(3, M8(0x7ffd0))}},
    {.name = "expression memory fault", STD_CIE, EXPR(LIT(8), DW_OP_minus),
     .use = AS_ADDR_RBX, .pc = PC0, .fault_lo = CFA0 - 8, .fault_hi = CFA0 - 7,
     .status = CFI_E_MEMORY},
    {.name = "offset memory fault", STD_CIE, FDE(DW_CFA_offset | 3, 2), .pc = PC0,
     .fault_lo = CFA0 - 16, .fault_hi = CFA0 - 15, .status = CFI_E_MEMORY},
    {.name = "return address memory fault", STD_CIE, .pc = PC0,
     .fault_lo = CFA0 - 8, .fault_hi = CFA0, .status = CFI_E_MEMORY},
    /* Registers are evaluated in increasing order: rbx's fault first. */
    {.name = "first error wins", STD_CIE,
     FDE(DW_CFA_val_expression, 6, 2, BREG(17), 0, DW_CFA_offset | 3, 2),
     .pc = PC0, .fault_lo = CFA0 - 16, .fault_hi = CFA0 - 15,
     .status = CFI_E_MEMORY},
    {.name = "expression rule reads an unknown register", STD_CIE,
     EXPR(BREG(12), 0), .use = AS_VAL_RBX, .pc = PC0, .callee = {UNKNOWN(12)},
     .status = CFI_E_REG_UNKNOWN, .diag_reg = 12},

    /* ---------------------------------------------------------------- */
    /* ABI defaults                                                      */
    /* ---------------------------------------------------------------- */
    {.name = "ABI defaults", STD_CIE, .pc = PC0, .status = CFI_OK, .cfa = CFA0,
     .regs = {VAL(16, RIP0), VAL(7, CFA0), VAL(3, R(3)), VAL(6, R(6)),
              VAL(12, R(12)), VAL(15, R(15)), UNDEF(0), UNDEF(17)},
     .abi_rest = true},
    {.name = "ABI defaults keep unknown and undefined", STD_CIE, .pc = PC0,
     .callee = {UNKNOWN(3), UNDEF(13)}, .status = CFI_OK, .cfa = CFA0,
     .regs = {UNKNOWN(3), UNDEF(13), VAL(16, RIP0)}, .abi_rest = true},
    {.name = "ABI default rsp is the CFA even when rsp is unknown",
     CIE(DW_CFA_def_cfa, 6, 16, DW_CFA_offset | 16, 1), .pc = PC0,
     .callee = {UNKNOWN(7)}, .status = CFI_OK, .cfa = R(6) + 16,
     .regs = {VAL(7, R(6) + 16), VAL(16, M8(R(6) + 8))}, .abi_rest = true},
    {FDE_OK("a rule for rsp replaces the default", PC0, CFA0,
            DW_CFA_same_value, 7), .regs = {VAL(7, RSP)}},
    {FDE_OK("undefined rbx replaces the default", PC0, CFA0,
            DW_CFA_undefined, 3), .regs = {UNDEF(3), VAL(16, RIP0)},
     .abi_rest = true},

    /* ---------------------------------------------------------------- */
    /* Rows and locations                                                */
    /* ---------------------------------------------------------------- */
    {FDE_OK("advance_loc before", PC0 + 3, CFA0, DW_CFA_advance_loc | 4,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc at", PC0 + 4, RSP + 16, DW_CFA_advance_loc | 4,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc 0", PC0, RSP + 16, DW_CFA_advance_loc | 0,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc code_align 4 before", PC0 + 3, CFA0,
            DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16),
     OPTIONS(4, -8, 16, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false)},
    {FDE_OK("advance_loc code_align 4 at", PC0 + 4, RSP + 16,
            DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16),
     OPTIONS(4, -8, 16, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false)},
    {FDE_OK("advance_loc1", PC0 + 0xff, RSP + 16, DW_CFA_advance_loc1, 0xff,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc1 before", PC0 + 0xfe, CFA0, DW_CFA_advance_loc1, 0xff,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc2", PC0 + 0x80, RSP + 16, DW_CFA_advance_loc2, 0x80, 0,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc2 before", PC0 + 0x7f, CFA0, DW_CFA_advance_loc2, 0x80, 0,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc4", PC0 + 0x80, RSP + 16, DW_CFA_advance_loc4, 0x80, 0,
            0, 0, DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("advance_loc4 before", PC0 + 0x7f, CFA0, DW_CFA_advance_loc4, 0x80, 0,
            0, 0, DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("MIPS_advance_loc8", PC0 + 0x80, RSP + 16, DW_CFA_MIPS_advance_loc8,
            0x80, 0, 0, 0, 0, 0, 0, 0, DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("MIPS_advance_loc8 before", PC0 + 0x7f, CFA0,
            DW_CFA_MIPS_advance_loc8, 0x80, 0, 0, 0, 0, 0, 0, 0,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("several rows", PC0 + 9, RSP + 24, DW_CFA_advance_loc | 1,
            DW_CFA_def_cfa_offset, 16, DW_CFA_advance_loc | 8,
            DW_CFA_def_cfa_offset, 24, DW_CFA_advance_loc | 1,
            DW_CFA_def_cfa_offset, 32)},
    /* Reaching pc_end exactly is fine; its row covers no address. */
    {FDE_OK("advance to pc_end", PC_END - 1, CFA0, DW_CFA_advance_loc2, 0, 1,
            DW_CFA_def_cfa_offset, 16)},
    {.name = "advance past pc_end", STD_CIE, FDE(DW_CFA_advance_loc2, 1, 1),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "advance overflows", STD_CIE,
     FDE(DW_CFA_MIPS_advance_loc8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "advance times code_align overflows", STD_CIE,
     FDE(DW_CFA_advance_loc | 4),
     OPTIONS(1ull << 62, -8, 16, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END,
             NULL, false),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    /* set_loc's operand: pcrel sdata4 relative to the operand's address
     * 0x5001: 0x1010 - 0x5001 = -0x3ff1. */
    {FDE_OK("set_loc pcrel sdata4", PC0 + 0x10, RSP + 16,
            DW_CFA_set_loc, 0x0f, 0xc0, 0xff, 0xff, DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("set_loc pcrel sdata4 before", PC0 + 0xf, CFA0,
            DW_CFA_set_loc, 0x0f, 0xc0, 0xff, 0xff, DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("set_loc pcrel sleb", PC0 + 0x10, RSP + 16,
            DW_CFA_set_loc, 0x8f, 0x80, 0x7f, DW_CFA_def_cfa_offset, 16),
     ENCODING(CFI_PE_PCREL | CFI_PE_SLEB128)},
    {FDE_OK("set_loc absptr", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, 0, 0, 0, 0, DW_CFA_def_cfa_offset, 16),
     ENCODING(CFI_PE_ABSPTR)},
    {FDE_OK("set_loc absptr before", PC0 + 0xf, CFA0, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, 0, 0, 0, 0, DW_CFA_def_cfa_offset, 16),
     ENCODING(CFI_PE_ABSPTR)},
    {FDE_OK("set_loc udata2", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_UDATA2)},
    {FDE_OK("set_loc udata4", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_UDATA4)},
    {FDE_OK("set_loc udata8", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, 0, 0, 0, 0, DW_CFA_def_cfa_offset, 16),
     ENCODING(CFI_PE_UDATA8)},
    {FDE_OK("set_loc uleb128", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x90, 0x20, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_ULEB128)},
    {FDE_OK("set_loc sleb128", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x90, 0x20, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_SLEB128)},
    {FDE_OK("set_loc sdata2", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_SDATA2)},
    {FDE_OK("set_loc sdata4", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_SDATA4)},
    {FDE_OK("set_loc sdata8", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, 0, 0, 0, 0, DW_CFA_def_cfa_offset, 16),
     ENCODING(CFI_PE_SDATA8)},
    {FDE_OK("set_loc .debug_frame", PC0 + 0x10, RSP + 16, DW_CFA_set_loc,
            0x10, 0x10, 0, 0, 0, 0, 0, 0, DW_CFA_def_cfa_offset, 16),
     OPTIONS(1, -8, 16, false, CFI_DEBUG_FRAME, CFI_PE_ABSPTR, 8, PC0, PC_END,
             NULL, false)},
    {FDE_OK("set_loc .debug_frame address_size 4", PC0 + 0x10, RSP + 16,
            DW_CFA_set_loc, 0x10, 0x10, 0, 0, DW_CFA_def_cfa_offset, 16),
     OPTIONS(1, -8, 16, false, CFI_DEBUG_FRAME, CFI_PE_ABSPTR, 4, PC0, PC_END,
             NULL, false)},
    /* "The new location value is always greater than the current one"
     * (DWARF 5 §6.4.2.1), unlike an advance by 0. */
    {.name = "set_loc to the same location", STD_CIE,
     FDE(DW_CFA_set_loc, 0x00, 0x10, DW_CFA_def_cfa_offset, 16),
     ENCODING(CFI_PE_UDATA2), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {FDE_OK("advance_loc by 0", PC0, RSP + 16, DW_CFA_advance_loc | 0,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("set_loc to pc_end", PC_END - 1, CFA0, DW_CFA_set_loc,
            0x00, 0x11, DW_CFA_def_cfa_offset, 16), ENCODING(CFI_PE_UDATA2)},
    {.name = "set_loc backwards", STD_CIE,
     FDE(DW_CFA_set_loc, 0x10, 0x10, DW_CFA_set_loc, 0x08, 0x10),
     ENCODING(CFI_PE_UDATA2), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(3))},
    {.name = "set_loc before pc_begin", STD_CIE, FDE(DW_CFA_set_loc, 0xff, 0x0f),
     ENCODING(CFI_PE_UDATA2), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "set_loc past pc_end", STD_CIE, FDE(DW_CFA_set_loc, 0x01, 0x11),
     ENCODING(CFI_PE_UDATA2), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "set_loc truncated", STD_CIE, FDE(DW_CFA_set_loc, 0x10),
     ENCODING(CFI_PE_UDATA2), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "set_loc datarel", STD_CIE, FDE(DW_CFA_set_loc, 0x10, 0x10, 0, 0),
     ENCODING(CFI_PE_DATAREL | CFI_PE_SDATA4), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "set_loc textrel", STD_CIE, FDE(DW_CFA_set_loc, 0x10, 0x10, 0, 0),
     ENCODING(CFI_PE_TEXTREL | CFI_PE_UDATA4), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "set_loc funcrel", STD_CIE, FDE(DW_CFA_set_loc, 0x10, 0x10, 0, 0),
     ENCODING(CFI_PE_FUNCREL | CFI_PE_UDATA4), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "set_loc indirect", STD_CIE, FDE(DW_CFA_set_loc, 0x10, 0x10, 0, 0),
     ENCODING(CFI_PE_INDIRECT | CFI_PE_PCREL | CFI_PE_SDATA4), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "advance_loc in the CIE", CIE(STD_CIE_BYTES, DW_CFA_advance_loc | 1),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_CIE(5))},
    {.name = "set_loc in the CIE", CIE(STD_CIE_BYTES, DW_CFA_set_loc, 0x00, 0x10),
     ENCODING(CFI_PE_UDATA2), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_CIE(5))},
    {FDE_OK("GNU_args_size has no effect", PC0, RSP + 24,
            DW_CFA_GNU_args_size, 16, DW_CFA_def_cfa_offset, 24),
     .regs = {VAL(16, M8(RSP + 16))}, .abi_rest = true},
    {FDE_OK("nop", PC0, RSP + 24, DW_CFA_nop, DW_CFA_def_cfa_offset, 24,
            DW_CFA_nop)},

    {FDE_OK("advance_loc 63", PC0 + 63, RSP + 16, DW_CFA_advance_loc | 63,
            DW_CFA_def_cfa_offset, 16)},
    {FDE_OK("offset with register 63 in the low bits", PC0, CFA0,
            DW_CFA_offset | 63, 2), .regs = {VAL(63, M8(CFA0 - 16))}},
    {FDE_OK("register rule into a high register", PC0, CFA0,
            DW_CFA_register, 17, 3), .regs = {VAL(17, R(3))}},
    {FDE_OK("same_value return address", PC0, CFA0, DW_CFA_same_value, 16),
     .regs = {VAL(16, R(16))}},
    {FDE_OK("val_expression for rsp", PC0, CFA0, DW_CFA_val_expression, 7, 2,
            LIT(8), DW_OP_plus), .regs = {VAL(7, CFA0 + 8)}},
    /* Expressions are evaluated only in the row that is applied: a bad
     * one elsewhere is no error. */
    {FDE_OK("bad expression in another row", PC0 + 4, CFA0,
            DW_CFA_expression, 3, 1, 0xff, DW_CFA_advance_loc | 4,
            DW_CFA_same_value, 3), .regs = {VAL(3, R(3))}},
    {.name = "bad expression in the row applied", STD_CIE,
     FDE(DW_CFA_expression, 3, 1, 0xff, DW_CFA_advance_loc | 4,
         DW_CFA_same_value, 3), .pc = PC0, .status = CFI_E_EXPR},
    {FDE_OK("bad CFA expression replaced", PC0, RSP + 16,
            DW_CFA_def_cfa_expression, 1, 0xff, DW_CFA_def_cfa, 7, 16)},
    CFA_EXPR_OK("op skip over bad bytes", 1, LIT(1), DW_OP_skip, 2, 0, 0xff,
                0x00),
    /* Several errors: the first one in program order (CIE, then FDE) is
     * reported. */
    {.name = "first error in program order", STD_CIE,
     FDE(DW_CFA_restore_state, DW_CFA_set_loc, 0x10, 0x10, 0, 0),
     ENCODING(CFI_PE_DATAREL | CFI_PE_SDATA4), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "first error in program order: GNU_window_save", STD_CIE,
     FDE(DW_CFA_GNU_window_save, 0x17), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "first error in program order: CIE before FDE",
     CIE(STD_CIE_BYTES, DW_CFA_restore | 3), FDE(0x17), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_CIE(5))},

    /* ---------------------------------------------------------------- */
    /* Decoding errors (the offset is the faulty instruction's)          */
    /* ---------------------------------------------------------------- */
    {.name = "unknown opcode 0x17", STD_CIE, FDE(DW_CFA_nop, 0x17), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "unknown opcode 0x1c", STD_CIE, FDE(0x1c), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "unknown opcode 0x3f", STD_CIE, FDE(0x3f), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "unknown opcode in the CIE", CIE(STD_CIE_BYTES, 0x30), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_CIE(5))},
    {.name = "GNU_window_save", STD_CIE, FDE(DW_CFA_GNU_window_save), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "truncated def_cfa", STD_CIE, FDE(DW_CFA_def_cfa, 7), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated offset", STD_CIE, FDE(DW_CFA_offset | 3), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated ULEB", STD_CIE, FDE(DW_CFA_def_cfa_offset, 0x80), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated advance_loc2", STD_CIE, FDE(DW_CFA_advance_loc2, 1),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated advance_loc4", STD_CIE, FDE(DW_CFA_advance_loc4, 1, 0, 0),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated MIPS_advance_loc8", STD_CIE,
     FDE(DW_CFA_MIPS_advance_loc8, 1, 0, 0, 0, 0, 0, 0), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated register", STD_CIE, FDE(DW_CFA_register, 3), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated def_cfa_expression", STD_CIE,
     FDE(DW_CFA_def_cfa_expression), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "truncated GNU_args_size", STD_CIE, FDE(DW_CFA_GNU_args_size),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "expression past the end", STD_CIE,
     FDE(DW_CFA_expression, 3, 5, BREG(7), 0), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "def_cfa_expression past the end", STD_CIE,
     FDE(DW_CFA_nop, DW_CFA_def_cfa_expression, 0xff, 0xff, 0xff, 0xff, 0x0f),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "ULEB overflows 64 bits", STD_CIE,
     FDE(DW_CFA_def_cfa_offset, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff, 0x02), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "ULEB bit 64", STD_CIE,
     FDE(DW_CFA_def_cfa_offset, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
         0x80, 0x02), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "SLEB overflows 64 bits", STD_CIE,
     FDE(DW_CFA_def_cfa_sf, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
         0x80, 0x7e), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "register 128", STD_CIE, FDE(DW_CFA_undefined, 0x80, 0x01), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {FDE_OK("register 127", PC0, CFA0, DW_CFA_undefined, 0x7f),
     .regs = {UNDEF(127)}},
    {.name = "def_cfa register 128", STD_CIE, FDE(DW_CFA_def_cfa, 0x80, 0x01, 8),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "register's second register 128", STD_CIE,
     FDE(DW_CFA_register, 3, 0x80, 0x01), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "restore_extended register 128", STD_CIE,
     FDE(DW_CFA_restore_extended, 0x80, 0x01), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    /* 2^61 × -8 = -2^64: does not fit int64. */
    {.name = "factored offset overflows", STD_CIE,
     FDE(DW_CFA_offset | 3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    /* 2^60 × -8 = -2^63 = INT64_MIN fits; cfa + that wraps. */
    {FDE_OK("factored offset INT64_MIN", PC0, CFA0, DW_CFA_val_offset, 3,
            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10),
     .regs = {VAL(3, CFA0 + 0x8000000000000000ull)}},
    /* -2^60 × -8 = 2^63: does not fit int64. */
    {.name = "signed factored offset overflows", STD_CIE,
     FDE(DW_CFA_offset_extended_sf, 3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
         0x80, 0x70), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "def_cfa_sf offset overflows", STD_CIE,
     FDE(DW_CFA_def_cfa_sf, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
         0x80, 0x70), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "val_offset overflows", STD_CIE,
     FDE(DW_CFA_val_offset, 3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
         0x20), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},

    /* ---------------------------------------------------------------- */
    /* Records and error classes                                          */
    /* ---------------------------------------------------------------- */
    {.name = "PC below the FDE", STD_CIE, .pc = PC0 - 1, .status = CFI_E_NO_FDE},
    {.name = "PC at pc_end", STD_CIE, .pc = PC_END, .status = CFI_E_NO_FDE},
    {.name = "caller PC at pc_begin", STD_CIE, .pc = PC0, .caller = true,
     .status = CFI_E_NO_FDE},
    {.name = "empty FDE", STD_CIE, .pc = PC0,
     OPTIONS(1, -8, 16, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC0, NULL, false),
     .status = CFI_E_NO_FDE},
    {.name = "FDE ending before it begins", STD_CIE, .pc = PC0 + 0x10,
     OPTIONS(1, -8, 16, false, CFI_EH_FRAME, 0x1b, 8, PC_END, PC0, NULL, false),
     .status = CFI_E_MALFORMED},
    {.name = "return address column 128", STD_CIE, .pc = PC0,
     OPTIONS(1, -8, 128, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .status = CFI_E_MALFORMED},
    /* cfi.h step 6: the caller's PC comes from the return address column,
     * here 127 (no rule: undefined), whatever rip's own rule says. */
    {.name = "return address column 127", STD_CIE, .pc = PC0,
     OPTIONS(1, -8, 127, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .status = CFI_OK, .cfa = CFA0, .regs = {UNDEF(16), UNDEF(127)}},
    /* Column 3 (rbx) with no rule keeps the callee's rbx: that is the PC. */
    {.name = "return address column rbx", STD_CIE, .pc = PC0,
     OPTIONS(1, -8, 3, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .status = CFI_OK, .cfa = CFA0,
     .regs = {VAL(16, R(3)), VAL(3, R(3))}},
    /* Column 12 saved at cfa-16: the PC is read there; rip's own rule
     * (stored at cfa-8) is still evaluated, its value not used. */
    {.name = "return address column r12 saved", STD_CIE,
     FDE(DW_CFA_offset | 12, 2), .pc = PC0,
     OPTIONS(1, -8, 12, false, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .status = CFI_OK, .cfa = CFA0,
     .regs = {VAL(16, M8(CFA0 - 16)), VAL(12, M8(CFA0 - 16))}},
    {.name = "restore in the CIE", CIE(STD_CIE_BYTES, DW_CFA_restore | 16),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_CIE(5))},
    {.name = "restore_extended in the CIE",
     CIE(STD_CIE_BYTES, DW_CFA_restore_extended, 16), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_CIE(5))},
    {.name = "restore_state with an empty stack", STD_CIE,
     FDE(DW_CFA_nop, DW_CFA_restore_state), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {FDE_OK("64 nested remember_state", PC0, RSP + 16, REMEMBER_X64,
            DW_CFA_def_cfa_offset, 16)},
    {.name = "65 nested remember_state", STD_CIE,
     FDE(REMEMBER_X64, DW_CFA_remember_state), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(64))},
    {FDE_OK("64 remember then 64 restore", PC0, CFA0, REMEMBER_X64,
            DW_CFA_def_cfa_offset, 16, DW_CFA_offset | 3, 2, RESTORE_X64),
     .regs = {VAL(3, R(3))}},
    {.name = "remember_state in the CIE alone",
     CIE(STD_CIE_BYTES, DW_CFA_remember_state), FDE(DW_CFA_nop), .pc = PC0,
     .status = CFI_OK, .cfa = CFA0},

    /* ---------------------------------------------------------------- */
    /* FACTS.md: semantics that unwinders have got wrong                  */
    /* ---------------------------------------------------------------- */
    /* Rows: [0x1000,0x1004) +8; [0x1004,0x1008) +16; [0x1008,0x100c) +8
     * (restored at 0x1008, the location stays); [0x100c,...) +24. If
     * restore_state brought back the location 0x1000, the last advance
     * would lead to 0x1004 and 0x100a would get +24 (gimli#273). */
#define RESTORE_LOC_FDE DW_CFA_remember_state, DW_CFA_advance_loc | 4,         \
        DW_CFA_def_cfa_offset, 16, DW_CFA_advance_loc | 4,                  \
        DW_CFA_restore_state, DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset, 24
    {FDE_OK("restore_state keeps the location: 0x1002", PC0 + 2, RSP + 8,
            RESTORE_LOC_FDE)},
    {FDE_OK("restore_state keeps the location: 0x1006", PC0 + 6, RSP + 16,
            RESTORE_LOC_FDE)},
    {FDE_OK("restore_state keeps the location: 0x100a", PC0 + 0xa, RSP + 8,
            RESTORE_LOC_FDE)},
    {FDE_OK("restore_state keeps the location: 0x100c", PC0 + 0xc, RSP + 24,
            RESTORE_LOC_FDE)},
    /* The CFA rule and the register rules come back (parca-agent#841). */
    {FDE_OK("restore_state restores the CFA", PC0 + 4, CFA0,
            DW_CFA_remember_state, DW_CFA_def_cfa, 6, 16, DW_CFA_offset | 3, 2,
            DW_CFA_advance_loc | 4, DW_CFA_restore_state),
     .regs = {VAL(3, R(3)), VAL(7, CFA0), VAL(16, RIP0)}, .abi_rest = true},
    {FDE_OK("restore_state restores an expression CFA", PC0 + 4, 0x77,
            DW_CFA_def_cfa_expression, 2, DW_OP_const1u, 0x77,
            DW_CFA_remember_state, DW_CFA_def_cfa, 6, 16,
            DW_CFA_advance_loc | 4, DW_CFA_restore_state)},
    {FDE_OK("restore_state row before the advance", PC0 + 3, R(6) + 16,
            DW_CFA_remember_state, DW_CFA_def_cfa, 6, 16, DW_CFA_offset | 3, 2,
            DW_CFA_advance_loc | 4, DW_CFA_restore_state),
     .regs = {VAL(3, M8(R(6) + 16 - 16))}},
#define NESTED_FDE DW_CFA_remember_state, DW_CFA_def_cfa_offset, 16,           \
        DW_CFA_remember_state, DW_CFA_def_cfa_offset, 24,                   \
        DW_CFA_advance_loc | 1, DW_CFA_restore_state,                       \
        DW_CFA_advance_loc | 1, DW_CFA_restore_state
    {FDE_OK("nested remember: inner", PC0, RSP + 24, NESTED_FDE)},
    {FDE_OK("nested remember: first restore", PC0 + 1, RSP + 16, NESTED_FDE)},
    {FDE_OK("nested remember: second restore", PC0 + 2, RSP + 8, NESTED_FDE)},
    /* restore brings back the CIE's rule for the register. */
    {.name = "restore of a CIE rule", CIE(STD_CIE_BYTES, DW_CFA_offset | 3, 2),
     FDE(DW_CFA_offset | 3, 3, DW_CFA_advance_loc | 1, DW_CFA_restore | 3),
     .pc = PC0 + 1, .status = CFI_OK, .cfa = CFA0,
     .regs = {VAL(3, M8(CFA0 - 16))}},
    {.name = "restore of a CIE rule: before", CIE(STD_CIE_BYTES, DW_CFA_offset | 3, 2),
     FDE(DW_CFA_offset | 3, 3, DW_CFA_advance_loc | 1, DW_CFA_restore | 3),
     .pc = PC0, .status = CFI_OK, .cfa = CFA0, .regs = {VAL(3, M8(CFA0 - 24))}},
    {.name = "restore_extended of a CIE rule",
     CIE(STD_CIE_BYTES, DW_CFA_undefined, 3),
     FDE(DW_CFA_same_value, 3, DW_CFA_restore_extended, 3), .pc = PC0,
     .status = CFI_OK, .cfa = CFA0, .regs = {UNDEF(3)}},
    {FDE_OK("restore of the return address", PC0, CFA0, DW_CFA_undefined, 16,
            DW_CFA_restore | 16), .regs = {VAL(16, RIP0)}},
    /* restore of a register the CIE gave no rule: no rule, the default. */
    {FDE_OK("restore_extended to no rule", PC0, CFA0, DW_CFA_offset | 12, 3,
            DW_CFA_undefined, 0, DW_CFA_restore_extended, 12, DW_CFA_restore | 0),
     .regs = {VAL(12, R(12)), UNDEF(0), VAL(16, RIP0)}, .abi_rest = true},
    /* Every rule reads the callee's registers as they were before the
     * step, whatever the order (libunwind#43). */
    {FDE_OK("rbp's expression reads the callee's rbx", PC0, CFA0,
            DW_CFA_offset | 3, 2, DW_CFA_val_expression, 6, 2, BREG(3), 0),
     .regs = {VAL(3, M8(CFA0 - 16)), VAL(6, R(3))}},
    {FDE_OK("rbx's expression reads the callee's rbp", PC0, CFA0,
            DW_CFA_offset | 6, 2, DW_CFA_val_expression, 3, 2, BREG(6), 0),
     .regs = {VAL(6, M8(CFA0 - 16)), VAL(3, R(6))}},
    {FDE_OK("rbx's expression reads the callee's rsp", PC0, CFA0,
            DW_CFA_val_expression, 3, 2, BREG(7), 0),
     .regs = {VAL(3, RSP), VAL(7, CFA0)}},
    {FDE_OK("rax's register rule reads the callee's rbx", PC0, CFA0,
            DW_CFA_offset | 3, 2, DW_CFA_register, 0, 3),
     .regs = {VAL(3, M8(CFA0 - 16)), VAL(0, R(3))}},
    /* The CFA pushed is this frame's CFA (libunwind#93). */
    {FDE_OK("expression gets this frame's CFA", PC0, R(6) + 16,
            DW_CFA_def_cfa, 6, 16, DW_CFA_val_expression, 3, 2, LIT(0),
            DW_OP_plus), .regs = {VAL(3, R(6) + 16)}},
    /* A caller frame is looked up at PC-1: the FDE (a PC at the start of
     * the next function) and the row (a PC just after an advance). */
    {FDE_OK("caller PC at pc_end uses this FDE", PC_END, RSP + 16,
            DW_CFA_advance_loc2, 0xff, 0, DW_CFA_def_cfa_offset, 16),
     .caller = true},
    {FDE_OK("caller PC just after an advance", PC0 + 4, CFA0,
            DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset, 16), .caller = true},
    {FDE_OK("innermost PC just after an advance", PC0 + 4, RSP + 16,
            DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset, 16)},
    /* An undefined return address is the end of the stack (libunwind#443). */
    {.name = "undefined return address", CIE(DW_CFA_def_cfa, 7, 8,
     DW_CFA_undefined, 16), .pc = PC0, .status = CFI_OK, .cfa = CFA0,
     .regs = {UNDEF(16)}, .abi_rest = true},
    /* A nop-only FDE has the CIE's row (libunwind#285). */
    {FDE_OK("nop-only FDE", PC0 + 0x20, CFA0, DW_CFA_nop, DW_CFA_nop,
            DW_CFA_nop, DW_CFA_nop), .regs = {VAL(16, RIP0), VAL(7, CFA0)},
     .abi_rest = true},
    {.name = "empty FDE program", STD_CIE, .pc = PC0 + 0x20, .status = CFI_OK,
     .cfa = CFA0, .regs = {VAL(16, RIP0)}, .abi_rest = true},
    /* Remembered rows do not cross from the CIE into the FDE. */
    {.name = "remember_state in the CIE, restore_state in the FDE",
     CIE(STD_CIE_BYTES, DW_CFA_remember_state), FDE(DW_CFA_restore_state),
     .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    /* The whole program must be well formed, even after the lookup PC. */
    {.name = "malformed instruction after the lookup PC", STD_CIE,
     FDE(DW_CFA_def_cfa_offset, 16, DW_CFA_advance_loc | 4, 0x17), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(3))},
    {.name = "truncated instruction after the lookup PC", STD_CIE,
     FDE(DW_CFA_advance_loc | 4, DW_CFA_offset | 3), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "restore_state error after the lookup PC", STD_CIE,
     FDE(DW_CFA_advance_loc | 4, DW_CFA_restore_state), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "location error after the lookup PC", STD_CIE,
     FDE(DW_CFA_advance_loc | 4, DW_CFA_advance_loc2, 0, 1), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "GNU_window_save after the lookup PC", STD_CIE,
     FDE(DW_CFA_advance_loc | 4, DW_CFA_GNU_window_save), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(1))},
    /* The PLT CFA: rsp + 8, plus 8 when (rip & 15) >= 11. */
    {.name = "PLT CFA, rip & 15 = 5", STD_CIE, EXPR(PLT_EXPR), .use = AS_CFA,
     .pc = PC0, .callee = {VAL(16, 0x2005)}, .status = CFI_OK, .cfa = RSP + 8,
     .regs = {VAL(16, M8(RSP))}},
    {.name = "PLT CFA, rip & 15 = 10", STD_CIE, EXPR(PLT_EXPR), .use = AS_CFA,
     .pc = PC0, .callee = {VAL(16, 0x201a)}, .status = CFI_OK, .cfa = RSP + 8},
    {.name = "PLT CFA, rip & 15 = 11", STD_CIE, EXPR(PLT_EXPR), .use = AS_CFA,
     .pc = PC0, .callee = {VAL(16, 0x200b)}, .status = CFI_OK, .cfa = RSP + 16,
     .regs = {VAL(16, M8(RSP + 8))}},
    {.name = "PLT CFA, rip & 15 = 15", STD_CIE, EXPR(PLT_EXPR), .use = AS_CFA,
     .pc = PC0, .callee = {VAL(16, 0x200f)}, .status = CFI_OK, .cfa = RSP + 16},
    /* The signal frame (glibc's __restore_rt): cfa = [rsp + 160],
     * rN = [rsp + K]; the CIE says 'S'. */
    {.name = "signal frame", STD_CIE,
     FDE(DW_CFA_def_cfa_expression, 4, BREG(7), 0xa0, 0x01, DW_OP_deref,
         DW_CFA_expression, 8, 2, BREG(7), 40,
         DW_CFA_expression, 6, 3, BREG(7), 0xf8, 0x00,
         DW_CFA_expression, 7, 3, BREG(7), 0xa0, 0x01,
         DW_CFA_expression, 16, 3, BREG(7), 0xa8, 0x01),
     OPTIONS(1, -8, 16, true, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .pc = PC0 + 1, .status = CFI_OK, .cfa = M8(RSP + 160), .signal_frame = true,
     .regs = {VAL(8, M8(RSP + 40)), VAL(6, M8(RSP + 120)), VAL(7, M8(RSP + 160)),
              VAL(16, M8(RSP + 168)), VAL(3, R(3)), UNDEF(0)}},
    {.name = "signal frame flag", STD_CIE, .pc = PC0,
     OPTIONS(1, -8, 16, true, CFI_EH_FRAME, 0x1b, 8, PC0, PC_END, NULL, false),
     .status = CFI_OK, .cfa = CFA0, .signal_frame = true},
    /* ---------------------------------------------------------------- */
    /* AArch64: RA_SIGN_STATE (aadwarf64 Note 8), its opcodes, step 6    */
    /* ---------------------------------------------------------------- */
    {.name = "a64 negate, signed x30 slot: the PC is stripped", A64,
     FDE(NEGATE, A64_FRAME), .pc = PC0 + 4, A64_CALLEE,
     A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 negate, 52 address bits", A64, FDE(NEGATE, A64_FRAME),
     .pc = PC0 + 4, A64_CALLEE, .va_bits = 52,
     A64_AFTER_FRAME(1, 0xa0000deadbeefull)},
    {.name = "a64 negate, bit 55 set: the upper range", A64,
     FDE(NEGATE, A64_FRAME), .pc = PC0 + 4,
     .callee = {VAL(31, A64_HIGH_SP)}, .status = CFI_OK,
     .cfa = A64_HIGH_SP + 16,
     .regs = {VAL(30, SIGNED_HIGH_RA), VAL(32, 0xffff123456789abcull),
              VAL(34, 1)}},
    {.name = "a64 negate twice: back to 0, not stripped", A64,
     FDE(NEGATE, A64_FRAME, DW_CFA_advance_loc | 1, NEGATE), .pc = PC0 + 8,
     A64_CALLEE, A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 negate after the lookup PC: not yet signed", A64,
     FDE(A64_FRAME, NEGATE), .pc = PC0, A64_CALLEE, .status = CFI_OK,
     .cfa = A64_SP, .regs = {VAL(34, 0), UNKNOWN(30), UNKNOWN(32)},
     .abi_rest = true},
    {.name = "a64 negate inside remember_state", A64,
     FDE(NEGATE, A64_FRAME, DW_CFA_remember_state, NEGATE,
         DW_CFA_advance_loc | 1, DW_CFA_restore_state),
     .pc = PC0 + 4, A64_CALLEE, A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 restore_state brings the state back", A64,
     FDE(NEGATE, A64_FRAME, DW_CFA_remember_state, NEGATE,
         DW_CFA_advance_loc | 1, DW_CFA_restore_state),
     .pc = PC0 + 8, A64_CALLEE, A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 negate_ra_state_with_pc: state 2", A64,
     FDE(NEGATE_PC, A64_FRAME), .pc = PC0 + 4, A64_CALLEE,
     A64_AFTER_FRAME(2, 0xdeadbeef)},
    {.name = "a64 negate_ra_state_with_pc twice: 0", A64,
     FDE(NEGATE_PC, A64_FRAME, NEGATE_PC), .pc = PC0 + 4, A64_CALLEE,
     A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 set_ra_state 1", A64, FDE(SET_STATE, 1, 0, A64_FRAME),
     .pc = PC0 + 4, A64_CALLEE, A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 set_ra_state 2, offset -1", A64,
     FDE(SET_STATE, 2, 0x7f, A64_FRAME), .pc = PC0 + 4, A64_CALLEE,
     A64_AFTER_FRAME(2, 0xdeadbeef)},
    {.name = "a64 set_ra_state 0 after a negate", A64,
     FDE(NEGATE, SET_STATE, 0, 0, A64_FRAME), .pc = PC0 + 4, A64_CALLEE,
     A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 set_ra_state over an offset rule", A64,
     FDE(DW_CFA_offset | 34, 3, SET_STATE, 1, 0, A64_FRAME), .pc = PC0 + 4,
     A64_CALLEE, A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 set_ra_state 1, then a negate: 0", A64,
     FDE(NEGATE_PC, SET_STATE, 1, 0, NEGATE, A64_FRAME), .pc = PC0 + 4,
     A64_CALLEE, A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 set_ra_state, offset -2^61 x 4 fits", A64,
     FDE(SET_STATE, 1, SLEB_MINUS_2_61, A64_FRAME), .pc = PC0 + 4,
     A64_CALLEE, A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 set_ra_state, offset 2^61 x 4 overflows", A64,
     FDE(A64_FRAME, SET_STATE, 1, SLEB_2_61), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(7))},
    {.name = "a64 set_ra_state 3 is reserved", A64,
     FDE(A64_FRAME, SET_STATE, 3, 0), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(7))},
    {.name = "a64 set_ra_state 16 is reserved", A64,
     FDE(SET_STATE, 16, 0), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "a64 set_ra_state truncated", A64, FDE(SET_STATE, 1),
     .pc = PC0, A64_CALLEE, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "a64 negate on state 2", A64, FDE(NEGATE_PC, NEGATE), .pc = PC0,
     A64_CALLEE, FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "a64 negate_ra_state_with_pc on state 1", A64,
     FDE(NEGATE, NEGATE_PC), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(1))},
    {.name = "a64 negate on an offset rule", A64,
     FDE(DW_CFA_offset | 34, 1, NEGATE), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(2))},
    {.name = "a64 negate on undefined", A64, FDE(DW_CFA_undefined, 34, NEGATE),
     .pc = PC0, A64_CALLEE, FAILS_AT(CFI_E_MALFORMED, AT_FDE(2))},
    {.name = "a64 negate_ra_state_with_pc on same_value", A64,
     FDE(DW_CFA_same_value, 34, NEGATE_PC), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(2))},
    {.name = "a64 negate on a register rule", A64,
     FDE(DW_CFA_register, 34, 0, NEGATE), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(3))},
    {.name = "a64 negate on expression(lit1)", A64,
     FDE(DW_CFA_expression, 34, 1, LIT(1), NEGATE), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(4))},
    {.name = "a64 negate on val_expression(lit3)", A64,
     FDE(DW_CFA_val_expression, 34, 1, LIT(3), NEGATE), .pc = PC0,
     A64_CALLEE, FAILS_AT(CFI_E_MALFORMED, AT_FDE(4))},
    {.name = "a64 negate on val_expression(lit1; nop)", A64,
     FDE(DW_CFA_val_expression, 34, 2, LIT(1), DW_OP_nop, NEGATE),
     .pc = PC0, A64_CALLEE, FAILS_AT(CFI_E_MALFORMED, AT_FDE(5))},
    {.name = "a64 negate on val_expression(lit1): state 1", A64,
     FDE(DW_CFA_val_expression, 34, 1, LIT(1), NEGATE, A64_FRAME),
     .pc = PC0 + 4, A64_CALLEE, A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 negate_ra_state_with_pc on val_expression(lit2)", A64,
     FDE(DW_CFA_val_expression, 34, 1, LIT(2), NEGATE_PC, A64_FRAME),
     .pc = PC0 + 4, A64_CALLEE, A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 val_expression(lit1) alone: signed", A64,
     FDE(DW_CFA_val_expression, 34, 1, LIT(1), A64_FRAME), .pc = PC0 + 4,
     A64_CALLEE, A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 negate error after the lookup PC", A64,
     FDE(DW_CFA_advance_loc | 1, NEGATE_PC, NEGATE), .pc = PC0, A64_CALLEE,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(2))},
    {.name = "a64 the CIE's error comes first", CIE(A64_CIE_BYTES, NEGATE,
     NEGATE_PC), A64_OPTIONS(false), FDE(SET_STATE, 5, 0), .pc = PC0,
     A64_CALLEE, FAILS_AT(CFI_E_MALFORMED, AT_CIE(4))},
    {.name = "a64 restore brings back the CIE's state", CIE(A64_CIE_BYTES,
     NEGATE), A64_OPTIONS(false),
     FDE(NEGATE, A64_FRAME, DW_CFA_restore | 34), .pc = PC0 + 4, A64_CALLEE,
     A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 the CIE's state, negated in the FDE", CIE(A64_CIE_BYTES,
     NEGATE), A64_OPTIONS(false), FDE(A64_FRAME, NEGATE), .pc = PC0 + 4,
     A64_CALLEE, A64_AFTER_FRAME(0, SIGNED_RA)},
    {.name = "a64 RA_SIGN_STATE undefined: the PC is unknown", A64,
     FDE(DW_CFA_undefined, 34, A64_FRAME), .pc = PC0 + 4, A64_CALLEE,
     .status = CFI_OK, .cfa = A64_CFA,
     .regs = {VAL(30, SIGNED_RA), UNKNOWN(32), UNDEF(34)}},
    {.name = "a64 RA_SIGN_STATE same_value of an unknown: PC unknown", A64,
     FDE(DW_CFA_same_value, 34, A64_FRAME), .pc = PC0 + 4, A64_CALLEE,
     .status = CFI_OK, .cfa = A64_CFA,
     .regs = {VAL(30, SIGNED_RA), UNKNOWN(32), UNKNOWN(34)}},
    {.name = "a64 RA_SIGN_STATE same_value of 1: stripped", A64,
     FDE(DW_CFA_same_value, 34, A64_FRAME), .pc = PC0 + 4,
     .callee = {VAL(31, A64_SP), VAL(34, 1)},
     A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 signed, x30 undefined: the PC is undefined", A64,
     FDE(NEGATE, DW_CFA_undefined, 30), .pc = PC0, A64_CALLEE,
     .status = CFI_OK, .cfa = A64_SP,
     .regs = {UNDEF(30), UNDEF(32), VAL(34, 1)}, .abi_rest = true},
    {.name = "a64 defaults: no rule at all", A64, .pc = PC0,
     .callee = {VAL(31, A64_SP), VAL(72, 0x7272), VAL(19, 0x1919),
                VAL(30, 0x3030)},
     .status = CFI_OK, .cfa = A64_SP,
     .regs = {VAL(72, 0x7272), VAL(19, 0x1919), VAL(34, 0), VAL(30, 0x3030),
              VAL(32, 0x3030), VAL(31, A64_SP), UNKNOWN(79), UNDEF(80)},
     .abi_rest = true},
    {.name = "a64 v8 with a rule", A64, FDE(DW_CFA_undefined, 72), .pc = PC0,
     .callee = {VAL(31, A64_SP), VAL(72, 0x7272), VAL(73, 0x7373)},
     .status = CFI_OK, .cfa = A64_SP,
     .regs = {UNDEF(72), VAL(73, 0x7373), UNKNOWN(32)}, .abi_rest = true},
    {.name = "a64 B key", CIE(A64_CIE_BYTES), A64_OPTIONS(true),
     FDE(NEGATE, A64_FRAME), .pc = PC0 + 4, A64_CALLEE, .ra_b_key = true,
     A64_AFTER_FRAME(1, 0xdeadbeef)},
    {.name = "a64 B key, not signed", CIE(A64_CIE_BYTES), A64_OPTIONS(true),
     .pc = PC0, A64_CALLEE, .ra_b_key = true, .status = CFI_OK,
     .cfa = A64_SP, .regs = {VAL(34, 0), UNKNOWN(32)}, .abi_rest = true},
    /* On x86-64 the AArch64 opcodes are no opcodes, and 0x2d has no
     * meaning; registers from 17 up have no default but undefined. */
    {.name = "x86-64 0x2b is an unknown opcode", STD_CIE,
     FDE(SET_STATE, 1, 0), .pc = PC0, FAILS_AT(CFI_E_MALFORMED, AT_FDE(0))},
    {.name = "x86-64 0x2c is an unknown opcode", STD_CIE,
     FDE(DW_CFA_def_cfa_offset, 16, NEGATE_PC), .pc = PC0,
     FAILS_AT(CFI_E_MALFORMED, AT_FDE(2))},
    {.name = "x86-64 0x2d has no meaning", STD_CIE, FDE(NEGATE), .pc = PC0,
     FAILS_AT(CFI_E_UNSUPPORTED, AT_FDE(0))},
    {.name = "x86-64 registers 34 and 72 are undefined", STD_CIE, .pc = PC0,
     .callee = {VAL(34, 1), VAL(72, 0x7272)}, .status = CFI_OK, .cfa = CFA0,
     .regs = {UNDEF(34), UNDEF(72), VAL(16, RIP0)}, .abi_rest = true},
};

#define NCASES (sizeof cases / sizeof cases[0])

/* ------------------------------------------------------------------ */
/* Engines                                                              */
/* ------------------------------------------------------------------ */

typedef enum cfi_status (*unwind_fde_fn)(const struct cfi_fde *fde,
                                         const struct cfi_request *request,
                                         struct cfi_frame *frame);

struct engine {
    const char *name;
    unwind_fde_fn unwind_fde;
};

/* The interpreter in its two halves (interp.h): the row decoded and kept
 * as a value, then applied. interp_apply_row leaves the registers from
 * CFI_NGPRS up as they were: they are made undefined here first, so
 * that every register compares with what interp_unwind_fde gives. A row
 * too large to keep goes to interp_unwind_fde, as libcfisem-unwind
 * does. */
static enum cfi_status interp_kept_unwind_fde(const struct cfi_fde *fde,
                                              const struct cfi_request *request,
                                              struct cfi_frame *frame)
{
    struct interp_decoded_row row;
    uint64_t lookup_pc = cfi_lookup_pc(request->pc, request->caller_frame);
    enum cfi_status status = interp_decode_row(fde, lookup_pc, &row,
                                               &frame->diag);
    if (status == CFI_E_UNSUPPORTED &&
        !strcmp(frame->diag.message, "row too large to keep"))
        return interp_unwind_fde(fde, request, frame);
    if (status != CFI_OK) {
        frame->status = status;
        frame->cfa = 0;
        frame->signal_frame = false;
        frame->ra_b_key = false;
        return status;
    }
    memset(frame->caller.status + CFI_NGPRS, CFI_REG_UNDEFINED,
           CFI_NREGS - CFI_NGPRS);
    memset(frame->caller.value + CFI_NGPRS, 0,
           (CFI_NREGS - CFI_NGPRS) * sizeof frame->caller.value[0]);
    return interp_apply_row(&row, request, frame);
}

static const struct engine engines[] = {
    {"interp", interp_unwind_fde},
    {"il", sem_unwind_fde},
    {"interp-kept", interp_kept_unwind_fde},
};
#define NENGINES (sizeof engines / sizeof engines[0])

/* ------------------------------------------------------------------ */
/* Running a case                                                       */
/* ------------------------------------------------------------------ */

static size_t put_uleb(uint8_t *out, uint64_t value)
{
    size_t n = 0;
    do {
        uint8_t byte = value & 0x7f;
        value >>= 7;
        out[n++] = byte | (value ? 0x80 : 0);
    } while (value);
    return n;
}

/* The FDE's program: the case's expression in its place, then the case's
 * FDE bytes. */
static size_t build_fde_program(const struct unwind_case *c, uint8_t *out,
                                size_t cap)
{
    size_t n = 0;
    ck_assert_uint_le(c->expr_len + c->fde_len + 16, cap);
    switch (c->use) {
    case AS_CFA:
        out[n++] = DW_CFA_def_cfa_expression;
        break;
    case AS_VAL_RBX:
        out[n++] = DW_CFA_val_expression;
        out[n++] = 3;
        break;
    case AS_ADDR_RBX:
        out[n++] = DW_CFA_expression;
        out[n++] = 3;
        break;
    case NO_EXPR:
    default:
        break;
    }
    if (c->use != NO_EXPR) {
        n += put_uleb(out + n, c->expr_len);
        if (c->expr_len)
            memcpy(out + n, c->expr, c->expr_len);
        n += c->expr_len;
    }
    if (c->fde_len)
        memcpy(out + n, c->fde, c->fde_len);
    return n + c->fde_len;
}

static void build_records(const struct unwind_case *c, const uint8_t *program,
                          size_t len, struct cfi_cie *cie, struct cfi_fde *fde)
{
    const struct cie_options *o = c->options ? c->options : &default_options;
    memset(cie, 0, sizeof *cie);
    cie->section = o->section;
    cie->offset = 0x100;
    cie->length = 0x20;
    cie->version = 1;
    strcpy(cie->augmentation, "zR");
    if (o->signal_frame)
        strcat(cie->augmentation, "S");
    if (o->ra_b_key)
        strcat(cie->augmentation, "B");
    cie->code_align = o->code_align;
    cie->data_align = o->data_align;
    cie->ra_column = o->ra_column;
    cie->arch = o->arch ? o->arch : &cfi_arch_x86_64;
    cie->address_size = o->address_size;
    cie->fde_encoding = o->fde_encoding;
    cie->lsda_encoding = CFI_PE_OMIT;
    cie->personality_encoding = CFI_PE_OMIT;
    cie->signal_frame = o->signal_frame;
    cie->ra_b_key = o->ra_b_key;
    cie->instructions = c->cie;
    cie->instructions_len = c->cie_len;
    cie->instructions_offset = CIE_INSNS_OFFSET;
    memset(fde, 0, sizeof *fde);
    fde->section = o->section;
    fde->offset = 0x200;
    fde->length = 0x20 + len;
    fde->cie_offset = 0x100;
    fde->pc_begin = o->pc_begin;
    fde->pc_end = o->pc_end;
    fde->cie = cie;
    fde->instructions = program;
    fde->instructions_len = len;
    fde->instructions_offset = FDE_INSNS_OFFSET;
    fde->instructions_addr = FDE_INSNS_ADDR;
}

static void build_callee(const struct unwind_case *c, struct cfi_regs *callee)
{
    cfi_regs_clear(callee);
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        cfi_regs_set(callee, reg, R(reg));
    for (size_t i = 0; i < sizeof c->callee / sizeof c->callee[0]; i++) {
        const struct reg_value *set = &c->callee[i];
        if (!set->used)
            continue;
        callee->status[set->reg] = set->status;
        callee->value[set->reg] = set->value;
    }
}

static struct reg_value same_as_callee(unsigned reg,
                                       const struct cfi_regs *callee)
{
    return (struct reg_value){true, reg, callee->status[reg],
                              callee->value[reg]};
}

/* What the ABI default gives register `reg` (written out here, not taken
 * from cfi_arch_default). x86-64: rsp is the CFA; rbx, rbp, r12-r15 keep
 * the callee's value; every other register is undefined. AArch64
 * (AAPCS64, aadwarf64): sp is the CFA; x19-x29 and v8-v15 (72-79) keep
 * the callee's value; RA_SIGN_STATE (34) is 0; every other register,
 * the link register x30 and the PC included, is undefined. */
static struct reg_value abi_default(const struct cfi_arch *arch, unsigned reg,
                                    uint64_t cfa,
                                    const struct cfi_regs *callee)
{
    if (arch == &cfi_arch_aarch64) {
        if (reg == 31)
            return (struct reg_value)VAL(reg, cfa);
        if (reg == 34)
            return (struct reg_value)VAL(reg, 0);
        /* x30, the return address column, keeps the callee's value:
         * at entry it holds the return address. */
        if ((reg >= 19 && reg <= 30) || (reg >= 72 && reg <= 79))
            return same_as_callee(reg, callee);
        return (struct reg_value)UNDEF(reg);
    }
    if (reg == 7)
        return (struct reg_value)VAL(reg, cfa);
    if (reg == 3 || reg == 6 || (reg >= 12 && reg <= 15))
        return same_as_callee(reg, callee);
    return (struct reg_value)UNDEF(reg);
}

/* Appends to a fixed buffer; the message says every mismatch. */
struct report {
    char text[4096];
    size_t len;
    bool ok;
};

static void mismatch(struct report *r, const char *format, ...)
{
    r->ok = false;
    if (r->len >= sizeof r->text - 1)
        return;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(r->text + r->len, sizeof r->text - r->len, format, args);
    va_end(args);
    if (n > 0)
        r->len += (size_t)n;
    if (r->len > sizeof r->text - 1)
        r->len = sizeof r->text - 1;
}

static const char *reg_status_name(unsigned status)
{
    return status == CFI_REG_VALUE       ? "value"
           : status == CFI_REG_UNDEFINED ? "undefined"
           : status == CFI_REG_UNKNOWN   ? "unknown"
                                         : "invalid";
}

static void check_reg(struct report *r, const struct cfi_frame *frame,
                      const struct reg_value *want)
{
    unsigned got_status = frame->caller.status[want->reg];
    uint64_t got = frame->caller.value[want->reg];
    if (got_status != want->status)
        mismatch(r, " r%u: %s (0x%llx), expected %s (0x%llx);", want->reg,
                 reg_status_name(got_status), (unsigned long long)got,
                 reg_status_name(want->status),
                 (unsigned long long)want->value);
    else if (want->status == CFI_REG_VALUE && got != want->value)
        mismatch(r, " r%u: 0x%llx, expected 0x%llx;", want->reg,
                 (unsigned long long)got, (unsigned long long)want->value);
}

static bool listed(const struct unwind_case *c, unsigned reg)
{
    for (size_t i = 0; i < sizeof c->regs / sizeof c->regs[0]; i++)
        if (c->regs[i].used && c->regs[i].reg == reg)
            return true;
    return false;
}

static void check_ok(struct report *r, const struct unwind_case *c,
                     const struct cfi_frame *frame,
                     const struct cfi_regs *callee)
{
    if (frame->cfa != c->cfa)
        mismatch(r, " cfa 0x%llx, expected 0x%llx;",
                 (unsigned long long)frame->cfa, (unsigned long long)c->cfa);
    if (frame->signal_frame != c->signal_frame)
        mismatch(r, " signal_frame %d, expected %d;", frame->signal_frame,
                 c->signal_frame);
    if (frame->ra_b_key != c->ra_b_key)
        mismatch(r, " ra_b_key %d, expected %d;", frame->ra_b_key,
                 c->ra_b_key);
    for (size_t i = 0; i < sizeof c->regs / sizeof c->regs[0]; i++)
        if (c->regs[i].used)
            check_reg(r, frame, &c->regs[i]);
    if (!c->abi_rest)
        return;
    const struct cfi_arch *arch = c->options && c->options->arch
                                      ? c->options->arch
                                      : &cfi_arch_x86_64;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (listed(c, reg))
            continue;
        struct reg_value want = abi_default(arch, reg, frame->cfa, callee);
        check_reg(r, frame, &want);
    }
}

static void check_error(struct report *r, const struct unwind_case *c,
                        const struct cfi_frame *frame)
{
    if (frame->diag.status != c->status)
        mismatch(r, " diag.status %s;", cfi_status_name(frame->diag.status));
    if (!frame->diag.message)
        mismatch(r, " no diag.message;");
    if (c->status == CFI_E_REG_UNKNOWN && frame->diag.reg != c->diag_reg)
        mismatch(r, " diag.reg %d, expected %d;", frame->diag.reg, c->diag_reg);
    if (c->check_offset && frame->diag.offset != c->offset)
        mismatch(r, " diag.offset 0x%llx, expected 0x%llx;",
                 (unsigned long long)frame->diag.offset,
                 (unsigned long long)c->offset);
}

static void run_case(const struct unwind_case *c, const struct engine *engine)
{
    uint8_t program[4096];
    size_t len = build_fde_program(c, program, sizeof program);
    struct cfi_cie cie;
    struct cfi_fde fde;
    build_records(c, len ? program : NULL, len, &cie, &fde);
    struct cfi_regs callee;
    build_callee(c, &callee);
    struct test_memory memory = {c->fault_lo, c->fault_hi, false};
    struct cfi_request request = {c->pc, c->caller, &callee,
                                  {test_read, &memory}, c->va_bits};
    struct cfi_frame *frame = calloc(1, sizeof *frame);
    ck_assert_ptr_nonnull(frame);
    /* The opposite of what is expected: an engine that leaves it is
     * caught (cfi.h step 7 sets it on every path). */
    frame->ra_b_key = !c->ra_b_key;
    enum cfi_status status = engine->unwind_fde(&fde, &request, frame);

    struct report r = {.ok = true};
    if (status != frame->status)
        mismatch(&r, " returned %s but frame->status is %s;",
                 cfi_status_name(status), cfi_status_name(frame->status));
    if (memory.bad_size)
        mismatch(&r, " read memory with a size other than 1, 2, 4, 8;");
    if (frame->status != c->status)
        mismatch(&r, " status %s (%s, offset 0x%llx, reg %d), expected %s;",
                 cfi_status_name(frame->status),
                 frame->diag.message ? frame->diag.message : "no message",
                 (unsigned long long)frame->diag.offset, frame->diag.reg,
                 cfi_status_name(c->status));
    else if (c->status == CFI_OK)
        check_ok(&r, c, frame, &callee);
    else
        check_error(&r, c, frame);
    free(frame);
    ck_assert_msg(r.ok, "%s [%s]:%s", c->name, engine->name, r.text);
}

START_TEST(test_case)
{
    run_case(&cases[(size_t)_i / NENGINES], &engines[(size_t)_i % NENGINES]);
}
END_TEST

/* Step 6 strips a signed return address from the caller's PC whatever
 * the return address column (cfi.h: "whichever column it came from"),
 * the PC register's own column included; every engine is held to it. */
static const struct unwind_case ra_column_pc_case = {
    .name = "a64 return address column 32 (the PC): stripped",
    CIE(A64_CIE_BYTES),
    OPTIONS(4, -8, 32, false, CFI_EH_FRAME, CFI_PE_PCREL | CFI_PE_SDATA4, 8,
            PC0, PC_END, &cfi_arch_aarch64, false),
    FDE(NEGATE, A64_FRAME, DW_CFA_offset | 32, 1), .pc = PC0 + 4,
    A64_CALLEE, A64_AFTER_FRAME(1, 0xdeadbeef),
};

START_TEST(test_ra_column_pc)
{
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
        run_case(&ra_column_pc_case, &engines[i]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Generated cases: stack arity, operations not allowed in CFI          */
/* ------------------------------------------------------------------ */

/* Each operation with the number of entries it needs: with that many
 * (lit1 each) it succeeds, with one fewer it underflows. A lit0 follows,
 * so that the result is 0 either way the stack is left. */
struct arity {
    const char *name;
    uint8_t op[3];
    size_t op_len;
    unsigned needs;
};

static const struct arity arities[] = {
    {"dup", {DW_OP_dup}, 1, 1},     {"drop", {DW_OP_drop}, 1, 1},
    {"over", {DW_OP_over}, 1, 2},   {"pick 1", {DW_OP_pick, 1}, 2, 2},
    {"pick 0", {DW_OP_pick, 0}, 2, 1},
    {"swap", {DW_OP_swap}, 1, 2},   {"rot", {DW_OP_rot}, 1, 3},
    {"deref", {DW_OP_deref}, 1, 1}, {"deref_size 4", {DW_OP_deref_size, 4}, 2, 1},
    {"abs", {DW_OP_abs}, 1, 1},     {"neg", {DW_OP_neg}, 1, 1},
    {"not", {DW_OP_not}, 1, 1},     {"plus_uconst", {DW_OP_plus_uconst, 1}, 2, 1},
    {"and", {DW_OP_and}, 1, 2},     {"div", {DW_OP_div}, 1, 2},
    {"minus", {DW_OP_minus}, 1, 2}, {"mod", {DW_OP_mod}, 1, 2},
    {"mul", {DW_OP_mul}, 1, 2},     {"or", {DW_OP_or}, 1, 2},
    {"plus", {DW_OP_plus}, 1, 2},   {"shl", {DW_OP_shl}, 1, 2},
    {"shr", {DW_OP_shr}, 1, 2},     {"shra", {DW_OP_shra}, 1, 2},
    {"xor", {DW_OP_xor}, 1, 2},     {"eq", {DW_OP_eq}, 1, 2},
    {"ge", {DW_OP_ge}, 1, 2},       {"gt", {DW_OP_gt}, 1, 2},
    {"le", {DW_OP_le}, 1, 2},       {"lt", {DW_OP_lt}, 1, 2},
    {"ne", {DW_OP_ne}, 1, 2},       {"bra", {DW_OP_bra, 0, 0}, 3, 1},
};
#define NARITIES (sizeof arities / sizeof arities[0])

static const uint8_t std_cie[] = {STD_CIE_BYTES};

START_TEST(test_arity)
{
    const struct arity *a = &arities[(size_t)_i / (2 * NENGINES)];
    bool enough = ((size_t)_i / NENGINES) % 2 == 0;
    unsigned entries = enough ? a->needs : a->needs - 1;
    uint8_t expr[16];
    size_t n = 0;
    for (unsigned i = 0; i < entries; i++)
        expr[n++] = LIT(1);
    memcpy(expr + n, a->op, a->op_len);
    n += a->op_len;
    expr[n++] = LIT(0);
    char name[64];
    snprintf(name, sizeof name, "%s with %u entries", a->name, entries);
    struct unwind_case c = {
        .name = name, .cie = std_cie, .cie_len = sizeof std_cie,
        .expr = expr, .expr_len = n, .use = AS_CFA, .pc = PC0,
        .status = enough ? CFI_OK : CFI_E_EXPR, .cfa = 0,
        .check_offset = !enough, .offset = entries,
    };
    run_case(&c, &engines[(size_t)_i % NENGINES]);
}
END_TEST

/* Operations not allowed in CFI (cfi.h) and numbers that are no
 * operation, each after a lit1, with a plausible operand. */
struct bad_op {
    const char *name;
    uint8_t bytes[10];
    size_t len;
};

static const struct bad_op bad_ops[] = {
    {"reg0", {0x50}, 1},                 {"reg31", {0x6f}, 1},
    {"regx", {0x90, 3}, 2},              {"fbreg", {0x91, 0}, 2},
    {"piece", {0x93, 8}, 2},             {"xderef", {0x18}, 1},
    {"xderef_size", {0x95, 8}, 2},       {"push_object_address", {0x97}, 1},
    {"call2", {0x98, 0, 0}, 3},          {"call4", {0x99, 0, 0, 0, 0}, 5},
    {"call_ref", {0x9a, 0, 0, 0, 0, 0, 0, 0, 0}, 9},
    {"form_tls_address", {0x9b}, 1},     {"call_frame_cfa", {0x9c}, 1},
    {"bit_piece", {0x9d, 8, 0}, 3},      {"implicit_value", {0x9e, 1, 0}, 3},
    {"stack_value", {0x9f}, 1},
    {"implicit_pointer", {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10},
    {"addrx", {0xa1, 0}, 2},             {"constx", {0xa2, 0}, 2},
    {"entry_value", {0xa3, 1, 0x30}, 3}, {"const_type", {0xa4, 0, 1, 0}, 4},
    {"regval_type", {0xa5, 0, 0}, 3},    {"deref_type", {0xa6, 8, 0}, 3},
    {"xderef_type", {0xa7, 8, 0}, 3},    {"convert", {0xa8, 0}, 2},
    {"reinterpret", {0xa9, 0}, 2},       {"GNU_push_tls_address", {0xe0}, 1},
    {"GNU_uninit", {0xf0}, 1},           {"GNU_encoded_addr", {0xf1, 0}, 2},
    {"GNU_entry_value", {0xf3, 1, 0x30}, 3},
    {"GNU_parameter_ref", {0xfa, 0, 0, 0, 0}, 5},
    {"unknown 0x00", {0x00}, 1},         {"unknown 0x01", {0x01}, 1},
    {"unknown 0x02", {0x02}, 1},         {"unknown 0x04", {0x04}, 1},
    {"unknown 0x05", {0x05}, 1},         {"unknown 0x07", {0x07}, 1},
    {"unknown 0xaa", {0xaa}, 1},         {"unknown 0xdf", {0xdf}, 1},
    {"unknown 0xff", {0xff}, 1},
};
#define NBAD_OPS (sizeof bad_ops / sizeof bad_ops[0])

START_TEST(test_bad_op)
{
    const struct bad_op *b = &bad_ops[(size_t)_i / NENGINES];
    uint8_t expr[16] = {LIT(1)};
    memcpy(expr + 1, b->bytes, b->len);
    struct unwind_case c = {
        .name = b->name, .cie = std_cie, .cie_len = sizeof std_cie,
        .expr = expr, .expr_len = 1 + b->len, .use = AS_CFA, .pc = PC0,
        .status = CFI_E_EXPR, .check_offset = true, .offset = 1,
    };
    run_case(&c, &engines[(size_t)_i % NENGINES]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Where an expression fails: its operation's offset (cfi.h)            */
/* ------------------------------------------------------------------ */

/* Each expression fails at one operation, not its first: diag.offset is
 * the byte offset of that operation's opcode in the expression, for the
 * CFA's and a register rule's expressions, whatever the error class;
 * the step limit names the operation not executed, an empty stack at the
 * end the expression's length. A saved slot that faults after the
 * expression has no operation: no offset. */
#define AT(st, at) .status = (st), .check_offset = true, .offset = (at)
static const struct unwind_case expr_offsets[] = {
    {.name = "div by zero, 3rd operation", STD_CIE,
     EXPR(LIT(1), LIT(0), DW_OP_div), .use = AS_CFA, .pc = PC0,
     AT(CFI_E_EXPR, 2)},
    {.name = "deref fault after a const4u", STD_CIE,
     EXPR(DW_OP_const4u, 0, 0, 3, 0, DW_OP_deref), .use = AS_CFA, .pc = PC0,
     .fault_lo = 0x30000, .fault_hi = 0x30008, AT(CFI_E_MEMORY, 5)},
    {.name = "breg31 unknown, 3rd operation", STD_CIE,
     EXPR(LIT(1), DW_OP_drop, BREG(31), 0), .use = AS_CFA, .pc = PC0,
     .diag_reg = 31, AT(CFI_E_REG_UNKNOWN, 2)},
    {.name = "65th push overflows", STD_CIE, EXPR(LIT0_X64, LIT(0)),
     .use = AS_CFA, .pc = PC0, AT(CFI_E_EXPR_STACK, 64)},
    {.name = "unknown operation after a 2-byte constu", STD_CIE,
     EXPR(DW_OP_constu, 0x80, 0x01, 0xff), .use = AS_CFA, .pc = PC0,
     AT(CFI_E_EXPR, 3)},
    {.name = "skip's truncated operand", STD_CIE, EXPR(LIT(1), DW_OP_skip, 1),
     .use = AS_CFA, .pc = PC0, AT(CFI_E_EXPR, 1)},
    {.name = "skip past the end", STD_CIE, EXPR(LIT(1), DW_OP_nop,
     DW_OP_skip, 2, 0), .use = AS_CFA, .pc = PC0, AT(CFI_E_EXPR, 2)},
    {.name = "step limit: the skip not executed", STD_CIE,
     EXPR(LIT(1), DW_OP_skip, 0xfd, 0xff), .use = AS_CFA, .pc = PC0,
     AT(CFI_E_STEP_LIMIT, 1)},
    {.name = "empty stack at the end: the length", STD_CIE,
     EXPR(LIT(1), DW_OP_nop, DW_OP_drop), .use = AS_CFA, .pc = PC0,
     AT(CFI_E_EXPR, 3)},
    {.name = "val_expression: 4th operation underflows", STD_CIE,
     EXPR(LIT(1), DW_OP_drop, DW_OP_drop, DW_OP_drop), .use = AS_VAL_RBX,
     .pc = PC0, AT(CFI_E_EXPR, 3)},
    {.name = "expression: deref fault, 2nd operation", STD_CIE,
     EXPR(DW_OP_const4u, 0, 0, 3, 0, DW_OP_deref), .use = AS_ADDR_RBX,
     .pc = PC0, .fault_lo = 0x30000, .fault_hi = 0x30008,
     AT(CFI_E_MEMORY, 5)},
    {.name = "expression: the saved slot faults, no operation", STD_CIE,
     EXPR(DW_OP_const4u, 0, 0, 3, 0), .use = AS_ADDR_RBX, .pc = PC0,
     .fault_lo = 0x30000, .fault_hi = 0x30008,
     AT(CFI_E_MEMORY, CFI_NO_OFFSET)},
};
#undef AT
#define NEXPR_OFFSETS (sizeof expr_offsets / sizeof expr_offsets[0])

START_TEST(test_expr_error_offset)
{
    run_case(&expr_offsets[(size_t)_i / NENGINES],
             &engines[(size_t)_i % NENGINES]);
}
END_TEST

/* Which meaning a frame's diag.offset has: the expression's when an
 * operation failed, the section's for an instruction. */
START_TEST(test_diag_in_expression)
{
    struct cfi_diag diag = {CFI_E_EXPR, "", 2, -1};
    ck_assert(cfi_diag_in_expression(&diag));
    diag.status = CFI_E_STEP_LIMIT;
    ck_assert(cfi_diag_in_expression(&diag));
    diag.status = CFI_E_MEMORY;
    ck_assert(cfi_diag_in_expression(&diag));
    diag.offset = CFI_NO_OFFSET;
    ck_assert(!cfi_diag_in_expression(&diag));
    diag = (struct cfi_diag){CFI_E_MALFORMED, "", 0x2c, -1};
    ck_assert(!cfi_diag_in_expression(&diag));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Lookup in a file: the PC-1 rule also picks the FDE                   */
/* ------------------------------------------------------------------ */

static void put32(uint8_t *out, uint32_t value)
{
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(value >> (8 * i));
}

#define SECTION_ADDR 0x3000u

/* A .eh_frame at SECTION_ADDR: the usual CIE ("zR", pcrel sdata4), FDE 1
 * [0x1000,0x1010) "advance_loc 4; def_cfa_offset 16", FDE 2
 * [0x1010,0x1020) "def_cfa_offset 32", and the terminator. */
static size_t build_eh_frame(uint8_t *s)
{
    static const uint8_t cie[] = {
        20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
        STD_CIE_BYTES, DW_CFA_nop, DW_CFA_nop,
    };
    memcpy(s, cie, sizeof cie); /* 24 bytes */
    put32(s + 24, 16);
    put32(s + 28, 28);                                 /* back to the CIE */
    put32(s + 32, (uint32_t)(0x1000 - (SECTION_ADDR + 32)));
    put32(s + 36, 0x10);
    const uint8_t fde1[] = {0, DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset,
                            16};
    memcpy(s + 40, fde1, sizeof fde1);
    put32(s + 44, 16);
    put32(s + 48, 48);
    put32(s + 52, (uint32_t)(0x1010 - (SECTION_ADDR + 52)));
    put32(s + 56, 0x10);
    const uint8_t fde2[] = {0, DW_CFA_def_cfa_offset, 32, DW_CFA_nop};
    memcpy(s + 60, fde2, sizeof fde2);
    put32(s + 64, 0);
    return 68;
}

typedef enum cfi_status (*unwind_file_fn)(const struct cfi_file *file,
                                          const struct cfi_request *request,
                                          struct cfi_frame *frame);

static enum cfi_status sem_unwind_file(const struct cfi_file *file,
                                       const struct cfi_request *request,
                                       struct cfi_frame *frame)
{
    struct sem_file_il *il = NULL;
    enum cfi_status status = sem_file_il_build(file, &il);
    if (status != CFI_OK)
        return status;
    status = sem_unwind(il, request, frame);
    sem_file_il_free(il);
    return status;
}

static const struct {
    const char *name;
    unwind_file_fn unwind;
} file_engines[] = {
    {"interp", interp_unwind},
    {"il", sem_unwind_file},
};

static const struct {
    uint64_t pc;
    bool caller;
    enum cfi_status status;
    uint64_t cfa;
} file_requests[] = {
    {0x1010, true, CFI_OK, RSP + 16},  /* PC-1 is in FDE 1, after advance */
    {0x1010, false, CFI_OK, RSP + 32}, /* FDE 2 */
    {0x1004, true, CFI_OK, RSP + 8},   /* FDE 1, before the advance */
    {0x1020, true, CFI_OK, RSP + 32},  /* PC-1 is FDE 2's last byte */
    {0x1020, false, CFI_E_NO_FDE, 0},
    {0x1000, true, CFI_E_NO_FDE, 0},
};

START_TEST(test_file_lookup)
{
    size_t which = (size_t)_i / 2;
    uint8_t section[128];
    size_t size = build_eh_frame(section);
    struct cfi_file *file = NULL;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_from_section(section, size, CFI_EH_FRAME,
                                           SECTION_ADDR, &file, &diag),
                     CFI_OK);
    struct cfi_regs callee;
    cfi_regs_clear(&callee);
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        cfi_regs_set(&callee, reg, R(reg));
    struct test_memory memory = {0, 0, false};
    struct cfi_request request = {file_requests[which].pc,
                                  file_requests[which].caller, &callee,
                                  {test_read, &memory}, 0};
    struct cfi_frame frame;
    memset(&frame, 0, sizeof frame);
    file_engines[_i % 2].unwind(file, &request, &frame);
    ck_assert_msg(frame.status == file_requests[which].status,
                  "[%s] pc 0x%llx caller %d: status %s",
                  file_engines[_i % 2].name,
                  (unsigned long long)request.pc, request.caller_frame,
                  cfi_status_name(frame.status));
    if (frame.status == CFI_OK)
        ck_assert_msg(frame.cfa == file_requests[which].cfa,
                      "[%s] pc 0x%llx caller %d: cfa 0x%llx",
                      file_engines[_i % 2].name,
                      (unsigned long long)request.pc, request.caller_frame,
                      (unsigned long long)frame.cfa);
    cfi_file_close(file);
}
END_TEST

/* interp_unwind_memo answers as interp_unwind, request after request:
 * each request in two states (every register 0x100 apart, so another
 * CFA), the second served by the kept row, then the next request; the
 * whole list twice, so that rows and errors are found again after
 * others. */
START_TEST(test_interp_memo_same_answers)
{
    uint8_t section[128];
    size_t size = build_eh_frame(section);
    struct cfi_file *file = NULL;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_from_section(section, size, CFI_EH_FRAME,
                                           SECTION_ADDR, &file, &diag),
                     CFI_OK);
    struct interp_memo *memo = malloc(interp_memo_size());
    ck_assert_ptr_nonnull(memo);
    interp_memo_clear(memo);
    const size_t n = sizeof file_requests / sizeof file_requests[0];
    static struct cfi_frame plain, kept;
    for (size_t i = 0; i < 4 * n; i++) {
        size_t which = (i / 2) % n;
        uint64_t shift = (i % 2) * 0x100;
        struct cfi_regs callee;
        cfi_regs_clear(&callee);
        for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
            cfi_regs_set(&callee, reg, R(reg) + shift);
        struct test_memory memory = {0, 0, false};
        struct cfi_request request = {file_requests[which].pc,
                                      file_requests[which].caller, &callee,
                                      {test_read, &memory}, 0};
        memset(&plain, 0x5a, sizeof plain);
        memset(&kept, 0x5a, sizeof kept);
        interp_unwind(file, &request, &plain);
        interp_unwind_memo(file, &request, &kept, memo);
        ck_assert_msg(kept.status == file_requests[which].status &&
                          (kept.status != CFI_OK ||
                           kept.cfa == file_requests[which].cfa + shift),
                      "request %zu: status %s, cfa 0x%llx", i,
                      cfi_status_name(kept.status),
                      (unsigned long long)kept.cfa);
        ck_assert_int_eq(kept.status, plain.status);
        ck_assert_uint_eq(kept.cfa, plain.cfa);
        ck_assert_int_eq(kept.signal_frame, plain.signal_frame);
        ck_assert_int_eq(kept.ra_b_key, plain.ra_b_key);
        ck_assert_int_eq(kept.diag.status, plain.diag.status);
        ck_assert_uint_eq(kept.diag.offset, plain.diag.offset);
        ck_assert_int_eq(kept.diag.reg, plain.diag.reg);
        ck_assert_str_eq(kept.diag.message, plain.diag.message);
        ck_assert(!memcmp(&kept.caller, &plain.caller, sizeof kept.caller));
    }
    free(memo);
    cfi_file_close(file);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The interpreter's own promises (interp.h)                            */
/* ------------------------------------------------------------------ */

/* Unwinds `program` under the standard CIE with the default callee. */
static void interp_run(const uint8_t *program, size_t len, uint64_t pc,
                       struct cfi_frame *frame, struct cfi_regs *callee)
{
    static struct unwind_case c;
    memset(&c, 0, sizeof c);
    c.cie = std_cie;
    c.cie_len = sizeof std_cie;
    static struct cfi_cie cie;
    static struct cfi_fde fde;
    build_records(&c, program, len, &cie, &fde);
    build_callee(&c, callee);
    struct test_memory memory = {0, 0, false};
    struct cfi_request request = {pc, false, callee, {test_read, &memory}, 0};
    interp_unwind_fde(&fde, &request, frame);
}

/* Errors that are no instruction's have no section offset: the CFA
 * register unknown and no FDE have none at all; an expression's error
 * has its operation's offset in the expression (test_expr_error_offset). */
START_TEST(test_interp_no_offset)
{
    static struct cfi_frame frame;
    struct cfi_regs callee;
    const uint8_t cfa_r20[] = {DW_CFA_def_cfa, 20, 8};
    interp_run(cfa_r20, sizeof cfa_r20, PC0, &frame, &callee);
    ck_assert_int_eq(frame.status, CFI_E_REG_UNKNOWN);
    ck_assert_uint_eq(frame.diag.offset, CFI_NO_OFFSET);
    const uint8_t div0[] = {DW_CFA_def_cfa_expression, 3, LIT(1), LIT(0),
                            DW_OP_div};
    interp_run(div0, sizeof div0, PC0, &frame, &callee);
    ck_assert_int_eq(frame.status, CFI_E_EXPR);
    ck_assert_uint_eq(frame.diag.offset, 2);
    ck_assert_int_eq(frame.diag.reg, -1);
    interp_run(div0, sizeof div0, PC_END, &frame, &callee);
    ck_assert_int_eq(frame.status, CFI_E_NO_FDE);
    ck_assert_uint_eq(frame.diag.offset, CFI_NO_OFFSET);
    interp_run(NULL, 0, PC0, &frame, &callee);
    ck_assert_int_eq(frame.status, CFI_OK);
    ck_assert_int_eq(frame.diag.status, CFI_OK);
}
END_TEST

/* request->callee may be &frame->caller: rules still read the callee. */
START_TEST(test_interp_in_place)
{
    static struct cfi_frame frame;
    const uint8_t program[] = {DW_CFA_offset | 3, 2, DW_CFA_val_expression, 6,
                               2, BREG(3), 0};
    struct cfi_regs scratch;
    interp_run(program, sizeof program, PC0, &frame, &scratch);
    ck_assert_int_eq(frame.status, CFI_OK);
    /* Now unwind again with the caller's registers as the callee. */
    static struct unwind_case c;
    static struct cfi_cie cie;
    static struct cfi_fde fde;
    memset(&c, 0, sizeof c);
    c.cie = std_cie;
    c.cie_len = sizeof std_cie;
    build_records(&c, program, sizeof program, &cie, &fde);
    uint64_t rsp = frame.caller.value[7], rbx = frame.caller.value[3];
    struct test_memory memory = {0, 0, false};
    struct cfi_request request = {PC0, false, &frame.caller,
                                  {test_read, &memory}, 0};
    interp_unwind_fde(&fde, &request, &frame);
    ck_assert_int_eq(frame.status, CFI_OK);
    ck_assert_uint_eq(frame.cfa, rsp + 8);
    ck_assert_uint_eq(frame.caller.value[3], M8(rsp + 8 - 16));
    ck_assert_uint_eq(frame.caller.value[6], rbx);
}
END_TEST

/* A row with more registers with a rule than a kept row holds is no
 * error of the CFI: interp_decode_row says it cannot keep it, and
 * interp_unwind_fde unwinds it. */
START_TEST(test_interp_row_too_large)
{
    uint8_t program[2 * 40];
    size_t len = 0;
    for (unsigned reg = 20; reg < 20 + INTERP_ROW_RULES + 1; reg++) {
        program[len++] = DW_CFA_undefined;
        program[len++] = (uint8_t)reg;
    }
    static struct unwind_case c;
    static struct cfi_cie cie;
    static struct cfi_fde fde;
    memset(&c, 0, sizeof c);
    c.cie = std_cie;
    c.cie_len = sizeof std_cie;
    build_records(&c, program, len, &cie, &fde);
    struct interp_decoded_row row;
    struct cfi_diag diag;
    ck_assert_int_eq(interp_decode_row(&fde, PC0, &row, &diag),
                     CFI_E_UNSUPPORTED);
    ck_assert_str_eq(diag.message, "row too large to keep");
    static struct cfi_frame frame;
    struct cfi_regs callee;
    interp_run(program, len, PC0, &frame, &callee);
    ck_assert_int_eq(frame.status, CFI_OK);
}
END_TEST

static Suite *unwind_suite(void)
{
    Suite *s = suite_create("unwind");
    TCase *tc = tcase_create("cases");
    tcase_add_loop_test(tc, test_case, 0, (int)(NCASES * NENGINES));
    suite_add_tcase(s, tc);
    tc = tcase_create("generated");
    tcase_add_loop_test(tc, test_arity, 0, (int)(NARITIES * 2 * NENGINES));
    tcase_add_loop_test(tc, test_bad_op, 0, (int)(NBAD_OPS * NENGINES));
    suite_add_tcase(s, tc);
    tc = tcase_create("expression offsets");
    tcase_add_loop_test(tc, test_expr_error_offset, 0,
                        (int)(NEXPR_OFFSETS * NENGINES));
    tcase_add_test(tc, test_diag_in_expression);
    suite_add_tcase(s, tc);
    tc = tcase_create("file");
    tcase_add_loop_test(tc, test_file_lookup, 0,
                        (int)(2 * sizeof file_requests / sizeof file_requests[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("interp");
    tcase_add_test(tc, test_ra_column_pc);
    tcase_add_test(tc, test_interp_no_offset);
    tcase_add_test(tc, test_interp_in_place);
    tcase_add_test(tc, test_interp_memo_same_answers);
    tcase_add_test(tc, test_interp_row_too_large);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(unwind_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
