/* SPDX-License-Identifier: MIT */
/* remote.c — an eh_elf of another machine (AArch64), run by the eh_elf
 * runner under qemu-aarch64 (compile/runner/protocol.h).
 *
 * One runner per loaded eh_elf, started when it is loaded (qemu's
 * start-up, tens of milliseconds, is paid once, not per request), and
 * again in a process forked after that: a child never speaks over its
 * parent's socket, whose conversation it could leave half done (the
 * harness's isolated children, validate's). The runner's end of a stream
 * socket is its standard input and output; writes to it never raise
 * SIGPIPE (MSG_NOSIGNAL). A runner that ends, or answers anything but
 * the protocol, fails that request with CFI_E_UNSUPPORTED and is started
 * again for the next; one killed by a signal (the eh_elf's code crashed
 * under qemu) raises that signal here, as the crash of an eh_elf loaded
 * in this process would. Nothing waits without end on a runner: it
 * answers or its socket closes, and the harness's watchdog covers the
 * rest. A loaded eh_elf serves one request at a time. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "runner/protocol.h"

extern char **environ;

_Static_assert(RN_NREGS == CFI_NREGS &&
                   (int)RN_REG_UNKNOWN == CFI_REG_UNKNOWN &&
                   (int)RN_REG_VALUE == CFI_REG_VALUE &&
                   (int)RN_REG_UNDEFINED == CFI_REG_UNDEFINED,
               "the protocol carries cfi_regs");

#define SYSROOT "/usr/aarch64-linux-gnu"
#define SYSROOT_LOADER SYSROOT "/lib/ld-linux-aarch64.so.1"

struct cg_remote {
    char *eh_elf;         /* the eh_elf's path */
    char *qemu;           /* the emulator's path */
    char *runner;         /* the runner's path */
    pid_t owner;          /* the process that started the runner */
    pid_t pid;            /* the runner (qemu), or -1 */
    int fd;               /* our end of its socket, or -1 */
};

static enum cfi_status fail(struct cfi_diag *diag, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(diag, status, CFI_NO_OFFSET, message);
}

/* ------------------------------------------------------------------ */
/* Finding the emulator and the runner                                  */
/* ------------------------------------------------------------------ */

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

/* `name` as execvp would find it: a path when it has a '/', else the
 * first executable of that name in $PATH. */
static char *find_program(const char *name)
{
    if (strchr(name, '/'))
        return executable(name) ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    char *dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    char candidate[PATH_MAX];
    char *found = NULL, *saved = NULL;
    /* strtok_r: engines are opened by several threads at once. */
    for (char *dir = dirs ? strtok_r(dirs, ":", &saved) : NULL;
         dir && !found; dir = strtok_r(NULL, ":", &saved)) {
        int n = snprintf(candidate, sizeof candidate, "%s/%s",
                         *dir ? dir : ".", name);
        if (n > 0 && (size_t)n < sizeof candidate && executable(candidate))
            found = strdup(candidate);
    }
    free(dirs);
    return found;
}

/* A process the kernel started with more privileges than its caller
 * (setuid, setgid, file capabilities: AT_SECURE) takes no program from
 * its environment. */
static bool secure_process(void)
{
    return getauxval(AT_SECURE) != 0;
}

