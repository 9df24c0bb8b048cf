/* SPDX-License-Identifier: MIT */
/* gen.c — the public face of the generator: options, the program's life,
 * the two outputs, statistics for coverage checks. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* x86-64: gas's CIE is def_cfa rsp+8, offset rip at cfa-8
 * (tc_x86_frame_initial_instructions); expressions read rax..rip. */
static const struct gen_target target_x86_64 = {
    .name = "x86-64", .names = &cfi_arch_x86_64, .code_align = 1,
    .sp = 7, .fp = 6, .ra = 16, .initial_cfa_offset = 8,
    .initial_ra_saved = true,
    .expr_regs = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
};

/* AArch64: instructions of 4 bytes, gas's CIE is def_cfa sp+0
 * (aarch64_frame_initial_instructions), the return column x30; the
 * expressions read x0-x30 and sp, the stack and frame pointers where
 * x86-64's weights favour rsp and rbp. */
static const struct gen_target target_aarch64 = {
    .name = "aarch64", .names = &cfi_arch_aarch64, .code_align = 4,
    .sp = 31, .fp = 29, .ra = 30, .initial_cfa_offset = 0,
    .initial_ra_saved = false, .ra_signing = true,
    .expr_regs = {0, 1, 2, 3, 4, 5, 29, 31, 8, 9, 19, 20, 21, 22, 23, 24,
                  30},
};

const struct gen_target *gen_target(enum gen_arch arch)
{
    return arch == GEN_ARCH_AARCH64 ? &target_aarch64 : &target_x86_64;
}

/* The sections and the number of functions come from their own stream,
 * so that writing them on the command line (as the .S header does)
 * gives the same program. */
static void choose_shape(struct gen_program *p)
{
    struct gen_rng rng;
    gen_rng_seed(&rng, p->options.seed ^ UINT64_C(0x5eed0f5ec7105));
    enum gen_sections sections = p->options.sections;
    if (sections == GEN_SECTIONS_RANDOM) {
        static const unsigned weights[] = {0, 60, 20, 20};
        sections = (enum gen_sections)gen_rng_pick(&rng, weights, 4);
    }
    p->eh_frame = sections != GEN_SECTIONS_DEBUG_FRAME;
    p->debug_frame = sections != GEN_SECTIONS_EH_FRAME;
    p->nfdes = p->options.nfdes;
    if (p->nfdes == 0)
        p->nfdes = gen_rng_chance(&rng, 10) ? (uint32_t)gen_rng_range(&rng, 7, 16)
                                            : (uint32_t)gen_rng_range(&rng, 1, 6);
}

enum cfi_status gen_program_new(const struct gen_options *options,
                                struct gen_program **program,
                                struct cfi_diag *diag)
{
    *program = NULL;
    if (options->nfdes > GEN_FDES_MAX ||
        (unsigned)options->sections > GEN_SECTIONS_BOTH ||
        (unsigned)options->arch > GEN_ARCH_AARCH64)
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        "options out of range");
    struct gen_program *p = calloc(1, sizeof *p);
    if (!p)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    p->options = *options;
    p->target = gen_target(options->arch);
    choose_shape(p);
    struct gen_rng rng;
    gen_rng_seed(&rng, options->seed);
    enum cfi_status status = gen_generate(p, &rng);
    if (status == CFI_OK)
        status = gen_layout(p);
    if (status != CFI_OK)
        cfi_fail(diag, status, CFI_NO_OFFSET, "out of memory");
    else
        status = gen_check_model(p, diag);
    if (status != CFI_OK) {
        gen_program_free(p);
        return status;
    }
    *program = p;
    return CFI_OK;
}

void gen_program_free(struct gen_program *p)
{
    if (!p)
        return;
    for (uint32_t f = 0; f < GEN_FDES_MAX; f++) {
        struct gen_fde *fde = &p->fdes[f];
        for (uint32_t i = 0; i < fde->ninsns; i++)
            free(fde->insns[i].expr);
        free(fde->insns);
        free(fde->groups);
        free(p->nodes[f]);
    }
    free(p);
}

