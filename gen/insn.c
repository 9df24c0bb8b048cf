/* SPDX-License-Identifier: MIT */
/* insn.c — the DW_CFA instructions the generator writes: their shapes
 * (from the one list GEN_CFA_OPS), their encoding, and what gas makes of
 * them: which directive gas encodes as exactly that opcode, which
 * instructions gas may move into a CIE, and when two are the same to gas.
 *
 * gas 2.40 (dw2gencfi.c, output_cfi_insn) chooses the opcode of a
 * directive from its operands: .cfi_def_cfa is def_cfa, or def_cfa_sf for
 * a negative offset; .cfi_def_cfa_offset is def_cfa_offset, or
 * def_cfa_offset_sf for a negative one; .cfi_offset is offset (register <
 * 64) or offset_extended (above), or offset_extended_sf when the factored
 * offset is negative; .cfi_val_offset is val_offset, or val_offset_sf;
 * .cfi_restore is restore, or restore_extended above 63. The others map
 * one to one (on AArch64 .cfi_negate_ra_state is 0x2d); the opcodes with
 * no directive are written with .cfi_escape (0x2b and 0x2c: binutils
 * 2.40 has no directive for them). */
#include "internal.h"

#include <string.h>

struct cfa_info {
    const char *name;
    unsigned opcode;
    enum gen_cfa_shape shape;
};

static const struct cfa_info cfa_ops[] = {
#define GEN_CFA_ROW(name, opcode, shape, weight) {#name, opcode, GEN_CFA_##shape},
    GEN_CFA_OPS(GEN_CFA_ROW)
#undef GEN_CFA_ROW
    {"GNU_window_save", GEN_CFA_GNU_window_save, GEN_CFA_NONE},
    {"AARCH64_negate_ra_state_with_pc", GEN_A64_AARCH64_negate_ra_state_with_pc,
     GEN_CFA_NONE},
    {"AARCH64_set_ra_state", GEN_A64_AARCH64_set_ra_state, GEN_CFA_UNUM_SCODE},
    {"advance_loc1", GEN_CFA_advance_loc1, GEN_CFA_NONE},
    {"advance_loc2", GEN_CFA_advance_loc2, GEN_CFA_NONE},
    {"advance_loc4", GEN_CFA_advance_loc4, GEN_CFA_NONE},
    {"advance_loc", GEN_CFA_advance_loc, GEN_CFA_NONE},
};

static const struct cfa_info *cfa_info(unsigned opcode)
{
    for (size_t i = 0; i < sizeof cfa_ops / sizeof cfa_ops[0]; i++)
        if (cfa_ops[i].opcode == opcode)
            return &cfa_ops[i];
    return NULL;
}

const char *gen_cfa_op_name(unsigned opcode)
{
    const struct cfa_info *info = cfa_info(opcode);
    return info ? info->name : NULL;
}

const char *gen_target_op_name(const struct gen_target *target,
                               unsigned opcode)
{
    if (opcode == GEN_A64_AARCH64_negate_ra_state && target->ra_signing)
        return "AARCH64_negate_ra_state";
    return gen_cfa_op_name(opcode);
}

bool gen_cfa_shape(unsigned opcode, enum gen_cfa_shape *shape)
{
    const struct cfa_info *info = cfa_info(opcode);
    if (!info || opcode == GEN_CFA_advance_loc1 ||
        opcode == GEN_CFA_advance_loc2 || opcode == GEN_CFA_advance_loc4 ||
        opcode == GEN_CFA_advance_loc)
        return false;
    *shape = info->shape;
    return true;
}

static size_t put_expr(uint8_t *out, const struct gen_expr *expr)
{
    size_t n = gen_put_uleb(out, expr->len);
    memcpy(out + n, expr->bytes, expr->len);
    return n + expr->len;
}

size_t gen_insn_encode(const struct gen_insn *insn, uint8_t *out)
{
    if (insn->opcode == GEN_CFA_offset || insn->opcode == GEN_CFA_restore) {
        out[0] = (uint8_t)(insn->opcode | (insn->reg & 0x3f));
        if (insn->opcode == GEN_CFA_restore)
            return 1;
        return 1 + gen_put_uleb(out + 1, insn->operand);
    }
    enum gen_cfa_shape shape = GEN_CFA_NONE;
    gen_cfa_shape(insn->opcode, &shape);
    out[0] = insn->opcode;
    size_t n = 1;
    switch (shape) {
    case GEN_CFA_NONE: break;
    case GEN_CFA_REG: n += gen_put_uleb(out + n, insn->reg); break;
    case GEN_CFA_REG_REG:
        n += gen_put_uleb(out + n, insn->reg);
        n += gen_put_uleb(out + n, insn->reg2);
        break;
    case GEN_CFA_REG_UOFF: case GEN_CFA_REG_UFAC:
        n += gen_put_uleb(out + n, insn->reg);
        n += gen_put_uleb(out + n, insn->operand);
        break;
    case GEN_CFA_UOFF: case GEN_CFA_UNUM:
        n += gen_put_uleb(out + n, insn->operand);
        break;
    case GEN_CFA_UNUM_SCODE:
        n += gen_put_uleb(out + n, insn->operand);
        n += gen_put_sleb(out + n, (int64_t)insn->operand2);
        break;
    case GEN_CFA_REG_SFAC:
        n += gen_put_uleb(out + n, insn->reg);
        n += gen_put_sleb(out + n, (int64_t)insn->operand);
        break;
    case GEN_CFA_SFAC: n += gen_put_sleb(out + n, (int64_t)insn->operand); break;
    case GEN_CFA_EXPR: n += put_expr(out + n, insn->expr); break;
    case GEN_CFA_REG_EXPR:
        n += gen_put_uleb(out + n, insn->reg);
        n += put_expr(out + n, insn->expr);
        break;
    }
    return n;
}

