/* SPDX-License-Identifier: MIT */
/* formats.c — the mutations of the files cfisem's newer readers take:
 * perf.data (file and pipe mode, zstd-compressed records), ELF core
 * notes, and SHF_COMPRESSED sections. Each reads the format itself,
 * as scan.c does the frame sections. */
#include <string.h>

#include "robust.h"

#define PICK(rng, table) \
    ((table)[rb_below((rng), sizeof(table) / sizeof((table)[0]))])

enum { MAX_PLACES = 4096 };

/* ---- perf.data --------------------------------------------------------- */

enum {
    PERF_FILE_HEADER = 104,     /* the file-mode header */
    PERF_PIPE_HEADER = 16,      /* magic and size alone */
    PERF_SAMPLE = 9,
    PERF_HEADER_ATTR = 64,
    PERF_COMPRESSED = 81,
    PERF_COMPRESSED2 = 83,
};

bool rb_is_perf(const uint8_t *bytes, size_t size)
{
    return size >= 16 && memcmp(bytes, "PERFILE2", 8) == 0;
}

static bool perf_pipe(const uint8_t *b, size_t size)
{
    return rb_load(b, size, 8, 8) == PERF_PIPE_HEADER;
}

/* The records' bytes: the data section (file mode) or all that follows
 * the header (pipe mode), cut at the file's end. */
static void perf_data(const uint8_t *b, size_t size, uint64_t *start,
                      uint64_t *end)
{
    if (perf_pipe(b, size)) {
        *start = PERF_PIPE_HEADER;
        *end = size;
        return;
    }
    uint64_t off = rb_load(b, size, 40, 8), len = rb_load(b, size, 48, 8);
    *start = off < size ? off : size;
    *end = len <= size - *start ? *start + len : size;
}

/* The records of the data (up to max), optionally of one type (0: any). */
static unsigned perf_records(const uint8_t *b, size_t size, uint32_t type,
                             uint64_t *at, unsigned max)
{
    uint64_t p, end;
    unsigned n = 0;
    perf_data(b, size, &p, &end);
    while (p + 8 <= end && n < max) {
        uint64_t len = rb_load(b, size, p + 6, 2);
        uint32_t t = (uint32_t)rb_load(b, size, p, 4);
        if (len < 8)
            break;
        if (!type || t == type)
            at[n++] = p;
        p += len;
    }
    return n;
}

static bool perf_pick_record(const struct rb_mutant *m, struct rb_rng *rng,
                             uint32_t type, uint64_t *at)
{
    uint64_t places[MAX_PLACES];
    unsigned n = perf_records(m->bytes, m->size, type, places, MAX_PLACES);
    if (!n)
        return false;
    *at = places[rb_below(rng, n)];
    return true;
}

/* The header's sizes and sections, or an entry of the feature sections'
 * table after the data. */
static bool mutate_perf_header(struct rb_mutant *m, struct rb_rng *rng)
{
    uint8_t *b = m->bytes;
    size_t size = m->size;
    if (!rb_is_perf(b, size))
        return false;
    if (perf_pipe(b, size) || size < PERF_FILE_HEADER) {
        rb_store(b, size, 8, 8, rb_odd_value(rng, PERF_PIPE_HEADER));
        return true;
    }
    uint64_t data = rb_load(b, size, 40, 8) + rb_load(b, size, 48, 8);
    if (rb_one_in(rng, 4) && data < size) {
        unsigned features = 0;
        for (unsigned i = 0; i < 256; i++)
            features += (b[72 + i / 8] >> (i % 8)) & 1;
        if (features) {
            uint64_t at = data + 16 * rb_below(rng, features) +
                          8 * rb_below(rng, 2);
            rb_store(b, size, at, 8, rb_odd_value(rng, rb_load(b, size,
                                                               at, 8)));
            return true;
        }
    }
    if (rb_one_in(rng, 5)) {    /* a feature bit set or cleared */
        b[72 + rb_below(rng, 32)] ^= (uint8_t)(1u << rb_below(rng, 8));
        return true;
    }
    uint64_t at = 8 + 8 * rb_below(rng, 8);   /* size .. event_types */
    rb_store(b, size, at, 8, rb_odd_value(rng, rb_load(b, size, at, 8)));
    return true;
}

