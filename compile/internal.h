/* SPDX-License-Identifier: MIT */
/* internal.h — what the files of compile/ share and nobody else sees.
 *
 * The generator's pipeline:
 *   layout.c   IL → leaves (address intervals → row bodies), rows and
 *              rule sets, each interned once (intern.c);
 *   search.c   leaves → segments → parts → the C of the search;
 *   rows.c     the C of row bodies and rule sets, for either ABI;
 *   expr.c     the C of one DWARF expression;
 *   prelude.c  the text every unit starts with;
 *   generate.c the units, cg_generate, cg_write_c.
 * build.c, elf.c, cache.c and load.c build, inspect, cache and run
 * eh_elfs. */
#ifndef CFISEM_CG_INTERNAL_H
#define CFISEM_CG_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cg.h"
#include "eh_elf.h"

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

/* A growing NUL-terminated buffer. An allocation failure sets `failed`
 * and makes every later write a no-op: callers check once, at the end. */
struct cg_text {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
};

void cg_printf(struct cg_text *text, const char *format, ...);
void cg_vprintf(struct cg_text *text, const char *format, va_list args);
void cg_puts(struct cg_text *text, const char *string);
void cg_text_free(struct cg_text *text);

/* ------------------------------------------------------------------ */
/* Interning byte strings                                               */
/* ------------------------------------------------------------------ */

/* Maps byte strings to dense indices 0, 1, 2... in order of first
 * insertion (so that output never depends on hashing order). */
struct cg_intern {
    uint8_t *blob;          /* the keys, end to end */
    size_t blob_len, blob_cap;
    size_t *key_offset;     /* per index: offset in blob, and length */
    size_t *key_len;
    size_t count, count_cap;
    uint32_t *slots;        /* open addressing: index + 1, 0 empty */
    size_t nslots;
};

/* The index of `key`, added when new (*added set). -1 when out of
 * memory. */
long cg_intern(struct cg_intern *table, const void *key, size_t len,
               bool *added);
void cg_intern_free(struct cg_intern *table);

/* Little-endian serialisation into a growing byte buffer (keys). */
struct cg_bytes {
    uint8_t *data;
    size_t len, cap;
    bool failed;
};
void cg_bytes_put(struct cg_bytes *bytes, const void *data, size_t len);
void cg_bytes_u64(struct cg_bytes *bytes, uint64_t value);

/* ------------------------------------------------------------------ */
/* Layout: leaves, rows, rule sets                                      */
/* ------------------------------------------------------------------ */

/* A leaf's target: CG_NO_FDE, or 1 + the index of a row in the layout. */
#define CG_NO_FDE 0u

/* An address interval [begin, next leaf's begin) and what it reaches. */
struct cg_leaf {
    uint64_t begin;
    uint32_t target;
    bool segment_start;     /* an FDE (or the part of one that is not
                               shadowed by another) starts here */
};

enum cg_row_kind {
    CG_ROW_RULES,           /* a row of the IL */
    CG_ROW_FAIL,            /* the FDE failed to translate */
};

/* A distinct row body. */
struct cg_row {
    enum cg_row_kind kind;
    const struct sem_row *row;   /* RULES: a row with this content */
    uint32_t ruleset;            /* RULES: its rule set */
    uint32_t head;               /* RULES, CFA reg+offset: its head */
    enum cfi_status status;      /* FAIL: the translation's error */
    uint64_t offset;             /* FAIL: its diag offset */
};

/* A distinct rule set: a row without its CFA rule, plus what its FDE's
 * CIE adds: the signal flag and the return address column (cfi.h step 6:
 * when it is not 16, the caller's rip is that column's value). */
struct cg_ruleset {
    const struct sem_row *row;
    bool signal_frame;
    bool ra_b_key;               /* AArch64: the CIE's 'B' (cfi.h step 7) */
    uint32_t ra_column;
    const struct cfi_arch *arch; /* the file's: defaults, the PC register */
    uint32_t shape;              /* parametric layout: its shape */
    uint32_t param;              /* parametric layout: its first offset in
                                    the layout's params */
};

