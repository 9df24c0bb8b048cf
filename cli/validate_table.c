/* validate_table.c — `cfisem validate FILE --hdr`: a compact table a file
 * carries beside its .eh_frame, checked against it (diff/validate_hdr.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff/validate_hdr.h"

static const char usage[] =
    "usage: cfisem validate FILE --hdr [--show N]\n"
    "\n"
    "--hdr: checks the linker's .eh_frame_hdr lookup table against\n"
    ".eh_frame: version and encodings, eh_frame_ptr, one entry per FDE and\n"
    "none extra, sorted, each entry's initial location and FDE address.\n"

    "\n"
    "  --show N   problems printed (default 20)\n"
    "\n"
    "Exit status: 0 no problem; 1 problems, or a usage error; 2 FILE\n"
    "cannot be loaded (one line on stderr naming it).\n";

bool cli_validate_wants_table(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--hdr"))
            return true;
    return false;
}

struct options {
    const char *path;
    size_t show;
};

static int parse(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        uint64_t n;
        if (!strcmp(arg, "--hdr")) {
            continue;
        } else if (!strcmp(arg, "--show")) {
            if (i + 1 >= argc)
                return cli_usage_error("validate", "missing value for", arg);
            if (!cli_parse_u64(argv[++i], &n) || n > 100000)
                return cli_usage_error("validate", "bad count", argv[i]);
            o->show = (size_t)n;
        } else if (arg[0] == '-') {
            return cli_usage_error("validate", "not an option of --hdr:",
                                   arg);
        } else if (o->path) {
            return cli_usage_error("validate", "one FILE with --hdr, not also",
                                   arg);
        } else {
            o->path = arg;
        }
    }
    if (!o->path)
        return cli_usage_error("validate", "expected FILE", NULL);
    return CLI_OK;
}

static int validate_hdr(const struct options *o, const struct cfi_file *file)
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

int cli_validate_table(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return CLI_OK;
        }
    struct options o = {.show = 20};
    int result = parse(argc, argv, &o);
    if (result != CLI_OK)
        return result;
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (cfi_file_open(o.path, &file, &diag) != CFI_OK) {
        cli_report_file_error(o.path, &diag);
        return CLI_BAD_INPUT;
    }
    result = validate_hdr(&o, file);
    cfi_file_close(file);
    return result;
}
