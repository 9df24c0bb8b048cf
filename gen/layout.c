/* SPDX-License-Identifier: MIT */
/* layout.c — how GNU as 2.40 and ld 2.40 lay the records out, modelled
 * from their sources (gas/dw2gencfi.c, bfd/elf-eh-frame.c) and checked by
 * tests/check_gen.c against what they write.
 *
 * gas, per function: .cfi_startproc adds the initial instructions
 * (def_cfa rsp+8, offset rip at cfa-8 on x86-64, def_cfa sp+0 on
 * AArch64; none with `simple`); each CFI directive at an address other
 * than the last one is preceded by an advance (encoded as advance_loc,
 * _loc1, _loc2 or _loc4, the smallest that holds the delta in units of
 * the code alignment factor, 4 on AArch64; gas never emits a zero
 * advance). .cfi_negate_ra_state, like an escape, ends the instructions
 * gas may move into a CIE.
 *
 * gas, at the end, per section (.eh_frame, then .debug_frame, each
 * starting with no CIE): for each FDE in order, the most recent CIE with
 * the same return column, signal flag, personality (encoding and symbol)
 * and LSDA encoding whose instructions are a prefix of the FDE's list is
 * chosen (on AArch64, with the same key: .cfi_b_key_frame), and the FDE
 * keeps the rest; when none is, a new CIE is written
 * right before the FDE, holding the FDE's leading instructions of the
 * kinds of initial_cie_insn (def_cfa, def_cfa_register, def_cfa_offset,
 * offset, val_offset, register, restore, undefined, same_value, written as
 * directives, up to the first advance, escape or other directive).
 * In .debug_frame there is no personality and no LSDA.
 *
 * Record sizes: .eh_frame CIE: length, id, version 1, augmentation string
 * (z, P, L, R, then B, then S; .debug_frame: S alone, never B), code
 * and data alignment (1 byte each), return column (1 byte),
 * augmentation data length and data (P: encoding and pointer, L:
 * encoding, R: encoding). FDE: length, CIE pointer, begin and
 * size (4 bytes each, pcrel sdata4), augmentation data length and the LSDA
 * pointer. ld parses .eh_frame, drops the DW_CFA_nop bytes after the last
 * instruction that is not a nop, pads each record to 4 bytes, and merges
 * a CIE into an earlier one that is the same to it (ld_equal below: gas
 * writes two CIEs for two personality routines, ld may keep one). But
 * ld 2.40 does not know AArch64's 0x2b and 0x2c (skip_cfa_op): when a
 * record has one, ld leaves the whole .eh_frame as gas wrote it (and
 * says "no .eh_frame_hdr table will be created"), records padded with
 * nops to 4 bytes, no CIE merged.
 * .debug_frame is not touched by ld: gas pads each record to 8 bytes;
 * CIE id 0xffffffff, version 1, no augmentation data; FDE begin and size
 * are 8 bytes each. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* gas's initial instructions: on x86-64 (tc_x86_frame_initial_instructions)
 * def_cfa rsp+8; offset rip at cfa-8; on AArch64
 * (aarch64_frame_initial_instructions) def_cfa sp+0. */
static const struct gen_insn initial_def_cfa[] = {
    [GEN_ARCH_X86_64] = {.opcode = GEN_CFA_def_cfa,
                         .spelling = GEN_SPELL_IMPLICIT, .reg = 7,
                         .operand = 8},
    [GEN_ARCH_AARCH64] = {.opcode = GEN_CFA_def_cfa,
                          .spelling = GEN_SPELL_IMPLICIT, .reg = 31,
                          .operand = 0},
};
static const struct gen_insn initial_offset_rip = {
    .opcode = GEN_CFA_offset, .spelling = GEN_SPELL_IMPLICIT,
    .reg = 16, .operand = 1};

static bool push_node(struct gen_node **nodes, size_t *n, size_t *cap,
                      const struct gen_insn *insn, uint64_t advance)
{
    if (*n == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 16;
        struct gen_node *grown = realloc(*nodes, grown_cap * sizeof *grown);
        if (!grown)
            return false;
        *nodes = grown;
        *cap = grown_cap;
    }
    (*nodes)[(*n)++] = (struct gen_node){insn, advance};
    return true;
}

