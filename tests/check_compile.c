/* SPDX-License-Identifier: MIT */
/* check_compile.c — compile/: the eh_elf generator, its builds, its
 * loader and the engine that runs eh_elfs.
 *
 * The reference is the IL evaluator (sem_unwind, sem_eval_row): a
 * compiled eh_elf must give the same status, CFA, signal flag and
 * registers 0-16 (status and value), and the same register for
 * reg_unknown, on
 *   - every case of corpus/cases, every row's first and last address,
 *     innermost and caller frames, with several register states and
 *     memories (one with faults, one with unknown and undefined
 *     registers);
 *   - every row of libc.so.6, ld-linux-x86-64.so.2 and libstdc++.so.6,
 *     and "no FDE" between and around their FDEs;
 *   - hand-made rows covering every DW_OP family, branches, loops, the
 *     step limit, stack overflow and underflow, division by zero,
 *     faulting reads, unknown and undefined registers, every rule kind.
 * The eh_elfs of the cases and libraries are built once per `make check`
 * by the Makefile (both ABIs, $CFISEM_EH_ELF/NAME.ABI.eh_elf.so, and the
 * table layout of the full ABI, NAME.table.eh_elf.so); the
 * hand-made ones are built here. Also: v1 eh_elfs against the evaluator
 * on the rows reduced to what v1 carries; the generated C compiles with
 * -Wall -Wextra -Werror and is the same byte for byte twice; loading
 * errors; the compile command line. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi/sha256.h"
#include "compile/cg.h"
#include "engines/engines.h"
#include "diff/json.h"
#include "semantics/sem.h"
#include "support.h"

enum { STATES = 4 };

/* ------------------------------------------------------------------ */
/* States, memories, comparison                                          */
/* ------------------------------------------------------------------ */

/* The stack of state 3, where reads from rsp+0x18 up fault. */
#define FAULT_RSP 0x7ffe00100000ull

/* State k: 0 and 1 every register 0-20 known with random values, rsp
 * and rbp in a plausible stack; 2 rsp, rbp and rip known, every third
 * other register undefined, the rest unknown; 3 as 0 with rsp at
 * FAULT_RSP, where memory faults. */
static void make_state(uint64_t seed, unsigned k, uint64_t rip,
                       struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < 21; reg++) {
        if (k != 2)
            cfi_regs_set(regs, reg, engine_mix(seed ^ (k * 131 + reg)));
        else if (reg % 3 == 0)
            regs->status[reg] = CFI_REG_UNDEFINED;
    }
    uint64_t rsp = k == 3 ? FAULT_RSP
                          : 0x7ffe00000000ull + (engine_mix(seed + k) & 0xffff0ull);
    cfi_regs_set(regs, CFI_REG_RSP, rsp);
    cfi_regs_set(regs, CFI_REG_RBP, rsp + (engine_mix(seed - k) & 0xff0));
    cfi_regs_set(regs, CFI_REG_RIP, rip);
}

/* The same states on another architecture (AArch64): every register
 * with an ABI default known (0 .. ndefaults-1: x0-x30, sp, pc,
 * elr_mode, ra_sign_state, v8-v15 and the rest) with random values,
 * x30 among them (a signed return address: its high bits are set), the
 * stack and frame pointers in a plausible stack, the PC the PC; state 2
 * with every third undefined, the rest unknown. */
static void make_state_arch(const struct cfi_arch *arch, uint64_t seed,
                            unsigned k, uint64_t pc, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < arch->ndefaults; reg++) {
        if (k != 2)
            cfi_regs_set(regs, reg, engine_mix(seed ^ (k * 131 + reg)));
        else if (reg % 3 == 0)
            regs->status[reg] = CFI_REG_UNDEFINED;
    }
    uint64_t sp = k == 3 ? FAULT_RSP
                         : 0x7ffe00000000ull + (engine_mix(seed + k) & 0xffff0ull);
    cfi_regs_set(regs, arch->sp, sp);
    cfi_regs_set(regs, arch->fp, sp + (engine_mix(seed - k) & 0xff0));
    cfi_regs_set(regs, arch->pc, pc);
}

/* The virtual-address bits state k asks the PAC strip for (0: the
 * default, 48). */
static unsigned state_va_bits(unsigned k)
{
    static const unsigned bits[] = {0, 39, 52, 48};
    return bits[k % 4];
}

struct memories {
    struct engine_memory *state[STATES];
};

static void memories_open(struct memories *m, const struct cfi_file *file)
{
    for (unsigned k = 0; k < STATES; k++) {
        m->state[k] = engine_memory_new(true, 0x5eed + k);
        ck_assert_ptr_nonnull(m->state[k]);
        if (file)
            ck_assert_int_eq(engine_memory_map_file(m->state[k], file), CFI_OK);
    }
    ck_assert_int_eq(engine_memory_add_fault(m->state[3], FAULT_RSP + 0x18,
                                             FAULT_RSP + 0x10000), CFI_OK);
}

static void memories_close(struct memories *m)
{
    for (unsigned k = 0; k < STATES; k++)
        engine_memory_free(m->state[k]);
}

/* Agreement as the harness defines it for the compiled engine, which
 * reports the architecture's registers (x86-64: 0-16, AArch64: 0-34;
 * engine_answer_agrees), and for an error of the instructions the same
 * section offset too. (eh_elf.h's error_offset is that one only: where
 * an expression fails inside it is not reported.) A frame also carries
 * the CIE's 'B' (AArch64). */
static bool same_frame(const struct cfi_arch *arch, const struct cfi_frame *a,
                       const struct cfi_frame *b)
{
    struct engine_answer *answer = malloc(sizeof *answer);
    ck_assert_ptr_nonnull(answer);
    engine_answer_reset(answer);
    answer->frame = *b;
    for (unsigned reg = arch->nreported; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
    bool agree = engine_answer_agrees(a, answer) &&
                 (a->status == CFI_OK || cfi_diag_in_expression(&a->diag) ||
                  a->diag.offset == b->diag.offset) &&
                 (a->status != CFI_OK || arch == &cfi_arch_x86_64 ||
                  a->ra_b_key == b->ra_b_key);
    free(answer);
    return agree;
}

static void describe(char *out, size_t size, const struct cfi_arch *arch,
                     const struct cfi_frame *f)
{
    if (f->status != CFI_OK) {
        snprintf(out, size, "%s (%s, reg %d, offset 0x%" PRIx64 ")",
                 cfi_status_name(f->status),
                 f->diag.message ? f->diag.message : "", f->diag.reg,
                 f->diag.offset);
        return;
    }
    int n = snprintf(out, size, "cfa=0x%" PRIx64 " sf=%d bkey=%d", f->cfa,
                     f->signal_frame, f->ra_b_key);
    for (unsigned reg = 0;
         reg < arch->nreported && n > 0 && (size_t)n < size; reg++)
        n += snprintf(out + n, size - (size_t)n, " %u:%d:%" PRIx64, reg,
                      f->caller.status[reg], f->caller.value[reg]);
}

struct tally {
    size_t compared, ok, errors, no_fde;
    size_t fdes;              /* FDEs of the files compared */
    double compiled_seconds;  /* in cg_unwind */
};

static void count(struct tally *tally, const struct cfi_frame *frame)
{
    tally->compared++;
    tally->ok += frame->status == CFI_OK;
    tally->errors += frame->status != CFI_OK;
    tally->no_fde += frame->status == CFI_E_NO_FDE;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* sem_unwind and the eh_elf at one PC, on every state. */
static void compare_at(const struct cg_eh_elf *eh, const struct sem_file_il *il,
                       const struct memories *m, uint64_t pc, bool caller,
                       struct tally *tally)
{
    struct cfi_frame *a = calloc(2, sizeof *a), *b = a + 1;
    const struct cfi_arch *arch = il->file->arch;
    bool x86 = arch == &cfi_arch_x86_64;
    for (unsigned k = 0; k < STATES; k++) {
        struct cfi_regs callee;
        if (x86)
            make_state(pc * 7919, k, pc, &callee);
        else
            make_state_arch(arch, pc * 7919, k, pc, &callee);
        struct cfi_request request = {pc, caller, &callee,
                                      engine_memory_reader(m->state[k]),
                                      x86 ? 0 : state_va_bits(k)};
        sem_unwind(il, &request, a);
        double start = now_seconds();
        cg_unwind(eh, &request, b);
        tally->compiled_seconds += now_seconds() - start;
        if (!same_frame(arch, a, b)) {
            char ta[2048], tb[2048];
            describe(ta, sizeof ta, arch, a);
            describe(tb, sizeof tb, arch, b);
            ck_abort_msg("%s: pc 0x%" PRIx64 "%s state %u:\n il:       %s\n"
                         " compiled: %s", il->file->path ? il->file->path : "",
                         pc, caller ? " (caller)" : "", k, ta, tb);
        }
        count(tally, a);
    }
    free(a);
}

/* ------------------------------------------------------------------ */
/* Files with a prebuilt eh_elf                                          */
/* ------------------------------------------------------------------ */

/* $CFISEM_EH_ELF/NAME.ABI.eh_elf.so, malloc'd. */
static char *eh_elf_path(const char *name, const char *abi)
{
    const char *dir = getenv("CFISEM_EH_ELF");
    ck_assert_msg(dir != NULL, "CFISEM_EH_ELF is not set (run through make)");
    size_t n = strlen(dir) + strlen(name) + strlen(abi) + 32;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s.%s.eh_elf.so", dir, name, abi);
    return path;
}

static struct cg_eh_elf *load(const char *path)
{
    struct cg_eh_elf *eh = NULL;
    struct cfi_diag diag = {0};
    enum cfi_status status = cg_load(path, &eh, &diag);
    ck_assert_msg(status == CFI_OK, "%s: %s", path, diag.message);
    return eh;
}

/* Addresses around every FDE where a neighbour's row must not leak: its
 * end, the byte before its start, and both ends of the address space. */
static void compare_gaps(const struct cg_eh_elf *eh,
                         const struct sem_file_il *il,
                         const struct memories *m, struct tally *tally)
{
    const struct cfi_file *file = il->file;
    for (size_t i = 0; i < file->nfdes; i++) {
        compare_at(eh, il, m, file->fdes[i].pc_end, false, tally);
        if (file->fdes[i].pc_begin > 0)
            compare_at(eh, il, m, file->fdes[i].pc_begin - 1, false, tally);
    }
    compare_at(eh, il, m, 0, false, tally);
    compare_at(eh, il, m, UINT64_MAX, false, tally);
    compare_at(eh, il, m, UINT64_MAX, true, tally);
}

/* The file at `path`, opened, and its IL. */
static struct sem_file_il *il_of(const char *path, struct cfi_file **file)
{
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, file, &diag) == CFI_OK, "%s: %s", path,
                  diag.message);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(*file, &il), CFI_OK);
    return il;
}

/* Each range's first address (innermost) and last address (as a caller
 * frame: PC = end, looked up at end-1); an FDE that failed to translate
 * at its start. On AArch64 also the first address as a caller frame and
 * the last one as the innermost frame: every row start and end-1, both
 * kinds of frame. */
static void compare_file(const char *path, const char *eh_path,
                         struct tally *tally)
{
    struct cfi_file *file;
    struct sem_file_il *il = il_of(path, &file);
    struct cg_eh_elf *eh = load(eh_path);
    ck_assert_int_eq(cg_eh_elf_abi(eh), CG_ABI_FULL);
    struct memories m;
    memories_open(&m, file);
    tally->fdes += file->nfdes;
    for (size_t i = 0; i < file->nfdes; i++) {
        if (il->status[i] != CFI_OK) {
            compare_at(eh, il, &m, file->fdes[i].pc_begin, false, tally);
            continue;
        }
        const struct sem_fde_il *fde = &il->fdes[i];
        for (size_t r = 0; r < fde->nranges; r++) {
            compare_at(eh, il, &m, fde->ranges[r].begin, false, tally);
            compare_at(eh, il, &m, fde->ranges[r].end, true, tally);
            if (file->arch == &cfi_arch_x86_64)
                continue;
            compare_at(eh, il, &m, fde->ranges[r].begin, true, tally);
            compare_at(eh, il, &m, fde->ranges[r].end - 1, false, tally);
        }
    }
    compare_gaps(eh, il, &m, tally);
    memories_close(&m);
    cg_unload(eh);
    sem_file_il_free(il);
    cfi_file_close(file);
}

/* flavour: "full" (the tree layout) or "table" (--layout table). */
static void compare_system_lib(const char *name, const char *flavour)
{
    char *path = test_system_lib(name);
    ck_assert_msg(path != NULL, "%s not found", name);
    char *eh_path = eh_elf_path(name, flavour);
    struct tally tally = {0};
    compare_file(path, eh_path, &tally);
    printf("compile: %s (%s): %zu comparisons (%zu unwound, %zu errors, "
           "%zu no FDE)\n", name, flavour, tally.compared, tally.ok, tally.errors,
           tally.no_fde);
    ck_assert_uint_gt(tally.ok, 1000);
    ck_assert_uint_gt(tally.no_fde, 100);
    free(eh_path);
    free(path);
}

/* _i: 0 the tree layout, 1 the table layout. */
static const char *const flavours[] = {"full", "table"};

START_TEST(test_libc)
{
    compare_system_lib("libc.so.6", flavours[_i]);
}
END_TEST

START_TEST(test_ld_so)
{
    compare_system_lib("ld-linux-x86-64.so.2", flavours[_i]);
}
END_TEST

START_TEST(test_libstdcxx)
{
    compare_system_lib("libstdc++.so.6", flavours[_i]);
}
END_TEST

/* Calls fn(path of the case's .so, its name FOLDER/NAME) for every built
 * case of corpus/FOLDER. */
