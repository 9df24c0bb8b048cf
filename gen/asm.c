/* SPDX-License-Identifier: MIT */
/* asm.c — the .S file: GNU as syntax, x86-64 or AArch64, one function
 * per FDE, the directives of each group followed by its code bytes, a
 * comment with the address of each run of code and with the meaning of
 * each .cfi_escape.
 *
 * gas takes a register of a .cfi_* directive as a name or as a DWARF
 * number; both spellings are used. On x86-64 the names are those of
 * cfi/ (%rbx, %xmm16, %k0), all of which gas 2.40 reads. On AArch64
 * gas 2.40 reads x0-x30 and sp, and for 64-95 not v8 but d8 (or q8):
 * those are written, every other register as its number. Code on
 * AArch64 is 4-byte words: nops, or zero words where x86-64 has .nops.
 * Labels are local (no .globl): a PC-relative personality or LSDA
 * pointer to a global symbol would need a dynamic relocation in a shared
 * object. */
#include "internal.h"

#include <inttypes.h>

/* The encoding of AArch64's nop (hint 0). */
#define A64_NOP "0xd503201f"

static void put_reg_a64(FILE *out, const struct gen_insn *insn, uint32_t reg)
{
    if (insn->reg_as_number || (reg > 31 && (reg < 64 || reg > 95)))
        fprintf(out, "%" PRIu32, reg);
    else if (reg > 31)
        fprintf(out, "d%" PRIu32, reg - 64);
    else
        fputs(cfi_arch_reg_name(&cfi_arch_aarch64, reg), out);
}

static void put_reg(FILE *out, const struct gen_target *target,
                    const struct gen_insn *insn, uint32_t reg)
{
    if (target->ra_signing) {
        put_reg_a64(out, insn, reg);
        return;
    }
    const char *name = cfi_arch_reg_name(target->names, reg);
    if (name && !insn->reg_as_number)
        fprintf(out, "%%%s", name);
    else
        fprintf(out, "%" PRIu32, reg);
}

/* The offset a directive writes for a factored operand (× -8). */
static int64_t unfactored(uint64_t operand)
{
    return (int64_t)(operand * (uint64_t)-8);
}

static void put_directive(FILE *out, const struct gen_target *t,
                          const struct gen_insn *i)
{
    switch (i->opcode) {
    case GEN_CFA_def_cfa: case GEN_CFA_def_cfa_sf:
        fputs("\t.cfi_def_cfa ", out);
        put_reg(out, t, i, i->reg);
        fprintf(out, ", %" PRId64 "\n", i->opcode == GEN_CFA_def_cfa
                                            ? (int64_t)i->operand
                                            : unfactored(i->operand));
        return;
    case GEN_CFA_def_cfa_offset: case GEN_CFA_def_cfa_offset_sf:
        fprintf(out, "\t.cfi_def_cfa_offset %" PRId64 "\n",
                i->opcode == GEN_CFA_def_cfa_offset ? (int64_t)i->operand
                                                    : unfactored(i->operand));
        return;
    case GEN_CFA_offset: case GEN_CFA_offset_extended:
    case GEN_CFA_offset_extended_sf: case GEN_CFA_val_offset:
    case GEN_CFA_val_offset_sf:
        fputs(i->opcode == GEN_CFA_val_offset || i->opcode == GEN_CFA_val_offset_sf
                  ? "\t.cfi_val_offset " : "\t.cfi_offset ",
              out);
        put_reg(out, t, i, i->reg);
        fprintf(out, ", %" PRId64 "\n", unfactored(i->operand));
        return;
    case GEN_CFA_register:
        fputs("\t.cfi_register ", out);
        put_reg(out, t, i, i->reg);
        fputs(", ", out);
        put_reg(out, t, i, i->reg2);
        putc('\n', out);
        return;
    case GEN_CFA_remember_state: fputs("\t.cfi_remember_state\n", out); return;
    case GEN_CFA_restore_state: fputs("\t.cfi_restore_state\n", out); return;
    case GEN_CFA_GNU_window_save:
        fputs(t->ra_signing ? "\t.cfi_negate_ra_state\n"
                            : "\t.cfi_window_save\n", out);
        return;
    default: break;
    }
    const char *name = i->opcode == GEN_CFA_def_cfa_register ? "def_cfa_register"
                     : i->opcode == GEN_CFA_undefined ? "undefined"
                     : i->opcode == GEN_CFA_same_value ? "same_value"
                                                       : "restore";
    fprintf(out, "\t.cfi_%s ", name);
    put_reg(out, t, i, i->reg);
    putc('\n', out);
}

