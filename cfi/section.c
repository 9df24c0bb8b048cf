/* SPDX-License-Identifier: MIT */
/* section.c — our own parser of a whole .eh_frame or .debug_frame, written
 * from the formats (DWARF 5 §6.4.1, LSB Core ".eh_frame section") and
 * independent of libdwarf. cfi_file_open runs it over the raw sections
 * before libdwarf sees them, so that libdwarf only ever reads sections
 * this parser accepts; cfi_file_from_section returns its result.
 *
 * A zero initial length ends .eh_frame; in .debug_frame it is padding
 * (see walk). Every error is reported at the offset of the record that holds it. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define PARSE_PROBLEMS(X)                                                   \
    X(TRUNCATED_LENGTH, "truncated record length")                          \
    X(LENGTH_PAST_END, "record length runs past the end of the section")    \
    X(RECORD_TOO_SHORT, "record too short for its CIE id")                  \
    X(BAD_VERSION, "bad CIE version")                                       \
    X(CIE_PAST_END, "CIE runs past its length")                             \
    X(LEB128_OVERFLOW, "LEB128 value overflows 64 bits")                    \
    X(AUGMENTATION_UNTERMINATED, "augmentation string runs past the record") \
    X(AUGMENTATION_TOO_LONG, "augmentation string too long")                \
    X(AUGMENTATION_UNSUPPORTED, "unsupported augmentation")                 \
    X(AUGMENTATION_DATA_PAST_END, "augmentation data runs past the record") \
    X(ADDRESS_SIZE, "unsupported address size")                             \
    X(SEGMENT_SIZE, "segment selectors are not supported")                  \
    X(FDE_ENCODING, "unsupported FDE pointer encoding")                     \
    X(CIE_POINTER_OUT_OF_RANGE, "CIE pointer out of range")                 \
    X(CIE_POINTER_NOT_CIE, "CIE pointer does not point to a CIE")          \
    X(RANGE_WRAPS, "FDE address range wraps around")

enum parse_problem {
#define PROBLEM_ENUM(name, text) PROBLEM_##name,
    PARSE_PROBLEMS(PROBLEM_ENUM)
#undef PROBLEM_ENUM
    PROBLEM_COUNT
};

static const char *const problem_messages[2][PROBLEM_COUNT] = {
    [CFI_EH_FRAME] = {
#define PROBLEM_EH(name, text) [PROBLEM_##name] = ".eh_frame: " text,
        PARSE_PROBLEMS(PROBLEM_EH)
#undef PROBLEM_EH
    },
    [CFI_DEBUG_FRAME] = {
#define PROBLEM_DEBUG(name, text) [PROBLEM_##name] = ".debug_frame: " text,
        PARSE_PROBLEMS(PROBLEM_DEBUG)
#undef PROBLEM_DEBUG
    },
};

static enum cfi_status status_of(enum parse_problem problem)
{
    switch (problem) {
    case PROBLEM_AUGMENTATION_TOO_LONG:
    case PROBLEM_AUGMENTATION_UNSUPPORTED:
    case PROBLEM_ADDRESS_SIZE:
    case PROBLEM_SEGMENT_SIZE:
    case PROBLEM_FDE_ENCODING:
        return CFI_E_UNSUPPORTED;
    default:
        return CFI_E_MALFORMED;
    }
}

struct parser {
    struct cfi_builder *builder;
    const uint8_t *bytes;
    size_t size;
    enum cfi_section section;
    uint64_t addr;
    size_t first_cie;        /* builder->cies index of this section's first */
    struct cfi_diag *diag;
};

/* The frame of one record: initial length, then CIE id or CIE pointer. */
struct record {
    size_t offset;           /* of the length field */
    uint64_t length;         /* after the length field */
    unsigned offset_size;    /* 4, or 8 after the 0xffffffff escape */
    size_t id_pos;           /* of the CIE id / CIE pointer field */
    uint64_t id;
    size_t body;             /* first byte after the id */
    size_t end;              /* one past the record */
    bool terminator;         /* zero length */
};

