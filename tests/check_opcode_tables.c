/* SPDX-License-Identifier: MIT */
/* check_opcode_tables.c — every table of DW_CFA opcodes in the tree holds
 * the same opcodes.
 *
 * The engines decode the instructions each with a table of its own, by
 * design (DESIGN.md: a shared decoder would hide a decoding bug), and so
 * do the generator, the adapters' safety scanners and the fuzzing
 * dictionary. Adding an opcode means adding it to each
 * (docs/architecture.md, "Adding an opcode"); this suite says which one was
 * forgotten. It reads the sources as text and shares no code with them:
 * the reference is the list below, written from DWARF 5 §7.24 (Table
 * 7.29) and the GNU extensions of DESIGN.md. A table that leaves an opcode
 * out on purpose names it here, with the reason. */
#include <check.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* DWARF 5 Table 7.29, the GNU and MIPS extensions cfisem reads, and
 * AArch64's vendor opcodes (aadwarf64; 0x2d is AARCH64_negate_ra_state
 * there). The three with a high-bit opcode carry their operand in the
 * low six bits. */
static const struct opcode {
    const char *name;
    unsigned number;
} dwarf[] = {
    {"nop", 0x00}, {"set_loc", 0x01}, {"advance_loc1", 0x02},
    {"advance_loc2", 0x03}, {"advance_loc4", 0x04},
    {"offset_extended", 0x05}, {"restore_extended", 0x06},
    {"undefined", 0x07}, {"same_value", 0x08}, {"register", 0x09},
    {"remember_state", 0x0a}, {"restore_state", 0x0b}, {"def_cfa", 0x0c},
    {"def_cfa_register", 0x0d}, {"def_cfa_offset", 0x0e},
    {"def_cfa_expression", 0x0f}, {"expression", 0x10},
    {"offset_extended_sf", 0x11}, {"def_cfa_sf", 0x12},
    {"def_cfa_offset_sf", 0x13}, {"val_offset", 0x14},
    {"val_offset_sf", 0x15}, {"val_expression", 0x16},
    {"MIPS_advance_loc8", 0x1d}, {"AARCH64_set_ra_state", 0x2b},
    {"AARCH64_negate_ra_state_with_pc", 0x2c}, {"GNU_window_save", 0x2d},
    {"GNU_args_size", 0x2e}, {"GNU_negative_offset_extended", 0x2f},
    {"advance_loc", 0x40}, {"offset", 0x80}, {"restore", 0xc0},
};
enum { NDWARF = sizeof dwarf / sizeof dwarf[0] };

/* A set of opcode numbers (the high-bit three by their top two bits). */
struct set {
    bool has[256];
};

static unsigned number_of(const char *name)
{
    for (size_t i = 0; i < NDWARF; i++)
        if (!strcmp(dwarf[i].name, name))
            return dwarf[i].number;
    return 256;
}

/* The reference, less `without` and plus `with` (names, NULL-ended). */
static struct set expected(const char *const *without, const char *const *with)
{
    struct set s = {{false}};
    for (size_t i = 0; i < NDWARF; i++)
        s.has[dwarf[i].number] = true;
    for (size_t i = 0; without && without[i]; i++)
        s.has[number_of(without[i])] = false;
    for (size_t i = 0; with && with[i]; i++) {
        unsigned n = number_of(with[i]);
        ck_assert_msg(n < 256, "unknown name %s in the exceptions", with[i]);
        s.has[n] = true;
    }
    return s;
}

static void assert_same(const char *table, const struct set *got,
                        const struct set *want)
{
    for (unsigned n = 0; n < 256; n++) {
        ck_assert_msg(!(want->has[n] && !got->has[n]),
                      "%s lacks opcode 0x%02x", table, n);
        ck_assert_msg(!(got->has[n] && !want->has[n]),
                      "%s has opcode 0x%02x that it should not", table, n);
    }
}

static char *source(const char *rel)
{
    char *path = test_src_path(rel);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    free(path);
    return text;
}

/* The text from `from` to the first `to` after it, as a new string. */
static char *between(const char *text, const char *from, const char *to)
{
    const char *start = strstr(text, from);
    ck_assert_msg(start != NULL, "no %s", from);
    const char *end = strstr(start + strlen(from), to);
    ck_assert_msg(end != NULL, "no %s after %s", to, from);
    return strndup(start, (size_t)(end - start));
}

/* X-macro lines "X(name, 0xNN, ...": the numbers, each checked against
 * the reference's name. */
