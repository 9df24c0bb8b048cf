/* SPDX-License-Identifier: MIT */
/* check_sem_decode.c — the DW_CFA decoder of semantics/: every opcode,
 * every operand encoding, and malformed bytes (status and offset). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "semantics/sem.h"

static const struct sem_decode_env eh_env = {
    .code_align = 1, .data_align = -8, .section = CFI_EH_FRAME,
    .address_size = 8, .pointer_encoding = CFI_PE_PCREL | CFI_PE_SDATA4,
    .bytes_addr = 0x1000,
};

/* Decodes bytes that must hold exactly one instruction. */
static struct sem_insn decode1(const uint8_t *bytes, size_t len,
                               const struct sem_decode_env *env)
{
    struct sem_program program = {0};
    struct cfi_diag diag = {0};
    enum cfi_status status = sem_decode(bytes, len, env, &program, &diag);
    ck_assert_msg(status == CFI_OK, "decode failed: %s at %llu",
                  diag.message, (unsigned long long)diag.offset);
    ck_assert_uint_eq(program.count, 1);
    struct sem_insn insn = program.insns[0];
    sem_program_free(&program);
    return insn;
}

#define DECODE(env, ...)                                                  \
    decode1((const uint8_t[]){__VA_ARGS__},                               \
            sizeof((const uint8_t[]){__VA_ARGS__}), (env))

/* Decodes malformed bytes; checks the status and the offset. */
static void expect_error(const uint8_t *bytes, size_t len,
                         const struct sem_decode_env *env,
                         enum cfi_status expected, uint64_t offset)
{
    struct sem_program program = {0};
    struct cfi_diag diag = {0};
    enum cfi_status status = sem_decode(bytes, len, env, &program, &diag);
    ck_assert_msg(status == expected, "status %s, expected %s",
                  cfi_status_name(status), cfi_status_name(expected));
    ck_assert_uint_eq(diag.offset, offset);
    ck_assert_ptr_nonnull(diag.message);
    sem_program_free(&program);
}

#define EXPECT_ERROR(status, offset, ...)                                  \
    expect_error((const uint8_t[]){__VA_ARGS__},                          \
                 sizeof((const uint8_t[]){__VA_ARGS__}), &eh_env, status, \
                 offset)

START_TEST(test_advance_forms)
{
    struct sem_decode_env env = eh_env;
    env.code_align = 4;
    struct sem_insn insn = DECODE(&env, 0x45);
    ck_assert_int_eq(insn.opcode, SEM_CFA_advance_loc);
    ck_assert_uint_eq(insn.delta, 5 * 4);
    insn = DECODE(&env, 0x02, 0xff);
    ck_assert_int_eq(insn.opcode, SEM_CFA_advance_loc1);
    ck_assert_uint_eq(insn.delta, 255 * 4);
    insn = DECODE(&env, 0x03, 0x34, 0x12);
    ck_assert_uint_eq(insn.delta, 0x1234 * 4);
    insn = DECODE(&env, 0x04, 0x78, 0x56, 0x34, 0x12);
    ck_assert_uint_eq(insn.delta, 0x12345678ull * 4);
    insn = DECODE(&env, 0x1d, 1, 0, 0, 0, 0, 0, 0, 0x10);
    ck_assert_int_eq(insn.opcode, SEM_CFA_MIPS_advance_loc8);
    ck_assert_uint_eq(insn.delta, (0x1000000000000001ull) * 4);
}
END_TEST

START_TEST(test_offset_forms)
{
    struct sem_insn insn = DECODE(&eh_env, 0x83, 0x02);
    ck_assert_int_eq(insn.opcode, SEM_CFA_offset);
    ck_assert_uint_eq(insn.reg, 3);
    ck_assert_int_eq(insn.offset, -16);
    insn = DECODE(&eh_env, 0x05, 0x11, 0x03);
    ck_assert_int_eq(insn.opcode, SEM_CFA_offset_extended);
    ck_assert_uint_eq(insn.reg, 17);
    ck_assert_int_eq(insn.offset, -24);
    insn = DECODE(&eh_env, 0x11, 0x06, 0x7e); /* sleb -2 */
    ck_assert_int_eq(insn.opcode, SEM_CFA_offset_extended_sf);
    ck_assert_int_eq(insn.offset, 16);
    insn = DECODE(&eh_env, 0x14, 0x0c, 0x02);
    ck_assert_int_eq(insn.opcode, SEM_CFA_val_offset);
    ck_assert_int_eq(insn.offset, -16);
    insn = DECODE(&eh_env, 0x15, 0x0c, 0x01);
    ck_assert_int_eq(insn.opcode, SEM_CFA_val_offset_sf);
    ck_assert_int_eq(insn.offset, -8);
    insn = DECODE(&eh_env, 0x2f, 0x03, 0x02);
    ck_assert_int_eq(insn.opcode, SEM_CFA_GNU_negative_offset_extended);
    ck_assert_int_eq(insn.offset, 16);
}
END_TEST

