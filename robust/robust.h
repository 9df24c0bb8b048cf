/* SPDX-License-Identifier: MIT */
/* robust.h — the robustness campaign: a format-aware ELF/CFI mutator and
 * a runner that puts every mutant through every cfisem command.
 *
 * Nothing here uses cfisem's libraries: the mutator reads the ELF section
 * headers and the CIE/FDE records itself, an independent view of the
 * formats, so that a misreading in cfi/ cannot hide the inputs it
 * misreads. */
#ifndef CFISEM_ROBUST_H
#define CFISEM_ROBUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- deterministic randomness ------------------------------------- */

struct rb_rng {
    uint64_t state;
};

void rb_rng_seed(struct rb_rng *rng, uint64_t seed, uint64_t stream);
uint64_t rb_next(struct rb_rng *rng);
/* Uniform in [0, n); 0 when n is 0. */
uint64_t rb_below(struct rb_rng *rng, uint64_t n);
/* True with probability 1/n. */
bool rb_one_in(struct rb_rng *rng, uint64_t n);

/* ---- the formats, as the mutator reads them ------------------------ */

enum { RB_MAX_SECTIONS = 64, RB_MAX_RECORDS = 512, RB_MAX_ENCODINGS = 3 };

struct rb_section {
    char name[32];
    uint32_t type;
    uint64_t header;        /* file offset of its section header */
    uint64_t offset, size;  /* its bytes in the file */
    uint64_t addr;
    uint64_t link, info;    /* sh_link, sh_info */
};

/* One CIE or FDE of .eh_frame or .debug_frame; every field is a file
 * offset, 0 when absent. */
struct rb_record {
    int section;            /* index into rb_elf.sections */
    bool is_cie;
    uint64_t at;            /* the length field */
    uint64_t total;         /* bytes of the record, length field included */
    uint64_t id_at;         /* CIE id or CIE pointer */
    unsigned id_size;       /* 4, or 8 after the 64-bit escape */
    int cie;                /* FDE: index of its CIE record, or -1 */
    /* CIE */
    uint64_t aug_at, aug_len;     /* the augmentation string, without NUL */
    uint64_t leb_at[4];           /* code align, data align, RA, aug length */
    unsigned nlebs;
    uint64_t enc_at[RB_MAX_ENCODINGS]; /* the R, P and L encoding bytes */
    unsigned nencs;
    uint8_t fde_encoding;         /* 'R', else absptr */
    bool has_z;
    /* FDE */
    uint64_t pc_at, range_at;
    unsigned pc_size;
    /* both */
    uint64_t insns_at, insns_len;
};

struct rb_elf {
    uint8_t *bytes;
    size_t size;
    bool elf64;             /* ELF64 little-endian: everything else unread */
    uint64_t phoff, shoff;
    unsigned phnum, shnum;
    struct rb_section sections[RB_MAX_SECTIONS];
    unsigned nsections;
    int eh_frame, debug_frame, eh_frame_hdr;  /* section indices or -1 */
    int rela[4];            /* .rela.* sections of frame data (or any) */
    unsigned nrela;
    struct rb_record records[RB_MAX_RECORDS];
    unsigned nrecords;
};

/* Reads bytes[0, size) (not copied: the pointer is kept). Never fails:
 * what does not parse is simply not found. */
void rb_elf_scan(struct rb_elf *elf, uint8_t *bytes, size_t size);

/* Reads bytes[at, size) as a bare .eh_frame (debug false) or .debug_frame
 * section, with no ELF file around it: one section, its records found as
 * rb_elf_scan finds them (offsets stay offsets into bytes). The kinds
 * about the ELF file then find no place. */
void rb_section_scan(struct rb_elf *elf, uint8_t *bytes, size_t size,
                     uint64_t at, bool debug);

uint64_t rb_load(const uint8_t *bytes, size_t size, uint64_t at, unsigned n);
void rb_store(uint8_t *bytes, size_t size, uint64_t at, unsigned n,
              uint64_t value);
/* Bytes taken by the (U/S)LEB128 at `at`, at most the bytes left. */
uint64_t rb_leb_len(const uint8_t *bytes, size_t size, uint64_t at);

/* ---- mutations ----------------------------------------------------- */

