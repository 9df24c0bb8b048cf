/* SPDX-License-Identifier: MIT */
/* unwind.c — `cfisem unwind`: one frame, one engine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"
#include "cfi/json.h"
#include "engines/engines.h"
#include "diff/harness.h"
#include "diff/report.h"

static const char usage[] =
    "usage: cfisem unwind FILE --pc ADDR --regs REG=VALUE[,REG=VALUE...]\n"
    "                     [--engine E] [--eh-elf EH_ELF [--abi A]]\n"
    "                     [--caller]\n"
    "                     [--mem-seed S | --mem DUMP@ADDR]\n"
    "                     [--fault BEGIN-END]... [--va-bits N]\n"
    "                     [--timeout S] [--json] [--debug-dir DIR]\n"
    "\n"
    "Unwinds one frame of FILE at ADDR: finds the row of its call frame\n"
    "information, computes the CFA, then the caller's registers. The\n"
    "caller's PC is followed by its function, <name+0x12>, when a function\n"
    "symbol of FILE holds it; a return address, it is looked up at PC-1\n"
    "(the call may end its function), the offset counted to the PC itself.\n"
    "JSON: \"function\" names ADDR's function (with --caller, ADDR-1's).\n"
    "\n"
    "  --pc ADDR        the frame's PC, a file address (readelf's), or\n"
    "                   SYMBOL or SYMBOL+OFFSET: a function symbol of FILE\n"
    "                   (the lowest address when several bear the name, a\n"
    "                   note says so; none: one line, exit 64)\n"
    "  --debug-dir DIR  look for FILE's separate debug file (build-id,\n"
    "                   .gnu_debuglink) in DIR before /usr/lib/debug;\n"
    "                   its .debug_frame joins FILE's .eh_frame\n"
    "  --regs LIST      the callee's registers, e.g. rsp=0x7ffe1000,rbp=0x0;\n"
    "                   names of FILE's architecture (x86-64: rax..r15,\n"
    "                   rip; AArch64: x0..x30, sp, pc) or DWARF numbers\n"
    "                   (r3, 3). A register not given is unknown: a rule\n"
    "                   that needs it fails. The PC register (rip, pc)\n"
    "                   defaults to the PC.\n"
    "  --engine E       il (the evaluator of the intermediate language,\n"
    "                   the reference, default), interp (the direct\n"
    "                   interpreter), compiled (an eh_elf: FILE's CFI\n"
    "                   compiled to machine code), an outside engine:\n"
    "                   libdwarf, libdw, libunwind, llvmunwind (LLVM's\n"
    "                   libunwind), libgcc (as cfisem diff drives\n"
    "                   them; what one cannot express is printed as \"not\n"
    "                   comparable\"), sframe (FILE's .sframe: the CFA,\n"
    "                   rbp and rip only), or gdb (gdb's DWARF unwinder\n"
    "                   on a synthetic core, x86-64 only)\n"
    "  --eh-elf EH_ELF  the eh_elf of FILE for --engine compiled (one of\n"
    "                   cfisem's must carry FILE's stamp, cfisem compile\n"
    "                   --help; one of the 2018-2019 tools carries none,\n"
    "                   and is used unchecked); without it, one is built\n"
    "                   once into ${XDG_CACHE_HOME:-$HOME/.cache}/cfisem/\n"
    "                   and reused while its stamp is FILE's\n"
    "  --abi A          the eh_elf's ABI: full, v1 (with deref) or v1-direct\n"
    "                   (default: what the eh_elf says; v1 for one without\n"
    "                   eh_elf_ident). A v1 eh_elf is asked in a child\n"
    "                   process and shows what v1 carries: error or not,\n"
    "                   the CFA, rip, rbp, rbx (a clear flag: undefined for\n"
    "                   rip, the callee's value for rbp and rbx)\n"
    "  --caller         the PC is a return address: the row is looked up at\n"
    "                   PC-1 (not for the frame above a signal frame)\n"
    "  --mem-seed S     synthetic memory: the word at an 8-aligned address a\n"
    "                   is splitmix64(S ^ a), except in FILE's segments\n"
    "                   (default seed 0)\n"
    "  --mem DUMP@ADDR  the bytes of file DUMP at ADDR (a copied stack), and\n"
    "                   FILE's segments; other reads fault\n"
    "  --fault B-E      reads of [B, E) fault (may be repeated)\n"
    "  --va-bits N      AArch64: the virtual-address bits of a return\n"
    "                   address whose signature (RA_SIGN_STATE) is\n"
    "                   stripped from the caller's PC, 32 to 55 (default\n"
    "                   48)\n"
    "  --timeout S      compiled and the outside engines run in a child\n"
    "                   process, stopped when it gives no answer within S\n"
    "                   seconds (default 10)\n"
    "  --json           one JSON object instead of text\n"
    "\n"
    "Example:\n"
    "  cfisem unwind /lib/x86_64-linux-gnu/libc.so.6 --pc 0x27290 \\\n"
    "      --regs rsp=0x7ffe1000 --engine il\n"
    "\n"
        "This is the command of every reproducer line cfisem diff prints.\n"
        "\n"
        "  $ cfisem unwind /lib/x86_64-linux-gnu/libc.so.6 --pc 0x27290 --regs rsp=0x7ffe1000 --engine il\n"
        "  cfa = 0x7ffe1038\n"
        "  rax = undefined\n"
        "  ...\n"
        "  rbx = 0xaaceff1b62a20937\n"
        "  rsp = 0x7ffe1038\n"
        "  rip = 0x73e2140837e56e99\n"
        "\n"
        "When the frame does not unwind, one line says why, error: CLASS: MESSAGE,\n"
        "with the register involved in parentheses and where: at section offset 0x...\n"
        "for a faulty instruction, at expression offset 0x... for the failing operation\n"
        "of a DWARF expression, the byte offset of its opcode in the expression (0\n"
        "for its first operation; given by interp, il, and libdwarf, whose rules\n"
        "cfisem's evaluator runs). explain ends with the same line.\n"
        "\n"
        "  $ cfisem unwind /lib/x86_64-linux-gnu/libc.so.6 --pc 0x3c050 --regs rsp=0x7ffe1000 --fault 0x7ffe1000-0x7ffe1100\n"
        "  error: memory: expression reads unreadable memory at expression offset 0x3\n"
        "\n"
        "Memory is synthetic unless --mem maps a dump; the file's loadable segments\n"
        "are always mapped at their addresses. --json prints {\"schema_version\": 1,\n"
        "\"engine\", \"pc\", \"cfa\", \"error\", \"signal_frame\", \"regs\": {\"0\":\n"
        "\"undefined\", \"3\": \"0x...\", ...}} with registers 0-16 and every other\n"
        "register that is not undefined; when the frame cannot be unwound,\n"
        "{\"schema_version\": 1, \"engine\", \"pc\", \"cfa\": null, \"error\": STATUS,\n"
        "\"message\", \"reg\", \"offset\", \"offset_in\", \"regs\": {}}: the register the error\n"
        "names and the offset of the text's at section|expression offset (null when\n"
        "there is none); when an outside engine cannot express the frame,\n"
        "{\"schema_version\": 1, \"engine\", \"pc\", \"not_comparable\": REASON}. A\n"
        "value of a register that is not 8 bytes wide (xmm: 16, st: 10, the segment\n"
        "selectors es-gs, DWARF 50-55: 2) prints as not modelled: every engine reads\n"
        "a saved register as 8 bytes.\n"
        "\n"
        "The engines whose code is not cfisem's own (compiled, which runs an eh_elf,\n"
        "and the outside libraries) are opened and asked in a child process, which\n"
        "hands the answer back; a crash is named with its signal (\"the libdw engine\n"
        "crashed (SIGSEGV)\"). il and interp run in the process itself.\n"
        "\n"
        "A v1 eh_elf (v1, with deref; v1-direct, which reads raw pointers: then 4 MiB\n"
        "around the callee's rsp are mapped at their own addresses and filled from\n"
        "the memory) shows what v1 carries, as cfisem validate --abi v1 reads it:\n"
        "\n"
        "  $ cfisem unwind gaps.so --pc 0x1010 --regs rbx=0x394f...,rbp=0x7ffe000317b0,rsp=0x7ffe00030d98,rip=0x1010 --mem-seed 0xcfdb23c7edbe59ce --engine compiled --eh-elf plt.so --abi v1\n"
        "  v1 carries rip, rsp (the CFA), rbp and rbx only\n"
        "  cfa = 0x7ffe00030d98\n"
        "  rbx = not restored (the callee's value)\n"
        "  rbp = not restored (the callee's value)\n"
        "  rsp = 0x7ffe00030d98\n"
        "  rip = 0x5d08f84c832a52\n"
        "\n"
        "For a v1 eh_elf, an error flag, a faulting read of deref or a crash (\"error:\n"
        "the call crashed (SIGSEGV)\", with what the eh_elf wrote on stderr) exits 3;\n"
        "--json prints {\"schema_version\": 1, \"engine\", \"abi\", \"pc\", \"flags\",\n"
        "\"cfa\", \"error\", \"regs\": {\"3\", \"6\", \"7\", \"16\"}} (with \"signal\" for an\n"
        "error).\n"
        "\n"
    "Exit status: 0 unwound, 3 cannot unwind (the error is printed),\n"
    "2 bad input file (an eh_elf built from another file: one line naming\n"
    "both ids), 4 the engine crashed or gave no answer in time\n"
    "(one line on stderr names it and the signal), 64 usage error.\n";

struct options {
    const char *path;
    uint64_t pc;                 /* once --pc is resolved in the file */
    bool has_pc;
    struct cli_pc pc_arg;        /* --pc as given */
    struct cli_inputs inputs;    /* --debug-dir */
    struct cli_symbols symbols;  /* the file's functions, to name them */
    struct cli_state state;      /* --regs, --mem-seed, --mem, --fault */
    enum engine_id engine;
    const char *eh_elf;
    const char *abi;             /* --abi, or NULL */
    bool caller;
    bool json;
    double timeout;
    unsigned va_bits;            /* --va-bits, 0: the default */
};

