/* SPDX-License-Identifier: MIT */
/* trace.c — `cfisem trace`: does the CFI describe the code that runs? */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "trace/trace.h"

static const char usage[] =
    "usage: cfisem trace [--engines LIST] [--sample N] [--at rows|stapsdt]\n"
    "                    [--from FUNCTION] [--step-limit N] [--timeout S]\n"
    "                    [--json OUT] [--dumps DIR] [--cache DIR] [--bare]\n"
    "                    [--quiet] [--no-disassembly] [--cfi ELF=FILE]\n"
    "                    [--sysroot DIR]\n"
    "                    -- PROGRAM ARGS...\n"
    "\n"
    "Runs PROGRAM under ptrace one instruction at a time and keeps the\n"
    "truth of every live frame from the machine itself: at each call the\n"
    "return address, the CFA (rsp before the call) and rbx, rbp, r12-r15;\n"
    "pops at ret, longjmp, sigreturn, exception landings; signal delivery\n"
    "pushes the interrupted context. At each stop the innermost frame is\n"
    "unwound by each engine from the real registers and memory, and\n"
    "compared with the truth: the CFA, the caller's rip, rbx rbp r12-r15.\n"
    "Only the first thread is followed.\n"
    "\n"
    "An AArch64 PROGRAM (its ELF header says so) runs under\n"
    "qemu-aarch64 -g PORT -L SYSROOT (a free local port; --sysroot)\n"
    "and is stepped over the GDB remote protocol: bl/blr push a frame\n"
    "(return address x30, CFA sp at the call, x19-x29), ret and sp above\n"
    "the CFA pop it; paciasp/autiasp give the truth of RA_SIGN_STATE,\n"
    "compared with the row's, and the caller's PC is compared stripped.\n"
    "An exclusive sequence (ldxr to its stxr) runs unchecked to a\n"
    "breakpoint at its exit: a single step would clear the monitor.\n"
    "A signal's delivery pushes the interrupted frame and the handler's\n"
    "(read from the rt_sigframe); rt_sigreturn pops them. qemu-user\n"
    "runs one more instruction in the step of an svc: it is followed.\n"
    "A dynamic program's loader is placed from the auxiliary vector and\n"
    "its libraries from the loader's list (r_debug), read under the\n"
    "sysroot; --at and --from are x86-64 only; a qemu that does not answer within 10 s is killed and the run\n"
    "ends saying so.\n"
    "\n"
    "  --engines LIST   engines asked, from il, interp, compiled (default\n"
    "                   il,interp,compiled); compiled builds each ELF's\n"
    "                   eh_elf into the cache on first sight\n"
    "  --sample N       check every Nth instruction (every call and return\n"
    "                   is still followed); default 1\n"
    "  --at rows        stop only at the first address of every row of\n"
    "                   every FDE (breakpoints; far cheaper): the truth is\n"
    "                   taken at each FDE's first address; a fork or clone\n"
    "                   ends the checking\n"
    "  --at stapsdt     stop only at the SystemTap SDT probes of the\n"
    "                   mapped ELFs (cfisem sites), as a tracer would, and\n"
    "                   check there (breakpoints at function entries give\n"
    "                   the truth)\n"
    "  --from FUNCTION  run at full speed to FUNCTION of PROGRAM's own\n"
    "                   symbols (a breakpoint), then step from there: the\n"
    "                   frames below it are not checked\n"
    "  --step-limit N   stop PROGRAM after N instructions (default 1e8)\n"
    "  --timeout S      stop PROGRAM after S seconds (default 600)\n"
    "  --json OUT       the report as JSON into OUT ('-': stdout)\n"
    "  --dumps DIR      write a stack dump per mismatch group into DIR and\n"
    "                   print a 'cfisem unwind ... --mem DUMP@ADDR' line\n"
    "                   that gives the same answer offline\n"
    "  --cache DIR      where compiled eh_elfs are built\n"
    "  --bare           only step (nothing checked): the rate of bare\n"
    "                   single-stepping, to compare with\n"
    "  --quiet          PROGRAM's stdout and stderr go to /dev/null\n"
    "  --no-disassembly do not list the code around each group (objdump)\n"
    "  --cfi ELF=FILE   take the CFI of ELF (as the program maps it) from\n"
    "                   FILE, a file with the same addresses: the table of\n"
    "                   `cfisem synth ELF --emit-il` built by synth/il2s.py\n"
    "  --sysroot DIR    an AArch64 PROGRAM's root: qemu's -L and where its\n"
    "                   loader and libraries are read (default\n"
    "                   /usr/aarch64-linux-gnu)\n"
    "\n"
    "Example:\n"
    "  cfisem trace --engines il,interp -- /bin/true\n"
    "\n"
        "Does the CFI describe the code? Every other check compares implementations\n"
        "of a table with each other; trace compares the table with the machine.\n"
        "PROGRAM runs under ptrace, one instruction at a time, and a shadow stack\n"
        "keeps the truth of every live frame, taken from the machine: at each call\n"
        "(direct, indirect, through the PLT) the return address the call pushed, the\n"
        "CFA (rsp just before the call) and rbx, rbp, r12-r15 as they were. At each\n"
        "stop the innermost frame is unwound by each engine asked (il, interp,\n"
        "compiled: by default all three, through engines/engine.h) from the real\n"
        "registers and the real memory (process_vm_readv; a fault is a real fault),\n"
        "and compared with the truth: the CFA, the caller's rip, and each\n"
        "callee-saved register.\n"
        "\n"
        "  $ cfisem trace --engines il,interp -- /bin/true\n"
        "  program exited with status 0\n"
        "  instructions traced 112749 in 5.97 s (18897 per second)\n"
        "  frames checked 112685; not checked: 26 before any frame, 39 without FDE, 0 outside any ELF, 0 resynchronising\n"
        "  calls deepest 11, signals 0, irregular pops 0, execs 0\n"
        "  il        agree 112685, mismatch 0 (of which 0 in context restores)\n"
        "  interp    agree 112685, mismatch 0 (of which 0 in context restores)\n"
        "  groups:\n"
        "    /usr/bin/true: no FDE where code runs\n"
        "      at 0x2000..0x2016, 6 stops\n"
        "  ...\n"
        "\n"
        "How the shadow stack follows the machine (trace/trace.h): a step that leaves\n"
        "rsp 8 lower after a call instruction pushes a frame (its return address is\n"
        "the word at the new rsp: no instruction length is needed, so trace/insn.c is\n"
        "a small decoder of our own that only recognises call, ret, jmp and syscall\n"
        "with their prefixes, rather than a dependency on capstone); any step that\n"
        "leaves rsp at or above a frame's CFA pops it (ret, longjmp, sigreturn, an\n"
        "exception landing); a pop that does not land on the popped frame's return\n"
        "address is irregular (longjmp, exceptions): checking pauses until the PC\n"
        "leaves the function that moved rsp, and the differences that function's FDE\n"
        "showed just before are context restores (glibc's __longjmp and libgcc's\n"
        "__builtin_eh_return sequences describe the frame they are about to restore,\n"
        "by design), reported but explained, not counted. A tail call keeps the frame\n"
        "(its truth is the same). Signal delivery (recognised at the handler's first\n"
        "instruction from the ucontext the kernel passed) pushes the interrupted\n"
        "context, a signal frame whose caller is the interrupted PC with every\n"
        "register as it was, then the handler's frame. exec starts over. Only the\n"
        "first thread is followed; clone calls are counted and said. Code no FDE\n"
        "covers, code before any frame exists (_start before its first call) and code\n"
        "of no mapped ELF are counted apart, not as mismatches; the ELF of a PC is\n"
        "found in /proc/PID/maps (the vDSO copied out of memory).\n"
        "\n"
        "Mismatches are grouped by ELF, FDE, kind (cfa, ra, reg, ra_undefined: an\n"
        "undefined return address in a live frame, error: unwinding failed, no_fde)\n"
        "and register, each with its address range (file addresses), the stops, the\n"
        "engines, the first occurrence (expected and got), the row's IL, an objdump\n"
        "listing with the wrong instructions marked, and, with --dumps DIR, a copy of\n"
        "the stack and a cfisem unwind ... --mem DUMP@ADDR line that gives the same\n"
        "wrong answer offline. --json OUT has each group with its distinct PCs (pcs,\n"
        "the first 512, and pcs_truncated), which synth/crosscheck.py puts against\n"
        "cfisem synth's ranges.\n"
        "\n"
        "  - --sample N checks every Nth instruction (every call and return is still\n"
        "    followed).\n"
        "  - --from FUNCTION runs at full speed to FUNCTION of PROGRAM's symbols (a\n"
        "    breakpoint), then steps from there; the start-up of a C++ program is a\n"
        "    million instructions, its main a few thousand. A program that rewrites\n"
        "    the function's first byte (XRay patching its sleds) never reaches it:\n"
        "    that is said, and the exit status is 3.\n"
        "  - --at rows does not step: a breakpoint at the first address of every row\n"
        "    of every FDE of the mapped ELFs (set when an ELF is mapped: mmap and\n"
        "    mprotect are watched), 15 times fewer stops on /bin/true. The truth then\n"
        "    comes from each FDE's first address, when the word at rsp is the address\n"
        "    just after a call instruction (the machine code says so, not the CFI); a\n"
        "    stop is checked when the innermost frame is its FDE's. Signals are\n"
        "    delivered by one step, so that a handler's frames are pushed as when\n"
        "    stepping; context restores are not recognised (no step sees rsp move:\n"
        "    __longjmp's one row start counts as a mismatch). A fork or clone would\n"
        "    copy the breakpoints into an untraced process: at the first one they are\n"
        "    removed and the program runs on unchecked.\n"
        "  - --at stapsdt stops only at the SystemTap probes of the mapped ELFs\n"
        "    (cfisem sites), as a tracer would, with breakpoints at function entries\n"
        "    for the truth.\n"
        "  - --bare only steps: the rate of bare single-stepping, to compare with.\n"
        "  - --cfi ELF=FILE reads the CFI of ELF (as the program maps it) from FILE,\n"
        "    a file with the same addresses: cfisem synth ELF --emit-il built back by\n"
        "    synth/il2s.py, so that a program is checked against synthesised CFI (a\n"
        "    program with none at all, with --no-fde-code).\n"
        "  - --step-limit (default 10^8) and --timeout (default 600 s) stop a program\n"
        "    that does not end, blocked in a system call or not; it is reported.\n"
        "\n"
        "A program that crashes is reported as such (\"killed by SIGSEGV\").\n"
        "\n"
    "Exit status: 0 every frame checked agreed with the truth, 1 a\n"
    "mismatch, 64 a usage error, 2 PROGRAM cannot be run (or has no\n"
    "FUNCTION for --from), 3 PROGRAM did not end by itself (timeout, step\n"
    "limit), never reached FUNCTION, or ptrace failed. A\n"
    "program that crashes or exits with an error is reported, and its\n"
    "trace counts.\n";

