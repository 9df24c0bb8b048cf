/* SPDX-License-Identifier: MIT */
/* targets.h — what the fuzz harnesses run on one input, as library
 * functions: the AFL++ harnesses (fuzz/harness/fuzz_*.c), their replay
 * programs and tests/check_fuzz_replay.c all call these, so that a saved
 * input is replayed by exactly the code that found it.
 *
 * Three targets:
 *
 *   cfi_bytes  raw CIE and FDE records laid out as a .eh_frame or
 *              .debug_frame section, after a small header that chooses the
 *              section kind, the request and the machine state (below) →
 *              cfi_file_from_section → for every FDE: sem_translate_fde,
 *              interp_unwind_fde and sem_unwind_fde, compared.
 *   elf        a whole ELF file → cfi_file_open, sem_file_il_build, the IL
 *              printed in the three formats, interp_unwind and sem_unwind
 *              at the rows' boundaries, compared.
 *   oracles    a selector byte and a whole ELF file → the outside
 *              parsers: libdwarf's frame API, elfutils libdw's CFI API,
 *              libunwind's remote unwinder (a crash inside one of them is
 *              a finding); then, when cfi/ loads the file, that library's
 *              engine (engines/) compared with the IL evaluator, and the
 *              interpreter too (fuzz_outside_compare).
 *
 * A target returns FUZZ_OK, or FUZZ_DISAGREE with a description of the
 * difference in report->text; the harness turns a disagreement into
 * abort(), so that AFL++ saves the input as a crash. A crash or a
 * sanitizer report inside a target is a crash of the harness.
 *
 * No global mutable state: what a target keeps between inputs lives in a
 * struct fuzz_context that the caller opens once and passes in.
 */
#ifndef CFISEM_FUZZ_TARGETS_H
#define CFISEM_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum fuzz_result {
    FUZZ_OK,
    FUZZ_DISAGREE,   /* two engines (or two paths of one) differ */
    FUZZ_SETUP,      /* the harness itself could not run (no memfd, ...) */
};

struct fuzz_report {
    char text[4096];
};

/* What a harness keeps for its whole life: a file the ELF targets write
 * each input into (a memfd, else an unlinked temporary file; cfi_file_open
 * and libdwarf take a path or a descriptor), a sink for printed IL, and
 * the libdw handle, loaded on first use. */
struct fuzz_context {
    int fd;
    char path[64];
    FILE *sink;
    void *libdw;              /* dlopen handle, NULL until needed */
    const void *libdw_api;    /* resolved entry points (oracle_libdw.c) */
    /* Where target 3 writes an outside engine's unexplained differences:
     * $CFISEM_FUZZ_FINDINGS when fuzz_context_open ran, NULL: nowhere. */
    const char *findings;
    /* Bit s: target 3 runs inputs of selector s ($CFISEM_FUZZ_ORACLES,
     * read by fuzz_context_open: names among libdwarf (selectors 0 and
     * 3), libdw (1), libunwind (2); unset or empty: every selector). An
     * input of another selector returns at once: a campaign for one
     * library. */
    unsigned oracles;
};

enum fuzz_result fuzz_context_open(struct fuzz_context *context);
void fuzz_context_close(struct fuzz_context *context);

/* ------------------------------------------------------------------ */
/* Target 1: raw CFI bytes                                              */
/* ------------------------------------------------------------------ */

/* The header before the section bytes. All fields little-endian.
 *
 *   [0]      flags:
 *              bit 0  the section is .debug_frame (else .eh_frame)
 *              bit 1  the request is a caller frame (lookup at PC-1)
 *              bit 2  no synthetic memory: only the section's own bytes
 *                     are mapped, every other read faults
 *              bit 3  a faulting window of 64 bytes at rsp + 8 * byte[11]
 *              bit 4  registers 17..127 are known too
 *              bit 5  registers not known are undefined (else unknown)
 *   [1..2]   the PC's offset from each FDE's pc_begin; 0xffff means
 *            pc_end
 *   [3..6]   seed of the register values and of synthetic memory
 *   [7..10]  bit r (r < 17): register r is known
 *   [11]     the faulting window's position, in 8-byte words above rsp
 *   [12..15] the section's file address (pc-relative pointers are
 *            relative to it; its bytes are mapped there)
 *
 * Then the section. Every FDE (at most FUZZ_MAX_FDES of them) is asked
 * three requests: (pc_begin + offset, the header's caller flag), (pc_begin,
 * innermost) and (pc_end, caller: the last row). */
enum { FUZZ_CFI_HEADER_SIZE = 16, FUZZ_MAX_FDES = 64 };

enum {
    FUZZ_CFI_DEBUG_FRAME = 1u << 0,
    FUZZ_CFI_CALLER = 1u << 1,
    FUZZ_CFI_NO_SYNTHETIC = 1u << 2,
    FUZZ_CFI_FAULT_WINDOW = 1u << 3,
    FUZZ_CFI_HIGH_REGS = 1u << 4,
    FUZZ_CFI_UNDEFINED = 1u << 5,
};
#define FUZZ_CFI_PC_END 0xffffu

/* Checks, for every FDE and request:
 *   - interp_unwind_fde and sem_unwind_fde agree exactly (status; CFA,
 *     signal flag and every register when OK; diag.reg for reg_unknown);
 *   - sem_translate_fde's ranges cover [pc_begin, pc_end) in order with no
 *     gap or empty range, and every line of the text format parses back
 *     to the same text;
 *   - when the translation succeeds and the lookup PC is in the FDE,
 *     sem_eval_row on the row found gives what sem_unwind_fde gives; when
 *     it fails, sem_unwind_fde fails with the same status. */
