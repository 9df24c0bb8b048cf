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
    FRAME_NO_ENTRY = 0xffff, /* no object table entry is (entries are
                                15 bits and a flag: RT_ENTRY_STAYS) */
};

/* The fast form of a row (word 5), for backtraces: rip, rsp and rbp in
 * locals, the other callee-saved registers (rbx, r12-r15) in the
 * register file:
 *   bits 0-7    flags: FRAME_FAST (the row has the fast form) or
 *               FRAME_END (the end form: the fast form's, but the
 *               return address is undefined, the clean end of the
 *               stack), and what it does: FRAME_CFA_RSP (the CFA is
 *               rsp's plus the offset, else rbp's), FRAME_SAVES_RBP,
 *               FRAME_SAVES_LAZY (one of lazy_regs[] or more)
 *   bits 8-12   lazy_regs[j] is saved (bit 8 + j)
 *   bits 16-55  the offsets of lazy_regs[] (byte 2 + j)
 *   bits 56-63  the offset of rbp
 * (offsets in 8-byte words from the CFA, FRAME_NONE when not saved). */
#define FRAME_FAST 0x1u
#define FRAME_CFA_RSP 0x2u
#define FRAME_SAVES_RBP 0x4u
#define FRAME_SAVES_LAZY 0x8u
#define FRAME_END 0x10u
#define RBP_BIT (1u << CFISEM_REG_RBP)
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

/* The fast form of a row (above), for the rows most frames have: the
 * CFA rsp's or rbp's plus an offset, the return address just below the
 * CFA, every register the row saves rbp or one of lazy_regs[], and rbp
 * saved or kept (so that a walk's rbp stays known); or the end form,
 * the same with the return address undefined (the outermost frame's);
 * 0 when it has neither. */
static uint64_t fast_form(const struct frame_row *r)
{
    int8_t off[8] = {0, 0, FRAME_NONE, FRAME_NONE, FRAME_NONE,
                     FRAME_NONE, FRAME_NONE, FRAME_NONE};
    unsigned flags = FRAME_FAST, lazy = 0;
    bool return_address = false;
    if ((r->cfa_reg != CFISEM_REG_RSP && r->cfa_reg != CFISEM_REG_RBP) ||
        !((r->known | r->same) & RBP_BIT))
        return 0;
    if (r->cfa_reg == CFISEM_REG_RSP)
        flags |= FRAME_CFA_RSP;
    for (unsigned k = 0; k < r->nsaved; k++) {
        unsigned reg = r->saved_reg[k], j = FRAME_LAZY;
        if (reg == CFISEM_REG_RIP) {
            return_address = r->saved_off[k] == -1;
            continue;
        }
        if (reg == CFISEM_REG_RBP) {
            off[7] = r->saved_off[k];
            flags |= FRAME_SAVES_RBP;
            continue;
        }
        for (unsigned i = 0; i < FRAME_LAZY; i++)
            if (reg == lazy_regs[i])
                j = i;
        if (j == FRAME_LAZY)
            return 0;
        off[2 + j] = r->saved_off[k];
        lazy |= 1u << j;
        flags |= FRAME_SAVES_LAZY;
    }
    if (!return_address &&
        ((r->known | r->same) & 1u << CFISEM_REG_RIP))
        return 0;
    if (!return_address)
        flags ^= FRAME_FAST | FRAME_END;
    off[0] = (int8_t)flags;
    off[1] = (int8_t)lazy;
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

/* A slot is keyed by its row's lookup PC + 1: a return address, for the
 * callers a walk meets (their lookup PC is the return address - 1), so
 * that the backtrace's loop looks up what it has just loaded; 0 is an
 * empty slot (the lookup PC -1 is no code, and is not kept). */
struct frame_slot {
    _Atomic uint64_t sequence; /* odd: being written */
    _Atomic uint64_t key;      /* the lookup PC + 1; 0: empty */
    _Atomic uint64_t words[FRAME_WORDS];
};
_Static_assert(sizeof(struct frame_slot) == 64, "a slot is a cache line");

struct frame_set {
    _Alignas(64) struct frame_slot way[FRAME_WAYS];
};

static struct frame_set frame_sets[FRAME_SETS];

static uint64_t hash_of(uint64_t key)
{
    return key * 0x9e3779b97f4a7c15ull;
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

/* The slot holding key's row, its sequence (even) in *before; NULL when
 * none does. */
static inline struct frame_slot *slot_of(uint64_t key, uint64_t *before)
{
    struct frame_slot *s = frame_sets[hash_of(key) >> 56].way;
    for (unsigned way = 0; way < FRAME_WAYS; way++, s++) {
        *before = atomic_load_explicit(&s->sequence, memory_order_acquire);
        if (atomic_load_explicit(&s->key, memory_order_relaxed) == key &&
            !(*before & 1))
            return s;
    }
    return NULL;
}

/* The slot's sequence is still `before`: the words read since are one
 * row's. */
static inline bool slot_unchanged(struct frame_slot *s, uint64_t before)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->sequence, memory_order_relaxed) ==
           before;
}

