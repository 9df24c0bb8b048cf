/* SPDX-License-Identifier: MIT */
/* perf.h — a reader of perf.data, the file `perf record` writes.
 *
 * The format is Linux's (tools/perf/Documentation/perf.data-file-format.txt,
 * include/uapi/linux/perf_event.h); this module reads little-endian
 * files of a 64-bit host, in both of perf's modes:
 *
 *   - file mode: a header (magic "PERFILE2", the attribute, data and
 *     feature sections), the records in the data section, then the
 *     feature sections (HEADER_BUILD_ID is read; the others skipped);
 *   - pipe mode (`perf record -o -`): a 16-byte header, then records
 *     only; the attributes and features come as records of their own
 *     (PERF_RECORD_HEADER_ATTR, PERF_RECORD_HEADER_BUILD_ID, ...).
 *
 * perf_open reads the whole input once (a regular file is mapped, a pipe
 * on standard input read) and checks every length against the bytes
 * there are: a record, a section or a field that claims more is an error
 * with the byte offset, never a read past the end. PERF_RECORD_COMPRESSED
 * records are decompressed (zstd) and their records listed as the
 * others; the decompressed data may not exceed PERF_MAX_EXPANSION times
 * the file's size. Memory grows with the input, never with a size or a
 * count it claims.
 *
 * The records are listed in file order (struct perf_record); a sample is
 * parsed on demand by its attribute's sample_type (perf_sample_parse).
 * perf_procs (procs.c) then makes, once per file, the object table of
 * every process as it changes with time (MMAP, MMAP2, FORK, COMM with
 * exec, EXIT).
 */
#ifndef CFISEM_PERF_PERF_H
#define CFISEM_PERF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Record types (perf_event.h's enum perf_event_type, then perf's own
 * user records, numbered from 64, named as perf report -D names them). */
#define PERF_RECORD_LIST(X)                                                 \
    X(1, MMAP)                                                              \
    X(2, LOST)                                                              \
    X(3, COMM)                                                              \
    X(4, EXIT)                                                              \
    X(5, THROTTLE)                                                          \
    X(6, UNTHROTTLE)                                                        \
    X(7, FORK)                                                              \
    X(8, READ)                                                              \
    X(9, SAMPLE)                                                            \
    X(10, MMAP2)                                                            \
    X(11, AUX)                                                              \
    X(12, ITRACE_START)                                                     \
    X(13, LOST_SAMPLES)                                                     \
    X(14, SWITCH)                                                           \
    X(15, SWITCH_CPU_WIDE)                                                  \
    X(16, NAMESPACES)                                                       \
    X(17, KSYMBOL)                                                          \
    X(18, BPF_EVENT)                                                        \
    X(19, CGROUP)                                                           \
    X(20, TEXT_POKE)                                                        \
    X(21, AUX_OUTPUT_HW_ID)                                                 \
    X(64, ATTR)                                                      \
    X(65, EVENT_TYPE)                                                \
    X(66, TRACING_DATA)                                              \
    X(67, BUILD_ID)                                                  \
    X(68, FINISHED_ROUND)                                                   \
    X(69, ID_INDEX)                                                         \
    X(70, AUXTRACE_INFO)                                                    \
    X(71, AUXTRACE)                                                         \
    X(72, AUXTRACE_ERROR)                                                   \
    X(73, THREAD_MAP)                                                       \
    X(74, CPU_MAP)                                                          \
    X(75, STAT_CONFIG)                                                      \
    X(76, STAT)                                                             \
    X(77, STAT_ROUND)                                                       \
    X(78, EVENT_UPDATE)                                                     \
    X(79, TIME_CONV)                                                        \
    X(80, FEATURE)                                                   \
    X(81, COMPRESSED)                                                       \
    X(82, FINISHED_INIT)

enum perf_record_type {
#define PERF_RECORD_ENUM(num, name) PERF_REC_##name = num,
    PERF_RECORD_LIST(PERF_RECORD_ENUM)
#undef PERF_RECORD_ENUM
};

/* "MMAP2", "SAMPLE"; NULL for a number perf_event.h does not name. */
const char *perf_record_name(uint32_t type);

