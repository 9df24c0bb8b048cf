/* SPDX-License-Identifier: MIT */
/* html.c — --format html: one self-contained page (inline style
 * and script, nothing fetched). The program is beside the table of rows
 * it builds, and each row lists the machine code it is in effect at (the
 * caller's disassembly, explain.h); svg.c draws the frame. Each cell of
 * the table names the instruction that set it (data-origin), and
 * pointing at either lights up the other. The script
 * also writes, in #links, how many cells it linked to how many
 * instructions: what a browser shows can be checked. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

/* The page fits its window: the two tables sit side by side when there
 * is room and one under the other when not; a table wider than the
 * window scrolls inside its own box, long cells wrap. */
static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
    "h1{font-size:1.5em;overflow-wrap:anywhere}\n"
    "p,figcaption{max-width:60em}\n"
    "table{border-collapse:collapse;font-family:monospace;font-size:12px;"
    "display:block;max-width:100%;overflow-x:auto}\n"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
    "white-space:nowrap;vertical-align:top}\n"
    "th{background:#eee}\n"
    ".grid{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}\n"
    ".grid>div{min-width:0;max-width:100%;overflow-x:auto}\n"
    "td.effect{white-space:normal;min-width:12em;max-width:24em}\n"
    "#program td:nth-child(3),#program td:nth-child(5){white-space:normal;"
    "overflow-wrap:break-word;min-width:10em}\n"
    "#rows td.wrap{white-space:normal;overflow-wrap:break-word;"
    "min-width:10em;max-width:20em}\n"
    "#rows tbody{border-top:2px solid #999}\n"
    "tbody.chosen{outline:2px solid #c80}\n"
    "tr.cie td{color:#555;background:#f6f6f6}\n"
    "tr.mark td{background:#fff3bf;font-style:italic}\n"
    "tr.error td{background:#ffd8d8}\n"
    "tr.chosen td{background:#fffaf0}\n"
    "td.insn.lookup{background:#ffe08a;font-weight:bold}\n"
    "span.here{color:#a50}\n"
    "td.abi{color:#aaa}\n"
    ".lit{background:#b2f2bb !important}\n"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere}\n"
    "pre.result{background:#f6f6f6;padding:.5em}\n"
    "figure.frame{margin:1em 0}\n"
    "figure.frame svg{max-width:100%;height:auto}\n"
    "figcaption,p.note{font-size:90%;color:#555}\n";

static const char script[] =
    "(function () {\n"
    "  var cells = document.querySelectorAll('#rows td[data-origin]');\n"
    "  var used = {}, linked = 0;\n"
    "  function light(on, insn, tds) {\n"
    "    insn.classList.toggle('lit', on);\n"
    "    tds.forEach(function (td) { td.classList.toggle('lit', on); });\n"
    "  }\n"
    "  cells.forEach(function (td) {\n"
    "    var insn = document.getElementById(td.dataset.origin);\n"
    "    if (!insn) return;\n"
    "    linked++;\n"
    "    used[td.dataset.origin] = true;\n"
    "    td.addEventListener('mouseenter', function () { light(true, insn, [td]); });\n"
    "    td.addEventListener('mouseleave', function () { light(false, insn, [td]); });\n"
    "  });\n"
    "  Object.keys(used).forEach(function (id) {\n"
    "    var insn = document.getElementById(id);\n"
    "    var tds = Array.prototype.slice.call(\n"
    "      document.querySelectorAll('#rows td[data-origin=\"' + id + '\"]'));\n"
    "    insn.addEventListener('mouseenter', function () { light(true, insn, tds); });\n"
    "    insn.addEventListener('mouseleave', function () { light(false, insn, tds); });\n"
    "  });\n"
    "  document.getElementById('links').textContent = linked +\n"
    "    ' cells linked to ' + Object.keys(used).length + ' instructions';\n"
    "})();\n";

static void cell(FILE *out, char *text)
{
    fputs("<td>", out);
    ex_put_html(out, text ? text : "");
    fputs("</td>", out);
    free(text);
}

static void program_row(const struct explanation *e, FILE *out, size_t i)
{
    const struct ex_insn *x = &e->insns[i];
    char buf[32];
    fprintf(out, "<tr id=\"i%zu\"%s>", i, x->in_cie ? " class=\"cie\"" : "");
    snprintf(buf, sizeof buf, "0x%" PRIx64, x->section_offset);
    cell(out, strdup(buf));
    cell(out, ex_hex_bytes(x->bytes, x->len, 12));
    cell(out, ex_insn_text(e, x));
    if (x->in_cie)
        snprintf(buf, sizeof buf, "CIE");
    else
        snprintf(buf, sizeof buf, "0x%" PRIx64, x->loc);
    cell(out, strdup(buf));
    cell(out, strdup(x->rule ? x->rule : "-"));
    char *effect = ex_effects_text(ex_arch(e), x);
    fputs("<td class=\"effect\">", out);
    ex_put_html(out, effect ? effect : "");
    fputs("</td>", out);
    free(effect);
    snprintf(buf, sizeof buf, "%zu", x->depth);
    cell(out, strdup(buf));
    fputs("</tr>\n", out);
}

