/* SPDX-License-Identifier: MIT */
/* check_sem_translate.c — the DWARF → IL translator: each rule, each error
 * case, and the pitfalls other unwinders fell into (FACTS.md). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "semantics/sem.h"

/* The CIE GCC and gas emit on x86-64: cfa=rsp+8, rip=[cfa-8]. */
static const uint8_t gcc_cie[] = {0x0c, 0x07, 0x08, 0x90, 0x01};

enum { PC_BEGIN = 0x1000, PC_END = 0x1100, CIE_OFF = 0x0, FDE_OFF = 0x18 };

/* One translation: the CIE, the FDE and its IL, with storage. */
struct case_il {
    struct cfi_cie cie;
    struct cfi_fde fde;
    struct sem_arena *arena;
    struct sem_fde_il il;
    struct cfi_diag diag;
    enum cfi_status status;
};

static void translate(struct case_il *c, const uint8_t *cie, size_t cie_len,
                      const uint8_t *fde, size_t fde_len)
{
    memset(c, 0, sizeof *c);
    c->cie = (struct cfi_cie){
        .section = CFI_EH_FRAME, .offset = CIE_OFF, .version = 1,
        .augmentation = "zR", .code_align = 1, .data_align = -8,
        .ra_column = 16, .arch = &cfi_arch_x86_64, .address_size = 8,
        .fde_encoding = CFI_PE_PCREL | CFI_PE_SDATA4,
        .lsda_encoding = CFI_PE_OMIT, .personality_encoding = CFI_PE_OMIT,
        .instructions = cie, .instructions_len = cie_len,
        .instructions_offset = 0x10,
    };
    c->fde = (struct cfi_fde){
        .section = CFI_EH_FRAME, .offset = FDE_OFF, .cie_offset = CIE_OFF,
        .pc_begin = PC_BEGIN, .pc_end = PC_END, .cie = &c->cie,
        .instructions = fde, .instructions_len = fde_len,
        .instructions_offset = 0x30, .instructions_addr = 0x5030,
    };
    c->arena = sem_arena_new();
    c->status = sem_translate_fde(&c->fde, c->arena, &c->il, &c->diag);
}

static void done(struct case_il *c)
{
    sem_arena_free(c->arena);
}

#define FDE(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})
#define NO_FDE NULL, 0

/* Translates an FDE program under the GCC CIE and expects success. The
 * program is a compound literal of the caller's block: it must outlive
 * the IL, whose expressions point into it. */
static void translate_ok(struct case_il *c, const uint8_t *fde, size_t len)
{
    translate(c, gcc_cie, sizeof gcc_cie, fde, len);
    ck_assert_msg(c->status == CFI_OK, "translation failed: %s",
                  c->diag.message);
}
#define TRANSLATE_OK(c, ...) translate_ok((c), FDE(__VA_ARGS__))

static void assert_range(const struct case_il *c, size_t i, uint64_t begin,
                         uint64_t end)
{
    ck_assert_uint_gt(c->il.nranges, i);
    ck_assert_uint_eq(c->il.ranges[i].begin, begin);
    ck_assert_uint_eq(c->il.ranges[i].end, end);
}

static const struct sem_row *row_at(const struct case_il *c, size_t i)
{
    ck_assert_uint_gt(c->il.nranges, i);
    return c->il.ranges[i].row;
}

static void assert_cfa(const struct sem_row *row, unsigned reg, int64_t off)
{
    ck_assert_int_eq(row->cfa.kind, SEM_CFA_RULE_REG_OFFSET);
    ck_assert_uint_eq(row->cfa.reg, reg);
    ck_assert_int_eq(row->cfa.offset, off);
}

static void assert_rule(const struct sem_row *row, unsigned reg,
                        enum sem_rule_kind kind, int64_t value)
{
    struct sem_rule rule = sem_row_rule(row, reg);
    ck_assert_msg(rule.kind == kind, "register %u: kind %d, expected %d",
                  reg, rule.kind, kind);
    if (kind == SEM_RULE_OFFSET || kind == SEM_RULE_VAL_OFFSET)
        ck_assert_int_eq(rule.offset, value);
    if (kind == SEM_RULE_REGISTER)
        ck_assert_uint_eq(rule.reg, (uint64_t)value);
}

