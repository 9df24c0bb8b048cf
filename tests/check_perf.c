/* SPDX-License-Identifier: MIT */
/* check_perf.c — perf/ (the perf.data reader) and `cfisem perf`.
 *
 * The tests' own program (tests/perf/deep.c: main -> deep_run -> deep_9
 * -> ... -> deep_0) is recorded here with `perf record --call-graph
 * dwarf`, once per suite run, in file mode, in pipe mode (`perf inject -b
 * -o -` of the same file, so the samples are the same) and compressed
 * (`perf record -z`). The reader's counts of records must be `perf
 * report -D`'s; every truncation of a small file, a directory and a FIFO
 * give an error, never a crash or a hang; mutated files never crash.
 * `cfisem perf`'s chains must be `perf script -F ip,sym --no-inline`'s
 * on the frames both give; `--compare` must count every sample under one
 * cause; on the program built with frame pointers everywhere
 * (perf-deep-fp), `--compare-fp` must find every compared chain equal to
 * the frame-pointer chain; the `--svg` flame graph, rendered by headless
 * Chromium, must have one rect per frame prefix of `--folded`'s stacks
 * and a root that counts every sample. When perf record cannot run (no
 * permission), the tests fail and say so. */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/perf.h"
#include "support.h"

static char *dir;            /* the suite's recordings */
static char file_data[512], pipe_data[512], zstd_data[512], fp_data[512];
static const char *record_error;

static bool run_shell(const char *command)
{
    return system(command) == 0;
}

/* Records the program in the three forms, once. */
static void record_all(void)
{
    const char *target = getenv("CFISEM_PERF_TARGET");
    dir = test_temp_dir();
    snprintf(file_data, sizeof file_data, "%s/deep.data", dir);
    snprintf(pipe_data, sizeof pipe_data, "%s/deep-pipe.data", dir);
    snprintf(zstd_data, sizeof zstd_data, "%s/deep-zstd.data", dir);
    snprintf(fp_data, sizeof fp_data, "%s/deep-fp.data", dir);
    char cmd[2048];
    if (!target) {
        record_error = "CFISEM_PERF_TARGET is not set (run through make)";
        return;
    }
    snprintf(cmd, sizeof cmd,
             "perf record -q --call-graph dwarf -o %s %s 300 "
             ">%s/record.log 2>&1", file_data, target, dir);
    if (!run_shell(cmd)) {
        record_error = "perf record --call-graph dwarf cannot run here "
                       "(not installed, or no permission: "
                       "perf_event_paranoid, run as root)";
        return;
    }
    snprintf(cmd, sizeof cmd, "perf inject -b -i %s -o - > %s 2>>%s/record.log",
             file_data, pipe_data, dir);
    if (!run_shell(cmd)) {
        record_error = "perf inject -o - failed";
        return;
    }
    snprintf(cmd, sizeof cmd,
             "perf record -q -z --call-graph dwarf -o %s %s 300 "
             ">>%s/record.log 2>&1", zstd_data, target, dir);
    if (!run_shell(cmd)) {
        record_error = "perf record -z failed (perf built without zstd?)";
        return;
    }
    const char *fp_target = getenv("CFISEM_PERF_FP_TARGET");
    snprintf(cmd, sizeof cmd,
             "perf record -q --call-graph dwarf -o %s %s 300 "
             ">>%s/record.log 2>&1", fp_data, fp_target ? fp_target : "",
             dir);
    if (!fp_target)
        record_error = "CFISEM_PERF_FP_TARGET is not set (run through make)";
    else if (!run_shell(cmd))
        record_error = "perf record of the frame-pointer program failed";
}

static void need_recordings(void)
{
    ck_assert_msg(record_error == NULL, "%s", record_error);
}

/* ------------------------------------------------------------------ */
/* Counts against perf report -D                                       */
/* ------------------------------------------------------------------ */

/* perf report -D's "Aggregated stats": "NAME events: N" per type. */
static int perf_count(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s events:", name);
    const char *at = strstr(text, "Aggregated stats:");
    if (!at || !(at = strstr(at, key)))
        return 0;
    return atoi(at + strlen(key));
}

