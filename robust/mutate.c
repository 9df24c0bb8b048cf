/* SPDX-License-Identifier: MIT */
/* mutate.c — one mutation per kind, each aimed at one field of the ELF
 * or CFI formats, every choice drawn from the rng (same seed, same
 * mutant). */
#include <string.h>

#include "robust.h"

/* ---- rng: splitmix64 ---------------------------------------------- */

void rb_rng_seed(struct rb_rng *rng, uint64_t seed, uint64_t stream)
{
    rng->state = seed * 0x9e3779b97f4a7c15ull ^ (stream + 0x632be59bd9b4e019ull);
    rb_next(rng);
}

uint64_t rb_next(struct rb_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rb_below(struct rb_rng *rng, uint64_t n)
{
    return n ? rb_next(rng) % n : 0;
}

bool rb_one_in(struct rb_rng *rng, uint64_t n)
{
    return rb_below(rng, n) == 0;
}

static const struct {
    const char *name, *summary;
} kinds[] = {
#define RB_ROW(name, what) {#name, what},
    RB_KINDS(RB_ROW)
#undef RB_ROW
};

const char *rb_kind_name(enum rb_kind kind)
{
    return kind < RB_NKINDS ? kinds[kind].name : "?";
}

const char *rb_kind_summary(enum rb_kind kind)
{
    return kind < RB_NKINDS ? kinds[kind].summary : "?";
}

#define PICK(rng, table) ((table)[rb_below((rng), sizeof(table) / sizeof((table)[0]))])

uint64_t rb_odd_value(struct rb_rng *rng, uint64_t near)
{
    static const uint64_t edges[] = {0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff,
                                     0x80000000, 0xfffffff0, 0xffffffff,
                                     0x100000000ull, 0x7fffffffffffffffull,
                                     0x8000000000000000ull, UINT64_MAX};
    switch (rb_below(rng, 4)) {
    case 0: return PICK(rng, edges);
    case 1: return near + rb_below(rng, 17) - 8;
    case 2: return near * 2 + rb_below(rng, 64);
    default: return rb_next(rng) >> rb_below(rng, 64);
    }
}

static struct rb_record *pick_record(struct rb_elf *e, struct rb_rng *rng,
                                     int want_cie /* 1, 0, -1 either */)
{
    unsigned n = 0;
    for (unsigned i = 0; i < e->nrecords; i++)
        n += want_cie < 0 || e->records[i].is_cie == (want_cie == 1);
    if (!n)
        return NULL;
    uint64_t k = rb_below(rng, n);
    for (unsigned i = 0; i < e->nrecords; i++) {
        if (!(want_cie < 0 || e->records[i].is_cie == (want_cie == 1)))
            continue;
        if (k-- == 0)
            return &e->records[i];
    }
    return NULL;
}

static const struct rb_section *pick_frame_section(const struct rb_elf *e,
                                                   struct rb_rng *rng)
{
    int choices[3], n = 0;
    if (e->eh_frame >= 0) choices[n++] = e->eh_frame;
    if (e->debug_frame >= 0) choices[n++] = e->debug_frame;
    if (e->eh_frame_hdr >= 0) choices[n++] = e->eh_frame_hdr;
    return n ? &e->sections[choices[rb_below(rng, (uint64_t)n)]] : NULL;
}

/* ---- record fields -------------------------------------------------- */

static bool mutate_record_length(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, -1);
    if (!r)
        return false;
    static const uint32_t lengths[] = {0, 0xffffffff, 0xfffffff0, 0x7fffffff,
                                       1, 2, 3, 4};
    uint64_t len = r->total - 4;
    switch (rb_below(rng, 4)) {
    case 0:
        rb_store(e->bytes, e->size, r->at, 4, PICK(rng, lengths));
        break;
    case 1: /* the 64-bit escape, with a 64-bit length that follows */
        rb_store(e->bytes, e->size, r->at, 4, 0xffffffff);
        if (rb_one_in(rng, 2))
            rb_store(e->bytes, e->size, r->at + 4, 8, rb_odd_value(rng, len));
        break;
    case 2:
        rb_store(e->bytes, e->size, r->at, 4, len + rb_below(rng, 17) - 8);
        break;
    default:
        rb_store(e->bytes, e->size, r->at, 4, rb_odd_value(rng, len));
        break;
    }
    return true;
}

