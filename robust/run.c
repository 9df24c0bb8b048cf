/* SPDX-License-Identifier: MIT */
/* run.c — running commands with a timeout (fork, exec, poll) and
 * classifying how they ended. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "robust.h"

double rb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

const char *rb_class_name(enum rb_class c)
{
    static const char *const names[RB_NCLASSES] = {
        "ok", "clean", "mismatch", "silent", "crash", "hang", "bad-exit",
        "disagree", "wrong-range", "child-crash"};
    return c < RB_NCLASSES ? names[c] : "?";
}

static bool has_sanitizer_report(const char *err)
{
    return strstr(err, "ERROR: AddressSanitizer") ||
           strstr(err, "ERROR: LeakSanitizer") ||
           strstr(err, "runtime error:") ||
           strstr(err, "Sanitizer:DEADLYSIGNAL") ||
           strstr(err, "AddressSanitizer: hard rss limit exhausted") ||
           strstr(err, "SUMMARY: UndefinedBehaviorSanitizer");
}

static bool runs_compiled(const struct rb_command *cmd)
{
    for (unsigned i = 1; i + 1 < cmd->argc; i++)
        if (!strcmp(cmd->argv[i], "--engine") &&
            !strcmp(cmd->argv[i + 1], "compiled"))
            return true;
    return false;
}

enum rb_class rb_classify(const struct rb_command *cmd,
                          const struct rb_outcome *o)
{
    if (o->timed_out)
        return RB_HANG;
    if (o->signal || has_sanitizer_report(o->err))
        return RB_CRASH;
    bool documented = cmd->usage
        ? o->exit_code == RB_EXIT_USAGE
        : o->exit_code >= 0 && o->exit_code < 32 &&
              (cmd->allowed & (1u << o->exit_code));
    if (!documented)
        return RB_BAD_EXIT;
    /* unwind's 4: the engine's child crashed or hung; the eh_elf is ours */
    if (!strcmp(cmd->subcommand, "unwind") && o->exit_code == 4 &&
        runs_compiled(cmd))
        return RB_CHILD_CRASH;
    if (o->exit_code == 0)
        return RB_OK;
    /* stack's 1: cfisem's own engines gave different frames (an outside
     * engine's difference is only flagged) */
    if (!strcmp(cmd->subcommand, "stack") && o->exit_code == 1)
        return RB_DISAGREE;
    bool reports = !strcmp(cmd->subcommand, "diff") ||
                   !strcmp(cmd->subcommand, "validate");
    if (reports && o->exit_code == 1 && o->out_len > 0 &&
        (strstr(o->out, "new mismatch") || strstr(o->out, "wrong range")))
        return RB_MISMATCH;
    /* unwind's "cannot unwind" and il --pc's "no FDE there" are answers,
     * printed on stdout */
    bool answers = !strcmp(cmd->subcommand, "unwind") ||
                   !strcmp(cmd->subcommand, "il");
    if (answers && o->exit_code == 3 && o->out_len > 0)
        return RB_CLEAN;
    if (o->err_len == 0)
        return RB_SILENT;
    return RB_CLEAN;
}

/* cfisem's own engines: a difference of one of them is a defect. */
static bool own_engine(const char *value, const char *end)
{
    return rb_json_string_is(value, end, "il") ||
           rb_json_string_is(value, end, "interp") ||
           rb_json_string_is(value, end, "compiled");
}

/* diff: "summary": {ENGINE: {"differ": N, ...}}; "errors": [{"engine",
 * "message": "crashed (...)" or "timed out (...)"}]; a file whose
 * reference crashed has "error": "cfisem crashed on this file ...". */
