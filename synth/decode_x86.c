/* SPDX-License-Identifier: MIT */
/* decode_x86.c — x86-64 instructions from capstone 4's x86 mode,
 * classified by what they do to the stack and to control flow; the
 * System V ABI's facts for the analysis. */
#include <string.h>

#include "decode.h"

/* The DWARF number of a general-purpose register named by any of its
 * widths ("rbx", "ebx", "bx", "bl", "r12d", "spl"), or -1. */
static int gpr_from_name(const char *name)
{
    static const char *const names[16][5] = {
        {"rax", "eax", "ax", "al", "ah"},   {"rdx", "edx", "dx", "dl", "dh"},
        {"rcx", "ecx", "cx", "cl", "ch"},   {"rbx", "ebx", "bx", "bl", "bh"},
        {"rsi", "esi", "si", "sil", ""},    {"rdi", "edi", "di", "dil", ""},
        {"rbp", "ebp", "bp", "bpl", ""},    {"rsp", "esp", "sp", "spl", ""},
        {"r8", "r8d", "r8w", "r8b", ""},    {"r9", "r9d", "r9w", "r9b", ""},
        {"r10", "r10d", "r10w", "r10b", ""}, {"r11", "r11d", "r11w", "r11b", ""},
        {"r12", "r12d", "r12w", "r12b", ""}, {"r13", "r13d", "r13w", "r13b", ""},
        {"r14", "r14d", "r14w", "r14b", ""}, {"r15", "r15d", "r15w", "r15b", ""},
    };
    for (int r = 0; r < 16; r++)
        for (int w = 0; w < 5; w++)
            if (names[r][w][0] && !strcmp(name, names[r][w]))
                return r;
    return -1;
}

static int gpr(const struct synth_decoder *d, unsigned reg)
{
    return synth_dwarf(d, reg);
}

static bool is_reg(const cs_x86_op *op, const struct synth_decoder *d,
                   int dwarf)
{
    return op->type == X86_OP_REG && gpr(d, op->reg) == dwarf &&
           op->size == 8;
}

static bool is_jcc(unsigned id)
{
    switch (id) {
    case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
    case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JE: case X86_INS_JGE:
    case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
    case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO:
    case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS: case X86_INS_LOOP:
    case X86_INS_LOOPE: case X86_INS_LOOPNE:
        return true;
    default:
        return false;
    }
}

static void note_memory(const struct synth_decoder *d, const cs_x86_op *op,
                        const cs_insn *ci, struct synth_insn *in)
{
    in->mem_base = (int8_t)gpr(d, op->mem.base);
    in->mem_index = (int8_t)gpr(d, op->mem.index);
    in->mem_scale = (uint8_t)op->mem.scale;
    in->disp = op->mem.disp;
    in->mem_rip = op->mem.base == X86_REG_RIP;
    if (in->mem_rip)
        in->target = ci->address + ci->size + (uint64_t)op->mem.disp;
}

/* mov, lea, add, sub, and with rsp or rbp as destination; mov and lea
 * from rsp into another register. */
