/* SPDX-License-Identifier: MIT */
/* trace.c — the notation of translate.c's rules, for printing a trace:
 *
 *   R ::= undef | same | addr(cfa+n) | val(cfa+n) | reg(m)
 *       | addr(E) | val(E)
 *   C ::= r+n | expr(E)
 *
 * with E the disassembled DWARF expression ("breg7 8; deref"). */
#include <inttypes.h>

#include "internal.h"
#include "sem.h"

static void print_reg(FILE *out, const struct cfi_arch *arch, unsigned reg)
{
    char buf[16];
    fputs(cfi_arch_reg_label(arch, reg, buf, sizeof buf), out);
}

static void print_expr_call(FILE *out, const char *kind,
                            const struct sem_expr *expr)
{
    fprintf(out, "%s(", kind);
    sem_print_expr(out, expr);
    putc(')', out);
}

void sem_print_rule_notation(FILE *out, const struct cfi_arch *arch,
                             const struct sem_rule *rule)
{
    switch (rule->kind) {
    case SEM_RULE_UNSPECIFIED: fputs("none", out); return;
    case SEM_RULE_UNDEFINED: fputs("undef", out); return;
    case SEM_RULE_SAME_VALUE: fputs("same", out); return;
    case SEM_RULE_OFFSET:
        fprintf(out, "addr(cfa%+" PRId64 ")", rule->offset);
        return;
    case SEM_RULE_VAL_OFFSET:
        fprintf(out, "val(cfa%+" PRId64 ")", rule->offset);
        return;
    case SEM_RULE_REGISTER:
        fputs("reg(", out);
        print_reg(out, arch, rule->reg);
        putc(')', out);
        return;
    case SEM_RULE_EXPRESSION: print_expr_call(out, "addr", &rule->expr); return;
    case SEM_RULE_VAL_EXPRESSION:
        print_expr_call(out, "val", &rule->expr);
        return;
    }
    fputs("invalid", out);
}

void sem_print_cfa_notation(FILE *out, const struct cfi_arch *arch,
                            const struct sem_cfa *cfa)
{
    switch (cfa->kind) {
    case SEM_CFA_RULE_REG_OFFSET:
        print_reg(out, arch, cfa->reg);
        fprintf(out, "%+" PRId64, cfa->offset);
        return;
    case SEM_CFA_RULE_EXPR: print_expr_call(out, "expr", &cfa->expr); return;
    case SEM_CFA_RULE_INVALID: break;
    }
    fputs("none", out);
}
