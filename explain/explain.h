/* SPDX-License-Identifier: MIT */
/* explain.h — the explain module's public header: the derivation of one
 * frame (the model) and its renderers, for `cfisem explain` (cli/).
 *
 * model.c runs the question through semantics/ with a trace sink and
 * keeps what the sink was told (struct explanation); it calls no
 * renderer. doc.c turns an explanation into sections of headings, lines
 * and tables; render.c prints those in text, markdown, latex or html;
 * html.c lays out the html page and svg.c draws its frame; json.c
 * prints the explanation as one JSON object; text.c holds the texts
 * they share. Nothing here computes CFI: every rule, row and value comes
 * from an event of the trace. */
#ifndef CFISEM_EXPLAIN_EXPLAIN_H
#define CFISEM_EXPLAIN_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"
#include "semantics/sem.h"

/* ------------------------------------------------------------------ */
/* The question                                                         */
/* ------------------------------------------------------------------ */

/* The state the frame is unwound in: the callee's registers (has_regs:
 * given on the command line), and what tells the parts of the memory
 * model apart in the reads the evaluation makes (engines/memory.h's
 * order): the faulting ranges, the dump. */
#define EX_MAX_FAULTS 16
struct ex_fault {
    uint64_t begin, end;
};
struct ex_state {
    struct cfi_regs callee;
    bool has_regs;
    bool has_dump;
    uint64_t dump_addr, dump_len;
    struct ex_fault faults[EX_MAX_FAULTS];
    size_t nfaults;
};

/* ------------------------------------------------------------------ */
/* What the trace said                                                  */
/* ------------------------------------------------------------------ */

/* A memory read, and what answered it. */
struct ex_read {
    uint64_t address;
    unsigned size;
    enum cfi_status status;
    uint64_t value;
    const char *source; /* "file segment", "dump", "synthetic", "fault" */
};

/* One expression operation executed (or the starting stack). */
struct ex_op {
    const struct sem_expr *expr;
    bool start;
    size_t at, next;
    uint64_t stack[CFI_EXPR_STACK_MAX];
    unsigned depth;
    enum cfi_status status;
    const char *message;
    size_t first_read, nreads;
};

/* The column a rule was set in: a register, or the CFA. */
#define EX_CFA SEM_TRACE_CFA_COLUMN
#define EX_NCOLUMNS (CFI_NREGS + 1)

/* One instruction applied, or the decoding error that ended a program. */
struct ex_insn {
    bool decode_error;
    struct sem_insn insn;
    bool in_cie;
    uint64_t section_offset;
    const uint8_t *bytes;
    size_t len;
    const char *rule;
    uint64_t loc, loc_after;
    enum cfi_status status;
    struct cfi_diag diag;
    size_t depth_before, depth;
    /* The columns it changed, and their rules after it. */
    size_t nchanged;
    unsigned *changed;          /* columns, EX_CFA for the CFA */
    struct sem_rule *rules;     /* [nchanged]: the register rules */
    struct sem_cfa cfa;         /* the CFA rule after, when changed */
};

/* Where a column's rule in a row came from: the index of the instruction
 * that last changed it, or EX_ORIGIN_NONE (the ABI default). */
#define EX_ORIGIN_NONE (-1)

/* A range of the table, with the instruction that emitted it (index into
 * insns, or ninsns for the final emit) and each column's origin. */
struct ex_range {
    struct sem_range range;
    size_t emitted_at;
    int origin[EX_NCOLUMNS];
};

/* The CFA or one register, evaluated. */
struct ex_value {
    bool present;
    const struct sem_rule *rule;     /* registers */
    enum cfi_abi_default abi_default;
    bool has_base;                   /* CFA reg+offset */
    uint64_t base;
    bool has_address;
    uint64_t address;
    enum cfi_status status;
    struct cfi_diag diag;
    uint8_t caller_status;
    uint64_t value;
    size_t first_op, nops;
    size_t first_read, nreads;
};

struct explanation {
    const char *path;
    const struct cfi_file *file;
    const struct cfi_fde *fde;      /* NULL: no FDE covers the lookup PC */
    uint64_t pc;
    const char *function;           /* the function symbol that holds pc,
                                       "name+0x12" (the caller's); NULL */
    bool caller;
    uint64_t lookup_pc;
    const struct ex_state *state;

    struct ex_insn *insns;
    size_t ninsns, insns_capacity;
    struct ex_range *ranges;
    size_t nranges, ranges_capacity;
    int origin_now[EX_NCOLUMNS];
    size_t depth_now;

    bool has_lookup;
    struct sem_trace_lookup lookup;
    const struct sem_range *row;    /* the chosen range, when found */
    size_t row_index;

    struct ex_value cfa;
    struct ex_value regs[CFI_NREGS];
    struct ex_op *ops;
    size_t nops, ops_capacity;
    struct ex_read *reads;
    size_t nreads, reads_capacity;
    size_t ops_pending, reads_pending; /* first not yet claimed */

    struct cfi_frame frame;
    unsigned va_bits;               /* of the request: step 6's strip */
    bool out_of_memory;
};

/* The architecture the file's CFI means (its descriptor: register
 * names, ABI defaults, the return address column and the PC). */
const struct cfi_arch *ex_arch(const struct explanation *e);

/* Whether the caller's PC is another column's value (the CIE's return
 * address column is not the PC register: AArch64's x30), and the
 * va_bits its pointer-authentication code is stripped to. */
bool ex_pc_from_return_column(const struct explanation *e);

/* Runs the question of *e (path, file, pc, caller, state set, the rest
 * zero) through semantics/ with `memory`, keeping the trace in *e. */
