/* SPDX-License-Identifier: MIT */
/* oracle_gdb.c — see oracle_gdb.h. */
#include "engines/oracle_gdb.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engines/gdb_core.h"
#include "interp/interp.h"

/* How long gdb may take over one request (its start-up included): less
 * than the harness's own watchdog (cfisem diff --timeout, 10 s), so that
 * a hung gdb makes one request not comparable, not the file's errors. */
#define GDB_TIMEOUT_MS 5000
#define GDB_NREGS 17
#define ANSWER_MAX 2048

/* The innermost frame of the core of a caller-frame request is at this
 * PC, which no file maps: a Python unwinder of the driver claims it and
 * gives the frame above it the request's registers with rip = the
 * request's PC, so that gdb's DWARF unwinder meets that frame as a
 * caller (level 1: looked up at PC-1, or at PC for a signal frame). */
#define GDB_CALLER_MAGIC 0x10

/* The loop gdb runs: one line in ("CORE -" for an innermost frame,
 * "CORE PC" for a caller frame at PC), one answer a line out, marked so
 * that gdb's own messages ("[New LWP 1]", "#0 ...") are told apart.
 * "ok CFA R0 .. R16" (hexadecimal, "u" for <not saved>), "stop CFA
 * REASON" (no caller frame), "memory ADDRESS", "error MESSAGE", "other
 * UNWINDER": the frame asked about was not unwound by gdb's DWARF
 * unwinder. Which unwinder answered is read from gdb's own log (`set
 * debug frame on`, on gdb's stderr: the file `log`, emptied before each
 * request). */
static const char driver[] =
    "import gdb, os, re, sys\n"
    "from gdb.unwinder import Unwinder, register_unwinder\n"
    "gdb.execute('set pagination off')\n"
    "gdb.execute('set confirm off')\n"
    "gdb.execute('maint set dwarf unwinders on')\n"
    "gdb.execute('maint set internal-error quit yes')\n"
    "gdb.execute('maint set internal-error corefile no')\n"
    "NAMES = ['rax', 'rdx', 'rcx', 'rbx', 'rsi', 'rdi', 'rbp', 'rsp',\n"
    "         'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'rip']\n"
    "MASK = 0xffffffffffffffff\n"
    "CALLER = {'pc': None}\n"
    "class FrameId:\n"
    "    def __init__(self, sp, pc):\n"
    "        self.sp = sp\n"
    "        self.pc = pc\n"
    "class Caller(Unwinder):\n"
    "    def __init__(self):\n"
    "        super().__init__('cfisem caller')\n"
    "    def __call__(self, pf):\n"
    "        if CALLER['pc'] is None or pf.level() != 0:\n"
    "            return None\n"
    "        info = pf.create_unwind_info(FrameId(gdb.Value(0),\n"
    "                                             gdb.Value(%d)))\n"
    "        for n in NAMES:\n"
    "            r = pf.read_register(n)\n"
    "            v = CALLER['pc'] if n == 'rip' else int(r) & MASK\n"
    "            info.add_saved_register(n, gdb.Value(v).cast(r.type))\n"
    "        return info\n"
    "register_unwinder(None, Caller(), replace=True)\n"
    "def cell(frame, name):\n"
    "    v = frame.read_register(name)\n"
    "    if v.is_optimized_out:\n"
    "        return 'u'\n"
    "    return '%%x' %% (int(v) & MASK)\n"
    "def unwinder(level):\n"
    "    with open('/proc/self/fd/2') as err:\n"
    "        m = re.search(r'level=%%d,type=[A-Z_]+,unwinder=\"([^\"]+)\"'\n"
    "                      %% level, err.read())\n"
    "    return m.group(1) if m else '?'\n"
    "def answer(line):\n"
    "    core, pc = line.split()\n"
    "    CALLER['pc'] = None if pc == '-' else int(pc, 16)\n"
    "    gdb.execute('core-file ' + core, to_string=True)\n"
    "    os.ftruncate(2, 0)\n"
    "    os.lseek(2, 0, os.SEEK_SET)\n"
    "    gdb.execute('set debug frame on')\n"
    "    f = gdb.newest_frame()\n"
    "    if CALLER['pc'] is not None:\n"
    "        f = f.older()\n"
    "    o = f.older() if f else None\n"
    "    gdb.execute('set debug frame off')\n"
    "    if f is None:\n"
    "        return 'other none'\n"
    "    u = unwinder(f.level())\n"
    "    if u not in ('dwarf2', 'dwarf2 signal'):\n"
    "        return 'other ' + u\n"
    "    f.select()\n"
    "    info = gdb.execute('info frame', to_string=True)\n"
    "    m = re.search(r'frame at (0x[0-9a-f]+)', info)\n"
    "    cfa = m.group(1)[2:] if m else 'u'\n"
    "    if o is None:\n"
    "        return 'stop %%s %%s' %% (cfa,\n"
    "            gdb.frame_stop_reason_string(f.unwind_stop_reason()))\n"
    "    return 'ok %%s %%s' %% (cfa, ' '.join(cell(o, n) for n in NAMES))\n"
    "for line in sys.stdin:\n"
    "    try:\n"
    "        out = answer(line)\n"
    "    except gdb.MemoryError as e:\n"
    "        m = re.search(r'address (0x[0-9a-f]+)', str(e))\n"
    "        out = 'memory ' + (m.group(1)[2:] if m else 'u')\n"
    "    except gdb.error as e:\n"
    "        out = 'error ' + str(e).replace('\\n', ' ')\n"
    "    sys.stdout.write('CFISEM-GDB ' + out + '\\n')\n"
    "    sys.stdout.flush()\n";

