/* table.c — the lookup as data (cfisem compile --layout table): the
 * search from a lookup PC to its leaf as sorted start offsets and a
 * binary search over them, beside the same compiled row bodies as the
 * if/else layout (search.c). It is what ORC and .eh_frame_hdr do: code
 * grows with the number of distinct rows, data with the number of
 * leaves.
 *
 * Generated data, for the leaves [0, M) below the last one (the last
 * leaf is "no FDE" above every FDE, tested by the range check):
 *   blocked form, when the leaves span less than 4 GiB and 64 KiB blocks
 *   are not many more than the leaves:
 *     eh_block[b]   (uint32) the first leaf starting at or after
 *                   low + b * 64 KiB, for b in [0, blocks]; the last is M;
 *     eh_start[i]   (uint16) leaf i's start minus low, modulo 64 KiB;
 *   flat form, otherwise:
 *     eh_start[i]   (uint64) leaf i's start minus low;
 *   eh_target[i]    (uint8 up to 254 rows, uint16 up to 65,534, else
 *                   uint32) leaf i's target: CG_NO_FDE, or 1 + a row's
 *                   index.
 * The search takes the block's leaves and finds the last whose start is
 * at or below the PC's offset; when there is none, the answer is the
 * leaf before the block (it started earlier and covers the block's
 * beginning). Leaf 0 starts at low, so there is always one.
 *
 * v1 ABI: the target reaches its row body through a switch (gcc makes it
 * a table of 32-bit offsets, position-independent, with no relocations).
 * Full ABI: the rows and rule sets are data too, as ORC's entries are
 * (what an if/else search saves in code, compiled rows would otherwise
 * spend again): a row whose CFA is a register plus an offset is
 * eh_row_reg/eh_row_offset/eh_row_set; a rule set whose rules are offset,
 * val_offset and register rules of registers 0-16, undefined and
 * same_value (cg_ruleset_data: nearly all) is eh_set and its slice of
 * eh_slot, all applied by eh_apply_set and eh_apply_row, which do what
 * the compiled rows and rule sets do (the masks, then every rule). The
 * other rows (a CFA expression, a failed FDE) and rule sets (DWARF
 * expressions, another return address column, registers from 17) stay
 * functions, reached through switches over just them. Offsets take the
 * narrowest signed type that holds them all. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BLOCK_BITS 16

struct table_shape {
    uint64_t low, high;   /* [low, high): the leaves searched */
    size_t nleaves;       /* M */
    bool blocked;
    uint64_t nblocks;
    const char *target_type;
};

static struct table_shape shape_of(const struct cg_layout *layout)
{
    struct table_shape s = {0};
    if (layout->nleaves < 2)
        return s;
    s.nleaves = layout->nleaves - 1;
    s.low = layout->leaves[0].begin;
    s.high = layout->leaves[layout->nleaves - 1].begin;
    uint64_t span = s.high - s.low;
    s.nblocks = ((span - 1) >> BLOCK_BITS) + 1;
    s.blocked = span <= UINT32_MAX && s.nblocks <= 4 * (uint64_t)s.nleaves + 64;
    s.target_type = layout->nrows + 1 <= UINT8_MAX    ? "uint8_t"
                    : layout->nrows + 1 <= UINT16_MAX ? "uint16_t"
                                                      : "uint32_t";
    return s;
}

static void emit_list_u64(struct cg_text *t, const char *type, const char *name,
                          const uint64_t *values, size_t count)
{
    cg_printf(t, "static const %s %s[%zu] = {", type, name, count);
    for (size_t i = 0; i < count; i++)
        cg_printf(t, "%s%llu,", i % 12 ? " " : "\n    ",
                  (unsigned long long)values[i]);
    cg_puts(t, "\n};\n");
}

