/* SPDX-License-Identifier: MIT */
/* cli.h — what the subcommands of cfisem share: exit codes, option
 * helpers and the one-line error for a bad input file. */
#ifndef CFISEM_CLI_H
#define CFISEM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"

/* The version of cfisem (debian/changelog names the same). */
#define CFISEM_VERSION "0.6.0"

/* Exit codes of every subcommand. */
enum {
    CLI_OK = 0,
    CLI_USAGE = 64,      /* bad command line: EX_USAGE of sysexits.h, apart
                            from every outcome, so that a script tells a
                            typo from a finding */
    CLI_BAD_INPUT = 2,   /* an input file is unreadable or malformed */
    CLI_NO_UNWIND = 3,   /* the answer is "cannot unwind" (unwind only) */
    CLI_ENGINE_FAILED = 4, /* the engine asked crashed or gave no answer in
                              time (unwind only) */
    CLI_MISMATCH = 1,    /* diff, validate: an engine answered differently
                            from the reference, and nothing explains it */
    CLI_INTERNAL = 70,   /* EX_SOFTWARE of sysexits.h: cfisem reached a
                            state no input can reach (CFI_E_INTERNAL), a
                            bug of cfisem whatever the input */
};

/* CLI_INTERNAL for CFI_E_INTERNAL, else `otherwise`. */
static inline int cli_exit_of(enum cfi_status status, int otherwise)
{
    return status == CFI_E_INTERNAL ? CLI_INTERNAL : otherwise;
}

/* One subcommand: `run` gets argv with argv[0] the subcommand's name. */
struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

int cli_il(int argc, char **argv);
/* `il FILE --sframe` (cli/il_sframe.c): wanted when an argument asks for
 * it. */
bool cli_il_wants_sframe(int argc, char **argv);
int cli_il_sframe(int argc, char **argv);
int cli_unwind(int argc, char **argv);
int cli_compile(int argc, char **argv);
int cli_cache(int argc, char **argv);
int cli_diff(int argc, char **argv);
/* What `diff` prints and writes once a run is done (also `report
 * merge`): one line per file that could not be loaded, per file with
 * FDEs that do not translate and per wrong .eh_frame_hdr on stderr, the
 * text report on stdout (the first `show` new mismatches), the JSON to
 * json_path (NULL: none). Returns diff's exit status. */
struct diff_run;
int cli_diff_report(const struct diff_run *run, const char *json_path,
                    size_t show);
int cli_report(int argc, char **argv);
/* A frame as `cfisem unwind --json` prints it, without its top-level
 * "schema_version" and the end of line (explain embeds it):
 * {"engine", "pc", "cfa", "error", "signal_frame", "regs": {"N": VALUE}},
 * or for an error {"engine", "pc", "cfa": null, "error", "message",
 * "reg", "offset", "offset_in", "regs": {}}. */
struct engine_answer;
void cli_frame_json(FILE *out, const struct cfi_arch *arch,
                    const char *engine, uint64_t pc,
                    const struct engine_answer *answer);
int cli_validate(int argc, char **argv);
/* `validate FILE --hdr` and `--sframe` (cli/validate_table.c): wanted
 * when an argument asks for one. */
bool cli_validate_wants_table(int argc, char **argv);
int cli_validate_table(int argc, char **argv);
/* The help of --hdr and --sframe, after their synopsis. */
void cli_validate_table_help(FILE *out);
int cli_gen(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_stats(int argc, char **argv);

/* `unwind --engine compiled` with a v1 eh_elf (unwind_v1.c): abi is "v1"
 * or "v1-direct"; returns the exit status. */
struct cfi_request;
int cli_unwind_v1(const char *eh_elf, const char *abi,
                  const struct cfi_request *request, bool json);
/* "v1" or "v1-direct" when the eh_elf is to be asked as v1 (`abi` as
 * given, or NULL: what the eh_elf says), else NULL. */
const char *cli_eh_elf_v1_abi(const char *eh_elf, const char *abi);
int cli_synth(int argc, char **argv);
int cli_trace(int argc, char **argv);
int cli_sites(int argc, char **argv);
int cli_stack(int argc, char **argv);
int cli_perf(int argc, char **argv);

/* Prints where a frame's error is, after its message: " at section
 * offset 0x2c", " at expression offset 0x3" (the failing operation's
 * byte offset in its expression, cfi_diag_in_expression), or nothing. */
void cli_print_error_position(FILE *out, const struct cfi_diag *diag);

/* Prints "cfisem: PATH: MESSAGE" (with the section offset when the
 * diagnostic has one) on stderr, one line. */
void cli_report_file_error(const char *path, const struct cfi_diag *diag);
/* An eh_elf of cfisem given for `object_path` must have been built from
 * it (cg_check_stamp): CLI_OK, or, after one line on stderr naming the
 * eh_elf and both object ids, CLI_BAD_INPUT. A file that is not an
 * eh_elf of cfisem (nor one of the 2018-2019 tools, which carry no
 * stamp) passes: its loader says what is wrong with it. */
int cli_check_eh_elf_stamp(const char *eh_elf, const char *object_path);
/* Prints "cfisem: PATH: .eh_frame FDE 0x18: instruction at +0x3: MESSAGE
 * (and N more FDEs with errors)" on stderr: the first of `count` FDEs of
 * a file that do not translate, with the position of the faulty
 * instruction (diag->offset is its section offset). */
void cli_report_fde_error(const char *path, const struct cfi_fde *fde,
                          const struct cfi_diag *diag, size_t count);
/* Prints "cfisem SUBCOMMAND: MESSAGE ARG" and a hint to --help. */
int cli_usage_error(const char *subcommand, const char *message,
                    const char *arg);

/* Whether an argument after the subcommand is --help or -h. */
bool cli_wants_help(int argc, char **argv);

/* Parses a number in decimal or 0x-hex; false when malformed. */
bool cli_parse_u64(const char *text, uint64_t *value);

/* The machine state of one question (state.c): the callee's registers and
 * the memory model, as `unwind` and `explain` take them on the command
 * line (--regs, --mem-seed, --mem DUMP@ADDR, --fault B-E). */
#define CLI_MAX_FAULTS 16
struct cli_state {
    struct cfi_regs callee;
    bool has_regs;
    char *regs_text;             /* --regs, read once the file is open */
    uint64_t seed;
    const char *dump_path;
    uint64_t dump_addr;
    uint64_t dump_len;           /* after cli_state_memory */
    struct { uint64_t begin, end; } faults[CLI_MAX_FAULTS];
    size_t nfaults;
};

/* Each takes the option's value; false when it is malformed. --regs
 * "rsp=0x10,rbp=3" (names or DWARF numbers) is kept, and sets the
 * registers when cli_state_set_regs reads it with the names of the
 * file's architecture; --mem "DUMP@ADDR" (cuts `text`); --fault
 * "0x1000-0x2000". */
bool cli_state_regs(struct cli_state *state, char *list);
/* Reads --regs with `arch`'s names, then gives the PC register `pc` when
 * the list did not; false when the list is malformed. */
bool cli_state_set_regs(struct cli_state *state, const struct cfi_arch *arch,
                        uint64_t pc);
bool cli_state_dump(struct cli_state *state, char *text);
bool cli_state_fault(struct cli_state *state, const char *text);

/* The memory of the harness for this state: FILE's segments, the dump or
 * synthetic words, the faulting ranges. CLI_OK, or CLI_BAD_INPUT after a
 * one-line error. */
struct engine_memory;
int cli_state_memory(struct cli_state *state, const struct cfi_file *file,
                     struct engine_memory **memory);

#endif
