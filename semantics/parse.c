/* SPDX-License-Identifier: MIT */
/* parse.c — the parser of the text format, one range line:
 *
 *   line  ::= range "  cfa=" cfa ("  " NAME "=" rule)* ["\n"]
 *   range ::= "[0x" HEX ",0x" HEX ")"
 *   cfa   ::= REG ("+"|"-") DEC | "expr(" OPS ")" | "undef"
 *   rule  ::= "undef" | "same" | "[cfa" ("+"|"-") DEC "]" | "cfa" ("+"|"-") DEC
 *           | REG | "[expr(" OPS ")]" | "expr(" OPS ")"
 *
 * REG and NAME are register names (cfi_arch_reg_parse: "rbx", "r3",
 * "xmm16"; "x29", "sp" on AArch64);
 * OPS is assembled by expr_text.c. The rules may come in any order; the row
 * gets them sorted, and a register given twice is an error. Every error is
 * CFI_E_MALFORMED with diag->offset the column (0-based) of the problem. */
#include "internal.h"

#include <string.h>

struct line_parser {
    const char *line;
    size_t pos;
    const struct cfi_arch *arch;
    struct sem_arena *arena;
    struct cfi_diag *diag;
};

static enum cfi_status parse_fail(struct line_parser *lp, size_t column,
                                  const char *message)
{
    return cfi_fail(lp->diag, CFI_E_MALFORMED, column, message);
}

static char peek(const struct line_parser *lp)
{
    return lp->line[lp->pos];
}

/* Consumes `text` when the line continues with it. */
static bool accept(struct line_parser *lp, const char *text)
{
    size_t n = strlen(text);
    if (strncmp(lp->line + lp->pos, text, n) != 0)
        return false;
    lp->pos += n;
    return true;
}