static void assert_error(const struct case_il *c, enum cfi_status status,
                         uint64_t section_offset)
{
    ck_assert_msg(c->status == status, "status %s, expected %s",
                  cfi_status_name(c->status), cfi_status_name(status));
    ck_assert_uint_eq(c->diag.offset, section_offset);
    ck_assert_ptr_nonnull(c->diag.message);
}

/* ------------------------------------------------------------------ */

START_TEST(test_prologue_epilogue)
{
    struct case_il c;
    /* push rbp; mov rsp,rbp; ...; pop rbp; ret */
    TRANSLATE_OK(&c, 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06,
                 0x4a, 0x0c, 0x07, 0x08);
    ck_assert_uint_eq(c.il.nranges, 4);
    assert_range(&c, 0, 0x1000, 0x1001);
    assert_cfa(row_at(&c, 0), 7, 8);
    assert_rule(row_at(&c, 0), 16, SEM_RULE_OFFSET, -8);
    assert_rule(row_at(&c, 0), 6, SEM_RULE_UNSPECIFIED, 0);
    assert_range(&c, 1, 0x1001, 0x1004);
    assert_cfa(row_at(&c, 1), 7, 16);
    assert_rule(row_at(&c, 1), 6, SEM_RULE_OFFSET, -16);
    assert_range(&c, 2, 0x1004, 0x100e);
    assert_cfa(row_at(&c, 2), 6, 16);
    assert_range(&c, 3, 0x100e, PC_END);
    assert_cfa(row_at(&c, 3), 7, 8);
    assert_rule(row_at(&c, 3), 6, SEM_RULE_OFFSET, -16);
    done(&c);
}
END_TEST

START_TEST(test_rows_cover_fde_without_gaps)
{
    struct case_il c;
    TRANSLATE_OK(&c, 0x41, 0x0e, 0x10, 0x40, 0x0e, 0x18, 0x02, 0x20,
                 0x0e, 0x08);
    /* advance_loc 0 gives an empty range, which vanishes. */
    ck_assert_uint_eq(c.il.nranges, 3);
    ck_assert_uint_eq(c.il.ranges[0].begin, PC_BEGIN);
    for (size_t i = 1; i < c.il.nranges; i++)
        ck_assert_uint_eq(c.il.ranges[i].begin, c.il.ranges[i - 1].end);
    ck_assert_uint_eq(c.il.ranges[c.il.nranges - 1].end, PC_END);
    assert_cfa(row_at(&c, 1), 7, 24);
    ck_assert_ptr_eq(sem_fde_il_find(&c.il, 0x1021), &c.il.ranges[2]);
    ck_assert_ptr_eq(sem_fde_il_find(&c.il, 0x1000), &c.il.ranges[0]);
    ck_assert_ptr_null(sem_fde_il_find(&c.il, PC_END));
    ck_assert_ptr_null(sem_fde_il_find(&c.il, PC_BEGIN - 1));
    done(&c);
}
END_TEST

START_TEST(test_nop_only_fde_has_cie_row)
{
    /* libunwind#285: an FDE whose program is only nops still has a row. */
    struct case_il c;
    TRANSLATE_OK(&c, 0x00, 0x00, 0x00);
    ck_assert_uint_eq(c.il.nranges, 1);
    assert_range(&c, 0, PC_BEGIN, PC_END);
    assert_cfa(row_at(&c, 0), 7, 8);
    assert_rule(row_at(&c, 0), 16, SEM_RULE_OFFSET, -8);
    done(&c);
    translate(&c, gcc_cie, sizeof gcc_cie, NO_FDE);
    ck_assert_int_eq(c.status, CFI_OK);
    ck_assert_uint_eq(c.il.nranges, 1);
    done(&c);
}
END_TEST

START_TEST(test_empty_fde_range)
{
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x0e, 0x10));
    c.fde.pc_end = PC_BEGIN;
    struct sem_fde_il il;
    ck_assert_int_eq(sem_translate_fde(&c.fde, c.arena, &il, NULL), CFI_OK);
    ck_assert_uint_eq(il.nranges, 0);
    done(&c);
}
END_TEST