struct gdb_engine {
    const struct cfi_file *file;
    char *dir;                  /* mkdtemp: driver.py, core */
    pid_t pid;                  /* 0 when gdb is not running */
    int to_gdb, from_gdb;
    char buf[ANSWER_MAX];       /* what gdb wrote and was not read yet */
    size_t len;
};

static char *dir_path(const struct gdb_engine *self, const char *name)
{
    size_t n = strlen(self->dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s", self->dir, name);
    return path;
}

static void stop_gdb(struct gdb_engine *self)
{
    if (self->pid <= 0)
        return;
    close(self->to_gdb);
    close(self->from_gdb);
    kill(self->pid, SIGKILL);
    waitpid(self->pid, NULL, 0);
    self->pid = 0;
    self->len = 0;
}

/* In the child, between fork and exec: async-signal-safe calls only
 * (the harness has threads), the paths made before the fork. */
static void exec_gdb(const char *path, const char *script, const char *log,
                     int in, int out)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed harness takes gdb along */
    /* gdb aborts on some CFI (diff/findings/gdb-no-cfa-internal-error):
     * no core file of gdb's own in the harness's folder. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    dup2(in, 0);
    dup2(out, 1);
    int log_fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (log_fd >= 0)
        dup2(log_fd, 2);
    execlp("gdb", "gdb", "-nx", "-batch", "-x", script, path, (char *)NULL);
    _exit(127);
}

/* A pipe whose ends another thread's child does not inherit. */
static bool pipe_cloexec(int fds[2])
{
    if (pipe(fds))
        return false;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return true;
}

static bool start_gdb(struct gdb_engine *self)
{
    int in[2], out[2];
    char *script = dir_path(self, "driver.py"), *log = dir_path(self, "log");
    bool piped = script && log && pipe_cloexec(in);
    if (piped && !pipe_cloexec(out)) {
        close(in[0]);
        close(in[1]);
        piped = false;
    }
    if (!piped) {
        free(script);
        free(log);
        return false;
    }
    pid_t pid = fork();
    if (pid == 0)
        exec_gdb(self->file->path, script, log, in[0], out[1]);
    free(script);
    free(log);
    close(in[0]);
    close(out[1]);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        return false;
    }
    *self = (struct gdb_engine){self->file, self->dir, pid, in[1], out[0],
                                {0}, 0};
    return true;
}

