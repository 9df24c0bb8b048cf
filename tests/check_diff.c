/* SPDX-License-Identifier: MIT */
/* check_diff.c — the differential harness (diff/harness.h) and its two
 * commands, `cfisem diff` and `cfisem validate`.
 *
 *   - our engines agree with the reference on every corpus case and on
 *     libc (zero mismatches);
 *   - a deliberately broken engine (test-only: the CFA of one row plus 8,
 *     or one register flipped) is caught with exactly the right counts,
 *     and its reproducer reproduces: the `cfisem unwind` line gives the
 *     reference's answer with --engine il, and the same question asked
 *     of the broken engine gives the wrong one;
 *   - the JSON file has the documented schema (parsed here);
 *   - the result does not depend on --jobs;
 *   - exit codes, and a bad input file among good ones;
 *   - `cfisem validate` finds exactly the one wrong range of a
 *     hand-written v1 eh_elf (tests/validate/prologue_v1.c), passes the
 *     right one, and survives a stray read in v1-direct;
 *   - on tests/validate/gaps.S, hand-written eh_elfs (gaps_v1.c, and
 *     prologue_full.c for the full ABI) that abort, segfault or hang are
 *     exact "crashed" ranges with their signal, the wrong v1 variant is
 *     named, and each planted fault (the PLT's CFA 8 short, gaps answered
 *     with the previous row, rip=rdi answered undefined, rbp=rsi
 *     answered "not restored", the return address column ignored, an
 *     unsupported row) is found at exactly
 *     its range with its kind; the eh_elf's reproducer reproduces. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff/harness.h"
#include "diff/report.h"
#include "support.h"

/* ------------------------------------------------------------------ */
/* A minimal JSON reader: enough to check the schema                    */
/* ------------------------------------------------------------------ */

enum json_kind { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT };

struct json {
    enum json_kind kind;
    double number;
    char *string;              /* J_STRING; a member's key otherwise */
    char *key;
    struct json *items;        /* J_ARRAY, J_OBJECT */
    size_t count;
};

struct json_reader {
    const char *at;
    int depth;
};

static void skip_space(struct json_reader *r)
{
    while (*r->at == ' ' || *r->at == '\n' || *r->at == '\t' || *r->at == '\r')
        r->at++;
}

static bool json_value(struct json_reader *r, struct json *out);

static bool json_string(struct json_reader *r, char **out)
{
    if (*r->at != '"')
        return false;
    const char *start = ++r->at;
    while (*r->at && *r->at != '"')
        r->at += (*r->at == '\\' && r->at[1]) ? 2 : 1;
    if (*r->at != '"')
        return false;
    size_t len = (size_t)(r->at - start);
    *out = malloc(len + 1);
    memcpy(*out, start, len);
    (*out)[len] = 0;
    r->at++;
    return true;
}

static bool json_members(struct json_reader *r, struct json *out, char close,
                         bool keyed)
{
    r->at++;
    skip_space(r);
    if (*r->at == close) {
        r->at++;
        return true;
    }
    for (;;) {
        out->items = realloc(out->items, (out->count + 1) * sizeof *out->items);
        struct json *item = &out->items[out->count++];
        memset(item, 0, sizeof *item);
        skip_space(r);
        if (keyed) {
            if (!json_string(r, &item->key))
                return false;
            skip_space(r);
            if (*r->at++ != ':')
                return false;
        }
        if (!json_value(r, item))
            return false;
        skip_space(r);
        if (*r->at == close) {
            r->at++;
            return true;
        }
        if (*r->at++ != ',')
            return false;
    }
}

static bool json_value(struct json_reader *r, struct json *out)
{
    skip_space(r);
    if (++r->depth > 64)
        return false;
    bool ok = true;
    if (*r->at == '{') {
        out->kind = J_OBJECT;
        ok = json_members(r, out, '}', true);
    } else if (*r->at == '[') {
        out->kind = J_ARRAY;
        ok = json_members(r, out, ']', false);
    } else if (*r->at == '"') {
        out->kind = J_STRING;
        ok = json_string(r, &out->string);
    } else if (!strncmp(r->at, "null", 4) || !strncmp(r->at, "true", 4)) {
        out->kind = *r->at == 'n' ? J_NULL : J_BOOL;
        out->number = *r->at == 't';   /* a bool's value: 1 true, 0 false */
        r->at += 4;
    } else if (!strncmp(r->at, "false", 5)) {
        out->kind = J_BOOL;
        r->at += 5;
    } else {
        char *end;
        out->kind = J_NUMBER;
        out->number = strtod(r->at, &end);
        ok = end != r->at;
        r->at = end;
    }
    r->depth--;
    return ok;
}

static void json_free(struct json *j)
{
    for (size_t i = 0; i < j->count; i++)
        json_free(&j->items[i]);
    free(j->items);
    free(j->string);
    free(j->key);
}

static struct json *json_parse(const char *text)
{
    struct json *j = calloc(1, sizeof *j);
    struct json_reader r = {text, 0};
    ck_assert_msg(json_value(&r, j), "JSON syntax error near: %.60s", r.at);
    skip_space(&r);
    ck_assert_msg(*r.at == 0, "JSON: trailing text: %.60s", r.at);
    return j;
}

static const struct json *json_get(const struct json *j, const char *key)
{
    ck_assert_msg(j && j->kind == J_OBJECT, "JSON: no object for %s", key);
    for (size_t i = 0; i < j->count; i++)
        if (!strcmp(j->items[i].key, key))
            return &j->items[i];
    ck_abort_msg("JSON: no member %s", key);
    return NULL;
}

static double json_number(const struct json *j, const char *key)
{
    const struct json *member = json_get(j, key);
    ck_assert_msg(member->kind == J_NUMBER, "JSON: %s is not a number", key);
    return member->number;
}

static uint64_t json_hex(const struct json *j, const char *key)
{
    const struct json *member = json_get(j, key);
    ck_assert_msg(member->kind == J_STRING, "JSON: %s is not a string", key);
    return strtoull(member->string, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* Test-only broken engines                                             */
/* ------------------------------------------------------------------ */

enum breakage { BREAK_CFA, BREAK_REG, BREAK_CRASH, BREAK_HANG };

/* Which engine is broken, how, where; shared by every instance (one per
 * worker), which count the answers they changed. */
struct breaker {
    enum engine_id id;
    enum breakage how;
    uint64_t begin, end;       /* lookup PCs where answers are broken */
    unsigned reg;              /* BREAK_REG */
    atomic_uint_fast64_t broken;
};

struct broken_engine {
    struct engine_instance inner;
    struct breaker *breaker;
};

static enum cfi_status broken_unwind(void *self,
                                     const struct cfi_request *request,
                                     struct engine_answer *answer)
{
    struct broken_engine *b = self;
    enum cfi_status status = b->inner.unwind(b->inner.self, request, answer);
    uint64_t lookup = request->caller_frame ? request->pc - 1 : request->pc;
    struct cfi_frame *frame = &answer->frame;
    if (status != CFI_OK || lookup < b->breaker->begin ||
        lookup >= b->breaker->end)
        return status;
    /* As a library with a bug would die (abort: the sanitizers do not
     * report it, so the log stays clean; the harness sees a death). */
    if (b->breaker->how == BREAK_CRASH)
        abort();
    /* As a library caught in a loop would stop answering. */
    while (b->breaker->how == BREAK_HANG)
        sleep(1);
    if (b->breaker->how == BREAK_CFA)
        frame->cfa += 8;
    else if (frame->caller.status[b->breaker->reg] == CFI_REG_VALUE)
        frame->caller.value[b->breaker->reg] ^= 1;
    else
        return status;
    atomic_fetch_add(&b->breaker->broken, 1);
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
    struct breaker *breaker = env;
    enum cfi_status status = engine_open(id, file, config, engine, diag);
    if (status != CFI_OK || id != breaker->id)
        return status;
    struct broken_engine *b = malloc(sizeof *b);
    b->inner = *engine;
    b->breaker = breaker;
    engine->self = b;
    engine->unwind = broken_unwind;
    engine->close = broken_close;
    engine->unwind_batch = NULL; /* every answer through broken_unwind */
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

static char *case_path(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "corpus/cases/%s", name);
    return test_build_path(rel);
}

/* Whether the compiled engine is part of this build (it opens for the
 * file); its eh_elf goes to `cache`. */
static bool compiled_available(const char *path, const char *cache)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct engine_config config = {NULL, cache};
    struct engine_instance engine;
    bool ok = engine_open(ENGINE_compiled, file, &config, &engine,
                          &diag) == CFI_OK;
    if (ok)
        engine_close(&engine);
    else
        printf("diff: compiled engine not used: %s\n", diag.message);
    cfi_file_close(file);
    return ok;
}

static void config_engines(struct diff_config *config, bool compiled)
{
    for (int e = 0; e < ENGINE_COUNT; e++)
        config->engines[e] = false;
    config->engines[ENGINE_il] = true;
    config->engines[ENGINE_interp] = true;
    config->engines[ENGINE_compiled] = compiled;
}

static struct diff_run *run_paths(const struct diff_config *config,
                                  const char *const *paths, size_t n)
{
    struct diff_run *run;
    ck_assert_int_eq(diff_run(config, paths, n, &run), CFI_OK);
    return run;
}

/* Every engine asked answered every request and agreed. */
static void assert_all_agree(const struct diff_run *run)
{
    for (int e = 0; e < ENGINE_COUNT; e++) {
        if (!run->config.engines[e])
            continue;
        const struct diff_counts *c = &run->counts[e];
        ck_assert_msg(c->differ == 0 && c->errors == 0 &&
                          c->known_deviation == 0 && c->not_comparable == 0,
                      "%s: %" PRIu64 " differ, %" PRIu64 " errors",
                      engine_name((enum engine_id)e), c->differ,
                      c->errors);
        ck_assert_uint_eq(c->compared, run->requests);
        ck_assert_uint_eq(c->agree, run->requests);
    }
    ck_assert_uint_eq(run->records_total, 0);
}

static char *report_json(struct diff_run *run)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    double seconds = run->seconds;
    run->seconds = 0;
    diff_report_json(out, run);
    run->seconds = seconds;
    fclose(out);
    return text;
}

