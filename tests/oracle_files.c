/* SPDX-License-Identifier: MIT */
/* oracle_files.c — the selection of files the printed-table oracles
 * compare (oracle_files.h). */
#include "tests/oracle_files.h"

#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support.h"

#define MAX_FILE_SIZE (30L << 20)

void test_files_add(struct test_file_list *l, char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        char **grown = realloc(l->paths, l->cap * sizeof *grown);
        if (!grown)
            abort(); /* out of memory in a test: no input causes it */
        l->paths = grown;
    }
    l->paths[l->n++] = path;
}

void test_files_free(struct test_file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    memset(l, 0, sizeof *l);
}

/* An ELF file of `machine` (linked, or also relocatable when `objects`)
 * with a non-empty .eh_frame. */
static bool has_eh_frame(int fd, unsigned machine, bool objects)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != machine ||
        (eh.e_type != ET_DYN && eh.e_type != ET_EXEC &&
         !(objects && eh.e_type == ET_REL)) ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
        eh.e_shstrndx >= eh.e_shnum)
        return false;
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    bool found = false;
    if (sh && pread(fd, sh, eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff) ==
                  (ssize_t)(eh.e_shnum * sizeof *sh)) {
        Elf64_Shdr names = sh[eh.e_shstrndx];
        for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
            char name[16] = "";
            if (pread(fd, name, sizeof name - 1,
                      (off_t)(names.sh_offset + sh[i].sh_name)) > 0)
                found = !strcmp(name, ".eh_frame") && sh[i].sh_size > 0 &&
                        sh[i].sh_type != SHT_NOBITS;
        }
    }
    free(sh);
    return found;
}

bool test_is_oracle_candidate(const char *path, unsigned machine,
                              bool objects)
{
    struct stat st;
    if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE_SIZE)
        return false;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    bool ok = has_eh_frame(fd, machine, objects);
    close(fd);
    return ok;
}

static bool is_named_lib(const char *path, char *const *named, size_t nnamed)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return true;
    for (size_t i = 0; i < nnamed; i++) {
        char other[PATH_MAX];
        if (named[i] && realpath(named[i], other) && !strcmp(real, other))
            return true;
    }
    return false;
}

void test_files_select(struct test_file_list *out, size_t count,
                       char *const *named, size_t nnamed)
{
    static const char *const dirs[] = {"/usr/bin", "/usr/lib/x86_64-linux-gnu"};
    struct test_file_list candidates = {0};
    for (size_t d = 0; d < 2; d++) {
        struct dirent **names;
        int n = scandir(dirs[d], &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dirs[d], names[i]->d_name);
            if (test_is_oracle_candidate(path, EM_X86_64, false) &&
                !is_named_lib(path, named, nnamed))
                test_files_add(&candidates, strdup(path));
            free(names[i]);
        }
        if (n >= 0)
            free(names);
    }
    size_t k = candidates.n / count ? candidates.n / count : 1;
    for (size_t i = 0, taken = 0; i < candidates.n && taken < count;
         i += k, taken++)
        test_files_add(out, strdup(candidates.paths[i]));
    test_files_free(&candidates);
}

void test_files_add_built(struct test_file_list *out, const char *folder,
                          const char *suffix)
{
    char *dir_path = test_build_path(folder);
    struct dirent **names;
    int n = scandir(dir_path, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(names[i]->d_name), slen = strlen(suffix);
        if (len > slen && !strcmp(names[i]->d_name + len - slen, suffix)) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir_path, names[i]->d_name);
            test_files_add(out, strdup(path));
        }
        free(names[i]);
    }
    if (n >= 0)
        free(names);
    free(dir_path);
}

bool test_files_aarch64(struct test_file_list *out)
{
    static const char lib[] = "/usr/aarch64-linux-gnu/lib";
    DIR *dir = opendir(lib);
    if (!dir)
        return false;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t n = strlen(e->d_name);
        bool object = n > 2 && !strcmp(e->d_name + n - 2, ".o");
        if (!strstr(e->d_name, ".so") && !object)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", lib, e->d_name);
        if (test_is_oracle_candidate(path, EM_AARCH64, true))
            test_files_add(out, strdup(path));
    }
    closedir(dir);
    test_files_add_built(out, "corpus/cases-aarch64", ".so");
    test_files_add_built(out, "corpus/objects-aarch64", ".o");
    return true;
}

/* The start files of the system's C library that are there. */
static void add_start_files(struct test_file_list *out)
{
    static const char *const start_files[] = {
        "/usr/lib/x86_64-linux-gnu/crt1.o",
        "/usr/lib/x86_64-linux-gnu/Scrt1.o",
        "/usr/lib/x86_64-linux-gnu/gcrt1.o",
        "/usr/lib/x86_64-linux-gnu/rcrt1.o",
    };
    for (size_t i = 0; i < sizeof start_files / sizeof start_files[0]; i++)
        if (access(start_files[i], R_OK) == 0)
            test_files_add(out, strdup(start_files[i]));
}

/* libc, ld.so and libstdc++ (NULL where missing). */
static void named_libraries(char *named[3])
{
    named[0] = test_system_lib("libc.so.6");
    named[1] = test_system_lib("ld-linux-x86-64.so.2");
    named[2] = test_system_lib("libstdc++.so.6");
}

static size_t named_or_selected(enum oracle_set set,
                                struct test_file_list *out)
{
    char *named[3];
    named_libraries(named);
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(named[i] != NULL, "system library %zu missing", i);
    if (set == ORACLE_SET_NAMED)
        for (size_t i = 0; i < 3; i++)
            test_files_add(out, strdup(named[i]));
    else
        test_files_select(out, 64, named, 3);
    for (size_t i = 0; i < 3; i++)
        free(named[i]);
    return set == ORACLE_SET_NAMED ? 3 : 30;
}

size_t test_files_of_set(enum oracle_set set, struct test_file_list *out)
{
    char *path;
    switch (set) {
    case ORACLE_SET_CASES:
        test_files_add_built(out, "corpus/cases", ".so");
        return 12;
    case ORACLE_SET_OBJECTS:
        add_start_files(out);
        test_files_add_built(out, "corpus/objects", ".o");
        return 12;
    case ORACLE_SET_AARCH64:
        ck_assert_msg(test_files_aarch64(out),
                      "no /usr/aarch64-linux-gnu/lib: "
                      "scripts/install-deps installs gcc-aarch64-linux-gnu");
        return 20;
    case ORACLE_SET_NAMED:
    case ORACLE_SET_SELECTED:
        return named_or_selected(set, out);
    case ORACLE_SET_LIBGCRYPT:
        path = test_system_lib("libgcrypt.so.20");
        if (!path)
            return 0;
        test_files_add(out, path);
        return 1;
    case ORACLE_SET_COUNT:
        break;
    }
    ck_abort_msg("no oracle set %d", (int)set);
    return 0;
}
