/* SPDX-License-Identifier: MIT */
/* check_agreement.c — the direct interpreter and the IL evaluator give
 * identical results: on every case of corpus/cases and on every row of
 * libc.so.6, ld-linux-x86-64.so.2 and libstdc++.so.6 (each row's first and
 * last address), with several register states and memories each; and on
 * AArch64, every row of the cross libc.so.6 and of libraries built here
 * whose return addresses are signed (every opcode of aadwarf64). On
 * x86-64 the IL evaluator also answers with only the last FDE's IL kept
 * (sem_unwind_memo, the il engine's way), FDE after FDE: the same.
 *
 * When they differ one of them is wrong: the failure message gives the
 * file, the PC, the state and both answers, to be settled against DWARF 5
 * §6.4 and cfi.h. */
#include <check.h>
#include <dirent.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/engines.h"
#include "interp/interp.h"
#include "semantics/sem.h"
#include "support.h"

enum { STATES = 4 };

/* State k of a seed: every register 0-16 known with a random value, rsp
 * and rbp in a plausible stack; state 3 knows only rsp, rbp and rip, so
 * that rules reading other registers meet unknown values. */
static void make_state(uint64_t seed, unsigned k, uint64_t rip,
                       struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        if (k != 3 || reg == CFI_REG_RSP || reg == CFI_REG_RBP)
            cfi_regs_set(regs, reg, engine_mix(seed ^ (k * 131 + reg)));
    uint64_t rsp = 0x7ffe00000000ull + (engine_mix(seed + k) & 0xffff0ull);
    cfi_regs_set(regs, CFI_REG_RSP, rsp);
    cfi_regs_set(regs, CFI_REG_RBP, rsp + (engine_mix(seed - k) & 0xff0));
    cfi_regs_set(regs, CFI_REG_RIP, rip);
}

/* Agreement as the harness defines it (engine_frames_agree). */
static bool same_frame(const struct cfi_frame *a, const struct cfi_frame *b)
{
    return engine_frames_agree(a, b);
}

static void describe(char *out, size_t size, const struct cfi_frame *f)
{
    if (f->status != CFI_OK) {
        snprintf(out, size, "%s (%s, reg %d)", cfi_status_name(f->status),
                 f->diag.message ? f->diag.message : "", f->diag.reg);
        return;
    }
    int n = snprintf(out, size, "cfa=0x%" PRIx64, f->cfa);
    for (unsigned reg = 0; reg < CFI_NGPRS && n > 0 && (size_t)n < size; reg++)
        n += snprintf(out + n, size - (size_t)n, " %u:%d:%" PRIx64, reg,
                      f->caller.status[reg], f->caller.value[reg]);
}

struct tally {
    size_t compared;
    size_t ok;        /* both unwound */
    size_t errors;    /* both gave the same error */
    struct sem_memo *memo; /* the il engine's way: the last FDE's IL kept */
};

/* Compares the engines at one PC on STATES states; fails at the first
 * difference. */
static void compare_at(const struct cfi_file *file,
                       const struct sem_file_il *il, uint64_t pc,
                       bool caller, uint64_t seed, struct tally *tally)
{
    struct cfi_frame *a = calloc(2, sizeof *a), *b = a + 1;
    for (unsigned k = 0; k < STATES; k++) {
        struct engine_memory *memory = engine_memory_new(true, seed + k);
        engine_memory_map_file(memory, file);
        struct cfi_regs callee;
        make_state(seed ^ pc, k, pc, &callee);
        struct cfi_request request = {pc, caller, &callee,
                                      engine_memory_reader(memory), 0};
        interp_unwind(file, &request, a);
        sem_unwind(il, &request, b);
        struct cfi_frame kept = {0};
        sem_unwind_memo(file, &request, &kept, tally->memo);
        ck_assert_msg(same_frame(&kept, b) &&
                      (b->status == CFI_OK ||
                       kept.diag.offset == b->diag.offset),
                      "%s: pc 0x%" PRIx64 " state %u: sem_unwind_memo is not"
                      " sem_unwind", file->path, pc, k);
        if (!same_frame(a, b)) {
            char ta[1024], tb[1024];
            describe(ta, sizeof ta, a);
            describe(tb, sizeof tb, b);
            ck_abort_msg("%s: pc 0x%" PRIx64 "%s state %u seed %" PRIu64
                         ":\n interp: %s\n il:     %s", file->path, pc,
                         caller ? " (caller)" : "", k, seed, ta, tb);
        }
        tally->compared++;
        tally->ok += a->status == CFI_OK;
        tally->errors += a->status != CFI_OK;
        engine_memory_free(memory);
    }
    free(a);
}

