/* SPDX-License-Identifier: MIT */
/* validate.c — `cfisem validate`: an eh_elf against the IL evaluator at
 * every address of every FDE (validate/validate.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"
#include "validate/validate.h"
#include "trace/trace.h"

static const char usage[] =
    "usage: cfisem validate FILE EH_ELF.so [--abi full|v1|v1-direct]\n"
    "                       [--states N] [--seed S] [--json OUT] [--show N]\n"
    "                       [--keep N] [--progress] [--allow-unsupported]\n"
    "                       [--timeout S] [--pcs stapsdt] [--debug-dir DIR]\n"
    "       cfisem validate FILE --hdr [--show N]\n"
    "       cfisem validate FILE --sframe [--states N] [--seed S] [--show N]\n"
    "\n"
    "Checks a compiled unwinder (an eh_elf built for FILE) against the IL\n"
    "evaluator at every address of every FDE of FILE, as an innermost\n"
    "frame, in N states each, and at every address of FILE's text that no\n"
    "FDE covers (the eh_elf must say \"no FDE\" there). The eh_elf runs in\n"
    "child processes: a call that crashes or hangs is a wrong answer, with\n"
    "its signal. Reports the wrong ranges summed up by kind, then each:\n"
    "consecutive wrong addresses of one FDE with the same kind of\n"
    "difference, with the first wrong answer (expected and got), the row's\n"
    "IL and the `cfisem unwind` lines of the reference and of the eh_elf.\n"
    "A range where the eh_elf only says it cannot (an error flag where the\n"
    "reference unwinds) is \"unsupported\", apart from wrong values.\n"
    "\n"
    "  --abi full       (default) an eh_elf of cfisem (compile/eh_elf.h):\n"
    "                   status and error class, CFA, registers 0-16\n"
    "  --abi v1         the first published eh_elf ABI, with deref:\n"
    "                   _eh_elf(ctx, pc, deref); compared on error or not,\n"
    "                   the CFA (rsp), rip, rbp, rbx; rip is the return\n"
    "                   address column's value; a clear rbp or rbx flag\n"
    "                   means the callee's value (the ABI default); where\n"
    "                   rip, rbp or rbx is a register v1 lacks (rip=rdi)\n"
    "                   the error flag is expected\n"
    "  --abi v1-direct  the same without deref: _eh_elf(ctx, pc) reads raw\n"
    "                   pointers. The stack is placed in a region the\n"
    "                   child process maps and fills with the memory\n"
    "                   model's bytes\n"
    "  --states N       states per address (default 4, at most 1024): random\n"
    "                   registers with a plausible stack; every 4th has one\n"
    "                   read faulting (not for v1-direct); v1 states give\n"
    "                   rip, rsp, rbp and rbx only\n"
    "  --seed S         seed of the states (default 1)\n"
    "  --debug-dir DIR  look for a stripped FILE's separate debug file in\n"
    "                   DIR before /usr/lib/debug, as cfisem compile does\n"
    "                   (repeatable)\n"
    "  --json OUT       write the result as JSON to OUT\n"
    "  --show N         wrong ranges printed (default 20)\n"
    "  --keep N         wrong ranges kept for --json (default 1000); all\n"
    "                   are counted\n"
    "  --progress       progress on stderr even when it is not a terminal\n"
    "  --allow-unsupported  \"unsupported\" ranges do not fail the run\n"
    "  --timeout S      seconds a child process has for 1024 calls (default\n"
    "                   10, at most 3600); a call still running then is\n"
    "                   \"timed out (SIGALRM)\", a crash\n"
    "  --pcs stapsdt    only at the SystemTap SDT probes of FILE (cfisem\n"
    "                   sites), innermost, as a tracer stopped there would\n"
    "\n"
    "Example:\n"
    "  cfisem compile /lib/x86_64-linux-gnu/libc.so.6 -o libc.eh_elf.so\n"
    "  cfisem validate /lib/x86_64-linux-gnu/libc.so.6 libc.eh_elf.so\n"
    "\n"
    "An eh_elf of cfisem must carry FILE's stamp (cfisem compile --help);\n"
    "one of the 2018-2019 tools (v1, no eh_elf_ident) carries none and is\n"
    "validated unchecked.\n"
    "\n"
        "Addresses: every address of every FDE (at most 1 MiB per FDE), and of FILE's\n"
        "text that no FDE covers: its SHF_EXECINSTR sections, or its executable\n"
        "segments when it has no section headers (at most 1 MiB per gap). The eh_elf\n"
        "runs only in child processes, never in cfisem's own, whatever the ABI: a\n"
        "call that crashes (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP,\n"
        "SIGSYS) is caught, and one that does not return within the time limit is\n"
        "stopped; either is a wrong answer named by its signal (\"crashed (SIGABRT)\",\n"
        "\"timed out (SIGALRM)\"), with the first lines the eh_elf wrote on stderr\n"
        "before it, and the run goes on.\n"
        "\n"
        "An address is wrong when one of its states' answers differs; its kind is\n"
        "that of its first wrong answer that is not \"unsupported\" (else of its\n"
        "first): the items that differ (status with both classes, cfa, each register)\n"
        "or \"crashed\" with the signal. Consecutive wrong addresses of one FDE (or of\n"
        "one gap) of the same kind make one wrong range. Each range has a class:\n"
        "\n"
        "  - wrong value: the eh_elf gives an answer that is wrong (unsafe);\n"
        "  - unsupported: the eh_elf says it cannot (its error flag in v1,\n"
        "    EH_ELF_E_UNSUPPORTED in full) where the reference answers something\n"
        "    else, and nothing else differs: a generator's limitation, safe for a\n"
        "    consumer that falls back to DWARF;\n"
        "  - crashed.\n"
        "\n"
        "The eh_elf's reproducer line is --engine compiled --eh-elf X --abi A, for\n"
        "every ABI. When most calls crashed under v1 or v1-direct, the report says\n"
        "the ABI is probably wrong, and which one fits when a sample of 2048\n"
        "addresses asked with the other variant gives no crash.\n"
        "\n"
        "  $ cfisem validate /lib/x86_64-linux-gnu/libc.so.6 libc.eh_elf.so\n"
        "  cfisem validate: /lib/x86_64-linux-gnu/libc.so.6 with libc.eh_elf.so (abi full): 3713 FDEs, 1396969 addresses (30073 in no FDE), 4 states: 5587876 requests, seed 1, 4.5 s\n"
        "  reference answers: ok 3929325 no_fde 120292 memory 1366826 reg_unknown 171433\n"
        "\n"
        "  result: 0 wrong ranges: pass\n"
        "\n"
        "  $ cfisem validate gaps.so gap.so --abi v1     # gaps answered with the previous row\n"
        "  ...\n"
        "  wrong ranges by kind:\n"
        "      ranges  addresses    answers  kind\n"
        "           2          8         32  wrong value: status no_fde->ok\n"
        "\n"
        "  wrong: 2 ranges, 8 addresses, 32 answers (the first 2 ranges)\n"
        "  [1] [0x1003,0x1008) wrong value: status no_fde->ok: 5 addresses, 20 wrong answers\n"
        "      in no FDE, after fde .eh_frame+0x18 [0x1000,0x1003)\n"
        "      first at 0x1003, state 0 (full):\n"
        "      status expected no_fde (no FDE covers the address), got ok\n"
        "      reference: cfisem unwind gaps.so --pc 0x1003 --regs rbx=0x26dc...,rbp=0x7ffe0002bce0,rsp=0x7ffe0002b2e0,rip=0x1003 --mem-seed 0xcfdb23c7edbe59ce --engine il\n"
        "      eh_elf:    cfisem unwind gaps.so --pc 0x1003 --regs rbx=0x26dc...,rbp=0x7ffe0002bce0,rsp=0x7ffe0002b2e0,rip=0x1003 --mem-seed 0xcfdb23c7edbe59ce --engine compiled --eh-elf gap.so --abi v1\n"
        "  ...\n"
        "  result: 2 wrong ranges: FAIL\n"
        "\n"
        "(gaps.so and the hand-written eh_elfs of this example are\n"
        "tests/validate/gaps.S and tests/validate/gaps_v1.c in the sources.) A crash\n"
        "prints as\n"
        "\n"
        "  [1] [0x1003,0x1008) crashed (SIGABRT): 5 addresses, 20 wrong answers\n"
        "      in no FDE, after fde .eh_frame+0x18 [0x1000,0x1003)\n"
        "      first at 0x1003, state 0 (full): the call crashed (SIGABRT)\n"
        "      the eh_elf wrote on stderr:\n"
        "        | cfisem: gaps_v1.c:44: _eh_elf: Assertion `!gap && \"no FDE covers the address\"' failed.\n"
        "\n"
        "ABI v1: any tool's output, found with dlsym, no version symbol needed. v1\n"
        "states always give all four of rip, rsp, rbp and rbx, and the CFA is the\n"
        "result's rsp, whose flag must be set. The reference is the IL row restricted\n"
        "to the rules of rbx, rbp and of the return address column, evaluated as the\n"
        "IL evaluator does: the caller's rip is the value of the CIE's return address\n"
        "column (DWARF 5 section 6.4.1), so a CIE naming rcx with no rule for it gives an\n"
        "undefined rip. Where the rule of rip, rbp or rbx is DW_CFA_register of a\n"
        "register v1's context lacks (rip=rdi at libc's __vfork), the value is well\n"
        "defined but v1 cannot carry it: the expected answer is the error flag (a\n"
        "clear rip flag would mean \"undefined\", the end of the stack; a clear rbp or\n"
        "rbx flag \"the callee's value\"). A clear rip flag means undefined; a clear\n"
        "rbp or rbx flag means \"not restored\", the callee's value, which v1 cannot\n"
        "tell from undefined or unknown, so it agrees with any of those. deref cannot\n"
        "fail: the validator reads through the memory model and marks a faulting\n"
        "read, and the answer is then a memory fault. In JSON, a v1 frame lists rbx,\n"
        "rbp, rsp and rip only. v1-direct: each child maps a 4 MiB region, the stack\n"
        "registers 1 MiB into it, and fills it with the memory model's bytes for each\n"
        "state's seed at those very addresses, so that the reference and the eh_elf\n"
        "read the same bytes (no state has a fault).\n"
        "\n"
        "The calls go by batches of at most 65536 questions (addresses x states), one\n"
        "child each; a child killed otherwise than by a caught signal (the time\n"
        "limit, exit, SIGKILL) is replaced by a new one after the question it died\n"
        "at, and after 16 such deaths in a batch the rest of the batch is reported\n"
        "crashed, not run. The eh_elf is loaded in a child first, so that a\n"
        "constructor that crashes is an error, not a crash of validate. A bare\n"
        "EH_ELF.so name is the file in the current folder (not a search of the\n"
        "library path). Progress shows on a terminal after 2 s.\n"
        "\n"
        "Why EH_ELF.so cannot be loaded (exit 2): dlerror()'s text when dlopen fails\n"
        "(\"No such file or directory\", \"invalid ELF header\", an undefined symbol),\n"
        "or: no _eh_elf (v1), a cfisem eh_elf of the full ABI given as v1, not one of\n"
        "ours or a version outside EH_ELF_ABI_VERSION_MIN to EH_ELF_ABI_VERSION (4,\n"
        "full), a v1 eh_elf given as full, or a cfisem eh_elf of either ABI whose\n"
        "stamp is not FILE's (one line naming both ids).\n"
        "\n"
        "--json OUT writes {\"schema_version\": 1, \"file\", \"eh_elf\", \"abi\", \"states\",\n"
        "\"seed\", \"seconds\", \"fdes\", \"addresses\", \"gap_addresses\", \"requests\",\n"
        "\"wrong_addresses\", \"wrong_requests\", \"crashes\", \"allow_unsupported\",\n"
        "\"failed\", \"reference\": {\"ok\": N, ...}, \"abi_hint\": null | {\"abi\",\n"
        "\"addresses\", \"wrong_addresses\"}, \"wrong_ranges_total\",\n"
        "\"unsupported_ranges\", \"kinds\": [{\"class\", \"kind\",\n"
        "\"expected_status\", \"got_status\", \"signal\", \"ranges\", \"addresses\",\n"
        "\"wrong_requests\"}], \"wrong_ranges\": [{\"begin\", \"end\", \"class\", \"kind\",\n"
        "\"expected_status\", \"got_status\", \"signal\", \"addresses\", \"wrong_requests\",\n"
        "\"in_gap\", \"fde\" (null before the first FDE), \"first\": {state, \"crashed\",\n"
        "\"crash_text\", \"items\", \"expected\", \"got\"}, \"row\", \"reproducer\",\n"
        "\"eh_elf_reproducer\"}]}; class is \"wrong value\", \"unsupported\" or \"crashed\";\n"
        "kind lists crashed, status, cfa and register names; got_status is the\n"
        "eh_elf's (crashed for a crash); signal is the crash's (SIGSEGV, \"timed out\n"
        "(SIGALRM)\", \"exited, or not run\"), else null.\n"
        "\n"
    "Exit status: 0 no wrong address (or only \"unsupported\" ones, with\n"
    "--allow-unsupported); 1 wrong addresses; 2 FILE or EH_ELF.so cannot\n"
    "be loaded, or EH_ELF.so was built from another file (one line on\n"
    "stderr naming it and saying why); 64 a usage error (then nothing is\n"
    "run).\n";

struct options {
    struct validate_config config;
    const char *path;
    const char *eh_elf_path;
    const char *json_path;
    size_t show;
    bool progress;
    bool stapsdt_pcs;
    struct cli_inputs inputs;      /* --debug-dir */
    struct cfi_debug_search debug_search;
};

