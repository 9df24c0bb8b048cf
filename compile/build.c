/* SPDX-License-Identifier: MIT */
/* build.c — cg_build: the generated C compiled into one shared object.
 *
 * Each unit is written to a temporary folder and compiled on its own,
 * up to `jobs` compilers at once, the largest units first (they take
 * longest); the objects are then linked with -shared. The compiler runs
 * without a shell: $CC is split at blanks. The eh_elf of an AArch64 file
 * is AArch64 code: its compiler is $CFISEM_AARCH64_CC, else
 * aarch64-linux-gnu-gcc (the generated C refuses any other: eh_elf.h's
 * register file is the target's). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

/* Options for every unit. A part of the search is one large function of
 * compares and jumps: -Os lays it out more tightly than -O2 (no padding
 * before jump targets) and runs as fast; jump threading and the
 * dominator optimisations take most of gcc's time on such a function and
 * find nothing to improve (no test in the search is redundant). The
 * eh_elf's own unwind tables are left out: its functions only call the
 * reader callbacks. The small "main" unit, run on every call, gets -O2
 * (it copies the callee's registers with vector moves, not rep movs). */
static const char *const compile_flags[] = {
    "-fPIC", "-fno-thread-jumps", "-fno-tree-dominator-opts",
    "-fno-asynchronous-unwind-tables", "-c",
};

#define MAX_ARGS 64

struct job {
    const struct cg_unit *unit;
    pid_t pid;
    bool done;
};

struct build {
    char dir[4096];
    const struct cg_program *program;
    const struct cg_build_options *options;
    char *cc_words;            /* the compiler command, split in place */
    char *cc_argv[MAX_ARGS];
    size_t cc_argc;
};

static enum cfi_status fail(struct cfi_diag *diag, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(diag, status, CFI_NO_OFFSET, message);
}

static bool aarch64(const struct build *b)
{
    return b->program->machine == EH_ELF_MACHINE_AARCH64;
}

/* The compiler of the eh_elf's machine, unless the options name one. */
static const char *compiler(const struct build *b)
{
    if (b->options && b->options->cc)
        return b->options->cc;
    const char *cc = getenv(aarch64(b) ? "CFISEM_AARCH64_CC" : "CC");
    if (cc && *cc)
        return cc;
    return aarch64(b) ? "aarch64-linux-gnu-gcc" : "cc";
}

static bool split_command(struct build *b)
{
    const char *cc = compiler(b);
    b->cc_words = strdup(cc);
    if (!b->cc_words)
        return false;
    char *saved = NULL;
    /* strtok_r: diff's threads build eh_elfs at the same time. */
    for (char *word = strtok_r(b->cc_words, " \t", &saved); word;
         word = strtok_r(NULL, " \t", &saved)) {
        if (b->cc_argc + 16 >= MAX_ARGS)
            return false;
        b->cc_argv[b->cc_argc++] = word;
    }
    return b->cc_argc > 0;
}

static bool path_in(const struct build *b, char *out, size_t size,
                    const char *name, const char *suffix)
{
    int n = snprintf(out, size, "%s/%s%s", b->dir, name, suffix);
    return n > 0 && (size_t)n < size;
}

static bool write_unit(const struct build *b, const struct cg_unit *unit)
{
    char path[4200];
    if (!path_in(b, path, sizeof path, unit->name, ".c"))
        return false;
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fwrite(b->program->prelude, 1, b->program->prelude_len, f);
    fwrite(unit->body, 1, unit->body_len, f);
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

/* Starts argv; stderr goes to /dev/null when quiet. */
static pid_t spawn(const struct build *b, char **argv)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (b->options && b->options->quiet)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int error = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    return error ? -1 : pid;
}

/* Waits for one of the running jobs; returns its index, its exit status
 * in *ok. */
