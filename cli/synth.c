/* synth.c — `cfisem synth FILE [--emit-il] [--no-fde-code] [--json OUT]
 * [--limits]`: CFI synthesised from the machine code and compared with the
 * file's; with --no-fde-code, also for the code no FDE covers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfi/json.h"
#include "cli.h"
#include "semantics/sem.h"
#include "synth/synth.h"

static const char usage[] =
    "usage: cfisem synth FILE [--emit-il] [--no-fde-code] [--json OUT]\n"
    "                    [--limits]\n"
    "\n"
    "Disassembles every FDE's range of FILE (capstone), recovers the CFA\n"
    "(rsp+h, or rbp+f once the frame pointer is set up), the return\n"
    "address slot and the save slots of rbx rbp r12-r15 at every\n"
    "instruction by abstract interpretation over the control-flow graph,\n"
    "and compares them with the file's CFI (its IL) at every instruction.\n"
    "Prints each disagreeing range, by FDE:\n"
    "  [0x1004,0x1008)  cfa_height  il=rsp+16  code=rsp+24\n"
    "  [0x1010,0x1011)  restored_early  rbx  il=unspecified  code=[cfa-16]\n"
    "kinds: cfa_height, save_slot (rip: the return address rule),\n"
    "restored_early, restored_late, no_fde (code between FDEs that is not\n"
    "padding), no_fde_crtstuff (a known deviation: such code that is GCC's\n"
    "crtstuff.c, deregister_tm_clones to frame_dummy, which crtbegin.o\n"
    "and crtbeginS.o build without CFI; printed and counted, but not a\n"
    "disagreement), not_analysable (with its reason; printed with\n"
    "--limits), then a summary: FDEs, the share fully analysed, the time.\n"
    "\n"
    "  --emit-il   print the synthesised table instead, in the text format\n"
    "              of `cfisem il` (an instruction without a known CFA has\n"
    "              cfa=undef)\n"
    "  --no-fde-code  also analyse the code no FDE covers, function by\n"
    "              function, from the symbol table (.symtab, .dynsym), the\n"
    "              entry point, the init and fini arrays, the executable\n"
    "              sections' starts and the direct calls and jumps into it\n"
    "              (a file with no CFI at all is read too): with --emit-il\n"
    "              their tables follow the FDEs', each headed\n"
    "              `fde no-fde cie=none [BEGIN,END) found=HOW [NAME]`;\n"
    "              else one summary line\n"
    "  --json OUT  write the report as JSON to OUT\n"
    "  --limits    print the not-analysable ranges too\n"
    "\n"
    "Example: cfisem synth /lib/x86_64-linux-gnu/libc.so.6\n"
    "\n"
    "Exit status: 0 the CFI agrees with the code wherever it was analysed\n"
    "(no_fde_crtstuff ranges do not count); 1 a disagreement was found; 2\n"
    "bad input file; 64 usage error.\n";

struct options {
    const char *path;
    const char *json;
    bool emit_il;
    bool limits;
    bool no_fde_code;
};

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
            return -1;
        if (!strcmp(arg, "--emit-il")) {
            o->emit_il = true;
        } else if (!strcmp(arg, "--limits")) {
            o->limits = true;
        } else if (!strcmp(arg, "--no-fde-code")) {
            o->no_fde_code = true;
        } else if (!strcmp(arg, "--json")) {
            if (i + 1 >= argc)
                return cli_usage_error("synth", "missing value for", arg);
            o->json = argv[++i];
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error("synth", "unknown option", arg);
        } else if (o->path) {
            return cli_usage_error("synth", "more than one file:", arg);
        } else {
            o->path = arg;
        }
    }
    if (!o->path)
        return cli_usage_error("synth", "missing FILE", NULL);
    return CLI_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct run {
    const struct options *o;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct synth_decoder *decoder;
    struct synth_report report;
    struct sem_printer *printer;
    FILE *json;
    size_t json_ranges;
    size_t disagreements;
    uint64_t *targets;        /* --no-fde-code: the FDEs' exits */
    size_t ntargets, targets_capacity;
    size_t code_functions;
};