/* The arrays; false when out of memory. */
static bool emit_arrays(struct cg_text *t, const struct cg_layout *layout,
                        const struct table_shape *s)
{
    /* The block index is written only in the blocked form, whose block
     * count shape_of bounded by the leaves: never size by the span. */
    size_t count = s->nleaves;
    if (s->blocked && s->nblocks + 1 > count)
        count = (size_t)s->nblocks + 1;
    uint64_t *values = calloc(count, sizeof *values);
    if (!values)
        return false;
    for (size_t i = 0; i < s->nleaves; i++)
        values[i] = layout->leaves[i].begin - s->low;
    if (s->blocked) {
        for (size_t i = 0; i < s->nleaves; i++)
            values[i] &= (1u << BLOCK_BITS) - 1;
        emit_list_u64(t, "uint16_t", "eh_start", values, s->nleaves);
        size_t leaf = 0;
        for (uint64_t b = 0; b <= s->nblocks; b++) {
            uint64_t at = b << BLOCK_BITS;
            while (leaf < s->nleaves &&
                   layout->leaves[leaf].begin - s->low < at)
                leaf++;
            values[b] = leaf;
        }
        emit_list_u64(t, "uint32_t", "eh_block", values, s->nblocks + 1);
    } else {
        emit_list_u64(t, "uint64_t", "eh_start", values, s->nleaves);
    }
    for (size_t i = 0; i < s->nleaves; i++)
        values[i] = layout->leaves[i].target;
    emit_list_u64(t, s->target_type, "eh_target", values, s->nleaves);
    free(values);
    return true;
}

/* eh_goto_row: a target to its row body (the rows that are code). */
static void emit_row_switch(struct cg_text *t, const struct cg_layout *layout)
{
    for (size_t k = 0; k < layout->nrows; k++)
        if (!cg_row_is_data(layout, k))
            cg_printf(t, "EH_HIDDEN int eh_row_%zu(uint64_t pc, eh_in_t in, "
                         "eh_env_t env, eh_out_t f);\n", k);
    cg_puts(t, "\nstatic int eh_goto_row(uint32_t target, uint64_t pc, "
               "eh_in_t in, eh_env_t env, eh_out_t f)\n{\n"
               "    (void)pc; (void)in; (void)env; (void)f;\n"
               "    switch (target) {\n");
    for (size_t k = 0; k < layout->nrows; k++)
        if (!cg_row_is_data(layout, k))
            cg_printf(t, "    case %zu: return eh_row_%zu(pc, in, env, f);\n",
                      k + 1, k);
    cg_puts(t, "    default: return EH_ELF_E_NO_FDE;\n    }\n}\n");
}

/* ------------------------------------------------------------------ */
/* Rows and rule sets as data (the full ABI)                             */
/* ------------------------------------------------------------------ */

/* The rows: eh_row_reg[k] the CFA register, EH_ROW_CODE for a row that
 * is a function; eh_row_offset[k] the CFA offset; eh_row_set[k] the rule
 * set. The rule sets: eh_set[k], the masks and the slice of eh_slot
 * their rules take (loads, then vals, then regs: struct cg_set_data), or
 * EH_SET_CODE for a rule set that is a function. */
static const char data_types[] =
    "\n#define EH_ROW_CODE 0xffu\n"
    "#define EH_SET_SIGNAL 1u\n"
    "#define EH_SET_CODE 2u\n"
    "\nstruct eh_set {\n"
    "    uint32_t known, undefined, same;\n"
    "    uint32_t first;               /* its first slot */\n"
    "    uint8_t loads, vals, regs, flags;\n"
    "};\n";

/* The narrowest of int8_t, int16_t, int32_t, int64_t that holds every
 * value in [lo, hi]. */
static const char *signed_type(int64_t lo, int64_t hi)
{
    if (lo >= INT8_MIN && hi <= INT8_MAX)
        return "int8_t";
    if (lo >= INT16_MIN && hi <= INT16_MAX)
        return "int16_t";
    if (lo >= INT32_MIN && hi <= INT32_MAX)
        return "int32_t";
    return "int64_t";
}