static bool at_end(const struct line_parser *lp)
{
    return peek(lp) == '\0' ||
           (peek(lp) == '\n' && lp->line[lp->pos + 1] == '\0');
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* "0x" then 1 to 16 lower-case hex digits. */
static enum cfi_status parse_address(struct line_parser *lp, uint64_t *value)
{
    size_t start = lp->pos;
    if (!accept(lp, "0x") || hex_digit(peek(lp)) < 0)
        return parse_fail(lp, start, "expected a 0x address");
    uint64_t v = 0;
    unsigned digits = 0;
    for (int d; (d = hex_digit(peek(lp))) >= 0; lp->pos++, digits++)
        v = v << 4 | (uint64_t)d;
    if (digits > 16)
        return parse_fail(lp, start, "address out of range");
    *value = v;
    return CFI_OK;
}

static enum cfi_status parse_range(struct line_parser *lp,
                                   struct sem_range *range)
{
    enum cfi_status st;
    if (!accept(lp, "["))
        return parse_fail(lp, lp->pos, "expected '['");
    if ((st = parse_address(lp, &range->begin)) != CFI_OK)
        return st;
    if (!accept(lp, ","))
        return parse_fail(lp, lp->pos, "expected ','");
    if ((st = parse_address(lp, &range->end)) != CFI_OK)
        return st;
    if (!accept(lp, ")"))
        return parse_fail(lp, lp->pos, "expected ')'");
    if (range->end <= range->begin)
        return parse_fail(lp, 0, "empty range");
    return CFI_OK;
}

/* "+DEC" or "-DEC", in the range of int64_t. */
static enum cfi_status parse_offset(struct line_parser *lp, int64_t *offset)
{
    size_t start = lp->pos;
    char sign = peek(lp);
    if (sign != '+' && sign != '-')
        return parse_fail(lp, start, "expected a signed offset");
    lp->pos++;
    uint64_t limit = sign == '-' ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
    uint64_t v = 0;
    if (peek(lp) < '0' || peek(lp) > '9')
        return parse_fail(lp, start, "expected a signed offset");
    for (; peek(lp) >= '0' && peek(lp) <= '9'; lp->pos++) {
        unsigned d = (unsigned)(peek(lp) - '0');
        if (v > (limit - d) / 10)
            return parse_fail(lp, start, "offset out of range");
        v = v * 10 + d;
    }
    *offset = sign == '-' ? (int64_t)(0 - v) : (int64_t)v;
    return CFI_OK;
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* A name: letters, digits, '_' and '.' ("fs.base"); *len 0 when none. */
static size_t scan_name(const struct line_parser *lp, size_t *len)
{
    size_t start = lp->pos;
    *len = 0;
    while (is_name_char(lp->line[start + *len]))
        (*len)++;
    return start;
}

static bool name_is(const struct line_parser *lp, size_t start, size_t len,
                    const char *word)
{
    return strlen(word) == len && memcmp(lp->line + start, word, len) == 0;
}

static enum cfi_status parse_register(struct line_parser *lp, uint32_t *reg)
{
    size_t len;
    size_t start = scan_name(lp, &len);
    int r = len ? cfi_arch_reg_parse(lp->arch, lp->line + start, len) : -1;
    if (r < 0)
        return parse_fail(lp, start, "unknown register");
    lp->pos += len;
    *reg = (uint32_t)r;
    return CFI_OK;
}

/* "expr(" is consumed; OPS and the closing ')'. */
static enum cfi_status parse_expr(struct line_parser *lp, struct sem_expr *expr)
{
    enum cfi_status st =
        sem_expr_assemble(lp->line, &lp->pos, lp->arena, expr, lp->diag);
    if (st == CFI_OK)
        lp->pos++; /* the ')' */
    return st;
}

static enum cfi_status parse_cfa(struct line_parser *lp, struct sem_cfa *cfa)
{
    memset(cfa, 0, sizeof *cfa);
    if (accept(lp, "undef")) {
        cfa->kind = SEM_CFA_RULE_INVALID;
        return CFI_OK;
    }
    if (accept(lp, "expr(")) {
        cfa->kind = SEM_CFA_RULE_EXPR;
        return parse_expr(lp, &cfa->expr);
    }
    cfa->kind = SEM_CFA_RULE_REG_OFFSET;
    enum cfi_status st = parse_register(lp, &cfa->reg);
    return st != CFI_OK ? st : parse_offset(lp, &cfa->offset);
}

/* "[cfa+N]" or "[expr(OPS)]": the '[' is consumed. */
static enum cfi_status parse_stored_at(struct line_parser *lp,
                                       struct sem_rule *rule)
{
    enum cfi_status st;
    if (accept(lp, "cfa")) {
        rule->kind = SEM_RULE_OFFSET;
        st = parse_offset(lp, &rule->offset);
    } else if (accept(lp, "expr(")) {
        rule->kind = SEM_RULE_EXPRESSION;
        st = parse_expr(lp, &rule->expr);
    } else {
        return parse_fail(lp, lp->pos, "expected 'cfa' or 'expr(' after '['");
    }
    if (st == CFI_OK && !accept(lp, "]"))
        return parse_fail(lp, lp->pos, "expected ']'");
    return st;
}

static enum cfi_status parse_rule(struct line_parser *lp, struct sem_rule *rule)
{
    memset(rule, 0, sizeof *rule);
    if (accept(lp, "["))
        return parse_stored_at(lp, rule);
    if (accept(lp, "expr(")) {
        rule->kind = SEM_RULE_VAL_EXPRESSION;
        return parse_expr(lp, &rule->expr);
    }
    size_t len;
    size_t start = scan_name(lp, &len);
    char next = lp->line[start + len];
    if (name_is(lp, start, len, "cfa") && (next == '+' || next == '-')) {
        lp->pos += len;
        rule->kind = SEM_RULE_VAL_OFFSET;
        return parse_offset(lp, &rule->offset);
    }
    if (name_is(lp, start, len, "undef") || name_is(lp, start, len, "same")) {
        lp->pos += len;
        rule->kind = len == 5 ? SEM_RULE_UNDEFINED : SEM_RULE_SAME_VALUE;
        return CFI_OK;
    }
    rule->kind = SEM_RULE_REGISTER;
    return parse_register(lp, &rule->reg);
}

/* Inserts in register order; a register given twice is an error. There
 * is room: registers are distinct and below CFI_NREGS. */
static enum cfi_status add_rule(struct line_parser *lp, size_t column,
                                struct sem_reg_rule *rules, uint32_t *n,
                                const struct sem_reg_rule *entry)
{
    for (uint32_t j = 0; j < *n; j++)
        if (rules[j].reg == entry->reg)
            return parse_fail(lp, column, "register given twice");
    uint32_t i = *n;
    for (; i > 0 && rules[i - 1].reg > entry->reg; i--)
        rules[i] = rules[i - 1];
    rules[i] = *entry;
    (*n)++;
    return CFI_OK;
}

static enum cfi_status parse_rules(struct line_parser *lp,
                                   struct sem_reg_rule *rules, uint32_t *n)
{
    *n = 0;
    while (!at_end(lp)) {
        if (!accept(lp, "  "))
            return parse_fail(lp, lp->pos, "expected two spaces or the end");
        size_t column = lp->pos;
        struct sem_reg_rule entry;
        enum cfi_status st = parse_register(lp, &entry.reg);
        if (st != CFI_OK)
            return st;
        if (!accept(lp, "="))
            return parse_fail(lp, lp->pos, "expected '='");
        if ((st = parse_rule(lp, &entry.rule)) != CFI_OK ||
            (st = add_rule(lp, column, rules, n, &entry)) != CFI_OK)
            return st;
    }
    return CFI_OK;
}

static enum cfi_status make_row(struct line_parser *lp,
                                const struct sem_cfa *cfa,
                                const struct sem_reg_rule *rules, uint32_t n,
                                const struct sem_row **row)
{
    struct sem_row *r = sem_arena_alloc(lp->arena, sizeof *r);
    struct sem_reg_rule *copy =
        n ? sem_arena_copy(lp->arena, rules, n * sizeof *rules) : NULL;
    if (!r || (n && !copy))
        return cfi_fail(lp->diag, CFI_E_NOMEM, lp->pos, "out of memory");
    r->cfa = *cfa;
    r->nrules = n;
    r->rules = copy;
    *row = r;
    return CFI_OK;
}

enum cfi_status sem_parse_range_text(const char *line,
                                     const struct cfi_arch *arch,
                                     struct sem_arena *arena,
                                     struct sem_range *range,
                                     struct cfi_diag *diag)
{
    struct line_parser lp = {line, 0, arch, arena, diag};
    struct sem_range parsed;
    struct sem_cfa cfa;
    struct sem_reg_rule rules[CFI_NREGS];
    uint32_t n;
    enum cfi_status st = parse_range(&lp, &parsed);
    if (st != CFI_OK)
        return st;
    if (!accept(&lp, "  cfa="))
        return parse_fail(&lp, lp.pos, "expected '  cfa='");
    if ((st = parse_cfa(&lp, &cfa)) != CFI_OK ||
        (st = parse_rules(&lp, rules, &n)) != CFI_OK ||
        (st = make_row(&lp, &cfa, rules, n, &parsed.row)) != CFI_OK)
        return st;
    *range = parsed;
    return CFI_OK;
}
