/* SPDX-License-Identifier: MIT */
/* table.c — the lookup as data (cfisem compile --layout table): the
 * search from a lookup PC to its leaf as sorted start offsets and a
 * search over them, beside the same compiled row bodies as the if/else
 * layout (search.c). It is what ORC and .eh_frame_hdr do: code grows
 * with the number of distinct rows, data with the number of leaves.
 *
 * Generated data, for the leaves [0, M) below the last one (the last
 * leaf is "no FDE" above every FDE, tested by the range check):
 *   blocked form, when the leaves span less than 4 GiB and 64 KiB blocks
 *   are not many more than the leaves:
 *     eh_block[b]   (uint32) the first leaf starting at or after
 *                   low + b * 64 KiB, for b in [0, blocks]; the last is M;
 *     eh_sub[g]     (uint16) the first leaf starting at or after
 *                   low + g * 2^sub_bits, minus its block's eh_block,
 *                   for every sub-block g of the span and one more
 *                   (sub-blocks of 64 bytes, or larger ones as needed
 *                   to keep them under half the leaves, plus 256:
 *                   128 bytes for libc and libstdc++);
 *     eh_start[i]   (uint16) leaf i's start minus low, modulo 64 KiB,
 *                   and SCAN zeros after the last;
 *   flat form, otherwise:
 *     eh_start[i]   (uint64) leaf i's start minus low;
 *   eh_target[i]    (uint8 up to 254 rows, uint16 up to 65,534, else
 *                   uint32) leaf i's target: CG_NO_FDE, or 1 + a row's
 *                   index.
 * The search finds the last leaf whose start is at or below the PC's
 * offset. Blocked, it takes the sub-block's leaves, a handful, and counts
 * those at or below the offset with SSE2 compares, without a branch: one
 * vector of 8 starts when no sub-block holds more than 8 leaves, else
 * two, and binary search steps first only in a file where a sub-block
 * holds more than SCAN (each costs instructions on every frame, and a
 * walk is bound by the instructions of its frames); when there is
 * none, the answer is the leaf before the sub-block (it started earlier
 * and covers the sub-block's beginning). Leaf 0 starts at low, so there
 * is always one. Flat, a binary search.
 *
 * The target reaches its row body through a balanced if/else tree on
 * the target (eh_goto_row; conditional branches, each predicted on its
 * own, were as fast on real stacks as a switch's one indirect jump, and
 * need no jump table), and the row body is the tree layout's: its CFA register, offset
 * and rules are constants in code. That is for speed on real stacks: a
 * walk's next frame depends on this one's CFA and return address, and
 * when they came from data (the row's offset, its slots' offsets, loaded
 * after the search's loads) every frame waited for a chain of dependent
 * loads; through branches the processor predicts the row and runs its
 * code ahead, the loads only confirming the prediction. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BLOCK_BITS 16
/* The sub-blocks of a block: 2^sub_bits bytes each, the smallest from
 * 2^SUB_BITS_MIN up whose number is at most half the leaves' plus 256
 * (about a byte a leaf): 128 bytes for libc and libstdc++, whose
 * sub-blocks then hold 8 leaves or fewer for about half their leaves
 * (at 256 bytes, a fifth of the leaves' number, the search cost 4 to 8%
 * more a frame on stacks through them, for 8 KB less in libc). */
#define SUB_BITS_MIN 6
/* The leaves the search compares with the key at once (two SSE2
 * vectors of 8 starts). */
#define SCAN 16

struct table_shape {
    uint64_t low, high;   /* [low, high): the leaves searched */
    size_t nleaves;       /* M */
    bool blocked;
    uint64_t nblocks;
    unsigned sub_bits;
    size_t most_in_sub;   /* blocked: the most leaves starting in one
                             sub-block */
    const char *target_type;
};

/* The most leaves that start in one sub-block of 2^sub_bits bytes. */
static size_t most_in_sub_block(const struct cg_layout *layout,
                                const struct table_shape *s)
{
    size_t most = 0, run = 0;
    uint64_t current = 0;
    for (size_t i = 0; i < s->nleaves; i++) {
        uint64_t g = (layout->leaves[i].begin - s->low) >> s->sub_bits;
        run = i > 0 && g == current ? run + 1 : 1;
        current = g;
        if (run > most)
            most = run;
    }
    return most;
}

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
    s.sub_bits = SUB_BITS_MIN;
    while (s.sub_bits < BLOCK_BITS &&
           ((span - 1) >> s.sub_bits) + 2 > s.nleaves / 2 + 256)
        s.sub_bits++;
    if (s.blocked)
        s.most_in_sub = most_in_sub_block(layout, &s);
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

