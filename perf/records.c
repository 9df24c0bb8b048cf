/* SPDX-License-Identifier: MIT */
/* records.c — the walk over records, compressed ones included. */
#include "perf/internal.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

const char *perf_record_name(uint32_t type)
{
    switch (type) {
#define PERF_RECORD_CASE(num, name)                                         \
    case num:                                                               \
        return #name;
        PERF_RECORD_LIST(PERF_RECORD_CASE)
#undef PERF_RECORD_CASE
    default:
        return NULL;
    }
}

/* The walk's state: the zstd stream lives across compressed records
 * (perf decompresses them as one stream), and a record split between
 * two of them waits in `carry`. */
struct walk {
    struct perf_file *file;
    ZSTD_DStream *zstd;
    uint8_t *carry;
    size_t ncarry;
    uint64_t limit;              /* decompressed bytes allowed in all */
    bool inside;                 /* walking decompressed data */
    uint64_t compressed_offset;
};

static bool add_record(struct walk *walk, const uint8_t *at, uint64_t offset,
                       struct perf_diag *diag)
{
    struct perf_file *file = walk->file;
    if (!perf_grow(&file->records, &file->records_cap, file->nrecords,
                   sizeof *file->records))
        return perf_fail(diag, offset, "out of memory");
    file->records[file->nrecords++] = (struct perf_record){
        at, perf_u32_at(at), perf_u16_at(at + 4), perf_u16_at(at + 6),
        walk->inside ? walk->compressed_offset : offset, walk->inside};
    return true;
}

/* The bytes that follow some records outside their size: the tracing
 * data of HEADER_TRACING_DATA (u32 size, in pipe mode) and the trace of
 * AUXTRACE (u64 size). */
static bool extra_bytes(const uint8_t *at, uint16_t size, uint64_t *extra)
{
    uint32_t type = perf_u32_at(at);
    *extra = 0;
    if (type == PERF_REC_TRACING_DATA) {
        if (size < 16)
            return false;
        *extra = (perf_u32_at(at + 8) + 7ull) & ~7ull;
    } else if (type == PERF_REC_AUXTRACE) {
        if (size < 16)
            return false;
        *extra = perf_u64_at(at + 8);
    }
    return true;
}

static bool walk_bytes(struct walk *walk, const uint8_t *at, size_t size,
                       uint64_t base, struct perf_diag *diag);

/* Decompresses one COMPRESSED record's data (after its 8-byte header)
 * into a buffer that starts with the carried bytes; its whole records
 * are walked and kept, the tail carried to the next. */
static bool decompress(struct walk *walk, const uint8_t *src, size_t n,
                       uint64_t offset, struct perf_diag *diag)
{
    struct perf_file *file = walk->file;
    if (walk->inside)
        return perf_fail(diag, offset, "compressed record inside "
                                       "compressed data");
    if (!walk->zstd) {
        walk->zstd = ZSTD_createDStream();
        if (!walk->zstd || ZSTD_isError(ZSTD_initDStream(walk->zstd)))
            return perf_fail(diag, offset, "cannot start zstd");
    }
    size_t cap = walk->ncarry + 4 * n + 4096, len = walk->ncarry;
    uint8_t *out = malloc(cap);
    if (!out)
        return perf_fail(diag, offset, "out of memory");
    if (walk->ncarry)
        memcpy(out, walk->carry, walk->ncarry);
    ZSTD_inBuffer in = {src, n, 0};
    for (;;) {
        if (len == cap) {
            uint8_t *grown = realloc(out, 2 * cap);
            if (!grown) {
                free(out);
                return perf_fail(diag, offset, "out of memory");
            }
            out = grown;
            cap *= 2;
        }
        ZSTD_outBuffer o = {out, cap, len};
        size_t in_before = in.pos;
        size_t ret = ZSTD_decompressStream(walk->zstd, &o, &in);
        if (ZSTD_isError(ret)) {
            free(out);
            return perf_fail(diag, offset, "bad zstd data in a compressed "
                                           "record");
        }
        file->decompressed_bytes += o.pos - len;
        if (file->decompressed_bytes > walk->limit) {
            free(out);
            return perf_fail(diag, offset, "compressed data expands beyond "
                                           "1024 times the file's size");
        }
        bool full = o.pos == cap;
        bool stuck = o.pos == len && in.pos == in_before;
        len = o.pos;
        if (in.pos == in.size && !full)
            break;
        if (stuck && !full) {
            free(out);
            return perf_fail(diag, offset, "zstd data makes no progress");
        }
    }
    file->compressed_bytes += n;
    /* The whole records at the start; the rest is carried. */
    size_t whole = 0;
    while (len - whole >= 8) {
        uint16_t rsize = perf_u16_at(out + whole + 6);
        uint64_t extra;
        if (rsize < 8 || !extra_bytes(out + whole, rsize, &extra))
            break;
        if (rsize > len - whole || extra > len - whole - rsize)
            break;
        whole += rsize + extra;
    }
    free(walk->carry);
    walk->carry = NULL;
    walk->ncarry = len - whole;
    if (walk->ncarry) {
        walk->carry = malloc(walk->ncarry);
        if (!walk->carry) {
            free(out);
            return perf_fail(diag, offset, "out of memory");
        }
        memcpy(walk->carry, out + whole, walk->ncarry);
    }
    if (!perf_grow(&file->chunks, &file->chunks_cap, file->nchunks,
                   sizeof *file->chunks)) {
        free(out);
        return perf_fail(diag, offset, "out of memory");
    }
    file->chunks[file->nchunks++] = out;
    walk->inside = true;
    walk->compressed_offset = offset;
    bool ok = walk_bytes(walk, out, whole, 0, diag);
    walk->inside = false;
    return ok;
}

