/* SPDX-License-Identifier: MIT */
/* doc.c — the five sections of an explanation, as headings, lines
 * and tables for a renderer (every format but json). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

static void linef(struct ex_renderer *r, const char *format, ...)
{
    char line[512];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    ex_line(r, line);
}

static void free_cells(char **cells, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(cells[i]);
}

/* ------------------------------------------------------------------ */
/* 1. The records                                                       */
/* ------------------------------------------------------------------ */

void ex_section_records(const struct explanation *e, struct ex_renderer *r)
{
    ex_heading(r, "1. The records");
    const struct cfi_fde *fde = e->fde;
    if (!fde) {
        linef(r, "No FDE covers 0x%" PRIx64 " in %s.", e->lookup_pc, e->path);
        return;
    }
    const struct cfi_cie *cie = fde->cie;
    linef(r, "FDE at %s+0x%" PRIx64 ": covers [0x%" PRIx64 ",0x%" PRIx64
             "), %zu bytes of instructions",
          cfi_section_name(fde->section), fde->offset, fde->pc_begin,
          fde->pc_end, fde->instructions_len);
    if (e->function)
        linef(r, "The PC 0x%" PRIx64 " is in the function <%s>.", e->pc,
              e->function);
    linef(r, "CIE at %s+0x%" PRIx64 ": version %u, augmentation \"%s\", "
             "code alignment %" PRIu64 ", data alignment %" PRId64
             ", return address column %" PRIu64,
          cfi_section_name(cie->section), cie->offset, cie->version,
          cie->augmentation, cie->code_align, cie->data_align,
          cie->ra_column);
    char *lines[CFI_AUGMENTATION_MAX];
    size_t n = ex_augmentation_lines(cie, lines, CFI_AUGMENTATION_MAX);
    for (size_t i = 0; i < n; i++)
        if (lines[i])
            linef(r, "  %s", lines[i]);
    free_cells(lines, n);
}

/* ------------------------------------------------------------------ */
/* 2. The program                                                       */
/* ------------------------------------------------------------------ */

static char *changed_columns(const struct cfi_arch *arch,
                             const struct ex_insn *x)
{
    size_t len = 0;
    char *names[EX_NCOLUMNS];
    for (size_t i = 0; i < x->nchanged; i++) {
        names[i] = ex_column_name(arch, x->changed[i]);
        len += (names[i] ? strlen(names[i]) : 0) + 1;
    }
    char *s = malloc(len + 2);
    if (s) {
        s[0] = 0;
        for (size_t i = 0; i < x->nchanged; i++) {
            if (i)
                strcat(s, " ");
            if (names[i])
                strcat(s, names[i]);
        }
        if (x->nchanged == 0)
            strcpy(s, "-");
    }
    free_cells(names, x->nchanged);
    return s;
}

static void insn_row(const struct explanation *e, struct ex_renderer *r,
                     const struct ex_insn *x)
{
    char *cells[8] = {
        [0] = NULL,
        [1] = ex_hex_bytes(x->bytes, x->len, 12),
        [2] = ex_insn_text(e, x),
        [3] = NULL,
        [4] = NULL,
        [5] = ex_effects_text(ex_arch(e), x),
        [6] = x->decode_error ? NULL : changed_columns(ex_arch(e), x),
        [7] = NULL,
    };
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIx64, x->section_offset);
    cells[0] = strdup(buf);
    if (x->in_cie)
        snprintf(buf, sizeof buf, "CIE");
    else
        snprintf(buf, sizeof buf, "0x%" PRIx64, x->loc);
    cells[3] = strdup(buf);
    cells[4] = strdup(x->rule ? x->rule : "-");
    snprintf(buf, sizeof buf, "%zu", x->depth);
    cells[7] = strdup(buf);
    if (!cells[6])
        cells[6] = strdup("-");
    ex_table_row(r, cells);
    free_cells(cells, 8);
}

static void lookup_mark(const struct explanation *e, struct ex_renderer *r,
                        const struct sem_range *range)
{
    char note[160];
    if (range)
        snprintf(note, sizeof note,
                 "lookup PC 0x%" PRIx64 " falls here: the row so far is"
                 " row [0x%" PRIx64 ",0x%" PRIx64 ")",
                 e->lookup_pc, range->begin, range->end);
    else
        snprintf(note, sizeof note,
                 "lookup PC 0x%" PRIx64 " falls here, but its row is never"
                 " emitted: the program fails first", e->lookup_pc);
    ex_table_note(r, "mark", note);
}

