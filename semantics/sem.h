/* SPDX-License-Identifier: MIT */
/* sem.h — the formal semantics of DWARF call frame information.
 *
 * This module promises:
 *   1. a decoder from instruction bytes to a list of instructions
 *      (sem_decode), with every operand bounds-checked;
 *   2. the translator from instructions to the intermediate language (IL)
 *      of rows (sem_translate_fde), one function per rule;
 *   3. printers of the IL (text, json, readelf) and a parser of the text
 *      format, such that print → parse → print is the identity.
 *
 * The IL (DESIGN.md):
 *
 *   fde      ::= (begin, end, row)*   increasing, no gaps, covering the FDE
 *   row      ::= cfa_rule × (reg → rule)
 *   cfa_rule ::= reg + off | expr(bytes)
 *   rule     ::= undefined | same_value
 *              | addr(cfa + off) | val(cfa + off)
 *              | reg(r)
 *              | addr(expr) | val(expr)
 *
 * This module shares nothing with interp/ but the types of cfi/.
 */
#ifndef CFISEM_SEM_H
#define CFISEM_SEM_H

#include <stdio.h>

#include "../cfi/cfi.h"

/* ------------------------------------------------------------------ */
/* Instructions                                                         */
/* ------------------------------------------------------------------ */

/* Every DW_CFA opcode in scope: X(name, number, operand shape). The three
 * opcodes with an operand in their low six bits are listed with their high
 * bits (advance_loc 0x40, offset 0x80, restore 0xc0). Shapes:
 *   NONE    no operand
 *   DELTA   address delta, factored by the code alignment factor
 *   ADDR    an address (encoded pointer in .eh_frame)
 *   REG     a register
 *   REG_REG two registers
 *   REG_UOFF register, unsigned offset factored by the data alignment
 *   REG_SOFF register, signed offset factored by the data alignment
 *   REG_NOFF register, unsigned offset, factored and negated
 *   REG_ROFF register, unsigned offset not factored (def_cfa)
 *   REG_SFOFF register, signed offset factored (def_cfa_sf)
 *   UOFF    unsigned offset not factored (def_cfa_offset)
 *   SOFF    signed offset factored (def_cfa_offset_sf)
 *   ULEB    an unsigned number with no unit (GNU_args_size)
 *   ULEB_CODE an unsigned number, then a signed code offset factored by
 *           the code alignment factor (AARCH64_set_ra_state)
 *   EXPR    a DWARF expression
 *   REG_EXPR register and a DWARF expression */
#define SEM_CFA_OPCODES(X)                                         \
    X(nop, 0x00, NONE)                                              \
    X(set_loc, 0x01, ADDR)                                          \
    X(advance_loc1, 0x02, DELTA)                                    \
    X(advance_loc2, 0x03, DELTA)                                    \
    X(advance_loc4, 0x04, DELTA)                                    \
    X(offset_extended, 0x05, REG_UOFF)                              \
    X(restore_extended, 0x06, REG)                                  \
    X(undefined, 0x07, REG)                                         \
    X(same_value, 0x08, REG)                                        \
    X(register, 0x09, REG_REG)                                      \
    X(remember_state, 0x0a, NONE)                                   \
    X(restore_state, 0x0b, NONE)                                    \
    X(def_cfa, 0x0c, REG_ROFF)                                      \
    X(def_cfa_register, 0x0d, REG)                                  \
    X(def_cfa_offset, 0x0e, UOFF)                                   \
    X(def_cfa_expression, 0x0f, EXPR)                               \
    X(expression, 0x10, REG_EXPR)                                   \
    X(offset_extended_sf, 0x11, REG_SOFF)                           \
    X(def_cfa_sf, 0x12, REG_SFOFF)                                  \
    X(def_cfa_offset_sf, 0x13, SOFF)                                \
    X(val_offset, 0x14, REG_UOFF)                                   \
    X(val_offset_sf, 0x15, REG_SOFF)                                \
    X(val_expression, 0x16, REG_EXPR)                               \
    X(MIPS_advance_loc8, 0x1d, DELTA)                               \
    X(AARCH64_set_ra_state, 0x2b, ULEB_CODE)                        \
    X(AARCH64_negate_ra_state_with_pc, 0x2c, NONE)                  \
    X(GNU_window_save, 0x2d, NONE)                                  \
    X(GNU_args_size, 0x2e, ULEB)                                    \
    X(GNU_negative_offset_extended, 0x2f, REG_NOFF)                 \
    X(advance_loc, 0x40, DELTA)                                     \
    X(offset, 0x80, REG_UOFF)                                       \
    X(restore, 0xc0, REG)

