/* SPDX-License-Identifier: MIT */
/* run.c — the tracing loop: start the program stopped, then step it one
 * instruction at a time, keeping the shadow stack and checking stops.
 *
 * One PTRACE_GETREGS per stop: the registers after a step are those
 * before the next. The timeout is enforced by an interval timer whose
 * SIGALRM (a handler that does nothing, installed without SA_RESTART)
 * interrupts a waitpid blocked in a program's syscall, and by the clock
 * read every few thousand steps; the previous disposition and timer are
 * restored at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PC_CACHE_SIZE (1u << 16)
#define CLOCK_EVERY 4096u

/* Linux x86-64 syscall numbers the tracer watches. */
enum {
    SYS_MMAP = 9, SYS_MPROTECT = 10, SYS_MUNMAP = 11, SYS_MREMAP = 25,
    SYS_CLONE = 56, SYS_CLONE3 = 435,
};

double trace_elapsed(const struct tracer *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->started.tv_sec) +
           (double)(now.tv_nsec - t->started.tv_nsec) / 1e9;
}

/* ---- starting the program ------------------------------------------- */

static void child_exec(char *const argv[], int error_fd, bool quiet)
{
    if (quiet) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
        execvp(argv[0], argv);
    int error = errno;
    ssize_t ignored = write(error_fd, &error, sizeof error);
    (void)ignored;
    _exit(127);
}

/* Starts argv stopped at its first instruction (after exec). */
static enum cfi_status spawn(struct tracer *t, char *const argv[])
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return CFI_E_IO;
    pid_t pid = fork();
    if (pid == 0)
        child_exec(argv, pipe_fds[1], t->options->quiet_program);
    close(pipe_fds[1]);
    int error = 0;
    ssize_t n = pid > 0 ? read(pipe_fds[0], &error, sizeof error) : -1;
    close(pipe_fds[0]);
    int status;
    if (pid < 0 || n > 0) {
        if (pid > 0)
            waitpid(pid, &status, 0);
        t->report->end = TRACE_END_EXEC_FAILED;
        t->report->end_value = pid < 0 ? errno : error;
        return CFI_E_IO;
    }
    t->pid = pid;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
        ptrace(PTRACE_SETOPTIONS, pid, NULL,
               (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC)) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        t->report->end = TRACE_END_TRACE_FAILED;
        t->report->end_value = errno;
        return CFI_E_IO;
    }
    return CFI_OK;
}

/* ---- the shadow stack's transitions --------------------------------- */

void trace_saved_from_regs(const struct user_regs_struct *u, uint64_t *saved)
{
    const unsigned long long values[] = {
        u->rbx, u->rbp, u->r12, u->r13, u->r14, u->r15,
    };
    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++)
        saved[i] = values[i];
}

bool trace_read_word(struct tracer *t, uint64_t addr, uint64_t *value)
{
    uint8_t bytes[8];
    if (trace_mem_read(&t->mem, addr, bytes, 8) != 8)
        return false;
    *value = cfi_load_le(bytes, 8);
    return true;
}

/* A signal handler's first instruction, the kernel's frame below it: it
 * passes (signal, siginfo, ucontext) and the ucontext holds the
 * interrupted rsp, which was the rsp before the step. */
bool trace_handler_entry(struct tracer *t, const struct user_regs_struct *pre,
                         const struct user_regs_struct *post, int sig)
{
    uint64_t gregs = post->rdx + offsetof(ucontext_t, uc_mcontext.gregs);
    uint64_t rsp;
    if (post->rdi != (unsigned long long)sig ||
        !trace_read_word(t, gregs + 8 * REG_RSP, &rsp) || rsp != pre->rsp)
        return false;
    static const int saved_index[] = {
        REG_RBX, REG_RBP, REG_R12, REG_R13, REG_R14, REG_R15,
    };
    struct trace_frame interrupted = {TRACE_FRAME_SIGNAL, 0, rsp, {0}, 0, false};
    bool ok = trace_read_word(t, gregs + 8 * REG_RIP, &interrupted.ra);
    for (unsigned i = 0; i < sizeof saved_index / sizeof saved_index[0]; i++)
        ok = ok && trace_read_word(t, gregs + 8 * (uint64_t)saved_index[i],
                             &interrupted.saved[i]);
    struct trace_frame handler = {TRACE_FRAME_CALL, 0, post->rsp + 8, {0}, 0, false};
    trace_saved_from_regs(post, handler.saved);
    if (!ok || !trace_read_word(t, post->rsp, &handler.ra))
        return false;
    trace_shadow_push(&t->shadow, &interrupted);
    trace_shadow_push(&t->shadow, &handler);
    t->report->signals++;
    return true;
}

