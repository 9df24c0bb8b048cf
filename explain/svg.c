/* SPDX-License-Identifier: MIT */
/* svg.c — the frame of the chosen row, drawn for the html page as an
 * inline SVG figure (nothing fetched).
 *
 * The stack grows down: higher addresses are drawn higher. One cell is
 * 8 bytes, the cell of offset o holds [CFA+o, CFA+o+8), and an address
 * CFA+o is the line at the bottom of that cell. So the CFA (the caller's
 * stack pointer before its call) is the line under the caller's frame,
 * and the callee's stack pointer is the line under the top of its stack.
 * A register with the rule addr(cfa+o) (DW_CFA_offset) has its slot at
 * offset o; the return address is the slot of the CIE's return address
 * column. Every offset and value comes from the row and the evaluation:
 * nothing is computed here but where to draw. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

#define CELL_H 34          /* one 8-byte cell */
#define LABEL_W 120        /* the offsets, left of the cells */
#define CELL_W 260
#define MARK_W 400         /* the CFA and stack pointer marks, right */
#define TOP_PAD 14
#define FAR_CELLS 16       /* a stack pointer further below: a gap */

struct slot {
    unsigned column;
    int64_t offset;
    bool is_ra;
};

/* Where the callee's stack pointer is, as a CFA offset: from the two
 * values when the evaluation has them, else from a CFA rule rsp+n. */
static bool sp_offset(const struct explanation *e, const struct sem_row *row,
                      int64_t *offset)
{
    const struct ex_state *s = e->state;
    if (e->cfa.present && e->cfa.status == CFI_OK && s->has_regs &&
        s->callee.status[ex_arch(e)->sp] == CFI_REG_VALUE) {
        *offset = (int64_t)(s->callee.value[ex_arch(e)->sp] - e->cfa.value);
        return true;
    }
    if (row->cfa.kind == SEM_CFA_RULE_REG_OFFSET &&
        row->cfa.reg == ex_arch(e)->sp) {
        *offset = -row->cfa.offset;
        return true;
    }
    return false;
}

static size_t saved_slots(const struct explanation *e,
                          const struct sem_row *row, struct slot *slots)
{
    size_t n = 0;
    for (uint32_t k = 0; k < row->nrules && n < CFI_NREGS; k++) {
        const struct sem_reg_rule *r = &row->rules[k];
        if (r->rule.kind != SEM_RULE_OFFSET || r->reg >= CFI_NREGS)
            continue;
        slots[n++] = (struct slot){r->reg, r->rule.offset,
                                   r->reg == e->fde->cie->ra_column};
    }
    return n;
}

struct layout {
    int64_t top, bottom;   /* offsets of the highest and lowest lines */
    bool has_sp, sp_far;
    int64_t sp;
};

static int y_of(const struct layout *l, int64_t offset)
{
    return TOP_PAD + (int)((l->top - offset) * CELL_H / 8);
}

static struct layout lay_out(const struct slot *slots, size_t n,
                             bool has_sp, int64_t sp)
{
    /* One cell of the caller's frame above the CFA, one below it. */
    struct layout l = {8, -8, has_sp, false, sp};
    for (size_t i = 0; i < n; i++) {
        if (slots[i].offset + 8 > l.top)
            l.top = slots[i].offset + 8;
        if (slots[i].offset < l.bottom)
            l.bottom = slots[i].offset;
    }
    if (has_sp && sp < l.bottom - 8 * FAR_CELLS)
        l.sp_far = true;
    else if (has_sp && sp < l.bottom)
        l.bottom = sp;
    return l;
}

static void put_hex_or(FILE *out, bool known, uint64_t value,
                       const char *unknown)
{
    if (known)
        fprintf(out, "0x%" PRIx64, value);
    else
        fputs(unknown, out);
}