/* Each range's first address as an innermost frame, and its last address
 * as the lookup PC of a caller frame (PC = last + 1). */
static void compare_file(const char *path, struct tally *tally)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &file, &diag) == CFI_OK, "%s: %s",
                  path, diag.message);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    tally->memo = sem_memo_new();
    ck_assert_ptr_nonnull(tally->memo);
    for (size_t i = 0; i < file->nfdes; i++) {
        if (il->status[i] != CFI_OK) {
            compare_at(file, il, file->fdes[i].pc_begin, false, i, tally);
            continue;
        }
        const struct sem_fde_il *fde = &il->fdes[i];
        for (size_t r = 0; r < fde->nranges; r++) {
            compare_at(file, il, fde->ranges[r].begin, false, i * 7 + r, tally);
            compare_at(file, il, fde->ranges[r].end, true, i * 7 + r, tally);
        }
    }
    /* Gaps and outside: both must say "no FDE". */
    compare_at(file, il, 0, false, 1, tally);
    compare_at(file, il, UINT64_MAX, false, 2, tally);
    sem_memo_free(tally->memo);
    sem_file_il_free(il);
    cfi_file_close(file);
}

static void compare_system_lib(const char *name)
{
    char *path = test_system_lib(name);
    ck_assert_msg(path != NULL, "%s not found", name);
    struct tally tally = {0};
    compare_file(path, &tally);
    printf("agreement: %s: %zu comparisons (%zu unwound, %zu errors)\n",
           name, tally.compared, tally.ok, tally.errors);
    ck_assert_uint_gt(tally.ok, 1000);
    free(path);
}

START_TEST(test_libc)
{
    compare_system_lib("libc.so.6");
}
END_TEST

START_TEST(test_ld_so)
{
    compare_system_lib("ld-linux-x86-64.so.2");
}
END_TEST

START_TEST(test_libstdcxx)
{
    compare_system_lib("libstdc++.so.6");
}
END_TEST