/* One record, found whole at `at` (its `size` bytes and `extra` after). */
static bool take_record(struct walk *walk, const uint8_t *at, uint16_t size,
                        uint64_t offset, struct perf_diag *diag)
{
    uint32_t type = perf_u32_at(at);
    uint64_t where = walk->inside ? walk->compressed_offset : offset;
    struct perf_file *file = walk->file;
    if (type == PERF_REC_COMPRESSED)
        return decompress(walk, at + 8, size - 8u, offset, diag);
    if (type == PERF_REC_ATTR) {
        if (!file->pipe)
            return perf_fail(diag, where, "attribute record in a file "
                                          "that has an attribute section");
        if (!perf_pipe_attr(file, at, size, where, diag))
            return false;
    }
    if (type == PERF_REC_FEATURE && file->pipe
        && !perf_pipe_feature(file, at, size, where, diag))
        return false;
    if (type == PERF_REC_BUILD_ID
        && !perf_add_build_id(file, at, size, where, diag))
        return false;
    return add_record(walk, at, offset, diag);
}

static bool walk_bytes(struct walk *walk, const uint8_t *at, size_t size,
                       uint64_t base, struct perf_diag *diag)
{
    size_t pos = 0;
    while (pos < size) {
        uint64_t offset = base + pos;
        if (size - pos < 8)
            return perf_fail(diag, offset, walk->inside
                                 ? "record header truncated (in "
                                   "decompressed data)"
                                 : "record header truncated");
        uint16_t rsize = perf_u16_at(at + pos + 6);
        uint64_t extra;
        if (rsize < 8)
            return perf_fail(diag, offset, "record smaller than its header");
        if (rsize > size - pos)
            return perf_fail(diag, offset, "record runs past the end of the "
                                           "data");
        if (!extra_bytes(at + pos, rsize, &extra))
            return perf_fail(diag, offset, "record too short for its type");
        if (extra > size - pos - rsize)
            return perf_fail(diag, offset, "record's payload runs past the "
                                           "end of the data");
        if (!take_record(walk, at + pos, rsize, offset, diag))
            return false;
        pos += rsize + extra;
    }
    return true;
}

bool perf_walk_records(struct perf_file *file, const uint8_t *at,
                       size_t size, uint64_t base, struct perf_diag *diag)
{
    struct walk walk = {file, NULL, NULL, 0,
                        (uint64_t)file->size * PERF_MAX_EXPANSION, false,
                        0};
    bool ok = walk_bytes(&walk, at, size, base, diag);
    if (ok && walk.ncarry)
        ok = perf_fail(diag, base + size, "compressed data ends inside a "
                                          "record");
    ZSTD_freeDStream(walk.zstd);
    free(walk.carry);
    return ok;
}
