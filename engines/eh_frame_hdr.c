/* SPDX-License-Identifier: MIT */
/* eh_frame_hdr.c — see eh_frame_hdr.h. */
#include "eh_frame_hdr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const problem_names[] = {
#define ENGINE_HDR_NAME(name, text) [ENGINE_HDR_##name] = #name,
    ENGINE_HDR_PROBLEMS(ENGINE_HDR_NAME)
#undef ENGINE_HDR_NAME
};

static const char *const problem_texts[] = {
#define ENGINE_HDR_TEXT(name, text) [ENGINE_HDR_##name] = text,
    ENGINE_HDR_PROBLEMS(ENGINE_HDR_TEXT)
#undef ENGINE_HDR_TEXT
};

const char *engine_hdr_problem_name(enum engine_hdr_problem_kind kind)
{
    return (unsigned)kind < ENGINE_HDR_PROBLEM_COUNT ? problem_names[kind]
                                                     : "?";
}

const char *engine_hdr_problem_text(enum engine_hdr_problem_kind kind)
{
    return (unsigned)kind < ENGINE_HDR_PROBLEM_COUNT ? problem_texts[kind]
                                                     : "?";
}

static void add(struct engine_hdr_check *check,
                enum engine_hdr_problem_kind kind, uint64_t entry,
                uint64_t location, uint64_t fde_addr)
{
    if (check->nkept < ENGINE_HDR_KEPT)
        check->kept[check->nkept++] =
            (struct engine_hdr_problem){kind, entry, location, fde_addr};
    check->nproblems++;
}

/* ------------------------------------------------------------------ */
/* DW_EH_PE pointers                                                    */
/* ------------------------------------------------------------------ */

/* The table's bytes, at file address `addr`. */
struct table {
    const uint8_t *bytes;
    uint64_t size;
    uint64_t addr;
};

/* Bytes of a fixed-size format; 0 for LEB128; -1 when unknown. */
static int format_size(uint8_t encoding)
{
    switch (encoding & 0x0f) {
    case CFI_PE_ABSPTR: case CFI_PE_UDATA8: case CFI_PE_SDATA8:
        return 8;
    case CFI_PE_UDATA2: case CFI_PE_SDATA2:
        return 2;
    case CFI_PE_UDATA4: case CFI_PE_SDATA4:
        return 4;
    case CFI_PE_ULEB128: case CFI_PE_SLEB128:
        return 0;
    default:
        return -1;
    }
}

/* Known here: a known format, applied absolutely, pc-relative or
 * relative to the table's start (datarel), never indirect. */
static bool known_encoding(uint8_t encoding)
{
    uint8_t application = encoding & 0x70;
    return format_size(encoding) >= 0 && !(encoding & CFI_PE_INDIRECT) &&
           (application == 0 || application == CFI_PE_PCREL ||
            application == CFI_PE_DATAREL);
}

static bool read_leb(const struct table *t, uint64_t *pos, bool sign,
                     uint64_t *value)
{
    uint64_t result = 0;
    unsigned shift = 0;
    for (; *pos < t->size && shift < 64; shift += 7) {
        uint8_t byte = t->bytes[(*pos)++];
        result |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            if (sign && shift + 7 < 64 && (byte & 0x40))
                result |= ~(uint64_t)0 << (shift + 7);
            *value = result;
            return true;
        }
    }
    return false;
}

/* The value at *pos encoded with `encoding` (known_encoding); false when
 * it runs past the table. */
static bool read_pointer(const struct table *t, uint64_t *pos,
                         uint8_t encoding, uint64_t *value)
{
    uint64_t field = t->addr + *pos, raw = 0;
    int size = format_size(encoding);
    uint8_t format = encoding & 0x0f;
    if (size == 0) {
        if (!read_leb(t, pos, format == CFI_PE_SLEB128, &raw))
            return false;
    } else {
        if (*pos > t->size || t->size - *pos < (uint64_t)size)
            return false;
        raw = cfi_load_le(t->bytes + *pos, (unsigned)size);
        *pos += (uint64_t)size;
        if (format == CFI_PE_SDATA2)
            raw = (uint64_t)(int64_t)(int16_t)raw;
        else if (format == CFI_PE_SDATA4)
            raw = (uint64_t)(int64_t)(int32_t)raw;
    }
    uint8_t application = encoding & 0x70;
    *value = raw + (application == CFI_PE_PCREL    ? field
                    : application == CFI_PE_DATAREL ? t->addr
                                                    : 0);
    return true;
}

