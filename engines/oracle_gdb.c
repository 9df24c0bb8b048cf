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

/* How long gdb may take over one request: less than the harness's own
 * watchdog (cfisem diff --timeout, 10 s, which the batch's progress
 * feeds answer by answer), so that a hung gdb makes one request not
 * comparable, not the file's errors. */
#define GDB_TIMEOUT_MS 5000
/* How long gdb may take to start (to read the file and the driver) and
 * to load a batch's core: no request's answer, but a process of its own
 * that a loaded machine slows down. The harness's watchdog is told that
 * the engine waits, once a second (engine_batch_progress.waiting). */
#define GDB_START_TIMEOUT_MS 20000
#define GDB_WAIT_SLICE_MS 1000
#define ANSWER_MAX 2048

/* The innermost frame of the core of a caller-frame request is at this
 * PC, which no file maps: a Python unwinder of the driver claims it and
 * gives the frame above it the request's registers with rip = the
 * request's PC, so that gdb's DWARF unwinder meets that frame as a
 * caller (level 1: looked up at PC-1, or at PC for a signal frame). */
#define GDB_CALLER_MAGIC 0x10

/* The loop gdb runs, once it has said "ready" (gdb has read the file
 * and the driver): one line in for a batch, "CORE LWP:PC ..." (PC "-"
 * for an innermost frame, the PC of a caller frame otherwise), and for
 * each thread asked, in that order, "begin" when gdb starts on it and
 * then one answer line, each marked so that gdb's own messages ("[New
 * LWP 1]", "#0 ...") are told apart: "ok CFA R0 .. R16" (hexadecimal,
 * "u" for <not saved>), "stop CFA REASON" (no caller frame), "memory
 * ADDRESS", "error MESSAGE", "other UNWINDER": the frame asked about was
 * not unwound by gdb's DWARF unwinder. Which unwinder answered is read
 * from gdb's own log (`set debug frame on`, on gdb's stderr: the file
 * `log`, emptied before each thread). Each thread's frames are unwound
 * afresh (the frame cache emptied), and its innermost frame is selected
 * and shown first (`frame`), as gdb does for a core it loads. */
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
    "def answer(thread, pc):\n"
    "    CALLER['pc'] = pc\n"
    "    thread.switch()\n"
    "    gdb.invalidate_cached_frames()\n"
    "    gdb.execute('frame', to_string=True)\n"
    "    os.ftruncate(2, 0)\n"
    "    os.lseek(2, 0, os.SEEK_SET)\n"
    "    gdb.execute('set debug frame on')\n"
    "    try:\n"
    "        f = gdb.newest_frame()\n"
    "        if pc is not None:\n"
    "            f = f.older()\n"
    "        o = f.older() if f else None\n"
    "    finally:\n"
    "        gdb.execute('set debug frame off')\n"
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
    "def say(text):\n"
    "    sys.stdout.write('CFISEM-GDB ' + text + '\\n')\n"
    "    sys.stdout.flush()\n"
    "def ask(thread, pc):\n"
    "    if thread is None:\n"
    "        return 'error no such thread in the core'\n"
    "    try:\n"
    "        return answer(thread, pc)\n"
    "    except gdb.MemoryError as e:\n"
    "        m = re.search(r'address (0x[0-9a-f]+)', str(e))\n"
    "        return 'memory ' + (m.group(1)[2:] if m else 'u')\n"
    "    except gdb.error as e:\n"
    "        return 'error ' + str(e).replace('\\n', ' ')\n"
    "def batch(line):\n"
    "    words = line.split()\n"
    "    CALLER['pc'] = None\n"
    "    try:\n"
    "        gdb.execute('core-file ' + words[0], to_string=True)\n"
    "    except gdb.error:\n"
    "        pass\n"
    "    threads = {t.ptid[1]: t for t in gdb.selected_inferior().threads()}\n"
    "    for word in words[1:]:\n"
    "        lwp, pc = word.split(':')\n"
    "        say('begin')\n"
    "        say(ask(threads.get(int(lwp)),\n"
    "                None if pc == '-' else int(pc, 16)))\n"
    "say('ready')\n"
    "for line in sys.stdin:\n"
    "    batch(line)\n";

