/* SPDX-License-Identifier: MIT */
/* frames.c — the frame cache: the simple rows of the PCs a walk met,
 * replayed in front of the eh_elfs.
 *
 * Most frames of a stack have a simple row: the CFA a register plus an
 * offset (rsp + k, rbp + 16), the return address and a few callee-saved
 * registers saved at fixed offsets from it, the other registers at
 * their ABI default. Such a row is kept here, keyed by lookup PC, as a
 * few words; a later step at that PC applies it (a load per saved
 * register, inside the stack window of the walk) instead of calling the
 * eh_elf, as libunwind's unw_backtrace replays its trace cache.
 *
 * A row is learnt after the eh_elf unwound a frame at its PC: it is
 * decoded from the object's .eh_frame by the interpreter
 * (interp_decode_row, afresh, not from the interpreter's row cache),
 * and kept only when it is simple and, applied to that very frame,
 * gives exactly what the eh_elf gave (the caller's registers, their
 * status, signal_frame); otherwise, or when the row is not simple, a
 * negative row is kept, so that the PC is not decoded again. A replayed
 * row thus gives what the eh_elf gives for every frame at its PC: both
 * compute the same rules (tests/check_runtime.c compares them register
 * by register on real stacks).
 *
 * Objects come and go. A row is tagged with the object table's entry
 * (objects.c) of the object it was learnt in; entries never change and
 * an entry whose object was unloaded is retired for good. A row of an
 * object that stays (loaded with the program, or this library's) is
 * replayed whenever its PC comes back; a row of any other object only
 * when its entry is one the walk has found valid (rt_find_object checks
 * that its object is still the one loaded there): a row of an unloaded
 * object is never replayed, even if another object is loaded at its
 * place.
 *
 * The cache is shared by all threads and signal handlers, without a lock
 * and without allocation, as the interpreter's row cache (rows.c): sets
 * of four slots chosen by a hash of the PC, each slot a sequence lock
 * whose words are relaxed atomics; a reader keeps its copy only when the
 * sequence was even and did not change meanwhile, a writer that finds a
 * slot being written keeps nothing. A slot is one cache line. */
#include "internal.h"

#include <elf.h>
#include <stdatomic.h>
#include <string.h>

#include "../cfi/arch.h"
#include "../interp/interp.h"

#if RT_FRAME_CACHE

#define RIP_BIT (1u << CFISEM_REG_RIP)
#define RSP_BIT (1u << CFISEM_REG_RSP)

enum {
    FRAME_SETS = 256,
    FRAME_WAYS = 4,
    FRAME_WORDS = 6,
    FRAME_SAVED = 8,    /* registers loaded from the stack, at most */
    FRAME_NEGATIVE = 31,
    FRAME_NONE = -128,  /* a register not saved, in the fast form */
    FRAME_LAZY = 5,     /* the other callee-saved registers */
    FRAME_STEPPED = -1, /* a step made (none of rt_frame_walk's stops) */
};

/* The fast form of a row (word 5), for backtraces: rip, rsp and rbp in
 * locals, the other callee-saved registers (rbx, r12-r15) in the
 * register file. */
static const uint8_t lazy_regs[FRAME_LAZY] = {3, 12, 13, 14, 15};

/* A simple row: CFA = register cfa_reg + cfa_offset; the registers of
 * saved_reg[] loaded from CFA + 8 * saved_off[] (lo and hi: the lowest
 * and the highest of those offsets, in bytes); rsp the CFA; the
 * registers of `same` the callee's, status included; every other one of
 * 0-16 undefined. `known`: the saved ones and rsp. A negative row
 * (cfa_reg FRAME_NEGATIVE): the PC's row is not simple, or not the
 * eh_elf's, which unwinds it. `entry`: the object table's entry of its
 * object (rt_find_object). */
struct frame_row {
    int32_t cfa_offset;
    uint8_t cfa_reg;
    uint8_t nsaved;
    uint16_t entry;
    uint32_t known;
    uint32_t same;
    int16_t lo;
    int16_t hi;
    uint8_t saved_reg[FRAME_SAVED];
    int8_t saved_off[FRAME_SAVED];
};

/* The fast form of a row: byte 0 the offset of rip (in 8-byte words
 * from the CFA), byte 1 rbp's, bytes 2-6 those of lazy_regs[]
 * (FRAME_NONE: not saved), byte 7 0x80 when the row has a fast form
 * (its CFA is rsp's or rbp's, rip is saved, and every register it
 * saves is one of these), with bit j set when it saves lazy_regs[j];
 * 0 when it has none. */