START_TEST(test_each_register_rule)
{
    struct case_il c;
    TRANSLATE_OK(&c,
                 0x07, 0x00,             /* undefined rax */
                 0x08, 0x03,             /* same_value rbx */
                 0x8c, 0x03,             /* offset r12, cfa-24 */
                 0x14, 0x0d, 0x04,       /* val_offset r13, cfa-32 */
                 0x09, 0x0e, 0x0b,       /* register r14, r11 */
                 0x10, 0x0f, 0x02, 0x76, 0x10, /* expression r15 */
                 0x16, 0x06, 0x01, 0x31, /* val_expression rbp */
                 0x2f, 0x05, 0x01,       /* GNU_negative_offset_extended rdi */
                 0x11, 0x04, 0x7f);      /* offset_extended_sf rsi, cfa+8 */
    const struct sem_row *row = row_at(&c, 0);
    assert_rule(row, 0, SEM_RULE_UNDEFINED, 0);
    assert_rule(row, 3, SEM_RULE_SAME_VALUE, 0);
    assert_rule(row, 12, SEM_RULE_OFFSET, -24);
    assert_rule(row, 13, SEM_RULE_VAL_OFFSET, -32);
    assert_rule(row, 14, SEM_RULE_REGISTER, 11);
    assert_rule(row, 15, SEM_RULE_EXPRESSION, 0);
    ck_assert_uint_eq(sem_row_rule(row, 15).expr.len, 2);
    ck_assert_uint_eq(sem_row_rule(row, 15).expr.bytes[0], 0x76);
    assert_rule(row, 6, SEM_RULE_VAL_EXPRESSION, 0);
    assert_rule(row, 5, SEM_RULE_OFFSET, 8);
    assert_rule(row, 4, SEM_RULE_OFFSET, 8);
    assert_rule(row, 1, SEM_RULE_UNSPECIFIED, 0);
    ck_assert_uint_eq(row->nrules, 10); /* the nine above and rip */
    for (uint32_t i = 1; i < row->nrules; i++)
        ck_assert_uint_lt(row->rules[i - 1].reg, row->rules[i].reg);
    done(&c);
}
END_TEST

START_TEST(test_cfa_rules)
{
    struct case_il c;
    TRANSLATE_OK(&c, 0x12, 0x06, 0x7c,   /* def_cfa_sf rbp, 32 */
                 0x41, 0x13, 0x7e,       /* def_cfa_offset_sf 16 */
                 0x41, 0x0f, 0x02, 0x77, 0x08, /* def_cfa_expression */
                 0x41, 0x0c, 0x07, 0x08);
    assert_cfa(row_at(&c, 0), 6, 32);
    assert_cfa(row_at(&c, 1), 6, 16);
    ck_assert_int_eq(row_at(&c, 2)->cfa.kind, SEM_CFA_RULE_EXPR);
    ck_assert_uint_eq(row_at(&c, 2)->cfa.expr.len, 2);
    assert_cfa(row_at(&c, 3), 7, 8);
    done(&c);
}
END_TEST

START_TEST(test_same_value_continues)
{
    /* The report's same_value rule ended the translation. */
    struct case_il c;
    TRANSLATE_OK(&c, 0x08, 0x06, 0x41, 0x0e, 0x10, 0x86, 0x02);
    ck_assert_uint_eq(c.il.nranges, 2);
    assert_rule(row_at(&c, 0), 6, SEM_RULE_SAME_VALUE, 0);
    assert_cfa(row_at(&c, 1), 7, 16);
    assert_rule(row_at(&c, 1), 6, SEM_RULE_OFFSET, -16);
    done(&c);
}
END_TEST

START_TEST(test_register_names_a_register_not_its_rule)
{
    /* register(rbx, r12) after r12 got a rule: rbx's rule is still "the
     * value in r12", not r12's rule of the previous row. */
    struct case_il c;
    TRANSLATE_OK(&c, 0x8c, 0x02, 0x41, 0x09, 0x03, 0x0c);
    assert_rule(row_at(&c, 1), 3, SEM_RULE_REGISTER, 12);
    assert_rule(row_at(&c, 1), 12, SEM_RULE_OFFSET, -16);
    done(&c);
}
END_TEST