static void offset_label(FILE *out, const struct layout *l, int64_t offset,
                         const struct explanation *e)
{
    int y = y_of(l, offset);
    fprintf(out, "<text class=\"off\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
                 "CFA", LABEL_W - 8, y - 4);
    if (offset)
        fprintf(out, "%+" PRId64, offset);
    fputs("</text>", out);
    if (e->cfa.present && e->cfa.status == CFI_OK)
        fprintf(out, "<text class=\"addr\" x=\"%d\" y=\"%d\" "
                     "text-anchor=\"end\">0x%" PRIx64 "</text>",
                LABEL_W - 8, y + 10, e->cfa.value + (uint64_t)offset);
    fputc('\n', out);
}

static bool covered(const struct slot *slots, size_t n, int64_t offset)
{
    for (size_t i = 0; i < n; i++)
        if (offset + 8 > slots[i].offset && offset < slots[i].offset + 8)
            return true;
    return false;
}

/* The cells no slot takes: the caller's frame above the CFA, the
 * callee's below it. */
static void filler_cells(FILE *out, const struct layout *l,
                         const struct slot *slots, size_t n)
{
    for (int64_t o = l->top - 8; o >= l->bottom; o -= 8) {
        if (covered(slots, n, o))
            continue;
        fprintf(out, "<rect class=\"cell%s\" x=\"%d\" y=\"%d\" width=\"%d\" "
                     "height=\"%d\"/>", o >= 0 ? " caller" : "", LABEL_W,
                y_of(l, o + 8), CELL_W, CELL_H);
        if (o == 0)
            fprintf(out, "<text class=\"note\" x=\"%d\" y=\"%d\">the caller's "
                         "frame</text>", LABEL_W + 8, y_of(l, 8) + 21);
        fputc('\n', out);
    }
}

static void draw_slot(FILE *out, const struct explanation *e,
                      const struct layout *l, const struct slot *s)
{
    char buf[16];
    const char *name = cfi_arch_reg_label(ex_arch(e), s->column, buf,
                                          sizeof buf);
    const struct ex_value *v = &e->regs[s->column];
    bool known = v->present && v->status == CFI_OK &&
                 v->caller_status == CFI_REG_VALUE;
    int y = y_of(l, s->offset + 8);
    fprintf(out, "<g class=\"slot%s\" data-column=\"%s\" data-offset=\"%"
                 PRId64 "\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                 "height=\"%d\"/>", s->is_ra ? " ra" : "", name, s->offset,
            LABEL_W, y, CELL_W, CELL_H);
    fprintf(out, "<text x=\"%d\" y=\"%d\">%s%s%s</text>", LABEL_W + 8, y + 14,
            s->is_ra ? "return address (" : "saved ", name,
            s->is_ra ? ")" : "");
    fprintf(out, "<text class=\"value\" x=\"%d\" y=\"%d\">", LABEL_W + 8,
            y + 28);
    put_hex_or(out, known, v->value, "value not evaluated");
    fputs("</text></g>\n", out);
}

static void mark(FILE *out, int y, const char *cls,
                 const char *name, bool known, uint64_t value,
                 const char *how)
{
    fprintf(out, "<g class=\"%s\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                 "y2=\"%d\"/><text x=\"%d\" y=\"%d\">\xe2\x86\x90 %s = ", cls,
            LABEL_W - 6, y, LABEL_W + CELL_W + 14, y, LABEL_W + CELL_W + 18,
            y + 4, name);
    put_hex_or(out, known, value, "?");
    fputs(" (", out);
    ex_put_html(out, how);
    fputs(")</text></g>\n", out);
}

