/* SPDX-License-Identifier: MIT */
/* merge.c — diff_run_merge (merge.h). The merged run owns copies of
 * everything it takes from the parts: its strings are kept by it, its
 * records' row texts are its own. */
#include "merge.h"
#include "harness_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the file at place `index` of the whole list is. */
struct place {
    size_t part, file;       /* part == SIZE_MAX: in no part yet */
};

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* What differs between the settings of two runs, or NULL. */
static const char *settings_differ(const struct diff_run *a,
                                   const struct diff_run *b)
{
    const struct diff_config *x = &a->config, *y = &b->config;
    if (x->seed != y->seed)
        return "its seed differs from the first part's";
    if (x->nstates != y->nstates || x->all_pcs != y->all_pcs ||
        !same_text(x->pcs_name, y->pcs_name))
        return "its questions differ from the first part's (states, "
               "--all-pcs or --pcs)";
    if (memcmp(x->engines, y->engines, sizeof x->engines) != 0)
        return "its engines differ from the first part's";
    if (x->nfaults != y->nfaults ||
        memcmp(x->faults, y->faults, x->nfaults * sizeof x->faults[0]) != 0)
        return "its --fault ranges differ from the first part's";
    if (x->keep != y->keep)
        return "its --keep differs from the first part's";
    if (!same_text(x->engine_config.eh_elf_path, y->engine_config.eh_elf_path))
        return "its --eh-elf differs from the first part's";
    if (!same_text(x->producer, y->producer))
        return "it was written by another version of cfisem than the "
               "first part";
    return NULL;
}

/* The same, and over the same list (a shard of it). */
static const char *shard_differs(const struct diff_run *a,
                                 const struct diff_run *b)
{
    const char *differ = settings_differ(a, b);
    if (!differ && a->files_total != b->files_total)
        differ = "it is a part of another list of files (files_total "
                 "differs from the first part's)";
    return differ;
}

/* The length of the entry of `list` ("NAME ID; NAME ID") at `entry`. */
static size_t entry_length(const char *entry)
{
    const char *end = strstr(entry, "; ");
    return end ? (size_t)(end - entry) : strlen(entry);
}

/* The entry of `list` with the NAME of `entry`, or NULL. */
static const char *entry_named(const char *list, const char *entry)
{
    size_t name = strcspn(entry, " ");
    for (const char *e = list; *e; e += entry_length(e)) {
        if (e != list)
            e += 2;
        if (!strncmp(e, entry, name) && e[name] == ' ')
            return e;
    }
    return NULL;
}

/* The first entry of `a` not in `b`, or NULL. */
static const char *entry_not_in(const char *a, const char *b)
{
    for (const char *e = a; *e; e += entry_length(e)) {
        if (e != a)
            e += 2;
        const char *other = entry_named(b, e);
        if (!other || entry_length(other) != entry_length(e) ||
            strncmp(other, e, entry_length(e)))
            return e;
    }
    return NULL;
}

/* The ID of an entry whose NAME is `name` long ("(not loaded)" for no
 * entry). */
static int entry_id(const char *entry, size_t name, const char **id)
{
    size_t length = entry ? entry_length(entry) : 0;
    *id = entry && name < length ? entry + name + 1 : "(not loaded)";
    return entry && name < length ? (int)(length - name - 1)
                                  : (int)strlen(*id);
}

/* Whether part b was made by another build of the program or of a
 * library than part a; `why` says which, and both build IDs. */
static bool builds_differ(const struct diff_run *a, const struct diff_run *b,
                          char *why, size_t size)
{
    const char *x = a->config.build, *y = b->config.build;
    if (same_text(x, y))
        return false;
    if (!x || !y) {
        snprintf(why, size, "%s", x ? "it names no build (\"build\"), and "
                 "the first part does" : "it names its build (\"build\"), "
                 "and the first part does not");
        return true;
    }
    /* Its first entry that is not the first part's, else the first
     * part's first entry that is not its. */
    const char *mine = entry_not_in(y, x), *theirs = NULL;
    if (mine)
        theirs = entry_named(x, mine);
    else if ((theirs = entry_not_in(x, y)) != NULL)
        mine = entry_named(y, theirs);
    const char *named = mine ? mine : theirs ? theirs : "";
    size_t name = strcspn(named, " ");
    const char *my_id, *their_id;
    int my_length = entry_id(mine, name, &my_id);
    int their_length = entry_id(theirs, name, &their_id);
    snprintf(why, size, "it was made by another build than the first "
             "part: %.*s %.*s against %.*s (every part needs the same "
             "cfisem build and libraries)", (int)name, named, my_length,
             my_id, their_length, their_id);
    return true;
}

static enum cfi_status refuse(size_t part, size_t *bad_part, char *why,
                              size_t size, const char *what)
{
    *bad_part = part;
    snprintf(why, size, "%s", what);
    return CFI_E_MALFORMED;
}

/* Each place of the whole list in exactly one part. The file at index
 * i of part p has the place offsets[p] + i. */
