/* SPDX-License-Identifier: MIT */
/* decode_aarch64.c — AArch64 instructions from capstone 4's ARM64 mode,
 * classified by what they do to the stack and to control flow; AAPCS64's
 * facts for the analysis.
 *
 * What a function does to its frame on AArch64: `stp x29, x30, [sp,
 * #-N]!` (sp moves, then two saves), `sub sp, sp, #N`, `mov x29, sp` or
 * `add x29, sp, #N` (the frame pointer), stores and loads of x19-x30 and
 * d8-d15 relative to sp or x29 (`ldp x29, x30, [sp], #N` moves sp after
 * the loads), `ret`, `b` (a tail call), `bl`/`blr` (calls: x30 written),
 * `br`; the return address signed by `paciasp`/`pacibsp` and
 * authenticated by `autiasp`/`autibsp`, which capstone 4 prints as
 * `hint #0x19` .. `hint #0x1f` (the hint space, so that older cores run
 * them as nops), and `retaa`/`retab`, which it cannot decode (they are
 * recognised here by their encoding, as are the LSE atomics). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

/* The hint-space immediates of pointer authentication (Arm ARM, C6.2:
 * HINT): PACIASP 25, PACIBSP 27, AUTIASP 29, AUTIBSP 31, XPACLRI 7. */
enum {
    HINT_XPACLRI = 7,
    HINT_PACIASP = 25,
    HINT_PACIBSP = 27,
    HINT_AUTIASP = 29,
    HINT_AUTIBSP = 31,
};

/* RETAA and RETAB (Arm ARM, C6.2), which capstone 4 does not know, nor
 * UDF #imm16 (0x0000iiii: the zeros that pad functions, and a trap). */
enum { WORD_RETAA = 0xd65f0bffu, WORD_RETAB = 0xd65f0fffu };
enum { WORD_UDF_MASK = 0xffff0000u };

/* The DWARF number of a register capstone names (aadwarf64: x0-x30 0-30,
 * sp 31, v0-v31 64-95; w, b, h, s, d, q name parts of them), or -1
 * (xzr, wzr, system registers). */
static int dwarf_of_name(const char *name)
{
    if (!strcmp(name, "sp") || !strcmp(name, "wsp"))
        return 31;
    if (!strcmp(name, "fp"))
        return 29;
    if (!strcmp(name, "lr"))
        return 30;
    char *end;
    if (!strchr("xwbhsdqv", name[0]) || name[1] < '0' || name[1] > '9')
        return -1;
    long n = strtol(name + 1, &end, 10);
    if (*end != '\0' || n < 0 || n > 31)
        return -1;
    if (name[0] == 'x' || name[0] == 'w')
        return n <= 30 ? (int)n : -1;
    return 64 + (int)n;
}

/* The bytes a register operand holds (x, d: 8; q: 16; w, s: 4), from its
 * name; 0 for one that is not a register. */
static unsigned reg_bytes(const struct synth_decoder *d, unsigned reg)
{
    const char *name = cs_reg_name(d->handle, reg);
    if (!name || dwarf_of_name(name) < 0)
        return 0;
    if (!strcmp(name, "sp") || !strcmp(name, "fp") || !strcmp(name, "lr"))
        return 8;
    switch (name[0]) {
    case 'x': case 'd': return 8;
    case 'q': case 'v': return 16;
    case 'w': case 's': return 4;
    case 'h': return 2;
    default: return 1;
    }
}

static const cs_arm64_op *last_imm(const cs_arm64 *a)
{
    for (int i = a->op_count - 1; i >= 0; i--)
        if (a->operands[i].type == ARM64_OP_IMM)
            return &a->operands[i];
    return NULL;
}

static void branch(const cs_insn *ci, struct synth_insn *in, enum synth_op op)
{
    const cs_arm64_op *imm = last_imm(&ci->detail->arm64);
    in->op = op;
    in->target = imm ? (uint64_t)imm->imm : 0;
}

/* An immediate operand's value, its `lsl #12` applied. */
static int64_t imm_value(const cs_arm64_op *op)
{
    if (op->shift.type == ARM64_SFT_LSL && op->shift.value < 64)
        return (int64_t)((uint64_t)op->imm << op->shift.value);
    return op->imm;
}

/* add, sub, mov with sp or x29 as destination or sp as source: the
 * operations on the frame's registers. False for another write (a
 * clobber, seen in `writes`). */