void ex_section_program(const struct explanation *e, struct ex_renderer *r)
{
    ex_heading(r, "2. The program");
    if (!e->fde)
        return;
    if (e->ninsns == 0) {
        ex_line(r, "(no instruction was applied)");
        return;
    }
    static const char *const headers[] = {
        "offset", "bytes", "instruction", "at", "rule", "effect", "changed",
        "depth"};
    ex_table_begin(r, 8, headers);
    const struct sem_range *range;
    size_t mark = ex_lookup_mark(e, &range);
    for (size_t i = 0; i < e->ninsns; i++) {
        if (i == mark)
            lookup_mark(e, r, range);
        insn_row(e, r, &e->insns[i]);
        if (e->insns[i].status != CFI_OK)
            ex_table_note(r, "error", "the translation stops here: the whole"
                                      " program must be well formed");
    }
    if (mark == e->ninsns)
        lookup_mark(e, r, range);
    ex_table_end(r);
}

/* ------------------------------------------------------------------ */
/* 3. The row                                                           */
/* ------------------------------------------------------------------ */

static void column_row(const struct explanation *e, struct ex_renderer *r,
                       const struct ex_range *range, unsigned column)
{
    char *cells[3] = {ex_column_name(ex_arch(e), column),
                      ex_column_rule(ex_arch(e), range->range.row, column),
                      ex_origin_text(e, range->origin[column])};
    struct sem_rule rule = column == EX_CFA ? (struct sem_rule){0}
                                            : sem_row_rule(range->range.row,
                                                           column);
    if (column != EX_CFA && rule.kind == SEM_RULE_UNSPECIFIED &&
        range->origin[column] != EX_ORIGIN_NONE) {
        char *set_by = cells[2];
        size_t n = (set_by ? strlen(set_by) : 0) + 32;
        cells[2] = malloc(n);
        if (cells[2])
            snprintf(cells[2], n, "ABI default (no rule since %s)",
                     set_by ? set_by : "?");
        free(set_by);
    }
    ex_table_row(r, cells);
    free_cells(cells, 3);
}

void ex_section_row(const struct explanation *e, struct ex_renderer *r)
{
    ex_heading(r, "3. The row");
    if (!e->fde)
        return;
    char *why = ex_why_text(e);
    ex_line(r, why ? why : "");
    free(why);
    if (!e->row) {
        if (e->has_lookup)
            ex_line(r, "No row of the FDE holds the lookup PC.");
        return;
    }
    const struct ex_range *range = &e->ranges[e->row_index];
    linef(r, "row [0x%" PRIx64 ",0x%" PRIx64 "), row %zu of %zu:",
          e->row->begin, e->row->end, e->row_index + 1, e->nranges);
    static const char *const headers[] = {"column", "rule", "origin"};
    ex_table_begin(r, 3, headers);
    column_row(e, r, range, EX_CFA);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (reg < ex_arch(e)->nreported ||
            sem_row_rule(e->row->row, reg).kind != SEM_RULE_UNSPECIFIED)
            column_row(e, r, range, reg);
    ex_table_end(r);
    char *return_column = ex_return_column_text(e);
    if (return_column)
        ex_line(r, return_column);
    free(return_column);
}

/* ------------------------------------------------------------------ */
/* 4. The evaluation                                                    */
/* ------------------------------------------------------------------ */

static char *value_text(const struct ex_value *v)
{
    char buf[64];
    if (v->status != CFI_OK)
        snprintf(buf, sizeof buf, "error: %s",
                 v->diag.message ? v->diag.message
                                 : cfi_status_text(v->status));
    else if (v->caller_status == CFI_REG_VALUE)
        snprintf(buf, sizeof buf, "0x%" PRIx64, v->value);
    else
        snprintf(buf, sizeof buf, "%s",
                 v->caller_status == CFI_REG_UNKNOWN ? "unknown"
                                                     : "undefined");
    return strdup(buf);
}

static void expression_trace(const struct explanation *e,
                             struct ex_renderer *r, const struct ex_value *v,
                             const char *what)
{
    if (v->nops == 0)
        return;
    linef(r, "%s, one operation a line (the stack bottom first):", what);
    static const char *const headers[] = {"operation", "stack after",
                                          "memory read"};
    ex_table_begin(r, 3, headers);
    for (size_t i = 0; i < v->nops; i++) {
        const struct ex_op *op = &e->ops[v->first_op + i];
        char *cells[3] = {ex_op_text(op), ex_stack_text(op),
                          op->nreads ? ex_read_text(&e->reads[op->first_read])
                                     : strdup("-")};
        ex_table_row(r, cells);
        free_cells(cells, 3);
    }
    ex_table_end(r);
}