static enum cfi_status fail(const struct parser *p, const struct record *rec,
                            enum parse_problem problem)
{
    return cfi_fail(p->diag, status_of(problem), rec->offset,
                    problem_messages[p->section][problem]);
}

static enum cfi_status fail_read(const struct parser *p,
                                 const struct record *rec, enum cfi_read read,
                                 enum parse_problem past_end)
{
    return fail(p, rec, read == CFI_READ_OVERFLOW ? PROBLEM_LEB128_OVERFLOW
                                                  : past_end);
}

static enum cfi_status read_record(const struct parser *p, size_t pos,
                                   struct record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->offset = pos;
    size_t left = p->size - pos;
    if (left < 4)
        return fail(p, rec, PROBLEM_TRUNCATED_LENGTH);
    uint64_t length = cfi_load_le(p->bytes + pos, 4);
    size_t header = 4;
    rec->offset_size = 4;
    if (length == 0xffffffff) {
        if (left < 12)
            return fail(p, rec, PROBLEM_TRUNCATED_LENGTH);
        length = cfi_load_le(p->bytes + pos + 4, 8);
        header = 12;
        rec->offset_size = 8;
    } else if (length == 0) {
        /* LSB for .eh_frame: "processing shall end". DWARF 5 6.4.1
         * defines no terminator for .debug_frame: see walk(). */
        rec->terminator = true;
        rec->end = pos + 4;
        return CFI_OK;
    }
    if (length > left - header)
        return fail(p, rec, PROBLEM_LENGTH_PAST_END);
    if (length < rec->offset_size)
        return fail(p, rec, PROBLEM_RECORD_TOO_SHORT);
    rec->length = length;
    rec->id_pos = pos + header;
    rec->id = cfi_load_le(p->bytes + rec->id_pos, rec->offset_size);
    rec->body = rec->id_pos + rec->offset_size;
    rec->end = pos + header + (size_t)length;
    return CFI_OK;
}

/* .eh_frame marks a CIE with id 0; .debug_frame with all ones. */
static bool is_cie(const struct parser *p, const struct record *rec)
{
    if (p->section == CFI_EH_FRAME)
        return rec->id == 0;
    return rec->id == (rec->offset_size == 8 ? UINT64_MAX : 0xffffffff);
}

/* The 'R' encoding must be decodable from the section alone, since every
 * FDE of the CIE is decoded with it. */
static bool fde_encoding_supported(uint8_t encoding)
{
    uint8_t format = encoding & 0x0f, application = encoding & 0xf0;
    bool format_ok = format <= CFI_PE_UDATA8 || format == 0x08 ||
                     (format >= CFI_PE_SLEB128 && format <= CFI_PE_SDATA8);
    return format_ok && (application == 0 || application == CFI_PE_PCREL);
}

/* An augmentation without 'z' is read only when it carries no data: the
 * letters of such strings would have their fields before the alignment
 * factors ("eh" has a pointer). gas writes "S" alone in .debug_frame for
 * a signal frame. */
static bool dataless_augmentation(const uint8_t *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != 'S')
            return false;
    return true;
}

/* version, augmentation string, and (version 4) address and segment
 * selector sizes. A non-empty augmentation without 'z' is refused here
 * unless it carries no data. */