/* gas's list for one function. */
static bool build_nodes(const struct gen_program *p, const struct gen_fde *fde,
                        struct gen_node **nodes, size_t *count)
{
    size_t cap = 0;
    *nodes = NULL;
    *count = 0;
    bool ok = true;
    if (!fde->simple)
        ok = push_node(nodes, count, &cap,
                       &initial_def_cfa[p->options.arch], 0) &&
             (!p->target->initial_ra_saved ||
              push_node(nodes, count, &cap, &initial_offset_rip, 0));
    uint64_t addr = fde->begin, last = fde->begin;
    for (uint32_t g = 0; ok && g < fde->ngroups; g++) {
        const struct gen_group *group = &fde->groups[g];
        if (group->count > 0 && addr != last) {
            ok = push_node(nodes, count, &cap, NULL, addr - last);
            last = addr;
        }
        for (uint32_t i = 0; ok && i < group->count; i++)
            ok = push_node(nodes, count, &cap, &fde->insns[group->first + i], 0);
        addr += group->code;
    }
    return ok;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                             */
/* ------------------------------------------------------------------ */

static size_t encode_advance(uint64_t delta, uint8_t *out)
{
    if (delta <= 0x3f) {
        out[0] = (uint8_t)(GEN_CFA_advance_loc | delta);
        return 1;
    }
    unsigned size = delta <= 0xff ? 1 : delta <= 0xffff ? 2 : 4;
    out[0] = size == 1 ? GEN_CFA_advance_loc1
           : size == 2 ? GEN_CFA_advance_loc2 : GEN_CFA_advance_loc4;
    for (unsigned i = 0; i < size; i++)
        out[1 + i] = (uint8_t)(delta >> (8 * i));
    return 1 + size;
}

size_t gen_node_encode(const struct gen_node *node, unsigned code_align,
                       uint8_t *out)
{
    return node->insn ? gen_insn_encode(node->insn, out)
                      : encode_advance(node->advance / code_align, out);
}

uint8_t *gen_encode_nodes(const struct gen_node *nodes, size_t count,
                          unsigned code_align, size_t *len)
{
    uint8_t *bytes = malloc(count * GEN_INSN_BYTES_MAX + 1);
    size_t n = 0;
    for (size_t i = 0; bytes && i < count; i++)
        n += gen_node_encode(&nodes[i], code_align, bytes + n);
    *len = n;
    return bytes;
}

/* Bytes of the program, and bytes up to the end of its last instruction
 * that is not a DW_CFA_nop (what ld keeps in .eh_frame). */
static void program_size(const struct gen_program *p,
                         const struct gen_node *nodes, size_t count,
                         uint64_t *full, uint64_t *kept)
{
    uint8_t scratch[GEN_INSN_BYTES_MAX];
    *full = *kept = 0;
    for (size_t i = 0; i < count; i++) {
        *full += gen_node_encode(&nodes[i], p->target->code_align, scratch);
        if (nodes[i].insn == NULL || nodes[i].insn->opcode != GEN_CFA_nop)
            *kept = *full;
    }
}

/* ------------------------------------------------------------------ */
/* CIEs                                                                 */
/* ------------------------------------------------------------------ */

/* What must be equal for two FDEs to share a CIE in `section` (the key
 * too in .debug_frame, where gas does not write the 'B'). */
static bool same_cie_attributes(const struct gen_fde *a,
                                const struct gen_fde *b,
                                enum cfi_section section)
{
    if (a->ra != b->ra || a->signal_frame != b->signal_frame ||
        a->b_key != b->b_key)
        return false;
    if (section == CFI_DEBUG_FRAME)
        return true;
    if (a->per_encoding != b->per_encoding ||
        a->lsda_encoding != b->lsda_encoding)
        return false;
    return a->per_encoding == CFI_PE_OMIT || a->personality == b->personality;
}

static bool is_prefix(const struct gen_node *cie, size_t ncie,
                      const struct gen_node *list, size_t n)
{
    if (n < ncie)
        return false;
    for (size_t i = 0; i < ncie; i++)
        if (!list[i].insn || !gen_insn_gas_equal(cie[i].insn, list[i].insn))
            return false;
    return true;
}

static size_t leading_cie_insns(const struct gen_node *list, size_t n)
{
    size_t k = 0;
    while (k < n && list[k].insn && gen_insn_cie_kind(list[k].insn))
        k++;
    return k;
}

static unsigned pointer_size(uint8_t encoding)
{
    switch (encoding & 0x0f) {
    case CFI_PE_UDATA2: case CFI_PE_SDATA2: return 2;
    case CFI_PE_UDATA4: case CFI_PE_SDATA4: return 4;
    default: return 8; /* absptr, udata8, sdata8 */
    }
}

static uint64_t round_up(uint64_t n, uint64_t align)
{
    return (n + align - 1) / align * align;
}

static void cie_augmentation(const struct gen_fde *fde,
                             enum cfi_section section, char *aug)
{
    size_t n = 0;
    if (section == CFI_EH_FRAME) {
        aug[n++] = 'z';
        if (fde->per_encoding != CFI_PE_OMIT)
            aug[n++] = 'P';
        if (fde->lsda_encoding != CFI_PE_OMIT)
            aug[n++] = 'L';
        aug[n++] = 'R';
        if (fde->b_key)
            aug[n++] = 'B';
    }
    if (fde->signal_frame)
        aug[n++] = 'S';
    aug[n] = '\0';
}

static uint64_t cie_size(const struct gen_program *p,
                         const struct gen_section_layout *l,
                         const struct gen_cie_layout *cie)
{
    enum cfi_section section = l->section;
    const struct gen_fde *fde = &p->fdes[cie->fde];
    uint64_t full, kept;
    program_size(p, p->nodes[cie->fde], cie->ninsns, &full, &kept);
    /* length, id, version, string, caf, daf, return column */
    uint64_t size = 4 + 4 + 1 + strlen(cie->augmentation) + 1 + 1 + 1 + 1;
    if (section == CFI_DEBUG_FRAME)
        return round_up(size + full, 8);
    uint64_t data = 1; /* R */
    if (fde->per_encoding != CFI_PE_OMIT)
        data += 1 + pointer_size(fde->per_encoding);
    if (fde->lsda_encoding != CFI_PE_OMIT)
        data += 1;
    return round_up(size + 1 + data + (l->ld_edits ? kept : full), 4);
}

static uint64_t fde_size(const struct gen_program *p,
                         const struct gen_section_layout *l, uint32_t f,
                         size_t first)
{
    enum cfi_section section = l->section;
    const struct gen_fde *fde = &p->fdes[f];
    uint64_t full, kept;
    program_size(p, p->nodes[f] + first, p->nnodes[f] - first, &full, &kept);
    if (section == CFI_DEBUG_FRAME)
        return round_up(4 + 4 + 8 + 8 + full, 8);
    uint64_t data = fde->lsda_encoding != CFI_PE_OMIT
                        ? pointer_size(fde->lsda_encoding) : 0;
    return round_up(4 + 4 + 4 + 4 + 1 + data + (l->ld_edits ? kept : full), 4);
}

/* select_cie_for_fde: the CIE for FDE f, a new one if needed. */
static uint32_t select_cie(struct gen_program *p, struct gen_section_layout *l,
                           uint32_t f)
{
    const struct gen_fde *fde = &p->fdes[f];
    for (uint32_t c = l->ncies; c-- > 0;) {
        const struct gen_cie_layout *cie = &l->cies[c];
        if (same_cie_attributes(&p->fdes[cie->fde], fde, l->section) &&
            is_prefix(p->nodes[cie->fde], cie->ninsns, p->nodes[f],
                      p->nnodes[f]))
            return c;
    }
    struct gen_cie_layout *cie = &l->cies[l->ncies];
    memset(cie, 0, sizeof *cie);
    cie->fde = f;
    cie->ninsns = (uint32_t)leading_cie_insns(p->nodes[f], p->nnodes[f]);
    cie_augmentation(fde, l->section, cie->augmentation);
    cie->size = cie_size(p, l, cie);
    cie->kept = l->ncies;
    return l->ncies++;
}

/* The initial instructions of a CIE as ld keeps them (trailing nops
 * dropped); malloc'd, NULL when out of memory. */
static uint8_t *kept_instructions(const struct gen_program *p,
                                  const struct gen_cie_layout *cie,
                                  size_t *len)
{
    uint64_t full, kept;
    program_size(p, p->nodes[cie->fde], cie->ninsns, &full, &kept);
    uint8_t *bytes = gen_encode_nodes(p->nodes[cie->fde], cie->ninsns,
                                      p->target->code_align, len);
    *len = (size_t)kept;
    return bytes;
}

/* ld's cie_eq (elf-eh-frame.c): the same augmentation, encodings, return
 * column and initial instructions. A personality routine that is a local
 * symbol is compared by its relocation's symbol, which for a label of
 * .text is the section symbol of .text, whatever the label: two CIEs
 * whose personality routines are two labels of .text are the same CIE
 * to ld. */
static bool ld_equal(const struct gen_program *p, const struct gen_cie_layout *a,
                     const struct gen_cie_layout *b, bool *failed)
{
    const struct gen_fde *x = &p->fdes[a->fde], *y = &p->fdes[b->fde];
    if (strcmp(a->augmentation, b->augmentation) || x->ra != y->ra ||
        x->per_encoding != y->per_encoding ||
        x->lsda_encoding != y->lsda_encoding || a->size != b->size)
        return false;
    size_t alen, blen;
    uint8_t *abytes = kept_instructions(p, a, &alen);
    uint8_t *bbytes = kept_instructions(p, b, &blen);
    bool equal = abytes && bbytes && alen == blen &&
                 memcmp(abytes, bbytes, alen) == 0;
    *failed = *failed || !abytes || !bbytes;
    free(abytes);
    free(bbytes);
    return equal;
}

/* ld merges each CIE of .eh_frame into the first one equal to it. */
static bool ld_merge_cies(const struct gen_program *p,
                          struct gen_section_layout *l)
{
    bool failed = false;
    for (uint32_t c = 1; c < l->ncies; c++)
        for (uint32_t k = 0; k < c && !l->cies[c].removed; k++)
            if (!l->cies[k].removed &&
                ld_equal(p, &l->cies[k], &l->cies[c], &failed)) {
                l->cies[c].removed = true;
                l->cies[c].kept = k;
            }
    return !failed;
}

/* Does ld 2.40 know every opcode of the lists (skip_cfa_op)? */
static bool ld_knows(const struct gen_program *p)
{
    for (uint32_t f = 0; f < p->nfdes; f++)
        for (size_t i = 0; i < p->nnodes[f]; i++) {
            const struct gen_insn *insn = p->nodes[f][i].insn;
            if (insn && (insn->opcode == GEN_A64_AARCH64_set_ra_state ||
                         insn->opcode ==
                             GEN_A64_AARCH64_negate_ra_state_with_pc))
                return false;
        }
    return true;
}

/* gas writes a CIE right before the first FDE that uses it. */
static bool layout_section(struct gen_program *p, enum cfi_section section)
{
    struct gen_section_layout *l = &p->layouts[section];
    memset(l, 0, sizeof *l);
    l->section = section;
    l->ld_edits = section == CFI_EH_FRAME && ld_knows(p);
    uint32_t first_user[GEN_FDES_MAX];
    for (uint32_t f = 0; f < p->nfdes; f++) {
        uint32_t before = l->ncies;
        l->fdes[f].cie = select_cie(p, l, f);
        if (l->ncies > before)
            first_user[l->fdes[f].cie] = f;
        l->fdes[f].size = fde_size(p, l, f, l->cies[l->fdes[f].cie].ninsns);
    }
    if (l->ld_edits && !ld_merge_cies(p, l))
        return false;
    uint64_t offset = 0;
    for (uint32_t f = 0; f < p->nfdes; f++) {
        struct gen_cie_layout *cie = &l->cies[l->fdes[f].cie];
        if (first_user[l->fdes[f].cie] == f && !cie->removed) {
            cie->offset = offset;
            offset += cie->size;
        }
        l->fdes[f].offset = offset;
        offset += l->fdes[f].size;
    }
    return true;
}

enum cfi_status gen_layout(struct gen_program *p)
{
    for (uint32_t f = 0; f < p->nfdes; f++)
        if (!build_nodes(p, &p->fdes[f], &p->nodes[f], &p->nnodes[f]))
            return CFI_E_NOMEM;
    if (p->eh_frame && !layout_section(p, CFI_EH_FRAME))
        return CFI_E_NOMEM;
    if (p->debug_frame && !layout_section(p, CFI_DEBUG_FRAME))
        return CFI_E_NOMEM;
    return CFI_OK;
}
