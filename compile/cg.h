/* SPDX-License-Identifier: MIT */
/* cg.h — the eh_elf generator of cfisem: IL → C → shared object, and the
 * engine that unwinds with an eh_elf.
 *
 * This module promises:
 *   1. cg_generate: from a file's IL (semantics/), C code whose function
 *      unwinds one frame for any PC of the file exactly as sem_unwind
 *      does (cfi.h "Unwinding one frame"), for the ABI of eh_elf.h (full)
 *      or the v1 ABI. Same input, byte-identical output.
 *   2. cg_build: that C compiled by the system's C compiler ($CC, else
 *      cc; for an AArch64 file $CFISEM_AARCH64_CC, else
 *      aarch64-linux-gnu-gcc) into one shared object, several
 *      translation units in parallel.
 *   3. cg_load / cg_unwind: an eh_elf opened with dlopen and checked (an
 *      eh_elf of ours, a known flavour, an ABI version this header can
 *      call: EH_ELF_ABI_VERSION_MIN to EH_ELF_ABI_VERSION), then used as an
 *      engine with the contract of the others: a struct cfi_request in, a
 *      struct cfi_frame out.
 *
 * The generated code. Every FDE's rows and the gaps between FDEs become
 * "leaves": address intervals, each reaching one row body, an error, or
 * "no FDE". Adjacent leaves with the same body are merged, across FDE
 * boundaries too. The search is an if/else binary search in code: one
 * tree over the leaves' starts, split into parts (one function and one
 * translation unit each) with a top-level dispatch over the parts. Within
 * a part, the leaves of one FDE are searched on the offset from the FDE's
 * start, and identical searches (the same offsets and bodies, as in
 * common prologues) are emitted once and shared with goto. Each distinct
 * row body is emitted once (a function, reached from the search by a
 * tail call); the rules of a row, without its CFA, are again shared
 * between rows, and so is the check of the CFA register in front of
 * them. DWARF expressions are compiled to
 * straight C: plain local variables when the stack depth is known at each
 * operation (no branch), a checked stack and labels otherwise.
 *
 * Uses cfi/ and semantics/'s public API only; its DWARF expression
 * decoder is its own (DESIGN.md's independence rule).
 */
#ifndef CFISEM_CG_H
#define CFISEM_CG_H

#include <stdio.h>

#include "../cfi/cfi.h"
#include "../semantics/sem.h"
#include "eh_elf.h"

/* ------------------------------------------------------------------ */
/* Generation                                                           */
/* ------------------------------------------------------------------ */

enum cg_abi {
    CG_ABI_FULL, /* eh_elf.h: eh_elf_unwind, the machine's registers,
                    errors */
    CG_ABI_V1,   /* the 2018-2019 ABI: _eh_elf, rip/rsp/rbp/rbx */
};

/* "full" / "v1"; parsing returns false for anything else. */
const char *cg_abi_name(enum cg_abi abi);
bool cg_abi_parse(const char *text, enum cg_abi *abi);

/* How the generated code finds the leaf of a PC. */
enum cg_search_kind {
    CG_SEARCH_TREE,  /* an if/else binary search in code */
    CG_SEARCH_TABLE, /* sorted start offsets as data, 16-bit within 64 KiB
                        blocks, with an index of the blocks and of their
                        sub-blocks, and a search over a sub-block's
                        leaves; the row bodies as for the tree
                        (compile/table.c): smaller */
};

/* "tree" / "table"; parsing returns false for anything else. */
const char *cg_search_kind_name(enum cg_search_kind kind);
bool cg_search_kind_parse(const char *text, enum cg_search_kind *kind);

/* Figures of a generation. */
struct cg_stats {
    size_t leaves;        /* address intervals searched (gaps included) */
    size_t rows;          /* distinct row bodies (errors included) */
    size_t rulesets;      /* distinct rule sets (rows without their CFA) */
    size_t shapes;        /* their shapes, one function of C each (the
                             parametric layout, AArch64); else 0 */
    size_t nodes;         /* search nodes emitted (after sharing) */
    size_t parts;         /* search parts (one translation unit each) */
    size_t expressions;   /* compiled DWARF expressions */
    size_t c_bytes;       /* bytes of C, all units */
};

/* The generated C: a prelude common to every translation unit (the
 * declarations of eh_elf.h and private helpers) and the units' bodies. */
struct cg_unit {
    char *name;           /* "main", "part3", "rows0": file name stem */
    char *body;
    size_t body_len;
};

struct cg_program {
    enum cg_abi abi;
    uint16_t machine;     /* the file's e_machine: which compiler builds it */
    struct eh_elf_object_id object_id; /* the stamp (cg_file_object_id) */
    char *prelude;
    size_t prelude_len;
    struct cg_unit *units;
    size_t nunits;
    struct cg_stats stats;
};

/* Generates the C for `il` (its file is il->file), stamped with the
 * file's object id (cg_file_object_id). Errors: CFI_E_NOMEM;
 * CFI_E_UNSUPPORTED when the file's addresses cannot be searched (never
 * for a valid ELF file); CFI_E_INTERNAL when an FDE's translation is (a
 * state no input reaches: eh_elf.h has no code for it), with that FDE's
 * diag; those of cg_file_object_id. */