START_TEST(test_restore_brings_back_cie_rule)
{
    /* LLVM libunwind lost the CIE's rule here (FACTS.md). */
    struct case_il c;
    TRANSLATE_OK(&c, 0x90, 0x03, 0x83, 0x02, 0x41, 0xd0, 0xc3,
                 0x41, 0x06, 0x10);
    assert_rule(row_at(&c, 0), 16, SEM_RULE_OFFSET, -24);
    assert_rule(row_at(&c, 0), 3, SEM_RULE_OFFSET, -16);
    /* restore rip: the CIE said [cfa-8]; restore rbx: the CIE said nothing */
    assert_rule(row_at(&c, 1), 16, SEM_RULE_OFFSET, -8);
    assert_rule(row_at(&c, 1), 3, SEM_RULE_UNSPECIFIED, 0);
    assert_rule(row_at(&c, 2), 16, SEM_RULE_OFFSET, -8);
    done(&c);
}
END_TEST

START_TEST(test_restore_extended)
{
    struct case_il c;
    TRANSLATE_OK(&c, 0x05, 0x10, 0x04, 0x41, 0x06, 0x10);
    assert_rule(row_at(&c, 0), 16, SEM_RULE_OFFSET, -32);
    assert_rule(row_at(&c, 1), 16, SEM_RULE_OFFSET, -8);
    done(&c);
}
END_TEST

START_TEST(test_restore_state_restores_cfa_not_location)
{
    /* gimli#273 (location), parca-agent#841 (CFA). */
    struct case_il c;
    TRANSLATE_OK(&c, 0x41, 0x0e, 0x10, 0x86, 0x02,
                 0x0a,                   /* remember at 0x1001 */
                 0x42, 0x0e, 0x08, 0xc6, /* epilogue at 0x1003 */
                 0x41, 0x0b);            /* restore at 0x1004 */
    ck_assert_uint_eq(c.il.nranges, 4);
    assert_range(&c, 2, 0x1003, 0x1004);
    assert_cfa(row_at(&c, 2), 7, 8);
    assert_rule(row_at(&c, 2), 6, SEM_RULE_UNSPECIFIED, 0);
    assert_range(&c, 3, 0x1004, PC_END);
    assert_cfa(row_at(&c, 3), 7, 16);
    assert_rule(row_at(&c, 3), 6, SEM_RULE_OFFSET, -16);
    done(&c);
}
END_TEST

START_TEST(test_nested_remember)
{
    struct case_il c;
    TRANSLATE_OK(&c, 0x0e, 0x10, 0x0a,   /* A: cfa+16, saved */
                 0x41, 0x0e, 0x20, 0x0a, /* B: cfa+32, saved */
                 0x41, 0x0e, 0x30,       /* C: cfa+48 */
                 0x41, 0x0b,             /* back to B */
                 0x41, 0x0b);            /* back to A */
    ck_assert_uint_eq(c.il.nranges, 5);
    assert_cfa(row_at(&c, 0), 7, 16);
    assert_cfa(row_at(&c, 1), 7, 32);
    assert_cfa(row_at(&c, 2), 7, 48);
    assert_cfa(row_at(&c, 3), 7, 32);
    assert_cfa(row_at(&c, 4), 7, 16);
    assert_range(&c, 4, 0x1004, PC_END);
    done(&c);
}
END_TEST