static size_t wait_one(struct job *jobs, size_t n, bool *ok)
{
    for (;;) {
        for (size_t i = 0; i < n; i++) {
            if (jobs[i].done || jobs[i].pid <= 0)
                continue;
            int status;
            pid_t r = waitpid(jobs[i].pid, &status, WNOHANG);
            if (r == jobs[i].pid || (r < 0 && errno != EINTR)) {
                jobs[i].done = true;
                *ok = r == jobs[i].pid && WIFEXITED(status) &&
                      WEXITSTATUS(status) == 0;
                return i;
            }
        }
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
}

static pid_t start_compile(const struct build *b, const struct cg_unit *unit)
{
    char source[4200], object[4200];
    if (!path_in(b, source, sizeof source, unit->name, ".c") ||
        !path_in(b, object, sizeof object, unit->name, ".o"))
        return -1;
    char *argv[MAX_ARGS];
    size_t argc = 0;
    for (size_t i = 0; i < b->cc_argc; i++)
        argv[argc++] = b->cc_argv[i];
    argv[argc++] = strcmp(unit->name, "main") ? "-Os" : "-O2";
    for (size_t i = 0; i < sizeof compile_flags / sizeof *compile_flags; i++)
        argv[argc++] = (char *)compile_flags[i];
    argv[argc++] = "-o";
    argv[argc++] = object;
    argv[argc++] = source;
    argv[argc] = NULL;
    return spawn(b, argv);
}

static enum cfi_status cannot_run(const struct build *b,
                                  struct cfi_diag *diag)
{
    return fail(diag, CFI_E_UNSUPPORTED,
                aarch64(b) ? "cannot run the AArch64 C compiler "
                             "($CFISEM_AARCH64_CC, else aarch64-linux-gnu-gcc:"
                             " package gcc-aarch64-linux-gnu)"
                           : "cannot run the C compiler");
}

static int larger_first(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    if (x->unit->body_len != y->unit->body_len)
        return x->unit->body_len < y->unit->body_len ? 1 : -1;
    return strcmp(x->unit->name, y->unit->name);
}

/* Compiles every unit, `jobs` at a time. */
static enum cfi_status compile_all(const struct build *b, unsigned jobs,
                                   struct cfi_diag *diag)
{
    size_t n = b->program->nunits, started = 0, running = 0;
    struct job *list = calloc(n, sizeof *list);
    if (!list)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        list[i] = (struct job){&b->program->units[i], 0, false};
    qsort(list, n, sizeof *list, larger_first);
    enum cfi_status status = CFI_OK;
    while (started < n || running > 0) {
        if (status == CFI_OK && started < n && running < jobs) {
            list[started].pid = start_compile(b, list[started].unit);
            if (list[started].pid < 0)
                status = cannot_run(b, diag);
            else
                running++;
            started++;
            continue;
        }
        if (running == 0)
            break;
        bool ok = false;
        wait_one(list, started, &ok);
        running--;
        if (!ok && status == CFI_OK)
            status = fail(diag, CFI_E_UNSUPPORTED,
                          "the C compiler failed on the generated code");
    }
    free(list);
    return status;
}

static enum cfi_status link_objects(const struct build *b, const char *output,
                                    struct cfi_diag *diag)
{
    size_t n = b->program->nunits;
    char **argv = calloc(b->cc_argc + n + 8, sizeof *argv);
    char **objects = calloc(n, sizeof *objects);
    enum cfi_status status = CFI_OK;
    if (!argv || !objects)
        status = fail(diag, CFI_E_NOMEM, "out of memory");
    size_t argc = 0;
    for (size_t i = 0; status == CFI_OK && i < b->cc_argc; i++)
        argv[argc++] = b->cc_argv[i];
    if (status == CFI_OK) {
        argv[argc++] = "-shared";
        argv[argc++] = "-o";
        argv[argc++] = (char *)output;
    }
    for (size_t i = 0; status == CFI_OK && i < n; i++) {
        objects[i] = malloc(4200);
        if (!objects[i] || !path_in(b, objects[i], 4200,
                                    b->program->units[i].name, ".o"))
            status = fail(diag, CFI_E_NOMEM, "out of memory");
        else
            argv[argc++] = objects[i];
    }
    if (status == CFI_OK) {
        struct job job = {NULL, spawn(b, argv), false};
        bool ok = false;
        if (job.pid >= 0)
            wait_one(&job, 1, &ok);
        if (job.pid < 0)
            status = cannot_run(b, diag);
        else if (!ok)
            status = fail(diag, CFI_E_UNSUPPORTED,
                          "linking the eh_elf failed");
    }
    for (size_t i = 0; objects && i < n; i++)
        free(objects[i]);
    free(objects);
    free(argv);
    return status;
}

/* Removes the temporary folder and what the build put in it. */
static void clean(const struct build *b)
{
    static const char *const suffixes[] = {".c", ".o"};
    char path[4200];
    for (size_t i = 0; i < b->program->nunits; i++)
        for (size_t k = 0; k < 2; k++)
            if (path_in(b, path, sizeof path, b->program->units[i].name,
                        suffixes[k]))
                unlink(path);
    rmdir(b->dir);
}

static unsigned default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 1024 ? (unsigned)n : 1;
}

static enum cfi_status build_in(struct build *b, const char *output,
                                unsigned jobs, struct cfi_diag *diag)
{
    for (size_t i = 0; i < b->program->nunits; i++)
        if (!write_unit(b, &b->program->units[i]))
            return fail(diag, CFI_E_IO, "cannot write the generated C");
    enum cfi_status status = compile_all(b, jobs, diag);
    if (status != CFI_OK)
        return status;
    char temporary[4200];
    int n = snprintf(temporary, sizeof temporary, "%s.tmp%ld", output,
                     (long)getpid());
    if (n < 0 || (size_t)n >= sizeof temporary)
        return fail(diag, CFI_E_IO, "output path too long");
    status = link_objects(b, temporary, diag);
    if (status == CFI_OK && rename(temporary, output) != 0)
        status = fail(diag, CFI_E_IO, "cannot write the output file");
    if (status != CFI_OK)
        unlink(temporary);
    return status;
}

enum cfi_status cg_build(const struct cg_program *program, const char *output,
                         const struct cg_build_options *options,
                         struct cg_build_report *report,
                         struct cfi_diag *diag)
{
    double start = cg_now();
    struct build *b = calloc(1, sizeof *b);
    if (!b)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    b->program = program;
    b->options = options;
    const char *tmp = getenv("TMPDIR");
    snprintf(b->dir, sizeof b->dir, "%s/cfisem-cc.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    unsigned jobs = options && options->jobs ? options->jobs : default_jobs();
    enum cfi_status status;
    if (!split_command(b))
        status = fail(diag, CFI_E_UNSUPPORTED, "bad C compiler command");
    else if (!mkdtemp(b->dir))
        status = fail(diag, CFI_E_IO, "cannot create a temporary folder");
    else {
        status = build_in(b, output, jobs, diag);
        clean(b);
    }
    free(b->cc_words);
    free(b);
    if (report)
        *report = (struct cg_build_report){cg_now() - start, jobs};
    return status;
}