void ex_explain(struct explanation *e, struct cfi_memory memory,
                struct sem_arena *arena);
/* Frees what ex_explain allocated in *e (not e itself). */
void ex_explanation_free(struct explanation *e);

/* ------------------------------------------------------------------ */
/* Documents: what every format but json prints                          */
/* ------------------------------------------------------------------ */

enum ex_format { EX_TEXT, EX_MARKDOWN, EX_LATEX, EX_JSON, EX_HTML };

/* A renderer: text is aligned for a terminal (colour when `colour`),
 * markdown a walk-through, latex a fragment for \input, html a whole
 * page. */
struct ex_renderer;
struct ex_renderer *ex_renderer_new(FILE *out, enum ex_format format,
                                    bool colour);
void ex_heading(struct ex_renderer *r, const char *text);
void ex_line(struct ex_renderer *r, const char *text);
/* A table: `ncols` headers, then rows of ncols cells, or notes (a line
 * across the table: `kind` "mark" for the lookup PC, "error"). */
void ex_table_begin(struct ex_renderer *r, size_t ncols,
                    const char *const *headers);
void ex_table_row(struct ex_renderer *r, char *const *cells);
void ex_table_note(struct ex_renderer *r, const char *kind, const char *text);
void ex_table_end(struct ex_renderer *r);
/* Preformatted text (the result, as `unwind` prints it). */
void ex_pre(struct ex_renderer *r, const char *text);
/* Ends the document and frees the renderer; false if out of memory. */
bool ex_renderer_end(struct ex_renderer *r);

/* Where the program listing marks the lookup PC: the index of the
 * instruction before which the row holding it is complete, with that row
 * (NULL when the program failed before emitting it); SIZE_MAX for no
 * mark. */
size_t ex_lookup_mark(const struct explanation *e,
                      const struct sem_range **range);

/* The function's machine code, for the html page. The caller decodes it
 * (explain/ holds no disassembler): one entry per instruction of the
 * FDE's range, by address. unreadable, when not NULL, says why there is
 * no listing (the file holds no bytes for the range); stopped_at < the
 * FDE's end: decoding stopped there (an undecodable byte). */
struct ex_machine_insn {
    uint64_t addr;
    unsigned len;
    const uint8_t *bytes;
    const char *text;          /* "push rbp" */
};
struct ex_machine_code {
    const struct ex_machine_insn *insns;
    size_t count;
    const char *unreadable;
    uint64_t stopped_at;
};

/* The page of --format html: the program beside the table of rows, the
 * machine code in the table of rows (each instruction on the row in
 * effect at its address), the frame drawn. `code` NULL: no FDE, or the
 * code was not decoded. False when out of memory. */
bool ex_html(const struct explanation *e, const struct ex_machine_code *code,
             FILE *out);

/* The frame of the chosen row as an inline SVG figure (svg.c): the stack
 * from the CFA downwards, a slot per register saved at a CFA offset and
 * the return address's, the CFA and the callee's stack pointer marked,
 * with their values when the evaluation has them. A paragraph instead
 * when there is no row. */
void ex_frame_svg(const struct explanation *e, FILE *out);

/* The sections of the explanation, through a renderer: ex_document
 * prints the five in order. */
void ex_section_records(const struct explanation *e, struct ex_renderer *r);
void ex_section_program(const struct explanation *e, struct ex_renderer *r);
void ex_section_row(const struct explanation *e, struct ex_renderer *r);
void ex_section_evaluation(const struct explanation *e,
                           struct ex_renderer *r);
void ex_section_result(const struct explanation *e, struct ex_renderer *r);
void ex_document(const struct explanation *e, struct ex_renderer *r);

/* s with < > & " escaped for HTML. */
void ex_put_html(FILE *out, const char *s);

/* The explanation as JSON (the schema is in json.c). Its "frame" member
 * (not null when the state has registers) is what `frame` writes: the
 * command's own JSON for a frame. */
typedef void ex_frame_json_fn(FILE *out, const struct explanation *e);
void ex_json(const struct explanation *e, FILE *out, ex_frame_json_fn *frame);

/* ------------------------------------------------------------------ */
/* Texts shared by the document and JSON                                */
/* ------------------------------------------------------------------ */

/* Each returns a malloc'd string (NULL when out of memory). */
char *ex_insn_text(const struct explanation *e, const struct ex_insn *insn);
char *ex_effects_text(const struct cfi_arch *arch,
                      const struct ex_insn *insn);
char *ex_column_name(const struct cfi_arch *arch, unsigned column);
char *ex_column_rule(const struct cfi_arch *arch, const struct sem_row *row,
                     unsigned column);
char *ex_origin_text(const struct explanation *e, int origin);
char *ex_hex_bytes(const uint8_t *bytes, size_t len, size_t max);
char *ex_op_text(const struct ex_op *op);
char *ex_stack_text(const struct ex_op *op);
char *ex_result_text(const struct explanation *e);
char *ex_why_text(const struct explanation *e);
char *ex_read_text(const struct ex_read *read);
/* When the caller's PC is the return address column's value
 * (ex_pc_from_return_column), why (the row) and how it was computed
 * (the evaluation: the column's value, RA_SIGN_STATE, the key and the
 * stripped PC); NULL otherwise, or when the frame is an error. */
char *ex_return_column_text(const struct explanation *e);
char *ex_caller_pc_text(const struct explanation *e);
/* What each augmentation letter of the CIE gave, one line each. */
size_t ex_augmentation_lines(const struct cfi_cie *cie, char **lines,
                             size_t max);

#endif