void gen_write_asm(const struct gen_program *program, FILE *out)
{
    gen_asm_write(program, out);
}

void gen_write_expect(const struct gen_program *program, FILE *out)
{
    gen_model_write(program, out);
}

void gen_expect_split(const char *expect, size_t *stdout_len,
                      const char **error, size_t *error_len)
{
    const char *line = expect;
    *error = NULL;
    *error_len = 0;
    *stdout_len = strlen(expect);
    while (*line) {
        size_t len = strcspn(line, "\n");
        if (strncmp(line, "error: ", 7) == 0) {
            *stdout_len = (size_t)(line - expect);
            *error = line + 7;
            *error_len = len - 7;
            return;
        }
        line += len + (line[len] == '\n');
    }
}

/* ------------------------------------------------------------------ */
/* Statistics                                                           */
/* ------------------------------------------------------------------ */

static void count_nodes(const struct gen_program *p,
                        const struct gen_node *nodes, size_t n,
                        struct gen_stats *stats, unsigned *depth)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t bytes[GEN_INSN_BYTES_MAX];
        const struct gen_insn *insn = nodes[i].insn;
        gen_node_encode(&nodes[i], p->target->code_align, bytes);
        uint8_t first = bytes[0];
        stats->cfa_ops[first & 0xc0 ? first & 0xc0 : first]++;
        if (insn && insn->expr)
            for (unsigned k = 0; k < insn->expr->nops; k++) {
                const struct gen_op *op = &insn->expr->ops[k];
                stats->dw_ops[gen_dw_ops[op->kind].first + op->index]++;
            }
        if (insn && *depth > 0 &&
            insn->opcode >= GEN_A64_AARCH64_set_ra_state &&
            insn->opcode <= GEN_A64_AARCH64_negate_ra_state)
            stats->nested_ra_state_ops++;
        if (insn && insn->opcode == GEN_CFA_remember_state &&
            ++*depth > stats->max_remember_depth)
            stats->max_remember_depth = *depth;
        if (insn && insn->opcode == GEN_CFA_restore_state && *depth)
            --*depth;
    }
}

static void count_section(const struct gen_program *p,
                          const struct gen_section_layout *l,
                          struct gen_stats *stats)
{
    unsigned depth = 0, ncies = 0;
    for (uint32_t c = 0; c < l->ncies; c++) {
        if (l->cies[c].removed) {
            stats->eh_frame_cies_merged++;
            continue;
        }
        ncies++;
        count_nodes(p, p->nodes[l->cies[c].fde], l->cies[c].ninsns, stats,
                    &depth);
    }
    for (uint32_t f = 0; f < p->nfdes; f++) {
        uint32_t skip = l->cies[l->fdes[f].cie].ninsns;
        depth = 0;
        count_nodes(p, p->nodes[f] + skip, p->nnodes[f] - skip, stats, &depth);
    }
    if (l->section == CFI_EH_FRAME) {
        stats->eh_frame_cies += ncies;
        stats->eh_frame_fdes += p->nfdes;
    } else {
        stats->debug_frame_cies += ncies;
        stats->debug_frame_fdes += p->nfdes;
    }
}

void gen_program_stats(const struct gen_program *p, struct gen_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    if (p->eh_frame)
        count_section(p, &p->layouts[CFI_EH_FRAME], stats);
    if (p->debug_frame)
        count_section(p, &p->layouts[CFI_DEBUG_FRAME], stats);
    for (uint32_t f = 0; f < p->nfdes; f++) {
        stats->simple_fdes += p->fdes[f].simple;
        stats->personality_fdes += p->fdes[f].per_encoding != CFI_PE_OMIT;
        stats->lsda_fdes += p->fdes[f].lsda_encoding != CFI_PE_OMIT;
        stats->signal_fdes += p->fdes[f].signal_frame;
        stats->b_key_fdes += p->fdes[f].b_key;
    }
}