/* A factored operand whose offset (x -8) fits gas's 64-bit offsets. */
static bool factor_fits(int64_t factored)
{
    return factored > INT64_MIN / 8 && factored < INT64_MAX / 8;
}

bool gen_insn_has_directive(const struct gen_insn *insn)
{
    int64_t sop = (int64_t)insn->operand;
    switch (insn->opcode) {
    case GEN_CFA_def_cfa: case GEN_CFA_def_cfa_offset:
        return insn->operand <= INT64_MAX;
    case GEN_CFA_def_cfa_sf: case GEN_CFA_def_cfa_offset_sf:
        return sop > 0 && factor_fits(sop);
    case GEN_CFA_def_cfa_register: case GEN_CFA_register:
    case GEN_CFA_undefined: case GEN_CFA_same_value:
    case GEN_CFA_remember_state: case GEN_CFA_restore_state:
    case GEN_CFA_GNU_window_save:
        return true;
    case GEN_CFA_offset: case GEN_CFA_val_offset:
        return insn->operand < INT64_MAX / 8;
    case GEN_CFA_offset_extended:
        return insn->reg > 63 && insn->operand < INT64_MAX / 8;
    case GEN_CFA_offset_extended_sf: case GEN_CFA_val_offset_sf:
        return sop < 0 && factor_fits(sop);
    case GEN_CFA_restore: return insn->reg <= 63;
    case GEN_CFA_restore_extended: return insn->reg > 63;
    default: return false;
    }
}

/* The instruction as gas records it: the directive (one per gas insn
 * kind) and its operands, offsets unfactored. */
struct gas_view {
    int kind;          /* 0: not a kind gas puts in a CIE */
    uint32_t reg, reg2;
    int64_t value;
};

enum { GAS_NONE, GAS_DEF_CFA, GAS_DEF_CFA_REGISTER, GAS_DEF_CFA_OFFSET,
       GAS_OFFSET, GAS_VAL_OFFSET, GAS_REGISTER, GAS_RESTORE, GAS_UNDEFINED,
       GAS_SAME_VALUE };

static struct gas_view gas_view(const struct gen_insn *insn)
{
    struct gas_view v = {GAS_NONE, insn->reg, 0, 0};
    if (insn->spelling == GEN_SPELL_ESCAPE)
        return v;
    uint64_t factored = insn->operand * (uint64_t)-8;
    switch (insn->opcode) {
    case GEN_CFA_def_cfa: v.kind = GAS_DEF_CFA; v.value = (int64_t)insn->operand; break;
    case GEN_CFA_def_cfa_sf: v.kind = GAS_DEF_CFA; v.value = (int64_t)factored; break;
    case GEN_CFA_def_cfa_register: v.kind = GAS_DEF_CFA_REGISTER; break;
    case GEN_CFA_def_cfa_offset: v.kind = GAS_DEF_CFA_OFFSET; v.value = (int64_t)insn->operand; break;
    case GEN_CFA_def_cfa_offset_sf: v.kind = GAS_DEF_CFA_OFFSET; v.value = (int64_t)factored; break;
    case GEN_CFA_offset: case GEN_CFA_offset_extended:
    case GEN_CFA_offset_extended_sf:
        v.kind = GAS_OFFSET; v.value = (int64_t)factored; break;
    case GEN_CFA_val_offset: case GEN_CFA_val_offset_sf:
        v.kind = GAS_VAL_OFFSET; v.value = (int64_t)factored; break;
    case GEN_CFA_register: v.kind = GAS_REGISTER; v.reg2 = insn->reg2; break;
    case GEN_CFA_restore: case GEN_CFA_restore_extended: v.kind = GAS_RESTORE; break;
    case GEN_CFA_undefined: v.kind = GAS_UNDEFINED; break;
    case GEN_CFA_same_value: v.kind = GAS_SAME_VALUE; break;
    default: break;
    }
    return v;
}

bool gen_insn_cie_kind(const struct gen_insn *insn)
{
    return gas_view(insn).kind != GAS_NONE;
}

bool gen_insn_gas_equal(const struct gen_insn *a, const struct gen_insn *b)
{
    struct gas_view x = gas_view(a), y = gas_view(b);
    return x.kind != GAS_NONE && x.kind == y.kind && x.reg == y.reg &&
           x.reg2 == y.reg2 && x.value == y.value;
}
