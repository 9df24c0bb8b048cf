/* SPDX-License-Identifier: MIT */
/* internal.h — what the files of interp/ share and nobody else sees.
 *
 *   leb.c      bounded readers: fixed-size little-endian, ULEB128, SLEB128
 *   decode.c   the DW_CFA decoder: one instruction at a time, operands
 *              read, checked and scaled by the alignment factors
 *   run.c      executing the CIE's program then the FDE's, one function
 *              per opcode, giving the row in effect at the lookup PC
 *   expr.c     the DWARF expression stack machine (DW_OP)
 *   eval.c     applying a row to the callee's registers: CFA, then every
 *              register (cfi.h, steps 4 and 5)
 *   unwind.c   interp_unwind_fde: the steps of cfi.h in order; its two
 *              halves, interp_decode_row and interp_apply_row
 *   lookup.c   interp_unwind, interp_unwind_memo: FDE lookup in a
 *              loaded file
 *
 * Words used throughout: a *program* is the instruction bytes of a CIE or
 * of an FDE; the *location* is the address the row being built applies
 * from; the *lookup PC* is the address whose row is wanted (PC, or PC-1
 * for a caller frame). */
#ifndef CFISEM_INTERP_INTERNAL_H
#define CFISEM_INTERP_INTERNAL_H

#include "interp.h"

/* ------------------------------------------------------------------ */
/* Opcodes                                                             */
/* ------------------------------------------------------------------ */

/* Every DW_CFA opcode (DWARF 5 §6.4.2, §7.24, the GNU ones seen in
 * x86-64 binaries, and AArch64's vendor ones, aadwarf64 "Call frame
 * instructions"): X(name, number, operand shape). The three opcodes
 * that carry an operand in their low six bits are listed by their high
 * two bits (advance_loc 0x40, offset 0x80, restore 0xc0).
 *
 * Shapes: how the operands are laid out and what they mean once decoded.
 *   NONE            no operand
 *   ADDRESS         a target address (.debug_frame) or a pointer encoded
 *                   with the CIE's 'R' encoding (.eh_frame)
 *   DELTA_LOW       low six bits, times the code alignment factor
 *   DELTA1..DELTA8  1, 2, 4, 8-byte unsigned delta, times the factor
 *   REG             ULEB register
 *   LOW_REG         register in the low six bits
 *   REG_REG         two ULEB registers
 *   REG_UFACTORED   ULEB register, ULEB offset times the data factor
 *   LOW_REG_UFACTORED  same, the register in the low six bits
 *   REG_SFACTORED   ULEB register, SLEB offset times the data factor
 *   REG_NFACTORED   ULEB register, ULEB offset times the factor, negated
 *   REG_UNSCALED    ULEB register, ULEB offset not factored
 *   UNSCALED        ULEB number not factored
 *   SFACTORED       SLEB offset times the data factor
 *   EXPR            ULEB length, then that many bytes of DWARF expression
 *   REG_EXPR        ULEB register, then an EXPR
 *   VENDOR_NONE     no operand; an opcode only where the CIE's architecture
 *                   gives the number a meaning (cfi_arch_vendor_op), else
 *                   unknown
 *   VENDOR_STATE    ULEB number, SLEB offset times the CODE alignment
 *                   factor; an opcode only where, as VENDOR_NONE */
#define INTERP_CFA_OPCODES(X)                                              \
    X(nop, 0x00, NONE)                                                      \
    X(set_loc, 0x01, ADDRESS)                                               \
    X(advance_loc1, 0x02, DELTA1)                                           \
    X(advance_loc2, 0x03, DELTA2)                                           \
    X(advance_loc4, 0x04, DELTA4)                                           \
    X(offset_extended, 0x05, REG_UFACTORED)                                 \
    X(restore_extended, 0x06, REG)                                          \
    X(undefined, 0x07, REG)                                                 \
    X(same_value, 0x08, REG)                                                \
    X(register, 0x09, REG_REG)                                              \
    X(remember_state, 0x0a, NONE)                                           \
    X(restore_state, 0x0b, NONE)                                            \
    X(def_cfa, 0x0c, REG_UNSCALED)                                          \
    X(def_cfa_register, 0x0d, REG)                                          \
    X(def_cfa_offset, 0x0e, UNSCALED)                                       \
    X(def_cfa_expression, 0x0f, EXPR)                                       \
    X(expression, 0x10, REG_EXPR)                                           \
    X(offset_extended_sf, 0x11, REG_SFACTORED)                              \
    X(def_cfa_sf, 0x12, REG_SFACTORED)                                      \
    X(def_cfa_offset_sf, 0x13, SFACTORED)                                   \
    X(val_offset, 0x14, REG_UFACTORED)                                      \
    X(val_offset_sf, 0x15, REG_SFACTORED)                                   \
    X(val_expression, 0x16, REG_EXPR)                                       \
    X(MIPS_advance_loc8, 0x1d, DELTA8)                                      \
    X(AARCH64_set_ra_state, 0x2b, VENDOR_STATE)                             \
    X(AARCH64_negate_ra_state_with_pc, 0x2c, VENDOR_NONE)                   \
    X(GNU_window_save, 0x2d, NONE)                                          \
    X(GNU_args_size, 0x2e, UNSCALED)                                        \
    X(GNU_negative_offset_extended, 0x2f, REG_NFACTORED)                    \
    X(advance_loc, 0x40, DELTA_LOW)                                         \
    X(offset, 0x80, LOW_REG_UFACTORED)                                      \
    X(restore, 0xc0, LOW_REG)