/* The FDE's calls and jumps out, where code no FDE covers may start. */
static enum cfi_status keep_exits(struct run *r, const struct synth_fde *s)
{
    for (size_t i = 0; i < s->nexits; i++) {
        if (r->ntargets == r->targets_capacity) {
            size_t capacity =
                r->targets_capacity ? 2 * r->targets_capacity : 256;
            uint64_t *grown = realloc(r->targets, capacity * sizeof *grown);
            if (!grown)
                return CFI_E_NOMEM;
            r->targets = grown;
            r->targets_capacity = capacity;
        }
        r->targets[r->ntargets++] = s->exits[i].target;
    }
    return CFI_OK;
}

static void json_range(struct run *r, const struct cfi_fde *fde,
                       const struct synth_range *x)
{
    char buf[8];
    fprintf(r->json, "%s\n    {\"fde\": %" PRIu64 ", \"begin\": ",
            r->json_ranges++ ? "," : "", fde ? fde->offset : 0);
    cfi_json_address(r->json, x->begin);
    fputs(", \"end\": ", r->json);
    cfi_json_address(r->json, x->end);
    fprintf(r->json, ", \"kind\": \"%s\"", synth_kind_name(x->kind));
    if (x->kind == SYNTH_NOT_ANALYSABLE)
        fprintf(r->json, ", \"reason\": \"%s\"", synth_reason_name(x->reason));
    if (x->reg >= 0)
        fprintf(r->json, ", \"reg\": \"%s\"",
                cfi_reg_label((unsigned)x->reg, buf, sizeof buf));
    if (x->il[0]) {
        fputs(", \"il\": ", r->json);
        cfi_json_string(r->json, x->il);
        fputs(", \"code\": ", r->json);
        cfi_json_string(r->json, x->synth);
    }
    fputc('}', r->json);
}

static void print_fde(struct run *r, const struct synth_fde *s)
{
    bool header = false;
    for (size_t i = 0; i < s->nranges; i++) {
        const struct synth_range *x = &s->ranges[i];
        if (r->json)
            json_range(r, s->fde, x);
        if (x->kind == SYNTH_NOT_ANALYSABLE && !r->o->limits)
            continue;
        if (x->kind != SYNTH_NOT_ANALYSABLE)
            r->disagreements++;
        if (r->o->emit_il)
            continue;
        if (!header)
            printf("fde %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64 ")\n",
                   cfi_section_name(s->fde->section), s->fde->offset,
                   s->fde->pc_begin, s->fde->pc_end);
        header = true;
        synth_print_range(stdout, x);
    }
}

static enum cfi_status one_fde(struct run *r, size_t i)
{
    const struct sem_fde_il *il =
        r->il->status[i] == CFI_OK ? &r->il->fdes[i] : NULL;
    struct synth_fde s;
    enum cfi_status status = synth_analyse_fde(r->decoder, r->file,
                                               &r->file->fdes[i], il, &s);
    if (status != CFI_OK)
        return status;
    synth_report_add(&r->report, &s);
    r->report.not_translated += il == NULL;
    print_fde(r, &s);
    if (r->o->no_fde_code)
        status = keep_exits(r, &s);
    if (r->o->emit_il && status == CFI_OK) {
        struct synth_table t;
        status = synth_fde_table(&s, &t);
        if (status == CFI_OK)
            sem_printer_fde(r->printer, &t.il);
        synth_table_free(&t);
    }
    synth_fde_free(&s);
    return status;
}