/* Checking pauses until the PC leaves the function that moved rsp (the
 * FDE holding it; that one instruction when none does). */
void trace_start_resync(struct tracer *t, uint64_t pc)
{
    t->resyncing = true;
    t->resync_begin = pc;
    t->resync_end = pc + 1;
    const struct trace_mapping *m = trace_maps_find(&t->maps, pc);
    const struct trace_elf *elf = m ? &t->maps.elves[m->elf] : NULL;
    const struct cfi_fde *fde =
        elf && elf->file ? cfi_file_lookup(elf->file, pc - m->bias) : NULL;
    if (fde) {
        t->resync_begin = fde->pc_begin + m->bias;
        t->resync_end = fde->pc_end + m->bias;
    }
}

static void after_step(struct tracer *t, const struct user_regs_struct *pre,
                       const struct user_regs_struct *post,
                       enum trace_insn insn, int delivered)
{
    trace_mem_reset(&t->mem);
    if (delivered && trace_handler_entry(t, pre, post, delivered))
        return;
    if (insn == TRACE_INSN_CALL && post->rsp == pre->rsp - 8) {
        struct trace_frame frame = {TRACE_FRAME_CALL, 0, pre->rsp, {0}, 0, false};
        trace_saved_from_regs(pre, frame.saved);
        if (trace_read_word(t, post->rsp, &frame.ra))
            trace_shadow_push(&t->shadow, &frame);
        if (t->shadow.depth > t->report->max_depth)
            t->report->max_depth = t->shadow.depth;
        return;
    }
    struct trace_frame last;
    if (trace_shadow_pop_to(&t->shadow, post->rsp, &last) > 0 &&
        post->rip != last.ra) {
        t->report->irregular_pops++;
        trace_check_context_restore(&t->checker, pre->rip);
        trace_start_resync(t, post->rip);
    }
    if (insn != TRACE_INSN_SYSCALL)
        return;
    if ((pre->rax == SYS_CLONE || pre->rax == SYS_CLONE3) &&
        (long long)post->rax > 0)
        t->report->clones++;
    if (pre->rax == SYS_MMAP || pre->rax == SYS_MPROTECT ||
        pre->rax == SYS_MUNMAP || pre->rax == SYS_MREMAP)
        trace_maps_reread(&t->maps, &t->mem);
}

/* ---- one stop -------------------------------------------------------- */

static enum trace_insn classify(struct tracer *t, uint64_t pc)
{
    struct trace_pc_entry *e = &t->pc_cache[(pc ^ (pc >> 16)) & (PC_CACHE_SIZE - 1)];
    if (e->valid && e->pc == pc)
        return (enum trace_insn)e->insn;
    uint8_t code[16];
    size_t len = trace_mem_read(&t->mem, pc, code, sizeof code);
    enum trace_insn insn = trace_insn_classify(code, len);
    *e = (struct trace_pc_entry){pc, (uint8_t)insn, true};
    return insn;
}

static void observe(struct tracer *t, const struct user_regs_struct *regs)
{
    if (t->resyncing) {
        if (regs->rip >= t->resync_begin && regs->rip < t->resync_end) {
            t->report->resync++;
            return;
        }
        t->resyncing = false;
    }
    const struct trace_frame *top = trace_shadow_top(&t->shadow);
    if (!top || (t->shadow.overflowed && t->shadow.depth == TRACE_SHADOW_MAX)) {
        t->report->no_frame++;
        return;
    }
    struct cfi_regs callee;
    trace_regs_from_user(regs, &callee);
    trace_check_stop(&t->checker, &callee, top);
}

void trace_on_exec(struct tracer *t)
{
    t->report->execs++;
    t->shadow.depth = 0;
    t->shadow.overflowed = false;
    t->resyncing = false;
    memset(t->pc_cache, 0, PC_CACHE_SIZE * sizeof *t->pc_cache);
    trace_maps_forget(&t->maps);
    trace_mem_reset(&t->mem);
    trace_maps_reread(&t->maps, &t->mem);
}

void trace_stop_program(struct tracer *t, enum trace_end end)
{
    int status;
    kill(t->pid, SIGKILL);
    waitpid(t->pid, &status, __WALL);
    t->report->end = end;
    t->report->end_value = 0;
}

/* ---- the loop --------------------------------------------------------- */


/* The program's next stop; its signal in *sig. TRACE_WAIT_ENDED when it ended
 * (report->end says how) or could not be waited for. */