enum { CLI_TRACE_INCOMPLETE = 3 };

struct options {
    struct trace_options trace;
    char cfi_elf[PATH_MAX];   /* --cfi's ELF, resolved */
    const char *json;
    bool disassemble;
    char **argv;
};

static bool parse_engines(const char *list, struct trace_options *o)
{
    memset(o->engines, 0, sizeof o->engines);
    const char *p = list;
    /* Bounded by the list's length. */
    while (*p) {
        size_t len = strcspn(p, ",");
        int id = engine_parse(p, len);
        if (id != ENGINE_il && id != ENGINE_interp &&
            id != ENGINE_compiled)
            return false;
        o->engines[id] = true;
        p += len + (p[len] == ',');
    }
    return true;
}

static bool positive(const char *text, uint64_t *value)
{
    return cli_parse_u64(text, value) && *value > 0;
}

/* --cfi ELF=FILE: ELF as the kernel names its mapping (its real path). */
static int parse_cfi(const char *value, struct options *o)
{
    const char *eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1] || eq - value >= PATH_MAX)
        return cli_usage_error("trace", "--cfi takes ELF=FILE, not", value);
    char elf[PATH_MAX];
    memcpy(elf, value, (size_t)(eq - value));
    elf[eq - value] = 0;
    if (!realpath(elf, o->cfi_elf))
        return cli_usage_error("trace", "--cfi: no such ELF", elf);
    o->trace.cfi_elf = o->cfi_elf;
    o->trace.cfi_file = eq + 1;
    return CLI_OK;
}