START_TEST(test_register_forms)
{
    struct sem_insn insn = DECODE(&eh_env, 0xc6);
    ck_assert_int_eq(insn.opcode, SEM_CFA_restore);
    ck_assert_uint_eq(insn.reg, 6);
    insn = DECODE(&eh_env, 0x06, 0x43);
    ck_assert_int_eq(insn.opcode, SEM_CFA_restore_extended);
    ck_assert_uint_eq(insn.reg, 67);
    insn = DECODE(&eh_env, 0x07, 0x10);
    ck_assert_int_eq(insn.opcode, SEM_CFA_undefined);
    ck_assert_uint_eq(insn.reg, 16);
    insn = DECODE(&eh_env, 0x08, 0x0f);
    ck_assert_int_eq(insn.opcode, SEM_CFA_same_value);
    ck_assert_uint_eq(insn.reg, 15);
    insn = DECODE(&eh_env, 0x09, 0x03, 0x0c);
    ck_assert_int_eq(insn.opcode, SEM_CFA_register);
    ck_assert_uint_eq(insn.reg, 3);
    ck_assert_uint_eq(insn.reg2, 12);
}
END_TEST

START_TEST(test_cfa_forms)
{
    struct sem_insn insn = DECODE(&eh_env, 0x0c, 0x07, 0x80, 0x01);
    ck_assert_int_eq(insn.opcode, SEM_CFA_def_cfa);
    ck_assert_uint_eq(insn.reg, 7);
    ck_assert_int_eq(insn.offset, 128); /* not factored */
    insn = DECODE(&eh_env, 0x12, 0x06, 0x7e);
    ck_assert_int_eq(insn.opcode, SEM_CFA_def_cfa_sf);
    ck_assert_int_eq(insn.offset, 16); /* -2 × -8 */
    insn = DECODE(&eh_env, 0x0d, 0x06);
    ck_assert_int_eq(insn.opcode, SEM_CFA_def_cfa_register);
    ck_assert_uint_eq(insn.reg, 6);
    insn = DECODE(&eh_env, 0x0e, 0x10);
    ck_assert_int_eq(insn.opcode, SEM_CFA_def_cfa_offset);
    ck_assert_int_eq(insn.offset, 16);
    insn = DECODE(&eh_env, 0x13, 0x7c);
    ck_assert_int_eq(insn.opcode, SEM_CFA_def_cfa_offset_sf);
    ck_assert_int_eq(insn.offset, 32);
}
END_TEST

START_TEST(test_expression_forms)
{
    struct sem_insn insn = DECODE(&eh_env, 0x0f, 0x03, 0x77, 0xa0, 0x01);
    ck_assert_int_eq(insn.opcode, SEM_CFA_def_cfa_expression);
    ck_assert_uint_eq(insn.expr.len, 3);
    ck_assert_uint_eq(insn.expr.bytes[0], 0x77);
    insn = DECODE(&eh_env, 0x10, 0x03, 0x02, 0x76, 0x68);
    ck_assert_int_eq(insn.opcode, SEM_CFA_expression);
    ck_assert_uint_eq(insn.reg, 3);
    ck_assert_uint_eq(insn.expr.len, 2);
    insn = DECODE(&eh_env, 0x16, 0x0c, 0x00);
    ck_assert_int_eq(insn.opcode, SEM_CFA_val_expression);
    ck_assert_uint_eq(insn.expr.len, 0);
}
END_TEST

