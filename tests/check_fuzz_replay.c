/* SPDX-License-Identifier: MIT */
/* check_fuzz_replay.c — every saved fuzz input still passes: the seeds
 * (fuzz/seeds/) and the findings (fuzz/findings/) of harnesses 1 and 2
 * are run through the targets the harnesses run (fuzz/targets.h), once
 * each, deterministically. A crash or a sanitizer report fails the input's
 * test (fork mode); a disagreement between the engines fails it with the
 * target's report.
 *
 * Harness 3's inputs are not replayed: a crash there is inside an outside
 * library, documented in fuzz/findings/README.md, not a regression of
 * ours. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/targets.h"
#include "support.h"

enum harness { CFI_BYTES, ELF };

struct input {
    enum harness harness;
    char *path;
};

/* The inputs, gathered before the suite is built (one loop test each). */
static struct input *inputs;
static size_t ninputs, capacity, seeds[2];

static void add_input(enum harness harness, const char *path)
{
    if (ninputs == capacity) {
        capacity = capacity ? capacity * 2 : 256;
        inputs = realloc(inputs, capacity * sizeof *inputs);
        if (!inputs)
            abort();
    }
    inputs[ninputs].harness = harness;
    inputs[ninputs].path = strdup(path);
    ninputs++;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file under `dir` (recursively; README files and dot
 * files excepted), in sorted order. */
static size_t gather(enum harness harness, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **names = NULL;
    size_t count = 0, found = 0;
    for (struct dirent *entry; (entry = readdir(d));) {
        if (entry->d_name[0] == '.' || !strncmp(entry->d_name, "README", 6))
            continue;
        names = realloc(names, (count + 1) * sizeof *names);
        size_t len = strlen(dir) + strlen(entry->d_name) + 2;
        names[count] = malloc(len);
        snprintf(names[count++], len, "%s/%s", dir, entry->d_name);
    }
    closedir(d);
    if (count)
        qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            found += gather(harness, names[i]);
        } else if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            add_input(harness, names[i]);
            found++;
        }
        free(names[i]);
    }
    free(names);
    return found;
}

START_TEST(test_replay)
{
    const struct input *input = &inputs[_i];
    size_t size;
    char *bytes = test_read_file(input->path, &size);
    ck_assert_msg(bytes != NULL, "cannot read %s", input->path);
    struct fuzz_context context;
    ck_assert_int_eq(fuzz_context_open(&context), FUZZ_OK);
    struct fuzz_report *report = calloc(1, sizeof *report);
    ck_assert_ptr_nonnull(report);
    enum fuzz_result result =
        input->harness == CFI_BYTES
            ? fuzz_one_cfi_bytes((const uint8_t *)bytes, size, report)
            : fuzz_one_elf(&context, (const uint8_t *)bytes, size, report);
    ck_assert_msg(result == FUZZ_OK, "%s: %s", input->path,
                  result == FUZZ_SETUP ? "the harness could not run"
                                       : report->text);
    free(report);
    fuzz_context_close(&context);
    free(bytes);
}
END_TEST

/* The seeds are committed: their absence is a broken tree. */
START_TEST(test_seeds_present)
{
    ck_assert_msg(seeds[CFI_BYTES] >= 10, "fuzz/seeds/cfi_bytes: %zu files",
                  seeds[CFI_BYTES]);
    ck_assert_msg(seeds[ELF] >= 10, "fuzz/seeds/elf: %zu files", seeds[ELF]);
}
END_TEST

int main(void)
{
    static const struct {
        enum harness harness;
        const char *seeds, *findings;
    } folders[] = {
        {CFI_BYTES, "fuzz/seeds/cfi_bytes", "fuzz/findings/cfi_bytes"},
        {ELF, "fuzz/seeds/elf", "fuzz/findings/elf"},
    };
    size_t findings = 0;
    for (size_t i = 0; i < 2; i++) {
        char *path = test_src_path(folders[i].seeds);
        seeds[folders[i].harness] = gather(folders[i].harness, path);
        free(path);
        path = test_src_path(folders[i].findings);
        findings += gather(folders[i].harness, path);
        free(path);
    }
    printf("fuzz replay: %zu seeds of fuzz_cfi_bytes, %zu of fuzz_elf, "
           "%zu findings\n", seeds[CFI_BYTES], seeds[ELF], findings);
    Suite *suite = suite_create("fuzz_replay");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_seeds_present);
    tcase_add_loop_test(tc, test_replay, 0, (int)ninputs);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    for (size_t i = 0; i < ninputs; i++)
        free(inputs[i].path);
    free(inputs);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