/* A rule set's code reached from a CFA register: the register is checked
 * and the offset added once for every row with this code and register.
 * `ruleset` is a rule set's index, or in a parametric layout a shape's. */
struct cg_head {
    uint32_t ruleset;
    uint32_t reg;
};

/* The parametric layout (AArch64): rule sets that differ only in the
 * offsets of their offset and val_offset rules (each within int32_t)
 * have one shape, and one function of C per shape, which reads those
 * offsets from the data of the rule set (eh_param[param...]) that a row
 * passes it. AArch64 saves registers in pairs at CFA offsets that vary
 * with the frame's size, so that nearly every rule set is distinct: the
 * cross libc has 1,130 rule sets for 1,479 rows, and compiling one
 * function each was most of its eh_elf's build. x86-64's rule sets keep
 * their offsets as constants in code (a walk's loads then do not wait
 * for the offsets' loads). */
struct cg_layout {
    enum cg_abi abi;
    const struct cfi_arch *arch; /* the file's */
    bool parametric;
    uint32_t *shapes;       /* parametric: each shape's first rule set */
    size_t nshapes;
    int32_t *params;        /* parametric: the rule sets' offsets */
    size_t nparams;
    struct cg_intern shape_keys;
    struct cg_leaf *leaves; /* increasing begin; the last is CG_NO_FDE and
                               covers everything above the last FDE */
    size_t nleaves;
    struct cg_row *rows;
    size_t nrows;
    struct cg_ruleset *rulesets;
    size_t nrulesets;
    struct cg_head *heads;
    size_t nheads;
    struct cg_intern row_keys;
    struct cg_intern ruleset_keys;
    struct cg_intern head_keys;
};

enum cfi_status cg_layout_build(const struct sem_file_il *il, enum cg_abi abi,
                                struct cg_layout *layout,
                                struct cfi_diag *diag);
void cg_layout_free(struct cg_layout *layout);

/* Whether the rule of a register can make unwinding fail; the value of a
 * register past the reported ones (arch->nreported) is never reported,
 * so only such rules matter for it. */
/* v1: the column whose rule gives the caller's rip (the return address
 * column; 16 for a column the reference does not apply, >= CFI_NREGS). */
uint32_t cg_v1_return_column(uint64_t ra_column);
bool cg_rule_can_fail(enum sem_rule_kind kind);
/* Whether a rule's offset is a parameter of its shape (parametric). */
bool cg_param_offset(const struct sem_rule *rule);

/* ------------------------------------------------------------------ */
/* Emitting C                                                           */
/* ------------------------------------------------------------------ */

/* Expressions already emitted in one unit (each is a static function of
 * that unit, emitted once). */
struct cg_expr_set {
    unsigned unit;          /* the unit's number, part of every name */
    struct cg_intern keys;  /* push_cfa byte + expression bytes */
    size_t emitted;         /* how many of keys are in `text` */
};

/* Emits (into `text`, once per unit) the static function computing
 * `expr` and returns its number in the set, or -1 when out of memory.
 * Its name is eh_x<unit>_<number>. */
long cg_emit_expr(struct cg_text *text, struct cg_expr_set *set,
                  const struct sem_expr *expr, bool push_cfa);

/* The functions of row bodies (rows.c): eh_rules_<n>(cfa, in, env, f)
 * for a rule set, eh_head_<n>(off, in, env, f) for a CFA register and a
 * rule set, eh_row_<n>(pc, in, env, f) for a row; each preceded by the
 * expression functions it calls that the unit does not have yet. */
void cg_emit_rules(struct cg_text *text, struct cg_expr_set *exprs,
                   const struct cg_layout *layout, size_t ruleset);
void cg_emit_head(struct cg_text *text, const struct cg_layout *layout,
                  size_t head);
void cg_emit_row(struct cg_text *text, struct cg_expr_set *exprs,
                 const struct cg_layout *layout, size_t row);
