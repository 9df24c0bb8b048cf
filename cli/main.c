/* SPDX-License-Identifier: MIT */
/* main.c — cfisem: the command table and the shared helpers. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/version.h>
#include <libdwarf.h>
#include <libunwind.h>

#include "cli.h"
#include "compile/cg.h"
#include "compile/eh_elf.h"
#include "engines/engines.h"

static const struct cli_command commands[] = {
    {"il", "print the intermediate language (rows) of a file's CFI", cli_il},
    {"unwind", "unwind one frame with one engine", cli_unwind},
    {"compile", "compile a file's CFI into an eh_elf (a shared object)",
     cli_compile},
    {"cache", "compile eh_elfs into the run-time library's build-id cache",
     cli_cache},
    {"diff", "every engine against the IL evaluator, register by register",
     cli_diff},
    {"report", "merge the JSON results of diff runs (shards) into one report",
     cli_report},
    {"validate", "check an eh_elf against the IL evaluator at every address",
     cli_validate},
    {"gen", "a random well-formed CFI program (.S) and its expected IL",
     cli_gen},
    {"explain", "how the semantics derives one frame: program, row, values",
     cli_explain},
    {"stats", "corpus statistics: records, rows, opcodes, rules, expressions",
     cli_stats},
    {"synth", "CFI synthesised from the machine code, compared with the file's",
     cli_synth},
    {"trace", "run a program under ptrace; check the CFI against it", cli_trace},
    {"sites", "the SystemTap SDT probes of a file", cli_sites},
    {"stack", "the backtrace of every thread of a process or a core file",
     cli_stack},
    {"perf", "the user stacks of perf record --call-graph dwarf samples",
     cli_perf},
};

static const struct cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name))
            return &commands[i];
    return NULL;
}

/* The version, the ABIs of the eh_elfs it writes, and the versions of the
 * outside libraries it was built against (their headers' numbers). */
static void print_version(FILE *out)
{
    fprintf(out,
            "cfisem %s\n"
            "eh_elf ABI: full, version %u (eh_elf_abi_version); v1 (the\n"
            "  first published eh_elf ABI, --abi v1)\n"
            "built against: libdwarf %s, elfutils libdw 0.%d, "
            "libunwind %d.%d.%d\n",
            CFISEM_VERSION, (unsigned)EH_ELF_ABI_VERSION,
            dwarf_package_version(), _ELFUTILS_VERSION, UNW_VERSION_MAJOR,
            UNW_VERSION_MINOR, UNW_VERSION_EXTRA);
}

static void print_engines(FILE *out)
{
    fputs("Engines (unwind --engine, diff --engines):", out);
    for (int e = 0; e < ENGINE_COUNT; e++)
        fprintf(out, " %s", engine_name((enum engine_id)e));
    fputc('\n', out);
}

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: cfisem COMMAND [ARGS...]\n"
            "\n"
            "The semantics of DWARF call frame information (.eh_frame,\n"
            ".debug_frame) on x86-64 and AArch64, executable.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputc('\n', out);
    print_engines(out);
    fprintf(out,
            "\n"
            "'cfisem COMMAND --help' or 'cfisem help COMMAND' describes a\n"
            "command; 'cfisem --version' gives the versions.\n"
            "\n"
            "  -h, --help  this text (also 'cfisem help')\n"
            "  --version   cfisem's version, the eh_elf ABIs it writes and the\n"
            "              versions of the libraries it was built against\n"
            "\n"
            "Every JSON output (il --format json, unwind --json, diff,\n"
            "report, validate, stats, synth and trace --json, explain\n"
            "--format json, sites --json) is one object whose first member\n"
            "is \"schema_version\": 1; the JSON Schema of each is in\n"
            "schemas/ of cfisem's source.\n"
            "\n"
            "Exit status, one per outcome (as diff(1) and cmp(1) do, with a\n"
            "usage error apart): 0 success; 1 differences found (diff,\n"
            "validate: an engine differs from the reference, a wrong\n"
            "address); 2 bad input file (one line on stderr naming the file\n"
            "and what is wrong: not a regular file, the system's reason it\n"
            "cannot be opened, or what is malformed); 3 the frame cannot be\n"
            "unwound (unwind, explain), or no FDE at the address asked (il\n"
            "--pc); 4 the engine asked crashed or gave no answer in time\n"
            "(unwind); 64 usage error (EX_USAGE of sysexits.h); 70 internal\n"
            "error (EX_SOFTWARE: a state no input can reach, a bug of\n"
            "cfisem's, reported apart from bad input).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--version")) {
        print_version(stdout);
        return CLI_OK;
    }
    bool help = !strcmp(argv[1], "help");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        (help && argc == 2)) {
        print_help(stdout);
        return CLI_OK;
    }
    const char *name = help ? argv[2] : argv[1];
    const struct cli_command *command = find_command(name);
    if (!command) {
        fprintf(stderr, "cfisem: unknown command '%s' (see cfisem --help)\n",
                name);
        return CLI_USAGE;
    }
    if (help) {
        char *argv_help[] = {argv[2], "--help", NULL};
        return command->run(2, argv_help);
    }
    return command->run(argc - 1, argv + 1);
}

