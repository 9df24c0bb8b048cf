/* SPDX-License-Identifier: MIT */
/* stats.c — `cfisem stats`: the numbers of a corpus' call frame
 * information, over files given or a manifest, in parallel. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "stats.h"

static const char usage[] =
    "usage: cfisem stats FILE... [--manifest FILE] [--jobs N] [--json OUT]\n"
    "                    [--by producer] [--progress]\n"
    "\n"
    "Counts, over the files given and those of the manifest (the output of\n"
    "`make corpus`: one path a line, tab-separated fields after it, # for\n"
    "comments): files, CIEs and FDEs by section; rows per FDE (histogram,\n"
    "median, p90, p99, max); FDEs whose program is only nops; every DW_CFA\n"
    "opcode (zeros too); the CFA rule kinds and each register's rule kinds\n"
    "over all rows; DWARF expressions grouped by text, with an example file;\n"
    "CIE augmentation strings; FDEs that do not translate and files that do\n"
    "not load, grouped by error. Rows are the IL's ranges (cfisem il).\n"
    "\n"
    "  --manifest FILE  read the paths from FILE\n"
    "  --jobs N         N threads (default: the number of processors)\n"
    "  --json OUT       also write everything as one JSON object to OUT\n"
    "                   (\"-\": stdout, instead of the text)\n"
    "  --by producer    the same, split by the producer in .comment (GCC\n"
    "                   version, clang version, none)\n"
    "  --progress       files done, on stderr (default on a terminal)\n"
    "\n"
    "Example: cfisem stats /lib/x86_64-linux-gnu/libc.so.6 --by producer\n"
    "\n"
        "A CIE's program is counted once per CIE in the opcode counts. With --by\n"
        "producer the producer is as .comment names it (GCC 12.2.0, clang 14, both\n"
        "joined by +), or none: Debian strips the section from most of its files.\n"
        "\n"
        "  $ cfisem stats /lib/x86_64-linux-gnu/libc.so.6\n"
        "  files            1 (0 without CFI, 0 not loaded)\n"
        "  CIEs             3 (.eh_frame 3, .debug_frame 0)\n"
        "  FDEs             3713 (.eh_frame 3713, .debug_frame 0), 1455 nop-only (39.2%), 0 do not translate\n"
        "  rows             25212; per FDE: median 4, p90 16, p99 28, max 44\n"
        "  ...\n"
        "\n"
    "Exit status: 0; 64 usage error; 2 a manifest that cannot be read, or\n"
    "a FILE that cannot be loaded: it is counted (the errors table), the\n"
    "others still are, and one line on stderr names the first.\n";

struct options {
    struct cli_files files;
    const char *manifest;
    unsigned jobs;
    const char *json;
    bool by_producer;
    bool progress;
};

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (arg[0] != '-') {
            if (!cli_files_add(&o->files, arg))
                return CLI_BAD_INPUT;
        } else if (!strcmp(arg, "--progress")) {
            o->progress = true;
        } else if (strcmp(arg, "--manifest") && strcmp(arg, "--jobs") &&
                   strcmp(arg, "--json") && strcmp(arg, "--by")) {
            return cli_usage_error("stats", "unknown option", arg);
        } else if (!has_value) {
            return cli_usage_error("stats", "missing value for", arg);
        } else {
            const char *value = argv[++i];
            uint64_t n;
            if (!strcmp(arg, "--manifest"))
                o->manifest = value;
            else if (!strcmp(arg, "--json"))
                o->json = value;
            else if (!strcmp(arg, "--by") && strcmp(value, "producer"))
                return cli_usage_error("stats", "--by takes 'producer', not",
                                       value);
            else if (!strcmp(arg, "--by"))
                o->by_producer = true;
            else if (!cli_parse_u64(value, &n) || n == 0 || n > 256)
                return cli_usage_error("stats", "bad --jobs", value);
            else
                o->jobs = (unsigned)n;
        }
    }
    if (o->manifest) {
        int status = cli_files_add_manifest(&o->files, o->manifest, "stats");
        if (status != CLI_OK)
            return status;
    }
    if (o->files.count == 0)
        return cli_usage_error("stats", "no FILE and no --manifest", NULL);
    return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* Workers                                                              */
/* ------------------------------------------------------------------ */

struct work {
    const struct options *options;
    atomic_size_t next, done;
};

struct worker {
    pthread_t thread;
    struct work *work;
    struct stats all;
    struct stats_map producers;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    const struct options *o = w->work->options;
    for (;;) {
        size_t i = atomic_fetch_add(&w->work->next, 1);
        if (i >= o->files.count)
            break;
        stats_add_file(&w->all, &w->producers, o->by_producer, o->files.paths[i]);
        atomic_fetch_add(&w->work->done, 1);
    }
    return NULL;
}

