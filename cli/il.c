/* SPDX-License-Identifier: MIT */
/* il.c — `cfisem il FILE... [--pc ADDR] [--format text|json|readelf]`:
 * the intermediate language of each file's CFI, every FDE or the one row
 * that covers ADDR. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"
#include "semantics/sem.h"

static void print_usage(FILE *out)
{
    fputs(
        "usage: cfisem il FILE... [--pc ADDR] [--format text|json|readelf]\n"
        "                 [--debug-dir DIR]\n"
        "       cfisem il FILE --sframe [--pc ADDR]\n"
        "\n"
        "Prints the intermediate language (IL) of the call frame information\n"
        "of FILE (.eh_frame, then .debug_frame): for each FDE, its rows and\n"
        "the addresses each covers. With --pc, only the row covering ADDR\n"
        "(decimal or 0x-hex), in the FDE that covers it. ADDR may be a\n"
        "function's name, SYMBOL or SYMBOL+OFFSET (OFFSET decimal or 0x-hex):\n"
        "the address of the function symbol (.symtab, .dynsym) of that name;\n"
        "when several functions bear the name (static functions of different\n"
        "units), the one at the lowest address, and a note on stderr says so;\n"
        "none: one line, exit 64.\n"
        "\n"
        "Several files are printed one after the other, each after a line\n"
        "\"File: FILE\" (as readelf does; not in JSON, whose object names its\n"
        "file: one object per file); a file that cannot be read is reported\n"
        "and the others are still printed.\n"
        "\n"
        "A stripped file's .debug_frame is read from its separate debug file,\n"
        "found as gdb finds it: by build-id (DIR/.build-id/NN/REST.debug) and\n"
        "by .gnu_debuglink (the file's folder, its .debug/ folder, then\n"
        "DIR/FILEDIR/NAME, the CRC checked), DIR being each --debug-dir, then\n"
        "/usr/lib/debug. It joins the file's own .eh_frame. A debug file that\n"
        "the file names (.gnu_debuglink) but that is found nowhere gives one\n"
        "note on stderr; it is not an error.\n"
        "\n"
        "Options:\n"
        "  --pc ADDR        only the row covering ADDR (or SYMBOL[+OFFSET])\n"
        "  --format FORMAT  text (default), json or readelf\n"
        "  --sframe         the .sframe table instead (one FILE)\n",
        out);
    cli_inputs_help(out);
    fputs(
        "\n"
        "Formats:\n"
        "  text     (default) a header line per FDE, naming the function\n"
        "           that holds its first address when a symbol does, then a\n"
        "           line per range:\n"
        "             fde .eh_frame+0x18 cie=0x0 [0x26000,0x26360)"
        " <__libc_start_call_main>\n"
        "               aug=zR caf=1 daf=-8 ra=16   (one line)\n"
        "             [0x26000,0x26006)  cfa=rsp+16  rip=[cfa-8]\n"
        "             [0x26010,0x26360)  cfa=expr(breg7 8; breg16 0; lit15;"
        " and; lit11; ge; lit3; shl; plus)  rip=[cfa-8]\n"
        "           [cfa-16] is \"stored at CFA-16\" (offset), cfa-16 is the"
        " value\n"
        "           (val_offset), [expr(..)] and expr(..) likewise; undef,"
        " same, or a\n"
        "           register name (register rule). Registers without a rule"
        " are absent.\n"
        "           Names are the file's architecture's (x86-64: rax..r15,"
        " rip;\n"
        "           AArch64: x0..x30, sp, pc, ra_sign_state, whose state s is"
        " the\n"
        "           rule expr(lit s))."
        "\n"
        "  json     one object for the file:\n"
        "             {\"schema_version\": 1, \"file\": \"libc.so.6\", \"arch\":\n"
        "              \"x86-64\", \"fdes\": [\n"
        "             {\"section\": \".eh_frame\", \"offset\": 24, ..."
        " \"rows\": [{\"begin\": \"0x26000\",\n"
        "              \"end\": \"0x26006\", \"cfa\": {\"reg\": 7, \"offset\": 16},"
        "\n"
        "              \"regs\": {\"16\": {\"rule\": \"offset\", \"offset\":"
        " -8}}}]}\n"
        "             ]}\n"
        "  readelf  the table of `readelf -wF`, one table row per range:\n"
        "             00000018 0000000000000024 0000001c FDE cie=00000000"
        " pc=...\n"
        "                LOC           CFA      ra\n"
        "             0000000000026000 rsp+16   c-8\n"
        "\n"
        "--sframe prints the file's .sframe table instead (SFrame v1 or v2):\n"
        "a header line per SFrame FDE, then its rows in the text format:\n"
        "  fde .sframe+0x1c [0x113d,0x116e) v1 fre=addr1\n"
        "  [0x113e,0x1142)  cfa=rsp+16  rbp=[cfa-16]  rip=[cfa-8]\n"
        "(an FP SFrame does not track has no rule; a pc-mask FDE, the PLT,\n"
        "has its rows written out for each block it covers).\n"
        "\n"
        "Example: cfisem il /lib/x86_64-linux-gnu/libc.so.6 --pc 0x27285\n"
        "\n"
        "Sections: .eh_frame and .debug_frame, compressed (SHF_COMPRESSED) with\n"
        "zlib or zstd, or .zdebug_frame (the older GNU compression). A zstd section\n"
        "that claims more than 1 GiB, or 1024 times its compressed bytes, or whose\n"
        "frame gives another size than it claims, is malformed. A frame section\n"
        "that holds no record (glibc's gconv modules\n"
        "and libnss_dns.so.2 have an .eh_frame of only its terminator) is a file with\n"
        "no FDE: nothing is printed, exit 0. In .debug_frame a zero length word is\n"
        "read as 4 bytes of padding and the records after it are read (DWARF 5\n"
        "section 6.4.1 defines no terminator there; readelf and gimli read on),\n"
        "where it ends .eh_frame.\n"
        "\n"
        "--sframe reads SFrame v1, as gas 2.40 writes it, or v2; a pc-mask FDE says\n"
        "pc-mask 16 in its header line:\n"
        "\n"
        "  $ cfisem il prog --sframe --pc 0x1140\n"
        "  fde .sframe+0x4f [0x113d,0x116e) v1 fre=addr1\n"
        "  [0x113e,0x1142)  cfa=rsp+16  rip=[cfa-8]\n"
        "\n"
        "  $ cfisem il /lib/x86_64-linux-gnu/libc.so.6 --pc 0x27290\n"
        "  fde .eh_frame+0xbc cie=0x0 [0x27280,0x273c1) aug=zR caf=1 daf=-8 ra=16\n"
        "  [0x2728f,0x27296)  cfa=rsp+56  rbx=[cfa-56]  rbp=[cfa-48]  r12=[cfa-40]  r13=[cfa-32]  r14=[cfa-24]  r15=[cfa-16]  rip=[cfa-8]\n"
        "\n"
        "The members of --format json: {\"schema_version\": 1, \"file\": ..., \"fdes\":\n"
        "[{\"section\", \"offset\", \"cie_offset\", \"begin\", \"end\", \"function\"\n"
        "(when a symbol holds begin), \"augmentation\",\n"
        "\"code_align\", \"data_align\", \"ra\", \"error\" (an FDE that does not\n"
        "translate only), \"rows\": [{\"begin\", \"end\", \"cfa\", \"regs\"}]}]}.\n"
        "--format readelf is laid out as readelf -wF, so that the two can be\n"
        "compared line by line.\n"
        "\n"
        "Exit status: 0 success; 2 a file cannot be loaded or an FDE cannot\n"
        "be translated (the others are printed); 3 no FDE covers ADDR; 64\n"
        "usage error, or no function named SYMBOL. With several files, the\n"
        "worst of the files' (70, then 2, 64, 3).\n",
        out);
}

struct il_options {
    const char **paths;          /* argv's, in order */
    size_t npaths;
    bool has_pc;
    struct cli_pc pc;
    enum sem_format format;
    struct cli_inputs inputs;
};