static uint64_t fast_form(const struct frame_row *r)
{
    int8_t off[8] = {FRAME_NONE, FRAME_NONE, FRAME_NONE, FRAME_NONE,
                     FRAME_NONE, FRAME_NONE, FRAME_NONE, INT8_MIN};
    if (r->cfa_reg != CFISEM_REG_RSP && r->cfa_reg != CFISEM_REG_RBP)
        return 0;
    for (unsigned k = 0; k < r->nsaved; k++) {
        unsigned reg = r->saved_reg[k], at = 8;
        if (reg == CFISEM_REG_RIP)
            at = 0;
        else if (reg == CFISEM_REG_RBP)
            at = 1;
        for (unsigned j = 0; j < FRAME_LAZY; j++)
            if (reg == lazy_regs[j])
                at = 2 + j;
        if (at == 8)
            return 0;
        off[at] = r->saved_off[k];
        if (at >= 2)
            off[7] = (int8_t)(off[7] | 1 << (at - 2));
    }
    if (off[0] == FRAME_NONE)
        return 0;
    uint64_t word = 0;
    for (unsigned k = 0; k < 8; k++)
        word |= (uint64_t)(uint8_t)off[k] << 8 * k;
    return word;
}

/* The words a slot keeps of a row:
 *   0  cfa_offset (bits 0-31), cfa_reg (32-39), nsaved (40-47), entry
 *   1  the registers it makes known (bits 0-23), undefined (32-55)
 *   2  the registers it keeps, `same` (bits 0-23 and again 32-55), lo
 *      and hi in 8-byte words (24-31, 56-63)
 * so that the status of a walk as one word, known | undefined << 32,
 * becomes (status & word 2) | word 1 (fast_step; its bits 24-31 and
 * 56-63 stay 0).
 *   3  saved_reg[k] in bits 8k to 8k+7
 *   4  saved_off[k] likewise
 *   5  the fast form (fast_form) */
static void pack(const struct frame_row *r, uint64_t w[FRAME_WORDS])
{
    w[0] = (uint64_t)(uint32_t)r->cfa_offset | (uint64_t)r->cfa_reg << 32 |
           (uint64_t)r->nsaved << 40 | (uint64_t)r->entry << 48;
    _Static_assert(CFISEM_NREGS <= 24, "a status in 24 bits");
    uint32_t undefined = ((1u << CFISEM_NREGS) - 1) & ~r->same & ~r->known;
    w[1] = r->known | (uint64_t)undefined << 32;
    w[2] = r->same | (uint64_t)r->same << 32 |
           (uint64_t)(uint8_t)(r->lo / 8) << 24 |
           (uint64_t)(uint8_t)(r->hi / 8) << 56;
    w[3] = w[4] = 0;
    for (unsigned k = 0; k < FRAME_SAVED; k++) {
        w[3] |= (uint64_t)r->saved_reg[k] << 8 * k;
        w[4] |= (uint64_t)(uint8_t)r->saved_off[k] << 8 * k;
    }
    w[5] = fast_form(r);
}

struct frame_slot {
    _Atomic uint64_t sequence; /* odd: being written */
    _Atomic uint64_t pc;       /* the lookup PC; 0: empty */
    _Atomic uint64_t words[FRAME_WORDS];
};
_Static_assert(sizeof(struct frame_slot) == 64, "a slot is a cache line");

struct frame_set {
    _Alignas(64) struct frame_slot way[FRAME_WAYS];
};

static struct frame_set frame_sets[FRAME_SETS];

static uint64_t hash_of(uint64_t pc)
{
    return pc * 0x9e3779b97f4a7c15ull;
}

_Static_assert(FRAME_SETS == 256, "the set is the hash's top 8 bits");

/* The 8-byte word at addr, which the caller checked readable. */
static inline uint64_t load(uint64_t addr)
{
    uint64_t value;
    memcpy(&value, (const void *)(uintptr_t)addr, sizeof value);
    return value;
}

/* Saved register k of the words w3 and w4 from the CFA. */
#define LOAD_SAVED(k)                                                      \
    regs->value[(w3 >> 8 * (k)) & 31] =                                    \
        load(cfa + (uint64_t)(int64_t)(int8_t)(w4 >> 8 * (k)) * 8)

