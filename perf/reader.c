/* SPDX-License-Identifier: MIT */
/* reader.c — perf_open: the input, the header, the attributes and the
 * feature sections of a perf.data file. */
#include "perf/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The header of file mode (perf.data-file-format.txt):
 *   u64 magic; u64 size; u64 attr_size;
 *   struct perf_file_section { u64 offset, size; } attrs, data,
 *   event_types; u64 adds_features[4];  -- 104 bytes. */
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define SECTION_SIZE 16
/* perf_event_attr's first published size (PERF_ATTR_SIZE_VER0). */
#define ATTR_SIZE_VER0 64
/* Feature numbers (perf's enum of HEADER_* features). */
#define FEAT_BUILD_ID 2
#define FEAT_EVENT_DESC 12
#define FEAT_BITS 256

static const uint8_t MAGIC[8] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2'};
static const uint8_t MAGIC_SWAPPED[8] = {'2', 'E', 'L', 'I', 'F', 'R', 'E',
                                         'P'};

bool perf_fail(struct perf_diag *diag, uint64_t offset, const char *message)
{
    if (diag)
        *diag = (struct perf_diag){offset, message};
    return false;
}

bool perf_grow(void *array, size_t *cap, size_t n, size_t size)
{
    void **p = array;
    if (n < *cap)
        return true;
    size_t grown = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, grown * size);
    if (!q)
        return false;
    *p = q;
    *cap = grown;
    return true;
}

uint64_t perf_u64_at(const void *at)
{
    uint64_t v;
    memcpy(&v, at, sizeof v);
    return v;
}

uint32_t perf_u32_at(const void *at)
{
    uint32_t v;
    memcpy(&v, at, sizeof v);
    return v;
}

uint16_t perf_u16_at(const void *at)
{
    uint16_t v;
    memcpy(&v, at, sizeof v);
    return v;
}

/* ------------------------------------------------------------------ */
/* The input                                                            */
/* ------------------------------------------------------------------ */

/* What a non-regular file is, for the message. */
static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode))
        return "is a directory, not a perf.data file";
    if (S_ISFIFO(mode))
        return "is a FIFO, not a regular file (pipe mode reads "
               "standard input: -)";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "is a device, not a regular file";
    if (S_ISSOCK(mode))
        return "is a socket, not a regular file";
    return "is not a regular file";
}

/* Reads a pipe to its end into a buffer that grows with what comes;
 * a stream whose first 8 bytes are no perf.data magic is read no
 * further (read_header says what they are): /dev/zero or another
 * endless stream must not grow it without bound. */
static bool read_all(int fd, struct perf_file *file, struct perf_diag *diag)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return perf_fail(diag, PERF_NO_OFFSET, "out of memory");
    for (;;) {
        if (n == cap) {
            uint8_t *grown = cap <= SIZE_MAX / 2 ? realloc(buf, 2 * cap)
                                                 : NULL;
            if (!grown) {
                free(buf);
                return perf_fail(diag, n, "out of memory");
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            return perf_fail(diag, n, "read error");
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n >= sizeof MAGIC && memcmp(buf, MAGIC, sizeof MAGIC) != 0)
            break;
    }
    file->bytes = buf;
    file->size = n;
    return true;
}

static bool map_regular(int fd, size_t size, struct perf_file *file,
                        struct perf_diag *diag)
{
    if (size == 0)
        return perf_fail(diag, 0, "empty file");
    void *at = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (at == MAP_FAILED)
        return perf_fail(diag, PERF_NO_OFFSET, "cannot map the file");
    file->bytes = at;
    file->size = size;
    file->mapped = true;
    return true;
}