/* sample_type bits: those of a --call-graph dwarf recording and the
 * ones that move the fields after them. */
static uint64_t sample_type_bit(struct rb_rng *rng)
{
    static const unsigned bits[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                    12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                    22, 23, 24, 25, 40, 63};
    return 1ull << PICK(rng, bits);
}

/* An attribute (file mode: the attrs section; pipe mode: a HEADER_ATTR
 * record): its size, type, sample_type, read_format, flags, the user
 * registers and stack size, or its ids. */
static bool mutate_perf_attr(struct rb_mutant *m, struct rb_rng *rng)
{
    uint8_t *b = m->bytes;
    size_t size = m->size;
    if (!rb_is_perf(b, size))
        return false;
    uint64_t attr;
    if (perf_pipe(b, size)) {
        if (!perf_pick_record(m, rng, PERF_HEADER_ATTR, &attr))
            return false;
        attr += 8;
    } else {
        uint64_t entry = rb_load(b, size, 16, 8);
        uint64_t off = rb_load(b, size, 24, 8), len = rb_load(b, size, 32, 8);
        if (entry == 0 || off >= size || len < entry)
            return false;
        attr = off + entry * rb_below(rng, len / entry);
        if (rb_one_in(rng, 6)) {    /* the ids' section, after the attr */
            uint64_t ids = attr + rb_load(b, size, attr + 4, 4) +
                           8 * rb_below(rng, 2);
            rb_store(b, size, ids, 8, rb_odd_value(rng, rb_load(b, size,
                                                                ids, 8)));
            return true;
        }
    }
    uint64_t v;
    switch (rb_below(rng, 8)) {
    case 0: rb_store(b, size, attr + 4, 4,
                     rb_odd_value(rng, rb_load(b, size, attr + 4, 4))); break;
    case 1: rb_store(b, size, attr, 4,
                     PICK(rng, ((const uint64_t[]){0, 1, 2, 3, 4, 5, 0xffff,
                                                   0xffffffff}))); break;
    case 2: case 3:
        v = rb_load(b, size, attr + 24, 8) ^ sample_type_bit(rng);
        rb_store(b, size, attr + 24, 8, v);
        break;
    case 4: rb_store(b, size, attr + 32, 8,
                     rb_load(b, size, attr + 32, 8) ^ (1u << rb_below(rng, 5)));
        break;
    case 5: rb_store(b, size, attr + 40, 8, rb_load(b, size, attr + 40, 8) ^
                                            (1ull << rb_below(rng, 40)));
        break;
    case 6: rb_store(b, size, attr + 80, 8, rb_one_in(rng, 2)
                         ? rb_load(b, size, attr + 80, 8) ^
                               (1ull << rb_below(rng, 64))
                         : rb_odd_value(rng, 0));
        break;
    default: rb_store(b, size, attr + 88, 4,
                      rb_odd_value(rng, rb_load(b, size, attr + 88, 4)));
    }
    return true;
}

/* A record's header: its type, misc bits or size. */
static bool mutate_perf_record(struct rb_mutant *m, struct rb_rng *rng)
{
    uint64_t at;
    if (!rb_is_perf(m->bytes, m->size) || !perf_pick_record(m, rng, 0, &at))
        return false;
    static const uint64_t types[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                     12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                     64, 65, 66, 67, 68, 69, 70, 71, 72, 73,
                                     74, 75, 76, 77, 78, 79, 80, 81, 82, 83,
                                     84, 0xffff, 0xffffffff};
    uint64_t len = rb_load(m->bytes, m->size, at + 6, 2);
    switch (rb_below(rng, 3)) {
    case 0: rb_store(m->bytes, m->size, at, 4, PICK(rng, types)); break;
    case 1: rb_store(m->bytes, m->size, at + 4, 2,
                     rb_load(m->bytes, m->size, at + 4, 2) ^
                         (1u << rb_below(rng, 16)));
        break;
    default:
        rb_store(m->bytes, m->size, at + 6, 2,
                 PICK(rng, ((const uint64_t[]){0, 1, 7, 8, 9, len - 8, len - 1,
                                               len + 1, len + 8, len * 2,
                                               0xfff8, 0xffff})));
    }
    return true;
}

