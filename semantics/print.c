/* SPDX-License-Identifier: MIT */
/* print.c — the printers of the IL: text (one range a line), JSON, and the
 * table layout of `readelf -wF`.
 *
 * Text, one range per line, fields separated by two spaces:
 *   [0x27280,0x27282)  cfa=rsp+8  rbx=[cfa-16]  rip=[cfa-8]
 * Brackets always mean "stored at": [cfa+N] is DW_CFA_offset, [expr(OPS)]
 * DW_CFA_expression; without brackets the text is the value: cfa+N is
 * val_offset, expr(OPS) val_expression (and the CFA expression, whose value
 * is the CFA). A register name alone is the register rule. Registers come
 * in increasing DWARF number; those with no rule are absent. The parser
 * (parse.c) reads exactly this back.
 *
 * The file printers (sem_printer_*) add, per FDE: in text a header line
 *   fde .eh_frame+0x18 cie=0x0 [0x26000,0x26360) aug=zR caf=1 daf=-8 ra=16
 * then the ranges and a blank line; in JSON one object per FDE, one per
 * line, inside {"file": ..., "fdes": [...]}; in readelf format readelf's
 * FDE header line, its column header and one table row per range. */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../cfi/json.h"

static void print_offset(FILE *out, const char *base, int64_t offset)
{
    fprintf(out, "%s%+" PRId64, base, offset);
}

static void print_reg(FILE *out, const struct cfi_arch *arch, unsigned reg)
{
    char buf[16];
    fputs(cfi_arch_reg_label(arch, reg, buf, sizeof buf), out);
}

static void print_expr_text(FILE *out, const struct sem_expr *expr)
{
    fputs("expr(", out);
    sem_print_expr(out, expr);
    putc(')', out);
}

static void print_cfa_text(FILE *out, const struct cfi_arch *arch,
                           const struct sem_cfa *cfa)
{
    switch (cfa->kind) {
    case SEM_CFA_RULE_REG_OFFSET:
        print_reg(out, arch, cfa->reg);
        fprintf(out, "%+" PRId64, cfa->offset);
        return;
    case SEM_CFA_RULE_EXPR:
        print_expr_text(out, &cfa->expr);
        return;
    case SEM_CFA_RULE_INVALID:
        break;
    }
    fputs("undef", out);
}

static void print_rule_text(FILE *out, const struct cfi_arch *arch,
                            const struct sem_rule *rule)
{
    switch (rule->kind) {
    case SEM_RULE_UNSPECIFIED: /* never printed: absent from rows */
    case SEM_RULE_UNDEFINED: fputs("undef", out); return;
    case SEM_RULE_SAME_VALUE: fputs("same", out); return;
    case SEM_RULE_OFFSET:
        putc('[', out);
        print_offset(out, "cfa", rule->offset);
        putc(']', out);
        return;
    case SEM_RULE_VAL_OFFSET: print_offset(out, "cfa", rule->offset); return;
    case SEM_RULE_REGISTER: print_reg(out, arch, rule->reg); return;
    case SEM_RULE_EXPRESSION:
        putc('[', out);
        print_expr_text(out, &rule->expr);
        putc(']', out);
        return;
    case SEM_RULE_VAL_EXPRESSION: print_expr_text(out, &rule->expr); return;
    }
}

void sem_print_range_text(FILE *out, const struct cfi_arch *arch,
                          const struct sem_range *range)
{
    fprintf(out, "[0x%" PRIx64 ",0x%" PRIx64 ")  cfa=", range->begin,
            range->end);
    print_cfa_text(out, arch, &range->row->cfa);
    for (uint32_t i = 0; i < range->row->nrules; i++) {
        const struct sem_reg_rule *r = &range->row->rules[i];
        if (r->rule.kind == SEM_RULE_UNSPECIFIED)
            continue;
        fputs("  ", out);
        print_reg(out, arch, r->reg);
        putc('=', out);
        print_rule_text(out, arch, &r->rule);
    }
    putc('\n', out);
}

char *sem_range_text(const struct cfi_arch *arch,
                     const struct sem_range *range)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    sem_print_range_text(out, arch, range);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = 0;
    return text;
}

void sem_print_fde_text(FILE *out, const struct sem_fde_il *il)
{
    for (size_t i = 0; i < il->nranges; i++)
        sem_print_range_text(out, il->fde->cie->arch, &il->ranges[i]);
}