static void emit_row_arrays(struct cg_text *t, const struct cg_layout *layout)
{
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < layout->nrows; k++)
        if (cg_row_is_data(layout, k)) {
            int64_t off = layout->rows[k].row->cfa.offset;
            lo = off < lo ? off : lo;
            hi = off > hi ? off : hi;
        }
    const char *set_type = layout->nrulesets <= UINT8_MAX    ? "uint8_t"
                           : layout->nrulesets <= UINT16_MAX ? "uint16_t"
                                                             : "uint32_t";
    cg_printf(t, "\nstatic const uint8_t eh_row_reg[%zu] = {",
              layout->nrows ? layout->nrows : 1);
    for (size_t k = 0; k < layout->nrows; k++)
        cg_printf(t, "%s%u,", k % 16 ? " " : "\n    ",
                  cg_row_is_data(layout, k) ? layout->rows[k].row->cfa.reg
                                            : 0xffu);
    cg_printf(t, "\n};\nstatic const %s eh_row_offset[%zu] = {",
              signed_type(lo, hi), layout->nrows ? layout->nrows : 1);
    for (size_t k = 0; k < layout->nrows; k++)
        cg_printf(t, "%s%lld,", k % 8 ? " " : "\n    ",
                  cg_row_is_data(layout, k)
                      ? (long long)layout->rows[k].row->cfa.offset : 0LL);
    cg_printf(t, "\n};\nstatic const %s eh_row_set[%zu] = {", set_type,
              layout->nrows ? layout->nrows : 1);
    for (size_t k = 0; k < layout->nrows; k++)
        cg_printf(t, "%s%u,", k % 16 ? " " : "\n    ",
                  cg_row_is_data(layout, k) ? layout->rows[k].ruleset : 0u);
    cg_puts(t, "\n};\n");
}

static void emit_set_arrays(struct cg_text *t, const struct cg_layout *layout)
{
    struct cg_set_data d;
    size_t slots = 0;
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < layout->nrulesets; k++)
        for (unsigned i = 0; cg_ruleset_data(&layout->rulesets[k], &d) &&
                             i < d.loads + d.vals; i++) {
            lo = d.offset[i] < lo ? d.offset[i] : lo;
            hi = d.offset[i] > hi ? d.offset[i] : hi;
        }
    /* loads and vals: offset from the CFA; regs: reg := the callee's
     * from */
    cg_printf(t, "\nstruct eh_slot {\n    %s offset;\n    uint8_t reg, from;\n"
                 "};\n", signed_type(lo, hi));
    cg_printf(t, "\nstatic const struct eh_set eh_set[%zu] = {",
              layout->nrulesets ? layout->nrulesets : 1);
    for (size_t k = 0; k < layout->nrulesets; k++) {
        if (!cg_ruleset_data(&layout->rulesets[k], &d)) {
            cg_puts(t, "\n    {0, 0, 0, 0, 0, 0, 0, EH_SET_CODE},");
            continue;
        }
        cg_printf(t, "\n    {0x%xu, 0x%xu, 0x%xu, %zu, %u, %u, %u, %u},",
                  d.known, d.undefined, d.same, slots, d.loads, d.vals,
                  d.regs, d.signal_frame ? 1u : 0u);
        slots += d.loads + d.vals + d.regs;
    }
    cg_printf(t, "\n};\nstatic const struct eh_slot eh_slot[%zu] = {",
              slots ? slots : 1);
    for (size_t k = 0; k < layout->nrulesets; k++) {
        if (!cg_ruleset_data(&layout->rulesets[k], &d))
            continue;
        for (unsigned i = 0; i < d.loads + d.vals + d.regs; i++)
            cg_printf(t, "\n    {%lld, %u, %u},", (long long)d.offset[i],
                      d.reg[i], d.from[i]);
    }
    cg_puts(t, slots ? "\n};\n" : "\n    {0, 0, 0},\n};\n");
}

