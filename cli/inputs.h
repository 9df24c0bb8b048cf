/* SPDX-License-Identifier: MIT */
/* inputs.h — what the commands that read a file's CFI (il, unwind,
 * explain, diff, validate) share about that file: --debug-dir and the
 * separate debug file, the function that holds an address
 * (<name+0x12>), and --pc given as ADDR, SYMBOL or SYMBOL+OFFSET. */
#ifndef CFISEM_CLI_INPUTS_H
#define CFISEM_CLI_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"

/* --debug-dir DIR, repeatable: where separate debug files are looked
 * for, in the order given, before /usr/lib/debug. */
#define CLI_DEBUG_DIRS_MAX 16
struct cli_inputs {
    const char *debug_dirs[CLI_DEBUG_DIRS_MAX];
    size_t ndebug_dirs;
};

/* When argv[*i] is --debug-dir DIR or --debug-dir=DIR: takes it (and
 * its value) and returns 1; CLI_USAGE after the usage line when it is
 * malformed; 0 when argv[*i] is another argument. */
int cli_inputs_option(const char *command, int argc, char **argv, int *i,
                      struct cli_inputs *inputs);

/* cfi_file_open_debug with the debug directories; when the file names a
 * debug file (.gnu_debuglink) that is found nowhere, one note on stderr:
 * "cfisem: PATH: note: debug file NAME not found; FDEs only in its
 * .debug_frame are not read". */
enum cfi_status cli_open_cfi(const struct cli_inputs *inputs,
                             const char *path, struct cfi_file **file,
                             struct cfi_diag *diag);

/* That note, for a file opened elsewhere (validate/). */
void cli_note_debug_missing(const char *path, const char *name);

/* The help text of --debug-dir, for the commands that take it. */
void cli_inputs_help(FILE *out);

/* --pc ADDR (decimal or 0x-hex), SYMBOL or SYMBOL+OFFSET (OFFSET decimal
 * or 0x-hex), kept as given until the file is open. */
struct cli_pc {
    const char *text;
    bool symbolic;
    uint64_t addr;          /* ADDR, or once resolved */
};
/* False when `text` is neither an address nor a symbol form. */
bool cli_pc_parse(const char *text, struct cli_pc *pc);
/* A symbolic --pc becomes the address of the function symbol of `file`
 * (cfi_file_functions) plus the offset. A name several functions bear
 * (static functions of different units) is the one at the lowest
 * address, and a note on stderr says how many there are. CLI_OK, or
 * CLI_USAGE after one line when no function has that name. */
int cli_pc_resolve(const char *command, const char *path,
                   const struct cfi_file *file, struct cli_pc *pc);

/* The function symbols of a file, to name addresses. */
struct cli_symbols {
    const struct cfi_file *file;
    struct cfi_symbol *items;
    size_t count;
};
/* Never fails: out of memory, addresses are printed without names. */
void cli_symbols_load(const struct cfi_file *file, struct cli_symbols *s);
void cli_symbols_free(struct cli_symbols *s);
/* The function that holds `addr` as "name+0x12" ("name" at offset 0)
 * into buf; NULL when no function holds it, it has no name, or addr is
 * outside the file's executable segments (a symbol of size 0 holds the
 * addresses up to the next: not those past the code). */
const char *cli_symbol_label(const struct cli_symbols *s, uint64_t addr,
                             char *buf, size_t size);
/* The same for a frame's PC: a caller frame's (a return address) is
 * the function that holds pc-1 (the call may be its last instruction),
 * the offset pc's. */
const char *cli_symbol_label_pc(const struct cli_symbols *s, uint64_t pc,
                                bool caller_frame, char *buf, size_t size);
/* " <name+0x12>" after a return address: the function is the one that
 * holds addr-1 (the call may be its last instruction), the offset
 * addr's; nothing when none. */
void cli_symbol_print_return(FILE *out, const struct cli_symbols *s,
                             uint64_t addr);

#endif