static enum cfi_status read_cie_header(const struct parser *p,
                                       const struct record *rec,
                                       struct cfi_cursor *cur,
                                       struct cfi_cie *cie)
{
    if (cfi_read_u8(cur, &cie->version) != CFI_READ_OK)
        return fail(p, rec, PROBLEM_CIE_PAST_END);
    if (cie->version != 1 && cie->version != 3 && cie->version != 4)
        return fail(p, rec, PROBLEM_BAD_VERSION);
    const uint8_t *text = p->bytes + cur->pos;
    const uint8_t *nul = memchr(text, 0, cur->end - cur->pos);
    if (!nul)
        return fail(p, rec, PROBLEM_AUGMENTATION_UNTERMINATED);
    size_t len = (size_t)(nul - text);
    if (len >= CFI_AUGMENTATION_MAX)
        return fail(p, rec, PROBLEM_AUGMENTATION_TOO_LONG);
    memcpy(cie->augmentation, text, len);
    cie->augmentation[len] = '\0';
    cur->pos += len + 1;
    if (len > 0 && text[0] != 'z' && !dataless_augmentation(text, len))
        return fail(p, rec, PROBLEM_AUGMENTATION_UNSUPPORTED);
    cie->address_size = 8;
    if (cie->version == 4) {
        uint8_t segment_size;
        if (cfi_read_u8(cur, &cie->address_size) != CFI_READ_OK ||
            cfi_read_u8(cur, &segment_size) != CFI_READ_OK)
            return fail(p, rec, PROBLEM_CIE_PAST_END);
        if (cie->address_size != 4 && cie->address_size != 8)
            return fail(p, rec, PROBLEM_ADDRESS_SIZE);
        if (segment_size != 0)
            return fail(p, rec, PROBLEM_SEGMENT_SIZE);
    }
    return CFI_OK;
}

/* Code and data alignment factors, return address column (a ubyte in
 * version 1, a ULEB128 from version 3 on). */
static enum cfi_status read_cie_factors(const struct parser *p,
                                        const struct record *rec,
                                        struct cfi_cursor *cur,
                                        struct cfi_cie *cie)
{
    enum cfi_read read = cfi_read_uleb(cur, &cie->code_align);
    if (read == CFI_READ_OK)
        read = cfi_read_sleb(cur, &cie->data_align);
    if (read == CFI_READ_OK && cie->version == 1) {
        uint8_t ra;
        read = cfi_read_u8(cur, &ra);
        cie->ra_column = ra;
    } else if (read == CFI_READ_OK) {
        read = cfi_read_uleb(cur, &cie->ra_column);
    }
    if (read != CFI_READ_OK)
        return fail_read(p, rec, read, PROBLEM_CIE_PAST_END);
    return CFI_OK;
}

/* The 'z' length and data; the letters' fields are decoded from them. */
static enum cfi_status read_cie_augmentation(const struct parser *p,
                                             const struct record *rec,
                                             struct cfi_cursor *cur,
                                             struct cfi_cie *cie)
{
    uint64_t data_offset = cur->pos;
    if (cie->augmentation[0] == 'z') {
        uint64_t len;
        enum cfi_read read = cfi_read_uleb(cur, &len);
        if (read != CFI_READ_OK)
            return fail_read(p, rec, read, PROBLEM_AUGMENTATION_DATA_PAST_END);
        if (len > cur->end - cur->pos)
            return fail(p, rec, PROBLEM_AUGMENTATION_DATA_PAST_END);
        data_offset = cur->pos;
        cie->augmentation_data = p->bytes + cur->pos;
        cie->augmentation_data_len = (size_t)len;
        cur->pos += (size_t)len;
    }
    const char *message = NULL;
    enum cfi_status status =
        cfi_cie_apply_augmentation(cie, data_offset, p->addr, &message);
    if (status != CFI_OK)
        return cfi_fail(p->diag, status, rec->offset, message);
    if (!fde_encoding_supported(cie->fde_encoding))
        return fail(p, rec, PROBLEM_FDE_ENCODING);
    return CFI_OK;
}

