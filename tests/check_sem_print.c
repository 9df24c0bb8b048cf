/* SPDX-License-Identifier: MIT */
/* check_sem_print.c — the printers and the parser of semantics/: each rule
 * and CFA kind in the text format, the disassembly of every DW_OP operand
 * shape, the data fallback, print → parse → print on many lines (the
 * golden lines of corpus/cases included), parser errors with their
 * column, and the JSON and readelf printers on hand-built FDEs. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semantics/internal.h"
#include "semantics/sem.h"
#include "tests/support.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

struct capture {
    char *text;
    size_t len;
    FILE *out;
};

static FILE *capture_begin(struct capture *c)
{
    c->text = NULL;
    c->out = open_memstream(&c->text, &c->len);
    ck_assert_ptr_nonnull(c->out);
    return c->out;
}

static char *capture_end(struct capture *c)
{
    fclose(c->out);
    return c->text;
}

static char *range_text(const struct sem_range *range)
{
    struct capture c;
    sem_print_range_text(capture_begin(&c), &cfi_arch_x86_64, range);
    return capture_end(&c);
}

static char *expr_text(const uint8_t *bytes, size_t len)
{
    struct capture c;
    struct sem_expr expr = {bytes, (uint32_t)len};
    sem_print_expr(capture_begin(&c), &expr);
    return capture_end(&c);
}

static size_t from_hex(const char *hex, uint8_t *bytes, size_t cap)
{
    size_t n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex, "%2x", &v), 1);
        ck_assert_uint_lt(n, cap);
        bytes[n++] = (uint8_t)v;
    }
    ck_assert_msg(hex[0] == 0, "odd hex string");
    return n;
}

/* Parses `line`, prints it again, and asserts the two are equal. */
static void assert_round_trip(const char *line)
{
    struct sem_arena *arena = sem_arena_new();
    struct sem_range range;
    struct cfi_diag diag = {0};
    enum cfi_status st = sem_parse_range_text(line, &cfi_arch_x86_64, arena, &range, &diag);
    ck_assert_msg(st == CFI_OK, "parse failed at column %llu (%s): %s",
                  (unsigned long long)diag.offset, diag.message, line);
    char *again = range_text(&range);
    size_t n = strlen(line);
    bool newline = n && line[n - 1] == '\n';
    ck_assert_msg(strncmp(again, line, n - newline) == 0 &&
                      strlen(again) == n - newline + 1,
                  "round trip:\n  %s  %s", line, again);
    free(again);
    sem_arena_free(arena);
}

/* ------------------------------------------------------------------ */
/* Rules and CFA kinds in the text format                               */
/* ------------------------------------------------------------------ */

static const uint8_t plt_expr[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
                                   0x3b, 0x2a, 0x33, 0x24, 0x22};
static const uint8_t sig_expr[] = {0x77, 0xa0, 0x01, 0x06};

static struct sem_rule rule_of(enum sem_rule_kind kind, int64_t offset)
{
    return (struct sem_rule){.kind = kind, .offset = offset};
}

START_TEST(text_each_rule_kind)
{
    struct sem_reg_rule rules[] = {
        {0, {.kind = SEM_RULE_VAL_EXPRESSION, .expr = {sig_expr, 4}}},
        {3, rule_of(SEM_RULE_UNDEFINED, 0)},
        {6, rule_of(SEM_RULE_SAME_VALUE, 0)},
        {12, rule_of(SEM_RULE_VAL_OFFSET, -48)},
        {13, {.kind = SEM_RULE_REGISTER, .reg = 3}},
        {14, {.kind = SEM_RULE_REGISTER, .reg = 56}},
        {15, {.kind = SEM_RULE_EXPRESSION, .expr = {plt_expr, 2}}},
        {16, rule_of(SEM_RULE_OFFSET, -8)},
        {67, rule_of(SEM_RULE_OFFSET, 16)},
        {126, rule_of(SEM_RULE_VAL_OFFSET, 0)},
    };
    struct sem_row row = {{SEM_CFA_RULE_REG_OFFSET, 7, 8, {0}}, 10, rules};
    struct sem_range range = {0x27280, 0x27282, &row};
    char *text = range_text(&range);
    ck_assert_str_eq(text,
                     "[0x27280,0x27282)  cfa=rsp+8  rax=expr(breg7 160; deref)"
                     "  rbx=undef  rbp=same  r12=cfa-48  r13=rbx  r14=r56"
                     "  r15=[expr(breg7 8)]  rip=[cfa-8]  xmm16=[cfa+16]"
                     "  r126=cfa+0\n");
    assert_round_trip(text);
    free(text);
}
END_TEST