/* ------------------------------------------------------------------ */
/* Our engines agree                                                    */
/* ------------------------------------------------------------------ */

START_TEST(test_cases_agree)
{
    char *dir_path = test_build_path("corpus/cases");
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "no built cases in %s", dir_path);
    const char *paths[64];
    size_t n = 0;
    for (struct dirent *entry; (entry = readdir(dir)) && n < 64;) {
        size_t len = strlen(entry->d_name);
        if (len > 3 && !strcmp(entry->d_name + len - 3, ".so"))
            paths[n++] = case_path(entry->d_name);
    }
    closedir(dir);
    ck_assert_uint_ge(n, 10);
    char *cache = test_temp_dir();
    struct diff_config config;
    diff_config_default(&config);
    config.engine_config.cache_dir = cache;
    config_engines(&config, compiled_available(paths[0], cache));
    config.all_pcs = true;
    struct diff_run *run = run_paths(&config, paths, n);
    printf("diff: %zu cases, every PC: %" PRIu64 " requests\n", n,
           run->requests);
    ck_assert_uint_gt(run->requests, 1000);
    ck_assert_uint_gt(run->reference[CFI_E_MEMORY], 0);
    ck_assert_uint_gt(run->reference[CFI_E_REG_UNKNOWN], 0);
    ck_assert_uint_gt(run->reference[CFI_E_NO_FDE], 0);
    assert_all_agree(run);
    diff_run_free(run);
    for (size_t i = 0; i < n; i++)
        free((char *)paths[i]);
    free(cache);
    free(dir_path);
}
END_TEST

START_TEST(test_libc_agrees)
{
    char *path = test_system_lib("libc.so.6");
    char *cache = test_temp_dir();
    struct diff_config config;
    diff_config_default(&config);
    config.engine_config.cache_dir = cache;
    config_engines(&config, compiled_available(path, cache));
    config.jobs = 2;
    const char *paths[] = {path};
    struct diff_run *run = run_paths(&config, paths, 1);
    printf("diff: libc.so.6: %" PRIu64 " requests, %.2f s\n", run->requests,
           run->seconds);
    ck_assert_uint_gt(run->requests, 100000);
    assert_all_agree(run);
    diff_run_free(run);
    free(cache);
    free(path);
}
END_TEST

/* Opens the engine as the harness does, but with no batches: each
 * request asked alone. */
static enum cfi_status open_one_by_one(void *env, enum engine_id id,
                                       const struct cfi_file *file,
                                       const struct engine_config *config,
                                       struct engine_instance *engine,
                                       struct cfi_diag *diag)
{
    (void)env;
    enum cfi_status status = engine_open(id, file, config, engine, diag);
    engine->unwind_batch = NULL;
    return status;
}

/* gdb asked in batches (a core for many requests) counts what it counts
 * asked one request at a time, on cases with pushes, a realigned stack,
 * GNU_args_size and signal frames, four states each (the fault states
 * among them). */
START_TEST(test_gdb_batches_as_alone)
{
    static const char *const names[] = {"prologue.so", "realign.so",
                                        "args_size.so", "signal.so"};
    const char *paths[4];
    for (size_t i = 0; i < 4; i++)
        paths[i] = case_path(names[i]);
    struct diff_config config;
    diff_config_default(&config);
    config_engines(&config, false);
    config.engines[ENGINE_interp] = false;
    config.engines[ENGINE_gdb] = true;
    struct diff_run *batched = run_paths(&config, paths, 4);
    config.open = open_one_by_one;
    struct diff_run *alone = run_paths(&config, paths, 4);
    const struct diff_counts *b = &batched->counts[ENGINE_gdb];
    const struct diff_counts *a = &alone->counts[ENGINE_gdb];
    printf("diff: gdb in batches and alone: %" PRIu64 " requests, %" PRIu64
           " compared, %" PRIu64 " agree, %" PRIu64 " known, %" PRIu64
           " not comparable\n", batched->requests, b->compared, b->agree,
           b->known_deviation, b->not_comparable);
    ck_assert_uint_gt(b->agree, 50);
    ck_assert_uint_gt(b->known_deviation, 50);
    ck_assert_uint_eq(b->compared, a->compared);
    ck_assert_uint_eq(b->agree, a->agree);
    ck_assert_uint_eq(b->known_deviation, a->known_deviation);
    ck_assert_uint_eq(b->differ, 0);
    ck_assert_uint_eq(a->differ, 0);
    ck_assert_uint_eq(b->not_comparable, a->not_comparable);
    ck_assert_uint_eq(b->errors, 0);
    diff_run_free(batched);
    diff_run_free(alone);
    for (size_t i = 0; i < 4; i++)
        free((char *)paths[i]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A broken engine is caught                                            */
/* ------------------------------------------------------------------ */

/* prologue.so's f1: [0x1004,0x1009)  cfa=rbp+16  rbp=[cfa-16]
 * rip=[cfa-8], and [0x1009,0x100f) where rbx=[cfa-24] too. */
static struct diff_run *run_broken(struct breaker *breaker, unsigned jobs,
                                   const char *path)
{
    struct diff_config config;
    diff_config_default(&config);
    config_engines(&config, false);
    config.jobs = jobs;
    config.open = open_broken;
    config.open_env = breaker;
    const char *paths[] = {path};
    return run_paths(&config, paths, 1);
}

static void assert_caught(const struct diff_run *run, struct breaker *breaker)
{
    uint64_t broken = atomic_load(&breaker->broken);
    const struct diff_counts *c = &run->counts[ENGINE_interp];
    ck_assert_uint_gt(broken, 0);
    ck_assert_uint_eq(c->differ, broken);
    ck_assert_uint_eq(c->agree, run->requests - broken);
    ck_assert_uint_eq(c->compared, run->requests);
    ck_assert_uint_eq(c->known_deviation + c->not_comparable + c->errors, 0);
    ck_assert_uint_eq(run->counts[ENGINE_il].agree, run->requests);
    ck_assert_uint_eq(run->records_total, broken);
    ck_assert_uint_eq(run->nrecords, broken);
    for (size_t i = 0; i < run->nrecords; i++) {
        const struct diff_record *r = &run->records[i];
        uint64_t lookup = r->state.at.pc - r->state.at.caller_frame;
        ck_assert_int_eq(r->engine, ENGINE_interp);
        ck_assert(lookup >= breaker->begin && lookup < breaker->end);
        ck_assert_uint_eq(r->outcome.nitems, 1);
        ck_assert_ptr_null(r->outcome.items[0].deviation);
        if (breaker->how == BREAK_CFA) {
            ck_assert_int_eq(r->outcome.items[0].item, ENGINE_ITEM_CFA);
            ck_assert_uint_eq(r->got.cfa, r->expected.cfa + 8);
        } else {
            ck_assert_int_eq(r->outcome.items[0].item, ENGINE_ITEM_REG);
            ck_assert_uint_eq(r->outcome.items[0].reg, breaker->reg);
        }
    }
}

START_TEST(test_broken_cfa_caught)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_CFA, 0x1004, 0x1009,
                              0, 0};
    struct diff_run *run = run_broken(&breaker, 1, path);
    assert_caught(run, &breaker);
    ck_assert_ptr_nonnull(strstr(run->records[0].row_text,
                                 "[0x1004,0x1009)  cfa=rbp+16"));
    /* The report shows the mismatch and says the run failed. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    diff_report_text(out, run, 10);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(text, "cfa    expected 0x"));
    ck_assert_ptr_nonnull(strstr(text, "reproduce: cfisem unwind "));
    ck_assert(diff_run_unexplained(run));
    free(text);
    diff_run_free(run);
    free(path);
}
END_TEST

/* A mismatch names the function that holds its PC, in the text report
 * and the JSON: a shared object with a function symbol `work`, whose
 * CFA the broken engine misreports. */
START_TEST(test_broken_names_function)
{
    char *dir = test_temp_dir();
    char c[4200], so[4200], command[9000];
    snprintf(c, sizeof c, "%s/work.c", dir);
    snprintf(so, sizeof so, "%s/work.so", dir);
    const char src[] = "int other(int);\n"
                       "int work(int x) { return other(x) * 3 + 1; }\n";
    ck_assert_int_eq(test_write_file(c, src, strlen(src)), 0);
    snprintf(command, sizeof command,
             "cc -shared -fPIC -O1 -o '%s' '%s'", so, c);
    ck_assert_msg(system(command) == 0, "cannot build: %s", command);
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(so, &file, &diag), CFI_OK);
    struct cfi_symbol *symbols;
    size_t count;
    ck_assert_int_eq(cfi_file_functions(file, &symbols, &count), CFI_OK);
    const struct cfi_symbol *work = NULL;
    for (size_t i = 0; i < count; i++)
        if (!strcmp(symbols[i].name, "work"))
            work = &symbols[i];
    ck_assert_ptr_nonnull(work);
    ck_assert_uint_gt(work->size, 0);
    struct breaker breaker = {ENGINE_interp, BREAK_CFA, work->value,
                              work->value + work->size, 0, 0};
    free(symbols);
    cfi_file_close(file);
    struct diff_run *run = run_broken(&breaker, 1, so);
    assert_caught(run, &breaker);
    for (size_t i = 0; i < run->nrecords; i++) {
        const struct diff_record *r = &run->records[i];
        uint64_t offset = r->state.at.pc - breaker.begin;
        char expected[64];
        if (offset == 0)
            snprintf(expected, sizeof expected, "work");
        else
            snprintf(expected, sizeof expected, "work+0x%" PRIx64, offset);
        ck_assert_str_eq(r->function, expected);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    diff_report_text(out, run, 10);
    diff_report_json(out, run);
    fclose(out);
    /* every record names work; the report shows the first ones */
    size_t named = 0;
    for (size_t i = 0; i < run->nrecords; i++) {
        char line[256];
        snprintf(line, sizeof line, ": pc 0x%" PRIx64 " <%s>,",
                 run->records[i].state.at.pc, run->records[i].function);
        named += strstr(text, line) != NULL;
    }
    ck_assert_uint_gt(named, 0);
    ck_assert_ptr_nonnull(strstr(text, "\"function\": \"work"));
    free(text);
    diff_run_free(run);
    unlink(c);
    unlink(so);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_broken_register_caught)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_REG, 0x1009, 0x100f,
                              CFI_REG_RBX, 0};
    struct diff_run *run = run_broken(&breaker, 2, path);
    assert_caught(run, &breaker);
    diff_run_free(run);
    free(path);
}
END_TEST