static bool mutate_cie_pointer(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, 0);
    if (!r)
        return false;
    uint64_t id = rb_load(e->bytes, e->size, r->id_at, r->id_size);
    struct rb_record *other = pick_record(e, rng, -1);
    uint64_t v;
    switch (rb_below(rng, 5)) {
    case 0: v = 0; break;                                /* a CIE id */
    case 1: /* the other section's CIE id */
        v = r->section == e->eh_frame ? UINT64_MAX : 0;
        break;
    case 2: v = id + rb_below(rng, 9) - 4; break;         /* near */
    case 3: /* another record, FDE or CIE, as this section counts */
        if (!other)
            v = 0;
        else if (r->section == e->eh_frame) /* relative to the field */
            v = r->id_at - other->at + rb_below(rng, 3) - 1;
        else                                /* a section offset */
            v = other->at - e->sections[r->section].offset;
        break;
    default: v = rb_odd_value(rng, id); break;
    }
    rb_store(e->bytes, e->size, r->id_at, r->id_size, v);
    return true;
}

static bool mutate_augmentation(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, 1);
    if (!r)
        return false;
    static const char letters[] = "zRPLSBGeh?Xy\x01\xff";
    static const char *const strings[] = {"zPLR", "zRS", "zLPR", "zR", "z",
                                          "eh", "RPL", "zzz", "zB", "zG"};
    uint64_t room = r->aug_len;
    if (room == 0 || rb_one_in(rng, 3)) {
        /* rewrite over the string and its NUL, into what follows */
        const char *s = PICK(rng, strings);
        size_t n = strlen(s) + (rb_one_in(rng, 4) ? 0 : 1);
        for (size_t i = 0; i < n; i++)
            rb_store(e->bytes, e->size, r->aug_at + i, 1, (uint8_t)s[i]);
    } else if (rb_one_in(rng, 2) && e->bytes[r->aug_at] == 'z') {
        e->bytes[r->aug_at] = (uint8_t)PICK(rng, "RPLSx"); /* drop the z */
    } else {
        uint64_t at = r->aug_at + rb_below(rng, room);
        e->bytes[at] = (uint8_t)letters[rb_below(rng, sizeof letters - 1)];
    }
    return true;
}

static bool mutate_pointer_encoding(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, 1);
    if (!r || r->nencs == 0)
        return false;
    static const uint8_t encs[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a,
                                   0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x1b,
                                   0x20, 0x30, 0x40, 0x50, 0x51, 0x60, 0x70,
                                   0x80, 0x9b, 0x9c, 0xff, 0x1f, 0x08};
    uint64_t at = r->enc_at[rb_below(rng, r->nencs)];
    e->bytes[at] = rb_one_in(rng, 8) ? (uint8_t)rb_next(rng) : PICK(rng, encs);
    return true;
}

static bool mutate_leb128(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, 1);
    if (!r || r->nlebs == 0)
        return false;
    uint64_t at = r->leb_at[rb_below(rng, r->nlebs)];
    uint64_t run = 1 + rb_below(rng, rb_one_in(rng, 2) ? 12 : 40);
    for (uint64_t i = 0; i < run && at + i < e->size; i++)
        e->bytes[at + i] = 0x80 | (uint8_t)(rb_one_in(rng, 2) ? 0x7f : rb_next(rng));
    if (rb_one_in(rng, 2) && at + run < e->size)
        e->bytes[at + run] = 0x7f & (uint8_t)rb_next(rng); /* ends it */
    return true;
}

/* ---- programs -------------------------------------------------------- */

struct writer {
    uint8_t *bytes;
    uint64_t at, end;
};

static void emit(struct writer *w, uint8_t byte)
{
    if (w->at < w->end)
        w->bytes[w->at++] = byte;
}

