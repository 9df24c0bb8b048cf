/* validate.c — `cfisem validate`: an eh_elf against the IL evaluator at
 * every address of every FDE (diff/validate.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "diff/validate.h"
#include "trace/trace.h"

static const char usage[] =
    "usage: cfisem validate FILE EH_ELF.so [--abi full|v1|v1-direct]\n"
    "                       [--states N] [--seed S] [--json OUT] [--show N]\n"
    "                       [--keep N] [--progress] [--pcs stapsdt]\n"
    "\n"
    "Checks a compiled unwinder (an eh_elf built for FILE) against the IL\n"
    "evaluator at every address of every FDE of FILE, as an innermost\n"
    "frame, in N states each, and at the first address after each FDE that\n"
    "no FDE covers (the eh_elf must say \"no FDE\" there). Reports each\n"
    "wrong address range: consecutive wrong addresses of one FDE with the\n"
    "same kind of difference, with the first wrong answer (expected and\n"
    "got), the row's IL and the `cfisem unwind` line of the reference.\n"
    "\n"
    "  --abi full       (default) an eh_elf of cfisem (compile/eh_elf.h):\n"
    "                   status and error class, CFA, registers 0-16\n"
    "  --abi v1         the first published eh_elf ABI, with deref:\n"
    "                   _eh_elf(ctx, pc, deref); compared on error or not,\n"
    "                   the CFA (rsp), rip, rbp, rbx; a clear rbp or rbx\n"
    "                   flag means the callee's value (the ABI default)\n"
    "  --abi v1-direct  the same without deref: _eh_elf(ctx, pc) reads raw\n"
    "                   pointers. The stack is placed in a region this\n"
    "                   process maps and fills with the memory model's\n"
    "                   bytes; the calls run in child processes, and a call\n"
    "                   that crashes is reported as a wrong answer\n"
    "  --states N       states per address (default 4, at most 1024): random\n"
    "                   registers with a plausible stack; every 4th has one\n"
    "                   read faulting (not for v1-direct); v1 states give\n"
    "                   rip, rsp, rbp and rbx only\n"
    "  --seed S         seed of the states (default 1)\n"
    "  --json OUT       write the result as JSON to OUT\n"
    "  --show N         wrong ranges printed (default 20)\n"
    "  --keep N         wrong ranges kept for --json (default 1000); all\n"
    "                   are counted\n"
    "  --progress       progress on stderr even when it is not a terminal\n"
    "  --pcs stapsdt    only at the SystemTap SDT probes of FILE (cfisem\n"
    "                   sites), innermost, as a tracer stopped there would\n"
    "\n"
    "Example:\n"
    "  cfisem compile /lib/x86_64-linux-gnu/libc.so.6 -o libc.eh_elf.so\n"
    "  cfisem validate /lib/x86_64-linux-gnu/libc.so.6 libc.eh_elf.so\n"
    "\n"
    "Exit status: 0 no wrong address; 1 wrong addresses, or a usage error\n"
    "(then nothing is run); 2 FILE or EH_ELF.so cannot be loaded (one line\n"
    "on stderr naming it).\n";

struct options {
    struct diff_validate_config config;
    const char *path;
    const char *eh_elf_path;
    const char *json_path;
    size_t show;
    bool progress;
    bool stapsdt_pcs;
};

static int parse_valued(const char *arg, const char *value, struct options *o)
{
    uint64_t n;
    if (!strcmp(arg, "--abi")) {
        if (!diff_abi_parse(value, &o->config.abi))
            return cli_usage_error("validate", "unknown ABI", value);
    } else if (!strcmp(arg, "--states")) {
        if (!cli_parse_u64(value, &n) || n < 1 || n > 1024)
            return cli_usage_error("validate", "--states takes 1 to 1024, not",
                                   value);
        o->config.nstates = (unsigned)n;
    } else if (!strcmp(arg, "--seed")) {
        if (!cli_parse_u64(value, &o->config.seed))
            return cli_usage_error("validate", "bad seed", value);
    } else if (!strcmp(arg, "--show") || !strcmp(arg, "--keep")) {
        if (!cli_parse_u64(value, &n) || n > 100000)
            return cli_usage_error("validate", "bad count", value);
        *(!strcmp(arg, "--show") ? &o->show : &o->config.keep) = (size_t)n;
    } else if (!strcmp(arg, "--pcs")) {
        o->stapsdt_pcs = !strcmp(value, "stapsdt");
        if (!o->stapsdt_pcs)
            return cli_usage_error("validate", "--pcs takes stapsdt, not",
                                   value);
    } else {
        o->json_path = value;  /* --json */
    }
    return CLI_OK;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const char *const valued[] = {"--abi", "--states", "--seed",
                                         "--json", "--show", "--keep",
                                         "--pcs"};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = false;
        for (size_t j = 0; j < sizeof valued / sizeof valued[0]; j++)
            takes_value |= !strcmp(arg, valued[j]);
        int status = CLI_OK;
        if (arg[0] != '-') {
            if (o->eh_elf_path)
                return cli_usage_error("validate", "one FILE and one EH_ELF.so,"
                                       " not also", arg);
            *(o->path ? &o->eh_elf_path : &o->path) = arg;
        } else if (!strcmp(arg, "--progress")) {
            o->progress = true;
        } else if (!takes_value) {
            status = cli_usage_error("validate", "unknown option", arg);
        } else if (i + 1 >= argc) {
            status = cli_usage_error("validate", "missing value for", arg);
        } else {
            status = parse_valued(arg, argv[++i], o);
        }
        if (status != CLI_OK)
            return status;
    }
    if (!o->eh_elf_path)
        return cli_usage_error("validate", "expected FILE and EH_ELF.so", NULL);
    return CLI_OK;
}