static void note_row(FILE *out, const char *kind, const char *text)
{
    fprintf(out, "<tr class=\"%s\"><td colspan=\"7\">", kind);
    ex_put_html(out, text);
    fputs("</td></tr>\n", out);
}

static void program_table(const struct explanation *e, FILE *out)
{
    fputs("<div><table id=\"program\">\n<tr><th>offset</th><th>bytes</th>"
          "<th>instruction</th><th>at</th><th>rule</th><th>effect</th>"
          "<th>depth</th></tr>\n", out);
    const struct sem_range *range;
    size_t mark = ex_lookup_mark(e, &range);
    char note[128];
    snprintf(note, sizeof note, "lookup PC 0x%" PRIx64 " falls here",
             e->lookup_pc);
    for (size_t i = 0; i < e->ninsns; i++) {
        if (i == mark)
            note_row(out, "mark", note);
        program_row(e, out, i);
        if (e->insns[i].status != CFI_OK)
            note_row(out, "error", "the translation stops here");
    }
    if (mark == e->ninsns)
        note_row(out, "mark", note);
    fputs("</table></div>\n", out);
}

/* Which columns some row gives a rule: the table's columns. */
static void used_columns(const struct explanation *e, bool *used)
{
    memset(used, 0, EX_NCOLUMNS * sizeof *used);
    used[EX_CFA] = true;
    for (size_t i = 0; i < e->nranges; i++) {
        const struct sem_row *row = e->ranges[i].range.row;
        for (uint32_t k = 0; k < row->nrules; k++)
            used[row->rules[k].reg] = true;
    }
}

/* A rule as the table of rows shows it (malloc'd; NULL: out of
 * memory). */