START_TEST(test_no_operand_forms)
{
    ck_assert_int_eq(DECODE(&eh_env, 0x00).opcode, SEM_CFA_nop);
    ck_assert_int_eq(DECODE(&eh_env, 0x0a).opcode, SEM_CFA_remember_state);
    ck_assert_int_eq(DECODE(&eh_env, 0x0b).opcode, SEM_CFA_restore_state);
    ck_assert_int_eq(DECODE(&eh_env, 0x2d).opcode, SEM_CFA_GNU_window_save);
    struct sem_insn insn = DECODE(&eh_env, 0x2e, 0x90, 0x01);
    ck_assert_int_eq(insn.opcode, SEM_CFA_GNU_args_size);
    ck_assert_uint_eq(insn.number, 144);
}
END_TEST

START_TEST(test_set_loc_encodings)
{
    /* .eh_frame, pcrel|sdata4: the field is at bytes_addr + 1. */
    struct sem_insn insn = DECODE(&eh_env, 0x01, 0xff, 0x0f, 0x00, 0x00);
    ck_assert_uint_eq(insn.address, 0x1001 + 0xfff);
    insn = DECODE(&eh_env, 0x01, 0xfe, 0xff, 0xff, 0xff);
    ck_assert_uint_eq(insn.address, 0x1001 - 2);
    struct sem_decode_env env = eh_env;
    env.pointer_encoding = CFI_PE_UDATA2;
    ck_assert_uint_eq(DECODE(&env, 0x01, 0x34, 0x12).address, 0x1234);
    env.pointer_encoding = CFI_PE_ULEB128;
    ck_assert_uint_eq(DECODE(&env, 0x01, 0x80, 0x01).address, 128);
    env.pointer_encoding = CFI_PE_SDATA8;
    ck_assert_uint_eq(DECODE(&env, 0x01, 8, 7, 6, 5, 4, 3, 2, 1).address,
                      0x0102030405060708ull);
    /* .debug_frame: a plain target address, whatever 'R' says. */
    env.section = CFI_DEBUG_FRAME;
    env.pointer_encoding = CFI_PE_PCREL | CFI_PE_SDATA4;
    ck_assert_uint_eq(DECODE(&env, 0x01, 8, 7, 6, 5, 4, 3, 2, 1).address,
                      0x0102030405060708ull);
}
END_TEST

START_TEST(test_program_offsets)
{
    const uint8_t bytes[] = {0x0c, 0x07, 0x08, 0x90, 0x01, 0x41, 0x0e, 0x10};
    struct sem_program program = {0};
    ck_assert_int_eq(sem_decode(bytes, sizeof bytes, &eh_env, &program, NULL),
                     CFI_OK);
    ck_assert_uint_eq(program.count, 4);
    ck_assert_uint_eq(program.insns[0].at, 0);
    ck_assert_uint_eq(program.insns[1].at, 3);
    ck_assert_uint_eq(program.insns[2].at, 5);
    ck_assert_uint_eq(program.insns[3].at, 6);
    ck_assert_uint_eq(program.insns[1].reg, 16);
    sem_program_free(&program);
}
END_TEST

START_TEST(test_malformed)
{
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x0c, 0x87);          /* ULEB runs out */
    EXPECT_ERROR(CFI_E_MALFORMED, 1, 0x00, 0x17);          /* unknown opcode */
    EXPECT_ERROR(CFI_E_MALFORMED, 1, 0x00, 0x3f);          /* hi_user */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x07, 0x80, 0x01);    /* register 128 */
    EXPECT_ERROR(CFI_E_MALFORMED, 2, 0x00, 0x00, 0x04, 1, 2); /* loc4 cut */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x0f, 0x05, 1, 2);    /* expr past end */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x10, 0x03);          /* no length */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x09, 0x03);          /* no 2nd reg */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x01, 0x01, 0x02);    /* set_loc cut */
    /* ULEB128 with a bit of weight 2^70. */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80,
                 0x80, 0x80, 0x80, 0x80, 0x80, 0x01);
    /* A factored 2^63 does not fit an offset. */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x14, 0x03, 0x80, 0x80, 0x80, 0x80,
                 0x80, 0x80, 0x80, 0x80, 0x80, 0x01);
    /* 2^62 × -8 overflows int64. */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x83, 0x80, 0x80, 0x80, 0x80, 0x80,
                 0x80, 0x80, 0x80, 0x40);
    /* SLEB128 that does not fit in 64 bits. */
    EXPECT_ERROR(CFI_E_MALFORMED, 0, 0x13, 0xff, 0xff, 0xff, 0xff, 0xff,
                 0xff, 0xff, 0xff, 0xff, 0x3f);
}
END_TEST

