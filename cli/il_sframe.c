/* SPDX-License-Identifier: MIT */
/* il_sframe.c — `cfisem il FILE --sframe [--pc ADDR]`: the file's .sframe
 * table in the IL text format (sframe/sframe.h).
 *
 * Each SFrame FDE is a header line, then its rows as IL ranges:
 *   fde .sframe+0x1c [0x113d,0x116e) v1 fre=addr1
 *   [0x113d,0x113e)  cfa=rsp+8  rip=[cfa-8]
 *   [0x113e,0x1142)  cfa=rsp+16  rbp=[cfa-16]  rip=[cfa-8]
 * a CFA from the frame pointer is cfa=rbp+N; an FP that SFrame does not
 * track has no rule (it keeps its value). The rows of a pc-mask FDE (the
 * PLT) are written out for each block it covers (its header line says
 * "pc-mask N"), up to 4096 blocks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "semantics/sem.h"
#include "sframe/sframe.h"

#define BLOCKS_WRITTEN 4096

bool cli_il_wants_sframe(int argc, char **argv)
{
    bool sframe = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return false;
        sframe |= !strcmp(argv[i], "--sframe");
    }
    return sframe;
}

/* The row an FRE says, in the IL's terms. `rules` holds 2. */
static struct sem_row fre_row(const struct sframe_fre *fre,
                              struct sem_reg_rule *rules)
{
    struct sem_row row = {{SEM_CFA_RULE_REG_OFFSET,
                           fre->cfa_from_sp ? CFI_REG_RSP : CFI_REG_RBP,
                           fre->cfa_offset, {NULL, 0}},
                          0, rules};
    if (fre->fp_tracked)
        rules[row.nrules++] = (struct sem_reg_rule){
            CFI_REG_RBP, {SEM_RULE_OFFSET, 0, fre->fp_offset, {NULL, 0}}};
    if (fre->ra_tracked)
        rules[row.nrules++] = (struct sem_reg_rule){
            CFI_REG_RIP, {SEM_RULE_OFFSET, 0, fre->ra_offset, {NULL, 0}}};
    return row;
}

/* The ranges of one block (the whole function when not pc-mask) that
 * starts at `base`, clipped to [first, last); only the one holding `pc`
 * when asked. */
static void print_block(const struct sframe_table *t,
                        const struct sframe_fde *fde, uint64_t base,
                        bool has_pc, uint64_t pc)
{
    uint64_t fde_end = fde->start + fde->size;
    for (size_t i = 0; i < fde->nfres; i++) {
        const struct sframe_fre *fre = &t->fres[fde->first_fre + i];
        uint64_t begin = base + fre->start, end;
        if (begin >= fde_end)
            break;
        sframe_fre_at(t, fde, begin, &end);
        if (has_pc && (pc < begin || pc >= end))
            continue;
        struct sem_reg_rule rules[2];
        struct sem_row row = fre_row(fre, rules);
        struct sem_range range = {begin, end, &row};
        sem_print_range_text(stdout, &cfi_arch_x86_64, &range);
    }
}

static void print_fde(const struct sframe_table *t,
                      const struct sframe_fde *fde, bool has_pc, uint64_t pc)
{
    static const char *const fre_types[] = {"addr1", "addr2", "addr4"};
    printf("fde .sframe+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64 ") v%u "
           "fre=%s", fde->offset, fde->start, fde->start + fde->size,
           t->version, fre_types[fde->fre_type]);
    if (fde->pc_mask)
        printf(" pc-mask %u", fde->block_size);
    printf("\n");
    if (!fde->pc_mask) {
        print_block(t, fde, fde->start, has_pc, pc);
    } else {
        uint64_t blocks = fde->size / fde->block_size +
                          (fde->size % fde->block_size != 0);
        for (uint64_t b = 0; b < blocks && b < BLOCKS_WRITTEN; b++)
            print_block(t, fde, fde->start + b * fde->block_size, has_pc, pc);
    }
    printf("\n");
}

int cli_il_sframe(int argc, char **argv)
{
    const char *path = NULL;
    bool has_pc = false;
    uint64_t pc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sframe"))
            continue;
        if (!strcmp(argv[i], "--pc") && i + 1 < argc) {
            if (!cli_parse_u64(argv[++i], &pc))
                return cli_usage_error("il", "bad address for --pc:", argv[i]);
            has_pc = true;
        } else if (argv[i][0] == '-' || path) {
            return cli_usage_error("il", "with --sframe, FILE and --pc only, "
                                   "not", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return cli_usage_error("il", "expected FILE", NULL);
    struct cfi_file *file = NULL;
    struct sframe_table *table = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (cfi_file_open(path, &file, &diag) != CFI_OK ||
        sframe_open(file, &table, &diag) != CFI_OK) {
        cli_report_file_error(path, &diag);
        cfi_file_close(file);
        return CLI_BAD_INPUT;
    }
    for (size_t i = 0; i < table->nfdes; i++) {
        const struct sframe_fde *fde = table->by_start[i];
        if (!has_pc || (pc >= fde->start && pc - fde->start < fde->size))
            print_fde(table, fde, has_pc, pc);
    }
    sframe_free(table);
    cfi_file_close(file);
    return CLI_OK;
}
