/* SPDX-License-Identifier: MIT */
/* qemu.c — tracing an AArch64 program: qemu-aarch64 runs it with its
 * gdbstub on a free local port (`-g PORT -L /usr/aarch64-linux-gnu`,
 * qemu's stdout and stderr those of the program, the protocol on the
 * socket), and the tracer steps it over the remote protocol (rsp.h):
 * `g` for the registers, `m` for the memory (trace_mem's reader), `s`
 * for one instruction.
 *
 * The shadow stack on AArch64 (trace.h has the x86-64 rules):
 *   - bl, blr, blraa...: a frame is pushed when the PC left the next
 *     instruction; its return address is x30 after the step, its CFA the
 *     sp at the call, its callee-saved x19-x29 as they were;
 *   - ret, retaa, retab landing on the top frame's return address pops
 *     it; any step that leaves sp above a frame's CFA pops that frame (a
 *     leaf keeps sp at the CFA: only above pops), irregularly when the PC
 *     is not the frame's return address (longjmp): checking pauses until
 *     the PC leaves the function;
 *   - b, br (a tail call) keeps the frame;
 *   - paciasp/pacibsp (and the z forms) mark the top frame's return
 *     address signed, autiasp/autibsp unsigned: the truth of the row's
 *     RA_SIGN_STATE.
 * An exclusive sequence (ldxr ... stxr: glibc's locks, atomics without
 * LSE) is not stepped: each step clears the exclusive monitor, the
 * store fails and the loop retries for ever. It runs to a breakpoint
 * (`Z0`) at each of its exits (insn.c) with `c`, unchecked inside: it
 * has no call, no return and no CFI of its own.
 * The executable's ELF is placed from its entry point (AT_ENTRY, or the
 * first stop of a static executable); a dynamic program's loader and
 * libraries as qemu_dyn.c finds them. A signal's delivery pushes the
 * interrupted frame and the handler's (from the rt_sigframe), its
 * rt_sigreturn pops them (after_svc: qemu-user 7.2 runs one more
 * instruction in the step of an svc). Each reply waits at most
 * TRACE_A64_REPLY seconds (and never past the run's timeout): a qemu
 * that stops answering is killed. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "qemu_dyn.h"
#include "rsp.h"

#define TRACE_A64_REPLY 10.0
#define A64_QEMU "qemu-aarch64"
#define A64_CLOCK_EVERY 1024u
/* A PC in no known object rescans the loader's list at most this often
 * (in instructions): code outside every object (none under qemu-user
 * 7.2, which maps no vDSO) would otherwise rescan at every stop. */
#define A64_RESCAN_EVERY 1024u

struct a64 {
    struct tracer *t;
    struct rsp rsp;
    pid_t qemu;
    uint64_t regs[RSP_A64_NREGS];
    /* A dynamic program: its ELF, its bias, the last rescan. */
    bool dynamic;
    size_t program;
    uint64_t program_bias;
    uint64_t scanned_at;
    bool scanned;
};

/* ---- which program ------------------------------------------------- */

static bool find_in_path(const char *name, char *path, size_t size)
{
    if (strchr(name, '/')) {
        snprintf(path, size, "%s", name);
        return access(path, X_OK) == 0;
    }
    const char *dirs = getenv("PATH");
    if (!dirs)
        return false;
    /* Bounded by the length of PATH. */
    while (*dirs) {
        size_t len = strcspn(dirs, ":");
        snprintf(path, size, "%.*s/%s", (int)len, dirs, name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            access(path, X_OK) == 0)
            return true;
        dirs += len + (dirs[len] == ':');
    }
    return false;
}

bool trace_program_is_a64(const char *name, char *path, size_t size)
{
    if (!find_in_path(name, path, size))
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr h;
    bool a64 = fd >= 0 && read(fd, &h, sizeof h) == (ssize_t)sizeof h &&
               !memcmp(h.e_ident, ELFMAG, SELFMAG) &&
               h.e_ident[EI_CLASS] == ELFCLASS64 && h.e_machine == EM_AARCH64;
    if (fd >= 0)
        close(fd);
    return a64;
}

/* ---- qemu ----------------------------------------------------------- */

static const char *sysroot_of(const struct trace_options *o)
{
    return o->sysroot ? o->sysroot : TRACE_A64_SYSROOT;
}

static void child_exec(char *const argv[], int port, bool quiet,
                       const char *sysroot)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        if (quiet) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        close(null);
    }
    size_t n = 0;
    while (argv[n])
        n++;
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    char **args = calloc(n + 6, sizeof *args);
    if (!args)
        _exit(127);
    args[0] = A64_QEMU;
    args[1] = "-g";
    args[2] = port_text;
    args[3] = "-L";
    args[4] = (char *)sysroot;
    memcpy(args + 5, argv, n * sizeof *argv);
    execvp(args[0], args);
    _exit(127);
}