static bool classify_stack_write(const struct synth_decoder *d,
                                 const cs_insn *ci, struct synth_insn *in)
{
    const cs_x86 *x = &ci->detail->x86;
    const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
    bool to_rsp = x->op_count >= 1 && o0->type == X86_OP_REG &&
                  gpr(d, o0->reg) == CFI_REG_RSP;
    bool to_rbp = x->op_count >= 1 && is_reg(o0, d, CFI_REG_RBP);
    bool to_other = x->op_count == 2 && o0->type == X86_OP_REG &&
                    o0->size == 8 && gpr(d, o0->reg) >= 0 && !to_rsp &&
                    !to_rbp;
    if (!to_rsp && !to_rbp && !to_other)
        return false;
    unsigned id = ci->id;
    bool imm = x->op_count == 2 && o1->type == X86_OP_IMM;
    bool lea_mem = id == X86_INS_LEA && o1->type == X86_OP_MEM &&
                   o1->mem.index == X86_REG_INVALID;
    int src = x->op_count == 2 ? (o1->type == X86_OP_REG ? gpr(d, o1->reg)
                                  : lea_mem ? gpr(d, o1->mem.base) : -1)
                               : -1;
    int64_t off = lea_mem ? o1->mem.disp : 0;
    bool mov_reg = id == X86_INS_MOV && x->op_count == 2 &&
                   o1->type == X86_OP_REG && o1->size == 8;
    in->op = SYNTH_OP_OTHER;
    if (to_rsp && o0->size != 8) {
        in->op = SYNTH_OP_RSP_UNKNOWN;
    } else if (to_rsp && imm && (id == X86_INS_ADD || id == X86_INS_SUB)) {
        in->op = SYNTH_OP_ADD_RSP;
        in->imm = id == X86_INS_ADD ? o1->imm : -o1->imm;
    } else if (to_rsp && imm && id == X86_INS_AND) {
        in->op = SYNTH_OP_AND_RSP;
        in->imm = o1->imm;
    } else if (to_rsp && (mov_reg || lea_mem) && src == CFI_REG_RSP) {
        in->op = SYNTH_OP_ADD_RSP;
        in->imm = off;
    } else if (to_rsp && (mov_reg || lea_mem) && src >= 0) {
        in->op = SYNTH_OP_RSP_FROM_REG;
        in->base = (int8_t)src;
        in->imm = off;
    } else if (to_rsp) {
        in->op = SYNTH_OP_RSP_UNKNOWN;
    } else if ((mov_reg || lea_mem) && src == CFI_REG_RSP) {
        in->op = to_rbp ? SYNTH_OP_RBP_FROM_RSP : SYNTH_OP_REG_FROM_RSP;
        in->imm = off;
    } else if (to_rbp && (mov_reg || lea_mem) && src >= 0) {
        in->op = SYNTH_OP_RBP_FROM_REG;
        in->base = (int8_t)src;
        in->imm = off;
    } else {
        return false; /* another write: a clobber, seen in `writes` */
    }
    return true;
}

/* mov [base+disp], reg64 and mov reg64, [base+disp]: saves and restores
 * when base holds a known offset from the CFA (rsp, rbp, aux). */
static bool classify_move(const struct synth_decoder *d, const cs_insn *ci,
                          struct synth_insn *in)
{
    const cs_x86 *x = &ci->detail->x86;
    if (ci->id != X86_INS_MOV || x->op_count != 2)
        return false;
    const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
    const cs_x86_op *mem = o0->type == X86_OP_MEM ? o0 : o1;
    const cs_x86_op *reg = o0->type == X86_OP_MEM ? o1 : o0;
    if (mem->type != X86_OP_MEM || reg->type != X86_OP_REG ||
        reg->size != 8 || mem->mem.index != X86_REG_INVALID)
        return false;
    int base = gpr(d, mem->mem.base);
    if (base < 0)
        return false;
    in->op = mem == o0 ? SYNTH_OP_STORE : SYNTH_OP_LOAD;
    in->reg = (int8_t)gpr(d, reg->reg);
    in->base = (int8_t)base;
    in->disp = mem->mem.disp;
    return in->reg >= 0;
}

static void classify_branch(const cs_insn *ci, struct synth_insn *in)
{
    const cs_x86 *x = &ci->detail->x86;
    bool direct = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
    /* an indirect branch has no target (not the address of its operand) */
    in->target = direct ? (uint64_t)x->operands[0].imm : 0;
    switch (ci->id) {
    case X86_INS_CALL: in->op = SYNTH_OP_CALL; break;
    case X86_INS_JMP:
        in->op = direct ? SYNTH_OP_JMP : SYNTH_OP_JMP_INDIRECT;
        break;
    default: in->op = SYNTH_OP_JCC; break;
    }
}

