/* SPDX-License-Identifier: MIT */
/* text.c — the texts of an explanation (cells of the document,
 * strings of the JSON): instructions in the style of `readelf -wf`,
 * effects in the notation of semantics/translate.c, origins, stacks. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"

/* A growing string written through a FILE (the printers of semantics/
 * write to one). */
struct text {
    char *buf;
    size_t len;
    FILE *out;
};

static bool text_open(struct text *t)
{
    t->buf = NULL;
    t->len = 0;
    t->out = open_memstream(&t->buf, &t->len);
    return t->out != NULL;
}

static char *text_close(struct text *t)
{
    if (fclose(t->out) != 0) {
        free(t->buf);
        return NULL;
    }
    return t->buf;
}

static char *strf(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(args, format);
    vsnprintf(s, (size_t)n + 1, format, args);
    va_end(args);
    return s;
}

/* "r6 (rbp)", readelf's way of naming a register. */
static void print_reg_long(FILE *out, unsigned reg)
{
    char plain[16];
    const char *name = cfi_reg_name(reg);
    snprintf(plain, sizeof plain, "r%u", reg);
    if (name && strcmp(name, plain))
        fprintf(out, "r%u (%s)", reg, name);
    else
        fputs(plain, out);
}

static void print_reg(FILE *out, unsigned reg)
{
    char buf[16];
    fputs(cfi_reg_label(reg, buf, sizeof buf), out);
}

/* ------------------------------------------------------------------ */
/* Instructions                                                         */
/* ------------------------------------------------------------------ */

static void print_operands(FILE *out, const struct ex_insn *x)
{
    const struct sem_insn *i = &x->insn;
    switch (i->opcode) {
    case SEM_CFA_set_loc:
        fprintf(out, ": 0x%" PRIx64, i->address);
        return;
    case SEM_CFA_advance_loc: case SEM_CFA_advance_loc1:
    case SEM_CFA_advance_loc2: case SEM_CFA_advance_loc4:
    case SEM_CFA_MIPS_advance_loc8:
        fprintf(out, ": %" PRIu64 " to 0x%" PRIx64, i->delta, x->loc + i->delta);
        return;
    case SEM_CFA_def_cfa: case SEM_CFA_def_cfa_sf:
        fputs(": ", out);
        print_reg_long(out, i->reg);
        fprintf(out, " ofs %" PRId64, i->offset);
        return;
    case SEM_CFA_def_cfa_offset: case SEM_CFA_def_cfa_offset_sf:
        fprintf(out, ": %" PRId64, i->offset);
        return;
    case SEM_CFA_GNU_args_size:
        fprintf(out, ": %" PRIu64, i->number);
        return;
    case SEM_CFA_AARCH64_set_ra_state:
        fprintf(out, ": %" PRIu64 ", code offset %" PRId64, i->number,
                i->offset);
        return;
    case SEM_CFA_def_cfa_register: case SEM_CFA_undefined:
    case SEM_CFA_same_value: case SEM_CFA_restore:
    case SEM_CFA_restore_extended:
        fputs(": ", out);
        print_reg_long(out, i->reg);
        return;
    case SEM_CFA_offset: case SEM_CFA_offset_extended:
    case SEM_CFA_offset_extended_sf: case SEM_CFA_GNU_negative_offset_extended:
    case SEM_CFA_val_offset: case SEM_CFA_val_offset_sf:
        fputs(": ", out);
        print_reg_long(out, i->reg);
        fprintf(out, " %s cfa%+" PRId64,
                i->opcode == SEM_CFA_val_offset ||
                        i->opcode == SEM_CFA_val_offset_sf ? "is" : "at",
                i->offset);
        return;
    case SEM_CFA_register:
        fputs(": ", out);
        print_reg_long(out, i->reg);
        fputs(" in ", out);
        print_reg_long(out, i->reg2);
        return;
    case SEM_CFA_expression: case SEM_CFA_val_expression:
        fputs(": ", out);
        print_reg_long(out, i->reg);
        /* fall through */
    case SEM_CFA_def_cfa_expression:
        fputs(" (", out);
        sem_print_expr(out, &i->expr);
        putc(')', out);
        return;
    case SEM_CFA_nop: case SEM_CFA_remember_state: case SEM_CFA_restore_state:
    case SEM_CFA_GNU_window_save: case SEM_CFA_AARCH64_negate_ra_state_with_pc:
        return;
    }
}

