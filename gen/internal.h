/* SPDX-License-Identifier: MIT */
/* internal.h — the generator's private types, shared by the files of gen/.
 *
 * A program is a list of functions (struct gen_fde). A function is a list
 * of groups: the directives written at one address, then the code bytes
 * that follow them. The directives are struct gen_insn: one DW_CFA
 * operation each, with the operands as they are encoded, and how the .S
 * spells it (a gas directive, a .cfi_escape, or the initial instructions
 * gas adds by itself at .cfi_startproc).
 *
 * The layout (layout.c) turns the functions into gas's per-FDE lists
 * (instructions and advances), picks a CIE for each FDE as gas does, and
 * sizes the records as gas writes them and ld keeps them. The model
 * (model.c) runs those lists: the rows and the expected IL.
 */
#ifndef CFISEM_GEN_INTERNAL_H
#define CFISEM_GEN_INTERNAL_H

#include <stddef.h>

#include "gen.h"

/* ------------------------------------------------------------------ */
/* The machine                                                          */
/* ------------------------------------------------------------------ */

/* What the generator needs of a machine: how gas and the ABI set up a
 * CIE, the registers it chooses among, how code is written. Register
 * names come from cfi/ (`names`), nothing else. */
struct gen_target {
    const char *name;             /* "aarch64": --arch */
    const struct cfi_arch *names; /* the register names */
    unsigned code_align;          /* bytes of one instruction unit */
    uint32_t sp;                  /* the stack pointer */
    uint32_t fp;                  /* the frame pointer */
    uint32_t ra;                  /* gas's default return column */
    uint64_t initial_cfa_offset;  /* gas's initial def_cfa sp+N */
    bool initial_ra_saved;        /* and offset ra at cfa-8 (x86-64) */
    bool ra_signing;              /* 0x2b-0x2d sign the return address */
    /* The register expressions may read, by index in 0-16 (the weights
     * of expr.c are drawn for x86-64's 0-16). */
    uint8_t expr_regs[17];
};

const struct gen_target *gen_target(enum gen_arch arch);

/* AArch64's RA_SIGN_STATE pseudo-register (aadwarf64, "DWARF register
 * names", Note 8). */
#define GEN_A64_RA_SIGN_STATE 34u
/* The largest state that is not reserved (DW_AARCH64_RA_SIGNED_SP_PC). */
#define GEN_A64_RA_STATE_MAX 2u

/* ------------------------------------------------------------------ */
/* Random numbers: xoshiro256**, seeded through splitmix64              */
/* ------------------------------------------------------------------ */

struct gen_rng {
    uint64_t s[4];
};

void gen_rng_seed(struct gen_rng *rng, uint64_t seed);
uint64_t gen_rng_next(struct gen_rng *rng);
uint64_t gen_rng_below(struct gen_rng *rng, uint64_t n);  /* [0, n), n > 0 */
uint64_t gen_rng_range(struct gen_rng *rng, uint64_t lo, uint64_t hi);
bool gen_rng_chance(struct gen_rng *rng, unsigned percent);
/* An index in weights[0 .. n), with probability proportional to the
 * weight (at least one weight is positive). */
size_t gen_rng_pick(struct gen_rng *rng, const unsigned *weights, size_t n);

/* ------------------------------------------------------------------ */
/* DWARF expressions                                                    */
/* ------------------------------------------------------------------ */

/* The DW_OP operations the generator writes, all valid in CFI (cfi.h):
 * X(name, first opcode, count, operand shape, depth needed, net depth
 * change). Families (lit, breg) have count 32 and print their index after
 * the name. skip and bra jump forward only, over a block that leaves the
 * depth as it found it. */
