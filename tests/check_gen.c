/* SPDX-License-Identifier: MIT */
/* check_gen.c — the generator (`cfisem gen`, gen/): for a range of seeds,
 * the generated .S is assembled and linked with the project's rule, and
 * `cfisem il` must print the generator's expectation byte for byte (the
 * rows, and the header lines: record offsets, CIEs, augmentations); the
 * interpreter and the IL evaluator must agree at every row of each file
 * (cfisem diff), and `cfisem unwind` with each at two PCs. Ill-formed programs: the other FDEs, and the one error
 * line. The same for AArch64 programs (--arch aarch64), built with the
 * cross compiler and compared with `cfisem il` only: the interpreter's
 * AArch64 opcodes are not all there yet. Also: the same seed gives the
 * same files, every opcode of the generator's lists occurs over the
 * seeds (AArch64's three vendor opcodes too, the negates inside
 * remember/restore nests), and the command line.
 *
 * When `cfisem il` and the expectation differ, one of the two statements
 * of the semantics is wrong: decide by DWARF 5 §6.4 and docs/semantics.md. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen/gen.h"
#include "gen/internal.h"
#include "tests/support.h"

/* Under ASan every cfisem process costs ~40 ms to start: fewer seeds
 * there (the generator itself still runs on COVERAGE_SEEDS programs). */
#if defined(__SANITIZE_ADDRESS__)
#define SEEDS 50
#define ILL_FORMED_SEEDS 20
#else
#define SEEDS 200
#define ILL_FORMED_SEEDS 60
#endif
#define COVERAGE_SEEDS 200
/* AArch64: each program costs a cross compiler run (~60 ms). */
#define A64_SEEDS 80
#define A64_ILL_FORMED_SEEDS 30

/* A generated program written to a fresh folder: paths and texts. */
struct built {
    char *dir, *asm_path, *so_path;
    char *expect;
    size_t expect_len;
};