START_TEST(test_cases)
{
    char *dir_path = test_build_path("corpus/cases");
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "no built cases in %s", dir_path);
    size_t files = 0;
    struct tally tally = {0};
    for (struct dirent *entry; (entry = readdir(dir));) {
        size_t len = strlen(entry->d_name);
        if (len < 4 || strcmp(entry->d_name + len - 3, ".so"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir_path, entry->d_name);
        compare_file(path, &tally);
        files++;
    }
    closedir(dir);
    printf("agreement: %zu cases: %zu comparisons (%zu unwound, %zu errors)\n",
           files, tally.compared, tally.ok, tally.errors);
    ck_assert_uint_ge(files, 10);
    free(dir_path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* AArch64                                                              */
/* ------------------------------------------------------------------ */

/* Any read succeeds: the 8 bytes at a are a × the golden ratio constant
 * (a narrower read, their low bytes). Saved registers and signed return
 * addresses then hold bits everywhere, bit 55 and the code's included. */
static enum cfi_status pattern_read(void *env, uint64_t addr, unsigned size,
                                    uint64_t *value)
{
    (void)env;
    uint64_t word = addr * 0x9e3779b97f4a7c15ull;
    *value = size >= 8 ? word : word & ((1ull << (8 * size)) - 1);
    return CFI_OK;
}

/* State 0: x0-x30, sp, pc, ELR_mode and RA_SIGN_STATE all values (r
 * holds 0x1000 × (r + 1), sp 0x40000008). State 1: only sp, x29, x30 and
 * the PC, RA_SIGN_STATE 1, so that rules reading others meet unknowns. */
static void make_a64_state(unsigned k, uint64_t pc, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < cfi_arch_aarch64.nreported; reg++)
        if (k == 0 || reg == 29 || reg == 30)
            cfi_regs_set(regs, reg, 0x1000ull * (reg + 1));
    cfi_regs_set(regs, 31, 0x40000008ull);
    cfi_regs_set(regs, 32, pc);
    cfi_regs_set(regs, 34, k == 0 ? 0 : 1);
}

/* Stricter than the harness: ra_b_key, and where an error of the
 * programs is (diag.offset) count too. */
static bool same_a64_frame(const struct cfi_frame *a, const struct cfi_frame *b)
{
    if (!same_frame(a, b) || a->signal_frame != b->signal_frame ||
        a->ra_b_key != b->ra_b_key)
        return false;
    return a->status == CFI_OK || a->diag.offset == b->diag.offset;
}

/* The kept row (interp_decode_row, interp_apply_row) gives what the
 * whole interpreter gave, on the registers it writes. */
static bool kept_agrees(const struct cfi_file *file,
                        const struct cfi_request *request,
                        const struct cfi_frame *whole,
                        struct cfi_frame *kept)
{
    uint64_t lookup_pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const struct cfi_fde *fde = cfi_file_lookup(file, lookup_pc);
    if (!fde)
        return whole->status == CFI_E_NO_FDE;
    struct interp_decoded_row row;
    struct cfi_diag diag;
    enum cfi_status status = interp_decode_row(fde, lookup_pc, &row, &diag);
    if (status == CFI_E_UNSUPPORTED &&
        !strcmp(diag.message, "row too large to keep"))
        return true;
    if (status != CFI_OK)
        return status == whole->status && diag.offset == whole->diag.offset;
    interp_apply_row(&row, request, kept);
    if (kept->status != whole->status || kept->ra_b_key != whole->ra_b_key ||
        kept->signal_frame != whole->signal_frame)
        return false;
    if (kept->status != CFI_OK)
        return true;
    if (kept->cfa != whole->cfa)
        return false;
    for (unsigned reg = 0; reg < cfi_arch_aarch64.ndefaults; reg++)
        if (kept->caller.status[reg] != whole->caller.status[reg] ||
            kept->caller.value[reg] != whole->caller.value[reg])
            return false;
    return true;
}

struct a64_tally {
    size_t fdes, lookups, compared, ok, errors, signed_ra, b_key;
};

/* Both engines, and the kept row, at one PC, in both states. */
static void compare_a64_at(const struct cfi_file *file,
                           const struct sem_file_il *il, uint64_t pc,
                           bool caller, struct a64_tally *tally)
{
    struct cfi_frame *a = calloc(3, sizeof *a), *b = a + 1, *c = a + 2;
    for (unsigned k = 0; k < 2; k++) {
        struct cfi_regs callee;
        make_a64_state(k, pc, &callee);
        struct cfi_request request = {pc, caller, &callee,
                                      {pattern_read, NULL}, 0};
        interp_unwind(file, &request, a);
        sem_unwind(il, &request, b);
        if (!same_a64_frame(a, b)) {
            char ta[1024], tb[1024];
            describe(ta, sizeof ta, a);
            describe(tb, sizeof tb, b);
            ck_abort_msg("%s: pc 0x%" PRIx64 "%s state %u:\n interp: %s "
                         "(offset 0x%" PRIx64 ", r32 %d:%" PRIx64 ", r34 %d:%"
                         PRIx64 ", b %d)\n il:     %s (offset 0x%" PRIx64
                         ", r32 %d:%" PRIx64 ", r34 %d:%" PRIx64 ", b %d)",
                         file->path, pc, caller ? " (caller)" : "", k, ta,
                         a->diag.offset, a->caller.status[32],
                         a->caller.value[32], a->caller.status[34],
                         a->caller.value[34], a->ra_b_key, tb,
                         b->diag.offset, b->caller.status[32],
                         b->caller.value[32], b->caller.status[34],
                         b->caller.value[34], b->ra_b_key);
        }
        ck_assert_msg(kept_agrees(file, &request, a, c),
                      "%s: pc 0x%" PRIx64 "%s state %u: the kept row "
                      "differs", file->path, pc, caller ? " (caller)" : "",
                      k);
        tally->compared++;
        tally->ok += a->status == CFI_OK;
        tally->errors += a->status != CFI_OK;
        tally->signed_ra += a->status == CFI_OK &&
                            a->caller.status[34] == CFI_REG_VALUE &&
                            a->caller.value[34] != 0;
        tally->b_key += a->status == CFI_OK && a->ra_b_key;
    }
    free(a);
}

/* A lookup address as the innermost frame's PC and as a caller's (the
 * return address after it). */
static void compare_a64_lookup(const struct cfi_file *file,
                               const struct sem_file_il *il, uint64_t lookup,
                               struct a64_tally *tally)
{
    compare_a64_at(file, il, lookup, false, tally);
    compare_a64_at(file, il, lookup + 1, true, tally);
    tally->lookups++;
}

/* Every FDE; of each, every row's first and last address. */
static void compare_a64_file(const char *path, struct a64_tally *tally)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &file, &diag) == CFI_OK, "%s: %s",
                  path, diag.message);
    ck_assert_ptr_eq(file->arch, &cfi_arch_aarch64);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    for (size_t i = 0; i < file->nfdes; i++) {
        tally->fdes++;
        if (il->status[i] != CFI_OK) {
            compare_a64_lookup(file, il, file->fdes[i].pc_begin, tally);
            continue;
        }
        const struct sem_fde_il *fde = &il->fdes[i];
        for (size_t r = 0; r < fde->nranges; r++) {
            compare_a64_lookup(file, il, fde->ranges[r].begin, tally);
            if (fde->ranges[r].end - 1 != fde->ranges[r].begin)
                compare_a64_lookup(file, il, fde->ranges[r].end - 1, tally);
        }
    }
    sem_file_il_free(il);
    cfi_file_close(file);
}