static int parse_valued(const char *arg, const char *value, struct options *o)
{
    uint64_t n;
    if (!strcmp(arg, "--abi")) {
        if (!validate_abi_parse(value, &o->config.abi))
            return cli_usage_error("validate", "unknown ABI", value);
    } else if (!strcmp(arg, "--states")) {
        if (!cli_parse_u64(value, &n) || n < 1 || n > 1024)
            return cli_usage_error("validate", "--states takes 1 to 1024, not",
                                   value);
        o->config.nstates = (unsigned)n;
    } else if (!strcmp(arg, "--seed")) {
        if (!cli_parse_u64(value, &o->config.seed))
            return cli_usage_error("validate", "bad seed", value);
    } else if (!strcmp(arg, "--timeout")) {
        if (!cli_parse_u64(value, &n) || n < 1 || n > 3600)
            return cli_usage_error("validate", "--timeout takes 1 to 3600, not",
                                   value);
        o->config.timeout = (unsigned)n;
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
                                         "--timeout", "--pcs"};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = false;
        for (size_t j = 0; j < sizeof valued / sizeof valued[0]; j++)
            takes_value |= !strcmp(arg, valued[j]);
        int status = CLI_OK, taken;
        if ((taken = cli_inputs_option("validate", argc, argv, &i,
                                       &o->inputs))) {
            status = taken == 1 ? CLI_OK : taken;
        } else if (arg[0] != '-') {
            if (o->eh_elf_path)
                return cli_usage_error("validate", "one FILE and one EH_ELF.so,"
                                       " not also", arg);
            *(o->path ? &o->eh_elf_path : &o->path) = arg;
        } else if (!strcmp(arg, "--progress")) {
            o->progress = true;
        } else if (!strcmp(arg, "--allow-unsupported")) {
            o->config.allow_unsupported = true;
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

static int report(const struct options *o, const struct validate_result *v)
{
    validate_result_text(stdout, v, o->show);
    fflush(stdout);
    int result = validate_result_failed(v) ? CLI_MISMATCH : CLI_OK;
    if (!o->json_path)
        return result;
    FILE *out = fopen(o->json_path, "w");
    if (out)
        validate_result_json(out, v);
    if (!out || fclose(out) != 0) {
        fprintf(stderr, "cfisem validate: %s: cannot write the JSON file\n",
                o->json_path);
        return result == CLI_OK ? CLI_BAD_INPUT : result;
    }
    return result;
}

/* One line: the file, what is wrong, and dlerror()'s text if any. */
static void report_error(const char *path, const struct validate_error *e)
{
    const char *message = e->diag.message ? e->diag.message
                                          : cfi_status_text(e->diag.status);
    if (!e->detail[0]) {
        cli_report_file_error(e->path ? e->path : path, &e->diag);
        return;
    }
    fprintf(stderr, "cfisem: %s: %s: %s\n", e->path ? e->path : path, message,
            e->detail);
}

int cli_validate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        fputc('\n', stdout);
        cli_validate_table_help(stdout);
        return CLI_OK;
    }
    if (cli_validate_wants_table(argc, argv))
        return cli_validate_table(argc, argv);
    struct options o = {.show = 20};
    validate_config_default(&o.config);
    o.config.keep = 1000;
    int result = parse_options(argc, argv, &o);
    if (result == CLI_OK)
        result = cli_check_eh_elf_stamp(o.eh_elf_path, o.path);
    if (result != CLI_OK)
        return result;
    struct progress_env progress = {o.progress || isatty(2), isatty(2), false,
                                    0};
    o.config.progress = show_progress;
    o.config.progress_env = &progress;
    o.debug_search.dirs = o.inputs.debug_dirs;
    o.debug_search.ndirs = o.inputs.ndebug_dirs;
    o.config.debug_search = &o.debug_search;
    struct validate_result *v;
    struct validate_error error;
    struct trace_sites sites = {NULL, 0, 0};
    uint64_t *pcs = NULL;
    if (o.stapsdt_pcs) {
        struct cfi_diag diag;
        if (trace_sites_read(o.path, &sites, &diag) != CFI_OK) {
            cli_report_file_error(o.path, &diag);
            return CLI_BAD_INPUT;
        }
        pcs = calloc(sites.n ? sites.n : 1, sizeof *pcs);
        for (size_t i = 0; pcs && i < sites.n; i++)
            pcs[i] = sites.sites[i].pc;
        o.config.only_pcs = pcs;
        o.config.nonly_pcs = pcs ? sites.n : 0;
        trace_sites_free(&sites);
    }
    enum cfi_status status = validate_eh_elf(&o.config, o.path, o.eh_elf_path,
                                             &v, &error);
    free(pcs);
    if (progress.printed && progress.tty)
        fputc('\n', stderr);
    if (status != CFI_OK) {
        report_error(o.path, &error);
        return CLI_BAD_INPUT;
    }
    if (v->debug_missing)
        cli_note_debug_missing(o.path, v->debug_missing);
    result = report(&o, v);
    validate_result_free(v);
    return result;
}