/* The reproducer's words (paths here have no spaces). */
static size_t split_words(char *line, char **words, size_t max)
{
    size_t n = 0;
    for (char *w = strtok(line, " "); w && n < max; w = strtok(NULL, " "))
        words[n++] = w;
    return n;
}

/* Asks the question of a reproducer's words in-process: the request,
 * over the memory it describes. */
struct asked {
    struct cfi_regs callee;
    struct engine_memory *memory;
    struct cfi_request request;
};

static void ask_words(char **words, size_t n, const struct cfi_file *file,
                      struct asked *a)
{
    uint64_t seed = 0;
    cfi_regs_clear(&a->callee);
    a->request = (struct cfi_request){0, false, &a->callee, {NULL, NULL}, 0};
    for (size_t i = 3; i < n; i++) {
        if (!strcmp(words[i], "--caller"))
            a->request.caller_frame = true;
        else if (!strcmp(words[i], "--pc"))
            a->request.pc = strtoull(words[++i], NULL, 0);
        else if (!strcmp(words[i], "--mem-seed"))
            seed = strtoull(words[++i], NULL, 0);
    }
    a->memory = engine_memory_new(true, seed);
    engine_memory_map_file(a->memory, file);
    for (size_t i = 3; i + 1 < n; i++) {
        if (!strcmp(words[i], "--fault")) {
            char *dash = strchr(words[i + 1], '-');
            engine_memory_add_fault(a->memory, strtoull(words[i + 1], NULL, 0),
                                    strtoull(dash + 1, NULL, 0));
        } else if (!strcmp(words[i], "--regs")) {
            char list[2048];
            snprintf(list, sizeof list, "%s", words[i + 1]);
            for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
                char *eq = strchr(item, '=');
                int reg = cfi_reg_parse(item, (size_t)(eq - item));
                ck_assert_int_ge(reg, 0);
                cfi_regs_set(&a->callee, (unsigned)reg,
                             strtoull(eq + 1, NULL, 0));
            }
        }
    }
    a->request.memory = engine_memory_reader(a->memory);
}

/* Runs the reproducer through `cfisem unwind` with --engine `engine`
 * (its --eh-elf only for compiled) and --json; returns the CFA printed
 * (the answer must be "unwound"). */
static uint64_t cli_cfa(char **words, size_t n, const char *engine)
{
    const char *args[64];
    size_t m = 0;
    for (size_t i = 1; i < n && m < 60; i++) {
        if (!strcmp(words[i], "--eh-elf") && strcmp(engine, "compiled")) {
            i++;   /* only the compiled engine takes an eh_elf */
            continue;
        }
        args[m++] = words[i];
        if (!strcmp(words[i], "--engine") && i + 1 < n) {
            args[m++] = engine;
            i++;
        }
    }
    args[m++] = "--json";
    args[m] = NULL;
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "cfisem unwind: %d: %s", run.exit_code,
                  run.err);
    struct json *j = json_parse(run.out);
    uint64_t cfa = json_hex(j, "cfa");
    json_free(j);
    free(j);
    test_run_free(&run);
    return cfa;
}

START_TEST(test_reproducer_reproduces)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_CFA, 0x1004, 0x1009,
                              0, 0};
    struct diff_run *run = run_broken(&breaker, 1, path);
    ck_assert_uint_gt(run->nrecords, 0);
    const struct diff_record *record = &run->records[run->nrecords - 1];
    char *line = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&line, &len);
    diff_report_reproducer(out, run, record, record->engine);
    fclose(out);
    char *words[64];
    size_t n = split_words(line, words, 64);
    ck_assert_str_eq(words[0], "cfisem");
    ck_assert_str_eq(words[1], "unwind");
    ck_assert_str_eq(words[n - 1], "interp");
    /* The reference's answer, from the command line. */
    ck_assert_uint_eq(cli_cfa(words, n, "il"), record->expected.cfa);
    /* The same question asked of the broken engine gives the wrong one. */
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct asked asked;
    ask_words(words, n, file, &asked);
    struct engine_instance engine;
    struct engine_config config = {NULL, NULL};
    ck_assert_int_eq(open_broken(&breaker, ENGINE_interp, file, &config,
                                 &engine, &diag), CFI_OK);
    struct engine_answer *answer = malloc(sizeof *answer);
    ck_assert_int_eq(engine.unwind(engine.self, &asked.request, answer), CFI_OK);
    ck_assert_uint_eq(answer->frame.cfa, record->got.cfa);
    ck_assert_uint_ne(answer->frame.cfa, record->expected.cfa);
    free(answer);
    engine_close(&engine);
    engine_memory_free(asked.memory);
    cfi_file_close(file);
    free(line);
    diff_run_free(run);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void assert_summary(const struct json *summary, const char *engine,
                           const struct diff_counts *c)
{
    const struct json *s = json_get(summary, engine);
    ck_assert_uint_eq((uint64_t)json_number(s, "compared"), c->compared);
    ck_assert_uint_eq((uint64_t)json_number(s, "agree"), c->agree);
    ck_assert_uint_eq((uint64_t)json_number(s, "differ"), c->differ);
    ck_assert_uint_eq((uint64_t)json_number(s, "known_deviation"),
                      c->known_deviation);
    ck_assert_uint_eq((uint64_t)json_number(s, "not_comparable"),
                      c->not_comparable);
    ck_assert_uint_eq((uint64_t)json_number(s, "errors"), c->errors);
}

START_TEST(test_json_schema)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_CFA, 0x1004, 0x1009,
                              0, 0};
    struct diff_run *run = run_broken(&breaker, 1, path);
    char *text = report_json(run);
    struct json *j = json_parse(text);
    const struct json *summary = json_get(j, "summary");
    ck_assert_uint_eq(summary->count, 2);
    assert_summary(summary, "il", &run->counts[ENGINE_il]);
    assert_summary(summary, "interp", &run->counts[ENGINE_interp]);
    ck_assert_int_eq(json_get(j, "deviations")->kind, J_OBJECT);
    ck_assert_uint_eq(json_get(j, "deviations")->count, run->ndeviations);
    const struct json *mismatches = json_get(j, "mismatches");
    ck_assert_int_eq(mismatches->kind, J_ARRAY);
    ck_assert_uint_eq(mismatches->count, run->nrecords);
    ck_assert_uint_eq((uint64_t)json_number(j, "mismatches_total"),
                      run->records_total);
    const struct json *m = &mismatches->items[0];
    ck_assert_str_eq(json_get(m, "engine")->string, "interp");
    ck_assert_uint_eq(json_hex(m, "pc"), run->records[0].state.at.pc);
    const struct json *items = json_get(m, "items");
    ck_assert_uint_eq(items->count, 1);
    ck_assert_str_eq(json_get(&items->items[0], "item")->string, "cfa");
    ck_assert_uint_eq(json_hex(&items->items[0], "got"),
                      json_hex(&items->items[0], "expected") + 8);
    ck_assert_uint_eq(json_hex(json_get(m, "got"), "cfa"),
                      run->records[0].got.cfa);
    ck_assert(!strncmp(json_get(m, "reproducer")->string, "cfisem unwind ", 14));
    ck_assert_ptr_nonnull(strstr(json_get(m, "row")->string, "cfa=rbp+16"));
    json_free(j);
    free(j);
    free(text);
    diff_run_free(run);
    free(path);
}
END_TEST

/* The command writes the same schema. */
START_TEST(test_json_from_command)
{
    char *path = case_path("prologue.so");
    char *dir = test_temp_dir();
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s/out.json", dir);
    const char *args[] = {"diff", path, "--engines", "il,interp", "--json",
                          json_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "%s", run.err);
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 new mismatches"));
    char *text = test_read_file(json_path, NULL);
    ck_assert_ptr_nonnull(text);
    struct json *j = json_parse(text);
    const struct json *summary = json_get(j, "summary");
    for (size_t i = 0; i < 2; i++) {
        const struct json *s = json_get(summary, i ? "interp" : "il");
        double requests = json_number(j, "requests");
        ck_assert(requests > 0);
        ck_assert(json_number(s, "compared") == requests);
        ck_assert(json_number(s, "agree") == requests);
        ck_assert(json_number(s, "differ") == 0);
        ck_assert(json_number(s, "known_deviation") == 0);
        ck_assert(json_number(s, "not_comparable") == 0);
        ck_assert(json_number(s, "errors") == 0);
    }
    ck_assert_uint_eq(json_get(j, "mismatches")->count, 0);
    json_free(j);
    free(j);
    free(text);
    test_run_free(&run);
    free(dir);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Determinism                                                          */
/* ------------------------------------------------------------------ */

/* A row of libc's to break: the first row of more than two addresses of
 * the FDE in the middle. */
static void pick_libc_row(const char *path, uint64_t *begin, uint64_t *end)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    *begin = *end = 0;
    for (size_t i = file->n_eh_frame / 2; i < il->nfdes && !*end; i++)
        for (size_t r = 0; il->status[i] == CFI_OK && r < il->fdes[i].nranges;
             r++)
            if (il->fdes[i].ranges[r].end - il->fdes[i].ranges[r].begin > 2) {
                *begin = il->fdes[i].ranges[r].begin;
                *end = il->fdes[i].ranges[r].end;
                break;
            }
    ck_assert_uint_gt(*end, 0);
    sem_file_il_free(il);
    cfi_file_close(file);
}

START_TEST(test_jobs_deterministic)
{
    char *path = test_system_lib("libc.so.6");
    struct breaker breaker = {ENGINE_interp, BREAK_CFA, 0, 0, 0, 0};
    pick_libc_row(path, &breaker.begin, &breaker.end);
    struct diff_run *one = run_broken(&breaker, 1, path);
    atomic_store(&breaker.broken, 0);
    struct diff_run *two = run_broken(&breaker, 2, path);
    assert_caught(two, &breaker);
    char *a = report_json(one), *b = report_json(two);
    ck_assert_msg(!strcmp(a, b), "--jobs 1 and --jobs 2 differ");
    free(a);
    free(b);
    diff_run_free(one);
    diff_run_free(two);
    free(path);
}
END_TEST

