/* SPDX-License-Identifier: MIT */
/* stats.h — what the files of `cfisem stats` share (cli/ only): the
 * counts of one corpus (or of one producer's part of it), how they are
 * gathered from a file (stats_file.c), merged, and printed
 * (stats_print.c). */
#ifndef CFISEM_CLI_STATS_H
#define CFISEM_CLI_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "semantics/sem.h"

/* Counts by text: expressions, augmentations, errors, producers. Each
 * key keeps an example: the first, in sorted order, of the files it was
 * seen in. */
struct stats_map {
    char **keys;
    char **examples;
    uint64_t *counts;
    void **values;          /* stats by producer: struct stats * */
    size_t capacity, count;
};

bool stats_map_add(struct stats_map *map, const char *key,
                   const char *example, uint64_t count);
/* The value slot of key (added with count 0 when absent); NULL when out
 * of memory. */
void **stats_map_slot(struct stats_map *map, const char *key);
void stats_map_free(struct stats_map *map);
/* The indexes of the keys, by decreasing count then key (malloc'd). */
size_t *stats_map_sorted(const struct stats_map *map);

/* The rule kinds counted per register and row: SEM_RULE_* values. */
#define STATS_RULE_KINDS 8

struct stats {
    uint64_t files, files_no_cfi, files_failed;
    uint64_t cies[2], fdes[2];       /* by enum cfi_section */
    uint64_t nop_only, fdes_failed, rows;
    uint64_t *rows_histogram;        /* [n]: FDEs with n rows */
    size_t histogram_len;
    uint64_t opcodes[256];           /* by enum sem_opcode */
    uint64_t cfa_kinds[3];           /* by enum sem_cfa_kind, per row */
    uint64_t rule_kinds[CFI_NREGS][STATS_RULE_KINDS]; /* per row */
    struct stats_map expressions;    /* "def_cfa_expression: breg7 8; deref" */
    struct stats_map augmentations;  /* per CIE */
    struct stats_map errors;         /* FDEs that do not translate, files
                                        that do not load */
    /* The architectures of the files read: STATS_X86_64, STATS_AARCH64.
     * Registers are named by the one architecture, or "rN" when both. */
    unsigned archs;
    bool out_of_memory;
};

enum { STATS_X86_64 = 1, STATS_AARCH64 = 2 };

/* Adds one file (its path) to `all` and, when by_producer, to the stats
 * of its producer in `producers` (struct stats * values). */
void stats_add_file(struct stats *all, struct stats_map *producers,
                    bool by_producer, const char *path);
/* into += from. */
void stats_merge(struct stats *into, const struct stats *from);
void stats_free(struct stats *stats);

/* The median, p90, p99 and max of rows per FDE. */
struct stats_quantiles {
    uint64_t median, p90, p99, max;
};
struct stats_quantiles stats_rows_quantiles(const struct stats *stats);

/* Text tables on out; JSON: one object. */
void stats_print_text(FILE *out, const struct stats *all,
                      const struct stats_map *producers);
void stats_print_json(FILE *out, const struct stats *all,
                      const struct stats_map *producers);

#endif
