/* SPDX-License-Identifier: MIT */
/* compile.c — `cfisem compile`: a file's CFI compiled into an eh_elf. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "inputs.h"
#include "compile/cg.h"
#include "semantics/sem.h"

static const char usage[] =
    "usage: cfisem compile FILE -o OUT.eh_elf.so [--emit-c OUT.c]\n"
    "                      [--abi full|v1] [--layout tree|table] [-j N]\n"
    "                      [--debug-dir DIR]\n"
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
    "  --abi A       full (default): registers 0-16 (AArch64: 0-34), their\n"
    "                status, error classes; v1: the 2018-2019 ABI (_eh_elf:\n"
    "                rip, rsp, rbp, rbx and an error bit; x86-64 only)\n"
    "  --layout L    how the eh_elf finds a PC's row: table (default),\n"
    "                sorted 16-bit start offsets as data with an index of\n"
    "                64 KiB blocks and their sub-blocks (128 bytes for\n"
    "                libc), the row bodies compiled as for the tree (for\n"
    "                libc, ld.so and libstdc++: 0.6 to 0.75 times the tree\n"
    "                layout's size, as fast on real stacks); tree, an\n"
    "                if/else binary search in code, the easier to read;\n"
    "                both for either ABI\n"
    "  -j N          compile N translation units at a time (default: the\n"
    "                number of CPUs)\n"
    "  --debug-dir DIR  look for a stripped FILE's separate debug file in\n"
    "                DIR before /usr/lib/debug (build-id, .gnu_debuglink):\n"
    "                its .debug_frame is compiled with FILE's .eh_frame, as\n"
    "                cfisem validate and diff read it (repeatable)\n"
    "\n"
    "The C compiler is $CC, or cc. The eh_elf of an AArch64 FILE is AArch64\n"
    "code, built by $CFISEM_AARCH64_CC, or aarch64-linux-gnu-gcc, which cfisem\n"
    "runs with its runner under qemu-aarch64 ($CFISEM_QEMU_AARCH64, or on\n"
    "PATH; the sysroot /usr/aarch64-linux-gnu). The runner is\n"
    "aarch64/eh_elf_runner beside cfisem (the build tree) or\n"
    "../lib/cfisem/aarch64/eh_elf_runner from it (installed), writable by\n"
    "no other user, or $CFISEM_AARCH64_RUNNER (not in a setuid process).\n"
    "Debian: packages gcc-aarch64-linux-gnu and qemu-user; without them,\n"
    "cfisem says which is missing in one line.\n"
    "\n"
    "Example:\n"
    "  cfisem compile /lib/x86_64-linux-gnu/libc.so.6 -o libc.eh_elf.so\n"
    "\n"
        "The generated C of the tree layout is an if/else binary search over the row\n"
        "ranges of all the file's FDEs (gaps return \"no FDE\"), each distinct row body\n"
        "emitted once and reached by a jump, every rule of registers 0-16 and the\n"
        "CFA, DWARF expressions compiled to straight C, every memory read through a\n"
        "callback that can fail, and an explicit error result. It is built in several\n"
        "translation units compiled in parallel (-j).\n"
        "\n"
        "compile/eh_elf.h is the ABI, versioned: every eh_elf exports\n"
        "eh_elf_abi_version and an identifying string. Since version 3 the caller may\n"
        "also offer a window of memory it vouches for (direct_base, direct_span of\n"
        "struct eh_elf_env: the run-time library offers the thread's stack, known\n"
        "readable): an 8-byte read inside it is a plain load, and a rule set whose\n"
        "saved registers all lie in it checks the window once and loads them, with no\n"
        "call; the harness and validate offer no window and see every read. Since\n"
        "version 4 every eh_elf is stamped (eh_elf_object_id, struct\n"
        "eh_elf_object_id); for a file without a build-id (-Wl,--build-id=none) the\n"
        "SHA-256 is of its .eh_frame and then its .debug_frame bytes as they are in\n"
        "the file. unwind, validate, diff and cache compare the stamp with the file\n"
        "before any code of the eh_elf runs, and refuse a stale eh_elf with exit\n"
        "status 2:\n"
        "\n"
        "  cfisem: A.eh_elf.so: built from build-id e54de0b2..., not from A (build-id ba509d4e...)\n"
        "\n"
        "(the ids are printed whole). Consumers call eh_elfs of version 4 only: those\n"
        "of versions 2 and 3 would unwind as well, but carry no stamp and are\n"
        "refused, to be rebuilt. The eh_elfs of the 2018-2019 tools (_eh_elf only, no\n"
        "eh_elf_ident) carry none either: they are accepted where named explicitly\n"
        "(--eh-elf, validate --abi v1), unchecked. Stamping libc's eh_elf costs 64\n"
        "bytes of .rodata and 10 KB more C (the longer header copy in each unit's\n"
        "prelude); its object id is a build-id note found in the file already read\n"
        "(0.03 us), and a frame SHA-256 of libc's 150 KB of .eh_frame would take 4\n"
        "ms; cfisem compile of libc took 8.7 to 9.4 s of CPU before and after alike,\n"
        "on a loaded machine.\n"
        "\n"
        "With --abi v1, rip is the value of the CIE's return address column\n"
        "(undefined, a clear flag, for a column with no rule that the ABI leaves\n"
        "undefined), and where the rule of rip, rbp or rbx is the value of a register\n"
        "v1's context lacks (DW_CFA_register, rip=rdi at libc's __vfork) the answer\n"
        "is the error bit, so that a consumer falls back to DWARF rather than take a\n"
        "clear flag for the end of the stack (or for the callee's rbp).\n"
        "\n"
        "  $ cfisem compile /lib/x86_64-linux-gnu/libc.so.6 -o libc.eh_elf.so\n"
        "  /lib/x86_64-linux-gnu/libc.so.6: 28522 leaves, 395 rows, 58 rule sets, 19 expressions,\n"
        "    the search as a table, 757883 bytes of C\n"
        "    generation           0.05 s\n"
        "    build                2.02 s (2 jobs)\n"
        "    .eh_frame          153296 bytes (.eh_frame_hdr 29716)\n"
        "    eh_elf .text        29857 bytes (0.19x .eh_frame)\n"
        "    eh_elf .rodata     137688 bytes (.text + .rodata 1.09x .eh_frame)\n"
        "\n"
        "  With --layout tree:\n"
        "    17230 search nodes in 7 parts, 2907453 bytes of C\n"
        "    ...\n"
        "    eh_elf .text       248766 bytes (1.62x .eh_frame)\n"
        "    eh_elf .rodata       1592 bytes (.text + .rodata 1.63x .eh_frame)\n"
        "\n"
        "(bench/eh_elf.c measures the build time.) An FDE that does not translate is\n"
        "named on stderr as cfisem il names it. cfisem unwind --engine compiled and\n"
        "cfisem diff use eh_elfs through the same ABI (unwind also asks a v1 eh_elf);\n"
        "cfisem validate checks one against the IL evaluator at every address.\n"
        "\n"
        "The table layout (compile/table.c) writes the search as data, as ORC and\n"
        ".eh_frame_hdr do: the leaves' start offsets as 16-bit numbers relative to 64\n"
        "KiB blocks, a 32-bit index of each block's first leaf, a 16-bit index of\n"
        "each sub-block's first leaf (64-byte sub-blocks, or larger ones to keep them\n"
        "under half the leaves plus 256: 128 bytes for libc and libstdc++, about a\n"
        "byte a leaf), and the leaves' row numbers (8-bit up to 254 rows, 16-bit up\n"
        "to 65,534). The search takes the PC's sub-block and counts its leaves at or\n"
        "below the PC with SSE2 compares, 8 or 16 at a time (8 when no sub-block of\n"
        "the file holds more) and without a branch (binary search steps first in the\n"
        "rare sub-block of more than 16). A balanced if/else tree\n"
        "on the row number then reaches the row body, compiled as for the tree: its\n"
        "CFA register and offset and its rules are constants in code. Every register\n"
        "0-16 is kept; the ABI is the same. When the leaves span 4 GiB or more, or\n"
        "the blocks would far outnumber the leaves, the offsets are plain 64-bit\n"
        "numbers searched whole. make eh-elfs builds both layouts of the system\n"
        "libraries (NAME.full.eh_elf.so, NAME.table.eh_elf.so); its speed and sizes,\n"
        "measured, are in the project's docs/speed.md.\n"
        "\n"
        "An AArch64 file's rule sets (either layout) are compiled by shape: rule\n"
        "sets that differ only in the CFA offsets of their offset and val_offset\n"
        "rules share one function, which reads those offsets from a table of\n"
        "32-bit numbers (eh_param) that each row passes it; an offset past 32 bits\n"
        "stays a constant of its shape. AArch64 saves registers in pairs at\n"
        "offsets that vary with the frame's size, so that nearly every rule set\n"
        "is distinct: the cross libc has 1130 rule sets in 131 shapes, and one\n"
        "function per rule set made its eh_elf's .text 5.3 times its .eh_frame.\n"
        "compile prints the shapes' number on a line of its own. x86-64's rule\n"
        "sets keep their offsets in code. The ABI is the same.\n"
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
    struct cli_inputs inputs;  /* --debug-dir */
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
        int status = cli_inputs_option("compile", argc, argv, &i,
                                       &o->inputs);
        if (status == 0)
            status = parse_option(argc, argv, &i, o);
        if (status != CLI_OK && status != 1)
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
        printf("%s: %zu leaves, %zu rows, %zu rule sets, %zu expressions,\n",
               o->path, s->leaves, s->rows, s->rulesets, s->expressions);
        if (s->shapes)
            printf("  %zu shapes of rule sets, their offsets as data\n",
                   s->shapes);
        if (o->search == CG_SEARCH_TREE)
            printf("  %zu search nodes in %zu parts, %zu bytes of C\n",
                   s->nodes, s->parts, s->c_bytes);
        else
            printf("  the search as a table, %zu bytes of C\n", s->c_bytes);
        printf("  generation     %10.2f s\n", generated - start);
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
    struct options o = {NULL, NULL, NULL, CG_ABI_FULL, CG_SEARCH_TABLE, 0,
                        {{NULL}, 0}};
    int result = parse_options(argc, argv, &o);
    if (result != CLI_OK)
        return result;
    struct cfi_file *file;
    struct cfi_diag diag;
    if (cli_open_cfi(&o.inputs, o.path, &file, &diag) != CFI_OK) {
        cli_report_file_error(o.path, &diag);
        return CLI_BAD_INPUT;
    }
    result = compile_file(&o, file);
    cfi_file_close(file);
    return result;
}