static size_t each_case_in(const char *folder,
                           void (*fn)(const char *path, const char *name,
                                      struct tally *tally),
                           struct tally *tally)
{
    char rel[256];
    snprintf(rel, sizeof rel, "corpus/%s", folder);
    char *dir_path = test_build_path(rel);
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "no built cases in %s", dir_path);
    size_t files = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        size_t len = strlen(entry->d_name);
        if (len < 4 || strcmp(entry->d_name + len - 3, ".so"))
            continue;
        char path[4096], name[256];
        snprintf(path, sizeof path, "%s/%s", dir_path, entry->d_name);
        snprintf(name, sizeof name, "%s/%.*s", folder, (int)(len - 3),
                 entry->d_name);
        fn(path, name, tally);
        files++;
    }
    closedir(dir);
    free(dir_path);
    return files;
}

/* Calls fn(path of the case's .so, its name) for every built case. */
static size_t each_case(void (*fn)(const char *path, const char *name,
                                   struct tally *tally),
                        struct tally *tally)
{
    return each_case_in("cases", fn, tally);
}

static void compare_case(const char *path, const char *name,
                         struct tally *tally)
{
    char *eh_path = eh_elf_path(name, "full");
    compare_file(path, eh_path, tally);
    free(eh_path);
}

static void compare_case_table(const char *path, const char *name,
                               struct tally *tally)
{
    char *eh_path = eh_elf_path(name, "table");
    compare_file(path, eh_path, tally);
    free(eh_path);
}

START_TEST(test_cases)
{
    struct tally tally = {0};
    size_t files = each_case(_i ? compare_case_table : compare_case, &tally);
    printf("compile: %zu cases: %zu comparisons (%zu unwound, %zu errors)\n",
           files, tally.compared, tally.ok, tally.errors);
    ck_assert_uint_ge(files, 10);
    ck_assert_uint_gt(tally.ok, 100);
}
END_TEST

/* ------------------------------------------------------------------ */
/* AArch64: eh_elfs run by the runner under qemu-aarch64                 */
/* ------------------------------------------------------------------ */

static void compare_a64_case(const char *path, const char *name,
                             struct tally *tally)
{
    char *eh_path = eh_elf_path(name, "full");
    compare_file(path, eh_path, tally);
    free(eh_path);
}

static void compare_a64_case_table(const char *path, const char *name,
                                   struct tally *tally)
{
    char *eh_path = eh_elf_path(name, "table");
    compare_file(path, eh_path, tally);
    free(eh_path);
}

/* The AArch64 cases (the errors/ folder holds no .so of its own: it is
 * not read), each with one runner; _i: the tree and the table layouts. */
START_TEST(test_aarch64_cases)
{
    struct tally tally = {0};
    size_t files = each_case_in("cases-aarch64",
                                _i ? compare_a64_case_table : compare_a64_case,
                                &tally);
    printf("compile: %zu AArch64 cases (%s): %zu FDEs, %zu comparisons "
           "(%zu unwound, %zu errors), 0 disagreements, %.3f s in the "
           "eh_elfs\n", files, flavours[_i], tally.fdes, tally.compared,
           tally.ok, tally.errors, tally.compiled_seconds);
    ck_assert_uint_ge(files, 9);
    ck_assert_uint_gt(tally.ok, 100);
    ck_assert_uint_gt(tally.errors, 10); /* the fault and unknown states */
}
END_TEST

/* The cross C library: every FDE, every row's start and end-1 as both
 * kinds of frame, four states (one with every register known, one with
 * faults, one with unknown and undefined registers), four va_bits; one
 * runner for all of it. */
START_TEST(test_aarch64_libc)
{
    const char *path = "/usr/aarch64-linux-gnu/lib/libc.so.6";
    ck_assert_msg(access(path, R_OK) == 0, "%s not found", path);
    char *eh_path = eh_elf_path("aarch64/libc.so.6", "table");
    double start = now_seconds();
    struct cg_eh_elf *eh = load(eh_path);
    double started = now_seconds() - start;
    cg_unload(eh);
    struct tally tally = {0};
    start = now_seconds();
    compare_file(path, eh_path, &tally);
    double total = now_seconds() - start;
    printf("compile: AArch64 libc.so.6 (table): %zu FDEs, %zu comparisons "
           "(%zu unwound, %zu errors, %zu no FDE), 0 disagreements; "
           "runner start-up %.1f ms, %.1f us a request under qemu, "
           "%.1f s in all\n", tally.fdes, tally.compared, tally.ok,
           tally.errors, tally.no_fde, started * 1e3,
           tally.compiled_seconds * 1e6 / (double)tally.compared, total);
    ck_assert_uint_gt(tally.fdes, 1000);
    ck_assert_uint_gt(tally.ok, 10000);
    ck_assert_uint_gt(tally.no_fde, 100);
    free(eh_path);
}
END_TEST

static void expect_load_error(const char *path, enum cfi_status status,
                              const char *message);

/* An executable script at DIR/NAME, malloc'd: a stand-in for
 * qemu-aarch64. */
static char *fake_qemu(const char *dir, const char *name, const char *body)
{
    char *path = malloc(4200);
    snprintf(path, 4200, "%s/%s", dir, name);
    char text[1024];
    snprintf(text, sizeof text, "#!/bin/sh\n%s\n", body);
    ck_assert_int_eq(test_write_file(path, text, strlen(text)), 0);
    ck_assert_int_eq(chmod(path, 0755), 0);
    return path;
}

/* A hello that says the eh_elf is ready (compile/runner/protocol.h:
 * "ERN1", status, 35 registers, EM_AARCH64), as printf writes it. */
#define HELLO_READY "printf 'ERN1\\000\\000\\000\\000#\\000\\000\\000" \
                    "\\267\\000\\000\\000'"

/* One request to a loaded AArch64 eh_elf whose runner does not answer
 * it: an error, at once, and the same again (a new runner). */
static void expect_request_fails(const char *eh_path)
{
    struct cg_eh_elf *eh = load(eh_path);
    struct cfi_regs callee;
    make_state_arch(&cfi_arch_aarch64, 1, 0, 0x1008, &callee);
    struct engine_memory *memory = engine_memory_new(true, 1);
    struct cfi_request request = {0x1008, false, &callee,
                                  engine_memory_reader(memory), 0};
    struct cfi_frame frame;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(cg_unwind(eh, &request, &frame), CFI_E_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(frame.diag.message, "runner"));
    }
    engine_memory_free(memory);
    cg_unload(eh);
}

/* What is missing, or a runner that ends or talks nonsense: one line
 * saying so when the eh_elf is opened, or an error for the request;
 * never a hang. */
START_TEST(test_aarch64_runner_failures)
{
    char *eh_path = eh_elf_path("cases-aarch64/pac_ret", "table");
    char *dir = test_temp_dir();
    setenv("CFISEM_QEMU_AARCH64", "/nonexistent/qemu-aarch64", 1);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "qemu-aarch64");
    unsetenv("CFISEM_QEMU_AARCH64");
    setenv("CFISEM_AARCH64_RUNNER", "/nonexistent/eh_elf_runner", 1);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "no AArch64 eh_elf runner");
    /* The real runner, copied where another user may write: into a
     * folder anyone may change, or as a file its group may change. */
    char *runner = test_build_path("aarch64/eh_elf_runner");
    char command[17000], copy[4200];
    snprintf(copy, sizeof copy, "%s/open/eh_elf_runner", dir);
    snprintf(command, sizeof command, "mkdir -m 777 '%s/open' && cp '%s' '%s'"
             " && chmod 755 '%s'", dir, runner, copy, copy);
    ck_assert_int_eq(system(command), 0);
    setenv("CFISEM_AARCH64_RUNNER", copy, 1);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "no AArch64 eh_elf runner");
    snprintf(command, sizeof command, "chmod 755 '%s/open' && chmod 775 '%s'",
             dir, copy);
    ck_assert_int_eq(system(command), 0);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "no AArch64 eh_elf runner");
    snprintf(command, sizeof command, "rm -rf '%s/open'", dir);
    ck_assert_int_eq(system(command), 0);
    free(runner);
    unsetenv("CFISEM_AARCH64_RUNNER");
    char *silent = fake_qemu(dir, "silent", "exit 0");
    setenv("CFISEM_QEMU_AARCH64", silent, 1);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "ended before it answered");
    char *garbage = fake_qemu(dir, "garbage", "echo garbage garbage garbage");
    setenv("CFISEM_QEMU_AARCH64", garbage, 1);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "answered garbage");
    char *machine = fake_qemu(dir, "machine",
        "printf 'ERN1\\004\\000\\000\\000#\\000\\000\\000"
        "\\267\\000\\000\\000'; cat > /dev/null");
    setenv("CFISEM_QEMU_AARCH64", machine, 1);
    expect_load_error(eh_path, CFI_E_UNSUPPORTED, "another machine");
    char *quits = fake_qemu(dir, "quits",
                            HELLO_READY "; head -c 1168 > /dev/null");
    setenv("CFISEM_QEMU_AARCH64", quits, 1);
    expect_request_fails(eh_path);
    char *babbles = fake_qemu(dir, "babbles",
                              HELLO_READY "; head -c 1168 > /dev/null; "
                              "echo 0123456789abcdef; cat > /dev/null");
    setenv("CFISEM_QEMU_AARCH64", babbles, 1);
    expect_request_fails(eh_path);
    unsetenv("CFISEM_QEMU_AARCH64");
    char *made[] = {silent, garbage, machine, quits, babbles};
    for (size_t i = 0; i < 5; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    rmdir(dir);
    free(dir);
    free(eh_path);
}
END_TEST

/* A runner killed by a signal in the middle of a request (the eh_elf's
 * code crashed under qemu): the signal is raised in the caller, as the
 * crash of an eh_elf loaded in-process would be. */
START_TEST(test_aarch64_runner_killed)
{
    char *eh_path = eh_elf_path("cases-aarch64/pac_ret", "table");
    char *dir = test_temp_dir();
    char *killed = fake_qemu(dir, "killed", HELLO_READY
                             "; head -c 1168 > /dev/null; kill -TERM $$");
    setenv("CFISEM_QEMU_AARCH64", killed, 1);
    struct cg_eh_elf *eh = load(eh_path);
    unlink(killed);
    rmdir(dir);
    struct cfi_regs callee;
    make_state_arch(&cfi_arch_aarch64, 1, 0, 0x1008, &callee);
    struct engine_memory *memory = engine_memory_new(true, 1);
    struct cfi_request request = {0x1008, false, &callee,
                                  engine_memory_reader(memory), 0};
    struct cfi_frame frame;
    cg_unwind(eh, &request, &frame);
    ck_abort_msg("the runner's signal was not raised");
}
END_TEST

static struct cg_program *generate_search(const struct sem_file_il *il,
                                          enum cg_abi abi,
                                          enum cg_search_kind kind);
static void compiles_cleanly(const struct cg_program *program, const char *dir,
                             const char *name);

/* Whether any unit of the program's C contains `text`. */
static bool program_has(const struct cg_program *program, const char *text)
{
    for (size_t k = 0; k < program->nunits; k++)
        if (strstr(program->units[k].body, text))
            return true;
    return false;
}

/* The statistics of the table layout's C for the file at `path`, and
 * whether it has `text`; `check_c`: the C compiles with -Wall -Wextra
 * -Werror. */
static struct cg_stats stats_of(const char *path, const char *text,
                                bool *has, bool check_c)
{
    struct cfi_file *file;
    struct sem_file_il *il = il_of(path, &file);
    struct cg_program *program = generate_search(il, CG_ABI_FULL,
                                                 CG_SEARCH_TABLE);
    struct cg_stats stats = program->stats;
    *has = program_has(program, text);
    if (check_c) {
        char *dir = test_temp_dir();
        compiles_cleanly(program, dir, "shapes");
        rmdir(dir);
        free(dir);
    }
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    return stats;
}

/* AArch64 rule sets that differ only in offsets share one function (a
 * shape), their offsets in eh_param: shapes.S's nine rule sets are five
 * shapes (its comment says which), an offset past int32_t stays a
 * constant of its shape, and the cross libc's 1,130 rule sets are far
 * fewer shapes. x86-64's C keeps every offset in code. (That each rule
 * set reads its own offsets is test_aarch64_cases' and
 * test_aarch64_libc's comparison with the IL.) */
START_TEST(test_aarch64_shapes)
{
    char *path = test_build_path("corpus/cases-aarch64/shapes.so");
    bool has = false;
    struct cg_stats s = stats_of(path, "0x100000010", &has, true);
    ck_assert_uint_eq(s.rulesets, 9);
    ck_assert_uint_eq(s.shapes, 5);
    ck_assert_msg(has, "the far offset is not a constant of its shape");
    free(path);
    s = stats_of("/usr/aarch64-linux-gnu/lib/libc.so.6", "eh_param", &has,
                 false);
    printf("compile: AArch64 libc.so.6: %zu rule sets in %zu shapes\n",
           s.rulesets, s.shapes);
    ck_assert(has);
    ck_assert_uint_gt(s.shapes, 10);
    ck_assert_uint_lt(s.shapes * 4, s.rulesets);
    s = stats_of("/lib/x86_64-linux-gnu/libc.so.6", "eh_param", &has, false);
    ck_assert_uint_eq(s.shapes, 0);
    ck_assert(!has);
}
END_TEST

/* An AArch64 file's C is built by the AArch64 compiler: when it is not
 * there, one line says which compiler is missing. */
