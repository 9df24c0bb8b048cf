/* SPDX-License-Identifier: MIT */
/* perf_svg.c — `cfisem perf --svg`: a flame graph as one self-contained
 * SVG. The folded stacks make a tree of frame prefixes (the root "all"
 * holds every sample); each node is one <rect>, as wide as its share of
 * the samples, above its parent, with a <title> saying its name and
 * count, and its name written in it when there is room. Children are
 * laid out in name order, so equal inputs give equal files. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_out.h"

#define SVG_WIDTH 1200.0
#define SVG_MARGIN 10.0
#define ROW_HEIGHT 16
#define ROW_GAP 1
#define HEADER 30
#define CHAR_WIDTH 7.0     /* of the 12px monospace font, about */
/* Frames deeper than this are left out (the layout recurses). */
#define SVG_MAX_DEPTH 2048

struct node {
    const char *name;      /* into the caller's lines */
    size_t name_len;
    uint64_t count;
    struct node **children;
    size_t nchildren, cap;
};

static struct node *node_new(const char *name, size_t len)
{
    struct node *n = calloc(1, sizeof *n);
    if (n) {
        n->name = name;
        n->name_len = len;
    }
    return n;
}

static void node_free(struct node *n)
{
    for (size_t i = 0; i < n->nchildren; i++)
        node_free(n->children[i]);
    free(n->children);
    free(n);
}

static struct node *child(struct node *parent, const char *name,
                          size_t len)
{
    for (size_t i = 0; i < parent->nchildren; i++) {
        struct node *c = parent->children[i];
        if (c->name_len == len && memcmp(c->name, name, len) == 0)
            return c;
    }
    if (parent->nchildren == parent->cap) {
        size_t cap = parent->cap ? 2 * parent->cap : 4;
        struct node **grown = realloc(parent->children,
                                      cap * sizeof *grown);
        if (!grown)
            return NULL;
        parent->children = grown;
        parent->cap = cap;
    }
    struct node *c = node_new(name, len);
    if (c)
        parent->children[parent->nchildren++] = c;
    return c;
}

/* Adds one sample's stack, "A;B;C" outermost first; its depth. */
static bool add_stack(struct node *root, const char *line, size_t *depth)
{
    root->count++;
    struct node *at = root;
    size_t d = 0;
    for (const char *p = line; *p && d < SVG_MAX_DEPTH;) {
        size_t len = strcspn(p, ";");
        if (!(at = child(at, p, len)))
            return false;
        at->count++;
        d++;
        p += len + (p[len] == ';');
    }
    if (d > *depth)
        *depth = d;
    return true;
}

static int by_name(const void *a, const void *b)
{
    const struct node *x = *(struct node *const *)a;
    const struct node *y = *(struct node *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static void write_escaped(FILE *out, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (text[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if ((unsigned char)text[i] >= 0x20)
                fputc(text[i], out);
            else
                fputc('?', out);
        }
    }
}

/* A warm colour from the name, the same for the same name. */
static void colour(const struct node *n, unsigned rgb[3])
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n->name_len; i++)
        h = (h ^ (unsigned char)n->name[i]) * 16777619u;
    rgb[0] = 205 + h % 50;
    rgb[1] = (h >> 8) % 180;
    rgb[2] = (h >> 16) % 55;
}

struct layout {
    FILE *out;
    uint64_t total;
    double scale;          /* pixels a sample */
    size_t depth;          /* rows above the root */
};

static void write_node(const struct layout *l, struct node *n, size_t level,
                       double x)
{
    double width = (double)n->count * l->scale;
    double y = HEADER + (double)(l->depth - level) * (ROW_HEIGHT + ROW_GAP);
    unsigned rgb[3];
    colour(n, rgb);
    fprintf(l->out, "<g><title>");
    write_escaped(l->out, n->name, n->name_len);
    fprintf(l->out, " (%" PRIu64 " samples, %.2f%%)</title>", n->count,
            100.0 * (double)n->count / (double)l->total);
    fprintf(l->out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
            "height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>", x, y, width,
            ROW_HEIGHT, rgb[0], rgb[1], rgb[2]);
    size_t fits = width > 3 * CHAR_WIDTH ? (size_t)(width / CHAR_WIDTH) - 1
                                         : 0;
    if (fits >= 2) {
        size_t len = n->name_len < fits ? n->name_len : fits - 2;
        fprintf(l->out, "<text x=\"%.2f\" y=\"%.0f\">", x + 3,
                y + ROW_HEIGHT - 4);
        write_escaped(l->out, n->name, len);
        fprintf(l->out, "%s</text>", len < n->name_len ? ".." : "");
    }
    fprintf(l->out, "</g>\n");
    if (n->nchildren)
        qsort(n->children, n->nchildren, sizeof *n->children, by_name);
    for (size_t i = 0; i < n->nchildren; i++) {
        write_node(l, n->children[i], level + 1, x);
        x += (double)n->children[i]->count * l->scale;
    }
}

bool perf_svg_write(FILE *out, char *const *lines, size_t n,
                    const char *title)
{
    struct node *root = node_new("all", 3);
    size_t depth = 0;
    bool ok = root != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = add_stack(root, lines[i], &depth);
    if (!ok) {
        if (root)
            node_free(root);
        return false;
    }
    double height = HEADER + (double)(depth + 1) * (ROW_HEIGHT + ROW_GAP)
                    + SVG_MARGIN;
    fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "style=\"background: #fff8ee\">\n"
            "<style>text { font: 12px monospace; fill: #000; "
            "pointer-events: none; } rect:hover { stroke: #000; }</style>\n"
            "<text x=\"%.0f\" y=\"20\">", SVG_WIDTH, height, SVG_WIDTH,
            height, SVG_MARGIN);
    write_escaped(out, title, strlen(title));
    fprintf(out, "</text>\n");
    struct layout l = {out, root->count ? root->count : 1,
                       (SVG_WIDTH - 2 * SVG_MARGIN)
                           / (double)(root->count ? root->count : 1),
                       depth};
    write_node(&l, root, 0, SVG_MARGIN);
    fprintf(out, "</svg>\n");
    node_free(root);
    return true;
}
