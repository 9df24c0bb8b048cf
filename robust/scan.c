/* SPDX-License-Identifier: MIT */
/* scan.c — the mutator's own reading of ELF64 section headers and of the
 * CIE/FDE records of .eh_frame and .debug_frame (DWARF 5 §6.4.1, the LSB
 * .eh_frame format). Every read is bounded by the file; what does not
 * parse is left out. */
#include <string.h>

#include "robust.h"

uint64_t rb_load(const uint8_t *bytes, size_t size, uint64_t at, unsigned n)
{
    uint64_t v = 0;
    if (at > size || n > size - at)
        return 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)bytes[at + i] << (8 * i);
    return v;
}

void rb_store(uint8_t *bytes, size_t size, uint64_t at, unsigned n,
              uint64_t value)
{
    for (unsigned i = 0; i < n && at + i < size; i++)
        bytes[at + i] = (uint8_t)(value >> (8 * i));
}

uint64_t rb_leb_len(const uint8_t *bytes, size_t size, uint64_t at)
{
    uint64_t n = 0;
    while (at + n < size) {
        if (!(bytes[at + n++] & 0x80))
            break;
    }
    return n;
}

static uint64_t read_uleb(const uint8_t *b, size_t size, uint64_t *at)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (*at < size) {
        uint8_t byte = b[(*at)++];
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
        if (!(byte & 0x80))
            break;
    }
    return v;
}

static void scan_sections(struct rb_elf *e)
{
    uint64_t shentsize = rb_load(e->bytes, e->size, 0x3a, 2);
    uint64_t shstrndx = rb_load(e->bytes, e->size, 0x3e, 2);
    if (shentsize != 64 || e->shoff > e->size ||
        e->shnum > (e->size - e->shoff) / 64)
        return;
    uint64_t strtab = 0, strsize = 0;
    if (shstrndx < e->shnum) {
        uint64_t h = e->shoff + 64 * shstrndx;
        strtab = rb_load(e->bytes, e->size, h + 0x18, 8);
        strsize = rb_load(e->bytes, e->size, h + 0x20, 8);
        if (strtab > e->size || strsize > e->size - strtab)
            strsize = 0;
    }
    for (unsigned i = 0; i < e->shnum && e->nsections < RB_MAX_SECTIONS; i++) {
        uint64_t h = e->shoff + 64 * (uint64_t)i;
        struct rb_section *s = &e->sections[e->nsections++];
        memset(s, 0, sizeof *s);
        s->header = h;
        s->type = (uint32_t)rb_load(e->bytes, e->size, h + 4, 4);
        s->addr = rb_load(e->bytes, e->size, h + 0x10, 8);
        s->offset = rb_load(e->bytes, e->size, h + 0x18, 8);
        s->size = rb_load(e->bytes, e->size, h + 0x20, 8);
        s->link = rb_load(e->bytes, e->size, h + 0x28, 4);
        s->info = rb_load(e->bytes, e->size, h + 0x2c, 4);
        uint64_t name = rb_load(e->bytes, e->size, h, 4);
        for (unsigned k = 0; name < strsize && k + 1 < sizeof s->name; k++) {
            char c = (char)e->bytes[strtab + name + k];
            if (!c || name + k + 1 >= strsize)
                break;
            s->name[k] = c;
        }
    }
}

static bool section_readable(const struct rb_elf *e, const struct rb_section *s)
{
    return s->type != 8 /* SHT_NOBITS */ && s->offset <= e->size &&
           s->size <= e->size - s->offset;
}

static void find_named(struct rb_elf *e)
{
    for (unsigned i = 0; i < e->nsections; i++) {
        const struct rb_section *s = &e->sections[i];
        if (!section_readable(e, s))
            continue;
        if (!strcmp(s->name, ".eh_frame"))
            e->eh_frame = (int)i;
        else if (!strcmp(s->name, ".debug_frame"))
            e->debug_frame = (int)i;
        else if (!strcmp(s->name, ".eh_frame_hdr"))
            e->eh_frame_hdr = (int)i;
        else if (s->type == 4 /* SHT_RELA */ && e->nrela < 4)
            e->rela[e->nrela++] = (int)i;
    }
}

/* Size of a pointer of DW_EH_PE encoding `enc`; 0 for uleb/sleb/omit. */
static unsigned encoded_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case 0x00: return 8;
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    case 0x04: case 0x0c: return 8;
    default: return 0;
    }
}