/* The next line gdb writes that carries the marker; false on a timeout
 * or an exit (gdb is then stopped). */
static bool read_answer(struct gdb_engine *self, char *line, size_t size)
{
    static const char marker[] = "CFISEM-GDB ";
    for (;;) {
        char *nl = memchr(self->buf, '\n', self->len);
        if (nl) {
            size_t n = (size_t)(nl - self->buf);
            *nl = '\0';
            bool ours = !strncmp(self->buf, marker, sizeof marker - 1);
            if (ours)
                snprintf(line, size, "%s", self->buf + sizeof marker - 1);
            memmove(self->buf, nl + 1, self->len - n - 1);
            self->len -= n + 1;
            if (ours)
                return true;
            continue;
        }
        if (self->len == sizeof self->buf)
            self->len = 0; /* a line of gdb's own too long to keep */
        struct pollfd p = {self->from_gdb, POLLIN, 0};
        ssize_t got = -1;
        if (poll(&p, 1, GDB_TIMEOUT_MS) == 1)
            got = read(self->from_gdb, self->buf + self->len,
                       sizeof self->buf - self->len);
        if (got <= 0) {
            stop_gdb(self);
            return false;
        }
        self->len += (size_t)got;
    }
}

/* ------------------------------------------------------------------ */
/* The memory a request's frame reads                                   */
/* ------------------------------------------------------------------ */

struct recorder {
    struct cfi_memory inner;
    struct gdb_windows *windows;
    bool failed;
};

static enum cfi_status record_read(void *env, uint64_t addr, unsigned size,
                                   uint64_t *value)
{
    struct recorder *r = env;
    if (gdb_windows_add(r->windows, addr, 64, 64 + size) != CFI_OK)
        r->failed = true;
    return r->inner.read(r->inner.env, addr, size, value);
}

/* The words the interpreter reads for the request, and a window around
 * every register's value: what gdb reads if it follows the same rules,
 * and some more. */
static bool gather_windows(const struct gdb_engine *self,
                           const struct cfi_request *request,
                           struct gdb_windows *windows)
{
    struct recorder r = {request->memory, windows, false};
    struct cfi_request recorded = *request;
    recorded.memory = (struct cfi_memory){record_read, &r};
    struct cfi_frame scratch;
    interp_unwind(self->file, &recorded, &scratch);
    for (unsigned reg = 0; reg < GDB_NREGS && !r.failed; reg++) {
        uint64_t after = reg == 7 ? 4096 : 256; /* rsp */
        if (gdb_windows_add(windows, request->callee->value[reg], 256,
                            after) != CFI_OK)
            r.failed = true;
    }
    return !r.failed;
}

/* ------------------------------------------------------------------ */
/* Answers                                                              */
/* ------------------------------------------------------------------ */

/* Why the request cannot be put to gdb, or NULL. */
static const char *unaskable(const struct gdb_engine *self,
                             const struct cfi_request *request)
{
    uint64_t lookup = cfi_lookup_pc(request->pc, request->caller_frame);
    if (!cfi_file_lookup(self->file, lookup))
        return "no FDE here: gdb would unwind with its prologue analyser";
    const char *overlap = engine_overlap_reason(self->file, lookup);
    if (overlap)
        return overlap;
    for (unsigned reg = 0; reg < GDB_NREGS; reg++)
        if (request->callee->status[reg] != CFI_REG_VALUE)
            return "a callee register without a value: a core gives every "
                   "register one";
    return NULL;
}

static bool parse_hex(const char **cursor, uint64_t *value, bool *undefined)
{
    const char *s = *cursor;
    while (*s == ' ')
        s++;
    *undefined = *s == 'u';
    char *end = (char *)s + (*undefined ? 1 : 0);
    if (!*undefined) {
        errno = 0;
        *value = strtoull(s, &end, 16);
        if (end == s || errno)
            return false;
    }
    *cursor = end;
    return true;
}

