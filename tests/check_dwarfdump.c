/* SPDX-License-Identifier: MIT */
/* check_dwarfdump.c — the oracle test against LLVM: the row table that
 * `llvm-dwarfdump-14 --eh-frame FILE` prints for every FDE (of .eh_frame
 * and .debug_frame) and `cfisem il FILE` must give the same FDEs, the
 * same rows, the same CFA and the same rule for every register, after
 * the normalisation below (tests/dwarfdump-normalisation.md, with the
 * reasons). The files are those of check_readelf (tests/oracle_files.h).
 *
 * Normalisation (notation only: each item changes how a rule is written,
 * never which rule it is):
 *   D1  Register names: LLVM 14 names a DWARF register after the first
 *       LLVM register with that number (AArch64: W29 for x29, WSP for sp,
 *       B8 for v8; "regN" for a number with none); both sides are read
 *       as DWARF numbers and printed with cfisem's names.
 *   D2  An offset of 0 is left out by LLVM ("CFA=RDI", "[CFA]",
 *       "WSP=CFA"); ours writes "+0".
 *   D3  Expressions: LLVM writes "DW_OP_breg7 RSP+8, DW_OP_plus_uconst
 *       0x8", ours "breg7 8; plus_uconst 8": the DW_OP_ prefix, the
 *       register name beside a breg offset, hexadecimal operands and the
 *       separator are rewritten; the operations are the same bytes.
 *   D4  No CFA rule: LLVM's "CFA=unspecified" is our "cfa=undef".
 *   D5  AArch64's RA_SIGN_STATE (34): LLVM keeps it as a constant
 *       location ("reg34=1"), our IL as val_expression(litN): both say
 *       the column's value is N.
 *   D6  A section in which LLVM 14 meets an opcode it does not know
 *       (GNU_negative_offset_extended 0x2f; AArch64 0x2c, 0x2b) is
 *       printed only up to that FDE ("error: invalid extended CFI
 *       opcode"); our FDEs it did not print are counted, not compared.
 *   D7  FDEs our translator rejects for a documented reason (check_readelf
 *       N6: def_cfa_register / def_cfa_offset while the CFA is an
 *       expression) are counted and listed, not compared.
 * Findings, not normalisations: a difference that is LLVM 14's fault is
 * explained only by a model of that fault run over the instructions
 * LLVM itself printed for the FDE, and counted apart; the model must
 * give exactly the value LLVM printed and ours the value of the correct
 * rule (diff/findings/README.md, "llvm-dwarfdump 14"):
 *   F1  DW_CFA_restore_state restores the register rules but not the
 *       CFA rule (fixed in later LLVM: the remembered state is a pair).
 *   F2  DW_CFA_AARCH64_negate_ra_state sets RA_SIGN_STATE to 1 when it
 *       has no rule but toggles a copy otherwise, so the state never
 *       goes back to 0 (fixed later; the newest source still toggles a
 *       copy for negate_ra_state_with_pc, 0x2c).
 *   F3  A register's offset from the CFA is kept in an int32_t
 *       (UnwindLocation's Offset, still int32_t in the newest source),
 *       so an offset outside int32 is printed as its low 32 bits, sign
 *       extended: no model of the program, only of the value.
 * Every other difference fails the test.
 */
#include <check.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfi/arch.h"
#include "tests/oracle_files.h"
#include "tests/support.h"

#define MAX_PRINTED_DIFFS 40
#define TEXT_MAX 512

/* ------------------------------------------------------------------ */
/* Tables                                                               */
/* ------------------------------------------------------------------ */

struct cell {
    char name[24];
    char *value;
};

struct row {
    uint64_t loc;
    char *cfa;
    size_t ncells, cap;
    struct cell *cells;
};

/* LLVM 14's behaviour (F1, F2) and the correct one, row by row, for the
 * CFA and RA_SIGN_STATE only. */
struct model_row {
    char cfa_llvm[TEXT_MAX], cfa_right[TEXT_MAX];
    int ra_llvm, ra_right; /* -1: no rule */
};

struct fde_table {
    char section[16];
    uint64_t offset, cie;
    uint64_t pc_begin, pc_end;
    size_t nrows, cap;
    struct row *rows;
    size_t ninsns, insn_cap;
    char **insns;        /* LLVM's listing of the FDE's instructions */
};

struct table {
    size_t nfdes, cap;
    struct fde_table *fdes;   /* the CIEs too, for their instructions */
    bool stopped;             /* D6: LLVM reported an unknown opcode */
};

static void *grow(void *array, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return array;
    *cap = *cap ? *cap * 2 : 16;
    void *grown = realloc(array, *cap * size);
    ck_assert_ptr_nonnull(grown);
    return grown;
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->nfdes; i++) {
        struct fde_table *f = &t->fdes[i];
        for (size_t j = 0; j < f->nrows; j++) {
            for (size_t k = 0; k < f->rows[j].ncells; k++)
                free(f->rows[j].cells[k].value);
            free(f->rows[j].cells);
            free(f->rows[j].cfa);
        }
        for (size_t j = 0; j < f->ninsns; j++)
            free(f->insns[j]);
        free(f->insns);
        free(f->rows);
    }
    free(t->fdes);
    memset(t, 0, sizeof *t);
}