/* The text report too, from the command (but for the time taken). */
START_TEST(test_jobs_deterministic_command)
{
    char *path = test_system_lib("ld-linux-x86-64.so.2");
    char *out[2];
    for (int j = 0; j < 2; j++) {
        const char *args[] = {"diff", path, "--engines", "il,interp",
                              "--jobs", j ? "2" : "1", NULL};
        struct test_run run;
        test_run_cfisem(args, &run);
        ck_assert_int_eq(run.exit_code, 0);
        char *second_line = strchr(run.out, '\n');
        ck_assert_ptr_nonnull(second_line);
        out[j] = strdup(second_line);
        test_run_free(&run);
    }
    ck_assert_str_eq(out[0], out[1]);
    free(out[0]);
    free(out[1]);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Each file in a child process                                         */
/* ------------------------------------------------------------------ */

static struct diff_run *run_isolated_timeout(struct breaker *breaker,
                                             const char *path, double timeout)
{
    struct diff_config config;
    diff_config_default(&config);
    config_engines(&config, false);
    config.answer_timeout = timeout;
    config.open = open_broken;
    config.open_env = breaker;
    const char *paths[] = {path, path};
    struct diff_run *run;
    ck_assert_int_eq(diff_run_isolated(&config, paths, 2, &run), CFI_OK);
    return run;
}

static struct diff_run *run_isolated(struct breaker *breaker, const char *path)
{
    return run_isolated_timeout(breaker, path, DIFF_ANSWER_TIMEOUT_DEFAULT);
}

/* The same results as in-process (the breaker's count is the children's,
 * so it is not looked at). */
START_TEST(test_isolated_same_result)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_CFA, 0x1004, 0x1009,
                              0, 0};
    struct diff_run *isolated = run_isolated(&breaker, path);
    struct diff_config config = isolated->config;
    const char *paths[] = {path, path};
    struct diff_run *in_process = run_paths(&config, paths, 2);
    ck_assert_uint_gt(isolated->counts[ENGINE_interp].differ, 0);
    char *a = report_json(isolated), *b = report_json(in_process);
    ck_assert_msg(!strcmp(a, b), "isolated and in-process runs differ");
    free(a);
    free(b);
    diff_run_free(isolated);
    diff_run_free(in_process);
    free(path);
}
END_TEST

/* An engine that crashes on a file: its requests of that file are
 * errors, "crashed"; the other engines' results stand. */
START_TEST(test_crash_isolated)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_CRASH, 0x1004, 0x1009,
                              0, 0};
    struct diff_run *run = run_isolated(&breaker, path);
    ck_assert_uint_gt(run->requests, 0);
    ck_assert_int_eq(run->files[0].status, CFI_OK);
    const struct diff_counts *interp = &run->counts[ENGINE_interp];
    ck_assert_uint_eq(interp->errors, run->requests);
    ck_assert_uint_eq(interp->compared, 0);
    ck_assert_uint_eq(run->counts[ENGINE_il].agree, run->requests);
    ck_assert_uint_eq(run->nfailures, 2);
    for (size_t f = 0; f < 2; f++) {
        ck_assert_int_eq(run->failures[f].engine, ENGINE_interp);
        ck_assert_uint_eq(run->failures[f].file, f);
        ck_assert(!strncmp(run->failures[f].diag.message, "crashed", 7));
    }
    ck_assert(!diff_run_unexplained(run));
    diff_run_free(run);
    free(path);
}
END_TEST

/* Regression (a hang in an outside library stopped the whole run): an
 * engine that stops answering is stopped by the watchdog; its requests
 * of that file are errors, "timed out"; the others' results stand, and
 * the run goes on with the next file. */
START_TEST(test_hang_watchdog)
{
    char *path = case_path("prologue.so");
    struct breaker breaker = {ENGINE_interp, BREAK_HANG, 0x1004, 0x1009,
                              0, 0};
    struct diff_run *run = run_isolated_timeout(&breaker, path, 1);
    ck_assert_uint_gt(run->requests, 0);
    ck_assert_int_eq(run->files[1].status, CFI_OK);
    const struct diff_counts *interp = &run->counts[ENGINE_interp];
    ck_assert_uint_eq(interp->errors, run->requests);
    ck_assert_uint_eq(run->counts[ENGINE_il].agree, run->requests);
    ck_assert_uint_eq(run->nfailures, 2);
    for (size_t f = 0; f < 2; f++) {
        ck_assert_int_eq(run->failures[f].engine, ENGINE_interp);
        ck_assert_msg(!strncmp(run->failures[f].diag.message, "timed out", 9),
                      "%s", run->failures[f].diag.message);
    }
    diff_run_free(run);
    free(path);
}
END_TEST

/* A file's text assembled into an object (cc -c) or a shared object. */
static char *assemble(const char *dir, const char *name, const char *source,
                      bool object)
{
    char src[4200], out[4200], command[9000];
    snprintf(src, sizeof src, "%s/%s.S", dir, name);
    snprintf(out, sizeof out, "%s/%s.%s", dir, name, object ? "o" : "so");
    ck_assert_int_eq(test_write_file(src, source, strlen(source)), 0);
    snprintf(command, sizeof command,
             object ? "cc -c -o '%s' '%s'"
                    : "cc -shared -nostdlib -Wl,--section-start=.text=0x1000 "
                      "-o '%s' '%s'",
             out, src);
    ck_assert_int_eq(system(command), 0);
    return strdup(out);
}

/* Three functions, h in a section of its own: in the object, h and f
 * both start at 0. */
static const char overlapping_source[] =
    "\t.text\n"
    "f:\n\t.cfi_startproc\n\tpush %rbp\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset %rbp, -16\n\tmov %rsp, %rbp\n"
    "\t.cfi_def_cfa_register %rbp\n\tnop\n\tpop %rbp\n"
    "\t.cfi_def_cfa %rsp, 8\n\tret\n\t.cfi_endproc\n"
    "g:\n\t.cfi_startproc\n\tsub $24, %rsp\n\t.cfi_def_cfa_offset 32\n"
    "\tadd $24, %rsp\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n"
    "\t.section .text.h,\"ax\",@progbits\n"
    "h:\n\t.cfi_startproc\n\tpush %rbx\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset %rbx, -16\n\tpop %rbx\n\t.cfi_def_cfa_offset 8\n"
    "\tret\n\t.cfi_endproc\n";

/* Regression (libdwarf and libdw read a relocatable object's frame
 * sections with their relocations not applied: hundreds of false
 * mismatches per object): they are shown the relocated bytes; where
 * FDEs overlap, they are not asked. No new mismatch, and both answer
 * most requests. */