struct progress_env {
    bool enabled, tty, printed;
    double last;
};

/* On a terminal, one line rewritten after 2 s; elsewhere (--progress),
 * a line every 5 s. */
static void show_progress(void *env, uint64_t done, uint64_t total,
                          double seconds)
{
    struct progress_env *p = env;
    if (!p->enabled || seconds < 2.0 || (!p->tty && seconds - p->last < 5.0))
        return;
    p->last = seconds;
    p->printed = true;
    fprintf(stderr, "%scfisem validate: %" PRIu64 "/%" PRIu64
            " addresses, %.0f addresses/s%s", p->tty ? "\r" : "", done, total,
            seconds > 0 ? (double)done / seconds : 0.0, p->tty ? "   " : "\n");
    fflush(stderr);
}

static int report(const struct options *o, const struct diff_validation *v)
{
    diff_validation_text(stdout, v, o->show);
    fflush(stdout);
    int result = v->ranges_total ? CLI_MISMATCH : CLI_OK;
    if (!o->json_path)
        return result;
    FILE *out = fopen(o->json_path, "w");
    if (out)
        diff_validation_json(out, v);
    if (!out || fclose(out) != 0) {
        fprintf(stderr, "cfisem validate: %s: cannot write the JSON file\n",
                o->json_path);
        return result == CLI_OK ? CLI_BAD_INPUT : result;
    }
    return result;
}

int cli_validate(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return CLI_OK;
        }
    struct options o = {.show = 20};
    diff_validate_config_default(&o.config);
    o.config.keep = 1000;
    int result = parse_options(argc, argv, &o);
    if (result != CLI_OK)
        return result;
    struct progress_env progress = {o.progress || isatty(2), isatty(2), false,
                                    0};
    o.config.progress = show_progress;
    o.config.progress_env = &progress;
    struct diff_validation *v;
    const char *bad_path = NULL;
    struct cfi_diag diag;
    struct trace_sites sites = {NULL, 0, 0};
    uint64_t *pcs = NULL;
    enum cfi_status status = CFI_OK;
    if (o.stapsdt_pcs &&
        (status = trace_sites_read(o.path, &sites, &diag)) == CFI_OK) {
        pcs = calloc(sites.n ? sites.n : 1, sizeof *pcs);
        for (size_t i = 0; pcs && i < sites.n; i++)
            pcs[i] = sites.sites[i].pc;
        o.config.only_pcs = pcs;
        o.config.nonly_pcs = pcs ? sites.n : 0;
        trace_sites_free(&sites);
    }
    if (status == CFI_OK)
        status = diff_validate(&o.config, o.path, o.eh_elf_path, &v,
                               &bad_path, &diag);
    free(pcs);
    if (progress.printed && progress.tty)
        fputc('\n', stderr);
    if (status != CFI_OK) {
        cli_report_file_error(bad_path ? bad_path : o.path, &diag);
        return CLI_BAD_INPUT;
    }
    result = report(&o, v);
    diff_validation_free(v);
    return result;
}
