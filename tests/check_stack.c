/* SPDX-License-Identifier: MIT */
/* check_stack.c — remote/ (a foreign process's stack) and `cfisem stack`.
 *
 * The address space's table of mappings (replacement, splits, the load
 * bias); then the tests' own program (tests/stack/target.cc: three
 * threads, one in a signal handler, libstdc++ frames), unwound from
 * outside through remote/ and through `cfisem stack PID`, whose PCs must
 * be eu-stack's and gdb's, thread by thread; a core of it through
 * `cfisem stack --core`; bad cores, a folder and a FIFO refused with one
 * line. Each test that starts the program kills it in its teardown, and
 * the program ends itself after a while (alarm) whatever happens. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote/proc.h"
#include "remote/remote.h"
#include "support.h"

/* ------------------------------------------------------------------ */
/* The target program                                                   */
/* ------------------------------------------------------------------ */

static pid_t target = -1;

/* True when every thread of pid sleeps (state S) in the kernel. */
static bool all_threads_sleep(pid_t pid);

/* Starts the program of environment variable `program_env` and reads
 * its "ready PID" line. */
static pid_t spawn(const char *program_env)
{
    const char *program = getenv(program_env);
    ck_assert_msg(program, "%s is not set", program_env);
    int out[2];
    ck_assert_int_eq(pipe(out), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(120);   /* kept across exec: the program's own watchdog */
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        execl(program, program, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    target = pid;
    char line[64] = "";
    ssize_t n = read(out[0], line, sizeof line - 1);
    close(out[0]);
    ck_assert_msg(n > 0 && strncmp(line, "ready ", 6) == 0,
                  "%s did not start", program);
    return pid;
}

static bool all_threads_sleep(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return false;
    bool sleeping = true;
    int threads = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.')
            continue;
        char stat_path[400];
        snprintf(stat_path, sizeof stat_path, "/proc/%d/task/%s/stat",
                 (int)pid, entry->d_name);
        char *text = test_read_file(stat_path, NULL);
        char *close = text ? strrchr(text, ')') : NULL;
        if (!close || close[1] != ' ' || close[2] != 'S')
            sleeping = false;
        free(text);
        threads++;
    }
    closedir(dir);
    return sleeping && threads == 3;
}

/* Starts the program and waits until its three threads are blocked. */
static pid_t start_target(void)
{
    pid_t pid = spawn("CFISEM_STACK_TARGET");
    for (int i = 0; i < 500 && !all_threads_sleep(pid); i++)
        usleep(10000);
    ck_assert_msg(all_threads_sleep(pid), "the target's threads never "
                  "blocked");
    return pid;
}

static void kill_target(void)
{
    if (target > 0) {
        kill(target, SIGKILL);
        waitpid(target, NULL, 0);
        target = -1;
    }
}

/* ------------------------------------------------------------------ */
/* The address space                                                    */
/* ------------------------------------------------------------------ */

static struct remote_space *new_space(void)
{
    struct remote_space *space;
    ck_assert_int_eq(remote_space_new(&cfi_arch_x86_64, NULL, &space),
                     CFI_OK);
    return space;
}

static void add(struct remote_space *space, uint64_t start, uint64_t end,
                uint64_t offset, const char *path)
{
    struct remote_map map = {start, end, offset, path, NULL, 0};
    ck_assert_int_eq(remote_space_add_map(space, &map), CFI_OK);
}

static const char *path_at(struct remote_space *space, uint64_t addr)
{
    struct remote_place place;
    return remote_space_place(space, addr, &place) ? place.path : NULL;
}

START_TEST(test_map_replaces_and_splits)
{
    struct remote_space *space = new_space();
    add(space, 0x1000, 0x5000, 0, "/nonexistent/a");
    add(space, 0x8000, 0x9000, 0, "/nonexistent/b");
    ck_assert_uint_eq(remote_space_map_count(space), 2);
    /* Over the middle of a: a splits around it. */
    add(space, 0x2000, 0x3000, 0, "/nonexistent/c");
    ck_assert_uint_eq(remote_space_map_count(space), 4);
    ck_assert_str_eq(path_at(space, 0x1fff), "/nonexistent/a");
    ck_assert_str_eq(path_at(space, 0x2000), "/nonexistent/c");
    ck_assert_str_eq(path_at(space, 0x3000), "/nonexistent/a");
    ck_assert_ptr_null(path_at(space, 0x5000));
    ck_assert_str_eq(path_at(space, 0x8fff), "/nonexistent/b");
    /* Over all of b and the end of a's upper part. */
    add(space, 0x4000, 0xa000, 0, "/nonexistent/d");
    ck_assert_str_eq(path_at(space, 0x3fff), "/nonexistent/a");
    ck_assert_str_eq(path_at(space, 0x8000), "/nonexistent/d");
    ck_assert_uint_eq(remote_space_map_count(space), 4);
    ck_assert_int_eq(remote_space_remove(space, 0x1800, 0x4800), CFI_OK);
    ck_assert_str_eq(path_at(space, 0x17ff), "/nonexistent/a");
    ck_assert_ptr_null(path_at(space, 0x2000));
    ck_assert_str_eq(path_at(space, 0x4800), "/nonexistent/d");
    struct remote_map empty = {0x10, 0x10, 0, "/x", NULL, 0};
    ck_assert_int_eq(remote_space_add_map(space, &empty), CFI_E_MALFORMED);
    remote_space_free(space);
}
END_TEST

static void add_to(struct remote_maps *maps, uint64_t start, uint64_t end,
                   const char *path)
{
    struct remote_map map = {start, end, 0, path, NULL, 0};
    ck_assert_int_eq(remote_maps_add(maps, &map), CFI_OK);
}

/* Tables of mappings, one per process: the space looks in the one it
 * uses, its own again after NULL or after the used one is freed; the
 * objects are the space's, one per file for every table. */
START_TEST(test_tables_of_mappings_switch)
{
    struct remote_space *space = new_space();
    add(space, 0x1000, 0x2000, 0, "/nonexistent/own");
    struct remote_maps *one, *two;
    ck_assert_int_eq(remote_maps_new(space, &one), CFI_OK);
    ck_assert_int_eq(remote_maps_new(space, &two), CFI_OK);
    add_to(one, 0x1000, 0x2000, "/nonexistent/shared");
    add_to(two, 0x5000, 0x9000, "/nonexistent/shared");
    add_to(two, 0x1000, 0x3000, "/nonexistent/two");
    ck_assert_str_eq(path_at(space, 0x1800), "/nonexistent/own");
    ck_assert_ptr_null(path_at(space, 0x6000));
    remote_space_use(space, one);
    const char *shared = path_at(space, 0x1800);
    ck_assert_str_eq(shared, "/nonexistent/shared");
    ck_assert_ptr_null(path_at(space, 0x2800));
    remote_space_use(space, two);
    ck_assert_str_eq(path_at(space, 0x2800), "/nonexistent/two");
    ck_assert_ptr_eq(path_at(space, 0x6000), shared);
    /* The lookup last found is not kept past a change of the table. */
    ck_assert_int_eq(remote_maps_remove(two, 0x2000, 0x7000), CFI_OK);
    ck_assert_ptr_null(path_at(space, 0x2800));
    ck_assert_ptr_null(path_at(space, 0x6000));
    ck_assert_ptr_eq(path_at(space, 0x8000), shared);
    ck_assert_str_eq(path_at(space, 0x1800), "/nonexistent/two");
    struct remote_map empty = {0x10, 0x10, 0, "/x", NULL, 0};
    ck_assert_int_eq(remote_maps_add(two, &empty), CFI_E_MALFORMED);
    remote_space_use(space, NULL);
    ck_assert_str_eq(path_at(space, 0x1800), "/nonexistent/own");
    remote_space_use(space, one);
    remote_maps_free(one);
    ck_assert_str_eq(path_at(space, 0x1800), "/nonexistent/own");
    ck_assert_uint_eq(remote_space_map_count(space), 1);
    remote_maps_free(two);
    remote_space_free(space);
}
END_TEST

/* A file that does not open is tried once, and the stack stops with
 * NO_FILE naming it. */
static enum remote_read_result no_memory(void *data, uint64_t addr,
                                         unsigned size, uint64_t *value)
{
    (void)addr;
    (void)size;
    (void)value;
    ++*(int *)data;
    return REMOTE_READ_UNREADABLE;
}

START_TEST(test_stop_reasons_without_objects)
{
    struct remote_space *space = new_space();
    add(space, 0x400000, 0x401000, 0, "/nonexistent/prog");
    struct cfi_regs regs;
    cfi_regs_clear(&regs);
    cfi_regs_set(&regs, CFI_REG_RIP, 0x400010);
    cfi_regs_set(&regs, CFI_REG_RSP, 0x7000);
    struct remote_frame frames[4];
    struct remote_stop stop;
    int reads = 0;
    size_t n = remote_unwind(space, &regs, true, no_memory, &reads,
                             ENGINE_COUNT, frames, 4, &stop);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(stop.reason, REMOTE_STOP_NO_FILE);
    ck_assert_str_eq(stop.object, "/nonexistent/prog");
    ck_assert_uint_eq(frames[0].pc, 0x400010);
    ck_assert_uint_eq(frames[0].sp, 0x7000);
    cfi_regs_set(&regs, CFI_REG_RIP, 0x900000);
    n = remote_unwind(space, &regs, true, no_memory, &reads, ENGINE_COUNT,
                      frames, 4, &stop);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(stop.reason, REMOTE_STOP_NO_OBJECT);
    cfi_regs_set(&regs, CFI_REG_RIP, 0);
    n = remote_unwind(space, &regs, true, no_memory, &reads, ENGINE_COUNT,
                      frames, 4, &stop);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(stop.reason, REMOTE_STOP_OUTERMOST);
    ck_assert_int_eq(reads, 0);
    remote_space_free(space);
}
END_TEST

START_TEST(test_stop_names_distinct)
{
    for (int a = 0; a < REMOTE_STOP_COUNT; a++) {
        ck_assert(remote_stop_name(a)[0] && remote_stop_text(a)[0]);
        for (int b = 0; b < a; b++) {
            ck_assert_str_ne(remote_stop_name(a), remote_stop_name(b));
            ck_assert_str_ne(remote_stop_text(a), remote_stop_text(b));
        }
    }
    ck_assert_str_eq(remote_stop_name(REMOTE_STOP_STACK_COPY_EXHAUSTED),
                     "stack_copy_exhausted");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The target through remote/                                            */
/* ------------------------------------------------------------------ */

/* The names of a thread's frames, joined by spaces. */
static void names_of(struct remote_space *space,
                     const struct remote_frame *frames, size_t n,
                     char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        struct remote_symbol symbol;
        remote_symbolize(space, &frames[i], &symbol);
        size_t used = strlen(out);
        snprintf(out + used, size - used, " %s",
                 symbol.name ? symbol.name : "??");
    }
}

/* Every thread of the target ends at its outermost frame, through
 * `engine`; the main thread passes through main and std::thread::join,
 * the others through the program's thread functions and libstdc++'s
 * thread start, and one through the signal frame. */
static void unwind_target(enum engine_id engine, const char *cache)
{
    pid_t pid = start_target();
    struct remote_proc *proc;
    struct cfi_diag diag;
    ck_assert_int_eq(remote_proc_attach(pid, &proc, &diag), CFI_OK);
    struct remote_options options = {engine, cache, false};
    struct remote_space *space;
    ck_assert_int_eq(remote_space_new(&cfi_arch_x86_64, &options, &space),
                     CFI_OK);
    ck_assert_int_eq(remote_proc_load_maps(proc, space, &diag), CFI_OK);
    size_t nthreads;
    const struct remote_thread *threads = remote_proc_threads(proc,
                                                              &nthreads);
    ck_assert_uint_eq(nthreads, 3);
    int signal_frames = 0;
    char all[8192] = "";
    for (size_t t = 0; t < nthreads; t++) {
        ck_assert(threads[t].regs_known);
        ck_assert_int_gt(threads[t].tid, 0);
        struct remote_frame frames[64];
        struct remote_stop stop;
        size_t n = remote_unwind(space, &threads[t].regs, true,
                                 remote_proc_read, proc,
                                 ENGINE_COUNT, frames, 64, &stop);
        char names[2048];
        names_of(space, frames, n, names, sizeof names);
        ck_assert_msg(stop.reason == REMOTE_STOP_OUTERMOST,
                      "thread %zu stopped: %s (%s) after%s", t,
                      remote_stop_text(stop.reason),
                      stop.diag.message ? stop.diag.message : "", names);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(frames[i].engine, engine);
            signal_frames += frames[i].signal_frame;
        }
        strncat(all, names, sizeof all - strlen(all) - 1);
    }
    remote_space_free(space);
    remote_proc_detach(proc);
    ck_assert_int_eq(signal_frames, 1);
    ck_assert_msg(strstr(all, " main "), "no main in%s", all);
    ck_assert_msg(strstr(all, " _ZNSt6thread4joinEv "), "no join in%s", all);
    ck_assert_msg(strstr(all, "on_usr1"), "no handler in%s", all);
    ck_assert_msg(strstr(all, "blocking_less"), "no comparator in%s", all);
    ck_assert_msg(strstr(all, "signalled"), "no signalled() in%s", all);
}

