/* SPDX-License-Identifier: MIT */
/* search.c — the if/else search from a lookup PC to its leaf.
 *
 * Structure of the generated search:
 *   eh_search        pc below the first FDE or at/above the end of the
 *                    last one: no FDE; else an if/else tree over the
 *                    parts' first addresses, each leaf a tail call;
 *   eh_part_<k>      p = pc - the part's first address; an if/else tree
 *                    over its segments' starts (segment: the leaves from
 *                    one FDE's start to the next's, gaps included); at a
 *                    segment, d = p - the segment's start and a goto into
 *                    the segment's search on d;
 *   segment search   nodes (B, L, R): `if (d < B)` L, else R, where L and
 *                    R are nodes, a row (`r<n>`: a tail call to eh_row_n)
 *                    or `nofde`. The first CHAIN_LEAVES leaves of a
 *                    segment are a chain tested from its last leaf down, so
 *                    segments that start alike (the same prologue rows at
 *                    the same offsets) end in the same nodes; the leaves
 *                    after them a balanced tree. Nodes are hash-consed per
 *                    part: each distinct (B, L, R) is emitted once. A node
 *                    used once is written where it is used (the search
 *                    falls through it); a shared one gets a label `n<i>`
 *                    and is reached with goto.
 * Offsets are 32-bit when the part spans less than 4 GiB.
 *
 * Parts bound the size of one C function (the time gcc takes grows
 * faster than the function) and are compiled in parallel. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Leaves per part: about 60 KiB of machine code, a second of gcc. */
#define PART_LEAVES 4096
/* Leaves at the start of a segment searched as a chain. */
#define CHAIN_LEAVES 9

/* A reference to a node (NODE_BIT set) or a leaf target (cg_leaf). */
#define NODE_BIT 0x80000000u

struct node {
    uint64_t bound;
    uint32_t left, right;
};

struct segment {
    size_t first;       /* leaf index */
    uint64_t start;     /* address of its first leaf */
    uint32_t root;
};

struct part {
    struct segment *segments;
    size_t nsegments;
    uint64_t base, end; /* [base, end): the addresses it answers for */
    struct node *nodes;
    size_t nnodes, nodes_cap;
    struct cg_intern keys;
};

struct cg_search {
    const struct cg_layout *layout;
    struct part *parts;
    size_t nparts;
    uint64_t low, high; /* FDEs cover addresses in [low, high) only */
    size_t nnodes;
    bool nomem;
};

/* ------------------------------------------------------------------ */
/* Building segment searches                                            */
/* ------------------------------------------------------------------ */

static uint32_t node(struct cg_search *s, struct part *part, uint64_t bound,
                     uint32_t left, uint32_t right)
{
    uint8_t key[16];
    for (unsigned i = 0; i < 8; i++)
        key[i] = (uint8_t)(bound >> (8 * i));
    memcpy(key + 8, &left, 4);
    memcpy(key + 12, &right, 4);
    bool added;
    long index = cg_intern(&part->keys, key, sizeof key, &added);
    if (index < 0 || index >= (long)NODE_BIT) {
        s->nomem = true;
        return CG_NO_FDE;
    }
    if (added) {
        if (part->nnodes == part->nodes_cap) {
            size_t cap = part->nodes_cap ? part->nodes_cap * 2 : 256;
            struct node *nodes = realloc(part->nodes, cap * sizeof *nodes);
            if (!nodes) {
                s->nomem = true;
                return CG_NO_FDE;
            }
            part->nodes = nodes;
            part->nodes_cap = cap;
        }
        part->nodes[part->nnodes++] = (struct node){bound, left, right};
    }
    return NODE_BIT | (uint32_t)index;
}

/* The leaves [lo, hi) of a segment starting at `start`, as a balanced
 * tree. */
static uint32_t balanced(struct cg_search *s, struct part *part,
                         const struct cg_leaf *leaves, size_t lo, size_t hi,
                         uint64_t start)
{
    if (hi - lo == 1)
        return leaves[lo].target;
    size_t mid = lo + (hi - lo) / 2;
    uint32_t left = balanced(s, part, leaves, lo, mid, start);
    uint32_t right = balanced(s, part, leaves, mid, hi, start);
    return node(s, part, leaves[mid].begin - start, left, right);
}

/* The leaves [0, count) of a segment: a chain over the first ones, tested
 * from the highest down, then halves of what is above. */