START_TEST(test_relocatable_no_false_mismatch)
{
    char *dir = test_temp_dir();
    char *object = assemble(dir, "overlap", overlapping_source, true);
    char *cases[] = {object, test_build_path("corpus/objects/prologue.o"),
                     test_build_path("corpus/objects/remember.o")};
    struct diff_config config;
    diff_config_default(&config);
    for (int e = 0; e < ENGINE_COUNT; e++)
        config.engines[e] = e == ENGINE_libdwarf || e == ENGINE_libdw;
    struct diff_run *run;
    ck_assert_int_eq(diff_run_isolated(&config, (const char *const *)cases, 3,
                                       &run), CFI_OK);
    for (int e = ENGINE_libdwarf; e <= ENGINE_libdw; e++) {
        const struct diff_counts *c = &run->counts[e];
        ck_assert_uint_eq(c->differ, 0);
        ck_assert_uint_eq(c->errors, 0);
        ck_assert_uint_gt(c->compared, run->requests / 2);
        ck_assert_uint_gt(c->not_comparable, 0); /* f and h overlap */
    }
    ck_assert(!diff_run_unexplained(run));
    diff_run_free(run);
    for (int i = 0; i < 3; i++)
        free(cases[i]);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Exit codes and bad input                                             */
/* ------------------------------------------------------------------ */

static int run_code(const char *const *args, const char *stderr_has)
{
    struct test_run run;
    test_run_cfisem(args, &run);
    if (stderr_has)
        ck_assert_msg(strstr(run.err, stderr_has) != NULL, "stderr: %s",
                      run.err);
    int code = run.exit_code;
    test_run_free(&run);
    return code;
}

START_TEST(test_exit_codes)
{
    char *path = case_path("prologue.so");
    const char *ok[] = {"diff", path, "--engines", "il,interp", NULL};
    ck_assert_int_eq(run_code(ok, NULL), 0);
    const char *bad_engine[] = {"diff", path, "--engines", "il,bogus", NULL};
    ck_assert_int_eq(run_code(bad_engine, "unknown engine"), TEST_EXIT_USAGE);
    const char *no_file[] = {"diff", "--engines", "il", NULL};
    ck_assert_int_eq(run_code(no_file, "missing FILE"), TEST_EXIT_USAGE);
    const char *bad_states[] = {"diff", path, "--states", "0", NULL};
    ck_assert_int_eq(run_code(bad_states, "--states"), TEST_EXIT_USAGE);
    const char *bad_option[] = {"diff", path, "--bogus", NULL};
    ck_assert_int_eq(run_code(bad_option, "unknown option"), TEST_EXIT_USAGE);
    const char *help[] = {"diff", "--help", NULL};
    ck_assert_int_eq(run_code(help, NULL), 0);
    free(path);
}
END_TEST

/* An .eh_frame that holds no record (glibc's gconv modules,
 * libnss_dns.so.2): a file with no FDE, loaded, not bad input. */
START_TEST(test_no_record_is_an_answer)
{
    char *dir = test_temp_dir();
    char source[4200], object[4200], command[9000];
    snprintf(source, sizeof source, "%s/empty.S", dir);
    snprintf(object, sizeof object, "%s/empty.so", dir);
    const char text[] = "\t.text\n\t.globl f\nf:\tret\n"
                        "\t.section .eh_frame,\"a\",@unwind\n\t.long 0\n";
    ck_assert_int_eq(test_write_file(source, text, strlen(text)), 0);
    snprintf(command, sizeof command,
             "cc -shared -nostdlib -Wl,--build-id=none -o %s %s", object,
             source);
    ck_assert_int_eq(system(command), 0);
    const char *diff[] = {"diff", object, NULL};
    struct test_run run;
    test_run_cfisem(diff, &run);
    ck_assert_msg(run.exit_code == 0, "%s", run.err);
    ck_assert_ptr_nonnull(strstr(run.out, "1 file, 0 FDEs"));
    ck_assert_ptr_null(strstr(run.out, "could not be loaded"));
    test_run_free(&run);
    const char *il[] = {"il", object, NULL};
    test_run_cfisem(il, &run);
    ck_assert_msg(run.exit_code == 0, "%s", run.err);
    ck_assert_str_eq(run.out, "");
    test_run_free(&run);
    remove(object);
    remove(source);
    rmdir(dir);
    free(dir);
}
END_TEST

/* The signal frame flag is an item like the others: an engine of ours
 * that loses it differs; an engine that does not speak for it does not. */
START_TEST(test_signal_flag_compared)
{
    static struct cfi_frame expected, got;
    static struct engine_answer answer;
    memset(&expected, 0, sizeof expected);
    expected.status = CFI_OK;
    expected.cfa = 0x7ffe1008;
    expected.signal_frame = true;
    got = expected;
    ck_assert(engine_frames_agree(&expected, &got));
    got.signal_frame = false;
    ck_assert(!engine_frames_agree(&expected, &got));
    const struct cfi_request request = {0x1000, false, &expected.caller,
                                        {NULL, NULL}, 0};
    enum engine_id engines[] = {ENGINE_interp, ENGINE_libdw};
    for (size_t i = 0; i < 2; i++) {
        engine_answer_reset(&answer);
        answer.frame = got;
        struct engine_mismatch context = {engines[i], NULL, NULL, NULL, CFI_OK,
                                        &request, &expected, NULL,
                                        ENGINE_ITEM_STATUS, 0};
        struct engine_outcome outcome;
        engine_compare(&context, &answer, &outcome);
        ck_assert_int_eq(outcome.verdict, ENGINE_VERDICT_DIFFER);
        ck_assert_uint_eq(outcome.nitems, 1);
        ck_assert_int_eq(outcome.items[0].item, ENGINE_ITEM_SIGNAL);
        answer.signal_comparable = false;
        engine_compare(&context, &answer, &outcome);
        ck_assert_int_eq(outcome.verdict, ENGINE_VERDICT_AGREE);
    }
}
END_TEST

/* CFI_E_INTERNAL (a state no input reaches) is cfisem's bug: it never
 * agrees, not even with itself, and no deviation explains it, for an
 * outside engine either. */
START_TEST(test_internal_error_never_agrees)
{
    static struct cfi_frame expected, got;
    static struct engine_answer answer;
    memset(&expected, 0, sizeof expected);
    expected.status = CFI_E_INTERNAL;
    got = expected;
    ck_assert(!engine_frames_agree(&expected, &got));
    ck_assert_str_eq(cfi_status_name(CFI_E_INTERNAL), "internal");
    const struct cfi_request request = {0x1000, false, &expected.caller,
                                        {NULL, NULL}, 0};
    enum engine_id engines[] = {ENGINE_interp,
                                     ENGINE_libunwind};
    enum cfi_status reference[] = {CFI_E_INTERNAL, CFI_OK};
    for (size_t i = 0; i < 2; i++) {
        expected.status = reference[i];
        engine_answer_reset(&answer);
        answer.frame = got;
        struct engine_mismatch context = {engines[i], NULL, NULL, NULL, CFI_OK,
                                        &request, &expected, NULL,
                                        ENGINE_ITEM_STATUS, 0};
        struct engine_outcome outcome;
        engine_compare(&context, &answer, &outcome);
        ck_assert_int_eq(outcome.verdict, ENGINE_VERDICT_DIFFER);
        ck_assert_uint_eq(outcome.nnew, 1);
        ck_assert_int_eq(outcome.items[0].item, ENGINE_ITEM_STATUS);
        ck_assert_ptr_null(outcome.items[0].deviation);
    }
}
END_TEST

/* A compressed .debug_frame (SHF_COMPRESSED, and the older .zdebug_frame)
 * is what libdwarf is shown too, decompressed: it agrees with the IL. */
START_TEST(test_compressed_debug_frame)
{
    char *dir = test_temp_dir();
    char source[4200], object[4200], packed[4200], command[9000];
    snprintf(source, sizeof source, "%s/d.c", dir);
    snprintf(object, sizeof object, "%s/d.so", dir);
    char text[8192] = "";
    for (int i = 0; i < 64; i++) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof text - len,
                 "int f%d(int x) { return x * %d + 1; }\n", i, i + 2);
    }
    ck_assert_int_eq(test_write_file(source, text, strlen(text)), 0);
    snprintf(command, sizeof command,
             "cc -g -O1 -fPIC -shared -nostdlib "
             "-fno-asynchronous-unwind-tables -o %s %s", object, source);
    ck_assert_int_eq(system(command), 0);
    const char *kinds[] = {"zlib", "zlib-gnu"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(packed, sizeof packed, "%s/d-%s.so", dir, kinds[k]);
        snprintf(command, sizeof command,
                 "objcopy --compress-debug-sections=%s %s %s", kinds[k],
                 object, packed);
        ck_assert_int_eq(system(command), 0);
        const char *args[] = {"diff", packed, "--engines", "il,libdwarf",
                              NULL};
        struct test_run run;
        test_run_cfisem(args, &run);
        ck_assert_msg(run.exit_code == 0, "%s: %s%s", kinds[k], run.out,
                      run.err);
        ck_assert_ptr_nonnull(strstr(run.out, "1 file, 64 FDEs"));
        ck_assert_ptr_null(strstr(run.err, "libdwarf"));
        test_run_free(&run);
        remove(packed);
    }
    remove(object);
    remove(source);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_bad_input_file)
{
    char *path = case_path("prologue.so");
    char *dir = test_temp_dir();
    char json_path[4200], bad[4200];
    snprintf(json_path, sizeof json_path, "%s/out.json", dir);
    snprintf(bad, sizeof bad, "%s/not-elf", dir);
    ck_assert_int_eq(test_write_file(bad, "hello\n", 6), 0);
    const char *args[] = {"diff", bad, path, "--engines", "il,interp",
                          "--json", json_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, bad));
    ck_assert_ptr_nonnull(strstr(run.out, "2 files (1 could not be loaded)"));
    char *text = test_read_file(json_path, NULL);
    struct json *j = json_parse(text);
    const struct json *files = json_get(j, "files");
    ck_assert_uint_eq(files->count, 2);
    ck_assert_str_eq(json_get(&files->items[0], "status")->string, "not_elf");
    ck_assert(json_number(&files->items[1], "requests") > 0);
    ck_assert(json_number(json_get(json_get(j, "summary"), "interp"),
                          "agree") > 0);
    json_free(j);
    free(j);
    free(text);
    test_run_free(&run);
    free(dir);
    free(path);
}
END_TEST

/* Writes dir/name: a copy of cases' prologue.so with e_machine 243
 * (EM_RISCV), an ELF cfisem does not load. */
static void write_riscv_elf(const char *dir, const char *name, char *out,
                            size_t size)
{
    char *x86 = case_path("prologue.so");
    size_t len;
    unsigned char *bytes = (unsigned char *)test_read_file(x86, &len);
    ck_assert(bytes && len > 20);
    bytes[18] = 243;
    bytes[19] = 0;
    snprintf(out, size, "%s/%s", dir, name);
    ck_assert_int_eq(test_write_file(out, bytes, len), 0);
    free(bytes);
    free(x86);
}

/* A FILE that cannot be loaded was not compared: "result: 0 new
 * mismatches" alone said it agreed; named or from a manifest, it is bad
 * input, said on stderr and counted on the result line. */
START_TEST(test_diff_unloadable_file_is_bad_input)
{
    char *dir = test_temp_dir();
    char elf[4200], manifest[4200];
    write_riscv_elf(dir, "riscv.so", elf, sizeof elf);
    const char *named[] = {"diff", elf, "--engines", "il,interp", NULL};
    struct test_run run;
    test_run_cfisem(named, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, elf));
    ck_assert_ptr_nonnull(strstr(run.err, "not an x86-64 or AArch64 ELF file"));
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 new mismatches; 1 of 1 "
                                          "file could not be loaded"));
    test_run_free(&run);
    snprintf(manifest, sizeof manifest, "%s/manifest.txt", dir);
    char *path = case_path("prologue.so");
    char list[9000];
    snprintf(list, sizeof list, "%s\t1\n%s\t2\n", elf, path);
    ck_assert_int_eq(test_write_file(manifest, list, strlen(list)), 0);
    const char *listed[] = {"diff", "--manifest", manifest, "--engines",
                            "il,interp", NULL};
    test_run_cfisem(listed, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 new mismatches; 1 of 2 "
                                          "files could not be loaded"));
    test_run_free(&run);
    free(path);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* validate                                                             */
/* ------------------------------------------------------------------ */

/* Builds tests/validate/SOURCE with `defines` into dir/name. */
static char *build_eh_elf(const char *source_name, const char *dir,
                          const char *name, const char *defines)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/validate/%s", source_name);
    char *source = test_src_path(rel);
    char *src_dir = test_src_path("");
    char *output = malloc(4200);
    snprintf(output, 4200, "%s/%s", dir, name);
    /* the hand-written eh_elfs are prologue.so's */
    char *prologue = test_build_path("corpus/cases/prologue.so");
    char *stamp = test_object_id_flag(prologue);
    char command[13000];
    snprintf(command, sizeof command,
             "cc -shared -fPIC -O2 -Wall -Wextra -Werror -I'%s' %s %s -o '%s' '%s'",
             src_dir, stamp, defines, output, source);
    ck_assert_msg(system(command) == 0, "cannot build: %s", command);
    free(stamp);
    free(prologue);
    free(source);
    free(src_dir);
    return output;
}

static char *build_v1(const char *dir, const char *name, const char *defines)
{
    return build_eh_elf("prologue_v1.c", dir, name, defines);
}

