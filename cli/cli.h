/* cli.h — what the subcommands of cfisem share: exit codes, option
 * helpers and the one-line error for a bad input file. */
#ifndef CFISEM_CLI_H
#define CFISEM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi/cfi.h"

/* The version of cfisem (debian/changelog names the same). */
#define CFISEM_VERSION "0.6.0"

/* Exit codes of every subcommand. */
enum {
    CLI_OK = 0,
    CLI_USAGE = 1,       /* bad command line */
    CLI_BAD_INPUT = 2,   /* an input file is unreadable or malformed */
    CLI_NO_UNWIND = 3,   /* the answer is "cannot unwind" (unwind only) */
    CLI_ENGINE_FAILED = 4, /* the engine asked crashed or gave no answer in
                              time (unwind only) */
    CLI_MISMATCH = 1,    /* diff, validate: an engine answered differently
                            from the reference, and nothing explains it */
};

/* One subcommand: `run` gets argv with argv[0] the subcommand's name. */
struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

int cli_il(int argc, char **argv);
int cli_unwind(int argc, char **argv);
int cli_compile(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_gen(int argc, char **argv);
int cli_trace(int argc, char **argv);
int cli_sites(int argc, char **argv);

/* Prints "cfisem: PATH: MESSAGE" (with the section offset when the
 * diagnostic has one) on stderr, one line. */
void cli_report_file_error(const char *path, const struct cfi_diag *diag);
/* Prints "cfisem: PATH: .eh_frame FDE 0x18: instruction at +0x3: MESSAGE
 * (and N more FDEs with errors)" on stderr: the first of `count` FDEs of
 * a file that do not translate, with the position of the faulty
 * instruction (diag->offset is its section offset). */
void cli_report_fde_error(const char *path, const struct cfi_fde *fde,
                          const struct cfi_diag *diag, size_t count);
/* Prints "cfisem SUBCOMMAND: MESSAGE ARG" and a hint to --help. */
int cli_usage_error(const char *subcommand, const char *message,
                    const char *arg);

/* Parses a number in decimal or 0x-hex; false when malformed. */
bool cli_parse_u64(const char *text, uint64_t *value);

#endif