/* The registers' status after a row (known, undefined). */
static inline void row_status(const uint64_t w[FRAME_WORDS],
                              struct eh_elf_regs *regs, uint32_t known)
{
    uint32_t same = (uint32_t)w[2] & 0xffffff;
    regs->known = (known & same) | (uint32_t)w[1];
    regs->undefined = (regs->undefined & same) | (uint32_t)(w[1] >> 32);
}

/* The lowest and the highest offset from the CFA of the registers a row
 * saves, in bytes, from its word 2. */
static inline uint64_t row_lo(uint64_t w2)
{
    return (uint64_t)(int64_t)(int8_t)(w2 >> 24) * 8;
}

static inline uint64_t row_hi(uint64_t w2)
{
    return (uint64_t)((int64_t)w2 >> 56) * 8;
}

/* The CFA of a row (the caller's rsp), when its register is known and
 * the saved registers lie in the window. */
static inline bool row_cfa(const uint64_t w[FRAME_WORDS],
                           const struct eh_elf_regs *regs,
                           const struct eh_elf_env *env, uint64_t *cfa)
{
    unsigned cfa_reg = (unsigned)(w[0] >> 32) & 31; /* 31: negative */
    if (!(regs->known >> cfa_reg & 1u))
        return false;
    *cfa = regs->value[cfa_reg] + (uint64_t)(int64_t)(int32_t)(uint32_t)w[0];
    unsigned nsaved = (unsigned)(w[0] >> 40) & 0xff;
    uint64_t base = env->direct_base, span = env->direct_span;
    return nsaved == 0 ||
           (*cfa + row_lo(w[2]) - base < span &&
            *cfa + row_hi(w[2]) - base < span);
}

/* A row's words applied to regs, in place. */
static inline int apply(const uint64_t w[FRAME_WORDS],
                        struct eh_elf_regs *regs,
                        const struct eh_elf_env *env)
{
    uint64_t cfa;
    if (!row_cfa(w, regs, env, &cfa))
        return RT_NOT_REPLAYED;
    uint64_t w3 = w[3], w4 = w[4];
    switch ((unsigned)(w[0] >> 40) & 0xff) {
    case 8: LOAD_SAVED(7); /* fall through */
    case 7: LOAD_SAVED(6); /* fall through */
    case 6: LOAD_SAVED(5); /* fall through */
    case 5: LOAD_SAVED(4); /* fall through */
    case 4: LOAD_SAVED(3); /* fall through */
    case 3: LOAD_SAVED(2); /* fall through */
    case 2: LOAD_SAVED(1); /* fall through */
    case 1: LOAD_SAVED(0); /* fall through */
    default: break;
    }
    regs->value[CFISEM_REG_RSP] = cfa;
    row_status(w, regs, regs->known);
    return RT_REPLAYED;
}

/* The row of pc, read from its slot into w; RT_REPLAYED when there is
 * one, else RT_NO_ROW, or RT_NOT_REPLAYED when it was being written. */
static inline int find_row(uint64_t pc, uint64_t w[FRAME_WORDS])
{
    struct frame_slot *s = frame_sets[hash_of(pc) >> 56].way;
    uint64_t before;
    for (unsigned way = 0;; way++, s++) {
        if (way == FRAME_WAYS)
            return RT_NO_ROW;
        before = atomic_load_explicit(&s->sequence, memory_order_acquire);
        if (atomic_load_explicit(&s->pc, memory_order_relaxed) == pc &&
            !(before & 1))
            break;
    }
    w[0] = atomic_load_explicit(&s->words[0], memory_order_relaxed);
    w[1] = atomic_load_explicit(&s->words[1], memory_order_relaxed);
    w[2] = atomic_load_explicit(&s->words[2], memory_order_relaxed);
    w[3] = atomic_load_explicit(&s->words[3], memory_order_relaxed);
    w[4] = atomic_load_explicit(&s->words[4], memory_order_relaxed);
    w[5] = atomic_load_explicit(&s->words[5], memory_order_relaxed);
    _Static_assert(FRAME_WORDS == 6, "six words read");
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->sequence, memory_order_relaxed) != before)
        return RT_NOT_REPLAYED; /* torn: being written */
    return RT_REPLAYED;
}