START_TEST(text_each_cfa_kind)
{
    struct sem_row row = {{SEM_CFA_RULE_REG_OFFSET, 6, 0, {0}}, 0, NULL};
    struct sem_range range = {0x0, 0x1, &row};
    const char *expected[] = {
        "[0x0,0x1)  cfa=rbp+0\n",
        "[0x0,0x1)  cfa=r56-16\n",
        "[0x0,0x1)  cfa=expr(breg7 8; breg16 0; lit15; and; lit11; ge; lit3;"
        " shl; plus)\n",
        "[0x0,0x1)  cfa=expr()\n",
        "[0x0,0x1)  cfa=undef\n",
    };
    struct sem_cfa cfas[] = {
        {SEM_CFA_RULE_REG_OFFSET, 6, 0, {0}},
        {SEM_CFA_RULE_REG_OFFSET, 56, -16, {0}},
        {SEM_CFA_RULE_EXPR, 0, 0, {plt_expr, sizeof plt_expr}},
        {SEM_CFA_RULE_EXPR, 0, 0, {plt_expr, 0}},
        {SEM_CFA_RULE_INVALID, 0, 0, {0}},
    };
    for (size_t i = 0; i < sizeof cfas / sizeof cfas[0]; i++) {
        row.cfa = cfas[i];
        char *text = range_text(&range);
        ck_assert_str_eq(text, expected[i]);
        assert_round_trip(text);
        free(text);
    }
}
END_TEST

START_TEST(text_extreme_offsets)
{
    struct sem_reg_rule rules[] = {
        {3, rule_of(SEM_RULE_OFFSET, INT64_MIN)},
        {6, rule_of(SEM_RULE_VAL_OFFSET, INT64_MAX)},
    };
    struct sem_row row = {{SEM_CFA_RULE_REG_OFFSET, 7, INT64_MIN, {0}}, 2, rules};
    struct sem_range range = {0xfffffffffffffffe, 0xffffffffffffffff, &row};
    char *text = range_text(&range);
    ck_assert_str_eq(text, "[0xfffffffffffffffe,0xffffffffffffffff)"
                           "  cfa=rsp-9223372036854775808"
                           "  rbx=[cfa-9223372036854775808]"
                           "  rbp=cfa+9223372036854775807\n");
    assert_round_trip(text);
    free(text);
}
END_TEST

