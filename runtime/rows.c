/* SPDX-License-Identifier: MIT */
/* rows.c — the interpreter's row cache: rows decoded once (interp.h,
 * interp_decode_row), kept by lookup PC, applied again when the PC
 * comes back, as it does in every backtrace of a recursion and in most
 * samples of a profile. The interpreter still runs both programs
 * whole the first time; a row is kept only when it decoded without
 * error (errors are found again each time).
 *
 * The cache is shared by all threads and signal handlers, without a
 * lock and without allocation: a fixed table of slots, each a sequence
 * lock. A writer claims a slot by moving its sequence from even to odd
 * (compare-and-swap; a slot being written is left alone, so a handler
 * that interrupts a writer never waits), writes, and makes the sequence
 * even again; a reader copies the slot and keeps the copy only when the
 * sequence was even and did not change meanwhile. The slot's words are
 * relaxed atomics, so that a reader racing a writer reads a torn copy
 * it then throws away, never undefined behaviour. A set of four slots
 * is chosen by a hash of the PC; a newer row takes the slot of its PC
 * (a row of an object gone), else an empty one, else replaces one of
 * the four rows, in turn.
 *
 * Objects come and go: a lookup PC names a row only in one object. A
 * row is kept with the object table's entry of its object (objects.c,
 * as the frame cache's rows: frames.c), and found only by a step whose
 * object is that entry's: the walk's current object, which
 * rt_find_object found valid (or which stays) when the walk entered
 * it. An entry whose object was unloaded is retired for good and never
 * found again, and an object loaded at its place has another entry (or
 * none), so a row of an unloaded object is never applied, even at the
 * same PC in an object of the same layout. (It would be worse than a
 * wrong frame: a row points into its object's .eh_frame, for its
 * expressions.) An object with no entry (loaded after cfisem_prepare,
 * found by _dl_find_object) has nothing that tells it from one loaded
 * at its place later: its rows are not kept, and are decoded at every
 * step until cfisem_prepare gives it an entry. */
#include "internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "../interp/interp.h"

enum {
    ROW_SLOTS = 256,
    ROW_WORDS = sizeof(struct interp_decoded_row) / 8,
    /* A row is copied up to its last rule: the words before rules[], */
    HEAD_WORDS = offsetof(struct interp_decoded_row, rules) / 8,
    RULE_WORDS = sizeof(struct interp_kept_rule) / 8, /* then these each */
};
_Static_assert(sizeof(struct interp_decoded_row) % 8 == 0 &&
                   offsetof(struct interp_decoded_row, rules) % 8 == 0 &&
                   sizeof(struct interp_kept_rule) % 8 == 0,
               "a row is copied word by word");

/* The words of a row with `rules` rules. */
static size_t words_of(unsigned rules)
{
    if (rules > INTERP_ROW_RULES)
        rules = INTERP_ROW_RULES;
    return HEAD_WORDS + (size_t)rules * RULE_WORDS;
}

struct slot {
    _Atomic uint32_t sequence; /* odd: being written */
    _Atomic uint16_t entry;    /* the object's (rt_find_object) */
    _Atomic uint64_t pc;       /* the lookup PC; 0: empty */
    _Atomic uint64_t words[ROW_WORDS];
};

/* WAYS slots per set, so that a few PCs of one walk that hash alike do
 * not push each other out at every walk; `victim` is the way the next
 * new row takes when all are full. */
enum { WAYS = 4 };

struct set {
    struct slot way[WAYS];
    _Atomic uint32_t victim;
};

static struct set sets[ROW_SLOTS / WAYS];

static struct set *set_of(uint64_t pc)
{
    return &sets[(pc * 0x9e3779b97f4a7c15ull) >> 58];
}

_Static_assert(ROW_SLOTS / WAYS == 64, "set_of takes the hash's top 6 bits");

/* The row of the slot, when it holds pc's of the entry's object and no
 * writer is at it. */
static bool read_slot(struct slot *s, uint16_t entry, uint64_t pc,
                      struct interp_decoded_row *row)
{
    uint32_t before = atomic_load_explicit(&s->sequence, memory_order_acquire);
    if ((before & 1) ||
        atomic_load_explicit(&s->pc, memory_order_relaxed) != pc ||
        atomic_load_explicit(&s->entry, memory_order_relaxed) != entry)
        return false;
    /* A torn copy is thrown away below; nrules is read from the copy,
     * and bounded, so even a torn one stays inside the row. */
    unsigned char *copy = (unsigned char *)row;
    size_t words = HEAD_WORDS;
    for (size_t i = 0; i < words; i++) {
        uint64_t word = atomic_load_explicit(&s->words[i],
                                             memory_order_relaxed);
        memcpy(copy + 8 * i, &word, 8);
        if (i + 1 == HEAD_WORDS)
            words = words_of(row->nrules);
    }
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->sequence, memory_order_relaxed) == before;
}

bool rt_row_lookup(uint16_t entry, uint64_t pc,
                   struct interp_decoded_row *row)
{
    struct set *set = set_of(pc);
    for (unsigned way = 0; way < WAYS && pc != 0 && entry != 0; way++)
        if (read_slot(&set->way[way], entry, pc, row))
            return true;
    return false;
}

/* The way of the set a row of pc goes to: pc's own (a row of an object
 * gone, or one kept meanwhile), else an empty one, else WAYS. */
static unsigned way_for(struct set *set, uint64_t pc)
{
    unsigned empty = WAYS;
    for (unsigned way = 0; way < WAYS; way++) {
        uint64_t at = atomic_load_explicit(&set->way[way].pc,
                                           memory_order_relaxed);
        if (at == pc)
            return way;
        if (at == 0 && empty == WAYS)
            empty = way;
    }
    return empty;
}

void rt_row_keep(uint16_t entry, uint64_t pc,
                 const struct interp_decoded_row *row)
{
    if (entry == 0 || pc == 0)
        return; /* no entry: nothing tells its object from a later one */
    struct set *set = set_of(pc);
    unsigned way = way_for(set, pc);
    if (way == WAYS) { /* all full: the victim, and the next one next */
        way = atomic_load_explicit(&set->victim, memory_order_relaxed) %
              WAYS;
        atomic_store_explicit(&set->victim, (way + 1) % WAYS,
                              memory_order_relaxed);
    }
    struct slot *s = &set->way[way];
    uint32_t sequence = atomic_load_explicit(&s->sequence,
                                             memory_order_relaxed);
    if ((sequence & 1) ||
        !atomic_compare_exchange_strong_explicit(
            &s->sequence, &sequence, sequence + 1, memory_order_acq_rel,
            memory_order_relaxed))
        return; /* being written: keep nothing */
    /* The odd sequence before any word (a reader that sees a new word
     * then sees the sequence changed). */
    atomic_thread_fence(memory_order_release);
    uint64_t words[ROW_WORDS];
    memcpy(words, row, sizeof *row);
    atomic_store_explicit(&s->pc, pc, memory_order_relaxed);
    atomic_store_explicit(&s->entry, entry, memory_order_relaxed);
    for (size_t i = 0; i < words_of(row->nrules); i++)
        atomic_store_explicit(&s->words[i], words[i], memory_order_relaxed);
    atomic_store_explicit(&s->sequence, sequence + 2, memory_order_release);
}