static char *report_d(const char *path)
{
    char cmd[2200], out[1024];
    snprintf(out, sizeof out, "%s/report-d.txt", dir);
    snprintf(cmd, sizeof cmd, "perf report -D -i %s > %s 2>/dev/null", path,
             out);
    ck_assert_msg(run_shell(cmd), "perf report -D -i %s failed", path);
    char *text = test_read_file(out, NULL);
    ck_assert_ptr_nonnull(text);
    return text;
}

static void counts_match(const char *path)
{
    need_recordings();
    struct perf_file *file;
    struct perf_diag diag;
    ck_assert_msg(perf_open(path, &file, &diag), "%s: %s", path,
                  diag.message);
    char *text = report_d(path);
    int ours[256] = {0};
    for (size_t i = 0; i < perf_record_count(file); i++) {
        uint32_t type = perf_record_at(file, i)->type;
        ck_assert_uint_lt(type, 256);
        ours[type]++;
    }
    int compared = 0;
    for (uint32_t type = 0; type < 256; type++) {
        const char *name = perf_record_name(type);
        if (!name || type == PERF_REC_COMPRESSED)
            continue;
        int theirs = perf_count(text, name);
        ck_assert_msg(ours[type] == theirs, "%s: %s: %d records, perf "
                      "report -D says %d", path, name, ours[type], theirs);
        compared += theirs;
    }
    ck_assert_int_gt(ours[PERF_REC_SAMPLE], 20);
    ck_assert_int_gt(ours[PERF_REC_MMAP2], 0);
    ck_assert_int_gt(compared, 0);
    free(text);
    perf_close(file);
}

START_TEST(test_counts_file_mode) { counts_match(file_data); }
END_TEST

START_TEST(test_counts_pipe_mode)
{
    counts_match(pipe_data);
    struct perf_file *file;
    struct perf_diag diag;
    ck_assert(perf_open(pipe_data, &file, &diag));
    ck_assert(perf_is_pipe(file));
    perf_close(file);
}
END_TEST

START_TEST(test_counts_compressed)
{
    counts_match(zstd_data);
    struct perf_file *file;
    struct perf_diag diag;
    ck_assert(perf_open(zstd_data, &file, &diag));
    ck_assert_uint_gt(perf_compressed_bytes(file), 0);
    ck_assert_uint_gt(perf_decompressed_bytes(file),
                      perf_compressed_bytes(file));
    perf_close(file);
}
END_TEST

/* Every sample parses, has the user registers and a stack copy, and its
 * process has the program mapped at its time. */
START_TEST(test_samples_and_maps)
{
    need_recordings();
    struct perf_file *file;
    struct perf_procs *procs;
    struct perf_diag diag;
    ck_assert(perf_open(file_data, &file, &diag));
    ck_assert_msg(perf_procs_build(file, &procs, &diag), "%s", diag.message);
    const char *target = getenv("CFISEM_PERF_TARGET");
    size_t samples = 0, with_target = 0;
    for (size_t i = 0; i < perf_record_count(file); i++) {
        const struct perf_record *r = perf_record_at(file, i);
        if (r->type != PERF_REC_SAMPLE)
            continue;
        struct perf_sample s;
        ck_assert_msg(perf_sample_parse(file, r, &s, &diag), "%s",
                      diag.message);
        samples++;
        ck_assert_uint_le(s.stack_dyn_size, s.stack_size);
        uint64_t sp;
        ck_assert(perf_sample_reg(&s, 7, &sp)); /* SP */
        const struct perf_map *maps[256];
        size_t n;
        uint64_t generation;
        uint64_t key = perf_procs_key(procs, file, i);
        if (!perf_procs_maps_at(procs, s.pid, key, maps, 256, &n,
                                &generation))
            continue;
        for (size_t k = 0; k < n; k++)
            if (strcmp(maps[k]->path, target) == 0) {
                with_target++;
                break;
            }
    }
    ck_assert_uint_gt(samples, 20);
    /* perf-deep's samples: most of them, the rest are perf's own exec */
    ck_assert_uint_gt(with_target, samples / 2);
    perf_procs_free(procs);
    perf_close(file);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bad input                                                            */
/* ------------------------------------------------------------------ */

static void refused(const char *path, const char *words)
{
    struct perf_file *file = NULL;
    struct perf_diag diag = {0, NULL};
    ck_assert_msg(!perf_open(path, &file, &diag), "%s opened", path);
    ck_assert_ptr_nonnull(diag.message);
    ck_assert_msg(strstr(diag.message, words), "%s: %s", path,
                  diag.message);
}

START_TEST(test_directory_and_fifo)
{
    char *tmp = test_temp_dir();
    refused(tmp, "directory");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmp);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    refused(fifo, "FIFO");
    unlink(fifo);
    rmdir(tmp);
    free(tmp);
}
END_TEST