static bool parse_format(const char *text, enum sem_format *format)
{
    static const struct {
        const char *name;
        enum sem_format format;
    } formats[] = {{"text", SEM_FORMAT_TEXT},
                   {"json", SEM_FORMAT_JSON},
                   {"readelf", SEM_FORMAT_READELF}};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (!strcmp(text, formats[i].name)) {
            *format = formats[i].format;
            return true;
        }
    return false;
}

/* The value of option `name` given as "--name VALUE" or "--name=VALUE";
 * NULL when argv[*i] is not that option. *missing when VALUE is absent. */
static const char *option_value(int argc, char **argv, int *i,
                                const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];
    *missing = false;
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

/* CLI_OK, CLI_USAGE (reported), or -1 for --help. o->paths has room
 * for every argument. */
static int parse_options(int argc, char **argv, struct il_options *o)
{
    bool missing, only_files = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        int taken;
        if (only_files || arg[0] != '-' || !strcmp(arg, "-")) {
            o->paths[o->npaths++] = arg;
        } else if (!strcmp(arg, "--")) {
            only_files = true;
        } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            return -1;
        } else if ((taken = cli_inputs_option("il", argc, argv, &i,
                                              &o->inputs))) {
            if (taken != 1)
                return taken;
        } else if ((value = option_value(argc, argv, &i, "--pc", &missing))) {
            if (!cli_pc_parse(value, &o->pc))
                return cli_usage_error("il", "bad address for --pc:", value);
            o->has_pc = true;
        } else if ((value = option_value(argc, argv, &i, "--format",
                                         &missing))) {
            if (!parse_format(value, &o->format))
                return cli_usage_error("il", "unknown format:", value);
        } else {
            return cli_usage_error("il", missing ? "missing value for"
                                                 : "unknown option",
                                   arg);
        }
    }
    if (!o->npaths)
        return cli_usage_error("il", "missing FILE", NULL);
    return CLI_OK;
}