/* Runs validate; returns its exit code and the parsed JSON. */
static int validate(const char *eh_elf, const char *abi, const char *dir,
                    struct json **json)
{
    char *path = case_path("prologue.so");
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s/validate.json", dir);
    const char *args[] = {"validate", path, eh_elf, "--abi", abi, "--json",
                          json_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.signal == 0, "validate crashed");
    int code = run.exit_code;
    char *text = code <= 1 ? test_read_file(json_path, NULL) : NULL;
    *json = text ? json_parse(text) : NULL;
    free(text);
    test_run_free(&run);
    free(path);
    return code;
}

static void assert_one_wrong_range(struct json *j, uint64_t begin,
                                   uint64_t end, const char *kind)
{
    ck_assert(json_number(j, "wrong_ranges_total") == 1);
    const struct json *range = &json_get(j, "wrong_ranges")->items[0];
    ck_assert_uint_eq(json_hex(range, "begin"), begin);
    ck_assert_uint_eq(json_hex(range, "end"), end);
    const struct json *kinds = json_get(range, "kind");
    bool found = false;
    for (size_t i = 0; i < kinds->count; i++)
        found |= !strcmp(kinds->items[i].string, kind);
    ck_assert_msg(found, "kind %s missing", kind);
    ck_assert(json_number(j, "addresses") >= 37);
}

START_TEST(test_validate_v1)
{
    char *dir = test_temp_dir();
    char *right = build_v1(dir, "right.so", "");
    char *wrong = build_v1(dir, "wrong.so", "-DWRONG");
    struct json *j;
    ck_assert_int_eq(validate(right, "v1", dir, &j), 0);
    ck_assert(json_number(j, "wrong_ranges_total") == 0);
    ck_assert(json_number(json_get(j, "reference"), "memory") > 0);
    json_free(j);
    free(j);
    ck_assert_int_eq(validate(wrong, "v1", dir, &j), 1);
    assert_one_wrong_range(j, 0x1004, 0x1009, "cfa");
    json_free(j);
    free(j);
    free(right);
    free(wrong);
    free(dir);
}
END_TEST

START_TEST(test_validate_v1_direct)
{
    char *dir = test_temp_dir();
    char *right = build_v1(dir, "right.so", "-DDIRECT");
    char *wrong = build_v1(dir, "wrong.so", "-DDIRECT -DWRONG");
    char *stray = build_v1(dir, "stray.so", "-DDIRECT -DSTRAY");
    struct json *j;
    ck_assert_int_eq(validate(right, "v1-direct", dir, &j), 0);
    ck_assert(json_number(j, "wrong_ranges_total") == 0);
    json_free(j);
    free(j);
    ck_assert_int_eq(validate(wrong, "v1-direct", dir, &j), 1);
    assert_one_wrong_range(j, 0x1004, 0x1009, "cfa");
    /* The eh_elf answered: its status is ok, whatever was expected. */
    ck_assert_str_eq(json_get(&json_get(j, "wrong_ranges")->items[0],
                              "got_status")->string, "ok");
    json_free(j);
    free(j);
    /* A stray read crashes a child, not the validator. */
    ck_assert_int_eq(validate(stray, "v1-direct", dir, &j), 1);
    assert_one_wrong_range(j, 0x1009, 0x100f, "crashed");
    ck_assert(json_number(j, "crashes") > 0);
    json_free(j);
    free(j);
    free(right);
    free(wrong);
    free(stray);
    free(dir);
}
END_TEST

/* An eh_elf of our full ABI, written by hand (prologue_full.c). */
START_TEST(test_validate_full)
{
    char *dir = test_temp_dir();
    char *right = build_eh_elf("prologue_full.c", dir, "right.so", "");
    char *wrong = build_eh_elf("prologue_full.c", dir, "wrong.so", "-DWRONG");
    struct json *j;
    ck_assert_int_eq(validate(right, "full", dir, &j), 0);
    ck_assert(json_number(j, "wrong_ranges_total") == 0);
    ck_assert(json_number(json_get(j, "reference"), "reg_unknown") > 0);
    json_free(j);
    free(j);
    ck_assert_int_eq(validate(wrong, "full", dir, &j), 1);
    assert_one_wrong_range(j, 0x1004, 0x1009, "cfa");
    json_free(j);
    free(j);
    free(right);
    free(wrong);
    free(dir);
}
END_TEST

/* Whether `cfisem unwind` takes --engine compiled. */
static bool unwind_has_compiled(void)
{
    const char *args[] = {"unwind", "--help", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    bool has = strstr(run.out, "compiled") != NULL;
    test_run_free(&run);
    return has;
}

/* `cfisem diff` with a wrong eh_elf: exit 1, and the reproducer shows the
 * difference from the command line. */
START_TEST(test_diff_wrong_eh_elf)
{
    char *dir = test_temp_dir();
    char *wrong = build_eh_elf("prologue_full.c", dir, "wrong.so", "-DWRONG");
    char *path = case_path("prologue.so");
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s/diff.json", dir);
    const char *args[] = {"diff", path, "--engines", "il,interp,compiled",
                          "--eh-elf", wrong, "--json", json_path, NULL};
    ck_assert_int_eq(run_code(args, NULL), 1);
    char *text = test_read_file(json_path, NULL);
    struct json *j = json_parse(text);
    const struct json *compiled = json_get(json_get(j, "summary"), "compiled");
    ck_assert(json_number(compiled, "differ") > 0);
    ck_assert(json_number(json_get(json_get(j, "summary"), "interp"),
                          "differ") == 0);
    const struct json *m = &json_get(j, "mismatches")->items[0];
    uint64_t pc = json_hex(m, "lookup_pc");
    ck_assert(pc >= 0x1004 && pc < 0x1009);
    char *line = strdup(json_get(m, "reproducer")->string);
    ck_assert_ptr_nonnull(strstr(line, "--eh-elf"));
    if (unwind_has_compiled()) {
        char *words[64];
        size_t n = split_words(line, words, 64);
        /* ... --engine compiled --eh-elf X: swap the engine word only. */
        uint64_t reference = cli_cfa(words, n, "il");
        uint64_t compiled_cfa = cli_cfa(words, n, "compiled");
        ck_assert_uint_eq(reference,
                          json_hex(json_get(m, "expected"), "cfa"));
        ck_assert_uint_eq(compiled_cfa, reference + 8);
    } else {
        printf("diff: cfisem unwind has no compiled engine yet: the"
               " reproducer was not run\n");
    }
    free(line);
    json_free(j);
    free(j);
    free(text);
    free(path);
    free(wrong);
    free(dir);
}
END_TEST

START_TEST(test_validate_bad_input)
{
    char *dir = test_temp_dir();
    char *path = case_path("prologue.so");
    struct json *j;
    /* A shared object without _eh_elf, and a missing file. */
    ck_assert_int_eq(validate(path, "v1", dir, &j), 2);
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing.so", dir);
    const char *args[] = {"validate", path, missing, "--abi", "v1", NULL};
    ck_assert_int_eq(run_code(args, missing), 2);
    const char *bad_abi[] = {"validate", path, missing, "--abi", "v2", NULL};
    ck_assert_int_eq(run_code(bad_abi, "unknown ABI"), TEST_EXIT_USAGE);
    const char *one_file[] = {"validate", path, NULL};
    ck_assert_int_eq(run_code(one_file, "expected FILE and EH_ELF.so"), TEST_EXIT_USAGE);
    free(path);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* validate: isolation, the v1 policy, the report (tests/validate/gaps.*) */
/* ------------------------------------------------------------------ */

/* tests/validate/gaps.S linked as the corpus cases are, into dir. */
static char *build_gaps(const char *dir)
{
    char *source = test_src_path("tests/validate/gaps.S");
    char *output = malloc(4200);
    snprintf(output, 4200, "%s/gaps.so", dir);
    char command[9000];
    snprintf(command, sizeof command,
             "cc -shared -nostdlib -Wl,--section-start=.text=0x1000 "
             "-Wl,--build-id=none -o '%s' '%s'", output, source);
    ck_assert_msg(system(command) == 0, "cannot build: %s", command);
    free(source);
    return output;
}

/* validate ELF EH_ELF --abi ABI [extra] --json; the exit code, the JSON
 * (NULL unless the code is 0 or 1) and stdout (when out is not NULL). */
static int validate_on(const char *elf, const char *eh_elf, const char *abi,
                       const char *extra, const char *dir, struct json **json,
                       char **out)
{
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s/validate.json", dir);
    remove(json_path);
    const char *args[] = {"validate", elf, eh_elf, "--abi", abi, "--json",
                          json_path, extra, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.signal == 0, "validate crashed: %s", run.err);
    int code = run.exit_code;
    char *text = code <= 1 ? test_read_file(json_path, NULL) : NULL;
    *json = text ? json_parse(text) : NULL;
    if (out)
        *out = strdup(run.out);
    free(text);
    test_run_free(&run);
    return code;
}

/* A JSON array of strings, joined with spaces. */
static void json_words(const struct json *array, char *buf, size_t size)
{
    buf[0] = 0;
    for (size_t i = 0; i < array->count; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? " " : "",
                 array->items[i].string);
}

static void assert_class_kind(const struct json *r, const char *wrong_class,
                              const char *kind, const char *signal)
{
    char words[256];
    json_words(json_get(r, "kind"), words, sizeof words);
    ck_assert_str_eq(json_get(r, "class")->string, wrong_class);
    ck_assert_str_eq(words, kind);
    if (signal)
        ck_assert_str_eq(json_get(r, "signal")->string, signal);
    else
        ck_assert_int_eq(json_get(r, "signal")->kind, J_NULL);
}

/* Wrong range i is exactly [begin, end) of that class and kind. */
static const struct json *assert_range(const struct json *j, size_t i,
                                       uint64_t begin, uint64_t end,
                                       const char *wrong_class,
                                       const char *kind, const char *signal)
{
    const struct json *ranges = json_get(j, "wrong_ranges");
    ck_assert_uint_gt(ranges->count, i);
    const struct json *r = &ranges->items[i];
    ck_assert_uint_eq(json_hex(r, "begin"), begin);
    ck_assert_uint_eq(json_hex(r, "end"), end);
    assert_class_kind(r, wrong_class, kind, signal);
    return r;
}

/* The only kind of the run: `ranges` ranges, `addresses` addresses. */
static void assert_one_kind(const struct json *j, const char *wrong_class,
                            const char *kind, const char *signal,
                            double ranges, double addresses)
{
    const struct json *kinds = json_get(j, "kinds");
    ck_assert_uint_eq(kinds->count, 1);
    assert_class_kind(&kinds->items[0], wrong_class, kind, signal);
    ck_assert(json_number(&kinds->items[0], "ranges") == ranges);
    ck_assert(json_number(&kinds->items[0], "addresses") == addresses);
    ck_assert(json_number(j, "wrong_ranges_total") == ranges);
}

static void json_done(struct json *j)
{
    json_free(j);
    free(j);
}

/* gaps.so's 34 addresses, 8 of them in no FDE, all right. */
static void assert_passes(const char *gaps, const char *eh_elf,
                          const char *abi, const char *dir)
{
    struct json *j;
    ck_assert_int_eq(validate_on(gaps, eh_elf, abi, NULL, dir, &j, NULL), 0);
    ck_assert(json_number(j, "wrong_ranges_total") == 0);
    ck_assert(json_number(j, "addresses") == 34);
    ck_assert(json_number(j, "gap_addresses") == 8);
    json_done(j);
}

/* An eh_elf that aborts in the gaps (the assertion of a per-function
 * layout outside every FDE) and one that segfaults: wrong answers with
 * their signal and the eh_elf's stderr, never a crash of validate, with
 * and without deref. */
START_TEST(test_validate_crashes_v1)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    static const char *const abis[] = {"v1", "v1-direct"};
    for (int direct = 0; direct < 2; direct++) {
        char *abort_so = build_eh_elf("gaps_v1.c", dir, "abort.so",
                                      direct ? "-DABORT -DDIRECT" : "-DABORT");
        char *segv_so = build_eh_elf("gaps_v1.c", dir, "segv.so",
                                     direct ? "-DSEGV -DDIRECT" : "-DSEGV");
        struct json *j;
        ck_assert_int_eq(validate_on(gaps, abort_so, abis[direct], NULL, dir,
                                     &j, NULL), 1);
        assert_one_kind(j, "crashed", "crashed", "SIGABRT", 2, 8);
        const struct json *r = assert_range(j, 0, 0x1003, 0x1008, "crashed",
                                            "crashed", "SIGABRT");
        ck_assert_ptr_nonnull(strstr(
            json_get(json_get(r, "first"), "crash_text")->string,
            "Assertion"));
        ck_assert(json_get(r, "in_gap")->number == 1);
        assert_range(j, 1, 0x100d, 0x1010, "crashed", "crashed", "SIGABRT");
        ck_assert(json_number(j, "crashes") == 32);
        json_done(j);
        ck_assert_int_eq(validate_on(gaps, segv_so, abis[direct], NULL, dir,
                                     &j, NULL), 1);
        assert_one_kind(j, "crashed", "crashed", "SIGSEGV", 1, 1);
        assert_range(j, 0, 0x1008, 0x1009, "crashed", "crashed", "SIGSEGV");
        json_done(j);
        free(abort_so);
        free(segv_so);
    }
    free(gaps);
    free(dir);
}
END_TEST

/* A call that never returns is stopped by the watchdog: a crash
 * "timed out", and the run goes on. */
START_TEST(test_validate_hang)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    char *hang = build_eh_elf("gaps_v1.c", dir, "hang.so", "-DHANG");
    struct json *j;
    char json_path[4200];
    snprintf(json_path, sizeof json_path, "%s/hang.json", dir);
    const char *with_json[] = {"validate", gaps, hang, "--abi", "v1",
                               "--timeout", "1", "--states", "2", "--json",
                               json_path, NULL};
    ck_assert_int_eq(run_code(with_json, NULL), 1);
    char *text = test_read_file(json_path, NULL);
    j = json_parse(text);
    assert_one_kind(j, "crashed", "crashed", "timed out (SIGALRM)", 1, 1);
    assert_range(j, 0, 0x1002, 0x1003, "crashed", "crashed",
                 "timed out (SIGALRM)");
    ck_assert(json_number(j, "addresses") == 34);
    json_done(j);
    free(text);
    free(hang);
    free(gaps);
    free(dir);
}
END_TEST

