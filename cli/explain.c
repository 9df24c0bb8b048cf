/* SPDX-License-Identifier: MIT */
/* explain.c — `cfisem explain`: one frame, and how semantics/ derived it.
 *
 * The command parses its options, builds the memory of the state, has
 * explain/ derive the explanation (explain/explain.h) and prints it in
 * the format asked. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"
#include "engines/engines.h"
#include "explain/explain.h"
#include "synth/synth.h"

static const char usage[] =
    "usage: cfisem explain FILE --pc ADDR [--caller]\n"
    "                      [--regs REG=VALUE[,REG=VALUE...]]\n"
    "                      [--mem-seed S | --mem DUMP@ADDR] [--fault B-E]...\n"
    "                      [--format text|markdown|latex|json|html]\n"
    "                      [--debug-dir DIR]\n"
    "\n"
    "Shows how the semantics derives the unwinding of one frame of FILE at\n"
    "ADDR, in five sections:\n"
    "  1. the records: the FDE and its CIE (augmentation, factors, RA column);\n"
    "  2. the program: the CIE's then the FDE's instructions, one a line:\n"
    "     offset, bytes, the instruction, where it applies, the rule function\n"
    "     of semantics/translate.c and what it did to the row, the remember\n"
    "     stack's depth; a line marks where the lookup PC falls;\n"
    "  3. the row: its range, why it was chosen, each column's rule and the\n"
    "     instruction that set it (or CIE, or ABI default);\n"
    "  4. the evaluation (with --regs): the CFA, each register's rule, the\n"
    "     addresses read and what answered them, expressions traced one\n"
    "     operation a line with the stack after it;\n"
    "  5. the result, as `cfisem unwind --engine il` prints it.\n"
    "FILE is x86-64 or AArch64: register names, ABI defaults and the\n"
    "columns shown are its architecture's. On AArch64, RA_SIGN_STATE is a\n"
    "column, and what 0x2d, 0x2c, 0x2b and restore_state do to it is said\n"
    "in words; the evaluation shows the caller's PC as x30's value (the\n"
    "return address column), stripped of its pointer-authentication code\n"
    "(va_bits 48) when RA_SIGN_STATE says signed, and the key (A, or B\n"
    "for a CIE with 'B').\n"
    "\n"
    "  --pc, --caller, --regs, --mem-seed, --mem, --fault as for unwind\n"
    "               (--pc ADDR, SYMBOL or SYMBOL+OFFSET; section 1 then\n"
    "               names the function that holds the PC, <name+0x12>).\n"
    "  --debug-dir DIR  look for FILE's separate debug file in DIR first,\n"
    "               as for unwind.\n"
    "  --format F   text (default; colour on a terminal unless NO_COLOR),\n"
    "               markdown, latex (a fragment to \\input), json (one\n"
    "               object; its schema is below), html (one page:\n"
    "               the program beside the table of rows, each row with\n"
    "               the machine code it is in effect at, and the frame\n"
    "               drawn: the saved registers' slots, the return\n"
    "               address, the CFA and the stack pointer)\n"
    "\n"
    "Example:\n"
    "  cfisem explain /lib/x86_64-linux-gnu/libc.so.6 --pc 0x27290 \\\n"
    "      --regs rsp=0x7ffe1000\n"
    "\n"
        "It answers the question cfisem unwind --engine il answers, with every step\n"
        "shown. In detail: the records give the FDE's section, offset and range, and\n"
        "its CIE's version, augmentation and what each letter gave, alignment factors\n"
        "and return address column. The program gives each instruction's section\n"
        "offset, raw bytes, the instruction with its operands factored\n"
        "(DW_CFA_offset: r6 (rbp) at cfa-16), the location it applies at, the rule\n"
        "function that applied it, what it did in that file's notation (row[rbp] :=\n"
        "addr(cfa-16), emit [0x1001,0x1004); loc := 0x1004, stack := stack . row),\n"
        "the columns it changed and the remember stack's depth; the rest of the\n"
        "program after the lookup PC follows (it must be well formed too), and an\n"
        "error is shown at the instruction that raises it. The row gives why it was\n"
        "chosen (the PC, or PC-1 for --caller) and each column's origin: the\n"
        "instruction that last set it, CIE: for one of the CIE's, or ABI default. The\n"
        "evaluation gives the CFA (rbp+16 = 0x7ffe1010 + 16) and what answered each\n"
        "read (file segment, synthetic, dump, fault).\n"
        "\n"
        "Everything shown comes from a trace sink that semantics/ calls while it\n"
        "translates and evaluates (struct sem_trace in semantics/sem.h): the\n"
        "translator reports each instruction it applies with the row before and\n"
        "after, the evaluator each rule and each expression operation. Without a sink\n"
        "the engines pay one pointer test per step.\n"
        "\n"
        "  $ cfisem explain build/corpus/cases/remember.so --pc 0x1007 --regs rsp=0x7ffe1000,rbp=0x7ffe1100\n"
        "  == 2. The program\n"
        "    offset  bytes     instruction                        at      rule                   effect                                                                  changed  depth\n"
        "    ...\n"
        "    0x36    41        DW_CFA_advance_loc: 1 to 0x1006    0x1005  rule_advance_loc       emit [0x1005,0x1006); loc := 0x1006                                     -        2\n"
        "    0x37    0c 07 20  DW_CFA_def_cfa: r7 (rsp) ofs 32    0x1006  rule_def_cfa           row.cfa := rsp+32                                                       cfa      2\n"
        "    0x3a    07 0c     DW_CFA_undefined: r12              0x1006  rule_undefined         row[r12] := undef                                                       r12      2\n"
        "    0x3c    41        DW_CFA_advance_loc: 1 to 0x1007    0x1006  rule_advance_loc       emit [0x1006,0x1007); loc := 0x1007                                     -        2\n"
        "    0x3d    0b        DW_CFA_restore_state               0x1007  rule_restore_state     row := top; stack := rest; row.cfa := rbp+16; row[r12] := none          cfa r12  1\n"
        "    --> lookup PC 0x1007 falls here: the row so far is row [0x1007,0x1009)\n"
        "    0x3e    42        DW_CFA_advance_loc: 2 to 0x1009    0x1007  rule_advance_loc       emit [0x1007,0x1009); loc := 0x1009                                     -        1\n"
        "    0x3f    0b        DW_CFA_restore_state               0x1009  rule_restore_state     row := top; stack := rest; row[rbx] := none                             rbx      0\n"
        "    ...\n"
        "  == 3. The row\n"
        "  looked up at the PC 0x1007 itself: the innermost frame (no --caller)\n"
        "  row [0x1007,0x1009), row 6 of 9:\n"
        "    column  rule                    origin\n"
        "    cfa     rbp+16                  DW_CFA_restore_state at 0x3d\n"
        "    rbx     addr(cfa-24)            DW_CFA_offset at 0x33\n"
        "    rbp     addr(cfa-16)            DW_CFA_offset at 0x2c\n"
        "    rip     addr(cfa-8)             CIE: DW_CFA_offset at 0x14\n"
        "    ...\n"
        "\n"
        "Formats, in detail: markdown is a walk-through for a course page; latex a\n"
        "fragment to \\input, as the paper's worked examples; html one page with its\n"
        "style and script inline (nothing is fetched), the program beside the table\n"
        "of rows; pointing at a cell lights up the instruction that set it, and the\n"
        "other way round.\n"
        "\n"
        "The json object: {\"schema_version\": 1, \"file\", \"pc\", \"caller_frame\",\n"
        "\"lookup_pc\", \"fde\": {\"section\", \"offset\", \"pc_begin\", \"pc_end\"} | null,\n"
        "\"cie\": {\"section\", \"offset\", \"version\", \"augmentation\", \"letters\":\n"
        "[TEXT], \"code_align\", \"data_align\", \"ra_column\", \"signal_frame\"} | null,\n"
        "\"program\": [{\"offset\", \"bytes\", \"in_cie\", \"at\", \"instruction\", \"rule\",\n"
        "\"effect\", \"changed\": [COLUMN], \"depth\", \"error\", \"lookup_here\"}],\n"
        "\"rows\": [{\"begin\", \"end\", \"columns\": {COLUMN: RULE}, \"il\": ROW}], \"row\":\n"
        "{\"index\", \"begin\", \"end\", \"why\", \"columns\": [{\"column\", \"rule\", \"data\",\n"
        "\"origin\"}]} | null,\n"
        "\"evaluation\": {\"cfa\": VALUE, \"regs\": [VALUE and \"reg\", \"name\"]} | null,\n"
        "\"result\": {\"status\", \"message\", \"text\", \"frame\"}}, with VALUE {\"rule\",\n"
        "\"address\", \"reads\": [{\"address\", \"size\", \"source\", \"value\"}], \"ops\": [{\"op\",\n"
        "\"stack\": [ADDR], \"status\"}], \"status\", \"value\", \"data\"}; addresses and\n"
        "values are \"0x...\" strings. Rules are both text (RULE, \"rule\": translate.c's\n"
        "notation) and data as cfisem il --format json writes them: ROW is one of its\n"
        "rows ({\"begin\", \"end\", \"cfa\", \"regs\": {\"N\": {\"rule\": KIND, ...}}}), \"data\"\n"
        "one CFA rule ({\"reg\", \"offset\"} or {\"expr\"}) or register rule (KIND\n"
        "unspecified for a column with no rule). result.frame is the result as data,\n"
        "the object cfisem unwind --engine il --json prints, without its\n"
        "schema_version (null without --regs).\n"
        "\n"
        "A malformed program is also reported on stderr, one line naming the file.\n"
        "\n"
    "Exit status: as unwind's: 0 unwound, 3 cannot unwind; without --regs,\n"
    "0 when the row is found and 3 when it is not (no FDE, malformed\n"
    "program); 2 bad input file, 64 usage error.\n";

struct options {
    const char *path;
    uint64_t pc;                 /* once --pc is resolved in the file */
    bool has_pc;
    struct cli_pc pc_arg;        /* --pc as given */
    struct cli_inputs inputs;    /* --debug-dir */
    bool caller;
    enum ex_format format;
    struct cli_state state;
};

