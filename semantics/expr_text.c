/* SPDX-License-Identifier: MIT */
/* expr_text.c — DWARF expressions as text: the disassembler behind
 * sem_print_expr and the assembler the text parser uses.
 *
 * The listing is the operations in order, separated by "; ", each its name
 * without the DW_OP_ prefix and its operands in decimal ("breg7 160",
 * "bregx 17 -8", "const4s -32"), addresses in 0x-hex ("addr 0x1000"). The
 * operand shapes are those of dwop.h. Bytes that do not decode (an unknown
 * opcode, a truncated operand, a LEB128 number over 64 bits, an operation
 * whose operands we do not read) print as "data HEX" (lower-case, no
 * spaces) and end the listing; the assembler turns "data HEX" back into
 * those bytes, so every listing the printer writes assembles back to bytes
 * that print the same (LEB128 numbers are assembled in their shortest form,
 * which is why the identity holds on text and not on bytes). */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dwop.h"

static const struct sem_dwop dwops[] = {
#define DWOP_ENTRY(name, first, count, shape) \
    {#name, first, count, DWOP_##shape},
    SEM_DW_OPS(DWOP_ENTRY)
#undef DWOP_ENTRY
};
#define NDWOPS (sizeof dwops / sizeof dwops[0])

/* The entry for an opcode byte, or NULL when the byte is no opcode. */
static const struct sem_dwop *dwop_find(unsigned opcode)
{
    for (size_t i = 0; i < NDWOPS; i++)
        if (opcode >= dwops[i].first &&
            opcode < (unsigned)dwops[i].first + dwops[i].count)
            return &dwops[i];
    return NULL;
}

/* The entry for a printed name ("breg7": *index = 7), or NULL. A family
 * index is decimal without leading zeros. */
static const struct sem_dwop *dwop_lookup(const char *name, size_t len,
                                          unsigned *index)
{
    *index = 0;
    for (size_t i = 0; i < NDWOPS; i++)
        if (dwops[i].count == 1 && strlen(dwops[i].name) == len &&
            memcmp(dwops[i].name, name, len) == 0)
            return &dwops[i];
    for (size_t i = 0; i < NDWOPS; i++) {
        size_t n = strlen(dwops[i].name);
        if (dwops[i].count == 1 || len <= n || len > n + 2 ||
            memcmp(dwops[i].name, name, n) != 0)
            continue;
        if (name[n] == '0' && len > n + 1)
            return NULL;
        unsigned k = 0;
        for (size_t j = n; j < len; j++) {
            if (name[j] < '0' || name[j] > '9')
                return NULL;
            k = k * 10 + (unsigned)(name[j] - '0');
        }
        if (k >= dwops[i].count)
            return NULL;
        *index = k;
        return &dwops[i];
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                             */
/* ------------------------------------------------------------------ */

/* One decoded operation. a and b hold the operands in the order the shape
 * lists them (signed ones as two's complement); block is the byte block of
 * BLOCK, ULEB_BLOCK1 and SUBEXPR. */
struct dwop_insn {
    const struct sem_dwop *op;
    unsigned index;
    uint64_t a, b;
    const uint8_t *block;
    size_t block_len;
    size_t size;
};

static bool read_signed(struct sem_cursor *r, unsigned size, uint64_t *value)
{
    if (!sem_read_fixed(r, size, value))
        return false;
    unsigned bits = 8 * size;
    if (bits < 64 && (*value >> (bits - 1)) & 1)
        *value |= ~(uint64_t)0 << bits;
    return true;
}

/* False on truncation or a value over 64 bits. */
static bool read_uleb(struct sem_cursor *r, uint64_t *value)
{
    bool overflow = false;
    return sem_read_uleb(r, value, &overflow);
}

static bool read_sleb(struct sem_cursor *r, uint64_t *value)
{
    bool overflow = false;
    int64_t v;
    if (!sem_read_sleb(r, &v, &overflow))
        return false;
    *value = (uint64_t)v;
    return true;
}

static bool read_block(struct sem_cursor *r, uint64_t len,
                       struct dwop_insn *insn)
{
    if (r->len - r->pos < len)
        return false;
    insn->block = r->bytes + r->pos;
    insn->block_len = (size_t)len;
    r->pos += (size_t)len;
    return true;
}

static bool read_operands(struct sem_cursor *r, struct dwop_insn *insn)
{
    switch (insn->op->shape) {
    case DWOP_NONE: return true;
    case DWOP_ADDR: return sem_read_fixed(r, 8, &insn->a);
    case DWOP_U1: return sem_read_fixed(r, 1, &insn->a);
    case DWOP_S1: return read_signed(r, 1, &insn->a);
    case DWOP_U2: return sem_read_fixed(r, 2, &insn->a);
    case DWOP_S2: return read_signed(r, 2, &insn->a);
    case DWOP_U4: return sem_read_fixed(r, 4, &insn->a);
    case DWOP_S4: return read_signed(r, 4, &insn->a);
    case DWOP_U8: case DWOP_S8: return sem_read_fixed(r, 8, &insn->a);
    case DWOP_ULEB: return read_uleb(r, &insn->a);
    case DWOP_SLEB: return read_sleb(r, &insn->a);
    case DWOP_ULEB_SLEB:
        return read_uleb(r, &insn->a) && read_sleb(r, &insn->b);
    case DWOP_ULEB_ULEB:
        return read_uleb(r, &insn->a) && read_uleb(r, &insn->b);
    case DWOP_U1_ULEB:
        return sem_read_fixed(r, 1, &insn->a) && read_uleb(r, &insn->b);
    case DWOP_U4_SLEB:
        return sem_read_fixed(r, 4, &insn->a) && read_sleb(r, &insn->b);
    case DWOP_BLOCK:
    case DWOP_SUBEXPR:
        return read_uleb(r, &insn->a) && read_block(r, insn->a, insn);
    case DWOP_ULEB_BLOCK1:
        return read_uleb(r, &insn->a) && sem_read_fixed(r, 1, &insn->b) &&
               read_block(r, insn->b, insn);
    case DWOP_UNDECODED: return false;
    }
    return false;
}

/* Decodes the operation at bytes[0]; false when it cannot be decoded. */
static bool dwop_decode(const uint8_t *bytes, size_t len,
                        struct dwop_insn *insn)
{
    memset(insn, 0, sizeof *insn);
    if (len == 0 || !(insn->op = dwop_find(bytes[0])))
        return false;
    insn->index = bytes[0] - insn->op->first;
    struct sem_cursor r = {bytes, len, 1};
    if (!read_operands(&r, insn))
        return false;
    insn->size = r.pos;
    return true;
}

/* ------------------------------------------------------------------ */
/* Registers an expression reads                                        */
/* ------------------------------------------------------------------ */

bool sem_expr_decodes(const struct sem_expr *expr)
{
    struct dwop_insn insn;
    for (size_t at = 0; at < expr->len; at += insn.size)
        if (!dwop_decode(expr->bytes + at, expr->len - at, &insn))
            return false;
    return true;
}

bool sem_expr_reads_register(const struct sem_expr *expr, unsigned reg)
{
    struct dwop_insn insn;
    for (size_t at = 0; at < expr->len; at += insn.size) {
        if (!dwop_decode(expr->bytes + at, expr->len - at, &insn))
            return false; /* evaluation stops here: nothing after is read */
        bool is_breg = !strcmp(insn.op->name, "breg") && insn.index == reg;
        bool is_bregx = !strcmp(insn.op->name, "bregx") && insn.a == reg;
        if (is_breg || is_bregx)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* Printing                                                             */
/* ------------------------------------------------------------------ */

static void print_hex(FILE *out, const uint8_t *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        putc(digits[bytes[i] >> 4], out);
        putc(digits[bytes[i] & 15], out);
    }
}

static void print_block(FILE *out, const struct dwop_insn *insn)
{
    if (insn->block_len) {
        putc(' ', out);
        print_hex(out, insn->block, insn->block_len);
    }
}

static void print_ops(FILE *out, const uint8_t *bytes, size_t len,
                      unsigned depth);

static void print_operands(FILE *out, const struct dwop_insn *insn,
                           unsigned depth)
{
    int64_t sa = (int64_t)insn->a, sb = (int64_t)insn->b;
    switch (insn->op->shape) {
    case DWOP_NONE: case DWOP_UNDECODED: break;
    case DWOP_ADDR: fprintf(out, " 0x%" PRIx64, insn->a); break;
    case DWOP_U1: case DWOP_U2: case DWOP_U4: case DWOP_U8: case DWOP_ULEB:
        fprintf(out, " %" PRIu64, insn->a);
        break;
    case DWOP_S1: case DWOP_S2: case DWOP_S4: case DWOP_S8: case DWOP_SLEB:
        fprintf(out, " %" PRId64, sa);
        break;
    case DWOP_ULEB_SLEB: case DWOP_U4_SLEB:
        fprintf(out, " %" PRIu64 " %" PRId64, insn->a, sb);
        break;
    case DWOP_ULEB_ULEB: case DWOP_U1_ULEB:
        fprintf(out, " %" PRIu64 " %" PRIu64, insn->a, insn->b);
        break;
    case DWOP_BLOCK:
        fprintf(out, " %" PRIu64, insn->a);
        print_block(out, insn);
        break;
    case DWOP_ULEB_BLOCK1:
        fprintf(out, " %" PRIu64 " %" PRIu64, insn->a, insn->b);
        print_block(out, insn);
        break;
    case DWOP_SUBEXPR:
        putc('(', out);
        print_ops(out, insn->block, insn->block_len, depth + 1);
        putc(')', out);
        break;
    }
}

static void print_ops(FILE *out, const uint8_t *bytes, size_t len,
                      unsigned depth)
{
    struct dwop_insn insn;
    for (size_t pos = 0; pos < len; pos += insn.size) {
        if (pos)
            fputs("; ", out);
        if (!dwop_decode(bytes + pos, len - pos, &insn) ||
            (insn.op->shape == DWOP_SUBEXPR && depth >= SEM_DWOP_NEST_MAX)) {
            fputs("data ", out);
            print_hex(out, bytes + pos, len - pos);
            return;
        }
        fputs(insn.op->name, out);
        if (insn.op->count > 1)
            fprintf(out, "%u", insn.index);
        print_operands(out, &insn, depth);
    }
}

void sem_print_expr(FILE *out, const struct sem_expr *expr)
{
    print_ops(out, expr->bytes, expr->len, 0);
}

/* ------------------------------------------------------------------ */
/* Assembling                                                           */
/* ------------------------------------------------------------------ */

/* The assembler's state: the line (columns in errors are offsets in it),
 * the cursor, and the bytes assembled so far (malloc'd scratch). */
struct assembler {
    const char *line;
    size_t pos;
    uint8_t *bytes;
    size_t len;
    size_t cap;
    struct cfi_diag *diag;
};

static enum cfi_status asm_fail(struct assembler *as, size_t column,
                                const char *message)
{
    return cfi_fail(as->diag, CFI_E_MALFORMED, column, message);
}

static enum cfi_status emit(struct assembler *as, const uint8_t *bytes,
                            size_t n)
{
    if (as->cap - as->len < n) {
        size_t cap = as->cap ? as->cap : 64;
        while (cap - as->len < n)
            cap *= 2;
        uint8_t *grown = realloc(as->bytes, cap);
        if (!grown)
            return cfi_fail(as->diag, CFI_E_NOMEM, as->pos, "out of memory");
        as->bytes = grown;
        as->cap = cap;
    }
    memcpy(as->bytes + as->len, bytes, n);
    as->len += n;
    return CFI_OK;
}

static enum cfi_status emit_fixed(struct assembler *as, uint64_t v,
                                  unsigned size)
{
    uint8_t b[8];
    for (unsigned i = 0; i < size; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return emit(as, b, size);
}

static size_t encode_uleb(uint64_t v, uint8_t *b)
{
    size_t n = 0;
    do {
        b[n] = v & 0x7f;
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

static enum cfi_status emit_uleb(struct assembler *as, uint64_t v)
{
    uint8_t b[10];
    return emit(as, b, encode_uleb(v, b));
}

static enum cfi_status emit_sleb(struct assembler *as, int64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    for (;;) {
        uint8_t byte = v & 0x7f;
        /* Arithmetic shift of a negative number: v / 128 rounded down. */
        v = v < 0 ? -(-(v + 1) / 128) - 1 : v / 128;
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        b[n++] = done ? byte : (byte | 0x80);
        if (done)
            return emit(as, b, n);
    }
}

static char peek(const struct assembler *as)
{
    return as->line[as->pos];
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static enum cfi_status expect_space(struct assembler *as)
{
    if (peek(as) != ' ')
        return asm_fail(as, as->pos, "expected an operand");
    as->pos++;
    return CFI_OK;
}

/* " DIGITS": an unsigned decimal number no greater than max. */
static enum cfi_status parse_unsigned(struct assembler *as, uint64_t max,
                                      uint64_t *value)
{
    enum cfi_status st = expect_space(as);
    if (st != CFI_OK)
        return st;
    size_t start = as->pos;
    uint64_t v = 0;
    if (!is_digit(peek(as)))
        return asm_fail(as, start, "expected a number");
    while (is_digit(peek(as))) {
        unsigned d = (unsigned)(peek(as) - '0');
        if (v > (max - d) / 10)
            return asm_fail(as, start, "number out of range");
        v = v * 10 + d;
        as->pos++;
    }
    *value = v;
    return CFI_OK;
}

/* " [-]DIGITS": a signed decimal number in [min, max]. */
static enum cfi_status parse_signed(struct assembler *as, int64_t min,
                                    int64_t max, int64_t *value)
{
    enum cfi_status st = expect_space(as);
    if (st != CFI_OK)
        return st;
    size_t start = as->pos;
    bool negative = peek(as) == '-';
    as->pos += negative;
    uint64_t limit = negative ? (uint64_t)(-(min + 1)) + 1 : (uint64_t)max;
    uint64_t magnitude = 0;
    if (!is_digit(peek(as)))
        return asm_fail(as, start, "expected a number");
    while (is_digit(peek(as))) {
        unsigned d = (unsigned)(peek(as) - '0');
        if (magnitude > (limit - d) / 10)
            return asm_fail(as, start, "number out of range");
        magnitude = magnitude * 10 + d;
        as->pos++;
    }
    *value = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return CFI_OK;
}

/* " HEX" holding exactly `count` bytes (count > 0). */
static enum cfi_status parse_hex_block(struct assembler *as, uint64_t count)
{
    enum cfi_status st = expect_space(as);
    if (st != CFI_OK)
        return st;
    size_t start = as->pos;
    uint64_t n = 0;
    while (hex_value(peek(as)) >= 0 && hex_value(as->line[as->pos + 1]) >= 0) {
        uint8_t byte = (uint8_t)(hex_value(peek(as)) * 16 +
                                 hex_value(as->line[as->pos + 1]));
        if ((st = emit(as, &byte, 1)) != CFI_OK)
            return st;
        as->pos += 2;
        n++;
    }
    if (hex_value(peek(as)) >= 0)
        return asm_fail(as, as->pos, "odd number of hex digits");
    if (n == 0)
        return asm_fail(as, start, "expected hex bytes");
    if (count != 0 && n != count)
        return asm_fail(as, start, "block length does not match its bytes");
    return CFI_OK;
}

static enum cfi_status parse_fixed(struct assembler *as, unsigned size,
                                   bool is_signed)
{
    enum cfi_status st;
    uint64_t u;
    int64_t s;
    if (!is_signed) {
        uint64_t max = size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * size)) - 1;
        if ((st = parse_unsigned(as, max, &u)) != CFI_OK)
            return st;
        return emit_fixed(as, u, size);
    }
    int64_t max = size == 8 ? INT64_MAX : (INT64_C(1) << (8 * size - 1)) - 1;
    if ((st = parse_signed(as, -max - 1, max, &s)) != CFI_OK)
        return st;
    return emit_fixed(as, (uint64_t)s, size);
}

static enum cfi_status parse_uleb(struct assembler *as)
{
    uint64_t v;
    enum cfi_status st = parse_unsigned(as, UINT64_MAX, &v);
    return st != CFI_OK ? st : emit_uleb(as, v);
}

static enum cfi_status parse_sleb(struct assembler *as)
{
    int64_t v;
    enum cfi_status st = parse_signed(as, INT64_MIN, INT64_MAX, &v);
    return st != CFI_OK ? st : emit_sleb(as, v);
}

static enum cfi_status parse_addr(struct assembler *as)
{
    enum cfi_status st = expect_space(as);
    if (st != CFI_OK)
        return st;
    size_t start = as->pos;
    if (peek(as) != '0' || as->line[as->pos + 1] != 'x')
        return asm_fail(as, start, "expected a 0x address");
    as->pos += 2;
    uint64_t v = 0;
    unsigned digits = 0;
    for (int d; (d = hex_value(peek(as))) >= 0; as->pos++, digits++)
        v = v << 4 | (uint64_t)d;
    if (digits == 0 || digits > 16)
        return asm_fail(as, start, "expected a 0x address");
    return emit_fixed(as, v, 8);
}

/* " LEN[ HEX]": implicit_value's block. */
static enum cfi_status parse_block(struct assembler *as)
{
    uint64_t len;
    enum cfi_status st = parse_unsigned(as, UINT32_MAX, &len);
    if (st != CFI_OK || (st = emit_uleb(as, len)) != CFI_OK)
        return st;
    return len ? parse_hex_block(as, len) : CFI_OK;
}

/* " TYPE SIZE[ HEX]": const_type's operands. */
static enum cfi_status parse_typed_block(struct assembler *as)
{
    uint64_t type, size;
    enum cfi_status st = parse_unsigned(as, UINT64_MAX, &type);
    if (st != CFI_OK || (st = emit_uleb(as, type)) != CFI_OK ||
        (st = parse_unsigned(as, 255, &size)) != CFI_OK ||
        (st = emit_fixed(as, size, 1)) != CFI_OK)
        return st;
    return size ? parse_hex_block(as, size) : CFI_OK;
}

static enum cfi_status parse_ops(struct assembler *as, unsigned depth);

/* "(OPS)": entry_value's expression, assembled after its ULEB length. */
static enum cfi_status parse_subexpr(struct assembler *as, unsigned depth)
{
    if (peek(as) != '(')
        return asm_fail(as, as->pos, "expected '('");
    if (depth >= SEM_DWOP_NEST_MAX)
        return asm_fail(as, as->pos, "expression nested too deeply");
    as->pos++;
    size_t start = as->len;
    enum cfi_status st = parse_ops(as, depth + 1);
    if (st != CFI_OK)
        return st;
    as->pos++; /* the ')' parse_ops stopped at */
    uint8_t leb[10];
    size_t n = encode_uleb(as->len - start, leb);
    if ((st = emit(as, leb, n)) != CFI_OK)
        return st;
    memmove(as->bytes + start + n, as->bytes + start, as->len - n - start);
    memcpy(as->bytes + start, leb, n);
    return CFI_OK;
}

static enum cfi_status parse_operands(struct assembler *as,
                                      const struct sem_dwop *op,
                                      unsigned depth)
{
    enum cfi_status st;
    switch (op->shape) {
    case DWOP_NONE: return CFI_OK;
    case DWOP_ADDR: return parse_addr(as);
    case DWOP_U1: return parse_fixed(as, 1, false);
    case DWOP_S1: return parse_fixed(as, 1, true);
    case DWOP_U2: return parse_fixed(as, 2, false);
    case DWOP_S2: return parse_fixed(as, 2, true);
    case DWOP_U4: return parse_fixed(as, 4, false);
    case DWOP_S4: return parse_fixed(as, 4, true);
    case DWOP_U8: return parse_fixed(as, 8, false);
    case DWOP_S8: return parse_fixed(as, 8, true);
    case DWOP_ULEB: return parse_uleb(as);
    case DWOP_SLEB: return parse_sleb(as);
    case DWOP_ULEB_SLEB:
        return (st = parse_uleb(as)) != CFI_OK ? st : parse_sleb(as);
    case DWOP_ULEB_ULEB:
        return (st = parse_uleb(as)) != CFI_OK ? st : parse_uleb(as);
    case DWOP_U1_ULEB:
        return (st = parse_fixed(as, 1, false)) != CFI_OK ? st : parse_uleb(as);
    case DWOP_U4_SLEB:
        return (st = parse_fixed(as, 4, false)) != CFI_OK ? st : parse_sleb(as);
    case DWOP_BLOCK: return parse_block(as);
    case DWOP_ULEB_BLOCK1: return parse_typed_block(as);
    case DWOP_SUBEXPR: return parse_subexpr(as, depth);
    case DWOP_UNDECODED: break;
    }
    return asm_fail(as, as->pos, "operation must be written as data");
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           c == '_';
}

/* "data HEX": the undecodable rest of an expression. */
static enum cfi_status parse_data(struct assembler *as)
{
    enum cfi_status st = parse_hex_block(as, 0);
    if (st == CFI_OK && peek(as) != ')')
        return asm_fail(as, as->pos, "data must end the expression");
    return st;
}

static enum cfi_status parse_op(struct assembler *as, unsigned depth)
{
    size_t start = as->pos;
    while (is_name_char(peek(as)))
        as->pos++;
    size_t len = as->pos - start;
    if (len == 0)
        return asm_fail(as, start, "expected an operation");
    if (len == 4 && memcmp(as->line + start, "data", 4) == 0)
        return parse_data(as);
    unsigned index;
    const struct sem_dwop *op = dwop_lookup(as->line + start, len, &index);
    if (!op)
        return asm_fail(as, start, "unknown operation");
    uint8_t opcode = (uint8_t)(op->first + index);
    enum cfi_status st = emit(as, &opcode, 1);
    return st != CFI_OK ? st : parse_operands(as, op, depth);
}

/* OPS up to the ')' that closes them, where the cursor stops. */
static enum cfi_status parse_ops(struct assembler *as, unsigned depth)
{
    if (peek(as) == ')')
        return CFI_OK;
    for (;;) {
        enum cfi_status st = parse_op(as, depth);
        if (st != CFI_OK)
            return st;
        if (peek(as) == ')')
            return CFI_OK;
        if (peek(as) != ';' || as->line[as->pos + 1] != ' ')
            return asm_fail(as, as->pos, peek(as) == '\0' || peek(as) == '\n'
                                             ? "unbalanced parentheses"
                                             : "expected ';' or ')'");
        as->pos += 2;
    }
}

enum cfi_status sem_expr_assemble(const char *line, size_t *column,
                                  struct sem_arena *arena,
                                  struct sem_expr *expr,
                                  struct cfi_diag *diag)
{
    struct assembler as = {line, *column, NULL, 0, 0, diag};
    enum cfi_status st = parse_ops(&as, 0);
    if (st == CFI_OK && as.len > UINT32_MAX)
        st = asm_fail(&as, *column, "expression too long");
    if (st == CFI_OK) {
        expr->len = (uint32_t)as.len;
        expr->bytes = sem_arena_copy(arena, as.bytes, as.len);
        if (!expr->bytes)
            st = cfi_fail(diag, CFI_E_NOMEM, *column, "out of memory");
        *column = as.pos;
    }
    free(as.bytes);
    return st;
}

void sem_print_expr_op(FILE *out, const struct sem_expr *expr, size_t at)
{
    struct dwop_insn insn;
    if (at >= expr->len)
        return;
    if (!dwop_decode(expr->bytes + at, expr->len - at, &insn) ||
        insn.op->shape == DWOP_SUBEXPR) {
        /* entry_value is not allowed in CFI: printed as data, as the
         * evaluator rejects it. */
        if (insn.op && insn.op->shape == DWOP_SUBEXPR) {
            print_ops(out, expr->bytes + at, insn.size, 0);
            return;
        }
        fputs("data ", out);
        print_hex(out, expr->bytes + at, expr->len - at);
        return;
    }
    fputs(insn.op->name, out);
    if (insn.op->count > 1)
        fprintf(out, "%u", insn.index);
    print_operands(out, &insn, 0);
}