/* Owned by the effective user or root and writable by no one else. */
static bool owned_and_private(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 &&
           (st.st_uid == geteuid() || st.st_uid == 0) &&
           !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* A runner that no other user could have put or changed there: the
 * file and its folder are the user's or root's, writable by no one
 * else. */
static bool trusted_runner(const char *path)
{
    char folder[PATH_MAX];
    if (snprintf(folder, sizeof folder, "%s", path) >= (int)sizeof folder)
        return false;
    char *slash = strrchr(folder, '/');
    if (slash == folder)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(folder, sizeof folder, ".");
    return executable(path) && owned_and_private(path) &&
           owned_and_private(folder);
}

/* $CFISEM_AARCH64_RUNNER (not in a secure process), else the runner
 * found from where the running program is, never from the environment:
 * aarch64/eh_elf_runner beside it or one folder up (build/cfisem and
 * build/tests/check_* find build/aarch64/eh_elf_runner), or
 * ../lib/cfisem/aarch64/eh_elf_runner (PREFIX/bin/cfisem finds the one
 * make install puts in PREFIX/lib/cfisem). Each must be trusted. */
static char *find_runner(void)
{
    const char *given = secure_process() ? NULL
                                         : getenv("CFISEM_AARCH64_RUNNER");
    if (given && *given)
        return trusted_runner(given) ? strdup(given) : NULL;
    char self[PATH_MAX], candidate[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    static const char *const tails[] = {
        "/aarch64/eh_elf_runner", "/../aarch64/eh_elf_runner",
        "/../lib/cfisem/aarch64/eh_elf_runner"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        snprintf(candidate, sizeof candidate, "%s%s", self, tails[i]);
        if (trusted_runner(candidate))
            return strdup(candidate);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The conversation                                                     */
/* ------------------------------------------------------------------ */

/* Ends the runner: its input closes, and it is reaped. It may be in the
 * middle of an answer nobody reads: it is killed, not waited for. Its
 * wait status in *status (0 when unknown). */
static void stop(struct cg_remote *remote, int *status)
{
    int ignored;
    if (!status)
        status = &ignored;
    *status = 0;
    if (remote->fd >= 0)
        close(remote->fd);
    if (remote->pid > 0 && remote->owner == getpid()) {
        kill(remote->pid, SIGKILL);
        while (waitpid(remote->pid, status, 0) < 0 && errno == EINTR)
            continue;
    }
    remote->fd = -1;
    remote->pid = -1;
}

/* The signal that ended the runner, once its socket is closed: 0 when
 * it exited, or is still there after RUNNER_GRACE_MS (it is then
 * killed by stop()). */
#define RUNNER_GRACE_MS 2000
static int runner_signal(struct cg_remote *remote)
{
    if (remote->pid <= 0 || remote->owner != getpid())
        return 0;
    for (int waited = 0; waited < RUNNER_GRACE_MS; waited++) {
        int status = 0;
        pid_t done = waitpid(remote->pid, &status, WNOHANG);
        if (done == remote->pid) {
            remote->pid = -1;
            return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        }
        if (done < 0 && errno != EINTR)
            return 0;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

static const char *hello_text(uint32_t status)
{
    switch (status) {
    case RN_E_LOAD:
        return "the AArch64 runner cannot load the eh_elf (dlopen failed)";
    case RN_E_NOT_EH_ELF:
        return "not an eh_elf of cfisem's full ABI (eh_elf_ident)";
    case RN_E_VERSION:
        return "eh_elf built for another ABI version (rebuild it)";
    case RN_E_MACHINE:
        return "eh_elf of another machine (eh_elf_machine)";
    case RN_E_ENTRY:
        return "eh_elf has no entry point";
    default:
        return "the AArch64 runner answered garbage";
    }
}

static pid_t spawn_runner(const struct cg_remote *remote, int fd)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fd, 0);
    posix_spawn_file_actions_adddup2(&actions, fd, 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {remote->qemu, "-L", SYSROOT, remote->runner,
                    remote->eh_elf, NULL};
    pid_t pid;
    int error = posix_spawn(&pid, remote->qemu, &actions, NULL, argv,
                            environ);
    posix_spawn_file_actions_destroy(&actions);
    return error ? -1 : pid;
}

/* Starts the runner and reads its hello. */
static enum cfi_status start(struct cg_remote *remote, struct cfi_diag *diag)
{
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return fail(diag, CFI_E_IO, "cannot create a socket for the runner");
    remote->owner = getpid();
    remote->pid = spawn_runner(remote, fds[1]);
    close(fds[1]);
    remote->fd = fds[0];
    if (remote->pid < 0) {
        stop(remote, NULL);
        return fail(diag, CFI_E_UNSUPPORTED, "cannot run qemu-aarch64");
    }
    struct rn_hello hello;
    if (!rn_read_all(remote->fd, &hello, sizeof hello)) {
        stop(remote, NULL);
        return fail(diag, CFI_E_UNSUPPORTED,
                    "the AArch64 runner ended before it answered "
                    "(qemu-aarch64 -L " SYSROOT ")");
    }
    if (hello.magic != RN_MAGIC ||
        (hello.status == RN_READY &&
         (hello.machine != EH_ELF_MACHINE_AARCH64 ||
          hello.nregs > RN_REPORTED_MAX)))
        hello.status = ~0u; /* not the runner of an AArch64 eh_elf */
    if (hello.status != RN_READY) {
        stop(remote, NULL);
        return fail(diag, CFI_E_UNSUPPORTED, hello_text(hello.status));
    }
    return CFI_OK;
}

void cg_remote_close(struct cg_remote *remote)
{
    if (!remote)
        return;
    stop(remote, NULL);
    free(remote->eh_elf);
    free(remote->qemu);
    free(remote->runner);
    free(remote);
}

enum cfi_status cg_remote_open(const char *path, struct cg_remote **result,
                               struct cfi_diag *diag)
{
    /* A secure process runs the system's emulator, whatever its
     * environment says. */
    const char *qemu = secure_process() ? "/usr/bin/qemu-aarch64"
                                        : getenv("CFISEM_QEMU_AARCH64");
    struct cg_remote *remote = calloc(1, sizeof *remote);
    if (!remote)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    *remote = (struct cg_remote){.pid = -1, .fd = -1};
    remote->eh_elf = strdup(path);
    remote->qemu = find_program(qemu && *qemu ? qemu : "qemu-aarch64");
    remote->runner = find_runner();
    enum cfi_status status = CFI_OK;
    if (!remote->eh_elf)
        status = fail(diag, CFI_E_NOMEM, "out of memory");
    else if (!remote->qemu)
        status = fail(diag, CFI_E_UNSUPPORTED,
                      "an AArch64 eh_elf runs under qemu-aarch64 (package "
                      "qemu-user), which is not there "
                      "($CFISEM_QEMU_AARCH64, else PATH)");
    else if (access(SYSROOT_LOADER, R_OK) != 0)
        status = fail(diag, CFI_E_UNSUPPORTED,
                      "an AArch64 eh_elf needs the AArch64 C library in "
                      SYSROOT " (package gcc-aarch64-linux-gnu brings "
                      "it), which is not there");
    else if (!remote->runner)
        status = fail(diag, CFI_E_UNSUPPORTED,
                      "no AArch64 eh_elf runner (cfisem built without "
                      "gcc-aarch64-linux-gnu: aarch64/eh_elf_runner beside "
                      "cfisem or ../lib/cfisem/aarch64/, writable by no "
                      "other user, or $CFISEM_AARCH64_RUNNER)");
    else
        status = start(remote, diag);
    if (status != CFI_OK) {
        cg_remote_close(remote);
        return status;
    }
    *result = remote;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Unwinding                                                            */
/* ------------------------------------------------------------------ */

static void make_request(const struct cfi_request *request,
                         struct rn_request *out)
{
    out->magic = RN_MAGIC;
    out->va_bits = request->va_bits;
    out->pc = cfi_lookup_pc(request->pc, request->caller_frame);
    memcpy(out->value, request->callee->value, sizeof out->value);
    memcpy(out->status, request->callee->status, sizeof out->status);
}

/* The runner's memory reads, answered from the request's reader, until
 * it sends the frame. */
static bool converse(struct cg_remote *remote,
                     const struct cfi_request *request, struct rn_frame *frame)
{
    static const unsigned step_bound = 1u << 20; /* reads per frame */
    for (unsigned step = 0; step < step_bound; step++) {
        struct rn_read ask;
        if (!rn_read_all(remote->fd, &ask, sizeof ask))
            return false;
        if (ask.tag == RN_FRAME)
            return rn_read_all(remote->fd, frame, sizeof *frame) &&
                   frame->nregs <= RN_REPORTED_MAX;
        if (ask.tag != RN_READ || ask.size == 0 || ask.size > 8)
            return false;
        struct rn_memory answer = {0, 0, 0};
        answer.failed = request->memory.read(request->memory.env, ask.addr,
                                             ask.size, &answer.value) !=
                        CFI_OK;
        if (!rn_send_all(remote->fd, &answer, sizeof answer))
            return false;
    }
    return false;
}

static void frame_failed(struct cfi_frame *frame, const char *message)
{
    frame->status = CFI_E_UNSUPPORTED;
    frame->diag = (struct cfi_diag){CFI_E_UNSUPPORTED, message,
                                    CFI_NO_OFFSET, -1};
    frame->cfa = 0;
    frame->signal_frame = false;
    frame->ra_b_key = false;
    memset(frame->caller.value, 0, sizeof frame->caller.value);
    memset(frame->caller.status, CFI_REG_UNDEFINED,
           sizeof frame->caller.status);
}

/* The runner ended mid-request: its signal is raised here when it was
 * killed by one; else (or when the signal returns) the request fails,
 * and the next one starts a new runner. */
static enum cfi_status runner_lost(struct cg_remote *remote,
                                   struct cfi_frame *frame)
{
    close(remote->fd);
    remote->fd = -1;
    int signal = runner_signal(remote);
    stop(remote, NULL);
    if (signal != 0)
        raise(signal);
    frame_failed(frame, "the AArch64 eh_elf runner ended or answered "
                        "garbage");
    return frame->status;
}

/* The eh_elf's frame as cfi_frame: registers 0 .. nregs-1 from it (the
 * value of one without value is 0), the others undefined. */
static void frame_of(const struct rn_frame *in, struct cfi_frame *frame)
{
    frame->cfa = in->cfa;
    frame->signal_frame = in->signal_frame != 0;
    frame->ra_b_key = in->ra_b_key != 0;
    memset(frame->caller.value, 0, sizeof frame->caller.value);
    memset(frame->caller.status, CFI_REG_UNDEFINED,
           sizeof frame->caller.status);
    for (unsigned r = 0; r < in->nregs; r++) {
        bool known = in->known >> r & 1, undefined = in->undefined >> r & 1;
        frame->caller.value[r] = known ? in->value[r] : 0;
        frame->caller.status[r] = known ? CFI_REG_VALUE
                                  : undefined ? CFI_REG_UNDEFINED
                                              : CFI_REG_UNKNOWN;
    }
}

enum cfi_status cg_remote_unwind(struct cg_remote *remote,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame)
{
    struct cfi_diag diag;
    struct rn_frame out;
    if (remote->owner != getpid() || remote->fd < 0) {
        stop(remote, NULL); /* a parent's runner: its socket only */
        if (start(remote, &diag) != CFI_OK) {
            frame_failed(frame, diag.message);
            return frame->status;
        }
    }
    struct rn_request ask;
    make_request(request, &ask);
    if (!rn_send_all(remote->fd, &ask, sizeof ask) ||
        !converse(remote, request, &out))
        return runner_lost(remote, frame);
    if (out.error != EH_ELF_OK)
        return cg_frame_error(frame, out.error, out.error_reg,
                              out.error_offset);
    frame->status = CFI_OK;
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    frame_of(&out, frame);
    return CFI_OK;
}