/* ------------------------------------------------------------------ */
/* The file printer                                                     */
/* ------------------------------------------------------------------ */

struct sem_printer {
    FILE *out;
    enum sem_format format;
    const char *file_name;
    const struct cfi_arch *arch; /* the file's: JSON names it */
    size_t nfdes;            /* FDEs printed so far */
    int section;             /* readelf: section of the last FDE, or -1 */
    struct sem_program scratch; /* readelf: decoded programs, reused */
    sem_function_namer namer;   /* NULL: functions are not named */
    void *namer_env;
};

static void json_begin(struct sem_printer *p);
static void json_fde(struct sem_printer *p, const struct sem_fde_il *il,
                     const struct cfi_diag *error);
static void json_end(struct sem_printer *p);
static void readelf_fde(struct sem_printer *p, const struct sem_fde_il *il,
                        bool failed);

struct sem_printer *sem_printer_new(FILE *out, enum sem_format format,
                                    const char *file_name,
                                    const struct cfi_arch *arch)
{
    struct sem_printer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->out = out;
    p->arch = arch;
    p->format = format;
    p->file_name = file_name ? file_name : "";
    p->section = -1;
    if (format == SEM_FORMAT_JSON)
        json_begin(p);
    return p;
}

/* Augmentation strings come from the file: unprintable bytes as \xNN. */
static void print_augmentation_text(FILE *out, const char *aug)
{
    for (size_t i = 0; i < CFI_AUGMENTATION_MAX && aug[i]; i++) {
        unsigned char c = (unsigned char)aug[i];
        if (c > ' ' && c < 0x7f && c != '\\')
            putc(c, out);
        else
            fprintf(out, "\\x%02x", c);
    }
}

void sem_printer_name_functions(struct sem_printer *p,
                                sem_function_namer namer, void *env)
{
    p->namer = namer;
    p->namer_env = env;
}

/* The function that holds the FDE's first address, or NULL. */
static const char *fde_function(const struct sem_printer *p,
                                const struct cfi_fde *fde, char *buf,
                                size_t size)
{
    return p->namer ? p->namer(p->namer_env, fde->pc_begin, buf, size)
                    : NULL;
}

static void text_fde_header(const struct sem_printer *p,
                            const struct cfi_fde *fde)
{
    FILE *out = p->out;
    const struct cfi_cie *cie = fde->cie;
    fprintf(out, "fde %s+0x%" PRIx64 " cie=0x%" PRIx64 " [0x%" PRIx64
                 ",0x%" PRIx64 ")",
            cfi_section_name(fde->section), fde->offset, fde->cie_offset,
            fde->pc_begin, fde->pc_end);
    char name[512];
    const char *function = fde_function(p, fde, name, sizeof name);
    if (function)
        fprintf(out, " <%s>", function);
    fputs(" aug=", out);
    print_augmentation_text(out, cie->augmentation);
    fprintf(out, " caf=%" PRIu64 " daf=%" PRId64 " ra=%" PRIu64 "%s\n",
            cie->code_align, cie->data_align, cie->ra_column,
            cie->signal_frame ? " signal" : "");
}

void sem_printer_fde(struct sem_printer *p, const struct sem_fde_il *il)
{
    switch (p->format) {
    case SEM_FORMAT_TEXT:
        text_fde_header(p, il->fde);
        sem_print_fde_text(p->out, il);
        putc('\n', p->out);
        break;
    case SEM_FORMAT_JSON: json_fde(p, il, NULL); break;
    case SEM_FORMAT_READELF: readelf_fde(p, il, false); break;
    }
    p->nfdes++;
}

void sem_printer_fde_error(struct sem_printer *p, const struct cfi_fde *fde,
                           const struct cfi_diag *diag)
{
    struct sem_fde_il il = {fde, NULL, 0};
    switch (p->format) {
    case SEM_FORMAT_TEXT: return; /* the caller reports it on stderr */
    case SEM_FORMAT_JSON: json_fde(p, &il, diag); break;
    case SEM_FORMAT_READELF: readelf_fde(p, &il, true); break;
    }
    p->nfdes++;
}