static void add_cell(struct row *row, const char *name, size_t name_len,
                     const char *value)
{
    row->cells = grow(row->cells, &row->cap, row->ncells, sizeof *row->cells);
    struct cell *c = &row->cells[row->ncells++];
    snprintf(c->name, sizeof c->name, "%.*s", (int)name_len, name);
    c->value = strdup(value);
}

static struct fde_table *add_fde(struct table *t, const char *section)
{
    t->fdes = grow(t->fdes, &t->cap, t->nfdes, sizeof *t->fdes);
    struct fde_table *f = &t->fdes[t->nfdes++];
    memset(f, 0, sizeof *f);
    snprintf(f->section, sizeof f->section, "%s", section);
    return f;
}

static struct row *add_row(struct fde_table *f, uint64_t loc)
{
    f->rows = grow(f->rows, &f->cap, f->nrows, sizeof *f->rows);
    struct row *row = &f->rows[f->nrows++];
    memset(row, 0, sizeof *row);
    row->loc = loc;
    return row;
}

/* ------------------------------------------------------------------ */
/* LLVM's notation to ours (D1-D5)                                      */
/* ------------------------------------------------------------------ */

/* D1: an LLVM register name as a DWARF number; -1 if unknown. */
static int llvm_reg_number(const struct cfi_arch *arch, const char *name,
                           size_t len)
{
    char lower[24];
    if (len == 0 || len >= sizeof lower)
        return -1;
    for (size_t i = 0; i < len; i++)
        lower[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32
                                                           : name[i]);
    lower[len] = '\0';
    if (!strncmp(lower, "reg", 3) && len > 3)
        return atoi(lower + 3);
    if (arch->e_machine == EM_AARCH64) {
        if (!strcmp(lower, "wsp"))
            return 31;
        if (lower[0] == 'w' && lower[1] >= '0' && lower[1] <= '9')
            return atoi(lower + 1);
        if (lower[0] == 'b' && lower[1] >= '0' && lower[1] <= '9')
            return 64 + atoi(lower + 1);
    }
    return cfi_arch_reg_parse(arch, lower, len);
}

/* D1: our name for an LLVM register name (unchanged if unknown). */
static void llvm_reg_label(const struct cfi_arch *arch, const char *name,
                           size_t len, char *out, size_t size)
{
    int reg = llvm_reg_number(arch, name, len);
    char buf[16];
    if (reg < 0)
        snprintf(out, size, "?%.*s", (int)len, name);
    else
        snprintf(out, size, "%s",
                 cfi_arch_reg_label(arch, (unsigned)reg, buf, sizeof buf));
}

static bool is_reg_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* D3: one operand of a DW_OP in LLVM's notation, in ours. */
static void expr_operand(const struct cfi_arch *arch, const char *op,
                         const char *operand, char *out, size_t size)
{
    size_t n = 0;
    while (is_reg_char(operand[n]))
        n++;
    bool reg_first = operand[0] >= 'A' && operand[0] <= 'Z';
    if (reg_first && (operand[n] == '+' || operand[n] == '-')) {
        /* "RSP+8": bregN keeps the offset; bregx the number too */
        long long offset = strtoll(operand + n, NULL, 10);
        if (!strcmp(op, "bregx"))
            snprintf(out, size, " %d %lld", llvm_reg_number(arch, operand, n),
                     offset);
        else
            snprintf(out, size, " %lld", offset);
    } else if (reg_first && operand[n] == '\0') {
        if (!strcmp(op, "regx"))
            snprintf(out, size, " %d", llvm_reg_number(arch, operand, n));
        else
            out[0] = '\0'; /* DW_OP_regN RSP: the name only */
    } else if (!strncmp(operand, "0x", 2)) {
        snprintf(out, size, " %llu", strtoull(operand, NULL, 16));
    } else {
        snprintf(out, size, " %s", operand);
    }
}

/* D3: "DW_OP_breg7 RSP+8, DW_OP_deref" -> "expr(breg7 8; deref)". */
static void expr_to_ours(const struct cfi_arch *arch, const char *text,
                         char *out, size_t size)
{
    char copy[TEXT_MAX];
    snprintf(copy, sizeof copy, "%s", text);
    size_t len = (size_t)snprintf(out, size, "expr(");
    char *save_op = NULL;
    bool first = true;
    for (char *op = strtok_r(copy, ",", &save_op); op && len < size;
         op = strtok_r(NULL, ",", &save_op)) {
        while (*op == ' ')
            op++;
        if (!strncmp(op, "DW_OP_", 6))
            op += 6;
        char *save_arg = NULL;
        char *name = strtok_r(op, " ", &save_arg);
        if (!name)
            continue;
        len += (size_t)snprintf(out + len, size - len, "%s%s",
                                first ? "" : "; ", name);
        first = false;
        for (char *arg = strtok_r(NULL, " ", &save_arg); arg && len < size;
             arg = strtok_r(NULL, " ", &save_arg)) {
            char piece[64];
            expr_operand(arch, name, arg, piece, sizeof piece);
            len += (size_t)snprintf(out + len, size - len, "%s", piece);
        }
    }
    if (len < size)
        snprintf(out + len, size - len, ")");
}