static void show_progress(struct work *work, size_t total, bool last)
{
    fprintf(stderr, "\rcfisem stats: %zu/%zu files%s",
            atomic_load(&work->done), total, last ? "\n" : "");
}

/* Runs the workers, then merges their counts into *all, *producers. */
static bool run(const struct options *o, struct stats *all,
                struct stats_map *producers)
{
    struct work shared = {o, 0, 0};
    unsigned jobs = o->jobs;
    struct worker *workers = calloc(jobs, sizeof *workers);
    if (!workers)
        return false;
    unsigned started = 0;
    for (; started < jobs; started++) {
        workers[started].work = &shared;
        if (pthread_create(&workers[started].thread, NULL, work,
                           &workers[started]))
            break;
    }
    /* A thread that cannot start: this one does the rest of the work. */
    bool inline_worker = started < jobs;
    if (inline_worker) {
        workers[started].work = &shared;
        work(&workers[started]);
    }
    while (o->progress && atomic_load(&shared.done) < o->files.count) {
        show_progress(&shared, o->files.count, false);
        nanosleep(&(struct timespec){0, 250000000}, NULL);
    }
    bool ok = true;
    for (unsigned i = 0; i < started + inline_worker; i++) {
        if (i < started)
            pthread_join(workers[i].thread, NULL);
        stats_merge(all, &workers[i].all);
        for (size_t k = 0; k < workers[i].producers.capacity; k++) {
            struct stats_map *from = &workers[i].producers;
            if (!from->keys[k])
                continue;
            void **slot = stats_map_slot(producers, from->keys[k]);
            if (slot && !*slot)
                *slot = calloc(1, sizeof(struct stats));
            ok &= slot && *slot &&
                  stats_map_add(producers, from->keys[k], from->examples[k],
                                from->counts[k]);
            if (slot && *slot)
                stats_merge(*slot, from->values[k]);
            stats_free(from->values[k]);
            free(from->values[k]);
        }
        stats_map_free(&workers[i].producers);
        stats_free(&workers[i].all);
    }
    if (o->progress)
        show_progress(&shared, o->files.count, true);
    free(workers);
    return ok && !all->out_of_memory;
}

/* One line on stderr for the files that could not be loaded: the first
 * reason (in the errors' order) with a file it was seen in, and how many
 * there were. */
static int report_failed_files(const struct stats *all)
{
    if (all->files_failed == 0)
        return CLI_OK;
    const struct stats_map *errors = &all->errors;
    size_t *order = stats_map_sorted(errors);
    for (size_t k = 0; order && k < errors->count; k++) {
        size_t i = order[k];
        if (strncmp(errors->keys[i], "file: ", 6))
            continue;
        fprintf(stderr, "cfisem: %s: %s", errors->examples[i],
                errors->keys[i] + 6);
        if (all->files_failed > 1)
            fprintf(stderr, " (%" PRIu64 " files not loaded: see the errors)",
                    all->files_failed);
        fputc('\n', stderr);
        break;
    }
    free(order);
    return CLI_BAD_INPUT;
}

static int report(const struct options *o, const struct stats *all,
                  const struct stats_map *producers)
{
    int failed = report_failed_files(all);
    const struct stats_map *split = o->by_producer ? producers : NULL;
    if (!o->json || strcmp(o->json, "-"))
        stats_print_text(stdout, all, split);
    if (!o->json)
        return failed;
    FILE *out = strcmp(o->json, "-") ? fopen(o->json, "w") : stdout;
    if (!out) {
        fprintf(stderr, "cfisem: %s: cannot write\n", o->json);
        return CLI_BAD_INPUT;
    }
    stats_print_json(out, all, split);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "cfisem: %s: cannot write\n", o->json);
        return CLI_BAD_INPUT;
    }
    return failed;
}

int cli_stats(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options o = {0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.jobs = cpus > 0 ? (unsigned)cpus : 1;
    o.progress = isatty(STDERR_FILENO);
    int result = parse_options(argc, argv, &o);
    struct stats all = {0};
    struct stats_map producers = {0};
    if (result == CLI_OK) {
        if (o.jobs > o.files.count)
            o.jobs = (unsigned)o.files.count;
        if (!run(&o, &all, &producers)) {
            fprintf(stderr, "cfisem: out of memory\n");
            result = CLI_BAD_INPUT;
        } else {
            result = report(&o, &all, &producers);
        }
    }
    for (size_t i = 0; i < producers.capacity; i++)
        if (producers.values[i]) {
            stats_free(producers.values[i]);
            free(producers.values[i]);
        }
    stats_map_free(&producers);
    stats_free(&all);
    cli_files_free(&o.files);
    return result;
}