enum trace_wait trace_wait_stop(struct tracer *t, int *sig)
{
    int status;
    pid_t r;
    /* Bounded: each EINTR comes from the timer, which fires once; the
     * clock then ends the wait. */
    while ((r = waitpid(t->pid, &status, __WALL)) != t->pid) {
        if (r < 0 && errno == EINTR && trace_elapsed(t) < t->options->timeout)
            continue;
        trace_stop_program(t, r < 0 && errno == EINTR ? TRACE_END_TIMEOUT
                                                : TRACE_END_TRACE_FAILED);
        return TRACE_WAIT_ENDED;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        bool exited = WIFEXITED(status);
        t->report->end = exited ? TRACE_END_EXITED : TRACE_END_SIGNALED;
        t->report->end_value = exited ? WEXITSTATUS(status) : WTERMSIG(status);
        return TRACE_WAIT_ENDED;
    }
    *sig = WSTOPSIG(status);
    if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
        return TRACE_WAIT_EXEC;
    return TRACE_WAIT_STOPPED;
}

/* Steps once, delivering any pending signal. */
static enum trace_wait step(struct tracer *t, int *sig, int *delivered)
{
    *delivered = t->pending_signal;
    t->pending_signal = 0;
    if (ptrace(PTRACE_SINGLESTEP, t->pid, NULL, (void *)(long)*delivered)) {
        trace_stop_program(t, TRACE_END_TRACE_FAILED);
        return TRACE_WAIT_ENDED;
    }
    return trace_wait_stop(t, sig);
}

static bool over_budget(struct tracer *t)
{
    const struct trace_options *o = t->options;
    if (t->report->instructions >= o->step_limit) {
        trace_stop_program(t, TRACE_END_STEP_LIMIT);
        return true;
    }
    if (t->report->instructions % CLOCK_EVERY == 0 && trace_elapsed(t) >= o->timeout) {
        trace_stop_program(t, TRACE_END_TIMEOUT);
        return true;
    }
    return false;
}

/* Nothing but steps: the rate checking is compared with. */
static void bare_loop(struct tracer *t)
{
    int sig, delivered;
    while (!over_budget(t)) {
        enum trace_wait w = step(t, &sig, &delivered);
        if (w == TRACE_WAIT_ENDED)
            return;
        if (w == TRACE_WAIT_STOPPED && sig != SIGTRAP)
            t->pending_signal = sig;
        else
            t->report->instructions++;
    }
}

bool trace_get_regs(struct tracer *t, struct user_regs_struct *regs)
{
    if (ptrace(PTRACE_GETREGS, t->pid, NULL, regs) == 0)
        return true;
    trace_stop_program(t, TRACE_END_TRACE_FAILED);
    return false;
}

static void check_loop(struct tracer *t)
{
    struct user_regs_struct regs, post;
    bool restop = false;
    uint64_t sample = t->options->sample ? t->options->sample : 1;
    if (!trace_get_regs(t, &regs))
        return;
    while (!over_budget(t)) {
        trace_mem_reset(&t->mem);
        enum trace_insn insn = classify(t, regs.rip);
        if (!restop && t->report->instructions % sample == 0)
            observe(t, &regs);
        int sig, delivered;
        enum trace_wait w = step(t, &sig, &delivered);
        if (w == TRACE_WAIT_ENDED || !trace_get_regs(t, &post))
            return;
        restop = false;
        if (w == TRACE_WAIT_EXEC) {
            trace_on_exec(t);
        } else if (sig != SIGTRAP && post.rip == regs.rip &&
                   post.rsp == regs.rsp) {
            /* A signal for the program, the instruction not run: it is
             * delivered with the next step. */
            t->pending_signal = sig;
            restop = true;
        } else {
            if (sig != SIGTRAP)
                t->pending_signal = sig;
            t->report->instructions++;
            after_step(t, &regs, &post, insn, delivered);
        }
        regs = post;
    }
}

/* Runs to options.from_symbol; true when stepping is to start there,
 * the function's frame on the shadow stack. */
static bool run_from(struct tracer *t)
{
    switch (trace_run_from(&t->maps, t->options->from_symbol, t->report)) {
    case TRACE_FROM_REACHED:
        break;
    case TRACE_FROM_ENDED:
        t->report->from_missed = true;
        return false;
    case TRACE_FROM_NO_SYMBOL:
        trace_stop_program(t, TRACE_END_NO_SYMBOL);
        return false;
    case TRACE_FROM_FAILED:
    default:
        trace_stop_program(t, errno == EINTR ? TRACE_END_TIMEOUT
                                       : TRACE_END_TRACE_FAILED);
        return false;
    }
    struct user_regs_struct regs;
    if (!trace_get_regs(t, &regs))
        return false;
    struct trace_frame frame = {TRACE_FRAME_CALL, 0, regs.rsp + 8, {0}, 0, false};
    trace_saved_from_regs(&regs, frame.saved);
    trace_mem_reset(&t->mem);
    trace_maps_reread(&t->maps, &t->mem);
    if (!trace_read_word(t, regs.rsp, &frame.ra))
        return true;
    trace_shadow_push(&t->shadow, &frame);
    t->report->max_depth = 1;
    return true;
}