/* Regression (perf_stdin_dev_zero, found by make robust): `cfisem perf -
 * < /dev/zero` read standard input to its end before looking at the
 * magic, and grew until memory ran out. It stops after the first 8
 * bytes: exit 2, the magic named. */
START_TEST(test_stdin_endless_stream_refused)
{
    char command[1200];
    snprintf(command, sizeof command,
             "ulimit -v 4000000 2>/dev/null; timeout 20 %s perf - "
             "--engine interp < /dev/zero 2>&1 >/dev/null",
             getenv("CFISEM") ? getenv("CFISEM") : "build/cfisem");
    if (getenv("CFISEM_SANITIZE") && *getenv("CFISEM_SANITIZE"))
        snprintf(command, sizeof command,
                 "ASAN_OPTIONS=hard_rss_limit_mb=512 timeout 20 %s perf - "
                 "--engine interp < /dev/zero 2>&1 >/dev/null",
                 getenv("CFISEM"));
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    char err[4096] = "";
    size_t n = fread(err, 1, sizeof err - 1, p);
    err[n] = 0;
    int status = pclose(p);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2,
                  "status %d: %s", status, err);
    ck_assert_msg(strstr(err, "no PERFILE2 magic") &&
                      test_count_lines(err) == 1, "%s", err);
}
END_TEST

/* A small recording, to cut and to mutate. */
static char *small_file(size_t *len)
{
    char path[600], cmd[1400];
    snprintf(path, sizeof path, "%s/small.data", dir);
    snprintf(cmd, sizeof cmd, "test -s %s || perf record -q --call-graph "
             "dwarf,1024 -o %s %s 20 >/dev/null 2>&1", path, path,
             getenv("CFISEM_PERF_TARGET"));
    ck_assert_msg(run_shell(cmd), "perf record of a small file failed");
    char *bytes = test_read_file(path, len);
    ck_assert_ptr_nonnull(bytes);
    return bytes;
}

/* Opens the bytes as a file, parses every sample and the processes;
 * true when everything was accepted. */
static bool open_bytes(const char *bytes, size_t len, struct perf_diag *diag)
{
    char path[600];
    snprintf(path, sizeof path, "%s/cut.data", dir);
    ck_assert_int_eq(test_write_file(path, bytes, len), 0);
    struct perf_file *file;
    if (!perf_open(path, &file, diag))
        return false;
    bool ok = true;
    for (size_t i = 0; ok && i < perf_record_count(file); i++) {
        const struct perf_record *r = perf_record_at(file, i);
        struct perf_sample s;
        if (r->type == PERF_REC_SAMPLE)
            ok = perf_sample_parse(file, r, &s, diag);
    }
    struct perf_procs *procs;
    if (ok && (ok = perf_procs_build(file, &procs, diag)))
        perf_procs_free(procs);
    perf_close(file);
    return ok;
}

/* Every cut of the header region and a sample of the others. */
START_TEST(test_truncations_refused)
{
    need_recordings();
    size_t len;
    char *bytes = small_file(&len);
    size_t tried = 0;
    for (size_t cut = 0; cut < len; cut += cut < 4096 ? 1 : 211) {
        struct perf_diag diag = {0, NULL};
        ck_assert_msg(!open_bytes(bytes, cut, &diag),
                      "the first %zu of %zu bytes accepted", cut, len);
        ck_assert_ptr_nonnull(diag.message);
        ck_assert_ptr_null(strchr(diag.message, '\n'));
        tried++;
    }
    ck_assert_uint_gt(tried, 4096);
    free(bytes);
}
END_TEST

/* Random bytes changed: accepted or refused, never a crash (the
 * sanitized pass checks every read). */
