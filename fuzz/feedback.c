/* SPDX-License-Identifier: MIT */
/* feedback.c — telling AFL++ what an uninstrumented library answered.
 *
 * libdwarf, libdw and libunwind are system builds without coverage
 * instrumentation: AFL++ sees only the harness's own branches. To let it
 * tell inputs apart by what the libraries did, the oracle targets report
 * each answer (a return code, a rule kind, a count) here, and each
 * (point, bucket) pair runs its own small function: a distinct edge in the
 * instrumented harness. Counts are bucketed by powers of two, as AFL++
 * buckets hit counts. */
#include "internal.h"

enum { NOTE_POINTS = 9, NOTE_BUCKETS = 16 };

#define NOTE_FN(p, b)                                                      \
    static void note_##p##_##b(unsigned *trail)                            \
    {                                                                      \
        *trail = *trail * 31u + (p * NOTE_BUCKETS + b);                    \
    }
#define NOTE_FNS(p)                                                        \
    NOTE_FN(p, 0) NOTE_FN(p, 1) NOTE_FN(p, 2) NOTE_FN(p, 3)                \
    NOTE_FN(p, 4) NOTE_FN(p, 5) NOTE_FN(p, 6) NOTE_FN(p, 7)                \
    NOTE_FN(p, 8) NOTE_FN(p, 9) NOTE_FN(p, 10) NOTE_FN(p, 11)              \
    NOTE_FN(p, 12) NOTE_FN(p, 13) NOTE_FN(p, 14) NOTE_FN(p, 15)
#define NOTE_ROW(p)                                                        \
    { note_##p##_0, note_##p##_1, note_##p##_2, note_##p##_3,              \
      note_##p##_4, note_##p##_5, note_##p##_6, note_##p##_7,              \
      note_##p##_8, note_##p##_9, note_##p##_10, note_##p##_11,            \
      note_##p##_12, note_##p##_13, note_##p##_14, note_##p##_15 }

NOTE_FNS(0) NOTE_FNS(1) NOTE_FNS(2) NOTE_FNS(3)
NOTE_FNS(4) NOTE_FNS(5) NOTE_FNS(6) NOTE_FNS(7)
NOTE_FNS(8)

static void (*const notes[NOTE_POINTS][NOTE_BUCKETS])(unsigned *) = {
    NOTE_ROW(0), NOTE_ROW(1), NOTE_ROW(2), NOTE_ROW(3),
    NOTE_ROW(4), NOTE_ROW(5), NOTE_ROW(6), NOTE_ROW(7),
    NOTE_ROW(8),
};

/* 0..7 as themselves, then one bucket per power of two up to 2^10 and
 * above. */
static unsigned bucket(uint64_t what)
{
    if (what < 8)
        return (unsigned)what;
    unsigned log2 = 0;
    while (what >>= 1)
        log2++;
    return log2 >= 10 ? 15 : 8 + (log2 - 3);
}

void fuzz_note(unsigned where, uint64_t what)
{
    unsigned trail = 0;
    notes[where % NOTE_POINTS][bucket(what)](&trail);
}
