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

/* The sets both printed-table oracles are run on, in the order the
 * suites run them. */
enum oracle_set {
    ORACLE_SET_CASES,       /* the built corpus cases */
    ORACLE_SET_OBJECTS,     /* the system's start files, the cases unlinked */
    ORACLE_SET_AARCH64,     /* test_files_aarch64 */
    ORACLE_SET_NAMED,       /* libc, ld.so, libstdc++ */
    ORACLE_SET_SELECTED,    /* 64 others (test_files_select) */
    ORACLE_SET_LIBGCRYPT,   /* libgcrypt: two def_cfa_register FDEs after
                             * def_cfa_expression (readelf's N6, D7) */
    ORACLE_SET_COUNT
};

/* Fills `out` with the files of `set`; returns the fewest files the
 * oracle must have compared. A file the set cannot do without fails the
 * test; an empty libgcrypt set (the library absent) returns 0. */
size_t test_files_of_set(enum oracle_set set, struct test_file_list *out);

#endif