static enum cfi_status parse_cie(struct parser *p, const struct record *rec)
{
    struct cfi_cie *cie = cfi_builder_add_cie(p->builder);
    if (!cie)
        return cfi_fail(p->diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    cie->section = p->section;
    cie->arch = p->builder->arch;
    cie->offset = rec->offset;
    cie->length = rec->length;
    struct cfi_cursor cur = {p->bytes, rec->body, rec->end};
    enum cfi_status status = read_cie_header(p, rec, &cur, cie);
    if (status == CFI_OK)
        status = read_cie_factors(p, rec, &cur, cie);
    if (status == CFI_OK)
        status = read_cie_augmentation(p, rec, &cur, cie);
    if (status != CFI_OK)
        return status;
    cie->instructions = p->bytes + cur.pos;
    cie->instructions_len = rec->end - cur.pos;
    cie->instructions_offset = cur.pos;
    return CFI_OK;
}

/* .eh_frame's CIE pointer counts back from its own field; .debug_frame's
 * is a section offset. Either way it must name the start of a CIE. */
static enum cfi_status find_cie(const struct parser *p,
                                const struct record *rec,
                                const struct cfi_cie **found)
{
    uint64_t cie_offset;
    if (p->section == CFI_EH_FRAME) {
        if (rec->id > rec->id_pos)
            return fail(p, rec, PROBLEM_CIE_POINTER_OUT_OF_RANGE);
        cie_offset = rec->id_pos - rec->id;
    } else {
        if (rec->id >= p->size)
            return fail(p, rec, PROBLEM_CIE_POINTER_OUT_OF_RANGE);
        cie_offset = rec->id;
    }
    const struct cfi_cie *cies = p->builder->cies;
    size_t lo = p->first_cie, hi = p->builder->ncies;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cies[mid].offset < cie_offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == p->builder->ncies || cies[lo].offset != cie_offset)
        return fail(p, rec, PROBLEM_CIE_POINTER_NOT_CIE);
    *found = &cies[lo];
    return CFI_OK;
}

/* pc_begin (encoded with the CIE's 'R' encoding, pc-relative to the
 * field) and pc_range (the same format, no base). */
static enum cfi_status read_fde_range(const struct parser *p,
                                      const struct record *rec,
                                      struct cfi_cursor *cur,
                                      const struct cfi_cie *cie,
                                      struct cfi_fde *fde)
{
    struct cfi_pointer_context context = {
        .section = p->section,
        .base_addr = p->addr,
        .address_size = cie->address_size,
        .allow_indirect = false,
    };
    const char *message = NULL;
    uint64_t range = 0;
    enum cfi_status status = cfi_read_pointer(cur, cie->fde_encoding,
                                              &context, &fde->pc_begin,
                                              &message);
    if (status == CFI_OK)
        status = cfi_read_pointer_format(cur, cie->fde_encoding, &context,
                                         &range, &message);
    if (status != CFI_OK)
        return cfi_fail(p->diag, status, rec->offset, message);
    if (range > UINT64_MAX - fde->pc_begin)
        return fail(p, rec, PROBLEM_RANGE_WRAPS);
    fde->pc_end = fde->pc_begin + range;
    return CFI_OK;
}

