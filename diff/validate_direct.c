/* validate_direct.c — v1-direct: the eh_elf reads raw pointers, so the
 * stack is real memory of ours and the calls run in child processes.
 *
 * Addresses go by batches of BATCH. For each batch and each state: the
 * region is filled with the memory model's bytes for the state's seed
 * (at the region's own addresses: the model is defined everywhere), the
 * parent makes the questions and the reference's answers, a child makes
 * the calls and writes each result to memory shared with the parent,
 * with the count of calls done. A child that dies (a stray read, or
 * CHILD_SECONDS without finishing) leaves that count at the call that
 * killed it: the call is "crashed", and a new child goes on after it. */
#include "validate_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diff/memory.h"

#define BATCH 16384
#define CRASHES_MAX 64
#define CHILD_SECONDS 60

struct shared {
    atomic_size_t done;
    struct diff_v1_context results[BATCH];
};

/* One batch's questions for one state, and each address's verdict over
 * the states so far. */
struct batch {
    const struct check_address *at;
    size_t count;
    struct diff_v1_context ctx[BATCH];
    struct v1_view expected[BATCH];
    bool crashed[BATCH];
    struct {
        uint32_t kind;
        enum cfi_status expected_status, got_status;
        uint64_t wrong;
        unsigned first_k;
        struct diff_v1_context first_got;
        bool first_crashed;
    } verdict[BATCH];
};

static void fill_region(uint8_t *region, struct cfi_memory model)
{
    uint64_t base = (uint64_t)(uintptr_t)region;
    for (uint64_t off = 0; off < REGION_SIZE; off += 8) {
        uint64_t word = 0;
        model.read(model.env, base + off, 8, &word);
        memcpy(region + off, &word, 8);
    }
}

static _Noreturn void child_main(const struct diff_v1 *v1,
                                 const struct batch *b, size_t from,
                                 struct shared *shared)
{
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, 2);
    alarm(CHILD_SECONDS);
    struct cfi_memory none = {NULL, NULL};
    for (size_t i = from; i < b->count; i++) {
        bool faulted;
        shared->results[i] = diff_v1_call(v1, b->ctx[i], b->at[i].pc, none,
                                          &faulted);
        atomic_store(&shared->done, i + 1);
    }
    _exit(0);
}

static bool wait_child(pid_t pid, int *status)
{
    for (int tries = 0; tries < 1000; tries++) {
        if (waitpid(pid, status, 0) == pid)
            return true;
        if (errno != EINTR)
            return false;
    }
    return false;
}

/* Runs the batch's calls in children until every call returned or
 * crashed. */
static enum cfi_status run_children(struct validator *v, struct batch *b,
                                    struct shared *shared)
{
    memset(b->crashed, 0, sizeof b->crashed);
    size_t next = 0;
    unsigned crashes = 0;
    while (next < b->count) {
        atomic_store(&shared->done, next);
        pid_t pid = fork();
        if (pid < 0)
            return CFI_E_NOMEM;
        if (pid == 0)
            child_main(v->v1, b, next, shared);
        int status;
        if (!wait_child(pid, &status))
            return CFI_E_IO;
        size_t done = atomic_load(&shared->done);
        if (done >= b->count)
            break;
        b->crashed[done] = true;
        v->result->crashes++;
        next = done + 1;
        if (++crashes < CRASHES_MAX)
            continue;
        for (size_t i = next; i < b->count; i++, v->result->crashes++)
            b->crashed[i] = true;
        break;
    }
    return CFI_OK;
}

/* The questions of state k for the batch, and their expected views. */
static void make_questions(struct validator *v, struct batch *b, unsigned k)
{
    struct cfi_memory model = diff_memory_reader(v->memories[k]);
    for (size_t i = 0; i < b->count; i++) {
        struct diff_question *q = &v->question;
        diff_question_make(q, v->il, &v->states,
                           (struct diff_pc){b->at[i].pc, false}, k, model,
                           v->reference, v->expected);
        v->result->requests++;
        v->result->reference[v->expected->status]++;
        b->ctx[i] = diff_v1_context_of(&q->state.callee);
        validate_v1_view(v->expected, &q->state.callee, &b->expected[i]);
    }
}