START_TEST(test_aarch64_compiler_missing)
{
    char *path = test_build_path("corpus/cases-aarch64/pac_ret.so");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    struct cg_program *program, *v1 = NULL;
    ck_assert_int_eq(cg_generate(il, CG_ABI_FULL, &program, &diag), CFI_OK);
    ck_assert_int_eq(cg_generate(il, CG_ABI_V1, &v1, &diag),
                     CFI_E_UNSUPPORTED); /* v1 is x86-64's */
    ck_assert_ptr_null(v1);
    ck_assert_ptr_nonnull(strstr(diag.message, "v1 ABI is x86-64's"));
    char *dir = test_temp_dir();
    char out[4200];
    snprintf(out, sizeof out, "%s/out.so", dir);
    setenv("CFISEM_AARCH64_CC", "/nonexistent/aarch64-linux-gnu-gcc", 1);
    struct cg_build_options options = {NULL, 1, true};
    ck_assert_int_eq(cg_build(program, out, &options, NULL, &diag),
                     CFI_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(diag.message, "AArch64 C compiler"));
    ck_assert_int_ne(access(out, F_OK), 0);
    rmdir(dir);
    free(dir);
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    free(path);
}
END_TEST

/* The line of `text` that starts with `prefix`, up to its end. */
static void line_of(const char *text, const char *prefix, char *out,
                    size_t size)
{
    const char *at = strstr(text, prefix);
    ck_assert_msg(at != NULL, "no \"%s\" in:\n%s", prefix, text);
    size_t len = strcspn(at, "\n");
    snprintf(out, size, "%.*s", (int)len, at);
}

/* cfisem unwind --engine compiled on an AArch64 file (its eh_elf built
 * into the cache, then run under qemu) answers as il: a signed return
 * address, B key, stripped into pc. */
START_TEST(test_aarch64_cli_unwind)
{
    char *path = test_build_path("corpus/cases-aarch64/pac_ret_b_key.so");
    char *cache = test_temp_dir();
    setenv("XDG_CACHE_HOME", cache, 1);
    const char *base[] = {"unwind", path, "--pc", "0x1020", "--regs",
                          "sp=0x7ff0000,x29=0x7ff0100,"
                          "x30=0xabcd000000401234",
                          "--mem-seed", "7", "--engine", NULL, NULL};
    struct test_run il, compiled;
    base[9] = "il";
    test_run_cfisem(base, &il);
    base[9] = "compiled";
    test_run_cfisem(base, &compiled);
    ck_assert_msg(compiled.exit_code == 0, "%s", compiled.err);
    static const char *const lines[] = {"cfa = ", "x29 = ", "x30 = ",
                                        "sp = ", "pc = ", "ra_sign_state = ",
                                        "return address key: "};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char want[256], got[256];
        line_of(il.out, lines[i], want, sizeof want);
        line_of(compiled.out, lines[i], got, sizeof got);
        ck_assert_str_eq(got, want);
    }
    ck_assert_ptr_nonnull(strstr(compiled.out, "return address key: B"));
    test_run_free(&il);
    test_run_free(&compiled);
    char command[4300];
    snprintf(command, sizeof command, "rm -rf '%s'", cache);
    ck_assert_int_eq(system(command), 0);
    free(cache);
    free(path);
}
END_TEST

/* cfisem validate on an AArch64 case: every address, under qemu. */
START_TEST(test_aarch64_validate)
{
    char *path = test_build_path("corpus/cases-aarch64/pac_ret_b_key.so");
    char *eh_path = eh_elf_path("cases-aarch64/pac_ret_b_key", "table");
    const char *args[] = {"validate", path, eh_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == 0, "%s%s", run.out, run.err);
    ck_assert_ptr_nonnull(strstr(run.out, "4 states: "));
    ck_assert_ptr_nonnull(strstr(run.out, "result: 0 wrong ranges: pass"));
    ck_assert_ptr_null(strstr(run.out, "crash"));
    test_run_free(&run);
    free(eh_path);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The v1 ABI                                                            */
/* ------------------------------------------------------------------ */

/* What v1 computes: the row's CFA and the rules of rbx, rbp and of the
 * return address column (as rip's), with only rip, rsp, rbp and rbx of
 * the callee known; an error where one of those rules is the value of a
 * register the context lacks (v1 cannot carry it). */
static struct sem_rule v1_rip_rule(const struct cfi_arch *arch,
                                   const struct sem_row *row, uint64_t ra)
{
    if (ra == CFI_REG_RIP || ra >= CFI_NREGS)
        return sem_row_rule(row, CFI_REG_RIP);
    struct sem_rule rule = sem_row_rule(row, (unsigned)ra);
    if (rule.kind == SEM_RULE_SAME_VALUE ||
        (rule.kind == SEM_RULE_UNSPECIFIED &&
         cfi_arch_default(arch, (unsigned)ra) == CFI_DEFAULT_SAME_VALUE))
        return (struct sem_rule){SEM_RULE_REGISTER, (uint32_t)ra, 0, {0}};
    if (rule.kind == SEM_RULE_UNSPECIFIED)
        return (struct sem_rule){cfi_arch_default(arch, (unsigned)ra) ==
                                         CFI_DEFAULT_CFA
                                     ? SEM_RULE_VAL_OFFSET
                                     : SEM_RULE_UNDEFINED, 0, 0, {0}};
    return rule;
}

static void v1_expected(const struct sem_file_il *il, const struct cfi_request *request,
                        struct cfi_frame *frame)
{
    uint64_t pc = request->caller_frame ? request->pc - 1 : request->pc;
    const struct cfi_fde *fde = cfi_file_lookup(il->file, pc);
    size_t index = fde ? (size_t)(fde - il->file->fdes) : 0;
    const struct sem_range *range =
        fde && il->status[index] == CFI_OK ? sem_fde_il_find(&il->fdes[index], pc)
                                           : NULL;
    if (!range) {
        frame->status = fde ? il->status[index] : CFI_E_NO_FDE;
        return;
    }
    struct sem_reg_rule rules[3];
    struct sem_row reduced = {range->row->cfa, 0, rules};
    static const unsigned kept[] = {CFI_REG_RBX, CFI_REG_RBP, CFI_REG_RIP};
    for (unsigned k = 0; k < 3; k++) {
        struct sem_rule rule = kept[k] == CFI_REG_RIP
                                   ? v1_rip_rule(fde->cie->arch, range->row,
                                                 fde->cie->ra_column)
                                   : sem_row_rule(range->row, kept[k]);
        uint32_t from = rule.reg;
        if (rule.kind == SEM_RULE_REGISTER && from != CFI_REG_RBX &&
            from != CFI_REG_RBP && from != CFI_REG_RSP && from != CFI_REG_RIP) {
            frame->status = CFI_E_UNSUPPORTED;
            return;
        }
        if (rule.kind != SEM_RULE_UNSPECIFIED)
            rules[reduced.nrules++] = (struct sem_reg_rule){kept[k], rule};
    }
    sem_eval_row(fde->cie->arch, &reduced, request->callee, request->memory,
                 frame);
}

static void v1_regs(const struct cfi_regs *full, struct cfi_regs *v1)
{
    static const unsigned kept[] = {CFI_REG_RBX, CFI_REG_RBP, CFI_REG_RSP,
                                    CFI_REG_RIP};
    cfi_regs_clear(v1);
    for (unsigned k = 0; k < 4; k++)
        if (full->status[kept[k]] == CFI_REG_VALUE)
            cfi_regs_set(v1, kept[k], full->value[kept[k]]);
}

static bool same_v1(const struct cfi_frame *expected, const struct cfi_frame *v1)
{
    if (expected->status != CFI_OK)
        return v1->status != CFI_OK &&
               (expected->status != CFI_E_MEMORY || v1->status == CFI_E_MEMORY);
    if (v1->status != CFI_OK || v1->cfa != expected->cfa ||
        v1->caller.status[CFI_REG_RSP] != CFI_REG_VALUE ||
        v1->caller.value[CFI_REG_RSP] != expected->cfa)
        return false;
    static const unsigned kept[] = {CFI_REG_RBX, CFI_REG_RBP, CFI_REG_RIP};
    for (unsigned k = 0; k < 3; k++) {
        unsigned reg = kept[k];
        bool value = expected->caller.status[reg] == CFI_REG_VALUE;
        if (value != (v1->caller.status[reg] == CFI_REG_VALUE) ||
            (value && v1->caller.value[reg] != expected->caller.value[reg]))
            return false;
    }
    return true;
}

static void compare_v1_at(const struct cg_eh_elf *eh,
                          const struct sem_file_il *il,
                          const struct memories *m, uint64_t pc, bool caller,
                          struct tally *tally)
{
    struct cfi_frame *a = calloc(2, sizeof *a), *b = a + 1;
    for (unsigned k = 0; k < STATES; k++) {
        struct cfi_regs full, callee;
        make_state(pc * 7919, k, pc, &full);
        v1_regs(&full, &callee);
        struct cfi_request request = {pc, caller, &callee,
                                      engine_memory_reader(m->state[k]), 0};
        v1_expected(il, &request, a);
        cg_unwind(eh, &request, b);
        if (!same_v1(a, b)) {
            char ta[1024], tb[1024];
            describe(ta, sizeof ta, &cfi_arch_x86_64, a);
            describe(tb, sizeof tb, &cfi_arch_x86_64, b);
            ck_abort_msg("%s (v1): pc 0x%" PRIx64 "%s state %u:\n"
                         " il (reduced): %s\n compiled:     %s",
                         il->file->path, pc, caller ? " (caller)" : "", k, ta,
                         tb);
        }
        count(tally, a);
    }
    free(a);
}

static void compare_v1_file(const char *path, const char *name,
                            struct tally *tally)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &file, &diag) == CFI_OK, "%s: %s", path,
                  diag.message);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    char *eh_path = eh_elf_path(name, "v1");
    struct cg_eh_elf *eh = load(eh_path);
    ck_assert_int_eq(cg_eh_elf_abi(eh), CG_ABI_V1);
    struct memories m;
    memories_open(&m, file);
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct sem_fde_il *fde = &il->fdes[i];
        for (size_t r = 0; il->status[i] == CFI_OK && r < fde->nranges; r++) {
            compare_v1_at(eh, il, &m, fde->ranges[r].begin, false, tally);
            compare_v1_at(eh, il, &m, fde->ranges[r].end, true, tally);
        }
        compare_v1_at(eh, il, &m, file->fdes[i].pc_end, false, tally);
    }
    memories_close(&m);
    cg_unload(eh);
    free(eh_path);
    sem_file_il_free(il);
    cfi_file_close(file);
}

START_TEST(test_v1_cases)
{
    struct tally tally = {0};
    size_t files = each_case(compare_v1_file, &tally);
    printf("compile: v1: %zu cases: %zu comparisons (%zu unwound)\n", files,
           tally.compared, tally.ok);
    ck_assert_uint_gt(tally.ok, 100);
}
END_TEST