void cli_print_error_position(FILE *out, const struct cfi_diag *diag)
{
    if (diag->offset == CFI_NO_OFFSET)
        return;
    fprintf(out, " at %s offset 0x%" PRIx64,
            cfi_diag_in_expression(diag) ? "expression" : "section",
            diag->offset);
}

void cli_report_file_error(const char *path, const struct cfi_diag *diag)
{
    const char *message = diag->message ? diag->message
                                        : cfi_status_text(diag->status);
    if (diag->offset != CFI_NO_OFFSET)
        fprintf(stderr, "cfisem: %s: %s (offset 0x%" PRIx64 ")\n", path,
                message, diag->offset);
    else
        fprintf(stderr, "cfisem: %s: %s\n", path, message);
}

int cli_check_eh_elf_stamp(const char *eh_elf, const char *object_path)
{
    struct eh_elf_object_id object;
    struct cg_stale stale;
    struct cfi_diag diag;
    if (cg_object_id(object_path, &object, &diag) != CFI_OK)
        return CLI_OK; /* opening the file says why */
    if (cg_check_stamp(eh_elf, &object, &stale, &diag) == CFI_OK ||
        !stale.ours) /* not an eh_elf of ours: its loader says why */
        return CLI_OK;
    if (diag.status != CFI_E_UNSUPPORTED) {
        cli_report_file_error(eh_elf, &diag);
        return CLI_BAD_INPUT;
    }
    char text[512];
    cg_stale_text(&stale, object_path, text, sizeof text);
    fprintf(stderr, "cfisem: %s: %s\n", eh_elf, text);
    return CLI_BAD_INPUT;
}

void cli_report_fde_error(const char *path, const struct cfi_fde *fde,
                          const struct cfi_diag *d, size_t count)
{
    fprintf(stderr, "cfisem: %s: %s FDE 0x%" PRIx64 ": ", path,
            cfi_section_name(fde->section), fde->offset);
    uint64_t at = d->offset;
    if (at == CFI_NO_OFFSET) {
        /* no position to give */
    } else if (at >= fde->instructions_offset &&
               at - fde->instructions_offset < fde->instructions_len)
        fprintf(stderr, "instruction at +0x%" PRIx64 ": ",
                at - fde->instructions_offset);
    else if (fde->cie && at >= fde->cie->instructions_offset &&
             at - fde->cie->instructions_offset < fde->cie->instructions_len)
        fprintf(stderr, "CIE instruction at +0x%" PRIx64 ": ",
                at - fde->cie->instructions_offset);
    else
        fprintf(stderr, "at offset 0x%" PRIx64 ": ", at);
    fputs(d->message ? d->message : cfi_status_text(d->status), stderr);
    if (count > 1)
        fprintf(stderr, " (and %zu more FDEs with errors)", count - 1);
    fputc('\n', stderr);
}

int cli_usage_error(const char *subcommand, const char *message,
                    const char *arg)
{
    fprintf(stderr, "cfisem %s: %s%s%s (see cfisem %s --help)\n", subcommand,
            message, arg ? " " : "", arg ? arg : "", subcommand);
    return CLI_USAGE;
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

bool cli_parse_u64(const char *text, uint64_t *value)
{
    if (!text || !*text || *text == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end)
        return false;
    *value = v;
    return true;
}