/* sample_type bits (perf_event.h's enum perf_event_sample_format). */
enum {
    PERF_S_IP = 1u << 0,
    PERF_S_TID = 1u << 1,
    PERF_S_TIME = 1u << 2,
    PERF_S_ADDR = 1u << 3,
    PERF_S_READ = 1u << 4,
    PERF_S_CALLCHAIN = 1u << 5,
    PERF_S_ID = 1u << 6,
    PERF_S_CPU = 1u << 7,
    PERF_S_PERIOD = 1u << 8,
    PERF_S_STREAM_ID = 1u << 9,
    PERF_S_RAW = 1u << 10,
    PERF_S_BRANCH_STACK = 1u << 11,
    PERF_S_REGS_USER = 1u << 12,
    PERF_S_STACK_USER = 1u << 13,
    PERF_S_WEIGHT = 1u << 14,
    PERF_S_DATA_SRC = 1u << 15,
    PERF_S_IDENTIFIER = 1u << 16,
    PERF_S_TRANSACTION = 1u << 17,
    PERF_S_REGS_INTR = 1u << 18,
    PERF_S_PHYS_ADDR = 1u << 19,
    PERF_S_AUX = 1u << 20,
    PERF_S_CGROUP = 1u << 21,
    PERF_S_DATA_PAGE_SIZE = 1u << 22,
    PERF_S_CODE_PAGE_SIZE = 1u << 23,
    PERF_S_WEIGHT_STRUCT = 1u << 24,
    PERF_S_KNOWN = (1u << 25) - 1,
};

/* Callchain context markers (perf_event.h's enum perf_callchain_context):
 * entries at or above PERF_CONTEXT_MAX say whose frames follow. */
#define PERF_CONTEXT_HV ((uint64_t)-32)
#define PERF_CONTEXT_KERNEL ((uint64_t)-128)
#define PERF_CONTEXT_USER ((uint64_t)-512)
#define PERF_CONTEXT_MAX ((uint64_t)-4095)

/* What is wrong with an input: the byte offset in the input (or in the
 * decompressed stream of a compressed record, said in the message) and
 * a fixed text. */
#define PERF_NO_OFFSET UINT64_MAX
struct perf_diag {
    uint64_t offset;
    const char *message;
};

/* The limit on decompressed data: this many times the input's size. */
#define PERF_MAX_EXPANSION 1024

/* One event attribute (struct perf_event_attr, the fields used here)
 * and the sample ids that name it. */
struct perf_attr {
    uint32_t type;
    uint64_t config;
    uint64_t sample_type;
    uint64_t read_format;
    uint64_t flags;              /* the bit fields' word */
    uint64_t branch_sample_type;
    uint64_t sample_regs_user;
    uint32_t sample_stack_user;
    uint64_t sample_regs_intr;
    bool sample_id_all;
    bool exclude_callchain_user;
    const uint64_t *ids;         /* into the input; may be unaligned: */
    size_t nids;                 /* read with perf_u64_at */
    const char *name;            /* HEADER_EVENT_DESC's, or NULL */
    size_t id_size;              /* bytes of sample_id at a record's end */
};

/* One record, as found: `data` points at its header (8 bytes: type,
 * misc, size) in the input or in a decompressed buffer; `offset` is its
 * offset in the input (for a decompressed record, that of the
 * compressed record holding it, and `compressed` is set). */
struct perf_record {
    const uint8_t *data;
    uint32_t type;
    uint16_t misc;
    uint16_t size;
    uint64_t offset;
    bool compressed;
};

/* A build-id the file names (HEADER_BUILD_ID). */
struct perf_build_id {
    int32_t pid;
    uint8_t id[20];
    uint8_t size;                /* bytes of id that are the build-id */
    const char *path;            /* NUL-terminated, in the input */
};

struct perf_file;

/* Opens and checks `path` ("-": standard input, which must be in pipe
 * mode or a regular file). A directory, a FIFO or a device is refused.
 * On error returns false with *diag filled (never a partial file). */
bool perf_open(const char *path, struct perf_file **file,
               struct perf_diag *diag);
void perf_close(struct perf_file *file);

bool perf_is_pipe(const struct perf_file *file);
size_t perf_attr_count(const struct perf_file *file);
const struct perf_attr *perf_attr_at(const struct perf_file *file,
                                     size_t i);
size_t perf_record_count(const struct perf_file *file);
const struct perf_record *perf_record_at(const struct perf_file *file,
                                         size_t i);
size_t perf_build_id_count(const struct perf_file *file);
const struct perf_build_id *perf_build_id_at(const struct perf_file *file,
                                             size_t i);
/* The bytes of compressed records and what they gave. */
uint64_t perf_compressed_bytes(const struct perf_file *file);
uint64_t perf_decompressed_bytes(const struct perf_file *file);

/* A u64 at an address that may be unaligned. */
uint64_t perf_u64_at(const void *at);

/* The attribute a record belongs to: by its sample id when there are
 * several, else the only one. NULL: no attribute has the record's id. */
const struct perf_attr *perf_record_attr(const struct perf_file *file,
                                         const struct perf_record *record);

/* The fields of a record's sample_id trailer (sample_id_all), those its
 * attribute has; `time_known` says TIME is among them. */
struct perf_sample_id {
    uint32_t pid, tid;
    uint64_t time;
    bool time_known;
};
bool perf_record_sample_id(const struct perf_file *file,
                           const struct perf_record *record,
                           struct perf_sample_id *id);

/* ------------------------------------------------------------------ */
/* Samples                                                              */
/* ------------------------------------------------------------------ */