/* The row's object may be used: it stays, or the walk found it valid. */
static inline bool usable(const uint64_t w[FRAME_WORDS], uint32_t valid,
                          uint16_t *entry)
{
    uint16_t row_entry = (uint16_t)(w[0] >> 48);
    if ((row_entry & RT_ENTRY_STAYS) || row_entry == (uint16_t)valid ||
        row_entry == valid >> 16)
        return true;
    *entry = row_entry;
    return false;
}

int rt_frame_replay(uint64_t pc, struct eh_elf_regs *regs,
                    const struct eh_elf_env *env, uint32_t valid,
                    uint16_t *entry)
{
    uint64_t w[FRAME_WORDS];
    int found = find_row(pc, w);
    if (found != RT_REPLAYED)
        return found;
    if (!usable(w, valid, entry))
        return RT_VALIDATE;
    return apply(w, regs, env);
}

/* The registers a backtrace's fast steps change, in locals. */
struct fast_regs {
    uint64_t rsp, rbp, rip;
    uint64_t status; /* known | undefined << 32 */
};

static inline void fast_load(struct fast_regs *f, const struct eh_elf_regs *r)
{
    f->rsp = r->value[CFISEM_REG_RSP];
    atomic_signal_fence(memory_order_seq_cst); /* (fast_store) */
    f->rbp = r->value[CFISEM_REG_RBP];
    f->rip = r->value[CFISEM_REG_RIP];
    f->status = (r->known & RT_ALL_REGS) |
                (uint64_t)(r->undefined & RT_ALL_REGS) << 32;
}

static inline void fast_store(const struct fast_regs *f,
                              struct eh_elf_regs *r)
{
    r->value[CFISEM_REG_RSP] = f->rsp;
    /* (apart: one vector store of the two would keep them in a vector
     * register through the walk, moved out at each step) */
    atomic_signal_fence(memory_order_seq_cst);
    r->value[CFISEM_REG_RBP] = f->rbp;
    r->value[CFISEM_REG_RIP] = f->rip;
    r->known = (uint32_t)f->status;
    r->undefined = (uint32_t)(f->status >> 32);
}

/* Lazy register j, when the row saves it (fast_step). */
#define LOAD_LAZY(j)                                                       \
    do {                                                                   \
        if (lazy & 1u << (j))                                              \
            regs->value[lazy_regs[j]] = load(                              \
                cfa + (uint64_t)(int64_t)(int8_t)(fast >> 8 * (2 + (j))) * \
                          8);                                              \
    } while (0)

/* The words of a row a fast step reads (pack's 0, 1, 2 and 5). */
struct fast_words {
    uint64_t w0, w1, w2, w5;
};

/* The fast words of pc's row (find_row's, four words of six). */
static inline int find_fast(uint64_t pc, struct fast_words *r)
{
    struct frame_slot *s = frame_sets[hash_of(pc) >> 56].way;
    uint64_t before;
    for (unsigned way = 0;; way++, s++) {
        if (way == FRAME_WAYS)
            return RT_NO_ROW;
        before = atomic_load_explicit(&s->sequence, memory_order_acquire);
        if (atomic_load_explicit(&s->pc, memory_order_relaxed) == pc &&
            !(before & 1))
            break;
    }
    r->w0 = atomic_load_explicit(&s->words[0], memory_order_relaxed);
    r->w1 = atomic_load_explicit(&s->words[1], memory_order_relaxed);
    r->w2 = atomic_load_explicit(&s->words[2], memory_order_relaxed);
    r->w5 = atomic_load_explicit(&s->words[5], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->sequence, memory_order_relaxed) != before)
        return RT_NOT_REPLAYED; /* torn: being written */
    return RT_REPLAYED;
}

/* A step by a row without a fast form (apply), on regs, whose rip, rsp
 * and rbp are f's: the row's words are `given` (learn_row's check), or
 * read again from pc's slot (the row kept there may have changed since
 * its fast words were read: it is checked usable again). FRAME_STEPPED,
 * or why the walk stops (walk_rows' *stop). */
