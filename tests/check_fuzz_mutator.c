/* SPDX-License-Identifier: MIT */
/* check_fuzz_mutator.c — the structured mutator (fuzz/mutator/) keeps its
 * promises on the committed seeds (fuzz/seeds/):
 *   - the same input and seed give the same mutant, for every shape;
 *   - a structural mutation of a frame section leaves records whose
 *     lengths tile the section exactly, and when it neither added nor
 *     removed an FDE, every FDE still covers the address it covered
 *     (CIE pointers and pc-relative pc_begin fixed after bytes moved);
 *   - most structured mutants still load (cfi_file_from_section,
 *     cfi_file_open), more than the plain byte mutations' do;
 *   - the AFL++ entry points (afl_custom_init, _fuzz, _deinit) give a
 *     mutant within AFL's size bound. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "fuzz/mutator/structured.h"
#include "fuzz/targets.h"
#include "support.h"

enum { MAX_SEEDS = 128, CAPACITY = 1 << 18, HEADER = FUZZ_CFI_HEADER_SIZE };

/* AFL++'s interface, as fuzz/mutator/afl.c defines it. */
void *afl_custom_init(void *afl, unsigned int seed);
size_t afl_custom_fuzz(void *data, uint8_t *buf, size_t buf_size,
                       uint8_t **out_buf, uint8_t *add_buf,
                       size_t add_buf_size, size_t max_size);
void afl_custom_deinit(void *data);

struct seeds {
    uint8_t *bytes[MAX_SEEDS];
    size_t size[MAX_SEEDS];
    size_t n;
};

static void read_seeds(const char *folder, struct seeds *s)
{
    char rel[64];
    snprintf(rel, sizeof rel, "fuzz/seeds/%s", folder);
    char *dir = test_src_path(rel);
    ck_assert_ptr_nonnull(dir);
    DIR *d = opendir(dir);
    ck_assert_msg(d, "cannot read %s", dir);
    s->n = 0;
    for (struct dirent *e; (e = readdir(d)) && s->n < MAX_SEEDS;) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *in = fopen(path, "rb");
        ck_assert_msg(in, "cannot read %s", path);
        uint8_t *b = malloc(CAPACITY);
        ck_assert_ptr_nonnull(b);
        s->size[s->n] = fread(b, 1, CAPACITY, in);
        s->bytes[s->n++] = b;
        fclose(in);
    }
    closedir(d);
    free(dir);
    ck_assert_uint_gt(s->n, 0);
}

static void free_seeds(struct seeds *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->bytes[i]);
}

/* The records' lengths take the section from its start exactly to its
 * end (a zero length, .eh_frame's terminator, included). */
static bool records_tile(const uint8_t *b, size_t size)
{
    size_t at = 0;
    while (at < size) {
        if (size - at < 4)
            return false;
        uint64_t len = cfi_load_le(b + at, 4);
        size_t head = 4;
        if (len == 0xffffffff) {
            if (size - at < 12)
                return false;
            len = cfi_load_le(b + at + 4, 8);
            head = 12;
        }
        if (len > size - at - head)
            return false;
        at += head + (size_t)len;
    }
    return true;
}

static struct cfi_file *load_section(const uint8_t *d, size_t size)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag;
    if (size < HEADER ||
        cfi_file_from_section(d + HEADER, size - HEADER,
                              d[0] & FUZZ_CFI_DEBUG_FRAME ? CFI_DEBUG_FRAME
                                                          : CFI_EH_FRAME,
                              cfi_load_le(d + 12, 4), &file, &diag) != CFI_OK)
        return NULL;
    return file;
}

/* Both files have the same FDEs' pc_begin, in order (cfi/ sorts them). */
static bool same_starts(const struct cfi_file *a, const struct cfi_file *b)
{
    if (a->nfdes != b->nfdes)
        return false;
    for (size_t i = 0; i < a->nfdes; i++)
        if (a->fdes[i].pc_begin != b->fdes[i].pc_begin ||
            a->fdes[i].pc_end - a->fdes[i].pc_begin !=
                b->fdes[i].pc_end - b->fdes[i].pc_begin)
            return false;
    return true;
}

START_TEST(test_deterministic)
{
    static const char *const folders[] = {"cfi_bytes", "elf", "oracles"};
    static const enum fuzz_shape shapes[] = {
        FUZZ_SHAPE_CFI_BYTES, FUZZ_SHAPE_ELF, FUZZ_SHAPE_ORACLES};
    uint8_t *a = malloc(CAPACITY), *b = malloc(CAPACITY);
    ck_assert(a && b);
    for (int k = 0; k < 3; k++) {
        struct seeds s;
        read_seeds(folders[k], &s);
        size_t changed = 0, total = 0;
        for (size_t i = 0; i < s.n; i++)
            for (uint64_t seed = 0; seed < 20; seed++) {
                memcpy(a, s.bytes[i], s.size[i]);
                memcpy(b, s.bytes[i], s.size[i]);
                size_t na = fuzz_mutator_structured(shapes[k], a, s.size[i],
                                                    CAPACITY, seed, NULL);
                size_t nb = fuzz_mutator_structured(shapes[k], b, s.size[i],
                                                    CAPACITY, seed, NULL);
                ck_assert_uint_le(na, CAPACITY);
                ck_assert_msg(na == nb && memcmp(a, b, na) == 0,
                              "%s seed %zu, mutation %llu: two mutants",
                              folders[k], i, (unsigned long long)seed);
                total++;
                changed += na != s.size[i] || memcmp(a, s.bytes[i], na);
            }
        /* a mutator that does nothing would pass the above */
        ck_assert_msg(changed * 10 >= total * 9, "%s: %zu of %zu changed",
                      folders[k], changed, total);
        free_seeds(&s);
    }
    free(a);
    free(b);
}
END_TEST