static bool parse_format(const char *text, enum ex_format *format)
{
    static const char *const names[] = {
        [EX_TEXT] = "text", [EX_MARKDOWN] = "markdown", [EX_LATEX] = "latex",
        [EX_JSON] = "json", [EX_HTML] = "html",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(text, names[i])) {
            *format = (enum ex_format)i;
            return true;
        }
    return false;
}

static bool takes_value(const char *arg)
{
    static const char *const names[] = {"--pc", "--regs", "--mem-seed",
                                        "--mem", "--fault", "--format"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(arg, names[i]))
            return true;
    return false;
}

static int parse_value(const char *arg, char *value, struct options *o)
{
    if (!strcmp(arg, "--pc") && !(o->has_pc = cli_pc_parse(value, &o->pc_arg)))
        return cli_usage_error("explain", "bad address", value);
    if (!strcmp(arg, "--regs") && !cli_state_regs(&o->state, value))
        return cli_usage_error("explain", "bad register list", value);
    if (!strcmp(arg, "--mem-seed") && !cli_parse_u64(value, &o->state.seed))
        return cli_usage_error("explain", "bad seed", value);
    if (!strcmp(arg, "--fault") && !cli_state_fault(&o->state, value))
        return cli_usage_error("explain", "expected --fault BEGIN-END, got",
                               value);
    if (!strcmp(arg, "--format") && !parse_format(value, &o->format))
        return cli_usage_error("explain", "unknown format", value);
    if (!strcmp(arg, "--mem")) {
        char copy[64];
        snprintf(copy, sizeof copy, "%s", value);
        if (!cli_state_dump(&o->state, value))
            return cli_usage_error("explain", "expected DUMP@ADDR, got", copy);
    }
    return CLI_OK;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int taken;
        if (arg[0] != '-') {
            if (o->path)
                return cli_usage_error("explain", "more than one FILE:", arg);
            o->path = arg;
        } else if ((taken = cli_inputs_option("explain", argc, argv, &i,
                                              &o->inputs))) {
            if (taken != 1)
                return taken;
        } else if (!strcmp(arg, "--caller")) {
            o->caller = true;
        } else if (!takes_value(arg)) {
            return cli_usage_error("explain", "unknown option", arg);
        } else if (i + 1 >= argc) {
            return cli_usage_error("explain", "missing value for", arg);
        } else {
            int status = parse_value(arg, argv[++i], o);
            if (status != CLI_OK)
                return status;
        }
    }
    if (!o->path)
        return cli_usage_error("explain", "missing FILE", NULL);
    if (!o->has_pc)
        return cli_usage_error("explain", "missing --pc", NULL);
    return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* Running and printing                                                 */
