/* SPDX-License-Identifier: MIT */
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
        "--hdr, in detail: .eh_frame_hdr is the sorted table libgcc and libunwind\n"
        "binary-search; it is checked against the .eh_frame it indexes (its bytes as\n"
        "the loaded image has them): version 1; encodings this reader knows (the\n"
        "table's of a fixed size, and datarel|sdata4, the only one libgcc and\n"
        "libunwind search); eh_frame_ptr is the address of .eh_frame; fde_count is\n"
        "the number of FDEs; entries sorted strictly; each FDE address is an FDE of\n"
        ".eh_frame whose pc_begin is the entry's initial location; no FDE with two\n"
        "entries or none. Each problem is a line naming it (unsorted, wrong_location,\n"
        "not_an_fde, repeated_fde, missing_fde, count, eh_frame_ptr, version,\n"
        "encoding, table_unsearchable, truncated, not_loaded) with the entry's index\n"
        "and fields. A file without .eh_frame_hdr has nothing to check (exit 0).\n"
        "\n"
        "  $ cfisem validate /lib/x86_64-linux-gnu/libc.so.6 --hdr\n"
        "  cfisem validate: /lib/x86_64-linux-gnu/libc.so.6 --hdr: .eh_frame_hdr at 0x1a1b2c, 29716 bytes, version 1, encodings 0x1b 0x03 0x3b; 3713 entries for 3713 FDEs in .eh_frame\n"
        "\n"
        "  result: 0 problems\n"
        "\n"
        "--sframe, in detail: SFrame is what as --gsframe writes, and profilers read\n"
        "instead of DWARF; it is checked against the DWARF gas wrote from the same\n"
        ".cfi_* directives (.eh_frame, and .debug_frame where .eh_frame has no FDE).\n"
        "Consecutive wrong addresses of one FDE with the same first differing item\n"
        "make one wrong range. FDE ranges: SFrame FDEs that reach out of their DWARF\n"
        "FDE or cover it in part (SFrame may split one, as it does the PLT's). The\n"
        "reasons a DWARF FDE has no SFrame FDE: a CFA expression or from another\n"
        "register, a return address not at CFA-8, an rbp rule SFrame cannot say. FDEs\n"
        "left out are listed only, not problems (gas leaves out every FDE with a\n"
        ".cfi_escape, and objects assembled without --gsframe, the crt files, have\n"
        "none). A relocatable object's .sframe is not read (its function starts still\n"
        "need relocating): exit 2. Where gas 2.40's SFrame is wrong by its own DWARF,\n"
        "with minimal inputs, is in the sources' diff/findings/README.md.\n"
        "\n"
        "  $ cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -Wa,--gsframe -o restore.so corpus/cases/restore.S\n"
        "  $ cfisem validate restore.so --sframe\n"
        "  cfisem validate: restore.so --sframe: SFrame v1, 1 FDEs, 3 FREs; DWARF 1 FDEs (.eh_frame 1); 4 states per address\n"
        "    6 addresses of DWARF FDEs, 6 covered by SFrame: 4 agree, 2 wrong\n"
        "  wrong ranges: 2\n"
        "    [0x1002,0x1003) rip: DWARF 0x345f6a42729eec7c, SFrame 0x6970d0796554d520 (state 0; .eh_frame+0x18, .sframe+0x1c)\n"
        "    [0x1004,0x1005) rip: DWARF undefined, SFrame 0xfd76ef03a538bf3 (state 0; .eh_frame+0x18, .sframe+0x1c)\n"
        "\n"
        "  result: 2 problems (2 wrong ranges, 0 FDE ranges, 0 ranges SFrame covers alone); 0 FDEs not in SFrame\n"
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
    struct engine_hdr_check *check = malloc(sizeof *check);
    if (!check || engine_hdr_check(file, check) != CFI_OK) {
        free(check);
        fprintf(stderr, "cfisem: %s: out of memory\n", o->path);
        return CLI_BAD_INPUT;
    }
    engine_hdr_text(stdout, o->path, check, o->show);
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
