/* SPDX-License-Identifier: MIT */
/* perf_compare.c — `cfisem perf --compare`: cfisem's chains against
 * another unwinder's, sample by sample and frame by frame, the
 * differences grouped by cause. A difference with an outside tool is
 * data (perf's DWARF unwinder guesses where the CFI says nothing, and
 * reads what the stack copy does not hold as unknown): the table says
 * where and how, and the example lets one look. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_out.h"

#define CAUSE_SIZE 96
#define EXAMPLE_SIZE 192

struct cause {
    char name[CAUSE_SIZE];
    char example[EXAMPLE_SIZE];
    uint64_t count;
};

struct chain_tally {
    const char *theirs;
    struct cause *causes;
    size_t n, cap;
    uint64_t samples, same;
};

struct chain_tally *chain_tally_new(const char *theirs)
{
    struct chain_tally *tally = calloc(1, sizeof *tally);
    if (tally)
        tally->theirs = theirs;
    return tally;
}

void chain_tally_free(struct chain_tally *tally)
{
    if (!tally)
        return;
    free(tally->causes);
    free(tally);
}

void chain_tally_add(struct chain_tally *tally, const char *cause,
                     const char *example)
{
    tally->samples++;
    for (size_t i = 0; i < tally->n; i++)
        if (strcmp(tally->causes[i].name, cause) == 0) {
            tally->causes[i].count++;
            return;
        }
    if (tally->n == tally->cap) {
        size_t cap = tally->cap ? 2 * tally->cap : 16;
        struct cause *grown = realloc(tally->causes, cap * sizeof *grown);
        if (!grown)
            return;
        tally->causes = grown;
        tally->cap = cap;
    }
    struct cause *c = &tally->causes[tally->n++];
    snprintf(c->name, sizeof c->name, "%s", cause);
    snprintf(c->example, sizeof c->example, "%s", example);
    c->count = 1;
}

/* The first depth where the chains differ, up to the shorter's end. */
static size_t first_difference(const struct chain_frame *a, size_t na,
                               const struct chain_frame *b, size_t nb)
{
    size_t n = na < nb ? na : nb;
    for (size_t k = 0; k < n; k++)
        if (a[k].addr != b[k].addr || a[k].outside != b[k].outside)
            return k;
    return n;
}

bool chain_tally_compare(struct chain_tally *tally, const char *label,
                         const struct chain_frame *ours, size_t n_ours,
                         const struct chain_frame *theirs, size_t n_theirs,
                         const char *our_stop)
{
    size_t k = first_difference(ours, n_ours, theirs, n_theirs);
    char cause[CAUSE_SIZE], example[EXAMPLE_SIZE];
    bool same = k == n_ours && k == n_theirs;
    if (same) {
        snprintf(cause, sizeof cause, "same chain");
        snprintf(example, sizeof example, "%s: %zu frames", label, k);
        tally->same++;
    } else if (k == n_ours) {
        snprintf(cause, sizeof cause, "cfisem stopped earlier (%s)",
                 our_stop);
        snprintf(example, sizeof example, "%s: depth %zu, %s goes on at "
                 "%" PRIx64, label, k, tally->theirs, theirs[k].addr);
    } else if (k == n_theirs) {
        snprintf(cause, sizeof cause, "%s stopped earlier", tally->theirs);
        snprintf(example, sizeof example, "%s: depth %zu, cfisem goes on "
                 "at %" PRIx64, label, k, ours[k].addr);
    } else {
        if (theirs[k].outside)
            snprintf(cause, sizeof cause, "%s's frame outside any object",
                     tally->theirs);
        else if (ours[k].outside)
            snprintf(cause, sizeof cause, "cfisem's frame outside any "
                     "object");
        else
            snprintf(cause, sizeof cause, "different address at depth %zu",
                     k < 10 ? k : 10);
        if (k >= 10 && !theirs[k].outside && !ours[k].outside)
            strncat(cause, " or deeper", sizeof cause - strlen(cause) - 1);
        snprintf(example, sizeof example, "%s: depth %zu: cfisem %" PRIx64
                 ", %s %" PRIx64, label, k, ours[k].addr, tally->theirs,
                 theirs[k].addr);
    }
    chain_tally_add(tally, cause, example);
    return same;
}

uint64_t chain_tally_samples(const struct chain_tally *tally)
{
    return tally->samples;
}

uint64_t chain_tally_same(const struct chain_tally *tally)
{
    return tally->same;
}