static void draw_marks(FILE *out, const struct explanation *e,
                       const struct sem_row *row, const struct layout *l)
{
    char *cfa_rule = ex_column_rule(ex_arch(e), row, EX_CFA);
    mark(out, y_of(l, 0), "cfa", "CFA",
         e->cfa.present && e->cfa.status == CFI_OK, e->cfa.value,
         cfa_rule ? cfa_rule : "");
    free(cfa_rule);
    if (!l->has_sp)
        return;
    const struct ex_state *s = e->state;
    unsigned sp = ex_arch(e)->sp;
    bool known = s->has_regs && s->callee.status[sp] == CFI_REG_VALUE;
    char how[48], name[32], buf[16];
    snprintf(name, sizeof name, "callee's %s",
             cfi_arch_reg_label(ex_arch(e), sp, buf, sizeof buf));
    snprintf(how, sizeof how, "CFA%+" PRId64, l->sp);
    int y = l->sp_far ? y_of(l, l->bottom) + CELL_H : y_of(l, l->sp);
    if (l->sp_far)
        fprintf(out, "<text class=\"note\" x=\"%d\" y=\"%d\">\xe2\x8b\xae"
                     " (not to scale)</text>\n", LABEL_W + CELL_W / 2, y - 10);
    mark(out, y, "sp", name, known, known ? s->callee.value[sp] : 0, how);
}

static const char svg_style[] =
    "<style>#frame rect{fill:#fff;stroke:#888}"
    "#frame rect.caller{fill:#eee}"
    "#frame .slot rect{fill:#dbe9ff;stroke:#36c}"
    "#frame .slot.ra rect{fill:#ffe3c2;stroke:#c60}"
    "#frame text{font:12px monospace;fill:#222}"
    "#frame text.value,#frame text.addr{fill:#555;font-size:11px}"
    "#frame text.note{fill:#777;font-style:italic}"
    "#frame .cfa line{stroke:#c00;stroke-width:3}"
    "#frame .sp line{stroke:#080;stroke-width:3;stroke-dasharray:6 3}"
    "#frame .cfa text{fill:#c00}#frame .sp text{fill:#080}</style>\n";

static void draw(FILE *out, const struct explanation *e,
                 const struct sem_row *row)
{
    struct slot slots[CFI_NREGS];
    size_t n = saved_slots(e, row, slots);
    int64_t sp = 0;
    bool has_sp = sp_offset(e, row, &sp);
    struct layout l = lay_out(slots, n, has_sp, sp);
    int height = y_of(&l, l.bottom) + TOP_PAD + (l.sp_far ? 2 * CELL_H : 0);
    int width = LABEL_W + CELL_W + MARK_W;
    fprintf(out, "<svg id=\"frame\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
                 "aria-label=\"the frame at the lookup PC\">\n%s", width,
            height, width, height, svg_style);
    filler_cells(out, &l, slots, n);
    for (size_t i = 0; i < n; i++)
        draw_slot(out, e, &l, &slots[i]);
    for (int64_t o = l.top; o >= l.bottom; o -= 8)
        offset_label(out, &l, o, e);
    draw_marks(out, e, row, &l);
    fputs("</svg>\n", out);
}

/* What the drawing leaves out: the return address when no slot holds it,
 * registers saved at an address an expression computes. */
static void notes(FILE *out, const struct explanation *e,
                  const struct sem_row *row)
{
    struct sem_rule ra = sem_row_rule(row, (unsigned)e->fde->cie->ra_column);
    if (ra.kind != SEM_RULE_OFFSET) {
        char *text = ex_column_rule(ex_arch(e), row,
                                    (unsigned)e->fde->cie->ra_column);
        fputs("<p class=\"note\">The return address is in no slot at a "
              "fixed CFA offset: its rule is ", out);
        ex_put_html(out, text ? text : "");
        fputs(".</p>\n", out);
        free(text);
    }
    if (row->cfa.kind != SEM_CFA_RULE_REG_OFFSET)
        fputs("<p class=\"note\">The CFA is computed by an expression.</p>\n",
              out);
}

void ex_frame_svg(const struct explanation *e, FILE *out)
{
    if (!e->fde || !e->row) {
        fputs("<p id=\"no-frame\">No row: there is no frame to draw.</p>\n",
              out);
        return;
    }
    fputs("<figure class=\"frame\">\n", out);
    draw(out, e, e->row->row);
    fputs("<figcaption>The stack at the lookup PC, from the caller's frame "
          "down: each register the row saves at a CFA offset, in its slot "
          "(blue), the return address (orange), the CFA (red) and the "
          "callee's stack pointer (green).</figcaption>\n</figure>\n", out);
    notes(out, e, e->row->row);
}