static char *text_of(const struct gen_program *program,
                     void (*write)(const struct gen_program *, FILE *),
                     size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    ck_assert_ptr_nonnull(out);
    write(program, out);
    fclose(out);
    if (len)
        *len = n;
    return text;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

/* cc -shared -nostdlib ... -o so asm: the rule of corpus/cases (for
 * AArch64 the cross compiler's, as corpus/cases-aarch64's). ld 2.40
 * does not know AArch64's 0x2b and 0x2c and says so on stderr (no
 * .eh_frame_hdr table): its stderr goes to /dev/null. */
static int assemble(enum gen_arch arch, const char *asm_path,
                    const char *so_path)
{
    const char *cc = arch == GEN_ARCH_AARCH64 ? "aarch64-linux-gnu-gcc" : "cc";
    pid_t pid = fork();
    if (pid == 0) {
        if (arch == GEN_ARCH_AARCH64 && !freopen("/dev/null", "w", stderr))
            _exit(126);
        execlp(cc, cc, "-shared", "-nostdlib",
               "-Wl,--section-start=.text=0x1000", "-Wl,--build-id=none",
               "-o", so_path, asm_path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void build(const struct gen_options *options, struct built *b)
{
    struct gen_program *program;
    struct cfi_diag diag = {0};
    ck_assert_msg(gen_program_new(options, &program, &diag) == CFI_OK,
                  "seed %llu: %s", (unsigned long long)options->seed,
                  diag.message);
    b->dir = test_temp_dir();
    b->asm_path = join(b->dir, "gen.S");
    b->so_path = join(b->dir, "gen.so");
    size_t asm_len;
    char *asm_text = text_of(program, gen_write_asm, &asm_len);
    b->expect = text_of(program, gen_write_expect, &b->expect_len);
    gen_program_free(program);
    ck_assert_int_eq(test_write_file(b->asm_path, asm_text, asm_len), 0);
    free(asm_text);
    ck_assert_msg(assemble(options->arch, b->asm_path, b->so_path) == 0,
                  "seed %llu: cc failed on %s", (unsigned long long)options->seed,
                  b->asm_path);
}

static void built_free(struct built *b)
{
    unlink(b->asm_path);
    unlink(b->so_path);
    rmdir(b->dir);
    free(b->dir);
    free(b->asm_path);
    free(b->so_path);
    free(b->expect);
}

/* The first line where two texts differ, for the failure message. */
static void first_difference(const char *a, const char *b, char *out,
                             size_t size)
{
    size_t line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            la = a + 1;
            lb = b + 1;
        }
        a++;
        b++;
    }
    snprintf(out, size, "line %zu:\n  expected %.*s\n  cfisem   %.*s", line,
             (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
}

static void assert_il_matches(const struct built *b, uint64_t seed,
                              size_t stdout_len, int exit_code)
{
    const char *args[] = {"il", b->so_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    char where[1024] = "";
    if (run.out_len != stdout_len || memcmp(run.out, b->expect, stdout_len)) {
        char *expected = strndup(b->expect, stdout_len);
        first_difference(expected, run.out, where, sizeof where);
        free(expected);
    }
    ck_assert_msg(where[0] == '\0', "seed %llu: %s: %s",
                  (unsigned long long)seed, b->asm_path, where);
    ck_assert_msg(run.exit_code == exit_code, "seed %llu: exit %d: %s",
                  (unsigned long long)seed, run.exit_code, run.err);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* Unwinding: interp and the IL evaluator agree                         */
/* ------------------------------------------------------------------ */

/* Plausible stack and frame addresses: a rule that adds a small offset
 * to any of them reads memory without wrapping. */
static const char callee_regs[] =
    "rax=0x7ffe0100,rdx=0x7ffe0200,rcx=0x7ffe0300,rbx=0x7ffe0400,"
    "rsi=0x7ffe0500,rdi=0x7ffe0600,rbp=0x7ffe2000,rsp=0x7ffe1000,"
    "r8=0x7ffe0800,r9=0x7ffe0900,r10=0x7ffe3000,r11=0x7ffe0b00,"
    "r12=0x7ffe0c00,r13=0x7ffe0d00,r14=0x7ffe0e00,r15=0x7ffe0f00";

/* "error: memory" of "error: memory: memory fault ...": the class. */
static size_t class_len(const char *out)
{
    const char *colon = strchr(out + (strncmp(out, "error: ", 7) ? 0 : 7), ':');
    return colon ? (size_t)(colon - out) : strlen(out);
}

static void assert_engines_agree(const char *so, const char *pc, bool caller)
{
    const char *engines[2] = {"interp", "il"};
    struct test_run runs[2];
    for (int e = 0; e < 2; e++) {
        const char *args[] = {"unwind", so, "--pc", pc, "--regs", callee_regs,
                              "--engine", engines[e],
                              caller ? "--caller" : NULL, NULL};
        test_run_cfisem(args, &runs[e]);
    }
    ck_assert_msg(runs[0].exit_code == runs[1].exit_code,
                  "%s --pc %s: interp exit %d, il exit %d", so, pc,
                  runs[0].exit_code, runs[1].exit_code);
    if (runs[0].exit_code == 0) {
        ck_assert_msg(!strcmp(runs[0].out, runs[1].out),
                      "%s --pc %s%s: interp\n%s\nil\n%s", so, pc,
                      caller ? " --caller" : "", runs[0].out, runs[1].out);
    } else {
        /* Only a read that wraps past 2^64 faults in synthetic memory: a
         * CFA computed by a random expression near 0 or 2^64. The engines
         * must agree on the class; their messages are their own. */
        ck_assert_msg(runs[0].exit_code == 3 &&
                      !strncmp(runs[0].out, "error: memory:", 14),
                      "%s --pc %s: exit %d: %s", so, pc, runs[0].exit_code,
                      runs[0].out);
        ck_assert_msg(class_len(runs[0].out) == class_len(runs[1].out) &&
                      !strncmp(runs[0].out, runs[1].out, class_len(runs[0].out)),
                      "%s --pc %s: interp %s, il %s", so, pc, runs[0].out,
                      runs[1].out);
    }
    test_run_free(&runs[0]);
    test_run_free(&runs[1]);
}

/* The line after the one at p, or the end of the text. */
static const char *next_line(const char *p)
{
    p += strcspn(p, "\n");
    return *p ? p + 1 : p;
}

static void check_range(const char *so, const char *line)
{
    unsigned long long begin, end;
    ck_assert_int_eq(sscanf(line, "[0x%llx,0x%llx)", &begin, &end), 2);
    char pc[32];
    snprintf(pc, sizeof pc, "0x%llx", begin);
    assert_engines_agree(so, pc, false);
    snprintf(pc, sizeof pc, "0x%llx", begin + 1);
    assert_engines_agree(so, pc, true);
}

/* The interpreter against the IL evaluator at every row of the file, in
 * the diff harness's states (cfisem diff --engines interp: each row's
 * first and last address, one inside, the caller frame); then `cfisem
 * unwind` with each engine at one range of the section it looks in
 * first (.eh_frame when there is one), chosen from the seed: its first
 * byte, and its second byte as a return address. */
static void check_unwinds(const struct built *b, uint64_t seed)
{
    const char *args[] = {"diff", b->so_path, "--engines", "interp",
                          "--jobs", "1", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    const char *row = strstr(run.out, "\ninterp ");
    unsigned long long compared, agree;
    ck_assert_msg(run.exit_code == 0 && row &&
                  sscanf(row, "\ninterp %llu %llu", &compared, &agree) == 2 &&
                  compared > 0 && agree == compared,
                  "%s: cfisem diff exit %d:\n%s%s", b->so_path, run.exit_code,
                  run.out, run.err);
    test_run_free(&run);
    bool has_eh_frame = strstr(b->expect, "fde .eh_frame+") != NULL;
    const char *section = has_eh_frame ? ".eh_frame" : ".debug_frame";
    const char *ranges[4096];
    size_t n = 0;
    bool in_section = false;
    for (const char *p = b->expect; *p && n < 4096; p = next_line(p)) {
        if (!strncmp(p, "fde ", 4))
            in_section = !strncmp(p + 4, section, strlen(section));
        if (*p == '[' && in_section)
            ranges[n++] = p;
    }
    ck_assert_uint_gt(n, 0);
    check_range(b->so_path, ranges[seed % n]);
}

/* ------------------------------------------------------------------ */
/* Seeds                                                                */
/* ------------------------------------------------------------------ */

static void check_seed(struct gen_options *options)
{
    struct built b;
    build(options, &b);
    assert_il_matches(&b, options->seed, b.expect_len, 0);
    check_unwinds(&b, options->seed);
    built_free(&b);
}

START_TEST(seed_matches_il)
{
    struct gen_options options = {(uint64_t)_i, 0, GEN_SECTIONS_RANDOM, false,
                                  GEN_ARCH_X86_64};
    check_seed(&options);
}
END_TEST

static void check_ill_formed_seed(const struct gen_options *options)
{
    struct built b;
    build(options, &b);
    size_t stdout_len, error_len;
    const char *error;
    gen_expect_split(b.expect, &stdout_len, &error, &error_len);
    ck_assert_ptr_nonnull(error);
    assert_il_matches(&b, options->seed, stdout_len, 2);
    const char *args[] = {"il", b.so_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    char *expected = malloc(strlen(b.so_path) + error_len + 32);
    sprintf(expected, "cfisem: %s: %.*s\n", b.so_path, (int)error_len, error);
    ck_assert_str_eq(run.err, expected);
    free(expected);
    test_run_free(&run);
    built_free(&b);
}

START_TEST(ill_formed_seed_matches_il)
{
    struct gen_options options = {(uint64_t)_i, 0, GEN_SECTIONS_RANDOM, true,
                                  GEN_ARCH_X86_64};
    check_ill_formed_seed(&options);
}
END_TEST

/* AArch64: `cfisem il` only (see the top of the file). */
static void check_a64_seed(const struct gen_options *options)
{
    struct built b;
    build(options, &b);
    assert_il_matches(&b, options->seed, b.expect_len, 0);
    built_free(&b);
}

START_TEST(aarch64_seed_matches_il)
{
    struct gen_options options = {(uint64_t)_i, 0, GEN_SECTIONS_RANDOM, false,
                                  GEN_ARCH_AARCH64};
    check_a64_seed(&options);
}
END_TEST

START_TEST(aarch64_ill_formed_seed_matches_il)
{
    struct gen_options options = {(uint64_t)_i, 0, GEN_SECTIONS_RANDOM, true,
                                  GEN_ARCH_AARCH64};
    check_ill_formed_seed(&options);
}
END_TEST

/* Each section with 40 functions: CIEs of both keys shared, and an
 * .eh_frame that ld leaves as gas wrote it (0x2b, 0x2c). */
START_TEST(aarch64_sections_and_sizes)
{
    static const enum gen_sections sections[] = {
        GEN_SECTIONS_EH_FRAME, GEN_SECTIONS_DEBUG_FRAME, GEN_SECTIONS_BOTH};
    struct gen_options options = {2000 + (uint64_t)_i, 40, sections[_i],
                                  false, GEN_ARCH_AARCH64};
    check_a64_seed(&options);
}
END_TEST

/* Regression: ld 2.40 knows no 0x2b or 0x2c (skip_cfa_op) and then
 * leaves all of .eh_frame as gas wrote it: the trailing DW_CFA_nops of
 * a record stay, and no CIE is merged. Seed 50 (ill-formed) was the
 * first where the generator's layout, which dropped them, put an FDE
 * 4 bytes early. */
START_TEST(aarch64_ld_keeps_eh_frame_with_unknown_opcodes)
{
    struct gen_options options = {50, 0, GEN_SECTIONS_RANDOM, true,
                                  GEN_ARCH_AARCH64};
    check_ill_formed_seed(&options);
}
END_TEST

/* Each section choice and many functions, beyond the random mix. */
START_TEST(sections_and_sizes)
{
    static const enum gen_sections sections[] = {
        GEN_SECTIONS_EH_FRAME, GEN_SECTIONS_DEBUG_FRAME, GEN_SECTIONS_BOTH};
    struct gen_options options = {1000 + (uint64_t)_i, 0, sections[_i % 3],
                                  false, GEN_ARCH_X86_64};
    options.nfdes = _i < 3 ? 40 : 1;
    check_seed(&options);
}
END_TEST

/* Regression: gas writes one CIE per personality routine, but ld
 * compares a local personality by its relocation's symbol (.text, for
 * any label of .text) and merges such CIEs: the FDEs of the second CIE
 * then name the first one, and its personality routine. The first seeds
 * where that happens must match too. */
START_TEST(ld_merges_cies_of_local_personalities)
{
    unsigned found = 0;
    for (uint64_t seed = 0; seed < 3000 && found < 3; seed++) {
        struct gen_options options = {seed, 0, GEN_SECTIONS_RANDOM, false,
                                      GEN_ARCH_X86_64};
        struct gen_program *program;
        ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
        struct gen_stats stats;
        gen_program_stats(program, &stats);
        gen_program_free(program);
        if (stats.eh_frame_cies_merged == 0)
            continue;
        check_seed(&options);
        found++;
    }
    ck_assert_uint_eq(found, 3);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Determinism and coverage                                             */
/* ------------------------------------------------------------------ */

START_TEST(same_seed_same_files)
{
    struct gen_options options = {(uint64_t)_i * 7919, 0, GEN_SECTIONS_RANDOM,
                                  _i % 2 == 1,
                                  _i % 4 >= 2 ? GEN_ARCH_AARCH64
                                              : GEN_ARCH_X86_64};
    char *texts[2][2];
    size_t lens[2][2];
    for (int k = 0; k < 2; k++) {
        struct gen_program *program;
        ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
        texts[k][0] = text_of(program, gen_write_asm, &lens[k][0]);
        texts[k][1] = text_of(program, gen_write_expect, &lens[k][1]);
        gen_program_free(program);
    }
    for (int w = 0; w < 2; w++) {
        ck_assert_uint_eq(lens[0][w], lens[1][w]);
        ck_assert(memcmp(texts[0][w], texts[1][w], lens[0][w]) == 0);
        free(texts[0][w]);
        free(texts[1][w]);
    }
}
END_TEST

/* The first line of the .S names the options that give it back. */
START_TEST(header_options_give_the_same_program)
{
    struct gen_options options = {(uint64_t)_i + 40, 0, GEN_SECTIONS_RANDOM,
                                  false, _i % 2 ? GEN_ARCH_AARCH64
                                                : GEN_ARCH_X86_64};
    struct gen_program *program;
    ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
    char *first = text_of(program, gen_write_asm, NULL);
    gen_program_free(program);
    unsigned fdes;
    char section[16], arch[16] = "";
    ck_assert_int_ge(sscanf(first, "/* cfisem gen --seed %*u --fdes %u "
                                   "--section %15s --arch %15s",
                            &fdes, section, arch), 2);
    ck_assert_str_eq(arch, _i % 2 ? "aarch64" : "");
    options = (struct gen_options){options.seed, 0, GEN_SECTIONS_RANDOM, false,
                                   strcmp(arch, "aarch64") == 0
                                       ? GEN_ARCH_AARCH64 : GEN_ARCH_X86_64};
    options.nfdes = fdes;
    options.sections = !strcmp(section, "both") ? GEN_SECTIONS_BOTH
                     : !strcmp(section, "debug_frame") ? GEN_SECTIONS_DEBUG_FRAME
                                                       : GEN_SECTIONS_EH_FRAME;
    ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
    char *second = text_of(program, gen_write_asm, NULL);
    gen_program_free(program);
    ck_assert_str_eq(first, second);
    free(first);
    free(second);
}
END_TEST

static void add_stats(struct gen_stats *total, const struct gen_stats *s)
{
    for (int i = 0; i < 256; i++) {
        total->cfa_ops[i] += s->cfa_ops[i];
        total->dw_ops[i] += s->dw_ops[i];
    }
    total->eh_frame_cies += s->eh_frame_cies;
    total->eh_frame_fdes += s->eh_frame_fdes;
    total->debug_frame_cies += s->debug_frame_cies;
    total->debug_frame_fdes += s->debug_frame_fdes;
    if (s->max_remember_depth > total->max_remember_depth)
        total->max_remember_depth = s->max_remember_depth;
    total->simple_fdes += s->simple_fdes;
    total->personality_fdes += s->personality_fdes;
    total->lsda_fdes += s->lsda_fdes;
    total->signal_fdes += s->signal_fdes;
}

START_TEST(every_opcode_occurs)
{
    struct gen_stats total = {0};
    unsigned section_kinds[3] = {0};
    for (uint64_t seed = 0; seed < COVERAGE_SEEDS; seed++) {
        struct gen_options options = {seed, 0, GEN_SECTIONS_RANDOM, false,
                                      GEN_ARCH_X86_64};
        struct gen_program *program;
        ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
        struct gen_stats stats;
        gen_program_stats(program, &stats);
        add_stats(&total, &stats);
        section_kinds[(stats.eh_frame_fdes > 0) + 2 * (stats.debug_frame_fdes > 0) - 1]++;
        gen_program_free(program);
    }
    static const unsigned cfa[] = {
#define CFA_OPCODE(name, opcode, shape, weight) opcode,
        GEN_CFA_OPS(CFA_OPCODE)
#undef CFA_OPCODE
        GEN_CFA_advance_loc, GEN_CFA_advance_loc1, GEN_CFA_advance_loc2,
        GEN_CFA_advance_loc4};
    for (size_t i = 0; i < sizeof cfa / sizeof cfa[0]; i++)
        ck_assert_msg(total.cfa_ops[cfa[i]] > 0, "no %s over %d seeds",
                      gen_cfa_op_name(cfa[i]), COVERAGE_SEEDS);
    for (int k = 0; k < GEN_OP_COUNT; k++) {
        unsigned n = 0;
        for (unsigned j = 0; j < gen_dw_ops[k].count; j++)
            n += total.dw_ops[gen_dw_ops[k].first + j];
        ck_assert_msg(n > 0, "no DW_OP_%s over %d seeds", gen_dw_ops[k].name,
                      COVERAGE_SEEDS);
    }
    for (int k = 0; k < 3; k++)
        ck_assert_uint_gt(section_kinds[k], 0);
    ck_assert_uint_eq(total.max_remember_depth, 64);
    ck_assert_uint_gt(total.simple_fdes, 0);
    ck_assert_uint_gt(total.personality_fdes, 0);
    ck_assert_uint_gt(total.lsda_fdes, 0);
    ck_assert_uint_gt(total.signal_fdes, 0);
    /* CIEs are shared, and not all FDEs share one */
    ck_assert_uint_lt(total.eh_frame_cies, total.eh_frame_fdes);
    ck_assert_uint_gt(total.eh_frame_cies, section_kinds[0] + section_kinds[2]);
}
END_TEST

/* AArch64: the same opcodes, and its three vendor opcodes, inside
 * remember/restore nests too; both keys; the states 1 and 2 both. */
START_TEST(aarch64_every_opcode_occurs)
{
    struct gen_stats total = {0};
    unsigned nested = 0, b_key = 0;
    for (uint64_t seed = 0; seed < COVERAGE_SEEDS; seed++) {
        struct gen_options options = {seed, 0, GEN_SECTIONS_RANDOM, false,
                                      GEN_ARCH_AARCH64};
        struct gen_program *program;
        ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
        struct gen_stats stats;
        gen_program_stats(program, &stats);
        add_stats(&total, &stats);
        nested += stats.nested_ra_state_ops;
        b_key += stats.b_key_fdes;
        gen_program_free(program);
    }
    static const unsigned cfa[] = {
#define CFA_OPCODE(name, opcode, shape, weight) opcode,
        GEN_CFA_OPS(CFA_OPCODE)
        GEN_A64_OPS(CFA_OPCODE)
#undef CFA_OPCODE
        GEN_CFA_advance_loc, GEN_CFA_advance_loc1, GEN_CFA_advance_loc2,
        GEN_CFA_advance_loc4};
    for (size_t i = 0; i < sizeof cfa / sizeof cfa[0]; i++)
        ck_assert_msg(total.cfa_ops[cfa[i]] > 0, "no 0x%02x over %d seeds",
                      cfa[i], COVERAGE_SEEDS);
    ck_assert_uint_eq(total.max_remember_depth, 64);
    ck_assert_uint_gt(nested, 0);
    ck_assert_uint_gt(b_key, 0);
    ck_assert_uint_lt(b_key, total.eh_frame_fdes + total.debug_frame_fdes);
    ck_assert_uint_gt(total.simple_fdes, 0);
    ck_assert_uint_gt(total.signal_fdes, 0);
}
END_TEST

/* The states the expectation writes: 0 (back from a toggle), 1 and 2. */
START_TEST(aarch64_expectations_name_every_state)
{
    bool seen[3] = {false, false, false};
    for (uint64_t seed = 0; seed < 20; seed++) {
        struct gen_options options = {seed, 0, GEN_SECTIONS_RANDOM, false,
                                      GEN_ARCH_AARCH64};
        struct gen_program *program;
        ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
        char *expect = text_of(program, gen_write_expect, NULL);
        gen_program_free(program);
        ck_assert_ptr_nonnull(strstr(expect, " caf=4 daf=-8 "));
        ck_assert_ptr_null(strstr(expect, " caf=1 "));
        for (int k = 0; k < 3; k++) {
            char state[48];
            snprintf(state, sizeof state, "ra_sign_state=expr(lit%d)", k);
            seen[k] = seen[k] || strstr(expect, state) != NULL;
        }
        free(expect);
    }
    ck_assert(seen[0] && seen[1] && seen[2]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The command line                                                     */
/* ------------------------------------------------------------------ */

struct cli_case {
    const char *args[8];
    int exit_code;
    const char *stderr_has;
};

static const struct cli_case cli_cases[] = {
    {{"gen", "-o", "x.S", NULL}, TEST_EXIT_USAGE, "missing --seed"},
    {{"gen", "--seed", "3", NULL}, TEST_EXIT_USAGE, "missing -o OUT.S"},
    {{"gen", "--seed", "x3", "-o", "x.S", NULL}, TEST_EXIT_USAGE, "bad seed x3"},
    {{"gen", "--seed", "3", "-o", "-", "--fdes", "0", NULL}, TEST_EXIT_USAGE, "--fdes takes 1 to 64"},
    {{"gen", "--seed", "3", "-o", "-", "--fdes", "65", NULL}, TEST_EXIT_USAGE, "--fdes takes 1 to 64"},
    {{"gen", "--seed", "3", "-o", "-", "--section", "text", NULL}, TEST_EXIT_USAGE, "unknown section text"},
    {{"gen", "--seed", "3", "-o", "-", "--bogus", NULL}, TEST_EXIT_USAGE, "unknown option --bogus"},
    {{"gen", "--seed", "3", "-o", "-", "--arch", "arm", NULL}, TEST_EXIT_USAGE, "unknown architecture arm"},
    {{"gen", "--seed", "3", "-o", NULL}, TEST_EXIT_USAGE, "missing value for -o"},
    {{"gen", "--seed", "3", "-o", "/nonexistent/dir/x.S", NULL}, 2, "cannot write"},
};

START_TEST(cli_errors)
{
    const struct cli_case *c = &cli_cases[_i];
    struct test_run run;
    test_run_cfisem(c->args, &run);
    ck_assert_msg(run.exit_code == c->exit_code, "exit %d: %s", run.exit_code,
                  run.err);
    ck_assert_msg(strstr(run.err, c->stderr_has) != NULL, "stderr: %s", run.err);
    ck_assert_uint_eq(test_count_lines(run.err), 1);
    test_run_free(&run);
}
END_TEST

START_TEST(cli_help)
{
    const char *args[] = {"gen", "--help", NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_ptr_nonnull(strstr(run.out, "usage: cfisem gen --seed S -o OUT.S"));
    ck_assert_ptr_nonnull(strstr(run.out, "--ill-formed"));
    ck_assert_ptr_nonnull(strstr(run.out, "--arch x86-64|aarch64"));
    test_run_free(&run);
}
END_TEST

/* The command writes what the library writes; -o - is stdout. */
START_TEST(cli_writes_the_program)
{
    char *dir = test_temp_dir();
    char *expect_path = join(dir, "x.il");
    const char *args[] = {"gen", "--seed", "77", "--section", "both", "-o", "-",
                          "--expect", expect_path, NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    ck_assert_uint_eq(run.err_len, 0);
    struct gen_options options = {77, 0, GEN_SECTIONS_BOTH, false,
                                  GEN_ARCH_X86_64};
    struct gen_program *program;
    ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
    char *asm_text = text_of(program, gen_write_asm, NULL);
    char *expect = text_of(program, gen_write_expect, NULL);
    gen_program_free(program);
    ck_assert_str_eq(run.out, asm_text);
    char *written = test_read_file(expect_path, NULL);
    ck_assert_ptr_nonnull(written);
    ck_assert_str_eq(written, expect);
    ck_assert_ptr_nonnull(strstr(expect, "fde .debug_frame+"));
    free(written);
    free(asm_text);
    free(expect);
    test_run_free(&run);
    unlink(expect_path);
    rmdir(dir);
    free(expect_path);
    free(dir);
}
END_TEST

/* --arch aarch64 writes the AArch64 program of the library. */
START_TEST(cli_arch_aarch64)
{
    const char *args[] = {"gen", "--seed", "5", "--arch", "aarch64", "-o", "-",
                          NULL};
    struct test_run run;
    test_run_cfisem(args, &run);
    ck_assert_int_eq(run.exit_code, 0);
    struct gen_options options = {5, 0, GEN_SECTIONS_RANDOM, false,
                                  GEN_ARCH_AARCH64};
    struct gen_program *program;
    ck_assert_int_eq(gen_program_new(&options, &program, NULL), CFI_OK);
    char *asm_text = text_of(program, gen_write_asm, NULL);
    gen_program_free(program);
    ck_assert_str_eq(run.out, asm_text);
    ck_assert_ptr_nonnull(strstr(asm_text, " --arch aarch64"));
    ck_assert_ptr_nonnull(strstr(asm_text, "aarch64-linux-gnu-gcc"));
    ck_assert_ptr_null(strstr(asm_text, "%r"));
    free(asm_text);
    test_run_free(&run);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gen");
    TCase *t = tcase_create("seeds");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, seed_matches_il, 0, SEEDS);
    tcase_add_loop_test(t, ill_formed_seed_matches_il, 0, ILL_FORMED_SEEDS);
    tcase_add_loop_test(t, sections_and_sizes, 0, 6);
    tcase_add_test(t, ld_merges_cies_of_local_personalities);
    suite_add_tcase(s, t);

    t = tcase_create("seeds aarch64");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, aarch64_seed_matches_il, 0, A64_SEEDS);
    tcase_add_loop_test(t, aarch64_ill_formed_seed_matches_il, 0,
                        A64_ILL_FORMED_SEEDS);
    tcase_add_loop_test(t, aarch64_sections_and_sizes, 0, 3);
    tcase_add_test(t, aarch64_ld_keeps_eh_frame_with_unknown_opcodes);
    suite_add_tcase(s, t);

    t = tcase_create("generator");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, same_seed_same_files, 0, 20);
    tcase_add_loop_test(t, header_options_give_the_same_program, 0, 10);
    tcase_add_test(t, every_opcode_occurs);
    tcase_add_test(t, aarch64_every_opcode_occurs);
    tcase_add_test(t, aarch64_expectations_name_every_state);
    suite_add_tcase(s, t);

    t = tcase_create("command line");
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, cli_errors, 0,
                        (int)(sizeof cli_cases / sizeof cli_cases[0]));
    tcase_add_test(t, cli_help);
    tcase_add_test(t, cli_writes_the_program);
    tcase_add_test(t, cli_arch_aarch64);
    suite_add_tcase(s, t);

    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