char *ex_insn_text(const struct explanation *e, const struct ex_insn *x)
{
    (void)e;
    if (x->decode_error)
        return strf("(does not decode: %s)",
                    x->diag.message ? x->diag.message : "malformed");
    struct text t;
    if (!text_open(&t))
        return NULL;
    fprintf(t.out, "DW_CFA_%s", sem_opcode_name(x->insn.opcode));
    print_operands(t.out, x);
    return text_close(&t);
}

char *ex_column_name(unsigned column)
{
    char buf[16];
    if (column == EX_CFA)
        return strf("cfa");
    return strf("%s", cfi_reg_label(column, buf, sizeof buf));
}

static void print_change(FILE *out, const struct ex_insn *x, size_t i)
{
    if (x->changed[i] == EX_CFA) {
        fputs("row.cfa := ", out);
        sem_print_cfa_notation(out, &x->cfa);
        return;
    }
    fputs("row[", out);
    print_reg(out, x->changed[i]);
    fputs("] := ", out);
    if (x->insn.opcode == SEM_CFA_restore ||
        x->insn.opcode == SEM_CFA_restore_extended) {
        fputs("init[", out);
        print_reg(out, x->changed[i]);
        fputs("] = ", out);
    }
    sem_print_rule_notation(out, &x->rules[i]);
}

/* "emit [0x1000,0x1001); loc := 0x1001; row[rbp] := addr(cfa-16)". */
char *ex_effects_text(const struct ex_insn *x)
{
    if (x->status != CFI_OK)
        return strf("error: %s", x->diag.message ? x->diag.message
                                                 : cfi_status_text(x->status));
    struct text t;
    if (!text_open(&t))
        return NULL;
    const char *sep = "";
    if (!x->in_cie && x->loc_after != x->loc) {
        fprintf(t.out, "emit [0x%" PRIx64 ",0x%" PRIx64 "); loc := 0x%" PRIx64,
                x->loc, x->loc_after, x->loc_after);
        sep = "; ";
    }
    if (x->depth > x->depth_before) {
        fprintf(t.out, "%sstack := stack . row", sep);
        sep = "; ";
    } else if (x->depth < x->depth_before) {
        fprintf(t.out, "%srow := top; stack := rest", sep);
        sep = "; ";
    }
    for (size_t i = 0; i < x->nchanged; i++) {
        fputs(sep, t.out);
        print_change(t.out, x, i);
        sep = "; ";
    }
    if (!*sep)
        fputs("nothing", t.out);
    return text_close(&t);
}

char *ex_hex_bytes(const uint8_t *bytes, size_t len, size_t max)
{
    char *s = malloc(3 * (len < max ? len : max) + 8);
    if (!s)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len && i < max; i++)
        n += (size_t)sprintf(s + n, "%s%02x", i ? " " : "", bytes[i]);
    if (len > max)
        n += (size_t)sprintf(s + n, " ...");
    s[n] = 0;
    return s;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                 */
/* ------------------------------------------------------------------ */

/* The derivation is x86-64's so far (its register names too). */
static const char *default_text(unsigned reg)
{
    switch (cfi_arch_default(&cfi_arch_x86_64, reg)) {
    case CFI_DEFAULT_CFA: return "the CFA";
    case CFI_DEFAULT_SAME_VALUE: return "same value";
    case CFI_DEFAULT_ZERO: return "0";
    case CFI_DEFAULT_UNDEFINED: break;
    }
    return "undefined";
}

