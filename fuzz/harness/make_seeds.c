/* SPDX-License-Identifier: MIT */
/* make_seeds.c — writes seeds for harness 1 (fuzz_cfi_bytes) from ELF
 * files: the header of fuzz/targets.h, then CFI records.
 *
 *   make_seeds sections OUTDIR NAME ELF
 *       NAME.eh_frame and NAME.debug_frame: each section the file has, whole
 *   make_seeds pairs OUTDIR NAME ELF
 *       NAME-KIND: one CIE and the first FDE of each kind found in
 *       .eh_frame (plt, signal, remember, expression, lsda, prologue,
 *       nop), the FDE's CIE pointer rewritten, then a zero terminator
 *
 * fuzz/seeds.sh runs it; its output is committed under fuzz/seeds/. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "fuzz/targets.h"
#include "semantics/sem.h"

struct section {
    const uint8_t *bytes;
    size_t size;
    uint64_t addr;
};

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    fseek(in, 0, SEEK_END);
    long len = ftell(in);
    rewind(in);
    uint8_t *bytes = len > 0 ? malloc((size_t)len) : NULL;
    if (bytes && fread(bytes, 1, (size_t)len, in) != (size_t)len) {
        free(bytes);
        bytes = NULL;
    }
    fclose(in);
    *size = (size_t)len;
    return bytes;
}

/* The section called `name`, from the section headers (trusted input: the
 * files are the project's cases and system libraries). */
static bool find_section(const uint8_t *image, size_t size, const char *name,
                         struct section *out)
{
    Elf64_Ehdr ehdr;
    if (size < sizeof ehdr)
        return false;
    memcpy(&ehdr, image, sizeof ehdr);
    if (ehdr.e_shoff + (uint64_t)ehdr.e_shnum * sizeof(Elf64_Shdr) > size ||
        ehdr.e_shstrndx >= ehdr.e_shnum)
        return false;
    Elf64_Shdr strtab;
    memcpy(&strtab, image + ehdr.e_shoff + ehdr.e_shstrndx * sizeof strtab,
           sizeof strtab);
    for (unsigned i = 0; i < ehdr.e_shnum; i++) {
        Elf64_Shdr shdr;
        memcpy(&shdr, image + ehdr.e_shoff + i * sizeof shdr, sizeof shdr);
        if (strtab.sh_offset + shdr.sh_name >= size ||
            strcmp((const char *)image + strtab.sh_offset + shdr.sh_name,
                   name) != 0 ||
            shdr.sh_type == SHT_NOBITS || shdr.sh_offset + shdr.sh_size > size)
            continue;
        *out = (struct section){image + shdr.sh_offset, shdr.sh_size,
                                shdr.sh_addr};
        return true;
    }
    return false;
}

static void put_le(uint8_t *p, uint64_t value, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        p[i] = (uint8_t)(value >> (8 * i));
}

/* A header: every register 0-16 known, the PC `pc_offset` into each FDE,
 * the section at its address. */
static void make_header(uint8_t *header, uint8_t flags, uint16_t pc_offset,
                        uint32_t seed, uint64_t addr)
{
    memset(header, 0, FUZZ_CFI_HEADER_SIZE);
    header[0] = flags;
    put_le(header + 1, pc_offset, 2);
    put_le(header + 3, seed, 4);
    put_le(header + 7, (1u << CFI_NGPRS) - 1, 4);
    header[11] = 2;
    put_le(header + 12, addr & 0xffffffff, 4);
}

static int write_seed(const char *dir, const char *name, const uint8_t *header,
                      const uint8_t *a, size_t a_len, const uint8_t *b,
                      size_t b_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *out = fopen(path, "wb");
    if (!out)
        return 1;
    fwrite(header, 1, FUZZ_CFI_HEADER_SIZE, out);
    fwrite(a, 1, a_len, out);
    if (b)
        fwrite(b, 1, b_len, out);
    int failed = fclose(out) != 0;
    if (!failed)
        printf("%s (%zu bytes)\n", path, FUZZ_CFI_HEADER_SIZE + a_len + b_len);
    return failed;
}

static int write_sections(const char *dir, const char *name,
                          const uint8_t *image, size_t size)
{
    static const struct {
        const char *section, *suffix;
        uint8_t flags;
    } kinds[] = {
        {".eh_frame", "eh_frame", 0},
        {".debug_frame", "debug_frame", FUZZ_CFI_DEBUG_FRAME},
    };
    int failed = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        struct section s;
        if (!find_section(image, size, kinds[k].section, &s) || s.size == 0)
            continue;
        uint8_t header[FUZZ_CFI_HEADER_SIZE];
        make_header(header, kinds[k].flags, 4, (uint32_t)size, s.addr);
        char file[512];
        snprintf(file, sizeof file, "%s.%s", name, kinds[k].suffix);
        failed |= write_seed(dir, file, header, s.bytes, s.size, NULL, 0);
    }
    return failed;
}

/* ------------------------------------------------------------------ */
/* Pairs                                                                */
/* ------------------------------------------------------------------ */