START_TEST(test_v1_libc)
{
    char *path = test_system_lib("libc.so.6");
    ck_assert_ptr_nonnull(path);
    struct tally tally = {0};
    compare_v1_file(path, "libc.so.6", &tally);
    printf("compile: v1: libc.so.6: %zu comparisons (%zu unwound)\n",
           tally.compared, tally.ok);
    ck_assert_uint_gt(tally.ok, 1000);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Hand-made rows                                                        */
/* ------------------------------------------------------------------ */

/* A .eh_frame of `n` FDEs of 16 bytes at 0x1000 + 16 i, nop programs,
 * one CIE ("zR", udata4, def_cfa rsp+8, rip at cfa-8). */
static struct cfi_file *nop_fdes(size_t n)
{
    static const uint8_t cie[] = {
        20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x03,
        0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0};
    size_t size = sizeof cie + n * 20 + 4;
    uint8_t *bytes = calloc(1, size);
    memcpy(bytes, cie, sizeof cie);
    for (size_t i = 0; i < n; i++) {
        uint8_t *fde = bytes + sizeof cie + 20 * i;
        uint32_t fields[4] = {16, (uint32_t)(fde + 4 - bytes),
                              (uint32_t)(0x1000 + 16 * i), 16};
        memcpy(fde, fields, sizeof fields); /* little-endian host */
    }
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {0};
    enum cfi_status status = cfi_file_from_section(bytes, size, CFI_EH_FRAME,
                                                   0x200000, &file, &diag);
    ck_assert_msg(status == CFI_OK, "nop_fdes: %s", diag.message);
    free(bytes);
    return file;
}

/* Expressions: every DW_OP family CFI allows, decoding edge cases,
 * branches, loops, limits, and the operations CFI forbids. */
struct expression {
    const char *name;
    uint8_t bytes[24];
    uint32_t len;
};

#define E(name, ...)                                                        \
    {name, {__VA_ARGS__}, sizeof((uint8_t[]){__VA_ARGS__})}

static const struct expression expressions[] = {
    E("lit5", 0x35),
    E("lit0 lit31 plus", 0x30, 0x4f, 0x22),
    E("addr", 0x03, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88),
    E("const1u", 0x08, 0xff), E("const1s", 0x09, 0xff),
    E("const2u", 0x0a, 0x34, 0x12), E("const2s", 0x0b, 0x00, 0x80),
    E("const4u", 0x0c, 1, 2, 3, 0x84), E("const4s", 0x0d, 0, 0, 0, 0x80),
    E("const8u", 0x0e, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe),
    E("const8s", 0x0f, 1, 2, 3, 4, 5, 6, 7, 0x88),
    E("constu", 0x10, 0xe5, 0x8e, 0x26),
    E("constu max", 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0x01),
    E("constu overflow", 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0x02),
    E("constu padded", 0x10, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
      0x80, 0x80, 0x80, 0x00),
    E("consts -1", 0x11, 0x7f),
    E("consts min", 0x11, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
      0x80, 0x7f),
    E("consts max", 0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0x00),
    E("consts overflow", 0x11, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
      0x80, 0x80, 0x01),
    E("consts overflow 2", 0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0x7e),
    E("const4u truncated", 0x0c, 1, 2),
    E("constu truncated", 0x10, 0x80),
    E("dup", 0x31, 0x12, 0x22), E("drop", 0x31, 0x32, 0x13),
    E("over", 0x31, 0x32, 0x14, 0x22, 0x22),
    E("pick 2", 0x31, 0x32, 0x33, 0x15, 0x02, 0x1c),
    E("pick deep", 0x15, 0x40), E("pick truncated", 0x31, 0x15),
    E("swap", 0x31, 0x35, 0x16, 0x1c),
    E("rot", 0x31, 0x32, 0x33, 0x17, 0x1c, 0x1e),
    E("rot short", 0x31, 0x17),
    E("dup alone", 0x12), E("drop alone", 0x13), E("swap alone", 0x16),
    E("deref", 0x77, 0x00, 0x06),
    E("deref_size 1", 0x77, 0x00, 0x94, 1), E("deref_size 2", 0x77, 0x00, 0x94, 2),
    E("deref_size 3", 0x77, 0x00, 0x94, 3), E("deref_size 4", 0x77, 0x00, 0x94, 4),
    E("deref_size 5", 0x77, 0x01, 0x94, 5), E("deref_size 6", 0x77, 0x02, 0x94, 6),
    E("deref_size 7", 0x77, 0x03, 0x94, 7), E("deref_size 8", 0x77, 0x04, 0x94, 8),
    E("deref_size 0", 0x77, 0x00, 0x94, 0), E("deref_size 9", 0x77, 0x00, 0x94, 9),
    E("deref_size truncated", 0x77, 0x00, 0x94),
    E("deref fault", 0x77, 0x20, 0x06),
    E("deref_size 3 fault", 0x77, 0x16, 0x94, 3),
    E("deref wraps", 0x11, 0x7c, 0x06),
    E("deref alone", 0x06),
    E("abs", 0x11, 0x79, 0x19),
    E("abs min", 0x0e, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x19),
    E("neg", 0x35, 0x1f), E("not", 0x30, 0x20),
    E("and", 0x3f, 0x35, 0x1a), E("or", 0x3a, 0x35, 0x21),
    E("xor", 0x3f, 0x35, 0x27), E("plus", 0x11, 0x7f, 0x35, 0x22),
    E("minus", 0x32, 0x35, 0x1c), E("mul", 0x11, 0x7d, 0x35, 0x1e),
    E("div", 0x37, 0x32, 0x1b), E("div negative", 0x11, 0x79, 0x32, 0x1b),
    E("div min by -1", 0x0e, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x11, 0x7f, 0x1b),
    E("div by zero", 0x37, 0x30, 0x1b),
    E("mod", 0x37, 0x33, 0x1d), E("mod unsigned", 0x11, 0x7f, 0x33, 0x1d),
    E("mod by zero", 0x37, 0x30, 0x1d),
    E("shl 63", 0x31, 0x08, 0x3f, 0x24), E("shl 64", 0x31, 0x08, 0x40, 0x24),
    E("shl huge", 0x31, 0x11, 0x7f, 0x24),
    E("shr", 0x11, 0x7f, 0x08, 0x3c, 0x25), E("shr 64", 0x11, 0x7f, 0x08, 0x40, 0x25),
    E("shra", 0x11, 0x70, 0x32, 0x26), E("shra 64", 0x11, 0x70, 0x08, 0x40, 0x26),
    E("shra positive 72", 0x35, 0x08, 0x48, 0x26),
    E("lt signed", 0x11, 0x7f, 0x31, 0x2d), E("gt signed", 0x11, 0x7f, 0x31, 0x2b),
    E("le", 0x31, 0x31, 0x2c), E("ge", 0x30, 0x31, 0x2a),
    E("eq", 0x33, 0x33, 0x29), E("ne", 0x33, 0x33, 0x2e),
    E("binary alone", 0x31, 0x22),
    E("plus_uconst", 0x77, 0x00, 0x23, 0x80, 0x01),
    E("plus_uconst truncated", 0x31, 0x23, 0x80),
    E("skip", 0x31, 0x2f, 0x01, 0x00, 0x32, 0x33),
    E("skip to the end", 0x31, 0x2f, 0x00, 0x00),
    E("skip past the end", 0x31, 0x2f, 0x10, 0x00),
    E("skip before the start", 0x31, 0x2f, 0xf0, 0xff),
    E("skip into an operand", 0x2f, 0x01, 0x00, 0x08, 0x31),
    E("skip truncated", 0x31, 0x2f, 0x01),
    E("bra taken", 0x31, 0x28, 0x01, 0x00, 0x34),
    E("bra not taken", 0x30, 0x28, 0x01, 0x00, 0x34),
    E("bra alone", 0x28, 0x00, 0x00),
    E("bra taken out of range", 0x31, 0x28, 0x40, 0x00, 0x34),
    E("loop forever", 0x31, 0x28, 0xfc, 0xff),
    E("loop growing", 0x31, 0x31, 0x28, 0xfb, 0xff),
    E("count down", 0x3a, 0x31, 0x1c, 0x12, 0x28, 0xfa, 0xff),
    E("skip over a forbidden op", 0x31, 0x2f, 0x01, 0x00, 0x9c, 0x30),
    E("bra into a forbidden op", 0x30, 0x28, 0x01, 0x00, 0x9c, 0x30),
    E("breg7", 0x77, 0x08), E("breg16", 0x80, 0x00),
    E("breg3", 0x73, 0x00), E("breg5", 0x75, 0x7f),
    E("bregx 17", 0x92, 0x11, 0x08), E("bregx 18", 0x92, 0x12, 0x00),
    E("bregx 127", 0x92, 0x7f, 0x00), E("bregx 128", 0x92, 0x80, 0x01, 0x00),
    E("bregx huge", 0x92, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00),
    E("breg truncated", 0x77), E("bregx truncated", 0x92, 0x11),
    E("nop", 0x96, 0x31),
    E("call_frame_cfa", 0x9c), E("reg5", 0x55), E("regx", 0x90, 0x05),
    E("stack_value", 0x31, 0x9f), E("piece", 0x31, 0x93, 0x08),
    E("fbreg", 0x91, 0x00), E("xderef", 0x31, 0x31, 0x18),
    E("implicit_value", 0x9e, 0x01, 0x00), E("entry_value", 0xa3, 0x01, 0x30),
    E("GNU_push_tls_address", 0x31, 0xe0), E("push_object_address", 0x97),
    E("call2", 0x98, 0, 0), E("unknown 0xff", 0xff), E("unknown 0x01", 0x01),
    E("forbidden after a result", 0x31, 0x9c),
    E("PLT", 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22),
    E("signal CFA", 0x77, 0xa0, 0x01, 0x06),
    E("libmvec", 0x38, 0x1c, 0x0d, 0xe0, 0xff, 0xff, 0xff, 0x1a, 0x0d, 0xb0,
      0xff, 0xff, 0xff, 0x22),
    E("openssl", 0x77, 0x10, 0x06, 0x23, 0x08),
    {"empty", {0}, 0},
};
#define NEXPRESSIONS (sizeof expressions / sizeof expressions[0])

/* Expressions too long to write out: the step limit met exactly and
 * passed, in a straight line and with a branch; the stack full and
 * overflowing; a register check before an overflow. */
static struct sem_expr long_expression(unsigned k)
{
    static const uint8_t loop[] = {0x31, 0x1c, 0x12,  /* lit1 minus dup */
                                   0x28, 0xfa, 0xff}; /* bra -6 */
    uint8_t *b = calloc(10010, 1);
    uint32_t n = 0;
    switch (k) {
    case 0: case 1: /* 9999 or 10000 nops, lit1: 10000 or 10001 steps */
        for (unsigned i = 0; i < 9999 + k; i++)
            b[n++] = 0x96;
        b[n++] = 0x31;
        break;
    case 2: case 3: /* constu 2499, 3 or 4 nops, then a loop of 4
                     * operations 2499 times: 10000 or 10001 steps */
        b[n++] = 0x10; /* constu 2499 */
        b[n++] = 0xc3;
        b[n++] = 0x13;
        for (unsigned i = 0; i < 3 + (k - 2); i++)
            b[n++] = 0x96;
        memcpy(b + n, loop, sizeof loop);
        n += sizeof loop;
        break;
    case 4: case 5: /* 64 or 65 lits */
        for (unsigned i = 0; i < 64 + (k - 4); i++)
            b[n++] = 0x30;
        break;
    default: /* 63 lits, breg5: overflow only when the CFA is pushed */
        for (unsigned i = 0; i < 63; i++)
            b[n++] = 0x30;
        b[n++] = 0x75;
        b[n++] = 0x00;
    }
    return (struct sem_expr){b, n};
}
#define NLONG 7

#define MAX_RULES 24
struct hand_rows {
    struct sem_row *rows;
    struct sem_reg_rule (*rules)[MAX_RULES];
    size_t n;
    struct sem_expr longs[NLONG];
};

static struct sem_row *hand_row(struct hand_rows *h, struct sem_cfa cfa)
{
    struct sem_row *row = &h->rows[h->n];
    *row = (struct sem_row){cfa, 0, h->rules[h->n]};
    h->n++;
    return row;
}

static void add_rule(struct sem_row *row, uint32_t reg, struct sem_rule rule)
{
    ck_assert_uint_lt(row->nrules, MAX_RULES);
    ((struct sem_reg_rule *)row->rules)[row->nrules++] =
        (struct sem_reg_rule){reg, rule};
}

#define RSP_PLUS(n) ((struct sem_cfa){SEM_CFA_RULE_REG_OFFSET, CFI_REG_RSP, (n), {0}})
#define RULE(kind, reg, offset) ((struct sem_rule){kind, reg, offset, {0}})
#define RIP_AT_CFA_8 RULE(SEM_RULE_OFFSET, 0, -8)

/* Four rows per expression: as the CFA; as val_expression of rbx; as
 * expression of register 20 (evaluated for its errors only); as
 * expression of rbp (the value read). */
static void expression_rows(struct hand_rows *h, struct sem_expr e)
{
    struct sem_row *row = hand_row(h, (struct sem_cfa){SEM_CFA_RULE_EXPR, 0, 0, e});
    add_rule(row, CFI_REG_RIP, RIP_AT_CFA_8);
    row = hand_row(h, RSP_PLUS(16));
    add_rule(row, CFI_REG_RBX, (struct sem_rule){SEM_RULE_VAL_EXPRESSION, 0, 0, e});
    add_rule(row, CFI_REG_RIP, RIP_AT_CFA_8);
    row = hand_row(h, RSP_PLUS(16));
    add_rule(row, CFI_REG_RIP, RIP_AT_CFA_8);
    add_rule(row, 20, (struct sem_rule){SEM_RULE_EXPRESSION, 0, 0, e});
    row = hand_row(h, RSP_PLUS(16));
    add_rule(row, CFI_REG_RBP, (struct sem_rule){SEM_RULE_EXPRESSION, 0, 0, e});
}

/* Every rule kind, registers that are unknown or undefined in state 2,
 * reads that fault in state 3, registers above 16, wrapping offsets. */
static void rule_rows(struct hand_rows *h)
{
    static const uint32_t cfa_regs[] = {5, 3, 17, 18, 100};
    for (unsigned i = 0; i < 5; i++)
        add_rule(hand_row(h, (struct sem_cfa){SEM_CFA_RULE_REG_OFFSET, cfa_regs[i],
                                              8, {0}}),
                 CFI_REG_RIP, RIP_AT_CFA_8);
    add_rule(hand_row(h, (struct sem_cfa){SEM_CFA_RULE_INVALID, 0, 0, {0}}),
             CFI_REG_RIP, RIP_AT_CFA_8);
    struct sem_row *row = hand_row(h, RSP_PLUS(16));
    add_rule(row, 0, RULE(SEM_RULE_VAL_OFFSET, 0, -16));
    add_rule(row, 1, RULE(SEM_RULE_OFFSET, 0, 0x10));
    add_rule(row, 3, RULE(SEM_RULE_UNDEFINED, 0, 0));
    add_rule(row, 6, RULE(SEM_RULE_SAME_VALUE, 0, 0));
    add_rule(row, 7, RULE(SEM_RULE_OFFSET, 0, -16));
    add_rule(row, 12, RULE(SEM_RULE_REGISTER, 1, 0));
    add_rule(row, 13, RULE(SEM_RULE_REGISTER, 17, 0));
    add_rule(row, 14, RULE(SEM_RULE_REGISTER, 18, 0));
    add_rule(row, 15, RULE(SEM_RULE_SAME_VALUE, 0, 0));
    add_rule(row, 16, RULE(SEM_RULE_UNDEFINED, 0, 0));
    add_rule(row, 30, RULE(SEM_RULE_OFFSET, 0, 0x40));
    add_rule(row, 40, RULE(SEM_RULE_VAL_OFFSET, 0, 8));
    add_rule(row, 41, RULE(SEM_RULE_REGISTER, 2, 0));
    add_rule(row, 50, RULE(SEM_RULE_UNDEFINED, 0, 0));
    add_rule(row, 51, RULE(SEM_RULE_SAME_VALUE, 0, 0));
    row = hand_row(h, RSP_PLUS(16));
    add_rule(row, 2, RULE(SEM_RULE_REGISTER, 100, 0));
    add_rule(row, 4, RULE(SEM_RULE_REGISTER, 3, 0));
    add_rule(row, 5, RULE(SEM_RULE_REGISTER, 7, 0));
    add_rule(row, 16, RIP_AT_CFA_8);
    row = hand_row(h, RSP_PLUS(INT64_MAX));
    add_rule(row, 5, RULE(SEM_RULE_VAL_OFFSET, 0, INT64_MAX));
    add_rule(row, 8, RULE(SEM_RULE_OFFSET, 0, INT64_MIN));
    add_rule(row, 16, RULE(SEM_RULE_OFFSET, 0, -8));
    static const uint8_t div_by_zero[] = {0x37, 0x30, 0x1b};
    row = hand_row(h, RSP_PLUS(-8));
    add_rule(row, 16, RULE(SEM_RULE_OFFSET, 0, 8));
    add_rule(row, 17, (struct sem_rule){SEM_RULE_VAL_EXPRESSION, 0, 0,
                                        {div_by_zero, sizeof div_by_zero}});
}

static void hand_rows_make(struct hand_rows *h)
{
    size_t max = 4 * (NEXPRESSIONS + NLONG) + 16;
    h->rows = calloc(max, sizeof *h->rows);
    h->rules = calloc(max, sizeof *h->rules);
    h->n = 0;
    for (size_t i = 0; i < NEXPRESSIONS; i++)
        expression_rows(h, (struct sem_expr){expressions[i].bytes,
                                             expressions[i].len});
    for (unsigned k = 0; k < NLONG; k++) {
        h->longs[k] = long_expression(k);
        expression_rows(h, h->longs[k]);
    }
    rule_rows(h);
    ck_assert_uint_le(h->n, max);
}

static void hand_rows_free(struct hand_rows *h)
{
    for (unsigned k = 0; k < NLONG; k++)
        free((void *)h->longs[k].bytes);
    free(h->rows);
    free(h->rules);
}

/* A file of nop FDEs whose IL holds the hand-made rows, one per FDE. */
static struct sem_file_il *hand_il(struct hand_rows *h, struct cfi_file **file)
{
    hand_rows_make(h);
    *file = nop_fdes(h->n);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(*file, &il), CFI_OK);
    ck_assert_uint_eq(il->nfdes, h->n);
    for (size_t i = 0; i < h->n; i++) {
        ck_assert_int_eq(il->status[i], CFI_OK);
        ck_assert_uint_eq(il->fdes[i].nranges, 1);
        il->fdes[i].ranges[0].row = &h->rows[i];
    }
    return il;
}

