/* SPDX-License-Identifier: MIT */
/* files.c — see files.h. */
#include "files.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

bool cli_files_add(struct cli_files *files, const char *path)
{
    if (files->count == files->capacity) {
        size_t capacity = files->capacity ? files->capacity * 2 : 64;
        char **grown = realloc(files->paths, capacity * sizeof *grown);
        if (!grown)
            return false;
        files->paths = grown;
        files->capacity = capacity;
    }
    if (!(files->paths[files->count] = strdup(path)))
        return false;
    files->total = ++files->count;
    return true;
}

int cli_files_add_manifest(struct cli_files *files, const char *manifest,
                           const char *command)
{
    struct cfi_diag diag;
    if (cfi_check_regular_file(manifest, &diag) != CFI_OK) {
        cli_report_file_error(manifest, &diag);
        return CLI_BAD_INPUT;
    }
    FILE *f = fopen(manifest, "r");
    if (!f) {
        fprintf(stderr, "cfisem %s: %s: cannot read the manifest\n", command,
                manifest);
        return CLI_BAD_INPUT;
    }
    char *line = NULL;
    size_t size = 0;
    int status = CLI_OK;
    while (status == CLI_OK && getline(&line, &size, f) > 0) {
        line[strcspn(line, "\t\n")] = 0;
        if (line[0] && line[0] != '#' && !cli_files_add(files, line)) {
            fprintf(stderr, "cfisem %s: out of memory\n", command);
            status = CLI_BAD_INPUT;
        }
    }
    free(line);
    fclose(f);
    return status;
}

struct sized {
    size_t place;
    uint64_t size;
};

static int larger_first(const void *a, const void *b)
{
    const struct sized *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->place < y->place ? -1 : x->place > y->place;
}

/* Which shard (0-based) each file goes to. */
static bool deal(const struct cli_files *files, size_t n, size_t *shard_of)
{
    struct sized *order = calloc(files->count + 1, sizeof *order);
    uint64_t *load = calloc(n, sizeof *load);
    if (!order || !load) {
        free(order);
        free(load);
        return false;
    }
    for (size_t i = 0; i < files->count; i++) {
        struct stat st;
        order[i].place = i;
        order[i].size = stat(files->paths[i], &st) == 0 ? (uint64_t)st.st_size : 0;
    }
    qsort(order, files->count, sizeof *order, larger_first);
    for (size_t i = 0; i < files->count; i++) {
        size_t lightest = 0;
        for (size_t s = 1; s < n; s++)
            if (load[s] < load[lightest])
                lightest = s;
        load[lightest] += order[i].size + 1;
        shard_of[order[i].place] = lightest;
    }
    free(order);
    free(load);
    return true;
}

bool cli_files_shard(struct cli_files *files, size_t k, size_t n)
{
    size_t *shard_of = calloc(files->count + 1, sizeof *shard_of);
    files->places = calloc(files->count + 1, sizeof *files->places);
    if (!shard_of || !files->places || !deal(files, n, shard_of)) {
        free(shard_of);
        return false;
    }
    size_t kept = 0;
    for (size_t i = 0; i < files->count; i++) {
        if (shard_of[i] != k - 1) {
            free(files->paths[i]);
            continue;
        }
        files->paths[kept] = files->paths[i];
        files->places[kept++] = i;
    }
    files->total = files->count;
    files->count = kept;
    free(shard_of);
    return true;
}

void cli_files_free(struct cli_files *files)
{
    for (size_t i = 0; i < files->count; i++)
        free(files->paths[i]);
    free(files->paths);
    free(files->places);
    memset(files, 0, sizeof *files);
}