/* "ok CFA R0 .. R16" */
static enum cfi_status read_ok(const char *text, struct engine_answer *answer)
{
    uint64_t cfa = 0;
    bool undefined;
    if (!parse_hex(&text, &cfa, &undefined))
        return engine_answer_not_comparable(answer, "gdb's answer unread");
    answer->frame.cfa = cfa;
    answer->cfa_comparable = !undefined;
    for (unsigned reg = 0; reg < GDB_NREGS; reg++) {
        uint64_t value = 0;
        if (!parse_hex(&text, &value, &undefined))
            return engine_answer_not_comparable(answer, "gdb's answer unread");
        if (undefined)
            answer->frame.caller.status[reg] = CFI_REG_UNDEFINED;
        else
            cfi_regs_set(&answer->frame.caller, reg, value);
    }
    return CFI_OK;
}

/* "stop CFA REASON": no caller frame. gdb's "outermost" is an undefined
 * return address (DWARF 5 §6.4.4: the end of the stack); any other
 * reason is one of gdb's own checks. */
static enum cfi_status read_stop(const char *text,
                                 struct engine_answer *answer)
{
    if (!strstr(text, "outermost"))
        return engine_answer_not_comparable(
            answer, "gdb stopped the backtrace for a reason of its own "
                    "(its stack sanity checks)");
    /* gdb's id of an outermost frame has no stack address: "frame at
     * 0x0" says nothing of the CFA. */
    answer->cfa_comparable = false;
    memset(answer->reg_comparable, false, sizeof answer->reg_comparable);
    answer->frame.caller.status[16] = CFI_REG_UNDEFINED;
    answer->reg_comparable[16] = true;
    return CFI_OK;
}

/* "memory ADDRESS": gdb could not read ADDRESS. A fault of the memory
 * model there is an answer; a hole of the core is not. */
static enum cfi_status read_memory(const char *text,
                                   const struct cfi_request *request,
                                   struct engine_answer *answer)
{
    uint64_t addr, value;
    bool undefined;
    if (parse_hex(&text, &addr, &undefined) && !undefined &&
        request->memory.read(request->memory.env, addr, 1, &value) != CFI_OK)
        return engine_answer_error(answer, CFI_E_MEMORY,
                                   "gdb: cannot access memory", -1);
    return engine_answer_not_comparable(
        answer, "gdb read memory outside the core's windows");
}

static enum cfi_status read_line(const char *line,
                                 const struct cfi_request *request,
                                 struct engine_answer *answer)
{
    if (!strncmp(line, "ok ", 3))
        return read_ok(line + 3, answer);
    if (!strncmp(line, "stop ", 5))
        return read_stop(line + 5, answer);
    if (!strncmp(line, "memory ", 7))
        return read_memory(line + 7, request, answer);
    if (!strncmp(line, "other none", 10))
        return engine_answer_not_comparable(
            answer, "gdb made no frame of the caller-frame request");
    if (!strncmp(line, "other amd64 epilogue", 20))
        return engine_answer_not_comparable(
            answer, "gdb's epilogue analyser answered (the PC is at a ret), "
                    "not its DWARF unwinder");
    if (!strncmp(line, "other ", 6))
        return engine_answer_not_comparable(
            answer, "an unwinder of gdb's other than its DWARF one answered");
    return engine_answer_not_comparable(answer, "gdb reported an error");
}

/* Writes all of `bytes` to gdb; a gdb that has exited makes it fail with
 * EPIPE, its SIGPIPE blocked for the write and taken back, so that the
 * process's own disposition of SIGPIPE is left as it is. */
