/* SPDX-License-Identifier: MIT */
/* structured.c — see structured.h. */
#include "structured.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "robust/robust.h"

enum {
    HEADER = 16,          /* target 1's header (fuzz/targets.h) */
    MAX_INSNS = 256,      /* instruction boundaries looked at */
    INSN_ROOM = 96,       /* an instruction written before it is inserted */
    DW_EH_PE_PCREL = 0x10,
};

int fuzz_shape_parse(const char *name)
{
    static const char *const names[] = {"cfi_bytes", "elf", "oracles"};
    for (int i = 0; i < 3; i++)
        if (name && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* ---- the buffer being mutated ------------------------------------- */

struct buffer {
    uint8_t *bytes;
    size_t size, max;
};

static uint64_t skip_leb(const uint8_t *b, uint64_t at, uint64_t end)
{
    while (at < end && (b[at] & 0x80))
        at++;
    return at < end ? at + 1 : end;
}

/* The end of a ULEB length and the block it measures. */
static uint64_t skip_block(const uint8_t *b, uint64_t at, uint64_t end)
{
    uint64_t len = 0;
    unsigned shift = 0;
    while (at < end) {
        uint8_t byte = b[at++];
        if (shift < 64)
            len |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
        if (!(byte & 0x80))
            break;
    }
    return len <= end - at ? at + len : end;
}

/* The end of the CFA instruction at `at` (DWARF 5 §6.4.2; the GNU and
 * MIPS extensions); an opcode with no known operands ends the program. */
static uint64_t insn_end(const uint8_t *b, uint64_t at, uint64_t end,
                         unsigned addr_size)
{
    uint8_t op = b[at++];
    switch (op >> 6) {
    case 1: case 3: return at;                          /* advance, restore */
    case 2: return skip_leb(b, at, end);                /* offset */
    default: break;
    }
    uint64_t fixed = 0;
    switch (op) {
    case 0x00: case 0x0a: case 0x0b: return at;
    case 0x01: fixed = addr_size; break;
    case 0x02: fixed = 1; break;
    case 0x03: fixed = 2; break;
    case 0x04: fixed = 4; break;
    case 0x1d: fixed = 8; break;
    case 0x06: case 0x07: case 0x08: case 0x0d: case 0x0e: case 0x13:
    case 0x2e:
        return skip_leb(b, at, end);
    case 0x05: case 0x09: case 0x0c: case 0x11: case 0x12: case 0x14:
    case 0x15: case 0x2f:
        return skip_leb(b, skip_leb(b, at, end), end);
    case 0x0f: return skip_block(b, at, end);
    case 0x10: case 0x16: return skip_block(b, skip_leb(b, at, end), end);
    default: return end;
    }
    return fixed <= end - at ? at + fixed : end;
}

/* The instruction boundaries of record r's program: starts[0..n], the
 * last one its end. */
static unsigned boundaries(const struct rb_elf *e, const struct rb_record *r,
                           uint64_t *starts)
{
    uint64_t at = r->insns_at, end = r->insns_at + r->insns_len;
    unsigned n = 0, addr = r->pc_size ? r->pc_size : 8;
    while (at < end && n < MAX_INSNS) {
        starts[n++] = at;
        at = insn_end(e->bytes, at, end, addr);
    }
    starts[n] = at < end ? at : end;
    return n;
}

/* ---- keeping lengths and pointers consistent ------------------------ */

/* The record's length field grows by delta (a 64-bit one after the
 * escape). */
static void fix_length(struct buffer *b, const struct rb_record *r,
                       int64_t delta)
{
    bool wide = r->id_size == 8;
    uint64_t at = wide ? r->at + 4 : r->at;
    unsigned n = wide ? 8 : 4;
    uint64_t len = rb_load(b->bytes, b->size, at, n);
    rb_store(b->bytes, b->size, at, n, len + (uint64_t)delta);
}

static bool pc_relative(const struct rb_elf *e, const struct rb_record *fde)
{
    return e->eh_frame >= 0 && fde->cie >= 0 &&
           e->records[fde->cie].is_cie &&
           (e->records[fde->cie].fde_encoding & 0x70) == DW_EH_PE_PCREL;
}

/* FDE `r` of the scan before an edit, now `moved` bytes further (its
 * bytes at r->at + shift in the new buffer), its CIE `cie_moved` bytes
 * further: its CIE pointer and a pc-relative pc_begin keep naming what
 * they named. */
static void fix_fde(struct buffer *b, const struct rb_elf *e,
                    const struct rb_record *r, int64_t shift, int64_t moved,
                    int64_t cie_moved)
{
    if (r->is_cie)
        return;
    uint64_t id_at = r->id_at + (uint64_t)shift;
    uint64_t id = rb_load(b->bytes, b->size, id_at, r->id_size);
    if (e->eh_frame >= 0)   /* the distance back to the CIE */
        id += (uint64_t)(moved - cie_moved);
    else                    /* the CIE's offset in the section */
        id += (uint64_t)cie_moved;
    if (moved != cie_moved || e->eh_frame < 0)
        rb_store(b->bytes, b->size, id_at, r->id_size, id);
    if (moved && pc_relative(e, r)) {
        uint64_t pc_at = r->pc_at + (uint64_t)shift;
        uint64_t pc = rb_load(b->bytes, b->size, pc_at, r->pc_size);
        rb_store(b->bytes, b->size, pc_at, r->pc_size, pc - (uint64_t)moved);
    }
}

/* After `delta` bytes were inserted (delta > 0) or removed at `pos`: the
 * records wholly after pos moved. `except` (a record just copied, or
 * NULL) is fixed by its caller. */
static void fix_after(struct buffer *b, const struct rb_elf *e, uint64_t pos,
                      int64_t delta, const struct rb_record *except)
{
    for (unsigned i = 0; i < e->nrecords; i++) {
        const struct rb_record *r = &e->records[i];
        if (r->is_cie || r == except || r->cie < 0)
            continue;
        const struct rb_record *cie = &e->records[r->cie];
        int64_t moved = r->at >= pos ? delta : 0;
        int64_t cie_moved = cie->at >= pos ? delta : 0;
        if (moved || cie_moved)
            fix_fde(b, e, r, moved, moved, cie_moved);
    }
}

static bool insert_bytes(struct buffer *b, uint64_t pos, const uint8_t *src,
                         size_t n)
{
    if (n > b->max - b->size || pos > b->size)
        return false;
    memmove(b->bytes + pos + n, b->bytes + pos, b->size - pos);
    memcpy(b->bytes + pos, src, n);
    b->size += n;
    return true;
}

static void remove_bytes(struct buffer *b, uint64_t pos, size_t n)
{
    memmove(b->bytes + pos, b->bytes + pos + n, b->size - pos - n);
    b->size -= n;
}

/* ---- structural mutations of a bare section ------------------------- */

static struct rb_record *pick(struct rb_elf *e, struct rb_rng *rng,
                              int want_cie)
{
    unsigned n = 0;
    for (unsigned i = 0; i < e->nrecords; i++)
        n += want_cie < 0 || e->records[i].is_cie == (want_cie == 1);
    uint64_t k = rb_below(rng, n);
    for (unsigned i = 0; i < e->nrecords && n; i++)
        if ((want_cie < 0 || e->records[i].is_cie == (want_cie == 1)) &&
            k-- == 0)
            return &e->records[i];
    return NULL;
}

/* A record with a program, an FDE three times in four. */
static struct rb_record *pick_program(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick(e, rng, rb_one_in(rng, 4) ? 1 : 0);
    return r ? r : pick(e, rng, -1);
}

/* Inserts `n` bytes of `insn` at boundary `pos` of record r's program. */
static bool grow_program(struct buffer *b, struct rb_elf *e,
                         const struct rb_record *r, uint64_t pos,
                         const uint8_t *insn, size_t n)
{
    if (n == 0 || !insert_bytes(b, pos, insn, n))
        return false;
    fix_length(b, r, (int64_t)n);
    fix_after(b, e, pos, (int64_t)n, NULL);
    return true;
}

static bool shrink_program(struct buffer *b, struct rb_elf *e,
                           const struct rb_record *r, uint64_t pos, size_t n)
{
    if (n == 0)
        return false;
    remove_bytes(b, pos, n);
    fix_length(b, r, -(int64_t)n);
    fix_after(b, e, pos + n, -(int64_t)n, NULL);
    return true;
}

enum edit { EDIT_INSERT, EDIT_EXPRESSION, EDIT_DELETE, EDIT_REPLACE,
            EDIT_DUPLICATE_INSN, EDIT_DUPLICATE_RECORD, EDIT_DELETE_RECORD,
            EDIT_COUNT };

static bool edit_program(struct buffer *b, uint64_t at, bool debug,
                         enum edit edit, struct rb_rng *rng)
{
    struct rb_elf *e = malloc(sizeof *e);
    uint64_t *starts = malloc((MAX_INSNS + 1) * sizeof *starts);
    bool done = false;
    if (!e || !starts)
        goto out;
    rb_section_scan(e, b->bytes, b->size, at, debug);
    struct rb_record *r = pick_program(e, rng);
    if (!r)
        goto out;
    unsigned n = boundaries(e, r, starts);
    uint8_t insn[INSN_ROOM];
    uint64_t here = starts[rb_below(rng, n + 1)];
    size_t len;
    switch (edit) {
    case EDIT_INSERT:
        len = rb_cfa_instruction(insn, sizeof insn, rng);
        done = grow_program(b, e, r, here, insn, len);
        break;
    case EDIT_EXPRESSION:
        len = rb_expression_rule(insn, sizeof insn, rng);
        done = grow_program(b, e, r, here, insn, len);
        break;
    case EDIT_DELETE:
    case EDIT_REPLACE: {
        if (n == 0)
            break;
        unsigned k = (unsigned)rb_below(rng, n);
        done = shrink_program(b, e, r, starts[k], starts[k + 1] - starts[k]);
        if (done && edit == EDIT_REPLACE) {
            rb_section_scan(e, b->bytes, b->size, at, debug);
            len = rb_cfa_instruction(insn, sizeof insn, rng);
            for (unsigned i = 0; i < e->nrecords; i++)
                if (e->records[i].insns_at <= starts[k] &&
                    starts[k] <= e->records[i].at + e->records[i].total)
                    r = &e->records[i];
            grow_program(b, e, r, starts[k], insn, len);
        }
        break;
    }
    case EDIT_DUPLICATE_INSN: {
        if (n == 0)
            break;
        unsigned k = (unsigned)rb_below(rng, n);
        len = starts[k + 1] - starts[k];
        if (len <= sizeof insn) {
            memcpy(insn, b->bytes + starts[k], len);
            done = grow_program(b, e, r, here, insn, len);
        }
        break;
    }
    case EDIT_DUPLICATE_RECORD: {
        struct rb_record *d = pick(e, rng, rb_one_in(rng, 5) ? 1 : 0);
        if (!d || d->total > b->max - b->size)
            break;
        uint64_t pos = d->at + d->total;
        if (!insert_bytes(b, pos, b->bytes + d->at, d->total))
            break;
        fix_after(b, e, pos, (int64_t)d->total, NULL);
        if (!d->is_cie && d->cie >= 0) {  /* the copy: a moved d */
            const struct rb_record *cie = &e->records[d->cie];
            int64_t cie_moved = cie->at >= pos ? (int64_t)d->total : 0;
            fix_fde(b, e, d, (int64_t)d->total, (int64_t)d->total,
                    cie_moved);
        }
        done = true;
        break;
    }
    case EDIT_DELETE_RECORD: {
        struct rb_record *d = pick(e, rng, rb_one_in(rng, 6) ? 1 : 0);
        if (!d || e->nrecords < 2)
            break;
        remove_bytes(b, d->at, d->total);
        fix_after(b, e, d->at + d->total, -(int64_t)d->total, d);
        done = true;
        break;
    }
    case EDIT_COUNT:
        break;
    }
out:
    free(starts);
    free(e);
    return done;
}

/* ---- in place, for whole ELF files ---------------------------------- */

/* An instruction of a program replaced by a new one no longer, the rest
 * filled with DW_CFA_nop: the record keeps its size. */
static bool replace_in_place(struct buffer *b, struct rb_rng *rng)
{
    struct rb_elf *e = malloc(sizeof *e);
    uint64_t *starts = malloc((MAX_INSNS + 1) * sizeof *starts);
    bool done = false;
    if (e && starts) {
        rb_elf_scan(e, b->bytes, b->size);
        struct rb_record *r = pick_program(e, rng);
        unsigned n = r ? boundaries(e, r, starts) : 0;
        if (n) {
            unsigned k = (unsigned)rb_below(rng, n);
            size_t room = starts[k + 1] - starts[k];
            uint8_t insn[INSN_ROOM];
            for (unsigned tries = 0; tries < 8 && !done; tries++) {
                size_t len = rb_cfa_instruction(insn, sizeof insn, rng);
                if (len > room || len == sizeof insn)
                    continue;
                memcpy(b->bytes + starts[k], insn, len);
                memset(b->bytes + starts[k] + len, 0, room - len);
                done = true;
            }
        }
    }
    free(starts);
    free(e);
    return done;
}

/* ---- robust/'s kinds ------------------------------------------------- */

/* One kind, chosen by rng among those with a place in the file. */
static bool field_kind(struct buffer *b, bool bare, uint64_t at, bool debug,
                       struct rb_rng *rng)
{
    struct rb_mutant m = {b->bytes, b->size, b->max};
    for (unsigned tries = 0; tries < 6; tries++) {
        enum rb_kind kind = (enum rb_kind)rb_below(rng, RB_NKINDS);
        /* truncation of a bare section: rarely, and never into the header */
        if (kind == RB_KIND_truncate && !rb_one_in(rng, 4))
            continue;
        bool done = bare ? rb_mutate_section(&m, at, debug, kind, rng)
                         : rb_mutate(&m, kind, rng);
        if (done) {
            b->size = m.size < at ? at : m.size;
            return true;
        }
    }
    return false;
}

/* ---- target 1's header ---------------------------------------------- */

static void mutate_header(struct buffer *b, struct rb_rng *rng)
{
    uint8_t *h = b->bytes;
    switch (rb_below(rng, 6)) {
    case 0: h[0] ^= (uint8_t)(1u << rb_below(rng, 6)); break;
    case 1: {
        static const uint16_t offsets[] = {0, 1, 2, 4, 8, 16, 0xffff};
        uint16_t v = rb_one_in(rng, 2)
                         ? offsets[rb_below(rng, sizeof offsets / 2)]
                         : (uint16_t)rb_below(rng, 64);
        rb_store(h, HEADER, 1, 2, v);
        break;
    }
    case 2: rb_store(h, HEADER, 3, 4, rb_next(rng)); break;
    case 3: h[7 + rb_below(rng, 3)] ^= (uint8_t)(1u << rb_below(rng, 8));
            break;
    case 4: h[11] = (uint8_t)rb_below(rng, 16); break;
    default: rb_store(h, HEADER, 12, 4, rb_below(rng, 4) ? rb_next(rng) << 4
                                                         : 0);
             break;
    }
}

/* ---- the shapes -------------------------------------------------------- */

static enum fuzz_mutation cfi_bytes(struct buffer *b, struct rb_rng *rng)
{
    if (b->size < HEADER)
        return FUZZ_MUT_NONE;
    bool debug = b->bytes[0] & 1;
    uint64_t roll = rb_below(rng, 20);
    if (roll < 2) {
        mutate_header(b, rng);
        return FUZZ_MUT_HEADER;
    }
    if (roll < 13) {
        enum edit edit = (enum edit)rb_below(rng, EDIT_COUNT);
        for (unsigned tries = 0; tries < 3; tries++) {
            if (edit_program(b, HEADER, debug, edit, rng))
                return FUZZ_MUT_STRUCTURE;
            edit = (enum edit)rb_below(rng, EDIT_COUNT);
        }
    }
    return field_kind(b, true, HEADER, debug, rng) ? FUZZ_MUT_FIELD
                                                   : FUZZ_MUT_NONE;
}

static enum fuzz_mutation elf(struct buffer *b, struct rb_rng *rng)
{
    if (rb_below(rng, 5) < 2 && replace_in_place(b, rng))
        return FUZZ_MUT_IN_PLACE;
    return field_kind(b, false, 0, false, rng) ? FUZZ_MUT_FIELD
                                               : FUZZ_MUT_NONE;
}

static enum fuzz_mutation oracles(struct buffer *b, struct rb_rng *rng)
{
    if (b->size < 1)
        return FUZZ_MUT_NONE;
    if (rb_one_in(rng, 32)) {
        /* another library on the same ELF file (3 stays 3) */
        if ((b->bytes[0] & 3) != 3)
            b->bytes[0] = (uint8_t)((b->bytes[0] & ~3u) | rb_below(rng, 3));
        return FUZZ_MUT_HEADER;
    }
    struct buffer rest = {b->bytes + 1, b->size - 1, b->max - 1};
    enum fuzz_mutation what = (b->bytes[0] & 3) == 3 ? cfi_bytes(&rest, rng)
                                                     : elf(&rest, rng);
    b->size = rest.size + 1;
    return what;
}

size_t fuzz_mutator_structured(enum fuzz_shape shape, uint8_t *data,
                               size_t size, size_t max_size, uint64_t seed,
                               enum fuzz_mutation *what)
{
    struct rb_rng rng;
    rb_rng_seed(&rng, seed, size);
    struct buffer b = {data, size < max_size ? size : max_size, max_size};
    enum fuzz_mutation done = FUZZ_MUT_NONE;
    switch (shape) {
    case FUZZ_SHAPE_CFI_BYTES: done = cfi_bytes(&b, &rng); break;
    case FUZZ_SHAPE_ELF: done = elf(&b, &rng); break;
    case FUZZ_SHAPE_ORACLES: done = oracles(&b, &rng); break;
    }
    if (what)
        *what = done;
    return b.size;
}