static struct set x_macro(const char *block, const char *table)
{
    struct set s = {{false}};
    for (const char *at = block; (at = strstr(at, "X(")); at += 2) {
        char name[64];
        unsigned number;
        if (sscanf(at, "X(%63[A-Za-z0-9_], %x", name, &number) != 2)
            continue;
        ck_assert_msg(number_of(name) == number,
                      "%s: %s is 0x%02x, DWARF says 0x%02x", table, name,
                      number, number_of(name));
        s.has[number] = true;
    }
    return s;
}

/* "case DW_CFA_name:" labels, by the reference's names. */
static void case_labels(const char *block, struct set *s, const char *table)
{
    for (const char *at = block; (at = strstr(at, "case DW_CFA_")); at += 5) {
        char name[64];
        if (sscanf(at, "case DW_CFA_%63[A-Za-z0-9_]", name) != 1)
            continue;
        unsigned number = number_of(name);
        /* libdwarf's <dwarf.h> names beyond cfisem's set */
        if (!strcmp(name, "METAWARE_info"))
            number = 0x34;
        else if (!strcmp(name, "lo_user"))
            number = 0x1c;
        else if (!strcmp(name, "high_user"))
            number = 0x3f;
        ck_assert_msg(number < 256, "%s: unknown label DW_CFA_%s", table,
                      name);
        s->has[number] = true;
    }
}

START_TEST(test_semantics_and_interp)
{
    char *sem = source("semantics/sem.h");
    char *block = between(sem, "#define SEM_CFA_OPCODES(X)", "\nenum");
    struct set got = x_macro(block, "semantics/sem.h");
    struct set want = expected(NULL, NULL);
    assert_same("semantics/sem.h SEM_CFA_OPCODES", &got, &want);
    free(block);
    free(sem);
    /* and the rule each applies (semantics/translate.c) */
    char *translate = source("semantics/translate.c");
    block = between(translate, "#define SEM_RULES(X)", "\n\n");
    got = (struct set){{false}};
    for (const char *at = block; (at = strstr(at, "X(")); at += 2) {
        char name[64];
        if (sscanf(at, "X(%63[A-Za-z0-9_], rule_", name) != 1)
            continue;
        ck_assert_msg(number_of(name) < 256, "SEM_RULES: unknown %s", name);
        got.has[number_of(name)] = true;
    }
    assert_same("semantics/translate.c SEM_RULES", &got, &want);
    free(block);
    free(translate);
    char *interp = source("interp/internal.h");
    block = between(interp, "#define INTERP_CFA_OPCODES(X)", "\nenum");
    got = x_macro(block, "interp/internal.h");
    assert_same("interp/internal.h INTERP_CFA_OPCODES", &got, &want);
    free(block);
    free(interp);
}
END_TEST

/* The generator writes gas directives and .cfi_escape: gas picks the
 * advance forms itself from the code sizes, cannot write set_loc's
 * target in an escape, never emits MIPS_advance_loc8; GNU_window_save is
 * only injected as an error, outside GEN_CFA_OPS; AArch64's three
 * (0x2d by its AArch64 name) are GEN_A64_OPS, for --arch aarch64. */
START_TEST(test_generator)
{
    char *gen = source("gen/internal.h");
    char *block = between(gen, "#define GEN_CFA_OPS(X)", "\nenum");
    struct set got = x_macro(block, "gen/internal.h");
    static const char *const without[] = {
        "set_loc", "advance_loc", "advance_loc1", "advance_loc2",
        "advance_loc4", "MIPS_advance_loc8", "GNU_window_save",
        "AARCH64_set_ra_state", "AARCH64_negate_ra_state_with_pc", NULL};
    struct set want = expected(without, NULL);
    assert_same("gen/internal.h GEN_CFA_OPS", &got, &want);
    ck_assert_msg(strstr(gen, "GEN_CFA_GNU_window_save = 0x2d") != NULL,
                  "gen/internal.h: no injected GNU_window_save");
    char *a64 = between(gen, "#define GEN_A64_OPS(X)", "\nenum");
    static const char *const a64_ops[] = {
        "X(AARCH64_negate_ra_state, 0x2d", "X(AARCH64_set_ra_state, 0x2b",
        "X(AARCH64_negate_ra_state_with_pc, 0x2c"};
    for (size_t i = 0; i < sizeof a64_ops / sizeof a64_ops[0]; i++)
        ck_assert_msg(strstr(a64, a64_ops[i]) != NULL,
                      "gen/internal.h GEN_A64_OPS lacks %s", a64_ops[i]);
    free(a64);
    free(block);
    free(gen);
}
END_TEST

/* The adapters decode as their libraries do: what a library has no case
 * for is left out (libdwarf 20210528 stops at
 * GNU_negative_offset_extended, and at AArch64's 0x2b and 0x2c;
 * libunwind 1.6.2 has no val_offset, val_offset_sf, nor 0x2b and 0x2c:
 * diff/findings), and what it stops at is named too. */