static enum rb_class classify_diff(enum rb_class base, const char *r,
                                   const char *end)
{
    static const char *const own[] = {"il", "interp", "compiled"};
    const char *errors = rb_json_member(r, end, "errors");
    for (const char *e = rb_json_first(errors, end); e; e = rb_json_next(e, end)) {
        const char *msg = rb_json_member(e, end, "message");
        if (own_engine(rb_json_member(e, end, "engine"), end) &&
            (rb_json_string_starts(msg, end, "crashed") ||
             rb_json_string_starts(msg, end, "timed out")))
            return RB_CHILD_CRASH;
    }
    const char *files = rb_json_member(r, end, "files");
    for (const char *f = rb_json_first(files, end); f; f = rb_json_next(f, end)) {
        const char *err = rb_json_member(f, end, "error");
        if (rb_json_string_starts(err, end, "cfisem crashed") ||
            rb_json_string_starts(err, end, "cfisem stopped answering"))
            return RB_CHILD_CRASH;
    }
    const char *summary = rb_json_member(r, end, "summary");
    for (unsigned i = 0; summary && i < 3; i++) {
        uint64_t differ = 0;
        const char *counts = rb_json_member(summary, end, own[i]);
        if (counts && rb_json_u64(rb_json_member(counts, end, "differ"), end,
                                  &differ) && differ > 0)
            return RB_DISAGREE;
    }
    return base;
}

/* validate: "crashes": N, "wrong_ranges_total": N,
 * "unsupported_ranges": N (the eh_elf says it cannot: no wrong value). */
static enum rb_class classify_validate(enum rb_class base, const char *r,
                                       const char *end)
{
    uint64_t crashes = 0, wrong = 0, unsupported = 0;
    if (rb_json_u64(rb_json_member(r, end, "crashes"), end, &crashes) &&
        crashes > 0)
        return RB_CHILD_CRASH;
    if (rb_json_u64(rb_json_member(r, end, "wrong_ranges_total"), end, &wrong)) {
        rb_json_u64(rb_json_member(r, end, "unsupported_ranges"), end,
                    &unsupported);
        if (wrong > unsupported)
            return RB_WRONG_RANGE;
    }
    return base;
}

enum rb_class rb_classify_report(const char *subcommand, enum rb_class base,
                                 const char *report, size_t len)
{
    if (!report)
        return base;
    const char *end = report + len;
    if (!rb_json_skip(report, end))
        return base;
    if (!strcmp(subcommand, "diff"))
        return classify_diff(base, report, end);
    if (!strcmp(subcommand, "validate"))
        return classify_validate(base, report, end);
    return base;
}

