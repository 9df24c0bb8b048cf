/* SPDX-License-Identifier: MIT */
/* gen.c — `cfisem gen`: a random, well-formed CFI program as a .S file for
 * GNU as, and the IL `cfisem il` must print for it (gen/gen.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen/gen.h"

static const char usage[] =
    "usage: cfisem gen --seed S -o OUT.S [--expect OUT.il] [--fdes N]\n"
    "                  [--section eh_frame|debug_frame|both] [--ill-formed]\n"
    "                  [--arch x86-64|aarch64]\n"
    "\n"
    "Writes a random but well-formed CFI program: functions with code bytes\n"
    "between .cfi_* directives (.cfi_escape for the opcodes gas has no\n"
    "directive for), DWARF expressions, nested remember/restore, advances of\n"
    "every size, CIEs shared or not. The same seed gives the same files.\n"
    "\n"
    "  --seed S        the seed (decimal or 0x-hex)\n"
    "  -o OUT.S        the program ('-': stdout)\n"
    "  --expect OUT.il the exact output of `cfisem il X.so` for X.so built by\n"
    "                  cc -shared -nostdlib -Wl,--section-start=.text=0x1000\n"
    "                     -Wl,--build-id=none -o X.so OUT.S\n"
    "                  computed by the generator's own model of the rows and\n"
    "                  of gas's and ld's layout, not by cfisem's translator\n"
    "  --fdes N        functions (1-64; default: from the seed, 1-16)\n"
    "  --section S     where gas writes the records (default: from the seed)\n"
    "  --arch A        the machine: x86-64 (default) or aarch64, built with\n"
    "                  aarch64-linux-gnu-gcc and the same options as above\n"
    "  --ill-formed    inject exactly one error; the expectation then ends\n"
    "                  with a line 'error: MESSAGE', where MESSAGE is what\n"
    "                  `cfisem il` prints on stderr after 'cfisem: FILE: '\n"
    "                  (and `cfisem il` exits with 2)\n"
    "\n"
    "Example:\n"
    "  cfisem gen --seed 7 -o g.S --expect g.il && cc -shared -nostdlib \\\n"
    "    -Wl,--section-start=.text=0x1000 -Wl,--build-id=none -o g.so g.S \\\n"
    "    && cfisem il g.so | cmp - g.il\n"
    "\n"
        "The program is for GNU as (x86-64, AT&T; or AArch64). Real binaries use a\n"
        "narrow slice of CFI; generated programs exercise the rest.\n"
        "\n"
        "--expect is byte for byte, header lines included. It is a third statement of\n"
        "the semantics (gen/, which uses nothing of cfisem but register names): the\n"
        "generator runs its own model of the rows over the directives it wrote, and\n"
        "its own model of how gas 2.40 and ld 2.40 lay out the records - which FDEs\n"
        "share a CIE (gas moves the directives that lead a function into its CIE, and\n"
        "reuses a CIE whose instructions are a prefix of a later function's), which\n"
        "opcode gas picks for each directive and each advance, record sizes, the\n"
        "padding ld drops and adds, and the CIEs ld merges.\n"
        "\n"
        "What a program contains: every DW_CFA opcode of the semantics but set_loc\n"
        "(gas cannot write a target address in a .cfi_escape), MIPS_advance_loc8 (gas\n"
        "never emits it) and GNU_window_save (no meaning on x86-64: only as an\n"
        "injected error): def_cfa{,_sf}, def_cfa_register, def_cfa_offset{,_sf},\n"
        "def_cfa_expression, offset{,_extended,_extended_sf} (registers up to 127),\n"
        "val_offset{,_sf}, register, expression, val_expression, undefined,\n"
        "same_value, restore{,_extended}, remember_state / restore_state nested\n"
        "(sometimes 64 deep, the limit), GNU_args_size, GNU_negative_offset_extended,\n"
        "nop, and the four advance_loc forms (code gaps of 64+, 256+ and now and then\n"
        "65536+ bytes); offsets at or above 2^63; DWARF expressions of every\n"
        "operation valid in CFI (stack operations, arithmetic, comparisons, skip and\n"
        "bra forward only, loads from plausible addresses, empty register\n"
        "expressions), and the patterns of real binaries (PLT, signal frame, stack\n"
        "realignment, OpenSSL, libmvec, prologue/epilogue with remember/restore);\n"
        "CIEs shared or not (.cfi_startproc simple, leading directives,\n"
        ".cfi_personality, .cfi_lsda, .cfi_signal_frame (only without .debug_frame,\n"
        "whose CIE would have the augmentation S alone, which cfisem does not load\n"
        "yet), .cfi_return_column); .eh_frame, .debug_frame or both. Well-formed\n"
        "means every FDE translates and every row unwinds with registers 0-16 given\n"
        "(a random CFA expression may still give an address whose reads wrap past\n"
        "2^64: a memory fault).\n"
        "\n"
        "With --arch aarch64: instructions of 4 bytes (code alignment factor 4, code\n"
        "written as nops), gas's CIE (def_cfa sp+0, return column x30), registers\n"
        "x0-x30, sp and the vector registers (v8-v15 as 72-79); return address\n"
        "signing: AARCH64_negate_ra_state (.cfi_negate_ra_state, 0x2d), also inside\n"
        "remember/restore nests, AARCH64_negate_ra_state_with_pc (0x2c) and\n"
        "AARCH64_set_ra_state (0x2b) by .cfi_escape, .cfi_b_key_frame (augmentation\n"
        "B). The model's RA_SIGN_STATE (register 34): no rule is state 0; 0x2d\n"
        "toggles 0 and 1, 0x2c toggles 0 and 2, 0x2b sets 0, 1 or 2; state N is\n"
        "printed ra_sign_state=expr(litN). A well-formed program negates only a\n"
        "state the opcode toggles and gives register 34 no other rule. gas never\n"
        "moves a negate into a CIE (it ends the instructions gas moves there, as an\n"
        "escape does), so the negates are all in FDEs.\n"
        "\n"
        "The errors --ill-formed injects: restore_state on an empty stack,\n"
        "def_cfa_offset or def_cfa_register on an expression CFA, nesting 65 deep, a\n"
        "register above 127, restore in a CIE, GNU_window_save (x86-64); on\n"
        "AArch64, instead of the last: negate_ra_state in state 2,\n"
        "negate_ra_state_with_pc in state 1, set_ra_state with a reserved state, a\n"
        "negate after another rule on register 34.\n"
        "\n"
        "In the sources, corpus/gen-run.sh N OUTDIR runs N programs through gas,\n"
        "cfisem il (against their expectations) and cfisem diff (all engines), two at\n"
        "a time, and prints a summary.\n"
        "\n"
    "Exit status: 0 written, 2 a file cannot be written, 64 usage error.\n";

struct gen_cli {
    struct gen_options options;
    bool has_seed;
    const char *asm_path;
    const char *expect_path;
};

static bool parse_sections(const char *text, enum gen_sections *sections)
{
    static const struct {
        const char *name;
        enum gen_sections value;
    } names[] = {{"eh_frame", GEN_SECTIONS_EH_FRAME},
                 {"debug_frame", GEN_SECTIONS_DEBUG_FRAME},
                 {"both", GEN_SECTIONS_BOTH}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(text, names[i].name)) {
            *sections = names[i].value;
            return true;
        }
    return false;
}

static int parse_value(struct gen_cli *o, const char *arg, const char *value)
{
    uint64_t n;
    if (!strcmp(arg, "--seed")) {
        if (!cli_parse_u64(value, &o->options.seed))
            return cli_usage_error("gen", "bad seed", value);
        o->has_seed = true;
    } else if (!strcmp(arg, "-o")) {
        o->asm_path = value;
    } else if (!strcmp(arg, "--expect")) {
        o->expect_path = value;
    } else if (!strcmp(arg, "--arch")) {
        if (!strcmp(value, "aarch64"))
            o->options.arch = GEN_ARCH_AARCH64;
        else if (!strcmp(value, "x86-64"))
            o->options.arch = GEN_ARCH_X86_64;
        else
            return cli_usage_error("gen", "unknown architecture", value);
    } else if (!strcmp(arg, "--fdes")) {
        if (!cli_parse_u64(value, &n) || n < 1 || n > GEN_FDES_MAX)
            return cli_usage_error("gen", "--fdes takes 1 to 64, got", value);
        o->options.nfdes = (unsigned)n;
    } else if (!parse_sections(value, &o->options.sections)) {
        return cli_usage_error("gen", "unknown section", value);
    }
    return CLI_OK;
}

/* CLI_OK, CLI_USAGE (reported), or -1 for --help. */
static int parse_options(int argc, char **argv, struct gen_cli *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
            return -1;
        if (!strcmp(arg, "--ill-formed")) {
            o->options.ill_formed = true;
            continue;
        }
        bool takes_value = !strcmp(arg, "--seed") || !strcmp(arg, "-o") ||
                           !strcmp(arg, "--expect") || !strcmp(arg, "--fdes") ||
                           !strcmp(arg, "--section") || !strcmp(arg, "--arch");
        if (!takes_value)
            return cli_usage_error("gen", "unknown option", arg);
        if (i + 1 >= argc)
            return cli_usage_error("gen", "missing value for", arg);
        int status = parse_value(o, arg, argv[++i]);
        if (status != CLI_OK)
            return status;
    }
    if (!o->has_seed)
        return cli_usage_error("gen", "missing --seed", NULL);
    if (!o->asm_path)
        return cli_usage_error("gen", "missing -o OUT.S", NULL);
    return CLI_OK;
}