static uint32_t segment_search(struct cg_search *s, struct part *part,
                               const struct cg_leaf *leaves, size_t count,
                               uint64_t start)
{
    if (count <= CHAIN_LEAVES) {
        uint32_t ref = leaves[0].target;
        for (size_t j = 1; j < count; j++)
            ref = node(s, part, leaves[j].begin - start, ref,
                       leaves[j].target);
        return ref;
    }
    size_t split = (CHAIN_LEAVES + count) / 2;
    uint32_t low = segment_search(s, part, leaves, split, start);
    uint32_t high = balanced(s, part, leaves, split, count, start);
    return node(s, part, leaves[split].begin - start, low, high);
}

/* ------------------------------------------------------------------ */
/* Parts                                                                */
/* ------------------------------------------------------------------ */

/* Leaves [first, end) in segments. */
static bool make_part(struct cg_search *s, struct part *part, size_t first,
                      size_t end)
{
    const struct cg_leaf *leaves = s->layout->leaves;
    size_t n = 0;
    for (size_t i = first; i < end; i++)
        n += leaves[i].segment_start || i == first;
    part->segments = calloc(n, sizeof *part->segments);
    if (!part->segments)
        return false;
    for (size_t i = first; i < end; i++)
        if (leaves[i].segment_start || i == first)
            part->segments[part->nsegments++] =
                (struct segment){i, leaves[i].begin, CG_NO_FDE};
    part->base = leaves[first].begin;
    for (size_t k = 0; k < part->nsegments && !s->nomem; k++) {
        struct segment *seg = &part->segments[k];
        size_t stop = k + 1 < part->nsegments ? part->segments[k + 1].first
                                              : end;
        seg->root = segment_search(s, part, leaves + seg->first,
                                   stop - seg->first, seg->start);
    }
    s->nnodes += part->nnodes;
    return !s->nomem;
}

/* Cuts the leaves below the last (no FDE above the last FDE) into parts
 * of about PART_LEAVES leaves, at segment starts. */
static bool make_parts(struct cg_search *s)
{
    const struct cg_layout *layout = s->layout;
    size_t nleaves = layout->nleaves - 1, first = 0;
    s->parts = calloc(nleaves / PART_LEAVES + 2, sizeof *s->parts);
    if (!s->parts)
        return false;
    while (first < nleaves) {
        size_t end = first + 1;
        while (end < nleaves &&
               (end - first < PART_LEAVES || !layout->leaves[end].segment_start))
            end++;
        struct part *part = &s->parts[s->nparts++];
        if (!make_part(s, part, first, end))
            return false;
        first = end;
    }
    for (size_t k = 0; k < s->nparts; k++)
        s->parts[k].end = k + 1 < s->nparts ? s->parts[k + 1].base : s->high;
    return true;
}

enum cfi_status cg_search_build(const struct cg_layout *layout,
                                struct cg_search **result)
{
    struct cg_search *s = calloc(1, sizeof *s);
    if (!s)
        return CFI_E_NOMEM;
    s->layout = layout;
    if (layout->nleaves >= 2) {
        s->low = layout->leaves[0].begin;
        s->high = layout->leaves[layout->nleaves - 1].begin;
        if (!make_parts(s)) {
            cg_search_free(s);
            return CFI_E_NOMEM;
        }
    }
    *result = s;
    return CFI_OK;
}

void cg_search_free(struct cg_search *s)
{
    if (!s)
        return;
    for (size_t k = 0; s->parts && k < s->nparts; k++) {
        free(s->parts[k].segments);
        free(s->parts[k].nodes);
        cg_intern_free(&s->parts[k].keys);
    }
    free(s->parts);
    free(s);
}

size_t cg_search_parts(const struct cg_search *s)
{
    return s->nparts;
}

size_t cg_search_nodes(const struct cg_search *s)
{
    return s->nnodes;
}

/* ------------------------------------------------------------------ */
/* Emitting a part                                                       */
/* ------------------------------------------------------------------ */

struct emit {
    struct cg_text *t;
    const struct part *part;
    bool wide;                /* 64-bit offsets */
    unsigned *uses;           /* per node: references to it */
    bool *row_used;           /* per target */
};

static void emit_ref(struct emit *e, uint32_t ref)
{
    if (ref & NODE_BIT) {
        cg_printf(e->t, "goto n%u;", (unsigned)(ref & ~NODE_BIT));
    } else if (ref == CG_NO_FDE) {
        e->row_used[CG_NO_FDE] = true;
        cg_puts(e->t, "goto nofde;");
    } else {
        e->row_used[ref] = true;
        cg_printf(e->t, "goto r%u;", (unsigned)ref - 1);
    }
}