static int parse_option(int argc, char **argv, int *i, struct options *o)
{
    const char *arg = argv[*i];
    const char *value = *i + 1 < argc ? argv[*i + 1] : NULL;
    bool takes_value = !strcmp(arg, "--pc") || !strcmp(arg, "--regs") ||
                       !strcmp(arg, "--engine") || !strcmp(arg, "--mem-seed") ||
                       !strcmp(arg, "--mem") || !strcmp(arg, "--fault") ||
                       !strcmp(arg, "--eh-elf") || !strcmp(arg, "--abi") ||
                       !strcmp(arg, "--timeout") || !strcmp(arg, "--va-bits");
    if (takes_value && !value)
        return cli_usage_error("unwind", "missing value for", arg);
    if (takes_value)
        (*i)++;
    if (!strcmp(arg, "--pc") && !(o->has_pc = cli_pc_parse(value, &o->pc_arg)))
        return cli_usage_error("unwind", "bad address", value);
    if (!strcmp(arg, "--regs") && !cli_state_regs(&o->state, argv[*i]))
        return cli_usage_error("unwind", "bad register list", value);
    if (!strcmp(arg, "--engine")) {
        int id = engine_parse(value, strlen(value));
        if (id < 0)
            return cli_usage_error("unwind", "unknown engine", value);
        o->engine = (enum engine_id)id;
    }
    if (!strcmp(arg, "--eh-elf"))
        o->eh_elf = value;
    if (!strcmp(arg, "--abi")) {
        if (strcmp(value, "full") && strcmp(value, "v1") &&
            strcmp(value, "v1-direct"))
            return cli_usage_error("unwind", "unknown ABI", value);
        o->abi = value;
    }
    uint64_t seconds;
    if (!strcmp(arg, "--timeout") &&
        !(cli_parse_u64(value, &seconds) && seconds >= 1 && seconds <= 86400))
        return cli_usage_error("unwind", "--timeout takes 1 to 86400 "
                                         "seconds, not", value);
    if (!strcmp(arg, "--timeout"))
        o->timeout = (double)seconds;
    uint64_t bits;
    if (!strcmp(arg, "--va-bits") &&
        !(cli_parse_u64(value, &bits) && bits >= 32 && bits <= 55))
        return cli_usage_error("unwind", "--va-bits takes 32 to 55, not",
                               value);
    if (!strcmp(arg, "--va-bits"))
        o->va_bits = (unsigned)bits;
    if (!strcmp(arg, "--mem-seed") && !cli_parse_u64(value, &o->state.seed))
        return cli_usage_error("unwind", "bad seed", value);
    if (!strcmp(arg, "--fault") && !cli_state_fault(&o->state, value))
        return cli_usage_error("unwind", "expected --fault BEGIN-END, got", value);
    if (!strcmp(arg, "--mem") && !cli_state_dump(&o->state, argv[*i]))
        return cli_usage_error("unwind", "expected DUMP@ADDR, got", value);
    if (!strcmp(arg, "--caller"))
        o->caller = true;
    else if (!strcmp(arg, "--json"))
        o->json = true;
    else if (!takes_value)
        return cli_usage_error("unwind", "unknown option", arg);
    return CLI_OK;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') {
            if (o->path)
                return cli_usage_error("unwind", "more than one FILE:", argv[i]);
            o->path = argv[i];
            continue;
        }
        int status = cli_inputs_option("unwind", argc, argv, &i, &o->inputs);
        if (status == 0)
            status = parse_option(argc, argv, &i, o);
        if (status != CLI_OK && status != 1)
            return status;
    }
    if (!o->path)
        return cli_usage_error("unwind", "missing FILE", NULL);
    if (!o->has_pc)
        return cli_usage_error("unwind", "missing --pc", NULL);
    if (o->eh_elf && o->engine != ENGINE_compiled)
        return cli_usage_error("unwind", "--eh-elf needs --engine compiled",
                               NULL);
    if (o->abi && !o->eh_elf)
        return cli_usage_error("unwind", "--abi needs --eh-elf", NULL);
    return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */


/* The registers the architecture reports (x86-64: 0-16; AArch64: 0-34),
 * and any other the frame does not leave undefined and the engine
 * speaks for. */
static bool reported(const struct cfi_arch *arch,
                     const struct engine_answer *answer, unsigned reg)
{
    if (reg < arch->nreported)
        return true;
    return answer->reg_comparable[reg] &&
           answer->frame.caller.status[reg] != CFI_REG_UNDEFINED;
}

/* A caller register as text: "0x...", "unknown", "undefined", "not
 * comparable" (the engine cannot say) or "not modelled" (a value of a
 * register that is not 8 bytes wide, which the engines read as 8 bytes:
 * cfi_reg_size). */
static const char *reg_text(const struct cfi_arch *arch,
                            const struct engine_answer *answer, unsigned reg,
                            char *buf, size_t size)
{
    const struct cfi_regs *caller = &answer->frame.caller;
    if (!answer->reg_comparable[reg])
        return "not comparable";
    if (caller->status[reg] == CFI_REG_VALUE &&
        cfi_arch_reg_size(arch, reg) != 8)
        return "not modelled";
    if (caller->status[reg] == CFI_REG_VALUE) {
        snprintf(buf, size, "0x%" PRIx64, caller->value[reg]);
        return buf;
    }
    return caller->status[reg] == CFI_REG_UNKNOWN ? "unknown" : "undefined";
}