struct gdb_engine {
    const struct cfi_file *file;
    char *dir;                  /* mkdtemp: driver.py, core, log */
    pid_t pid;                  /* 0 when gdb is not running */
    int to_gdb, from_gdb;
    char buf[ANSWER_MAX];       /* what gdb wrote and was not read yet */
    size_t len;
    struct gdb_core *core;      /* the batch's core being made */
    struct gdb_image *images;   /* [cap]: entry i's image, once read */
    bool *read;                 /* [cap]: images[i] is entry i's */
    size_t cap;
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
    self->pid = pid;
    self->to_gdb = in[1];
    self->from_gdb = out[0];
    self->len = 0;
    return true;
}

/* Waits up to timeout_ms for gdb's output, telling `waiting` (or NULL)
 * each second. */
static bool wait_for_gdb(const struct gdb_engine *self, int timeout_ms,
                         const struct engine_batch_progress *waiting)
{
    struct pollfd p = {self->from_gdb, POLLIN, 0};
    for (int waited = 0; waited < timeout_ms; waited += GDB_WAIT_SLICE_MS) {
        int slice = timeout_ms - waited < GDB_WAIT_SLICE_MS
                        ? timeout_ms - waited : GDB_WAIT_SLICE_MS;
        if (poll(&p, 1, slice) == 1)
            return true;
        if (waiting && waiting->waiting)
            waiting->waiting(waiting->env);
    }
    return false;
}

/* The next line gdb writes that carries the marker, within timeout_ms;
 * false on a timeout or an exit (gdb is then stopped). */
static bool read_answer(struct gdb_engine *self, char *line, size_t size,
                        int timeout_ms,
                        const struct engine_batch_progress *waiting)
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
        ssize_t got = -1;
        if (wait_for_gdb(self, timeout_ms, waiting))
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

/* The words the interpreter reads for the request, a window around
 * every register's value (what gdb reads if it follows the same rules,
 * and some more), and the request's own faulting range, so that no
 * other request of its core gives gdb bytes there. */