static void cfa_evaluation(const struct explanation *e, struct ex_renderer *r)
{
    const struct ex_value *v = &e->cfa;
    const struct sem_cfa *cfa = &e->row->row->cfa;
    char *rule = ex_column_rule(ex_arch(e), e->row->row, EX_CFA);
    char *value = value_text(&(struct ex_value){.status = v->status,
                                                .diag = v->diag,
                                                .caller_status = CFI_REG_VALUE,
                                                .value = v->value});
    char name[16];
    if (cfa->kind == SEM_CFA_RULE_REG_OFFSET && v->has_base)
        linef(r, "cfa = %s = 0x%" PRIx64 " %c %" PRIu64 " = %s",
              rule ? rule : "", v->base, cfa->offset < 0 ? '-' : '+',
              cfa->offset < 0 ? -(uint64_t)cfa->offset : (uint64_t)cfa->offset,
              value ? value : "");
    else if (cfa->kind == SEM_CFA_RULE_REG_OFFSET)
        linef(r, "cfa = %s: %s (%s)", rule ? rule : "", value ? value : "",
              cfi_arch_reg_label(ex_arch(e), cfa->reg, name, sizeof name));
    else
        linef(r, "cfa = %s = %s", rule ? rule : "", value ? value : "");
    expression_trace(e, r, v, "The CFA expression, nothing pushed first");
    free(rule);
    free(value);
}

static void register_row(const struct explanation *e, struct ex_renderer *r,
                         unsigned reg)
{
    const struct ex_value *v = &e->regs[reg];
    char address[32] = "-";
    if (v->has_address)
        snprintf(address, sizeof address, "0x%" PRIx64, v->address);
    char *cells[5] = {ex_column_name(ex_arch(e), reg),
                      ex_column_rule(ex_arch(e), e->row->row, reg),
                      strdup(address),
                      v->nreads ? ex_read_text(&e->reads[v->first_read])
                                : strdup("-"),
                      value_text(v)};
    ex_table_row(r, cells);
    free_cells(cells, 5);
}

void ex_section_evaluation(const struct explanation *e,
                           struct ex_renderer *r)
{
    ex_heading(r, "4. The evaluation");
    if (!e->state->has_regs) {
        ex_line(r, "(no registers given: --regs REG=VALUE,... evaluates the"
                   " row)");
        return;
    }
    if (!e->row || !e->cfa.present) {
        ex_line(r, "(nothing is evaluated: there is no row)");
        return;
    }
    cfa_evaluation(e, r);
    if (e->cfa.status != CFI_OK)
        return;
    static const char *const headers[] = {"register", "rule", "address",
                                          "memory read", "caller's value"};
    ex_table_begin(r, 5, headers);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (e->regs[reg].present) {
            register_row(e, r, reg);
            if (e->regs[reg].status != CFI_OK)
                ex_table_note(r, "error", "the evaluation stops here: the"
                              " first error is the answer (rules are"
                              " applied in register order, after the ABI"
                              " defaults)");
        }
    ex_table_end(r);
    char *caller_pc = ex_caller_pc_text(e);
    if (caller_pc)
        ex_line(r, caller_pc);
    free(caller_pc);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (e->regs[reg].present && e->regs[reg].nops) {
            char what[64], name[16];
            snprintf(what, sizeof what, "The expression of %s, the CFA"
                     " pushed first", cfi_arch_reg_label(ex_arch(e), reg, name,
                                                      sizeof name));
            expression_trace(e, r, &e->regs[reg], what);
        }
}

/* ------------------------------------------------------------------ */
/* 5. The result                                                        */
/* ------------------------------------------------------------------ */

void ex_section_result(const struct explanation *e, struct ex_renderer *r)
{
    ex_heading(r, "5. The result");
    if (!e->state->has_regs) {
        ex_line(r, "(no registers given)");
        return;
    }
    char *text = ex_result_text(e);
    ex_pre(r, text ? text : "");
    free(text);
}

void ex_document(const struct explanation *e, struct ex_renderer *r)
{
    ex_section_records(e, r);
    ex_section_program(e, r);
    ex_section_row(e, r);
    ex_section_evaluation(e, r);
    ex_section_result(e, r);
}
