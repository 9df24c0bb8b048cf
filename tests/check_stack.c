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
    const char *program = getenv("CFISEM_STACK_TARGET");
    ck_assert_msg(program, "CFISEM_STACK_TARGET is not set");
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
                  "the target did not start");
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
    ck_assert_uint_eq(remote_proc_thread_count(proc), 3);
    int signal_frames = 0;
    char all[8192] = "";
    for (size_t t = 0; t < remote_proc_thread_count(proc); t++) {
        struct cfi_regs regs;
        ck_assert(remote_proc_thread_regs(proc, t, &regs));
        struct remote_frame frames[64];
        struct remote_stop stop;
        size_t n = remote_unwind(space, &regs, true, remote_proc_read, proc,
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

int main(void)
{
    Suite *suite = suite_create("stack");
    TCase *tc = tcase_create("remote");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, NULL, kill_target);
    tcase_add_test(tc, test_map_replaces_and_splits);
    tcase_add_test(tc, test_stop_reasons_without_objects);
    tcase_add_test(tc, test_stop_names_distinct);
    tcase_add_test(tc, test_target_interp);
    tcase_add_test(tc, test_target_compiled);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