/* The number of eh_rules_<n> functions: rule sets, or shapes in a
 * parametric layout; the C of their parameter list after `f`, and the
 * declaration of eh_param that rows need (empty when not parametric). */
size_t cg_rule_bodies(const struct cg_layout *layout);
/* The eh_rules_<n> a row with rules reaches: n. */
uint32_t cg_row_code(const struct cg_layout *layout, const struct cg_row *row);
const char *cg_param_decl(const struct cg_layout *layout);
void cg_emit_param_extern(struct cg_text *text,
                          const struct cg_layout *layout);
/* The definition of eh_param (in the main unit). */
void cg_emit_params(struct cg_text *text, const struct cg_layout *layout);

/* The search: parts (one function each) and the dispatch over them. */
struct cg_search;
enum cfi_status cg_search_build(const struct cg_layout *layout,
                                struct cg_search **search);
void cg_search_free(struct cg_search *search);
size_t cg_search_parts(const struct cg_search *search);
size_t cg_search_nodes(const struct cg_search *search);
/* The body of part `part`'s function, eh_part_<part>. */
void cg_emit_part(struct cg_text *text, const struct cg_search *search,
                  size_t part);
/* `static int eh_search(...)`: the range check and the dispatch. */
void cg_emit_dispatch(struct cg_text *text, const struct cg_search *search);

/* The table layout's search (table.c): the arrays, the row switch and
 * `static int eh_search(...)`. false when out of memory. */
bool cg_emit_table_search(struct cg_text *text, const struct cg_layout *layout);

/* The prelude of every unit of the given ABI, for file `name` of
 * machine `arch`. */
void cg_emit_prelude(struct cg_text *text, enum cg_abi abi,
                     const struct cfi_arch *arch, const char *name);

/* C literals. */
void cg_emit_u64(struct cg_text *text, uint64_t value); /* UINT64_C(0x..) */

/* ------------------------------------------------------------------ */
/* ELF inspection (elf.c)                                               */
/* ------------------------------------------------------------------ */

/* Whether the ELF file at `path` defines the dynamic symbol `name`.
 * CFI_E_IO / CFI_E_NOT_ELF when the file cannot be read or is not a
 * 64-bit little-endian ELF file. */
enum cfi_status cg_elf_has_symbol(const char *path, const char *name,
                                  bool *found, struct cfi_diag *diag);

/* The ELF header's e_machine of the file at `path`. Errors as
 * cg_elf_has_symbol. */
enum cfi_status cg_elf_machine(const char *path, unsigned *machine,
                               struct cfi_diag *diag);

/* A loaded eh_elf: one of the two entry points is set, or, for an eh_elf
 * of another machine than the host's, `remote`. */
struct cg_eh_elf {
    void *handle;
    enum cg_abi abi;
    eh_elf_unwind_fn *unwind;
    eh_elf_v1_fn *unwind_v1;
    struct cg_remote *remote;
};

/* ------------------------------------------------------------------ */
/* An eh_elf of another machine (remote.c)                              */
/* ------------------------------------------------------------------ */

/* The eh_elf runner for the AArch64 eh_elf at `path`, started and
 * ready. Errors (CFI_E_UNSUPPORTED), each with its own message: no
 * qemu-aarch64, no AArch64 C library, no runner, the runner could not
 * load or accept the eh_elf (not ours, another version or machine). */
struct cg_remote;
enum cfi_status cg_remote_open(const char *path, struct cg_remote **remote,
                               struct cfi_diag *diag);
void cg_remote_close(struct cg_remote *remote);
/* cg_unwind's contract, the eh_elf run by the runner. */
enum cfi_status cg_remote_unwind(struct cg_remote *remote,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame);

/* A frame for the eh_elf's error `error` (unwind.c: every field set). */
enum cfi_status cg_frame_error(struct cfi_frame *frame, uint32_t error,
                               int32_t error_reg, uint64_t error_offset);

/* Seconds of a monotonic clock. */
double cg_now(void);

#endif