/* ------------------------------------------------------------------ */

/* The state as explain/ sees it: the registers, and what tells the parts
 * of the memory model apart (memory.h's order). */
static void state_of(const struct cli_state *s, struct ex_state *out)
{
    out->callee = s->callee;
    out->has_regs = s->has_regs;
    out->has_dump = s->dump_path != NULL;
    out->dump_addr = s->dump_addr;
    out->dump_len = s->dump_len;
    out->nfaults = s->nfaults;
    for (size_t i = 0; i < s->nfaults; i++)
        out->faults[i] = (struct ex_fault){s->faults[i].begin,
                                           s->faults[i].end};
}

static bool wants_colour(enum ex_format format)
{
    const char *no_colour = getenv("NO_COLOR");
    return format == EX_TEXT && isatty(STDOUT_FILENO) &&
           !(no_colour && *no_colour);
}

static int exit_status(const struct explanation *e)
{
    if (e->state->has_regs && e->frame.status != CFI_OK)
        return cli_exit_of(e->frame.status, CLI_NO_UNWIND);
    if (e->state->has_regs)
        return CLI_OK;
    return e->row ? CLI_OK : CLI_NO_UNWIND;
}

/* The result as data: what `cfisem unwind --engine il --json` prints.
 * The IL evaluator speaks for the CFA and every register. */