enum sem_opcode {
#define SEM_OPCODE_ENUM(name, number, shape) SEM_CFA_##name = number,
    SEM_CFA_OPCODES(SEM_OPCODE_ENUM)
#undef SEM_OPCODE_ENUM
};

/* "def_cfa_offset", or NULL for a number that is no opcode. */
const char *sem_opcode_name(unsigned opcode);

/* A DWARF expression: bytes owned by whoever owns the instruction bytes
 * (the cfi_file) or by the IL that holds it (parsed text). */
struct sem_expr {
    const uint8_t *bytes;
    uint32_t len;
};

/* One decoded instruction. Operands are already scaled: `offset` by the
 * data alignment factor where the opcode says so, `delta` by the code
 * alignment factor. */
struct sem_insn {
    enum sem_opcode opcode;
    bool in_cie;          /* from the CIE's initial instructions */
    uint64_t at;          /* byte offset in its program */
    uint32_t reg;         /* REG*, first register */
    uint32_t reg2;        /* REG_REG: the second register */
    int64_t offset;       /* *OFF; ULEB_CODE: the code offset */
    uint64_t delta;       /* DELTA: bytes to advance */
    uint64_t address;     /* ADDR: the new location */
    uint64_t number;      /* ULEB, ULEB_CODE */
    struct sem_expr expr; /* EXPR, REG_EXPR */
};

struct sem_program {
    struct sem_insn *insns;
    size_t count;
    size_t capacity;
};

/* Where a program comes from: its alignment factors and, for set_loc, how
 * an address operand is encoded and where the bytes are. */
struct sem_decode_env {
    uint64_t code_align;
    int64_t data_align;
    enum cfi_section section;
    uint8_t address_size;
    uint8_t pointer_encoding;  /* the CIE's 'R' encoding */
    uint64_t bytes_addr;       /* file address of bytes[0] (pcrel) */
    bool in_cie;
    /* The architecture, which says whether the vendor opcodes 0x2b and
     * 0x2c exist (AArch64): elsewhere they are unknown opcodes. NULL:
     * none of them. */
    const struct cfi_arch *arch;
};

/* Decodes `len` bytes, appending to *program. On error returns
 * CFI_E_MALFORMED (truncated operand, LEB128 overflow, unknown opcode,
 * register number >= CFI_NREGS, scaled operand overflow) or
 * CFI_E_UNSUPPORTED (an encoding we do not read), with diag->offset the
 * byte offset in `bytes` of the faulty instruction; CFI_E_INTERNAL for a
 * state no input reaches (cfi.h). */
enum cfi_status sem_decode(const uint8_t *bytes, size_t len,
                           const struct sem_decode_env *env,
                           struct sem_program *program,
                           struct cfi_diag *diag);
void sem_program_free(struct sem_program *program);

/* ------------------------------------------------------------------ */
/* The intermediate language                                            */
/* ------------------------------------------------------------------ */

/* The rule of a register in a row. UNSPECIFIED ("no rule") is kept apart
 * from UNDEFINED: the ABI default applies only to UNSPECIFIED, when a
 * register is looked up. */
enum sem_rule_kind {
    SEM_RULE_UNSPECIFIED = 0, /* no rule: the ABI default applies */
    SEM_RULE_UNDEFINED,       /* DW_CFA_undefined: not recoverable */
    SEM_RULE_SAME_VALUE,      /* DW_CFA_same_value: caller's = callee's */
    SEM_RULE_OFFSET,          /* addr(cfa + offset) */
    SEM_RULE_VAL_OFFSET,      /* val(cfa + offset) */
    SEM_RULE_REGISTER,        /* reg(r): caller's = callee's register r */
    SEM_RULE_EXPRESSION,      /* addr(expr), CFA pushed first */
    SEM_RULE_VAL_EXPRESSION,  /* val(expr), CFA pushed first */
};