/* D1, D2: "RSP+8", "RDI" -> "rsp+8", "rdi+0"; "CFA-8", "CFA" -> "cfa-8",
 * "cfa+0". */
static void reg_offset_to_ours(const struct cfi_arch *arch, const char *text,
                               char *out, size_t size, bool always_offset)
{
    size_t n = 0;
    while (is_reg_char(text[n]))
        n++;
    char label[24];
    if (n == 3 && !strncmp(text, "CFA", 3))
        snprintf(label, sizeof label, "cfa");
    else
        llvm_reg_label(arch, text, n, label, sizeof label);
    long long offset = strtoll(text + n, NULL, 10);
    if (text[n] || always_offset)
        snprintf(out, size, "%s%+lld", label, offset);
    else
        snprintf(out, size, "%s", label);
}

/* A location of LLVM's (UnwindLocation::dump) in our notation. */
static void location_to_ours(const struct cfi_arch *arch, const char *text,
                             bool is_cfa, char *out, size_t size)
{
    size_t len = strlen(text);
    if (!is_cfa && len >= 2 && text[0] == '[' && text[len - 1] == ']') {
        char inner[TEXT_MAX], converted[TEXT_MAX - 2];
        snprintf(inner, sizeof inner, "%.*s", (int)(len - 2), text + 1);
        if (!strncmp(inner, "DW_OP_", 6))
            expr_to_ours(arch, inner, converted, sizeof converted);
        else
            reg_offset_to_ours(arch, inner, converted, sizeof converted, true);
        snprintf(out, size, "[%s]", converted);
    } else if (!strcmp(text, "undefined")) {
        snprintf(out, size, "undef");
    } else if (!strcmp(text, "unspecified")) {
        snprintf(out, size, is_cfa ? "undef" : "unspecified"); /* D4 */
    } else if (!strcmp(text, "same")) {
        snprintf(out, size, "same");
    } else if (!strncmp(text, "DW_OP_", 6)) {
        expr_to_ours(arch, text, out, size);
    } else if ((text[0] >= '0' && text[0] <= '9') || text[0] == '-') {
        snprintf(out, size, "expr(lit%s)", text); /* D5: a constant */
    } else if (!strncmp(text, "CFA", 3)) {
        reg_offset_to_ours(arch, text, out, size, true);
    } else {
        /* the CFA as register+offset; a register rule is a name only */
        reg_offset_to_ours(arch, text, out, size, is_cfa);
    }
}

/* ------------------------------------------------------------------ */
/* Reading both outputs                                                 */
/* ------------------------------------------------------------------ */

/* "  0x1011: CFA=RBP+16: RBP=[CFA-16], R13=DW_OP_lit8, DW_OP_minus" */
static void parse_llvm_row(const struct cfi_arch *arch, struct fde_table *f,
                           char *line)
{
    char *colon = strstr(line, ": CFA=");
    struct row *row = add_row(f, strtoull(line, NULL, 16));
    char *cfa = colon + 6, *rules = strstr(cfa, ": ");
    if (rules)
        *rules = '\0', rules += 2;
    char text[TEXT_MAX];
    location_to_ours(arch, cfa, true, text, sizeof text);
    row->cfa = strdup(text);
    /* cells are separated by ", ", but so are an expression's ops */
    char *start = rules;
    for (char *p = rules; p && *p; p++) {
        bool end = p[1] == '\0';
        bool separator = p[0] == ',' && p[1] == ' ' &&
                         strncmp(p + 2, "DW_OP_", 6);
        if (!end && !separator)
            continue;
        if (!end)
            *p = '\0';
        char *eq = strchr(start, '=');
        if (eq) {
            char name[24];
            llvm_reg_label(arch, start, (size_t)(eq - start), name,
                           sizeof name);
            location_to_ours(arch, eq + 1, false, text, sizeof text);
            add_cell(row, name, strlen(name), text);
        }
        if (end)
            break;
        start = p + 2;
        p++;
    }
}

static bool is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* The output of llvm-dwarfdump-14 --eh-frame (both sections). */
static void parse_llvm(const struct cfi_arch *arch, char *text,
                       struct table *t)
{
    char section[16] = "";
    struct fde_table *f = NULL;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '.' && strstr(line, " contents:")) {
            sscanf(line, "%15s", section);
            f = NULL;
        } else if (is_hex(line, 8) && line[8] == ' ') {
            f = add_fde(t, section);
            f->offset = strtoull(line, NULL, 16);
            char *pc = strstr(line, " pc="), *cie = strstr(line, " cie=");
            if (pc && cie) {
                f->cie = strtoull(cie + 5, NULL, 16);
                sscanf(pc, " pc=%" SCNx64 "...%" SCNx64, &f->pc_begin,
                       &f->pc_end);
            } else {
                f->cie = UINT64_MAX; /* a CIE: kept for its instructions */
            }
        } else if (f && !strncmp(line, "  DW_CFA_", 9)) {
            f->insns = grow(f->insns, &f->insn_cap, f->ninsns,
                            sizeof *f->insns);
            f->insns[f->ninsns++] = strdup(line + 2);
        } else if (f && f->cie != UINT64_MAX && !strncmp(line, "  0x", 4) &&
                   strstr(line, ": CFA=")) {
            parse_llvm_row(arch, f, line);
        }
    }
}