static enum cfi_status parse_fde(struct parser *p, const struct record *rec)
{
    const struct cfi_cie *cie = NULL;
    enum cfi_status status = find_cie(p, rec, &cie);
    if (status != CFI_OK)
        return status;
    struct cfi_fde *fde = cfi_builder_add_fde(p->builder);
    if (!fde)
        return cfi_fail(p->diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    fde->section = p->section;
    fde->offset = rec->offset;
    fde->length = rec->length;
    fde->cie_offset = cie->offset;
    struct cfi_cursor cur = {p->bytes, rec->body, rec->end};
    status = read_fde_range(p, rec, &cur, cie, fde);
    if (status != CFI_OK)
        return status;
    if (cie->augmentation[0] == 'z') {
        uint64_t len;
        enum cfi_read read = cfi_read_uleb(&cur, &len);
        if (read != CFI_READ_OK)
            return fail_read(p, rec, read, PROBLEM_AUGMENTATION_DATA_PAST_END);
        if (len > cur.end - cur.pos)
            return fail(p, rec, PROBLEM_AUGMENTATION_DATA_PAST_END);
        fde->augmentation_data = p->bytes + cur.pos;
        fde->augmentation_data_len = (size_t)len;
        cur.pos += (size_t)len;
    }
    fde->instructions = p->bytes + cur.pos;
    fde->instructions_len = rec->end - cur.pos;
    fde->instructions_offset = cur.pos;
    fde->instructions_addr = p->addr + cur.pos;
    return CFI_OK;
}

static bool all_zero(const uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (bytes[i] != 0)
            return false;
    return true;
}

/* One walk over the records, parsing either the CIEs or the FDEs. Two
 * walks, CIEs first, let an FDE name a CIE that comes after it (legal in
 * .debug_frame). Each step advances by at least 4 bytes.
 *
 * A zero length word ends .eh_frame (LSB). In .debug_frame, where DWARF 5
 * 6.4.1 defines no terminator, it is read as 4 bytes of padding and the
 * walk goes on, as readelf and gimli read it (producers put one at the
 * start or the end: Free Pascal, Go); it ends when only zero bytes are
 * left. libdwarf stops at it: builder->records_after_zero_length says
 * that records follow one. */
static enum cfi_status walk(struct parser *p, bool fdes, size_t *parsed_size)
{
    size_t pos = 0;
    while (pos < p->size) {
        struct record rec;
        enum cfi_status status = read_record(p, pos, &rec);
        if (status != CFI_OK)
            return status;
        if (rec.terminator && (p->section == CFI_EH_FRAME ||
                               all_zero(p->bytes + pos, p->size - pos)))
            break;
        if (rec.terminator) {
            p->builder->records_after_zero_length = true;
            pos = rec.end;
            continue;
        }
        if (is_cie(p, &rec) != fdes) {
            status = fdes ? parse_fde(p, &rec) : parse_cie(p, &rec);
            if (status != CFI_OK)
                return status;
        }
        pos = rec.end;
    }
    *parsed_size = pos;
    return CFI_OK;
}

enum cfi_status cfi_parse_section(struct cfi_builder *builder,
                                  const uint8_t *bytes, size_t size,
                                  enum cfi_section section, uint64_t addr,
                                  size_t *parsed_size, struct cfi_diag *diag)
{
    struct parser p = {
        .builder = builder,
        .bytes = bytes,
        .size = size,
        .section = section,
        .addr = addr,
        .first_cie = builder->ncies,
        .diag = diag,
    };
    enum cfi_status status = walk(&p, false, parsed_size);
    if (status == CFI_OK)
        status = walk(&p, true, parsed_size);
    return status;
}

enum cfi_status cfi_file_from_section(const uint8_t *bytes, size_t size,
                                      enum cfi_section section, uint64_t addr,
                                      struct cfi_file **file,
                                      struct cfi_diag *diag)
{
    *file = NULL;
    struct cfi_file *loaded = calloc(1, sizeof *loaded);
    struct cfi_arena *arena = cfi_arena_new();
    const uint8_t *copy = arena ? cfi_arena_copy(arena, bytes, size) : NULL;
    if (!loaded || !copy) {
        free(loaded);
        cfi_arena_free(arena);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    loaded->arena = arena;
    loaded->arch = &cfi_arch_x86_64; /* bytes alone name no machine */
    if (section == CFI_EH_FRAME) {
        loaded->eh_frame_addr = addr;
        loaded->eh_frame_size = size;
    }
    struct cfi_builder builder;
    cfi_builder_init(&builder, loaded->arch);
    size_t parsed_size = 0;
    enum cfi_status status = cfi_parse_section(&builder, copy, size, section,
                                               addr, &parsed_size, diag);
    if (status == CFI_OK)
        status = cfi_builder_finish(&builder, loaded, diag);
    cfi_builder_release(&builder);
    if (status != CFI_OK) {
        cfi_file_close(loaded);
        return status;
    }
    *file = loaded;
    return CFI_OK;
}