/* A copied stack (perf's) that ends `limit` bytes above the innermost
 * SP: a read at or beyond it is "stack copy exhausted". */
struct copy_reader {
    struct remote_proc *proc;
    uint64_t stack_low;
    uint64_t stack_end;
};

static enum remote_read_result copy_read(void *data, uint64_t addr,
                                         unsigned size, uint64_t *value)
{
    struct copy_reader *copy = data;
    if (addr >= copy->stack_end && addr < copy->stack_low + (1 << 20))
        return REMOTE_READ_STACK_COPY_EXHAUSTED;
    return remote_proc_read(copy->proc, addr, size, value);
}

/* Stops other than the outermost frame: the copied stack exhausted,
 * the frame limit. */
START_TEST(test_stack_copy_exhausted_and_max_frames)
{
    pid_t pid = start_target();
    struct remote_proc *proc;
    struct cfi_diag diag;
    ck_assert_int_eq(remote_proc_attach(pid, &proc, &diag), CFI_OK);
    struct remote_space *space = new_space();
    ck_assert_int_eq(remote_proc_load_maps(proc, space, &diag), CFI_OK);
    size_t nthreads;
    const struct remote_thread *threads = remote_proc_threads(proc,
                                                              &nthreads);
    ck_assert_uint_ge(nthreads, 1);
    ck_assert(threads[0].regs_known);
    struct cfi_regs regs = threads[0].regs;
    struct remote_frame frames[64];
    struct remote_stop stop;
    size_t whole = remote_unwind(space, &regs, true, remote_proc_read, proc,
                                 ENGINE_interp, frames, 64, &stop);
    ck_assert_int_eq(stop.reason, REMOTE_STOP_OUTERMOST);
    ck_assert_uint_ge(whole, 4);
    uint64_t sp = regs.value[CFI_REG_RSP];
    struct copy_reader copy = {proc, sp, frames[2].sp};
    size_t n = remote_unwind(space, &regs, true, copy_read, &copy,
                             ENGINE_interp, frames, 64, &stop);
    ck_assert_int_eq(stop.reason, REMOTE_STOP_STACK_COPY_EXHAUSTED);
    ck_assert_uint_lt(n, whole);
    ck_assert_uint_ge(n, 2);
    n = remote_unwind(space, &regs, true, remote_proc_read, proc,
                      ENGINE_interp, frames, 2, &stop);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(stop.reason, REMOTE_STOP_MAX_FRAMES);
    remote_space_free(space);
    remote_proc_detach(proc);
}
END_TEST