/* The text of `cfisem il FILE`: "fde .eh_frame+0x18 cie=0x0 [0x1000,
 * 0x1007) ..." then "[0x1000,0x1001)  cfa=rsp+8  rip=[cfa-8]". */
static void parse_ours(char *text, struct table *t)
{
    struct fde_table *f = NULL;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!strncmp(line, "fde ", 4)) {
            char *plus = strchr(line + 4, '+');
            if (!plus)
                continue;
            *plus = '\0';
            f = add_fde(t, line + 4);
            f->offset = strtoull(plus + 1, NULL, 16);
            char *range = strstr(plus + 1, " [");
            if (range)
                sscanf(range, " [%" SCNx64 ",%" SCNx64, &f->pc_begin,
                       &f->pc_end);
        } else if (f && line[0] == '[') {
            struct row *row = add_row(f, strtoull(line + 1, NULL, 16));
            char *cell = strstr(line, "  ");
            while (cell) {
                cell += 2;
                char *end = strstr(cell, "  ");
                if (end)
                    *end = '\0';
                char *eq = strchr(cell, '=');
                if (eq && !strncmp(cell, "cfa=", 4))
                    row->cfa = strdup(cell + 4);
                else if (eq)
                    add_cell(row, cell, (size_t)(eq - cell), eq + 1);
                cell = end;
            }
        }
    }
}

/* ------------------------------------------------------------------ */
/* The model of F1 and F2                                               */
/* ------------------------------------------------------------------ */

struct cfa_state {
    char reg[24];           /* LLVM's name; "" when an expression */
    long long offset;
    char expr[TEXT_MAX];    /* "" when register+offset or none */
    bool set;
};

struct model_state {
    struct cfa_state cfa;
    int ra;
};

struct model {
    struct model_state llvm, right;
    struct model_state llvm_stack[16], right_stack[16];
    size_t depth;
    int cie_ra;
    bool unknown;             /* an instruction the model does not follow */
    size_t nrows, cap;
    struct model_row *rows;
};

static void cfa_text(const struct cfa_state *c, char *out, size_t size)
{
    if (!c->set)
        snprintf(out, size, "unspecified");
    else if (c->expr[0])
        snprintf(out, size, "%s", c->expr);
    else if (c->offset)
        snprintf(out, size, "%s%+lld", c->reg, c->offset);
    else
        snprintf(out, size, "%s", c->reg);
}

static void model_row_end(struct model *m)
{
    m->rows = grow(m->rows, &m->cap, m->nrows, sizeof *m->rows);
    struct model_row *r = &m->rows[m->nrows++];
    cfa_text(&m->llvm.cfa, r->cfa_llvm, sizeof r->cfa_llvm);
    cfa_text(&m->right.cfa, r->cfa_right, sizeof r->cfa_right);
    r->ra_llvm = m->llvm.ra;
    r->ra_right = m->right.ra;
}

/* One CFA instruction on one of the two states. */
static void model_cfa(struct cfa_state *c, const char *insn, const char *arg)
{
    if (!strcmp(insn, "DW_CFA_def_cfa")) {
        sscanf(arg, "%23s %lld", c->reg, &c->offset);
        c->expr[0] = '\0';
        c->set = true;
    } else if (!strcmp(insn, "DW_CFA_def_cfa_register")) {
        if (c->expr[0] || !c->set)
            c->offset = 0;
        sscanf(arg, "%23s", c->reg);
        c->expr[0] = '\0';
        c->set = true;
    } else if (!strcmp(insn, "DW_CFA_def_cfa_offset")) {
        c->offset = strtoll(arg, NULL, 10);
    } else if (!strcmp(insn, "DW_CFA_def_cfa_expression")) {
        snprintf(c->expr, sizeof c->expr, "%s", arg);
        c->set = true;
    }
}

static bool is_cfa_insn(const char *insn)
{
    return !strncmp(insn, "DW_CFA_def_cfa", 14);
}

static void model_step(struct model *m, const char *line, bool in_cie)
{
    char insn[48];
    const char *colon = strchr(line, ':');
    if (!colon)
        return;
    snprintf(insn, sizeof insn, "%.*s", (int)(colon - line), line);
    const char *arg = colon[1] == ' ' ? colon + 2 : colon + 1;
    if (!strncmp(insn, "DW_CFA_advance_loc", 18) ||
        !strcmp(insn, "DW_CFA_set_loc")) {
        if (!in_cie)
            model_row_end(m);
    } else if (!strcmp(insn, "DW_CFA_def_cfa_sf") ||
               !strcmp(insn, "DW_CFA_def_cfa_offset_sf") ||
               !strncmp(insn, "DW_CFA_LLVM", 11)) {
        m->unknown = true;
    } else if (is_cfa_insn(insn)) {
        model_cfa(&m->llvm.cfa, insn, arg);
        model_cfa(&m->right.cfa, insn, arg);
    } else if (!strcmp(insn, "DW_CFA_remember_state")) {
        if (m->depth == 16) {
            m->unknown = true;
            return;
        }
        m->llvm_stack[m->depth] = m->llvm;
        m->right_stack[m->depth++] = m->right;
    } else if (!strcmp(insn, "DW_CFA_restore_state")) {
        if (m->depth == 0) {
            m->unknown = true;
            return;
        }
        m->depth--;
        m->right = m->right_stack[m->depth];
        /* F1: LLVM 14 restores the registers (RA_SIGN_STATE with them)
         * but keeps the current CFA rule. */
        m->llvm.ra = m->llvm_stack[m->depth].ra;
    } else if (!strcmp(insn, "DW_CFA_AARCH64_negate_ra_state")) {
        m->llvm.ra = 1;                         /* F2: 1, never back */
        m->right.ra = m->right.ra == 1 ? 0 : 1;
    } else if (!strncmp(insn, "DW_CFA_restore", 14) &&
               !strcmp(arg, "reg34")) {
        m->llvm.ra = m->right.ra = m->cie_ra;
    } else if (strstr(line, "reg34") || strstr(insn, "_ra_state")) {
        m->unknown = true;                      /* another rule for 34 */
    }
    if (in_cie)
        m->cie_ra = m->right.ra;
}