/* ------------------------------------------------------------------ */
/* The header                                                           */
/* ------------------------------------------------------------------ */

/* The section's bytes in the loaded image; false when no segment holds
 * them all. */
static bool find_bytes(const struct cfi_file *file, struct table *t)
{
    const struct cfi_segment *segment =
        cfi_file_segment(file, file->eh_frame_hdr_addr);
    if (!segment)
        return false;
    uint64_t offset = file->eh_frame_hdr_addr - segment->vaddr;
    if (offset > segment->filesz ||
        segment->filesz - offset < file->eh_frame_hdr_size)
        return false;
    *t = (struct table){segment->bytes + offset, file->eh_frame_hdr_size,
                        file->eh_frame_hdr_addr};
    return true;
}

enum header { HEADER_BAD, HEADER_NO_TABLE, HEADER_TABLE };

/* Version, encodings, eh_frame_ptr and fde_count; *pos is then the
 * table's start. */
static enum header read_header(const struct table *t,
                               struct engine_hdr_check *check, uint64_t *pos)
{
    if (t->size < 4) {
        add(check, ENGINE_HDR_truncated, ENGINE_HDR_NO_ENTRY, 0, 0);
        return HEADER_BAD;
    }
    check->version = t->bytes[0];
    check->eh_frame_ptr_enc = t->bytes[1];
    check->fde_count_enc = t->bytes[2];
    check->table_enc = t->bytes[3];
    *pos = 4;
    if (check->version != 1) {
        add(check, ENGINE_HDR_version, ENGINE_HDR_NO_ENTRY, 0, 0);
        return HEADER_BAD;
    }
    bool no_table = check->fde_count_enc == CFI_PE_OMIT ||
                    check->table_enc == CFI_PE_OMIT;
    if (!known_encoding(check->eh_frame_ptr_enc) ||
        (!no_table && (!known_encoding(check->fde_count_enc) ||
                       !known_encoding(check->table_enc)))) {
        add(check, ENGINE_HDR_encoding, ENGINE_HDR_NO_ENTRY, 0, 0);
        return HEADER_BAD;
    }
    if (!read_pointer(t, pos, check->eh_frame_ptr_enc, &check->eh_frame_ptr) ||
        (!no_table && !read_pointer(t, pos, check->fde_count_enc,
                                    &check->count))) {
        add(check, ENGINE_HDR_truncated, ENGINE_HDR_NO_ENTRY, 0, 0);
        return HEADER_BAD;
    }
    return no_table ? HEADER_NO_TABLE : HEADER_TABLE;
}

/* ------------------------------------------------------------------ */
/* The entries                                                          */
/* ------------------------------------------------------------------ */

/* .eh_frame's FDEs by address: fde_addrs[i] is the file address of
 * by_addr[i], increasing. */
struct fde_index {
    uint64_t *addrs;
    const struct cfi_fde **fdes;
    bool *seen;
    size_t n;
};