#define RB_KINDS(X)                                                          \
    X(record_length, "a CIE/FDE length: 0, the 64-bit escape, huge, near")  \
    X(cie_pointer, "an FDE's CIE pointer: 0, itself, an FDE, past the end") \
    X(augmentation, "augmentation string: unknown letters, no z, zPLR")     \
    X(pointer_encoding, "R/P/L encodings: bad, indirect, aligned, omit")    \
    X(leb128, "a LEB128 field: a continuation run, an overflow")            \
    X(cfa_program, "a random CFA program over a CIE or FDE program")        \
    X(dwarf_expression, "a random DWARF expression in an expression rule")  \
    X(fde_pc, "an FDE's pc_begin/pc_range: 0, huge, wrapping, overlapping") \
    X(truncate, "the file cut anywhere, in a record or at its boundary")    \
    X(section_header, "a section header field, or e_shoff/shnum/shstrndx")  \
    X(program_header, "a program header field, or e_phoff/phnum")           \
    X(eh_frame_hdr, ".eh_frame_hdr version, encodings, count, table")       \
    X(relocation, "a .rela entry: offset, symbol, type, addend")            \
    X(elf_header, "ELF class, data encoding, machine, type, version")       \
    X(byte_flip, "random bytes of a frame section (any, when none)")       \
    X(perf_header, "perf.data header: sizes, sections, feature table")    \
    X(perf_attr, "perf attr: size, type, sample_type bits, regs, stack")  \
    X(perf_record, "a perf record's header: type, misc, size")            \
    X(perf_sample, "a SAMPLE: dyn_size, stack copy size, any word")       \
    X(perf_zstd, "a COMPRESSED record: zstd frame header, bytes, size")   \
    X(core_note, "a core note: sizes, type, NT_PRSTATUS/FILE/AUXV")      \
    X(compressed_section, "SHF_COMPRESSED: ch_type, ch_size, zstd bytes") \
    X(combination, "two to four mutations of the kinds above")

enum rb_kind {
#define RB_ENUM(name, what) RB_KIND_##name,
    RB_KINDS(RB_ENUM)
#undef RB_ENUM
    RB_NKINDS
};

const char *rb_kind_name(enum rb_kind kind);
const char *rb_kind_summary(enum rb_kind kind);

/* A mutant buffer: capacity >= size; mutations may shrink it, never grow
 * it past capacity. */
struct rb_mutant {
    uint8_t *bytes;
    size_t size, capacity;
};

/* Applies one mutation of `kind` to m (a copy of a seed), chosen by rng.
 * False when the file has no place for that kind (no relocations, say):
 * m is then unchanged. */
bool rb_mutate(struct rb_mutant *m, enum rb_kind kind, struct rb_rng *rng);

/* rb_mutate on a mutant whose bytes from `at` on are a bare frame
 * section (rb_section_scan): the mutator of fuzz/mutator/. */
bool rb_mutate_section(struct rb_mutant *m, uint64_t at, bool debug,
                       enum rb_kind kind, struct rb_rng *rng);

/* One random CFA instruction (every opcode, the expression rules with a
 * random DWARF expression, registers and offsets at the edges, as the
 * cfa_program kind writes them) into out[0, capacity): the bytes
 * written, cut at capacity. */
size_t rb_cfa_instruction(uint8_t *out, size_t capacity, struct rb_rng *rng);
/* A DWARF expression rule (def_cfa_expression, expression or
 * val_expression, as the dwarf_expression kind writes it) likewise. */
size_t rb_expression_rule(uint8_t *out, size_t capacity, struct rb_rng *rng);

/* Values that break sizes and offsets: 0, edges, near, huge, random. */
uint64_t rb_odd_value(struct rb_rng *rng, uint64_t near);

/* A perf.data (file or pipe mode): "PERFILE2". */
bool rb_is_perf(const uint8_t *bytes, size_t size);

/* The kinds of formats.c (perf_*, core_note, compressed_section) on m,
 * e its ELF scan: false when the file has no place for it. */
bool rb_mutate_format(struct rb_mutant *m, const struct rb_elf *e,
                      enum rb_kind kind, struct rb_rng *rng);

/* The mutant number `index` of a seed under campaign seed `seed`: picks
 * a kind (trying others when one does not apply), writes the kind into
 * *kind. m must hold a copy of the seed with room to spare. */
void rb_make_mutant(struct rb_mutant *m, uint64_t seed, uint64_t index,
                    enum rb_kind *kind);

/* ---- running a command --------------------------------------------- */