static void print_error_text(const struct cfi_arch *arch,
                             const struct cfi_frame *frame)
{
    char name[16];
    printf("error: %s: %s", cfi_status_name(frame->status),
           frame->diag.message ? frame->diag.message
                               : cfi_status_text(frame->status));
    if (frame->diag.reg >= 0)
        printf(" (%s)", cfi_arch_reg_label(arch, (unsigned)frame->diag.reg,
                                           name, sizeof name));
    cli_print_error_position(stdout, &frame->diag);
    printf("\n");
}

static void print_text(const struct cfi_arch *arch,
                       const struct engine_answer *answer,
                       const struct cli_symbols *symbols)
{
    const struct cfi_frame *frame = &answer->frame;
    if (frame->status != CFI_OK) {
        print_error_text(arch, frame);
        return;
    }
    char buf[32];
    if (answer->cfa_comparable)
        printf("cfa = 0x%" PRIx64 "\n", frame->cfa);
    else
        printf("cfa = not comparable\n");
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (!reported(arch, answer, reg))
            continue;
        char name[16];
        const char *text = reg_text(arch, answer, reg, buf, sizeof buf);
        bool end = reg == arch->pc && !strcmp(text, "undefined");
        printf("%s = %s%s", cfi_arch_reg_label(arch, reg, name, sizeof name),
               text, end ? " (end of stack)" : "");
        if (reg == arch->pc && answer->frame.caller.status[reg] ==
                                   CFI_REG_VALUE)
            cli_symbol_print_return(stdout, symbols,
                                    answer->frame.caller.value[reg]);
        putchar('\n');
    }
    if (frame->signal_frame)
        printf("signal frame: the caller's PC is exact (not a return address)\n");
    if (arch->ra_state != CFI_NO_RA_STATE)
        printf("return address key: %s\n", frame->ra_b_key ? "B" : "A");
}

