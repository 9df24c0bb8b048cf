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
static void print_reg_long(FILE *out, const struct cfi_arch *arch,
                           unsigned reg)
{
    char plain[16];
    const char *name = cfi_arch_reg_name(arch, reg);
    snprintf(plain, sizeof plain, "r%u", reg);
    if (name && strcmp(name, plain))
        fprintf(out, "r%u (%s)", reg, name);
    else
        fputs(plain, out);
}

static void print_reg(FILE *out, const struct cfi_arch *arch, unsigned reg)
{
    char buf[16];
    fputs(cfi_arch_reg_label(arch, reg, buf, sizeof buf), out);
}

/* The opcode's name on the architecture: 0x2d is GNU_window_save on
 * SPARC and AARCH64_negate_ra_state on AArch64 (arch.h, vendor_ops). */
static const char *opcode_name(const struct cfi_arch *arch, unsigned opcode)
{
    if (cfi_arch_vendor_op(arch, opcode) == CFI_VENDOR_NEGATE_RA_STATE)
        return "AARCH64_negate_ra_state";
    return sem_opcode_name(opcode);
}

/* ------------------------------------------------------------------ */
/* Instructions                                                         */
/* ------------------------------------------------------------------ */

static void print_operands(FILE *out, const struct cfi_arch *arch,
                           const struct ex_insn *x)
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
        print_reg_long(out, arch, i->reg);
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
        print_reg_long(out, arch, i->reg);
        return;
    case SEM_CFA_offset: case SEM_CFA_offset_extended:
    case SEM_CFA_offset_extended_sf: case SEM_CFA_GNU_negative_offset_extended:
    case SEM_CFA_val_offset: case SEM_CFA_val_offset_sf:
        fputs(": ", out);
        print_reg_long(out, arch, i->reg);
        fprintf(out, " %s cfa%+" PRId64,
                i->opcode == SEM_CFA_val_offset ||
                        i->opcode == SEM_CFA_val_offset_sf ? "is" : "at",
                i->offset);
        return;
    case SEM_CFA_register:
        fputs(": ", out);
        print_reg_long(out, arch, i->reg);
        fputs(" in ", out);
        print_reg_long(out, arch, i->reg2);
        return;
    case SEM_CFA_expression: case SEM_CFA_val_expression:
        fputs(": ", out);
        print_reg_long(out, arch, i->reg);
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
    if (x->decode_error)
        return strf("(does not decode: %s)",
                    x->diag.message ? x->diag.message : "malformed");
    struct text t;
    if (!text_open(&t))
        return NULL;
    fprintf(t.out, "DW_CFA_%s", opcode_name(ex_arch(e), x->insn.opcode));
    print_operands(t.out, ex_arch(e), x);
    return text_close(&t);
}

char *ex_column_name(const struct cfi_arch *arch, unsigned column)
{
    char buf[16];
    if (column == EX_CFA)
        return strf("cfa");
    return strf("%s", cfi_arch_reg_label(arch, column, buf, sizeof buf));
}

static void print_change(FILE *out, const struct cfi_arch *arch,
                         const struct ex_insn *x, size_t i)
{
    if (x->changed[i] == EX_CFA) {
        fputs("row.cfa := ", out);
        sem_print_cfa_notation(out, arch, &x->cfa);
        return;
    }
    fputs("row[", out);
    print_reg(out, arch, x->changed[i]);
    fputs("] := ", out);
    if (x->insn.opcode == SEM_CFA_restore ||
        x->insn.opcode == SEM_CFA_restore_extended) {
        fputs("init[", out);
        print_reg(out, arch, x->changed[i]);
        fputs("] = ", out);
    }
    sem_print_rule_notation(out, arch, &x->rules[i]);
}

/* ------------------------------------------------------------------ */
/* Return-address signing (aadwarf64)                                   */
/* ------------------------------------------------------------------ */

