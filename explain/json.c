/* SPDX-License-Identifier: MIT */
/* json.c — an explanation as one JSON object. Schema (addresses
 * and values are "0x..." strings, offsets numbers):
 *
 * {"schema_version": 1, "file": PATH, "pc": A, "caller_frame": BOOL,
 *  "lookup_pc": A,
 *  "fde": null | {"section", "offset", "pc_begin": A, "pc_end": A},
 *  "cie": null | {"section", "offset", "version", "augmentation",
 *                 "letters": [TEXT...], "code_align", "data_align",
 *                 "ra_column", "signal_frame": BOOL},
 *  "program": [{"offset", "bytes": HEX, "in_cie": BOOL, "at": A | null,
 *               "instruction": TEXT | null, "rule": NAME | null,
 *               "effect": TEXT, "changed": [COLUMN...], "depth",
 *               "error": null | TEXT, "lookup_here": BOOL}],
 *  "rows": [{"begin": A, "end": A, "columns": {COLUMN: RULE},
 *            "il": IL_ROW}],
 *  "row": null | {"index", "begin": A, "end": A, "why": TEXT,
 *                 "columns": [{"column", "rule", "data", "origin"}],
 *                 "return_column": TEXT (only when the CIE's return
 *                 address column is not the PC register: AArch64)},
 *  "evaluation": null | {"cfa": VALUE, "regs": [VALUE + {"reg", "name"}],
 *                        "caller_pc": TEXT (the same condition)},
 *  "result": {"status": NAME, "message": TEXT | null, "text": TEXT,
 *             "frame": FRAME | null}}
 *
 * COLUMN is "cfa" or a register name of the file's architecture;
 * RULE is in translate.c's notation;
 * IL_ROW and "data" (a CFA or register rule) are as `cfisem il --format
 * json` writes them (sem_print_range_json); FRAME is what the caller's
 * writer prints (ex_json's `frame`: for `cfisem explain`, what `cfisem
 * unwind --engine il --json` prints);
 * VALUE is {"rule", "address": A | null, "reads": [READ], "ops": [OP],
 * "status": NAME, "value": A | "undefined" | "unknown" | null, "data"};
 * READ is {"address", "size", "source", "value": A | null}; OP is
 * {"op": TEXT, "stack": [A...], "status": NAME}. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/json.h"
#include "explain/explain.h"

/* A quoted, escaped string; null for NULL (cfi/json.h). */
static void json_string(FILE *out, const char *s)
{
    cfi_json_string(out, s);
}

/* Prints the malloc'd string and frees it. */
static void json_owned(FILE *out, char *s)
{
    json_string(out, s ? s : "");
    free(s);
}

static void json_addr(FILE *out, uint64_t value)
{
    cfi_json_address(out, value);
}

static void records(const struct explanation *e, FILE *out)
{
    const struct cfi_fde *fde = e->fde;
    if (!fde) {
        fputs(",\n \"fde\": null, \"cie\": null", out);
        return;
    }
    fprintf(out, ",\n \"fde\": {\"section\": \"%s\", \"offset\": %" PRIu64
                 ", \"pc_begin\": ",
            cfi_section_name(fde->section), fde->offset);
    json_addr(out, fde->pc_begin);
    fputs(", \"pc_end\": ", out);
    json_addr(out, fde->pc_end);
    const struct cfi_cie *cie = fde->cie;
    fprintf(out, "},\n \"cie\": {\"section\": \"%s\", \"offset\": %" PRIu64
                 ", \"version\": %u, \"augmentation\": ",
            cfi_section_name(cie->section), cie->offset, cie->version);
    json_string(out, cie->augmentation);
    fputs(", \"letters\": [", out);
    char *lines[CFI_AUGMENTATION_MAX];
    size_t n = ex_augmentation_lines(cie, lines, CFI_AUGMENTATION_MAX);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        json_owned(out, lines[i]);
    }
    fprintf(out, "], \"code_align\": %" PRIu64 ", \"data_align\": %" PRId64
                 ", \"ra_column\": %" PRIu64 ", \"signal_frame\": %s}",
            cie->code_align, cie->data_align, cie->ra_column,
            cie->signal_frame ? "true" : "false");
}

static size_t mark_index(const struct explanation *e)
{
    const struct sem_range *range;
    return ex_lookup_mark(e, &range);
}