static enum cfi_status place_files(struct diff_run *const *parts,
                                   size_t nparts, const size_t *offsets,
                                   struct place *places, size_t total,
                                   size_t *bad_part, char *why, size_t size)
{
    for (size_t i = 0; i < total; i++)
        places[i].part = SIZE_MAX;
    for (size_t p = 0; p < nparts; p++)
        for (size_t f = 0; f < parts[p]->nfiles; f++) {
            size_t index = parts[p]->files[f].index;
            if (index >= parts[p]->files_total)
                return refuse(p, bad_part, why, size, "a file's index is past "
                              "files_total");
            index += offsets[p];
            if (index >= total)
                return refuse(p, bad_part, why, size, "a file's index is past "
                              "files_total");
            if (places[index].part != SIZE_MAX)
                return refuse(p, bad_part, why, size, "a file of it is in an "
                              "earlier part too (the same shard twice?)");
            places[index] = (struct place){p, f};
        }
    for (size_t i = 0; i < total; i++)
        if (places[i].part == SIZE_MAX) {
            size_t held = 0;
            for (size_t p = 0; p < nparts; p++)
                held += parts[p]->nfiles;
            snprintf(why, size, "the parts hold %zu of the %zu files of the "
                     "list (the file at index %zu is in none: a shard "
                     "missing?)", held, total, i);
            *bad_part = SIZE_MAX;
            return CFI_E_MALFORMED;
        }
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Copying into the merged run                                          */
/* ------------------------------------------------------------------ */

struct merging {
    struct diff_run *run;
    struct diff_run *const *parts;
    size_t **to_merged;      /* per part, per file: its place */
    bool ok;
};

static const char *keep(struct merging *m, const char *text)
{
    const char *kept = diff_harness_keep_string(m->run, text);
    m->ok &= !text || kept;
    return kept;
}

static void copy_file(struct merging *m, size_t at,
                      const struct diff_file_result *from)
{
    struct diff_file_result *to = &m->run->files[at];
    *to = *from;
    to->index = at;
    to->path = keep(m, from->path);
    to->diag.message = keep(m, from->diag.message);
    m->run->requests += from->requests;
}

/* A copy of a part's record, renumbered to the merged run's file. */
static struct diff_record copy_record(struct merging *m, size_t part,
                                      const struct diff_record *from)
{
    struct diff_record to = *from;
    to.file = m->to_merged[part][from->file];
    to.row_text = from->row_text ? strdup(from->row_text) : NULL;
    m->ok &= !from->row_text || to.row_text;
    to.expected.diag.message = keep(m, from->expected.diag.message);
    to.got.diag.message = keep(m, from->got.diag.message);
    return to;
}

static void add_counts(struct diff_run *run, const struct diff_run *part)
{
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        run->reference[s] += part->reference[s];
    for (int e = 0; e < ENGINE_COUNT; e++) {
        struct diff_counts *c = &run->counts[e];
        const struct diff_counts *d = &part->counts[e];
        c->compared += d->compared;
        c->agree += d->agree;
        c->differ += d->differ;
        c->known_deviation += d->known_deviation;
        c->not_comparable += d->not_comparable;
        c->errors += d->errors;
    }
    for (size_t d = 0; d < run->ndeviations; d++)
        run->deviation_counts[d] += part->deviation_counts[d];
    run->records_total += part->records_total;
    run->seconds += part->seconds;
}

/* Each deviation's example: the one of the first file that has one. */
static void take_examples(struct merging *m, size_t nparts)
{
    struct diff_run *run = m->run;
    for (size_t d = 0; d < run->ndeviations; d++) {
        size_t best = SIZE_MAX, from = 0;
        for (size_t p = 0; p < nparts; p++) {
            const struct diff_record *e = &m->parts[p]->deviation_examples[d];
            if (e->engine != ENGINE_COUNT &&
                m->to_merged[p][e->file] < best)
                best = m->to_merged[p][e->file], from = p;
        }
        if (best != SIZE_MAX)
            run->deviation_examples[d] =
                copy_record(m, from, &m->parts[from]->deviation_examples[d]);
    }
}

/* The records, then the failures, of the merged run's files in turn:
 * within a file, a part keeps them in the order one run gives. */
static void take_lists(struct merging *m, const struct place *places,
                       size_t total)
{
    struct diff_run *run = m->run;
    for (size_t i = 0; i < total && m->ok; i++) {
        const struct diff_run *part = m->parts[places[i].part];
        for (size_t r = 0; r < part->nrecords && m->ok; r++) {
            if (part->records[r].file != places[i].file)
                continue;
            struct diff_record record =
                copy_record(m, places[i].part, &part->records[r]);
            m->ok &= diff_harness_add_record(run, &record);
        }
        for (size_t f = 0; f < part->nfailures && m->ok; f++) {
            if (part->failures[f].file != places[i].file)
                continue;
            struct diff_open_failure failure = part->failures[f];
            failure.file = i;
            failure.diag.message = keep(m, failure.diag.message);
            m->ok &= diff_harness_add_failure(run, &failure);
        }
    }
}

static bool map_files(struct merging *m, size_t nparts,
                      const struct place *places, size_t total)
{
    for (size_t p = 0; p < nparts; p++) {
        m->to_merged[p] = calloc(m->parts[p]->nfiles + 1, sizeof **m->to_merged);
        if (!m->to_merged[p])
            return false;
    }
    for (size_t i = 0; i < total; i++)
        m->to_merged[places[i].part][places[i].file] = i;
    return true;
}

static struct diff_run *build(struct diff_run *const *parts, size_t nparts,
                              const struct place *places, size_t total)
{
    struct diff_config config = parts[0]->config;
    struct merging m = {NULL, parts, calloc(nparts, sizeof *m.to_merged), true};
    const char **paths = calloc(total + 1, sizeof *paths);
    for (size_t i = 0; paths && i < total; i++)
        paths[i] = parts[places[i].part]->files[places[i].file].path;
    m.run = m.to_merged && paths ? diff_harness_run_new(&config, paths, total)
                                 : NULL;
    free(paths);
    m.ok = m.run && map_files(&m, nparts, places, total);
    if (m.ok) {
        m.run->config.producer = keep(&m, config.producer);
        m.run->config.build = keep(&m, config.build);
        m.run->config.pcs_name = keep(&m, config.pcs_name);
        m.run->config.engine_config.eh_elf_path =
            keep(&m, config.engine_config.eh_elf_path);
        for (size_t i = 0; i < total; i++)
            copy_file(&m, i, &parts[places[i].part]->files[places[i].file]);
        for (size_t p = 0; p < nparts; p++)
            add_counts(m.run, parts[p]);
        take_examples(&m, nparts);
        take_lists(&m, places, total);
    }
    for (size_t p = 0; m.to_merged && p < nparts; p++)
        free(m.to_merged[p]);
    free(m.to_merged);
    if (!m.ok) {
        diff_run_free(m.run);
        return NULL;
    }
    return m.run;
}

/* The merge of parts placed by `offsets` into a list of `total` files. */
static enum cfi_status merge_placed(struct diff_run *const *parts,
                                    size_t nparts, const size_t *offsets,
                                    size_t total, struct diff_run **run,
                                    size_t *bad_part, char *why, size_t size)
{
    struct place *places = calloc(total + 1, sizeof *places);
    if (!places)
        return refuse(SIZE_MAX, bad_part, why, size, "out of memory");
    enum cfi_status status = place_files(parts, nparts, offsets, places,
                                         total, bad_part, why, size);
    if (status == CFI_OK) {
        *run = build(parts, nparts, places, total);
        if (!*run)
            status = refuse(SIZE_MAX, bad_part, why, size, "out of memory");
    }
    free(places);
    return status;
}

enum cfi_status diff_run_merge(struct diff_run *const *parts, size_t nparts,
                               struct diff_run **run, size_t *bad_part,
                               char *why, size_t size)
{
    *run = NULL;
    *bad_part = SIZE_MAX;
    if (nparts == 0)
        return refuse(SIZE_MAX, bad_part, why, size, "no part to merge");
    char note[512];
    for (size_t p = 1; p < nparts; p++) {
        const char *differ = shard_differs(parts[0], parts[p]);
        if (!differ && builds_differ(parts[0], parts[p], note, sizeof note))
            differ = note;
        if (differ)
            return refuse(p, bad_part, why, size, differ);
    }
    size_t *offsets = calloc(nparts, sizeof *offsets);
    if (!offsets)
        return refuse(SIZE_MAX, bad_part, why, size, "out of memory");
    enum cfi_status status = merge_placed(parts, nparts, offsets,
                                          parts[0]->files_total, run,
                                          bad_part, why, size);
    free(offsets);
    return status;
}

enum cfi_status diff_run_concat(struct diff_run *const *parts, size_t nparts,
                                struct diff_run **run, size_t *bad_part,
                                char *why, size_t size)
{
    *run = NULL;
    *bad_part = SIZE_MAX;
    if (nparts == 0)
        return refuse(SIZE_MAX, bad_part, why, size, "no part to merge");
    size_t *offsets = calloc(nparts, sizeof *offsets);
    if (!offsets)
        return refuse(SIZE_MAX, bad_part, why, size, "out of memory");
    size_t total = 0;
    enum cfi_status status = CFI_OK;
    char note[512];
    for (size_t p = 0; p < nparts && status == CFI_OK; p++) {
        const char *differ = p ? settings_differ(parts[0], parts[p]) : NULL;
        if (!differ && p && builds_differ(parts[0], parts[p], note,
                                          sizeof note))
            differ = note;
        if (!differ && parts[p]->nfiles != parts[p]->files_total)
            differ = "it holds a shard of its list, not the whole list "
                     "(merge its shards first)";
        if (!differ && parts[p]->files_total > SIZE_MAX / 2 - total)
            differ = "the lists hold too many files";
        if (differ)
            status = refuse(p, bad_part, why, size, differ);
        offsets[p] = total;
        total += parts[p]->files_total;
    }
    if (status == CFI_OK)
        status = merge_placed(parts, nparts, offsets, total, run, bad_part,
                              why, size);
    free(offsets);
    return status;
}