/* "offset_extended_sf r3 -2": the escaped instruction, for the reader. */
static void put_escape_comment(FILE *out, const struct gen_target *t,
                               const struct gen_insn *i)
{
    enum gen_cfa_shape shape = GEN_CFA_NONE;
    gen_cfa_shape(i->opcode, &shape);
    const char *name = gen_target_op_name(t, i->opcode);
    fprintf(out, "/* %s", name ? name : "?");
    switch (shape) {
    case GEN_CFA_NONE: break;
    case GEN_CFA_REG: fprintf(out, " r%" PRIu32, i->reg); break;
    case GEN_CFA_REG_REG:
        fprintf(out, " r%" PRIu32 " r%" PRIu32, i->reg, i->reg2);
        break;
    case GEN_CFA_REG_UOFF: case GEN_CFA_REG_UFAC:
        fprintf(out, " r%" PRIu32 " %" PRIu64, i->reg, i->operand);
        break;
    case GEN_CFA_REG_SFAC:
        fprintf(out, " r%" PRIu32 " %" PRId64, i->reg, (int64_t)i->operand);
        break;
    case GEN_CFA_UOFF: case GEN_CFA_UNUM:
        fprintf(out, " %" PRIu64, i->operand);
        break;
    case GEN_CFA_SFAC: fprintf(out, " %" PRId64, (int64_t)i->operand); break;
    case GEN_CFA_UNUM_SCODE:
        fprintf(out, " %" PRIu64 " %" PRId64, i->operand, (int64_t)i->operand2);
        break;
    case GEN_CFA_REG_EXPR:
        fprintf(out, " r%" PRIu32, i->reg);
        /* fall through */
    case GEN_CFA_EXPR:
        fputs(": ", out);
        gen_expr_print(i->expr, out);
        break;
    }
    fputs(" */\n", out);
}

static void put_escape(FILE *out, const struct gen_target *t,
                       const struct gen_insn *i)
{
    uint8_t bytes[GEN_INSN_BYTES_MAX];
    size_t n = gen_insn_encode(i, bytes);
    fputs("\t.cfi_escape ", out);
    for (size_t k = 0; k < n; k++)
        fprintf(out, "%s0x%02x", k ? ", " : "", bytes[k]);
    fputs("\n\t\t", out);
    put_escape_comment(out, t, i);
}

/* The same styles on AArch64, in nops: `code` is a multiple of 4. */
static void put_code_a64(FILE *out, const struct gen_group *g,
                         const char *comment)
{
    uint32_t n = g->code / 4;
    switch (g->code_style) {
    case GEN_CODE_NOPS: /* gas 2.40 has no .nops for AArch64: zero words */
        fprintf(out, "\t.skip %" PRIu32 "\t\t\t%s\n", g->code, comment);
        return;
    case GEN_CODE_FILL:
        fprintf(out, "\t.fill %" PRIu32 ", 4, " A64_NOP "\t%s\n", n, comment);
        return;
    case GEN_CODE_NOP:
        for (uint32_t k = 0; k < n; k++)
            fprintf(out, "\tnop\t\t\t\t%s\n", k ? "" : comment);
        return;
    case GEN_CODE_BYTES:
        fputs("\t.inst ", out);
        for (uint32_t k = 0; k < n; k++)
            fprintf(out, "%s" A64_NOP, k ? ", " : "");
        fprintf(out, "\t%s\n", comment);
        return;
    default:
        fprintf(out, "\t.rept %" PRIu32 "\n\tnop\n\t.endr\t\t\t\t%s\n", n,
                comment);
        return;
    }
}