char *ex_column_rule(const struct sem_row *row, unsigned column)
{
    struct text t;
    if (!text_open(&t))
        return NULL;
    if (column == EX_CFA) {
        sem_print_cfa_notation(t.out, &row->cfa);
    } else {
        struct sem_rule rule = sem_row_rule(row, column);
        sem_print_rule_notation(t.out, &rule);
        if (rule.kind == SEM_RULE_UNSPECIFIED && column < CFI_NGPRS)
            fprintf(t.out, " (ABI: %s)", default_text(column));
    }
    return text_close(&t);
}

char *ex_origin_text(const struct explanation *e, int origin)
{
    if (origin == EX_ORIGIN_NONE)
        return strf("ABI default");
    const struct ex_insn *x = &e->insns[origin];
    return strf("%sDW_CFA_%s at 0x%" PRIx64, x->in_cie ? "CIE: " : "",
                sem_opcode_name(x->insn.opcode), x->section_offset);
}

char *ex_why_text(const struct explanation *e)
{
    if (!e->has_lookup)
        return strf("no row: the translation failed (see the program)");
    if (e->lookup.caller_frame)
        return strf("looked up at 0x%" PRIx64 " = PC-1: 0x%" PRIx64
                    " is a return address (--caller), and the call may be"
                    " the last instruction of the range before",
                    e->lookup.lookup_pc, e->lookup.pc);
    return strf("looked up at the PC 0x%" PRIx64
                " itself: the innermost frame (no --caller)", e->lookup.pc);
}

/* ------------------------------------------------------------------ */
/* Evaluation                                                           */
/* ------------------------------------------------------------------ */

char *ex_op_text(const struct ex_op *op)
{
    if (op->start)
        return strf("(start)");
    struct text t;
    if (!text_open(&t))
        return NULL;
    sem_print_expr_op(t.out, op->expr, op->at);
    if (op->status != CFI_OK)
        fprintf(t.out, "  error: %s", op->message ? op->message
                                                  : cfi_status_text(op->status));
    return text_close(&t);
}

/* The stack, bottom first: "0x7ffe1008 0x1040". */
char *ex_stack_text(const struct ex_op *op)
{
    struct text t;
    if (!text_open(&t))
        return NULL;
    if (op->depth == 0)
        fputs("(empty)", t.out);
    for (unsigned i = 0; i < op->depth; i++)
        fprintf(t.out, "%s0x%" PRIx64, i ? " " : "", op->stack[i]);
    return text_close(&t);
}

char *ex_read_text(const struct ex_read *read)
{
    if (read->status != CFI_OK)
        return strf("%u bytes at 0x%" PRIx64 ": fault", read->size,
                    read->address);
    return strf("%u bytes at 0x%" PRIx64 ": 0x%" PRIx64 " (%s)", read->size,
                read->address, read->value, read->source);
}

/* ------------------------------------------------------------------ */
/* The result, as `cfisem unwind` prints it                             */
/* ------------------------------------------------------------------ */

/* Where the error was found, as cli_print_error_position prints it. */
static void print_error_position(FILE *out, const struct cfi_diag *diag)
{
    if (diag->offset == CFI_NO_OFFSET)
        return;
    fprintf(out, " at %s offset 0x%" PRIx64,
            cfi_diag_in_expression(diag) ? "expression" : "section",
            diag->offset);
}

static void print_error(FILE *out, const struct cfi_frame *frame)
{
    char name[16];
    fprintf(out, "error: %s: %s", cfi_status_name(frame->status),
            frame->diag.message ? frame->diag.message
                                : cfi_status_text(frame->status));
    if (frame->diag.reg >= 0)
        fprintf(out, " (%s)", cfi_reg_label((unsigned)frame->diag.reg, name,
                                            sizeof name));
    print_error_position(out, &frame->diag);
    fputc('\n', out);
}