/* A SAMPLE: its dyn_size (the last word of a --call-graph dwarf one),
 * the size of its stack copy, or any word of it (the callchain's nr,
 * the registers' abi, a register). */
static bool mutate_perf_sample(struct rb_mutant *m, struct rb_rng *rng)
{
    uint64_t at;
    uint8_t *b = m->bytes;
    if (!rb_is_perf(b, m->size) ||
        !perf_pick_record(m, rng, PERF_SAMPLE, &at))
        return false;
    uint64_t len = rb_load(b, m->size, at + 6, 2);
    if (len < 16)
        return false;
    uint64_t dyn = at + len - 8, stack = 0;
    for (uint64_t k = 8; k + 16 <= len; k += 8)
        if (rb_load(b, m->size, at + k, 8) == len - 8 - (k + 8))
            stack = at + k;
    switch (rb_below(rng, 3)) {
    case 0: rb_store(b, m->size, dyn, 8,
                     rb_odd_value(rng, rb_load(b, m->size, dyn, 8))); break;
    case 1: if (stack) {
            rb_store(b, m->size, stack, 8,
                     rb_odd_value(rng, rb_load(b, m->size, stack, 8)));
            break;
        }
        /* fall through */
    default: {
        uint64_t w = at + 8 + 8 * rb_below(rng, (len - 8) / 8);
        rb_store(b, m->size, w, 8, rb_odd_value(rng, rb_load(b, m->size,
                                                             w, 8)));
    }
    }
    return true;
}

/* A COMPRESSED record: the zstd frame's header (magic, descriptor,
 * window, content size), a byte of its blocks, or the record's size. */
static bool mutate_perf_zstd(struct rb_mutant *m, struct rb_rng *rng)
{
    uint64_t at;
    if (!rb_is_perf(m->bytes, m->size))
        return false;
    if (!perf_pick_record(m, rng, PERF_COMPRESSED, &at) &&
        !perf_pick_record(m, rng, PERF_COMPRESSED2, &at))
        return false;
    uint64_t len = rb_load(m->bytes, m->size, at + 6, 2);
    bool v2 = rb_load(m->bytes, m->size, at, 4) == PERF_COMPRESSED2;
    uint64_t data = at + 8 + (v2 ? 8 : 0);
    if (len <= data - at)
        return false;
    uint64_t n = len - (data - at);
    switch (rb_below(rng, 4)) {
    case 0: {
        uint64_t k = data + rb_below(rng, n < 18 ? n : 18);
        rb_store(m->bytes, m->size, k, 1, rb_next(rng));
        break;
    }
    case 1: case 2: {
        unsigned flips = 1 + (unsigned)rb_below(rng, 4);
        for (unsigned i = 0; i < flips; i++) {
            uint64_t k = data + rb_below(rng, n);
            rb_store(m->bytes, m->size, k, 1,
                     rb_load(m->bytes, m->size, k, 1) ^
                         (1u << rb_below(rng, 8)));
        }
        break;
    }
    default:
        if (v2)
            rb_store(m->bytes, m->size, at + 8, 8, rb_odd_value(rng, n));
        else
            rb_store(m->bytes, m->size, at + 6, 2, rb_odd_value(rng, len));
    }
    return true;
}

/* ---- ELF core notes ------------------------------------------------- */

enum {
    NT_PRSTATUS = 1, NT_AUXV = 6, NT_FILE = 0x46494c45,
    PRSTATUS_REGS = 112,        /* x86-64 elf_prstatus.pr_reg */
};

struct note {
    uint64_t at, desc;          /* file offsets: the header, desc */
    uint64_t descsz;
    uint32_t type;
};