static enum cfi_status uncovered(struct run *r)
{
    struct synth_range *ranges = NULL;
    size_t n = 0;
    enum cfi_status status = synth_uncovered(r->decoder, r->file, &ranges, &n);
    for (size_t i = 0; i < n && status == CFI_OK; i++) {
        r->report.kind_ranges[ranges[i].kind]++;
        r->disagreements += ranges[i].kind != SYNTH_NO_FDE_CRTSTUFF;
        if (r->json)
            json_range(r, NULL, &ranges[i]);
        if (!r->o->emit_il)
            synth_print_range(stdout, &ranges[i]);
    }
    free(ranges);
    return status;
}

static void code_header(const struct synth_code_function *fn)
{
    printf("fde no-fde cie=none [0x%" PRIx64 ",0x%" PRIx64 ") found=%s%s%s\n",
           fn->range.pc_begin, fn->range.pc_end,
           synth_origin_name(fn->origin), fn->name ? " " : "",
           fn->name ? fn->name : "");
}

/* The code no FDE covers: each function's table (--emit-il) or a line. */
static enum cfi_status code(struct run *r)
{
    struct synth_code c;
    enum cfi_status status =
        synth_code_find(r->decoder, r->file, r->targets, r->ntargets, &c);
    if (status != CFI_OK)
        return status;
    size_t by_origin[SYNTH_FROM_JUMP + 1] = {0}, insns = 0, fully = 0;
    for (size_t i = 0; i < c.count; i++) {
        const struct synth_code_function *fn = &c.functions[i];
        by_origin[fn->origin]++;
        insns += fn->ninsns;
        fully += fn->fully_analysed;
        if (r->o->emit_il) {
            code_header(fn);
            sem_print_fde_text(stdout, &fn->table.il);
            putchar('\n');
        }
    }
    r->code_functions = c.count;
    if (!r->o->emit_il)
        printf("code no FDE covers: %zu functions (%zu from symbols, %zu the "
               "entry point, %zu from init/fini arrays and section starts, "
               "%zu from calls, %zu from jumps), %zu instructions: %zu fully "
               "analysed\n",
               c.count, by_origin[SYNTH_FROM_SYMBOL],
               by_origin[SYNTH_FROM_ENTRY], by_origin[SYNTH_FROM_ARRAY],
               by_origin[SYNTH_FROM_CALL], by_origin[SYNTH_FROM_JUMP], insns,
               fully);
    synth_code_free(&c);
    return CFI_OK;
}

static void summary(FILE *out, const struct synth_report *rep, double secs)
{
    fprintf(out,
            "%zu FDEs, %zu instructions: %zu fully analysed (%.1f%%), %zu "
            "entered mid-frame, %zu with a disagreement; %zu jump tables; "
            "%zu call fall-throughs taken not to return; %.2f s\n",
            rep->nfdes, rep->ninsns, rep->fully_analysed,
            rep->nfdes ? 100.0 * (double)rep->fully_analysed /
                             (double)rep->nfdes
                       : 100.0,
            rep->entered_mid_frame, rep->fdes_with_disagreement,
            rep->jump_tables, rep->noreturn_calls, secs);
    for (int k = 0; k < SYNTH_KIND_COUNT; k++)
        if (rep->kind_ranges[k])
            fprintf(out, "  %-16s %zu ranges%s\n",
                    synth_kind_name((enum synth_kind)k), rep->kind_ranges[k],
                    k == SYNTH_NO_FDE_CRTSTUFF
                        ? " (known deviation, not a disagreement)" : "");
    for (int k = 1; k < SYNTH_REASON_COUNT; k++)
        if (rep->reason_fdes[k])
            fprintf(out, "  limit %-18s %zu FDEs (%s)\n",
                    synth_reason_name((enum synth_reason)k),
                    rep->reason_fdes[k],
                    synth_reason_text((enum synth_reason)k));
}

