/* SPDX-License-Identifier: MIT */
/* layout.c — from a file's IL to leaves: every address interval of the
 * file and what it reaches (a row body, an error, or "no FDE").
 *
 * The intervals come from the FDEs' boundaries: between two consecutive
 * boundaries the FDE that cfi_file_lookup finds (cfi.h step 2: .eh_frame
 * first, the greatest start when FDEs overlap) is the same, so it is
 * asked once per interval, and that FDE's ranges inside the interval
 * become leaves. Rows are interned by content (what the generated code
 * computes from them), so that equal rows share one body and adjacent
 * leaves with the same body merge, across FDE boundaries too. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool cg_rule_can_fail(enum sem_rule_kind kind)
{
    return kind == SEM_RULE_OFFSET || kind == SEM_RULE_EXPRESSION ||
           kind == SEM_RULE_VAL_EXPRESSION;
}

uint32_t cg_v1_return_column(uint64_t ra_column)
{
    return ra_column < CFI_NREGS ? (uint32_t)ra_column : CFI_REG_RIP;
}

/* Whether the code for `abi` evaluates the rule of `reg` at all (v1: rbx,
 * rbp and the return address column, whose rule gives rip). */
static bool rule_matters(const struct cfi_arch *arch, enum cg_abi abi,
                         uint32_t reg, enum sem_rule_kind kind,
                         uint64_t ra_column)
{
    if (kind == SEM_RULE_UNSPECIFIED)
        return false;
    if (abi == CG_ABI_V1)
        return reg == CFI_REG_RBX || reg == CFI_REG_RBP ||
               reg == cg_v1_return_column(ra_column);
    return reg < arch->nreported || cg_rule_can_fail(kind);
}

static void key_expr(struct cg_bytes *key, const struct sem_expr *expr)
{
    cg_bytes_u64(key, expr->len);
    cg_bytes_put(key, expr->bytes, expr->len);
}

/* Whether a rule's offset is a parameter of its shape (the parametric
 * layout: internal.h), not a constant in its code. */
bool cg_param_offset(const struct sem_rule *rule)
{
    return (rule->kind == SEM_RULE_OFFSET ||
            rule->kind == SEM_RULE_VAL_OFFSET) &&
           rule->offset >= INT32_MIN && rule->offset <= INT32_MAX;
}

/* The rules' key; `shape`: without the offsets that are parameters. */
static void key_rules(struct cg_bytes *key, const struct cfi_arch *arch,
                      enum cg_abi abi, const struct sem_row *row,
                      uint64_t ra_column, bool shape)
{
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_reg_rule *entry = &row->rules[i];
        const struct sem_rule *rule = &entry->rule;
        if (!rule_matters(arch, abi, entry->reg, rule->kind, ra_column))
            continue;
        uint8_t kind = (uint8_t)rule->kind;
        cg_bytes_u64(key, entry->reg);
        cg_bytes_put(key, &kind, 1);
        if (rule->kind == SEM_RULE_REGISTER)
            cg_bytes_u64(key, rule->reg);
        if ((rule->kind == SEM_RULE_OFFSET ||
             rule->kind == SEM_RULE_VAL_OFFSET) &&
            !(shape && cg_param_offset(rule)))
            cg_bytes_u64(key, (uint64_t)rule->offset);
        if (rule->kind == SEM_RULE_EXPRESSION ||
            rule->kind == SEM_RULE_VAL_EXPRESSION)
            key_expr(key, &rule->expr);
    }
    /* a return address column past the reported registers has its rule
     * computed again into the PC, with its offset as a constant */
    if (shape && ra_column >= arch->nreported)
        cg_bytes_u64(key, (uint64_t)sem_row_rule(row, (uint32_t)ra_column)
                              .offset);
}

static void key_cfa(struct cg_bytes *key, const struct sem_cfa *cfa)
{
    uint8_t kind = (uint8_t)cfa->kind;
    cg_bytes_put(key, &kind, 1);
    if (cfa->kind == SEM_CFA_RULE_REG_OFFSET) {
        cg_bytes_u64(key, cfa->reg);
        cg_bytes_u64(key, (uint64_t)cfa->offset);
    } else if (cfa->kind == SEM_CFA_RULE_EXPR) {
        key_expr(key, &cfa->expr);
    }
}

