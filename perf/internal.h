/* SPDX-License-Identifier: MIT */
/* internal.h — perf/'s own types: the opened file. */
#ifndef CFISEM_PERF_INTERNAL_H
#define CFISEM_PERF_INTERNAL_H

#include "perf/perf.h"

struct perf_file {
    const uint8_t *bytes;        /* the whole input */
    size_t size;
    bool mapped;                 /* mmap'd (else malloc'd) */
    bool pipe;
    struct perf_attr *attrs;
    size_t nattrs, attrs_cap;
    struct perf_record *records;
    size_t nrecords, records_cap;
    struct perf_build_id *build_ids;
    size_t nbuild_ids, build_ids_cap;
    uint8_t **chunks;            /* decompressed data, kept */
    size_t nchunks, chunks_cap;
    uint64_t compressed_bytes, decompressed_bytes;
};

/* Grows *array (of *cap elements of `size` bytes) to hold n + 1. */
bool perf_grow(void *array, size_t *cap, size_t n, size_t size);

/* Fills *diag; returns false. */
bool perf_fail(struct perf_diag *diag, uint64_t offset, const char *message);

uint32_t perf_u32_at(const void *at);
uint16_t perf_u16_at(const void *at);

/* Parses a struct perf_event_attr of `size` bytes at `at` (the size the
 * file gives; fields past it are zero). */
bool perf_attr_parse(const uint8_t *at, size_t size, struct perf_attr *attr);

/* The sample_id trailer's size for an attribute. */
size_t perf_id_size(uint64_t sample_type);

/* Walks the records in [at, at + size) of the input (`base` is at's
 * offset in it), appending them; decompresses COMPRESSED ones. */
bool perf_walk_records(struct perf_file *file, const uint8_t *at,
                       size_t size, uint64_t base, struct perf_diag *diag);

/* A build-id entry (HEADER_BUILD_ID: a feature's entries, or one pipe
 * record) at `at`, `size` bytes. */
bool perf_add_build_id(struct perf_file *file, const uint8_t *at,
                       size_t size, uint64_t offset, struct perf_diag *diag);

/* Pipe mode's records that carry what file mode's header does. */
bool perf_pipe_attr(struct perf_file *file, const uint8_t *at, size_t size,
                    uint64_t offset, struct perf_diag *diag);
bool perf_pipe_feature(struct perf_file *file, const uint8_t *at,
                       size_t size, uint64_t offset, struct perf_diag *diag);

#endif