START_TEST(text_fde_is_its_ranges)
{
    struct sem_reg_rule rip = {16, rule_of(SEM_RULE_OFFSET, -8)};
    struct sem_row a = {{SEM_CFA_RULE_REG_OFFSET, 7, 8, {0}}, 1, &rip};
    struct sem_row b = {{SEM_CFA_RULE_REG_OFFSET, 7, 16, {0}}, 1, &rip};
    struct sem_range ranges[] = {{0x10, 0x11, &a}, {0x11, 0x20, &b}};
    struct cfi_cie cie = {.arch = &cfi_arch_x86_64};
    struct cfi_fde fde = {.cie = &cie};
    struct sem_fde_il il = {&fde, ranges, 2};
    struct capture c;
    sem_print_fde_text(capture_begin(&c), &il);
    char *text = capture_end(&c);
    ck_assert_str_eq(text, "[0x10,0x11)  cfa=rsp+8  rip=[cfa-8]\n"
                           "[0x11,0x20)  cfa=rsp+16  rip=[cfa-8]\n");
    free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* DW_OP disassembly                                                    */
/* ------------------------------------------------------------------ */

struct op_case {
    const char *hex;
    const char *text;
};

static const struct op_case op_cases[] = {
    {"030010000000000000", "addr 0x1000"},
    {"06", "deref"},
    {"08c8", "const1u 200"},
    {"0980", "const1s -128"},
    {"0affff", "const2u 65535"},
    {"0b0080", "const2s -32768"},
    {"0cffffffff", "const4u 4294967295"},
    {"0de0ffffff", "const4s -32"},
    {"0effffffffffffffff", "const8u 18446744073709551615"},
    {"0f0000000000000080", "const8s -9223372036854775808"},
    {"10e807", "constu 1000"},
    {"10ffffffffffffffffff01", "constu 18446744073709551615"},
    {"117b", "consts -5"},
    {"118080808080808080807f", "consts -9223372036854775808"},
    {"11ffffffffffffffffff00", "consts 9223372036854775807"},
    {"12131416171819", "dup; drop; over; swap; rot; xderef; abs"},
    {"1501", "pick 1"},
    {"1a1b1c1d1e1f202122", "and; div; minus; mod; mul; neg; not; or; plus"},
    {"2308", "plus_uconst 8"},
    {"24252627", "shl; shr; shra; xor"},
    {"28fbff", "bra -5"},
    {"292a2b2c2d2e", "eq; ge; gt; le; lt; ne"},
    {"2f0300", "skip 3"},
    {"304f", "lit0; lit31"},
    {"506f", "reg0; reg31"},
    {"7000", "breg0 0"},
    {"77a001", "breg7 160"},
    {"8f7f", "breg31 -1"},
    {"9011", "regx 17"},
    {"9170", "fbreg -16"},
    {"921178", "bregx 17 -8"},
    {"9308", "piece 8"},
    {"9404", "deref_size 4"},
    {"9502", "xderef_size 2"},
    {"96979b9c9f", "nop; push_object_address; form_tls_address;"
                   " call_frame_cfa; stack_value"},
    {"983412", "call2 4660"},
    {"9978563412", "call4 305419896"},
    {"9a10000000", "call_ref 16"},
    {"9d2008", "bit_piece 32 8"},
    {"9e030a0bff", "implicit_value 3 0a0bff"},
    {"9e00", "implicit_value 0"},
    {"a06400000078", "implicit_pointer 100 -8"},
    {"a105", "addrx 5"},
    {"a206", "constx 6"},
    {"a3027500", "entry_value(breg5 0)"},
    {"a300", "entry_value()"},
    {"a3029201", "entry_value(data 9201)"},
    {"a42a0401020304", "const_type 42 4 01020304"},
    {"a42a00", "const_type 42 0"},
    {"a5112a", "regval_type 17 42"},
    {"a6082a", "deref_type 8 42"},
    {"a7042a", "xderef_type 4 42"},
    {"a82a", "convert 42"},
    {"a92a", "reinterpret 42"},
    {"e0f0", "GNU_push_tls_address; GNU_uninit"},
    {"f2640000007f", "GNU_implicit_pointer 100 -1"},
    {"f30151", "GNU_entry_value(reg1)"},
    {"f42a01ff", "GNU_const_type 42 1 ff"},
    {"f5032a", "GNU_regval_type 3 42"},
    {"f6082a", "GNU_deref_type 8 42"},
    {"f72a", "GNU_convert 42"},
    {"f92a", "GNU_reinterpret 42"},
    {"fa10000000", "GNU_parameter_ref 16"},
    {"fb03", "GNU_addr_index 3"},
    {"fc04", "GNU_const_index 4"},
    {"fd20000000", "GNU_variable_value 32"},
    /* The expressions seen in real files (FACTS.md). */
    {"770880003f1a3b2a332422",
     "breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus"},
    {"77a801062308", "breg7 168; deref; plus_uconst 8"},
    {"765806", "breg6 -40; deref"},
    {"381c0de0ffffff1a0db0ffffff22",
     "lit8; minus; const4s -32; and; const4s -80; plus"},
    /* Undecodable bytes: data, to the end. */
    {"01", "data 01"},
    {"310d0102", "lit1; data 0d0102"},
    {"1080808080808080808002", "data 1080808080808080808002"},
    {"1180808080808080808001", "data 1180808080808080808001"},
    {"1080", "data 1080"},
    {"f11b00", "data f11b00"},
    {"9e0501", "data 9e0501"},
    {"2f03", "data 2f03"},
    {"3104ff30", "lit1; data 04ff30"},
    {"a4010301", "data a4010301"},
};

START_TEST(op_shapes)
{
    const struct op_case *oc = &op_cases[_i];
    uint8_t bytes[64];
    size_t n = from_hex(oc->hex, bytes, sizeof bytes);
    char *text = expr_text(bytes, n);
    ck_assert_str_eq(text, oc->text);
    free(text);

    /* The listing assembles back, and prints the same. */
    char line[256];
    snprintf(line, sizeof line, "[0x1,0x2)  cfa=expr(%s)\n", oc->text);
    assert_round_trip(line);
}
END_TEST

/* Canonical encodings assemble to the very bytes. */
START_TEST(op_assembles_to_bytes)
{
    const struct op_case *oc = &op_cases[_i];
    if (strncmp(oc->text, "data", 4) == 0 || strstr(oc->text, "; data"))
        return;
    uint8_t bytes[64];
    size_t n = from_hex(oc->hex, bytes, sizeof bytes);
    char line[256];
    snprintf(line, sizeof line, "[0x1,0x2)  cfa=expr(%s)", oc->text);
    struct sem_arena *arena = sem_arena_new();
    struct sem_range range;
    ck_assert_int_eq(sem_parse_range_text(line, &cfi_arch_x86_64, arena, &range, NULL), CFI_OK);
    ck_assert_int_eq(range.row->cfa.kind, SEM_CFA_RULE_EXPR);
    ck_assert_uint_eq(range.row->cfa.expr.len, n);
    ck_assert_mem_eq(range.row->cfa.expr.bytes, bytes, n);
    sem_arena_free(arena);
}
END_TEST

START_TEST(op_non_canonical_leb_prints_its_value)
{
    const uint8_t bytes[] = {0x23, 0x88, 0x80, 0x00, 0x77, 0xff, 0x7f};
    char *text = expr_text(bytes, sizeof bytes);
    ck_assert_str_eq(text, "plus_uconst 8; breg7 -1");
    free(text);
}
END_TEST

/* entry_value nests; past SEM_DWOP_NEST_MAX levels the rest is data. */
START_TEST(op_nesting_bound)
{
    uint8_t bytes[64] = {0x30};
    size_t n = 1;
    for (int level = 0; level < 9; level++) {
        memmove(bytes + 2, bytes, n);
        bytes[0] = 0xa3;
        bytes[1] = (uint8_t)n;
        n += 2;
    }
    char expected[256] = "";
    for (int i = 0; i < 8; i++)
        strcat(expected, "entry_value(");
    strcat(expected, "data a30130");
    for (int i = 0; i < 8; i++)
        strcat(expected, ")");
    char *text = expr_text(bytes, n);
    ck_assert_str_eq(text, expected);
    char line[512];
    snprintf(line, sizeof line, "[0x1,0x2)  cfa=expr(%s)", text);
    assert_round_trip(line);
    free(text);
}
END_TEST

START_TEST(op_every_byte_prints_and_round_trips)
{
    /* Each opcode byte followed by a few operand bytes: whatever it
     * prints must assemble back to something that prints the same. */
    for (unsigned op = 0; op < 256; op++) {
        uint8_t bytes[] = {(uint8_t)op, 0x02, 0x31, 0x32, 0x33, 0x34,
                           0x35, 0x36, 0x37, 0x38, 0x39};
        char *text = expr_text(bytes, sizeof bytes);
        char line[512];
        snprintf(line, sizeof line, "[0x1,0x2)  cfa=expr(%s)", text);
        assert_round_trip(line);
        free(text);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* print → parse → print                                                */
/* ------------------------------------------------------------------ */

static const char *const identity_lines[] = {
    "[0x27280,0x27282)  cfa=rsp+8  rbx=[cfa-16]  rip=[cfa-8]\n",
    "[0x0,0x1)  cfa=rsp+0\n",
    "[0x1000,0x1001)  cfa=rbp+16  rbx=undef  rbp=[cfa-16]  rip=undef",
    "[0x10,0x20)  cfa=expr(breg7 160; deref)  rax=[expr(breg7 40)]"
    "  rdx=[expr(breg7 48)]  rip=[expr(breg7 168)]",
    "[0x10,0x20)  cfa=expr(breg6 -40; deref)  rbp=[expr(breg6 0)]"
    "  rip=[cfa-8]",
    "[0x10,0x20)  cfa=expr(lit8; minus; const4s -32; and; const4s -80;"
    " plus)  rip=[cfa-8]",
    "[0x10,0x20)  cfa=rsp+8  rbp=rbx  r12=cfa-16  r13=same  xmm16=[cfa-16]"
    "  k0=[cfa-24]  r127=undef",
    "[0x10,0x20)  cfa=rsp+8  rflags=[cfa+0]  fs.base=same  gs.base=r57",
    "[0x10,0x20)  cfa=rsp+8  rax=expr()  rdx=[expr()]  rip=expr(lit0)",
    "[0x10,0x20)  cfa=xmm31+1  r8=[expr(addr 0xffffffffffffffff; data ff)]",
};

START_TEST(identity_fixed_lines)
{
    assert_round_trip(identity_lines[_i]);
}
END_TEST

/* Every range line of every golden file of corpus/cases. */
START_TEST(identity_golden_lines)
{
    char *dir_path = test_src_path("corpus/cases");
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "no %s", dir_path);
    size_t lines = 0, files = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".il") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        char *text = test_read_file(path, NULL);
        ck_assert_ptr_nonnull(text);
        files++;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            if (line[0] == '[') {
                assert_round_trip(line);
                lines++;
            }
        free(text);
    }
    closedir(dir);
    free(dir_path);
    ck_assert_uint_ge(files, 12);
    ck_assert_uint_ge(lines, 50);
}
END_TEST