static void print_a64_tally(const char *what, const struct a64_tally *t)
{
    printf("agreement: aarch64 %s: %zu FDEs, %zu addresses, %zu "
           "comparisons (%zu unwound, %zu errors, %zu signed, %zu B key), "
           "0 disagreements\n", what, t->fdes, t->lookups, t->compared,
           t->ok, t->errors, t->signed_ra, t->b_key);
}

START_TEST(test_aarch64_libc)
{
    const char *path = "/usr/aarch64-linux-gnu/lib/libc.so.6";
    ck_assert_msg(access(path, R_OK) == 0,
                  "%s not found (gcc-aarch64-linux-gnu: make deps)", path);
    struct a64_tally tally = {0};
    compare_a64_file(path, &tally);
    print_a64_tally("libc.so.6", &tally);
    ck_assert_uint_gt(tally.ok, 1000);
}
END_TEST

/* Functions whose frames GCC signs (-mbranch-protection): leaf, calls,
 * several exits (remember_state around the epilogue), a large frame. */
static const char signed_c[] =
    "extern int ext(int);\n"
    "int leaf(int x) { return x * 3; }\n"
    "int calls(int x) { return ext(x) + ext(x + 1); }\n"
    "int exits(int x) {\n"
    "    if (x < 0) return ext(-x);\n"
    "    int r = ext(x);\n"
    "    if (r == 3) return 7;\n"
    "    return r + ext(r);\n"
    "}\n"
    "int big(int x) {\n"
    "    volatile int buf[300];\n"
    "    for (int i = 0; i < 300; i++) buf[i] = ext(i + x);\n"
    "    return buf[x & 255];\n"
    "}\n"
    "int vla(int n) { volatile char a[n + 1]; a[0] = 1; "
    "return ext(a[n / 2]); }\n";

/* Each vendor opcode by hand (.cfi_escape), each state, and the states
 * across remember_state and restore_state; in .debug_frame, since ld
 * reads .eh_frame's programs and stops at 0x2b and 0x2c. */