static char *rule_text(const struct cfi_arch *arch, const struct sem_row *row,
                       unsigned column)
{
    if (column == EX_CFA)
        return ex_column_rule(arch, row, column);
    struct sem_rule rule = sem_row_rule(row, column);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    sem_print_rule_notation(f, arch, &rule);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Rules longer than this (expressions) may wrap; shorter ones keep to
 * one line. */
#define WRAP_AFTER 24

/* A cell of the table of rows; `span` the lines of machine code the
 * row covers. */
static void rows_cell(const struct explanation *e, FILE *out,
                      const struct ex_range *range, unsigned column,
                      size_t span)
{
    const struct sem_row *row = range->range.row;
    int origin = range->origin[column];
    bool none = column != EX_CFA &&
                sem_row_rule(row, column).kind == SEM_RULE_UNSPECIFIED;
    char rowspan[32] = "";
    if (span > 1)
        snprintf(rowspan, sizeof rowspan, " rowspan=\"%zu\"", span);
    if (none) {
        fprintf(out, "<td class=\"abi\"%s title=\"ABI default\"></td>",
                rowspan);
        return;
    }
    char *text = rule_text(ex_arch(e), row, column);
    fprintf(out, "<td%s%s", rowspan,
            text && strlen(text) > WRAP_AFTER ? " class=\"wrap\"" : "");
    if (origin != EX_ORIGIN_NONE)
        fprintf(out, " data-origin=\"i%d\"", origin);
    char *why = ex_origin_text(e, origin);
    fputs(" title=\"", out);
    ex_put_html(out, why ? why : "");
    fputs("\">", out);
    free(why);
    ex_put_html(out, text ? text : "");
    free(text);
    fputs("</td>", out);
}

/* The table's columns: the range, the machine code when listed, then
 * the CFA and the registers some row gives a rule. */
struct rows_layout {
    bool used[EX_NCOLUMNS];
    size_t nrules;                 /* the CFA and the used registers */
    const struct ex_machine_code *code; /* NULL: no listing */
};

static void insn_cells(const struct explanation *e, FILE *out,
                       const struct ex_machine_insn *x)
{
    bool here = e->lookup_pc >= x->addr && e->lookup_pc - x->addr < x->len;
    fprintf(out, "<td class=\"addr\">0x%" PRIx64 "</td>", x->addr);
    fputs(here ? "<td class=\"insn lookup\" id=\"lookup-insn\">"
               : "<td class=\"insn\">", out);
    ex_put_html(out, x->text);
    if (here)
        fprintf(out, " <span class=\"here\">\xe2\x86\x90 lookup PC 0x%"
                     PRIx64 "</span>", e->lookup_pc);
    fputs("</td>", out);
}

/* A row of the table (range NULL: addresses no row covers) over the n
 * instructions from `first`, each on a line of its own. */
static void rows_group(const struct explanation *e, FILE *out,
                       const struct rows_layout *l, size_t index,
                       size_t first, size_t n)
{
    const struct ex_range *range = index < e->nranges ? &e->ranges[index]
                                                      : NULL;
    bool chosen = range && e->row && index == e->row_index;
    size_t lines = n ? n : 1;
    fputs(chosen ? "<tbody class=\"chosen\">\n" : "<tbody>\n", out);
    for (size_t k = 0; k < lines; k++) {
        fputs(chosen ? "<tr class=\"chosen\">" : "<tr>", out);
        if (k == 0 && lines > 1)
            fprintf(out, "<td class=\"range\" rowspan=\"%zu\">", lines);
        else if (k == 0)
            fputs("<td class=\"range\">", out);
        if (k == 0 && range)
            fprintf(out, "[0x%" PRIx64 ",0x%" PRIx64 ")</td>",
                    range->range.begin, range->range.end);
        else if (k == 0)
            fputs("no row</td>", out);
        if (n)
            insn_cells(e, out, &l->code->insns[first + k]);
        else if (l->code)
            fputs("<td class=\"addr\"></td><td class=\"insn\"></td>", out);
        if (k == 0 && range) {
            rows_cell(e, out, range, EX_CFA, lines);
            for (unsigned reg = 0; reg < CFI_NREGS; reg++)
                if (l->used[reg])
                    rows_cell(e, out, range, reg, lines);
        } else if (k == 0) {
            fprintf(out, "<td colspan=\"%zu\" rowspan=\"%zu\">no row covers"
                         " these addresses</td>", l->nrules, lines);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n", out);
}

/* How many instructions from `next` start before `end`. */
static size_t insns_before(const struct ex_machine_code *code, size_t next,
                           uint64_t end)
{
    size_t n = 0;
    while (code && next + n < code->count && code->insns[next + n].addr < end)
        n++;
    return n;
}

static void rows_header(const struct explanation *e, FILE *out,
                        const struct rows_layout *l)
{
    fputs("<thead><tr><th>range</th>", out);
    if (l->code)
        fputs("<th>address</th><th>machine code</th>", out);
    fputs("<th>cfa</th>", out);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (l->used[reg]) {
            char *name = ex_column_name(ex_arch(e), reg);
            fprintf(out, "<th>%s</th>", name ? name : "");
            free(name);
        }
    fputs("</tr></thead>\n", out);
}

/* Each row with the instructions it is in effect at, by address; the
 * instructions no row covers (before the first, after a program that
 * stopped) in rows of their own. */
static void rows_table(const struct explanation *e,
                       const struct ex_machine_code *code, FILE *out)
{
    struct rows_layout l = {.code = code && !code->unreadable ? code : NULL};
    used_columns(e, l.used);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        l.nrules += l.used[reg];
    l.nrules += 1;
    fputs("<div><table id=\"rows\">\n", out);
    rows_header(e, out, &l);
    size_t next = 0, n;
    for (size_t i = 0; i < e->nranges; i++) {
        const struct sem_range *range = &e->ranges[i].range;
        if ((n = insns_before(l.code, next, range->begin)) > 0)
            rows_group(e, out, &l, e->nranges, next, n);
        next += n;
        n = insns_before(l.code, next, range->end);
        rows_group(e, out, &l, i, next, n);
        next += n;
    }
    if ((n = insns_before(l.code, next, UINT64_MAX)) > 0)
        rows_group(e, out, &l, e->nranges, next, n);
    fputs("</table></div>\n", out);
}

/* Why the machine code is not beside the rows, or where its decoding
 * stopped. */
static void code_notes(const struct explanation *e,
                       const struct ex_machine_code *code, FILE *out)
{
    if (!code)
        return;
    if (code->unreadable) {
        fputs("<p id=\"no-code\">The machine code is not shown: ", out);
        ex_put_html(out, code->unreadable);
        fputs(".</p>\n", out);
    } else if (code->stopped_at < e->fde->pc_end) {
        fprintf(out, "<p class=\"note\">The machine code is listed up to 0x%"
                     PRIx64 ": the bytes there are no x86-64 instruction."
                     "</p>\n", code->stopped_at);
    }
}

bool ex_html(const struct explanation *e, const struct ex_machine_code *code,
             FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
          "\n<title>cfisem explain ", out);
    ex_put_html(out, e->path);
    fprintf(out, " --pc 0x%" PRIx64 "</title>\n<style>\n%s</style>\n</head>\n"
                 "<body>\n<h1>How the call frame information of ", e->pc, style);
    ex_put_html(out, e->path);
    fprintf(out, " unwinds the frame at 0x%" PRIx64 "</h1>\n", e->pc);
    struct ex_renderer *r = ex_renderer_new(out, EX_HTML, false);
    if (!r)
        return false;
    ex_section_records(e, r);
    ex_heading(r, "2. The program, beside the table of rows it builds");
    ex_line(r, "Point at a cell of the table: the instruction that set it"
               " lights up (and the other way round). The chosen row is"
               " framed. Each row lists the machine code it is in effect"
               " at; the lookup PC's instruction is marked.");
    if (e->fde)
        code_notes(e, code, out);
    fputs("<div class=\"grid\">\n", out);
    if (e->fde) {
        program_table(e, out);
        rows_table(e, code, out);
    }
    fputs("</div>\n<p id=\"links\"></p>\n", out);
    ex_section_row(e, r);
    fputs("<h3>The frame of the chosen row, drawn</h3>\n", out);
    ex_frame_svg(e, out);
    ex_section_evaluation(e, r);
    ex_section_result(e, r);
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", script);
    return ex_renderer_end(r);
}