static void json_end(struct run *r, double secs)
{
    const struct synth_report *rep = &r->report;
    fprintf(r->json,
            "\n  ],\n  \"fdes\": %zu, \"instructions\": %zu, "
            "\"fully_analysed\": %zu, \"entered_mid_frame\": %zu, "
            "\"fdes_with_disagreement\": %zu, \"jump_tables\": %zu, "
            "\"noreturn_calls\": %zu, \"seconds\": %.3f,\n  \"kinds\": {",
            rep->nfdes, rep->ninsns, rep->fully_analysed,
            rep->entered_mid_frame, rep->fdes_with_disagreement,
            rep->jump_tables, rep->noreturn_calls, secs);
    for (int k = 0; k < SYNTH_KIND_COUNT; k++)
        fprintf(r->json, "%s\"%s\": %zu", k ? ", " : "",
                synth_kind_name((enum synth_kind)k), rep->kind_ranges[k]);
    fputs("},\n  \"limit_fdes\": {", r->json);
    for (int k = 1; k < SYNTH_REASON_COUNT; k++)
        fprintf(r->json, "%s\"%s\": %zu", k > 1 ? ", " : "",
                synth_reason_name((enum synth_reason)k), rep->reason_fdes[k]);
    fputs("}", r->json);
    if (r->o->no_fde_code)
        fprintf(r->json, ",\n  \"no_fde_functions\": %zu", r->code_functions);
    fputs("\n}\n", r->json);
}

static int analyse_all(struct run *r)
{
    double start = now();
    enum cfi_status status = CFI_OK;
    for (size_t i = 0; i < r->file->nfdes && status == CFI_OK; i++)
        status = one_fde(r, i);
    if (status == CFI_OK)
        status = uncovered(r);
    if (status == CFI_OK && r->o->no_fde_code)
        status = code(r);
    double secs = now() - start;
    if (status != CFI_OK) {
        fprintf(stderr, "cfisem: %s: %s\n", r->o->path,
                cfi_status_text(status));
        return CLI_BAD_INPUT;
    }
    if (r->json)
        json_end(r, secs);
    if (!r->o->emit_il)
        summary(stdout, &r->report, secs);
    return r->disagreements ? CLI_MISMATCH : CLI_OK;
}

static FILE *open_json(const struct options *o, const char *file_name)
{
    FILE *f = fopen(o->json, "w");
    if (!f)
        return NULL;
    fputs("{\n  \"file\": ", f);
    cfi_json_string(f, file_name);
    fputs(",\n  \"ranges\": [", f);
    return f;
}

static int run(const struct options *o, const struct cfi_file *file)
{
    struct run r = {.o = o, .file = file};
    struct sem_file_il *il = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    int status = CLI_BAD_INPUT;
    if (sem_file_il_build(file, &il) != CFI_OK ||
        synth_decoder_new(&r.decoder, &diag) != CFI_OK) {
        fprintf(stderr, "cfisem: %s: %s\n", o->path,
                diag.message ? diag.message : "out of memory");
        goto out;
    }
    r.il = il;
    if (o->emit_il &&
        !(r.printer = sem_printer_new(stdout, SEM_FORMAT_TEXT, o->path)))
        goto out;
    if (o->json && !(r.json = open_json(o, o->path))) {
        diag = (struct cfi_diag){CFI_E_IO, "cannot open file for writing",
                                 CFI_NO_OFFSET, -1};
        cli_report_file_error(o->json, &diag);
        goto out;
    }
    status = analyse_all(&r);
out:
    if (r.json)
        fclose(r.json);
    sem_printer_end(r.printer);
    synth_decoder_free(r.decoder);
    sem_file_il_free(il);
    free(r.targets);
    return status;
}

int cli_synth(int argc, char **argv)
{
    struct options o = {NULL, NULL, false, false, false};
    int status = parse_options(argc, argv, &o);
    if (status == -1) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (status != CLI_OK)
        return status;
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    enum cfi_status opened = o.no_fde_code
                                 ? cfi_file_open_code(o.path, &file, &diag)
                                 : cfi_file_open(o.path, &file, &diag);
    if (opened != CFI_OK) {
        cli_report_file_error(o.path, &diag);
        return CLI_BAD_INPUT;
    }
    status = run(&o, file);
    cfi_file_close(file);
    return status;
}