static int slow_step(uint64_t pc, const uint64_t *given, struct fast_regs *f,
                     struct eh_elf_regs *regs, const struct eh_elf_env *env,
                     uint32_t valid, uint16_t *entry)
{
    uint64_t w[FRAME_WORDS];
    if (given) {
        memcpy(w, given, sizeof w);
    } else {
        int found = find_row(pc, w);
        if (found != RT_REPLAYED)
            return found == RT_NO_ROW ? RT_NOT_REPLAYED : found;
        if (!usable(w, valid, entry))
            return RT_VALIDATE;
    }
    fast_store(f, regs);
    uint64_t sp = f->rsp;
    int applied = apply(w, regs, env);
    fast_load(f, regs);
    if (applied != RT_REPLAYED)
        return RT_NOT_REPLAYED;
    if ((regs->known & (RIP_BIT | RSP_BIT)) != (RIP_BIT | RSP_BIT) ||
        f->rsp <= sp)
        return (regs->undefined & RIP_BIT) && !(regs->known & RIP_BIT)
                   ? RT_END : RT_BAD_FRAME;
    return FRAME_STEPPED;
}

/* The window of CFAs a fast step takes: [base + FRAME_MARGIN, base +
 * FRAME_MARGIN + inner) where inner is the window's span less twice
 * FRAME_MARGIN (0 when it is smaller). A row saves registers at most
 * 127 words from its CFA (simple_rule), so every load of a row whose
 * CFA lies there is inside the window: one check a frame instead of
 * one per bound. A frame whose CFA lies within FRAME_MARGIN of the
 * window's ends is unwound by its eh_elf (which gives what the row
 * gives: rt_frame_learn), only slower. */
enum { FRAME_MARGIN = 1024 };
_Static_assert(8 * 127 + 8 <= FRAME_MARGIN, "a row's saves in the margin");

static inline uint64_t inner_span(uint64_t span)
{
    return span > 2 * FRAME_MARGIN ? span - 2 * FRAME_MARGIN : 0;
}

/* One fast step on the locals and regs' other registers (the row's fast
 * form, r->w5, not 0), base the window's start + FRAME_MARGIN and inner
 * its inner_span: FRAME_STEPPED, RT_NOT_REPLAYED (nothing changed) or
 * RT_BAD_FRAME (the registers the caller's). */
static inline int fast_step(const struct fast_words *r, struct fast_regs *f,
                            struct eh_elf_regs *regs, uint64_t base,
                            uint64_t inner)
{
    unsigned cfa_reg = (unsigned)(r->w0 >> 32) & 31; /* rsp or rbp */
    if (!(f->status >> cfa_reg & 1u))
        return RT_NOT_REPLAYED;
    uint64_t cfa = (cfa_reg == CFISEM_REG_RSP ? f->rsp : f->rbp) +
                   (uint64_t)(int64_t)(int32_t)(uint32_t)r->w0;
    if (cfa - base >= inner)
        return RT_NOT_REPLAYED;
    uint64_t fast = r->w5;
    uint64_t rip = load(cfa + (uint64_t)(int64_t)(int8_t)fast * 8);
    int8_t rbp = (int8_t)(fast >> 8);
    if (rbp != FRAME_NONE)
        f->rbp = load(cfa + (uint64_t)(int64_t)rbp * 8);
    unsigned lazy = (unsigned)(fast >> 56);
    if (lazy & 0x1f) {
        LOAD_LAZY(0);
        LOAD_LAZY(1);
        LOAD_LAZY(2);
        LOAD_LAZY(3);
        LOAD_LAZY(4);
    }
    f->status = (f->status & r->w2) | r->w1;
    uint64_t sp = f->rsp;
    f->rsp = cfa;
    f->rip = rip;
    return cfa > sp ? FRAME_STEPPED : RT_BAD_FRAME; /* (rip saved: known) */
}

/* rt_frame_walk's loop; the first frame's row is `given` (words) when
 * not NULL (learn_row checks a row so before it keeps it), and a row of
 * an object that is not one of the `valid` entries is checked by
 * rt_walk_validate when w is not NULL. A row with a fast form is read
 * (four words of its slot) and replayed here, on locals; one without
 * goes through slow_step. */