/* ---- the timer -------------------------------------------------------- */

static void on_alarm(int sig)
{
    (void)sig;
}

struct saved_timer {
    struct sigaction action;
    struct itimerval timer;
};

static void arm_timer(double seconds, struct saved_timer *saved)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, &saved->action);
    struct itimerval timer = {{0, 0}, {(time_t)seconds,
                               (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)}};
    if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
        timer.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &timer, &saved->timer);
}

static void disarm_timer(const struct saved_timer *saved)
{
    setitimer(ITIMER_REAL, &saved->timer, NULL);
    sigaction(SIGALRM, &saved->action, NULL);
}

/* ---- entry ------------------------------------------------------------ */

void trace_options_default(struct trace_options *o)
{
    memset(o, 0, sizeof *o);
    o->engines[ENGINE_il] = true;
    o->engines[ENGINE_interp] = true;
    o->engines[ENGINE_compiled] = true;
    o->check = true;
    o->sample = 1;
    o->step_limit = 100000000;
    o->timeout = 600;
}

static bool tracer_init(struct tracer *t, const struct trace_options *o,
                        struct trace_report *report)
{
    memset(t, 0, sizeof *t);
    t->options = o;
    t->report = report;
    t->pc_cache = calloc(PC_CACHE_SIZE, sizeof *t->pc_cache);
    char tmp[] = "/tmp/cfisem-trace-XXXXXX";
    t->maps.tmp_dir = mkdtemp(tmp) ? strdup(tmp) : NULL;
    t->maps.options = o;
    t->maps.report = report;
    t->checker = (struct trace_checker){TRACE_ARCH, o, report, &t->maps,
                                        &t->mem, 0, 0};
    for (int id = 0; id < ENGINE_COUNT; id++)
        report->engine_asked[id] = o->check && o->engines[id];
    return t->pc_cache && trace_shadow_init(&t->shadow);
}

static void remove_tmp_dir(char *dir)
{
    if (!dir)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/vdso.so", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* The ELFs seen and their counts, into the report. */
static void count_elves(struct tracer *t)
{
    struct trace_report *r = t->report;
    r->elves = calloc(t->maps.nelves ? t->maps.nelves : 1, sizeof *r->elves);
    for (size_t i = 0; r->elves && i < t->maps.nelves; i++) {
        r->elves[r->nelves].path = strdup(t->maps.elves[i].path);
        r->elves[r->nelves].checked = t->maps.elves[i].checked;
        if (r->elves[r->nelves].path)
            r->nelves++;
    }
}

static void tracer_free(struct tracer *t)
{
    count_elves(t);
    trace_maps_free(&t->maps);
    trace_shadow_free(&t->shadow);
    free(t->pc_cache);
    remove_tmp_dir(t->maps.tmp_dir);
}

enum cfi_status trace_run(char *const argv[], const struct trace_options *o,
                          struct trace_report *report)
{
    memset(report, 0, sizeof *report);
    struct tracer *t = malloc(sizeof *t);
    if (!t || !tracer_init(t, o, report)) {
        if (t)
            tracer_free(t);
        free(t);
        return CFI_E_NOMEM;
    }
    clock_gettime(CLOCK_MONOTONIC, &t->started);
    char a64_path[4096];
    if (trace_program_is_a64(argv[0], a64_path, sizeof a64_path)) {
        t->checker.arch = report->arch = &cfi_arch_aarch64;
        trace_a64_run(t, argv, a64_path);
        report->seconds = trace_elapsed(t);
        enum cfi_status a64_status =
            report->end == TRACE_END_EXEC_FAILED ? CFI_E_IO : CFI_OK;
        tracer_free(t);
        free(t);
        return a64_status;
    }
    struct saved_timer saved;
    arm_timer(o->timeout, &saved);
    enum cfi_status status = spawn(t, argv);
    if (status == CFI_OK) {
        t->mem.pid = t->maps.pid = t->pid;
        if (trace_maps_reread(&t->maps, &t->mem) != CFI_OK)
            trace_stop_program(t, TRACE_END_TRACE_FAILED);
        else if (!o->from_symbol || run_from(t))
            o->at != TRACE_AT_STEP ? trace_rows_loop(t)
                       : o->check ? check_loop(t) : bare_loop(t);
    }
    disarm_timer(&saved);
    report->seconds = trace_elapsed(t);
    tracer_free(t);
    free(t);
    return status;
}
