/* SPDX-License-Identifier: MIT */
/* render.c — printing a document of headings, lines, tables and
 * preformatted text as text (aligned, colour on request), markdown, or a
 * LaTeX fragment. A table is kept until its end, so that text can align
 * its columns. */
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

#define MAX_COLUMNS 8

struct table_row {
    char *cells[MAX_COLUMNS]; /* a note: cells[0] the text, kind set */
    const char *kind;         /* NULL for a row of cells */
};

struct ex_renderer {
    FILE *out;
    enum ex_format format;
    bool colour;
    bool failed;
    size_t ncols;
    const char *headers[MAX_COLUMNS];
    struct table_row *rows;
    size_t nrows, capacity;
};

struct ex_renderer *ex_renderer_new(FILE *out, enum ex_format format,
                                    bool colour)
{
    struct ex_renderer *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->out = out;
    r->format = format;
    r->colour = colour;
    return r;
}

/* ------------------------------------------------------------------ */
/* Escaping                                                             */
/* ------------------------------------------------------------------ */

static void put_latex(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\\': fputs("\\textbackslash{}", out); break;
        case '{': case '}': case '$': case '&': case '#': case '_': case '%':
            fprintf(out, "\\%c", *s);
            break;
        case '^': fputs("\\^{}", out); break;
        case '~': fputs("\\~{}", out); break;
        case '[': fputs("{[}", out); break;
        case ']': fputs("{]}", out); break;
        case '-': fputs("-{}", out); break;
        default: putc(*s, out);
        }
    }
}

void ex_put_html(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: putc(*s, out);
        }
    }
}

static void put_markdown_cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '`')
            putc('\\', out);
        putc(*s, out);
    }
}

/* ------------------------------------------------------------------ */
/* Headings, lines, preformatted text                                   */
/* ------------------------------------------------------------------ */

void ex_heading(struct ex_renderer *r, const char *text)
{
    switch (r->format) {
    case EX_MARKDOWN: fprintf(r->out, "## %s\n\n", text); return;
    case EX_HTML:
        fputs("<h2>", r->out);
        ex_put_html(r->out, text);
        fputs("</h2>\n", r->out);
        return;
    case EX_LATEX:
        fputs("\\subsubsection*{", r->out);
        put_latex(r->out, text);
        fputs("}\n", r->out);
        return;
    default:
        fprintf(r->out, r->colour ? "\033[1m== %s\033[0m\n" : "== %s\n", text);
    }
}

void ex_line(struct ex_renderer *r, const char *text)
{
    switch (r->format) {
    case EX_MARKDOWN: fprintf(r->out, "%s\n\n", text); return;
    case EX_HTML:
        fputs("<p>", r->out);
        ex_put_html(r->out, text);
        fputs("</p>\n", r->out);
        return;
    case EX_LATEX:
        fputs("\\noindent\\texttt{\\small ", r->out);
        put_latex(r->out, text);
        fputs("}\\par\n", r->out);
        return;
    default: fprintf(r->out, "%s\n", text);
    }
}

void ex_pre(struct ex_renderer *r, const char *text)
{
    switch (r->format) {
    case EX_MARKDOWN: fprintf(r->out, "```\n%s```\n\n", text); return;
    case EX_HTML:
        fputs("<pre class=\"result\">", r->out);
        ex_put_html(r->out, text);
        fputs("</pre>\n", r->out);
        return;
    case EX_LATEX:
        fprintf(r->out, "\\begin{verbatim}\n%s\\end{verbatim}\n", text);
        return;
    default: fputs(text, r->out);
    }
}

/* ------------------------------------------------------------------ */
/* Tables                                                               */
/* ------------------------------------------------------------------ */

void ex_table_begin(struct ex_renderer *r, size_t ncols,
                    const char *const *headers)
{
    r->ncols = ncols < MAX_COLUMNS ? ncols : MAX_COLUMNS;
    for (size_t i = 0; i < r->ncols; i++)
        r->headers[i] = headers[i];
    r->nrows = 0;
}