static void scan_cie(struct rb_elf *e, struct rb_record *r, uint64_t end,
                     bool debug)
{
    uint64_t p = r->id_at + r->id_size;
    uint8_t version = (uint8_t)rb_load(e->bytes, e->size, p++, 1);
    r->aug_at = p;
    while (p < end && e->bytes[p])
        p++;
    r->aug_len = p - r->aug_at;
    p++;
    if (debug && version >= 4)
        p += 2;  /* address_size, segment_selector_size */
    for (unsigned i = 0; i < 3 && p < end; i++) {
        r->leb_at[r->nlebs++] = p;
        if (i == 2 && version == 1)
            p++;
        else
            read_uleb(e->bytes, end, &p);
    }
    r->has_z = r->aug_len > 0 && e->bytes[r->aug_at] == 'z';
    uint64_t data_end = p;
    if (r->has_z && p < end) {
        r->leb_at[r->nlebs++] = p;
        uint64_t len = read_uleb(e->bytes, end, &p);
        data_end = len <= end - p ? p + len : end;
        for (uint64_t k = 1; k < r->aug_len && p < data_end; k++) {
            char c = (char)e->bytes[r->aug_at + k];
            if (c != 'R' && c != 'P' && c != 'L')
                continue;
            uint8_t enc = e->bytes[p];
            if (r->nencs < RB_MAX_ENCODINGS)
                r->enc_at[r->nencs++] = p;
            p++;
            if (c == 'R')
                r->fde_encoding = enc;
            if (c == 'P')
                p += encoded_size(enc);
        }
    }
    r->insns_at = data_end < end ? data_end : end;
    r->insns_len = end - r->insns_at;
}

static int find_record(const struct rb_elf *e, int section, uint64_t at)
{
    for (unsigned i = 0; i < e->nrecords; i++)
        if (e->records[i].section == section && e->records[i].at == at)
            return (int)i;
    return -1;
}

static void scan_fde(struct rb_elf *e, struct rb_record *r, uint64_t end,
                     bool debug, uint64_t cie_at)
{
    r->cie = find_record(e, r->section, cie_at);
    const struct rb_record *cie =
        r->cie >= 0 && e->records[r->cie].is_cie ? &e->records[r->cie] : NULL;
    unsigned pc_size = debug ? 8 : 4;
    if (cie && !debug)
        pc_size = encoded_size(cie->fde_encoding) ? encoded_size(cie->fde_encoding)
                                                  : 4;
    r->pc_size = pc_size;
    r->pc_at = r->id_at + r->id_size;
    r->range_at = r->pc_at + pc_size;
    uint64_t p = r->range_at + pc_size;
    if (cie && cie->has_z && p < end) {
        uint64_t len = read_uleb(e->bytes, end, &p);
        p = len <= end - p ? p + len : end;
    }
    r->insns_at = p < end ? p : end;
    r->insns_len = end - r->insns_at;
}

static void scan_frames(struct rb_elf *e, int section, bool debug)
{
    const struct rb_section *s = &e->sections[section];
    uint64_t pos = s->offset, end = s->offset + s->size;
    while (pos + 4 <= end && e->nrecords < RB_MAX_RECORDS) {
        uint64_t len = rb_load(e->bytes, e->size, pos, 4);
        unsigned len_size = 4, id_size = 4;
        if (len == 0)
            break;
        if (len == 0xffffffff) {
            len = rb_load(e->bytes, e->size, pos + 4, 8);
            len_size = 12;
            id_size = 8;
        }
        if (len < id_size || len > end - pos - len_size)
            break;
        struct rb_record *r = &e->records[e->nrecords++];
        memset(r, 0, sizeof *r);
        r->section = section;
        r->at = pos;
        r->total = len_size + len;
        r->id_at = pos + len_size;
        r->id_size = id_size;
        r->cie = -1;
        uint64_t id = rb_load(e->bytes, e->size, r->id_at, id_size);
        uint64_t rec_end = pos + r->total;
        uint64_t cie_mark = id_size == 8 ? UINT64_MAX : 0xffffffff;
        r->is_cie = debug ? id == cie_mark : id == 0;
        if (r->is_cie)
            scan_cie(e, r, rec_end, debug);
        else
            scan_fde(e, r, rec_end, debug,
                     debug ? s->offset + id : r->id_at - id);
        pos = rec_end;
    }
}

void rb_elf_scan(struct rb_elf *e, uint8_t *bytes, size_t size)
{
    memset(e, 0, sizeof *e);
    e->bytes = bytes;
    e->size = size;
    e->eh_frame = e->debug_frame = e->eh_frame_hdr = -1;
    e->elf64 = size >= 64 && !memcmp(bytes, "\x7f" "ELF", 4) &&
               bytes[4] == 2 && bytes[5] == 1;
    if (!e->elf64)
        return;
    e->phoff = rb_load(bytes, size, 0x20, 8);
    e->shoff = rb_load(bytes, size, 0x28, 8);
    e->phnum = (unsigned)rb_load(bytes, size, 0x38, 2);
    e->shnum = (unsigned)rb_load(bytes, size, 0x3c, 2);
    scan_sections(e);
    find_named(e);
    if (e->eh_frame >= 0)
        scan_frames(e, e->eh_frame, false);
    if (e->debug_frame >= 0)
        scan_frames(e, e->debug_frame, true);
}

void rb_section_scan(struct rb_elf *e, uint8_t *bytes, size_t size,
                     uint64_t at, bool debug)
{
    memset(e, 0, sizeof *e);
    e->bytes = bytes;
    e->size = size;
    e->eh_frame = e->debug_frame = e->eh_frame_hdr = -1;
    if (at > size)
        return;
    struct rb_section *s = &e->sections[e->nsections++];
    strcpy(s->name, debug ? ".debug_frame" : ".eh_frame");
    s->type = 1; /* SHT_PROGBITS */
    s->offset = at;
    s->size = size - at;
    if (debug)
        e->debug_frame = 0;
    else
        e->eh_frame = 0;
    scan_frames(e, 0, debug);
}