static void emit_uleb(struct writer *w, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        emit(w, byte | (v ? 0x80 : 0));
    } while (v && w->at < w->end);
}

static void emit_sleb(struct writer *w, int64_t v)
{
    for (unsigned i = 0; i < 10 && w->at < w->end; i++) {
        uint8_t byte = v & 0x7f;
        v >>= 7;  /* arithmetic on every compiler that cfisem builds with */
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        emit(w, byte | (done ? 0 : 0x80));
        if (done)
            break;
    }
}

static void emit_n(struct writer *w, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        emit(w, (uint8_t)(v >> (8 * i)));
}

static uint64_t some_register(struct rb_rng *rng)
{
    static const uint64_t odd[] = {17, 31, 32, 63, 64, 100, 127, 128, 255,
                                   0xffff, 0xffffffff, 0x100000001ull,
                                   0x8000000000000000ull, UINT64_MAX};
    if (rb_below(rng, 8) < 6)
        return rb_below(rng, 17);
    return PICK(rng, odd);
}

static int64_t some_offset(struct rb_rng *rng)
{
    switch (rb_below(rng, 4)) {
    case 0: return (int64_t)rb_below(rng, 64) - 32;
    case 1: return (int64_t)rb_below(rng, 4096) - 2048;
    case 2: return (int64_t)(rb_next(rng) >> rb_below(rng, 64));
    default: return INT64_MIN + (int64_t)rb_below(rng, 3);
    }
}

static void emit_expression_ops(struct writer *w, struct rb_rng *rng,
                                unsigned ops)
{
    static const uint8_t simple[] = {0x06, 0x12, 0x13, 0x14, 0x16, 0x17, 0x19,
                                     0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20,
                                     0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29,
                                     0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x96, 0x97,
                                     0x9c, 0x9f, 0x18, 0x9b, 0xe0, 0xf0, 0xff,
                                     0x00, 0x01, 0x02};
    for (unsigned i = 0; i < ops && w->at < w->end; i++) {
        switch (rb_below(rng, 12)) {
        case 0: emit(w, 0x30 + (uint8_t)rb_below(rng, 32)); break; /* lit */
        case 1: emit(w, 0x70 + (uint8_t)rb_below(rng, 32));        /* breg */
                emit_sleb(w, some_offset(rng)); break;
        case 2: emit(w, 0x50 + (uint8_t)rb_below(rng, 32)); break; /* reg */
        case 3: emit(w, PICK(rng, ((const uint8_t[]){0x2f, 0x28})));
                emit_n(w, (uint64_t)(int64_t)(rb_below(rng, 24) - 12), 2);
                break;                                       /* skip, bra */
        case 4: emit(w, PICK(rng, ((const uint8_t[]){0x94, 0x95, 0x15})));
                emit(w, (uint8_t)rb_below(rng, 12)); break; /* sizes, pick */
        case 5: emit(w, 0x08 + (uint8_t)rb_below(rng, 8));  /* constNx */
                emit_n(w, rb_next(rng), 1u << rb_below(rng, 4)); break;
        case 6: emit(w, PICK(rng, ((const uint8_t[]){0x10, 0x11, 0x23})));
                emit_uleb(w, (uint64_t)some_offset(rng)); break;
        case 7: emit(w, PICK(rng, ((const uint8_t[]){0x90, 0x92})));
                emit_uleb(w, some_register(rng));
                emit_sleb(w, some_offset(rng)); break;        /* regx, bregx */
        case 8: emit(w, 0x03); emit_n(w, rb_next(rng), 8); break; /* addr */
        default: emit(w, PICK(rng, simple)); break;
        }
    }
}

/* An expression block: ULEB length (now and then a wrong one), ops. */
static void emit_expression(struct writer *w, struct rb_rng *rng)
{
    uint64_t len_at = w->at;
    emit(w, 0);
    uint64_t start = w->at;
    emit_expression_ops(w, rng, 1 + (unsigned)rb_below(rng, 8));
    uint64_t len = w->at - start;
    if (rb_one_in(rng, 6))
        len = rb_one_in(rng, 2) ? len + 1 + rb_below(rng, 100) : 0x7f;
    if (len_at < w->end)
        w->bytes[len_at] = (uint8_t)(len & 0x7f);
}