static int parse_valued(const char *arg, const char *value, struct options *o)
{
    uint64_t n;
    if (!strcmp(arg, "--engines")) {
        if (!parse_engines(value, &o->trace))
            return cli_usage_error("trace", "--engines takes il, interp, "
                                   "compiled, not", value);
    } else if (!strcmp(arg, "--sample")) {
        if (!positive(value, &o->trace.sample))
            return cli_usage_error("trace", "bad --sample", value);
    } else if (!strcmp(arg, "--step-limit")) {
        if (!positive(value, &o->trace.step_limit))
            return cli_usage_error("trace", "bad --step-limit", value);
    } else if (!strcmp(arg, "--timeout")) {
        if (!positive(value, &n) || n > 86400)
            return cli_usage_error("trace", "--timeout takes 1 to 86400 "
                                   "seconds, not", value);
        o->trace.timeout = (double)n;
    } else if (!strcmp(arg, "--at")) {
        if (!strcmp(value, "rows"))
            o->trace.at = TRACE_AT_ROWS;
        else if (!strcmp(value, "stapsdt"))
            o->trace.at = TRACE_AT_STAPSDT;
        else
            return cli_usage_error("trace", "--at takes rows or stapsdt, not",
                                   value);
    } else if (!strcmp(arg, "--from")) {
        o->trace.from_symbol = value;
    } else if (!strcmp(arg, "--json")) {
        o->json = value;
    } else if (!strcmp(arg, "--dumps")) {
        o->trace.dump_dir = value;
    } else if (!strcmp(arg, "--cache")) {
        o->trace.cache_dir = value;
    } else if (!strcmp(arg, "--cfi")) {
        return parse_cfi(value, o);
    } else if (!strcmp(arg, "--sysroot")) {
        struct stat st;
        if (stat(value, &st) != 0 || !S_ISDIR(st.st_mode))
            return cli_usage_error("trace", "--sysroot: not a directory",
                                   value);
        o->trace.sysroot = value;
    }
    return CLI_OK;
}