#define GEN_DW_OPS(X)                            \
    X(addr, 0x03, 1, ADDR, 0, 1)                 \
    X(deref, 0x06, 1, NONE, 1, 0)                \
    X(const1u, 0x08, 1, U1, 0, 1)                \
    X(const1s, 0x09, 1, S1, 0, 1)                \
    X(const2u, 0x0a, 1, U2, 0, 1)                \
    X(const2s, 0x0b, 1, S2, 0, 1)                \
    X(const4u, 0x0c, 1, U4, 0, 1)                \
    X(const4s, 0x0d, 1, S4, 0, 1)                \
    X(const8u, 0x0e, 1, U8, 0, 1)                \
    X(const8s, 0x0f, 1, S8, 0, 1)                \
    X(constu, 0x10, 1, ULEB, 0, 1)               \
    X(consts, 0x11, 1, SLEB, 0, 1)               \
    X(dup, 0x12, 1, NONE, 1, 1)                  \
    X(drop, 0x13, 1, NONE, 2, -1)                \
    X(over, 0x14, 1, NONE, 2, 1)                 \
    X(pick, 0x15, 1, U1, 1, 1)                   \
    X(swap, 0x16, 1, NONE, 2, 0)                 \
    X(rot, 0x17, 1, NONE, 3, 0)                  \
    X(abs, 0x19, 1, NONE, 1, 0)                  \
    X(and, 0x1a, 1, NONE, 2, -1)                 \
    X(div, 0x1b, 1, NONE, 2, -1)                 \
    X(minus, 0x1c, 1, NONE, 2, -1)               \
    X(mod, 0x1d, 1, NONE, 2, -1)                 \
    X(mul, 0x1e, 1, NONE, 2, -1)                 \
    X(neg, 0x1f, 1, NONE, 1, 0)                  \
    X(not, 0x20, 1, NONE, 1, 0)                  \
    X(or, 0x21, 1, NONE, 2, -1)                  \
    X(plus, 0x22, 1, NONE, 2, -1)                \
    X(plus_uconst, 0x23, 1, ULEB, 1, 0)          \
    X(shl, 0x24, 1, NONE, 2, -1)                 \
    X(shr, 0x25, 1, NONE, 2, -1)                 \
    X(shra, 0x26, 1, NONE, 2, -1)                \
    X(xor, 0x27, 1, NONE, 2, -1)                 \
    X(bra, 0x28, 1, S2, 1, -1)                   \
    X(eq, 0x29, 1, NONE, 2, -1)                  \
    X(ge, 0x2a, 1, NONE, 2, -1)                  \
    X(gt, 0x2b, 1, NONE, 2, -1)                  \
    X(le, 0x2c, 1, NONE, 2, -1)                  \
    X(lt, 0x2d, 1, NONE, 2, -1)                  \
    X(ne, 0x2e, 1, NONE, 2, -1)                  \
    X(skip, 0x2f, 1, S2, 0, 0)                   \
    X(lit, 0x30, 32, NONE, 0, 1)                 \
    X(breg, 0x70, 32, SLEB, 0, 1)                \
    X(bregx, 0x92, 1, ULEB_SLEB, 0, 1)           \
    X(deref_size, 0x94, 1, U1, 1, 0)             \
    X(nop, 0x96, 1, NONE, 0, 0)

enum gen_dw_shape {
    GEN_DW_NONE, GEN_DW_ADDR, GEN_DW_U1, GEN_DW_S1, GEN_DW_U2, GEN_DW_S2,
    GEN_DW_U4, GEN_DW_S4, GEN_DW_U8, GEN_DW_S8, GEN_DW_ULEB, GEN_DW_SLEB,
    GEN_DW_ULEB_SLEB,
};

enum gen_dw_op {
#define GEN_DW_ENUM(name, first, count, shape, need, delta) GEN_OP_##name,
    GEN_DW_OPS(GEN_DW_ENUM)
#undef GEN_DW_ENUM
    GEN_OP_COUNT
};

struct gen_dw_info {
    const char *name;
    uint8_t first;
    uint8_t count;
    enum gen_dw_shape shape;
    int need;  /* values the stack must hold before */
    int delta; /* change of the depth */
};
extern const struct gen_dw_info gen_dw_ops[GEN_OP_COUNT];

#define GEN_EXPR_OPS_MAX 128
#define GEN_EXPR_BYTES_MAX 1600

/* One operation: its kind, the family index (lit5: 5), its operands
 * (signed ones in two's complement; b is bregx's offset). */
struct gen_op {
    enum gen_dw_op kind;
    uint8_t index;
    uint64_t a, b;
};