static const char signed_s[] =
    "\t.cfi_sections .debug_frame\n\t.text\n"
    "\t.globl with_pc\n\t.type with_pc, %function\n"
    "with_pc:\n\t.cfi_startproc\n"
    "\t.cfi_escape 0x2c\n\tnop\n"
    "\tstp x29, x30, [sp, -16]!\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset 29, -16\n\t.cfi_offset 30, -8\n"
    "\t.cfi_remember_state\n"
    "\tldp x29, x30, [sp], 16\n\t.cfi_restore 30\n\t.cfi_restore 29\n"
    "\t.cfi_def_cfa_offset 0\n"
    "\t.cfi_escape 0x2c\n\tret\n"
    "\t.cfi_restore_state\n\tnop\n\tret\n"
    "\t.cfi_endproc\n"
    "\t.globl set_state\n\t.type set_state, %function\n"
    "set_state:\n\t.cfi_startproc\n"
    "\t.cfi_escape 0x2b, 1, 0\n\tnop\n"
    "\tstr x30, [sp, -16]!\n\t.cfi_def_cfa_offset 16\n"
    "\t.cfi_offset 30, -16\n\tnop\n"
    "\t.cfi_escape 0x2b, 2, 0x7f\n\tnop\n"
    "\t.cfi_escape 0x2b, 0, 0\n\tnop\n"
    "\t.cfi_negate_ra_state\n\tnop\n"
    "\t.cfi_escape 0x16, 34, 1, 0x32\n\tnop\n"
    "\t.cfi_escape 0x2c\n\tnop\n\tret\n"
    "\t.cfi_endproc\n"
    "\t.globl bad_negate\n\t.type bad_negate, %function\n"
    "bad_negate:\n\t.cfi_startproc\n"
    "\t.cfi_escape 0x2c\n\tnop\n\t.cfi_negate_ra_state\n\tret\n"
    "\t.cfi_endproc\n"
    "\t.globl reserved\n\t.type reserved, %function\n"
    "reserved:\n\t.cfi_startproc\n"
    "\tnop\n\t.cfi_escape 0x2b, 3, 0\n\tret\n"
    "\t.cfi_endproc\n";

/* Builds `so` from the sources above with the cross compiler, GCC
 * signing with `branch_protection`. */
static void build_signed_library(const char *dir, const char *so,
                                 const char *branch_protection)
{
    char c_path[4096], s_path[4096], command[16384];
    snprintf(c_path, sizeof c_path, "%s/signed.c", dir);
    snprintf(s_path, sizeof s_path, "%s/vendor.s", dir);
    ck_assert_int_eq(test_write_file(c_path, signed_c, strlen(signed_c)), 0);
    ck_assert_int_eq(test_write_file(s_path, signed_s, strlen(signed_s)), 0);
    snprintf(command, sizeof command,
             "aarch64-linux-gnu-gcc -O2 -fPIC -shared -nostdlib "
             "-mbranch-protection=%s -o %s %s %s", branch_protection, so,
             c_path, s_path);
    ck_assert_msg(system(command) == 0, "%s failed", command);
}

START_TEST(test_aarch64_signed)
{
    static const char *const protections[] = {"pac-ret", "pac-ret+b-key"};
    char *dir = test_temp_dir();
    struct a64_tally total = {0};
    for (size_t i = 0; i < 2; i++) {
        char so[4096];
        snprintf(so, sizeof so, "%s/signed%zu.so", dir, i);
        build_signed_library(dir, so, protections[i]);
        struct a64_tally tally = {0};
        compare_a64_file(so, &tally);
        print_a64_tally(protections[i], &tally);
        ck_assert_uint_gt(tally.signed_ra, 10);
        ck_assert_uint_gt(tally.errors, 0);
        if (i == 1)
            ck_assert_uint_gt(tally.b_key, 10);
        else
            ck_assert_uint_eq(tally.b_key, 0);
        total.compared += tally.compared;
    }
    ck_assert_uint_gt(total.compared, 100);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("agreement");
    TCase *tc = tcase_create("interp_vs_il");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_cases);
    tcase_add_test(tc, test_libc);
    tcase_add_test(tc, test_ld_so);
    tcase_add_test(tc, test_libstdcxx);
    tcase_add_test(tc, test_aarch64_libc);
    tcase_add_test(tc, test_aarch64_signed);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