/* Runs the model over the CIE's and the FDE's instructions. */
static void run_model(const struct table *t, const struct fde_table *f,
                      struct model *m)
{
    memset(m, 0, sizeof *m);
    m->llvm.ra = m->right.ra = m->cie_ra = -1;
    const struct fde_table *cie = NULL;
    for (size_t i = 0; i < t->nfdes && !cie; i++)
        if (t->fdes[i].cie == UINT64_MAX && t->fdes[i].offset == f->cie &&
            !strcmp(t->fdes[i].section, f->section))
            cie = &t->fdes[i];
    if (!cie) {
        m->unknown = true;
        return;
    }
    for (size_t i = 0; i < cie->ninsns; i++)
        model_step(m, cie->insns[i], true);
    for (size_t i = 0; i < f->ninsns; i++)
        model_step(m, f->insns[i], false);
    model_row_end(m);
}

/* ------------------------------------------------------------------ */
/* Comparing                                                            */
/* ------------------------------------------------------------------ */

struct tally {
    size_t files, fdes, rows, diffs, d6, d7, d8, f1, f2, f3;
    bool quiet; /* count differences without printing them */
};

struct fde_pair {
    const char *path;
    const struct cfi_arch *arch;
    const struct table *theirs_table;
    const struct fde_table *theirs, *ours;
    struct model model;
    bool modelled;
};

static void report(struct tally *tally, const struct fde_pair *p,
                   uint64_t loc, const char *what, const char *theirs,
                   const char *ours)
{
    if (tally->diffs++ < MAX_PRINTED_DIFFS && !tally->quiet)
        printf("DIFF %s: %s FDE 0x%" PRIx64 ": LOC 0x%" PRIx64
               ": %s: llvm-dwarfdump '%s', ours '%s'\n", p->path,
               p->theirs->section, p->theirs->offset, loc, what, theirs, ours);
}

static const char *cell_value(const struct row *row, const char *name)
{
    for (size_t i = 0; i < row->ncells; i++)
        if (!strcmp(row->cells[i].name, name))
            return row->cells[i].value;
    return NULL;
}

/* The model's rows for the pair; NULL when it cannot tell. */
static const struct model_row *model_rows(struct fde_pair *p)
{
    if (!p->modelled) {
        run_model(p->theirs_table, p->theirs, &p->model);
        p->modelled = true;
    }
    if (p->model.unknown || p->model.nrows != p->theirs->nrows)
        return NULL;
    return p->model.rows;
}

/* F1: LLVM printed the CFA the model of its fault gives, ours the one
 * the correct rule gives. */
static bool is_f1(struct fde_pair *p, size_t i, const char *theirs,
                  const char *ours)
{
    const struct model_row *m = model_rows(p);
    char llvm[TEXT_MAX], right[TEXT_MAX];
    if (!m)
        return false;
    location_to_ours(p->arch, m[i].cfa_llvm, true, llvm, sizeof llvm);
    location_to_ours(p->arch, m[i].cfa_right, true, right, sizeof right);
    return !strcmp(llvm, theirs) && !strcmp(right, ours) &&
           strcmp(llvm, right);
}

static bool ra_state_is(int state, const char *value)
{
    char text[32];
    if (state < 0)
        return value == NULL;
    snprintf(text, sizeof text, "expr(lit%d)", state);
    return value && !strcmp(value, text);
}

/* F2 (and F1 through RA_SIGN_STATE): the same for column 34. */
static bool is_f2(struct fde_pair *p, size_t i, const char *column,
                  const char *theirs, const char *ours)
{
    char buf[16];
    if (strcmp(column, cfi_arch_reg_label(p->arch, 34, buf, sizeof buf)) ||
        p->arch->e_machine != EM_AARCH64)
        return false;
    const struct model_row *m = model_rows(p);
    return m && m[i].ra_llvm != m[i].ra_right &&
           ra_state_is(m[i].ra_llvm, theirs) &&
           ra_state_is(m[i].ra_right, ours);
}