/* The state a rule of RA_SIGN_STATE gives (the IL writes state s as
 * val(lit<s>): semantics/translate.c), or -1 for another rule; no rule
 * is the initial state, 0. */
static int ra_state_of(const struct sem_rule *rule)
{
    if (rule->kind == SEM_RULE_UNSPECIFIED)
        return CFI_RA_NOT_SIGNED;
    if (rule->kind != SEM_RULE_VAL_EXPRESSION || rule->expr.len != 1 ||
        rule->expr.bytes[0] < 0x30 ||
        rule->expr.bytes[0] > 0x30 + CFI_RA_STATE_MAX)
        return -1;
    return rule->expr.bytes[0] - 0x30;
}

/* aadwarf64, Note 8 and "Call frame instructions". */
static const char *ra_state_words(unsigned state)
{
    static const char *const words[CFI_RA_STATE_MAX + 1] = {
        [CFI_RA_NOT_SIGNED] = "not signed",
        [CFI_RA_SIGNED_SP] = "signed, the SP its modifier",
        [CFI_RA_SIGNED_SP_PC] = "signed, the SP and the PC its modifiers",
    };
    return state <= CFI_RA_STATE_MAX ? words[state] : "reserved";
}

/* The words for an instruction that changed RA_SIGN_STATE: what the
 * opcode does, from which state to which (the rule after it is the
 * changed column's). */
static void print_ra_state_words(FILE *out, const struct cfi_arch *arch,
                                 const struct ex_insn *x, int after)
{
    unsigned op = x->insn.opcode;
    if (after < 0)
        return;
    switch (cfi_arch_vendor_op(arch, op)) {
    case CFI_VENDOR_NEGATE_RA_STATE:
        fprintf(out, ": toggles the signing state, %d -> %d, the return"
                " address %s (aadwarf64: negates bit 0 of RA_SIGN_STATE)",
                1 - after, after, after ? "is now signed"
                                        : "is no longer signed");
        return;
    case CFI_VENDOR_NEGATE_RA_STATE_WITH_PC:
        fprintf(out, ": toggles the signing state with the PC, %d -> %d,"
                " the return address %s (aadwarf64)", 2 - after, after,
                after ? "is now signed with the PC as a modifier too"
                      : "is no longer signed");
        return;
    case CFI_VENDOR_SET_RA_STATE:
        fprintf(out, ": sets the signing state to %d, %s (aadwarf64)",
                after, ra_state_words((unsigned)after));
        return;
    case CFI_VENDOR_GNU_WINDOW_SAVE:
    case CFI_VENDOR_NONE:
        break;
    }
    if (op == SEM_CFA_restore_state)
        fprintf(out, ": the remembered signing state, %d (%s)", after,
                ra_state_words((unsigned)after));
}

/* "emit [0x1000,0x1001); loc := 0x1001; row[rbp] := addr(cfa-16)". */
char *ex_effects_text(const struct cfi_arch *arch, const struct ex_insn *x)
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
        print_change(t.out, arch, x, i);
        if (x->changed[i] == arch->ra_state)
            print_ra_state_words(t.out, arch, x, ra_state_of(&x->rules[i]));
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

/* The ABI default of a register with no rule (arch.h). */
static const char *default_text(const struct cfi_arch *arch, unsigned reg)
{
    switch (cfi_arch_default(arch, reg)) {
    case CFI_DEFAULT_CFA: return "the CFA";
    case CFI_DEFAULT_SAME_VALUE: return "same value";
    case CFI_DEFAULT_ZERO: return "0";
    case CFI_DEFAULT_UNDEFINED: break;
    }
    return "undefined";
}