static void program_insn(const struct explanation *e, FILE *out,
                         const struct ex_insn *x, bool lookup_here)
{
    fprintf(out, "  {\"offset\": %" PRIu64 ", \"bytes\": \"", x->section_offset);
    for (size_t i = 0; i < x->len; i++)
        fprintf(out, "%02x", x->bytes[i]);
    fprintf(out, "\", \"in_cie\": %s, \"at\": ", x->in_cie ? "true" : "false");
    if (x->in_cie)
        fputs("null", out);
    else
        json_addr(out, x->loc);
    fputs(", \"instruction\": ", out);
    if (x->decode_error)
        fputs("null", out);
    else
        json_owned(out, ex_insn_text(e, x));
    fputs(", \"rule\": ", out);
    json_string(out, x->rule);
    fputs(", \"effect\": ", out);
    json_owned(out, ex_effects_text(ex_arch(e), x));
    fputs(", \"changed\": [", out);
    for (size_t i = 0; i < x->nchanged; i++) {
        fputs(i ? ", " : "", out);
        json_owned(out, ex_column_name(ex_arch(e), x->changed[i]));
    }
    fprintf(out, "], \"depth\": %zu, \"error\": ", x->depth);
    json_string(out, x->status == CFI_OK ? NULL
                     : x->diag.message ? x->diag.message
                                       : cfi_status_text(x->status));
    fprintf(out, ", \"lookup_here\": %s}", lookup_here ? "true" : "false");
}

static void program(const struct explanation *e, FILE *out)
{
    fputs(",\n \"program\": [", out);
    size_t mark = mark_index(e);
    for (size_t i = 0; i < e->ninsns; i++) {
        fputs(i ? ",\n" : "\n", out);
        program_insn(e, out, &e->insns[i], i == mark);
    }
    fputs("]", out);
}

static void row_columns(FILE *out, const struct cfi_arch *arch,
                        const struct sem_row *row)
{
    fputs("{\"cfa\": ", out);
    json_owned(out, ex_column_rule(arch, row, EX_CFA));
    for (uint32_t i = 0; i < row->nrules; i++) {
        fputs(", ", out);
        json_owned(out, ex_column_name(arch, row->rules[i].reg));
        fputs(": ", out);
        json_owned(out, ex_column_rule(arch, row, row->rules[i].reg));
    }
    putc('}', out);
}

static void rows(const struct explanation *e, FILE *out)
{
    fputs(",\n \"rows\": [", out);
    for (size_t i = 0; i < e->nranges; i++) {
        const struct sem_range *range = &e->ranges[i].range;
        fputs(i ? ",\n  {\"begin\": " : "\n  {\"begin\": ", out);
        json_addr(out, range->begin);
        fputs(", \"end\": ", out);
        json_addr(out, range->end);
        fputs(", \"columns\": ", out);
        row_columns(out, ex_arch(e), range->row);
        fputs(", \"il\": ", out);
        sem_print_range_json(out, range);
        putc('}', out);
    }
    fputs("]", out);
}

/* A column's rule as data, as `cfisem il --format json` writes it. */
static void column_data(FILE *out, const struct sem_row *row,
                        unsigned column)
{
    if (column == EX_CFA) {
        sem_print_cfa_json(out, &row->cfa);
        return;
    }
    struct sem_rule rule = sem_row_rule(row, column);
    sem_print_rule_json(out, &rule);
}

static void row_column(const struct explanation *e, FILE *out,
                       unsigned column, bool first)
{
    const struct ex_range *range = &e->ranges[e->row_index];
    fputs(first ? "\n   {\"column\": " : ",\n   {\"column\": ", out);
    json_owned(out, ex_column_name(ex_arch(e), column));
    fputs(", \"rule\": ", out);
    json_owned(out, ex_column_rule(ex_arch(e), range->range.row, column));
    fputs(", \"data\": ", out);
    column_data(out, range->range.row, column);
    fputs(", \"origin\": ", out);
    json_owned(out, ex_origin_text(e, range->origin[column]));
    putc('}', out);
}

static void row(const struct explanation *e, FILE *out)
{
    if (!e->row) {
        fputs(",\n \"row\": null", out);
        return;
    }
    fprintf(out, ",\n \"row\": {\"index\": %zu, \"begin\": ", e->row_index);
    json_addr(out, e->row->begin);
    fputs(", \"end\": ", out);
    json_addr(out, e->row->end);
    fputs(", \"why\": ", out);
    json_owned(out, ex_why_text(e));
    fputs(", \"columns\": [", out);
    row_column(e, out, EX_CFA, true);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (reg < ex_arch(e)->nreported ||
            sem_row_rule(e->row->row, reg).kind != SEM_RULE_UNSPECIFIED)
            row_column(e, out, reg, false);
    fputs("]", out);
    char *return_column = ex_return_column_text(e);
    if (return_column) {
        fputs(", \"return_column\": ", out);
        json_owned(out, return_column);
    }
    fputs("}", out);
}