/* The flags a conditional jump after a compare reads. */
static bool sets_flags(const cs_insn *ci)
{
    const uint64_t written =
        X86_EFLAGS_MODIFY_CF | X86_EFLAGS_MODIFY_ZF | X86_EFLAGS_MODIFY_SF |
        X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_CF | X86_EFLAGS_RESET_ZF |
        X86_EFLAGS_RESET_SF | X86_EFLAGS_RESET_OF | X86_EFLAGS_SET_CF |
        X86_EFLAGS_SET_ZF | X86_EFLAGS_SET_SF | X86_EFLAGS_SET_OF |
        X86_EFLAGS_UNDEFINED_CF | X86_EFLAGS_UNDEFINED_ZF |
        X86_EFLAGS_UNDEFINED_SF | X86_EFLAGS_UNDEFINED_OF;
    return (ci->detail->x86.eflags & written) != 0;
}

/* Operand facts the jump-table recogniser reads. */
static void note_operands(const struct synth_decoder *d, const cs_insn *ci,
                          struct synth_insn *in)
{
    const cs_x86 *x = &ci->detail->x86;
    if (x->op_count >= 1 && x->operands[0].type == X86_OP_REG)
        in->dst = (int8_t)gpr(d, x->operands[0].reg);
    for (unsigned i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_MEM)
            note_memory(d, &x->operands[i], ci, in);
    if (x->op_count != 2)
        return;
    const cs_x86_op *o1 = &x->operands[1];
    bool copy = ci->id == X86_INS_MOV || ci->id == X86_INS_MOVZX ||
                ci->id == X86_INS_MOVSX || ci->id == X86_INS_MOVSXD;
    if (copy && o1->type == X86_OP_REG && in->dst >= 0)
        in->src = (int8_t)gpr(d, o1->reg);
    in->is_mem_copy = copy && o1->type == X86_OP_MEM && in->dst >= 0;
    in->is_cmp_imm = ci->id == X86_INS_CMP && o1->type == X86_OP_IMM;
    in->is_mov_imm = ci->id == X86_INS_MOV && o1->type == X86_OP_IMM &&
                     in->dst >= 0;
    if (in->is_cmp_imm || in->is_mov_imm)
        in->imm = o1->imm;
    in->is_zeroing = (in->is_mov_imm && o1->imm == 0) ||
                     ((ci->id == X86_INS_XOR || ci->id == X86_INS_SUB) &&
                      o1->type == X86_OP_REG && in->dst >= 0 &&
                      gpr(d, o1->reg) == in->dst);
    in->is_movsxd = ci->id == X86_INS_MOVSXD && o1->type == X86_OP_MEM;
    in->is_lea = ci->id == X86_INS_LEA;
    in->is_add_reg = ci->id == X86_INS_ADD && o1->type == X86_OP_REG;
    if (in->is_add_reg)
        in->mem_base = (int8_t)gpr(d, o1->reg);
    if (in->is_lea && o1->type == X86_OP_MEM && o1->mem.scale == 1 &&
        o1->mem.disp == 0 && in->mem_base >= 0 && in->mem_index >= 0 &&
        in->dst == in->mem_base) {
        in->is_add_reg = true; /* lea R,[R+S]: add R,S */
        in->mem_base = in->mem_index;
    } else if (in->is_lea && o1->type == X86_OP_MEM && o1->mem.scale == 1 &&
               o1->mem.disp == 0 && in->mem_base >= 0 &&
               in->mem_index == in->dst) {
        in->is_add_reg = true; /* lea R,[S+R] */
    }
}