/* FDEs given by range and program (at most 4 bytes), one CIE as in
 * nop_fdes. */
struct fde_spec {
    uint32_t begin, range;
    uint8_t program[4];
};

static struct cfi_file *fdes_section(const struct fde_spec *specs, size_t n)
{
    static const uint8_t cie[] = {
        20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x03,
        0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0};
    size_t size = sizeof cie + n * 24 + 4;
    uint8_t *bytes = calloc(1, size);
    memcpy(bytes, cie, sizeof cie);
    for (size_t i = 0; i < n; i++) {
        uint8_t *fde = bytes + sizeof cie + 24 * i;
        uint32_t fields[4] = {20, (uint32_t)(fde + 4 - bytes), specs[i].begin,
                              specs[i].range};
        memcpy(fde, fields, sizeof fields);
        memcpy(fde + 17, specs[i].program, sizeof specs[i].program);
    }
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {0};
    ck_assert_msg(cfi_file_from_section(bytes, size, CFI_EH_FRAME, 0x200000,
                                        &file, &diag) == CFI_OK,
                  "fdes_section: %s", diag.message);
    free(bytes);
    return file;
}

/* Builds the program into DIR/NAME.so and loads it. */
static struct cg_eh_elf *build_and_load(const struct cg_program *program,
                                        const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.so", dir, name);
    struct cg_build_options options = {NULL, 0, false};
    struct cfi_diag diag = {0};
    enum cfi_status status = cg_build(program, path, &options, NULL, &diag);
    ck_assert_msg(status == CFI_OK, "cg_build: %s", diag.message);
    return load(path);
}

static struct cg_program *generate_search(const struct sem_file_il *il,
                                          enum cg_abi abi,
                                          enum cg_search_kind kind)
{
    struct cg_program *program = NULL;
    struct cfi_diag diag = {0};
    ck_assert_int_eq(cg_generate_search(il, abi, kind, &program, &diag),
                     CFI_OK);
    return program;
}

static struct cg_program *generate(const struct sem_file_il *il,
                                   enum cg_abi abi)
{
    return generate_search(il, abi, CG_SEARCH_TREE);
}

/* _i: the tree layout, then the table layout. */
START_TEST(test_hand_rows)
{
    struct hand_rows h;
    struct cfi_file *file;
    struct sem_file_il *il = hand_il(&h, &file);
    char *dir = test_temp_dir();
    struct cg_program *program = generate_search(
        il, CG_ABI_FULL, _i ? CG_SEARCH_TABLE : CG_SEARCH_TREE);
    struct cg_eh_elf *eh = build_and_load(program, dir, "hand");
    struct memories m;
    memories_open(&m, NULL);
    struct tally tally = {0};
    for (size_t i = 0; i < h.n; i++) {
        compare_at(eh, il, &m, file->fdes[i].pc_begin, false, &tally);
        compare_at(eh, il, &m, file->fdes[i].pc_begin + 1, true, &tally);
    }
    size_t by_status[CFI_STATUS_COUNT] = {0};
    for (size_t i = 0; i < h.n; i++) {
        struct cfi_regs callee;
        make_state(i, 0, 0x1000, &callee);
        struct cfi_frame frame;
        struct cfi_request request = {file->fdes[i].pc_begin, false, &callee,
                                      engine_memory_reader(m.state[0]), 0};
        sem_unwind(il, &request, &frame);
        by_status[frame.status]++;
    }
    printf("compile: %zu hand-made rows: %zu comparisons (%zu unwound, "
           "%zu errors)\n", h.n, tally.compared, tally.ok, tally.errors);
    /* every error class an expression can produce is exercised */
    static const enum cfi_status classes[] = {
        CFI_OK, CFI_E_MALFORMED, CFI_E_MEMORY, CFI_E_EXPR, CFI_E_EXPR_STACK,
        CFI_E_STEP_LIMIT, CFI_E_REG_UNKNOWN};
    for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++)
        ck_assert_msg(by_status[classes[k]] > 0, "no row gives %s",
                      cfi_status_name(classes[k]));
    memories_close(&m);
    cg_unload(eh);
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    hand_rows_free(&h);
    free(dir);
}
END_TEST

/* Overlapping FDEs (the greatest start wins, then the first in the
 * section), FDEs inside others, empty and inverted ranges, FDEs that fail
 * to translate side by side, gaps: every address compared; _i: each
 * search layout (the span above 4 GiB takes the table's flat form), and
 * each generated C compiles cleanly. */
static void compiles_cleanly(const struct cg_program *program, const char *dir,
                             const char *name);

START_TEST(test_overlaps_and_failures)
{
    static const struct fde_spec specs[] = {
        {0x1000, 0x100, {0x0e, 0x10}},             /* cfa=rsp+16 */
        {0x1040, 0x40, {0x0e, 0x18}},              /* inside the first */
        {0x1040, 0x20, {0x0e, 0x20}},              /* same start: loses */
        {0x1050, 0x08, {0x41, 0x0e, 0x28}},        /* two rows, nested */
        {0x1100, 0x10, {0x0e, 0x10}},              /* the first's row again */
        {0x1110, 0x00, {0x0e, 0x30}},              /* empty */
        {0x1180, 0xfffffff0, {0x0e, 0x38}},        /* wraps 32 bits */
        {0x1200, 0x10, {0x0b}},                    /* restore_state: malformed */
        {0x1210, 0x10, {0x2d}},                    /* window_save: unsupported */
        {0x1220, 0x10, {0x0b}},                    /* malformed again */
        {0x1238, 0x08, {0x00}},                    /* after a gap */
    };
    size_t n = sizeof specs / sizeof specs[0];
    struct cfi_file *file = fdes_section(specs, n);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    ck_assert_uint_ge(il->nfailed, 3);
    char *dir = test_temp_dir();
    enum cg_search_kind kind = _i ? CG_SEARCH_TABLE : CG_SEARCH_TREE;
    struct cg_program *program = generate_search(il, CG_ABI_FULL, kind);
    compiles_cleanly(program, dir, cg_search_kind_name(kind));
    struct cg_eh_elf *eh = build_and_load(program, dir, "overlaps");
    struct memories m;
    memories_open(&m, NULL);
    struct tally tally = {0};
    for (uint64_t pc = 0xff0; pc < 0x1250; pc++) {
        compare_at(eh, il, &m, pc, false, &tally);
        compare_at(eh, il, &m, pc, true, &tally);
    }
    ck_assert_uint_gt(tally.no_fde, 100);
    memories_close(&m);
    cg_unload(eh);
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    free(dir);
}
END_TEST

/* The table layout's search at its edges: 40 one-byte leaves in a row
 * (sub-blocks of more than the 16 leaves the vector count takes, so the
 * binary steps run first), then the same across the 64 KiB block
 * boundary (starts modulo 64 KiB wrap there), with one long FDE
 * between; every address and the first past each run compared, as a
 * callee and as a caller frame. */
static char *program_text(const struct cg_program *program, size_t *len);

START_TEST(test_table_dense_sub_blocks)
{
    enum { RUN = 40 };
    struct fde_spec specs[2 * RUN + 1];
    size_t n = 0;
    for (uint32_t i = 0; i < RUN; i++)
        specs[n++] = (struct fde_spec){0x1000 + i, 1,
                                       {0x0e, (uint8_t)(i % 2 ? 0x18 : 0x10)}};
    specs[n++] = (struct fde_spec){0x1000 + RUN, 0xffe0 - RUN, {0x0e, 0x20}};
    for (uint32_t i = 0; i < RUN; i++)
        specs[n++] = (struct fde_spec){0x10fe0 + i, 1,
                                       {0x0e, (uint8_t)(i % 2 ? 0x28 : 0x30)}};
    struct cfi_file *file = fdes_section(specs, n);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    char *dir = test_temp_dir();
    struct cg_program *program = generate_search(il, CG_ABI_FULL,
                                                 CG_SEARCH_TABLE);
    size_t len = 0;
    char *text = program_text(program, &len);
    ck_assert_ptr_nonnull(strstr(text, "eh_sub["));
    free(text);
    struct cg_eh_elf *eh = build_and_load(program, dir, "dense");
    struct memories m;
    memories_open(&m, NULL);
    struct tally tally = {0};
    static const uint64_t runs[][2] = {{0xff0, 0x1040}, {0x10fc0, 0x11030}};
    for (size_t r = 0; r < 2; r++)
        for (uint64_t pc = runs[r][0]; pc < runs[r][1]; pc++) {
            compare_at(eh, il, &m, pc, false, &tally);
            compare_at(eh, il, &m, pc, true, &tally);
        }
    ck_assert_uint_gt(tally.ok, 100);
    memories_close(&m);
    cg_unload(eh);
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    free(dir);
}
END_TEST

/* _i: the tree layout, then the table layout. */
START_TEST(test_hand_rows_v1)
{
    struct hand_rows h;
    struct cfi_file *file;
    struct sem_file_il *il = hand_il(&h, &file);
    char *dir = test_temp_dir();
    struct cg_program *program = generate_search(
        il, CG_ABI_V1, _i ? CG_SEARCH_TABLE : CG_SEARCH_TREE);
    struct cg_eh_elf *eh = build_and_load(program, dir, "hand_v1");
    struct memories m;
    memories_open(&m, NULL);
    struct tally tally = {0};
    for (size_t i = 0; i < h.n; i++)
        compare_v1_at(eh, il, &m, file->fdes[i].pc_begin, false, &tally);
    printf("compile: v1: %zu hand-made rows: %zu comparisons (%zu unwound)\n",
           h.n, tally.compared, tally.ok);
    memories_close(&m);
    cg_unload(eh);
    cg_program_free(program);
    sem_file_il_free(il);
    cfi_file_close(file);
    hand_rows_free(&h);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The generated C                                                       */
/* ------------------------------------------------------------------ */

static char *program_text(const struct cg_program *program, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(cg_write_c(program, f), CFI_OK);
    fclose(f);
    return text;
}

/* `$CC FLAGS -o OUT SOURCE`: its exit status. */
static int run_cc_as(const char *cc, const char *flags, const char *out,
                     const char *source)
{
    static char command[3 * 4096 + 512];
    int n = snprintf(command, sizeof command, "%s %s -o '%s' '%s'", cc, flags,
                     out, source);
    ck_assert(n > 0 && (size_t)n < sizeof command);
    return system(command);
}

static int run_cc(const char *flags, const char *out, const char *source)
{
    const char *cc = getenv("CC");
    return run_cc_as(cc ? cc : "cc", flags, out, source);
}

/* The program as one file compiles with -Wall -Wextra -Werror (an
 * AArch64 file's with the AArch64 compiler). */
static void compiles_cleanly(const struct cg_program *program, const char *dir,
                             const char *name)
{
    char source[4096], object[4096];
    snprintf(source, sizeof source, "%s/%s.c", dir, name);
    snprintf(object, sizeof object, "%s/%s.so", dir, name);
    size_t len;
    char *text = program_text(program, &len);
    ck_assert_int_eq(test_write_file(source, text, len), 0);
    free(text);
    const char *cc = program->machine == EH_ELF_MACHINE_AARCH64
                         ? "aarch64-linux-gnu-gcc" : getenv("CC");
    ck_assert_msg(run_cc_as(cc ? cc : "cc",
                            "-Wall -Wextra -Werror -O1 -shared -fPIC", object,
                            source) == 0,
                  "%s: the generated C does not compile cleanly", source);
    unlink(source);
    unlink(object);
}

START_TEST(test_c_warnings_hand_rows)
{
    struct hand_rows h;
    struct cfi_file *file;
    struct sem_file_il *il = hand_il(&h, &file);
    char *dir = test_temp_dir();
    for (int abi = CG_ABI_FULL; abi <= CG_ABI_V1; abi++)
        for (int kind = CG_SEARCH_TREE; kind <= CG_SEARCH_TABLE; kind++) {
            struct cg_program *program = generate_search(
                il, (enum cg_abi)abi, (enum cg_search_kind)kind);
            char name[64];
            snprintf(name, sizeof name, "%s-%s", cg_abi_name((enum cg_abi)abi),
                     cg_search_kind_name((enum cg_search_kind)kind));
            compiles_cleanly(program, dir, name);
            cg_program_free(program);
        }
    rmdir(dir);
    free(dir);
    sem_file_il_free(il);
    cfi_file_close(file);
    hand_rows_free(&h);
}
END_TEST

static void case_compiles(const char *path, const char *name,
                          struct tally *tally)
{
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    char *dir = test_temp_dir();
    for (int abi = CG_ABI_FULL; abi <= CG_ABI_V1; abi++) {
        struct cg_program *program = generate(il, (enum cg_abi)abi);
        compiles_cleanly(program, dir, cg_abi_name((enum cg_abi)abi));
        cg_program_free(program);
        tally->compared++;
    }
    (void)name;
    rmdir(dir);
    free(dir);
    sem_file_il_free(il);
    cfi_file_close(file);
}

START_TEST(test_c_warnings_cases)
{
    struct tally tally = {0};
    ck_assert_uint_ge(each_case(case_compiles, &tally), 10);
}
END_TEST

static void same_output_twice(const struct sem_file_il *il, enum cg_abi abi)
{
    struct cg_program *a = generate(il, abi), *b = generate(il, abi);
    size_t len_a, len_b;
    char *text_a = program_text(a, &len_a), *text_b = program_text(b, &len_b);
    ck_assert_msg(len_a == len_b && !memcmp(text_a, text_b, len_a),
                  "two generations differ (%s ABI)", cg_abi_name(abi));
    free(text_a);
    free(text_b);
    cg_program_free(a);
    cg_program_free(b);
}

START_TEST(test_deterministic)
{
    char *path = test_system_lib("libc.so.6");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(path, &file, &diag), CFI_OK);
    struct sem_file_il *il;
    ck_assert_int_eq(sem_file_il_build(file, &il), CFI_OK);
    same_output_twice(il, CG_ABI_FULL);
    same_output_twice(il, CG_ABI_V1);
    sem_file_il_free(il);
    cfi_file_close(file);
    free(path);
}
END_TEST