static void emit_cfa_instruction(struct writer *w, struct rb_rng *rng)
{
    uint8_t op = (uint8_t)rb_below(rng, 0x31);
    switch (rb_below(rng, 8)) {
    case 0: emit(w, 0x40 | (uint8_t)rb_below(rng, 64)); return;
    case 1: emit(w, 0x80 | (uint8_t)rb_below(rng, 64));
            emit_uleb(w, (uint64_t)some_offset(rng) & 0xff); return;
    case 2: emit(w, 0xc0 | (uint8_t)rb_below(rng, 64)); return;
    default: break;
    }
    emit(w, op);
    switch (op) {
    case 0x01: emit_n(w, rb_next(rng), 8); break;           /* set_loc */
    case 0x02: emit_n(w, rb_next(rng), 1); break;
    case 0x03: emit_n(w, rb_next(rng), 2); break;
    case 0x04: emit_n(w, rb_next(rng) >> rb_below(rng, 64), 4); break;
    case 0x1d: emit_n(w, rb_next(rng), 8); break;           /* MIPS loc8 */
    case 0x05: case 0x09: case 0x0c: case 0x14: case 0x2f:
        emit_uleb(w, some_register(rng));
        emit_uleb(w, op == 0x09 ? some_register(rng) : (uint64_t)some_offset(rng));
        break;
    case 0x11: case 0x12: case 0x15:
        emit_uleb(w, some_register(rng));
        emit_sleb(w, some_offset(rng));
        break;
    case 0x06: case 0x07: case 0x08: case 0x0d:
        emit_uleb(w, some_register(rng)); break;
    case 0x0e: case 0x2e: emit_uleb(w, (uint64_t)some_offset(rng)); break;
    case 0x13: emit_sleb(w, some_offset(rng)); break;
    case 0x0f: emit_expression(w, rng); break;
    case 0x10: case 0x16:
        emit_uleb(w, some_register(rng));
        emit_expression(w, rng);
        break;
    default: break;  /* no operands: nop, remember, restore, unknown */
    }
}

static struct rb_record *record_with_program(struct rb_elf *e,
                                             struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, rb_one_in(rng, 4) ? 1 : 0);
    if (!r || r->insns_len == 0)
        r = pick_record(e, rng, -1);
    return r && r->insns_len ? r : NULL;
}

static bool mutate_cfa_program(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = record_with_program(e, rng);
    if (!r)
        return false;
    struct writer w = {e->bytes, r->insns_at, r->insns_at + r->insns_len};
    if (rb_one_in(rng, 3))
        w.at += rb_below(rng, r->insns_len);   /* keep a prefix */
    unsigned n = 1 + (unsigned)rb_below(rng, 24);
    for (unsigned i = 0; i < n && w.at < w.end; i++)
        emit_cfa_instruction(&w, rng);
    while (w.at < w.end)
        emit(&w, 0);
    return true;
}

static bool mutate_dwarf_expression(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = record_with_program(e, rng);
    if (!r)
        return false;
    struct writer w = {e->bytes, r->insns_at, r->insns_at + r->insns_len};
    if (w.end - w.at < 8)  /* room: run over into what follows */
        w.end = w.at + 8 <= e->size ? w.at + 8 : e->size;
    static const uint8_t rules[] = {0x0f, 0x10, 0x16};
    uint8_t rule = PICK(rng, rules);
    emit(&w, rule);
    if (rule != 0x0f)
        emit_uleb(&w, rb_below(rng, 4) ? rb_below(rng, 17) : some_register(rng));
    emit_expression(&w, rng);
    while (w.at < w.end)
        emit(&w, 0);
    return true;
}

