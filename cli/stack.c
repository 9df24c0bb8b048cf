/* SPDX-License-Identifier: MIT */
/* stack.c — `cfisem stack`: the backtrace of every thread of a live
 * process or a core file, through remote/. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cfi/json.h"
#include "remote/core.h"
#include "remote/proc.h"
#include "remote/remote.h"

static const char usage[] =
    "usage: cfisem stack PID [--engines LIST] [--max-frames N] [--cache DIR]\n"
    "                    [--json]\n"
    "       cfisem stack --core CORE [EXE] [--engines LIST] [--max-frames N]\n"
    "                    [--cache DIR] [--json]\n"
    "\n"
    "Prints the backtrace of every thread of process PID, or of the core\n"
    "file CORE, innermost frame first, as eu-stack and gdb's 'thread apply\n"
    "all bt' do: '#N  PC SYMBOL+0xOFFSET OBJECT', the symbol from the\n"
    "object's .symtab and .dynsym, or those of its debug file\n"
    "(/usr/lib/debug/.build-id/NN/REST.debug) when that names more\n"
    "functions (?? when none holds the PC; a return address is looked\n"
    "up at PC-1; names are not demangled), and why the stack ended:\n"
    "outermost frame, stack memory unreadable, no object mapped at the PC,\n"
    "the object's file cannot be opened, no CFI for the PC, CFI or\n"
    "expression error, the engine cannot be asked, loop (the CFA does not\n"
    "grow), frame limit reached.\n"
    "\n"
    "PID: every thread of /proc/PID/task is stopped with PTRACE_SEIZE and\n"
    "PTRACE_INTERRUPT (no SIGSTOP: if cfisem dies, the threads run on),\n"
    "read (registers, memory through process_vm_readv, the objects of\n"
    "/proc/PID/maps; the vDSO's bytes copied into\n"
    "$TMPDIR/cfisem-vdso-HASH.so, kept for the next run), and resumed\n"
    "before the output is printed; a thread that does not stop within 2 s\n"
    "is left out, running.\n"
    "\n"
    "CORE: an ELF core (the kernel's or gdb's gcore): the registers of\n"
    "each NT_PRSTATUS note, the mappings of its NT_FILE note, the memory\n"
    "of its PT_LOAD segments and, for what the core lacks, of the mapped\n"
    "files (the vDSO, in no file, is not read from a core).\n"
    "EXE replaces the path of the core's mappings of a file of the same\n"
    "name; a core with no NT_FILE note (qemu-user's) gets EXE's PT_LOAD\n"
    "segments, placed by NT_AUXV's AT_ENTRY. x86-64 and AArch64 cores\n"
    "(an AArch64 eh_elf runs under qemu-aarch64: interp is faster to\n"
    "start). Each object's file is opened once; the frames' PCs are looked\n"
    "up at their link-time addresses (less the load bias from the\n"
    "mapping's offset and the file's PT_LOAD segments).\n"
    "\n"
    "  --engines LIST   engines asked, comma-separated (see cfisem --help);\n"
    "                   default: compiled, each object's eh_elf built into\n"
    "                   the cache on first sight, interp for an object\n"
    "                   whose eh_elf cannot be had. With several, the first\n"
    "                   engine's frames are printed and every frame where\n"
    "                   another engine gives another PC is flagged\n"
    "                   ('differs:'), with each engine's stop when they\n"
    "                   differ; an engine named explicitly has no fallback\n"
    "  --max-frames N   at most N frames a thread (default 256)\n"
    "  --cache DIR      the eh_elf cache (default\n"
    "                   ${XDG_CACHE_HOME:-~/.cache}/cfisem)\n"
    "  --json           one JSON object: {\"schema_version\": 1, \"pid\" or\n"
    "                   \"core\", \"engines\", \"threads\": [{\"tid\",\n"
    "                   \"frames\", \"stop\", \"differences\"}], \"differ\"}\n"
    "\n"
    "Example:\n"
    "  $ cfisem stack $(pidof sleep)\n"
    "  PID 30358\n"
    "  TID 30358:\n"
    "  #0  0x00007f058b19f503 clock_nanosleep+0x23"
    " /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "  #1  0x00007f058b1a3e53 nanosleep+0x13"
    " /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "  #2  0x000055e8712fe4af ?\?"
    " /usr/bin/sleep\n"
    "  ...\n"
    "  #7  0x000055e8712fa621 ?\?"
    " /usr/bin/sleep\n"
    "  stop: outermost frame (return address undefined or 0)"
    " at 0x55e8712fa621\n"
    "\n"
    "Exit status: 0 printed (a stack that ends early is an output, not an\n"
    "error), 1 cfisem's own engines (il, interp, compiled) gave different\n"
    "frames (a defect; a difference of an outside engine is flagged only),\n"
    "2 no such process, cannot attach, or a bad core file, 64 usage error.\n";

#define STACK_MAX_FRAMES_DEFAULT 256

struct options {
    long pid;
    const char *core;
    const char *exe;
    enum engine_id engines[ENGINE_COUNT];
    size_t nengines;        /* 0: the default (compiled, interp fallback) */
    size_t max_frames;
    const char *cache;
    bool json;
};