/* A reader of the stack that serves only the return addresses' slots
 * (CFA-8 of each frame of a whole walk): every other saved register is
 * unreadable, as a slot below a perf sample's copied stack is. */
struct ra_only_reader {
    struct remote_proc *proc;
    uint64_t stack_low, stack_high;
    const struct remote_frame *frames;
    size_t n;
};

static enum remote_read_result ra_only_read(void *data, uint64_t addr,
                                            unsigned size, uint64_t *value)
{
    struct ra_only_reader *r = data;
    if (addr >= r->stack_low && addr < r->stack_high) {
        bool ra = false;
        for (size_t i = 0; i < r->n; i++)
            ra |= r->frames[i].cfa && addr == r->frames[i].cfa - 8;
        if (!ra)
            return REMOTE_READ_UNREADABLE;
    }
    return remote_proc_read(r->proc, addr, size, value);
}

/* A saved register that cannot be read ends the walk only when the CFA
 * or the caller's PC needs it: otherwise it becomes unknown (lost), the
 * walk goes on, and every PC it gives is the whole walk's. */
static void unreadable_saves(enum engine_id engine, const char *cache)
{
    pid_t pid = start_target();
    struct remote_proc *proc;
    struct cfi_diag diag;
    ck_assert_int_eq(remote_proc_attach(pid, &proc, &diag), CFI_OK);
    struct remote_options options = {engine, cache, false};
    struct remote_space *space;
    ck_assert_int_eq(remote_space_new(&cfi_arch_x86_64, &options, &space),
                     CFI_OK);
    ck_assert_int_eq(remote_proc_load_maps(proc, space, &diag), CFI_OK);
    size_t nthreads, lost_and_went_on = 0;
    const struct remote_thread *threads = remote_proc_threads(proc,
                                                              &nthreads);
    for (size_t t = 0; t < nthreads; t++) {
        struct remote_frame whole[64], part[64];
        struct remote_stop stop;
        size_t n = remote_unwind(space, &threads[t].regs, true,
                                 remote_proc_read, proc, engine, whole, 64,
                                 &stop);
        ck_assert_int_eq(stop.reason, REMOTE_STOP_OUTERMOST);
        struct ra_only_reader r = {proc, threads[t].regs.value[CFI_REG_RSP],
                                   whole[n - 1].sp + 4096, whole, n};
        size_t m = remote_unwind(space, &threads[t].regs, true, ra_only_read,
                                 &r, engine, part, 64, &stop);
        ck_assert_uint_ge(m, 1);
        ck_assert_uint_le(m, n);
        for (size_t i = 0; i < m; i++) {
            ck_assert_uint_eq(part[i].pc, whole[i].pc);
            if (part[i].lost && i + 1 < m)
                lost_and_went_on++;
        }
        ck_assert_msg(stop.reason != REMOTE_STOP_MEMORY || m == n ||
                          part[m - 1].pc == whole[m - 1].pc,
                      "thread %zu", t);
    }
    ck_assert_msg(lost_and_went_on > 0, "no walk went on past a frame "
                  "whose saved registers could not be read");
    remote_space_free(space);
    remote_proc_detach(proc);
}