START_TEST(test_set_loc)
{
    struct case_il c;
    /* pcrel sdata4: operand at 0x5030 + 1; 0x5031 + v = 0x1010. */
    int32_t v = 0x1010 - 0x5031;
    uint8_t b[] = {0x01, (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                   (uint8_t)(v >> 24), 0x0e, 0x10};
    translate(&c, gcc_cie, sizeof gcc_cie, b, sizeof b);
    ck_assert_int_eq(c.status, CFI_OK);
    ck_assert_uint_eq(c.il.nranges, 2);
    assert_range(&c, 0, PC_BEGIN, 0x1010);
    assert_cfa(row_at(&c, 1), 7, 16);
    done(&c);
}
END_TEST

START_TEST(test_args_size_and_nop_change_nothing)
{
    struct case_il c;
    TRANSLATE_OK(&c, 0x2e, 0x10, 0x00, 0x41, 0x2e, 0x00);
    ck_assert_uint_eq(c.il.nranges, 2);
    ck_assert_ptr_eq(row_at(&c, 0), row_at(&c, 1)); /* one shared row */
    done(&c);
}
END_TEST

START_TEST(test_high_registers)
{
    struct case_il c;
    TRANSLATE_OK(&c, 0x05, 0x43, 0x02, 0x05, 0x7f, 0x03);
    assert_rule(row_at(&c, 0), 67, SEM_RULE_OFFSET, -16);
    assert_rule(row_at(&c, 0), 127, SEM_RULE_OFFSET, -24);
    done(&c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors. Offsets are section offsets: the FDE program starts at 0x30,  */
/* the CIE program at 0x10.                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_restore_state_empty_stack)
{
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x41, 0x0b));
    assert_error(&c, CFI_E_MALFORMED, 0x31);
    done(&c);
}
END_TEST

START_TEST(test_cfa_offset_on_expression)
{
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie,
              FDE(0x0f, 0x01, 0x30, 0x0e, 0x10));
    assert_error(&c, CFI_E_MALFORMED, 0x33);
    done(&c);
    translate(&c, gcc_cie, sizeof gcc_cie,
              FDE(0x0f, 0x01, 0x30, 0x41, 0x0d, 0x06));
    assert_error(&c, CFI_E_MALFORMED, 0x34);
    done(&c);
    translate(&c, gcc_cie, sizeof gcc_cie,
              FDE(0x0f, 0x01, 0x30, 0x13, 0x7e));
    assert_error(&c, CFI_E_MALFORMED, 0x33);
    done(&c);
}
END_TEST

START_TEST(test_cfa_offset_without_cfa)
{
    static const uint8_t bare_cie[] = {0x90, 0x01};
    struct case_il c;
    translate(&c, bare_cie, sizeof bare_cie, FDE(0x0e, 0x10));
    assert_error(&c, CFI_E_MALFORMED, 0x30);
    done(&c);
    /* No CFA rule at all is not a translation error: the row says so. */
    translate(&c, bare_cie, sizeof bare_cie, FDE(0x00));
    ck_assert_int_eq(c.status, CFI_OK);
    ck_assert_int_eq(row_at(&c, 0)->cfa.kind, SEM_CFA_RULE_INVALID);
    done(&c);
}
END_TEST

START_TEST(test_location_backwards_or_past_end)
{
    struct case_il c;
    int32_t v = 0x0fff - 0x5031; /* set_loc to pc_begin - 1 */
    uint8_t back[] = {0x01, (uint8_t)v, (uint8_t)(v >> 8),
                      (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    translate(&c, gcc_cie, sizeof gcc_cie, back, sizeof back);
    assert_error(&c, CFI_E_MALFORMED, 0x30);
    done(&c);
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x00, 0x02, 0xff, 0x02, 0x02));
    assert_error(&c, CFI_E_MALFORMED, 0x33); /* 0x1000+255+2 > 0x1100 */
    done(&c);
    /* set_loc must move forward: to the current location is an error. */
    int32_t same = 0x1000 - 0x5031;
    uint8_t stay[] = {0x01, (uint8_t)same, (uint8_t)(same >> 8),
                      (uint8_t)(same >> 16), (uint8_t)(same >> 24)};
    translate(&c, gcc_cie, sizeof gcc_cie, stay, sizeof stay);
    assert_error(&c, CFI_E_MALFORMED, 0x30);
    done(&c);
    /* Up to the end exactly is fine. */
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x03, 0x00, 0x01, 0x0e, 0x10));
    ck_assert_int_eq(c.status, CFI_OK);
    ck_assert_uint_eq(c.il.nranges, 1);
    done(&c);
    /* A huge advance must not wrap around. */
    translate(&c, gcc_cie, sizeof gcc_cie,
              FDE(0x1d, 0, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff));
    assert_error(&c, CFI_E_MALFORMED, 0x30);
    done(&c);
}
END_TEST

START_TEST(test_register_out_of_range)
{
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x00, 0x05, 0x80, 0x01, 0x01));
    assert_error(&c, CFI_E_MALFORMED, 0x31);
    ck_assert_int_eq(c.diag.reg, 128);
    done(&c);
}
END_TEST