/* Writes one output; false (reported) when the file cannot be written. */
static bool write_file(const char *path, const struct gen_program *program,
                       void (*write)(const struct gen_program *, FILE *))
{
    bool to_stdout = !strcmp(path, "-");
    FILE *out = to_stdout ? stdout : fopen(path, "w");
    if (!out) {
        fprintf(stderr, "cfisem: %s: cannot write\n", path);
        return false;
    }
    write(program, out);
    bool ok = !ferror(out);
    if (to_stdout)
        ok = fflush(out) == 0 && ok;
    else
        ok = fclose(out) == 0 && ok;
    if (!ok)
        fprintf(stderr, "cfisem: %s: cannot write\n", path);
    return ok;
}

int cli_gen(int argc, char **argv)
{
    struct gen_cli o = {
        .options = {0, 0, GEN_SECTIONS_RANDOM, false, GEN_ARCH_X86_64}};
    int status = parse_options(argc, argv, &o);
    if (status == -1) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (status != CLI_OK)
        return status;
    struct gen_program *program;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (gen_program_new(&o.options, &program, &diag) != CFI_OK) {
        fprintf(stderr, "cfisem gen: seed %" PRIu64 ": %s\n", o.options.seed,
                diag.message ? diag.message : cfi_status_text(diag.status));
        return cli_exit_of(diag.status, CLI_BAD_INPUT);
    }
    bool ok = write_file(o.asm_path, program, gen_write_asm) &&
              (!o.expect_path ||
               write_file(o.expect_path, program, gen_write_expect));
    gen_program_free(program);
    return ok ? CLI_OK : CLI_BAD_INPUT;
}