/* eh_goto_rules: the rule sets that are functions. */
static void emit_rules_switch(struct cg_text *t, const struct cg_layout *layout)
{
    struct cg_set_data d;
    for (size_t k = 0; k < layout->nrulesets; k++)
        if (!cg_ruleset_data(&layout->rulesets[k], &d))
            cg_printf(t, "EH_HIDDEN int eh_rules_%zu(uint64_t cfa, eh_in_t in, "
                         "eh_env_t env, eh_out_t f);\n", k);
    cg_puts(t, "\nstatic int eh_goto_rules(uint32_t set, uint64_t cfa, "
               "eh_in_t in, eh_env_t env, eh_out_t f)\n{\n"
               "    (void)cfa; (void)in; (void)env; (void)f;\n"
               "    switch (set) {\n");
    for (size_t k = 0; k < layout->nrulesets; k++)
        if (!cg_ruleset_data(&layout->rulesets[k], &d))
            cg_printf(t, "    case %zu: return eh_rules_%zu(cfa, in, env, f);\n",
                      k, k);
    cg_puts(t, "    default: return EH_ELF_E_MALFORMED;\n    }\n}\n");
}

/* What a rule set's function does (rows.c, emit_rules_full), read from
 * the tables: the masks, the CFA and the copies of the registers that
 * keep their value (those of rbx rbp r12-r15 always: an unspecified
 * value where the mask says otherwise), then the loads (each through the
 * window, else eh_load: the first that fails is the answer), the vals
 * and the register rules. */
static const char apply_code[] =
    "\nint eh_apply_set(uint32_t k, uint64_t cfa, eh_in_t in, eh_env_t env,\n"
    "                 eh_out_t f)\n{\n"
    "    const struct eh_set *set = &eh_set[k];\n"
    "    if (set->flags & EH_SET_CODE)\n"
    "        return eh_goto_rules(k, cfa, in, env, f);\n"
    "    f->cfa = cfa;\n"
    "    f->signal_frame = set->flags & EH_SET_SIGNAL;\n"
    "    uint32_t known = set->known | (in->known & set->same);\n"
    "    uint32_t undefined = set->undefined | (in->undefined & set->same);\n"
    "    f->caller.value[7] = cfa;\n"
    "    f->caller.value[3] = in->value[3];\n"
    "    f->caller.value[6] = in->value[6];\n"
    "    f->caller.value[12] = in->value[12];\n"
    "    f->caller.value[13] = in->value[13];\n"
    "    f->caller.value[14] = in->value[14];\n"
    "    f->caller.value[15] = in->value[15];\n"
    "    for (uint32_t other = set->same & ~0xf048u, r = 0; other; r++, other >>= 1)\n"
    "        if (other & 1u)\n"
    "            f->caller.value[r] = in->value[r];\n"
    "    const struct eh_slot *slot = &eh_slot[set->first];\n"
    "    for (unsigned i = 0; i < set->loads; i++, slot++) {\n"
    "        uint64_t addr = cfa + (uint64_t)(int64_t)slot->offset;\n"
    "        if (eh_direct(env, addr))\n"
    "            f->caller.value[slot->reg] = eh_word(addr);\n"
    "        else if (eh_load(env, addr, 8, &f->caller.value[slot->reg]))\n"
    "            return EH_ELF_E_MEMORY;\n"
    "    }\n"
    "    for (unsigned i = 0; i < set->vals; i++, slot++)\n"
    "        f->caller.value[slot->reg] = cfa + (uint64_t)(int64_t)slot->offset;\n"
    "    for (unsigned i = 0; i < set->regs; i++, slot++) {\n"
    "        f->caller.value[slot->reg] = in->value[slot->from];\n"
    "        known |= (in->known >> slot->from & 1u) << slot->reg;\n"
    "        undefined |= (in->undefined >> slot->from & 1u) << slot->reg;\n"
    "    }\n"
    "    f->caller.known = known;\n"
    "    f->caller.undefined = undefined;\n"
    "    return EH_ELF_OK;\n}\n"
    "\n/* A row: a CFA register plus an offset, then its rule set; or a\n"
    " * function. */\n"
    "static int eh_apply_row(uint32_t target, uint64_t pc, eh_in_t in,\n"
    "                        eh_env_t env, eh_out_t f)\n{\n"
    "    if (target == 0)\n"
    "        return EH_ELF_E_NO_FDE;\n"
    "    const uint32_t k = target - 1;\n"
    "    const unsigned reg = eh_row_reg[k];\n"
    "    if (reg == EH_ROW_CODE)\n"
    "        return eh_goto_row(target, pc, in, env, f);\n"
    "    uint64_t cfa = 0;\n"
    "    int e = eh_reg(in, env, f, reg, &cfa);\n"
    "    if (e != EH_ELF_OK)\n"
    "        return e;\n"
    "    return eh_apply_set(eh_row_set[k],\n"
    "                        cfa + (uint64_t)(int64_t)eh_row_offset[k], in, env, f);\n}\n";