static void judge(struct batch *b, const struct shared *shared, unsigned k)
{
    for (size_t i = 0; i < b->count; i++) {
        struct diff_outcome outcome;
        validate_v1_compare(&b->expected[i], &shared->results[i], false,
                            b->crashed[i], &outcome);
        if (outcome.nitems == 0)
            continue;
        if (b->verdict[i].wrong++ > 0)
            continue;
        b->verdict[i].first_k = k;
        b->verdict[i].first_got = shared->results[i];
        b->verdict[i].first_crashed = b->crashed[i];
        b->verdict[i].kind = validate_kind(&outcome, b->crashed[i]);
        b->verdict[i].expected_status = b->expected[i].status;
        b->verdict[i].got_status = b->crashed[i] ? CFI_E_UNSUPPORTED
                                   : b->expected[i].status == CFI_OK
                                       ? CFI_E_UNSUPPORTED : CFI_OK;
    }
}

/* Each address's verdict into the wrong ranges; the first wrong question
 * of an address is asked again for the report. */
static enum cfi_status merge_batch(struct validator *v, struct batch *b)
{
    enum cfi_status status = CFI_OK;
    for (size_t i = 0; i < b->count && status == CFI_OK; i++) {
        struct diff_wrong_range wrong;
        memset(&wrong, 0, sizeof wrong);
        if (b->verdict[i].wrong) {
            unsigned k = b->verdict[i].first_k;
            struct diff_question *q = &v->question;
            diff_question_make(q, v->il, &v->states,
                               (struct diff_pc){b->at[i].pc, false}, k,
                               diff_memory_reader(v->memories[k]),
                               v->reference, v->expected);
            struct v1_view expected;
            validate_v1_view(v->expected, &q->state.callee, &expected);
            struct diff_outcome outcome;
            bool crashed = b->verdict[i].first_crashed;
            validate_v1_compare(&expected, &b->verdict[i].first_got, false,
                                crashed, &outcome);
            validate_v1_frame(&b->verdict[i].first_got, false, crashed,
                              &q->state.callee, v->got);
            validate_first_wrong(v, &b->at[i], q, v->expected, v->got,
                                 &outcome, crashed, &wrong);
            wrong.kind = b->verdict[i].kind;
            wrong.expected_status = b->verdict[i].expected_status;
            wrong.got_status = b->verdict[i].got_status;
            wrong.wrong_requests = b->verdict[i].wrong;
        }
        status = validate_merge(v, &b->at[i], &wrong);
    }
    return status;
}

static enum cfi_status run_batch(struct validator *v, struct batch *b,
                                 uint8_t *region, struct shared *shared)
{
    memset(b->verdict, 0, sizeof b->verdict);
    for (unsigned k = 0; k < v->config->nstates; k++) {
        fill_region(region, diff_memory_reader(v->memories[k]));
        make_questions(v, b, k);
        enum cfi_status status = run_children(v, b, shared);
        if (status != CFI_OK)
            return status;
        judge(b, shared, k);
    }
    v->result->addresses += b->count;
    return merge_batch(v, b);
}

static bool region_overlaps_file(const struct cfi_file *file, uint64_t base)
{
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        if (s->vaddr < base + REGION_SIZE && base < s->vaddr + s->memsz)
            return true;
    }
    return false;
}

enum cfi_status validate_direct(struct validator *v,
                                const struct check_address *addresses,
                                size_t count)
{
    uint8_t *region = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct shared *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct batch *b = malloc(sizeof *b);
    enum cfi_status status = region == MAP_FAILED || shared == MAP_FAILED || !b
                                 ? CFI_E_NOMEM : CFI_OK;
    if (status == CFI_OK &&
        region_overlaps_file(v->file, (uint64_t)(uintptr_t)region))
        status = CFI_E_UNSUPPORTED;
    v->states.stack_base = (uint64_t)(uintptr_t)region + REGION_STACK;
    v->states.faults = false;
    for (size_t from = 0; from < count && status == CFI_OK; from += BATCH) {
        b->at = addresses + from;
        b->count = count - from < BATCH ? count - from : BATCH;
        status = run_batch(v, b, region, shared);
        validate_progress(v, from + b->count);
    }
    free(b);
    if (shared != MAP_FAILED)
        munmap(shared, sizeof *shared);
    if (region != MAP_FAILED)
        munmap(region, REGION_SIZE);
    return status;
}