static void emit_bound(struct emit *e, uint64_t bound)
{
    if (!e->wide)
        cg_printf(e->t, "0x%llxu", (unsigned long long)bound);
    else
        cg_emit_u64(e->t, bound);
}

static bool shared(const struct emit *e, uint32_t ref)
{
    return (ref & NODE_BIT) && e->uses[ref & ~NODE_BIT] > 1;
}

static void indent(struct emit *e, unsigned depth)
{
    cg_printf(e->t, "%*s", 4 * (depth + 1), "");
}

static void emit_inline(struct emit *e, uint32_t ref, unsigned depth);

/* The test of node `index`, then what follows it: a node used once is
 * emitted where it is used, so that the search falls through it; a
 * shared node is reached with goto. */
static void emit_node(struct emit *e, uint32_t index, unsigned depth)
{
    const struct node *n = &e->part->nodes[index];
    bool left_inline = (n->left & NODE_BIT) && !shared(e, n->left);
    bool right_inline = (n->right & NODE_BIT) && !shared(e, n->right);
    indent(e, depth);
    if (left_inline && right_inline) {
        cg_puts(e->t, "if (d < ");
        emit_bound(e, n->bound);
        cg_puts(e->t, ") {\n");
        emit_inline(e, n->left, depth + 1);
        indent(e, depth);
        cg_puts(e->t, "} else {\n");
        emit_inline(e, n->right, depth + 1);
        indent(e, depth);
        cg_puts(e->t, "}\n");
        return;
    }
    cg_puts(e->t, right_inline ? "if (d < " : "if (d >= ");
    emit_bound(e, n->bound);
    cg_puts(e->t, ") ");
    emit_ref(e, right_inline ? n->left : n->right);
    cg_puts(e->t, "\n");
    emit_inline(e, right_inline ? n->right : n->left, depth);
}

static void emit_inline(struct emit *e, uint32_t ref, unsigned depth)
{
    if (!(ref & NODE_BIT) || shared(e, ref)) {
        indent(e, depth);
        emit_ref(e, ref);
        cg_puts(e->t, "\n");
        return;
    }
    emit_node(e, ref & ~NODE_BIT, depth);
}

/* How many times each node is referenced: by a segment, by a node. */
static bool count_uses(struct emit *e)
{
    const struct part *part = e->part;
    e->uses = calloc(part->nnodes + 1, sizeof *e->uses);
    if (!e->uses)
        return false;
    for (size_t k = 0; k < part->nsegments; k++)
        if (part->segments[k].root & NODE_BIT)
            e->uses[part->segments[k].root & ~NODE_BIT]++;
    for (size_t k = 0; k < part->nnodes; k++) {
        const struct node *n = &part->nodes[k];
        if (n->left & NODE_BIT)
            e->uses[n->left & ~NODE_BIT]++;
        if (n->right & NODE_BIT)
            e->uses[n->right & ~NODE_BIT]++;
    }
    return true;
}