static bool takes_value(const char *arg)
{
    static const char *const valued[] = {"--engines", "--sample",
                                         "--step-limit", "--timeout", "--at", "--from",
                                         "--json", "--dumps", "--cache",
                                         "--cfi", "--sysroot"};
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
        if (!strcmp(arg, valued[i]))
            return true;
    return false;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--")) {
            o->argv = i + 1 < argc ? argv + i + 1 : NULL;
            break;
        }
        if (takes_value(arg)) {
            if (i + 1 >= argc)
                return cli_usage_error("trace", "missing value for", arg);
            int status = parse_valued(arg, argv[++i], o);
            if (status != CLI_OK)
                return status;
        } else if (!strcmp(arg, "--bare")) {
            o->trace.check = false;
        } else if (!strcmp(arg, "--quiet")) {
            o->trace.quiet_program = true;
        } else if (!strcmp(arg, "--no-disassembly")) {
            o->disassemble = false;
        } else {
            return cli_usage_error("trace", "unknown option", arg);
        }
    }
    if (!o->argv)
        return cli_usage_error("trace", "missing -- PROGRAM", NULL);
    if (o->trace.dump_dir)
        mkdir(o->trace.dump_dir, 0777);
    return CLI_OK;
}

static int exit_status(const struct trace_report *r)
{
    if (r->end == TRACE_END_EXEC_FAILED || r->end == TRACE_END_NO_SYMBOL)
        return CLI_BAD_INPUT;
    if (trace_report_mismatches(r) > 0)
        return CLI_MISMATCH;
    if (r->from_missed)
        return CLI_TRACE_INCOMPLETE;
    if (r->end == TRACE_END_EXITED || r->end == TRACE_END_SIGNALED)
        return CLI_OK;
    return CLI_TRACE_INCOMPLETE;
}

static int write_json(const char *path, const struct trace_report *r)
{
    if (!strcmp(path, "-")) {
        trace_report_json(stdout, r);
        return CLI_OK;
    }
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "cfisem trace: %s: cannot write\n", path);
        return CLI_BAD_INPUT;
    }
    trace_report_json(out, r);
    return fclose(out) == 0 ? CLI_OK : CLI_BAD_INPUT;
}

int cli_trace(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return CLI_OK;
        }
    struct options o = {.disassemble = true};
    trace_options_default(&o.trace);
    o.trace.cfisem = "cfisem";
    int result = parse_options(argc, argv, &o);
    if (result != CLI_OK)
        return result;
    struct trace_report report;
    enum cfi_status status = trace_run(o.argv, &o.trace, &report);
    char end[160];
    if (status == CFI_E_NOMEM) {
        fprintf(stderr, "cfisem trace: out of memory\n");
        result = CLI_BAD_INPUT;
    } else if (report.end == TRACE_END_EXEC_FAILED ||
               report.end == TRACE_END_NO_SYMBOL) {
        fprintf(stderr, "cfisem trace: %s: %s\n", o.argv[0],
                trace_end_text(&report, end, sizeof end));
        result = CLI_BAD_INPUT;
    } else {
        if (!o.json || strcmp(o.json, "-"))
            trace_report_text(stdout, &report, o.disassemble);
        result = o.json ? write_json(o.json, &report) : CLI_OK;
        if (result == CLI_OK)
            result = exit_status(&report);
    }
    trace_report_free(&report);
    return result;
}