static void print_frame(FILE *out, const struct cfi_frame *frame)
{
    fprintf(out, "cfa = 0x%" PRIx64 "\n", frame->cfa);
    const struct cfi_regs *caller = &frame->caller;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (reg >= CFI_NGPRS && caller->status[reg] == CFI_REG_UNDEFINED)
            continue;
        char name[16];
        fprintf(out, "%s = ", cfi_reg_label(reg, name, sizeof name));
        if (caller->status[reg] == CFI_REG_VALUE)
            fprintf(out, "0x%" PRIx64 "\n", caller->value[reg]);
        else if (caller->status[reg] == CFI_REG_UNKNOWN)
            fputs("unknown\n", out);
        else
            fprintf(out, "undefined%s\n",
                    reg == CFI_REG_RIP ? " (end of stack)" : "");
    }
    if (frame->signal_frame)
        fputs("signal frame: the caller's PC is exact (not a return "
              "address)\n", out);
}

char *ex_result_text(const struct explanation *e)
{
    struct text t;
    if (!text_open(&t))
        return NULL;
    if (e->frame.status != CFI_OK)
        print_error(t.out, &e->frame);
    else
        print_frame(t.out, &e->frame);
    return text_close(&t);
}

/* ------------------------------------------------------------------ */
/* The CIE's augmentation                                               */
/* ------------------------------------------------------------------ */

static const char *encoding_format(uint8_t encoding)
{
    static const char *const formats[16] = {
        [0x0] = "absptr", [0x1] = "uleb128", [0x2] = "udata2",
        [0x3] = "udata4", [0x4] = "udata8", [0x9] = "sleb128",
        [0xa] = "sdata2", [0xb] = "sdata4", [0xc] = "sdata8",
    };
    const char *name = formats[encoding & 0x0f];
    return name ? name : "unknown format";
}

static const char *encoding_application(uint8_t encoding)
{
    static const char *const applications[8] = {
        [0] = "", [1] = "pcrel ", [2] = "textrel ", [3] = "datarel ",
        [4] = "funcrel ", [5] = "aligned ",
    };
    const char *name = applications[(encoding >> 4) & 7];
    return name ? name : "unknown ";
}

static char *encoding_text(const char *what, uint8_t encoding)
{
    if (encoding == CFI_PE_OMIT)
        return strf("%s: omitted", what);
    return strf("%s: %s%s%s (0x%02x)", what,
                encoding & CFI_PE_INDIRECT ? "indirect " : "",
                encoding_application(encoding), encoding_format(encoding),
                encoding);
}

static char *letter_text(const struct cfi_cie *cie, char letter)
{
    switch (letter) {
    case 'z':
        return strf("z  augmentation data follows: %zu byte%s",
                    cie->augmentation_data_len,
                    cie->augmentation_data_len == 1 ? "" : "s");
    case 'P': {
        char *enc = encoding_text("personality routine, encoded",
                                  cie->personality_encoding);
        char *s = enc ? strf("P  %s, at 0x%" PRIx64, enc, cie->personality)
                      : NULL;
        free(enc);
        return s;
    }
    case 'L': {
        char *enc = encoding_text("each FDE has an LSDA pointer, encoded",
                                  cie->lsda_encoding);
        char *s = enc ? strf("L  %s", enc) : NULL;
        free(enc);
        return s;
    }
    case 'R': {
        char *enc = encoding_text("FDE addresses encoded", cie->fde_encoding);
        char *s = enc ? strf("R  %s", enc) : NULL;
        free(enc);
        return s;
    }
    case 'S':
        return strf("S  signal frame: the caller's PC is exact, not looked"
                    " up at PC-1");
    case 'e':
        return strf("e  (GNU \"eh\": an old augmentation)");
    default:
        return strf("%c  unknown letter", letter);
    }
}

size_t ex_augmentation_lines(const struct cfi_cie *cie, char **lines,
                             size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < CFI_AUGMENTATION_MAX && cie->augmentation[i] &&
                       n < max; i++)
        lines[n++] = letter_text(cie, cie->augmentation[i]);
    return n;
}