START_TEST(test_structure_consistent)
{
    struct seeds s;
    read_seeds("cfi_bytes", &s);
    uint8_t *m = malloc(CAPACITY);
    ck_assert_ptr_nonnull(m);
    size_t structural = 0, loaded = 0, same_fdes = 0;
    for (uint64_t seed = 0; seed < 4000; seed++) {
        size_t i = seed % s.n;
        if (!records_tile(s.bytes[i] + HEADER, s.size[i] - HEADER))
            continue;
        memcpy(m, s.bytes[i], s.size[i]);
        enum fuzz_mutation what;
        size_t n = fuzz_mutator_structured(FUZZ_SHAPE_CFI_BYTES, m, s.size[i],
                                           CAPACITY, seed, &what);
        if (what != FUZZ_MUT_STRUCTURE)
            continue;
        structural++;
        ck_assert_msg(n >= HEADER && records_tile(m + HEADER, n - HEADER),
                      "seed %zu, mutation %llu: the records do not tile",
                      i, (unsigned long long)seed);
        struct cfi_file *before = load_section(s.bytes[i], s.size[i]);
        struct cfi_file *after = load_section(m, n);
        loaded += after != NULL;
        if (before && after && before->nfdes == after->nfdes) {
            ck_assert_msg(same_starts(before, after),
                          "seed %zu, mutation %llu: an FDE moved", i,
                          (unsigned long long)seed);
            same_fdes++;
        }
        cfi_file_close(before);
        cfi_file_close(after);
    }
    ck_assert_uint_gt(structural, 1000);
    ck_assert_uint_gt(same_fdes, structural / 4);
    ck_assert_msg(loaded * 10 >= structural * 7,
                  "%zu of %zu structural mutants load", loaded, structural);
    free(m);
    free_seeds(&s);
}
END_TEST

/* The share of mutants that load, structured or byte-wise (a byte, a bit
 * or a block changed at random: the mutations libFuzzer starts with). */
static void loaded_share(const struct seeds *s, bool structured,
                         size_t *loaded, size_t *total)
{
    uint8_t *m = malloc(CAPACITY);
    ck_assert_ptr_nonnull(m);
    *loaded = *total = 0;
    for (uint64_t seed = 0; seed < 2000; seed++) {
        size_t i = seed % s->n, n = s->size[i];
        memcpy(m, s->bytes[i], n);
        if (structured) {
            n = fuzz_mutator_structured(FUZZ_SHAPE_CFI_BYTES, m, n, CAPACITY,
                                        seed, NULL);
        } else {   /* one byte of the section, at random */
            size_t at = HEADER + (size_t)(seed * 2654435761u % (n - HEADER));
            m[at] ^= (uint8_t)(1u + seed % 255);
        }
        struct cfi_file *file = load_section(m, n);
        *loaded += file != NULL;
        *total += 1;
        cfi_file_close(file);
    }
    free(m);
}

START_TEST(test_mostly_loadable)
{
    struct seeds s;
    read_seeds("cfi_bytes", &s);
    size_t structured, bytes, total;
    loaded_share(&s, true, &structured, &total);
    ck_assert_msg(structured * 10 >= total * 6,
                  "%zu of %zu structured mutants load", structured, total);
    loaded_share(&s, false, &bytes, &total);
    ck_assert_msg(structured > bytes, "structured %zu, bytes %zu",
                  structured, bytes);
    free_seeds(&s);
}
END_TEST

START_TEST(test_afl_interface)
{
    struct seeds s;
    read_seeds("elf", &s);
    void *mutator = afl_custom_init(NULL, 7);
    ck_assert_ptr_nonnull(mutator);
    size_t changed = 0;
    for (size_t i = 0; i < s.n; i++) {
        uint8_t *out = NULL;
        size_t max = s.size[i] + 64;
        size_t n = afl_custom_fuzz(mutator, s.bytes[i], s.size[i], &out,
                                   NULL, 0, max);
        ck_assert_ptr_nonnull(out);
        ck_assert_uint_le(n, max);
        changed += n != s.size[i] || memcmp(out, s.bytes[i], n) != 0;
    }
    ck_assert_uint_gt(changed, s.n / 2);
    afl_custom_deinit(mutator);
    free_seeds(&s);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("fuzz_mutator");
    TCase *tc = tcase_create("mutator");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_structure_consistent);
    tcase_add_test(tc, test_mostly_loadable);
    tcase_add_test(tc, test_afl_interface);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? 1 : 0;
}