/* Where the threads come from. */
struct source {
    struct remote_proc *proc;
    struct remote_core *core;
};

static const struct remote_thread *threads_of(const struct source *s,
                                              size_t *count)
{
    return s->proc ? remote_proc_threads(s->proc, count)
                   : remote_core_threads(s->core, count);
}

static size_t thread_count(const struct source *s)
{
    size_t count;
    threads_of(s, &count);
    return count;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static int parse_engines(const char *list, struct options *o)
{
    o->nengines = 0;
    for (const char *at = list; *at;) {
        size_t len = strcspn(at, ",");
        int id = engine_parse(at, len);
        if (id < 0)
            return cli_usage_error("stack", "unknown engine in", list);
        for (size_t i = 0; i < o->nengines; i++)
            if (o->engines[i] == (enum engine_id)id)
                return cli_usage_error("stack", "engine named twice in",
                                       list);
        o->engines[o->nengines++] = (enum engine_id)id;
        at += len + (at[len] == ',');
    }
    if (o->nengines == 0)
        return cli_usage_error("stack", "no engine in", list);
    return CLI_OK;
}

static int positional(const char *arg, struct options *o, int *count)
{
    if (o->core) {
        if (*count > 0)
            return cli_usage_error("stack", "more than one EXE:", arg);
        o->exe = arg;
    } else {
        if (*count > 0)
            return cli_usage_error("stack", "more than one PID:", arg);
        char *end;
        o->pid = strtol(arg, &end, 10);
        if (*end || o->pid <= 0)
            return cli_usage_error("stack", "not a process id:", arg);
    }
    ++*count;
    return CLI_OK;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    int count = 0;
    /* --core first, wherever it is: it decides what the operands are. */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--core"))
            o->core = argv[i + 1];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        int result = CLI_OK;
        if (!strcmp(arg, "--json"))
            o->json = true;
        else if (!strcmp(arg, "--core") || !strcmp(arg, "--engines")
                 || !strcmp(arg, "--max-frames") || !strcmp(arg, "--cache")) {
            if (!has_value)
                return cli_usage_error("stack", "missing value for", arg);
            const char *value = argv[++i];
            if (!strcmp(arg, "--engines"))
                result = parse_engines(value, o);
            else if (!strcmp(arg, "--cache"))
                o->cache = value;
            else if (!strcmp(arg, "--max-frames")) {
                char *end;
                long n = strtol(value, &end, 10);
                if (*end || n <= 0 || n > 100000)
                    return cli_usage_error("stack", "bad --max-frames",
                                           value);
                o->max_frames = (size_t)n;
            }
        } else if (arg[0] == '-')
            return cli_usage_error("stack", "unknown option", arg);
        else
            result = positional(arg, o, &count);
        if (result != CLI_OK)
            return result;
    }
    if (!o->core && o->pid == 0)
        return cli_usage_error("stack", "missing PID or --core CORE", NULL);
    return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* One thread, by every engine                                          */
/* ------------------------------------------------------------------ */

struct walk {
    struct remote_frame *frames;
    size_t n;
    struct remote_stop stop;
};

struct thread_result {
    long tid;
    bool regs_read;
    struct walk walks[ENGINE_COUNT];   /* one per engine asked */
};

static bool own_engine(enum engine_id id)
{
    return id == ENGINE_il || id == ENGINE_interp || id == ENGINE_compiled;
}

/* Does engine k's frame i differ from the first engine's? */
static bool frame_differs(const struct thread_result *t, size_t k, size_t i)
{
    const struct walk *a = &t->walks[0], *b = &t->walks[k];
    if (i >= a->n || i >= b->n)
        return i < a->n || i < b->n;
    return a->frames[i].pc != b->frames[i].pc;
}

static bool stops_differ(const struct thread_result *t, size_t k)
{
    return t->walks[0].n != t->walks[k].n
           || t->walks[0].stop.reason != t->walks[k].stop.reason;
}

static enum engine_id engine_at(const struct options *o, size_t k)
{
    return o->nengines ? o->engines[k] : ENGINE_COUNT;
}

static size_t engines_asked(const struct options *o)
{
    return o->nengines ? o->nengines : 1;
}

static bool unwind_thread(const struct options *o, struct remote_space *space,
                          const struct source *s, size_t i,
                          struct thread_result *t)
{
    size_t count;
    const struct remote_thread *thread = &threads_of(s, &count)[i];
    t->tid = (long)thread->tid;
    t->regs_read = thread->regs_known;
    const struct cfi_regs *regs = &thread->regs;
    for (size_t k = 0; k < engines_asked(o); k++) {
        struct walk *w = &t->walks[k];
        w->frames = calloc(o->max_frames, sizeof *w->frames);
        if (!w->frames)
            return false;
        if (!t->regs_read)
            continue;
        w->n = s->proc
                   ? remote_unwind(space, regs, true, remote_proc_read,
                                   s->proc, engine_at(o, k), w->frames,
                                   o->max_frames, &w->stop)
                   : remote_unwind(space, regs, true, remote_core_read,
                                   s->core, engine_at(o, k), w->frames,
                                   o->max_frames, &w->stop);
    }
    return true;
}

static bool walks_differ(const struct walk *a, const struct walk *b)
{
    if (a->n != b->n || a->stop.reason != b->stop.reason)
        return true;
    for (size_t i = 0; i < a->n; i++)
        if (a->frames[i].pc != b->frames[i].pc)
            return true;
    return false;
}

/* True when cfisem's own engines (il, interp, compiled) among those
 * asked give different stacks: each is compared with the first of
 * them, wherever it is in the list. */
static bool own_engines_differ(const struct options *o,
                               const struct thread_result *t)
{
    const struct walk *first = NULL;
    for (size_t k = 0; k < o->nengines; k++) {
        if (!own_engine(o->engines[k]))
            continue;
        if (!first)
            first = &t->walks[k];
        else if (walks_differ(first, &t->walks[k]))
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

static void print_stop(const struct remote_stop *stop, const char *engine)
{
    printf("stop%s%s%s: %s", engine ? " (" : "", engine ? engine : "",
           engine ? ")" : "", remote_stop_text(stop->reason));
    if (stop->diag.message)
        printf(": %s", stop->diag.message);
    if (stop->object)
        printf(" (%s)", stop->object);
    if (stop->reason != REMOTE_STOP_OUTERMOST || stop->pc)
        printf(" at 0x%" PRIx64, stop->pc);
    putchar('\n');
}

static void print_frame(struct remote_space *space, size_t i,
                        const struct remote_frame *frame)
{
    struct remote_symbol symbol;
    remote_symbolize(space, frame, &symbol);
    printf("#%-2zu 0x%016" PRIx64, i, frame->pc);
    if (symbol.name)
        printf(" %s+0x%" PRIx64, symbol.name, symbol.offset);
    else
        printf(" ?\?");
    if (symbol.object)
        printf(" %s", symbol.object);
    if (frame->signal_frame)
        printf(" [signal frame]");
    putchar('\n');
}

static void print_thread_text(const struct options *o,
                              struct remote_space *space,
                              const struct thread_result *t)
{
    printf("TID %ld:\n", t->tid);
    if (!t->regs_read) {
        printf("stop: the thread's registers cannot be read\n");
        return;
    }
    const struct walk *first = &t->walks[0];
    size_t most = first->n;
    for (size_t k = 1; k < engines_asked(o); k++)
        if (t->walks[k].n > most)
            most = t->walks[k].n;
    for (size_t i = 0; i < most; i++) {
        if (i < first->n)
            print_frame(space, i, &first->frames[i]);
        for (size_t k = 1; k < engines_asked(o); k++) {
            if (!frame_differs(t, k, i))
                continue;
            printf("    differs: %s ", engine_name(o->engines[k]));
            if (i < t->walks[k].n)
                printf("0x%016" PRIx64 "\n", t->walks[k].frames[i].pc);
            else
                printf("has no frame #%zu\n", i);
        }
    }
    bool differ = false;
    for (size_t k = 1; k < engines_asked(o); k++)
        differ |= stops_differ(t, k);
    for (size_t k = 0; k < engines_asked(o); k++)
        if (k == 0 || (differ && stops_differ(t, k)))
            print_stop(&t->walks[k].stop,
                       differ ? engine_name(o->engines[k]) : NULL);
}

static void json_stop(const struct remote_stop *stop)
{
    printf("{\"reason\": \"%s\", \"text\": ", remote_stop_name(stop->reason));
    cfi_json_string(stdout, remote_stop_text(stop->reason));
    printf(", \"pc\": \"0x%" PRIx64 "\", \"message\": ", stop->pc);
    if (stop->diag.message)
        cfi_json_string(stdout, stop->diag.message);
    else
        printf("null");
    printf(", \"object\": ");
    if (stop->object)
        cfi_json_string(stdout, stop->object);
    else
        printf("null");
    putchar('}');
}

static void json_frame(struct remote_space *space,
                       const struct remote_frame *frame)
{
    struct remote_symbol symbol;
    remote_symbolize(space, frame, &symbol);
    printf("{\"pc\": \"0x%" PRIx64 "\", \"exact\": %s, \"signal_frame\": %s,"
           " \"engine\": ", frame->pc, frame->exact ? "true" : "false",
           frame->signal_frame ? "true" : "false");
    if (frame->engine < ENGINE_COUNT)
        printf("\"%s\"", engine_name(frame->engine));
    else
        printf("null");
    printf(", \"object\": ");
    if (symbol.object)
        cfi_json_string(stdout, symbol.object);
    else
        printf("null");
    printf(", \"symbol\": ");
    if (symbol.name)
        cfi_json_string(stdout, symbol.name);
    else
        printf("null");
    printf(", \"offset\": \"0x%" PRIx64 "\"}", symbol.offset);
}

static void json_differences(const struct options *o,
                             const struct thread_result *t)
{
    printf(", \"differences\": [");
    bool any = false;
    for (size_t k = 1; k < engines_asked(o); k++) {
        const struct walk *w = &t->walks[k];
        for (size_t i = 0; i < w->n || i < t->walks[0].n; i++) {
            if (!frame_differs(t, k, i))
                continue;
            printf("%s{\"engine\": \"%s\", \"frame\": %zu, \"pc\": ",
                   any ? ", " : "", engine_name(o->engines[k]), i);
            if (i < w->n)
                printf("\"0x%" PRIx64 "\"}", w->frames[i].pc);
            else
                printf("null}");
            any = true;
        }
        if (stops_differ(t, k)) {
            printf("%s{\"engine\": \"%s\", \"stop\": ", any ? ", " : "",
                   engine_name(o->engines[k]));
            json_stop(&w->stop);
            putchar('}');
            any = true;
        }
    }
    putchar(']');
}

static void print_thread_json(const struct options *o,
                              struct remote_space *space,
                              const struct thread_result *t, bool first)
{
    printf("%s\n  {\"tid\": %ld, \"frames\": [", first ? "" : ",", t->tid);
    const struct walk *w = &t->walks[0];
    for (size_t i = 0; i < w->n; i++) {
        printf(i ? ",\n    " : "\n    ");
        json_frame(space, &w->frames[i]);
    }
    printf("], \"stop\": ");
    if (t->regs_read)
        json_stop(&w->stop);
    else
        printf("null");
    json_differences(o, t);
    putchar('}');
}

static void print_json_head(const struct options *o)
{
    printf("{\"schema_version\": %d, ", CFI_JSON_SCHEMA_VERSION);
    if (o->core) {
        printf("\"core\": ");
        cfi_json_string(stdout, o->core);
    } else
        printf("\"pid\": %ld", o->pid);
    printf(", \"engines\": [");
    if (!o->nengines)
        printf("\"compiled\"");
    for (size_t k = 0; k < o->nengines; k++)
        printf("%s\"%s\"", k ? ", " : "", engine_name(o->engines[k]));
    printf("], \"threads\": [");
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

static void free_results(struct thread_result *results, size_t n)
{
    for (size_t i = 0; results && i < n; i++)
        for (size_t k = 0; k < ENGINE_COUNT; k++)
            free(results[i].walks[k].frames);
    free(results);
}

/* Unwinds every thread into results; the process may resume after. */
static int unwind_all(const struct options *o, struct remote_space *space,
                      const struct source *s, struct thread_result *results)
{
    for (size_t i = 0; i < thread_count(s); i++)
        if (!unwind_thread(o, space, s, i, &results[i])) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
    return CLI_OK;
}

static int print_all(const struct options *o, struct remote_space *space,
                     const struct thread_result *results, size_t n)
{
    bool defect = false;
    if (o->json)
        print_json_head(o);
    else if (o->core)
        printf("core %s\n", o->core);
    else
        printf("PID %ld\n", o->pid);
    for (size_t i = 0; i < n; i++) {
        defect |= own_engines_differ(o, &results[i]);
        if (o->json)
            print_thread_json(o, space, &results[i], i == 0);
        else
            print_thread_text(o, space, &results[i]);
    }
    if (o->json)
        printf("], \"differ\": %s}\n", defect ? "true" : "false");
    return defect ? CLI_MISMATCH : CLI_OK;
}

/* Opens the source and fills the space with its mappings. */
static int open_source(const struct options *o, struct source *s,
                       struct remote_space **space)
{
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    const struct cfi_arch *arch = &cfi_arch_x86_64;
    if (o->core) {
        if (remote_core_open(o->core, &s->core, &diag) != CFI_OK) {
            cli_report_file_error(o->core, &diag);
            return CLI_BAD_INPUT;
        }
        arch = remote_core_arch(s->core);
    } else if (remote_proc_attach((pid_t)o->pid, &s->proc, &diag)
               != CFI_OK) {
        fprintf(stderr, "cfisem: process %ld: %s\n", o->pid, diag.message);
        return CLI_BAD_INPUT;
    }
    struct remote_options options = {ENGINE_compiled, o->cache, true};
    if (remote_space_new(arch, &options, space) != CFI_OK) {
        fprintf(stderr, "cfisem: out of memory\n");
        return CLI_BAD_INPUT;
    }
    enum cfi_status status =
        s->core ? remote_core_load_maps(s->core, *space, o->exe)
                : remote_proc_load_maps(s->proc, *space, &diag);
    if (status != CFI_OK) {
        fprintf(stderr, "cfisem: %s: cannot read the mappings: %s\n",
                o->core ? o->core : "process",
                diag.message ? diag.message : cfi_status_text(status));
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

static int run(const struct options *o)
{
    struct source s = {NULL, NULL};
    struct remote_space *space = NULL;
    struct thread_result *results = NULL;
    size_t n = 0;
    int result = open_source(o, &s, &space);
    if (result == CLI_OK) {
        n = thread_count(&s);
        results = calloc(n, sizeof *results);
        result = results ? unwind_all(o, space, &s, results) : CLI_BAD_INPUT;
    }
    /* The process runs again before anything is printed. */
    remote_proc_detach(s.proc);
    if (result == CLI_OK)
        result = print_all(o, space, results, n);
    free_results(results, n);
    remote_space_free(space);
    remote_core_close(s.core);
    return result;
}

int cli_stack(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options o = {0, NULL, NULL, {ENGINE_il}, 0,
                        STACK_MAX_FRAMES_DEFAULT, NULL, false};
    int result = parse_options(argc, argv, &o);
    return result == CLI_OK ? run(&o) : result;
}