static void kill_qemu(struct a64 *a)
{
    if (a->qemu <= 0)
        return;
    int status;
    kill(a->qemu, SIGKILL);
    waitpid(a->qemu, &status, 0);
    a->qemu = 0;
}

static void end(struct a64 *a, enum trace_end how, int value)
{
    a->t->report->end = how;
    a->t->report->end_value = value;
    rsp_close(&a->rsp);
    kill_qemu(a);
}

/* Ends the run after a failed exchange: silence is reported as such. */
static void lost(struct a64 *a, enum rsp_status s)
{
    end(a, s == RSP_SILENT ? TRACE_END_TARGET_SILENT
                           : TRACE_END_TRACE_FAILED, 0);
}

static size_t read_target(void *env, uint64_t addr, void *out, size_t len)
{
    return rsp_read_mem(env, addr, out, len);
}

static bool start(struct a64 *a, char *const argv[])
{
    int port = rsp_free_port();
    a->qemu = port ? fork() : -1;
    if (a->qemu == 0)
        child_exec(argv, port, a->t->options->quiet_program,
                   sysroot_of(a->t->options));
    if (a->qemu < 0) {
        end(a, TRACE_END_EXEC_FAILED, errno ? errno : EADDRNOTAVAIL);
        return false;
    }
    double timeout = a->t->options->timeout < TRACE_A64_REPLY
                         ? a->t->options->timeout : TRACE_A64_REPLY;
    enum rsp_status s = rsp_connect(&a->rsp, port, timeout);
    int status;
    if (s != RSP_OK && waitpid(a->qemu, &status, WNOHANG) == a->qemu) {
        a->qemu = 0;
        end(a, TRACE_END_EXEC_FAILED, ENOENT);
        return false;
    }
    if (s != RSP_OK) {
        lost(a, s);
        return false;
    }
    a->t->mem.read = read_target;
    a->t->mem.read_env = &a->rsp;
    return true;
}

/* ---- registers and frames ------------------------------------------- */

static bool get_regs(struct a64 *a)
{
    enum rsp_status s = rsp_a64_regs(&a->rsp, a->regs);
    if (s != RSP_OK)
        lost(a, s);
    return s == RSP_OK;
}

static void to_cfi_regs(const uint64_t *r, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < RSP_A64_NREGS; reg++)
        cfi_regs_set(regs, reg, r[reg]);
}

static void saved_from(const uint64_t *r, uint64_t *saved)
{
    const struct cfi_arch *arch = &cfi_arch_aarch64;
    for (unsigned i = 0; i < arch->ncallee_saved && i < TRACE_NSAVED; i++)
        saved[i] = r[arch->callee_saved_list[i]];
}

static enum trace_insn classify(struct tracer *t, uint64_t pc)
{
    uint8_t code[4];
    if (trace_mem_read(&t->mem, pc, code, 4) != 4)
        return TRACE_INSN_OTHER;
    return trace_insn_classify_a64((uint32_t)cfi_load_le(code, 4));
}

enum { A64_SP = 31, A64_PC = 32, A64_LR = 30 };

/* The signal frame under qemu-user, as under Linux (arch/arm64: struct
 * rt_sigframe at the handler's sp: a siginfo of 128 bytes, then the
 * ucontext, whose uc_mcontext, a struct sigcontext, starts at its byte
 * 176: fault_address, then x0-x30, sp, pc). x1 and x2 point there only
 * for an SA_SIGINFO handler. */
enum { A64_SC_REGS = 128 + 176 + 8, A64_NR_RT_SIGRETURN = 139 };

static bool read_u64(struct tracer *t, uint64_t addr, uint64_t *value)
{
    uint8_t bytes[8];
    if (trace_mem_read(&t->mem, addr, bytes, 8) != 8)
        return false;
    *value = cfi_load_le(bytes, 8);
    return true;
}

/* A handler's first instruction after the step that delivered `sig`:
 * the frame's saved sp and pc are those before the step (the signal's
 * number in the protocol is GDB's, not the target's: not compared).
 * Two frames are pushed: the interrupted one (a signal frame: its PC
 * exact, its CFA the interrupted sp, its x19-x29 as they were), and the
 * handler's (its return address x30, the trampoline's). */
