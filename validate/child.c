/* SPDX-License-Identifier: MIT */
/* validate/child.c — the eh_elf's calls, in child processes, for every
 * ABI (validate.h, "Isolation").
 *
 * Questions go by batches of at most BATCH_REQUESTS, addresses times
 * states, state by state (v1-direct fills its stack region once per
 * state). A child makes each question, the reference's answer, the call
 * and the comparison, writes the raw answer to memory shared with the
 * parent, then the count of questions done. A call that raises one of
 * the crash signals is caught in the child (siglongjmp to the loop): the
 * child records the signal and the offset its stderr had reached, and
 * goes on. A child that dies otherwise (a hang: SIGALRM after
 * CALL_SECONDS for 1024 calls; exit; SIGKILL) leaves the count at the
 * question that killed it, and a new child goes on after it (after
 * RESTARTS_MAX deaths in a batch, the rest of the batch is reported
 * crashed, not run). The parent then sums the batch up. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <dlfcn.h>
#include <unistd.h>

#include "engines/engines.h"

#define BATCH_REQUESTS 65536
#define RESTARTS_MAX 16
#define CALL_SECONDS 10
#define CALLS_PER_ALARM 1024
#define CRASH_TEXT_MAX 400
#define ALT_STACK_SIZE (256 * 1024)

/* What a child writes for each question. */
struct slot {
    struct raw_answer raw;
    int32_t signal;              /* caught crash: its signal, else 0 */
    uint64_t text_begin, text_end;  /* the child's stderr before it */
};

struct shared {
    atomic_size_t done;
    struct slot slots[BATCH_REQUESTS];
};

/* A question the child did not answer (it died at it, or it was not
 * run). */
struct death {
    size_t slot;
    int signal;                  /* 0: exited or not run */
    int exit_status;
    uint64_t text_begin, text_end;
};

struct batch {
    const struct check_address *at;
    size_t count;                /* addresses */
    size_t nslots;               /* count * nstates */
    struct death deaths[RESTARTS_MAX];
    size_t ndeaths;
    size_t unrun_from;           /* slots from here: not run */
};

/* ------------------------------------------------------------------ */
/* Asking, judging                                                      */
/* ------------------------------------------------------------------ */

static void full_to_raw(const struct cfi_frame *frame, struct raw_full *raw)
{
    raw->status = (uint8_t)frame->status;
    raw->signal_frame = frame->signal_frame;
    raw->reg = frame->diag.reg;
    raw->offset = frame->diag.offset;
    raw->message = frame->diag.message;
    raw->cfa = frame->cfa;
    memcpy(raw->reg_status, frame->caller.status, sizeof raw->reg_status);
    memcpy(raw->value, frame->caller.value, sizeof raw->value);
}

static void raw_to_full(const struct raw_full *raw, struct cfi_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    frame->status = (enum cfi_status)raw->status;
    frame->diag = (struct cfi_diag){frame->status, raw->message, raw->offset,
                                    raw->reg};
    frame->signal_frame = raw->signal_frame;
    frame->cfa = raw->cfa;
    memset(frame->caller.status, CFI_REG_UNDEFINED, sizeof frame->caller.status);
    memcpy(frame->caller.status, raw->reg_status, sizeof raw->reg_status);
    memcpy(frame->caller.value, raw->value, sizeof raw->value);
}