/* ------------------------------------------------------------------ */
/* Interning rows                                                        */
/* ------------------------------------------------------------------ */

static bool grow(void **array, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 64;
    void *bigger = realloc(*array, n * size);
    if (!bigger)
        return false;
    *array = bigger;
    *cap = n;
    return true;
}

struct builder {
    const struct sem_file_il *il;
    struct cg_layout *layout;
    size_t leaves_cap, rows_cap, rulesets_cap, heads_cap, shapes_cap,
        params_cap;
    struct cg_bytes key;
    bool nomem;
    const struct cfi_diag *internal; /* a translation's CFI_E_INTERNAL */
};

/* What an FDE's CIE adds to its rows. */
struct cie_traits {
    bool signal_frame;
    bool ra_b_key;
    uint32_t ra_column;
    const struct cfi_arch *arch; /* one file's: not a part of the key */
};

static void key_traits(struct builder *b, struct cie_traits traits)
{
    uint8_t signal = b->layout->abi == CG_ABI_FULL && traits.signal_frame;
    cg_bytes_put(&b->key, &signal, 1);
    cg_bytes_u64(&b->key, traits.ra_column);
    if (traits.arch->ra_state != CFI_NO_RA_STATE) {
        uint8_t b_key = traits.ra_b_key;
        cg_bytes_put(&b->key, &b_key, 1);
    }
}

/* A new rule set's shape and parameters (parametric layout); false
 * when out of memory. */
static bool add_shape(struct builder *b, struct cg_ruleset *set)
{
    struct cg_layout *layout = b->layout;
    const struct sem_row *row = set->row;
    b->key.len = 0;
    key_traits(b, (struct cie_traits){set->signal_frame, set->ra_b_key,
                                      set->ra_column, set->arch});
    key_rules(&b->key, set->arch, layout->abi, row, set->ra_column, true);
    bool added;
    long shape = b->key.failed ? -1 : cg_intern(&layout->shape_keys,
                                                b->key.data, b->key.len,
                                                &added);
    if (shape < 0)
        return false;
    if (added) {
        if (!grow((void **)&layout->shapes, &b->shapes_cap, layout->nshapes,
                  sizeof *layout->shapes))
            return false;
        layout->shapes[layout->nshapes++] = (uint32_t)(set - layout->rulesets);
    }
    set->shape = (uint32_t)shape;
    set->param = (uint32_t)layout->nparams;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_reg_rule *entry = &row->rules[i];
        if (!rule_matters(set->arch, layout->abi, entry->reg,
                          entry->rule.kind, set->ra_column) ||
            !cg_param_offset(&entry->rule))
            continue;
        if (!grow((void **)&layout->params, &b->params_cap, layout->nparams,
                  sizeof *layout->params))
            return false;
        layout->params[layout->nparams++] = (int32_t)entry->rule.offset;
    }
    return true;
}

static long intern_ruleset(struct builder *b, const struct sem_row *row,
                           struct cie_traits traits)
{
    struct cg_layout *layout = b->layout;
    b->key.len = 0;
    key_traits(b, traits);
    key_rules(&b->key, traits.arch, layout->abi, row, traits.ra_column,
              false);
    bool added;
    long index = b->key.failed ? -1 : cg_intern(&layout->ruleset_keys,
                                                b->key.data, b->key.len,
                                                &added);
    if (index >= 0 && added) {
        if (!grow((void **)&layout->rulesets, &b->rulesets_cap,
                  layout->nrulesets, sizeof *layout->rulesets))
            return -1;
        uint8_t signal = layout->abi == CG_ABI_FULL && traits.signal_frame;
        struct cg_ruleset *set = &layout->rulesets[layout->nrulesets++];
        *set = (struct cg_ruleset){row, signal, traits.ra_b_key,
                                   traits.ra_column, traits.arch, 0, 0};
        if (layout->parametric && !add_shape(b, set))
            return -1;
    }
    return index;
}