struct gen_expr {
    unsigned nops;
    struct gen_op ops[GEN_EXPR_OPS_MAX];
    unsigned len;                       /* encoded bytes */
    uint8_t bytes[GEN_EXPR_BYTES_MAX];
};

size_t gen_put_uleb(uint8_t *out, uint64_t v);
size_t gen_put_sleb(uint8_t *out, int64_t v);

/* Encodes ops into bytes (skip and bra operands must be set). */
void gen_expr_encode(struct gen_expr *expr);
/* The listing as cfisem prints it: "breg7 160; deref". */
void gen_expr_print(const struct gen_expr *expr, FILE *out);
/* A random expression that leaves a value on top of the stack, the CFA
 * pushed first when `cfa_pushed` (register rules) — then it may be
 * empty. Encoded. Registers read: target->expr_regs only. */
void gen_expr_random(struct gen_rng *rng, const struct gen_target *target,
                     struct gen_expr *expr, bool cfa_pushed);
/* Appends an operation (the expression is encoded afterwards). */
void gen_expr_add(struct gen_expr *expr, enum gen_dw_op kind, unsigned index,
                  uint64_t a, uint64_t b);

/* ------------------------------------------------------------------ */
/* CFA instructions                                                     */
/* ------------------------------------------------------------------ */

/* The DW_CFA operations the generator writes: X(name, opcode, operand
 * shape, weight in random functions). offset and restore carry their
 * register in the low six bits of the opcode. The advance_loc forms are
 * not written: gas chooses them from the code sizes (see layout.c). Shapes:
 *   NONE     no operand
 *   REG      a register (ULEB, or the low bits)
 *   REG_REG  two registers
 *   REG_UOFF register and an unsigned offset, not factored (def_cfa)
 *   UOFF     unsigned offset, not factored (def_cfa_offset)
 *   REG_UFAC register and an unsigned factored offset
 *   REG_SFAC register and a signed factored offset
 *   SFAC     a signed factored offset (def_cfa_offset_sf)
 *   UNUM     an unsigned number (GNU_args_size)
 *   UNUM_SCODE an unsigned number, then a signed offset factored by the
 *            code alignment factor (AARCH64_set_ra_state)
 *   EXPR     an expression; REG_EXPR a register and an expression */
#define GEN_CFA_OPS(X)                                      \
    X(nop, 0x00, NONE, 2)                                   \
    X(offset_extended, 0x05, REG_UFAC, 3)                   \
    X(restore_extended, 0x06, REG, 3)                       \
    X(undefined, 0x07, REG, 4)                              \
    X(same_value, 0x08, REG, 4)                             \
    X(register, 0x09, REG_REG, 4)                           \
    X(remember_state, 0x0a, NONE, 6)                        \
    X(restore_state, 0x0b, NONE, 6)                         \
    X(def_cfa, 0x0c, REG_UOFF, 5)                           \
    X(def_cfa_register, 0x0d, REG, 4)                       \
    X(def_cfa_offset, 0x0e, UOFF, 10)                       \
    X(def_cfa_expression, 0x0f, EXPR, 3)                    \
    X(expression, 0x10, REG_EXPR, 4)                        \
    X(offset_extended_sf, 0x11, REG_SFAC, 3)                \
    X(def_cfa_sf, 0x12, REG_SFAC, 3)                        \
    X(def_cfa_offset_sf, 0x13, SFAC, 3)                     \
    X(val_offset, 0x14, REG_UFAC, 3)                        \
    X(val_offset_sf, 0x15, REG_SFAC, 3)                     \
    X(val_expression, 0x16, REG_EXPR, 3)                    \
    X(GNU_args_size, 0x2e, UNUM, 2)                         \
    X(GNU_negative_offset_extended, 0x2f, REG_UFAC, 2)      \
    X(offset, 0x80, REG_UFAC, 12)                           \
    X(restore, 0xc0, REG, 6)

enum gen_cfa_shape {
    GEN_CFA_NONE, GEN_CFA_REG, GEN_CFA_REG_REG, GEN_CFA_REG_UOFF,
    GEN_CFA_UOFF, GEN_CFA_REG_UFAC, GEN_CFA_REG_SFAC, GEN_CFA_SFAC,
    GEN_CFA_UNUM, GEN_CFA_UNUM_SCODE, GEN_CFA_EXPR, GEN_CFA_REG_EXPR,
};