static struct table_row *new_row(struct ex_renderer *r)
{
    if (r->nrows == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 32;
        struct table_row *grown = realloc(r->rows, capacity * sizeof *grown);
        if (!grown) {
            r->failed = true;
            return NULL;
        }
        r->rows = grown;
        r->capacity = capacity;
    }
    struct table_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof *row);
    return row;
}

void ex_table_row(struct ex_renderer *r, char *const *cells)
{
    struct table_row *row = new_row(r);
    if (!row)
        return;
    for (size_t i = 0; i < r->ncols; i++) {
        row->cells[i] = strdup(cells[i] ? cells[i] : "");
        r->failed |= row->cells[i] == NULL;
    }
}

void ex_table_note(struct ex_renderer *r, const char *kind, const char *text)
{
    struct table_row *row = new_row(r);
    if (!row)
        return;
    row->kind = kind;
    row->cells[0] = strdup(text);
    r->failed |= row->cells[0] == NULL;
}

static const char *cell(const struct table_row *row, size_t i)
{
    return row->cells[i] ? row->cells[i] : "";
}

static void text_cells(struct ex_renderer *r, const char *const *cells,
                       const size_t *widths)
{
    fputs("  ", r->out);
    for (size_t i = 0; i < r->ncols; i++) {
        if (i + 1 == r->ncols)
            fputs(cells[i], r->out);
        else
            fprintf(r->out, "%-*s  ", (int)widths[i], cells[i]);
    }
    putc('\n', r->out);
}

static void text_note(struct ex_renderer *r, const struct table_row *row)
{
    bool error = !strcmp(row->kind, "error");
    const char *on = !r->colour ? "" : error ? "\033[31m" : "\033[33m";
    fprintf(r->out, "  %s%s %s%s\n", on, error ? "!!" : "-->", cell(row, 0),
            r->colour ? "\033[0m" : "");
}

static void text_table(struct ex_renderer *r)
{
    size_t widths[MAX_COLUMNS] = {0};
    for (size_t i = 0; i < r->ncols; i++)
        widths[i] = strlen(r->headers[i]);
    for (size_t n = 0; n < r->nrows; n++)
        for (size_t i = 0; i < r->ncols && !r->rows[n].kind; i++)
            if (strlen(cell(&r->rows[n], i)) > widths[i])
                widths[i] = strlen(cell(&r->rows[n], i));
    text_cells(r, r->headers, widths);
    for (size_t n = 0; n < r->nrows; n++) {
        const char *cells[MAX_COLUMNS];
        for (size_t i = 0; i < r->ncols; i++)
            cells[i] = cell(&r->rows[n], i);
        if (r->rows[n].kind)
            text_note(r, &r->rows[n]);
        else
            text_cells(r, cells, widths);
    }
}

static void markdown_table(struct ex_renderer *r)
{
    for (size_t i = 0; i < r->ncols; i++)
        fprintf(r->out, "| %s ", r->headers[i]);
    fputs("|\n", r->out);
    for (size_t i = 0; i < r->ncols; i++)
        fputs("|---", r->out);
    fputs("|\n", r->out);
    for (size_t n = 0; n < r->nrows; n++) {
        const struct table_row *row = &r->rows[n];
        for (size_t i = 0; i < r->ncols; i++) {
            fputs("| ", r->out);
            if (row->kind && i == 0)
                fputs(!strcmp(row->kind, "error") ? "**error**" : "**here**",
                      r->out);
            else if (row->kind && i == 2)
                put_markdown_cell(r->out, cell(row, 0));
            else if (!row->kind && *cell(row, i)) {
                putc('`', r->out);
                put_markdown_cell(r->out, cell(row, i));
                putc('`', r->out);
            }
            putc(' ', r->out);
        }
        fputs("|\n", r->out);
    }
    putc('\n', r->out);
}