static long intern_head(struct builder *b, uint32_t ruleset, uint32_t reg)
{
    struct cg_layout *layout = b->layout;
    uint32_t key[2] = {ruleset, reg};
    bool added;
    long index = cg_intern(&layout->head_keys, key, sizeof key, &added);
    if (index >= 0 && added) {
        if (!grow((void **)&layout->heads, &b->heads_cap, layout->nheads,
                  sizeof *layout->heads))
            return -1;
        layout->heads[layout->nheads++] = (struct cg_head){ruleset, reg};
    }
    return index;
}

/* The target (1 + row index) of a row, or 0 when out of memory. */
static uint32_t intern_row(struct builder *b, const struct cg_row *row,
                           struct cie_traits traits)
{
    struct cg_layout *layout = b->layout;
    b->key.len = 0;
    if (row->kind == CG_ROW_FAIL) {
        cg_bytes_put(&b->key, "F", 1);
        cg_bytes_u64(&b->key, row->status);
        cg_bytes_u64(&b->key, row->offset);
    } else {
        cg_bytes_put(&b->key, "R", 1);
        key_traits(b, traits);
        key_cfa(&b->key, &row->row->cfa);
        key_rules(&b->key, traits.arch, layout->abi, row->row,
                  traits.ra_column, false);
    }
    bool added;
    long index = b->key.failed ? -1 : cg_intern(&layout->row_keys, b->key.data,
                                                b->key.len, &added);
    if (index < 0)
        return 0;
    if (added) {
        struct cg_row body = *row;
        if (body.kind == CG_ROW_RULES) {
            long ruleset = intern_ruleset(b, row->row, traits);
            if (ruleset < 0)
                return 0;
            body.ruleset = (uint32_t)ruleset;
            const struct sem_cfa *cfa = &row->row->cfa;
            uint32_t code = layout->parametric
                                ? layout->rulesets[ruleset].shape
                                : body.ruleset;
            long head = cfa->kind == SEM_CFA_RULE_REG_OFFSET
                            ? intern_head(b, code, cfa->reg) : 0;
            if (head < 0)
                return 0;
            body.head = (uint32_t)head;
        }
        if (!grow((void **)&layout->rows, &b->rows_cap, layout->nrows,
                  sizeof *layout->rows))
            return 0;
        layout->rows[layout->nrows++] = body;
    }
    return (uint32_t)index + 1;
}

/* ------------------------------------------------------------------ */
/* Leaves                                                                */
/* ------------------------------------------------------------------ */

/* Appends a leaf, merging it into the previous one when it reaches the
 * same body (then a segment start moves to the next leaf). */
static void add_leaf(struct builder *b, uint64_t begin, uint32_t target,
                     bool segment_start, bool *pending_start)
{
    struct cg_layout *layout = b->layout;
    segment_start = segment_start || *pending_start;
    *pending_start = false;
    if (layout->nleaves > 0 &&
        layout->leaves[layout->nleaves - 1].target == target) {
        *pending_start = segment_start && target != CG_NO_FDE;
        return;
    }
    if (!grow((void **)&layout->leaves, &b->leaves_cap, layout->nleaves,
              sizeof *layout->leaves)) {
        b->nomem = true;
        return;
    }
    layout->leaves[layout->nleaves++] = (struct cg_leaf){
        begin, target, segment_start && target != CG_NO_FDE};
}

