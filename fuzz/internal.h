/* SPDX-License-Identifier: MIT */
/* internal.h — what the fuzz targets share and nothing else uses. */
#ifndef CFISEM_FUZZ_INTERNAL_H
#define CFISEM_FUZZ_INTERNAL_H

#include <stdbool.h>

#include "cfi/cfi.h"
#include "fuzz/targets.h"

/* The comparison of tests/check_agreement.c: the same status; when OK the
 * same CFA, signal flag and every caller register (status, and value when
 * a value); for reg_unknown the same diag.reg. */
bool fuzz_frames_agree(const struct cfi_frame *a, const struct cfi_frame *b);

/* Writes "what: interp says X, il says Y" and the request into the
 * report; returns FUZZ_DISAGREE. */
enum fuzz_result fuzz_disagree(struct fuzz_report *report, const char *what,
                               const struct cfi_request *request,
                               const char *name_a, const struct cfi_frame *a,
                               const char *name_b, const struct cfi_frame *b);

/* A register file for a request: registers 0-16 from `seed`, rsp and rbp
 * in a plausible stack, rip = pc; `known` says which of 0-16 are given
 * (bit r), `high` whether 17-127 are given too, `undefined` whether the
 * others are undefined rather than unknown. */
void fuzz_make_regs(uint64_t seed, uint32_t known, bool high, bool undefined,
                    uint64_t pc, struct cfi_regs *regs);

/* Records that a library answered `what` at point `where` (0..8), in a
 * way the coverage instrumentation sees (feedback.c). */
void fuzz_note(unsigned where, uint64_t what);

enum {
    FUZZ_NOTE_LIBDWARF_INIT,
    FUZZ_NOTE_LIBDWARF_LIST,
    FUZZ_NOTE_LIBDWARF_ROW,
    FUZZ_NOTE_LIBDWARF_RULE,
    FUZZ_NOTE_LIBDW_FRAME,
    FUZZ_NOTE_LIBDW_RULE,
    FUZZ_NOTE_LIBUNWIND_STEP,
    FUZZ_NOTE_LIBUNWIND_REGS,
    FUZZ_NOTE_OUTSIDE_VERDICT,  /* outside.c: the verdict of a comparison */
};

/* Clears the section-flags function libdwarf 20210528 keeps in a
 * process-global pointer after dwarf_init_b (oracle_libdwarf.c): every
 * later dwarf_object_init_b, cfi_file_open's included, would call it on
 * an object it does not belong to and fail. */
void fuzz_oracle_libdwarf_forget(void);

/* The program headers of an ELF image, read without our loader (the
 * oracles must see images that cfi/ rejects): false when the image is not
 * a 64-bit little-endian ELF or the index is past the table. */
struct fuzz_phdr {
    uint32_t type;
    bool executable;
    uint64_t offset;
    uint64_t vaddr;
    uint64_t filesz;
    uint64_t memsz;
};
size_t fuzz_elf_phnum(const uint8_t *image, size_t size);

/* A copy of `size` bytes whose end (rounded up to `align`) touches an
 * inaccessible page (guard.c). */
struct fuzz_guarded {
    uint8_t *bytes;
    void *mapping;
    size_t mapping_size;
};
bool fuzz_guarded_copy(struct fuzz_guarded *copy, const uint8_t *data,
                       size_t size, size_t align);
void fuzz_guarded_free(struct fuzz_guarded *copy);
bool fuzz_elf_phdr(const uint8_t *image, size_t size, size_t index,
                   struct fuzz_phdr *phdr);

#endif