enum cfi_status cg_generate(const struct sem_file_il *il, enum cg_abi abi,
                            struct cg_program **program,
                            struct cfi_diag *diag);
/* The same with the search of the given kind (cg_generate: the tree). */
enum cfi_status cg_generate_search(const struct sem_file_il *il,
                                   enum cg_abi abi, enum cg_search_kind kind,
                                   struct cg_program **program,
                                   struct cfi_diag *diag);
void cg_program_free(struct cg_program *program);

/* The whole program as one C file: the prelude, then every unit. It
 * compiles on its own (`cc -O2 -shared -fPIC`) into the same eh_elf. */
enum cfi_status cg_write_c(const struct cg_program *program, FILE *out);

/* The declarations every generated file starts with: the text of
 * eh_elf.h between its <eh_elf:declarations> markers (tests check that
 * the two are the same). */
const char *cg_abi_declarations(void);

/* ------------------------------------------------------------------ */
/* Building                                                             */
/* ------------------------------------------------------------------ */

struct cg_build_options {
    const char *cc;       /* the compiler command; NULL: $CC, else "cc" */
    unsigned jobs;        /* parallel compilations; 0: the number of CPUs */
    bool quiet;           /* keep the compiler's messages to itself */
};

struct cg_build_report {
    double seconds;       /* wall time of the build */
    unsigned jobs;        /* parallel compilations used */
};

/* Compiles `program` into the shared object `output` (written to a
 * temporary name, then renamed). The compiler's own messages go to
 * stderr unless options->quiet. Errors: CFI_E_IO (temporary folder,
 * output file), CFI_E_UNSUPPORTED (the compiler cannot be run or
 * fails: diag->message says which step). */
enum cfi_status cg_build(const struct cg_program *program, const char *output,
                         const struct cg_build_options *options,
                         struct cg_build_report *report,
                         struct cfi_diag *diag);

/* Section sizes of an ELF file, in bytes (0 when absent). */
struct cg_sizes {
    uint64_t text;
    uint64_t rodata;      /* .rodata and .rodata.* */
    uint64_t eh_frame;
    uint64_t eh_frame_hdr;
    uint64_t file;        /* the whole file */
};
enum cfi_status cg_section_sizes(const char *path, struct cg_sizes *sizes,
                                 struct cfi_diag *diag);

/* The GNU build-id of an ELF file, from the notes of its PT_NOTE
 * segments (what the run-time library reads from a loaded object): at
 * most `cap` bytes into id, *len their number, 0 when the file has none.
 * Errors as cg_section_sizes (CFI_E_NOT_ELF for a bad header table). */
enum cfi_status cg_build_id(const char *path, uint8_t *id, size_t cap,
                            size_t *len, struct cfi_diag *diag);

/* The object id of an ELF file (eh_elf.h, struct eh_elf_object_id): its
 * GNU build-id as cg_build_id finds it (else, in a file without program
 * headers, from its SHT_NOTE sections), or, when it has none, the SHA-256
 * of the bytes of its .eh_frame and then its .debug_frame sections as
 * they are in the file (compressed, unrelocated). What an eh_elf built
 * from the file is stamped with, and what a consumer compares the stamp
 * with. Errors as cg_build_id. cg_object_id_of_bytes: of a file's bytes
 * in memory (8-aligned); cg_file_object_id: of an opened file's image
 * (kind EH_ELF_OBJECT_ID_NONE for CFI from memory, which has none). */
enum cfi_status cg_object_id(const char *path, struct eh_elf_object_id *id,
                             struct cfi_diag *diag);
enum cfi_status cg_object_id_of_bytes(const uint8_t *bytes, size_t size,
                                      struct eh_elf_object_id *id,
                                      struct cfi_diag *diag);
enum cfi_status cg_file_object_id(const struct cfi_file *file,
                                  struct eh_elf_object_id *id,
                                  struct cfi_diag *diag);
bool cg_object_id_equal(const struct eh_elf_object_id *a,
                        const struct eh_elf_object_id *b);
/* "build-id 1a2b...", "frame sha256 3c4d..." (every byte in hex), or "no
 * recorded file" for kind NONE or a bad size. */
void cg_object_id_text(const struct eh_elf_object_id *id, char *buf,
                       size_t size);

/* The stamp an eh_elf carries, read from its file's dynamic symbol
 * eh_elf_object_id without loading it. *found false when it defines no
 * such symbol (an eh_elf of ABI version 2 or 3, or of the 2018-2019
 * tools). Errors as cg_build_id. */
enum cfi_status cg_eh_elf_stamp(const char *path, struct eh_elf_object_id *id,
                                bool *found, struct cfi_diag *diag);

/* An eh_elf for `file` in `cache_dir` (NULL: ${XDG_CACHE_HOME:-$HOME/.cache}
 * /cfisem), built when absent: the name is keyed by the file's path, size,
 * modification time, the ABI flavour and EH_ELF_ABI_VERSION; one found
 * there whose stamp is not the file's object id is built again. *path is
 * malloc'd. *built says whether it was built now. */
