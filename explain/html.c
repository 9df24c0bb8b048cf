/* html.c — --format html: one self-contained page (inline style
 * and script, nothing fetched). The program is beside the table of rows
 * it builds; each cell of the table names the instruction that set it
 * (data-origin), and pointing at either lights up the other. The script
 * also writes, in #links, how many cells it linked to how many
 * instructions: what a browser shows can be checked. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
    "table{border-collapse:collapse;font-family:monospace;font-size:12px}\n"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
    "white-space:nowrap}\n"
    "th{background:#eee}\n"
    ".grid{display:flex;gap:1.5em;align-items:flex-start;overflow-x:auto}\n"
    ".grid>div{flex-shrink:0}\n"
    "td.effect{white-space:normal;max-width:24em}\n"
    "tr.cie td{color:#555;background:#f6f6f6}\n"
    "tr.mark td{background:#fff3bf;font-style:italic}\n"
    "tr.error td{background:#ffd8d8}\n"
    "tr.chosen td{border-top:2px solid #c80;border-bottom:2px solid #c80}\n"
    "td.abi{color:#aaa}\n"
    ".lit{background:#b2f2bb !important}\n"
    "pre.result{background:#f6f6f6;padding:.5em}\n";

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
    char *effect = ex_effects_text(x);
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

static void rows_cell(const struct explanation *e, FILE *out,
                      const struct ex_range *range, unsigned column)
{
    const struct sem_row *row = range->range.row;
    int origin = range->origin[column];
    bool none = column != EX_CFA &&
                sem_row_rule(row, column).kind == SEM_RULE_UNSPECIFIED;
    if (none) {
        fputs("<td class=\"abi\" title=\"ABI default\"></td>", out);
        return;
    }
    char *why = ex_origin_text(e, origin);
    if (origin == EX_ORIGIN_NONE)
        fputs("<td title=\"", out);
    else
        fprintf(out, "<td data-origin=\"i%d\" title=\"", origin);
    ex_put_html(out, why ? why : "");
    fputs("\">", out);
    free(why);
    char *text = NULL;
    if (column == EX_CFA) {
        text = ex_column_rule(row, column);
    } else {
        struct sem_rule rule = sem_row_rule(row, column);
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f) {
            sem_print_rule_notation(f, &rule);
            if (fclose(f) != 0) {
                free(text);
                text = NULL;
            }
        }
    }
    ex_put_html(out, text ? text : "");
    free(text);
    fputs("</td>", out);
}

static void rows_table(const struct explanation *e, FILE *out)
{
    bool used[EX_NCOLUMNS];
    used_columns(e, used);
    fputs("<div><table id=\"rows\">\n<tr><th>range</th><th>cfa</th>", out);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (used[reg]) {
            char *name = ex_column_name(reg);
            fprintf(out, "<th>%s</th>", name ? name : "");
            free(name);
        }
    fputs("</tr>\n", out);
    for (size_t i = 0; i < e->nranges; i++) {
        const struct ex_range *range = &e->ranges[i];
        bool chosen = e->row && i == e->row_index;
        fprintf(out, "<tr%s><td>[0x%" PRIx64 ",0x%" PRIx64 ")</td>",
                chosen ? " class=\"chosen\"" : "", range->range.begin,
                range->range.end);
        rows_cell(e, out, range, EX_CFA);
        for (unsigned reg = 0; reg < CFI_NREGS; reg++)
            if (used[reg])
                rows_cell(e, out, range, reg);
        fputs("</tr>\n", out);
    }
    fputs("</table></div>\n", out);
}

bool ex_html(const struct explanation *e, FILE *out)
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
               " framed.");
    fputs("<div class=\"grid\">\n", out);
    if (e->fde) {
        program_table(e, out);
        rows_table(e, out);
    }
    fputs("</div>\n<p id=\"links\"></p>\n", out);
    ex_section_row(e, r);
    ex_section_evaluation(e, r);
    ex_section_result(e, r);
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", script);
    return ex_renderer_end(r);
}
