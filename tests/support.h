/* SPDX-License-Identifier: MIT */
/* support.h — helpers shared by the Check suites: paths given by the
 * Makefile, running the cfisem binary, reading files. */
#ifndef CFISEM_TEST_SUPPORT_H
#define CFISEM_TEST_SUPPORT_H

#include <stddef.h>

/* The exit status of a usage error (cfisem --help, "Exit status"), apart
 * from every outcome. */
#define TEST_EXIT_USAGE 64

/* $CFISEM_SRC/rel, $CFISEM_BUILD/rel: malloc'd paths. */
char *test_src_path(const char *rel);
char *test_build_path(const char *rel);
/* A compiler option defining OBJECT_ID as the initialiser of the stamp
 * (struct eh_elf_object_id) of `object`, the ELF file at that path, for
 * eh_elfs written by hand: '-DOBJECT_ID={kind,size,{bytes}}', quoted
 * for the shell. malloc'd. */
char *test_object_id_flag(const char *object);

/* The output of one run of the cfisem binary ($CFISEM). */
struct test_run {
    int exit_code;      /* -1 when killed by a signal */
    int signal;
    char *out;          /* stdout, NUL-terminated */
    size_t out_len;
    char *err;          /* stderr, NUL-terminated */
    size_t err_len;
};

/* Runs $CFISEM with argv (NULL-terminated, without argv[0]); with
 * CFISEM_CHILD_LEAKS=0 in the environment, without LeakSanitizer's check
 * at its exit (ASan and UBSan stay on: make check, below). */
void test_run_cfisem(const char *const *args, struct test_run *run);
void test_run_free(struct test_run *run);
/* Number of '\n'-terminated lines in text. */
size_t test_count_lines(const char *text);

/* Whole file into a NUL-terminated buffer; NULL when unreadable. */
char *test_read_file(const char *path, size_t *len);
int test_write_file(const char *path, const void *bytes, size_t len);

/* A fresh temporary folder (mkdtemp), malloc'd. */
char *test_temp_dir(void);

/* Path of a system library: libc.so.6, ld-linux-x86-64.so.2, ... found in
 * /lib/x86_64-linux-gnu or /usr/lib/x86_64-linux-gnu; NULL if absent. */
char *test_system_lib(const char *name);

#endif