struct sem_rule {
    enum sem_rule_kind kind;
    uint32_t reg;           /* REGISTER */
    int64_t offset;         /* OFFSET, VAL_OFFSET */
    struct sem_expr expr;   /* EXPRESSION, VAL_EXPRESSION */
};

/* The CFA rule. INVALID: no CFA rule has been given yet. */
enum sem_cfa_kind {
    SEM_CFA_RULE_INVALID = 0,
    SEM_CFA_RULE_REG_OFFSET,  /* reg + offset */
    SEM_CFA_RULE_EXPR,        /* value of expr, nothing pushed first */
};

struct sem_cfa {
    enum sem_cfa_kind kind;
    uint32_t reg;
    int64_t offset;
    struct sem_expr expr;
};

/* A register and its rule, for the sparse form of a row. */
struct sem_reg_rule {
    uint32_t reg;
    struct sem_rule rule;
};

/* A row holds rules only: the CFA rule, and the rule of every register that
 * has one, sorted by register number (UNSPECIFIED rules are absent). */
struct sem_row {
    struct sem_cfa cfa;
    uint32_t nrules;
    const struct sem_reg_rule *rules;
};

/* The rule of `reg` in `row` (UNSPECIFIED when absent). Binary search. */
struct sem_rule sem_row_rule(const struct sem_row *row, unsigned reg);

/* One row of an FDE's table and the addresses it covers, [begin, end). */
struct sem_range {
    uint64_t begin;
    uint64_t end;
    const struct sem_row *row;
};

/* The IL of one FDE: its ranges, in increasing order, covering
 * [fde->pc_begin, fde->pc_end) with no gap and no empty range. An FDE with
 * an empty PC range has no ranges. */
struct sem_fde_il {
    const struct cfi_fde *fde;
    struct sem_range *ranges;
    size_t nranges;
};

/* The range that holds pc, or NULL. Binary search. */
const struct sem_range *sem_fde_il_find(const struct sem_fde_il *il,
                                        uint64_t pc);

/* ------------------------------------------------------------------ */
/* Translation DWARF → IL                                               */
/* ------------------------------------------------------------------ */

/* Bound on nested remember_state. */
#define SEM_REMEMBER_MAX 64

/* Memory for IL: rows, rules and parsed expressions. One arena may hold
 * the IL of many FDEs; freeing it frees them all. */
struct sem_arena;
struct sem_arena *sem_arena_new(void);
void sem_arena_free(struct sem_arena *arena);

/* Translates the CIE's initial instructions and the FDE's instructions
 * into *il, allocating in `arena`. On error diag->offset is the section
 * offset of the faulty instruction (of the record for an FDE-level error)
 * and diag->message a fixed text. Errors:
 *   CFI_E_MALFORMED   decoding errors; restore_state with an empty stack;
 *                     remember stack deeper than SEM_REMEMBER_MAX;
 *                     def_cfa_offset / def_cfa_register when the CFA is not
 *                     reg+offset; a location going backwards or past the
 *                     FDE's end; a location change or restore in the CIE;
 *   CFI_E_UNSUPPORTED GNU_window_save (no meaning on x86-64), an address
 *                     encoding we do not read;
 *   CFI_E_INTERNAL    a state no input reaches (cfi.h): cfisem is wrong. */