/* A location "cfa+N", "cfa-N", "[cfa+N]" or "[cfa-N]": its offset. */
static bool cfa_offset_of(const char *value, bool *at, int64_t *offset)
{
    char sign;
    unsigned long long n;
    int used = 0;
    *at = value[0] == '[';
    const char *text = value + *at;
    if (sscanf(text, "cfa%c%llu%n", &sign, &n, &used) != 2 ||
        (sign != '+' && sign != '-') || n > INT64_MAX)
        return false;
    if (strcmp(text + used, *at ? "]" : ""))
        return false;
    *offset = sign == '-' ? -(int64_t)n : (int64_t)n;
    return true;
}

/* F3: ours an offset from the CFA outside int32, LLVM's the same offset
 * cut to its low 32 bits, sign extended. */
static bool is_f3(const char *theirs, const char *ours)
{
    bool at_theirs, at_ours;
    int64_t o_theirs, o_ours;
    if (!theirs || !ours || !cfa_offset_of(theirs, &at_theirs, &o_theirs) ||
        !cfa_offset_of(ours, &at_ours, &o_ours) || at_theirs != at_ours)
        return false;
    int32_t cut = (int32_t)(uint32_t)(uint64_t)o_ours;
    return o_ours != (int64_t)cut && o_theirs == (int64_t)cut;
}

static void compare_cell(struct tally *tally, struct fde_pair *p, size_t i,
                         const char *column)
{
    const struct row *theirs = &p->theirs->rows[i], *ours = &p->ours->rows[i];
    const char *a = cell_value(theirs, column), *b = cell_value(ours, column);
    if (a && b && !strcmp(a, b))
        return;
    if (is_f2(p, i, column, a, b))
        tally->f2++;
    else if (is_f3(a, b))
        tally->f3++;
    else
        report(tally, p, theirs->loc, column, a ? a : "(none)",
               b ? b : "(none)");
}

static void compare_row(struct tally *tally, struct fde_pair *p, size_t i)
{
    const struct row *theirs = &p->theirs->rows[i], *ours = &p->ours->rows[i];
    tally->rows++;
    if (theirs->loc != ours->loc) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%" PRIx64, theirs->loc);
        snprintf(b, sizeof b, "%" PRIx64, ours->loc);
        report(tally, p, theirs->loc, "LOC", a, b);
        return;
    }
    const char *cfa_a = theirs->cfa ? theirs->cfa : "?";
    const char *cfa_b = ours->cfa ? ours->cfa : "?";
    if (strcmp(cfa_a, cfa_b)) {
        if (is_f1(p, i, cfa_a, cfa_b))
            tally->f1++;
        else
            report(tally, p, theirs->loc, "CFA", cfa_a, cfa_b);
    }
    for (size_t c = 0; c < theirs->ncells; c++)
        compare_cell(tally, p, i, theirs->cells[c].name);
    for (size_t c = 0; c < ours->ncells; c++)
        if (!cell_value(theirs, ours->cells[c].name))
            compare_cell(tally, p, i, ours->cells[c].name);
}