START_TEST(parse_sorts_rules)
{
    struct sem_arena *arena = sem_arena_new();
    struct sem_range range;
    ck_assert_int_eq(sem_parse_range_text(
                         "[0x1,0x2)  cfa=rsp+8  rip=[cfa-8]  rbx=same  rax=undef\n",
                         &cfi_arch_x86_64, arena, &range, NULL),
                     CFI_OK);
    ck_assert_uint_eq(range.begin, 1);
    ck_assert_uint_eq(range.end, 2);
    ck_assert_uint_eq(range.row->nrules, 3);
    ck_assert_uint_eq(range.row->rules[0].reg, 0);
    ck_assert_uint_eq(range.row->rules[1].reg, 3);
    ck_assert_uint_eq(range.row->rules[2].reg, 16);
    ck_assert_int_eq(range.row->rules[2].rule.kind, SEM_RULE_OFFSET);
    ck_assert_int_eq(range.row->rules[2].rule.offset, -8);
    ck_assert_int_eq(range.row->cfa.kind, SEM_CFA_RULE_REG_OFFSET);
    ck_assert_uint_eq(range.row->cfa.reg, 7);
    ck_assert_int_eq(range.row->cfa.offset, 8);
    sem_arena_free(arena);
}
END_TEST

START_TEST(parse_accepts_numbers_for_registers)
{
    struct sem_arena *arena = sem_arena_new();
    struct sem_range range;
    ck_assert_int_eq(sem_parse_range_text("[0x1,0x2)  cfa=r7+8  r3=r6", &cfi_arch_x86_64, arena,
                                          &range, NULL),
                     CFI_OK);
    char *text = range_text(&range);
    ck_assert_str_eq(text, "[0x1,0x2)  cfa=rsp+8  rbx=rbp\n");
    free(text);
    sem_arena_free(arena);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Parser errors: status and column                                     */
/* ------------------------------------------------------------------ */

struct parse_error_case {
    const char *line;
    uint64_t column;
    const char *message;
};

static const struct parse_error_case parse_errors[] = {
    {"[0x1,0x2)  cfa=rsp+8  foo=undef", 22, "unknown register"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=foo", 26, "unknown register"},
    {"[0x1,0x2)  cfa=xyz+8", 15, "unknown register"},
    {"[0x1,0x2)  cfa=rsp+8  r128=undef", 22, "unknown register"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=[cfa-x]", 30, "expected a signed offset"},
    {"[0x1,0x2)  cfa=rsp", 18, "expected a signed offset"},
    {"[0x1,0x2)  cfa=rsp+99999999999999999999", 18, "offset out of range"},
    {"[0x1,0x2)  cfa=rsp+9223372036854775808", 18, "offset out of range"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=[cfa-8", 32, "expected ']'"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=[expr(lit0)", 37, "expected ']'"},
    {"[0x1,0x2)  cfa=expr(breg7 8", 27, "unbalanced parentheses"},
    {"[0x1,0x2)  cfa=expr(entry_value(lit0)", 37, "unbalanced parentheses"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=cfa-8]", 31, "expected two spaces or the end"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=[foo]", 27,
     "expected 'cfa' or 'expr(' after '['"},
    {"[0x1,0x2)  cfa=expr(breg7 8; foo)", 29, "unknown operation"},
    {"[0x1,0x2)  cfa=expr(breg32 8)", 20, "unknown operation"},
    {"[0x1,0x2)  cfa=expr(lit01)", 20, "unknown operation"},
    {"[0x1,0x2)  cfa=expr(breg7 8;deref)", 27, "expected ';' or ')'"},
    {"[0x1,0x2)  cfa=expr(breg7)", 25, "expected an operand"},
    {"[0x1,0x2)  cfa=expr(breg7 x)", 26, "expected a number"},
    {"[0x1,0x2)  cfa=expr(const1u 256)", 28, "number out of range"},
    {"[0x1,0x2)  cfa=expr(const1s -129)", 28, "number out of range"},
    {"[0x1,0x2)  cfa=expr(addr 1000)", 25, "expected a 0x address"},
    {"[0x1,0x2)  cfa=expr(data 0a; lit1)", 27, "data must end the expression"},
    {"[0x1,0x2)  cfa=expr(data 0a0)", 27, "odd number of hex digits"},
    {"[0x1,0x2)  cfa=expr(implicit_value 2 0a)", 37,
     "block length does not match its bytes"},
    {"[0x1,0x2)  cfa=expr(GNU_encoded_addr)", 36,
     "operation must be written as data"},
    {"[0x1,0x2)  cfa=expr(;)", 20, "expected an operation"},
    {"[0x1,0x2)x  cfa=rsp+8", 9, "expected '  cfa='"},
    {"[0x1,0x2)  rip=[cfa-8]", 9, "expected '  cfa='"},
    {"[0x1,0x2) cfa=rsp+8", 9, "expected '  cfa='"},
    {"[0x1,0x2)  cfa=rsp+8  rip=[cfa-8] x", 33,
     "expected two spaces or the end"},
    {"[0x1,0x2)  cfa=rsp+8   rip=[cfa-8]", 22, "unknown register"},
    {"[0x1,0x2)  cfa=rsp+8  rbx=undef  rbx=same", 33, "register given twice"},
    {"[0x1,0x2)  cfa=rsp+8  rbx", 25, "expected '='"},
    {"0x1,0x2)  cfa=rsp+8", 0, "expected '['"},
    {"[1,0x2)  cfa=rsp+8", 1, "expected a 0x address"},
    {"[0x1;0x2)  cfa=rsp+8", 4, "expected ','"},
    {"[0x1,0x2]  cfa=rsp+8", 8, "expected ')'"},
    {"[0x1,0x10000000000000000)  cfa=rsp+8", 5, "address out of range"},
    {"[0x2,0x1)  cfa=rsp+8", 0, "empty range"},
    {"", 0, "expected '['"},
};

START_TEST(parse_error_column)
{
    const struct parse_error_case *pc = &parse_errors[_i];
    struct sem_arena *arena = sem_arena_new();
    struct sem_range range = {0};
    struct cfi_diag diag = {0};
    enum cfi_status st = sem_parse_range_text(pc->line, &cfi_arch_x86_64, arena, &range, &diag);
    ck_assert_msg(st == CFI_E_MALFORMED, "accepted: %s", pc->line);
    ck_assert_ptr_null(range.row);
    ck_assert_msg(diag.offset == pc->column,
                  "%s: column %llu, expected %llu (%s)", pc->line,
                  (unsigned long long)diag.offset,
                  (unsigned long long)pc->column, diag.message);
    ck_assert_str_eq(diag.message, pc->message);
    sem_arena_free(arena);
}
END_TEST

START_TEST(parse_nesting_bound)
{
    char line[512] = "[0x1,0x2)  cfa=expr(";
    for (int i = 0; i < 9; i++)
        strcat(line, "entry_value(");
    strcat(line, "lit0");
    for (int i = 0; i < 10; i++)
        strcat(line, ")");
    struct sem_arena *arena = sem_arena_new();
    struct sem_range range;
    struct cfi_diag diag = {0};
    ck_assert_int_eq(sem_parse_range_text(line, &cfi_arch_x86_64, arena, &range, &diag),
                     CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, "expression nested too deeply");
    ck_assert_uint_eq(diag.offset, 20 + 8 * 12 + 11);
    sem_arena_free(arena);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The file printers                                                    */
/* ------------------------------------------------------------------ */

/* CIE: def_cfa rsp+8; offset rip, cfa-8. */
static const uint8_t cie_program[] = {0x0c, 0x07, 0x08, 0x90, 0x01};
/* FDE: undefined rbx; same_value rbp; val_offset r12 6; register r13 rbx;
 * register r14 r56; expression r15 (lit0); val_expression rax (lit0);
 * def_cfa_expression (lit0). Only its registers matter (readelf columns). */
static const uint8_t fde_program[] = {
    0x07, 0x03, 0x08, 0x06, 0x14, 0x0c, 0x06, 0x09, 0x0d, 0x03, 0x09, 0x0e,
    0x38, 0x10, 0x0f, 0x01, 0x30, 0x16, 0x00, 0x01, 0x30, 0x0f, 0x01, 0x30};

static struct cfi_cie test_cie(void)
{
    return (struct cfi_cie){
        .section = CFI_EH_FRAME, .offset = 0, .length = 0x14, .version = 1,
        .augmentation = "zR", .code_align = 1, .data_align = -8,
        .ra_column = 16, .arch = &cfi_arch_x86_64, .address_size = 8,
        .fde_encoding = 0x1b,
        .lsda_encoding = CFI_PE_OMIT, .personality_encoding = CFI_PE_OMIT,
        .instructions = cie_program, .instructions_len = sizeof cie_program,
        .instructions_offset = 0xf,
    };
}

static struct cfi_fde test_fde(const struct cfi_cie *cie)
{
    return (struct cfi_fde){
        .section = CFI_EH_FRAME, .offset = 0x18, .length = 0x24,
        .cie_offset = 0, .pc_begin = 0x26000, .pc_end = 0x26360, .cie = cie,
        .instructions = fde_program, .instructions_len = sizeof fde_program,
        .instructions_offset = 0x25, .instructions_addr = 0x1025,
    };
}

static const uint8_t lit0[] = {0x30};

static const struct sem_reg_rule all_rules[] = {
    {0, {.kind = SEM_RULE_VAL_EXPRESSION, .expr = {lit0, 1}}},
    {3, {.kind = SEM_RULE_UNDEFINED}},
    {6, {.kind = SEM_RULE_SAME_VALUE}},
    {12, {.kind = SEM_RULE_VAL_OFFSET, .offset = -48}},
    {13, {.kind = SEM_RULE_REGISTER, .reg = 3}},
    {14, {.kind = SEM_RULE_REGISTER, .reg = 56}},
    {15, {.kind = SEM_RULE_EXPRESSION, .expr = {lit0, 1}}},
    {16, {.kind = SEM_RULE_OFFSET, .offset = -8}},
};

static const struct sem_reg_rule rip_rule[] = {
    {16, {.kind = SEM_RULE_OFFSET, .offset = -8}},
};

static char *print_file(enum sem_format format, const char *name,
                        const struct sem_fde_il *il, size_t n,
                        const struct cfi_diag *error)
{
    struct capture c;
    struct sem_printer *p = sem_printer_new(capture_begin(&c), format, name,
                                            &cfi_arch_x86_64);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        sem_printer_fde(p, &il[i]);
    if (error)
        sem_printer_fde_error(p, il[0].fde, error);
    sem_printer_end(p);
    return capture_end(&c);
}

START_TEST(json_hand_built_fde)
{
    struct cfi_cie cie = test_cie();
    struct cfi_fde fde = test_fde(&cie);
    struct sem_row first = {{SEM_CFA_RULE_REG_OFFSET, 7, 16, {0}}, 1, rip_rule};
    struct sem_row second = {{SEM_CFA_RULE_EXPR, 0, 0, {plt_expr, 2}}, 8, all_rules};
    struct sem_row third = {{SEM_CFA_RULE_INVALID, 0, 0, {0}}, 0, NULL};
    struct sem_range ranges[] = {{155648, 155654, &first},
                                 {155654, 155660, &second},
                                 {155660, 156512, &third}};
    struct sem_fde_il il = {&fde, ranges, 3};
    struct cfi_diag error = {CFI_E_MALFORMED, "restore_state with an empty stack",
                             0x2a, -1};
    char *text = print_file(SEM_FORMAT_JSON, "dir/x\"y\\z\n\xff.so", &il, 1,
                            &error);
    ck_assert_str_eq(
        text,
        "{\"schema_version\": 1, "
        "\"file\": \"dir/x\\\"y\\\\z\\u000a\\ufffd.so\", \"arch\": \"x86-64\","
        " \"fdes\": [\n"
        "{\"section\": \".eh_frame\", \"offset\": 24, \"cie_offset\": 0,"
        " \"begin\": \"0x26000\", \"end\": \"0x26360\", \"augmentation\": \"zR\","
        " \"code_align\": 1, \"data_align\": -8, \"ra\": 16, \"rows\": ["
        "{\"begin\": \"0x26000\", \"end\": \"0x26006\", \"cfa\": {\"reg\": 7, \"offset\": 16},"
        " \"regs\": {\"16\": {\"rule\": \"offset\", \"offset\": -8}}}, "
        "{\"begin\": \"0x26006\", \"end\": \"0x2600c\", \"cfa\": {\"expr\": \"7708\"},"
        " \"regs\": {\"0\": {\"rule\": \"val_expression\", \"expr\": \"30\"},"
        " \"3\": {\"rule\": \"undefined\"}, \"6\": {\"rule\": \"same_value\"},"
        " \"12\": {\"rule\": \"val_offset\", \"offset\": -48},"
        " \"13\": {\"rule\": \"register\", \"reg\": 3},"
        " \"14\": {\"rule\": \"register\", \"reg\": 56},"
        " \"15\": {\"rule\": \"expression\", \"expr\": \"30\"},"
        " \"16\": {\"rule\": \"offset\", \"offset\": -8}}}, "
        "{\"begin\": \"0x2600c\", \"end\": \"0x26360\", \"cfa\": null, \"regs\": {}}]},\n"
        "{\"section\": \".eh_frame\", \"offset\": 24, \"cie_offset\": 0,"
        " \"begin\": \"0x26000\", \"end\": \"0x26360\", \"augmentation\": \"zR\","
        " \"code_align\": 1, \"data_align\": -8, \"ra\": 16,"
        " \"error\": \"restore_state with an empty stack\", \"rows\": []}\n"
        "]}\n");
    free(text);
}
END_TEST

START_TEST(json_no_fdes)
{
    char *text = print_file(SEM_FORMAT_JSON, "a.so", NULL, 0, NULL);
    ck_assert_str_eq(text, "{\"schema_version\": 1, \"file\": \"a.so\", "
                           "\"arch\": \"x86-64\", \"fdes\": []}\n");
    free(text);
}
END_TEST

START_TEST(readelf_hand_built_fde)
{
    struct cfi_cie cie = test_cie();
    struct cfi_fde fde = test_fde(&cie);
    struct sem_row first = {{SEM_CFA_RULE_REG_OFFSET, 7, 8, {0}}, 1, rip_rule};
    struct sem_row second = {{SEM_CFA_RULE_EXPR, 0, 0, {lit0, 1}}, 8, all_rules};
    struct sem_range ranges[] = {{0x26000, 0x26001, &first},
                                 {0x26001, 0x26360, &second}};
    struct sem_fde_il il = {&fde, ranges, 2};
    char *text = print_file(SEM_FORMAT_READELF, "t.so", &il, 1, NULL);
    ck_assert_str_eq(
        text,
        "Contents of the .eh_frame section (loaded from t.so):\n\n\n"
        "00000018 0000000000000024 0000001c FDE cie=00000000"
        " pc=0000000000026000..0000000000026360\n"
        "   LOC           CFA      rax   rbx   rbp   r12   r13   r14   r15"
        "   ra    \n"
        "0000000000026000 rsp+8    u     u     u     u     u     u     u"
        "     c-8   \n"
        "0000000000026001 exp      vexp  u     s     v-48  r3 (rbx) r56"
        "   exp   c-8   \n"
        "\n");
    free(text);
}
END_TEST

START_TEST(text_file_printer)
{
    struct cfi_cie cie = test_cie();
    cie.signal_frame = true;
    memcpy(cie.augmentation, "zRS", 4);
    struct cfi_fde fde = test_fde(&cie);
    struct sem_row row = {{SEM_CFA_RULE_REG_OFFSET, 7, 8, {0}}, 1, rip_rule};
    struct sem_range ranges[] = {{0x26000, 0x26360, &row}};
    struct sem_fde_il il = {&fde, ranges, 1};
    struct cfi_diag error = {CFI_E_MALFORMED, "x", 0, -1};
    char *text = print_file(SEM_FORMAT_TEXT, "t.so", &il, 1, &error);
    ck_assert_str_eq(text, "fde .eh_frame+0x18 cie=0x0 [0x26000,0x26360)"
                           " aug=zRS caf=1 daf=-8 ra=16 signal\n"
                           "[0x26000,0x26360)  cfa=rsp+8  rip=[cfa-8]\n"
                           "\n");
    free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The arena                                                            */
/* ------------------------------------------------------------------ */

START_TEST(arena_zeroed_aligned)
{
    struct sem_arena *arena = sem_arena_new();
    ck_assert_ptr_nonnull(arena);
    for (size_t i = 0; i < 5000; i++) {
        size_t n = (i * 7919) % 3000;
        unsigned char *p = sem_arena_alloc(arena, n);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 16, 0);
        size_t nonzero = 0;
        for (size_t j = 0; j < n; j++)
            nonzero += p[j] != 0;
        ck_assert_uint_eq(nonzero, 0);
        memset(p, 0xa5, n);
    }
    char *copy = sem_arena_copy(arena, "abc", 4);
    ck_assert_str_eq(copy, "abc");
    ck_assert_ptr_null(sem_arena_alloc(arena, SIZE_MAX));
    ck_assert_ptr_nonnull(sem_arena_alloc(arena, 0));
    sem_arena_free(arena);
    sem_arena_free(NULL);
}
END_TEST

static Suite *print_suite(void)
{
    Suite *s = suite_create("sem_print");
    TCase *t = tcase_create("text");
    tcase_add_test(t, text_each_rule_kind);
    tcase_add_test(t, text_each_cfa_kind);
    tcase_add_test(t, text_extreme_offsets);
    tcase_add_test(t, text_fde_is_its_ranges);
    suite_add_tcase(s, t);

    t = tcase_create("expressions");
    size_t nops = sizeof op_cases / sizeof op_cases[0];
    tcase_add_loop_test(t, op_shapes, 0, (int)nops);
    tcase_add_loop_test(t, op_assembles_to_bytes, 0, (int)nops);
    tcase_add_test(t, op_non_canonical_leb_prints_its_value);
    tcase_add_test(t, op_nesting_bound);
    tcase_add_test(t, op_every_byte_prints_and_round_trips);
    suite_add_tcase(s, t);

    t = tcase_create("parse");
    tcase_add_loop_test(t, identity_fixed_lines, 0,
                        (int)(sizeof identity_lines / sizeof identity_lines[0]));
    tcase_add_test(t, identity_golden_lines);
    tcase_add_test(t, parse_sorts_rules);
    tcase_add_test(t, parse_accepts_numbers_for_registers);
    tcase_add_loop_test(t, parse_error_column, 0,
                        (int)(sizeof parse_errors / sizeof parse_errors[0]));
    tcase_add_test(t, parse_nesting_bound);
    suite_add_tcase(s, t);

    t = tcase_create("printers");
    tcase_add_test(t, json_hand_built_fde);
    tcase_add_test(t, json_no_fdes);
    tcase_add_test(t, readelf_hand_built_fde);
    tcase_add_test(t, text_file_printer);
    tcase_add_test(t, arena_zeroed_aligned);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *runner = srunner_create(print_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
