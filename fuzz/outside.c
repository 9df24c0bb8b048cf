/* SPDX-License-Identifier: MIT */
/* outside.c — the differential oracle of target 3: an outside engine
 * (engines/'s adapter of libdwarf, libdw or libunwind) asked the questions
 * `cfisem diff` asks, compared with the IL evaluator; the interpreter
 * asked the same questions, compared too. A difference among our own
 * engines is a disagreement (the harness aborts); an outside engine's
 * difference that no known deviation explains is written, with the
 * input, into the findings folder (targets.h), one input per class of
 * difference. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/engines.h"
#include "interp/interp.h"
#include "semantics/sem.h"

enum {
    STATES = 4,
    FUZZ_OUTSIDE_CLASSES = 16,  /* classes one input may write */
    FUZZ_OUTSIDE_KEPT = 8,      /* paragraphs per class and input */
};

struct outside {
    struct fuzz_context *context;
    const uint8_t *input, *elf;
    size_t input_size, elf_size;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct engine_instance engine;
    struct engine_state_config config;
    struct engine_memory *memories[STATES];
    struct engine_question question;
    struct cfi_frame expected, interp;
    struct engine_answer answer;
    struct fuzz_report *report;
    size_t requests;
    uint64_t owned[FUZZ_OUTSIDE_CLASSES];   /* classes written by this input */
    unsigned written[FUZZ_OUTSIDE_CLASSES];
    unsigned nowned;
};