START_TEST(test_leb_limits)
{
    /* The largest SLEB128 and the smallest, ten bytes each. */
    struct sem_decode_env env = eh_env;
    env.data_align = 1;
    struct sem_insn insn = DECODE(&env, 0x13, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff, 0x00);
    ck_assert_int_eq(insn.offset, INT64_MAX);
    insn = DECODE(&env, 0x13, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                  0x80, 0x80, 0x7f);
    ck_assert_int_eq(insn.offset, INT64_MIN);
    /* An unfactored offset of 2^64 - 8 is -8 mod 2^64. */
    insn = DECODE(&env, 0x0c, 0x07, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                  0xff, 0xff, 0x01);
    ck_assert_int_eq(insn.offset, -8);
    /* GNU_negative_offset_extended: factored, then negated. */
    env.data_align = 2;
    expect_error((const uint8_t[]){0x2f, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80,
                                   0x80, 0x80, 0x80, 0x40}, 11, &env,
                 CFI_E_MALFORMED, 0);
    env.data_align = 1;
    /* A redundant, padded encoding is still the same number. */
    insn = DECODE(&env, 0x0e, 0x88, 0x80, 0x80, 0x00);
    ck_assert_int_eq(insn.offset, 8);
}
END_TEST

/* An unsigned factored offset is the exact product n × data_align: it
 * fails only when the product is not an int64 (fuzz/findings/elf/
 * 3818909c3559: n above INT64_MAX with a factor of 0). */
START_TEST(test_factored_exact)
{
    struct sem_decode_env env = eh_env;
    env.data_align = 0;
    struct sem_insn insn = DECODE(&env, 0x2f, 0x00, 0xfc, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    ck_assert_int_eq(insn.offset, 0);
    env.data_align = -1;   /* 2^63 × -1 = INT64_MIN */
    insn = DECODE(&env, 0x05, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                  0x80, 0x80, 0x80, 0x01);
    ck_assert_int_eq(insn.offset, INT64_MIN);
    env.data_align = 1;    /* 2^63 × 1 is not an int64 */
    expect_error((const uint8_t[]){0x05, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80,
                                   0x80, 0x80, 0x80, 0x80, 0x01}, 12, &env,
                 CFI_E_MALFORMED, 0);
}
END_TEST

START_TEST(test_unsupported_set_loc)
{
    struct sem_decode_env env = eh_env;
    env.pointer_encoding = CFI_PE_DATAREL | CFI_PE_SDATA4;
    expect_error((const uint8_t[]){0x00, 0x01, 1, 2, 3, 4}, 6, &env,
                 CFI_E_UNSUPPORTED, 1);
    env.pointer_encoding = CFI_PE_INDIRECT | CFI_PE_PCREL | CFI_PE_SDATA4;
    expect_error((const uint8_t[]){0x01, 1, 2, 3, 4}, 5, &env,
                 CFI_E_UNSUPPORTED, 0);
    env.pointer_encoding = 0x07; /* no such format */
    expect_error((const uint8_t[]){0x01, 1, 2, 3, 4}, 5, &env,
                 CFI_E_UNSUPPORTED, 0);
}
END_TEST

START_TEST(test_opcode_names)
{
    ck_assert_str_eq(sem_opcode_name(0x0e), "def_cfa_offset");
    ck_assert_str_eq(sem_opcode_name(0x40), "advance_loc");
    ck_assert_str_eq(sem_opcode_name(0x2e), "GNU_args_size");
    ck_assert_ptr_null(sem_opcode_name(0x17));
    ck_assert_ptr_null(sem_opcode_name(0x41));
}
END_TEST

static Suite *decode_suite(void)
{
    Suite *suite = suite_create("sem_decode");
    TCase *tc = tcase_create("decode");
    tcase_add_test(tc, test_advance_forms);
    tcase_add_test(tc, test_offset_forms);
    tcase_add_test(tc, test_register_forms);
    tcase_add_test(tc, test_cfa_forms);
    tcase_add_test(tc, test_expression_forms);
    tcase_add_test(tc, test_no_operand_forms);
    tcase_add_test(tc, test_set_loc_encodings);
    tcase_add_test(tc, test_program_offsets);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_leb_limits);
    tcase_add_test(tc, test_factored_exact);
    tcase_add_test(tc, test_unsupported_set_loc);
    tcase_add_test(tc, test_opcode_names);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void)
{
    SRunner *runner = srunner_create(decode_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