/* What went wrong in a file: the first FDE that failed and how many. */
struct il_failures {
    size_t count;
    const struct cfi_fde *first;
    struct cfi_diag diag;
    bool internal;              /* one is CFI_E_INTERNAL */
};

static void note_failure(struct il_failures *f, const struct cfi_fde *fde,
                         const struct cfi_diag *diag)
{
    f->internal |= diag->status == CFI_E_INTERNAL;
    if (f->count++ == 0) {
        f->first = fde;
        f->diag = *diag;
    }
}

static void report_overlaps(const char *path, const struct cfi_file *file)
{
    if (file->noverlaps == 0)
        return;
    fprintf(stderr,
            "cfisem: %s: warning: %zu overlapping FDEs (first: 0x%" PRIx64
            " and 0x%" PRIx64 ")\n",
            path, file->noverlaps, file->overlaps[0].first->offset,
            file->overlaps[0].second->offset);
}

static void print_all(const struct cfi_file *file, struct sem_arena *arena,
                      struct sem_printer *printer, struct il_failures *f)
{
    for (size_t i = 0; i < file->nfdes; i++) {
        struct sem_fde_il il;
        struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
        if (sem_translate_fde(&file->fdes[i], arena, &il, &diag) == CFI_OK) {
            sem_printer_fde(printer, &il);
        } else {
            sem_printer_fde_error(printer, &file->fdes[i], &diag);
            note_failure(f, &file->fdes[i], &diag);
        }
    }
}

/* The FDE covering pc, with only the range covering pc. */
static void print_pc(const struct cfi_fde *fde, uint64_t pc,
                     struct sem_arena *arena, struct sem_printer *printer,
                     struct il_failures *f)
{
    struct sem_fde_il il;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (sem_translate_fde(fde, arena, &il, &diag) != CFI_OK) {
        sem_printer_fde_error(printer, fde, &diag);
        note_failure(f, fde, &diag);
        return;
    }
    const struct sem_range *range = sem_fde_il_find(&il, pc);
    struct sem_fde_il one = {fde, (struct sem_range *)range, range ? 1 : 0};
    sem_printer_fde(printer, &one);
}