void sem_printer_end(struct sem_printer *p)
{
    if (!p)
        return;
    if (p->format == SEM_FORMAT_JSON)
        json_end(p);
    sem_program_free(&p->scratch);
    free(p);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void json_hex(FILE *out, const struct sem_expr *expr)
{
    static const char digits[] = "0123456789abcdef";
    putc('"', out);
    for (uint32_t i = 0; i < expr->len; i++) {
        putc(digits[expr->bytes[i] >> 4], out);
        putc(digits[expr->bytes[i] & 15], out);
    }
    putc('"', out);
}

static void json_begin(struct sem_printer *p)
{
    fprintf(p->out, "{\"schema_version\": %d, \"file\": ",
            CFI_JSON_SCHEMA_VERSION);
    cfi_json_string_n(p->out, p->file_name, SIZE_MAX);
    fprintf(p->out, ", \"arch\": \"%s\", \"fdes\": [", p->arch->name);
}

static void json_end(struct sem_printer *p)
{
    fputs(p->nfdes ? "\n]}\n" : "]}\n", p->out);
}

static void json_cfa(FILE *out, const struct sem_cfa *cfa)
{
    switch (cfa->kind) {
    case SEM_CFA_RULE_REG_OFFSET:
        fprintf(out, "{\"reg\": %" PRIu32 ", \"offset\": %" PRId64 "}",
                cfa->reg, cfa->offset);
        return;
    case SEM_CFA_RULE_EXPR:
        fputs("{\"expr\": ", out);
        json_hex(out, &cfa->expr);
        putc('}', out);
        return;
    case SEM_CFA_RULE_INVALID:
        break;
    }
    fputs("null", out);
}

static void json_rule(FILE *out, const struct sem_rule *rule)
{
    switch (rule->kind) {
    case SEM_RULE_UNSPECIFIED: /* absent from il's rows */
        fputs("{\"rule\": \"unspecified\"}", out);
        return;
    case SEM_RULE_UNDEFINED: fputs("{\"rule\": \"undefined\"}", out); return;
    case SEM_RULE_SAME_VALUE: fputs("{\"rule\": \"same_value\"}", out); return;
    case SEM_RULE_OFFSET:
    case SEM_RULE_VAL_OFFSET:
        fprintf(out, "{\"rule\": \"%s\", \"offset\": %" PRId64 "}",
                rule->kind == SEM_RULE_OFFSET ? "offset" : "val_offset",
                rule->offset);
        return;
    case SEM_RULE_REGISTER:
        fprintf(out, "{\"rule\": \"register\", \"reg\": %" PRIu32 "}",
                rule->reg);
        return;
    case SEM_RULE_EXPRESSION:
    case SEM_RULE_VAL_EXPRESSION:
        fprintf(out, "{\"rule\": \"%s\", \"expr\": ",
                rule->kind == SEM_RULE_EXPRESSION ? "expression"
                                                  : "val_expression");
        json_hex(out, &rule->expr);
        putc('}', out);
        return;
    }
}

static void json_row(FILE *out, const struct sem_range *range)
{
    fputs("{\"begin\": ", out);
    cfi_json_address(out, range->begin);
    fputs(", \"end\": ", out);
    cfi_json_address(out, range->end);
    fputs(", \"cfa\": ", out);
    json_cfa(out, &range->row->cfa);
    fputs(", \"regs\": {", out);
    bool first = true;
    for (uint32_t i = 0; i < range->row->nrules; i++) {
        const struct sem_reg_rule *r = &range->row->rules[i];
        if (r->rule.kind == SEM_RULE_UNSPECIFIED)
            continue;
        fprintf(out, "%s\"%" PRIu32 "\": ", first ? "" : ", ", r->reg);
        json_rule(out, &r->rule);
        first = false;
    }
    fputs("}}", out);
}

void sem_print_cfa_json(FILE *out, const struct sem_cfa *cfa)
{
    json_cfa(out, cfa);
}

void sem_print_rule_json(FILE *out, const struct sem_rule *rule)
{
    json_rule(out, rule);
}

void sem_print_range_json(FILE *out, const struct sem_range *range)
{
    json_row(out, range);
}

static void json_fde(struct sem_printer *p, const struct sem_fde_il *il,
                     const struct cfi_diag *error)
{
    FILE *out = p->out;
    const struct cfi_fde *fde = il->fde;
    const struct cfi_cie *cie = fde->cie;
    fprintf(out, "%s{\"section\": \"%s\", \"offset\": %" PRIu64
                 ", \"cie_offset\": %" PRIu64 ", \"begin\": ",
            p->nfdes ? ",\n" : "\n", cfi_section_name(fde->section),
            fde->offset, fde->cie_offset);
    cfi_json_address(out, fde->pc_begin);
    fputs(", \"end\": ", out);
    cfi_json_address(out, fde->pc_end);
    char name[512];
    const char *function = fde_function(p, fde, name, sizeof name);
    if (function) {
        fputs(", \"function\": ", out);
        cfi_json_string_n(out, function, SIZE_MAX);
    }
    fputs(", \"augmentation\": ", out);
    cfi_json_string_n(out, cie->augmentation, CFI_AUGMENTATION_MAX);
    fprintf(out, ", \"code_align\": %" PRIu64 ", \"data_align\": %" PRId64
                 ", \"ra\": %" PRIu64 ", ",
            cie->code_align, cie->data_align, cie->ra_column);
    if (error) {
        fputs("\"error\": ", out);
        cfi_json_string_n(out, error->message ? error->message
                                        : cfi_status_text(error->status),
                    SIZE_MAX);
        fputs(", ", out);
    }
    fputs("\"rows\": [", out);
    for (size_t i = 0; i < il->nranges; i++) {
        if (i)
            fputs(", ", out);
        json_row(out, &il->ranges[i]);
    }
    fputs("]}", out);
}

/* ------------------------------------------------------------------ */
/* readelf -wF                                                          */
/* ------------------------------------------------------------------ */

/* The registers that get a column: like readelf, every register an
 * instruction of the CIE or the FDE names as the register whose rule it
 * sets (offset*, val_offset*, restore*, undefined, same_value, the first
 * operand of register, expression, val_expression), plus any register with
 * a rule in some row. */
struct readelf_columns {
    bool shown[CFI_NREGS];
};

static void mark_program(struct sem_printer *p, const uint8_t *bytes,
                         size_t len, const struct sem_decode_env *env,
                         struct readelf_columns *cols)
{
    p->scratch.count = 0;
    if (sem_decode(bytes, len, env, &p->scratch, NULL) != CFI_OK)
        return;
    for (size_t i = 0; i < p->scratch.count; i++) {
        const struct sem_insn *insn = &p->scratch.insns[i];
        switch (insn->opcode) {
        case SEM_CFA_offset: case SEM_CFA_offset_extended:
        case SEM_CFA_offset_extended_sf: case SEM_CFA_val_offset:
        case SEM_CFA_val_offset_sf: case SEM_CFA_restore:
        case SEM_CFA_restore_extended: case SEM_CFA_undefined:
        case SEM_CFA_same_value: case SEM_CFA_register:
        case SEM_CFA_expression: case SEM_CFA_val_expression:
        case SEM_CFA_GNU_negative_offset_extended:
            if (insn->reg < CFI_NREGS)
                cols->shown[insn->reg] = true;
            break;
        default:
            break;
        }
    }
}

static void readelf_find_columns(struct sem_printer *p,
                                 const struct sem_fde_il *il,
                                 struct readelf_columns *cols)
{
    const struct cfi_fde *fde = il->fde;
    const struct cfi_cie *cie = fde->cie;
    memset(cols, 0, sizeof *cols);
    struct sem_decode_env env = {
        .code_align = cie->code_align, .data_align = cie->data_align,
        .section = fde->section, .address_size = cie->address_size,
        .pointer_encoding = cie->fde_encoding, .bytes_addr = 0, .in_cie = true,
        .arch = cie->arch,
    };
    mark_program(p, cie->instructions, cie->instructions_len, &env, cols);
    env.in_cie = false;
    env.bytes_addr = fde->instructions_addr;
    mark_program(p, fde->instructions, fde->instructions_len, &env, cols);
    /* readelf keeps no column for the return-address signing state, which
     * no register rule instruction names (aadwarf64): only one that does
     * shows it. */
    unsigned hidden = cie->arch->ra_state;
    bool named = hidden < CFI_NREGS && cols->shown[hidden];
    for (size_t i = 0; i < il->nranges; i++)
        for (uint32_t j = 0; j < il->ranges[i].row->nrules; j++)
            if (il->ranges[i].row->rules[j].reg < CFI_NREGS)
                cols->shown[il->ranges[i].row->rules[j].reg] = true;
    if (hidden < CFI_NREGS)
        cols->shown[hidden] = named;
}

static void readelf_header(struct sem_printer *p, const struct cfi_fde *fde)
{
    if (p->section != (int)fde->section) {
        p->section = (int)fde->section;
        fprintf(p->out, "Contents of the %s section (loaded from %s):\n\n\n",
                cfi_section_name(fde->section), p->file_name);
    }
    /* The CIE pointer field: in .eh_frame the distance back from the
     * field (after a 4-byte length, or 12 bytes for a 64-bit length) to
     * the CIE; in .debug_frame the CIE's offset. */
    uint64_t field = fde->cie_offset;
    if (fde->section == CFI_EH_FRAME)
        field = fde->offset + (fde->length >= 0xfffffff0u ? 12 : 4) -
                fde->cie_offset;
    fprintf(p->out,
            "%08" PRIx64 " %016" PRIx64 " %08" PRIx64 " FDE cie=%08" PRIx64
            " pc=%016" PRIx64 "..%016" PRIx64 "\n",
            fde->offset, fde->length, field, fde->cie_offset, fde->pc_begin,
            fde->pc_end);
}

static void readelf_column_header(FILE *out, const struct cfi_arch *arch,
                                  const struct readelf_columns *cols,
                                  uint64_t ra)
{
    fputs("   LOC           CFA      ", out);
    for (unsigned r = 0; r < CFI_NREGS; r++) {
        if (!cols->shown[r])
            continue;
        char buf[16];
        if (r == ra)
            fputs("ra    ", out);
        else
            fprintf(out, "%-5s ", cfi_arch_reg_label(arch, r, buf, sizeof buf));
    }
    putc('\n', out);
}

/* A cell as readelf spells it: u (no rule or undefined), s, c-8, v-48,
 * "r3 (rbx)" (or "r56" when the register has no name), exp, vexp. */
static void readelf_cell(char *cell, size_t size, const struct cfi_arch *arch,
                         const struct sem_rule *rule)
{
    const char *name;
    switch (rule->kind) {
    case SEM_RULE_UNSPECIFIED:
    case SEM_RULE_UNDEFINED: snprintf(cell, size, "u"); return;
    case SEM_RULE_SAME_VALUE: snprintf(cell, size, "s"); return;
    case SEM_RULE_OFFSET:
        snprintf(cell, size, "c%+" PRId64, rule->offset);
        return;
    case SEM_RULE_VAL_OFFSET:
        snprintf(cell, size, "v%+" PRId64, rule->offset);
        return;
    case SEM_RULE_REGISTER:
        name = cfi_arch_reg_name(arch, rule->reg);
        if (name)
            snprintf(cell, size, "r%" PRIu32 " (%s)", rule->reg, name);
        else
            snprintf(cell, size, "r%" PRIu32, rule->reg);
        return;
    case SEM_RULE_EXPRESSION: snprintf(cell, size, "exp"); return;
    case SEM_RULE_VAL_EXPRESSION: snprintf(cell, size, "vexp"); return;
    }
    snprintf(cell, size, "n/a");
}

static void readelf_row(FILE *out, const struct cfi_arch *arch,
                        const struct readelf_columns *cols,
                        const struct sem_range *range)
{
    const struct sem_cfa *cfa = &range->row->cfa;
    char cell[48], buf[16];
    /* No CFA rule: "u" (readelf would print its zeroed state, "rax+0"). */
    if (cfa->kind == SEM_CFA_RULE_REG_OFFSET)
        snprintf(cell, sizeof cell, "%s%+" PRId64,
                 cfi_arch_reg_label(arch, cfa->reg, buf, sizeof buf),
                 cfa->offset);
    else
        snprintf(cell, sizeof cell, "%s",
                 cfa->kind == SEM_CFA_RULE_EXPR ? "exp" : "u");
    fprintf(out, "%016" PRIx64 " %-8s ", range->begin, cell);
    for (unsigned r = 0; r < CFI_NREGS; r++) {
        if (!cols->shown[r])
            continue;
        struct sem_rule rule = sem_row_rule(range->row, r);
        readelf_cell(cell, sizeof cell, arch, &rule);
        fprintf(out, "%-5s ", cell);
    }
    putc('\n', out);
}

/* An FDE whose translation failed gets its header line only. */
static void readelf_fde(struct sem_printer *p, const struct sem_fde_il *il,
                        bool failed)
{
    readelf_header(p, il->fde);
    if (!failed && il->nranges) {
        struct readelf_columns cols;
        readelf_find_columns(p, il, &cols);
        const struct cfi_arch *arch = il->fde->cie->arch;
        readelf_column_header(p->out, arch, &cols, il->fde->cie->ra_column);
        for (size_t i = 0; i < il->nranges; i++)
            readelf_row(p->out, arch, &cols, &il->ranges[i]);
    }
    putc('\n', p->out);
}
