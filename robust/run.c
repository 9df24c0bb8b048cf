/* run.c — running commands with a timeout (fork, exec, poll) and
 * classifying how they ended. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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
        "ok", "clean", "mismatch", "silent", "crash", "hang", "bad-exit"};
    return c < RB_NCLASSES ? names[c] : "?";
}

static bool has_sanitizer_report(const char *err)
{
    return strstr(err, "ERROR: AddressSanitizer") ||
           strstr(err, "ERROR: LeakSanitizer") ||
           strstr(err, "runtime error:") ||
           strstr(err, "Sanitizer:DEADLYSIGNAL") ||
           strstr(err, "SUMMARY: UndefinedBehaviorSanitizer");
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
    if (o->exit_code == 0)
        return RB_OK;
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
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, 0);
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
    o->cls = rb_classify(&s->cmd, o);
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