START_TEST(test_remember_too_deep)
{
    uint8_t program[SEM_REMEMBER_MAX + 1];
    memset(program, 0x0a, sizeof program);
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie, program, SEM_REMEMBER_MAX);
    ck_assert_int_eq(c.status, CFI_OK);
    done(&c);
    translate(&c, gcc_cie, sizeof gcc_cie, program, sizeof program);
    assert_error(&c, CFI_E_MALFORMED, 0x30 + SEM_REMEMBER_MAX);
    done(&c);
}
END_TEST

START_TEST(test_cie_rules)
{
    static const uint8_t advancing_cie[] = {0x0c, 0x07, 0x08, 0x41};
    static const uint8_t restoring_cie[] = {0x0c, 0x07, 0x08, 0xd0};
    static const uint8_t remembering_cie[] = {0x0c, 0x07, 0x08, 0x0a};
    struct case_il c;
    translate(&c, advancing_cie, sizeof advancing_cie, FDE(0x00));
    assert_error(&c, CFI_E_MALFORMED, 0x13);
    done(&c);
    translate(&c, restoring_cie, sizeof restoring_cie, FDE(0x00));
    assert_error(&c, CFI_E_MALFORMED, 0x13);
    done(&c);
    /* The remembered rows stay in the CIE: the FDE's stack starts empty. */
    translate(&c, remembering_cie, sizeof remembering_cie, FDE(0x0b));
    assert_error(&c, CFI_E_MALFORMED, 0x30);
    done(&c);
}
END_TEST

START_TEST(test_cie_decode_error_offset)
{
    static const uint8_t bad_cie[] = {0x0c, 0x07, 0x08, 0x17};
    struct case_il c;
    translate(&c, bad_cie, sizeof bad_cie, FDE(0x00));
    assert_error(&c, CFI_E_MALFORMED, 0x13);
    done(&c);
}
END_TEST

START_TEST(test_window_save_unsupported)
{
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x41, 0x2d));
    assert_error(&c, CFI_E_UNSUPPORTED, 0x31);
    done(&c);
}
END_TEST

START_TEST(test_bad_return_column)
{
    struct case_il c;
    translate(&c, gcc_cie, sizeof gcc_cie, FDE(0x00));
    done(&c);
    c.cie.ra_column = 200;
    c.arena = sem_arena_new();
    struct cfi_diag diag;
    ck_assert_int_eq(sem_translate_fde(&c.fde, c.arena, &c.il, &diag),
                     CFI_E_MALFORMED);
    ck_assert_uint_eq(diag.offset, CIE_OFF);
    done(&c);
}
END_TEST

static Suite *translate_suite(void)
{
    Suite *suite = suite_create("sem_translate");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, test_prologue_epilogue);
    tcase_add_test(rules, test_rows_cover_fde_without_gaps);
    tcase_add_test(rules, test_nop_only_fde_has_cie_row);
    tcase_add_test(rules, test_empty_fde_range);
    tcase_add_test(rules, test_each_register_rule);
    tcase_add_test(rules, test_cfa_rules);
    tcase_add_test(rules, test_same_value_continues);
    tcase_add_test(rules, test_register_names_a_register_not_its_rule);
    tcase_add_test(rules, test_restore_brings_back_cie_rule);
    tcase_add_test(rules, test_restore_extended);
    tcase_add_test(rules, test_restore_state_restores_cfa_not_location);
    tcase_add_test(rules, test_nested_remember);
    tcase_add_test(rules, test_set_loc);
    tcase_add_test(rules, test_args_size_and_nop_change_nothing);
    tcase_add_test(rules, test_high_registers);
    suite_add_tcase(suite, rules);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_restore_state_empty_stack);
    tcase_add_test(errors, test_cfa_offset_on_expression);
    tcase_add_test(errors, test_cfa_offset_without_cfa);
    tcase_add_test(errors, test_location_backwards_or_past_end);
    tcase_add_test(errors, test_register_out_of_range);
    tcase_add_test(errors, test_remember_too_deep);
    tcase_add_test(errors, test_cie_rules);
    tcase_add_test(errors, test_cie_decode_error_offset);
    tcase_add_test(errors, test_window_save_unsupported);
    tcase_add_test(errors, test_bad_return_column);
    suite_add_tcase(suite, errors);
    return suite;
}

int main(void)
{
    SRunner *runner = srunner_create(translate_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