enum cfi_status cg_cached_eh_elf(const struct cfi_file *file,
                                 const char *cache_dir, enum cg_abi abi,
                                 const struct cg_build_options *options,
                                 char **path, bool *built,
                                 struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Loading and unwinding                                                */
/* ------------------------------------------------------------------ */

struct cg_eh_elf;

/* Opens an eh_elf: loads it with dlopen, or, for an AArch64 eh_elf on
 * x86-64, starts the eh_elf runner that loads it under qemu-aarch64
 * (cg_eh_elf_is_remote; once per process that uses it: a forked child
 * starts its own at its first request). Errors, each with its own
 * message: CFI_E_IO (cannot be loaded: missing, not a shared object of
 * this machine),
 * CFI_E_UNSUPPORTED (not an eh_elf of ours: no eh_elf_ident; an unknown
 * flavour; an ABI version outside EH_ELF_ABI_VERSION_MIN to
 * EH_ELF_ABI_VERSION; its entry point missing; eh_elf_machine not its
 * ELF file's; no qemu-aarch64, AArch64 C library or runner for an
 * AArch64 eh_elf). A v1 eh_elf
 * from the 2018-2019 tools (only _eh_elf, no ident) loads as v1. The
 * stamp is not checked: see cg_load_for. */
enum cfi_status cg_load(const char *path, struct cg_eh_elf **eh,
                        struct cfi_diag *diag);

/* What a stale eh_elf was built from, and the file it was given for. */
struct cg_stale {
    bool ours;                          /* an eh_elf with eh_elf_ident */
    bool stamped;                       /* the eh_elf has a stamp */
    struct eh_elf_object_id built_from; /* its stamp */
    struct eh_elf_object_id object;
};

/* Whether the eh_elf at `path` was built from the file whose object id
 * is *object (cg_object_id), read from the eh_elf's file before any of
 * its code runs. CFI_OK when its stamp is that id, and for an eh_elf of
 * the 2018-2019 tools (no eh_elf_ident: it carries no stamp, and cannot
 * be checked). CFI_E_UNSUPPORTED for another stamp, "eh_elf built from
 * another file (rebuild it)", with *stale filled when non-NULL; and for
 * an eh_elf of ours without stamp (ABI version 2 or 3), with
 * stale->stamped false. Errors of cg_eh_elf_stamp. */
enum cfi_status cg_check_stamp(const char *path,
                               const struct eh_elf_object_id *object,
                               struct cg_stale *stale, struct cfi_diag *diag);
/* cg_check_stamp, then cg_load: how to open an eh_elf for a file. */
enum cfi_status cg_load_for(const char *path,
                            const struct eh_elf_object_id *object,
                            struct cg_eh_elf **eh, struct cg_stale *stale,
                            struct cfi_diag *diag);
/* The one line that says so, without the eh_elf's name: "built from
 * build-id 1a2b..., not from OBJECT (build-id 3c4d...)", or for an
 * eh_elf without stamp "carries no stamp of the file it was built from
 * (ABI version 2 or 3): rebuild it for OBJECT (build-id 3c4d...)". */
void cg_stale_text(const struct cg_stale *stale, const char *object_path,
                   char *buf, size_t size);
void cg_unload(struct cg_eh_elf *eh);
/* Whether the eh_elf at `path` is of another machine than this process
 * (AArch64 on x86-64): cg_load then starts the eh_elf runner under
 * qemu-aarch64 (compile/runner/) rather than load it. false when the
 * file cannot be read. */
bool cg_eh_elf_is_remote(const char *path);
enum cg_abi cg_eh_elf_abi(const struct cg_eh_elf *eh);
/* The entry point of a full-ABI eh_elf (NULL for v1, and for an eh_elf
 * the runner runs), for callers that speak eh_elf.h themselves and skip
 * the cfi_frame conversion. */
eh_elf_unwind_fn *cg_eh_elf_entry(const struct cg_eh_elf *eh);

/* Unwinds one frame with the eh_elf: cfi.h's step 1 (the lookup PC is
 * PC-1 for a caller frame), then the eh_elf with the callee registers of
 * its register file (x86-64: 0-16, AArch64: 0-34) from request->callee
 * (the others through its read_register), request->va_bits (AArch64)
 * and every read through request->memory. Fills *frame (the registers
 * past its register file undefined, their values unspecified) and
 * returns frame->status; diag.message is a fixed text per class,
 * diag.reg and diag.offset come from the eh_elf. An AArch64 eh_elf is
 * asked through its runner: one that ends or answers garbage fails the
 * request with CFI_E_UNSUPPORTED (a new runner serves the next); one
 * killed by a signal raises that signal here.
 *
 * A v1 eh_elf: rip, rsp, rbp and rbx only (the other registers unknown);
 * a read that faults makes the result CFI_E_MEMORY; any other error is
 * reported as CFI_E_UNSUPPORTED, "the eh_elf failed (v1 has no error
 * classes)". request->callee may be &frame->caller. */
enum cfi_status cg_unwind(const struct cg_eh_elf *eh,
                          const struct cfi_request *request,
                          struct cfi_frame *frame);

#endif