static bool mutate_fde_pc(struct rb_elf *e, struct rb_rng *rng)
{
    struct rb_record *r = pick_record(e, rng, 0);
    if (!r || r->pc_size == 0)
        return false;
    unsigned n = r->pc_size;
    uint64_t begin = rb_load(e->bytes, e->size, r->pc_at, n);
    uint64_t range = rb_load(e->bytes, e->size, r->range_at, n);
    struct rb_record *other = pick_record(e, rng, 0);
    switch (rb_below(rng, 5)) {
    case 0: rb_store(e->bytes, e->size, r->pc_at, n, rb_odd_value(rng, begin)); break;
    case 1: rb_store(e->bytes, e->size, r->range_at, n, rb_odd_value(rng, range)); break;
    case 2: /* wraps past the top */
        rb_store(e->bytes, e->size, r->pc_at, n, UINT64_MAX - rb_below(rng, 16));
        rb_store(e->bytes, e->size, r->range_at, n, 16 + rb_below(rng, 64));
        break;
    case 3: /* overlaps another FDE (same encoded begin: near for pcrel) */
        if (other && other != r)
            rb_store(e->bytes, e->size, r->pc_at, n,
                     rb_load(e->bytes, e->size, other->pc_at, n) +
                         (other->pc_at - r->pc_at) * rb_below(rng, 2));
        rb_store(e->bytes, e->size, r->range_at, n, range + rb_below(rng, 64));
        break;
    default: rb_store(e->bytes, e->size, r->range_at, n, 0); break;
    }
    return true;
}

/* ---- the file's structure ------------------------------------------- */

static bool mutate_truncate(struct rb_elf *e, struct rb_mutant *m,
                            struct rb_rng *rng)
{
    if (m->size == 0)
        return false;
    const struct rb_section *s = pick_frame_section(e, rng);
    struct rb_record *r = pick_record(e, rng, -1);
    size_t cut;
    switch (rb_below(rng, 4)) {
    case 0: cut = (size_t)rb_below(rng, m->size); break;
    case 1: cut = s ? (size_t)(s->offset + rb_below(rng, s->size + 1))
                    : (size_t)rb_below(rng, m->size); break;
    case 2: cut = r ? (size_t)(r->at + r->total + rb_below(rng, 3) - 1)
                    : m->size / 2; break;
    default: cut = (size_t)rb_below(rng, 128); break;
    }
    if (cut >= m->size)
        cut = m->size - 1;
    m->size = cut;
    return true;
}

/* A field of a header: its offset in the header and its size. */
struct field {
    unsigned at, n;
};

/* One of `n` fields of the header at `base` gets an odd value. */
static void break_field(struct rb_elf *e, struct rb_rng *rng, uint64_t base,
                        const struct field *fields, unsigned n)
{
    const struct field *f = &fields[rb_below(rng, n)];
    uint64_t old = rb_load(e->bytes, e->size, base + f->at, f->n);
    rb_store(e->bytes, e->size, base + f->at, f->n, rb_odd_value(rng, old));
}

static bool mutate_section_header(struct rb_elf *e, struct rb_rng *rng)
{
    if (!e->elf64)
        return false;
    if (e->nsections == 0 || rb_one_in(rng, 6)) {
        /* the ELF header's view of the table */
        static const struct field fields[] = {{0x28, 8}, {0x3a, 2}, {0x3c, 2},
                                              {0x3e, 2}};
        break_field(e, rng, 0, fields, 4);
        return true;
    }
    const struct rb_section *s = rb_one_in(rng, 2) ? pick_frame_section(e, rng) : NULL;
    if (!s && e->nrela && rb_one_in(rng, 2))
        s = &e->sections[e->rela[rb_below(rng, e->nrela)]];
    if (!s)
        s = &e->sections[rb_below(rng, e->nsections)];
    static const struct { unsigned at, n; } fields[] = {
        {0x00, 4}, {0x04, 4}, {0x08, 8}, {0x10, 8}, {0x18, 8}, {0x20, 8},
        {0x28, 4}, {0x2c, 4}, {0x30, 8}, {0x38, 8}, {0x18, 8}, {0x20, 8}};
    unsigned k = (unsigned)rb_below(rng, sizeof fields / sizeof fields[0]);
    uint64_t old = rb_load(e->bytes, e->size, s->header + fields[k].at, fields[k].n);
    uint64_t v = rb_odd_value(rng, old);
    if (fields[k].at == 0x04 && rb_one_in(rng, 2))
        v = PICK(rng, ((const uint64_t[]){0, 1, 2, 3, 4, 8, 9, 11, 0x6ffffff6}));
    rb_store(e->bytes, e->size, s->header + fields[k].at, fields[k].n, v);
    return true;
}