static int by_address(const void *a, const void *b)
{
    const struct cfi_fde *x = *(const struct cfi_fde *const *)a;
    const struct cfi_fde *y = *(const struct cfi_fde *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static bool index_fdes(const struct cfi_file *file, struct fde_index *index)
{
    size_t n = file->n_eh_frame;
    index->n = n;
    index->addrs = malloc((n ? n : 1) * sizeof *index->addrs);
    index->fdes = malloc((n ? n : 1) * sizeof *index->fdes);
    index->seen = calloc(n ? n : 1, 1);
    if (!index->addrs || !index->fdes || !index->seen)
        return false;
    for (size_t i = 0; i < n; i++)
        index->fdes[i] = &file->fdes[i];
    qsort(index->fdes, n, sizeof *index->fdes, by_address);
    for (size_t i = 0; i < n; i++)
        index->addrs[i] = file->eh_frame_addr + index->fdes[i]->offset;
    return true;
}

static void index_free(struct fde_index *index)
{
    free(index->addrs);
    free(index->fdes);
    free(index->seen);
}

/* The index of the FDE at `addr`, or n. */
static size_t find_fde(const struct fde_index *index, uint64_t addr)
{
    size_t lo = 0, hi = index->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (index->addrs[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < index->n && index->addrs[lo] == addr ? lo : index->n;
}

static void check_entry(struct engine_hdr_check *check, struct fde_index *index,
                        uint64_t entry, uint64_t location, uint64_t fde_addr,
                        const uint64_t *previous)
{
    if (previous && location < *previous)
        add(check, ENGINE_HDR_unsorted, entry, location, fde_addr);
    else if (previous && location == *previous)
        add(check, ENGINE_HDR_duplicate, entry, location, fde_addr);
    size_t i = find_fde(index, fde_addr);
    if (i == index->n) {
        add(check, ENGINE_HDR_not_an_fde, entry, location, fde_addr);
        return;
    }
    if (index->fdes[i]->pc_begin != location)
        add(check, ENGINE_HDR_wrong_location, entry, location, fde_addr);
    if (index->seen[i])
        add(check, ENGINE_HDR_repeated_fde, entry, location, fde_addr);
    index->seen[i] = true;
}

/* Reads the entries the header declares, as far as the section holds
 * them (the loop is bounded by the section's size). */
static void check_entries(const struct table *t, uint64_t pos,
                          struct engine_hdr_check *check,
                          struct fde_index *index)
{
    uint64_t previous = 0;
    for (uint64_t entry = 0; entry < check->count; entry++) {
        uint64_t location, fde_addr;
        if (!read_pointer(t, &pos, check->table_enc, &location) ||
            !read_pointer(t, &pos, check->table_enc, &fde_addr)) {
            add(check, ENGINE_HDR_truncated, entry, 0, 0);
            return;
        }
        check->entries++;
        check_entry(check, index, entry, location, fde_addr,
                    entry ? &previous : NULL);
        previous = location;
    }
}

enum cfi_status engine_hdr_check(const struct cfi_file *file,
                                 struct engine_hdr_check *check)
{
    memset(check, 0, sizeof *check);
    check->nfdes = file->n_eh_frame;
    check->addr = file->eh_frame_hdr_addr;
    check->size = file->eh_frame_hdr_size;
    check->present = file->eh_frame_hdr_addr != 0;
    if (!check->present)
        return CFI_OK;
    struct table t;
    if (!find_bytes(file, &t)) {
        add(check, ENGINE_HDR_not_loaded, ENGINE_HDR_NO_ENTRY, 0, 0);
        return CFI_OK;
    }
    uint64_t pos = 0;
    enum header header = read_header(&t, check, &pos);
    if (header != HEADER_BAD && check->eh_frame_ptr != file->eh_frame_addr)
        add(check, ENGINE_HDR_eh_frame_ptr, ENGINE_HDR_NO_ENTRY, 0, 0);
    if (header != HEADER_TABLE)
        return CFI_OK;
    if (check->table_enc != (CFI_PE_DATAREL | CFI_PE_SDATA4))
        add(check, ENGINE_HDR_table_unsearchable, ENGINE_HDR_NO_ENTRY, 0, 0);
    if (format_size(check->table_enc) == 0)
        return CFI_OK; /* LEB128 entries: not a searchable table at all */
    if (check->count != check->nfdes)
        add(check, ENGINE_HDR_count, ENGINE_HDR_NO_ENTRY, 0, 0);
    struct fde_index index;
    if (!index_fdes(file, &index)) {
        index_free(&index);
        return CFI_E_NOMEM;
    }
    check_entries(&t, pos, check, &index);
    for (size_t i = 0; i < index.n; i++)
        if (!index.seen[i])
            add(check, ENGINE_HDR_missing_fde, ENGINE_HDR_NO_ENTRY,
                index.fdes[i]->pc_begin, index.addrs[i]);
    index_free(&index);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* The lookup the unwinders make                                        */
/* ------------------------------------------------------------------ */

bool engine_hdr_lookup(const struct cfi_file *file, uint64_t pc,
                       bool *table, uint64_t *fde_addr)
{
    struct table t;
    struct engine_hdr_check *check = malloc(sizeof *check);
    bool found = false;
    uint64_t pos = 0;
    *table = false;
    if (!check)
        return false;
    memset(check, 0, sizeof *check);
    if (file->eh_frame_hdr_addr != 0 && find_bytes(file, &t) &&
        read_header(&t, check, &pos) == HEADER_TABLE &&
        check->table_enc == (CFI_PE_DATAREL | CFI_PE_SDATA4)) {
        *table = true;
        /* the entries the section holds, of the count declared */
        uint64_t held = (t.size - pos) / 8;
        uint64_t lo = 0, hi = check->count < held ? check->count : held;
        while (lo < hi) {   /* the first entry above pc */
            uint64_t mid = lo + (hi - lo) / 2, at = pos + mid * 8, location;
            read_pointer(&t, &at, check->table_enc, &location);
            if (location <= pc)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0) {
            uint64_t at = pos + (lo - 1) * 8 + 4;
            found = read_pointer(&t, &at, check->table_enc, fde_addr);
        }
    }
    free(check);
    return found;
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

static void print_problem(FILE *out, const struct engine_hdr_problem *p)
{
    fprintf(out, "  %s: %s", engine_hdr_problem_name(p->kind),
            engine_hdr_problem_text(p->kind));
    if (p->entry != ENGINE_HDR_NO_ENTRY)
        fprintf(out, " (entry %" PRIu64 ": location 0x%" PRIx64
                ", FDE at 0x%" PRIx64 ")", p->entry, p->location, p->fde_addr);
    else if (p->kind == ENGINE_HDR_missing_fde)
        fprintf(out, " (FDE at 0x%" PRIx64 ", pc_begin 0x%" PRIx64 ")",
                p->fde_addr, p->location);
    fputc('\n', out);
}

void engine_hdr_text(FILE *out, const char *path,
                     const struct engine_hdr_check *check, size_t show)
{
    if (!check->present) {
        fprintf(out, "cfisem validate: %s --hdr: no .eh_frame_hdr (%" PRIu64
                " FDEs in .eh_frame): nothing to check\n", path, check->nfdes);
        return;
    }
    fprintf(out, "cfisem validate: %s --hdr: .eh_frame_hdr at 0x%" PRIx64
            ", %" PRIu64 " bytes, version %u, encodings 0x%02x 0x%02x 0x%02x;"
            " %" PRIu64 " entries for %" PRIu64 " FDEs in .eh_frame\n", path,
            check->addr, check->size, check->version, check->eh_frame_ptr_enc,
            check->fde_count_enc, check->table_enc, check->entries,
            check->nfdes);
    for (size_t i = 0; i < check->nkept && i < show; i++)
        print_problem(out, &check->kept[i]);
    if (check->nproblems > show && check->nkept > show)
        fprintf(out, "  (%" PRIu64 " more)\n", check->nproblems - show);
    fprintf(out, "\nresult: %" PRIu64 " problem%s\n", check->nproblems,
            check->nproblems == 1 ? "" : "s");
}

void engine_hdr_summary(FILE *out, const char *path,
                        const struct engine_hdr_check *check)
{
    if (check->nproblems)
        engine_hdr_summary_line(out, path, check->nproblems,
                                check->kept[0].kind);
}

void engine_hdr_summary_line(FILE *out, const char *path, uint64_t nproblems,
                             enum engine_hdr_problem_kind first)
{
    fprintf(out, "cfisem diff: %s: .eh_frame_hdr is wrong: %" PRIu64
            " problem%s, first %s: %s (see cfisem validate %s --hdr)\n", path,
            nproblems, nproblems == 1 ? "" : "s",
            engine_hdr_problem_name(first), engine_hdr_problem_text(first),
            path);
}
