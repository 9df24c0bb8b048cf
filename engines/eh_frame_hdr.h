/* SPDX-License-Identifier: MIT */
/* eh_frame_hdr.h — the linker's .eh_frame_hdr checked against the
 * .eh_frame it indexes (`cfisem validate FILE --hdr`, and `cfisem diff`).
 *
 * The table (LSB Core, ".eh_frame_hdr"): a version byte (1), the
 * encodings of eh_frame_ptr, fde_count and the table entries, then
 * eh_frame_ptr (the address of .eh_frame), fde_count, and fde_count pairs
 * (initial location, FDE address) sorted by initial location. libgcc and
 * libunwind binary-search it and trust every entry. Checked:
 *   - the header: version 1, encodings this reader knows (an absolute,
 *     pc-relative or .eh_frame_hdr-relative pointer of a known format;
 *     "omit" only for fde_count and the table), a table encoding of fixed
 *     size, and datarel|sdata4, the only one libgcc and libunwind
 *     binary-search;
 *   - eh_frame_ptr is the address of .eh_frame;
 *   - fde_count is the number of FDEs of .eh_frame, the table fits in the
 *     section;
 *   - the entries are sorted by initial location, strictly;
 *   - each FDE address is the address of an FDE of .eh_frame, whose
 *     pc_begin is the entry's initial location; no FDE has two entries
 *     and none has none.
 * The bytes are read from the loaded image (the segment that holds the
 * section), as the unwinders read them. */
#ifndef CFISEM_ENGINES_EH_FRAME_HDR_H
#define CFISEM_ENGINES_EH_FRAME_HDR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"

#define ENGINE_HDR_PROBLEMS(X)                                               \
    X(not_loaded, "the section is not in a loadable segment")               \
    X(truncated, "the section is too short for its header or table")        \
    X(version, "version is not 1")                                          \
    X(encoding, "an encoding the header declares is not a known pointer "   \
                "encoding")                                                 \
    X(table_unsearchable, "the table encoding is not datarel|sdata4, the "  \
                          "only one libgcc and libunwind binary-search")    \
    X(eh_frame_ptr, "eh_frame_ptr is not the address of .eh_frame")         \
    X(count, "fde_count is not the number of FDEs in .eh_frame")            \
    X(unsorted, "the entry's initial location is below the previous one")  \
    X(duplicate, "the entry's initial location equals the previous one")    \
    X(not_an_fde, "the entry's FDE address is not an FDE of .eh_frame")     \
    X(wrong_location, "the entry's initial location is not its FDE's "      \
                      "pc_begin")                                           \
    X(repeated_fde, "the entry's FDE has an earlier entry")                 \
    X(missing_fde, "an FDE of .eh_frame has no entry")

enum engine_hdr_problem_kind {
#define ENGINE_HDR_ENUM(name, text) ENGINE_HDR_##name,
    ENGINE_HDR_PROBLEMS(ENGINE_HDR_ENUM)
#undef ENGINE_HDR_ENUM
    ENGINE_HDR_PROBLEM_COUNT
};

const char *engine_hdr_problem_name(enum engine_hdr_problem_kind kind);
const char *engine_hdr_problem_text(enum engine_hdr_problem_kind kind);

/* One problem: `entry` is the table index (or ENGINE_HDR_NO_ENTRY), with
 * the entry's two fields; for missing_fde, `fde_addr` and `location` are
 * the FDE's address and pc_begin. */
#define ENGINE_HDR_NO_ENTRY UINT64_MAX
struct engine_hdr_problem {
    enum engine_hdr_problem_kind kind;
    uint64_t entry;
    uint64_t location;
    uint64_t fde_addr;
};

#define ENGINE_HDR_KEPT 64

struct engine_hdr_check {
    bool present;             /* the file has an .eh_frame_hdr */
    uint64_t addr, size;      /* of .eh_frame_hdr */
    uint8_t version, eh_frame_ptr_enc, fde_count_enc, table_enc;
    uint64_t eh_frame_ptr;
    uint64_t count;           /* fde_count, as declared */
    uint64_t entries;         /* entries read */
    uint64_t nfdes;           /* FDEs of .eh_frame */
    uint64_t nproblems;       /* all of them */
    size_t nkept;             /* the first ENGINE_HDR_KEPT */
    struct engine_hdr_problem kept[ENGINE_HDR_KEPT];
};

/* Checks file's .eh_frame_hdr. CFI_OK whatever the table holds (its
 * problems are the result); CFI_E_NOMEM only. A file without the section
 * has present false and no problem. */
enum cfi_status engine_hdr_check(const struct cfi_file *file,
                                 struct engine_hdr_check *check);

/* The FDE address the table gives for `pc`, found as libgcc, libunwind
 * and libdw find it: the binary search of a datarel|sdata4 table (the
 * entries the header declares, as far as the section holds them) for
 * the last entry whose initial location is at or below `pc`, trusted.
 * *table: the file has such a table. False: no table, or no entry at
 * or below `pc`. */
bool engine_hdr_lookup(const struct cfi_file *file, uint64_t pc,
                       bool *table, uint64_t *fde_addr);

/* The result as text: a summary line, then up to `show` problems. */
void engine_hdr_text(FILE *out, const char *path,
                     const struct engine_hdr_check *check, size_t show);
/* One line naming the first problem and the count, for diff's report. */
void engine_hdr_summary(FILE *out, const char *path,
                        const struct engine_hdr_check *check);
/* The same line from the count and the first problem's kind. */
void engine_hdr_summary_line(FILE *out, const char *path, uint64_t nproblems,
                             enum engine_hdr_problem_kind first);

#endif