static int by_count(const void *a, const void *b)
{
    const struct cause *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

void chain_tally_print(const struct chain_tally *tally, FILE *out)
{
    struct cause *sorted = malloc((tally->n + 1) * sizeof *sorted);
    if (!sorted)
        return;
    if (tally->n)
        memcpy(sorted, tally->causes, tally->n * sizeof *sorted);
    qsort(sorted, tally->n, sizeof *sorted, by_count);
    fprintf(out, "cfisem against %s: %" PRIu64 " samples, %" PRIu64
            " with the same chain\n", tally->theirs, tally->samples,
            tally->same);
    fprintf(out, "%-48s %8s  %s\n", "cause", "samples", "first example");
    for (size_t i = 0; i < tally->n; i++)
        fprintf(out, "%-48s %8" PRIu64 "  %s\n", sorted[i].name,
                sorted[i].count, sorted[i].example);
    free(sorted);
}

/* ------------------------------------------------------------------ */
/* perf script's chains                                                 */
/* ------------------------------------------------------------------ */

struct script_sample {
    uint32_t tid;
    uint64_t time_us;
    size_t first, n;     /* into frames */
    bool taken;
};

struct script_chains {
    struct script_sample *samples;
    size_t nsamples, samples_cap;
    struct chain_frame *frames;
    size_t nframes, frames_cap;
};

void script_chains_free(struct script_chains *chains)
{
    if (!chains)
        return;
    free(chains->samples);
    free(chains->frames);
    free(chains);
}

/* The path in single quotes for sh, a quote in it as '\''. */
static char *shell_quote(const char *path)
{
    char *quoted = malloc(4 * strlen(path) + 3);
    if (!quoted)
        return NULL;
    char *at = quoted;
    *at++ = '\'';
    for (const char *p = path; *p; p++) {
        if (*p == '\'') {
            memcpy(at, "'\\''", 4);
            at += 4;
        } else {
            *at++ = *p;
        }
    }
    *at++ = '\'';
    *at = 0;
    return quoted;
}

static bool add_sample(struct script_chains *c, uint32_t tid,
                       uint64_t time_us)
{
    if (c->nsamples == c->samples_cap) {
        size_t cap = c->samples_cap ? 2 * c->samples_cap : 256;
        struct script_sample *grown = realloc(c->samples,
                                              cap * sizeof *grown);
        if (!grown)
            return false;
        c->samples = grown;
        c->samples_cap = cap;
    }
    c->samples[c->nsamples++] = (struct script_sample){tid, time_us,
                                                       c->nframes, 0,
                                                       false};
    return true;
}

static bool add_frame(struct script_chains *c, const char *line)
{
    char *end;
    uint64_t addr = strtoull(line, &end, 16);
    /* The kernel's frames: the upper half of the address space. */
    if (end == line || addr >= 0xffff800000000000ull || c->nsamples == 0)
        return true;
    if (c->nframes == c->frames_cap) {
        size_t cap = c->frames_cap ? 2 * c->frames_cap : 1024;
        struct chain_frame *grown = realloc(c->frames, cap * sizeof *grown);
        if (!grown)
            return false;
        c->frames = grown;
        c->frames_cap = cap;
    }
    size_t len = strlen(line);
    bool outside = len >= 11 && !strcmp(line + len - 11, "([unknown])");
    c->frames[c->nframes++] = (struct chain_frame){addr, outside};
    c->samples[c->nsamples - 1].n++;
    return true;
}

/* A header, "PID/TID SECONDS.MICROSECONDS:", or a frame, "\tADDR SYM
 * (DSO)". */
static bool script_line(struct script_chains *c, char *line)
{
    line[strcspn(line, "\n")] = 0;
    if (line[0] == '\t')
        return add_frame(c, line + 1);
    unsigned pid, tid;
    unsigned long long seconds, micro;
    if (sscanf(line, " %u/%u %llu.%llu:", &pid, &tid, &seconds, &micro)
        == 4)
        return add_sample(c, tid, seconds * 1000000 + micro);
    return true;
}

static int by_time(const void *a, const void *b)
{
    const struct script_sample *x = a, *y = b;
    if (x->time_us != y->time_us)
        return x->time_us < y->time_us ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

bool script_chains_load(const char *path, struct script_chains **chains,
                        FILE *err)
{
    *chains = NULL;
    char *quoted = shell_quote(path);
    struct script_chains *c = calloc(1, sizeof *c);
    size_t size = quoted ? strlen(quoted) + 128 : 0;
    char *command = quoted ? malloc(size) : NULL;
    if (!command || !c) {
        free(quoted);
        free(command);
        free(c);
        fprintf(err, "cfisem perf: out of memory\n");
        return false;
    }
    snprintf(command, size, "perf script -F pid,tid,time,ip,sym,dso "
             "--no-inline -i %s 2>/dev/null", quoted);
    FILE *p = popen(command, "r");
    bool ok = p != NULL;
    char line[4096];
    while (ok && fgets(line, sizeof line, p))
        ok = script_line(c, line);
    int status = p ? pclose(p) : -1;
    if (!ok || status != 0 || c->nsamples == 0) {
        fprintf(err, "cfisem perf: %s: perf script -i failed or printed "
                "no sample (is perf installed?)\n", path);
        script_chains_free(c);
        c = NULL;
    } else {
        qsort(c->samples, c->nsamples, sizeof *c->samples, by_time);
    }
    free(command);
    free(quoted);
    *chains = c;
    return c != NULL;
}

const struct chain_frame *script_chains_take(struct script_chains *c,
                                             uint32_t tid, uint64_t time,
                                             size_t *n)
{
    uint64_t time_us = time / 1000;
    size_t lo = 0, hi = c->nsamples;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->samples[mid].time_us < time_us)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < c->nsamples && c->samples[i].time_us == time_us;
         i++) {
        struct script_sample *s = &c->samples[i];
        if (s->tid != tid || s->taken)
            continue;
        static const struct chain_frame none;
        s->taken = true;
        *n = s->n;
        return s->n ? c->frames + s->first : &none;
    }
    *n = 0;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The frame-pointer chain                                              */
/* ------------------------------------------------------------------ */

size_t fp_chain(uint64_t pc, uint64_t rbp, remote_read_fn read, void *data,
                uint64_t *pcs, size_t max)
{
    size_t n = 0;
    if (max == 0)
        return 0;
    pcs[n++] = pc;
    /* The x86-64 frame record: [rbp] the caller's rbp, [rbp + 8] the
     * return address; a caller's record lies above its callee's. */
    while (n < max && rbp != 0 && rbp <= UINT64_MAX - 16) {
        uint64_t next, ret;
        if (read(data, rbp, 8, &next) != REMOTE_READ_OK
            || read(data, rbp + 8, 8, &ret) != REMOTE_READ_OK || ret == 0)
            break;
        pcs[n++] = ret;
        if (next <= rbp)
            break;
        rbp = next;
    }
    return n;
}