enum rb_class {
    RB_OK,           /* exit 0 */
    RB_CLEAN,        /* a documented non-zero exit with a message */
    RB_MISMATCH,     /* diff/validate exit 1 with a report on stdout */
    RB_SILENT,       /* non-zero, nothing on stderr */
    RB_CRASH,        /* a signal or a sanitizer report */
    RB_HANG,         /* past the timeout */
    RB_BAD_EXIT,     /* an exit status the help texts do not give */
    RB_DISAGREE,     /* diff: cfisem's own engines (il, interp, compiled)
                        differ from the reference; stack: exit 1 */
    RB_WRONG_RANGE,  /* validate: wrong ranges in an eh_elf cfisem compiled */
    RB_CHILD_CRASH,  /* an own engine's child process crashed or hung:
                        diff's, validate's, unwind --engine compiled's */
    RB_NCLASSES
};

const char *rb_class_name(enum rb_class c);

enum { RB_MAX_ARGS = 32, RB_CAPTURE = 16384 };

struct rb_command {
    const char *argv[RB_MAX_ARGS + 1];  /* argv[0]: the tool */
    unsigned argc;
    const char *subcommand;             /* il, unwind, ... */
    unsigned allowed;                   /* bit s: exit status s documented */
    bool usage;                         /* the line is a usage error: only
                                           RB_EXIT_USAGE is documented */
    const char *json;                   /* the --json report it writes, read
                                           by rb_classify_report, or NULL */
    const char *stdin_path;             /* its standard input, or NULL:
                                           /dev/null */
};

/* The exit status of a usage error (cfisem --help, "Exit status"). */
enum { RB_EXIT_USAGE = 64 };

struct rb_outcome {
    int exit_code;          /* -1 when killed */
    int signal;
    bool timed_out;
    double seconds;
    char err[RB_CAPTURE + 1];
    size_t err_len;
    char out[RB_CAPTURE + 1];
    size_t out_len;
    enum rb_class cls;
};

/* Classifies a finished run of cmd by its exit status and output. */
enum rb_class rb_classify(const struct rb_command *cmd,
                          const struct rb_outcome *o);

/* The class of a diff or validate run of class `base` (ok or mismatch)
 * after its --json report report[0, len): RB_DISAGREE when an own
 * engine (il, interp, compiled) differs from the reference,
 * RB_CHILD_CRASH when one crashed or hung in its child process (diff's
 * "errors", validate's "crashes"), RB_WRONG_RANGE when validate found
 * wrong ranges other than "unsupported" ones; else `base` (an outside
 * engine's differences stay RB_MISMATCH). A report that does not parse
 * leaves `base`. */
enum rb_class rb_classify_report(const char *subcommand, enum rb_class base,
                                 const char *report, size_t len);

/* ---- the JSON reports, read just enough ------------------------------ */

/* The value after skipping the one at p, or NULL when it does not parse. */
const char *rb_json_skip(const char *p, const char *end);
/* The value of member `key` of the object at `object`, or NULL. */
const char *rb_json_member(const char *object, const char *end,
                           const char *key);
bool rb_json_u64(const char *value, const char *end, uint64_t *out);
bool rb_json_string_is(const char *value, const char *end, const char *text);
bool rb_json_string_starts(const char *value, const char *end,
                           const char *prefix);
/* The first element of the array at `array`, the one after `element`;
 * NULL at the end or on a syntax error. */
const char *rb_json_first(const char *array, const char *end);
const char *rb_json_next(const char *element, const char *end);

/* Up to RB_MAX_JOBS commands at a time, each in its own process group
 * (a timeout kills the group: compilers and diff's children too). */
enum { RB_MAX_JOBS = 8 };

struct rb_slot {
    bool busy;
    int pid;
    int out_fd, err_fd;
    double start;
    bool killed;
    struct rb_command cmd;
    void *tag;              /* the caller's */
    struct rb_outcome outcome;
};

struct rb_pool {
    struct rb_slot slots[RB_MAX_JOBS];
    unsigned jobs;
    double timeout;
    char *const *envp;
};

void rb_pool_init(struct rb_pool *pool, unsigned jobs, double timeout,
                  char *const *envp);
/* A free slot, or NULL when all are busy. */
struct rb_slot *rb_pool_free_slot(struct rb_pool *pool);
/* Starts cmd in slot; false when fork or pipe fails. */
bool rb_pool_start(struct rb_pool *pool, struct rb_slot *slot,
                   const struct rb_command *cmd, void *tag);
/* Waits for one started run to end (or time out) and returns its slot,
 * outcome classified; the slot is free again after the caller is done
 * with it (rb_pool_release). NULL when nothing runs. */
struct rb_slot *rb_pool_wait(struct rb_pool *pool);
void rb_pool_release(struct rb_slot *slot);

double rb_now(void);

#endif