enum interp_cfa_opcode {
#define INTERP_OPCODE_ENUM(name, number, shape) INTERP_CFA_##name = number,
    INTERP_CFA_OPCODES(INTERP_OPCODE_ENUM)
#undef INTERP_OPCODE_ENUM
};

/* ------------------------------------------------------------------ */
/* Programs and instructions                                           */
/* ------------------------------------------------------------------ */

/* One program (the CIE's initial instructions or the FDE's instructions)
 * and what is needed to decode it. */
struct interp_program {
    const uint8_t *bytes;
    size_t len;
    uint64_t section_offset;  /* of bytes[0], for diagnostics */
    uint64_t addr;            /* file address of bytes[0] (pcrel set_loc) */
    uint64_t code_align;
    int64_t data_align;
    enum cfi_section section;
    uint8_t fde_encoding;     /* the CIE's 'R' encoding */
    uint8_t address_size;
    bool in_cie;
    const struct cfi_arch *arch; /* the CIE's: which vendor opcodes exist */
};

/* The two programs of an FDE, and its address range. A rule *source*
 * (see struct interp_row) numbers the bytes of both as one stream: the
 * CIE's first, then the FDE's. */
struct interp_programs {
    const struct cfi_arch *arch; /* the CIE's */
    struct interp_program cie;
    struct interp_program fde;
    uint64_t pc_begin;
    uint64_t pc_end;
};

/* One decoded instruction. Operands are checked (registers below
 * CFI_NREGS, no overflow) and scaled as the shape says. */
struct interp_insn {
    enum interp_cfa_opcode opcode;
    size_t at;              /* offset of its first byte in the program */
    size_t next;            /* offset of the next instruction */
    unsigned reg;           /* REG*, LOW_REG*: the register */
    unsigned reg2;          /* REG_REG: the second register */
    int64_t offset;         /* *FACTORED, VENDOR_STATE: in bytes */
    uint64_t number;        /* *UNSCALED, VENDOR_STATE: as written */
    uint64_t delta;         /* DELTA*: bytes to advance */
    uint64_t address;       /* ADDRESS: the new location */
    const uint8_t *expr;    /* EXPR, REG_EXPR */
    size_t expr_len;
};

/* Decodes the instruction at program->bytes[at] (at < len). On error
 * returns CFI_E_MALFORMED or CFI_E_UNSUPPORTED with a fixed *message;
 * CFI_E_INTERNAL when at >= len (the caller is wrong). */
enum cfi_status interp_decode(const struct interp_program *program, size_t at,
                              struct interp_insn *insn, const char **message);

/* ------------------------------------------------------------------ */
/* Rows                                                                */
/* ------------------------------------------------------------------ */

enum interp_cfa_kind {
    INTERP_CFA_NONE = 0,     /* no CFA rule given yet */
    INTERP_CFA_REG_OFFSET,   /* reg + offset (mod 2^64) */
    INTERP_CFA_EXPR,         /* the value of expr, nothing pushed first */
};

struct interp_cfa {
    enum interp_cfa_kind kind;
    unsigned reg;
    uint64_t offset;         /* two's complement: a signed offset wraps */
    const uint8_t *expr;
    size_t expr_len;
};

/* A register's rule is named by the instruction that gave it: source 0
 * means "no rule" (the ABI default applies), source s > 0 the instruction
 * whose first byte is byte s-1 of the CIE-then-FDE stream. The rule
 * itself (undefined, offset(n), expression(E), ...) is that instruction,
 * decoded again when the row is applied. The few sources from
 * INTERP_SOURCE_STATE(0) up name no instruction: they are a return
 * address state (AArch64's RA_SIGN_STATE column), the value
 * INTERP_SOURCE_STATE(s) gives state s, which no one instruction states
 * (a negate gives the state its column had, toggled).
 *
 * Why not a tagged union per register: a row is copied on every
 * remember_state, and 64 remembered rows of 128 full rules would not fit
 * the stack budget of one call; 4 bytes a register keep a row at about
 * 550 bytes. */
typedef uint32_t interp_source;

#define INTERP_SOURCE_STATE(s)                                             \
    ((interp_source)(UINT32_MAX - CFI_RA_STATE_MAX + (s)))

/* Whether `source` is a return address state, and which. */
static inline bool interp_source_is_state(interp_source source)
{
    return source >= INTERP_SOURCE_STATE(0);
}

static inline uint64_t interp_source_state(interp_source source)
{
    return source - INTERP_SOURCE_STATE(0);
}

/* Decodes again the instruction that `source` (not 0, not a state)
 * names; CFI_E_INTERNAL when it does not decode: it did when the row
 * was built. */