static bool write_to_gdb(int fd, const char *bytes, size_t len)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t written = write(fd, bytes, len);
    if (written < 0 && errno == EPIPE) {
        struct timespec now = {0, 0};
        sigtimedwait(&pipe_set, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return written == (ssize_t)len;
}

/* Puts the core to gdb (started when needed), with the PC of a caller
 * frame (`caller`), and reads its line. */
static const char *ask(struct gdb_engine *self, const char *core,
                       const struct cfi_request *request, char *line,
                       size_t size)
{
    bool fresh = self->pid <= 0;
    if (fresh && !start_gdb(self))
        return "cannot start gdb";
    char question[4200];
    if (request->caller_frame)
        snprintf(question, sizeof question, "%s %" PRIx64 "\n", core,
                 request->pc);
    else
        snprintf(question, sizeof question, "%s -\n", core);
    if (!write_to_gdb(self->to_gdb, question, strlen(question))) {
        stop_gdb(self);
        /* A gdb that ended before its first question is started once
         * more: under heavy load its start can fail for a moment. */
        if (!fresh || !start_gdb(self) ||
            !write_to_gdb(self->to_gdb, question, strlen(question))) {
            stop_gdb(self);
            return "gdb exited";
        }
    }
    if (!read_answer(self, line, size))
        return "gdb did not answer in time, or exited (killed; the next "
               "request starts another)";
    return NULL;
}

enum cfi_status engine_gdb_answer(void *opaque,
                                  const struct cfi_request *request,
                                  struct engine_answer *answer)
{
    struct gdb_engine *self = opaque;
    engine_answer_reset(answer);
    for (unsigned reg = GDB_NREGS; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
    answer->signal_comparable = false; /* gdb does not say */
    const char *why = unaskable(self, request);
    if (why)
        return engine_answer_not_comparable(answer, why);
    struct gdb_windows windows = {0};
    struct cfi_regs regs = *request->callee;
    if (request->caller_frame)
        regs.value[16] = GDB_CALLER_MAGIC; /* the driver's Python frame */
    char *core = dir_path(self, "core");
    bool written = core && strlen(core) < 4096 &&
                   gather_windows(self, request, &windows) &&
                   gdb_core_write(core, &regs, &windows,
                                  request->memory) == CFI_OK;
    gdb_windows_free(&windows);
    char line[ANSWER_MAX];
    why = written ? ask(self, core, request, line, sizeof line)
                  : "cannot write the core";
    free(core);
    if (why)
        return engine_answer_not_comparable(answer, why);
    return read_line(line, request, answer);
}

/* ------------------------------------------------------------------ */
/* Open and close                                                       */
/* ------------------------------------------------------------------ */

enum cfi_status engine_gdb_open(const struct cfi_file *file, void **opaque,
                                struct cfi_diag *diag)
{
    *opaque = NULL;
    if (!file->path)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "gdb needs the file: this CFI has none");
    /* The cores go under $TMPDIR (else /tmp), which the test runner
     * removes with everything in it, also after a killed engine. */
    const char *tmp = getenv("TMPDIR");
    char template[4096];
    snprintf(template, sizeof template, "%s/cfisem-gdb-XXXXXX",
             tmp && *tmp && strlen(tmp) < 2048 ? tmp : "/tmp");
    struct gdb_engine *self = calloc(1, sizeof *self);
    if (!self || !mkdtemp(template)) {
        free(self);
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        "cannot make a folder for gdb's cores");
    }
    self->file = file;
    self->dir = strdup(template);
    char *script = self->dir ? dir_path(self, "driver.py") : NULL;
    FILE *out = script ? fopen(script, "w") : NULL;
    bool ok = out && fprintf(out, driver, GDB_CALLER_MAGIC) >= 0;
    if (out && fclose(out) != 0)
        ok = false;
    free(script);
    if (!ok) {
        engine_gdb_close(self);
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        "cannot write gdb's script");
    }
    *opaque = self;
    return CFI_OK;
}

void engine_gdb_close(void *opaque)
{
    struct gdb_engine *self = opaque;
    if (!self)
        return;
    stop_gdb(self);
    static const char *const names[] = {"driver.py", "core", "log"};
    for (size_t i = 0; self->dir && i < 3; i++) {
        char *path = dir_path(self, names[i]);
        if (path)
            unlink(path);
        free(path);
    }
    if (self->dir)
        rmdir(self->dir);
    free(self->dir);
    free(self);
}
