/* SPDX-License-Identifier: MIT */
/* ask.c — see ask.h. */
#include "ask.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the child sends: the result with its texts in place. */
static void copy_text(char *to, const char *from)
{
    if (!from) {
        to[0] = 0;
        return;
    }
    snprintf(to, ENGINE_ASK_TEXT_MAX, "%s", from);
}

static bool write_all(int fd, const void *bytes, size_t n)
{
    const char *p = bytes;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

void engine_child_default_signals(void)
{
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
        signal(crashes[i], SIG_DFL);
}

static _Noreturn void child_main(enum engine_id id,
                                 const struct cfi_file *file,
                                 const struct engine_config *config,
                                 const struct cfi_request *request,
                                 struct engine_ask_result *result, int fd)
{
    engine_child_default_signals();
    struct engine_instance engine;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (engine_open(id, file, config, &engine, &diag) != CFI_OK) {
        result->end = ENGINE_ASK_OPEN_FAILED;
        result->open_diag = diag;
        copy_text(result->message, diag.message);
    } else {
        engine.unwind(engine.self, request, &result->answer);
        result->end = ENGINE_ASK_ANSWERED;
        copy_text(result->message, result->answer.frame.diag.message);
        copy_text(result->reason, result->answer.not_comparable_reason);
        engine_close(&engine);
    }
    _exit(write_all(fd, result, sizeof *result) ? 0 : 1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reads the child's result until it is whole, the pipe closes, or the
 * time is up. True when whole; *timed_out when the time ran out. */
static bool read_result(int fd, struct engine_ask_result *result,
                        double timeout, bool *timed_out)
{
    char *p = (char *)result;
    size_t got = 0;
    double deadline = now() + timeout;
    *timed_out = false;
    while (got < sizeof *result) {
        double left = deadline - now();
        if (left <= 0) {
            *timed_out = true;
            return false;
        }
        struct pollfd watch = {fd, POLLIN, 0};
        int ready = poll(&watch, 1, (int)(left * 1000) + 1);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue;
        ssize_t n = read(fd, p + got, sizeof *result - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

/* The texts of the result point into its own arrays. */
static void relink(struct engine_ask_result *result)
{
    if (result->end == ENGINE_ASK_OPEN_FAILED) {
        result->open_diag.message = result->message[0] ? result->message
                                                       : NULL;
        return;
    }
    result->answer.frame.diag.message = result->message[0] ? result->message
                                                           : NULL;
    result->answer.not_comparable_reason =
        result->reason[0] ? result->reason : NULL;
}

static void reap(pid_t pid, int *wait_status)
{
    for (int tries = 0; tries < 1000; tries++)
        if (waitpid(pid, wait_status, 0) == pid || errno != EINTR)
            return;
}

bool engine_ask_isolated(enum engine_id id, const struct cfi_file *file,
                         const struct engine_config *config,
                         const struct cfi_request *request,
                         double timeout_seconds,
                         struct engine_ask_result *result)
{
    memset(result, 0, sizeof *result);
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(id, file, config, request, result, fds[1]);
    }
    close(fds[1]);
    bool timed_out;
    bool whole = read_result(fds[0], result, timeout_seconds, &timed_out);
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int wait_status = 0;
    reap(pid, &wait_status);
    if (whole) {
        relink(result);
        return true;
    }
    memset(result, 0, sizeof *result);
    result->end = timed_out ? ENGINE_ASK_TIMED_OUT : ENGINE_ASK_CRASHED;
    result->signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
    return true;
}

const char *engine_signal_name(int signal)
{
    switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "a signal";
    }
}
