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
 * beginning). Leaf 0 starts at low, so there is always one. The target
 * reaches its row body through a switch: gcc makes it a table of
 * 32-bit offsets, position-independent, with no relocations. */
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
    size_t count = s->nleaves > s->nblocks + 1 ? s->nleaves : s->nblocks + 1;
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

/* eh_goto_row: a target to its row body. */
static void emit_row_switch(struct cg_text *t, const struct cg_layout *layout)
{
    for (size_t k = 0; k < layout->nrows; k++)
        cg_printf(t, "EH_HIDDEN int eh_row_%zu(uint64_t pc, eh_in_t in, "
                     "eh_env_t env, eh_out_t f);\n", k);
    cg_puts(t, "\nstatic int eh_goto_row(uint32_t target, uint64_t pc, "
               "eh_in_t in, eh_env_t env, eh_out_t f)\n{\n"
               "    switch (target) {\n");
    for (size_t k = 0; k < layout->nrows; k++)
        cg_printf(t, "    case %zu: return eh_row_%zu(pc, in, env, f);\n",
                  k + 1, k);
    cg_puts(t, "    default: return EH_ELF_E_NO_FDE;\n    }\n}\n");
}

static void emit_search(struct cg_text *t, const struct table_shape *s)
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
               "    return eh_goto_row(eh_target[lo - 1], pc, in, env, f);\n"
               "}\n");
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
    emit_search(t, &s);
    return !t->failed;
}