void validate_judge(struct validator *v, const struct raw_answer *raw,
                    bool crashed, struct engine_outcome *outcome)
{
    struct engine_question *q = &v->question;
    if (v->v1) {
        struct v1_view expected;
        validate_v1_view(v->expected, &q->state.callee, &expected);
        validate_v1_compare(&expected, &raw->v1, raw->faulted, crashed,
                            outcome);
        validate_v1_frame(&raw->v1, raw->faulted, crashed, &q->state.callee,
                          v->got);
        return;
    }
    struct engine_answer *answer = v->answer;
    raw_to_full(&raw->full, &answer->frame);
    engine_answer_all_comparable(answer);
    for (unsigned reg = v->file->arch->nreported; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
    if (crashed) {
        memset(outcome, 0, sizeof *outcome);
        answer->frame.status = CFI_E_UNSUPPORTED;
        answer->frame.diag = (struct cfi_diag){CFI_E_UNSUPPORTED,
                                               "the call crashed",
                                               CFI_NO_OFFSET, -1};
        outcome->items[0] = (struct engine_item_found){ENGINE_ITEM_STATUS, 0,
                             NULL};
        outcome->nkept = outcome->nitems = outcome->nnew = 1;
        outcome->verdict = ENGINE_VERDICT_DIFFER;
        return;
    }
    struct engine_mismatch context = {
        .engine = ENGINE_compiled, .file = v->file, .fde = q->fde,
        .row = q->range ? q->range->row : NULL, .translation = q->translation,
        .request = &q->request, .expected = v->expected};
    engine_compare(&context, answer, outcome);
}

void validate_ask(struct validator *v, const struct check_address *at,
                  unsigned k, struct raw_answer *raw)
{
    struct engine_question *q = &v->question;
    engine_question_make(q, v->il, &v->states,
                         (struct engine_pc){at->pc, false}, k,
                         engine_memory_reader(v->memories[k]), v->reference,
                         v->expected);
    memset(raw, 0, sizeof *raw);
    raw->expected_status = (uint8_t)v->expected->status;
    engine_question_rewind(q);
    if (v->v1) {
        struct engine_v1_context ctx = engine_v1_context_of(&q->state.callee);
        raw->v1 = engine_v1_call(v->v1, ctx, q->request.pc, q->request.memory,
                                 &raw->faulted);
    } else {
        cg_unwind(v->full, &q->request, &v->answer->frame);
        full_to_raw(&v->answer->frame, &raw->full);
    }
    struct engine_outcome outcome;
    validate_judge(v, raw, false, &outcome);
    raw->wrong = outcome.nitems != 0;
    raw->kind = validate_kind(v, &outcome, false);
    raw->got_status = (uint8_t)v->got->status;
}

/* ------------------------------------------------------------------ */
/* The child                                                            */
/* ------------------------------------------------------------------ */

/* Where a caught crash goes back to. A signal handler has no argument:
 * this is the child's one piece of mutable static state, forced by
 * signals (the child is a process of its own, single-threaded). */
static sigjmp_buf *crash_return;
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL,
                                    SIGFPE, SIGTRAP, SIGSYS};

static void on_crash(int signal)
{
    siglongjmp(*crash_return, signal);
}