static void emit_search(struct cg_text *t, const struct table_shape *s,
                        bool rows_as_data)
{
    cg_puts(t, "\n/* The leaf of the lookup PC (compile/table.c), or no "
               "FDE. */\nstatic int eh_search(uint64_t pc, eh_in_t in, "
               "eh_env_t env, eh_out_t f)\n{\n    if (pc < ");
    cg_emit_u64(t, s->low);
    cg_puts(t, " || pc >= ");
    cg_emit_u64(t, s->high);
    cg_puts(t, ")\n        return EH_ELF_E_NO_FDE;\n    const uint64_t off = pc - ");
    cg_emit_u64(t, s->low);
    cg_puts(t, ";\n");
    if (s->blocked)
        cg_printf(t, "    const uint64_t key = off & 0x%xu;\n"
                     "    uint32_t lo = eh_block[off >> %d];\n"
                     "    uint32_t hi = eh_block[(off >> %d) + 1];\n",
                  (1u << BLOCK_BITS) - 1, BLOCK_BITS, BLOCK_BITS);
    else
        cg_printf(t, "    const uint64_t key = off;\n"
                     "    uint32_t lo = 0, hi = %zu;\n", s->nleaves);
    cg_puts(t, "    while (lo < hi) {\n"
               "        const uint32_t mid = lo + (hi - lo) / 2;\n"
               "        if (eh_start[mid] <= key)\n"
               "            lo = mid + 1;\n"
               "        else\n"
               "            hi = mid;\n"
               "    }\n"
               "    return ");
    cg_puts(t, rows_as_data ? "eh_apply_row" : "eh_goto_row");
    cg_puts(t, "(eh_target[lo - 1], pc, in, env, f);\n}\n");
}

bool cg_emit_table_search(struct cg_text *t, const struct cg_layout *layout)
{
    struct table_shape s = shape_of(layout);
    cg_puts(t, "\n");
    if (s.nleaves == 0) {
        cg_puts(t, "static int eh_search(uint64_t pc, eh_in_t in, "
                   "eh_env_t env, eh_out_t f)\n{\n"
                   "    (void)pc; (void)in; (void)env; (void)f;\n"
                   "    return EH_ELF_E_NO_FDE;\n}\n");
        return !t->failed;
    }
    if (!emit_arrays(t, layout, &s))
        return false;
    emit_row_switch(t, layout);
    if (layout->rows_as_data) {
        cg_puts(t, data_types);
        emit_row_arrays(t, layout);
        emit_set_arrays(t, layout);
        emit_rules_switch(t, layout);
        cg_puts(t, apply_code);
    }
    emit_search(t, &s, layout->rows_as_data);
    return !t->failed;
}
