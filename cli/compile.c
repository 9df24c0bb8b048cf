/* compile.c — `cfisem compile`: a file's CFI compiled into an eh_elf. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "compile/cg.h"
#include "semantics/sem.h"

static const char usage[] =
    "usage: cfisem compile FILE -o OUT.eh_elf.so [--emit-c OUT.c]\n"
    "                      [--abi full|v1] [--layout tree|table] [-j N]\n"
    "\n"
    "Compiles the call frame information of FILE (.eh_frame, .debug_frame)\n"
    "into an eh_elf: a shared object whose code unwinds one frame at any\n"
    "address of FILE without reading DWARF (compile/eh_elf.h is its ABI).\n"
    "Prints the sizes and the time taken. The eh_elf, of either ABI and\n"
    "layout, is stamped with FILE's object id (eh_elf_object_id: its GNU\n"
    "build-id, else the SHA-256 of its .eh_frame and .debug_frame): cfisem\n"
    "unwind, validate, diff and cache refuse an eh_elf given for another\n"
    "file, or for FILE changed since, with one line naming both ids.\n"
    "\n"
    "  -o OUT        the eh_elf to write\n"
    "  --emit-c OUT  also write the generated C, as one file (-o may then be\n"
    "                left out: the C only)\n"
    "  --abi A       full (default): registers 0-16, their status, error\n"
    "                classes; v1: the 2018-2019 ABI (_eh_elf: rip, rsp, rbp,\n"
    "                rbx and an error bit)\n"
    "  --layout L    how the eh_elf finds a PC's row: tree (default), an\n"
    "                if/else binary search in code; table, sorted 16-bit\n"
    "                start offsets as data with an index of 64 KiB blocks\n"
    "                and their sub-blocks (256 bytes for libc), the row\n"
    "                bodies compiled as for the tree (for libc, ld.so and\n"
    "                libstdc++: 0.5 to 0.7 times the tree layout's size);\n"
    "                both for either ABI\n"
    "  -j N          compile N translation units at a time (default: the\n"
    "                number of CPUs)\n"
    "\n"
    "The C compiler is $CC, or cc.\n"
    "\n"
    "Example:\n"
    "  cfisem compile /lib/x86_64-linux-gnu/libc.so.6 -o libc.eh_elf.so\n"
    "\n"
    "Exit status: 0 built, 64 usage error, 2 bad input file or the build\n"
    "failed. FDEs that do not translate are compiled to their error (the\n"
    "eh_elf answers it at their addresses): the eh_elf is built, the first\n"
    "such FDE is named on stderr, and the exit status is 2.\n";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct options {
    const char *path;
    const char *output;
    const char *emit_c;
    enum cg_abi abi;
    enum cg_search_kind search;
    unsigned jobs;
};

static int parse_option(int argc, char **argv, int *i, struct options *o)
{
    const char *arg = argv[*i];
    bool takes_value = !strcmp(arg, "-o") || !strcmp(arg, "--emit-c") ||
                       !strcmp(arg, "--abi") || !strcmp(arg, "-j") ||
                       !strcmp(arg, "--layout");
    if (!takes_value)
        return cli_usage_error("compile", "unknown option", arg);
    if (*i + 1 >= argc)
        return cli_usage_error("compile", "missing value for", arg);
    const char *value = argv[++*i];
    uint64_t jobs;
    if (!strcmp(arg, "-o"))
        o->output = value;
    else if (!strcmp(arg, "--emit-c"))
        o->emit_c = value;
    else if (!strcmp(arg, "--abi") && !cg_abi_parse(value, &o->abi))
        return cli_usage_error("compile", "unknown ABI", value);
    else if (!strcmp(arg, "--layout") &&
             !cg_search_kind_parse(value, &o->search))
        return cli_usage_error("compile", "unknown layout", value);
    else if (!strcmp(arg, "-j")) {
        if (!cli_parse_u64(value, &jobs) || jobs == 0 || jobs > 1024)
            return cli_usage_error("compile", "bad job count", value);
        o->jobs = (unsigned)jobs;
    }
    return CLI_OK;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') {
            if (o->path)
                return cli_usage_error("compile", "more than one FILE:",
                                       argv[i]);
            o->path = argv[i];
            continue;
        }
        int status = parse_option(argc, argv, &i, o);
        if (status != CLI_OK)
            return status;
    }
    if (!o->path)
        return cli_usage_error("compile", "missing FILE", NULL);
    if (!o->output && !o->emit_c)
        return cli_usage_error("compile", "missing -o OUT", NULL);
    return CLI_OK;
}

static int write_c(const struct options *o, const struct cg_program *program)
{
    FILE *f = fopen(o->emit_c, "w");
    bool ok = f && cg_write_c(program, f) == CFI_OK;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "cfisem: %s: cannot write the C\n", o->emit_c);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

static void print_sizes(const struct cfi_file *file, const char *output)
{
    struct cg_sizes sizes;
    struct cfi_diag diag;
    if (cg_section_sizes(output, &sizes, &diag) != CFI_OK) {
        cli_report_file_error(output, &diag);
        return;
    }
    printf("  .eh_frame      %10" PRIu64 " bytes (.eh_frame_hdr %" PRIu64 ")\n",
           file->eh_frame_size, file->eh_frame_hdr_size);
    printf("  eh_elf .text   %10" PRIu64 " bytes", sizes.text);
    if (file->eh_frame_size)
        printf(" (%.2fx .eh_frame)",
               (double)sizes.text / (double)file->eh_frame_size);
    printf("\n  eh_elf .rodata %10" PRIu64 " bytes", sizes.rodata);
    if (file->eh_frame_size)
        printf(" (.text + .rodata %.2fx .eh_frame)",
               (double)(sizes.text + sizes.rodata) /
                   (double)file->eh_frame_size);
    printf("\n");
}

static void report_first_failure(const char *path, const struct cfi_file *file,
                                 const struct sem_file_il *il)
{
    for (size_t i = 0; i < il->nfdes; i++)
        if (il->status[i] != CFI_OK) {
            cli_report_fde_error(path, &file->fdes[i], &il->diags[i],
                                 il->nfailed);
            return;
        }
}

static int compile_file(const struct options *o, const struct cfi_file *file)
{
    double start = now();
    struct sem_file_il *il;
    struct cg_program *program = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (sem_file_il_build(file, &il) != CFI_OK) {
        fprintf(stderr, "cfisem: out of memory\n");
        return CLI_BAD_INPUT;
    }
    /* FDEs that do not translate compile to their error: the eh_elf is
     * built, and the file is reported as bad input, as `cfisem il` does. */
    bool malformed = il->nfailed > 0;
    if (malformed)
        report_first_failure(o->path, file, il);
    enum cfi_status status = cg_generate_search(il, o->abi, o->search, &program,
                                                &diag);
    double generated = now();
    int result = CLI_OK;
    if (status != CFI_OK) {
        cli_report_file_error(o->path, &diag);
        result = cli_exit_of(status, CLI_BAD_INPUT);
    }
    if (result == CLI_OK) {
        const struct cg_stats *s = &program->stats;
        printf("%s: %zu leaves, %zu rows, %zu rule sets, %zu expressions,\n"
               "  %zu search nodes in %zu parts, %zu bytes of C\n"
               "  generation     %10.2f s\n", o->path, s->leaves, s->rows,
               s->rulesets, s->expressions, s->nodes, s->parts, s->c_bytes,
               generated - start);
    }
    if (result == CLI_OK && o->emit_c)
        result = write_c(o, program);
    if (result == CLI_OK && o->output) {
        struct cg_build_options options = {NULL, o->jobs, false};
        struct cg_build_report report;
        status = cg_build(program, o->output, &options, &report, &diag);
        if (status != CFI_OK) {
            cli_report_file_error(o->output, &diag);
            result = CLI_BAD_INPUT;
        } else {
            printf("  build          %10.2f s (%u jobs)\n", report.seconds,
                   report.jobs);
            print_sizes(file, o->output);
        }
    }
    cg_program_free(program);
    sem_file_il_free(il);
    return result == CLI_OK && malformed ? CLI_BAD_INPUT : result;
}

int cli_compile(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options o = {NULL, NULL, NULL, CG_ABI_FULL, CG_SEARCH_TREE, 0};
    int result = parse_options(argc, argv, &o);
    if (result != CLI_OK)
        return result;
    struct cfi_file *file;
    struct cfi_diag diag;
    if (cfi_file_open(o.path, &file, &diag) != CFI_OK) {
        cli_report_file_error(o.path, &diag);
        return CLI_BAD_INPUT;
    }
    result = compile_file(&o, file);
    cfi_file_close(file);
    return result;
}