enum cfi_status interp_decode_source(const struct interp_programs *programs,
                                     interp_source source,
                                     struct interp_insn *insn);

#define INTERP_RULE_WORDS ((CFI_NREGS + 63) / 64)

struct interp_row {
    struct interp_cfa cfa;
    interp_source source[CFI_NREGS];
    /* Bit r set when source[r] != 0: finds the few registers with a rule
     * without looking at all CFI_NREGS. */
    uint64_t has_rule[INTERP_RULE_WORDS];
};

/* source[reg] := source, keeping has_rule in step. */
static inline void interp_row_set(struct interp_row *row, unsigned reg,
                                  interp_source source)
{
    uint64_t bit = (uint64_t)1 << (reg % 64);
    row->source[reg] = source;
    if (source != 0)
        row->has_rule[reg / 64] |= bit;
    else
        row->has_rule[reg / 64] &= ~bit;
}

/* Bound on nested remember_state (deeper is malformed). */
#define INTERP_REMEMBER_MAX 64

/* Runs the CIE's program, then the FDE's, to their ends, and gives the
 * row in effect at lookup_pc (in [pc_begin, pc_end)). An error anywhere
 * in either program fails, diag->offset being the section offset of the
 * faulty instruction. */
enum cfi_status interp_find_row(const struct interp_programs *programs,
                                uint64_t lookup_pc, struct interp_row *row,
                                struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Applying a row                                                      */
/* ------------------------------------------------------------------ */

/* Steps 4 and 5 of cfi.h: fills frame->cfa and frame->caller, or returns
 * the first error with frame->diag filled. */
enum cfi_status interp_eval_row(const struct interp_programs *programs,
                                const struct interp_row *row,
                                const struct cfi_regs *callee,
                                struct cfi_memory memory,
                                struct cfi_frame *frame);

/* A row kept for later (interp.h): its rules decoded, in increasing
 * register order; CFI_E_UNSUPPORTED when there are too many. */
enum cfi_status interp_keep_rules(const struct interp_programs *programs,
                                  const struct interp_row *row,
                                  struct interp_decoded_row *kept,
                                  struct cfi_diag *diag);
/* interp_eval_row on a kept row. */
enum cfi_status interp_eval_kept(const struct interp_decoded_row *kept,
                                 const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 struct cfi_frame *frame);

/* Evaluates a DWARF expression as cfi.h defines it, the stack holding
 * *initial first when initial is non-NULL. */
enum cfi_status interp_eval_expr(const uint8_t *bytes, size_t len,
                                 const struct cfi_regs *callee,
                                 struct cfi_memory memory,
                                 const uint64_t *initial, uint64_t *result,
                                 struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Reading bytes                                                       */
/* ------------------------------------------------------------------ */

enum interp_read {
    INTERP_READ_OK,
    INTERP_READ_TRUNCATED,  /* the field runs past the end */
    INTERP_READ_OVERFLOW,   /* a LEB128 value that does not fit 64 bits */
};

/* Each reads at bytes[*pos], with bytes[0 .. len) readable, and advances
 * *pos past the field only on success. */
enum interp_read interp_read_fixed(const uint8_t *bytes, size_t len,
                                   size_t *pos, unsigned size,
                                   uint64_t *value);
enum interp_read interp_read_uleb_long(const uint8_t *bytes, size_t len,
                                       size_t *pos, uint64_t *value);
enum interp_read interp_read_sleb_long(const uint8_t *bytes, size_t len,
                                       size_t *pos, int64_t *value);

/* LEB128 readers, with the one-byte case (nearly all of them) inline. */
static inline enum interp_read interp_read_uleb(const uint8_t *bytes,
                                                size_t len, size_t *pos,
                                                uint64_t *value)
{
    if (*pos < len && bytes[*pos] < 0x80) {
        *value = bytes[(*pos)++];
        return INTERP_READ_OK;
    }
    return interp_read_uleb_long(bytes, len, pos, value);
}

static inline enum interp_read interp_read_sleb(const uint8_t *bytes,
                                                size_t len, size_t *pos,
                                                int64_t *value)
{
    if (*pos < len && bytes[*pos] < 0x80) {
        uint8_t byte = bytes[(*pos)++];
        *value = byte < 0x40 ? byte : (int64_t)byte - 0x80;
        return INTERP_READ_OK;
    }
    return interp_read_sleb_long(bytes, len, pos, value);
}

/* Two's complement view of a 64-bit word, without implementation-defined
 * conversions. */
static inline int64_t interp_signed(uint64_t value)
{
    return value <= INT64_MAX ? (int64_t)value : -(int64_t)(~value) - 1;
}

/* interp_unwind_fde, keeping the decoded row in *memo for a later
 * request at the same FDE and lookup PC (interp_unwind_memo, lookup.c). */
enum cfi_status interp_unwind_fde_memo(const struct cfi_fde *fde,
                                       const struct cfi_request *request,
                                       struct cfi_frame *frame,
                                       struct interp_memo *memo);

#endif