static bool handler_entry(struct tracer *t, const uint64_t *pre,
                          const uint64_t *post, int sig)
{
    uint64_t sp, pc, regs = post[A64_SP] + A64_SC_REGS;
    (void)sig; /* the protocol's number (GDB's), not the target's */
    if (post[A64_PC] == pre[A64_PC] + 4 || !read_u64(t, regs + 8 * 31, &sp) ||
        sp != pre[A64_SP] || !read_u64(t, regs + 8 * 32, &pc) ||
        pc != pre[A64_PC])
        return false;
    struct trace_frame interrupted = {TRACE_FRAME_SIGNAL, pc, sp, {0}, 0,
                                      false};
    saved_from(pre, interrupted.saved);
    struct trace_frame handler = {TRACE_FRAME_CALL, post[A64_LR],
                                  post[A64_SP], {0}, 0, false};
    saved_from(post, handler.saved);
    trace_shadow_push(&t->shadow, &interrupted);
    trace_shadow_push(&t->shadow, &handler);
    t->report->signals++;
    if (t->shadow.depth > t->report->max_depth)
        t->report->max_depth = t->shadow.depth;
    return true;
}

static void irregular(struct tracer *t, uint64_t pre_pc, uint64_t post_pc)
{
    t->report->irregular_pops++;
    trace_check_context_restore(&t->checker, pre_pc);
    trace_start_resync(t, post_pc);
}

/* The shadow stack after one instruction, insn, took the machine from
 * pre to post. */
static void follow(struct tracer *t, const uint64_t *pre,
                   const uint64_t *post, enum trace_insn insn)
{
    struct trace_shadow *sh = &t->shadow;
    if (insn == TRACE_INSN_CALL && post[A64_PC] != pre[A64_PC] + 4) {
        struct trace_frame frame = {TRACE_FRAME_CALL, post[A64_LR],
                                    pre[A64_SP], {0}, 0, false};
        saved_from(pre, frame.saved);
        trace_shadow_push(sh, &frame);
        if (sh->depth > t->report->max_depth)
            t->report->max_depth = sh->depth;
        return;
    }
    struct trace_frame *top = sh->depth ? &sh->frames[sh->depth - 1] : NULL;
    if (top && insn == TRACE_INSN_SIGN_RA)
        top->ra_signed = true;
    if (top && insn == TRACE_INSN_AUTH_RA)
        top->ra_signed = false;
    if (top && insn == TRACE_INSN_RET && post[A64_PC] == top->ra) {
        sh->depth--;
        return;
    }
    struct trace_frame last;
    if (post[A64_SP] > 0 &&
        trace_shadow_pop_to(sh, post[A64_SP] - 1, &last) > 0 &&
        post[A64_PC] != last.ra)
        irregular(t, pre[A64_PC], post[A64_PC]);
    else if (insn == TRACE_INSN_RET && top)
        irregular(t, pre[A64_PC], post[A64_PC]);
}

/* An rt_sigreturn (x8 = 139, qemu's trampoline `mov x8, #139; svc #0`
 * or the program's own restorer) back to the interrupted context the
 * top frame records: the rt_sigframe is at sp (the handler returned to
 * the trampoline), its sigcontext's sp and pc those of the signal
 * frame. The frame is popped and *pc, *sp say where the program
 * resumed; false for any other svc, or a context the handler changed
 * (then the general rules follow the step). */
static bool returned_from_signal(struct tracer *t, const uint64_t *pre,
                                 uint64_t *pc, uint64_t *sp)
{
    const struct trace_frame *top = trace_shadow_top(&t->shadow);
    uint64_t regs = pre[A64_SP] + A64_SC_REGS, was_sp, was_pc;
    if (pre[8] != A64_NR_RT_SIGRETURN || !top ||
        top->kind != TRACE_FRAME_SIGNAL ||
        !read_u64(t, regs + 8 * 31, &was_sp) ||
        !read_u64(t, regs + 8 * 32, &was_pc) || was_sp != top->cfa ||
        was_pc != top->ra)
        return false;
    *pc = was_pc;
    *sp = was_sp;
    t->shadow.depth--;
    return true;
}

/* A step of an svc. qemu-user 7.2 (Debian 12) runs one more instruction
 * in the same step: the one the syscall returns to (the next, or the
 * interrupted one after rt_sigreturn), so `svc #0; ret` (geteuid,
 * getpid) returns within the step. That instruction is followed as if
 * stepped from where the syscall left the machine (an svc keeps sp and
 * x19-x30); a stub that stops right after the syscall is followed as
 * well. */