/* The row of key, read from its slot into w; RT_REPLAYED when there is
 * one, else RT_NO_ROW, or RT_NOT_REPLAYED when it was being written. */
static inline int find_row(uint64_t key, uint64_t w[FRAME_WORDS])
{
    uint64_t before;
    struct frame_slot *s = slot_of(key, &before);
    if (!s)
        return RT_NO_ROW;
    for (unsigned i = 0; i < FRAME_WORDS; i++)
        w[i] = atomic_load_explicit(&s->words[i], memory_order_relaxed);
    return slot_unchanged(s, before) ? RT_REPLAYED : RT_NOT_REPLAYED;
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
    int found = find_row(pc + 1, w);
    if (found != RT_REPLAYED)
        return found;
    if (!usable(w, valid, entry))
        return RT_VALIDATE;
    return apply(w, regs, env);
}

/* The registers a backtrace's replay changes, in locals. */
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

/* Lazy register j, when the row's fast form `fast` saves it. */
#define LOAD_LAZY(j)                                                       \
    do {                                                                   \
        if (fast >> (8 + (j)) & 1u)                                        \
            regs->value[lazy_regs[j]] = load(                              \
                cfa + (uint64_t)(int64_t)(int8_t)(fast >> 8 * (2 + (j))) * \
                          8);                                              \
    } while (0)

/* The lazy registers a row's fast form saves, from the CFA. */
static inline void load_lazy(uint64_t fast, uint64_t cfa,
                             struct eh_elf_regs *regs)
{
    LOAD_LAZY(0);
    LOAD_LAZY(1);
    LOAD_LAZY(2);
    LOAD_LAZY(3);
    LOAD_LAZY(4);
}

/* The words of a row a fast step reads: pack's 0 and 5, and the
 * status of the walk after the row (words 1 and 2 applied to that
 * before it: fast_step). */
struct fast_words {
    uint64_t w0, w5, status;
};

/* The fast words of key's row (find_row's, four words of six), on the
 * status before it. */
static inline int find_fast(uint64_t key, uint64_t status,
                            struct fast_words *r)
{
    uint64_t before;
    struct frame_slot *s = slot_of(key, &before);
    if (!s)
        return RT_NO_ROW;
    r->w0 = atomic_load_explicit(&s->words[0], memory_order_relaxed);
    r->w5 = atomic_load_explicit(&s->words[5], memory_order_relaxed);
    r->status = (status &
                 atomic_load_explicit(&s->words[2], memory_order_relaxed)) |
                atomic_load_explicit(&s->words[1], memory_order_relaxed);
    return slot_unchanged(s, before) ? RT_REPLAYED : RT_NOT_REPLAYED;
}

/* A step by a row without a fast form (apply) on regs, whose rip, rsp
 * and rbp are f's: the row's words are `given` (rt_frame_learn's
 * check), or read again from key's slot, where the row must still be
 * of `entry` (the one the walk found usable). FRAME_STEPPED, or why the
 * walk stops (rt_frame_walk's *stop). */