static void frame_json(FILE *out, const struct explanation *e)
{
    struct engine_answer answer;
    memset(&answer, 0, sizeof answer);
    answer.frame = e->frame;
    answer.comparable = answer.cfa_comparable = true;
    answer.signal_comparable = true;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        answer.reg_comparable[reg] = true;
    cli_frame_json(out, ex_arch(e), engine_name(ENGINE_il), e->pc, &answer);
}

/* The FDE's machine code, disassembled by synth/'s decoder, as the page
 * lists it. False when out of memory. */
static bool disassemble_fde(const struct explanation *e,
                            struct synth_listing *listing,
                            struct ex_machine_insn **insns,
                            const char **no_decoder)
{
    struct synth_decoder *decoder;
    struct cfi_diag diag;
    *insns = NULL;
    if (synth_decoder_new(&decoder, ex_arch(e), &diag) != CFI_OK) {
        *no_decoder = diag.message;
        return diag.status != CFI_E_NOMEM;
    }
    enum cfi_status status = synth_disassemble(
        decoder, e->file, e->fde->pc_begin, e->fde->pc_end, listing);
    synth_decoder_free(decoder);
    if (status != CFI_OK)
        return false;
    if (listing->count &&
        !(*insns = calloc(listing->count, sizeof **insns)))
        return false;
    for (size_t i = 0; i < listing->count; i++) {
        const struct synth_listed_insn *x = &listing->insns[i];
        (*insns)[i] = (struct ex_machine_insn){x->addr, x->len, x->bytes,
                                               x->text};
    }
    return true;
}