START_TEST(test_mutations_never_crash)
{
    need_recordings();
    size_t len;
    char *bytes = small_file(&len);
    char *copy = malloc(len);
    unsigned seed = 12345;
    size_t refusals = 0;
    for (int round = 0; round < 300; round++) {
        memcpy(copy, bytes, len);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            /* Headers, sizes and the start of records are the likely
             * places: half the changes go to the first 4 KiB. */
            if (k % 2 == 0 && len > 4096)
                at %= 4096;
            copy[at] = (char)(seed >> 3);
        }
        struct perf_diag diag = {0, NULL};
        if (!open_bytes(copy, len, &diag)) {
            ck_assert_ptr_nonnull(diag.message);
            refusals++;
        }
    }
    ck_assert_uint_gt(refusals, 0);
    free(copy);
    free(bytes);
}
END_TEST

/* A pipe-mode file cut inside a record is refused (a cut between two
 * records is a shorter stream, which pipe mode cannot tell). */
START_TEST(test_pipe_truncation_inside_record)
{
    need_recordings();
    size_t len;
    char *bytes = test_read_file(pipe_data, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_uint_gt(len, 100);
    struct perf_diag diag;
    ck_assert(!open_bytes(bytes, len - 3, &diag));
    ck_assert(!open_bytes(bytes, 20, &diag));
    ck_assert(!open_bytes(bytes, 7, &diag));
    free(bytes);
}
END_TEST

/* ------------------------------------------------------------------ */
/* cfisem perf against perf script                                      */
/* ------------------------------------------------------------------ */

/* A stack: its frames' addresses and symbols (without +0x offset and
 * @version), innermost first. */
#define MAX_STACK 300
struct stack {
    uint64_t addr[MAX_STACK];
    char sym[MAX_STACK][96];
    bool no_object[MAX_STACK];
    bool own[MAX_STACK];     /* a frame of the tests' program */
    size_t n;
};

/* The stacks of a perf script-like text: runs of lines that start with
 * a tab; other lines (sample headers) and blank lines end a run. Only
 * user frames (below the kernel's half) are kept. */
static struct stack *parse_stacks(const char *text, size_t *count)
{
    size_t cap = 64, n = 0;
    struct stack *stacks = calloc(cap, sizeof *stacks);
    bool in = false;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > 0 && line[0] == '\t') {
            if (!in) {
                if (n == cap) {
                    stacks = realloc(stacks, 2 * cap * sizeof *stacks);
                    memset(stacks + cap, 0, cap * sizeof *stacks);
                    cap *= 2;
                }
                n++;
                in = true;
            }
            struct stack *st = &stacks[n - 1];
            char sym[96] = "";
            unsigned long long addr;
            bool no_object = len >= 11
                             && !strncmp(line + len - 11, "([unknown])", 11);
            if (sscanf(line, " %llx %95s", &addr, sym) >= 1
                && addr < 0xffff800000000000ull && st->n < MAX_STACK) {
                st->no_object[st->n] = no_object;
                st->own[st->n] = memmem(line, len, "perf-deep)", 10) != NULL;
                sym[strcspn(sym, "+@")] = 0;
                st->addr[st->n] = addr;
                snprintf(st->sym[st->n], sizeof st->sym[0], "%s", sym);
                st->n++;
            }
        } else {
            in = false;
        }
        line += len + (end != NULL);
    }
    *count = n;
    return stacks;
}

static char *perf_script(const char *path)
{
    char cmd[2200], out[1024];
    snprintf(out, sizeof out, "%s/script.txt", dir);
    snprintf(cmd, sizeof cmd, "perf script -F ip,sym --no-inline -i %s > %s "
             "2>/dev/null", path, out);
    ck_assert_msg(run_shell(cmd), "perf script -i %s failed", path);
    char *text = test_read_file(out, NULL);
    ck_assert_ptr_nonnull(text);
    return text;
}