static int slow_step(uint64_t key, uint16_t entry, const uint64_t *given,
                     struct fast_regs *f, struct eh_elf_regs *regs,
                     const struct eh_elf_env *env)
{
    uint64_t w[FRAME_WORDS];
    if (given) {
        memcpy(w, given, sizeof w);
    } else {
        int found = find_row(key, w);
        if (found != RT_REPLAYED || (uint16_t)(w[0] >> 48) != entry)
            return RT_NOT_REPLAYED;
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

/* One step by a row's fast form (FRAME_FAST in r->w5), or its end form
 * when `end` (FRAME_END), the CFA's register known, on the locals and
 * regs' other registers, base the window's start + FRAME_MARGIN and
 * inner its inner_span: FRAME_STEPPED, RT_END (the end form: the
 * caller's registers but rip, which is undefined), RT_NOT_REPLAYED
 * (nothing changed) or RT_BAD_FRAME (the registers the caller's). */
static inline int fast_step(const struct fast_words *r, struct fast_regs *f,
                            struct eh_elf_regs *regs, uint64_t base,
                            uint64_t inner, bool end)
{
    uint64_t fast = r->w5;
    uint64_t cfa = (fast & FRAME_CFA_RSP ? f->rsp : f->rbp) +
                   (uint64_t)(int64_t)(int32_t)(uint32_t)r->w0;
    if (cfa - base >= inner)
        return RT_NOT_REPLAYED;
    uint64_t rip = end ? f->rip : load(cfa - 8);
    if (fast & FRAME_SAVES_RBP)
        f->rbp = load(cfa + (uint64_t)((int64_t)fast >> 56) * 8);
    if (fast & FRAME_SAVES_LAZY)
        load_lazy(fast, cfa, regs);
    f->status = r->status;
    uint64_t sp = f->rsp;
    f->rsp = cfa;
    f->rip = rip;
    if (end)
        return RT_END;
    return cfa > sp ? FRAME_STEPPED : RT_BAD_FRAME; /* (rip saved: known) */
}

/* A row of object table entry `entry` (not the last one the walk's loop
 * used) may be replayed at lookup PC pc: RT_REPLAYED, RT_NO_ROW (entry
 * 0: an empty slot, found by the key 0 of the PC 0), or RT_VALIDATE
 * (its object was not found valid: rt_walk_validate). */
static int entry_usable(struct rt_walk *w, uint16_t entry, uint64_t pc)
{
    if (entry == 0)
        return RT_NO_ROW;
    if ((entry & RT_ENTRY_STAYS) || entry == w->entries[0] ||
        entry == w->entries[1] || rt_walk_validate(w, pc, entry))
        return RT_REPLAYED;
    return RT_VALIDATE;
}

/* rt_frame_walk's loop on f (rbp known), the PCs to *at, up to end. A
 * row with a fast form is read (four words of its slot) and replayed
 * here, on locals; one without goes through slow_step, on a copy of f
 * (f, whose address is never taken, stays in registers), and ends the
 * loop when rbp is no longer known after it (the fast form keeps rbp
 * known: the walk's eh_elfs go on from there). */
static inline int walk_rows(struct rt_walk *w, struct fast_regs *f,
                            struct eh_elf_regs *regs, bool caller_frame,
                            void ***at, void **end)
{
    const struct eh_elf_env *env = &w->env;
    uint64_t base = env->direct_base + FRAME_MARGIN;
    uint64_t inner = inner_span(env->direct_span);
    uint64_t key = f->rip + !caller_frame; /* the lookup PC + 1 */
    uint64_t last = FRAME_NO_ENTRY;         /* the last row's, usable */
    void **pc_at = *at;
    int why = RT_REPLAYED;
    while (pc_at != end) {
        struct fast_words r;
        int found = find_fast(key, f->status, &r);
        if (found != RT_REPLAYED) {
            why = found;
            break;
        }
        if (r.w0 >> 48 != last) {
            int usable_now = entry_usable(w, (uint16_t)(r.w0 >> 48), key - 1);
            if (usable_now != RT_REPLAYED) {
                why = usable_now;
                break;
            }
            last = r.w0 >> 48;
        }
        int step;
        if (r.w5 & FRAME_FAST) {
            step = fast_step(&r, f, regs, base, inner, false);
        } else if (r.w5 & FRAME_END) {
            step = fast_step(&r, f, regs, base, inner, true);
        } else {
            struct fast_regs copy = *f;
            step = slow_step(key, (uint16_t)last, NULL, &copy, regs, env);
            *f = copy;
            if (step == FRAME_STEPPED && !(f->status & RBP_BIT))
                why = RT_NOT_REPLAYED;
        }
        if (step != FRAME_STEPPED) {
            why = step;
            break;
        }
        key = f->rip;
        *pc_at++ = (void *)(uintptr_t)key;
        if (why != RT_REPLAYED)
            break;
    }
    *at = pc_at;
    return why;
}

int rt_frame_walk(struct rt_walk *w, struct eh_elf_regs *regs,
                  bool caller_frame, void **pcs, int n, int max, int *stop)
{
    const uint64_t needed = RIP_BIT | RSP_BIT | RBP_BIT;
    struct fast_regs f;
    fast_load(&f, regs);
    void **at = pcs + n, **end = pcs + (n < max ? max : n);
    if ((f.status & needed) != needed) {
        *stop = RT_NOT_REPLAYED;
        return n;
    }
    int why = RT_REPLAYED;
    if (f.rip != 0)
        why = walk_rows(w, &f, regs, caller_frame, &at, end);
    fast_store(&f, regs);
    /* (a return address 0 ends the stack: its key finds no row) */
    *stop = why == RT_NO_ROW && f.rip == 0 ? RT_REPLAYED : why;
    return (int)(at - pcs);
}

/* Keeps the row of lookup PC pc: in the way of its set that holds a row
 * of pc already (learnt again: its object was replaced), else in an
 * empty one, else in one chosen by other bits of the hash (no state to update: a PC that
 * comes back finds its row in the same way). The PCs 0 and -1 are not
 * kept (the keys 1 and 0: the backtrace's loop looks up the key 0 for a
 * return address 0, which ends the stack). */
static void frame_keep(uint64_t pc, const struct frame_row *row)
{
    uint64_t key = pc + 1;
    if (key <= 1)
        return;
    struct frame_set *set = &frame_sets[hash_of(key) >> 56];
    unsigned way = 0;
    while (way < FRAME_WAYS &&
           atomic_load_explicit(&set->way[way].key, memory_order_relaxed) !=
               key)
        way++;
    for (unsigned empty = 0; way == FRAME_WAYS && empty < FRAME_WAYS;
         empty++)
        if (atomic_load_explicit(&set->way[empty].key,
                                 memory_order_relaxed) == 0)
            way = empty;
    if (way == FRAME_WAYS)
        way = (unsigned)(hash_of(key) >> 40) % FRAME_WAYS;
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
    atomic_store_explicit(&s->key, key, memory_order_relaxed);
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

/* The backtrace's step by the words w on regs: by the fast form when the
 * row has one and the CFA's register is known (rbp may be unknown
 * here, where the backtrace's loop does not go), else by slow_step. */
static int step_given(const uint64_t w[FRAME_WORDS], struct eh_elf_regs *regs,
                      const struct eh_elf_env *env)
{
    struct fast_regs f;
    fast_load(&f, regs);
    struct fast_words r = {w[0], w[5], (f.status & w[2]) | w[1]};
    unsigned cfa_reg = (unsigned)(w[0] >> 32) & 31;
    uint64_t base = env->direct_base + FRAME_MARGIN;
    uint64_t inner = inner_span(env->direct_span);
    int step;
    if (!(w[5] & (FRAME_FAST | FRAME_END)) || !(f.status >> cfa_reg & 1u))
        step = slow_step(0, 0, w, &f, regs, env);
    else
        step = fast_step(&r, &f, regs, base, inner, w[5] & FRAME_END);
    fast_store(&f, regs);
    return step;
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
        if (apply(words, &replay, &w->env) != RT_REPLAYED ||
            step_given(words, &fast, &w->env) == RT_NOT_REPLAYED)
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