/* The declarations every generated file starts with are eh_elf.h's. */
START_TEST(test_declarations_match_header)
{
    char *path = test_src_path("compile/eh_elf.h");
    char *header = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(header);
    const char *begin = strstr(header, "/* <eh_elf:declarations>");
    const char *end = strstr(header, "/* </eh_elf:declarations> */\n");
    ck_assert_ptr_nonnull(begin);
    ck_assert_ptr_nonnull(end);
    end += strlen("/* </eh_elf:declarations> */\n");
    const char *copy = cg_abi_declarations();
    ck_assert_uint_eq(strlen(copy), (size_t)(end - begin));
    ck_assert_msg(!memcmp(copy, begin, (size_t)(end - begin)),
                  "compile/prelude.c's copy differs from eh_elf.h");
    free(header);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Loading                                                               */
/* ------------------------------------------------------------------ */

/* DIR/NAME.so built from the C `source`. */
static char *tiny_so(const char *dir, const char *name, const char *source)
{
    char c_path[4096];
    snprintf(c_path, sizeof c_path, "%s/%s.c", dir, name);
    ck_assert_int_eq(test_write_file(c_path, source, strlen(source)), 0);
    char *so = malloc(4096);
    snprintf(so, 4096, "%s/%s.so", dir, name);
    ck_assert_int_eq(run_cc("-shared -fPIC", so, c_path), 0);
    unlink(c_path);
    return so;
}

static void expect_load_error(const char *path, enum cfi_status status,
                              const char *message)
{
    struct cg_eh_elf *eh = NULL;
    struct cfi_diag diag = {0};
    ck_assert_int_eq(cg_load(path, &eh, &diag), status);
    ck_assert_ptr_null(eh);
    ck_assert_msg(diag.message && strstr(diag.message, message),
                  "%s: message \"%s\", expected \"%s\"", path,
                  diag.message ? diag.message : "(none)", message);
}

/* A read_memory that always fails. */
static int read_nothing(void *data, uint64_t addr, unsigned size,
                        uint64_t *value)
{
    (void)data, (void)addr, (void)size;
    *value = 0;
    return 1;
}

/* The window of direct loads (eh_elf.h, version 3), on prologue.so's row
 * [0x1001,0x1004): cfa=rsp+16 rbp=[cfa-16] rip=[cfa-8]. With the stack
 * inside the window the eh_elf loads it itself (read_memory would fail);
 * without a window, or with one that stops short, every read goes to
 * read_memory; _i: the tree and the table layouts. */
START_TEST(test_direct_window)
{
    char *path = eh_elf_path("cases/prologue", _i ? "table" : "full");
    struct cg_eh_elf *eh = load(path);
    eh_elf_unwind_fn *unwind = cg_eh_elf_entry(eh);
    ck_assert_ptr_nonnull(unwind);
    uint64_t stack[4] = {0x1111, 0xfeed0001, 0x2020, 0x3030};
    uint64_t base = (uint64_t)(uintptr_t)stack;
    struct eh_elf_regs callee = {{0}, 0, 0};
    callee.value[CFI_REG_RSP] = base;
    callee.value[CFI_REG_RBP] = 0xbbbb;
    callee.known = 1u << CFI_REG_RSP | 1u << CFI_REG_RBP;
    struct eh_elf_env env = {read_nothing, NULL, NULL, base, sizeof stack - 7};
    struct eh_elf_frame frame;
    ck_assert_int_eq(unwind(0x1002, &callee, &env, &frame), EH_ELF_OK);
    ck_assert_uint_eq(frame.cfa, base + 16);
    ck_assert_uint_eq(frame.caller.value[CFI_REG_RBP], 0x1111);
    ck_assert_uint_eq(frame.caller.value[CFI_REG_RIP], 0xfeed0001);
    ck_assert_uint_eq(frame.caller.value[CFI_REG_RSP], base + 16);
    env.direct_span = 0;
    ck_assert_int_eq(unwind(0x1002, &callee, &env, &frame), EH_ELF_E_MEMORY);
    env.direct_span = 1; /* the 8 bytes at base only: rip's read fails */
    ck_assert_int_eq(unwind(0x1002, &callee, &env, &frame), EH_ELF_E_MEMORY);
    cg_unload(eh);
    free(path);
}
END_TEST

START_TEST(test_load_errors)
{
    char *dir = test_temp_dir();
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing.so", dir);
    expect_load_error(missing, CFI_E_IO, "cannot open file");
    char text[4200];
    snprintf(text, sizeof text, "%s/text.so", dir);
    ck_assert_int_eq(test_write_file(text, "not ELF\n", 8), 0);
    expect_load_error(text, CFI_E_UNSUPPORTED, "not a 64-bit ELF");
    char *foreign = tiny_so(dir, "foreign", "int foo(void) { return 1; }\n");
    expect_load_error(foreign, CFI_E_UNSUPPORTED,
                      "neither eh_elf_ident nor _eh_elf");
    char *version = tiny_so(dir, "version",
        "const char eh_elf_ident[] = \"cfisem eh_elf full\";\n"
        "const unsigned eh_elf_abi_version = 99;\n"
        "int eh_elf_unwind(void) { return 0; }\n");
    expect_load_error(version, CFI_E_UNSUPPORTED, "another ABI version");
    char *ident = tiny_so(dir, "ident",
                          "const char eh_elf_ident[] = \"someone else\";\n");
    expect_load_error(ident, CFI_E_UNSUPPORTED, "unknown eh_elf_ident");
    char *entry = tiny_so(dir, "entry",
        "const char eh_elf_ident[] = \"cfisem eh_elf full\";\n"
        "const unsigned eh_elf_abi_version = 4;\n");
    expect_load_error(entry, CFI_E_UNSUPPORTED, "no entry point");
    /* Versions 2 and 3 carry no stamp: refused, to be rebuilt. */
    char *unstamped = tiny_so(dir, "unstamped",
        "const char eh_elf_ident[] = \"cfisem eh_elf full\";\n"
        "const unsigned eh_elf_abi_version = 3;\n"
        "int eh_elf_unwind(void) { return 0; }\n");
    expect_load_error(unstamped, CFI_E_UNSUPPORTED,
                      "ABI version 2 or 3: it carries no stamp");
    /* A v1 eh_elf of the 2018-2019 tools has _eh_elf only. */
    char *old = tiny_so(dir, "old",
        "#include <stdint.h>\n"
        "typedef struct { uint8_t flags; uintptr_t rip, rsp, rbp, rbx; } c_t;\n"
        "c_t _eh_elf(c_t ctx, uintptr_t pc, uintptr_t (*deref)(uintptr_t))\n"
        "{ (void)pc; (void)deref; ctx.flags = 0x80; return ctx; }\n");
    struct cg_eh_elf *eh = load(old);
    ck_assert_int_eq(cg_eh_elf_abi(eh), CG_ABI_V1);
    struct cfi_regs callee;
    cfi_regs_clear(&callee);
    struct engine_memory *memory = engine_memory_new(true, 1);
    struct cfi_request request = {0x1000, false, &callee,
                                  engine_memory_reader(memory), 0};
    struct cfi_frame frame;
    ck_assert_int_eq(cg_unwind(eh, &request, &frame), CFI_E_UNSUPPORTED);
    engine_memory_free(memory);
    cg_unload(eh);
    char *made[] = {foreign, version, ident, entry, old, unstamped};
    for (size_t i = 0; i < 6; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    unlink(text);
    rmdir(dir);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The command line                                                      */
/* ------------------------------------------------------------------ */

static void expect_exit(const char *const *args, int code, const char *text)
{
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_msg(run.exit_code == code, "%s: exit %d, expected %d (%s)",
                  args[0], run.exit_code, code, run.err);
    if (text)
        ck_assert_msg(strstr(run.out, text) || strstr(run.err, text),
                      "no \"%s\" in:\n%s%s", text, run.out, run.err);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* The stamp: which file an eh_elf was built from                       */
/* ------------------------------------------------------------------ */

/* DIR/NAME, a program linked from the C `source` with `flags`. */
static char *tiny_program(const char *dir, const char *name,
                          const char *source, const char *flags)
{
    char c_path[4096];
    snprintf(c_path, sizeof c_path, "%s/%s.c", dir, name);
    ck_assert_int_eq(test_write_file(c_path, source, strlen(source)), 0);
    char *out = malloc(4096);
    snprintf(out, 4096, "%s/%s", dir, name);
    ck_assert_int_eq(run_cc(flags, out, c_path), 0);
    unlink(c_path);
    return out;
}

static const char program_a[] =
    "int twice(int x) { return 2 * x; }\n"
    "int main(void) { return twice(1); }\n";
static const char program_b[] =
    "int thrice(int x) { return 3 * x; }\n"
    "int more(int x) { return thrice(x) + thrice(x + 1); }\n"
    "int main(void) { return more(1); }\n";

/* cfisem compile FILE -o OUT (extra: one more option and its value). */
static void compile_cli(const char *file, const char *out, const char *option,
                        const char *value)
{
    expect_exit((const char *[]){"compile", file, "-o", out, option, value,
                                 NULL},
                0, NULL);
}

static void object_id_text(const char *path, char *buf, size_t size)
{
    struct eh_elf_object_id id;
    struct cfi_diag diag;
    ck_assert_int_eq(cg_object_id(path, &id, &diag), CFI_OK);
    cg_object_id_text(&id, buf, size);
}

/* The one line: "EH: built from <B's id>, not from A (<A's id>)". */
static void expect_stale_line(const struct test_run *run, const char *eh_elf,
                              const char *built_from, const char *object)
{
    char built[200], wanted_object[200], line[1024];
    object_id_text(built_from, built, sizeof built);
    object_id_text(object, wanted_object, sizeof wanted_object);
    snprintf(line, sizeof line, "cfisem: %s: built from %s, not from %s (%s)\n",
             eh_elf, built, object, wanted_object);
    ck_assert_msg(run->exit_code == 2, "exit %d, expected 2 (%s)",
                  run->exit_code, run->err);
    ck_assert_msg(!strcmp(run->err, line), "stderr:\n%s\nexpected:\n%s",
                  run->err, line);
}

/* An eh_elf presented for a file it was not built from (test_stale_eh_elf_refused):
 * unwind, validate and diff used it and answered for the other file's code. */
START_TEST(test_stale_eh_elf_refused)
{
    char *dir = test_temp_dir();
    char *a = tiny_program(dir, "A", program_a, "-O1");
    char *b = tiny_program(dir, "B", program_b, "-O1");
    char a_eh[4200], b_eh[4200], beside[4200];
    snprintf(a_eh, sizeof a_eh, "%s/A.own.eh_elf.so", dir);
    snprintf(b_eh, sizeof b_eh, "%s/B.eh_elf.so", dir);
    snprintf(beside, sizeof beside, "%s/A.eh_elf.so", dir);
    compile_cli(a, a_eh, "--layout", "tree");
    compile_cli(b, b_eh, "--layout", "table");
    size_t len;
    char *bytes = test_read_file(b_eh, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(test_write_file(beside, bytes, len), 0);
    free(bytes);
    chmod(beside, 0755);
    const char *given[] = {b_eh, beside};
    for (size_t k = 0; k < 2; k++) {
        struct test_run run;
        test_run_cfisem((const char *[]){"unwind", a, "--pc", "0x1000",
                                         "--engine", "compiled", "--eh-elf",
                                         given[k], NULL},
                        &run);
        expect_stale_line(&run, given[k], b, a);
        test_run_free(&run);
        test_run_cfisem((const char *[]){"validate", a, given[k], NULL}, &run);
        expect_stale_line(&run, given[k], b, a);
        test_run_free(&run);
        test_run_cfisem((const char *[]){"diff", a, "--engines",
                                         "interp,compiled", "--eh-elf",
                                         given[k], NULL},
                        &run);
        expect_stale_line(&run, given[k], b, a);
        test_run_free(&run);
    }
    /* its own eh_elf passes; the loader refuses the other one */
    expect_exit((const char *[]){"validate", a, a_eh, NULL}, 0, NULL);
    struct eh_elf_object_id id;
    struct cfi_diag diag;
    struct cg_stale stale;
    struct cg_eh_elf *eh = NULL;
    ck_assert_int_eq(cg_object_id(a, &id, &diag), CFI_OK);
    ck_assert_uint_eq(id.kind, EH_ELF_OBJECT_ID_BUILD_ID);
    ck_assert_int_eq(cg_load_for(b_eh, &id, &eh, &stale, &diag),
                     CFI_E_UNSUPPORTED);
    ck_assert_ptr_null(eh);
    ck_assert(stale.ours && stale.stamped);
    ck_assert(!cg_object_id_equal(&stale.built_from, &id));
    ck_assert_int_eq(cg_load_for(a_eh, &id, &eh, &stale, &diag), CFI_OK);
    cg_unload(eh);
    const char *made[] = {a, b, a_eh, b_eh, beside};
    for (size_t i = 0; i < 5; i++)
        unlink(made[i]);
    free(a);
    free(b);
    rmdir(dir);
    free(dir);
}
END_TEST

/* A file without build-id is stamped with the SHA-256 of its frame
 * sections, and another .eh_frame is told apart. */
START_TEST(test_frame_sha256_stamp)
{
    char *dir = test_temp_dir();
    char *a = tiny_program(dir, "A", program_a, "-O1 -Wl,--build-id=none");
    char *b = tiny_program(dir, "B", program_b, "-O1 -Wl,--build-id=none");
    struct eh_elf_object_id id;
    struct cfi_diag diag;
    ck_assert_int_eq(cg_object_id(a, &id, &diag), CFI_OK);
    ck_assert_uint_eq(id.kind, EH_ELF_OBJECT_ID_FRAME_SHA256);
    ck_assert_uint_eq(id.size, 32);
    /* the digest of .eh_frame as objcopy extracts it (no .debug_frame) */
    char section[4200], command[9000];
    snprintf(section, sizeof section, "%s/eh_frame.bin", dir);
    snprintf(command, sizeof command,
             "objcopy --dump-section .eh_frame='%s' '%s' '%s/scratch'",
             section, a, dir);
    ck_assert_int_eq(system(command), 0);
    size_t len;
    char *bytes = test_read_file(section, &len);
    ck_assert_ptr_nonnull(bytes);
    struct cfi_sha256 sha;
    uint8_t digest[CFI_SHA256_BYTES];
    cfi_sha256_init(&sha);
    cfi_sha256_add(&sha, bytes, len);
    cfi_sha256_digest(&sha, digest);
    ck_assert_mem_eq(id.id, digest, sizeof digest);
    free(bytes);
    /* the v1 flavour is stamped too */
    char b_eh[4200];
    snprintf(b_eh, sizeof b_eh, "%s/B.eh_elf.so", dir);
    compile_cli(b, b_eh, "--abi", "v1");
    struct test_run run;
    test_run_cfisem((const char *[]){"validate", a, b_eh, "--abi", "v1", NULL},
                    &run);
    expect_stale_line(&run, b_eh, b, a);
    ck_assert_ptr_nonnull(strstr(run.err, "frame sha256"));
    test_run_free(&run);
    expect_exit((const char *[]){"validate", b, b_eh, "--abi", "v1", NULL}, 0,
                NULL);
    snprintf(command, sizeof command, "%s/scratch", dir);
    const char *made[] = {a, b, b_eh, section, command};
    for (size_t i = 0; i < 5; i++)
        unlink(made[i]);
    free(a);
    free(b);
    rmdir(dir);
    free(dir);
}
END_TEST

/* An eh_elf of ABI version 3 carries no stamp (test_unstamped_eh_elf_used):
 * it was used for any file; now it is refused, to be rebuilt. */
START_TEST(test_unstamped_eh_elf_used)
{
    char *dir = test_temp_dir();
    char *a = tiny_program(dir, "A", program_a, "-O1");
    char *old = tiny_so(dir, "unstamped",
        "#include <stdint.h>\n"
        "const char eh_elf_ident[] = \"cfisem eh_elf full\";\n"
        "const uint32_t eh_elf_abi_version = 3;\n"
        "int eh_elf_unwind(void) { return 1; }\n");
    char id[200], line[1024];
    object_id_text(a, id, sizeof id);
    snprintf(line, sizeof line,
             "cfisem: %s: carries no stamp of the file it was built from (ABI "
             "version 2 or 3): rebuild it for %s (%s)\n", old, a, id);
    const char *const commands[][9] = {
        {"validate", a, old, NULL},
        {"unwind", a, "--pc", "0x1000", "--engine", "compiled", "--eh-elf", old,
         NULL},
    };
    for (size_t k = 0; k < 2; k++) {
        struct test_run run;
        test_run_cfisem(commands[k], &run);
        ck_assert_msg(run.exit_code == 2, "%s: exit %d (%s)", commands[k][0],
                      run.exit_code, run.err);
        ck_assert_msg(!strcmp(run.err, line), "stderr:\n%s\nexpected:\n%s",
                      run.err, line);
        test_run_free(&run);
    }
    unlink(a);
    unlink(old);
    free(a);
    free(old);
    rmdir(dir);
    free(dir);
}
END_TEST

/* A cached eh_elf whose stamp is not its file's (test_stale_cache_entry_used):
 * the cache's name (path, size, modification time) kept a file rewritten
 * with its old size and time on its old eh_elf. */
START_TEST(test_stale_cache_entry_used)
{
    char *dir = test_temp_dir();
    char *a = tiny_program(dir, "A", program_a, "-O1");
    char *b = tiny_program(dir, "B", program_b, "-O1");
    char cache[4200], b_eh[4200];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(b_eh, sizeof b_eh, "%s/B.eh_elf.so", dir);
    compile_cli(b, b_eh, "--layout", "table");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_int_eq(cfi_file_open(a, &file, &diag), CFI_OK);
    struct cg_build_options options = {NULL, 1, true};
    char *entry = NULL;
    bool built = false;
    ck_assert_int_eq(cg_cached_eh_elf(file, cache, CG_ABI_FULL, &options,
                                      &entry, &built, &diag), CFI_OK);
    ck_assert(built);
    size_t len;
    char *bytes = test_read_file(b_eh, &len);
    ck_assert_int_eq(test_write_file(entry, bytes, len), 0);
    free(bytes);
    char *again = NULL;
    ck_assert_int_eq(cg_cached_eh_elf(file, cache, CG_ABI_FULL, &options,
                                      &again, &built, &diag), CFI_OK);
    ck_assert_msg(built, "the stale entry was used");
    ck_assert_str_eq(again, entry);
    struct eh_elf_object_id object, stamp;
    bool found;
    ck_assert_int_eq(cg_file_object_id(file, &object, &diag), CFI_OK);
    ck_assert_int_eq(cg_eh_elf_stamp(entry, &stamp, &found, &diag), CFI_OK);
    ck_assert(found && cg_object_id_equal(&stamp, &object));
    cfi_file_close(file);
    /* cfisem cache: the run-time library's cache, keyed by build-id */
    char out[4200], wanted[600], b_id[200];
    struct test_run run;
    test_run_cfisem((const char *[]){"cache", a, "--cache", cache, "--path",
                                     NULL},
                    &run);
    ck_assert_int_eq(run.exit_code, 0);
    char *arrow = strstr(run.out, " -> ");
    ck_assert_ptr_nonnull(arrow);
    snprintf(out, sizeof out, "%s", arrow + 4);
    out[strcspn(out, "\n")] = 0;
    test_run_free(&run);
    expect_exit((const char *[]){"cache", a, "--cache", cache, NULL}, 0,
                "(compiled)");
    bytes = test_read_file(b_eh, &len);
    ck_assert_int_eq(test_write_file(out, bytes, len), 0);
    free(bytes);
    object_id_text(b, b_id, sizeof b_id);
    snprintf(wanted, sizeof wanted,
             "(compiled; the eh_elf there was built from %s)", b_id);
    expect_exit((const char *[]){"cache", a, "--cache", cache, NULL}, 0,
                wanted);
    expect_exit((const char *[]){"cache", a, "--cache", cache, NULL}, 0,
                "(kept)");
    char command[9000];
    snprintf(command, sizeof command, "rm -rf '%s'", cache);
    ck_assert_int_eq(system(command), 0);
    unlink(a);
    unlink(b);
    unlink(b_eh);
    free(a);
    free(b);
    free(entry);
    free(again);
    rmdir(dir);
    free(dir);
}
END_TEST

/* Regression (cache_key_without_debug_file, found by make robust): the
 * name of a cached eh_elf was its file's alone, so that the file read
 * without its separate debug file (its .debug_frame there) and then with
 * it shared one eh_elf, built from the FDEs of the first: diff's compiled
 * engine found no FDE where il found the debug file's. */
START_TEST(test_cache_key_names_the_debug_file)
{
    char *dir = test_temp_dir();
    char *full = tiny_program(dir, "full", program_b,
                              "-O1 -g -fno-asynchronous-unwind-tables");
    char prog[4200], debug_dir[4200], command[20000];
    snprintf(prog, sizeof prog, "%s/prog", dir);
    snprintf(debug_dir, sizeof debug_dir, "%s/.debug", dir);
    snprintf(command, sizeof command,
             "mkdir -p '%s' && objcopy --only-keep-debug '%s' "
             "'%s/prog.debug' && objcopy --strip-debug "
             "--add-gnu-debuglink='%s/prog.debug' '%s' '%s'",
             debug_dir, full, debug_dir, debug_dir, full, prog);
    ck_assert_int_eq(system(command), 0);
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    struct cg_build_options options = {NULL, 1, true};
    struct cfi_diag diag;
    struct cfi_file *alone, *merged;
    ck_assert_int_eq(cfi_file_open(prog, &alone, &diag), CFI_OK);
    struct cfi_debug_search search = {NULL, 0};
    ck_assert_int_eq(cfi_file_open_debug(prog, &search, &merged, &diag),
                     CFI_OK);
    ck_assert_int_eq(merged->debug_state, CFI_DEBUG_FOUND);
    ck_assert_uint_gt(merged->nfdes, alone->nfdes);
    char *first = NULL, *second = NULL;
    bool built = false;
    ck_assert_int_eq(cg_cached_eh_elf(alone, cache, CG_ABI_FULL, &options,
                                      &first, &built, &diag), CFI_OK);
    ck_assert(built);
    ck_assert_int_eq(cg_cached_eh_elf(merged, cache, CG_ABI_FULL, &options,
                                      &second, &built, &diag), CFI_OK);
    ck_assert_msg(built && strcmp(first, second) != 0,
                  "with its debug file, the eh_elf built without it: %s",
                  second);
    /* each is found again under its own name */
    char *again = NULL;
    ck_assert_int_eq(cg_cached_eh_elf(merged, cache, CG_ABI_FULL, &options,
                                      &again, &built, &diag), CFI_OK);
    ck_assert(!built);
    ck_assert_str_eq(again, second);
    cfi_file_close(alone);
    cfi_file_close(merged);
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(command), 0);
    free(first);
    free(second);
    free(again);
    free(full);
    free(dir);
}
END_TEST

/* Regression (validate_eh_elf_dev_zero): `cfisem validate FILE
 * /dev/zero` read /dev/zero to the end, never; a FIFO blocked in open. */
START_TEST(test_load_not_regular_file)
{
    expect_load_error("/dev/zero", CFI_E_IO, "not a regular file");
    char *dir = test_temp_dir();
    char fifo[4200];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    expect_load_error(fifo, CFI_E_IO, "not a regular file");
    unlink(fifo);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_cli_compile)
{
    char *so = test_build_path("corpus/cases/signal.so");
    char *dir = test_temp_dir();
    char out[4200], c[4200];
    snprintf(out, sizeof out, "%s/signal.eh_elf.so", dir);
    snprintf(c, sizeof c, "%s/signal.c", dir);
    expect_exit((const char *[]){"compile", "--help", NULL}, 0,
                "usage: cfisem compile");
    expect_exit((const char *[]){"compile", NULL}, TEST_EXIT_USAGE,
                "missing FILE");
    expect_exit((const char *[]){"compile", so, NULL}, TEST_EXIT_USAGE,
                "missing -o");
    expect_exit((const char *[]){"compile", so, "-o", out, "--abi", "v2", NULL},
                TEST_EXIT_USAGE, "unknown ABI");
    expect_exit((const char *[]){"compile", so, "-o", out, "-j", "0", NULL},
                TEST_EXIT_USAGE, "bad job count");
    expect_exit((const char *[]){"compile", "/nonexistent", "-o", out, NULL}, 2,
                "/nonexistent");
    expect_exit((const char *[]){"compile", so, "-o", out, "--emit-c", c, "-j",
                                 "2", NULL},
                0, "eh_elf .text");
    ck_assert_int_eq(access(out, R_OK), 0);
    ck_assert_int_eq(access(c, R_OK), 0);
    /* the same answer as the IL evaluator, through unwind */
    const char *common[] = {"unwind", so, "--pc", "0x1003", "--regs",
                            "rsp=0x7ffe1000", "--mem-seed", "7"};
    struct test_run il, compiled;
    test_run_cfisem((const char *[]){common[0], common[1], common[2], common[3],
                                     common[4], common[5], common[6],
                                     common[7], "--engine", "il", NULL},
                    &il);
    test_run_cfisem((const char *[]){common[0], common[1], common[2], common[3],
                                     common[4], common[5], common[6],
                                     common[7], "--engine", "compiled",
                                     "--eh-elf", out, NULL},
                    &compiled);
    ck_assert_int_eq(il.exit_code, 0);
    ck_assert_int_eq(compiled.exit_code, 0);
    ck_assert_str_eq(il.out, compiled.out);
    test_run_free(&il);
    test_run_free(&compiled);
    unlink(out);
    unlink(c);
    rmdir(dir);
    free(dir);
    free(so);
}
END_TEST

/* Without --eh-elf, unwind builds one into the cache, then reuses it. */
START_TEST(test_cli_unwind_cache)
{
    char *so = test_build_path("corpus/cases/prologue.so");
    char *dir = test_temp_dir();
    setenv("XDG_CACHE_HOME", dir, 1);
    const char *args[] = {"unwind", so, "--pc", "0x1001", "--regs",
                          "rsp=0x7ffe1000", "--engine", "compiled", NULL};
    const char *il_args[] = {"unwind", so, "--pc", "0x1001", "--regs",
                             "rsp=0x7ffe1000", "--engine", "il", NULL};
    struct test_run first, second, il;
    test_run_cfisem(args, &first);
    test_run_cfisem(args, &second);
    test_run_cfisem(il_args, &il);
    ck_assert_msg(first.exit_code == 0, "%s", first.err);
    ck_assert_int_eq(second.exit_code, 0);
    ck_assert_str_eq(first.out, il.out);
    ck_assert_str_eq(second.out, il.out);
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/cfisem", dir);
    DIR *d = opendir(cache);
    ck_assert_ptr_nonnull(d);
    size_t files = 0;
    for (struct dirent *entry; (entry = readdir(d));)
        if (entry->d_name[0] != '.') {
            char path[8400];
            snprintf(path, sizeof path, "%s/%s", cache, entry->d_name);
            unlink(path);
            files++;
        }
    closedir(d);
    ck_assert_uint_eq(files, 1);
    rmdir(cache);
    rmdir(dir);
    test_run_free(&first);
    test_run_free(&second);
    test_run_free(&il);
    free(dir);
    free(so);
}
END_TEST

/* An FDE of .eh_frame at 0x1000 and one of .debug_frame at 2^63: the
 * leaves span 2^63 bytes, two of them. */
static const char far_fde_source[] =
    "    .text\n"
    "    .globl f\n"
    "f:\n"
    "    .cfi_startproc\n"
    "    push %rbp\n"
    "    .cfi_def_cfa_offset 16\n"
    "    pop %rbp\n"
    "    .cfi_def_cfa_offset 8\n"
    "    ret\n"
    "    .cfi_endproc\n"
    "    .section .debug_frame,\"\",@progbits\n"
    "    .long 1f - 0f\n"
    "0:  .long 0xffffffff\n"
    "    .byte 1\n"
    "    .string \"\"\n"
    "    .uleb128 1\n"
    "    .sleb128 -8\n"
    "    .byte 16\n"
    "    .byte 0x0c, 7, 8, 0x90, 1\n"
    "    .balign 8, 0\n"
    "1:  .long 3f - 2f\n"
    "2:  .long 0\n"
    "    .quad 0x8000000000000000\n"
    "    .quad 0x10\n"
    "    .byte 0x41, 0x0e, 16\n"
    "    .balign 8, 0\n"
    "3:\n";

/* Regression (table_layout_sized_by_span): the table layout sized its
 * leaf array by the address span's 64 KiB blocks even in the flat form,
 * 2^47 entries here: "out of memory", or an ASan abort. */
START_TEST(test_table_layout_sized_by_span)
{
    char *dir = test_temp_dir();
    char src[4200], so[4200], out[4200];
    snprintf(src, sizeof src, "%s/far.S", dir);
    snprintf(so, sizeof so, "%s/far.so", dir);
    snprintf(out, sizeof out, "%s/far.eh_elf.so", dir);
    ck_assert_int_eq(test_write_file(src, far_fde_source,
                                     strlen(far_fde_source)), 0);
    ck_assert_int_eq(run_cc("-shared -nostdlib -Wl,--section-start=.text=0x1000",
                            so, src), 0);
    const char *layouts[] = {"table", "tree"};
    for (size_t i = 0; i < 2; i++) {
        expect_exit((const char *[]){"compile", so, "-o", out, "--layout",
                                     layouts[i], NULL},
                    0, "eh_elf .text");
        expect_exit((const char *[]){"validate", so, out, NULL}, 0, NULL);
        struct test_run il, compiled;
        const char *pc = "0x8000000000000001";
        test_run_cfisem((const char *[]){"unwind", so, "--pc", pc, "--regs",
                                         "rsp=0x7ffe1000", "--engine", "il",
                                         NULL}, &il);
        test_run_cfisem((const char *[]){"unwind", so, "--pc", pc, "--regs",
                                         "rsp=0x7ffe1000", "--engine",
                                         "compiled", "--eh-elf", out, NULL},
                        &compiled);
        ck_assert_msg(il.exit_code == 0, "%s", il.err);
        ck_assert_msg(compiled.exit_code == 0, "%s", compiled.err);
        ck_assert_str_eq(il.out, compiled.out);
        ck_assert_ptr_nonnull(strstr(il.out, "cfa = 0x7ffe1010"));
        test_run_free(&il);
        test_run_free(&compiled);
        unlink(out);
    }
    unlink(so);
    unlink(src);
    rmdir(dir);
    free(dir);
}
END_TEST

/* Regression (validate_huge_text_section): a .text section header of
 * 758 GB (robust/findings/validate-huge-text) was walked address by
 * address for the gaps no FDE covers, and validate never ended. Its time
 * follows the FDEs and the per-gap cap now. */
START_TEST(test_validate_huge_text_section_ends)
{
    char *input = test_src_path("robust/findings/validate-huge-text/input");
    char *dir = test_temp_dir();
    char out[4200];
    snprintf(out, sizeof out, "%s/huge.eh_elf.so", dir);
    expect_exit((const char *[]){"compile", input, "-o", out, "--layout",
                                 "table", NULL},
                0, NULL);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    expect_exit((const char *[]){"validate", input, out, "--states", "1",
                                 NULL},
                0, "0 wrong ranges");
    clock_gettime(CLOCK_MONOTONIC, &end);
    ck_assert_int_lt(end.tv_sec - start.tv_sec, 60);
    unlink(out);
    rmdir(dir);
    free(dir);
    free(input);
}
END_TEST

/* Regression (error_result_fields_unset): an error result of the
 * compiled engine left signal_frame as the caller's memory had it, and
 * validate's child copied it: UBSan stopped every call ("load of value
 * 190 ... _Bool"). Every field of an error result is set. */
START_TEST(test_error_result_fields_unset)
{
    char *so = test_build_path("corpus/cases/prologue.so");
    char *dir = test_temp_dir();
    char out[4200];
    snprintf(out, sizeof out, "%s/prologue.eh_elf.so", dir);
    expect_exit((const char *[]){"compile", so, "-o", out, NULL}, 0, NULL);
    struct cg_eh_elf *eh = load(out);
    struct cfi_regs callee;
    cfi_regs_clear(&callee);
    struct engine_memory *memory = engine_memory_new(true, 1);
    /* 0x10: no FDE; 0x1001: the CFA register rsp is unknown */
    const uint64_t pcs[] = {0x10, 0x1001};
    for (size_t i = 0; i < 2; i++) {
        struct cfi_request request = {pcs[i], false, &callee,
                                      engine_memory_reader(memory), 0};
        struct cfi_frame frame;
        memset(&frame, 0xbe, sizeof frame);
        ck_assert_int_ne(cg_unwind(eh, &request, &frame), CFI_OK);
        unsigned char flag;
        memcpy(&flag, &frame.signal_frame, 1);
        ck_assert_uint_eq(flag, 0);
        ck_assert_uint_eq(frame.cfa, 0);
        for (unsigned r = 0; r < sizeof frame.caller.status; r++)
            ck_assert_uint_eq(frame.caller.status[r], CFI_REG_UNDEFINED);
    }
    engine_memory_free(memory);
    cg_unload(eh);
    unlink(out);
    rmdir(dir);
    free(dir);
    free(so);
}
END_TEST

/* ---- compile and validate through the command line ----------------- */

/* FILE compiled with `layout`, then validated: exit 0, and the JSON
 * report has no crashed call and no wrong range. */
static void compile_and_validate(const char *file, const char *dir,
                                 const char *layout)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char eh[4400], json[4400];
    snprintf(eh, sizeof eh, "%s/%s.%s.eh_elf.so", dir, base, layout);
    snprintf(json, sizeof json, "%s/%s.%s.json", dir, base, layout);
    struct test_run run;
    test_run_cfisem((const char *[]){"compile", file, "-o", eh, "--layout",
                                     layout, NULL}, &run);
    ck_assert_msg(run.exit_code == 0, "compile %s --layout %s: exit %d, signal "
                  "%d\n%s", file, layout, run.exit_code, run.signal, run.err);
    test_run_free(&run);
    test_run_cfisem((const char *[]){"validate", file, eh, "--states", "1",
                                     "--json", json, NULL}, &run);
    char *text = test_read_file(json, NULL);
    struct diff_json_error error;
    struct diff_json *report = text ? diff_json_parse(text, strlen(text), &error)
                                    : NULL;
    uint64_t crashes = 1, wrong = 1;
    ck_assert_msg(report &&
                      diff_json_u64(diff_json_member(report, "crashes"), &crashes) &&
                      diff_json_u64(diff_json_member(report, "wrong_ranges_total"),
                                    &wrong),
                  "validate %s (%s): no report; exit %d\n%s", file, layout,
                  run.exit_code, run.err);
    ck_assert_msg(crashes == 0 && wrong == 0 && run.exit_code == 0,
                  "validate %s (%s): %" PRIu64 " calls crashed, %" PRIu64
                  " wrong ranges, exit %d\n%.2000s\n%.2000s", file, layout,
                  crashes, wrong, run.exit_code, run.out, run.err);
    diff_json_free(report);
    free(text);
    test_run_free(&run);
}

/* Regression (validate_under_sanitizers_no_crashed_calls): under the
 * ASan+UBSan build ($CFISEM in make check-asan), validate's child
 * stopped at an error result's unset bool, and validate reported every
 * call crashed; only the command line on real files shows it. Small
 * system libraries and a test program, both layouts. */
START_TEST(test_validate_under_sanitizers_no_crashed_calls)
{
    static const char *const libs[] = {"libXau.so.6", "libdl.so.2",
                                       "libz.so.1", "libffi.so.8"};
    char *dir = test_temp_dir();
    unsigned files = 0;
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        char *lib = test_system_lib(libs[i]);
        for (unsigned l = 0; lib && l < 2; l++)
            compile_and_validate(lib, dir, l ? "table" : "tree");
        files += lib != NULL;
        free(lib);
    }
    char *program = test_build_path("bench/real_stacks");
    if (access(program, R_OK) == 0) {
        compile_and_validate(program, dir, "tree");
        compile_and_validate(program, dir, "table");
        files++;
    }
    ck_assert_uint_ge(files, 2);
    free(program);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("compile");
    TCase *files = tcase_create("compiled_vs_il");
    tcase_set_timeout(files, 900);
    tcase_add_loop_test(files, test_cases, 0, 2);
    tcase_add_loop_test(files, test_libc, 0, 2);
    tcase_add_loop_test(files, test_ld_so, 0, 2);
    tcase_add_loop_test(files, test_libstdcxx, 0, 2);
    tcase_add_loop_test(files, test_hand_rows, 0, 2);
    tcase_add_loop_test(files, test_overlaps_and_failures, 0, 2);
    tcase_add_test(files, test_table_dense_sub_blocks);
    suite_add_tcase(suite, files);
    TCase *a64 = tcase_create("aarch64");
    tcase_set_timeout(a64, 600);
    tcase_add_loop_test(a64, test_aarch64_cases, 0, 2);
    tcase_add_test(a64, test_aarch64_libc);
    tcase_add_test(a64, test_aarch64_shapes);
    tcase_add_test(a64, test_aarch64_runner_failures);
    tcase_add_test_raise_signal(a64, test_aarch64_runner_killed, SIGTERM);
    tcase_add_test(a64, test_aarch64_compiler_missing);
    tcase_add_test(a64, test_aarch64_cli_unwind);
    tcase_add_test(a64, test_aarch64_validate);
    suite_add_tcase(suite, a64);

    TCase *v1 = tcase_create("v1");
    tcase_set_timeout(v1, 900);
    tcase_add_test(v1, test_v1_cases);
    tcase_add_test(v1, test_v1_libc);
    tcase_add_loop_test(v1, test_hand_rows_v1, 0, 2);
    suite_add_tcase(suite, v1);
    TCase *c = tcase_create("generated_c");
    tcase_set_timeout(c, 900);
    tcase_add_test(c, test_c_warnings_hand_rows);
    tcase_add_test(c, test_c_warnings_cases);
    tcase_add_test(c, test_deterministic);
    tcase_add_test(c, test_declarations_match_header);
    suite_add_tcase(suite, c);
    TCase *load_cli = tcase_create("load_and_cli");
    tcase_set_timeout(load_cli, 300);
    tcase_add_test(load_cli, test_load_errors);
    tcase_add_loop_test(load_cli, test_direct_window, 0, 2);
    tcase_add_test(load_cli, test_load_not_regular_file);
    tcase_add_test(load_cli, test_cli_compile);
    tcase_add_test(load_cli, test_cli_unwind_cache);
    tcase_add_test(load_cli, test_table_layout_sized_by_span);
    tcase_add_test(load_cli, test_error_result_fields_unset);
    tcase_add_test(load_cli, test_validate_huge_text_section_ends);
    suite_add_tcase(suite, load_cli);
    TCase *stamp = tcase_create("stamp");
    tcase_set_timeout(stamp, 300);
    tcase_add_test(stamp, test_stale_eh_elf_refused);
    tcase_add_test(stamp, test_frame_sha256_stamp);
    tcase_add_test(stamp, test_unstamped_eh_elf_used);
    tcase_add_test(stamp, test_stale_cache_entry_used);
    tcase_add_test(stamp, test_cache_key_names_the_debug_file);
    suite_add_tcase(suite, stamp);
    TCase *sanitizers = tcase_create("validate_cli");
    tcase_set_timeout(sanitizers, 900);
    tcase_add_test(sanitizers, test_validate_under_sanitizers_no_crashed_calls);
    suite_add_tcase(suite, sanitizers);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