START_TEST(test_unreadable_saves_interp)
{
    unreadable_saves(ENGINE_interp, NULL);
}
END_TEST

START_TEST(test_unreadable_saves_compiled)
{
    char *cache = test_temp_dir();
    unreadable_saves(ENGINE_compiled, cache);
    free(cache);
}
END_TEST

START_TEST(test_target_interp)
{
    unwind_target(ENGINE_interp, NULL);
}
END_TEST

START_TEST(test_target_compiled)
{
    char *cache = test_temp_dir();
    unwind_target(ENGINE_compiled, cache);
    free(cache);
}
END_TEST

/* ------------------------------------------------------------------ */
/* cfisem stack against eu-stack and gdb                                */
/* ------------------------------------------------------------------ */

/* A backtrace as a list of threads, each a list of PCs; a PC of 0 stands
 * for gdb's "<signal handler called>", which prints none. */
#define MAX_THREADS 8
#define MAX_FRAMES 64
struct trace {
    size_t nthreads;
    long tid[MAX_THREADS];
    size_t nframes[MAX_THREADS];
    uint64_t pc[MAX_THREADS][MAX_FRAMES];
    bool signal_frame[MAX_THREADS][MAX_FRAMES];
    char stop[MAX_THREADS][160];
};

static char *command_output(const char *command)
{
    FILE *p = popen(command, "r");
    ck_assert_msg(p, "cannot run %s", command);
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t n;
    while ((n = fread(text + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            text = realloc(text, cap);
        }
    }
    text[len] = '\0';
    pclose(p);
    return text;
}

static void add_frame(struct trace *t, uint64_t pc, bool signal_frame)
{
    ck_assert_uint_gt(t->nthreads, 0);
    size_t th = t->nthreads - 1;
    ck_assert_uint_lt(t->nframes[th], MAX_FRAMES);
    t->pc[th][t->nframes[th]] = pc;
    t->signal_frame[th][t->nframes[th]++] = signal_frame;
}

static void add_thread(struct trace *t, long tid)
{
    ck_assert_uint_lt(t->nthreads, MAX_THREADS);
    t->tid[t->nthreads++] = tid;
}

/* eu-stack's and cfisem's text: "TID N:" then "#I  0xPC ...". */
static void parse_stack_text(const char *text, struct trace *t)
{
    memset(t, 0, sizeof *t);
    for (const char *line = text; *line;) {
        long tid;
        unsigned index;
        uint64_t pc;
        if (sscanf(line, "TID %ld:", &tid) == 1)
            add_thread(t, tid);
        else if (sscanf(line, "#%u 0x%" SCNx64, &index, &pc) == 2)
            add_frame(t, pc, strstr(line, "[signal frame]")
                                 && strstr(line, "[signal frame]")
                                        < strchr(line, '\n'));
        else if (strncmp(line, "stop: ", 6) == 0 && t->nthreads)
            sscanf(line + 6, "%159[^\n]", t->stop[t->nthreads - 1]);
        const char *next = strchr(line, '\n');
        line = next ? next + 1 : line + strlen(line);
    }
}

/* gdb's: "Thread N (... (LWP TID) ...):" then "#I  0xPC in ..." or
 * "#I  <signal handler called>". */
static void parse_gdb(const char *text, struct trace *t)
{
    memset(t, 0, sizeof *t);
    for (const char *line = text; *line;) {
        const char *lwp = strstr(line, "(LWP ");
        const char *end = strchr(line, '\n');
        unsigned index;
        uint64_t pc;
        if (strncmp(line, "Thread ", 7) == 0 && lwp && (!end || lwp < end))
            add_thread(t, strtol(lwp + 5, NULL, 10));
        else if (sscanf(line, "#%u 0x%" SCNx64, &index, &pc) == 2)
            add_frame(t, pc, false);
        else if (sscanf(line, "#%u <signal handler called>", &index) == 1)
            add_frame(t, 0, true);
        line = end ? end + 1 : line + strlen(line);
    }
}

static const struct trace *thread_of(const struct trace *t, long tid,
                                     size_t *at)
{
    for (size_t i = 0; i < t->nthreads; i++)
        if (t->tid[i] == tid) {
            *at = i;
            return t;
        }
    return NULL;
}

/* Every thread of `theirs` has ours's PCs, frame by frame; a frame of
 * theirs with PC 0 (gdb's signal frame) is our signal frame. */
static void assert_same(const struct trace *ours, const struct trace *theirs,
                        const char *who)
{
    ck_assert_uint_eq(ours->nthreads, 3);
    ck_assert_msg(ours->nthreads == theirs->nthreads, "%s has %zu threads, "
                  "cfisem %zu", who, theirs->nthreads, ours->nthreads);
    for (size_t i = 0; i < theirs->nthreads; i++) {
        size_t o;
        ck_assert_msg(thread_of(ours, theirs->tid[i], &o), "%s's thread "
                      "%ld is not cfisem's", who, theirs->tid[i]);
        ck_assert_msg(ours->nframes[o] == theirs->nframes[i],
                      "thread %ld: %zu frames, %s %zu", theirs->tid[i],
                      ours->nframes[o], who, theirs->nframes[i]);
        for (size_t f = 0; f < theirs->nframes[i]; f++) {
            if (theirs->pc[i][f] == 0) {
                ck_assert_msg(ours->signal_frame[o][f] && f > 0,
                              "thread %ld #%zu: %s's signal frame",
                              theirs->tid[i], f, who);
                continue;
            }
            ck_assert_msg(ours->pc[o][f] == theirs->pc[i][f],
                          "thread %ld #%zu: 0x%" PRIx64 ", %s 0x%" PRIx64,
                          theirs->tid[i], f, ours->pc[o][f], who,
                          theirs->pc[i][f]);
        }
        ck_assert_msg(strstr(ours->stop[o], "outermost frame"),
                      "thread %ld stopped: %s", theirs->tid[i],
                      ours->stop[o]);
    }
}

static char *cache_dir;

static void stack_of(pid_t pid, const char *engines, struct trace *t,
                     char **text)
{
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    const char *args[] = {"stack", pid_text, "--cache", cache_dir,
                          engines ? "--engines" : NULL, engines, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "cfisem stack: exit %d: %s",
                  run.exit_code, run.err);
    ck_assert_str_eq(run.err, "");
    parse_stack_text(run.out, t);
    if (text)
        *text = strdup(run.out);
    test_run_free(&run);
}

static void setup_cache(void)
{
    cache_dir = test_temp_dir();
}

START_TEST(test_same_pcs_as_eu_stack)
{
    pid_t pid = start_target();
    struct trace ours, theirs;
    stack_of(pid, NULL, &ours, NULL);
    /* Resumed, not left stopped (a 't' state). */
    ck_assert(all_threads_sleep(pid));
    char command[128];
    snprintf(command, sizeof command, "eu-stack -p %d 2>/dev/null",
             (int)pid);
    char *text = command_output(command);
    parse_stack_text(text, &theirs);
    free(text);
    assert_same(&ours, &theirs, "eu-stack");
}
END_TEST

/* gdb without the distribution's debug files: with them, it adds the
 * frames that tail calls removed (DW_AT_call_tail_call call sites, a
 * "tail call frame" to `info frame`), which no CFI describes: glibc's
 * __futex_abstimed_wait_cancelable64 jumps to
 * __futex_abstimed_wait_common, and the return address on the stack is
 * its caller's. */
START_TEST(test_same_pcs_as_gdb)
{
    pid_t pid = start_target();
    struct trace ours, theirs;
    stack_of(pid, NULL, &ours, NULL);
    char command[512];
    snprintf(command, sizeof command,
             "gdb -nx -batch -iex 'set debug-file-directory /nonexistent' "
             "-p %d -ex 'set print frame-info location-and-address' "
             "-ex 'set backtrace past-main on' "
             "-ex 'thread apply all bt' 2>/dev/null", (int)pid);
    char *text = command_output(command);
    parse_gdb(text, &theirs);
    free(text);
    assert_same(&ours, &theirs, "gdb");
}
END_TEST

/* cfisem's own engines give the same frames. */
START_TEST(test_own_engines_agree)
{
    pid_t pid = start_target();
    struct trace ours, interp;
    char *text;
    stack_of(pid, "compiled,interp,il", &ours, &text);
    ck_assert_msg(!strstr(text, "differs"), "%s", text);
    free(text);
    stack_of(pid, "interp", &interp, NULL);
    assert_same(&ours, &interp, "interp");
    /* An outside engine that stops early (no .sframe in these files) is
     * flagged, frame by frame and by its stop, and is no defect. */
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    const char *args[] = {"stack", pid_text, "--engines", "interp,sframe",
                          NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_msg(strstr(run.out, "    differs: sframe has no frame #1")
                  && strstr(run.out, "stop (sframe): "), "%s", run.out);
    test_run_free(&run);
    const char *json_args[] = {"stack", pid_text, "--engines",
                               "interp,sframe", "--json", NULL};
    test_run_cfisem(json_args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_msg(strstr(run.out, "\"engine\": \"sframe\", \"frame\": 1")
                  && strstr(run.out, "\"differ\": false}"), "%s", run.out);
    test_run_free(&run);
    /* The outside engines through the same walk: none differs here. */
    stack_of(pid, "compiled,libdw,libunwind,libdwarf", &ours, &text);
    ck_assert_msg(!strstr(text, "differs"), "%s", text);
    free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Cores                                                                */
/* ------------------------------------------------------------------ */

/* A core of the running target, by gdb's gcore: its path (malloc'd). */
static char *make_core(pid_t pid)
{
    char prefix[512], command[1024];
    snprintf(prefix, sizeof prefix, "%s/core", cache_dir);
    snprintf(command, sizeof command,
             "gcore -o %s %d > /dev/null 2>&1", prefix, (int)pid);
    ck_assert_int_eq(system(command), 0);
    char *path = malloc(600);
    snprintf(path, 600, "%s.%d", prefix, (int)pid);
    struct stat st;
    ck_assert_msg(stat(path, &st) == 0, "gcore wrote no %s", path);
    return path;
}

static void stack_of_core(const char *core, struct trace *t)
{
    const char *args[] = {"stack", "--core", core, "--cache", cache_dir,
                          NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "cfisem stack --core: exit %d: %s",
                  run.exit_code, run.err);
    parse_stack_text(run.out, t);
    test_run_free(&run);
}

/* The core's stacks are the live process's, and eu-stack's of the
 * core. */
START_TEST(test_core_same_as_live)
{
    pid_t pid = start_target();
    struct trace live, from_core, theirs;
    stack_of(pid, NULL, &live, NULL);
    char *core = make_core(pid);
    kill_target();
    stack_of_core(core, &from_core);
    assert_same(&from_core, &live, "the live process");
    char command[1024];
    snprintf(command, sizeof command, "eu-stack --core %s -e %s "
             "2>/dev/null", core, getenv("CFISEM_STACK_TARGET"));
    char *text = command_output(command);
    parse_stack_text(text, &theirs);
    free(text);
    assert_same(&from_core, &theirs, "eu-stack --core");
    unlink(core);
    free(core);
}
END_TEST

/* `cfisem stack --core PATH` is refused with exit 2 and one line that
 * names PATH. */
static void assert_refused(const char *path, const char *why)
{
    const char *args[] = {"stack", "--core", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 2, "%s: exit %d", why, run.exit_code);
    ck_assert_msg(test_count_lines(run.err) == 1 && strstr(run.err, path),
                  "%s: %s", why, run.err);
    ck_assert_str_eq(run.out, "");
    test_run_free(&run);
}

static void copy_prefix(const char *from, const char *to, size_t size)
{
    size_t len;
    char *bytes = test_read_file(from, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(test_write_file(to, bytes, size < len ? size : len), 0);
    free(bytes);
}

START_TEST(test_bad_cores_refused)
{
    pid_t pid = start_target();
    char *core = make_core(pid);
    kill_target();
    char path[700];
    snprintf(path, sizeof path, "%s.cut", core);
    struct stat st;
    ck_assert_int_eq(stat(core, &st), 0);
    copy_prefix(core, path, (size_t)st.st_size / 2);
    assert_refused(path, "half a core");
    copy_prefix(core, path, 100);
    assert_refused(path, "a core cut in its header table");
    copy_prefix(core, path, 0);
    assert_refused(path, "an empty file");
    assert_refused(getenv("CFISEM_STACK_TARGET"), "an executable");
    snprintf(path, sizeof path, "%s.dir", core);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    assert_refused(path, "a folder");
    rmdir(path);
    snprintf(path, sizeof path, "%s.fifo", core);
    ck_assert_int_eq(mkfifo(path, 0644), 0);
    assert_refused(path, "a FIFO");
    unlink(path);
    snprintf(path, sizeof path, "%s.cut", core);
    unlink(path);
    unlink(core);
    free(core);
}
END_TEST

/* Bytes of the header, the program headers and the notes changed at
 * random (a fixed seed): never a crash; a refusal is one line. */
START_TEST(test_mutated_cores_never_crash)
{
    pid_t pid = start_target();
    char *core = make_core(pid);
    kill_target();
    FILE *f = fopen(core, "r+b");
    ck_assert_ptr_nonnull(f);
    uint8_t original[16384];
    size_t len = fread(original, 1, sizeof original, f);
    ck_assert_uint_gt(len, 1024);
    unsigned seed = 25;
    for (int mutant = 0; mutant < 60; mutant++) {
        uint8_t bytes[sizeof original];
        memcpy(bytes, original, len);
        for (int k = 0; k < 4; k++) {
            size_t at = (size_t)rand_r(&seed) % len;
            bytes[at] = (uint8_t)rand_r(&seed);
        }
        rewind(f);
        ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
        fflush(f);
        const char *args[] = {"stack", "--core", core, "--cache", cache_dir,
                              "--max-frames", "64", NULL};
        struct test_run run;
        test_run_cfisem(args, &run);
        ck_assert_msg(run.exit_code == 0 || run.exit_code == 2,
                      "mutant %d: exit %d, signal %d: %s", mutant,
                      run.exit_code, run.signal, run.err);
        if (run.exit_code == 2)
            ck_assert_msg(test_count_lines(run.err) == 1, "mutant %d: %s",
                          mutant, run.err);
        test_run_free(&run);
    }
    fclose(f);
    unlink(core);
    free(core);
}
END_TEST

/* A running thread, stopped anywhere: nearly always in the vDSO, which
 * is in no file (its bytes are copied into one). Every stack ends at
 * the outermost frame, through main. */
START_TEST(test_running_process_in_the_vdso)
{
    pid_t pid = spawn("CFISEM_STACK_BUSY");
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    int in_vdso = 0;
    for (int run_no = 0; run_no < 10; run_no++) {
        const char *args[] = {"stack", pid_text, "--cache", cache_dir, NULL};
        struct test_run run;
        test_run_cfisem(args, &run);
        ck_assert_msg(run.exit_code == 0, "exit %d: %s", run.exit_code,
                      run.err);
        ck_assert_msg(strstr(run.out, "stop: outermost frame")
                      && strstr(run.out, " main+0x"), "%s", run.out);
        in_vdso += strstr(run.out, "#0  ") && strstr(run.out, " [vdso]\n");
        test_run_free(&run);
    }
    ck_assert_int_gt(in_vdso, 0);
}
END_TEST

/* An AArch64 core, written by qemu-aarch64 (no NT_FILE note: EXE places
 * the segments), gives gdb-multiarch's frames through the interpreter
 * and the IL evaluator, which agree. */
START_TEST(test_aarch64_core_same_as_gdb)
{
    const char *exe = getenv("CFISEM_STACK_A64");
    ck_assert_msg(exe && access(exe, X_OK) == 0, "CFISEM_STACK_A64 is not "
                  "built (make needs %s)", "aarch64-linux-gnu-gcc");
    char *dir = test_temp_dir();
    char command[2048];
    snprintf(command, sizeof command, "cd %s && ulimit -c unlimited && "
             "qemu-aarch64 %s > /dev/null 2>&1; ls %s/qemu_*.core", dir, exe,
             dir);
    char *listed = command_output(command);
    char core[1024] = "";
    sscanf(listed, "%1023s", core);
    free(listed);
    ck_assert_msg(strstr(core, ".core"), "qemu-aarch64 wrote no core");
    const char *args[] = {"stack", "--core", core, exe, "--engines",
                          "interp,il", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "exit %d: %s%s", run.exit_code,
                  run.out, run.err);
    struct trace ours, theirs;
    parse_stack_text(run.out, &ours);
    ck_assert_msg(strstr(run.out, " main+0x") && !strstr(run.out, "differs"),
                  "%s", run.out);
    test_run_free(&run);
    snprintf(command, sizeof command, "gdb-multiarch -nx -batch %s %s "
             "-ex 'set print frame-info location-and-address' "
             "-ex 'set backtrace past-main on' -ex bt 2>/dev/null", exe,
             core);
    char *text = command_output(command);
    /* One thread: gdb prints the innermost frame alone when it loads
     * the core, then the backtrace: from the last "#0" on. */
    char *bt = NULL;
    for (char *at = strstr(text, "\n#0 "); at; at = strstr(at + 1, "\n#0 "))
        bt = at;
    ck_assert_msg(bt, "gdb-multiarch printed no backtrace: %s", text);
    memset(&theirs, 0, sizeof theirs);
    add_thread(&theirs, ours.tid[0]);
    for (char *line = bt + 1; *line;) {
        unsigned index;
        uint64_t pc;
        if (sscanf(line, "#%u 0x%" SCNx64, &index, &pc) == 2)
            add_frame(&theirs, pc, false);
        char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    free(text);
    ck_assert_uint_eq(ours.nthreads, 1);
    ck_assert_uint_ge(theirs.nframes[0], 6);
    ck_assert_uint_eq(ours.nframes[0], theirs.nframes[0]);
    for (size_t f = 0; f < theirs.nframes[0]; f++)
        ck_assert_msg(ours.pc[0][f] == theirs.pc[0][f], "#%zu: 0x%" PRIx64
                      ", gdb 0x%" PRIx64, f, ours.pc[0][f],
                      theirs.pc[0][f]);
    ck_assert(strstr(ours.stop[0], "outermost frame"));
    unlink(core);
    rmdir(dir);
    free(dir);
}
END_TEST

/* Usage errors and a process that does not exist. */
START_TEST(test_usage_and_missing_process)
{
    const char *const cases[][5] = {
        {"stack", NULL}, {"stack", "12x", NULL}, {"stack", "1", "2", NULL},
        {"stack", "1", "--engines", "nosuch", NULL},
        {"stack", "1", "--max-frames", "0", NULL},
        {"stack", "--bogus", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct test_run run;
        test_run_cfisem(cases[i], &run);
        ck_assert_int_eq(run.exit_code, TEST_EXIT_USAGE);
        test_run_free(&run);
    }
    /* Beyond pid_max (at most 2^22): no such process. */
    const char *args[] = {"stack", "2147483000", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 2);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    ck_assert_ptr_nonnull(strstr(run.err, "no such process"));
    test_run_free(&run);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("stack");
    TCase *tc = tcase_create("remote");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, NULL, kill_target);
    tcase_add_test(tc, test_map_replaces_and_splits);
    tcase_add_test(tc, test_tables_of_mappings_switch);
    tcase_add_test(tc, test_stop_reasons_without_objects);
    tcase_add_test(tc, test_stop_names_distinct);
    tcase_add_test(tc, test_stack_copy_exhausted_and_max_frames);
    tcase_add_test(tc, test_target_interp);
    tcase_add_test(tc, test_target_compiled);
    tcase_add_test(tc, test_unreadable_saves_interp);
    tcase_add_test(tc, test_unreadable_saves_compiled);
    suite_add_tcase(suite, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, setup_cache, NULL);
    tcase_add_checked_fixture(tc, NULL, kill_target);
    tcase_add_test(tc, test_same_pcs_as_eu_stack);
    tcase_add_test(tc, test_same_pcs_as_gdb);
    tcase_add_test(tc, test_own_engines_agree);
    tcase_add_test(tc, test_core_same_as_live);
    tcase_add_test(tc, test_bad_cores_refused);
    tcase_add_test(tc, test_mutated_cores_never_crash);
    tcase_add_test(tc, test_usage_and_missing_process);
    tcase_add_test(tc, test_running_process_in_the_vdso);
    tcase_add_test(tc, test_aarch64_core_same_as_gdb);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