char *ex_column_rule(const struct cfi_arch *arch, const struct sem_row *row,
                     unsigned column)
{
    struct text t;
    if (!text_open(&t))
        return NULL;
    if (column == EX_CFA) {
        sem_print_cfa_notation(t.out, arch, &row->cfa);
        return text_close(&t);
    }
    struct sem_rule rule = sem_row_rule(row, column);
    sem_print_rule_notation(t.out, arch, &rule);
    bool shown = column < arch->nreported ||
                 cfi_arch_default(arch, column) != CFI_DEFAULT_UNDEFINED;
    int state = column == arch->ra_state ? ra_state_of(&rule) : -1;
    const char *words = state >= 0 ? ra_state_words((unsigned)state) : NULL;
    if (rule.kind == SEM_RULE_UNSPECIFIED && shown)
        fprintf(t.out, " (ABI: %s%s%s)", default_text(arch, column),
                words ? ", " : "", words ? words : "");
    else if (words)
        fprintf(t.out, " (%s)", words);
    return text_close(&t);
}

char *ex_origin_text(const struct explanation *e, int origin)
{
    if (origin == EX_ORIGIN_NONE)
        return strf("ABI default");
    const struct ex_insn *x = &e->insns[origin];
    return strf("%sDW_CFA_%s at 0x%" PRIx64, x->in_cie ? "CIE: " : "",
                opcode_name(ex_arch(e), x->insn.opcode), x->section_offset);
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

char *ex_return_column_text(const struct explanation *e)
{
    if (!ex_pc_from_return_column(e))
        return NULL;
    const struct cfi_arch *arch = ex_arch(e);
    unsigned ra = (unsigned)e->fde->cie->ra_column;
    char ra_buf[16], pc_buf[16];
    const char *ra_name = cfi_arch_reg_label(arch, ra, ra_buf, sizeof ra_buf);
    const char *pc_name = cfi_arch_reg_label(arch, arch->pc, pc_buf,
                                             sizeof pc_buf);
    char signing[160] = "";
    if (arch->ra_state != CFI_NO_RA_STATE)
        snprintf(signing, sizeof signing, "; when RA_SIGN_STATE (register"
                 " %u) is not 0, that value is signed, and its pointer"
                 " authentication code is stripped", arch->ra_state);
    return strf("The return address column is %s (the CIE's, %u), not the"
                " PC register: the caller's PC (%s, register %u) is %s's"
                " value, whatever %s's own rule says (DWARF 5 section"
                " 6.4.1)%s.",
                ra_name, ra, pc_name, arch->pc, ra_name, pc_name, signing);
}

/* "0x1234", "undefined (end of stack)" or "unknown". */
static void print_caller_value(FILE *out, const struct cfi_regs *regs,
                               unsigned reg)
{
    if (regs->status[reg] == CFI_REG_VALUE)
        fprintf(out, "0x%" PRIx64, regs->value[reg]);
    else if (regs->status[reg] == CFI_REG_UNKNOWN)
        fputs("unknown", out);
    else
        fputs("undefined (end of stack)", out);
}

/* Step 6 on a signed return address: the state, the key, the strip. */
static void print_signing(FILE *out, const struct explanation *e,
                          unsigned ra)
{
    const struct cfi_arch *arch = ex_arch(e);
    const struct cfi_regs *caller = &e->frame.caller;
    unsigned state = arch->ra_state;
    if (caller->status[state] != CFI_REG_VALUE) {
        fputs("; RA_SIGN_STATE is not known, so neither is the caller's"
              " PC", out);
        return;
    }
    uint64_t value = caller->value[state];
    if (value == CFI_RA_NOT_SIGNED) {
        fputs("; RA_SIGN_STATE is 0, not signed: the PC is that value as"
              " it is", out);
        return;
    }
    unsigned va_bits = e->va_bits ? e->va_bits : CFI_VA_BITS_DEFAULT;
    fprintf(out, "; RA_SIGN_STATE is %" PRIu64 " (%s), with the %s key (%s):"
            " its pointer authentication code is stripped, bits %u..63"
            " becoming copies of bit 55 (va_bits %u, as XPACI does): 0x%"
            PRIx64 " -> 0x%" PRIx64, value,
            ra_state_words(value <= CFI_RA_STATE_MAX ? (unsigned)value
                                                     : CFI_RA_STATE_MAX + 1),
            e->frame.ra_b_key ? "B" : "A",
            e->frame.ra_b_key ? "the CIE's augmentation has 'B'"
                              : "the CIE's augmentation has no 'B'",
            va_bits, va_bits, caller->value[ra], caller->value[arch->pc]);
}

char *ex_caller_pc_text(const struct explanation *e)
{
    if (!ex_pc_from_return_column(e) || e->frame.status != CFI_OK)
        return NULL;
    const struct cfi_arch *arch = ex_arch(e);
    unsigned ra = (unsigned)e->fde->cie->ra_column;
    const struct cfi_regs *caller = &e->frame.caller;
    struct text t;
    if (!text_open(&t))
        return NULL;
    fputs("The caller's PC: ", t.out);
    print_reg(t.out, arch, arch->pc);
    fputs(" = ", t.out);
    print_reg(t.out, arch, ra);
    fputs(", the return address column = ", t.out);
    print_caller_value(t.out, caller, ra);
    if (arch->ra_state != CFI_NO_RA_STATE &&
        caller->status[ra] == CFI_REG_VALUE)
        print_signing(t.out, e, ra);
    fputs("; so ", t.out);
    print_reg(t.out, arch, arch->pc);
    fputs(" = ", t.out);
    print_caller_value(t.out, caller, arch->pc);
    fputc('.', t.out);
    return text_close(&t);
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

static void print_error(FILE *out, const struct cfi_arch *arch,
                        const struct cfi_frame *frame)
{
    char name[16];
    fprintf(out, "error: %s: %s", cfi_status_name(frame->status),
            frame->diag.message ? frame->diag.message
                                : cfi_status_text(frame->status));
    if (frame->diag.reg >= 0)
        fprintf(out, " (%s)", cfi_arch_reg_label(arch,
                                                 (unsigned)frame->diag.reg,
                                                 name, sizeof name));
    print_error_position(out, &frame->diag);
    fputc('\n', out);
}

static void print_frame(FILE *out, const struct cfi_arch *arch,
                        const struct cfi_frame *frame)
{
    fprintf(out, "cfa = 0x%" PRIx64 "\n", frame->cfa);
    const struct cfi_regs *caller = &frame->caller;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (reg >= arch->nreported &&
            caller->status[reg] == CFI_REG_UNDEFINED)
            continue;
        char name[16];
        fprintf(out, "%s = ", cfi_arch_reg_label(arch, reg, name,
                                                 sizeof name));
        if (caller->status[reg] == CFI_REG_VALUE)
            fprintf(out, "0x%" PRIx64 "\n", caller->value[reg]);
        else if (caller->status[reg] == CFI_REG_UNKNOWN)
            fputs("unknown\n", out);
        else
            fprintf(out, "undefined%s\n",
                    reg == arch->pc ? " (end of stack)" : "");
    }
    if (frame->signal_frame)
        fputs("signal frame: the caller's PC is exact (not a return "
              "address)\n", out);
    if (arch->ra_state != CFI_NO_RA_STATE)
        fprintf(out, "return address key: %s\n", frame->ra_b_key ? "B" : "A");
}

char *ex_result_text(const struct explanation *e)
{
    struct text t;
    if (!text_open(&t))
        return NULL;
    if (e->frame.status != CFI_OK)
        print_error(t.out, ex_arch(e), &e->frame);
    else
        print_frame(t.out, ex_arch(e), &e->frame);
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
    case 'B':
        if (cie->arch->ra_state == CFI_NO_RA_STATE)
            break;
        return strf("B  return addresses are signed with the B key, not the"
                    " A key (aadwarf64)");
    case 'G':
        if (cie->arch->ra_state == CFI_NO_RA_STATE)
            break;
        return strf("G  the frames may change the MTE tags of their stack"
                    " (aadwarf64)");
    default:
        break;
    }
    return strf("%c  unknown letter", letter);
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