static void catch_crashes(void)
{
    stack_t alt = {.ss_sp = malloc(ALT_STACK_SIZE), .ss_size = ALT_STACK_SIZE};
    if (alt.ss_sp)
        sigaltstack(&alt, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_crash;
    action.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        sigaction(crash_signals[i], &action, NULL);
}

static void fill_region(uint8_t *region, struct cfi_memory model)
{
    uint64_t base = (uint64_t)(uintptr_t)region;
    for (uint64_t off = 0; off < REGION_SIZE; off += 8) {
        uint64_t word = 0;
        model.read(model.env, base + off, 8, &word);
        memcpy(region + off, &word, 8);
    }
}

static uint64_t text_offset(void)
{
    off_t at = lseek(2, 0, SEEK_CUR);
    return at < 0 ? 0 : (uint64_t)at;
}

/* One question, surviving a crash of the call. */
static void child_question(struct validator *v, const struct batch *b,
                           size_t s, struct slot *slot, uint64_t *text_from)
{
    sigjmp_buf here;
    crash_return = &here;
    int signal = sigsetjmp(here, 1);
    if (signal == 0) {
        validate_ask(v, &b->at[s % b->count], (unsigned)(s / b->count),
                     &slot->raw);
        slot->signal = 0;
        return;
    }
    slot->signal = signal;
    slot->text_begin = *text_from;
    slot->text_end = *text_from = text_offset();
}

static _Noreturn void child_main(struct validator *v, const struct batch *b,
                                 size_t from, struct shared *shared,
                                 int text_fd, uint8_t *region)
{
    dup2(text_fd, 1);
    dup2(text_fd, 2);
    catch_crashes();
    uint64_t text_from = text_offset();
    size_t filled = SIZE_MAX;
    for (size_t s = from; s < b->nslots; s++) {
        if ((s - from) % CALLS_PER_ALARM == 0)
            alarm(v->config->timeout ? v->config->timeout : CALL_SECONDS);
        size_t k = s / b->count;
        if (region && k != filled) {
            fill_region(region, engine_memory_reader(v->memories[k]));
            filled = k;
        }
        child_question(v, b, s, &shared->slots[s], &text_from);
        atomic_store(&shared->done, s + 1);
    }
    _exit(0);
}

/* ------------------------------------------------------------------ */
/* The parent                                                           */
/* ------------------------------------------------------------------ */

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

/* Runs the batch's questions in children until every one is answered,
 * or has killed its child. */
static enum cfi_status run_children(struct validator *v, struct batch *b,
                                    struct shared *shared, int text_fd,
                                    uint8_t *region)
{
    b->ndeaths = 0;
    b->unrun_from = b->nslots;
    if (ftruncate(text_fd, 0) != 0 || lseek(text_fd, 0, SEEK_SET) != 0)
        return CFI_E_IO;
    size_t next = 0;
    while (next < b->nslots) {
        atomic_store(&shared->done, next);
        fflush(NULL);
        uint64_t text_from = (uint64_t)lseek(text_fd, 0, SEEK_END);
        pid_t pid = fork();
        if (pid < 0)
            return CFI_E_NOMEM;
        if (pid == 0)
            child_main(v, b, next, shared, text_fd, region);
        int status;
        if (!wait_child(pid, &status))
            return CFI_E_IO;
        size_t done = atomic_load(&shared->done);
        if (done >= b->nslots)
            break;
        uint64_t text_end = (uint64_t)lseek(text_fd, 0, SEEK_END);
        b->deaths[b->ndeaths++] = (struct death){
            done, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1, text_from, text_end};
        next = done + 1;
        if (b->ndeaths == RESTARTS_MAX) {
            b->unrun_from = next;
            break;
        }
    }
    return CFI_OK;
}

/* The first lines of [begin, end) of the children's stderr. */
static char *crash_text(int text_fd, uint64_t begin, uint64_t end)
{
    if (end <= begin)
        return NULL;
    size_t len = end - begin > CRASH_TEXT_MAX ? CRASH_TEXT_MAX
                                              : (size_t)(end - begin);
    char *text = malloc(len + 1);
    ssize_t n = text ? pread(text_fd, text, len, (off_t)begin) : -1;
    if (n <= 0) {
        free(text);
        return NULL;
    }
    text[n] = 0;
    unsigned lines = 0;
    for (char *c = text; *c; c++)
        if (*c == '\n' && ++lines == 4) {
            *c = 0;
            break;
        }
    size_t l = strlen(text);
    while (l > 0 && (text[l - 1] == '\n' || text[l - 1] == ' '))
        text[--l] = 0;
    return text;
}

/* How question s ended: answered (NULL), or the crash that ended it. */
struct crash_info {
    bool crashed;
    int signal;
    uint64_t text_begin, text_end;
};

static struct crash_info crash_of(const struct batch *b,
                                  const struct shared *shared, size_t s)
{
    struct crash_info info = {false, 0, 0, 0};
    if (s >= b->unrun_from)
        return (struct crash_info){true, 0, 0, 0};
    for (size_t d = 0; d < b->ndeaths; d++)
        if (b->deaths[d].slot == s)
            return (struct crash_info){true, b->deaths[d].signal,
                                       b->deaths[d].text_begin,
                                       b->deaths[d].text_end};
    const struct slot *slot = &shared->slots[s];
    if (slot->signal)
        info = (struct crash_info){true, slot->signal, slot->text_begin,
                                   slot->text_end};
    return info;
}

/* One address's verdict over its states: the representative question is
 * its first wrong one that is not "unsupported", else its first. */
struct verdict {
    uint64_t wrong;
    size_t slot;
    enum validate_wrong_class wrong_class;
    uint64_t kind;
    enum cfi_status expected_status, got_status;
    struct crash_info crash;
};

static void remake(struct validator *v, const struct check_address *at,
                   unsigned k)
{
    engine_question_make(&v->question, v->il, &v->states,
                         (struct engine_pc){at->pc, false}, k,
                         engine_memory_reader(v->memories[k]), v->reference,
                         v->expected);
}

static void judge_slot(struct validator *v, const struct batch *b,
                       const struct shared *shared, size_t s,
                       struct verdict *verdict)
{
    struct crash_info crash = crash_of(b, shared, s);
    const struct raw_answer *raw = &shared->slots[s].raw;
    enum cfi_status expected_status = (enum cfi_status)raw->expected_status;
    v->result->requests++;
    if (crash.crashed) {
        v->result->crashes++;
        remake(v, &b->at[s % b->count], (unsigned)(s / b->count));
        expected_status = v->expected->status;
    }
    v->result->reference[expected_status]++;
    if (!crash.crashed && !raw->wrong)
        return;
    uint64_t kind = crash.crashed ? VALIDATE_KIND_CRASH : raw->kind;
    enum cfi_status got_status = crash.crashed
                                     ? CFI_E_UNSUPPORTED
                                     : (enum cfi_status)raw->got_status;
    enum validate_wrong_class c =
        validate_class(kind, expected_status, got_status);
    bool better = verdict->wrong == 0 ||
                  (verdict->wrong_class == VALIDATE_WRONG_UNSUPPORTED &&
                   c != VALIDATE_WRONG_UNSUPPORTED);
    verdict->wrong++;
    if (better)
        *verdict = (struct verdict){verdict->wrong, s, c, kind,
                                    expected_status, got_status, crash};
}

/* Each address's verdict into the wrong ranges; its representative
 * question is made again here for the report. */
static enum cfi_status merge_batch(struct validator *v, const struct batch *b,
                                   const struct shared *shared, int text_fd)
{
    enum cfi_status status = CFI_OK;
    unsigned nstates = v->config->nstates;
    for (size_t i = 0; i < b->count && status == CFI_OK; i++) {
        struct verdict verdict;
        memset(&verdict, 0, sizeof verdict);
        for (unsigned k = 0; k < nstates; k++)
            judge_slot(v, b, shared, k * b->count + i, &verdict);
        struct validate_wrong_range wrong;
        memset(&wrong, 0, sizeof wrong);
        if (verdict.wrong) {
            remake(v, &b->at[i], (unsigned)(verdict.slot / b->count));
            struct engine_outcome outcome;
            validate_judge(v, &shared->slots[verdict.slot].raw,
                           verdict.crash.crashed, &outcome);
            validate_first_wrong(v, &b->at[i], &v->question, v->expected,
                                 v->got, &outcome, verdict.crash.crashed,
                                 &wrong);
            wrong.kind = verdict.kind;
            wrong.expected_status = verdict.expected_status;
            wrong.got_status = verdict.got_status;
            wrong.wrong_requests = verdict.wrong;
            wrong.wrong_class = verdict.wrong_class;
            wrong.signal = verdict.crash.signal;
            if (verdict.crash.crashed)
                wrong.crash_text = crash_text(text_fd, verdict.crash.text_begin,
                                              verdict.crash.text_end);
        }
        status = validate_merge(v, &b->at[i], &wrong);
    }
    v->result->addresses += b->count;
    return status;
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

static int text_file(void)
{
    FILE *f = tmpfile();
    if (!f)
        return -1;
    int fd = dup(fileno(f));
    fclose(f);
    return fd;
}

/* The batches, in order: the calls in children, then their verdicts. */
static enum cfi_status run_batches(struct validator *v,
                                   const struct check_address *addresses,
                                   size_t count, struct batch *b,
                                   struct shared *shared, int text_fd,
                                   uint8_t *region)
{
    size_t per_batch = BATCH_REQUESTS / v->config->nstates;
    if (per_batch == 0)
        per_batch = 1;
    enum cfi_status status = CFI_OK;
    for (size_t from = 0; from < count && status == CFI_OK; from += per_batch) {
        b->at = addresses + from;
        b->count = count - from < per_batch ? count - from : per_batch;
        b->nslots = b->count * v->config->nstates;
        status = run_children(v, b, shared, text_fd, region);
        if (status == CFI_OK)
            status = merge_batch(v, b, shared, text_fd);
        validate_progress(v, from + b->count);
    }
    return status;
}

enum cfi_status validate_run(struct validator *v,
                             const struct check_address *addresses,
                             size_t count)
{
    bool direct = v->config->abi == VALIDATE_ABI_V1_DIRECT;
    uint8_t *region = direct ? mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                             : NULL;
    struct shared *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct batch *b = malloc(sizeof *b);
    int text_fd = text_file();
    enum cfi_status status = region == MAP_FAILED || shared == MAP_FAILED ||
                                     !b || text_fd < 0
                                 ? CFI_E_NOMEM : CFI_OK;
    if (status == CFI_OK && direct) {
        if (region_overlaps_file(v->file, (uint64_t)(uintptr_t)region))
            status = CFI_E_UNSUPPORTED;
        v->states.stack_base = (uint64_t)(uintptr_t)region + REGION_STACK;
        v->states.faults = false;
    }
    if (status == CFI_OK)
        status = run_batches(v, addresses, count, b, shared, text_fd, region);
    if (text_fd >= 0)
        close(text_fd);
    free(b);
    if (shared != MAP_FAILED)
        munmap(shared, sizeof *shared);
    if (region && region != MAP_FAILED)
        munmap(region, REGION_SIZE);
    return status;
}

/* ------------------------------------------------------------------ */
/* Loading in a child                                                   */
/* ------------------------------------------------------------------ */

struct load_report {
    int loaded;
    char error[320];
};

/* An eh_elf of another machine (AArch64): loaded by its runner, under
 * qemu, which says why not. */
static _Noreturn void try_load_remote(const char *path,
                                      struct load_report *report)
{
    struct cg_eh_elf *eh;
    struct cfi_diag diag;
    report->loaded = cg_load(path, &eh, &diag) == CFI_OK;
    if (report->loaded)
        cg_unload(eh);
    else
        snprintf(report->error, sizeof report->error, "%s", diag.message);
    _exit(0);
}

enum cfi_status validate_try_load(const char *path, struct cfi_diag *diag,
                                  char *detail, size_t size)
{
    detail[0] = 0;
    enum cfi_status regular = cfi_check_regular_file(path, diag);
    if (regular != CFI_OK)
        return regular;   /* a FIFO would stop dlopen until the alarm */
    struct load_report *report = mmap(NULL, sizeof *report,
                                      PROT_READ | PROT_WRITE,
                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (report == MAP_FAILED)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    memset(report, 0, sizeof *report);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 1), dup2(null, 2);
        alarm(CALL_SECONDS);
        if (cg_eh_elf_is_remote(path))
            try_load_remote(path, report);
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const char *error = handle ? NULL : dlerror();
        snprintf(report->error, sizeof report->error, "%s", error ? error : "");
        report->loaded = handle != NULL;
        _exit(0);
    }
    int status = 0;
    bool waited = pid > 0 && wait_child(pid, &status);
    enum cfi_status result = CFI_OK;
    detail[0] = 0;
    if (waited && WIFSIGNALED(status)) {
        snprintf(detail, size, "%s", validate_crash_text(WTERMSIG(status)));
        result = cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                          "loading the eh_elf crashed");
    } else if (waited && !report->loaded) {
        snprintf(detail, size, "%s", report->error);
        result = cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                          "cannot load the eh_elf (dlopen failed)");
    }
    munmap(report, sizeof *report);
    return result;
}
