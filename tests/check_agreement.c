/* SPDX-License-Identifier: MIT */
/* check_agreement.c — the direct interpreter and the IL evaluator give
 * identical results: on every case of corpus/cases and on every row of
 * libc.so.6, ld-linux-x86-64.so.2 and libstdc++.so.6 (each row's first and
 * last address), with several register states and memories each.
 *
 * When they differ one of them is wrong: the failure message gives the
 * file, the PC, the state and both answers, to be settled against DWARF 5
 * §6.4 and cfi.h. */
#include <check.h>
#include <dirent.h>
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

int main(void)
{
    Suite *suite = suite_create("agreement");
    TCase *tc = tcase_create("interp_vs_il");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_cases);
    tcase_add_test(tc, test_libc);
    tcase_add_test(tc, test_ld_so);
    tcase_add_test(tc, test_libstdcxx);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