static void classify(const struct synth_decoder *d, const cs_insn *ci,
                     struct synth_insn *in)
{
    const cs_x86 *x = &ci->detail->x86;
    synth_insn_init(d, ci, in);
    in->sets_flags = sets_flags(ci);
    note_operands(d, ci, in);
    switch (ci->id) {
    case X86_INS_PUSH: case X86_INS_PUSHFQ: case X86_INS_PUSHF:
        in->op = SYNTH_OP_PUSH;
        in->imm = x->op_count == 1 ? x->operands[0].size : (ci->id ==
                  X86_INS_PUSHF ? 2 : 8);
        if (x->op_count == 1 && x->operands[0].type == X86_OP_REG)
            in->reg = (int8_t)gpr(d, x->operands[0].reg);
        if (in->imm != 8 && in->imm != 2)
            in->imm = 8; /* pushq $imm: the immediate's size is not the push */
        return;
    case X86_INS_POP: case X86_INS_POPFQ: case X86_INS_POPF:
        in->op = SYNTH_OP_POP;
        in->imm = x->op_count == 1 ? x->operands[0].size : (ci->id ==
                  X86_INS_POPF ? 2 : 8);
        if (x->op_count == 1 && x->operands[0].type == X86_OP_REG)
            in->reg = (int8_t)gpr(d, x->operands[0].reg);
        return;
    case X86_INS_LEAVE: in->op = SYNTH_OP_LEAVE; return;
    case X86_INS_ENTER:
        in->op = SYNTH_OP_ENTER;
        in->imm = x->operands[0].imm;
        in->imm2 = x->operands[1].imm;
        return;
    case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ:
        in->op = SYNTH_OP_RET; return;
    case X86_INS_HLT: case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_INT3:
        in->op = SYNTH_OP_STOP; return;
    case X86_INS_NOP: in->op = SYNTH_OP_PADDING; return;
    case X86_INS_SYSCALL: in->op = SYNTH_OP_SYSCALL; return;
    case X86_INS_CALL: case X86_INS_JMP: classify_branch(ci, in); return;
    default:
        break;
    }
    if (is_jcc(ci->id))
        classify_branch(ci, in);
    else if (!classify_stack_write(d, ci, in) && !classify_move(d, ci, in))
        in->op = SYNTH_OP_OTHER;
}


static int32_t rel32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Whether [at, at+len) is GCC's crtstuff.c code: it begins with
 * deregister_tm_clones comparing __TMC_END__ with the TM clone table,
 * which crtstuff.c lays out at the same address, either position-
 * independent (crtbeginS.o: lea X(%rip),%rdi; lea X(%rip),%rax; cmp
 * %rdi,%rax) or not (crtbegin.o: mov $X,%eax; cmp $X,%rax), and it is no
 * longer than the four functions of crtbegin*.o's .text. */
static bool is_crtstuff(const uint8_t *code, uint64_t at, uint64_t len)
{
    static const uint8_t lea_rdi[] = {0x48, 0x8d, 0x3d};
    static const uint8_t lea_rax[] = {0x48, 0x8d, 0x05};
    static const uint8_t cmp_rdi_rax[] = {0x48, 0x39, 0xf8};
    if (len > SYNTH_CRTSTUFF_MAX || len < 17)
        return false;
    if (!memcmp(code, lea_rdi, 3) && !memcmp(code + 7, lea_rax, 3) &&
        !memcmp(code + 14, cmp_rdi_rax, 3))
        return at + 7 + (uint64_t)(int64_t)rel32(code + 3) ==
               at + 14 + (uint64_t)(int64_t)rel32(code + 10);
    return code[0] == 0xb8 && code[5] == 0x48 && code[6] == 0x3d &&
           rel32(code + 1) == rel32(code + 7);
}

static enum synth_kind known_gap(const uint8_t *code, uint64_t at,
                                 uint64_t len)
{
    return is_crtstuff(code, at, len) ? SYNTH_NO_FDE_CRTSTUFF : SYNTH_NO_FDE;
}

const struct synth_isa synth_isa_x86_64 = {
    .arch = &cfi_arch_x86_64,
    .cs_arch = CS_ARCH_X86,
    .cs_mode = CS_MODE_64,
    .missing = "capstone has no x86-64 decoder",
    .entry_height = 8, /* the return address the call pushed */
    .syscall_nr = CFI_REG_RAX,
    .syscall_stack = CFI_REG_RSI,
    .clone_nr = 56,
    .clone3_nr = 435,
    .dwarf_of_name = gpr_from_name,
    .classify = classify,
    .known_word = NULL,
    .known_gap = known_gap,
};