enum cfi_status sem_translate_fde(const struct cfi_fde *fde,
                                  struct sem_arena *arena,
                                  struct sem_fde_il *il,
                                  struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Printing and parsing                                                 */
/* ------------------------------------------------------------------ */

/* Text format, one range per line:
 *   [0x27280,0x27282)  cfa=rsp+8  rbx=[cfa-16]  rip=[cfa-8]
 * Rules: undef, same, [cfa+N] (stored at), cfa+N (the value), a register
 * name (register rule), [expr(OPS)] (stored at), expr(OPS) (the value),
 * with OPS the disassembled DW_OP list, "; "-separated. The CFA is rsp+8 or
 * expr(OPS), or "undef" when the row has no CFA rule. */
void sem_print_range_text(FILE *out, const struct cfi_arch *arch,
                          const struct sem_range *range);
/* The same line as a string, without its end of line; malloc'd, NULL
 * when out of memory. */
char *sem_range_text(const struct cfi_arch *arch,
                     const struct sem_range *range);
void sem_print_fde_text(FILE *out, const struct sem_fde_il *il);

/* Disassembles an expression: "breg7 160; deref". Undecodable bytes are
 * printed as "data 0a0b" and end the listing. */
void sem_print_expr(FILE *out, const struct sem_expr *expr);

/* JSON and readelf formats for a whole file: printers are called once per
 * FDE between a begin and an end call. */
struct sem_printer;
enum sem_format { SEM_FORMAT_TEXT, SEM_FORMAT_JSON, SEM_FORMAT_READELF };
struct sem_printer *sem_printer_new(FILE *out, enum sem_format format,
                                    const char *file_name,
                                    const struct cfi_arch *arch);
void sem_printer_fde(struct sem_printer *printer, const struct sem_fde_il *il);
/* Names the function that holds `addr` ("name" or "name+0x12") into
 * buf, or returns NULL when none does. */
typedef const char *(*sem_function_namer)(void *env, uint64_t addr,
                                          char *buf, size_t size);
/* With a namer, the text format's FDE header gives the function that
 * holds the FDE's first address after its range ("[0x1000,0x1040)
 * <main> aug=..."), and JSON a "function" member after "end"; the
 * readelf format stays readelf's. */
void sem_printer_name_functions(struct sem_printer *printer,
                                sem_function_namer namer, void *env);
/* An FDE whose translation failed, with the diagnostic: JSON prints its
 * object with "error" and no rows, readelf its header line only, text
 * nothing (the caller reports it on stderr). */
void sem_printer_fde_error(struct sem_printer *printer,
                           const struct cfi_fde *fde,
                           const struct cfi_diag *diag);
void sem_printer_end(struct sem_printer *printer); /* frees it */
/* The pieces of the JSON format, for other documents that show rules as
 * data: a row {"begin", "end", "cfa", "regs": {"N": RULE}} (unspecified
 * rules left out), a CFA rule {"reg", "offset"} | {"expr": HEX} | null,
 * a rule {"rule": KIND, "offset" | "reg" | "expr"} (KIND unspecified,
 * undefined, same_value, offset, val_offset, register, expression,
 * val_expression). */
void sem_print_range_json(FILE *out, const struct sem_range *range);
void sem_print_cfa_json(FILE *out, const struct sem_cfa *cfa);
void sem_print_rule_json(FILE *out, const struct sem_rule *rule);

/* Parses one line of the text format into *range (row allocated in
 * `arena`). Returns CFI_E_MALFORMED with diag->offset the column. */
enum cfi_status sem_parse_range_text(const char *line,
                                     const struct cfi_arch *arch,
                                     struct sem_arena *arena,
                                     struct sem_range *range,
                                     struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Evaluation: unwinding one frame from the IL                          */
/* ------------------------------------------------------------------ */

/* Applies `row` to the callee's registers: the CFA, then every register's
 * rule, as cfi.h defines "unwinding one frame" (steps 4 and 5), a
 * register with no rule taking the ABI default of `arch`. A pure
 * function of (row, callee registers, memory). */
enum cfi_status sem_eval_row(const struct cfi_arch *arch,
                             const struct sem_row *row,
                             const struct cfi_regs *callee,
                             struct cfi_memory memory,
                             struct cfi_frame *frame);

/* cfi.h step 6: the caller's PC (arch->pc) is the return address
 * column's value, when the CIE's column is another register (after
 * sem_eval_row), with its pointer-authentication code stripped to
 * `va_bits` when the row's RA_SIGN_STATE says it is signed. */
void sem_apply_return_column(const struct cfi_arch *arch,
                             struct cfi_frame *frame, unsigned ra_column,
                             unsigned va_bits);

/* Whether evaluating the expression may read the callee's register `reg`
 * (DW_OP_breg*, DW_OP_bregx), and whether applying the row may: its CFA
 * rule, a rule reading it (register, same_value of itself, an expression)
 * or its ABI default (same value). */
/* Whether two CFA rules, or two register rules, are the same rule: the
 * same kind and operands (an expression's bytes compared). */
bool sem_cfa_equal(const struct sem_cfa *a, const struct sem_cfa *b);
bool sem_rule_equal(const struct sem_rule *a, const struct sem_rule *b);

bool sem_expr_reads_register(const struct sem_expr *expr, unsigned reg);
/* Every operation of the expression decodes (none unknown, no operand
 * cut off by its end). */
bool sem_expr_decodes(const struct sem_expr *expr);
bool sem_row_reads_register(const struct cfi_arch *arch,
                            const struct sem_row *row, unsigned reg);

/* Evaluates a DWARF expression (cfi.h's rules), the stack holding
 * `initial` first when has_initial. On error diag->offset is the byte
 * offset in `expr` of the failing operation (cfi.h, struct cfi_frame). */
enum cfi_status sem_eval_expr(const struct sem_expr *expr,
                              const struct cfi_regs *callee,
                              struct cfi_memory memory, bool has_initial,
                              uint64_t initial, uint64_t *result,
                              struct cfi_diag *diag);

/* The IL of every FDE of a file, translated once. Index i is the IL of
 * file->fdes[i]; an FDE that failed to translate keeps its status. */
struct sem_file_il {
    const struct cfi_file *file;
    struct sem_arena *arena;
    struct sem_fde_il *fdes;
    enum cfi_status *status;
    struct cfi_diag *diags;
    size_t nfdes;
    size_t nfailed;
};
enum cfi_status sem_file_il_build(const struct cfi_file *file,
                                  struct sem_file_il **il);
void sem_file_il_free(struct sem_file_il *il);

/* Unwinds one frame with prepared IL: steps 1 to 6 of cfi.h. */
enum cfi_status sem_unwind(const struct sem_file_il *il,
                           const struct cfi_request *request,
                           struct cfi_frame *frame);

/* The IL of the FDE asked last, kept between requests: sem_unwind_memo
 * translates an FDE when it is asked after another, so that one request
 * costs one FDE's translation, not the file's, and requests grouped by
 * FDE (the diff harness's) translate each FDE once. */
struct sem_memo;
struct sem_memo *sem_memo_new(void);
void sem_memo_free(struct sem_memo *memo);

/* sem_unwind's answer, with the IL of the FDE that covers the lookup PC
 * kept in *memo rather than the file's IL built beforehand. */
enum cfi_status sem_unwind_memo(const struct cfi_file *file,
                                const struct cfi_request *request,
                                struct cfi_frame *frame,
                                struct sem_memo *memo);

/* Unwinds one frame with one FDE, translating it on the way (tests,
 * fuzzing). A lookup PC outside the FDE is CFI_E_NO_FDE. */
enum cfi_status sem_unwind_fde(const struct cfi_fde *fde,
                               const struct cfi_request *request,
                               struct cfi_frame *frame);

/* ------------------------------------------------------------------ */
/* Tracing: the derivation as it is computed                            */
/* ------------------------------------------------------------------ */

/* A trace sink is told, as the translator applies each instruction and
 * emits each range, and as the evaluator computes the CFA, each register
 * and each DWARF expression operation, what it did. The events come from
 * the functions that compute the result, so a trace shows what was
 * computed, not a second reading of the bytes. Every callback may be
 * NULL; a NULL sink costs one pointer test per step. Pointers in an event
 * are valid during the call only, except rows, which live in the arena
 * the caller gave. */

/* The column of the CFA in the `changed` set of struct sem_trace_insn. */
#define SEM_TRACE_CFA_COLUMN CFI_NREGS

/* One instruction applied, or the decoding error that ended a program
 * (then insn is NULL, rule NULL, and status/diag say what is wrong). */
struct sem_trace_insn {
    const struct sem_insn *insn;
    bool in_cie;
    uint64_t section_offset;       /* of the instruction's first byte */
    const uint8_t *bytes;          /* its raw bytes */
    size_t len;
    const char *rule;              /* "rule_def_cfa_offset" */
    uint64_t loc;                  /* the location it applies at (FDE) */
    uint64_t loc_after;
    enum cfi_status status;        /* CFI_OK, or the error it raised */
    const struct cfi_diag *diag;   /* when status != CFI_OK */
    /* The row before and after (rules indexed by register). */
    const struct sem_cfa *cfa_before, *cfa_after;
    const struct sem_rule *rules_before, *rules_after; /* [CFI_NREGS] */
    size_t depth;                  /* remembered rows, after it */
};

/* The CFA computed (cfi.h step 4). */
struct sem_trace_cfa {
    const struct sem_cfa *cfa;
    bool has_base;                 /* reg+offset and the register read */
    uint64_t base;                 /* the callee's register value */
    enum cfi_status status;
    const struct cfi_diag *diag;
    uint64_t value;                /* the CFA, when status is CFI_OK */
};

/* One register's caller value (cfi.h step 5), from its rule or, when
 * rule->kind is SEM_RULE_UNSPECIFIED, from the ABI default. */
struct sem_trace_reg {
    unsigned reg;
    const struct sem_rule *rule;
    enum cfi_abi_default abi_default; /* UNSPECIFIED rules */
    bool has_address;              /* OFFSET, EXPRESSION: where it was read */
    uint64_t address;
    enum cfi_status status;
    const struct cfi_diag *diag;
    uint8_t caller_status;         /* enum cfi_reg_status, when CFI_OK */
    uint64_t caller_value;
};

/* One DWARF expression operation executed, with the stack after it
 * (stack[depth-1] is the top). start: no operation yet, the stack as the
 * expression begins (the CFA pushed, or empty). */
struct sem_trace_op {
    const struct sem_expr *expr;
    bool start;
    size_t at;                     /* byte offset of the operation */
    size_t next;                   /* where the next one starts */
    const uint64_t *stack;
    unsigned depth;
    enum cfi_status status;
    const struct cfi_diag *diag;
};

/* The row chosen for a lookup (cfi.h steps 1 and 3). range is NULL when
 * no range holds the lookup PC. */
struct sem_trace_lookup {
    uint64_t pc;
    bool caller_frame;
    uint64_t lookup_pc;            /* pc, or pc - 1 for a return address */
    const struct sem_range *range;
};

struct sem_trace {
    void *env;
    void (*insn)(void *env, const struct sem_trace_insn *event);
    void (*range)(void *env, const struct sem_range *range);
    void (*lookup)(void *env, const struct sem_trace_lookup *event);
    void (*cfa)(void *env, const struct sem_trace_cfa *event);
    void (*reg)(void *env, const struct sem_trace_reg *event);
    void (*op)(void *env, const struct sem_trace_op *event);
};

/* sem_translate_fde, telling `trace` (may be NULL) each step. On error
 * the ranges emitted before it were reported, and their rows stay in
 * `arena`. */
enum cfi_status sem_translate_fde_traced(const struct cfi_fde *fde,
                                         struct sem_arena *arena,
                                         struct sem_fde_il *il,
                                         struct cfi_diag *diag,
                                         const struct sem_trace *trace);

/* sem_unwind_fde, translating into the caller's arena and telling `trace`
 * each step of the translation and the evaluation. The result is the
 * one sem_unwind gives for a file whose lookup finds `fde`. */
enum cfi_status sem_unwind_fde_traced(const struct cfi_fde *fde,
                                      const struct cfi_request *request,
                                      struct sem_arena *arena,
                                      struct cfi_frame *frame,
                                      const struct sem_trace *trace);

/* The name of the function of translate.c that applies `opcode`
 * ("rule_offset"), or NULL. */
const char *sem_rule_name(enum sem_opcode opcode);

/* A rule in the notation of translate.c: "addr(cfa-16)", "reg(rbx)",
 * "val(E)" with E the disassembled expression; an UNSPECIFIED rule is
 * "none". A CFA rule: "rsp+16", "expr(breg7 8; deref)", "none".
 * Registers are named as `arch` names them. */
void sem_print_rule_notation(FILE *out, const struct cfi_arch *arch,
                             const struct sem_rule *rule);
void sem_print_cfa_notation(FILE *out, const struct cfi_arch *arch,
                            const struct sem_cfa *cfa);

/* Disassembles the one operation of `expr` at byte `at` ("breg7 8"), or
 * "data HEX" when it does not decode. */
void sem_print_expr_op(FILE *out, const struct sem_expr *expr, size_t at);

#endif