enum gen_cfa_op {
#define GEN_CFA_ENUM(name, opcode, shape, weight) GEN_CFA_##name = opcode,
    GEN_CFA_OPS(GEN_CFA_ENUM)
#undef GEN_CFA_ENUM
    /* Not generated in well-formed x86-64 programs; injected as errors.
     * On AArch64, 0x2d is AARCH64_negate_ra_state (GEN_A64_OPS). */
    GEN_CFA_GNU_window_save = 0x2d,
    /* Chosen by gas. */
    GEN_CFA_advance_loc1 = 0x02,
    GEN_CFA_advance_loc2 = 0x03,
    GEN_CFA_advance_loc4 = 0x04,
    GEN_CFA_advance_loc = 0x40,
};

/* AArch64's vendor opcodes (aadwarf64, "Call frame instructions"),
 * written in AArch64 programs only: X(name, opcode, shape, weight in
 * the random instructions that change RA_SIGN_STATE). 0x2d is the
 * opcode of GEN_CFA_GNU_window_save. */
#define GEN_A64_OPS(X)                                      \
    X(AARCH64_negate_ra_state, 0x2d, NONE, 6)               \
    X(AARCH64_negate_ra_state_with_pc, 0x2c, NONE, 2)       \
    X(AARCH64_set_ra_state, 0x2b, UNUM_SCODE, 2)

enum gen_a64_op {
#define GEN_A64_ENUM(name, opcode, shape, weight) GEN_A64_##name = opcode,
    GEN_A64_OPS(GEN_A64_ENUM)
#undef GEN_A64_ENUM
};

/* The shape of an opcode the generator writes; false for any other. */
bool gen_cfa_shape(unsigned opcode, enum gen_cfa_shape *shape);

/* How the .S spells an instruction. */
enum gen_spelling {
    GEN_SPELL_DIRECTIVE, /* .cfi_offset %rbx, -16 */
    GEN_SPELL_ESCAPE,    /* .cfi_escape 0x83, 0x02 */
    GEN_SPELL_IMPLICIT,  /* gas's initial instructions, not written */
};

struct gen_insn {
    uint8_t opcode;        /* enum gen_cfa_op; 0x80, 0xc0 without register */
    uint8_t spelling;      /* enum gen_spelling */
    bool reg_as_number;    /* directive: "67" rather than "%xmm16" */
    uint32_t reg, reg2;
    uint64_t operand;      /* the LEB operand as encoded (SLEB: two's
                              complement), factored where the op is */
    uint64_t operand2;     /* UNUM_SCODE: the SLEB code offset */
    struct gen_expr *expr; /* EXPR, REG_EXPR (owned) */
    bool injected;         /* the one error of an ill-formed program */
};

/* Bytes of the encoded instruction (at most 24 + an expression). */
size_t gen_insn_encode(const struct gen_insn *insn, uint8_t *out);
#define GEN_INSN_BYTES_MAX (GEN_EXPR_BYTES_MAX + 32)

/* Is there a gas directive that gas encodes as exactly this opcode with
 * these operands (dw2gencfi.c, output_cfi_insn)? */
bool gen_insn_has_directive(const struct gen_insn *insn);
/* The name of an opcode on the target (0x2d: AArch64's negate), or NULL. */
const char *gen_target_op_name(const struct gen_target *target,
                               unsigned opcode);

/* Does gas put this instruction in a CIE's initial instructions when it
 * leads the FDE (dw2gencfi.c, initial_cie_insn)? And are two of them the
 * same instruction to gas (the same directive with the same operands)? */
bool gen_insn_cie_kind(const struct gen_insn *insn);
bool gen_insn_gas_equal(const struct gen_insn *a, const struct gen_insn *b);

/* ------------------------------------------------------------------ */
/* Programs                                                             */
/* ------------------------------------------------------------------ */

/* How a run of code bytes is written (AArch64: in 4-byte nops). */
enum gen_code_style {
    GEN_CODE_SKIP,  /* .skip N, 0x90 (.rept K; nop; .endr) */
    GEN_CODE_NOPS,  /* .nops N (.skip N: zero words) */
    GEN_CODE_BYTES, /* .byte 0x90, ... (.inst 0xd503201f, ...) */
    GEN_CODE_NOP,   /* nop, one a line (short runs) */
    GEN_CODE_FILL,  /* .fill N, 1, 0x90 (.fill K, 4, 0xd503201f) */
};