static bool stack_arith(const struct synth_decoder *d, const cs_insn *ci,
                        struct synth_insn *in)
{
    const cs_arm64 *a = &ci->detail->arm64;
    const struct synth_machine *m = &d->machine;
    if (a->op_count < 2 || a->operands[0].type != ARM64_OP_REG ||
        reg_bytes(d, a->operands[0].reg) != 8)
        return false;
    int dst = synth_dwarf(d, a->operands[0].reg);
    bool add = ci->id == ARM64_INS_ADD, sub = ci->id == ARM64_INS_SUB;
    bool mov = ci->id == ARM64_INS_MOV && a->op_count == 2;
    int src = a->operands[1].type == ARM64_OP_REG
                  ? synth_dwarf(d, a->operands[1].reg) : -1;
    bool imm = (add || sub) && a->op_count == 3 &&
               a->operands[2].type == ARM64_OP_IMM;
    bool by_imm = (mov && src >= 0) || (imm && src >= 0);
    int64_t off = imm ? imm_value(&a->operands[2]) * (sub ? -1 : 1) : 0;
    in->dst = (int8_t)dst;
    if (dst == (int)m->sp && by_imm && src == (int)m->sp) {
        in->op = SYNTH_OP_ADD_RSP;
        in->imm = off;
    } else if (dst == (int)m->sp && by_imm) {
        in->op = SYNTH_OP_RSP_FROM_REG;
        in->base = (int8_t)src;
        in->imm = off;
    } else if (dst == (int)m->sp && ci->id == ARM64_INS_AND) {
        in->op = SYNTH_OP_AND_RSP;
    } else if (dst == (int)m->sp) {
        in->op = SYNTH_OP_RSP_UNKNOWN;
        if ((add || sub) && src == (int)m->sp && a->op_count == 3 &&
            a->operands[2].type == ARM64_OP_REG &&
            a->operands[2].shift.type == ARM64_SFT_INVALID &&
            reg_bytes(d, a->operands[2].reg) == 8) {
            in->base = (int8_t)synth_dwarf(d, a->operands[2].reg);
            in->sp_by_reg = (int8_t)(add ? 1 : -1);
        }
    } else if (by_imm && src == (int)m->sp) {
        in->op = dst == (int)m->fp ? SYNTH_OP_RBP_FROM_RSP
                                   : SYNTH_OP_REG_FROM_RSP;
        in->imm = off;
    } else if (dst == (int)m->fp && by_imm) {
        in->op = SYNTH_OP_RBP_FROM_REG;
        in->base = (int8_t)src;
        in->imm = off;
    } else {
        return false;
    }
    return true;
}

/* A register of a store or load: its DWARF number when it holds 8 bytes
 * or more (a save of the whole register, or of a vector register's low
 * 8 bytes, which AAPCS64 preserves), else -1. */
static int8_t moved_reg(const struct synth_decoder *d, const cs_arm64_op *op)
{
    if (op->type != ARM64_OP_REG || reg_bytes(d, op->reg) < 8)
        return -1;
    return (int8_t)synth_dwarf(d, op->reg);
}

static bool is_memory_op(unsigned id, bool *store)
{
    switch (id) {
    case ARM64_INS_STR: case ARM64_INS_STUR: case ARM64_INS_STP:
    case ARM64_INS_STNP:
        *store = true;
        return true;
    case ARM64_INS_LDR: case ARM64_INS_LDUR: case ARM64_INS_LDP:
    case ARM64_INS_LDNP:
        *store = false;
        return true;
    default:
        return false;
    }
}

/* str/stp/ldr/ldp (and the unscaled and non-temporal forms) at
 * [base, #disp], pre-index [base, #disp]! or post-index [base], #imm. */