static unsigned core_notes(const uint8_t *b, size_t size, struct note *notes,
                           unsigned max)
{
    if (size < 64 || memcmp(b, "\x7f" "ELF\x02\x01", 6) != 0 ||
        rb_load(b, size, 16, 2) != 4 /* ET_CORE */)
        return 0;
    uint64_t phoff = rb_load(b, size, 0x20, 8);
    unsigned phnum = (unsigned)rb_load(b, size, 0x38, 2), n = 0;
    for (unsigned i = 0; i < phnum && n < max; i++) {
        uint64_t h = phoff + 56 * (uint64_t)i;
        if (h > size || rb_load(b, size, h, 4) != 4 /* PT_NOTE */)
            continue;
        uint64_t p = rb_load(b, size, h + 8, 8);
        uint64_t end = p + rb_load(b, size, h + 0x20, 8);
        if (p > size || end > size || end < p)
            continue;
        while (p + 12 <= end && n < max) {
            uint64_t namesz = rb_load(b, size, p, 4);
            uint64_t descsz = rb_load(b, size, p + 4, 4);
            uint64_t desc = p + 12 + ((namesz + 3) & ~3ull);
            notes[n++] = (struct note){p, desc, descsz,
                                       (uint32_t)rb_load(b, size, p + 8, 4)};
            p = desc + ((descsz + 3) & ~3ull);
        }
    }
    return n;
}

/* NT_FILE: count, page size, (start, end, offset) each, then names. */
static void break_nt_file(uint8_t *b, size_t size, const struct note *n,
                          struct rb_rng *rng)
{
    uint64_t count = rb_load(b, size, n->desc, 8);
    switch (rb_below(rng, 4)) {
    case 0: rb_store(b, size, n->desc, 8, rb_odd_value(rng, count)); break;
    case 1: rb_store(b, size, n->desc + 8, 8,
                     PICK(rng, ((const uint64_t[]){0, 1, 4095, 4096, 1u << 20,
                                                   UINT64_MAX}))); break;
    case 2: if (count) {
            uint64_t e = n->desc + 16 + 24 * rb_below(rng, count < 64 ? count
                                                                      : 64) +
                         8 * rb_below(rng, 3);
            rb_store(b, size, e, 8, rb_odd_value(rng, rb_load(b, size, e, 8)));
            break;
        }
        /* fall through */
    default: /* a name's NUL made a letter, or a letter a NUL */
        if (n->descsz) {
            uint64_t k = n->desc + n->descsz - 1 - rb_below(rng, n->descsz);
            rb_store(b, size, k, 1, rb_load(b, size, k, 1) ? 0 : 'x');
        }
    }
}

/* One note's header (namesz, descsz, type) or, by its type, the
 * registers of an NT_PRSTATUS (pc, sp, fp, any), an NT_AUXV entry, an
 * NT_FILE field. */
static bool mutate_core_note(struct rb_mutant *m, struct rb_rng *rng)
{
    struct note notes[256];
    unsigned count = core_notes(m->bytes, m->size, notes, 256);
    if (!count)
        return false;
    const struct note *n = &notes[rb_below(rng, count)];
    uint8_t *b = m->bytes;
    size_t size = m->size;
    if (rb_one_in(rng, 3)) {
        switch (rb_below(rng, 3)) {
        case 0: rb_store(b, size, n->at, 4,
                         rb_odd_value(rng, rb_load(b, size, n->at, 4))); break;
        case 1: rb_store(b, size, n->at + 4, 4,
                         rb_odd_value(rng, n->descsz)); break;
        default: rb_store(b, size, n->at + 8, 4,
                          PICK(rng, ((const uint64_t[]){0, NT_PRSTATUS, 2, 3,
                                                        NT_AUXV, NT_FILE,
                                                        0x53494749, 0x202,
                                                        0xffffffff})));
        }
        return true;
    }
    if (n->type == NT_FILE) {
        break_nt_file(b, size, n, rng);
    } else if (n->type == NT_PRSTATUS) {
        static const unsigned regs[] = {16, 19, 4, 16, 19};  /* rip rsp rbp */
        unsigned r = rb_one_in(rng, 4) ? (unsigned)rb_below(rng, 27)
                                       : PICK(rng, regs);
        uint64_t at = n->desc + PRSTATUS_REGS + 8 * r;
        rb_store(b, size, at, 8, rb_odd_value(rng, rb_load(b, size, at, 8)));
    } else if (n->type == NT_AUXV && n->descsz >= 16) {
        uint64_t at = n->desc + 16 * rb_below(rng, n->descsz / 16);
        if (rb_one_in(rng, 3))
            rb_store(b, size, at, 8,
                     PICK(rng, ((const uint64_t[]){0, 3, 5, 9, 33, 99})));
        else
            rb_store(b, size, at + 8, 8,
                     rb_odd_value(rng, rb_load(b, size, at + 8, 8)));
    } else if (n->descsz) {
        uint64_t at = n->desc + rb_below(rng, n->descsz);
        rb_store(b, size, at, 1, rb_next(rng));
    }
    return true;
}