/* The error of a frame that is not unwound: its status, message, the
 * register it names and where (a section or expression offset). */
static void json_error(FILE *out, const struct cfi_arch *arch,
                       const struct cfi_frame *frame)
{
    char name[16];
    fprintf(out, "\"cfa\": null, \"error\": \"%s\", \"message\": ",
            cfi_status_name(frame->status));
    engine_json_string(out, frame->diag.message ? frame->diag.message
                                              : cfi_status_text(frame->status));
    fputs(", \"reg\": ", out);
    engine_json_string(out, frame->diag.reg >= 0
                              ? cfi_arch_reg_label(arch,
                                                   (unsigned)frame->diag.reg,
                                                   name, sizeof name)
                              : NULL);
    if (frame->diag.offset == CFI_NO_OFFSET)
        fputs(", \"offset\": null, \"offset_in\": null", out);
    else
        fprintf(out, ", \"offset\": %" PRIu64 ", \"offset_in\": \"%s\"",
                frame->diag.offset,
                cfi_diag_in_expression(&frame->diag) ? "expression"
                                                     : "section");
    fputs(", \"regs\": {}}", out);
}

/* The frame's members and the closing brace: the object's opening is
 * the caller's (with "schema_version" at the top level only). */
static void frame_members(FILE *out, const struct cfi_arch *arch,
                          const char *engine, uint64_t pc,
                          const struct engine_answer *answer)
{
    const struct cfi_frame *frame = &answer->frame;
    fprintf(out, "\"engine\": \"%s\", \"pc\": \"0x%" PRIx64 "\", ", engine,
            pc);
    if (frame->status != CFI_OK) {
        json_error(out, arch, frame);
        return;
    }
    char buf[32];
    if (answer->cfa_comparable)
        fprintf(out, "\"cfa\": \"0x%" PRIx64 "\", ", frame->cfa);
    else
        fputs("\"cfa\": \"not comparable\", ", out);
    fprintf(out, "\"error\": null, \"signal_frame\": %s, \"regs\": {",
            frame->signal_frame ? "true" : "false");
    const char *separator = "";
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (!reported(arch, answer, reg))
            continue;
        fprintf(out, "%s\"%u\": \"%s\"", separator, reg,
                reg_text(arch, answer, reg, buf, sizeof buf));
        separator = ", ";
    }
    fputs("}}", out);
}

