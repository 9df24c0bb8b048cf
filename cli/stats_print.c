/* SPDX-License-Identifier: MIT */
/* stats_print.c — the counts of `cfisem stats` as text tables and as one
 * JSON object. JSON schema:
 *
 * {"schema_version": 1, "files", "files_no_cfi", "files_failed",
 *  "cies": {".eh_frame", ".debug_frame"}, "fdes": {...}, "nop_only",
 *  "fdes_failed", "rows",
 *  "rows_per_fde": {"median", "p90", "p99", "max",
 *                   "histogram": [[ROWS, FDES]...]},   (non-zero buckets)
 *  "opcodes": {"nop": N, ...},                        (every opcode)
 *  "cfa_rules": {"reg_offset", "expression", "none"}, (per row)
 *  "register_rules": {"rip": {"none", "undefined", ...}, ...},
 *                                                     (registers with a rule)
 *  "expressions": [{"text", "count", "example"}...],  (by decreasing count)
 *  "augmentations": [{"text", "count", "example"}...],
 *  "errors": [{"text", "count", "example"}...],
 *  "by_producer": {NAME: {the same but schema_version and by_producer}}} */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "cfi/json.h"

static const char *const rule_names[STATS_RULE_KINDS] = {
    [SEM_RULE_UNSPECIFIED] = "none", [SEM_RULE_UNDEFINED] = "undefined",
    [SEM_RULE_SAME_VALUE] = "same_value", [SEM_RULE_OFFSET] = "offset",
    [SEM_RULE_VAL_OFFSET] = "val_offset", [SEM_RULE_REGISTER] = "register",
    [SEM_RULE_EXPRESSION] = "expression",
    [SEM_RULE_VAL_EXPRESSION] = "val_expression",
};

static const struct {
    const char *name;
    unsigned number;
} opcodes[] = {
#define STATS_OPCODE(name, number, shape) {#name, number},
    SEM_CFA_OPCODES(STATS_OPCODE)
#undef STATS_OPCODE
};
#define NOPCODES (sizeof opcodes / sizeof opcodes[0])

/* Rows in which `reg` has no rule. */
static uint64_t no_rule(const struct stats *s, unsigned reg)
{
    uint64_t with = 0;
    for (int k = 1; k < STATS_RULE_KINDS; k++)
        with += s->rule_kinds[reg][k];
    return s->rows - with;
}

static bool has_rules(const struct stats *s, unsigned reg)
{
    return no_rule(s, reg) != s->rows;
}

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

static void text_summary(FILE *out, const struct stats *s)
{
    struct stats_quantiles q = stats_rows_quantiles(s);
    uint64_t fdes = s->fdes[0] + s->fdes[1];
    fprintf(out, "files            %" PRIu64 " (%" PRIu64 " without CFI, %"
                 PRIu64 " not loaded)\n",
            s->files, s->files_no_cfi, s->files_failed);
    fprintf(out, "CIEs             %" PRIu64 " (.eh_frame %" PRIu64
                 ", .debug_frame %" PRIu64 ")\n",
            s->cies[0] + s->cies[1], s->cies[CFI_EH_FRAME],
            s->cies[CFI_DEBUG_FRAME]);
    fprintf(out, "FDEs             %" PRIu64 " (.eh_frame %" PRIu64
                 ", .debug_frame %" PRIu64 "), %" PRIu64 " nop-only (%.1f%%), %"
                 PRIu64 " do not translate\n",
            fdes, s->fdes[CFI_EH_FRAME], s->fdes[CFI_DEBUG_FRAME], s->nop_only,
            percent(s->nop_only, fdes), s->fdes_failed);
    fprintf(out, "rows             %" PRIu64 "; per FDE: median %" PRIu64
                 ", p90 %" PRIu64 ", p99 %" PRIu64 ", max %" PRIu64 "\n",
            s->rows, q.median, q.p90, q.p99, q.max);
}

static void text_histogram(FILE *out, const struct stats *s)
{
    fputs("\nrows per FDE (FDEs)\n", out);
    uint64_t beyond = 0;
    size_t last = (size_t)stats_rows_quantiles(s).max; /* not the capacity */
    for (size_t n = 0; n <= last && n < s->histogram_len; n++) {
        if (n <= 40)
            fprintf(out, "  %3zu  %" PRIu64 "\n", n, s->rows_histogram[n]);
        else
            beyond += s->rows_histogram[n];
    }
    if (beyond)
        fprintf(out, "  >40  %" PRIu64 "\n", beyond);
}