static bool print_html(const struct explanation *e)
{
    if (!e->fde)
        return ex_html(e, NULL, stdout);
    struct synth_listing listing = {0};
    struct ex_machine_insn *insns = NULL;
    const char *no_decoder = NULL;
    bool ok = disassemble_fde(e, &listing, &insns, &no_decoder);
    char why[128];
    snprintf(why, sizeof why, "the file holds no bytes at [0x%" PRIx64
             ",0x%" PRIx64 ") (no loaded segment has them)",
             e->fde->pc_begin, e->fde->pc_end);
    struct ex_machine_code code = {insns, listing.count,
                                   no_decoder ? no_decoder
                                   : listing.bytes_missing ? why : NULL,
                                   listing.stopped_at};
    ok = ok && ex_html(e, &code, stdout);
    free(insns);
    synth_listing_free(&listing);
    return ok;
}

static int print_explanation(const struct explanation *e, enum ex_format f)
{
    if (e->out_of_memory) {
        fprintf(stderr, "cfisem: out of memory\n");
        return CLI_BAD_INPUT;
    }
    if (e->frame.status == CFI_E_MALFORMED ||
        e->frame.status == CFI_E_UNSUPPORTED)
        cli_report_file_error(e->path, &e->frame.diag);
    if (f == EX_JSON) {
        ex_json(e, stdout, frame_json);
    } else if (f == EX_HTML) {
        if (!print_html(e)) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
    } else {
        struct ex_renderer *r = ex_renderer_new(stdout, f, wants_colour(f));
        if (!r) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
        ex_document(e, r);
        if (!ex_renderer_end(r)) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
    }
    return exit_status(e);
}

static int explain_file(struct options *o, const struct cfi_file *file)
{
    if (!cli_state_set_regs(&o->state, file->arch, o->pc))
        return cli_usage_error("explain", "bad register list for",
                               file->arch->name);
    struct engine_memory *memory;
    int result = cli_state_memory(&o->state, file, &memory);
    if (result != CLI_OK)
        return result;
    struct sem_arena *arena = sem_arena_new();
    struct explanation *e = calloc(1, sizeof *e);
    if (!arena || !e) {
        fprintf(stderr, "cfisem: out of memory\n");
        result = CLI_BAD_INPUT;
    } else {
        e->path = o->path;
        e->file = file;
        e->pc = o->pc;
        struct cli_symbols symbols;
        cli_symbols_load(file, &symbols);
        char function[512];
        e->function = cli_symbol_label_pc(&symbols, o->pc, o->caller,
                                          function, sizeof function);
        e->caller = o->caller;
        struct ex_state state;
        state_of(&o->state, &state);
        e->state = &state;
        ex_explain(e, engine_memory_reader(memory), arena);
        result = print_explanation(e, o->format);
        ex_explanation_free(e);
        cli_symbols_free(&symbols);
    }
    free(e);
    sem_arena_free(arena);
    engine_memory_free(memory);
    return result;
}

int cli_explain(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options *o = calloc(1, sizeof *o);
    if (!o)
        return CLI_BAD_INPUT;
    int result = parse_options(argc, argv, o);
    if (result == CLI_OK) {
        struct cfi_file *file;
        struct cfi_diag diag;
        if (cli_open_cfi(&o->inputs, o->path, &file, &diag) != CFI_OK) {
            cli_report_file_error(o->path, &diag);
            result = CLI_BAD_INPUT;
        } else {
            result = cli_pc_resolve("explain", o->path, file, &o->pc_arg);
            o->pc = o->pc_arg.addr;
            if (result == CLI_OK)
                result = explain_file(o, file);
            cfi_file_close(file);
        }
    }
    free(o);
    return result;
}