START_TEST(test_adapter_scanners)
{
    char *text = source("engines/oracle_libdwarf.c");
    char *block = between(text, "static bool scan_operands(", "\n}\n");
    struct set got = {{false}};
    case_labels(block, &got, "engines/oracle_libdwarf.c");
    free(block);
    block = between(text, "static bool scan_program(", "\n}\n");
    /* The high-bit three: offset reads a LEB, advance_loc and restore
     * (no operand) fall through the same test. */
    ck_assert(strstr(block, "DW_CFA_offset") && strstr(block, "DW_CFA_extended"));
    got.has[0x40] = got.has[0x80] = got.has[0xc0] = true;
    static const char *const libdwarf_lacks[] = {
        "GNU_negative_offset_extended", "AARCH64_set_ra_state",
        "AARCH64_negate_ra_state_with_pc", NULL};
    struct set want = expected(libdwarf_lacks, NULL);
    want.has[0x34] = true; /* METAWARE_info, which libdwarf reads */
    assert_same("engines/oracle_libdwarf.c's scanner", &got, &want);
    free(block);
    free(text);

    text = source("engines/oracle_libunwind.c");
    block = between(text, "static bool scan_operands(", "\n}\n");
    got = (struct set){{false}};
    case_labels(block, &got, "engines/oracle_libunwind.c");
    ck_assert(strstr(block, "nop, remember/restore_state"));
    got.has[0x00] = got.has[0x0a] = got.has[0x0b] = true; /* its default */
    free(block);
    block = between(text, "static void scan_program(", "\n}\n");
    case_labels(block, &got, "engines/oracle_libunwind.c");
    static const char *const libunwind_lacks[] = {
        "val_offset", "val_offset_sf", "AARCH64_set_ra_state",
        "AARCH64_negate_ra_state_with_pc", NULL};
    want = expected(libunwind_lacks, NULL);
    want.has[0x1c] = want.has[0x3f] = true; /* lo_user, hi_user: it stops */
    assert_same("engines/oracle_libunwind.c's scanner", &got, &want);
    free(block);
    free(text);
}
END_TEST

/* cfa_NAME="\xNN" entries; the high-bit three appear with an operand in
 * their low bits (cfa_advance_loc_1="\x41", cfa_offset_rbp="\x86"). */
START_TEST(test_fuzz_dictionary)
{
    char *text = source("fuzz/cfi.dict");
    struct set got = {{false}};
    for (const char *line = text; line; line = strchr(line, '\n')) {
        line += *line == '\n';
        char name[64];
        unsigned byte;
        if (sscanf(line, "cfa_%63[A-Za-z0-9_]=\"\\x%2x\"", name, &byte) != 2)
            continue;
        unsigned number = number_of(name);
        if (number == 256 && byte >= 0x40)
            number = byte & 0xc0;
        ck_assert_msg(number < 256, "fuzz/cfi.dict: cfa_%s is no opcode",
                      name);
        ck_assert_msg(number >= 0x40 ? (byte & 0xc0) == number : byte == number,
                      "fuzz/cfi.dict: cfa_%s is 0x%02x", name, byte);
        got.has[number] = true;
    }
    struct set want = expected(NULL, NULL);
    assert_same("fuzz/cfi.dict", &got, &want);
    free(text);
}
END_TEST

/* The checks can fail: a table with one opcode missing is caught. */
START_TEST(test_a_missing_opcode_is_caught)
{
    struct set want = expected(NULL, NULL);
    struct set got = want;
    got.has[0x14] = false;
    ck_assert(want.has[0x14]);
    bool differs = false;
    for (unsigned n = 0; n < 256; n++)
        differs |= got.has[n] != want.has[n];
    ck_assert(differs);
    char *sem = source("semantics/sem.h");
    char *block = between(sem, "#define SEM_CFA_OPCODES(X)", "\nenum");
    char *cut = strstr(block, "X(val_offset,");
    ck_assert_ptr_nonnull(cut);
    cut[0] = 'Y';
    struct set parsed = x_macro(block, "a copy of semantics/sem.h");
    ck_assert(!parsed.has[0x14]);
    free(block);
    free(sem);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("opcode_tables");
    TCase *tc = tcase_create("tables");
    tcase_add_test(tc, test_semantics_and_interp);
    tcase_add_test(tc, test_generator);
    tcase_add_test(tc, test_adapter_scanners);
    tcase_add_test(tc, test_fuzz_dictionary);
    tcase_add_test(tc, test_a_missing_opcode_is_caught);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