static void cfisem_perf(const char *path, const char *extra,
                        struct test_run *run)
{
    char cache[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *args[] = {"perf", path, "--cache", cache, extra, NULL};
    test_run_cfisem(args, run);
    ck_assert_msg(run->exit_code == 0, "cfisem perf %s: %d: %s", path,
                  run->exit_code, run->err);
}

/* The frames both give are the same: address, and symbol in the tests'
 * program (elsewhere a symbol may have aliases, of which perf and
 * cfisem pick different ones: __write and __GI___libc_write; and perf
 * reads debug files, which give glibc's local __libc_start_call_main).
 * A stack where the two
 * unwinders stop at different depths is compared on the common part. */
static void chains_match(const char *path)
{
    need_recordings();
    struct test_run run;
    cfisem_perf(path, NULL, &run);
    char *theirs_text = perf_script(path);
    size_t n_ours, n_theirs;
    struct stack *ours = parse_stacks(run.out, &n_ours);
    struct stack *theirs = parse_stacks(theirs_text, &n_theirs);
    ck_assert_uint_gt(n_ours, 20);
    /* perf script prints no stack for a sample with no user frame; a
     * kernel-only one may be missing on one side: compare in step by
     * count only when equal. */
    ck_assert_msg(n_ours == n_theirs, "%s: %zu stacks, perf script %zu",
                  path, n_ours, n_theirs);
    size_t compared = 0, deep = 0;
    for (size_t i = 0; i < n_ours; i++) {
        size_t n = ours[i].n < theirs[i].n ? ours[i].n : theirs[i].n;
        for (size_t k = 0; k < n; k++) {
            /* No object mapped at the PC (the vDSO, whose image perf
             * saves and this reader does not have): printed as an
             * absolute address, and the stack ends there. */
            if (ours[i].no_object[k])
                break;
            ck_assert_msg(ours[i].addr[k] == theirs[i].addr[k],
                          "%s: stack %zu frame %zu: %" PRIx64 " %s, perf "
                          "script %" PRIx64 " %s", path, i, k,
                          ours[i].addr[k], ours[i].sym[k],
                          theirs[i].addr[k], theirs[i].sym[k]);
            ck_assert_msg(!ours[i].own[k] || !strcmp(ours[i].sym[k],
                                            theirs[i].sym[k]),
                          "%s: stack %zu frame %zu: %s, perf script %s",
                          path, i, k, ours[i].sym[k], theirs[i].sym[k]);
            compared++;
        }
        if (ours[i].n >= 12 && !strcmp(ours[i].sym[0], "deep_0")
            && !strcmp(ours[i].sym[10], "deep_run.isra.0"))
            deep++;
    }
    ck_assert_uint_gt(compared, 10 * n_ours / 2);
    ck_assert_uint_gt(deep, n_ours / 2);
    free(ours);
    free(theirs);
    free(theirs_text);
    test_run_free(&run);
}

START_TEST(test_chains_file_mode) { chains_match(file_data); }
END_TEST

START_TEST(test_chains_compressed) { chains_match(zstd_data); }
END_TEST

/* perf inject -o - wrote the same samples in pipe mode. */
START_TEST(test_pipe_same_as_file)
{
    need_recordings();
    struct test_run a, b;
    cfisem_perf(file_data, NULL, &a);
    cfisem_perf(pipe_data, NULL, &b);
    ck_assert_uint_gt(a.out_len, 1000);
    ck_assert_msg(a.out_len == b.out_len
                  && memcmp(a.out, b.out, a.out_len) == 0,
                  "cfisem perf: file and pipe mode print differently");
    test_run_free(&a);
    test_run_free(&b);
}
END_TEST

/* The summary: the samples, and a reason for every stack. */
START_TEST(test_summary_reasons)
{
    need_recordings();
    struct perf_file *file;
    struct perf_diag diag;
    ck_assert(perf_open(file_data, &file, &diag));
    unsigned long samples = 0;
    for (size_t i = 0; i < perf_record_count(file); i++)
        samples += perf_record_at(file, i)->type == PERF_REC_SAMPLE;
    perf_close(file);
    struct test_run run;
    cfisem_perf(file_data, NULL, &run);
    unsigned long said = 0, sum = 0;
    const char *at = strstr(run.err, "cfisem perf: ");
    ck_assert_ptr_nonnull(at);
    ck_assert_int_eq(sscanf(at, "cfisem perf: %lu samples", &said), 1);
    ck_assert_uint_eq(said, samples);
    at = strstr(run.err, "stops:");
    ck_assert_ptr_nonnull(at);
    for (at += 6; *at && *at != '\n';) {
        char name[64];
        unsigned long count;
        int used;
        if (sscanf(at, " %63s %lu;%n", name, &count, &used) != 2)
            break;
        sum += count;
        at += used;
    }
    ck_assert_uint_eq(sum, samples);
    test_run_free(&run);
}
END_TEST

START_TEST(test_folded)
{
    need_recordings();
    struct test_run run;
    cfisem_perf(file_data, "--folded", &run);
    unsigned long total = 0;
    bool deep = false;
    for (const char *line = run.out; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        const char *space = end;
        while (space > line && space[-1] != ' ')
            space--;
        total += strtoul(space, NULL, 10);
        if (strstr(line, "main;deep_run.isra.0;deep_9;deep_8;deep_7;"
                         "deep_6;deep_5;deep_4;deep_3;deep_2;deep_1;deep_0")
            && strstr(line, "perf-deep;") == line)
            deep = true;
        line = end + 1;
    }
    ck_assert(deep);
    ck_assert_uint_gt(total, 20);
    test_run_free(&run);
}
END_TEST

/* A stack copy of 128 bytes ends the stacks of deep_0 inside the chain:
 * "stack copy exhausted", not "stack memory unreadable". */
START_TEST(test_stack_copy_exhausted)
{
    need_recordings();
    char path[600], cmd[1400];
    snprintf(path, sizeof path, "%s/short-copy.data", dir);
    snprintf(cmd, sizeof cmd, "perf record -q --call-graph dwarf,128 -o %s "
             "%s 100 >/dev/null 2>&1", path, getenv("CFISEM_PERF_TARGET"));
    ck_assert_msg(run_shell(cmd), "perf record --call-graph dwarf,128 "
                  "failed");
    struct test_run run;
    cfisem_perf(path, NULL, &run);
    unsigned long exhausted = 0, samples = 0;
    const char *at = strstr(run.err, "stack_copy_exhausted ");
    ck_assert_msg(at != NULL, "%s", run.err);
    ck_assert_int_eq(sscanf(at, "stack_copy_exhausted %lu", &exhausted), 1);
    ck_assert_int_eq(sscanf(run.err, "cfisem perf: %lu samples", &samples),
                     1);
    ck_assert_uint_gt(exhausted, samples / 2);
    ck_assert_ptr_null(strstr(run.err, " memory "));
    test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------------ */
/* --compare, --compare-fp, --svg                                       */
/* ------------------------------------------------------------------ */

static unsigned long sample_count(const char *path)
{
    struct perf_file *file;
    struct perf_diag diag;
    ck_assert_msg(perf_open(path, &file, &diag), "%s", diag.message);
    unsigned long samples = 0;
    for (size_t i = 0; i < perf_record_count(file); i++)
        samples += perf_record_at(file, i)->type == PERF_REC_SAMPLE;
    perf_close(file);
    return samples;
}

/* A comparison table: "cfisem against NAME: N samples, M with the same
 * chain", then "cause  count  example" lines up to a blank line. The
 * causes' counts must sum to N; *cause_count is the count of the cause
 * that starts with `cause` (0 when absent). */
static void read_table(const char *out, const char *name,
                       unsigned long *samples, unsigned long *same,
                       const char *cause, unsigned long *cause_count)
{
    char head[128];
    snprintf(head, sizeof head, "cfisem against %s: ", name);
    const char *at = strstr(out, head);
    ck_assert_msg(at != NULL, "no table of %s in:\n%s", name, out);
    ck_assert_int_eq(sscanf(at + strlen(head), "%lu samples, %lu with",
                            samples, same), 2);
    at = strchr(at, '\n') + 1;
    ck_assert_ptr_nonnull(strstr(at, "cause") == at ? at : NULL);
    at = strchr(at, '\n') + 1;
    unsigned long sum = 0;
    *cause_count = 0;
    while (*at && *at != '\n') {
        const char *end = strchr(at, '\n');
        ck_assert_ptr_nonnull(end);
        /* The count is the first number after the cause's text, which
         * takes 48 columns. */
        ck_assert_uint_gt((size_t)(end - at), 49);
        unsigned long count = strtoul(at + 49, NULL, 10);
        if (!strncmp(at, cause, strlen(cause)))
            *cause_count += count;
        sum += count;
        at = end + 1;
    }
    ck_assert_uint_eq(sum, *samples);
}

static void cfisem_perf_args(const char *const *extra, int expected,
                             struct test_run *run)
{
    char cache[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *args[16] = {"perf", "--cache", cache};
    size_t n = 3;
    for (size_t i = 0; extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    test_run_cfisem(args, run);
    ck_assert_msg(run->exit_code == expected, "cfisem perf %s: exit %d, "
                  "not %d: %s%s", extra[0], run->exit_code, expected,
                  run->out, run->err);
}

/* Every sample is in the table; most chains are perf script's; a limit
 * of 3 frames is seen as cfisem stopping earlier. */
START_TEST(test_compare_perf_script)
{
    need_recordings();
    unsigned long samples = sample_count(file_data), n, same, count;
    struct test_run run;
    const char *args[] = {file_data, "--compare", NULL};
    cfisem_perf_args(args, 0, &run);
    read_table(run.out, "perf script", &n, &same, "same chain", &count);
    ck_assert_uint_eq(n, samples);
    ck_assert_uint_eq(count, same);
    ck_assert_uint_gt(same, samples / 2);
    test_run_free(&run);
    const char *limited[] = {file_data, "--compare", "--max-frames", "3",
                             NULL};
    cfisem_perf_args(limited, 0, &run);
    read_table(run.out, "perf script", &n, &same,
               "cfisem stopped earlier (max_frames)", &count);
    ck_assert_uint_eq(n, samples);
    ck_assert_uint_gt(count, samples / 2);
    ck_assert_uint_lt(same, samples / 2);
    test_run_free(&run);
}
END_TEST

/* On the program built with frame pointers everywhere, every chain is
 * the frame-pointer chain (exit 1 and a table otherwise). */
START_TEST(test_compare_frame_pointers)
{
    need_recordings();
    const char *target = getenv("CFISEM_PERF_FP_TARGET");
    unsigned long samples = sample_count(fp_data), n, same, skipped;
    struct test_run run;
    const char *args[] = {fp_data, "--compare-fp", target, NULL};
    cfisem_perf_args(args, 0, &run);
    read_table(run.out, "frame pointers", &n, &same, "skipped", &skipped);
    ck_assert_uint_eq(n, samples);
    ck_assert_uint_eq(same + skipped, samples);
    ck_assert_uint_gt(same, samples / 2);
    ck_assert_uint_gt(same, 20);
    test_run_free(&run);
    const char *limited[] = {fp_data, "--compare-fp", target,
                             "--max-frames", "5", NULL};
    cfisem_perf_args(limited, 1, &run);
    unsigned long earlier;
    read_table(run.out, "frame pointers", &n, &same,
               "cfisem stopped earlier (max_frames)", &earlier);
    ck_assert_uint_gt(earlier, samples / 2);
    test_run_free(&run);
}
END_TEST

/* Headless Chromium's DOM of a file. */
static char *chromium_dom(const char *path)
{
    char command[2400];
    snprintf(command, sizeof command,
             "timeout 60 chromium --headless --no-sandbox --disable-gpu "
             "--user-data-dir=%s/chromium --dump-dom file://%s 2>/dev/null",
             dir, path);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 16, len = 0, got;
    char *dom = malloc(cap);
    while ((got = fread(dom + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap)
            dom = realloc(dom, cap *= 2);
    }
    dom[len] = 0;
    ck_assert_int_eq(pclose(p), 0);
    return dom;
}

static size_t occurrences(const char *text, const char *word)
{
    size_t n = 0;
    for (const char *at = text; (at = strstr(at, word)); at++)
        n++;
    return n;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct frame prefixes of --folded's stacks ("A", "A;B", ...):
 * the flame graph's frames. */
static size_t folded_prefixes(const char *folded, unsigned long *samples)
{
    size_t cap = 1024, n = 0;
    char **prefixes = malloc(cap * sizeof *prefixes);
    *samples = 0;
    for (const char *line = folded; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        const char *space = end;
        while (space > line && space[-1] != ' ')
            space--;
        ck_assert(space > line);
        *samples += strtoul(space, NULL, 10);
        for (const char *p = line; p <= space - 1; p++) {
            if (*p != ';' && p != space - 1)
                continue;
            if (n == cap)
                prefixes = realloc(prefixes, (cap *= 2) * sizeof *prefixes);
            prefixes[n++] = strndup(line, (size_t)(p - line));
        }
        line = end + 1;
    }
    qsort(prefixes, n, sizeof *prefixes, by_string);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        distinct += i == 0 || strcmp(prefixes[i], prefixes[i - 1]) != 0;
        if (i)
            free(prefixes[i - 1]);
    }
    if (n)
        free(prefixes[n - 1]);
    free(prefixes);
    return distinct;
}

/* Chromium renders the flame graph: one rect and one title per frame
 * of the folded stacks and the root, whose title counts every sample. */
START_TEST(test_svg_in_a_browser)
{
    need_recordings();
    struct test_run folded, svg;
    const char *f_args[] = {file_data, "--folded", NULL};
    cfisem_perf_args(f_args, 0, &folded);
    unsigned long samples;
    size_t frames = folded_prefixes(folded.out, &samples);
    ck_assert_uint_eq(samples, sample_count(file_data));
    const char *s_args[] = {file_data, "--svg", NULL};
    cfisem_perf_args(s_args, 0, &svg);
    char path[600];
    snprintf(path, sizeof path, "%s/flame.svg", dir);
    ck_assert_int_eq(test_write_file(path, svg.out, svg.out_len), 0);
    char *dom = chromium_dom(path);
    ck_assert_msg(strstr(dom, "<svg") && !strstr(dom, "parsererror"),
                  "chromium did not render the SVG: %.300s", dom);
    /* Self-contained: the namespace is its only URL. */
    ck_assert_uint_eq(occurrences(svg.out, "http"), 1);
    ck_assert_uint_eq(occurrences(dom, "<rect "), frames + 1);
    ck_assert_uint_eq(occurrences(dom, "<title>"), frames + 1);
    char root[64];
    snprintf(root, sizeof root, "<title>all (%lu samples, 100.00%%)",
             samples);
    ck_assert_msg(strstr(dom, root), "no %s", root);
    free(dom);
    test_run_free(&folded);
    test_run_free(&svg);
}
END_TEST

/* One line naming the file, exit 2. */
static void cli_refuses(const char *path)
{
    const char *args[] = {"perf", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, path));
    ck_assert_uint_eq(run.out_len, 0);
    test_run_free(&run);
}

START_TEST(test_cli_bad_inputs)
{
    need_recordings();
    char *tmp = test_temp_dir();
    cli_refuses(tmp);
    char path[600];
    snprintf(path, sizeof path, "%s/fifo", tmp);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    cli_refuses(path);
    unlink(path);
    size_t len;
    char *bytes = small_file(&len);
    snprintf(path, sizeof path, "%s/cut.data", tmp);
    for (size_t cut = 0; cut < len; cut += len / 37 + 1) {
        ck_assert_int_eq(test_write_file(path, bytes, cut), 0);
        cli_refuses(path);
    }
    unlink(path);
    rmdir(tmp);
    free(bytes);
    free(tmp);
}
END_TEST

int main(void)
{
    record_all();
    Suite *suite = suite_create("perf");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_counts_file_mode);
    tcase_add_test(tc, test_counts_pipe_mode);
    tcase_add_test(tc, test_counts_compressed);
    tcase_add_test(tc, test_samples_and_maps);
    tcase_add_test(tc, test_directory_and_fifo);
    tcase_add_test(tc, test_stdin_endless_stream_refused);
    tcase_add_test(tc, test_truncations_refused);
    tcase_add_test(tc, test_mutations_never_crash);
    tcase_add_test(tc, test_pipe_truncation_inside_record);
    suite_add_tcase(suite, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_chains_file_mode);
    tcase_add_test(tc, test_chains_compressed);
    tcase_add_test(tc, test_pipe_same_as_file);
    tcase_add_test(tc, test_summary_reasons);
    tcase_add_test(tc, test_folded);
    tcase_add_test(tc, test_stack_copy_exhausted);
    tcase_add_test(tc, test_cli_bad_inputs);
    tcase_add_test(tc, test_compare_perf_script);
    tcase_add_test(tc, test_compare_frame_pointers);
    tcase_add_test(tc, test_svg_in_a_browser);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (failed == 0)
        run_shell(cmd);
    free(dir);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