/* ---- compressed sections -------------------------------------------- */

enum { SHF_COMPRESSED = 0x800, CHDR_SIZE = 24 };

/* Elf64_Chdr (ch_type, ch_size, ch_addralign), the zstd or zlib
 * stream's first bytes, a byte of it, the section's size or flag. */
static bool mutate_compressed_section(struct rb_mutant *m,
                                      const struct rb_elf *e,
                                      struct rb_rng *rng)
{
    int found[RB_MAX_SECTIONS];
    unsigned n = 0;
    for (unsigned i = 0; e->elf64 && i < e->nsections; i++)
        if (rb_load(m->bytes, m->size, e->sections[i].header + 8, 8) &
            SHF_COMPRESSED)
            found[n++] = (int)i;
    if (!n)
        return false;
    const struct rb_section *s = &e->sections[found[rb_below(rng, n)]];
    uint8_t *b = m->bytes;
    size_t size = m->size;
    uint64_t at = s->offset;
    switch (rb_below(rng, 8)) {
    case 0: rb_store(b, size, at, 4,
                     PICK(rng, ((const uint64_t[]){0, 1, 2, 3, 0x7fffffff,
                                                   0xffffffff}))); break;
    case 1: case 2: rb_store(b, size, at + 8, 8,
                             rb_odd_value(rng, rb_load(b, size, at + 8, 8)));
        break;
    case 3: rb_store(b, size, at + 16, 8, rb_odd_value(rng, 8)); break;
    case 4: rb_store(b, size, at + CHDR_SIZE + rb_below(rng, 18), 1,
                     rb_next(rng)); break;
    case 5: if (s->size > CHDR_SIZE) {
            uint64_t k = at + CHDR_SIZE + rb_below(rng, s->size - CHDR_SIZE);
            rb_store(b, size, k, 1, rb_load(b, size, k, 1) ^
                                        (1u << rb_below(rng, 8)));
            break;
        }
        /* fall through */
    case 6: rb_store(b, size, s->header + 0x20, 8,
                     rb_below(rng, s->size + 1)); break;
    default: rb_store(b, size, s->header + 8, 8,
                      rb_load(b, size, s->header + 8, 8) ^ SHF_COMPRESSED);
    }
    return true;
}

bool rb_mutate_format(struct rb_mutant *m, const struct rb_elf *e,
                      enum rb_kind kind, struct rb_rng *rng)
{
    switch (kind) {
    case RB_KIND_perf_header: return mutate_perf_header(m, rng);
    case RB_KIND_perf_attr: return mutate_perf_attr(m, rng);
    case RB_KIND_perf_record: return mutate_perf_record(m, rng);
    case RB_KIND_perf_sample: return mutate_perf_sample(m, rng);
    case RB_KIND_perf_zstd: return mutate_perf_zstd(m, rng);
    case RB_KIND_core_note: return mutate_core_note(m, rng);
    case RB_KIND_compressed_section:
        return mutate_compressed_section(m, e, rng);
    default: return false;
    }
}