/* The full ABI runs in children too. */
START_TEST(test_validate_crashes_full)
{
    char *dir = test_temp_dir();
    char *path = case_path("prologue.so");
    char *abort_so = build_eh_elf("prologue_full.c", dir, "abort.so", "-DABORT");
    char *segv_so = build_eh_elf("prologue_full.c", dir, "segv.so", "-DSEGV");
    struct json *j;
    ck_assert_int_eq(validate_on(path, abort_so, "full", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "crashed", "crashed", "SIGABRT", 1, 6);
    assert_range(j, 0, 0x1009, 0x100f, "crashed", "crashed", "SIGABRT");
    json_done(j);
    ck_assert_int_eq(validate_on(path, segv_so, "full", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "crashed", "crashed", "SIGSEGV", 1, 6);
    json_done(j);
    free(abort_so);
    free(segv_so);
    free(path);
    free(dir);
}
END_TEST

/* A deref eh_elf given as v1-direct, and the reverse: every answer that
 * reaches a row crashes, and the report names the ABI that fits. */
START_TEST(test_validate_wrong_abi)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    char *deref = build_eh_elf("gaps_v1.c", dir, "deref.so", "");
    char *direct = build_eh_elf("gaps_v1.c", dir, "direct.so", "-DDIRECT");
    struct json *j;
    char *out;
    ck_assert_int_eq(validate_on(gaps, deref, "v1-direct", NULL, dir, &j, &out),
                     1);
    ck_assert_str_eq(json_get(json_get(j, "abi_hint"), "abi")->string, "v1");
    ck_assert(json_number(json_get(j, "abi_hint"), "wrong_addresses") == 0);
    ck_assert_ptr_nonnull(strstr(out, "--abi v1-direct is probably not this "
                                      "eh_elf's ABI; with --abi v1,"));
    json_done(j);
    free(out);
    ck_assert_int_eq(validate_on(gaps, direct, "v1", NULL, dir, &j, NULL), 1);
    ck_assert_str_eq(json_get(json_get(j, "abi_hint"), "abi")->string,
                     "v1-direct");
    json_done(j);
    /* The right ABI: no hint. */
    ck_assert_int_eq(validate_on(gaps, direct, "v1-direct", NULL, dir, &j, NULL),
                     0);
    ck_assert_int_eq(json_get(j, "abi_hint")->kind, J_NULL);
    json_done(j);
    free(deref);
    free(direct);
    free(gaps);
    free(dir);
}
END_TEST

/* The generator's faults, each found exactly where it is. */
START_TEST(test_validate_v1_faults)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    char *right = build_eh_elf("gaps_v1.c", dir, "right.so", "");
    assert_passes(gaps, right, "v1", dir);
    struct json *j;
    /* The PLT's CFA 8 bytes short: cfa and rip wrong at every address. */
    char *plt = build_eh_elf("gaps_v1.c", dir, "plt.so", "-DPLT_SHORT");
    ck_assert_int_eq(validate_on(gaps, plt, "v1", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "wrong value", "cfa rip", NULL, 1, 16);
    const struct json *r =
        assert_range(j, 0, 0x1010, 0x1020, "wrong value", "cfa rip", NULL);
    /* v1's frame speaks for rbx, rbp, rsp and rip only. */
    ck_assert_uint_eq(json_get(json_get(json_get(r, "first"), "got"),
                               "regs")->count, 4);
    json_done(j);
    /* Gaps answered with the previous FDE's last row. */
    char *gap = build_eh_elf("gaps_v1.c", dir, "gap.so", "-DGAP_PREVIOUS");
    ck_assert_int_eq(validate_on(gaps, gap, "v1", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "wrong value", "status", NULL, 2, 8);
    r = assert_range(j, 0, 0x1003, 0x1008, "wrong value", "status", NULL);
    ck_assert_str_eq(json_get(r, "expected_status")->string, "no_fde");
    ck_assert_str_eq(json_get(r, "got_status")->string, "ok");
    ck_assert(json_get(r, "in_gap")->number == 1);
    assert_range(j, 1, 0x100d, 0x1010, "wrong value", "status", NULL);
    json_done(j);
    /* rip=rdi answered "undefined": every backtrace would stop there. */
    char *vfork = build_eh_elf("gaps_v1.c", dir, "vfork.so", "-DVFORK_CLEAR");
    ck_assert_int_eq(validate_on(gaps, vfork, "v1", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "wrong value", "status", NULL, 1, 2);
    r = assert_range(j, 0, 0x1009, 0x100b, "wrong value", "status", NULL);
    ck_assert_str_eq(json_get(r, "expected_status")->string, "unsupported");
    ck_assert_str_eq(json_get(r, "got_status")->string, "ok");
    json_done(j);
    /* The return address column (rcx, no rule) ignored. */
    char *ra = build_eh_elf("gaps_v1.c", dir, "ra.so", "-DRA_16");
    ck_assert_int_eq(validate_on(gaps, ra, "v1", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "wrong value", "rip", NULL, 1, 2);
    assert_range(j, 0, 0x100b, 0x100d, "wrong value", "rip", NULL);
    json_done(j);
    /* rbp=rsi answered "not restored": the callee's rbp, a wrong one. */
    char *rbp = build_eh_elf("gaps_v1.c", dir, "rbp.so", "-DRBP_CLEAR");
    ck_assert_int_eq(validate_on(gaps, rbp, "v1", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "wrong value", "status", NULL, 1, 2);
    r = assert_range(j, 0, 0x1020, 0x1022, "wrong value", "status", NULL);
    ck_assert_str_eq(json_get(r, "expected_status")->string, "unsupported");
    json_done(j);
    free(rbp);
    free(plt);
    free(gap);
    free(vfork);
    free(ra);
    free(right);
    free(gaps);
    free(dir);
}
END_TEST

/* cfisem's own eh_elfs of gaps.so, both ABIs, pass: the v1 one answers
 * the error flag at rip=rdi and follows the return address column. */
START_TEST(test_validate_own_eh_elfs)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    static const char *const abis[] = {"full", "v1"};
    for (int i = 0; i < 2; i++) {
        char out[4200];
        snprintf(out, sizeof out, "%s/own.%s.so", dir, abis[i]);
        const char *args[] = {"compile", gaps, "-o", out, "--abi", abis[i],
                              NULL};
        ck_assert_int_eq(run_code(args, NULL), 0);
        assert_passes(gaps, out, abis[i], dir);
    }
    free(gaps);
    free(dir);
}
END_TEST

/* "The eh_elf says it cannot": apart from wrong values, and accepted
 * with --allow-unsupported. */
START_TEST(test_validate_unsupported)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    char *v1 = build_eh_elf("gaps_v1.c", dir, "unsupported.so", "-DUNSUPPORTED");
    struct json *j;
    ck_assert_int_eq(validate_on(gaps, v1, "v1", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "unsupported", "status", NULL, 1, 1);
    const struct json *r =
        assert_range(j, 0, 0x1001, 0x1002, "unsupported", "status", NULL);
    ck_assert_str_eq(json_get(r, "got_status")->string, "unsupported");
    ck_assert(json_number(j, "unsupported_ranges") == 1);
    json_done(j);
    ck_assert_int_eq(validate_on(gaps, v1, "v1", "--allow-unsupported", dir, &j,
                                 NULL), 0);
    ck_assert_int_eq(json_get(j, "failed")->kind, J_BOOL);
    ck_assert(json_get(j, "failed")->number == 0);
    assert_one_kind(j, "unsupported", "status", NULL, 1, 1);
    json_done(j);
    /* A wrong value is not allowed by it. */
    char *plt = build_eh_elf("gaps_v1.c", dir, "plt.so", "-DPLT_SHORT");
    ck_assert_int_eq(validate_on(gaps, plt, "v1", "--allow-unsupported", dir,
                                 &j, NULL), 1);
    json_done(j);
    char *path = case_path("prologue.so");
    char *full = build_eh_elf("prologue_full.c", dir, "full.so", "-DUNSUPPORTED");
    ck_assert_int_eq(validate_on(path, full, "full", NULL, dir, &j, NULL), 1);
    assert_one_kind(j, "unsupported", "status", NULL, 1, 5);
    assert_range(j, 0, 0x1004, 0x1009, "unsupported", "status", NULL);
    json_done(j);
    ck_assert_int_eq(validate_on(path, full, "full", "--allow-unsupported", dir,
                                 &j, NULL), 0);
    json_done(j);
    free(path);
    free(full);
    free(plt);
    free(v1);
    free(gaps);
    free(dir);
}
END_TEST

/* A bare file name is the file in the current folder; a file dlopen
 * cannot load is reported with dlerror()'s text. */
START_TEST(test_validate_load_errors)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    char *right = build_eh_elf("gaps_v1.c", dir, "right.so", "");
    char command[13000];
    snprintf(command, sizeof command, "cd '%s' && '%s' validate gaps.so "
             "right.so --abi v1 > out.txt 2>&1", dir, getenv("CFISEM"));
    ck_assert_int_eq(system(command), 0);
    /* The sample of the other ABI loads the same file. */
    snprintf(command, sizeof command, "cd '%s' && '%s' validate gaps.so "
             "right.so --abi v1-direct | grep -q 'with --abi v1, 34 addresses "
             "sampled: no crash, 0 wrong'", dir, getenv("CFISEM"));
    ck_assert_int_eq(system(command), 0);
    char not_elf[4200];
    snprintf(not_elf, sizeof not_elf, "%s/not_elf.so", dir);
    char text[200];
    memset(text, 'x', sizeof text);
    ck_assert_int_eq(test_write_file(not_elf, text, sizeof text), 0);
    const char *args[] = {"validate", gaps, not_elf, "--abi", "v1", NULL};
    ck_assert_int_eq(run_code(args, "invalid ELF header"), 2);
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing.so", dir);
    const char *args2[] = {"validate", gaps, missing, "--abi", "v1", NULL};
    ck_assert_int_eq(run_code(args2, "no such file or directory"), 2);
    /* An eh_elf of the other flavour names the ABI that fits. */
    char *prologue = case_path("prologue.so");
    char *full = build_eh_elf("prologue_full.c", dir, "full.so", "");
    const char *as_v1[] = {"validate", prologue, full, "--abi", "v1", NULL};
    ck_assert_int_eq(run_code(as_v1, "validate it with --abi full"), 2);
    char *v1 = build_v1(dir, "v1.so", "");
    const char *as_full[] = {"validate", prologue, v1, NULL};
    ck_assert_int_eq(run_code(as_full, "validate it with --abi v1"), 2);
    free(prologue);
    free(full);
    free(v1);
    free(right);
    free(gaps);
    free(dir);
}
END_TEST

/* Runs a reproducer line (without its leading "cfisem") with --json;
 * the CFA it prints. */
static uint64_t reproduce_cfa(const char *line)
{
    char *copy = strdup(line);
    char *words[64];
    size_t n = split_words(copy, words, 62);
    const char *args[64];
    for (size_t i = 1; i < n; i++)
        args[i - 1] = words[i];
    args[n - 1] = "--json";
    args[n] = NULL;
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "%s: %d: %s", line, run.exit_code,
                  run.err);
    struct json *j = json_parse(run.out);
    uint64_t cfa = json_hex(j, "cfa");
    json_done(j);
    test_run_free(&run);
    free(copy);
    return cfa;
}

/* The eh_elf's side of a wrong answer reproduces too, in v1 and
 * v1-direct: `cfisem unwind --engine compiled --eh-elf X --abi A`. */
START_TEST(test_validate_reproducers)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    static const char *const abis[] = {"v1", "v1-direct"};
    for (int direct = 0; direct < 2; direct++) {
        char *plt = build_eh_elf("gaps_v1.c", dir, "plt.so",
                                 direct ? "-DPLT_SHORT -DDIRECT" : "-DPLT_SHORT");
        struct json *j;
        ck_assert_int_eq(validate_on(gaps, plt, abis[direct], NULL, dir, &j,
                                     NULL), 1);
        const struct json *r = &json_get(j, "wrong_ranges")->items[0];
        const struct json *first = json_get(r, "first");
        uint64_t expected = json_hex(json_get(first, "expected"), "cfa");
        uint64_t got = json_hex(json_get(first, "got"), "cfa");
        ck_assert_uint_eq(got, expected - 8);
        const char *line = json_get(r, "eh_elf_reproducer")->string;
        ck_assert_ptr_nonnull(strstr(line, "--abi"));
        ck_assert_uint_eq(reproduce_cfa(line), got);
        ck_assert_uint_eq(reproduce_cfa(json_get(r, "reproducer")->string),
                          expected);
        json_done(j);
        free(plt);
    }
    free(gaps);
    free(dir);
}
END_TEST

/* `cfisem diff --eh-elf` with an eh_elf the compiled engine cannot use
 * fails at once (not "0 new mismatches" with every request an error). */
START_TEST(test_diff_named_v1_eh_elf)
{
    char *dir = test_temp_dir();
    char *gaps = build_gaps(dir);
    char out[4200];
    snprintf(out, sizeof out, "%s/own.v1.so", dir);
    const char *compile[] = {"compile", gaps, "-o", out, "--abi", "v1", NULL};
    ck_assert_int_eq(run_code(compile, NULL), 0);
    const char *args[] = {"diff", gaps, "--engines", "il,compiled", "--eh-elf",
                          out, NULL};
    ck_assert_int_eq(run_code(args, "a v1 eh_elf: the compiled engine needs "
                                    "the full ABI"), 2);
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing.so", dir);
    const char *args2[] = {"diff", gaps, "--engines", "il,compiled",
                           "--eh-elf", missing, NULL};
    ck_assert_int_eq(run_code(args2, "missing.so"), 2);
    free(gaps);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("diff");
    TCase *agree = tcase_create("agree");
    tcase_set_timeout(agree, 600);
    tcase_add_test(agree, test_cases_agree);
    tcase_add_test(agree, test_libc_agrees);
    tcase_add_test(agree, test_gdb_batches_as_alone);
    suite_add_tcase(suite, agree);
    TCase *broken = tcase_create("broken");
    tcase_set_timeout(broken, 600);
    tcase_add_test(broken, test_broken_cfa_caught);
    tcase_add_test(broken, test_broken_names_function);
    tcase_add_test(broken, test_broken_register_caught);
    tcase_add_test(broken, test_reproducer_reproduces);
    tcase_add_test(broken, test_json_schema);
    tcase_add_test(broken, test_jobs_deterministic);
    tcase_add_test(broken, test_isolated_same_result);
    tcase_add_test(broken, test_crash_isolated);
    tcase_add_test(broken, test_hang_watchdog);
    tcase_add_test(broken, test_relocatable_no_false_mismatch);
    suite_add_tcase(suite, broken);
    TCase *command = tcase_create("command");
    tcase_set_timeout(command, 600);
    tcase_add_test(command, test_json_from_command);
    tcase_add_test(command, test_jobs_deterministic_command);
    tcase_add_test(command, test_exit_codes);
    tcase_add_test(command, test_bad_input_file);
    tcase_add_test(command, test_diff_unloadable_file_is_bad_input);
    tcase_add_test(command, test_no_record_is_an_answer);
    tcase_add_test(command, test_signal_flag_compared);
    tcase_add_test(command, test_internal_error_never_agrees);
    tcase_add_test(command, test_compressed_debug_frame);
    suite_add_tcase(suite, command);
    TCase *validation = tcase_create("validate");
    tcase_set_timeout(validation, 600);
    tcase_add_test(validation, test_validate_v1);
    tcase_add_test(validation, test_validate_v1_direct);
    tcase_add_test(validation, test_validate_full);
    tcase_add_test(validation, test_diff_wrong_eh_elf);
    tcase_add_test(validation, test_validate_bad_input);
    tcase_add_test(validation, test_validate_crashes_v1);
    tcase_add_test(validation, test_validate_crashes_full);
    tcase_add_test(validation, test_validate_hang);
    tcase_add_test(validation, test_validate_wrong_abi);
    tcase_add_test(validation, test_validate_v1_faults);
    tcase_add_test(validation, test_validate_own_eh_elfs);
    tcase_add_test(validation, test_validate_unsupported);
    tcase_add_test(validation, test_validate_load_errors);
    tcase_add_test(validation, test_validate_reproducers);
    tcase_add_test(validation, test_diff_named_v1_eh_elf);
    suite_add_tcase(suite, validation);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