static bool mutate_program_header(struct rb_elf *e, struct rb_rng *rng)
{
    if (!e->elf64)
        return false;
    if (e->phnum == 0 || e->phoff > e->size || rb_one_in(rng, 5)) {
        static const struct field fields[] = {{0x20, 8}, {0x36, 2}, {0x38, 2}};
        break_field(e, rng, 0, fields, 3);
        return true;
    }
    uint64_t h = e->phoff + 56 * rb_below(rng, e->phnum);
    static const struct { unsigned at, n; } fields[] = {
        {0x00, 4}, {0x04, 4}, {0x08, 8}, {0x10, 8}, {0x18, 8}, {0x20, 8},
        {0x28, 8}, {0x30, 8}};
    unsigned k = (unsigned)rb_below(rng, sizeof fields / sizeof fields[0]);
    uint64_t old = rb_load(e->bytes, e->size, h + fields[k].at, fields[k].n);
    uint64_t v = rb_odd_value(rng, old);
    if (k == 0 && rb_one_in(rng, 2))
        v = PICK(rng, ((const uint64_t[]){0, 1, 2, 4, 0x6474e550, 0x6474e551,
                                          0x6474e552, 7}));
    rb_store(e->bytes, e->size, h + fields[k].at, fields[k].n, v);
    return true;
}

static bool mutate_eh_frame_hdr(struct rb_elf *e, struct rb_rng *rng)
{
    if (e->eh_frame_hdr < 0)
        return false;
    const struct rb_section *s = &e->sections[e->eh_frame_hdr];
    if (s->size < 12)
        return false;
    static const uint8_t encs[] = {0x00, 0x03, 0x0b, 0x1b, 0x3b, 0x9b, 0xff,
                                   0x01, 0x0c, 0x50, 0x0f, 0x04};
    uint64_t at = s->offset;
    uint64_t count = rb_load(e->bytes, e->size, at + 8, 4);
    switch (rb_below(rng, 6)) {
    case 0: e->bytes[at] = PICK(rng, ((const uint8_t[]){0, 2, 255})); break;
    case 1: e->bytes[at + 1 + rb_below(rng, 3)] = PICK(rng, encs); break;
    case 2: rb_store(e->bytes, e->size, at + 4, 4, rb_odd_value(rng, 0)); break;
    case 3: rb_store(e->bytes, e->size, at + 8, 4, rb_odd_value(rng, count)); break;
    default: { /* a table entry: swap two, or one value anywhere */
        uint64_t entries = (s->size - 12) / 8;
        if (entries == 0)
            return false;
        uint64_t a = at + 12 + 8 * rb_below(rng, entries);
        uint64_t b = at + 12 + 8 * rb_below(rng, entries);
        uint64_t va = rb_load(e->bytes, e->size, a, 8);
        if (rb_one_in(rng, 2)) {
            rb_store(e->bytes, e->size, a, 8, rb_load(e->bytes, e->size, b, 8));
            rb_store(e->bytes, e->size, b, 8, va);
        } else {
            rb_store(e->bytes, e->size, a + 4 * rb_below(rng, 2), 4,
                     rb_odd_value(rng, va & 0xffffffff));
        }
    }
    }
    return true;
}

