/* SPDX-License-Identifier: MIT */
/* oracle_files.h — the files the printed-table oracles (check_readelf,
 * check_dwarfdump) compare: one deterministic selection, shared so that
 * both oracles see the same inputs. */
#ifndef CFISEM_TEST_ORACLE_FILES_H
#define CFISEM_TEST_ORACLE_FILES_H

#include <stdbool.h>
#include <stddef.h>

struct test_file_list {
    size_t n, cap;
    char **paths;           /* malloc'd */
};

void test_files_add(struct test_file_list *l, char *path);
void test_files_free(struct test_file_list *l);

/* An ELF file of `machine` (EM_X86_64, EM_AARCH64) of at most 30 MB,
 * linked (or also relocatable when `objects`), with a non-empty
 * .eh_frame. */
bool test_is_oracle_candidate(const char *path, unsigned machine,
                              bool objects);

/* `count` x86-64 files: the candidates among the regular files of
 * /usr/bin then /usr/lib/x86_64-linux-gnu, sorted by name, other than the
 * `nnamed` files of `named`; every k-th, k = candidates / count. */
void test_files_select(struct test_file_list *out, size_t count,
                       char *const *named, size_t nnamed);

/* The files of $CFISEM_BUILD/folder whose name ends with suffix. */
void test_files_add_built(struct test_file_list *out, const char *folder,
                          const char *suffix);

/* The AArch64 candidates of /usr/aarch64-linux-gnu/lib (.so files and
 * start files), then the built AArch64 cases, linked and not; false when
 * the cross toolchain is missing. */
bool test_files_aarch64(struct test_file_list *out);

#endif