/* The --json report of a finished run: read, classified, removed. */
static enum rb_class refine_by_report(const struct rb_command *cmd,
                                      enum rb_class base)
{
    if (!cmd->json || (base != RB_OK && base != RB_MISMATCH))
        return base;
    FILE *f = fopen(cmd->json, "rb");
    if (!f)
        return base;
    size_t cap = 1 << 16, len = 0, got;
    char *text = malloc(cap);
    while (text && (got = fread(text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *more = realloc(text, cap *= 2);
            if (!more)
                break;
            text = more;
        }
    }
    fclose(f);
    enum rb_class cls = text ? rb_classify_report(cmd->subcommand, base,
                                                  text, len) : base;
    free(text);
    return cls;
}

void rb_pool_init(struct rb_pool *pool, unsigned jobs, double timeout,
                  char *const *envp)
{
    memset(pool, 0, sizeof *pool);
    pool->jobs = jobs < 1 ? 1 : jobs > RB_MAX_JOBS ? RB_MAX_JOBS : jobs;
    pool->timeout = timeout;
    pool->envp = envp;
}

struct rb_slot *rb_pool_free_slot(struct rb_pool *pool)
{
    for (unsigned i = 0; i < pool->jobs; i++)
        if (!pool->slots[i].busy)
            return &pool->slots[i];
    return NULL;
}

static void child(const struct rb_command *cmd, int out[2], int err[2],
                  char *const *envp)
{
    setpgid(0, 0);
    int in = open(cmd->stdin_path ? cmd->stdin_path : "/dev/null",
                  O_RDONLY);
    if (in >= 0)
        dup2(in, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    execve(cmd->argv[0], (char *const *)cmd->argv, envp);
    _exit(127);
}

bool rb_pool_start(struct rb_pool *pool, struct rb_slot *slot,
                   const struct rb_command *cmd, void *tag)
{
    int out[2], err[2];
    if (pipe(out))
        return false;
    if (pipe(err)) {
        close(out[0]);
        close(out[1]);
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(out[0]); close(out[1]); close(err[0]); close(err[1]);
        return false;
    }
    if (pid == 0)
        child(cmd, out, err, pool->envp);
    setpgid(pid, pid);  /* both sides: no race with the kill */
    close(out[1]);
    close(err[1]);
    memset(slot, 0, sizeof *slot);
    slot->busy = true;
    slot->pid = pid;
    slot->out_fd = out[0];
    slot->err_fd = err[0];
    slot->start = rb_now();
    slot->cmd = *cmd;
    slot->tag = tag;
    slot->outcome.exit_code = -1;
    return true;
}

static void capture(int *fd, char *buf, size_t *len)
{
    char chunk[4096];
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    size_t take = (size_t)n;
    if (take > RB_CAPTURE - *len)
        take = RB_CAPTURE - *len;
    memcpy(buf + *len, chunk, take);
    *len += take;
    buf[*len] = 0;
}

/* A slot is done when both pipes closed and the process was reaped. */
static bool try_reap(struct rb_slot *s)
{
    if (s->out_fd >= 0 || s->err_fd >= 0)
        return false;
    int status;
    pid_t r = waitpid(s->pid, &status, s->killed ? 0 : WNOHANG);
    if (r != s->pid)
        return false;
    struct rb_outcome *o = &s->outcome;
    o->seconds = rb_now() - s->start;
    o->timed_out = s->killed;
    o->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o->signal = WIFSIGNALED(status) && !s->killed ? WTERMSIG(status) : 0;
    o->cls = refine_by_report(&s->cmd, rb_classify(&s->cmd, o));
    return true;
}

static void kill_overdue(struct rb_pool *pool, double now)
{
    for (unsigned i = 0; i < pool->jobs; i++) {
        struct rb_slot *s = &pool->slots[i];
        if (!s->busy || s->killed || now - s->start < pool->timeout)
            continue;
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        s->killed = true;
        /* a grandchild may hold the pipes open: stop listening */
        if (s->out_fd >= 0) { close(s->out_fd); s->out_fd = -1; }
        if (s->err_fd >= 0) { close(s->err_fd); s->err_fd = -1; }
    }
}

static unsigned gather_fds(struct rb_pool *pool, struct pollfd *fds,
                           struct rb_slot **owner, bool *is_err)
{
    unsigned n = 0;
    for (unsigned i = 0; i < pool->jobs; i++) {
        struct rb_slot *s = &pool->slots[i];
        if (!s->busy)
            continue;
        int both[2] = {s->out_fd, s->err_fd};
        for (unsigned k = 0; k < 2; k++) {
            if (both[k] < 0)
                continue;
            fds[n] = (struct pollfd){both[k], POLLIN, 0};
            owner[n] = s;
            is_err[n++] = k == 1;
        }
    }
    return n;
}

struct rb_slot *rb_pool_wait(struct rb_pool *pool)
{
    for (;;) {
        bool any = false;
        for (unsigned i = 0; i < pool->jobs; i++) {
            struct rb_slot *s = &pool->slots[i];
            if (!s->busy)
                continue;
            any = true;
            if (try_reap(s))
                return s;
        }
        if (!any)
            return NULL;
        struct pollfd fds[2 * RB_MAX_JOBS];
        struct rb_slot *owner[2 * RB_MAX_JOBS];
        bool is_err[2 * RB_MAX_JOBS];
        unsigned n = gather_fds(pool, fds, owner, is_err);
        /* pipes closed but not yet exited: poll nothing, briefly */
        int r = poll(fds, n, n ? 100 : 5);
        for (unsigned i = 0; r > 0 && i < n; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            struct rb_outcome *o = &owner[i]->outcome;
            if (is_err[i])
                capture(&owner[i]->err_fd, o->err, &o->err_len);
            else
                capture(&owner[i]->out_fd, o->out, &o->out_len);
        }
        kill_overdue(pool, rb_now());
    }
}

void rb_pool_release(struct rb_slot *slot)
{
    slot->busy = false;
}