void cli_frame_json(FILE *out, const struct cfi_arch *arch,
                    const char *engine, uint64_t pc,
                    const struct engine_answer *answer)
{
    putc('{', out);
    frame_members(out, arch, engine, pc, answer);
}

static void print_json(const struct options *o, const struct cfi_arch *arch,
                       const struct engine_answer *answer)
{
    printf("{\"schema_version\": %d, ", CFI_JSON_SCHEMA_VERSION);
    char buf[512];
    const char *function = cli_symbol_label_pc(&o->symbols, o->pc,
                                               o->caller, buf, sizeof buf);
    if (function) {
        fputs("\"function\": ", stdout);
        cfi_json_string(stdout, function);
        fputs(", ", stdout);
    }
    frame_members(stdout, arch, engine_name(o->engine), o->pc, answer);
    putchar('\n');
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

/* The file an engine's open error is about. */
static const char *opened_path(const struct options *o)
{
    return o->eh_elf && o->engine == ENGINE_compiled ? o->eh_elf
                                                          : o->path;
}

/* Opens and closes the engine here: for compiled, that builds the
 * eh_elf into the cache, which a child then only loads. False, after
 * the error line, when it cannot be opened. */
static bool open_here(const struct options *o, const struct cfi_file *file,
                      const struct engine_config *config)
{
    struct engine_instance engine;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (engine_open(o->engine, file, config, &engine, &diag) != CFI_OK) {
        cli_report_file_error(opened_path(o), &diag);
        return false;
    }
    engine_close(&engine);
    return true;
}

/* Our own engines run here; the code of others (the outside libraries,
 * an eh_elf) runs in a child process under the watchdog, so that its
 * crash or hang is reported as such. */
static bool runs_here(enum engine_id id)
{
    return id == ENGINE_il || id == ENGINE_interp;
}

/* Our own engine, asked here. */
static int ask_here(const struct options *o, const struct cfi_file *file,
                    const struct engine_config *config,
                    const struct cfi_request *request,
                    struct engine_ask_result *asked)
{
    struct engine_instance engine;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (engine_open(o->engine, file, config, &engine, &diag) != CFI_OK) {
        cli_report_file_error(opened_path(o), &diag);
        return CLI_BAD_INPUT;
    }
    engine.unwind(engine.self, request, &asked->answer);
    engine_close(&engine);
    return CLI_OK;
}

/* Asks the chosen engine, opened for this file as the harness opens it:
 * CLI_OK with *answer, or the exit status after the error line. */
static int run_engine(const struct options *o, const struct cfi_file *file,
                      const struct cfi_request *request,
                      struct engine_ask_result *asked)
{
    struct engine_config config = {o->eh_elf, NULL};
    if (runs_here(o->engine))
        return ask_here(o, file, &config, request, asked);
    bool prebuild = o->engine == ENGINE_compiled && !o->eh_elf;
    if (prebuild && !open_here(o, file, &config))
        return CLI_BAD_INPUT;
    const char *name = engine_name(o->engine);
    if (!engine_ask_isolated(o->engine, file, &config, request, o->timeout,
                             asked)) {
        fprintf(stderr, "cfisem: cannot start a process for the %s engine\n",
                name);
        return CLI_ENGINE_FAILED;
    }
    switch (asked->end) {
    case ENGINE_ASK_ANSWERED:
        return CLI_OK;
    case ENGINE_ASK_OPEN_FAILED:
        cli_report_file_error(opened_path(o), &asked->open_diag);
        return CLI_BAD_INPUT;
    case ENGINE_ASK_CRASHED:
        fprintf(stderr, "cfisem: %s: the %s engine crashed (%s)\n", o->path,
                name, asked->signal ? engine_signal_name(asked->signal)
                                    : "its process exited with an error");
        return CLI_ENGINE_FAILED;
    case ENGINE_ASK_TIMED_OUT:
    default:
        fprintf(stderr, "cfisem: %s: the %s engine gave no answer in %g s "
                "(stopped)\n", o->path, name, o->timeout);
        return CLI_ENGINE_FAILED;
    }
}

static int report(const struct options *o, const struct cfi_arch *arch,
                  const struct engine_answer *answer)
{
    const struct cfi_frame *frame = &answer->frame;
    if (!answer->comparable) {
        const char *reason = answer->not_comparable_reason
                                 ? answer->not_comparable_reason : "";
        if (o->json) {
            printf("{\"schema_version\": %d, \"engine\": \"%s\", \"pc\": "
                   "\"0x%" PRIx64 "\", \"not_comparable\": ",
                   CFI_JSON_SCHEMA_VERSION, engine_name(o->engine),
                   o->pc);
            cfi_json_string(stdout, reason);
            printf("}\n");
        } else
            printf("not comparable: %s\n", reason);
        return CLI_NO_UNWIND;
    }
    if (frame->status == CFI_E_MALFORMED || frame->status == CFI_E_UNSUPPORTED)
        cli_report_file_error(o->path, &frame->diag);
    if (o->json)
        print_json(o, arch, answer);
    else
        print_text(arch, answer, &o->symbols);
    if (frame->status == CFI_OK)
        return CLI_OK;
    return cli_exit_of(frame->status, CLI_NO_UNWIND);
}

static int unwind_file(struct options *o, struct cfi_file *file)
{
    if (!cli_state_set_regs(&o->state, file->arch, o->pc))
        return cli_usage_error("unwind", "bad register list for",
                               file->arch->name);
    struct engine_memory *memory = NULL;
    int result = cli_state_memory(&o->state, file, &memory);
    if (result == CLI_OK) {
        struct cfi_request request = {o->pc, o->caller, &o->state.callee,
                                      engine_memory_reader(memory),
                                      o->va_bits};
        const char *v1 = o->eh_elf ? cli_eh_elf_v1_abi(o->eh_elf, o->abi)
                                   : NULL;
        struct engine_ask_result *asked = v1 ? NULL : calloc(1, sizeof *asked);
        if (v1)
            result = cli_unwind_v1(o->eh_elf, v1, &request, o->json);
        else
            result = !asked ? CLI_BAD_INPUT
                            : run_engine(o, file, &request, asked);
        if (!v1 && result == CLI_OK)
            result = report(o, file->arch, &asked->answer);
        free(asked);
    }
    engine_memory_free(memory);
    return result;
}

int cli_unwind(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options *o = calloc(1, sizeof *o);
    if (!o)
        return CLI_BAD_INPUT;
    o->timeout = DIFF_ANSWER_TIMEOUT_DEFAULT;
    int result = parse_options(argc, argv, o);
    if (result == CLI_OK && o->eh_elf)
        result = cli_check_eh_elf_stamp(o->eh_elf, o->path);
    if (result == CLI_OK) {
        struct cfi_file *file;
        struct cfi_diag diag;
        if (cli_open_cfi(&o->inputs, o->path, &file, &diag) != CFI_OK) {
            cli_report_file_error(o->path, &diag);
            result = CLI_BAD_INPUT;
        } else {
            result = cli_pc_resolve("unwind", o->path, file, &o->pc_arg);
            o->pc = o->pc_arg.addr;
            cli_symbols_load(file, &o->symbols);
            if (result == CLI_OK)
                result = unwind_file(o, file);
            cli_symbols_free(&o->symbols);
            cfi_file_close(file);
        }
    }
    free(o);
    return result;
}
