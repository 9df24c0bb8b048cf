/* SPDX-License-Identifier: MIT */
/* check_merge.c — results read back and merged (diff/json.h,
 * diff/merge.h, diff/batch.h, cfi/sha256.h) and the commands that use
 * them (`cfisem diff --shard/--results/--manifest`, `cfisem report
 * merge`).
 *
 *   - the JSON reader takes what RFC 8259 allows (escapes, surrogate
 *     pairs, 64-bit integers) and refuses the rest at the right byte,
 *     on every truncation of a document too;
 *   - SHA-256 gives FIPS 180-4's digests;
 *   - a run with new mismatches (a test-only broken engine), known
 *     deviations with their examples, an engine that cannot be opened
 *     and a file that cannot be loaded is written, read back and written
 *     again: the same JSON and the same text;
 *   - the runs of each file alone, merged in any order, give the run over
 *     all of them, with --keep cutting across the parts;
 *   - parts that do not fit (another seed, a file missing or twice) are
 *     refused, naming the part;
 *   - the commands: shards merged equal the whole run; a results folder
 *     is read back instead of running again, and a copy of a file is not
 *     run twice. */
#include <check.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diff/batch.h"
#include "diff/harness.h"
#include "diff/json.h"
#include "diff/merge.h"
#include "diff/report.h"
#include "cfi/sha256.h"
#include "support.h"

/* ------------------------------------------------------------------ */
/* The JSON reader                                                      */
/* ------------------------------------------------------------------ */

static struct diff_json *parse(const char *text, struct diff_json_error *e)
{
    return diff_json_parse(text, strlen(text), e);
}