static bool load_input(const char *path, struct perf_file *file,
                       struct perf_diag *diag)
{
    struct stat st;
    bool is_stdin = strcmp(path, "-") == 0;
    if (is_stdin) {
        if (fstat(0, &st) != 0)
            return perf_fail(diag, PERF_NO_OFFSET, "cannot stat stdin");
        if (S_ISREG(st.st_mode))
            return map_regular(0, (size_t)st.st_size, file, diag);
        if (S_ISDIR(st.st_mode))
            return perf_fail(diag, PERF_NO_OFFSET, kind_of(st.st_mode));
        return read_all(0, file, diag);
    }
    if (stat(path, &st) != 0)
        return perf_fail(diag, PERF_NO_OFFSET, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return perf_fail(diag, PERF_NO_OFFSET, kind_of(st.st_mode));
    /* O_NONBLOCK: a FIFO put in the file's place meanwhile does not
     * block the open; fstat then refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return perf_fail(diag, PERF_NO_OFFSET, strerror(errno));
    bool ok;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        ok = perf_fail(diag, PERF_NO_OFFSET, "is not a regular file");
    else
        ok = map_regular(fd, (size_t)st.st_size, file, diag);
    close(fd);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Attributes                                                           */
/* ------------------------------------------------------------------ */

size_t perf_id_size(uint64_t sample_type)
{
    size_t n = 0;
    uint64_t bits[] = {PERF_S_TID, PERF_S_TIME, PERF_S_ID, PERF_S_STREAM_ID,
                       PERF_S_CPU, PERF_S_IDENTIFIER};
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (sample_type & bits[i])
            n += 8;
    return n;
}

/* Field offsets in struct perf_event_attr (perf_event.h). */
enum {
    ATTR_TYPE = 0, ATTR_SIZE = 4, ATTR_CONFIG = 8, ATTR_SAMPLE_TYPE = 24,
    ATTR_READ_FORMAT = 32, ATTR_FLAGS = 40, ATTR_BRANCH_SAMPLE_TYPE = 72,
    ATTR_SAMPLE_REGS_USER = 80, ATTR_SAMPLE_STACK_USER = 88,
    ATTR_SAMPLE_REGS_INTR = 96,
};
#define FLAG_SAMPLE_ID_ALL (1ull << 18)
#define FLAG_EXCLUDE_CALLCHAIN_USER (1ull << 22)

bool perf_attr_parse(const uint8_t *at, size_t size, struct perf_attr *attr)
{
    uint8_t copy[128] = {0};
    if (size < ATTR_SIZE_VER0)
        return false;
    memcpy(copy, at, size < sizeof copy ? size : sizeof copy);
    *attr = (struct perf_attr){0};
    attr->type = perf_u32_at(copy + ATTR_TYPE);
    attr->config = perf_u64_at(copy + ATTR_CONFIG);
    attr->sample_type = perf_u64_at(copy + ATTR_SAMPLE_TYPE);
    attr->read_format = perf_u64_at(copy + ATTR_READ_FORMAT);
    attr->flags = perf_u64_at(copy + ATTR_FLAGS);
    attr->branch_sample_type = perf_u64_at(copy + ATTR_BRANCH_SAMPLE_TYPE);
    attr->sample_regs_user = perf_u64_at(copy + ATTR_SAMPLE_REGS_USER);
    attr->sample_stack_user = perf_u32_at(copy + ATTR_SAMPLE_STACK_USER);
    attr->sample_regs_intr = perf_u64_at(copy + ATTR_SAMPLE_REGS_INTR);
    attr->sample_id_all = attr->flags & FLAG_SAMPLE_ID_ALL;
    attr->exclude_callchain_user = attr->flags & FLAG_EXCLUDE_CALLCHAIN_USER;
    attr->id_size = attr->sample_id_all ? perf_id_size(attr->sample_type)
                                        : 0;
    return true;
}

static bool add_attr(struct perf_file *file, const struct perf_attr *attr,
                     uint64_t offset, struct perf_diag *diag)
{
    if (attr->sample_type & ~(uint64_t)PERF_S_KNOWN)
        return perf_fail(diag, offset, "attribute has unknown sample_type "
                                       "bits");
    if (!perf_grow(&file->attrs, &file->attrs_cap, file->nattrs,
                   sizeof *file->attrs))
        return perf_fail(diag, offset, "out of memory");
    file->attrs[file->nattrs++] = *attr;
    return true;
}

/* A section {offset, size} at `at` that must lie in the input. */
static bool section_at(const struct perf_file *file, size_t at,
                       uint64_t *offset, uint64_t *size,
                       struct perf_diag *diag)
{
    *offset = perf_u64_at(file->bytes + at);
    *size = perf_u64_at(file->bytes + at + 8);
    if (*offset > file->size || *size > file->size - *offset)
        return perf_fail(diag, at, "section lies beyond the end of the "
                                   "file");
    return true;
}

static bool read_attrs(struct perf_file *file, struct perf_diag *diag)
{
    uint64_t attr_size = perf_u64_at(file->bytes + 16), off, size;
    if (!section_at(file, 24, &off, &size, diag))
        return false;
    if (attr_size < ATTR_SIZE_VER0 + SECTION_SIZE || attr_size > 4096)
        return perf_fail(diag, 16, "bad attribute size");
    if (size % attr_size != 0 || size == 0)
        return perf_fail(diag, 24, "attribute section is not a whole "
                                   "number of attributes");
    for (uint64_t at = off; at < off + size; at += attr_size) {
        struct perf_attr attr;
        uint32_t claimed = perf_u32_at(file->bytes + at + ATTR_SIZE);
        size_t len = attr_size - SECTION_SIZE;
        if (claimed != 0 && claimed < len)
            len = claimed;
        if (!perf_attr_parse(file->bytes + at, len, &attr))
            return perf_fail(diag, at, "attribute too short");
        uint64_t ids_off, ids_size;
        if (!section_at(file, at + attr_size - SECTION_SIZE, &ids_off,
                        &ids_size, diag))
            return false;
        if (ids_size % 8 != 0)
            return perf_fail(diag, at, "attribute ids not whole u64s");
        attr.ids = (const uint64_t *)(file->bytes + ids_off);
        attr.nids = ids_size / 8;
        if (!add_attr(file, &attr, at, diag))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Feature sections                                                     */
/* ------------------------------------------------------------------ */

bool perf_add_build_id(struct perf_file *file, const uint8_t *at,
                       size_t size, uint64_t offset, struct perf_diag *diag)
{
    /* struct perf_record_header_build_id: header (8), s32 pid, u8
     * build_id[24] (the size in byte 20 when misc has
     * PERF_RECORD_MISC_BUILD_ID_SIZE), char filename[]. */
    enum { PID = 8, ID = 12, NAME = 36 };
    uint16_t misc = perf_u16_at(at + 4);
    if (size <= NAME || memchr(at + NAME, 0, size - NAME) == NULL)
        return perf_fail(diag, offset, "build-id entry without a file name");
    if (!perf_grow(&file->build_ids, &file->build_ids_cap, file->nbuild_ids,
                   sizeof *file->build_ids))
        return perf_fail(diag, offset, "out of memory");
    struct perf_build_id *b = &file->build_ids[file->nbuild_ids];
    b->pid = (int32_t)perf_u32_at(at + PID);
    memcpy(b->id, at + ID, 20);
    b->size = (misc & (1u << 15)) ? at[ID + 20] : 20;
    if (b->size > 20)
        return perf_fail(diag, offset, "build-id longer than 20 bytes");
    b->path = (const char *)at + NAME;
    file->nbuild_ids++;
    return true;
}

static bool read_build_ids(struct perf_file *file, uint64_t off,
                           uint64_t size, struct perf_diag *diag)
{
    uint64_t at = off, end = off + size;
    while (at < end) {
        if (end - at < 8)
            return perf_fail(diag, at, "build-id entry truncated");
        uint16_t len = perf_u16_at(file->bytes + at + 6);
        if (len < 8 || len > end - at)
            return perf_fail(diag, at, "build-id entry's size runs past "
                                       "its section");
        if (!perf_add_build_id(file, file->bytes + at, len, at, diag))
            return false;
        at += len;
    }
    return true;
}

/* HEADER_EVENT_DESC: u32 nr, u32 attr_size, then per event the attr, u32
 * nr_ids, a string {u32 len; char[len]} and u64 ids[nr_ids]. Only the
 * names are kept, for the attributes in the same order. */
static bool event_desc_at(struct perf_file *file, const uint8_t *p,
                          uint64_t off, uint64_t size, struct perf_diag *diag)
{
    if (size < 8)
        return perf_fail(diag, off, "event description truncated");
    uint32_t nr = perf_u32_at(p), attr_size = perf_u32_at(p + 4);
    uint64_t at = 8;
    for (uint32_t i = 0; i < nr; i++) {
        if (size - at < (uint64_t)attr_size + 8)
            return perf_fail(diag, off + at, "event description truncated");
        at += attr_size;
        uint64_t nr_ids = perf_u32_at(p + at);
        uint64_t len = perf_u32_at(p + at + 4);
        at += 8;
        if (len > size - at || nr_ids > (size - at - len) / 8)
            return perf_fail(diag, off + at, "event description truncated");
        const char *name = (const char *)p + at;
        if (len > 0 && memchr(name, 0, len) && i < file->nattrs)
            file->attrs[i].name = name;
        at += len + nr_ids * 8;
    }
    return true;
}

static bool read_event_desc(struct perf_file *file, uint64_t off,
                            uint64_t size, struct perf_diag *diag)
{
    return event_desc_at(file, file->bytes + off, off, size, diag);
}

/* A FEATURE record of pipe mode: header, u64 feature number, the
 * feature's data as in file mode. EVENT_DESC is read. */
bool perf_pipe_feature(struct perf_file *file, const uint8_t *at,
                       size_t size, uint64_t offset, struct perf_diag *diag)
{
    if (size < 16)
        return perf_fail(diag, offset, "feature record too short");
    if (perf_u64_at(at + 8) != FEAT_EVENT_DESC)
        return true;
    return event_desc_at(file, at + 16, offset, size - 16, diag);
}

static bool read_features(struct perf_file *file, uint64_t data_end,
                          struct perf_diag *diag)
{
    const uint8_t *flags = file->bytes + 72;
    uint64_t at = data_end;
    for (unsigned feat = 1; feat < FEAT_BITS; feat++) {
        if (!(flags[feat / 8] & (1u << (feat % 8))))
            continue;
        if (file->size < SECTION_SIZE || at > file->size - SECTION_SIZE)
            return perf_fail(diag, at, "feature section table truncated");
        uint64_t off, size;
        if (!section_at(file, at, &off, &size, diag))
            return false;
        at += SECTION_SIZE;
        if (feat == FEAT_BUILD_ID && !read_build_ids(file, off, size, diag))
            return false;
        if (feat == FEAT_EVENT_DESC
            && !read_event_desc(file, off, size, diag))
            return false;
    }
    return true;
}

static bool read_file_mode(struct perf_file *file, struct perf_diag *diag)
{
    if (file->size < FILE_HEADER_SIZE)
        return perf_fail(diag, 0, "file header truncated");
    uint64_t header_size = perf_u64_at(file->bytes + 8);
    if (header_size < FILE_HEADER_SIZE || header_size > file->size)
        return perf_fail(diag, 8, "bad header size");
    if (!read_attrs(file, diag))
        return false;
    uint64_t off, size;
    if (!section_at(file, 40, &off, &size, diag))
        return false;
    if (!read_features(file, off + size, diag))
        return false;
    return perf_walk_records(file, file->bytes + off, size, off, diag);
}

static bool read_header(struct perf_file *file, struct perf_diag *diag)
{
    if (file->size < 8)
        return perf_fail(diag, 0, "too short for a perf.data header");
    if (memcmp(file->bytes, MAGIC_SWAPPED, 8) == 0)
        return perf_fail(diag, 0, "perf.data of the other byte order: "
                                  "not supported");
    if (memcmp(file->bytes, MAGIC, 8) != 0)
        return perf_fail(diag, 0, "not a perf.data file (no PERFILE2 "
                                  "magic)");
    if (file->size < PIPE_HEADER_SIZE)
        return perf_fail(diag, 8, "header truncated");
    if (perf_u64_at(file->bytes + 8) == PIPE_HEADER_SIZE) {
        file->pipe = true;
        return perf_walk_records(file, file->bytes + PIPE_HEADER_SIZE,
                                 file->size - PIPE_HEADER_SIZE,
                                 PIPE_HEADER_SIZE, diag);
    }
    return read_file_mode(file, diag);
}

/* Attributes of pipe mode come in HEADER_ATTR records, which the walk
 * hands here. */
bool perf_pipe_attr(struct perf_file *file, const uint8_t *at, size_t size,
                    uint64_t offset, struct perf_diag *diag)
{
    /* struct perf_record_header_attr: header, perf_event_attr (its own
     * size field says how long), u64 id[] to the record's end. */
    if (size < 8 + ATTR_SIZE_VER0)
        return perf_fail(diag, offset, "attribute record too short");
    uint32_t len = perf_u32_at(at + 8 + ATTR_SIZE);
    if (len == 0)
        len = ATTR_SIZE_VER0;
    if (len < ATTR_SIZE_VER0 || len > size - 8 || (size - 8 - len) % 8)
        return perf_fail(diag, offset, "attribute record's size is wrong");
    struct perf_attr attr;
    perf_attr_parse(at + 8, len, &attr);
    attr.ids = (const uint64_t *)(at + 8 + len);
    attr.nids = (size - 8 - len) / 8;
    return add_attr(file, &attr, offset, diag);
}

bool perf_open(const char *path, struct perf_file **out,
               struct perf_diag *diag)
{
    struct perf_file *file = calloc(1, sizeof *file);
    if (!file)
        return perf_fail(diag, PERF_NO_OFFSET, "out of memory");
    if (!load_input(path, file, diag) || !read_header(file, diag)) {
        perf_close(file);
        return false;
    }
    if (file->nattrs == 0) {
        perf_close(file);
        return perf_fail(diag, PERF_NO_OFFSET, "no event attribute");
    }
    *out = file;
    return true;
}

void perf_close(struct perf_file *file)
{
    if (!file)
        return;
    if (file->mapped)
        munmap((void *)file->bytes, file->size);
    else
        free((void *)file->bytes);
    for (size_t i = 0; i < file->nchunks; i++)
        free(file->chunks[i]);
    free(file->chunks);
    free(file->attrs);
    free(file->records);
    free(file->build_ids);
    free(file);
}

bool perf_is_pipe(const struct perf_file *file) { return file->pipe; }
size_t perf_attr_count(const struct perf_file *file) { return file->nattrs; }
const struct perf_attr *perf_attr_at(const struct perf_file *file, size_t i)
{
    return i < file->nattrs ? &file->attrs[i] : NULL;
}
size_t perf_record_count(const struct perf_file *file)
{
    return file->nrecords;
}
const struct perf_record *perf_record_at(const struct perf_file *file,
                                         size_t i)
{
    return i < file->nrecords ? &file->records[i] : NULL;
}
size_t perf_build_id_count(const struct perf_file *file)
{
    return file->nbuild_ids;
}
const struct perf_build_id *perf_build_id_at(const struct perf_file *file,
                                             size_t i)
{
    return i < file->nbuild_ids ? &file->build_ids[i] : NULL;
}
uint64_t perf_compressed_bytes(const struct perf_file *file)
{
    return file->compressed_bytes;
}
uint64_t perf_decompressed_bytes(const struct perf_file *file)
{
    return file->decompressed_bytes;
}