static bool has_opcode(const struct cfi_fde *fde, enum sem_opcode opcode)
{
    const struct cfi_cie *cie = fde->cie;
    struct sem_decode_env env = {
        .code_align = cie->code_align, .data_align = cie->data_align,
        .section = fde->section, .address_size = 8,
        .pointer_encoding = cie->fde_encoding,
        .bytes_addr = fde->instructions_addr, .arch = cie->arch,
    };
    struct sem_program program = {0};
    struct cfi_diag diag;
    bool found = false;
    if (sem_decode(fde->instructions, fde->instructions_len, &env, &program,
                   &diag) == CFI_OK)
        for (size_t i = 0; i < program.count && !found; i++)
            found = program.insns[i].opcode == opcode;
    sem_program_free(&program);
    return found;
}

static bool has_rule(const struct sem_fde_il *il, bool cfa_expr,
                     enum sem_rule_kind kind)
{
    for (size_t r = 0; r < il->nranges; r++) {
        const struct sem_row *row = il->ranges[r].row;
        if (cfa_expr && row->cfa.kind == SEM_CFA_RULE_EXPR)
            return true;
        for (uint32_t i = 0; !cfa_expr && i < row->nrules; i++)
            if (row->rules[i].rule.kind == kind)
                return true;
    }
    return false;
}

enum kind { PLT, SIGNAL, REMEMBER, EXPRESSION, LSDA, PROLOGUE, NOP, KINDS };
static const char *const kind_names[KINDS] = {
    "plt", "signal", "remember", "expression", "lsda", "prologue", "nop",
};

static bool is_kind(const struct cfi_fde *fde, const struct sem_fde_il *il,
                    enum kind kind)
{
    switch (kind) {
    case PLT: return has_rule(il, true, SEM_RULE_UNSPECIFIED);
    case SIGNAL: return fde->cie->signal_frame;
    case REMEMBER:
        return has_opcode(fde, SEM_CFA_remember_state) &&
               fde->instructions_len < 64;
    case EXPRESSION:
        return !fde->cie->signal_frame &&
               has_rule(il, false, SEM_RULE_EXPRESSION);
    case LSDA: return fde->augmentation_data_len > 0 &&
                      strchr(fde->cie->augmentation, 'L') &&
                      strchr(fde->cie->augmentation, 'P');
    case PROLOGUE:
        return il->nranges >= 5 && !has_opcode(fde, SEM_CFA_remember_state);
    case NOP: return cfi_fde_is_nop_only(fde);
    case KINDS: break;
    }
    return false;
}

/* CIE, FDE (its CIE pointer rewritten), terminator. */
static int write_pair(const char *dir, const char *name, enum kind kind,
                      const struct section *eh, const struct cfi_fde *fde)
{
    const struct cfi_cie *cie = fde->cie;
    size_t cie_len = 4 + cie->length, fde_len = 4 + fde->length;
    if (cie->offset + cie_len > eh->size || fde->offset + fde_len > eh->size ||
        cie->length >= 0xfffffff0 || fde->length >= 0xfffffff0)
        return 1;
    uint8_t *records = calloc(1, cie_len + fde_len + 4);
    if (!records)
        return 1;
    memcpy(records, eh->bytes + cie->offset, cie_len);
    memcpy(records + cie_len, eh->bytes + fde->offset, fde_len);
    /* .eh_frame's CIE pointer: from the field back to the CIE. */
    put_le(records + cie_len + 4, cie_len + 4, 4);
    /* The section placed so that the FDE keeps its address: pc-relative
     * pointers in it keep their meaning. */
    uint8_t header[FUZZ_CFI_HEADER_SIZE];
    make_header(header, kind == SIGNAL ? 0 : FUZZ_CFI_CALLER, 0x10,
                (uint32_t)fde->offset, eh->addr + fde->offset - cie_len);
    char file[512];
    snprintf(file, sizeof file, "%s-%s", name, kind_names[kind]);
    int failed = write_seed(dir, file, header, records, cie_len + fde_len + 4,
                            NULL, 0);
    free(records);
    return failed;
}

static int write_pairs(const char *dir, const char *name, const char *path,
                       const uint8_t *image, size_t size)
{
    struct section eh;
    struct cfi_file *file;
    struct cfi_diag diag;
    if (!find_section(image, size, ".eh_frame", &eh) ||
        cfi_file_open(path, &file, &diag) != CFI_OK)
        return 1;
    struct sem_file_il *il;
    if (sem_file_il_build(file, &il) != CFI_OK) {
        cfi_file_close(file);
        return 1;
    }
    int failed = 0;
    for (enum kind kind = 0; kind < KINDS; kind++)
        for (size_t i = 0; i < file->n_eh_frame; i++)
            if (il->status[i] == CFI_OK &&
                is_kind(&file->fdes[i], &il->fdes[i], kind)) {
                failed |= write_pair(dir, name, kind, &eh, &file->fdes[i]);
                break;
            }
    sem_file_il_free(il);
    cfi_file_close(file);
    return failed;
}

int main(int argc, char **argv)
{
    bool known_mode = argc == 5 && (!strcmp(argv[1], "sections") ||
                                    !strcmp(argv[1], "pairs"));
    if (!known_mode) {
        fprintf(stderr, "usage: make_seeds sections|pairs OUTDIR NAME ELF\n");
        return 1;
    }
    size_t size;
    uint8_t *image = read_all(argv[4], &size);
    if (!image) {
        fprintf(stderr, "make_seeds: cannot read %s\n", argv[4]);
        return 2;
    }
    int failed = strcmp(argv[1], "sections") == 0
                     ? write_sections(argv[2], argv[3], image, size)
                     : write_pairs(argv[2], argv[3], argv[4], image, size);
    free(image);
    return failed ? 2 : 0;
}