/* AArch64's vendor opcodes are shown when an AArch64 file was read:
 * elsewhere 0x2b and 0x2c are no opcodes. */
static bool shown_opcode(const struct stats *s, size_t i)
{
    unsigned n = opcodes[i].number;
    return (s->archs & STATS_AARCH64) ||
           (n != SEM_CFA_AARCH64_set_ra_state &&
            n != SEM_CFA_AARCH64_negate_ra_state_with_pc);
}

/* A register's name in the files' architecture ("rN" for files of
 * both). */
static const char *reg_label(const struct stats *s, unsigned reg, char *buf,
                             size_t size)
{
    if (s->archs == (STATS_X86_64 | STATS_AARCH64)) {
        snprintf(buf, size, "r%u", reg);
        return buf;
    }
    const struct cfi_arch *arch = s->archs == STATS_AARCH64
                                      ? &cfi_arch_aarch64 : &cfi_arch_x86_64;
    return cfi_arch_reg_label(arch, reg, buf, size);
}

static void text_opcodes(FILE *out, const struct stats *s)
{
    fputs("\nDW_CFA opcodes (CIE programs once per CIE)\n", out);
    for (size_t i = 0; i < NOPCODES; i++)
        if (shown_opcode(s, i))
            fprintf(out, "  %-30s %" PRIu64 "\n", opcodes[i].name,
                    s->opcodes[opcodes[i].number]);
}

static void text_rules(FILE *out, const struct stats *s)
{
    fprintf(out, "\nCFA rules (per row): reg+offset %" PRIu64 ", expression %"
                 PRIu64 ", none %" PRIu64 "\n",
            s->cfa_kinds[SEM_CFA_RULE_REG_OFFSET], s->cfa_kinds[SEM_CFA_RULE_EXPR],
            s->cfa_kinds[SEM_CFA_RULE_INVALID]);
    fputs("\nregister rules (per row)\n  register", out);
    for (int k = 0; k < STATS_RULE_KINDS; k++)
        fprintf(out, " %14s", rule_names[k]);
    fputc('\n', out);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (!has_rules(s, reg))
            continue;
        char name[16];
        fprintf(out, "  %-8s %14" PRIu64, reg_label(s, reg, name, sizeof name),
                no_rule(s, reg));
        for (int k = 1; k < STATS_RULE_KINDS; k++)
            fprintf(out, " %14" PRIu64, s->rule_kinds[reg][k]);
        fputc('\n', out);
    }
}

static void text_map(FILE *out, const char *title, const struct stats_map *map,
                     size_t max)
{
    fprintf(out, "\n%s (%zu distinct)\n", title, map->count);
    size_t *order = stats_map_sorted(map);
    for (size_t i = 0; order && i < map->count && i < max; i++) {
        size_t k = order[i];
        fprintf(out, "  %10" PRIu64 "  %s  (e.g. %s)\n", map->counts[k],
                map->keys[k], map->examples[k]);
    }
    if (map->count > max)
        fprintf(out, "  ... %zu more in --json\n", map->count - max);
    free(order);
}

static void text_producers(FILE *out, const struct stats_map *producers)
{
    fputs("\nby producer (.comment)\n", out);
    fprintf(out, "  %8s %10s %10s %6s %6s %10s  %s\n", "files", "FDEs", "rows",
            "median", "p99", "nop-only", "producer");
    size_t *order = stats_map_sorted(producers);
    for (size_t i = 0; order && i < producers->count; i++) {
        size_t k = order[i];
        const struct stats *s = producers->values[k];
        struct stats_quantiles q = stats_rows_quantiles(s);
        uint64_t fdes = s->fdes[0] + s->fdes[1];
        fprintf(out, "  %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %6" PRIu64
                     " %6" PRIu64 " %9.1f%%  %s\n",
                s->files, fdes, s->rows, q.median, q.p99,
                percent(s->nop_only, fdes), producers->keys[k]);
    }
    free(order);
}

