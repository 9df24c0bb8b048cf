/* SPDX-License-Identifier: MIT */
/* cache.c — eh_elfs built once per file version, reused after.
 *
 * The name of a cached eh_elf is the file's name and a hash of what makes
 * it valid: the file's real path, size and modification time, those of
 * the separate debug file whose .debug_frame joined its FDEs (when one
 * did: the same file with and without its debug file has two eh_elfs),
 * the ABI flavour and version, the layout. Cached eh_elfs have the table layout
 * (sorted start offsets as data): the same answers as the tree layout
 * (cfisem validate checks both), smaller, and several times faster to
 * build, which is most of the time of a first `cfisem diff` over many
 * files. A changed file gets a new name; an eh_elf is
 * written under a temporary name and renamed, so a reader never sees
 * half of one. The name alone does not vouch for the eh_elf (a file
 * rewritten with its old size and modification time keeps its name): an
 * eh_elf found there whose stamp is not the file's object id is built
 * again. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define CACHED_LAYOUT CG_SEARCH_TABLE

static enum cfi_status fail(struct cfi_diag *diag, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(diag, status, CFI_NO_OFFSET, message);
}

static bool cache_dir_of(const char *given, char *out, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (given)
        n = snprintf(out, size, "%s", given);
    else if (xdg && *xdg)
        n = snprintf(out, size, "%s/cfisem", xdg);
    else if (home && *home)
        n = snprintf(out, size, "%s/.cache/cfisem", home);
    else
        return false;
    return n > 0 && (size_t)n < size;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const uint8_t *bytes = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ bytes[i]) * 0x100000001b3ull;
    return h;
}

/* The separate debug file whose .debug_frame joined the file's FDEs:
 * its real path, size and modification time into *hash. */
static bool hash_debug_file(const struct cfi_file *file, uint64_t *hash)
{
    char real[PATH_MAX], key[PATH_MAX + 64];
    struct stat st;
    if (!file->debug_path || !realpath(file->debug_path, real) ||
        stat(real, &st) != 0)
        return false;
    int n = snprintf(key, sizeof key, "\ndebug %s\n%lld\n%lld.%09ld", real,
                     (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     (long)st.st_mtim.tv_nsec);
    *hash = fnv(*hash, key, n > 0 ? (size_t)n : 0);
    return true;
}

/* DIR/NAME-HASH.ABI.eh_elf.so for the file (and its debug file) as it
 * is now. */
static enum cfi_status cache_path(const struct cfi_file *file, const char *dir,
                                  enum cg_abi abi, char *out, size_t size,
                                  struct cfi_diag *diag)
{
    char real[PATH_MAX];
    struct stat st;
    if (!file->path || !realpath(file->path, real) || stat(real, &st) != 0)
        return fail(diag, CFI_E_IO, "cannot find the file to cache its eh_elf");
    char key[PATH_MAX + 128];
    int n = snprintf(key, sizeof key, "%s\n%lld\n%lld.%09ld\n%s\n%u\n%s",
                     real, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     (long)st.st_mtim.tv_nsec, cg_abi_name(abi),
                     EH_ELF_ABI_VERSION, cg_search_kind_name(CACHED_LAYOUT));
    uint64_t hash = fnv(0xcbf29ce484222325ull, key, n > 0 ? (size_t)n : 0);
    if (file->debug_state == CFI_DEBUG_FOUND &&
        !hash_debug_file(file, &hash))
        return fail(diag, CFI_E_IO,
                    "cannot find the debug file to cache its eh_elf");
    const char *base = strrchr(real, '/');
    n = snprintf(out, size, "%s/%s-%016" PRIx64 ".%s.eh_elf.so", dir,
                 base ? base + 1 : real, hash, cg_abi_name(abi));
    if (n < 0 || (size_t)n >= size)
        return fail(diag, CFI_E_IO, "cache path too long");
    return CFI_OK;
}

static enum cfi_status build_for(const struct cfi_file *file, enum cg_abi abi,
                                 const struct cg_build_options *options,
                                 const char *path, struct cfi_diag *diag)
{
    struct sem_file_il *il;
    if (sem_file_il_build(file, &il) != CFI_OK)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    struct cg_program *program;
    enum cfi_status status =
        cg_generate_search(il, abi, CACHED_LAYOUT, &program, diag);
    if (status == CFI_OK) {
        status = cg_build(program, path, options, NULL, diag);
        cg_program_free(program);
    }
    sem_file_il_free(il);
    return status;
}

enum cfi_status cg_cached_eh_elf(const struct cfi_file *file,
                                 const char *cache_dir, enum cg_abi abi,
                                 const struct cg_build_options *options,
                                 char **path, bool *built,
                                 struct cfi_diag *diag)
{
    char dir[PATH_MAX], so[PATH_MAX + 512];
    *built = false;
    if (!cache_dir_of(cache_dir, dir, sizeof dir))
        return fail(diag, CFI_E_IO, "no cache folder (set XDG_CACHE_HOME or HOME)");
    enum cfi_status status = cache_path(file, dir, abi, so, sizeof so, diag);
    if (status != CFI_OK)
        return status;
    struct eh_elf_object_id object;
    status = cg_file_object_id(file, &object, diag);
    if (status != CFI_OK)
        return status;
    struct stat st;
    struct cfi_diag ignored;
    if (stat(so, &st) != 0 ||
        cg_check_stamp(so, &object, NULL, &ignored) != CFI_OK) {
        if (!cfi_make_dirs(dir))
            return fail(diag, CFI_E_IO, "cannot create the cache folder");
        status = build_for(file, abi, options, so, diag);
        if (status != CFI_OK)
            return status;
        *built = true;
    }
    *path = strdup(so);
    return *path ? CFI_OK : fail(diag, CFI_E_NOMEM, "out of memory");
}
