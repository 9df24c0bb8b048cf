/* SPDX-License-Identifier: MIT */
/* sites.c — `cfisem sites`: the instrumentation sites of a file. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cfi/json.h"
#include "trace/trace.h"

static const char usage[] =
    "usage: cfisem sites FILE [--json]\n"
    "\n"
    "Lists the SystemTap SDT probes of FILE (its stapsdt notes): provider,\n"
    "name, PC, semaphore and argument string. The PC and the semaphore are\n"
    "file addresses, adjusted by the difference between .stapsdt.base's\n"
    "address and the base the note records (a prelinked file); the PC the\n"
    "note records is given too when it differs.\n"
    "\n"
    "  --json   one JSON object: {\"schema_version\": 1, \"file\": ...,\n"
    "           \"probes\": [...]}\n"
    "\n"
    "Example:\n"
    "  cfisem sites /usr/lib/x86_64-linux-gnu/libstdc++.so.6\n"
    "\n"
        "The notes read are of type 3.\n"
        "\n"
        "  $ cfisem sites /usr/lib/x86_64-linux-gnu/libstdc++.so.6\n"
        "  pc                 semaphore          probe                            arguments\n"
        "  0xa7f05            0x0                libstdcxx:catch                  8@%rdx 8@-80(%rbx)\n"
        "  0xa90a1            0x0                libstdcxx:throw                  8@%rdi 8@%rsi\n"
        "  0xa9139            0x0                libstdcxx:rethrow                8@%rdx 8@%rax\n"
        "\n"
        "Debian 12's libc.so.6 has no probes (its glibc is built without SystemTap\n"
        "support); libstdc++ has these three. cfisem diff --pcs stapsdt and cfisem\n"
        "validate --pcs stapsdt ask only at the probes (innermost frames, as a tracer\n"
        "stopped there would), cfisem trace --at stapsdt stops there in a running\n"
        "program.\n"
        "\n"
    "Exit status: 0 listed (none is no error), 2 bad input file, 64 usage\n"
    "error.\n";

static void print_json(const char *path, const struct trace_sites *sites)
{
    printf("{\"schema_version\": %d, \"file\": ", CFI_JSON_SCHEMA_VERSION);
    cfi_json_string(stdout, path);
    printf(", \"probes\": [");
    for (size_t i = 0; i < sites->n; i++) {
        const struct trace_site *s = &sites->sites[i];
        printf("%s\n  {\"provider\": ", i ? "," : "");
        cfi_json_string(stdout, s->provider);
        printf(", \"name\": ");
        cfi_json_string(stdout, s->name);
        printf(", \"pc\": \"0x%" PRIx64 "\", \"link_pc\": \"0x%" PRIx64
               "\", \"base\": \"0x%" PRIx64 "\", \"semaphore\": \"0x%" PRIx64
               "\", \"args\": ", s->pc, s->link_pc, s->base, s->semaphore);
        cfi_json_string(stdout, s->args);
        putchar('}');
    }
    printf("]}\n");
}

static void print_text(const struct trace_sites *sites)
{
    printf("%-18s %-18s %-32s %s\n", "pc", "semaphore", "probe", "arguments");
    for (size_t i = 0; i < sites->n; i++) {
        const struct trace_site *s = &sites->sites[i];
        char probe[256], pc[32];
        snprintf(probe, sizeof probe, "%s:%s", s->provider, s->name);
        snprintf(pc, sizeof pc, "0x%" PRIx64, s->pc);
        printf("%-18s 0x%-16" PRIx64 " %-32s %s", pc, s->semaphore, probe,
               s->args);
        if (s->link_pc != s->pc)
            printf("  (recorded 0x%" PRIx64 ")", s->link_pc);
        putchar('\n');
    }
}

int cli_sites(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return CLI_OK;
        }
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (argv[i][0] == '-')
            return cli_usage_error("sites", "unknown option", argv[i]);
        else if (path)
            return cli_usage_error("sites", "more than one FILE:", argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return cli_usage_error("sites", "missing FILE", NULL);
    struct trace_sites sites;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (trace_sites_read(path, &sites, &diag) != CFI_OK) {
        cli_report_file_error(path, &diag);
        return CLI_BAD_INPUT;
    }
    if (json)
        print_json(path, &sites);
    else
        print_text(&sites);
    trace_sites_free(&sites);
    return CLI_OK;
}