void stats_print_text(FILE *out, const struct stats *all,
                      const struct stats_map *producers)
{
    text_summary(out, all);
    text_histogram(out, all);
    text_opcodes(out, all);
    text_rules(out, all);
    text_map(out, "DWARF expressions", &all->expressions, 40);
    text_map(out, "CIE augmentations", &all->augmentations, 40);
    text_map(out, "errors", &all->errors, 40);
    if (producers)
        text_producers(out, producers);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
static void json_map(FILE *out, const char *name, const struct stats_map *map)
{
    fprintf(out, ",\n \"%s\": [", name);
    size_t *order = stats_map_sorted(map);
    for (size_t i = 0; order && i < map->count; i++) {
        size_t k = order[i];
        fputs(i ? ",\n  {\"text\": " : "\n  {\"text\": ", out);
        cfi_json_string(out, map->keys[k]);
        fprintf(out, ", \"count\": %" PRIu64 ", \"example\": ", map->counts[k]);
        cfi_json_string(out, map->examples[k]);
        putc('}', out);
    }
    free(order);
    fputs("]", out);
}

static void json_rows(FILE *out, const struct stats *s)
{
    struct stats_quantiles q = stats_rows_quantiles(s);
    fprintf(out, ",\n \"rows_per_fde\": {\"median\": %" PRIu64 ", \"p90\": %"
                 PRIu64 ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64
                 ", \"histogram\": [",
            q.median, q.p90, q.p99, q.max);
    const char *sep = "";
    for (size_t n = 0; n < s->histogram_len; n++)
        if (s->rows_histogram[n]) {
            fprintf(out, "%s[%zu, %" PRIu64 "]", sep, n, s->rows_histogram[n]);
            sep = ", ";
        }
    fputs("]}", out);
}

static void json_rules(FILE *out, const struct stats *s)
{
    fputs(",\n \"opcodes\": {", out);
    const char *comma = "";
    for (size_t i = 0; i < NOPCODES; i++) {
        if (!shown_opcode(s, i))
            continue;
        fprintf(out, "%s\"%s\": %" PRIu64, comma, opcodes[i].name,
                s->opcodes[opcodes[i].number]);
        comma = ", ";
    }
    fprintf(out, "},\n \"cfa_rules\": {\"reg_offset\": %" PRIu64
                 ", \"expression\": %" PRIu64 ", \"none\": %" PRIu64 "}",
            s->cfa_kinds[SEM_CFA_RULE_REG_OFFSET], s->cfa_kinds[SEM_CFA_RULE_EXPR],
            s->cfa_kinds[SEM_CFA_RULE_INVALID]);
    fputs(",\n \"register_rules\": {", out);
    const char *sep = "\n  ";
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (!has_rules(s, reg))
            continue;
        char name[16];
        fprintf(out, "%s\"%s\": {\"none\": %" PRIu64, sep,
                reg_label(s, reg, name, sizeof name), no_rule(s, reg));
        for (int k = 1; k < STATS_RULE_KINDS; k++)
            fprintf(out, ", \"%s\": %" PRIu64, rule_names[k],
                    s->rule_kinds[reg][k]);
        putc('}', out);
        sep = ",\n  ";
    }
    fputs("}", out);
}

/* The members of one set of counts; the object's opening is the
 * caller's ("schema_version" at the top level only). */
static void json_stats(FILE *out, const struct stats *s)
{
    fprintf(out, "\"files\": %" PRIu64 ", \"files_no_cfi\": %" PRIu64
                 ", \"files_failed\": %" PRIu64,
            s->files, s->files_no_cfi, s->files_failed);
    fprintf(out, ",\n \"cies\": {\".eh_frame\": %" PRIu64 ", \".debug_frame\": %"
                 PRIu64 "}, \"fdes\": {\".eh_frame\": %" PRIu64
                 ", \".debug_frame\": %" PRIu64 "}",
            s->cies[CFI_EH_FRAME], s->cies[CFI_DEBUG_FRAME],
            s->fdes[CFI_EH_FRAME], s->fdes[CFI_DEBUG_FRAME]);
    fprintf(out, ",\n \"nop_only\": %" PRIu64 ", \"fdes_failed\": %" PRIu64
                 ", \"rows\": %" PRIu64,
            s->nop_only, s->fdes_failed, s->rows);
    json_rows(out, s);
    json_rules(out, s);
    json_map(out, "expressions", &s->expressions);
    json_map(out, "augmentations", &s->augmentations);
    json_map(out, "errors", &s->errors);
}

void stats_print_json(FILE *out, const struct stats *all,
                      const struct stats_map *producers)
{
    fprintf(out, "{\"schema_version\": %d, ", CFI_JSON_SCHEMA_VERSION);
    json_stats(out, all);
    if (producers) {
        fputs(",\n \"by_producer\": {", out);
        size_t *order = stats_map_sorted(producers);
        for (size_t i = 0; order && i < producers->count; i++) {
            fputs(i ? ",\n " : "\n ", out);
            cfi_json_string(out, producers->keys[order[i]]);
            fputs(": {", out);
            json_stats(out, producers->values[order[i]]);
            fputs("}", out);
        }
        free(order);
        fputs("}", out);
    }
    fputs("}\n", out);
}
