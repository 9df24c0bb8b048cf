/* validate_table.c — `cfisem validate FILE --hdr` and `--sframe`: the
 * compact tables a file carries beside its .eh_frame, checked against it
 * (engines/eh_frame_hdr.h, validate/sframe_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engines/engines.h"
#include "validate/validate.h"
#include "sframe/sframe.h"

static const char synopsis[] =
    "usage: cfisem validate FILE --hdr [--show N]\n"
    "       cfisem validate FILE --sframe [--states N] [--seed S] [--show N]\n"
    "\n";

static const char details[] =
    "--hdr: checks the linker's .eh_frame_hdr lookup table against\n"
    ".eh_frame: version and encodings, eh_frame_ptr, one entry per FDE and\n"
    "none extra, sorted, each entry's initial location and FDE address.\n"
    "\n"
    "--sframe: checks the file's .sframe (SFrame v1 or v2) against its\n"
    ".eh_frame at every address SFrame covers, as an innermost frame in N\n"
    "states (default 4): the CFA, rbp and rip SFrame gives against the\n"
    "DWARF row there (its other registers' rules left out: SFrame has no\n"
    "column for them). Also lists SFrame FDEs whose range is not the\n"
    "DWARF FDE's, addresses SFrame covers and .eh_frame does not, and the\n"
    ".eh_frame FDEs SFrame has none for (the assembler drops those it\n"
    "cannot express), with the reason the DWARF shows. Problems: wrong\n"
    "ranges, FDE ranges, addresses SFrame covers alone.\n"

    "\n"
    "  --show N   problems printed (default 20)\n"
    "  --states N states per address, --sframe (default 4, at most 1024)\n"
    "  --seed S   seed of the states, --sframe (default 1)\n"
    "\n"
    "Exit status: 0 no problem; 1 problems; 2 FILE cannot be loaded (one\n"
    "line on stderr naming it); 64 a usage error.\n";

void cli_validate_table_help(FILE *out)
{
    fputs(details, out);
}

bool cli_validate_wants_table(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--hdr") || !strcmp(argv[i], "--sframe"))
            return true;
    return false;
}

struct options {
    const char *path;
    bool hdr, sframe;
    size_t show;
    unsigned nstates;
    uint64_t seed;
};

static int parse(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        uint64_t n;
        if (!strcmp(arg, "--hdr")) {
            o->hdr = true;
        } else if (!strcmp(arg, "--sframe")) {
            o->sframe = true;
        } else if (!strcmp(arg, "--states") || !strcmp(arg, "--seed")) {
            if (i + 1 >= argc)
                return cli_usage_error("validate", "missing value for", arg);
            bool states = !strcmp(arg, "--states");
            if (!cli_parse_u64(argv[++i], &n) ||
                (states && (n < 1 || n > 1024)))
                return cli_usage_error("validate", "bad value", argv[i]);
            if (states)
                o->nstates = (unsigned)n;
            else
                o->seed = n;
        } else if (!strcmp(arg, "--show")) {
            if (i + 1 >= argc)
                return cli_usage_error("validate", "missing value for", arg);
            if (!cli_parse_u64(argv[++i], &n) || n > 100000)
                return cli_usage_error("validate", "bad count", argv[i]);
            o->show = (size_t)n;
        } else if (arg[0] == '-') {
            return cli_usage_error("validate", "not an option of --hdr and "
                                   "--sframe:", arg);
        } else if (o->path) {
            return cli_usage_error("validate", "one FILE with --hdr or "
                                   "--sframe, not also", arg);
        } else {
            o->path = arg;
        }
    }
    if (o->hdr && o->sframe)
        return cli_usage_error("validate", "--hdr or --sframe, not both", NULL);
    if (!o->path)
        return cli_usage_error("validate", "expected FILE", NULL);
    return CLI_OK;
}

static int check_hdr(const struct options *o, const struct cfi_file *file)
{
    struct diff_hdr_check *check = malloc(sizeof *check);
    if (!check || diff_hdr_check(file, check) != CFI_OK) {
        free(check);
        fprintf(stderr, "cfisem: %s: out of memory\n", o->path);
        return CLI_BAD_INPUT;
    }
    diff_hdr_text(stdout, o->path, check, o->show);
    int result = check->nproblems ? CLI_MISMATCH : CLI_OK;
    free(check);
    return result;
}

static int check_sframe(const struct options *o, const struct cfi_file *file)
{
    struct sframe_table *table = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (sframe_open(file, &table, &diag) != CFI_OK) {
        cli_report_file_error(o->path, &diag);
        return CLI_BAD_INPUT;
    }
    struct validate_sframe_result *v = malloc(sizeof *v);
    int result = CLI_BAD_INPUT;
    if (v && validate_sframe_check(file, table, o->nstates, o->seed, v) ==
                 CFI_OK) {
        validate_sframe_text(stdout, o->path, v, o->show);
        result = validate_sframe_problems(v) ? CLI_MISMATCH : CLI_OK;
    } else {
        fprintf(stderr, "cfisem: %s: out of memory\n", o->path);
    }
    free(v);
    sframe_free(table);
    return result;
}

int cli_validate_table(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(synopsis, stdout);
        fputs(details, stdout);
        return CLI_OK;
    }
    struct options o = {.show = 20, .nstates = 4, .seed = 1};
    int result = parse(argc, argv, &o);
    if (result != CLI_OK)
        return result;
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (cfi_file_open(o.path, &file, &diag) != CFI_OK) {
        cli_report_file_error(o.path, &diag);
        return CLI_BAD_INPUT;
    }
    result = o.hdr ? check_hdr(&o, file) : check_sframe(&o, file);
    cfi_file_close(file);
    return result;
}