static int walk_rows(struct eh_elf_regs *regs, bool caller_frame,
                     const struct eh_elf_env *env, uint32_t valid,
                     void **pcs, int n, int max, int *stop,
                     const uint64_t *given, struct rt_walk *w)
{
    uint16_t entry;
    struct fast_regs f;
    fast_load(&f, regs);
    uint64_t base = env->direct_base + FRAME_MARGIN;
    uint64_t inner = inner_span(env->direct_span);
    uint64_t back = caller_frame; /* the lookup PC: rip - back */
    int why = RT_REPLAYED;
    void **at = pcs + n, **end = pcs + (n < max ? max : n);
    uint16_t valid_lo = (uint16_t)valid, valid_hi = (uint16_t)(valid >> 16);
    while (at != end && f.rip != 0) {
        uint64_t pc = f.rip - back;
        struct fast_words r;
        if (given) {
            r.w0 = given[0];
            r.w1 = given[1];
            r.w2 = given[2];
            r.w5 = given[5];
        } else {
            int found = find_fast(pc, &r);
            if (found != RT_REPLAYED) {
                why = found;
                break;
            }
        }
        uint16_t row_entry = (uint16_t)(r.w0 >> 48);
        if (row_entry != valid_lo && row_entry != valid_hi &&
            !(row_entry & RT_ENTRY_STAYS)) {
            if (!w || !rt_walk_validate(w, pc, row_entry)) {
                why = RT_VALIDATE;
                break;
            }
            valid_lo = w->entries[0];
            valid_hi = w->entries[1];
        }
        int step = r.w5 != 0 ? fast_step(&r, &f, regs, base, inner)
                             : slow_step(pc, given, &f, regs, env,
                                         valid_lo | (uint32_t)valid_hi << 16,
                                         &entry);
        if (step != FRAME_STEPPED) {
            why = step;
            break;
        }
        given = NULL;
        back = 1;
        *at++ = (void *)(uintptr_t)f.rip;
    }
    fast_store(&f, regs);
    *stop = why;
    return (int)(at - pcs);
}

int rt_frame_walk(struct rt_walk *w, struct eh_elf_regs *regs,
                  bool caller_frame, void **pcs, int n, int max, int *stop)
{
    uint32_t valid = w->entries[0] | (uint32_t)w->entries[1] << 16;
    return walk_rows(regs, caller_frame, &w->env, valid, pcs, n, max, stop,
                     NULL, w);
}

/* Keeps the row of pc: in an empty way of its set, else in one chosen
 * by other bits of the hash (no state to update: a PC that comes back
 * finds its row in the same way). */