START_TEST(json_values)
{
    struct diff_json_error e;
    struct diff_json *j = parse(
        " {\"a\": [1, -2, 18446744073709551615, 1.5e2, true, false, null],"
        " \"s\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\","
        " \"a\": 0, \"o\": {}} ", &e);
    ck_assert_ptr_nonnull(j);
    const struct diff_json *a = diff_json_member(j, "a");
    ck_assert_int_eq(a->kind, DIFF_JSON_ARRAY);
    ck_assert_uint_eq(a->count, 7);
    uint64_t u;
    int64_t i;
    ck_assert(diff_json_u64(&a->elements[0], &u) && u == 1);
    ck_assert(!diff_json_u64(&a->elements[1], &u));
    ck_assert(diff_json_i64(&a->elements[1], &i) && i == -2);
    ck_assert(diff_json_u64(&a->elements[2], &u) && u == UINT64_MAX);
    ck_assert(!diff_json_i64(&a->elements[2], &i));
    ck_assert(!a->elements[3].is_integer && a->elements[3].number == 150.0);
    bool b;
    ck_assert(diff_json_bool(&a->elements[4], &b) && b);
    ck_assert(diff_json_bool(&a->elements[5], &b) && !b);
    ck_assert_int_eq(a->elements[6].kind, DIFF_JSON_NULL);
    ck_assert_str_eq(diff_json_text(diff_json_member(j, "s")),
                     "q\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_uint_eq(j->count, 4);   /* "a" twice: both kept, first found */
    ck_assert_int_eq(diff_json_member(j, "o")->kind, DIFF_JSON_OBJECT);
    ck_assert_ptr_null(diff_json_member(j, "none"));
    diff_json_free(j);
}
END_TEST

struct bad_json {
    const char *text;
    size_t offset;
    const char *message;
};

START_TEST(json_refused)
{
    static const struct bad_json cases[] = {
        {"", 0, "unexpected end of the text"},
        {"[1,]", 3, "bad number"}, {"[nul]", 1, "not a JSON value"},
        {"{\"a\" 1}", 5, "expected ':'"},
        {"{1: 2}", 1, "expected a member name"},
        {"[1 2]", 3, "expected ',' or ']'"},
        {"\"a\\x\"", 3, "bad escape in a string"},
        {"\"\\ud800\"", 7, "lone high surrogate"},
        {"\"\\udc00\"", 7, "lone low surrogate"},
        {"\"\\u0000\"", 7, "\\u0000 in a string"},
        {"\"a\nb\"", 2, "control character in a string"},
        {"01", 2, "bad number"},
        {"1.", 2, "bad number"},
        {"-", 1, "bad number"},
        {"{} x", 3, "text after the value"},
        {"\"abc", 4, "unterminated string"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct diff_json_error e;
        ck_assert_ptr_null(parse(cases[c].text, &e));
        ck_assert_msg(!strcmp(e.message, cases[c].message) &&
                          e.offset == cases[c].offset,
                      "%s: %s at %zu", cases[c].text, e.message, e.offset);
    }
    char deep[200];
    memset(deep, '[', sizeof deep);
    struct diff_json_error e;
    ck_assert_ptr_null(diff_json_parse(deep, sizeof deep, &e));
    ck_assert_str_eq(e.message, "values nested too deep");
    ck_assert_uint_eq(e.offset, DIFF_JSON_DEPTH_MAX + 1);
}
END_TEST

/* The memory a parse takes grows with the text, not with the number of
 * its strings times its length: a result of 200,000 short strings
 * (800 KB) parses within 1 GB of address space. Each string once
 * reserved the rest of the text (about 80 GB here); with thousands of
 * records, cfisem diff's parent ran out of address space and could no
 * longer fork. The limit is set in a child; under ASan, whose shadow
 * memory takes more address space than that, the child parses without
 * it. */
START_TEST(json_memory_grows_with_the_text)
{
    enum { STRINGS = 200000 };
    size_t len = 2 + (size_t)STRINGS * 4;
    char *text = malloc(len + 1);
    ck_assert_ptr_nonnull(text);
    char *at = text;
    *at++ = '[';
    for (int i = 0; i < STRINGS; i++) {
        memcpy(at, i ? ",\"a\"" : "\"a\"", i ? 4 : 3);
        at += i ? 4 : 3;
    }
    *at++ = ']';
    len = (size_t)(at - text);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
#ifndef __SANITIZE_ADDRESS__
        struct rlimit limit = {1ul << 30, 1ul << 30};
        if (setrlimit(RLIMIT_AS, &limit) != 0)
            _exit(3);
#endif
        struct diff_json_error e;
        struct diff_json *j = diff_json_parse(text, len, &e);
        _exit(j && j->count == STRINGS ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "parsing 200,000 strings failed (status 0x%x)", status);
    free(text);
}
END_TEST

/* Every proper prefix of a document is refused, never read past. */
START_TEST(json_truncated)
{
    const char *doc = "{\"k\": [\"a\\u00e9\", {\"x\": -1.25e-3}, null], "
                      "\"t\": true}";
    size_t len = strlen(doc);
    for (size_t n = 0; n < len; n++) {
        char *copy = malloc(n + 1);
        memcpy(copy, doc, n);
        struct diff_json_error e;
        struct diff_json *j = diff_json_parse(copy, n, &e);
        ck_assert_msg(j == NULL, "prefix %zu accepted", n);
        ck_assert_uint_le(e.offset, n);
        free(copy);
    }
    struct diff_json_error e;
    struct diff_json *j = diff_json_parse(doc, len, &e);
    ck_assert_ptr_nonnull(j);
    diff_json_free(j);
}
END_TEST

/* ------------------------------------------------------------------ */
/* SHA-256                                                              */
/* ------------------------------------------------------------------ */

static void assert_sha(const void *bytes, size_t n, size_t repeat,
                       const char *expected)
{
    struct cfi_sha256 s;
    cfi_sha256_init(&s);
    for (size_t r = 0; r < repeat; r++)
        cfi_sha256_add(&s, bytes, n);
    char hex[CFI_SHA256_HEX];
    cfi_sha256_hex(&s, hex);
    ck_assert_str_eq(hex, expected);
}

START_TEST(sha256_vectors)
{
    assert_sha("", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_sha("abc", 3, 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_sha(two, strlen(two), 1, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_sha("a", 1, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    char *dir = test_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s/abc", dir);
    ck_assert_int_eq(test_write_file(path, "abc", 3), 0);
    char hex[CFI_SHA256_HEX];
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_sha256_file(path, hex, &diag), CFI_OK);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(cfi_sha256_file(dir, hex, &diag), CFI_E_IO);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Runs with something of every kind in them                            */
/* ------------------------------------------------------------------ */

/* interp's CFA is 8 too high in [begin, end): new mismatches there. */
struct breaker {
    uint64_t begin, end;
};

struct broken_engine {
    struct engine_instance inner;
    const struct breaker *breaker;
};

static enum cfi_status broken_unwind(void *self,
                                     const struct cfi_request *request,
                                     struct engine_answer *answer)
{
    struct broken_engine *b = self;
    enum cfi_status status = b->inner.unwind(b->inner.self, request, answer);
    uint64_t lookup = cfi_lookup_pc(request->pc, request->caller_frame);
    if (status == CFI_OK && answer->frame.status == CFI_OK &&
        lookup >= b->breaker->begin && lookup < b->breaker->end)
        answer->frame.cfa += 8;
    return status;
}

static void broken_close(void *self)
{
    struct broken_engine *b = self;
    engine_close(&b->inner);
    free(b);
}

static enum cfi_status open_broken(void *env, enum engine_id id,
                                   const struct cfi_file *file,
                                   const struct engine_config *config,
                                   struct engine_instance *engine,
                                   struct cfi_diag *diag)
{
    enum cfi_status status = engine_open(id, file, config, engine, diag);
    if (status != CFI_OK || id != ENGINE_interp)
        return status;
    struct broken_engine *b = malloc(sizeof *b);
    b->inner = *engine;
    b->breaker = env;
    engine->self = b;
    engine->unwind = broken_unwind;
    engine->close = broken_close;
    engine->unwind_batch = NULL; /* every answer through broken_unwind */
    return CFI_OK;
}

#define NFILES 5

struct corpus {
    char *dir;
    char *paths[NFILES];
};

/* Three cases, a text file (not loaded) and one case again. */
static void corpus_make(struct corpus *c)
{
    static const char *const cases[] = {"corpus/cases/prologue.so",
                                        "corpus/cases/signal.so",
                                        "corpus/cases/remember.so"};
    c->dir = test_temp_dir();
    for (size_t i = 0; i < 3; i++)
        c->paths[i] = test_build_path(cases[i]);
    c->paths[3] = malloc(strlen(c->dir) + 16);
    sprintf(c->paths[3], "%s/notes.txt", c->dir);
    ck_assert_int_eq(test_write_file(c->paths[3], "not an ELF\n", 11), 0);
    c->paths[4] = test_build_path(cases[0]);
}

static void corpus_free(struct corpus *c)
{
    unlink(c->paths[3]);
    for (size_t i = 0; i < NFILES; i++)
        free(c->paths[i]);
    rmdir(c->dir);
    free(c->dir);
}

static void config_make(struct diff_config *config, struct breaker *breaker,
                        size_t keep)
{
    diff_config_default(config);
    for (int e = 0; e < ENGINE_COUNT; e++)
        config->engines[e] = false;
    config->engines[ENGINE_il] = true;
    config->engines[ENGINE_interp] = true;
    config->engines[ENGINE_libunwind] = true;        /* known deviations */
    config->engines[ENGINE_sframe] = true;           /* cannot be opened */
    config->jobs = 1;
    config->keep = keep;
    config->nfaults = 1;
    config->faults[0][0] = 0x7ffe00000100;
    config->faults[0][1] = 0x7ffe00000108;
    config->producer = "cfisem test";
    config->open = open_broken;
    config->open_env = breaker;
    breaker->begin = 0x1004;   /* prologue.so's f1 */
    breaker->end = 0x100f;
}

static char *json_of(const struct diff_run *run)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct diff_run copy = *run;
    copy.seconds = 0;
    diff_report_json(out, &copy);
    fclose(out);
    return text;
}

static char *text_of(const struct diff_run *run)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct diff_run copy = *run;
    copy.seconds = 0;
    diff_report_text(out, &copy, 1000);
    fclose(out);
    return text;
}

static struct diff_run *reread(const struct diff_run *run, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/run.json", dir);
    char *json = json_of(run);
    ck_assert_int_eq(test_write_file(path, json, strlen(json)), 0);
    free(json);
    struct diff_run *back;
    char why[256] = "";
    ck_assert_msg(diff_run_read_json(path, &back, why, sizeof why) == CFI_OK,
                  "%s", why);
    unlink(path);
    return back;
}

static void assert_same_reports(const struct diff_run *a,
                                const struct diff_run *b)
{
    char *x = json_of(a), *y = json_of(b);
    ck_assert_str_eq(x, y);
    free(x);
    free(y);
    x = text_of(a), y = text_of(b);
    ck_assert_str_eq(x, y);
    free(x);
    free(y);
}

static struct diff_run *whole_run(struct corpus *c, struct breaker *breaker,
                                  size_t keep)
{
    struct diff_config config;
    config_make(&config, breaker, keep);
    struct diff_run *run;
    ck_assert_int_eq(diff_run(&config, (const char *const *)c->paths, NFILES,
                              &run), CFI_OK);
    return run;
}

/* The run has what the round trip must carry. */
static void assert_varied(const struct diff_run *run)
{
    ck_assert_uint_gt(run->records_total, 0);
    ck_assert_uint_gt(run->counts[ENGINE_libunwind].known_deviation, 0);
    ck_assert_uint_gt(run->nfailures, 0);
    ck_assert_int_ne(run->files[3].status, CFI_OK);
    size_t examples = 0;
    for (size_t d = 0; d < run->ndeviations; d++)
        examples += run->deviation_examples[d].engine != ENGINE_COUNT;
    ck_assert_uint_gt(examples, 0);
}

START_TEST(round_trip)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *run = whole_run(&c, &breaker, 1000);
    assert_varied(run);
    struct diff_run *back = reread(run, c.dir);
    assert_same_reports(run, back);
    ck_assert_uint_eq(back->nrecords, run->nrecords);
    ck_assert_uint_eq(back->records[0].outcome.items[0].item, ENGINE_ITEM_CFA);
    diff_run_free(back);
    diff_run_free(run);
    corpus_free(&c);
}
END_TEST

/* Mutated results (bytes changed, cut short) are read or refused,
 * never a crash (the suite runs under ASan and UBSan too). */
START_TEST(read_mutated)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *run = whole_run(&c, &breaker, 20);
    char *json = json_of(run);
    size_t len = strlen(json);
    char path[4096];
    snprintf(path, sizeof path, "%s/mutated.json", c.dir);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    static const char alphabet[] = "{}[]\",:0x1-e\\u";
    size_t read_back = 0;
    for (int round = 0; round < 400; round++) {
        char *copy = strdup(json);
        size_t n = len;
        for (int k = 0; k < 1 + round % 4; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            copy[(x >> 17) % len] = alphabet[(x >> 41) % (sizeof alphabet - 1)];
        }
        if (round % 5 == 0)
            n = (size_t)((x >> 7) % len);
        ck_assert_int_eq(test_write_file(path, copy, n), 0);
        struct diff_run *back;
        char why[256];
        enum cfi_status status = diff_run_read_json(path, &back, why, sizeof why);
        ck_assert(status == CFI_OK || status == CFI_E_MALFORMED);
        if (status == CFI_OK) {
            free(text_of(back));
            free(json_of(back));
            diff_run_free(back);
            read_back++;
        }
        free(copy);
    }
    printf("merge: %zu of 400 mutated results still read\n", read_back);
    unlink(path);
    free(json);
    diff_run_free(run);
    corpus_free(&c);
}
END_TEST

/* Each file alone, read back from its JSON, then merged. */
static struct diff_run *file_part(struct corpus *c, struct breaker *breaker,
                                  size_t keep, size_t i)
{
    struct diff_config config;
    config_make(&config, breaker, keep);
    struct diff_run *part;
    ck_assert_int_eq(diff_run(&config, (const char *const *)&c->paths[i], 1,
                              &part), CFI_OK);
    part->files[0].index = i;
    part->files_total = NFILES;
    struct diff_run *back = reread(part, c->dir);
    diff_run_free(part);
    return back;
}

static void assert_merge_equals_whole(size_t keep, const size_t *order)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *whole = whole_run(&c, &breaker, keep);
    struct diff_run *parts[NFILES];
    for (size_t i = 0; i < NFILES; i++)
        parts[i] = file_part(&c, &breaker, keep, order[i]);
    struct diff_run *merged;
    size_t bad;
    char why[256] = "";
    ck_assert_msg(diff_run_merge(parts, NFILES, &merged, &bad, why,
                                 sizeof why) == CFI_OK, "%s", why);
    assert_same_reports(whole, merged);
    ck_assert_uint_eq(merged->nrecords, whole->nrecords);
    diff_run_free(merged);
    for (size_t i = 0; i < NFILES; i++)
        diff_run_free(parts[i]);
    diff_run_free(whole);
    corpus_free(&c);
}

START_TEST(merge_in_order)
{
    static const size_t order[NFILES] = {0, 1, 2, 3, 4};
    assert_merge_equals_whole(1000, order);
}
END_TEST

/* The parts in another order, and fewer records kept than the first
 * file has: the merged run keeps the first ones of the whole list. */
START_TEST(merge_any_order_keep)
{
    static const size_t order[NFILES] = {4, 2, 0, 3, 1};
    assert_merge_equals_whole(3, order);
}
END_TEST

START_TEST(merge_refused)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *parts[3] = {file_part(&c, &breaker, 10, 0),
                                 file_part(&c, &breaker, 10, 1), NULL};
    struct diff_run *merged;
    size_t bad;
    char why[256];
    ck_assert_int_eq(diff_run_merge(parts, 2, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, SIZE_MAX);   /* files 2..4 in no part */
    ck_assert_ptr_nonnull(strstr(why, "2 of the 5 files"));
    parts[2] = file_part(&c, &breaker, 10, 0);
    ck_assert_int_eq(diff_run_merge(parts, 3, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, 2);
    ck_assert_ptr_nonnull(strstr(why, "earlier part"));
    parts[1]->config.seed = 2;
    ck_assert_int_eq(diff_run_merge(parts, 2, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, 1);
    ck_assert_ptr_nonnull(strstr(why, "seed"));
    parts[1]->config.seed = parts[0]->config.seed;
    /* Another build of a library, then of the program, then none. */
    parts[0]->config.build = "cfisem 11aa; libelf.so.1 22bb; libz.so.1 33cc";
    parts[1]->config.build = "cfisem 11aa; libelf.so.1 44dd; libz.so.1 33cc";
    ck_assert_int_eq(diff_run_merge(parts, 2, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, 1);
    ck_assert_ptr_nonnull(strstr(why, "another build"));
    ck_assert_ptr_nonnull(strstr(why, "libelf.so.1 44dd against 22bb"));
    parts[1]->config.build = "cfisem 55ee; libelf.so.1 22bb; libz.so.1 33cc";
    ck_assert_int_eq(diff_run_merge(parts, 2, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_ptr_nonnull(strstr(why, "cfisem 55ee against 11aa"));
    parts[1]->config.build = "cfisem 11aa; libelf.so.1 22bb";
    ck_assert_int_eq(diff_run_merge(parts, 2, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_ptr_nonnull(strstr(why, "libz.so.1 (not loaded) against 33cc"));
    parts[1]->config.build = NULL;
    ck_assert_int_eq(diff_run_merge(parts, 2, &merged, &bad, why, sizeof why),
                     CFI_E_MALFORMED);
    ck_assert_ptr_nonnull(strstr(why, "names no build"));
    for (size_t i = 0; i < 3; i++)
        diff_run_free(parts[i]);
    corpus_free(&c);
}
END_TEST

/* Runs over lists of their own (each file alone, as a package's files
 * are run by corpus/debian.sh) put one after the other: the run over
 * the whole list. */
static struct diff_run *own_list(struct corpus *c, struct breaker *breaker,
                                 size_t keep, size_t i)
{
    struct diff_config config;
    config_make(&config, breaker, keep);
    struct diff_run *part;
    ck_assert_int_eq(diff_run(&config, (const char *const *)&c->paths[i], 1,
                              &part), CFI_OK);
    ck_assert_uint_eq(part->files_total, 1);
    struct diff_run *back = reread(part, c->dir);
    diff_run_free(part);
    return back;
}

START_TEST(concat_lists)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *whole = whole_run(&c, &breaker, 3);
    struct diff_run *parts[NFILES];
    for (size_t i = 0; i < NFILES; i++)
        parts[i] = own_list(&c, &breaker, 3, i);
    struct diff_run *merged;
    size_t bad;
    char why[256] = "";
    ck_assert_msg(diff_run_concat(parts, NFILES, &merged, &bad, why,
                                  sizeof why) == CFI_OK, "%s", why);
    assert_same_reports(whole, merged);
    ck_assert_uint_eq(merged->nrecords, whole->nrecords);
    ck_assert_uint_eq(merged->files[NFILES - 1].index, NFILES - 1);
    diff_run_free(merged);
    /* shards of one list are not lists of their own */
    ck_assert_int_eq(diff_run_merge(parts, NFILES, &merged, &bad, why,
                                    sizeof why), CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, 1);
    ck_assert_ptr_nonnull(strstr(why, "earlier part"));
    diff_run_free(whole);
    for (size_t i = 0; i < NFILES; i++)
        diff_run_free(parts[i]);
    corpus_free(&c);
}
END_TEST

START_TEST(concat_refused)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *parts[2] = {own_list(&c, &breaker, 10, 0),
                                 file_part(&c, &breaker, 10, 1)};
    struct diff_run *merged;
    size_t bad;
    char why[256];
    ck_assert_int_eq(diff_run_concat(parts, 2, &merged, &bad, why,
                                     sizeof why), CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, 1);
    ck_assert_ptr_nonnull(strstr(why, "shard of its list"));
    diff_run_free(parts[1]);
    parts[1] = own_list(&c, &breaker, 10, 1);
    parts[1]->config.seed = 2;
    ck_assert_int_eq(diff_run_concat(parts, 2, &merged, &bad, why,
                                     sizeof why), CFI_E_MALFORMED);
    ck_assert_uint_eq(bad, 1);
    ck_assert_ptr_nonnull(strstr(why, "seed"));
    ck_assert_int_eq(diff_run_concat(parts, 0, &merged, &bad, why,
                                     sizeof why), CFI_E_MALFORMED);
    for (size_t i = 0; i < 2; i++)
        diff_run_free(parts[i]);
    corpus_free(&c);
}
END_TEST

/* What is not the JSON of a run: one line saying what is wrong. */
START_TEST(read_refused)
{
    char *dir = test_temp_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s/x.json", dir);
    static const char *const docs[] = {
        "[1, 2]", "{\"seed\": 1}", "{\"schema_version\": 2, \"seed\": 1}",
        "{\"schema_version\": 1, \"seed\": 1}", "{\"seed\": "};
    static const char *const says[] = {"\"schema_version\" is missing or wrong",
                                       "\"schema_version\" is missing or wrong",
                                       "\"schema_version\" is missing or wrong",
                                       "\"states\" is missing or wrong",
                                       "not JSON: unexpected end"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        ck_assert_int_eq(test_write_file(path, docs[i], strlen(docs[i])), 0);
        struct diff_run *run;
        char why[256];
        ck_assert_int_eq(diff_run_read_json(path, &run, why, sizeof why),
                         CFI_E_MALFORMED);
        ck_assert_msg(strstr(why, says[i]) != NULL, "%s", why);
    }
    struct diff_run *run;
    char why[256];
    ck_assert_int_eq(diff_run_read_json(dir, &run, why, sizeof why), CFI_E_IO);
    ck_assert_str_eq(why, "is a directory");
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

/* The batch: a copy of a file is taken from its first run; a second
 * batch reads every result from the folder; both equal diff_run. */
START_TEST(batch_results_folder)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *whole = whole_run(&c, &breaker, 1000);
    struct diff_config config;
    config_make(&config, &breaker, 1000);
    char results[4096];
    snprintf(results, sizeof results, "%s/results", c.dir);
    struct diff_batch batch = {results, false, NULL, 0};
    struct diff_batch_counts counts;
    struct diff_run *run;
    ck_assert_int_eq(diff_run_batch(&config, &batch, (const char *const *)c.paths,
                                    NFILES, &run, &counts), CFI_OK);
    ck_assert_uint_eq(counts.ran, 4);
    ck_assert_uint_eq(counts.same_contents, 1);
    ck_assert_uint_eq(counts.stored, 0);
    assert_same_reports(whole, run);
    diff_run_free(run);
    ck_assert_int_eq(diff_run_batch(&config, &batch, (const char *const *)c.paths,
                                    NFILES, &run, &counts), CFI_OK);
    ck_assert_uint_eq(counts.ran, 0);
    ck_assert_uint_eq(counts.stored, 4);
    assert_same_reports(whole, run);
    diff_run_free(run);
    config.seed = 7;      /* other settings: nothing fits, all run */
    ck_assert_int_eq(diff_run_batch(&config, &batch, (const char *const *)c.paths,
                                    NFILES, &run, &counts), CFI_OK);
    ck_assert_uint_eq(counts.ran, 4);
    diff_run_free(run);
    diff_run_free(whole);
    char command[8192];
    snprintf(command, sizeof command, "rm -r '%s'", results);
    ck_assert_int_eq(system(command), 0);
    corpus_free(&c);
}
END_TEST

/* Files in parallel (each in a child writing its result), with and
 * without a results folder: the same run. */
START_TEST(batch_parallel)
{
    struct corpus c;
    struct breaker breaker;
    corpus_make(&c);
    struct diff_run *whole = whole_run(&c, &breaker, 1000);
    struct diff_config config;
    config_make(&config, &breaker, 1000);
    config.jobs = 2;
    char results[4096];
    snprintf(results, sizeof results, "%s/results", c.dir);
    for (int stored = 0; stored < 3; stored++) {
        struct diff_batch batch = {stored ? results : NULL, true, NULL, 0};
        struct diff_batch_counts counts;
        struct diff_run *run;
        ck_assert_int_eq(diff_run_batch(&config, &batch,
                                        (const char *const *)c.paths, NFILES,
                                        &run, &counts), CFI_OK);
        ck_assert_uint_eq(counts.ran, stored == 2 ? 0 : 4);
        ck_assert_uint_eq(counts.stored, stored == 2 ? 4 : 0);
        ck_assert_uint_eq(counts.same_contents, 1);
        assert_same_reports(whole, run);
        diff_run_free(run);
    }
    diff_run_free(whole);
    char command[8192];
    snprintf(command, sizeof command, "rm -r '%s'", results);
    ck_assert_int_eq(system(command), 0);
    corpus_free(&c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The commands                                                         */
/* ------------------------------------------------------------------ */

/* The report's first line without its time. */
static char *timeless(char *text)
{
    char *line_end = strchr(text, '\n');
    char *comma = line_end ? line_end : text;
    while (comma > text && *comma != ',')
        comma--;
    if (comma > text)
        memmove(comma, line_end, strlen(line_end) + 1);
    return text;
}

START_TEST(command_shards_merge)
{
    struct corpus c;
    corpus_make(&c);
    char manifest[4096], whole[4096], part[3][4096], merged[4096];
    snprintf(manifest, sizeof manifest, "%s/manifest.txt", c.dir);
    FILE *m = fopen(manifest, "w");
    fprintf(m, "# a manifest\n");
    for (size_t i = 0; i < NFILES; i++)
        fprintf(m, "%s\t0\tx\n", c.paths[i]);
    fclose(m);
    snprintf(whole, sizeof whole, "%s/whole.json", c.dir);
    snprintf(merged, sizeof merged, "%s/merged.json", c.dir);
    const char *args[] = {"diff", "--manifest", manifest, "--engines",
                          "il,interp,libdw", "--json", whole, NULL, NULL, NULL};
    struct test_run one, shard, merge;
    test_run_cfisem(args, &one);
    ck_assert_int_eq(one.exit_code, 2);     /* notes.txt is not an ELF */
    for (int k = 0; k < 3; k++) {
        char which[32];
        snprintf(which, sizeof which, "%d/3", k + 1);
        snprintf(part[k], sizeof part[k], "%s/part%d.json", c.dir, k + 1);
        args[6] = part[k];
        args[7] = "--shard";
        args[8] = which;
        test_run_cfisem(args, &shard);
        ck_assert_int_ne(shard.exit_code, TEST_EXIT_USAGE);
        test_run_free(&shard);
    }
    const char *margs[] = {"report", "merge", part[2], part[0], part[1],
                           "--json", merged, NULL};
    test_run_cfisem(margs, &merge);
    ck_assert_int_eq(merge.exit_code, one.exit_code);
    ck_assert_str_eq(timeless(merge.out), timeless(one.out));
    /* diff also says what its batch did */
    const char *batch = strstr(one.err, " files run, ");
    ck_assert_ptr_nonnull(batch);
    ck_assert_str_eq(merge.err, strchr(batch, '\n') + 1);
    test_run_free(&merge);
    const char *missing[] = {"report", "merge", part[0], part[1], NULL};
    test_run_cfisem(missing, &merge);
    ck_assert_int_eq(merge.exit_code, 2);
    ck_assert_ptr_nonnull(strstr(merge.err, "a shard missing?"));
    test_run_free(&merge);
    test_run_free(&one);
    for (int k = 0; k < 3; k++)
        unlink(part[k]);
    unlink(whole);
    unlink(merged);
    unlink(manifest);
    corpus_free(&c);
}
END_TEST

/* One diff per file, each over its own list, then report merge
 * --lists: the report of one run over all of them. */
START_TEST(command_lists_merge)
{
    struct corpus c;
    corpus_make(&c);
    char manifest[4096], part[NFILES][4096];
    snprintf(manifest, sizeof manifest, "%s/manifest.txt", c.dir);
    FILE *m = fopen(manifest, "w");
    for (size_t i = 0; i < NFILES; i++)
        fprintf(m, "%s\t0\tx\n", c.paths[i]);
    fclose(m);
    const char *args[] = {"diff", "--manifest", manifest, "--engines",
                          "il,interp", NULL};
    struct test_run one, run;
    test_run_cfisem(args, &one);
    ck_assert_int_eq(one.exit_code, 2);     /* notes.txt is not an ELF */
    const char *margs[NFILES + 4] = {"report", "merge", "--lists"};
    for (size_t i = 0; i < NFILES; i++) {
        snprintf(part[i], sizeof part[i], "%s/own%zu.json", c.dir, i);
        const char *pargs[] = {"diff", c.paths[i], "--engines", "il,interp",
                               "--json", part[i], NULL};
        test_run_cfisem(pargs, &run);
        ck_assert_int_ne(run.exit_code, TEST_EXIT_USAGE);
        test_run_free(&run);
        margs[3 + i] = part[i];
    }
    test_run_cfisem(margs, &run);
    ck_assert_int_eq(run.exit_code, one.exit_code);
    ck_assert_str_eq(timeless(run.out), timeless(one.out));
    test_run_free(&run);
    margs[2] = part[0];     /* without --lists: not shards of one list */
    test_run_cfisem(margs, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    test_run_free(&run);
    test_run_free(&one);
    for (size_t i = 0; i < NFILES; i++)
        unlink(part[i]);
    unlink(manifest);
    corpus_free(&c);
}
END_TEST

START_TEST(command_usage)
{
    static const char *const bad[][4] = {
        {"diff", "--shard", "0/2", NULL}, {"diff", "--shard", "3/2", NULL},
        {"diff", "--shard", "1", NULL},   {"report", "split", NULL, NULL},
        {"report", "merge", NULL, NULL},  {"report", NULL, NULL, NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct test_run run;
        test_run_cfisem(bad[i], &run);
        ck_assert_int_eq(run.exit_code, TEST_EXIT_USAGE);
        ck_assert_uint_eq(test_count_lines(run.err), 1);
        test_run_free(&run);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("merge");
    TCase *reader = tcase_create("reader");
    tcase_add_test(reader, json_values);
    tcase_add_test(reader, json_refused);
    tcase_add_test(reader, json_truncated);
    tcase_add_test(reader, json_memory_grows_with_the_text);
    tcase_add_test(reader, sha256_vectors);
    suite_add_tcase(suite, reader);
    TCase *runs = tcase_create("runs");
    tcase_set_timeout(runs, 300);
    tcase_add_test(runs, round_trip);
    tcase_add_test(runs, merge_in_order);
    tcase_add_test(runs, merge_any_order_keep);
    tcase_add_test(runs, merge_refused);
    tcase_add_test(runs, concat_lists);
    tcase_add_test(runs, concat_refused);
    tcase_add_test(runs, read_refused);
    tcase_add_test(runs, read_mutated);
    tcase_add_test(runs, batch_results_folder);
    tcase_add_test(runs, batch_parallel);
    suite_add_tcase(suite, runs);
    TCase *commands = tcase_create("commands");
    tcase_set_timeout(commands, 300);
    tcase_add_test(commands, command_shards_merge);
    tcase_add_test(commands, command_lists_merge);
    tcase_add_test(commands, command_usage);
    suite_add_tcase(suite, commands);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