/* FNV-1a: the name of an input's findings. */
static uint64_t input_hash(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

static bool write_new(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return false;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    return done == size;
}

/* The class of a difference: the engine, the first item no deviation
 * explains (its kind, its register), both statuses. */
static uint64_t signature(const struct outside *o,
                          const struct engine_outcome *outcome)
{
    uint64_t fields[5] = {o->engine.id, 0, 0, o->expected.status,
                          o->answer.frame.status};
    for (unsigned i = 0; i < outcome->nkept; i++)
        if (!outcome->items[i].deviation) {
            fields[1] = outcome->items[i].item;
            fields[2] = outcome->items[i].reg;
            break;
        }
    return input_hash((const uint8_t *)fields, sizeof fields);
}

/* The first input of each class (signature) is kept: DIR/ENGINE-SIG.input
 * (what the harness was given), .elf (the file the engines read) and .txt
 * (a paragraph per difference of that class in that input, at most
 * FUZZ_OUTSIDE_KEPT, each with the `cfisem unwind` line that asks it
 * again). Later inputs of a class already kept write nothing. */
static void record(struct outside *o, const struct engine_outcome *outcome)
{
    const char *dir = o->context->findings;
    if (!dir || !*dir)
        return;
    uint64_t sig = signature(o, outcome);
    unsigned k = 0;
    while (k < o->nowned && o->owned[k] != sig)
        k++;
    char base[4096], path[4200];
    snprintf(base, sizeof base, "%s/%s-%016" PRIx64, dir,
             engine_name(o->engine.id), sig);
    if (k == o->nowned) {   /* a class this input has not written yet */
        snprintf(path, sizeof path, "%s.input", base);
        if (o->nowned == FUZZ_OUTSIDE_CLASSES ||
            !write_new(path, o->input, o->input_size))
            return;
        snprintf(path, sizeof path, "%s.elf", base);
        write_new(path, o->elf, o->elf_size);
        o->owned[o->nowned] = sig;
        o->written[o->nowned++] = 0;
    }
    if (o->written[k]++ >= FUZZ_OUTSIDE_KEPT)
        return;
    snprintf(path, sizeof path, "%s.txt", base);
    FILE *out = fopen(path, "a");
    if (!out)
        return;
    fprintf(out, "%s differs from il at pc 0x%" PRIx64 "%s:\n",
            engine_name(o->engine.id), o->question.state.at.pc,
            o->question.state.at.caller_frame ? " (caller frame)" : "");
    engine_report_items(out, o->file->arch, outcome, &o->expected,
                        &o->answer.frame);
    snprintf(path, sizeof path, "%s.elf", base);
    engine_state_reproducer(out, path, &o->question.state, NULL, 0,
                            engine_name(o->engine.id), NULL);
    fputc('\n', out);
    fclose(out);
}

static enum fuzz_result ask(struct outside *o, struct engine_pc at,
                            unsigned k)
{
    struct engine_question *q = &o->question;
    engine_question_make(q, o->il, &o->config, at, k,
                         engine_memory_reader(o->memories[k]), sem_unwind,
                         &o->expected);
    engine_question_rewind(q);
    interp_unwind(o->file, &q->request, &o->interp);
    if (!fuzz_frames_agree(&o->expected, &o->interp))
        return fuzz_disagree(o->report, "sem_unwind vs interp_unwind",
                             &q->request, "il", &o->expected, "interp",
                             &o->interp);
    engine_question_rewind(q);
    o->engine.unwind(o->engine.self, &q->request, &o->answer);
    struct engine_mismatch context = {
        .engine = o->engine.id, .file = o->file, .fde = q->fde,
        .row = q->range ? q->range->row : NULL,
        .translation = q->translation, .request = &q->request,
        .expected = &o->expected};
    struct engine_outcome outcome;
    engine_compare(&context, &o->answer, &outcome);
    if (outcome.verdict == ENGINE_VERDICT_DIFFER)
        record(o, &outcome);
    fuzz_note(FUZZ_NOTE_OUTSIDE_VERDICT, outcome.verdict);
    return FUZZ_OK;
}

static enum fuzz_result ask_all(struct outside *o)
{
    struct engine_pc *pcs = NULL;
    size_t count = 0, capacity = 0;
    enum fuzz_result result = FUZZ_OK;
    for (size_t f = 0; f < o->file->nfdes && result == FUZZ_OK &&
                       o->requests < FUZZ_OUTSIDE_MAX_REQUESTS; f++) {
        count = 0;
        if (engine_pcs_of_fde(o->il, f, &o->config, false, &pcs, &count,
                              &capacity) != CFI_OK) {
            result = FUZZ_SETUP;
            break;
        }
        for (size_t p = 0; p < count && result == FUZZ_OK; p++)
            for (unsigned k = 0; k < STATES && result == FUZZ_OK; k++)
                if (o->requests++ < FUZZ_OUTSIDE_MAX_REQUESTS)
                    result = ask(o, pcs[p], k);
    }
    free(pcs);
    return result;
}

static enum fuzz_result run_engine(struct outside *o, enum engine_id id)
{
    struct engine_config config = {NULL, NULL};
    struct cfi_diag diag;
    if (engine_open(id, o->file, &config, &o->engine, &diag) != CFI_OK) {
        fuzz_note(FUZZ_NOTE_OUTSIDE_VERDICT, 0xff);
        return FUZZ_OK;
    }
    engine_state_config_default(&o->config, input_hash(o->elf, o->elf_size));
    enum fuzz_result result = FUZZ_OK;
    for (unsigned k = 0; k < STATES && result == FUZZ_OK; k++)
        if (!(o->memories[k] = engine_state_memory(&o->config, k, o->file,
                                                   NULL, 0)))
            result = FUZZ_SETUP;
    if (result == FUZZ_OK)
        result = ask_all(o);
    for (unsigned k = 0; k < STATES; k++)
        engine_memory_free(o->memories[k]);
    engine_close(&o->engine);
    return result;
}

enum fuzz_result fuzz_outside_compare(struct fuzz_context *context,
                                      enum fuzz_oracle oracle,
                                      const uint8_t *input, size_t input_size,
                                      struct fuzz_report *report)
{
    static const enum engine_id engines[] = {ENGINE_libdwarf, ENGINE_libdw,
                                             ENGINE_libunwind};
    report->text[0] = '\0';
    if (oracle > FUZZ_ORACLE_LIBUNWIND || input_size < 1)
        return FUZZ_OK;
    /* the ELF file is already in context's file (fuzz_one_oracles) */
    struct cfi_file *file;
    struct cfi_diag diag;
    if (cfi_file_open(context->path, &file, &diag) != CFI_OK)
        return FUZZ_OK;
    struct sem_file_il *il;
    if (sem_file_il_build(file, &il) != CFI_OK) {
        cfi_file_close(file);
        return FUZZ_SETUP;
    }
    struct outside *o = calloc(1, sizeof *o);
    enum fuzz_result result = FUZZ_SETUP;
    if (o) {
        *o = (struct outside){.context = context, .input = input,
                              .input_size = input_size, .elf = input + 1,
                              .elf_size = input_size - 1, .file = file,
                              .il = il, .report = report};
        result = run_engine(o, engines[oracle]);
    }
    free(o);
    sem_file_il_free(il);
    cfi_file_close(file);
    return result;
}
