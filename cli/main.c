/* main.c — cfisem: the command table and the shared helpers. */
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_command commands[] = {
    {"il", "print the intermediate language (rows) of a file's CFI", cli_il},
    {"unwind", "unwind one frame with one engine", cli_unwind},
    {"compile", "compile a file's CFI into an eh_elf (a shared object)",
     cli_compile},
    {"diff", "every engine against the IL evaluator, register by register",
     cli_diff},
    {"validate", "check an eh_elf against the IL evaluator at every address",
     cli_validate},
    {"gen", "a random well-formed CFI program (.S) and its expected IL",
     cli_gen},
    {"explain", "how the semantics derives one frame: program, row, values",
     cli_explain},
    {"stats", "corpus statistics: records, rows, opcodes, rules, expressions",
     cli_stats},
};

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: cfisem COMMAND [ARGS...]\n"
            "\n"
            "The semantics of DWARF call frame information (.eh_frame,\n"
            ".debug_frame) on x86-64, executable.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "'cfisem COMMAND --help' describes a command.\n"
            "Exit status: 0 success, 1 usage error, 2 bad input file,\n"
            "3 the frame cannot be unwound (unwind); diff and validate:\n"
            "1 also when an engine differs from the reference.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        print_help(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cfisem: unknown command '%s' (see cfisem --help)\n",
            argv[1]);
    return CLI_USAGE;
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