/* The directives at one address, then `code` bytes (>= 1, except that
 * the last group of a function may end at the function's end with 0). */
struct gen_group {
    uint32_t first, count;
    uint32_t code;
    uint8_t code_style;
};

struct gen_fde {
    uint64_t begin, end;
    bool simple;               /* .cfi_startproc simple */
    bool signal_frame;         /* .cfi_signal_frame */
    bool b_key;                /* .cfi_b_key_frame (AArch64) */
    uint32_t ra;               /* .cfi_return_column, target->ra by default */
    uint8_t per_encoding;      /* .cfi_personality, CFI_PE_OMIT if none */
    uint8_t lsda_encoding;     /* .cfi_lsda, CFI_PE_OMIT if none */
    uint32_t personality;      /* function whose label is the routine */
    uint32_t lsda;             /* function whose label is the LSDA */
    struct gen_insn *insns;
    uint32_t ninsns, insns_cap;
    struct gen_group *groups;
    uint32_t ngroups, groups_cap;
};

/* A node of gas's list for one FDE: an instruction, or an advance of
 * `advance` bytes (insn NULL; encoded factored by the code alignment). */
struct gen_node {
    const struct gen_insn *insn;
    uint64_t advance;
};

struct gen_cie_layout {
    uint32_t fde;       /* the FDE whose leading instructions it holds */
    uint32_t ninsns;    /* how many: nodes[0 .. ninsns) of that FDE */
    uint64_t offset;    /* section offset */
    uint64_t size;      /* bytes, length field and padding included */
    char augmentation[8];
    bool removed;       /* merged by ld into cies[kept] */
    uint32_t kept;
};

struct gen_fde_layout {
    uint32_t cie;       /* index in cies */
    uint64_t offset;
    uint64_t size;
};

struct gen_section_layout {
    enum cfi_section section;
    bool ld_edits;      /* ld parsed and rewrote it (.eh_frame) */
    uint32_t ncies;
    struct gen_cie_layout cies[GEN_FDES_MAX];
    struct gen_fde_layout fdes[GEN_FDES_MAX];
};

struct gen_program {
    struct gen_options options;
    const struct gen_target *target;
    bool eh_frame, debug_frame;
    uint32_t nfdes;
    struct gen_fde fdes[GEN_FDES_MAX];
    /* gas's list of each FDE: its initial instructions, its directives
     * and the advances between them. */
    struct gen_node *nodes[GEN_FDES_MAX];
    size_t nnodes[GEN_FDES_MAX];
    struct gen_section_layout layouts[2]; /* [CFI_EH_FRAME], [CFI_DEBUG_FRAME] */
};

/* generate.c: the random program (functions and their directives). */
enum cfi_status gen_generate(struct gen_program *program, struct gen_rng *rng);
/* Appends an instruction to fde; NULL when out of memory. */
struct gen_insn *gen_fde_add_insn(struct gen_fde *fde);

/* layout.c: nodes, CIE selection, record offsets and sizes. */
enum cfi_status gen_layout(struct gen_program *program);
/* The bytes of one node (an advance: the form gas picks for it, in units
 * of code_align bytes). */
size_t gen_node_encode(const struct gen_node *node, unsigned code_align,
                       uint8_t *out);
/* Encodes the program of an FDE (or of a CIE: nodes [0, count)) into
 * out (malloc'd); *len its bytes. NULL when out of memory. */
uint8_t *gen_encode_nodes(const struct gen_node *nodes, size_t count,
                          unsigned code_align, size_t *len);

/* model.c: runs the rows and writes the expectation. gen_check_model:
 * CFI_E_INTERNAL when the program is not what its options asked. */
enum cfi_status gen_check_model(const struct gen_program *program,
                                struct cfi_diag *diag);
void gen_model_write(const struct gen_program *program, FILE *out);

/* asm.c: the .S file. */
void gen_asm_write(const struct gen_program *program, FILE *out);

#endif