static void put_code(FILE *out, const struct gen_target *t,
                     const struct gen_group *g, uint64_t addr)
{
    char comment[48];
    snprintf(comment, sizeof comment, "/* 0x%" PRIx64 " */", addr);
    if (t->ra_signing) {
        put_code_a64(out, g, comment);
        return;
    }
    switch (g->code_style) {
    case GEN_CODE_NOPS: fprintf(out, "\t.nops %" PRIu32 "\t\t\t%s\n", g->code, comment); return;
    case GEN_CODE_FILL: fprintf(out, "\t.fill %" PRIu32 ", 1, 0x90\t\t%s\n", g->code, comment); return;
    case GEN_CODE_NOP:
        for (uint32_t k = 0; k < g->code; k++)
            fprintf(out, "\tnop\t\t\t\t%s\n", k ? "" : comment);
        return;
    case GEN_CODE_BYTES:
        fputs("\t.byte ", out);
        for (uint32_t k = 0; k < g->code; k++)
            fprintf(out, "%s0x90", k ? ", " : "");
        fprintf(out, "\t%s\n", comment);
        return;
    default:
        fprintf(out, "\t.skip %" PRIu32 ", 0x90\t\t%s\n", g->code, comment);
        return;
    }
}

static void put_attributes(FILE *out, const struct gen_target *t,
                           const struct gen_fde *fde)
{
    if (fde->per_encoding != CFI_PE_OMIT)
        fprintf(out, "\t.cfi_personality 0x%02x, f%" PRIu32 "\n",
                fde->per_encoding, fde->personality);
    if (fde->lsda_encoding != CFI_PE_OMIT)
        fprintf(out, "\t.cfi_lsda 0x%02x, f%" PRIu32 "\n", fde->lsda_encoding,
                fde->lsda);
    if (fde->signal_frame)
        fputs("\t.cfi_signal_frame\n", out);
    if (fde->b_key)
        fputs("\t.cfi_b_key_frame\n", out);
    if (fde->ra != t->ra)
        fprintf(out, "\t.cfi_return_column %" PRIu32 "\n", fde->ra);
}

static void put_function(FILE *out, const struct gen_target *t,
                         const struct gen_fde *fde, uint32_t index)
{
    fprintf(out, "\nf%" PRIu32 ":\t\t\t\t\t/* 0x%" PRIx64 " */\n", index,
            fde->begin);
    fputs(fde->simple ? "\t.cfi_startproc simple\n" : "\t.cfi_startproc\n", out);
    put_attributes(out, t, fde);
    uint64_t addr = fde->begin;
    for (uint32_t g = 0; g < fde->ngroups; g++) {
        const struct gen_group *group = &fde->groups[g];
        for (uint32_t k = 0; k < group->count; k++) {
            const struct gen_insn *insn = &fde->insns[group->first + k];
            if (insn->spelling == GEN_SPELL_DIRECTIVE)
                put_directive(out, t, insn);
            else
                put_escape(out, t, insn);
        }
        if (group->code)
            put_code(out, t, group, addr);
        addr += group->code;
    }
    fprintf(out, "\t.cfi_endproc\t\t\t\t/* end 0x%" PRIx64 " */\n", fde->end);
}

static const char *sections_name(const struct gen_program *p)
{
    return p->eh_frame && p->debug_frame ? "both"
         : p->debug_frame ? "debug_frame" : "eh_frame";
}

void gen_asm_write(const struct gen_program *p, FILE *out)
{
    bool a64 = p->options.arch == GEN_ARCH_AARCH64;
    fprintf(out,
            "/* cfisem gen --seed %" PRIu64 " --fdes %" PRIu32
            " --section %s%s%s\n"
            " * Build: %s -shared -nostdlib -Wl,--section-start=.text=0x1000"
            " -Wl,--build-id=none -o X.so X.S */\n",
            p->options.seed, p->nfdes, sections_name(p),
            a64 ? " --arch aarch64" : "",
            p->options.ill_formed ? " --ill-formed" : "",
            a64 ? "aarch64-linux-gnu-gcc" : "cc");
    if (p->eh_frame && p->debug_frame)
        fputs("\t.cfi_sections .eh_frame, .debug_frame\n", out);
    else if (p->debug_frame)
        fputs("\t.cfi_sections .debug_frame\n", out);
    else if (p->options.seed % 2)
        fputs("\t.cfi_sections .eh_frame\n", out);
    fputs("\t.text\n", out);
    for (uint32_t f = 0; f < p->nfdes; f++)
        put_function(out, p->target, &p->fdes[f], f);
}