/* The fields of a PERF_RECORD_SAMPLE this reader keeps. Pointers are
 * into the record (unaligned: read them with perf_u64_at). */
struct perf_sample {
    const struct perf_attr *attr;
    uint64_t ip;
    uint32_t pid, tid;
    uint64_t time;
    uint64_t addr;
    uint32_t cpu;
    uint64_t period;
    uint64_t id;
    const uint8_t *callchain;    /* nr u64 entries */
    uint64_t callchain_nr;
    uint64_t regs_abi;           /* 0: no registers (a kernel thread) */
    uint64_t regs_mask;          /* attr's sample_regs_user */
    const uint8_t *regs;         /* one u64 per bit of regs_mask */
    uint64_t stack_size;         /* bytes copied (STACK_USER's size) */
    const uint8_t *stack;
    uint64_t stack_dyn_size;     /* of which valid (dyn_size) */
};

/* Parses a SAMPLE record by its attribute's sample_type; every field's
 * length is checked against the record. */
bool perf_sample_parse(const struct perf_file *file,
                       const struct perf_record *record,
                       struct perf_sample *sample, struct perf_diag *diag);

/* The value of perf register `reg` (x86-64: perf_regs.h's numbering,
 * AX=0 .. R15=23) if the sample has it. */
bool perf_sample_reg(const struct perf_sample *sample, unsigned reg,
                     uint64_t *value);

/* Reads `size` bytes (1 .. 8) at `addr` from a sample's stack copy,
 * `len` bytes that held [sp, sp + len), into *value, zero-extended, as
 * the little-endian host reads them (the unwinders read the samples of
 * their own machine); false when they are not all in the copy. A word,
 * the most common read, is one load. */
static inline bool perf_stack_read(const uint8_t *stack, uint64_t len,
                                   uint64_t sp, uint64_t addr,
                                   unsigned size, uint64_t *value)
{
    if (addr < sp || addr - sp > len || len - (addr - sp) < size
        || size > 8)
        return false;
    const uint8_t *at = stack + (addr - sp);
    if (size == 8) {
        memcpy(value, at, 8);
        return true;
    }
    uint8_t bytes[8] = {0};
    memcpy(bytes, at, size);
    memcpy(value, bytes, 8);
    return true;
}

/* ------------------------------------------------------------------ */
/* Processes and their objects over time                               */
/* ------------------------------------------------------------------ */

/* One mapping of a process, live in [from, to) of the file's order key
 * (the time when the records have one, else the record index). */
struct perf_map {
    uint64_t start, end, pgoff;
    const char *path;            /* NUL-terminated, in the input */
    const uint8_t *build_id;     /* NULL or build_id_size bytes */
    uint8_t build_id_size;
    uint64_t from, to;
};

/* The file that holds a mapping's bytes: its path, or for the vDSO the
 * copy perf record saves in its build-id cache,
 * $HOME/.debug/[vdso]/BUILD-ID/vdso, written into buf. NULL for what has
 * no file ([stack], a vDSO not saved). */
const char *perf_map_file(const struct perf_map *map, char *buf,
                          size_t size);

struct perf_procs;

/* The processes' object tables, from every MMAP, MMAP2, FORK, COMM (exec)
 * and EXIT record, taken in time order. Build-ids named by the file's
 * HEADER_BUILD_ID are attached to the mappings of the same path that
 * have none. */
bool perf_procs_build(const struct perf_file *file, struct perf_procs **procs,
                      struct perf_diag *diag);
void perf_procs_free(struct perf_procs *procs);
size_t perf_procs_count(const struct perf_procs *procs);

/* The order key of a record (its time, or its index when the file has no
 * times). */
uint64_t perf_procs_key(const struct perf_procs *procs,
                        const struct perf_file *file, size_t record_index);

/* A SAMPLE record of a file and its order key. */
struct perf_sample_ref {
    uint64_t key;
    size_t index;                /* perf_record_at's */
};

/* The file's SAMPLE records in time order (by key, then index), in a
 * new array of *n (free it); NULL when out of memory. */
struct perf_sample_ref *perf_samples_in_order(const struct perf_procs *procs,
                                              const struct perf_file *file,
                                              size_t *n);

/* The mappings of process `pid` live at `key`, in the order they were
 * made (a later one replaces what it overlaps), into maps[0 .. *n) (at
 * most max); `*generation` changes whenever that set does. False when
 * the process is unknown. */
bool perf_procs_maps_at(const struct perf_procs *procs, uint32_t pid,
                        uint64_t key, const struct perf_map **maps,
                        size_t max, size_t *n, uint64_t *generation);

/* The command name of `pid`/`tid` at `key` ("[unknown]" when none). */
const char *perf_procs_comm(const struct perf_procs *procs, uint32_t tid,
                            uint64_t key);

#endif