/* eh_sub[g], for each sub-block g of the span and one past them:
 * the first leaf starting at or after low + g * 2^sub_bits, minus the
 * first of its block (eh_block). A block's leaves start at distinct
 * addresses, so fewer than 65,536 start before its last sub-block. */
static bool emit_sub_blocks(struct cg_text *t, const struct cg_layout *layout,
                            const struct table_shape *s)
{
    size_t count = (size_t)((s->high - s->low - 1) >> s->sub_bits) + 2;
    uint64_t *values = calloc(count, sizeof *values);
    if (!values)
        return false;
    size_t leaf = 0, first = 0;
    for (size_t g = 0; g < count; g++) {
        uint64_t at = (uint64_t)g << s->sub_bits;
        while (leaf < s->nleaves && layout->leaves[leaf].begin - s->low < at)
            leaf++;
        if ((at & ((1u << BLOCK_BITS) - 1)) == 0)
            first = leaf;
        values[g] = leaf - first;
    }
    emit_list_u64(t, "uint16_t", "eh_sub", values, count);
    free(values);
    return true;
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
    uint64_t *values = calloc(count + SCAN, sizeof *values);
    if (!values)
        return false;
    for (size_t i = 0; i < s->nleaves; i++)
        values[i] = layout->leaves[i].begin - s->low;
    if (s->blocked) {
        for (size_t i = 0; i < s->nleaves; i++)
            values[i] &= (1u << BLOCK_BITS) - 1;
        /* SCAN entries more, read (and not counted) by the scan */
        emit_list_u64(t, "uint16_t", "eh_start", values, s->nleaves + SCAN);
        size_t leaf = 0;
        for (uint64_t b = 0; b <= s->nblocks; b++) {
            uint64_t at = b << BLOCK_BITS;
            while (leaf < s->nleaves &&
                   layout->leaves[leaf].begin - s->low < at)
                leaf++;
            values[b] = leaf;
        }
        emit_list_u64(t, "uint32_t", "eh_block", values, s->nblocks + 1);
        if (!emit_sub_blocks(t, layout, s))
            return false;
    } else {
        emit_list_u64(t, "uint64_t", "eh_start", values, s->nleaves);
    }
    for (size_t i = 0; i < s->nleaves; i++)
        values[i] = layout->leaves[i].target;
    emit_list_u64(t, s->target_type, "eh_target", values, s->nleaves);
    free(values);
    return true;
}

/* The targets [lo, hi) as a balanced if/else tree on `target`, at
 * indentation `depth`. */