static int by_place(const void *a, const void *b)
{
    const struct fde_table *x = a, *y = b;
    int c = strcmp(x->section, y->section);
    if (c)
        return c;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static const struct fde_table *find_fde(const struct table *t,
                                        const struct fde_table *key)
{
    return t->nfdes ? bsearch(key, t->fdes, t->nfdes, sizeof *t->fdes, by_place)
                    : NULL;
}

/* D7: cfisem rejects the FDE for the documented reason of N6. */
static bool known_deviation(const char *path, const struct fde_table *fde)
{
    char pc[32], needle[64];
    snprintf(pc, sizeof pc, "0x%" PRIx64, fde->pc_begin);
    snprintf(needle, sizeof needle, "FDE 0x%" PRIx64 ": ", fde->offset);
    const char *args[] = {"il", path, "--pc", pc, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    bool known = strstr(run.err, needle) &&
                 strstr(run.err, "without a register+offset CFA");
    if (known)
        printf("deviation D7: %s", run.err + strlen("cfisem: "));
    test_run_free(&run);
    return known;
}

static void compare_fde(struct tally *tally, struct fde_pair *p)
{
    const struct fde_table *theirs = p->theirs, *ours = p->ours;
    if (!ours) {
        if (known_deviation(p->path, theirs))
            tally->d7++;
        else
            report(tally, p, theirs->pc_begin, "FDE", "present", "missing");
        return;
    }
    tally->fdes++;
    if (theirs->pc_begin != ours->pc_begin || theirs->pc_end != ours->pc_end) {
        char a[48], b[48];
        snprintf(a, sizeof a, "%" PRIx64 "..%" PRIx64, theirs->pc_begin,
                 theirs->pc_end);
        snprintf(b, sizeof b, "%" PRIx64 "..%" PRIx64, ours->pc_begin,
                 ours->pc_end);
        report(tally, p, theirs->pc_begin, "pc range", a, b);
    }
    /* D8: LLVM's rows at or past the FDE's end cover none of its
     * addresses (the IL lists the rows of [pc_begin, pc_end) only). */
    size_t their_rows = theirs->nrows;
    while (their_rows > 0 && theirs->pc_end > theirs->pc_begin &&
           theirs->rows[their_rows - 1].loc >= theirs->pc_end) {
        their_rows--;
        tally->d8++;
    }
    size_t n = their_rows < ours->nrows ? their_rows : ours->nrows;
    for (size_t i = 0; i < n; i++)
        compare_row(tally, p, i);
    if (their_rows != ours->nrows) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%zu rows", their_rows);
        snprintf(b, sizeof b, "%zu rows", ours->nrows);
        report(tally, p, theirs->pc_begin, "row count", a, b);
    }
    free(p->model.rows);
}

/* Compares the two tables of one file. */
static void compare_tables(struct tally *tally, const char *path,
                           const struct cfi_arch *arch, struct table *theirs,
                           struct table *ours)
{
    if (theirs->nfdes)
        qsort(theirs->fdes, theirs->nfdes, sizeof *theirs->fdes, by_place);
    if (ours->nfdes)
        qsort(ours->fdes, ours->nfdes, sizeof *ours->fdes, by_place);
    for (size_t i = 0; i < theirs->nfdes; i++) {
        if (theirs->fdes[i].cie == UINT64_MAX)
            continue; /* a CIE */
        struct fde_pair p = {.path = path, .arch = arch,
                             .theirs_table = theirs,
                             .theirs = &theirs->fdes[i],
                             .ours = find_fde(ours, &theirs->fdes[i])};
        compare_fde(tally, &p);
    }
    for (size_t i = 0; i < ours->nfdes; i++) {
        const struct fde_table *theirs_fde = find_fde(theirs, &ours->fdes[i]);
        if (theirs_fde && theirs_fde->cie != UINT64_MAX)
            continue;
        struct fde_pair p = {.path = path, .arch = arch,
                             .theirs_table = theirs, .theirs = &ours->fdes[i]};
        if (theirs->stopped)
            tally->d6++;
        else
            report(tally, &p, ours->fdes[i].pc_begin, "FDE", "missing",
                   "present");
    }
}

/* ------------------------------------------------------------------ */
/* Running the tools                                                    */
/* ------------------------------------------------------------------ */

/* Runs llvm-dwarfdump-14 --eh-frame path: stdout into *out, whether it
 * said it met an opcode it does not know (D6) into *stopped. */
static char *run_dwarfdump(const char *path, bool *stopped)
{
    char err_path[] = "/tmp/check_dwarfdump-XXXXXX";
    int err_fd = mkstemp(err_path);
    ck_assert_int_ge(err_fd, 0);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(err_fd, 2);
        close(fds[0]);
        execlp("llvm-dwarfdump-14", "llvm-dwarfdump-14", "--eh-frame", path,
               (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 1 << 16;
    char *out = malloc(cap);
    for (ssize_t n; (n = read(fds[0], out + len, cap - len - 1)) > 0;) {
        len += (size_t)n;
        if (cap - len < 4096)
            out = realloc(out, cap *= 2);
    }
    out[len] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 127,
                  "cannot run llvm-dwarfdump-14: scripts/install-deps "
                  "installs llvm-14");
    char *err = test_read_file(err_path, NULL);
    *stopped = err && strstr(err, "invalid extended CFI opcode");
    if (err && err[0] && !*stopped)
        printf("%s: llvm-dwarfdump: %s", path, err);
    free(err);
    close(err_fd);
    unlink(err_path);
    return out;
}

static const struct cfi_arch *arch_of(const char *path)
{
    Elf64_Ehdr eh;
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ssize_t n = pread(fd, &eh, sizeof eh, 0);
    close(fd);
    ck_assert_int_eq(n, sizeof eh);
    const struct cfi_arch *arch = cfi_arch_of_machine(eh.e_machine);
    ck_assert_msg(arch != NULL, "%s: no architecture", path);
    return arch;
}

static void compare_file(struct tally *tally, const char *path)
{
    const struct cfi_arch *arch = arch_of(path);
    struct table theirs = {0}, ours = {0};
    char *theirs_text = run_dwarfdump(path, &theirs.stopped);
    const char *args[] = {"il", path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0 || run.exit_code == 2,
                  "%s: cfisem exit %d signal %d: %s", path, run.exit_code,
                  run.signal, run.err);
    parse_llvm(arch, theirs_text, &theirs);
    parse_ours(run.out, &ours);
    size_t fdes = tally->fdes, rows = tally->rows, diffs = tally->diffs;
    compare_tables(tally, path, arch, &theirs, &ours);
    tally->files++;
    printf("%s: %zu FDEs, %zu rows compared, %zu differences%s\n", path,
           tally->fdes - fdes, tally->rows - rows, tally->diffs - diffs,
           theirs.stopped ? " (llvm-dwarfdump stopped at an unknown opcode)"
                          : "");
    table_free(&theirs);
    table_free(&ours);
    test_run_free(&run);
    free(theirs_text);
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

static void run_oracle(const struct test_file_list *files, size_t min_files)
{
    struct tally tally = {0};
    for (size_t i = 0; i < files->n; i++)
        compare_file(&tally, files->paths[i]);
    printf("llvm-dwarfdump oracle: %zu files, %zu FDEs and %zu rows "
           "compared, %zu FDEs after an unknown opcode (D6), %zu known "
           "deviations (D7), %zu rows past an FDE's end (D8), findings: "
           "%zu CFA cells (F1), %zu RA_SIGN_STATE cells (F2), %zu "
           "offsets cut to 32 bits (F3); %zu differences\n",
           tally.files, tally.fdes, tally.rows, tally.d6, tally.d7, tally.d8,
           tally.f1, tally.f2, tally.f3, tally.diffs);
    fflush(stdout);
    ck_assert_uint_ge(tally.files, min_files);
    ck_assert_uint_gt(tally.rows, 0);
    ck_assert_msg(tally.diffs == 0, "%zu differences with llvm-dwarfdump",
                  tally.diffs);
}

/* Each set of files of tests/oracle_files.h, as every printed oracle
 * sees them (the AArch64 set: both architectures' rows). */
START_TEST(oracle_file_set)
{
    struct test_file_list files = {0};
    size_t min_files = test_files_of_set((enum oracle_set)_i, &files);
    if (min_files)
        run_oracle(&files, min_files);
    test_files_free(&files);
}
END_TEST

/* The normalisation and the models must not hide a real difference:
 * F1 explains a CFA only where LLVM 14's fault gives exactly what it
 * printed; any other CFA, a cell, a location is reported. */
START_TEST(oracle_reports_a_difference)
{
    char theirs_text[] =
        ".eh_frame contents:\n\n"
        "00000000 00000014 00000000 CIE\n"
        "  DW_CFA_def_cfa: RSP +8\n"
        "  DW_CFA_offset: RIP -8\n\n"
        "  CFA=RSP+8: RIP=[CFA-8]\n\n"
        "00000018 00000024 0000001c FDE cie=00000000 pc=00001000...00001004\n"
        "  DW_CFA_remember_state:\n"
        "  DW_CFA_advance_loc: 1\n"
        "  DW_CFA_def_cfa_offset: +16\n"
        "  DW_CFA_advance_loc: 1\n"
        "  DW_CFA_restore_state:\n"
        "  DW_CFA_advance_loc: 1\n"
        "  DW_CFA_def_cfa_expression: DW_OP_breg7 RSP+8, DW_OP_deref\n\n"
        "  0x1000: CFA=RSP+8: RIP=[CFA-8]\n"
        "  0x1001: CFA=RSP+16: RIP=[CFA-8]\n"
        "  0x1002: CFA=RSP+16: RBX=[CFA], RIP=[CFA-8]\n"
        "  0x1003: CFA=DW_OP_breg7 RSP+8, DW_OP_deref: RIP=[CFA-8]\n";
    char ours_text[] =
        "fde .eh_frame+0x18 cie=0x0 [0x1000,0x1004) aug=zR ra=16\n"
        "[0x1000,0x1001)  cfa=rsp+8  rip=[cfa-8]\n"
        "[0x1001,0x1002)  cfa=rsp+16  rip=[cfa-8]\n"
        "[0x1002,0x1003)  cfa=rsp+8  rbx=[cfa+0]  rip=[cfa-8]\n"
        "[0x1003,0x1004)  cfa=expr(breg7 8; deref)  rip=[cfa-16]\n";
    const struct cfi_arch *arch = cfi_arch_of_machine(EM_X86_64);
    struct table theirs = {0}, ours = {0};
    parse_llvm(arch, theirs_text, &theirs);
    parse_ours(ours_text, &ours);
    ck_assert_uint_eq(theirs.nfdes, 2); /* the CIE and the FDE */
    ck_assert_str_eq(theirs.fdes[1].rows[3].cfa, "expr(breg7 8; deref)");
    ck_assert_str_eq(theirs.fdes[1].rows[2].cells[0].value, "[cfa+0]");
    struct tally tally = {.quiet = true};
    compare_tables(&tally, "x", arch, &theirs, &ours);
    /* row 0x1002: F1 (the CFA restore_state left); row 0x1003: rip */
    ck_assert_uint_eq(tally.rows, 4);
    ck_assert_uint_eq(tally.f1, 1);
    ck_assert_uint_eq(tally.diffs, 1);
    /* A CFA the model does not give is a difference, not F1. */
    free(ours.fdes[0].rows[2].cfa);
    ours.fdes[0].rows[2].cfa = strdup("rsp+24");
    struct tally again = {.quiet = true};
    compare_tables(&again, "x", arch, &theirs, &ours);
    ck_assert_uint_eq(again.f1, 0);
    ck_assert_uint_eq(again.diffs, 2);
    table_free(&theirs);
    table_free(&ours);
}
END_TEST

/* F3 explains an offset only where LLVM printed exactly its low 32
 * bits, and only for an offset outside int32. */
START_TEST(oracle_f3_is_the_cut_alone)
{
    ck_assert(is_f3("[cfa-16]", "[cfa-4294967312]"));
    ck_assert(is_f3("cfa+16", "cfa+4294967312"));
    ck_assert(!is_f3("[cfa-24]", "[cfa-4294967312]"));
    ck_assert(!is_f3("cfa-16", "[cfa-4294967312]"));
    ck_assert(!is_f3("[cfa-16]", "[cfa-24]"));
    ck_assert(!is_f3("[cfa-16]x", "[cfa-4294967312]"));
    ck_assert(!is_f3("x19", "[cfa-4294967312]"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dwarfdump");
    TCase *t = tcase_create("oracle");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, oracle_reports_a_difference);
    tcase_add_test(t, oracle_f3_is_the_cut_alone);
    tcase_add_loop_test(t, oracle_file_set, 0, ORACLE_SET_COUNT);
    suite_add_tcase(s, t);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