static bool mutate_relocation(struct rb_elf *e, struct rb_rng *rng)
{
    if (e->nrela == 0)
        return false;
    const struct rb_section *s = &e->sections[e->rela[rb_below(rng, e->nrela)]];
    uint64_t entries = s->size / 24;
    if (entries == 0)
        return false;
    uint64_t at = s->offset + 24 * rb_below(rng, entries);
    static const uint32_t types[] = {0, 1, 2, 10, 11, 24, 26, 0x99, 0xffffffff, 8};
    switch (rb_below(rng, 4)) {
    case 0: rb_store(e->bytes, e->size, at, 8,
                     rb_odd_value(rng, rb_load(e->bytes, e->size, at, 8))); break;
    case 1: rb_store(e->bytes, e->size, at + 8, 4, PICK(rng, types)); break;
    case 2: rb_store(e->bytes, e->size, at + 12, 4,
                     rb_odd_value(rng, rb_load(e->bytes, e->size, at + 12, 4))); break;
    default: rb_store(e->bytes, e->size, at + 16, 8, rb_odd_value(rng, 0)); break;
    }
    return true;
}

static bool mutate_elf_header(struct rb_elf *e, struct rb_rng *rng)
{
    if (e->size < 64)
        return false;
    switch (rb_below(rng, 6)) {
    case 0: e->bytes[4] = PICK(rng, ((const uint8_t[]){0, 1, 3, 255})); break;
    case 1: e->bytes[5] = PICK(rng, ((const uint8_t[]){0, 2, 3})); break;
    case 2: e->bytes[6] = PICK(rng, ((const uint8_t[]){0, 2, 255})); break;
    case 3: rb_store(e->bytes, e->size, 0x10, 2,
                     PICK(rng, ((const uint64_t[]){0, 1, 2, 3, 4, 0xfe00, 0xffff}))); break;
    case 4: rb_store(e->bytes, e->size, 0x12, 2,
                     PICK(rng, ((const uint64_t[]){0, 3, 40, 62, 183, 243, 0xffff}))); break;
    default: rb_store(e->bytes, e->size, 0x34, 2, rb_odd_value(rng, 64)); break;
    }
    return true;
}

static bool mutate_byte_flip(struct rb_elf *e, struct rb_rng *rng)
{
    const struct rb_section *s = pick_frame_section(e, rng);
    uint64_t base = 0, size = e->size;
    if (s && s->size) {
        base = s->offset;
        size = s->size;
    }
    if (size == 0)
        return false;
    unsigned n = 1 + (unsigned)rb_below(rng, 8);
    for (unsigned i = 0; i < n; i++) {
        uint64_t at = base + rb_below(rng, size);
        e->bytes[at] = rb_one_in(rng, 2) ? (uint8_t)rb_next(rng)
                                         : e->bytes[at] ^ (uint8_t)(1u << rb_below(rng, 8));
    }
    return true;
}

/* What the mutant's bytes are: an ELF file, or (bare) a frame section
 * from `at` on. */
struct layout {
    bool bare, debug;
    uint64_t at;
};

static bool mutate_one(struct rb_mutant *m, const struct layout *layout,
                       enum rb_kind kind, struct rb_rng *rng);

static bool mutate_combination(struct rb_mutant *m,
                               const struct layout *layout,
                               struct rb_rng *rng)
{
    unsigned n = 2 + (unsigned)rb_below(rng, 3), done = 0;
    for (unsigned i = 0; i < 4 * n && done < n; i++) {
        enum rb_kind k = (enum rb_kind)rb_below(rng, RB_KIND_combination);
        /* truncation last, or it would leave the others little to do */
        if (k == RB_KIND_truncate && done + 1 < n)
            continue;
        done += mutate_one(m, layout, k, rng);
    }
    return done > 0;
}

/* The file is read again before each mutation: an earlier one of a
 * combination may have moved what the next one aims at. */