enum fuzz_result fuzz_one_cfi_bytes(const uint8_t *data, size_t size,
                                    struct fuzz_report *report);

/* ------------------------------------------------------------------ */
/* Target 2: whole ELF files                                            */
/* ------------------------------------------------------------------ */

/* At most this many unwinding requests per input. */
enum { FUZZ_ELF_MAX_REQUESTS = 512 };

/* Writes the input into context's file, loads it with cfi_file_open,
 * builds the IL of every FDE, prints it in the three formats to the sink,
 * and compares interp_unwind with sem_unwind at every row's first address
 * (innermost) and end (caller frame), then at 0 and UINT64_MAX, under
 * four register states, up to FUZZ_ELF_MAX_REQUESTS requests. */
enum fuzz_result fuzz_one_elf(struct fuzz_context *context,
                              const uint8_t *data, size_t size,
                              struct fuzz_report *report);

/* ------------------------------------------------------------------ */
/* Target 3: outside parsers                                            */
/* ------------------------------------------------------------------ */

/* data[0] & 3 chooses the library and the input:
 *   0  libdwarf on the ELF file data[1..] (its own ELF reader);
 *   1  libdw on the ELF file data[1..];
 *   2  libunwind on the ELF file data[1..];
 *   3  libdwarf on raw frame records: data[1..] is target 1's input (its
 *      header's bit 0 and address, then the section), shown to libdwarf
 *      as the only section of an object (dwarf_object_init_b), the way
 *      cfi/ shows it the sections our parser accepted.
 * Whatever a library is handed (a section, an ELF image) lies at the end
 * of a mapping followed by an inaccessible page: the libraries are not
 * instrumented, and a read past the end then faults instead of going
 * unnoticed. */
enum fuzz_oracle {
    FUZZ_ORACLE_LIBDWARF,
    FUZZ_ORACLE_LIBDW,
    FUZZ_ORACLE_LIBUNWIND,
    FUZZ_ORACLE_LIBDWARF_SECTION,
};

/* Returns FUZZ_OK whatever the libraries answer (FUZZ_SETUP when the
 * harness cannot run): a crash is the finding. The libraries are not
 * instrumented, so the targets report what they answered (return codes,
 * rule kinds, counts) through distinct instrumented paths, which gives
 * AFL++ a view of their behaviour. Then, for selectors 0-2,
 * fuzz_outside_compare: FUZZ_DISAGREE (report filled) when our own
 * engines differ. */
enum fuzz_result fuzz_one_oracles(struct fuzz_context *context,
                                  const uint8_t *data, size_t size,
                                  struct fuzz_report *report);

/* At most this many questions per input in fuzz_outside_compare. */
enum { FUZZ_OUTSIDE_MAX_REQUESTS = 128 };

/* The differential oracle of target 3, on the ELF file data[1..] already
 * written into context's file: when cfi_file_open accepts it, the
 * questions of `cfisem diff` (engines/state.h: the PCs of each FDE, four
 * states each, at most FUZZ_OUTSIDE_MAX_REQUESTS) are asked of the IL
 * evaluator, the interpreter and the engine of `oracle` (libdwarf, libdw,
 * libunwind, in-process: a crash is the library's finding). il against
 * interp: FUZZ_DISAGREE with the report. The outside engine against il
 * (engines/compare.h): a difference that no known deviation explains
 * (verdict "differ") is written into context->findings, when set, once
 * per class (engine, first unexplained item, both statuses: SIG) as
 * ENGINE-SIG.input (the input), .elf (the file) and .txt (the items and
 * the `cfisem unwind` line of each question); it is not a failure. */
enum fuzz_result fuzz_outside_compare(struct fuzz_context *context,
                                      enum fuzz_oracle oracle,
                                      const uint8_t *data, size_t size,
                                      struct fuzz_report *report);

/* Each library on its own (oracle_*.c). The libdw one loads libdw.so.1
 * into the context on first use (fuzz_oracle_libdw_load, which a harness
 * calls before forking); it never links with libdwarf, whose dwarf_* names
 * clash with libdw's. */
void fuzz_oracle_libdwarf(int fd);
void fuzz_oracle_libdwarf_section(const uint8_t *data, size_t size);
enum fuzz_result fuzz_oracle_libdw_load(struct fuzz_context *context);
enum fuzz_result fuzz_oracle_libdw(struct fuzz_context *context,
                                   const uint8_t *elf, size_t size);
void fuzz_oracle_libunwind(const uint8_t *elf, size_t size);

/* ------------------------------------------------------------------ */
/* Shared by the targets                                                */
/* ------------------------------------------------------------------ */

/* Replaces the content of context's file with `size` bytes. */
enum fuzz_result fuzz_context_write(struct fuzz_context *context,
                                    const uint8_t *data, size_t size);

/* PCs worth asking about in an ELF image, found without our loader: the
 * initial locations of .eh_frame_hdr's table and points spread over the
 * executable segments. Writes at most `max` into pcs; returns the count. */
size_t fuzz_elf_pcs(const uint8_t *elf, size_t size, uint64_t *pcs,
                    size_t max);

#endif
