/* SPDX-License-Identifier: MIT */
/* files.h — the list of input files of a command that takes many (diff,
 * stats): paths given, the paths of a manifest (`make corpus`: one file
 * a line, its path before the first tab; lines starting with # are
 * comments), and a shard of the list for one of N machines. */
#ifndef CFISEM_CLI_FILES_H
#define CFISEM_CLI_FILES_H

#include <stdbool.h>
#include <stddef.h>

struct cli_files {
    char **paths;            /* owned */
    size_t count, capacity;
    size_t *places;          /* after cli_files_shard: each file's place in
                                the whole list; NULL: the whole list */
    size_t total;            /* the whole list's length */
};

/* False when out of memory. */
bool cli_files_add(struct cli_files *files, const char *path);
/* Appends the manifest's paths: a CLI_* status (one line on stderr naming
 * the manifest when it cannot be read). */
int cli_files_add_manifest(struct cli_files *files, const char *manifest,
                           const char *command);
/* Keeps shard k of n (1 <= k <= n): the files are dealt out by size,
 * largest first, each to the shard that has the fewest bytes so far, so
 * that the shards take about as long; each keeps its order and its place
 * in the whole list. Every machine given the same list deals the same
 * shards. False when out of memory. */
bool cli_files_shard(struct cli_files *files, size_t k, size_t n);
void cli_files_free(struct cli_files *files);

#endif