/* The leaves of [x, y), all inside the FDE of index `owner`. */
static void owner_leaves(struct builder *b, size_t owner, uint64_t x,
                         uint64_t y, bool segment_start, bool *pending)
{
    const struct sem_file_il *il = b->il;
    const struct cfi_fde *fde = &il->file->fdes[owner];
    struct cie_traits traits = {fde->cie->signal_frame, fde->cie->ra_b_key,
                                (uint32_t)fde->cie->ra_column,
                                fde->cie->arch};
    if (il->status[owner] != CFI_OK) {
        /* Translation fails with these two classes for the input (sem.h);
         * the others (out of memory, internal) make the generation fail:
         * eh_elf.h has no code for them. */
        if (il->status[owner] == CFI_E_INTERNAL) {
            b->internal = &il->diags[owner];
            return;
        }
        if (il->status[owner] != CFI_E_MALFORMED &&
            il->status[owner] != CFI_E_UNSUPPORTED) {
            b->nomem = true;
            return;
        }
        struct cg_row fail = {CG_ROW_FAIL, NULL, 0, 0, il->status[owner],
                              il->diags[owner].offset};
        uint32_t target = intern_row(b, &fail, traits);
        b->nomem |= target == 0;
        add_leaf(b, x, target, segment_start, pending);
        return;
    }
    const struct sem_fde_il *fde_il = &il->fdes[owner];
    const struct sem_range *range = sem_fde_il_find(fde_il, x);
    const struct sem_range *end = fde_il->ranges + fde_il->nranges;
    for (; range && range < end && range->begin < y; range++) {
        struct cg_row row = {CG_ROW_RULES, range->row, 0, 0, CFI_OK, 0};
        uint32_t target = intern_row(b, &row, traits);
        b->nomem |= target == 0;
        add_leaf(b, range->begin > x ? range->begin : x, target,
                 segment_start, pending);
        segment_start = false;
    }
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every FDE boundary, sorted, without repeats. */
static uint64_t *boundaries(const struct cfi_file *file, size_t *count)
{
    uint64_t *points = malloc((2 * file->nfdes + 1) * sizeof *points);
    if (!points)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < file->nfdes; i++) {
        if (file->fdes[i].pc_begin >= file->fdes[i].pc_end)
            continue;
        points[n++] = file->fdes[i].pc_begin;
        points[n++] = file->fdes[i].pc_end;
    }
    if (n > 0)
        qsort(points, n, sizeof *points, compare_u64);
    size_t unique = 0;
    for (size_t i = 0; i < n; i++)
        if (unique == 0 || points[unique - 1] != points[i])
            points[unique++] = points[i];
    *count = unique;
    return points;
}

static void build_leaves(struct builder *b, const uint64_t *points,
                         size_t npoints)
{
    const struct cfi_file *file = b->il->file;
    long previous = -1;
    bool pending = false;
    for (size_t i = 0; i + 1 < npoints && !b->nomem && !b->internal; i++) {
        const struct cfi_fde *fde = cfi_file_lookup(file, points[i]);
        long owner = fde ? (long)(fde - file->fdes) : -1;
        if (owner < 0)
            add_leaf(b, points[i], CG_NO_FDE, false, &pending);
        else
            owner_leaves(b, (size_t)owner, points[i], points[i + 1],
                         owner != previous, &pending);
        previous = owner;
    }
    if (npoints > 0)
        add_leaf(b, points[npoints - 1], CG_NO_FDE, false, &pending);
}

enum cfi_status cg_layout_build(const struct sem_file_il *il, enum cg_abi abi,
                                struct cg_layout *layout,
                                struct cfi_diag *diag)
{
    /* internal.h says why only other machines than x86-64's */
    *layout = (struct cg_layout){
        .abi = abi, .arch = il->file->arch,
        .parametric = abi == CG_ABI_FULL &&
                      il->file->arch != &cfi_arch_x86_64};
    struct builder b = {.il = il, .layout = layout};
    size_t npoints = 0;
    uint64_t *points = boundaries(il->file, &npoints);
    if (!points)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    build_leaves(&b, points, npoints);
    free(points);
    free(b.key.data);
    if (b.internal) {
        cg_layout_free(layout);
        return cfi_fail(diag, CFI_E_INTERNAL, b.internal->offset,
                        b.internal->message);
    }
    if (b.nomem) {
        cg_layout_free(layout);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    return CFI_OK;
}

void cg_layout_free(struct cg_layout *layout)
{
    free(layout->leaves);
    free(layout->rows);
    free(layout->rulesets);
    free(layout->heads);
    free(layout->shapes);
    free(layout->params);
    cg_intern_free(&layout->shape_keys);
    cg_intern_free(&layout->head_keys);
    cg_intern_free(&layout->row_keys);
    cg_intern_free(&layout->ruleset_keys);
    *layout = (struct cg_layout){0};
}