static const char *name_function(void *env, uint64_t addr, char *buf,
                                 size_t size)
{
    return cli_symbol_label(env, addr, buf, size);
}

static int run(const struct il_options *o, const char *path,
               const struct cfi_file *file, uint64_t pc)
{
    const struct cfi_fde *pc_fde = o->has_pc ? cfi_file_lookup(file, pc)
                                             : NULL;
    if (o->has_pc && !pc_fde) {
        fprintf(stderr, "cfisem: %s: no FDE covers 0x%" PRIx64 "\n", path,
                pc);
        return CLI_NO_UNWIND;
    }
    struct cli_symbols symbols;
    cli_symbols_load(file, &symbols);
    struct sem_arena *arena = sem_arena_new();
    struct sem_printer *printer =
        arena ? sem_printer_new(stdout, o->format, path, file->arch) : NULL;
    if (!printer) {
        sem_arena_free(arena);
        cli_symbols_free(&symbols);
        fprintf(stderr, "cfisem: %s: out of memory\n", path);
        return CLI_BAD_INPUT;
    }
    sem_printer_name_functions(printer, name_function, &symbols);
    struct il_failures failures = {0};
    int status = CLI_OK;
    if (pc_fde)
        print_pc(pc_fde, pc, arena, printer, &failures);
    else
        print_all(file, arena, printer, &failures);
    sem_printer_end(printer);
    sem_arena_free(arena);
    cli_symbols_free(&symbols);
    fflush(stdout);
    /* One line on stderr for bad input: the warning only when no error
     * line follows. */
    if (!failures.count)
        report_overlaps(path, file);
    if (failures.count) {
        cli_report_fde_error(path, failures.first, &failures.diag,
                             failures.count);
        status = failures.internal ? CLI_INTERNAL : CLI_BAD_INPUT;
    }
    return status;
}

/* One file: opened, --pc resolved in it, printed. */
static int run_file(const struct il_options *o, const char *path)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (cli_open_cfi(&o->inputs, path, &file, &diag) != CFI_OK) {
        cli_report_file_error(path, &diag);
        return cli_exit_of(diag.status, CLI_BAD_INPUT);
    }
    struct cli_pc pc = o->pc;
    int status = o->has_pc ? cli_pc_resolve("il", path, file, &pc) : CLI_OK;
    if (status == CLI_OK)
        status = run(o, path, file, pc.addr);
    cfi_file_close(file);
    return status;
}

/* The exit status of several files: the worst outcome first. */
static int worse(int a, int b)
{
    static const int order[] = {CLI_INTERNAL, CLI_BAD_INPUT, CLI_USAGE,
                                CLI_NO_UNWIND};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (a == order[i] || b == order[i])
            return order[i];
    return a != CLI_OK ? a : b;
}

int cli_il(int argc, char **argv)
{
    if (cli_il_wants_sframe(argc, argv))
        return cli_il_sframe(argc, argv);
    struct il_options o = {0};
    o.format = SEM_FORMAT_TEXT;
    o.paths = calloc((size_t)argc + 1, sizeof *o.paths);
    if (!o.paths)
        return CLI_BAD_INPUT;
    int status = parse_options(argc, argv, &o);
    if (status == -1) {
        print_usage(stdout);
        status = CLI_OK;
    } else if (status == CLI_OK) {
        for (size_t i = 0; i < o.npaths; i++) {
            if (o.npaths > 1 && o.format != SEM_FORMAT_JSON)
                printf("%sFile: %s\n", i ? "\n" : "", o.paths[i]);
            fflush(stdout);
            status = worse(status, run_file(&o, o.paths[i]));
        }
    }
    free(o.paths);
    return status;
}
