/* SPDX-License-Identifier: MIT */
/* structured.h — a structure-aware mutator for the fuzz harnesses' inputs,
 * built on robust/'s reading of the formats (robust/robust.h: the ELF and
 * CIE/FDE scanner, its mutation kinds, its CFA instruction and DWARF
 * expression writers).
 *
 * It mutates records, CFA programs and expressions as structures: an
 * instruction inserted, deleted, replaced or duplicated at instruction
 * boundaries, an expression rule inserted, a record duplicated or
 * deleted; each time the record's length, the CIE pointers of the FDEs
 * that moved or whose CIE moved, and the pc-relative pc_begin of the FDEs
 * that moved are fixed, so that the section still parses. robust/'s kinds
 * (lengths, CIE pointers, augmentations, encodings, LEB128, pc fields,
 * truncation, headers...) are applied too: those break exactly the field
 * they are about. Target 1's header gets its own mutations (flags, PC
 * offset, registers known).
 *
 * Exported twice, by the two files beside this one: as an AFL++ custom
 * mutator (afl.c: afl_custom_init, afl_custom_fuzz, afl_custom_deinit;
 * build/fuzz/cfisem-mutator.so) and as libFuzzer's
 * LLVMFuzzerCustomMutator (libfuzzer.c, linked into the NAME_structured
 * targets). Not a module: it links robust/'s mutate.c and scan.c and
 * nothing of cfisem.
 */
#ifndef CFISEM_FUZZ_MUTATOR_STRUCTURED_H
#define CFISEM_FUZZ_MUTATOR_STRUCTURED_H

#include <stddef.h>
#include <stdint.h>

/* What an input is (fuzz/targets.h's three targets). */
enum fuzz_shape {
    FUZZ_SHAPE_CFI_BYTES,  /* 16-byte header, then a bare frame section */
    FUZZ_SHAPE_ELF,        /* an ELF file */
    FUZZ_SHAPE_ORACLES,    /* a selector byte, then an ELF file (0-2) or a
                              target-1 input (3) */
};

/* The shape named "cfi_bytes", "elf" or "oracles"; -1 for another. */
int fuzz_shape_parse(const char *name);

/* What the mutation was, for the tests and the measurements. */
enum fuzz_mutation {
    FUZZ_MUT_NONE,         /* nothing applied: data unchanged */
    FUZZ_MUT_STRUCTURE,    /* sizes changed, lengths and pointers fixed */
    FUZZ_MUT_IN_PLACE,     /* an instruction replaced in place (ELF) */
    FUZZ_MUT_HEADER,       /* target 1's header or the selector */
    FUZZ_MUT_FIELD,        /* one of robust/'s kinds */
};

/* Mutates data[0, size) in place, in a buffer of max_size bytes; returns
 * the new size (<= max_size) and, when `what` is not NULL, the kind of
 * mutation in *what. A function of (shape, the bytes, seed) alone. */
size_t fuzz_mutator_structured(enum fuzz_shape shape, uint8_t *data,
                               size_t size, size_t max_size, uint64_t seed,
                               enum fuzz_mutation *what);

/* libfuzzer.c: LLVMFuzzerCustomMutator's body — one call in four, and
 * every call the structured mutator could not apply, goes to
 * LLVMFuzzerMutate (libFuzzer's own byte mutations). */
size_t fuzz_mutator_libfuzzer(enum fuzz_shape shape, uint8_t *data,
                              size_t size, size_t max_size, unsigned seed);

#endif