static void reads(const struct explanation *e, FILE *out, size_t first,
                  size_t n)
{
    fputs("[", out);
    for (size_t i = 0; i < n; i++) {
        const struct ex_read *read = &e->reads[first + i];
        fputs(i ? ", {\"address\": " : "{\"address\": ", out);
        json_addr(out, read->address);
        fprintf(out, ", \"size\": %u, \"source\": \"%s\", \"value\": ",
                read->size, read->source);
        if (read->status == CFI_OK)
            json_addr(out, read->value);
        else
            fputs("null", out);
        putc('}', out);
    }
    fputs("]", out);
}

static void ops(const struct explanation *e, FILE *out,
                const struct ex_value *v)
{
    fputs(", \"ops\": [", out);
    for (size_t i = 0; i < v->nops; i++) {
        const struct ex_op *op = &e->ops[v->first_op + i];
        fputs(i ? ",\n    {\"op\": " : "\n    {\"op\": ", out);
        json_owned(out, ex_op_text(op));
        fputs(", \"stack\": [", out);
        for (unsigned d = 0; d < op->depth; d++) {
            fputs(d ? ", " : "", out);
            json_addr(out, op->stack[d]);
        }
        fprintf(out, "], \"status\": \"%s\"}", cfi_status_name(op->status));
    }
    fputs("]", out);
}

static void value(const struct explanation *e, FILE *out,
                  const struct ex_value *v, const char *rule)
{
    fputs("{\"rule\": ", out);
    json_string(out, rule);
    fputs(", \"address\": ", out);
    if (v->has_address)
        json_addr(out, v->address);
    else
        fputs("null", out);
    fputs(", \"reads\": ", out);
    reads(e, out, v->first_read, v->nreads);
    ops(e, out, v);
    fprintf(out, ", \"status\": \"%s\", \"value\": ",
            cfi_status_name(v->status));
    if (v->status != CFI_OK)
        fputs("null", out);
    else if (v->caller_status == CFI_REG_VALUE)
        json_addr(out, v->value);
    else
        fputs(v->caller_status == CFI_REG_UNKNOWN ? "\"unknown\""
                                                  : "\"undefined\"", out);
}

static void evaluation(const struct explanation *e, FILE *out)
{
    if (!e->state->has_regs || !e->row || !e->cfa.present) {
        fputs(",\n \"evaluation\": null", out);
        return;
    }
    fputs(",\n \"evaluation\": {\"cfa\": ", out);
    char *rule = ex_column_rule(ex_arch(e), e->row->row, EX_CFA);
    struct ex_value cfa = e->cfa;
    cfa.caller_status = CFI_REG_VALUE;
    value(e, out, &cfa, rule);
    free(rule);
    fputs(", \"data\": ", out);
    column_data(out, e->row->row, EX_CFA);
    fputs("},\n  \"regs\": [", out);
    const char *sep = "\n   ";
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (!e->regs[reg].present)
            continue;
        char name[16];
        fputs(sep, out);
        sep = ",\n   ";
        rule = ex_column_rule(ex_arch(e), e->row->row, reg);
        value(e, out, &e->regs[reg], rule);
        free(rule);
        fputs(", \"data\": ", out);
        column_data(out, e->row->row, reg);
        fprintf(out, ", \"reg\": %u, \"name\": \"%s\"}", reg,
                cfi_arch_reg_label(ex_arch(e), reg, name, sizeof name));
    }
    fputs("]", out);
    char *caller_pc = ex_caller_pc_text(e);
    if (caller_pc) {
        fputs(",\n  \"caller_pc\": ", out);
        json_owned(out, caller_pc);
    }
    fputs("}", out);
}

static void result(const struct explanation *e, FILE *out,
                   ex_frame_json_fn *frame)
{
    fprintf(out, ",\n \"result\": {\"status\": \"%s\", \"message\": ",
            cfi_status_name(e->frame.status));
    json_string(out, e->frame.status == CFI_OK ? NULL : e->frame.diag.message);
    fputs(", \"text\": ", out);
    if (e->state->has_regs)
        json_owned(out, ex_result_text(e));
    else
        fputs("null", out);
    fputs(", \"frame\": ", out);
    if (e->state->has_regs)
        frame(out, e);
    else
        fputs("null", out);
    fputs("}", out);
}

void ex_json(const struct explanation *e, FILE *out, ex_frame_json_fn *frame)
{
    fprintf(out, "{\"schema_version\": %d, \"file\": ",
            CFI_JSON_SCHEMA_VERSION);
    json_string(out, e->path);
    fputs(", \"pc\": ", out);
    json_addr(out, e->pc);
    if (e->function) {
        fputs(", \"function\": ", out);
        json_string(out, e->function);
    }
    fprintf(out, ", \"caller_frame\": %s, \"lookup_pc\": ",
            e->caller ? "true" : "false");
    json_addr(out, e->lookup_pc);
    records(e, out);
    program(e, out);
    rows(e, out);
    row(e, out);
    evaluation(e, out);
    result(e, out, frame);
    fputs("}\n", out);
}