/* The LaTeX column types: a column whose cells run long wraps (p{}), at
 * a width in proportion to its longest cell, so that the table fits the
 * line. */
static void latex_columns(struct ex_renderer *r)
{
    size_t longest[MAX_COLUMNS] = {0}, total = 0;
    for (size_t n = 0; n < r->nrows; n++)
        for (size_t i = 0; i < r->ncols && !r->rows[n].kind; i++)
            if (strlen(cell(&r->rows[n], i)) > longest[i])
                longest[i] = strlen(cell(&r->rows[n], i));
    for (size_t i = 0; i < r->ncols; i++)
        total += longest[i] < 60 ? longest[i] : 60;
    fputs("@{}", r->out);
    for (size_t i = 0; i < r->ncols; i++) {
        size_t len = longest[i] < 60 ? longest[i] : 60;
        if (len > 24 && total > 110)
            fprintf(r->out, "p{%.2f\\linewidth}", 0.9 * (double)len / (double)total);
        else
            fputs("l", r->out);
    }
    fputs("@{}", r->out);
}

static void latex_table(struct ex_renderer *r)
{
    fputs("{\\tiny\\setlength{\\tabcolsep}{3pt}\\begin{longtable}{", r->out);
    latex_columns(r);
    fputs("}\n\\toprule\n", r->out);
    for (size_t i = 0; i < r->ncols; i++) {
        fputs(i ? " & " : "", r->out);
        put_latex(r->out, r->headers[i]);
    }
    fputs(" \\\\\n\\midrule\n", r->out);
    for (size_t n = 0; n < r->nrows; n++) {
        const struct table_row *row = &r->rows[n];
        if (row->kind) {
            fprintf(r->out, "\\multicolumn{%zu}{l}{\\textit{", r->ncols);
            put_latex(r->out, cell(row, 0));
            fputs("}} \\\\\n", r->out);
            continue;
        }
        for (size_t i = 0; i < r->ncols; i++) {
            fputs(i ? " & \\texttt{" : "\\texttt{", r->out);
            put_latex(r->out, cell(row, i));
            putc('}', r->out);
        }
        fputs(" \\\\\n", r->out);
    }
    fputs("\\bottomrule\n\\end{longtable}}\n", r->out);
}

static void html_table(struct ex_renderer *r)
{
    fputs("<table>\n<tr>", r->out);
    for (size_t i = 0; i < r->ncols; i++) {
        fputs("<th>", r->out);
        ex_put_html(r->out, r->headers[i]);
        fputs("</th>", r->out);
    }
    fputs("</tr>\n", r->out);
    for (size_t n = 0; n < r->nrows; n++) {
        const struct table_row *row = &r->rows[n];
        if (row->kind) {
            fprintf(r->out, "<tr class=\"%s\"><td colspan=\"%zu\">", row->kind,
                    r->ncols);
            ex_put_html(r->out, cell(row, 0));
            fputs("</td></tr>\n", r->out);
            continue;
        }
        fputs("<tr>", r->out);
        for (size_t i = 0; i < r->ncols; i++) {
            fputs("<td>", r->out);
            ex_put_html(r->out, cell(row, i));
            fputs("</td>", r->out);
        }
        fputs("</tr>\n", r->out);
    }
    fputs("</table>\n", r->out);
}

void ex_table_end(struct ex_renderer *r)
{
    if (r->format == EX_HTML)
        html_table(r);
    else if (r->format == EX_MARKDOWN)
        markdown_table(r);
    else if (r->format == EX_LATEX)
        latex_table(r);
    else
        text_table(r);
    for (size_t n = 0; n < r->nrows; n++)
        for (size_t i = 0; i < MAX_COLUMNS; i++)
            free(r->rows[n].cells[i]);
    r->nrows = 0;
}

bool ex_renderer_end(struct ex_renderer *r)
{
    bool ok = !r->failed;
    free(r->rows);
    free(r);
    return ok;
}