static bool memory(const struct synth_decoder *d, const cs_insn *ci,
                   struct synth_insn *in)
{
    const cs_arm64 *a = &ci->detail->arm64;
    bool store;
    int mi = -1;
    if (!is_memory_op(ci->id, &store))
        return false;
    for (int i = 0; i < a->op_count; i++)
        if (a->operands[i].type == ARM64_OP_MEM)
            mi = i;
    if (mi < 1 || a->operands[mi].mem.index != ARM64_REG_INVALID)
        return false; /* a literal, or a register offset: not followed */
    const cs_arm64_op *mem = &a->operands[mi];
    in->op = store ? SYNTH_OP_STORE : SYNTH_OP_LOAD;
    in->base = (int8_t)synth_dwarf(d, mem->mem.base);
    in->disp = mem->mem.disp;
    in->reg = moved_reg(d, &a->operands[0]);
    if (mi == 2) {
        in->has_pair = true;
        in->reg2 = moved_reg(d, &a->operands[1]);
        in->pair = (uint8_t)reg_bytes(d, a->operands[1].reg);
    }
    if (a->writeback && mi + 1 < a->op_count &&
        a->operands[mi + 1].type == ARM64_OP_IMM) {
        in->wb = SYNTH_WB_POST;
        in->wb_imm = a->operands[mi + 1].imm;
    } else if (a->writeback) {
        in->wb = SYNTH_WB_PRE;
    }
    return true;
}

static void hint(const cs_insn *ci, struct synth_insn *in)
{
    const cs_arm64_op *imm = last_imm(&ci->detail->arm64);
    switch (imm ? imm->imm : -1) {
    case HINT_PACIASP: in->op = SYNTH_OP_RA_SIGN; in->imm = 0; break;
    case HINT_PACIBSP: in->op = SYNTH_OP_RA_SIGN; in->imm = 1; break;
    case HINT_AUTIASP: case HINT_AUTIBSP: case HINT_XPACLRI:
        in->op = SYNTH_OP_RA_AUTH;
        break;
    default: in->op = SYNTH_OP_OTHER; break; /* bti, paciaz, ... */
    }
}

/* The bits an extend operand sign-extends (sxtb 8, sxth 16, sxtw 32),
 * or 0. */
static uint8_t sign_bits(arm64_extender ext)
{
    switch (ext) {
    case ARM64_EXT_SXTB: return 8;
    case ARM64_EXT_SXTH: return 16;
    case ARM64_EXT_SXTW: return 32;
    default: return 0;
    }
}

/* The bytes of a table entry a load reads: ldrb 1, ldrh 2, ldr w 4
 * (ldrsb, ldrsh, ldrsw sign-extend them); 0 for another load. */
static unsigned entry_bytes(const struct synth_decoder *d, const cs_insn *ci)
{
    switch (ci->id) {
    case ARM64_INS_LDRB: case ARM64_INS_LDRSB: return 1;
    case ARM64_INS_LDRH: case ARM64_INS_LDRSH: return 2;
    case ARM64_INS_LDRSW: return 4;
    case ARM64_INS_LDR:
        return reg_bytes(d, ci->detail->arm64.operands[0].reg) == 4 ? 4 : 0;
    default: return 0;
    }
}

/* Operand facts the jump-table recogniser reads: adr and adrp (an
 * address), add of an immediate or of an extended register, the load
 * of a table entry, cmp with an immediate, register copies. */
static void note_table(const struct synth_decoder *d, const cs_insn *ci,
                       struct synth_insn *in)
{
    const cs_arm64 *a = &ci->detail->arm64;
    const cs_arm64_op *o = a->operands;
    if (a->op_count < 2 || o[0].type != ARM64_OP_REG)
        return;
    int r0 = synth_dwarf(d, o[0].reg);
    int r1 = o[1].type == ARM64_OP_REG ? synth_dwarf(d, o[1].reg) : -1;
    unsigned size = entry_bytes(d, ci);
    in->dst = (int8_t)r0;
    if (ci->id == ARM64_INS_ADR || ci->id == ARM64_INS_ADRP) {
        in->is_lea = in->mem_rip = o[1].type == ARM64_OP_IMM;
        in->target = (uint64_t)o[1].imm;
    } else if (ci->id == ARM64_INS_ADD && a->op_count == 3 && r1 >= 0 &&
               o[2].type == ARM64_OP_IMM) {
        in->is_add_imm = true;
        in->src = (int8_t)r1;
        in->imm = imm_value(&o[2]);
    } else if (ci->id == ARM64_INS_ADD && a->op_count == 3 && r1 >= 0 &&
               o[2].type == ARM64_OP_REG) {
        in->is_add_reg = true;
        in->mem_base = (int8_t)r1;
        in->mem_index = (int8_t)synth_dwarf(d, o[2].reg);
        in->add_ext = sign_bits(o[2].ext);
        in->add_shift = (uint8_t)(o[2].shift.type == ARM64_SFT_LSL
                                      ? o[2].shift.value : 0);
    } else if (size && a->op_count == 2 && o[1].type == ARM64_OP_MEM &&
               o[1].mem.index != ARM64_REG_INVALID &&
               (o[1].shift.value == 0 || 1u << o[1].shift.value == size)) {
        in->is_table_load = true;
        in->mem_base = (int8_t)synth_dwarf(d, o[1].mem.base);
        in->mem_index = (int8_t)synth_dwarf(d, o[1].mem.index);
        in->mem_scale = (uint8_t)size;
    } else if (ci->id == ARM64_INS_CMP && o[1].type == ARM64_OP_IMM) {
        in->is_cmp_imm = true;
        in->imm = imm_value(&o[1]);
        in->writes &= r0 >= 0 && r0 < 32 ? ~(1u << r0) : ~0u; /* capstone */
    } else if (ci->id == ARM64_INS_MOV && r1 >= 0) {
        in->src = (int8_t)r1;
    }
}

