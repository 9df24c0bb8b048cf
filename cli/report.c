/* SPDX-License-Identifier: MIT */
/* report.c — `cfisem report merge`: the JSON results of `cfisem diff`
 * runs over parts of one list of files (shards, on many machines) made
 * into the report of one run over the whole list (diff/merge.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff/harness.h"
#include "diff/merge.h"

static const char usage[] =
    "usage: cfisem report merge RESULT.json... [--lists] [--json OUT]\n"
    "                           [--show N]\n"
    "\n"
    "Merges the JSON results (--json) of cfisem diff runs over the shards\n"
    "of one list of files (cfisem diff --shard K/N, each on a machine of\n"
    "its own) into the report one run over the whole list gives: the same\n"
    "text, the same JSON (the time is the sum of the parts'), the same exit\n"
    "status. The parts must have been run with the same settings (seed,\n"
    "states, PCs, engines, faults, --keep, cfisem version) over the same\n"
    "list, and hold every file of it once, by the same build of cfisem and\n"
    "of each library it loaded (the build IDs their \"build\" names).\n"
    "\n"
    "  --lists      the parts are runs over lists of their own (each one's\n"
    "               whole list: the packages of an archive, say), not\n"
    "               shards of one list: the merged list is theirs one\n"
    "               after the other, in the order given\n"
    "  --json OUT   write the merged result as JSON to OUT\n"
    "  --show N     new mismatches printed (default 10)\n"
    "\n"
    "Example, four machines:\n"
    "  cfisem diff --manifest m.txt --shard 1/4 --json part1.json  (on each,\n"
    "  K = 1..4), then: cfisem report merge part*.json --json all.json\n"
    "One run per package (corpus/debian.sh), then:\n"
    "  cfisem report merge --lists results/*.json --json archive.json\n"
    "corpus/shard.sh runs the shards under make -j, GNU parallel, a Slurm\n"
    "array or a Kubernetes Indexed Job, and merges them.\n"
    "\n"
        "The merged report has the same stderr lines as one run (files that could not\n"
        "be loaded, FDEs that do not translate, wrong .eh_frame_hdr). The JSON it\n"
        "reads is checked member by member against the schema of cfisem diff --json\n"
        "(a schema_version other than 1 is refused); anything else is one line\n"
        "naming the file and the member (exit 2). A part run with other settings,\n"
        "by another version, over another list, a shard given twice or one missing\n"
        "is refused with one line naming it (exit 2); one made by another build\n"
        "of cfisem or of a library, with the line naming the object and both\n"
        "build IDs.\n"
        "\n"
    "Exit status: as cfisem diff's: 0 no new mismatch, 1 new mismatches or\n"
    "a wrong .eh_frame_hdr, 2 a file of the list could not be loaded, or a\n"
    "RESULT that cannot be read or does not fit the others (one line on\n"
    "stderr names it); 64 a usage error.\n";

struct options {
    const char **results;
    size_t nresults;
    const char *json_path;
    size_t show;
    bool lists;
};

static int parse_options(int argc, char **argv, struct options *o)
{
    if (argc < 2 || strcmp(argv[1], "merge"))
        return cli_usage_error("report", "expected `merge`, got",
                               argc < 2 ? "nothing" : argv[1]);
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        uint64_t n;
        if (arg[0] != '-')
            o->results[o->nresults++] = arg;
        else if (!strcmp(arg, "--lists"))
            o->lists = true;
        else if (strcmp(arg, "--json") && strcmp(arg, "--show"))
            return cli_usage_error("report", "unknown option", arg);
        else if (i + 1 >= argc)
            return cli_usage_error("report", "missing value for", arg);
        else if (!strcmp(arg, "--json"))
            o->json_path = argv[++i];
        else if (!cli_parse_u64(argv[++i], &n))
            return cli_usage_error("report", "bad count", argv[i]);
        else
            o->show = (size_t)n;
    }
    if (o->nresults == 0)
        return cli_usage_error("report", "missing RESULT.json", NULL);
    return CLI_OK;
}

static int read_parts(const struct options *o, struct diff_run **parts)
{
    for (size_t i = 0; i < o->nresults; i++) {
        char why[256];
        if (diff_run_read_json(o->results[i], &parts[i], why, sizeof why) !=
            CFI_OK) {
            fprintf(stderr, "cfisem: %s: %s\n", o->results[i], why);
            return CLI_BAD_INPUT;
        }
    }
    return CLI_OK;
}

static int merge(const struct options *o, struct diff_run **parts)
{
    struct diff_run *run;
    size_t bad;
    char why[256];
    enum cfi_status status =
        o->lists ? diff_run_concat(parts, o->nresults, &run, &bad, why,
                                   sizeof why)
                 : diff_run_merge(parts, o->nresults, &run, &bad, why,
                                  sizeof why);
    if (status != CFI_OK) {
        if (bad < o->nresults)
            fprintf(stderr, "cfisem: %s: %s\n", o->results[bad], why);
        else
            fprintf(stderr, "cfisem report: %s\n", why);
        return CLI_BAD_INPUT;
    }
    int result = cli_diff_report(run, o->json_path, o->show);
    diff_run_free(run);
    return result;
}

int cli_report(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options o = {calloc((size_t)argc, sizeof *o.results), 0, NULL, 10,
                        false};
    struct diff_run **parts = calloc((size_t)argc, sizeof *parts);
    int result = o.results && parts ? parse_options(argc, argv, &o)
                                    : CLI_BAD_INPUT;
    if (result == CLI_OK)
        result = read_parts(&o, parts);
    if (result == CLI_OK)
        result = merge(&o, parts);
    for (size_t i = 0; parts && i < o.nresults; i++)
        diff_run_free(parts[i]);
    free(parts);
    free(o.results);
    return result;
}