static bool mutate_one(struct rb_mutant *m, const struct layout *layout,
                       enum rb_kind kind, struct rb_rng *rng)
{
    struct rb_elf e;
    bool perf = !layout->bare && rb_is_perf(m->bytes, m->size);
    if (perf && kind < RB_KIND_truncate)
        return false;   /* a perf.data has no CFI records */
    if (perf && kind > RB_KIND_truncate && kind < RB_KIND_byte_flip)
        return false;   /* nor ELF headers */
    if (layout->bare)
        rb_section_scan(&e, m->bytes, m->size, layout->at, layout->debug);
    else
        rb_elf_scan(&e, m->bytes, m->size);
    switch (kind) {
    case RB_KIND_record_length: return mutate_record_length(&e, rng);
    case RB_KIND_cie_pointer: return mutate_cie_pointer(&e, rng);
    case RB_KIND_augmentation: return mutate_augmentation(&e, rng);
    case RB_KIND_pointer_encoding: return mutate_pointer_encoding(&e, rng);
    case RB_KIND_leb128: return mutate_leb128(&e, rng);
    case RB_KIND_cfa_program: return mutate_cfa_program(&e, rng);
    case RB_KIND_dwarf_expression: return mutate_dwarf_expression(&e, rng);
    case RB_KIND_fde_pc: return mutate_fde_pc(&e, rng);
    case RB_KIND_truncate: return mutate_truncate(&e, m, rng);
    case RB_KIND_section_header: return mutate_section_header(&e, rng);
    case RB_KIND_program_header: return mutate_program_header(&e, rng);
    case RB_KIND_eh_frame_hdr: return mutate_eh_frame_hdr(&e, rng);
    case RB_KIND_relocation: return mutate_relocation(&e, rng);
    case RB_KIND_elf_header: return mutate_elf_header(&e, rng);
    case RB_KIND_byte_flip: return mutate_byte_flip(&e, rng);
    case RB_KIND_perf_header: case RB_KIND_perf_attr:
    case RB_KIND_perf_record: case RB_KIND_perf_sample:
    case RB_KIND_perf_zstd: case RB_KIND_core_note:
    case RB_KIND_compressed_section:
        return !layout->bare && rb_mutate_format(m, &e, kind, rng);
    case RB_KIND_combination: return mutate_combination(m, layout, rng);
    case RB_NKINDS: break;
    }
    return false;
}

static const struct layout elf_file = {false, false, 0};

bool rb_mutate(struct rb_mutant *m, enum rb_kind kind, struct rb_rng *rng)
{
    return mutate_one(m, &elf_file, kind, rng);
}

bool rb_mutate_section(struct rb_mutant *m, uint64_t at, bool debug,
                       enum rb_kind kind, struct rb_rng *rng)
{
    const struct layout bare = {true, debug, at};
    return mutate_one(m, &bare, kind, rng);
}

size_t rb_cfa_instruction(uint8_t *out, size_t capacity, struct rb_rng *rng)
{
    struct writer w = {out, 0, capacity};
    emit_cfa_instruction(&w, rng);
    return (size_t)w.at;
}

size_t rb_expression_rule(uint8_t *out, size_t capacity, struct rb_rng *rng)
{
    struct writer w = {out, 0, capacity};
    static const uint8_t rules[] = {0x0f, 0x10, 0x16};
    uint8_t rule = PICK(rng, rules);
    emit(&w, rule);
    if (rule != 0x0f)
        emit_uleb(&w, rb_below(rng, 4) ? rb_below(rng, 17) : some_register(rng));
    emit_expression(&w, rng);
    return (size_t)w.at;
}

void rb_make_mutant(struct rb_mutant *m, uint64_t seed, uint64_t index,
                    enum rb_kind *kind)
{
    struct rb_rng rng;
    rb_rng_seed(&rng, seed, index);
    enum rb_kind k = (enum rb_kind)(index % RB_NKINDS);
    for (unsigned tries = 0; tries < 2 * RB_NKINDS; tries++) {
        if (mutate_one(m, &elf_file, k, &rng)) {
            *kind = k;
            return;
        }
        k = (enum rb_kind)rb_below(&rng, RB_NKINDS);
    }
    *kind = RB_KIND_byte_flip;
    mutate_one(m, &elf_file, RB_KIND_byte_flip, &rng);
}