/* Operand facts the clone recogniser reads: mov xN, #imm and mov xN,
 * xzr. */
static void note_operands(const struct synth_decoder *d, const cs_insn *ci,
                          struct synth_insn *in)
{
    const cs_arm64 *a = &ci->detail->arm64;
    bool mov = ci->id == ARM64_INS_MOV || ci->id == ARM64_INS_MOVZ;
    in->sets_flags = a->update_flags;
    note_table(d, ci, in);
    if (!mov || a->op_count != 2 || a->operands[0].type != ARM64_OP_REG)
        return;
    in->dst = (int8_t)synth_dwarf(d, a->operands[0].reg);
    const cs_arm64_op *o1 = &a->operands[1];
    in->is_mov_imm = o1->type == ARM64_OP_IMM && in->dst >= 0;
    if (in->is_mov_imm)
        in->imm = imm_value(o1);
    in->is_zeroing = (in->is_mov_imm && in->imm == 0) ||
                     (o1->type == ARM64_OP_REG &&
                      (o1->reg == ARM64_REG_XZR || o1->reg == ARM64_REG_WZR));
}

static void classify(const struct synth_decoder *d, const cs_insn *ci,
                     struct synth_insn *in)
{
    const cs_arm64 *a = &ci->detail->arm64;
    synth_insn_init(d, ci, in);
    switch (ci->id) {
    case ARM64_INS_RET: in->op = SYNTH_OP_RET; return;
    case ARM64_INS_B:
        branch(ci, in, a->cc == ARM64_CC_INVALID || a->cc == ARM64_CC_AL
                           ? SYNTH_OP_JMP : SYNTH_OP_JCC);
        return;
    case ARM64_INS_CBZ: case ARM64_INS_CBNZ: case ARM64_INS_TBZ:
    case ARM64_INS_TBNZ:
        branch(ci, in, SYNTH_OP_JCC);
        return;
    case ARM64_INS_BL: branch(ci, in, SYNTH_OP_CALL); return;
    case ARM64_INS_BLR: in->op = SYNTH_OP_CALL; return;
    case ARM64_INS_BR:
        in->op = SYNTH_OP_JMP_INDIRECT;
        in->dst = (int8_t)synth_dwarf(d, a->operands[0].reg);
        return;
    case ARM64_INS_BRK: case ARM64_INS_HLT: in->op = SYNTH_OP_STOP; return;
    case ARM64_INS_NOP: in->op = SYNTH_OP_PADDING; return;
    case ARM64_INS_HINT: hint(ci, in); return;
    case ARM64_INS_SVC:
        /* Linux returns x0 and keeps every other register (capstone
         * says x30) */
        in->op = SYNTH_OP_SYSCALL;
        in->writes = 1u << 0;
        return;
    default: break;
    }
    note_operands(d, ci, in);
    if (!memory(d, ci, in) && !stack_arith(d, ci, in))
        in->op = SYNTH_OP_OTHER;
}

/* The atomic memory operations of ARMv8.1 (LSE), which capstone 4 does
 * not know (Arm ARM, C4.1.94: "Atomic memory operations", "Compare and
 * swap"): LDADD, LDCLR, LDEOR, LDSET, LDSMAX .. LDUMIN and SWP write Rt;
 * CAS writes Rs, CASP Rs and Rs+1. None moves sp (Rt, Rs 31 is the zero
 * register). The registers written, or 0 for another word. */