static void frame_keep(uint64_t pc, const struct frame_row *row)
{
    if (pc == 0)
        return;
    struct frame_set *set = &frame_sets[hash_of(pc) >> 56];
    unsigned way = 0;
    while (way < FRAME_WAYS &&
           atomic_load_explicit(&set->way[way].pc, memory_order_relaxed) !=
               0)
        way++;
    if (way == FRAME_WAYS)
        way = (unsigned)(hash_of(pc) >> 40) % FRAME_WAYS;
    struct frame_slot *s = &set->way[way];
    uint64_t sequence = atomic_load_explicit(&s->sequence,
                                             memory_order_relaxed);
    if ((sequence & 1) ||
        !atomic_compare_exchange_strong_explicit(
            &s->sequence, &sequence, sequence + 1, memory_order_acq_rel,
            memory_order_relaxed))
        return; /* being written: keep nothing */
    /* The odd sequence before any word (a reader that sees a new word
     * then sees the sequence changed). */
    atomic_thread_fence(memory_order_release);
    uint64_t w[FRAME_WORDS];
    pack(row, w);
    atomic_store_explicit(&s->pc, pc, memory_order_relaxed);
    for (size_t i = 0; i < FRAME_WORDS; i++)
        atomic_store_explicit(&s->words[i], w[i], memory_order_relaxed);
    atomic_store_explicit(&s->sequence, sequence + 2, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* Learning a row                                                        */
/* ------------------------------------------------------------------ */


/* One rule of the decoded row into *out; false: not simple. */
static bool simple_rule(const struct interp_kept_rule *rule,
                        struct frame_row *out)
{
    if (rule->reg >= CFISEM_NREGS || rule->reg == CFISEM_REG_RSP)
        return false;
    uint32_t bit = 1u << rule->reg;
    out->same &= ~bit;
    switch (rule->kind) {
    case INTERP_RULE_UNDEFINED:
        return true;
    case INTERP_RULE_SAME_VALUE:
        out->same |= bit;
        return true;
    case INTERP_RULE_OFFSET:
        if (out->nsaved == FRAME_SAVED || rule->offset % 8 != 0 ||
            rule->offset < -8 * 127 || rule->offset > 8 * 127)
            return false;
        if (out->nsaved == 0 || rule->offset < out->lo)
            out->lo = (int16_t)rule->offset;
        if (out->nsaved == 0 || rule->offset > out->hi)
            out->hi = (int16_t)rule->offset;
        out->saved_reg[out->nsaved] = rule->reg;
        out->saved_off[out->nsaved++] = (int8_t)(rule->offset / 8);
        out->known |= bit;
        return true;
    default:
        return false;
    }
}

/* The decoded row as a simple row; false when it is not one. (A
 * register has one rule in a row: none is both saved and another.) */
static bool simple_row(const struct interp_decoded_row *row,
                       struct frame_row *out)
{
    const struct cfi_arch *arch = row->arch;
    int64_t offset = (int64_t)row->cfa_offset;
    if (arch != &cfi_arch_x86_64 || row->cfa_kind != 1 ||
        row->cfa_reg >= CFISEM_NREGS || row->signal_frame ||
        row->ra_column != CFISEM_REG_RIP || offset < INT32_MIN ||
        offset > INT32_MAX)
        return false;
    out->cfa_offset = (int32_t)offset;
    out->cfa_reg = row->cfa_reg;
    out->known = RSP_BIT;
    out->same = 0;
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        if (cfi_arch_default(arch, r) == CFI_DEFAULT_SAME_VALUE)
            out->same |= 1u << r;
    for (unsigned k = 0; k < row->nrules; k++)
        if (k == INTERP_ROW_RULES || !simple_rule(&row->rules[k], out))
            return false;
    return true;
}

/* The eh_elf's frame and the row's agree on everything a step reads. */
static bool same_frame(const struct eh_elf_frame *a,
                       const struct eh_elf_regs *b)
{
    if (a->caller.known != b->known || a->caller.undefined != b->undefined ||
        a->signal_frame != 0)
        return false;
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        if ((b->known >> r & 1) && a->caller.value[r] != b->value[r])
            return false;
    return true;
}

void rt_frame_learn(const struct rt_walk *w, uint16_t entry,
                    uint64_t lookup_pc, const struct eh_elf_regs *callee,
                    const struct eh_elf_frame *frame)
{
    struct frame_row row;
    memset(&row, 0, sizeof row);
    struct cfi_cie cie;
    struct cfi_fde fde;
    struct interp_decoded_row decoded;
    struct cfi_diag diag;
    struct eh_elf_regs replay = *callee;
    uint64_t words[FRAME_WORDS];
    if (rt_find_fde(rt_walk_object(w), lookup_pc, &cie, &fde) &&
        interp_decode_row(&fde, lookup_pc, &decoded, &diag) == CFI_OK &&
        simple_row(&decoded, &row)) {
        row.entry = entry;
        pack(&row, words);
        struct eh_elf_regs fast = *callee;
        void *pc;
        int stop;
        if (apply(words, &replay, &w->env) != RT_REPLAYED ||
            (walk_rows(&fast, true, &w->env, (uint32_t)entry << 16 | entry,
                       &pc, 0, 1, &stop, words, NULL),
             stop == RT_NOT_REPLAYED))
            return; /* not seen through: maybe next time */
        if (same_frame(frame, &replay) &&
            same_frame(frame, &fast)) {
            frame_keep(lookup_pc, &row);
            return;
        }
    }
    memset(&row, 0, sizeof row);
    row.entry = entry;
    row.cfa_reg = FRAME_NEGATIVE;
    frame_keep(lookup_pc, &row);
}
#else
/* AArch64: no frame cache (internal.h); steps call the eh_elfs. */
int rt_frame_replay(uint64_t pc, struct eh_elf_regs *regs,
                    const struct eh_elf_env *env, uint32_t valid,
                    uint16_t *entry)
{
    (void)pc, (void)regs, (void)env, (void)valid, (void)entry;
    return RT_NOT_REPLAYED;
}

int rt_frame_walk(struct rt_walk *w, struct eh_elf_regs *regs,
                  bool caller_frame, void **pcs, int n, int max, int *stop)
{
    (void)w, (void)regs, (void)caller_frame, (void)pcs, (void)max;
    *stop = RT_NOT_REPLAYED;
    return n;
}

void rt_frame_learn(const struct rt_walk *w, uint16_t entry,
                    uint64_t lookup_pc, const struct eh_elf_regs *callee,
                    const struct eh_elf_frame *frame)
{
    (void)w, (void)entry, (void)lookup_pc, (void)callee, (void)frame;
}
#endif