static void after_svc(struct tracer *t, const uint64_t *pre,
                      const uint64_t *post)
{
    uint64_t at[RSP_A64_NREGS], pc = pre[A64_PC] + 4, sp = pre[A64_SP];
    bool back = returned_from_signal(t, pre, &pc, &sp);
    if (post[A64_PC] == pc) {
        if (!back)
            follow(t, pre, post, TRACE_INSN_SYSCALL);
        return;
    }
    memcpy(at, back ? post : pre, sizeof at);
    at[A64_PC] = pc;
    at[A64_SP] = sp;
    t->report->instructions++;
    follow(t, at, post, classify(t, pc));
}

static void after_step(struct tracer *t, const uint64_t *pre,
                       const uint64_t *post, enum trace_insn insn,
                       int delivered)
{
    trace_mem_reset(&t->mem);
    if (delivered && handler_entry(t, pre, post, delivered))
        return;
    if (insn == TRACE_INSN_SYSCALL)
        after_svc(t, pre, post);
    else
        follow(t, pre, post, insn);
}

static void observe(struct tracer *t, const uint64_t *r)
{
    if (t->resyncing) {
        if (r[A64_PC] >= t->resync_begin && r[A64_PC] < t->resync_end) {
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
    to_cfi_regs(r, &callee);
    trace_check_stop(&t->checker, &callee, top);
}

/* ---- where the objects are ---------------------------------------- */

/* The loader's objects, placed as the walk finds them. */
static void found_object(void *env, const char *name, uint64_t bias)
{
    struct tracer *t = env;
    char path[4096];
    size_t index;
    trace_dyn_host_path(sysroot_of(t->options), name, path, sizeof path);
    trace_maps_add_at(&t->maps, &t->mem, path, bias, &index);
}

static void rescan(struct a64 *a)
{
    struct tracer *t = a->t;
    uint64_t now = t->report->instructions;
    if (!a->dynamic || trace_maps_find(&t->maps, a->regs[A64_PC]) ||
        (a->scanned && now - a->scanned_at < A64_RESCAN_EVERY))
        return;
    a->scanned = true;
    a->scanned_at = now;
    const struct cfi_file *program = t->maps.elves[a->program].file;
    trace_dyn_objects(&t->mem, program, a->program_bias, found_object, t);
}

/* A dynamic program's loader, placed at the auxiliary vector's AT_BASE. */
static void place_loader(struct a64 *a, const uint8_t *auxv, size_t n,
                         size_t program, uint64_t program_bias)
{
    struct tracer *t = a->t;
    const struct trace_elf *elf = &t->maps.elves[program];
    char interp[4096], path[4096];
    uint64_t base;
    if (!elf->file || !trace_dyn_interp(elf->file, interp, sizeof interp) ||
        !trace_dyn_auxv(auxv, n, AT_BASE, &base))
        return;
    trace_dyn_host_path(sysroot_of(t->options), interp, path, sizeof path);
    size_t index;
    if (trace_maps_add_at(&t->maps, &t->mem, path, base, &index) != CFI_OK)
        return;
    a->dynamic = true;
    a->program = program;
    a->program_bias = program_bias;
}

/* The program placed from its entry point: the auxiliary vector's
 * AT_ENTRY, or the first stop's PC (a static executable's entry) when
 * the stub gives no vector. */
static bool place_executable(struct a64 *a, const char *path)
{
    struct tracer *t = a->t;
    struct rsp_stop stop;
    enum rsp_status s = rsp_stop_reply(&a->rsp, "?", &stop);
    if (s != RSP_OK || !get_regs(a)) {
        if (s != RSP_OK)
            lost(a, s);
        return false;
    }
    uint8_t auxv[4096];
    size_t n = rsp_xfer_read(&a->rsp, "auxv", auxv, sizeof auxv);
    uint64_t entry = a->regs[A64_PC];
    if (n)
        trace_dyn_auxv(auxv, n, AT_ENTRY, &entry);
    size_t index;
    if (trace_maps_add_file(&t->maps, &t->mem, path, entry, &index) ==
        CFI_OK)
        place_loader(a, auxv, n, index,
                     entry - t->maps.elves[index].file->entry);
    return true;
}

/* ---- the loop ------------------------------------------------------- */

static bool over_budget(struct a64 *a)
{
    struct tracer *t = a->t;
    if (t->report->instructions >= t->options->step_limit) {
        end(a, TRACE_END_STEP_LIMIT, 0);
        return true;
    }
    if (t->report->instructions % A64_CLOCK_EVERY == 0 &&
        trace_elapsed(t) >= t->options->timeout) {
        end(a, TRACE_END_TIMEOUT, 0);
        return true;
    }
    return false;
}

/* One request that resumes the program (s, S, c, C) and its stop
 * reply; false when the run ended. A signal other than SIGTRAP becomes
 * *pending, passed on at the next resumption. */
static bool step_with(struct a64 *a, const char *packet, int *pending)
{
    struct rsp_stop stop;
    enum rsp_status s = rsp_stop_reply(&a->rsp, packet, &stop);
    if (s != RSP_OK) {
        lost(a, s);
        return false;
    }
    if (stop.kind != RSP_STOPPED) {
        bool exited = stop.kind == RSP_EXITED;
        end(a, exited ? TRACE_END_EXITED : TRACE_END_SIGNALED, stop.value);
        return false;
    }
    if (stop.value != SIGTRAP)
        *pending = stop.value;
    return true;
}

/* One step, passing a pending signal; false when the run ended. */
static bool step(struct a64 *a, int *pending)
{
    char packet[16] = "s";
    if (*pending)
        snprintf(packet, sizeof packet, "vCont;S%02x", *pending & 0xff);
    *pending = 0;
    return step_with(a, packet, pending);
}

/* Sets (Z0) or removes (z0) a breakpoint at each exit: 1 done, 0 the
 * stub refused one, -1 the connection was lost (the run ended). */
static int breakpoints(struct a64 *a, char op, const uint64_t *exits,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char packet[40];
        snprintf(packet, sizeof packet, "%c0,%llx,4", op,
                 (unsigned long long)exits[i]);
        enum rsp_status s = rsp_request(&a->rsp, packet);
        if (s != RSP_OK) {
            lost(a, s);
            return -1;
        }
        if (strcmp(a->rsp.buf, "OK"))
            return 0;
    }
    return 1;
}

/* The exclusive sequence at the PC run to one of its exits (insn.c), as
 * one step; its instructions count once each. 0: there is none (step it
 * instead), 1: done, -1: the run ended. */
static int run_exclusive(struct a64 *a, int *pending)
{
    uint8_t bytes[4 * TRACE_A64_SEQUENCE];
    uint32_t code[TRACE_A64_SEQUENCE];
    uint64_t pc = a->regs[A64_PC], exits[TRACE_A64_EXITS];
    size_t got = trace_mem_read(&a->t->mem, pc, bytes, sizeof bytes) / 4;
    for (size_t i = 0; i < got; i++)
        code[i] = (uint32_t)cfi_load_le(bytes + 4 * i, 4);
    size_t n = trace_a64_exclusive_exits(code, got, pc, exits);
    if (n == 0)
        return 0;
    int set = breakpoints(a, 'Z', exits, n);
    if (set == 0)
        set = breakpoints(a, 'z', exits, n) < 0 ? -1 : 0;
    if (set <= 0)
        return set;
    char packet[16] = "c";
    if (*pending)
        snprintf(packet, sizeof packet, "vCont;C%02x", *pending & 0xff);
    *pending = 0;
    bool alive = step_with(a, packet, pending) &&
                 breakpoints(a, 'z', exits, n) > 0 && get_regs(a);
    if (alive)
        a->t->report->instructions += (exits[0] - pc) / 4 - 1;
    return alive ? 1 : -1;
}

static void loop(struct a64 *a)
{
    struct tracer *t = a->t;
    bool check = t->options->check;
    uint64_t sample = t->options->sample ? t->options->sample : 1;
    uint64_t pre[RSP_A64_NREGS];
    int pending = 0;
    if (!get_regs(a))
        return;
    while (!over_budget(a)) {
        trace_mem_reset(&t->mem);
        enum trace_insn insn = classify(t, a->regs[A64_PC]);
        if (check && t->report->instructions % sample == 0) {
            rescan(a);
            observe(t, a->regs);
        }
        memcpy(pre, a->regs, sizeof pre);
        int delivered = pending;
        int ran = insn == TRACE_INSN_OTHER ? run_exclusive(a, &pending) : 0;
        if (ran < 0 || (ran == 0 && (!step(a, &pending) || !get_regs(a))))
            return;
        t->report->instructions++;
        after_step(t, pre, a->regs, insn, delivered);
    }
}

void trace_a64_run(struct tracer *t, char *const argv[], const char *path)
{
    const struct trace_options *o = t->options;
    t->report->end = TRACE_END_TRACE_FAILED;
    if (o->from_symbol || o->at != TRACE_AT_STEP) {
        t->report->end = TRACE_END_UNSUPPORTED;
        return;
    }
    struct a64 a = {.t = t, .rsp = {.fd = -1}};
    if (!start(&a, argv))
        return;
    if (place_executable(&a, path))
        loop(&a);
    rsp_close(&a.rsp);
    kill_qemu(&a);
}