static uint32_t lse_writes(uint32_t word)
{
    unsigned rt = word & 31, rs = (word >> 16) & 31;
    uint32_t to_rt = rt < 31 ? 1u << rt : 0, to_rs = rs < 31 ? 1u << rs : 0;
    if ((word & 0x3f208c00u) == 0x38200000u)      /* LD<op>, SWP */
        return to_rt | 1u << 31;
    if ((word & 0x3fa07c00u) == 0x08a07c00u)      /* CAS */
        return to_rs | 1u << 31;
    if ((word & 0xbfa07c00u) == 0x08207c00u)      /* CASP */
        return to_rs | (rs + 1 < 31 ? 1u << (rs + 1) : 0) | 1u << 31;
    return 0;
}

/* retaa, retab: a return, whose authentication does not change the
 * frame; udf: a trap; an LSE atomic: a write of its registers. */
static unsigned known_word(const uint8_t *bytes, size_t size, uint64_t addr,
                           struct synth_insn *in, char *text, size_t len)
{
    if (size < 4)
        return 0;
    uint32_t word = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 |
                    (uint32_t)bytes[2] << 16 | (uint32_t)bytes[3] << 24;
    uint32_t lse = lse_writes(word);
    bool ret = word == WORD_RETAA || word == WORD_RETAB;
    bool udf = (word & WORD_UDF_MASK) == 0;
    if (!ret && !udf && !lse)
        return 0;
    memset(in, 0, sizeof *in);
    in->addr = addr;
    in->len = 4;
    in->op = ret ? SYNTH_OP_RET : udf ? SYNTH_OP_STOP : SYNTH_OP_OTHER;
    in->writes = lse & ~(1u << 31); /* bit 31: the marker, not sp */
    in->reg = in->base = in->dst = in->src = in->mem_base = in->mem_index =
        in->reg2 = -1;
    if (text && ret)
        snprintf(text, len, "%s", word == WORD_RETAA ? "retaa" : "retab");
    else if (text && udf)
        snprintf(text, len, "udf #%u", (unsigned)word);
    else if (text)
        snprintf(text, len, ".inst 0x%08x (an LSE atomic)", (unsigned)word);
    return 4;
}

/* Whether [at, at+len) is glibc's call_weak_fn (sysdeps/aarch64/crti.S
 * and start.S), written without CFI in every program and library linked
 * with glibc's crt files: exactly
 *     adrp x0, :got:PREINIT_FUNCTION
 *     ldr  x0, [x0, #:got_lo12:PREINIT_FUNCTION]
 *     cbz  x0, 1f
 *     b    PREINIT_FUNCTION
 * 1:  ret */
static bool is_call_weak_fn(const uint8_t *code, uint64_t len)
{
    static const uint32_t mask[5] = {0x9f00001fu, 0xffc003ffu, 0xffffffffu,
                                     0xfc000000u, 0xffffffffu};
    static const uint32_t want[5] = {0x90000000u, 0xf9400000u, 0xb4000040u,
                                     0x14000000u, 0xd65f03c0u};
    if (len != sizeof want)
        return false;
    for (int i = 0; i < 5; i++) {
        const uint8_t *p = code + 4 * i;
        uint32_t word = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                        (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        if ((word & mask[i]) != want[i])
            return false;
    }
    return true;
}

static enum synth_kind known_gap(const uint8_t *code, uint64_t at,
                                 uint64_t len)
{
    (void)at;
    return is_call_weak_fn(code, len) ? SYNTH_NO_FDE_CALL_WEAK_FN
                                      : SYNTH_NO_FDE;
}

const struct synth_isa synth_isa_aarch64 = {
    .arch = &cfi_arch_aarch64,
    .cs_arch = CS_ARCH_ARM64,
    .cs_mode = CS_MODE_ARM,
    .missing = "capstone has no AArch64 decoder",
    .entry_height = 0, /* the return address is in x30, not on the stack */
    .syscall_nr = 8,     /* x8 */
    .syscall_stack = 1,  /* x1: clone's new stack */
    .clone_nr = 220,
    .clone3_nr = 435,
    .dwarf_of_name = dwarf_of_name,
    .classify = classify,
    .known_word = known_word,
    .known_gap = known_gap,
};