static void emit_target_tree(struct cg_text *t, size_t lo, size_t hi,
                             unsigned depth)
{
    if (hi - lo == 1) {
        if (lo == 0)
            cg_printf(t, "%*sreturn EH_ELF_E_NO_FDE;\n", (int)depth * 4, "");
        else
            cg_printf(t, "%*sreturn eh_row_%zu(pc, in, env, f);\n",
                      (int)depth * 4, "", lo - 1);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    cg_printf(t, "%*sif (target < %zuu) {\n", (int)depth * 4, "", mid);
    emit_target_tree(t, lo, mid, depth + 1);
    cg_printf(t, "%*s} else {\n", (int)depth * 4, "");
    emit_target_tree(t, mid, hi, depth + 1);
    cg_printf(t, "%*s}\n", (int)depth * 4, "");
}

/* eh_goto_row: a target to its row body, through conditional branches
 * (each predicted on its own, where one indirect jump would serve every
 * row). */
static void emit_row_branches(struct cg_text *t, const struct cg_layout *layout)
{
    for (size_t k = 0; k < layout->nrows; k++)
        cg_printf(t, "EH_HIDDEN int eh_row_%zu(uint64_t pc, eh_in_t in, "
                     "eh_env_t env, eh_out_t f);\n", k);
    cg_puts(t, "\nstatic int eh_goto_row(uint32_t target, uint64_t pc, "
               "eh_in_t in, eh_env_t env, eh_out_t f)\n{\n"
               "    (void)pc; (void)in; (void)env; (void)f;\n");
    emit_target_tree(t, 0, layout->nrows + 1, 1);
    cg_puts(t, "}\n");
}

/* The blocked form's last step, without a branch: the leaves of [lo,
 * hi) (at most SCAN) that start at or before the key are a prefix of
 * them (they are sorted), found in two vectors of 8 starts: a <= key is
 * a - key == 0 in unsigned saturated arithmetic, two bits a lane in the
 * mask, whose bits from lane hi - lo on are cleared; the prefix ends at
 * the mask's first clear bit. */
static const char scan_code[] =
    "    const __m128i k = _mm_set1_epi16((short)key);\n"
    "    const __m128i zero = _mm_setzero_si128();\n"
    "    const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)"
    "&eh_start[lo]);\n"
    "    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)"
    "&eh_start[lo + 8]);\n"
    "    const uint64_t below =\n"
    "        ((uint64_t)(uint32_t)_mm_movemask_epi8(\n"
    "             _mm_cmpeq_epi16(_mm_subs_epu16(a, k), zero)) |\n"
    "         (uint64_t)(uint32_t)_mm_movemask_epi8(\n"
    "             _mm_cmpeq_epi16(_mm_subs_epu16(b, k), zero)) << 16) &\n"
    "        ((UINT64_C(1) << 2 * (hi - lo)) - 1);\n"
    "    lo += (uint32_t)__builtin_ctzll(~below) / 2;\n";

/* The same with one vector, when no sub-block holds more than 8
 * leaves. */
static const char scan_code_8[] =
    "    const __m128i k = _mm_set1_epi16((short)key);\n"
    "    const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)"
    "&eh_start[lo]);\n"
    "    const uint32_t below =\n"
    "        (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(\n"
    "            _mm_subs_epu16(a, k), _mm_setzero_si128())) &\n"
    "        ((1u << 2 * (hi - lo)) - 1);\n"
    "    lo += (uint32_t)__builtin_ctz(~below) / 2;\n";

/* The same on a machine without SSE2 (AArch64): the prefix counted
 * one start at a time. */
static const char scan_code_plain[] =
    "    while (lo < hi && eh_start[lo] <= key)\n"
    "        lo++;\n";

/* The binary search down to SCAN leaves (blocked: only when a sub-block
 * holds more; flat: all of it). */
static void emit_bisection(struct cg_text *t, const struct table_shape *s)
{
    if (s->blocked && s->most_in_sub <= SCAN)
        return;
    cg_printf(t, "    while (hi - lo > %d) {\n"
                 "        const uint32_t mid = lo + (hi - lo) / 2;\n"
                 "        if (eh_start[mid] <= key)\n"
                 "            lo = mid + 1;\n"
                 "        else\n"
                 "            hi = mid;\n"
                 "    }\n", s->blocked ? SCAN : 0);
}

static void emit_search(struct cg_text *t, const struct table_shape *s,
                        bool sse2)
{
    if (s->blocked && sse2)
        cg_puts(t, "\n#include <emmintrin.h>\n");
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
                     "    const uint64_t g = off >> %d;\n"
                     "    uint32_t lo = eh_block[g >> %d] + eh_sub[g];\n"
                     "    uint32_t hi = eh_block[(g + 1) >> %d] + "
                     "eh_sub[g + 1];\n",
                  (1u << BLOCK_BITS) - 1, s->sub_bits, BLOCK_BITS - s->sub_bits,
                  BLOCK_BITS - s->sub_bits);
    else
        cg_printf(t, "    const uint64_t key = off;\n"
                     "    uint32_t lo = 0, hi = %zu;\n", s->nleaves);
    /* The blocked form: a binary search down to SCAN leaves (rarely
     * needed), then the scan; the flat form: a binary search. */
    emit_bisection(t, s);
    if (s->blocked && !sse2)
        cg_puts(t, scan_code_plain);
    else if (s->blocked)
        cg_puts(t, s->most_in_sub <= 8 ? scan_code_8 : scan_code);
    cg_puts(t, "    return ");
    cg_puts(t, "eh_goto_row(eh_target[lo - 1], pc, in, env, f);\n}\n");
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
    emit_row_branches(t, layout);
    emit_search(t, &s, layout->arch->e_machine == EH_ELF_MACHINE_X86_64);
    return !t->failed;
}