static bool gather_windows(const struct gdb_engine *self,
                           const struct engine_batch_entry *entry,
                           struct gdb_windows *windows)
{
    const struct cfi_request *request = entry->request;
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
    if (entry->has_fault && entry->fault_end > entry->fault_begin &&
        gdb_windows_add(windows, entry->fault_begin, 0,
                        entry->fault_end - entry->fault_begin) != CFI_OK)
        r.failed = true;
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

/* ------------------------------------------------------------------ */
/* Asking gdb about a core                                              */
/* ------------------------------------------------------------------ */

/* A batch being answered. */
struct batch {
    struct engine_batch_entry *entries;
    const struct engine_batch_progress *progress;
    size_t *todo;               /* entries not answered yet, in order */
    size_t ntodo;
    size_t *members;            /* the entries of the core, thread order */
    size_t nmembers;
};

static void answered(const struct batch *b)
{
    if (b->progress && b->progress->answered)
        b->progress->answered(b->progress->env);
}

static void not_comparable(const struct batch *b, size_t i,
                           const char *reason)
{
    engine_answer_not_comparable(b->entries[i].answer, reason);
    answered(b);
}

/* The line that puts members [start, m) of the core at `core` to gdb:
 * "CORE LWP:PC ...". NULL when out of memory. */
static char *question(const char *core, const struct batch *b,
                      const size_t *members, size_t start, size_t m)
{
    size_t size = strlen(core) + 2 + (m - start) * 40, len;
    char *text = malloc(size);
    if (!text)
        return NULL;
    len = (size_t)snprintf(text, size, "%s", core);
    for (size_t j = start; j < m; j++) {
        const struct cfi_request *r = b->entries[members[j]].request;
        unsigned long long lwp = GDB_CORE_FIRST_LWP + j;
        if (r->caller_frame)
            len += (size_t)snprintf(text + len, size - len, " %llu:%" PRIx64,
                                    lwp, r->pc);
        else
            len += (size_t)snprintf(text + len, size - len, " %llu:-", lwp);
    }
    snprintf(text + len, size - len, "\n");
    return text;
}

/* Starts gdb and waits for its driver's "ready": gdb has read the file
 * and the driver. */
static bool launch_gdb(struct gdb_engine *self,
                       const struct engine_batch_progress *waiting)
{
    char line[ANSWER_MAX];
    if (start_gdb(self) &&
        read_answer(self, line, sizeof line, GDB_START_TIMEOUT_MS,
                    waiting) &&
        !strcmp(line, "ready"))
        return true;
    stop_gdb(self);
    return false;
}

/* Sends `text` to gdb, started when needed; a gdb of an earlier batch
 * that has exited since is started again. *started: a gdb was ready. */
static const char *send_question(struct gdb_engine *self, const char *text,
                                 const struct engine_batch_progress *waiting,
                                 bool *started)
{
    bool fresh = self->pid <= 0;
    for (;;) {
        *started = self->pid > 0 || launch_gdb(self, waiting);
        if (!*started)
            return "gdb did not start: it exited, or was not ready in time";
        if (write_to_gdb(self->to_gdb, text, strlen(text)))
            return NULL;
        stop_gdb(self);
        if (fresh)
            return "gdb exited";
        fresh = true;
    }
}

/* What a failed attempt left: whether gdb started at all, how many
 * members it answered, and whether it had begun on the next one. */
struct attempt {
    bool started;
    size_t answered;
    bool begun;
};

static const char *const no_answer =
    "gdb did not answer in time, or exited (killed; the next request "
    "starts another)";

/* Asks gdb members [start, m) of the core at `core`, and reads their
 * answers into their entries as they come; NULL when all came. */
static const char *attempt(struct gdb_engine *self, const struct batch *b,
                           const char *core, const size_t *members,
                           size_t start, size_t m, struct attempt *result)
{
    *result = (struct attempt){true, 0, false};
    char *text = question(core, b, members, start, m);
    const char *why = text ? send_question(self, text, b->progress,
                                           &result->started)
                           : "out of memory";
    free(text);
    char line[ANSWER_MAX];
    for (size_t j = start; j < m && !why; j++) {
        /* Before the first thread, gdb loads the core. */
        bool first = j == start;
        if (!read_answer(self, line, sizeof line,
                         first ? GDB_START_TIMEOUT_MS : GDB_TIMEOUT_MS,
                         first ? b->progress : NULL) ||
            strcmp(line, "begin")) {
            stop_gdb(self);
            return no_answer;
        }
        result->begun = true;
        if (!read_answer(self, line, sizeof line, GDB_TIMEOUT_MS, NULL))
            return no_answer;
        const struct engine_batch_entry *e = &b->entries[members[j]];
        read_line(line, e->request, e->answer);
        answered(b);
        result->answered++;
        result->begun = false;
    }
    return why;
}

static void ask_members(struct gdb_engine *self, const struct batch *b,
                        const size_t *members, size_t m);

/* Makes the core of members [0, m) anew (their images are read) and asks
 * it: a smaller batch. */
static void ask_again(struct gdb_engine *self, const struct batch *b,
                      const size_t *members, size_t m)
{
    gdb_core_clear(self->core);
    for (size_t j = 0; j < m; j++) {
        const struct cfi_request *r = b->entries[members[j]].request;
        uint64_t regs[GDB_NREGS];
        memcpy(regs, r->callee->value, sizeof regs);
        if (r->caller_frame)
            regs[16] = GDB_CALLER_MAGIC;
        if (gdb_core_add(self->core, regs, &self->images[members[j]]) !=
            GDB_CORE_ADDED) {
            for (size_t k = 0; k < m; k++)
                not_comparable(b, members[k], "cannot make the core");
            return;
        }
    }
    ask_members(self, b, members, m);
}

/* Asks gdb about every member of the core (self->core, members [0, m)
 * its threads in order). A hang or an exit while gdb is on one member
 * is that member's answer, and the rest are asked again of a new gdb;
 * one after gdb started but before it began on any member (the core
 * itself) makes two halves, each a core of its own, down to one
 * request. A gdb that does not start leaves every member unanswered. */
static void ask_members(struct gdb_engine *self, const struct batch *b,
                        const size_t *members, size_t m)
{
    char *core = dir_path(self, "core");
    if (!core || gdb_core_write(self->core, core) != CFI_OK) {
        for (size_t j = 0; j < m; j++)
            not_comparable(b, members[j], "cannot write the core");
        free(core);
        return;
    }
    for (size_t start = 0; start < m;) {
        struct attempt result;
        const char *why = attempt(self, b, core, members, start, m, &result);
        start += result.answered;
        if (!why)
            break;
        if (!result.started) {
            while (start < m)
                not_comparable(b, members[start++], why);
        } else if (result.begun || m - start == 1) {
            not_comparable(b, members[start++], why);
        } else if (result.answered == 0) {
            size_t half = (m - start) / 2;
            ask_again(self, b, members + start, half);
            ask_again(self, b, members + start + half, m - start - half);
            break;
        }
    }
    free(core);
}

/* ------------------------------------------------------------------ */
/* Batches                                                              */
/* ------------------------------------------------------------------ */

static bool same_memory(const struct engine_batch_entry *a,
                        const struct engine_batch_entry *b)
{
    return a->shared.read && a->shared.read == b->shared.read &&
           a->shared.env == b->shared.env;
}

/* Entry i's image, read once per batch; NULL when out of memory. */
static const struct gdb_image *image_of(struct gdb_engine *self,
                                        const struct batch *b, size_t i)
{
    if (self->read[i])
        return &self->images[i];
    struct gdb_windows windows = {0};
    self->read[i] = gather_windows(self, &b->entries[i], &windows) &&
                    gdb_image_read(&self->images[i], &windows,
                                   b->entries[i].request->memory) == CFI_OK;
    gdb_windows_free(&windows);
    return self->read[i] ? &self->images[i] : NULL;
}

/* Puts into the core the first entry left and each later one of the
 * same memory whose image agrees with the core's; those go from the
 * list of entries left to the core's members. */
static void fill_core(struct gdb_engine *self, struct batch *b)
{
    gdb_core_clear(self->core);
    b->nmembers = 0;
    size_t lead = b->todo[0], kept = 0;
    for (size_t t = 0; t < b->ntodo; t++) {
        size_t i = b->todo[t];
        if (i != lead && !same_memory(&b->entries[lead], &b->entries[i])) {
            b->todo[kept++] = i;
            continue;
        }
        const struct cfi_request *r = b->entries[i].request;
        uint64_t regs[GDB_NREGS];
        memcpy(regs, r->callee->value, sizeof regs);
        if (r->caller_frame)
            regs[16] = GDB_CALLER_MAGIC; /* the driver's Python frame */
        const struct gdb_image *image = image_of(self, b, i);
        enum gdb_core_add added =
            image ? gdb_core_add(self->core, regs, image) : GDB_CORE_NOMEM;
        if (added == GDB_CORE_ADDED)
            b->members[b->nmembers++] = i;
        else if (added == GDB_CORE_CONFLICT)
            b->todo[kept++] = i;
        else
            not_comparable(b, i, "cannot make the core: out of memory");
    }
    b->ntodo = kept;
}

/* Room for the images of n entries. */
static bool reserve_images(struct gdb_engine *self, size_t n)
{
    if (n <= self->cap)
        return true;
    struct gdb_image *images = realloc(self->images, n * sizeof *images);
    if (images)
        self->images = images;
    bool *read = images ? realloc(self->read, n * sizeof *read) : NULL;
    if (!read)
        return false;
    self->read = read;
    memset(self->images + self->cap, 0,
           (n - self->cap) * sizeof *self->images);
    self->cap = n;
    return true;
}

/* What every answer of gdb's says before it is asked: registers above
 * 16 and the signal flag are not gdb's to say. */
static void answer_prepare(struct engine_answer *answer)
{
    engine_answer_reset(answer);
    for (unsigned reg = GDB_NREGS; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
    answer->signal_comparable = false; /* gdb does not say */
}

void engine_gdb_answer_batch(void *opaque, struct engine_batch_entry *entries,
                             size_t n,
                             const struct engine_batch_progress *progress)
{
    struct gdb_engine *self = opaque;
    struct batch b = {entries, progress, malloc((n ? n : 1) * sizeof(size_t)),
                      0, malloc((n ? n : 1) * sizeof(size_t)), 0};
    bool ok = b.todo && b.members && reserve_images(self, n);
    for (size_t i = 0; i < n; i++) {
        answer_prepare(entries[i].answer);
        const char *why = ok ? unaskable(self, entries[i].request)
                             : "out of memory";
        if (why)
            not_comparable(&b, i, why);
        else
            b.todo[b.ntodo++] = i;
    }
    if (ok)
        memset(self->read, 0, n * sizeof *self->read);
    while (b.ntodo > 0) {
        fill_core(self, &b);
        if (b.nmembers > 0)
            ask_members(self, &b, b.members, b.nmembers);
    }
    free(b.todo);
    free(b.members);
}

enum cfi_status engine_gdb_answer(void *self,
                                  const struct cfi_request *request,
                                  struct engine_answer *answer)
{
    struct engine_batch_entry entry = {request, {NULL, NULL}, false, 0, 0,
                                       answer};
    engine_gdb_answer_batch(self, &entry, 1, NULL);
    return answer->frame.status;
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
    self->core = gdb_core_new();
    char *script = self->dir && self->core ? dir_path(self, "driver.py")
                                           : NULL;
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
    gdb_core_free(self->core);
    for (size_t i = 0; i < self->cap; i++)
        gdb_image_free(&self->images[i]);
    free(self->images);
    free(self->read);
    free(self);
}