static void emit_tree(struct emit *e, size_t lo, size_t hi, unsigned depth)
{
    const struct segment *segments = e->part->segments;
    const uint64_t base = e->part->base;
    if (hi - lo == 1) {
        const struct segment *seg = &segments[lo];
        if (seg->root & NODE_BIT) {
            indent(e, depth);
            cg_puts(e->t, "d = p");
            if (seg->start != base) {
                cg_puts(e->t, " - ");
                emit_bound(e, seg->start - base);
            }
            cg_puts(e->t, ";\n");
        }
        emit_inline(e, seg->root, depth);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    indent(e, depth);
    cg_puts(e->t, "if (p < ");
    emit_bound(e, segments[mid].start - base);
    cg_puts(e->t, ") {\n");
    emit_tree(e, lo, mid, depth + 1);
    indent(e, depth);
    cg_puts(e->t, "} else {\n");
    emit_tree(e, mid, hi, depth + 1);
    indent(e, depth);
    cg_puts(e->t, "}\n");
}

static void emit_part_body(struct emit *e, size_t nrows)
{
    const struct part *part = e->part;
    emit_tree(e, 0, part->nsegments, 0);
    for (size_t k = 0; k < part->nnodes; k++)
        if (e->uses[k] > 1) {
            cg_printf(e->t, "n%zu:\n", k);
            emit_node(e, (uint32_t)k, 0);
        }
    for (size_t row = 1; row <= nrows; row++)
        if (e->row_used[row])
            cg_printf(e->t, "r%zu: return eh_row_%zu(pc, in, env, f);\n",
                      row - 1, row - 1);
    if (e->row_used[CG_NO_FDE])
        cg_puts(e->t, "nofde: return EH_ELF_E_NO_FDE;\n");
}

void cg_emit_part(struct cg_text *t, const struct cg_search *s, size_t index)
{
    const struct part *part = &s->parts[index];
    size_t nrows = s->layout->nrows;
    struct emit e = {t, part, part->end - part->base - 1 > UINT32_MAX,
                     NULL, calloc(nrows + 1, sizeof(bool))};
    const char *type = e.wide ? "uint64_t" : "uint32_t";
    if (!count_uses(&e) || !e.row_used) {
        t->failed = true;
    } else {
        /* The rows this part reaches, declared. */
        for (size_t k = 0; k < part->nnodes; k++) {
            const struct node *n = &part->nodes[k];
            e.row_used[n->left & NODE_BIT ? 0 : n->left] = true;
            e.row_used[n->right & NODE_BIT ? 0 : n->right] = true;
        }
        for (size_t k = 0; k < part->nsegments; k++)
            if (!(part->segments[k].root & NODE_BIT))
                e.row_used[part->segments[k].root] = true;
        cg_puts(t, "\n");
        for (size_t row = 1; row <= nrows; row++)
            if (e.row_used[row])
                cg_printf(t, "EH_HIDDEN int eh_row_%zu(uint64_t pc, eh_in_t in, "
                             "eh_env_t env, eh_out_t f);\n", row - 1);
        memset(e.row_used, 0, nrows + 1);
        cg_printf(t, "\nEH_HIDDEN int eh_part_%zu(uint64_t pc, eh_in_t in, "
                     "eh_env_t env, eh_out_t f);\n"
                     "EH_HIDDEN int eh_part_%zu(uint64_t pc, eh_in_t in, "
                     "eh_env_t env, eh_out_t f)\n{\n"
                     "    const %s p = (%s)(pc - ",
                  index, index, type, type);
        cg_emit_u64(t, part->base);
        cg_printf(t, ");\n    %s d = 0;\n    (void)p; (void)d;\n", type);
        emit_part_body(&e, nrows);
        cg_puts(t, "}\n");
    }
    free(e.uses);
    free(e.row_used);
}

/* ------------------------------------------------------------------ */
/* The dispatch over parts                                               */
/* ------------------------------------------------------------------ */

static void emit_dispatch_tree(struct cg_text *t, const struct cg_search *s,
                               size_t lo, size_t hi, unsigned depth)
{
    cg_printf(t, "%*s", 4 * (depth + 1), "");
    if (hi - lo == 1) {
        cg_printf(t, "return eh_part_%zu(pc, in, env, f);\n", lo);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    cg_puts(t, "if (pc < ");
    cg_emit_u64(t, s->parts[mid].base);
    cg_puts(t, ") {\n");
    emit_dispatch_tree(t, s, lo, mid, depth + 1);
    cg_printf(t, "%*s} else {\n", 4 * (depth + 1), "");
    emit_dispatch_tree(t, s, mid, hi, depth + 1);
    cg_printf(t, "%*s}\n", 4 * (depth + 1), "");
}

void cg_emit_dispatch(struct cg_text *t, const struct cg_search *s)
{
    cg_puts(t, "\n");
    for (size_t k = 0; k < s->nparts; k++)
        cg_printf(t, "EH_HIDDEN int eh_part_%zu(uint64_t pc, eh_in_t in, "
                     "eh_env_t env, eh_out_t f);\n", k);
    cg_puts(t, "\n/* The part of the lookup PC, or no FDE. */\n"
               "static int eh_search(uint64_t pc, eh_in_t in, eh_env_t env, "
               "eh_out_t f)\n{\n"
               "    (void)pc; (void)in; (void)env; (void)f;\n");
    if (s->nparts == 0) {
        cg_puts(t, "    return EH_ELF_E_NO_FDE;\n}\n");
        return;
    }
    cg_puts(t, "    if (pc < ");
    cg_emit_u64(t, s->low);
    cg_puts(t, " || pc >= ");
    cg_emit_u64(t, s->high);
    cg_puts(t, ")\n        return EH_ELF_E_NO_FDE;\n");
    emit_dispatch_tree(t, s, 0, s->nparts, 0);
    cg_puts(t, "}\n");
}
