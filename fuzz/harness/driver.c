/* SPDX-License-Identifier: MIT */
/* driver.c — see driver.h. */
#include "driver.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void fuzz_verdict(enum fuzz_result result, const struct fuzz_report *report)
{
    switch (result) {
    case FUZZ_OK:
        return;
    case FUZZ_DISAGREE:
        fprintf(stderr, "cfisem fuzz: disagreement:\n%s", report->text);
        fflush(stderr);
        abort();
    case FUZZ_SETUP:
        fprintf(stderr, "cfisem fuzz: the harness could not run this input\n");
        return;
    }
    abort();
}

struct replay {
    const char *name;
    fuzz_target_fn target;
    struct fuzz_context context;
    struct fuzz_report report;
    bool verbose;
    size_t files;
    int status;
};

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    size_t cap = 4096, len = 0;
    uint8_t *bytes = malloc(cap);
    while (bytes) {
        len += fread(bytes + len, 1, cap - len, in);
        if (len < cap)
            break;
        uint8_t *grown = realloc(bytes, cap * 2);
        if (!grown) {
            free(bytes);
            bytes = NULL;
            break;
        }
        bytes = grown;
        cap *= 2;
    }
    bool failed = ferror(in);
    fclose(in);
    if (failed) {
        free(bytes);
        return NULL;
    }
    *size = len;
    return bytes;
}

static void replay_file(struct replay *r, const char *path)
{
    size_t size = 0;
    uint8_t *bytes = read_all(path, &size);
    if (!bytes) {
        fprintf(stderr, "%s: cannot read %s\n", r->name, path);
        r->status = 2;
        return;
    }
    if (r->verbose)
        fprintf(stderr, "%s: %s (%zu bytes)\n", r->name, path, size);
    enum fuzz_result result = r->target(&r->context, bytes, size, &r->report);
    if (result != FUZZ_OK)
        fprintf(stderr, "%s: %s:\n", r->name, path);
    fuzz_verdict(result, &r->report);
    if (result == FUZZ_SETUP)
        r->status = 2;
    r->files++;
    free(bytes);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_path(struct replay *r, const char *path, int depth);

static void replay_folder(struct replay *r, const char *path, int depth)
{
    DIR *dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "%s: cannot read %s\n", r->name, path);
        r->status = 2;
        return;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        const char *n = entry->d_name;
        if (n[0] == '.' || strncmp(n, "README", 6) == 0)
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        size_t len = strlen(path) + strlen(n) + 2;
        if (!(names[count] = malloc(len)))
            break;
        snprintf(names[count++], len, "%s/%s", path, n);
    }
    closedir(dir);
    if (count)
        qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        replay_path(r, names[i], depth + 1);
        free(names[i]);
    }
    free(names);
}

static void replay_path(struct replay *r, const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: cannot read %s\n", r->name, path);
        r->status = 2;
    } else if (S_ISDIR(st.st_mode)) {
        if (depth < 8)
            replay_folder(r, path, depth);
    } else if (S_ISREG(st.st_mode)) {
        replay_file(r, path);
    }
}

int fuzz_replay_main(const char *name, int argc, char **argv,
                     fuzz_target_fn target, bool libdw)
{
    struct replay *r = calloc(1, sizeof *r);
    if (!r)
        return 2;
    r->name = name;
    r->target = target;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "-v") == 0) {
        r->verbose = true;
        first = 2;
    }
    if (argc <= first) {
        fprintf(stderr, "usage: %s [-v] FILE|FOLDER...\n"
                        "runs the harness once on each input (no fuzzing)\n",
                name);
        free(r);
        return 1;
    }
    if (fuzz_context_open(&r->context) != FUZZ_OK ||
        (libdw && fuzz_oracle_libdw_load(&r->context) != FUZZ_OK)) {
        fprintf(stderr, "%s: cannot set up the harness\n", name);
        free(r);
        return 2;
    }
    for (int i = first; i < argc; i++)
        replay_path(r, argv[i], 0);
    printf("%s: %zu inputs replayed\n", name, r->files);
    int status = r->status;
    fuzz_context_close(&r->context);
    free(r);
    return status;
}

/* The context of a libFuzzer target (driver.h). */
static struct fuzz_context *libfuzzer_context(void)
{
    static struct fuzz_context context = {.fd = -1};
    return &context;
}

int fuzz_libfuzzer_init(bool libdw)
{
    struct fuzz_context *context = libfuzzer_context();
    if (context->sink)
        return 0;
    if (fuzz_context_open(context) != FUZZ_OK ||
        (libdw && fuzz_oracle_libdw_load(context) != FUZZ_OK)) {
        fprintf(stderr, "cfisem fuzz: cannot set up the harness\n");
        return 1;
    }
    return 0;
}

int fuzz_libfuzzer_one(fuzz_target_fn target, const uint8_t *data,
                       size_t size)
{
    struct fuzz_context *context = libfuzzer_context();
    static struct fuzz_report report;
    if (!context->sink && fuzz_libfuzzer_init(false) != 0)
        abort();   /* no memfd, no /dev/null: nothing can run */
    fuzz_verdict(target(context, data, size, &report), &report);
    return 0;
}
